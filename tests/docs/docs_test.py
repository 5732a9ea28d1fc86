#!/usr/bin/env python3
"""What the docs say holds in a clone of the repository.

  docs_test.py SRC GPUWATCH CASE

links    every relative Markdown link of a tracked .md file names a file of the repository, and
         nothing tracked points outside it (the workspace's ../shared is not in a clone)
select   the outputs docs/select.md shows for the demo fleet are what `gpuwatch --demo select` prints
outputs  every output block of the docs listed in OUTPUT_DOCS is either produced here or declared
         not reproducible here, by the comment on the line before it:
           <!-- output: COMMANDS -->   COMMANDS run by sh in an empty directory, `gpuwatch` on
                                       PATH, TZ=UTC, GPUWATCH_FAKE_TIME=3600 (demo values frozen),
                                       GPUWATCH_RUNTIME_DIR in that directory (no lease of this
                                       machine's); stdout and stderr together must be the block.
                                       A first block line "$ CMD" must be COMMANDS or a part of
                                       them; a line "..." stands for any lines; clock times and
                                       dates match any; this machine's hostname reads as node1,
                                       the user who runs the test as root. COMMANDS that echo a
                                       "$ CMD" line (`echo '$ ...'`) print the block's "$ CMD"
                                       lines themselves (a transcript of several commands).
                                       `gw_serve ARGS` starts `gpuwatch serve ARGS` in the
                                       background on a free port and returns once it answers
                                       /readyz, its address in $GW (which reads as
                                       127.0.0.1:9835 in the output); `gw_stop` stops it. What
                                       COMMANDS leave running in their session is killed when
                                       they end.
           <!-- output, any numbers: COMMANDS -->   the same, for outputs of a clock that runs
                                       (`env -u GPUWATCH_FAKE_TIME`) or with pids: every number
                                       (with its size unit: 988M, 1.2G) matches any number, a
                                       meter or sparkline (█▉…░, ▁…▇) any other, runs of spaces
                                       any run.
           <!-- recorded: DOC -->      not reproducible here: real hardware (an H200), or the
                                       Python package, which this build does not make; DOC, the
                                       file that says how it was recorded, must exist.
           <!-- not output -->         a diagram, a file's content, an example to copy.
         `docs_test.py SRC GPUWATCH outputs --update` rewrites the produced blocks that have no
         "..." with what the commands print now.
"""
import os
import pwd
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

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


# The files a user reads for outputs: every bare ``` block must carry one of the comments. The
# records of measurements (docs/BENCHMARKS.md, docs/real-gpu.md, docs/leaks.md) are records by
# nature; docs/architecture.md holds one diagram.
OUTPUT_DOCS = ["README.md", "docs/outputs.md", "docs/run.md", "docs/python.md", "docs/top.md",
               "docs/rules.md", "docs/metrics.md", "docs/select.md", "docs/serve.md",
               "docs/API.md", "docs/cli.md", "docs/json.md", "docs/report.md",
               "docs/scenarios.md", "docs/host-attribution.md", "docs/deploy.md",
               "docs/history.md", "docs/sweep.md"]
MARK = re.compile(r"^<!--\s*(output, any numbers|output|recorded|not output)\s*(?::\s*(.*?))?"
                  r"\s*-->\s*$")
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[kKMGTP]i?B?)?")  # with a size unit: 988M, then 1.2G
METER = re.compile(r"[█▉▊▋▌▍▎▏▒░▁▂▃▄▅▆▇]+")  # bars and sparklines
TIME = re.compile(r"\b\d\d:\d\d:\d\d(?:\.\d+)?\b")
DATE = re.compile(r"\b\d{4}-\d\d-\d\d\b")
# COMMANDS that print their "$ CMD" lines themselves: `echo '$ ...'` as one of their commands.
TRANSCRIPT = re.compile(r"(?:^|[;&|]|\bdo|\bthen)\s*echo ['\"]\\?\$ ")


def blocks(text):
    """(mark line index or None, mark kind, argument, first line, end line) per bare fence."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        if lines[i].strip() == "```":
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith("```"):
                end += 1
            prev = lines[i - 1].strip() if i > 0 else ""
            m = MARK.match(prev)
            out.append((m.group(1) if m else None, (m.group(2) or "") if m else "", i + 1, end))
            i = end + 1
            continue
        if lines[i].lstrip().startswith("```"):  # a block with a language: code, skipped whole
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                i += 1
        i += 1
    return lines, out


# Defined for every COMMANDS: a daemon in the background on a free port, never 9835 (a real
# one may listen there), polled until it answers /readyz instead of a sleep that can lose a race.
SERVE = r"""
gw_serve() {
  : >serve.log
  gpuwatch serve --listen 127.0.0.1:0 "$@" >>serve.log 2>&1 &
  echo $! >>.gw-serve-pids
  GW=; n=0
  while [ $n -lt 600 ]; do
    GW=$(sed -n 's|^gpuwatch serve: listening on http://\([^/]*\)/.*|\1|p' serve.log | head -n 1)
    if [ -n "$GW" ] && curl -sf "$GW/readyz" >/dev/null 2>&1; then echo "$GW" >.gw-address; return 0; fi
    kill -0 $! 2>/dev/null || break
    sleep 0.1; n=$((n + 1))
  done
  echo "gw_serve: the daemon did not become ready:"; cat serve.log; return 1
}
gw_stop() {
  for p in $(cat .gw-serve-pids); do kill $p 2>/dev/null; wait $p 2>/dev/null; done; : >.gw-serve-pids
}
"""


def alive(group):
    """Whether a process of the group still runs (a zombie waiting for its reaper does not)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % pid) as f:
                state, _, pgrp = f.read().rsplit(")", 1)[1].split()[:3]
        except (OSError, IndexError, ValueError):
            continue
        if int(pgrp) == group and state != "Z":
            return True
    return False


def stop(group):
    """Ends what is left of a process group: SIGTERM (a daemon then says it stops), SIGKILL 10 s
    later."""
    for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(group, sig)
        except ProcessLookupError:
            return
        for _ in range(int(grace * 20)):
            if not alive(group):
                return
            time.sleep(0.05)


def produce(commands):
    env = dict(os.environ, TZ="UTC", GPUWATCH_FAKE_TIME="3600", NO_COLOR="1", LC_ALL="C.UTF-8",
               PATH=os.path.dirname(os.path.abspath(BIN)) + os.pathsep + os.environ["PATH"],
               SRC=SRC)
    for name in ("GPUWATCH_SOCKET", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"):
        env.pop(name, None)
    with tempfile.TemporaryDirectory(prefix="gw-docs-") as work:
        env["GPUWATCH_RUNTIME_DIR"] = os.path.join(work, "runtime")  # this machine's leases: none
        # Output to a file, not a pipe, and in a session of its own: a process the commands
        # leave in the background can neither hold the test up nor outlive it.
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as out:
            p = subprocess.Popen(["sh", "-c", SERVE + commands], cwd=work, env=env, stdout=out,
                                 stderr=subprocess.STDOUT, start_new_session=True)
            late = ""
            try:
                p.wait(timeout=90)
            except subprocess.TimeoutExpired:
                late = "\n(docs_test: still running after 90 s; stopped)"
                os.killpg(p.pid, signal.SIGTERM)
            p.wait()
            stop(p.pid)
            out.seek(0)
            text = out.read() + late
        address = os.path.join(work, ".gw-address")
        if os.path.exists(address):  # the daemon's free port reads as the default one
            for a in open(address).read().split():
                text = text.replace(a, "127.0.0.1:9835")
    host = re.escape(socket.gethostname())
    text = re.sub(r"(?<![\w.-])%s(?![\w.-])" % host, "node1", text)
    user = re.escape(pwd.getpwuid(os.getuid()).pw_name)  # a lease's holder, a waiting job's
    text = re.sub(r'(?<=user": ")%s(?=")|(?<=user=")%s(?=")|(?<=\()%s(?=: )' % (user, user, user),
                  "root", text)
    return [l.rstrip() for l in text.rstrip("\n").split("\n")]


def matches(shown, actual, any_numbers=False):
    def norm(line):
        line = DATE.sub("<date>", TIME.sub("<time>", line))
        if any_numbers:
            line = METER.sub("<meter>", NUMBER.sub("<n>", line))
            line = re.sub(r" +", " ", line)  # a number's width moves its neighbours
        return line
    pattern = "".join(r"(?:.*\n)*?" if l.strip() == "..." else re.escape(norm(l)) + r"\n"
                      for l in shown)
    return re.fullmatch(pattern, "".join(norm(l) + "\n" for l in actual)) is not None


def case_outputs(update=False):
    bad, produced = [], 0
    for rel in OUTPUT_DOCS:
        path = os.path.join(SRC, rel)
        lines, found = blocks(open(path, encoding="utf-8").read())
        for kind, arg, first, end in reversed(found):  # reversed: updates keep earlier indices
            where = "%s:%d" % (rel, first)
            if kind is None:
                bad.append("%s: an output block without <!-- output: ... -->, <!-- recorded: ... "
                           "--> or <!-- not output --> on the line before it" % where)
            elif kind == "recorded" and not os.path.exists(os.path.join(SRC, arg)):
                bad.append("%s: recorded: %r is not a file of the repository" % (where, arg))
            elif kind.startswith("output"):
                produced += 1
                shown = [l.rstrip() for l in lines[first:end]]
                actual = produce(arg)
                transcript = TRANSCRIPT.search(arg) is not None
                if shown and shown[0].startswith("$ ") and not transcript:
                    if shown[0][2:] not in arg:
                        bad.append("%s: the block shows `%s` but the comment runs `%s`"
                                   % (where, shown[0][2:], arg))
                    shown = shown[1:]
                if matches(shown, actual, kind == "output, any numbers"):
                    continue
                if update and not any(l.strip() == "..." for l in shown):
                    head = [lines[first]] if lines[first].startswith("$ ") and not transcript else []
                    lines[first:end] = head + actual
                    continue
                bad.append("%s: `%s` prints (--update rewrites a block without \"...\"):\n%s"
                           % (where, arg, "\n".join("    " + l for l in actual)))
        if update:
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
    if produced == 0:
        bad.append("no <!-- output: ... --> block found in %s" % ", ".join(OUTPUT_DOCS))
    return bad


def main():
    if CASE == "outputs" and "--update" in sys.argv[4:]:
        bad = case_outputs(update=True)
        for b in bad:
            print(b)
        return 1 if bad else 0
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
