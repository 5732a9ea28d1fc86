#!/usr/bin/env python3
"""What the docs say holds in a clone of the repository.

  docs_test.py SRC GPUWATCH CASE

links    every relative Markdown link of a tracked .md file names a file of the repository, and
         nothing tracked points outside it (the workspace's ../shared is not in a clone)
select   the outputs docs/select.md shows for the demo fleet are what `gpuwatch --demo select` prints
"""
import os
import re
import subprocess
import sys

SRC, BIN, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def tracked(*patterns):
    out = subprocess.run(["git", "-C", SRC, "ls-files", *patterns], capture_output=True, text=True)
    if out.returncode != 0:  # a source tree without git: every file under SRC
        return [os.path.relpath(os.path.join(d, f), SRC) for d, _, fs in os.walk(SRC)
                for f in fs if any(f.endswith(p.lstrip("*")) for p in patterns)
                and "/build" not in d and "/." not in d]
    return out.stdout.split()


def case_links():
    bad = []
    for rel in tracked("*.md"):
        text = open(os.path.join(SRC, rel), encoding="utf-8").read()
        for n, line in enumerate(text.splitlines(), 1):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue  # http:, https:, mailto:
                if not os.path.exists(os.path.join(SRC, os.path.dirname(rel), target)):
                    bad.append("%s:%d: link to %s, which is not in the repository" % (rel, n, target))
    for rel in tracked("*.md", "*.cc", "*.h", "*.py", "*.sh", "*.yaml", "*.js", "*.cmake"):
        if rel.startswith("tests/docs/"):
            continue
        for n, line in enumerate(open(os.path.join(SRC, rel), encoding="utf-8", errors="replace"), 1):
            if "../shared/" in line:
                bad.append("%s:%d: points outside the repository (../shared/)" % (rel, n))
    return bad


def case_select():
    """Each `gpuwatch select ...  # OUTPUT` line of docs/select.md's first example block."""
    text = open(os.path.join(SRC, "docs", "select.md"), encoding="utf-8").read()
    block = text.split("```sh", 1)[1].split("```", 1)[0]
    bad, checked = [], 0
    for line in block.splitlines():
        m = re.match(r"gpuwatch select([^#]*)#\s*(.*)$", line.strip())
        if not m:
            continue
        args, shown = m.group(1).split(), m.group(2).strip().strip('"').split(":")[-1].strip().strip('"')
        out = subprocess.run([BIN, "--demo", "select", *args], capture_output=True, text=True,
                             cwd=SRC)
        checked += 1
        if shown not in out.stdout:
            bad.append("docs/select.md shows %r for `select %s`; it prints %r"
                       % (shown, " ".join(args), out.stdout.strip()))
    if checked < 2:
        bad.append("docs/select.md: found %d commented `gpuwatch select` examples, expected 2 or more"
                   % checked)
    return bad


def main():
    fn = globals().get("case_" + CASE)
    if fn is None:
        print("unknown case %r" % CASE)
        return 2
    bad = fn()
    for b in bad:
        print(b)
    print(("FAIL " if bad else "ok ") + CASE)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
