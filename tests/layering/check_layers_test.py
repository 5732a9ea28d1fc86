#!/usr/bin/env python3
"""scripts/check_layers.py passes on this tree and fails, naming the file, on
a forbidden include, an exception that no longer occurs and an unlisted layer;
and clang's -Wthread-safety refuses what core/mutex.h's annotations forbid.

    tests/layering/check_layers_test.py
"""
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

root = Path(__file__).resolve().parents[2]
script = root / "scripts" / "check_layers.py"
failures = 0


def check(ok, what, detail=""):
    global failures
    print(("ok - " if ok else "not ok - ") + what)
    if not ok:
        failures += 1
        for line in detail.splitlines():
            print("#   " + line)


def run(tree):
    r = subprocess.run([sys.executable, str(script), "--root", str(tree)], capture_output=True,
                       text=True)
    return r.returncode, r.stdout + r.stderr


code, out = run(root)
check(code == 0 and "layering:" in out, "this tree keeps to src/LAYERS", out)


def with_copy(change):
    """Runs the check on a copy of src/ changed by change(src)."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(root / "src", Path(tmp) / "src")
        change(Path(tmp) / "src")
        return run(Path(tmp))


def append(path, text):
    path.write_text(path.read_text() + text)


code, out = with_copy(lambda src: append(src / "core" / "units.cc", '#include "cli/context.h"\n'))
lines = (root / "src" / "core" / "units.cc").read_text().count("\n") + 1
check(code == 1 and f'src/core/units.cc:{lines}: core may not include cli ("cli/context.h")' in out,
      "core including cli fails, naming the file and line", out)

code, out = with_copy(lambda src: append(src / "sampler" / "sampler.h",
                                         '#include "server/http_server.h"\n'))
check(code == 1 and "sampler may not include server" in out and "allowed: core host" in out,
      "sampler including server fails and says what sampler may include", out)


def stale_exception(src):
    append(src / "LAYERS", "exception: core/units.cc -> cli/context.h\n")


code, out = with_copy(stale_exception)
check(code == 1 and "exception core/units.cc -> cli/context.h no longer occurs" in out,
      "an exception that no longer occurs must leave the table", out)


def listed_exception(src):
    append(src / "core" / "units.cc", '#include "cli/context.h"\n')
    append(src / "LAYERS", "exception: core/units.cc -> cli/context.h\n")


code, out = with_copy(listed_exception)
check(code == 0, "a listed exception is allowed", out)


def new_layer(src):
    (src / "newlayer").mkdir()
    (src / "newlayer" / "engine.cc").write_text('#include "core/unit_names.h"\n')


code, out = with_copy(new_layer)
check(code == 1 and "layer newlayer has no line in src/LAYERS" in out,
      "a new directory needs its line in src/LAYERS", out)

# core/mutex.h's annotations are live under clang: an unguarded access fails
# to compile with -Wthread-safety -Werror, a guarded one compiles.
clang = shutil.which("clang++")
if clang is None:
    print("skip - clang++ not found: core/mutex.h's annotations not compiled")
else:
    probe = """#include "core/mutex.h"
struct Counter {
  gpuwatch::Mutex mu_;
  int n_ GUARDED_BY(mu_) = 0;
  void Locked() { gpuwatch::MutexLock lock(mu_); ++n_; }
  int Needs() REQUIRES(mu_) { return n_; }
  void %s
};
"""
    def compiles(body):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "probe.cc"
            src.write_text(probe % body)
            r = subprocess.run([clang, "-std=c++20", "-fsyntax-only", "-Wthread-safety", "-Werror",
                                f"-I{root / 'src'}", f"-I{root / 'include'}", str(src)],
                               capture_output=True, text=True)
            return r.returncode == 0, r.stderr
    ok, err = compiles("Fine() { gpuwatch::MutexLock lock(mu_); Needs(); }")
    check(ok, "clang: guarded accesses under the lock compile", err)
    ok, err = compiles("Racy() { ++n_; }")
    check(not ok and "requires holding mutex 'mu_'" in err,
          "clang: touching a GUARDED_BY member without its mutex is an error", err)
    ok, err = compiles("Racy() { Needs(); }")
    check(not ok and "requires holding mutex 'mu_'" in err,
          "clang: calling a REQUIRES function without the mutex is an error", err)

print(f"{failures} failed" if failures else "all passed")
sys.exit(1 if failures else 0)
