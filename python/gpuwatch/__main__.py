"""python -m gpuwatch ARGS: the gpuwatch command line (the binary installed with the package)."""
import os
import shutil
import sys

from ._native import DATA_DIR


def _binary():
    packaged = os.path.join(DATA_DIR, "gpuwatch")
    if os.access(packaged, os.X_OK):
        return packaged
    return shutil.which("gpuwatch")


def main():
    exe = _binary()
    if exe is None:
        sys.stderr.write("gpuwatch: the gpuwatch binary is not installed with this package "
                         "nor on PATH\n")
        return 127
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
