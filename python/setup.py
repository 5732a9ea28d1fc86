"""Builds gpuwatch._core (and the gpuwatch binary, the demo's fake NVML) with CMake.

The CMake project is the repository this directory belongs to. Environment:
  GPUWATCH_CMAKE_BUILD_DIR  reuse this CMake build directory (e.g. build/gcc) instead of a
                            fresh one under setuptools' build_temp
  GPUWATCH_CMAKE_ARGS       more -D options for the configure step
  CMAKE_BUILD_PARALLEL_LEVEL  build jobs (default: every core)
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent.parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(os.environ.get("GPUWATCH_CMAKE_BUILD_DIR") or Path(self.build_temp) / "cmake")
        build = build if build.is_absolute() else ROOT / build
        args = ["-DGPUWATCH_BUILD_PYTHON=ON", f"-DPython_EXECUTABLE={sys.executable}"]
        if not (build / "CMakeCache.txt").exists():
            args += ["-DCMAKE_BUILD_TYPE=Release", "-DGPUWATCH_BUILD_TESTS=OFF"]
            if shutil.which("ninja"):
                args += ["-G", "Ninja"]
        try:
            import pybind11  # the pip package (the GPU machine); Debian's needs no hint

            args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass
        args += os.environ.get("GPUWATCH_CMAKE_ARGS", "").split()
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build)] + args, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.run(["cmake", "--build", str(build), "-j", jobs, "--target", "_core",
                        "gpuwatch", "gpuwatch-full", "gpuwatch-top", "gpuwatch_fake_nvml"],
                       check=True)

        built = next((build / "python").glob("_core*.so"))
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)
        # The command line and the demo fleet, for `python -m gpuwatch` and demo=True.
        data = target.parent / "_data"
        shutil.rmtree(data, ignore_errors=True)
        (data / "lib").mkdir(parents=True)
        # gpuwatch runs status, query and select; gpuwatch-top, beside it, top;
        # gpuwatch-full the rest.
        for name in ("gpuwatch", "gpuwatch-full", "gpuwatch-top"):
            shutil.copy2(build / name, data / name)
        shutil.copy2(build / "lib" / "libnvidia-ml-fake.so", data / "lib" / "libnvidia-ml-fake.so")
        (data / "scenarios").mkdir()
        shutil.copy2(ROOT / "scenarios" / "demo.yaml", data / "scenarios" / "demo.yaml")
        shutil.copytree(ROOT / "scenarios" / "demo.host", data / "scenarios" / "demo.host",
                        symlinks=True)


setup(ext_modules=[CMakeExtension("gpuwatch._core")], cmdclass={"build_ext": CMakeBuild})
