"""The C++ core (gpuwatch._core) and the data shipped beside it.

Imported once; Status codes become the exceptions of _errors here and nowhere else.
"""
import os

from . import _errors

try:
    from . import _core
except ImportError as e:  # pragma: no cover - exercised only in broken installs
    raise ImportError(
        "gpuwatch's C++ module (gpuwatch._core) is missing or does not load: "
        f"{e}. Install the package with `pip install ./python` from a gpuwatch checkout "
        "(it builds the module with CMake)."
    ) from e

_core._set_errors(
    _errors.Error,
    _errors.InvalidArgument,
    _errors.NotFound,
    _errors.Unavailable,
    _errors.PermissionDenied,
)

# The demo's fake NVML library and scenarios, installed with the package; ""
# lets the core look beside the gpuwatch binary or in its build tree.
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data")
DEMO_DIR = DATA_DIR if os.path.isdir(os.path.join(DATA_DIR, "lib")) else ""

core = _core
