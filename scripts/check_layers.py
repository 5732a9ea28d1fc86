#!/usr/bin/env python3
"""Checks that every file under src/ includes only the layers src/LAYERS allows.

    scripts/check_layers.py [--root DIR]      (DIR: the repository, default this one)

Reads the `#include "..."` lines of src/**/*.{h,cc}. A quoted include that names
a file under src/ belongs to that file's layer; `gpuwatch/...` (the public API)
is allowed everywhere; anything else (a generated header, a system header in
quotes) is not a layer and is not checked. Prints one line per forbidden
include, `src/FILE:LINE: LAYER may not include OTHER ("HEADER"); allowed: ...`,
and exits 1 when there is one, when a layer has no line in src/LAYERS, or when
an exception listed there no longer occurs; exits 0 and prints a summary
otherwise.
"""
import argparse
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
GROUPED = ("analysis", "backends")  # their subdirectories are layers of their own


def layer_of(rel: Path):
    parts = rel.parts
    if len(parts) < 2:
        return None  # a file directly under src/
    if parts[0] in GROUPED and len(parts) > 2:
        return f"{parts[0]}/{parts[1]}"
    return parts[0]


def read_table(path: Path):
    allowed, exceptions, errors = {}, set(), []
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("exception:"):
            m = re.fullmatch(r"exception:\s*(\S+)\s*->\s*(\S+)", line)
            if not m:
                errors.append(f"{path}:{n}: an exception is 'exception: FILE -> HEADER'")
                continue
            exceptions.add((m.group(1), m.group(2)))
            continue
        name, sep, rest = line.partition(":")
        if not sep or not name.strip():
            errors.append(f"{path}:{n}: a layer line is 'LAYER: LAYERS IT MAY INCLUDE'")
            continue
        if name.strip() in allowed:
            errors.append(f"{path}:{n}: layer {name.strip()} is listed twice")
        allowed[name.strip()] = set(rest.split())
    for name, uses in allowed.items():
        for use in uses - allowed.keys():
            errors.append(f"{path}: layer {name} may include {use}, which is not a layer")
    return allowed, exceptions, errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    src = args.root / "src"
    allowed, exceptions, problems = read_table(src / "LAYERS")
    used_exceptions = set()
    files = sorted(p for p in src.rglob("*") if p.suffix in (".h", ".cc") and p.is_file())
    checked = 0
    for path in files:
        rel = path.relative_to(src)
        layer = layer_of(rel)
        if layer is None:
            continue
        if layer not in allowed:
            problems.append(f"src/{rel}: layer {layer} has no line in src/LAYERS")
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            header = m.group(1)
            if header.startswith("gpuwatch/") or not (src / header).is_file():
                continue
            target = layer_of(Path(header))
            checked += 1
            if target is None or target == layer or target in allowed[layer]:
                continue
            if (str(rel), header) in exceptions:
                used_exceptions.add((str(rel), header))
                continue
            ok = " ".join(sorted(allowed[layer])) or "nothing but itself and gpuwatch/"
            problems.append(f"src/{rel}:{n}: {layer} may not include {target} (\"{header}\"); "
                            f"allowed: {ok}")
    for file, header in sorted(exceptions - used_exceptions):
        problems.append(f"src/LAYERS: exception {file} -> {header} no longer occurs: remove it")
    for p in problems:
        print(p)
    if problems:
        print(f"layering: {len(problems)} problem(s) (table: src/LAYERS)")
        return 1
    print(f"layering: {checked} includes of {len(files)} files within src/LAYERS "
          f"({len(exceptions)} listed exceptions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
