"""What the benches that run `gpuwatch top` beside nvtop on the fake NVML share
(tui_memory.py, top_instructions.py): nvtop from its binary or Debian package,
a directory that offers the fake as libnvidia-ml.so.1, and the --also binaries."""

import os
import subprocess


def nvtop_and_fake(tmp, nvtop, fake):
    """(nvtop's binary, a directory holding the fake as libnvidia-ml.so.1 and
    libnvidia-ml.so), both under `tmp`. `nvtop`: the binary, or its Debian
    package (extracted into `tmp`)."""
    if nvtop.endswith(".deb"):
        subprocess.run(["dpkg", "-x", nvtop, tmp], check=True)
        nvtop = os.path.join(tmp, "usr", "bin", "nvtop")
    libdir = os.path.join(tmp, "nvml")
    os.mkdir(libdir)
    for name in ("libnvidia-ml.so.1", "libnvidia-ml.so"):
        os.symlink(fake, os.path.join(libdir, name))
    return nvtop, libdir


def also_binaries(parser, specs):
    """[(label, path)] of --also LABEL=PATH options; a bad one is the parser's error."""
    also = []
    for spec in specs:
        label, sep, path = spec.partition("=")
        if not sep or not label or not os.access(path, os.X_OK):
            parser.error(f"--also {spec!r}: want LABEL=PATH of an executable gpuwatch-top")
        also.append((label, os.path.realpath(path)))
    return also
