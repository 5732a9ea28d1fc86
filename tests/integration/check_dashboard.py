#!/usr/bin/env python3
"""Checks deploy/grafana/gpuwatch-dashboard.json and the PromQL of deploy/prometheus.

  check_dashboard.py                      static checks (no server needed)
  check_dashboard.py --gpuwatch BIN       also reads the families a `BIN --demo serve
                                          --process-metrics --process-user` exports
  check_dashboard.py --prometheus URL     runs every panel and variable query against a
                                          Prometheus that scrapes gpuwatch (prometheus_test.sh)

Static: the dashboard is valid JSON in the shape Grafana 10.4+ imports (schemaVersion 39, a
DS_PROMETHEUS input, the datasource/job/hostname/gpu variables, unique panel ids, panels
inside the 24-column grid without overlaps, every query on ${datasource}, only defined
variables, every gpuwatch series filtered by $job and $hostname), and every metric name in a
panel's, an alert rule's or a recording rule's PromQL is one gpuwatch exports: a Prometheus
name of the field catalogue (src/core/catalogue.cc), its MIG variant (gpuwatch_mig_*), a
family the exporter names in src/export/*.cc, a series of gpuwatch-recording.yml, or a series
Prometheus itself writes (up, ALERTS, ...).

Coverage: the families gpuwatch exports (docs/metrics.md's tables, plus with --gpuwatch what
/metrics really serves) that appear in neither the dashboard nor the rule files are printed;
each must be in NOT_SHOWN with its reason, or the check fails. Panels of series that exist
only with --process-metrics say so in their description.

Live: every query parses and returns data; every gpuwatch metric they use exists.

Prints `ok - ...` / `not ok - ...` per check and `N passed, M failed`; exits 1 on a failure.
Python 3 standard library only.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "gpuwatch-dashboard.json"
RULES = ROOT / "deploy" / "prometheus" / "gpuwatch-rules.yml"
RECORDING = ROOT / "deploy" / "prometheus" / "gpuwatch-recording.yml"
CATALOGUE = ROOT / "src" / "core" / "catalogue.cc"
EXPORTER = ROOT / "src" / "export"
METRICS_DOC = ROOT / "docs" / "metrics.md"

# Series Prometheus writes itself.
PROMETHEUS_SERIES = {"up", "scrape_duration_seconds", "scrape_samples_scraped", "ALERTS"}
# Absent from prometheus_test.sh's fake fleet (--process-metrics on host-a only, no MIG, no lease
# file, no job on a socket, no NVML failure): their panels may answer with no data there.
MAY_BE_ABSENT_FAMILIES = re.compile(r"gpuwatch_(process_\w+|mig_(?!mode$)\w+)$")
MAY_BE_ABSENT = {
    "gpuwatch_process_preallocated",  # only while a pre-allocating process runs
    "gpuwatch_framework_memory_bytes",  # --process-metrics, --socket and a job that reports
    "gpuwatch_lease_info",  # --process-metrics and a lease held
    "gpuwatch_gpu_leased", "gpuwatch_mig_leased", "gpuwatch_lease_queue_length",
    "gpuwatch_lease_queue_wait_seconds",  # absent while the lease file cannot be read
}
# Families gpuwatch exports that neither a panel nor a rule shows, each with the reason.
NOT_SHOWN = {}
# Families exported only with `serve --process-metrics`: their panels must say so.
PROCESS_METRICS_ONLY = re.compile(r"gpuwatch_(process_(?!preallocated)\w+|lease_info|framework_memory_bytes)$")

GRAFANA_BUILTINS = {"__rate_interval", "__interval", "__range", "__range_s", "__range_ms",
                    "__interval_ms", "__all"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
            "unless", "offset", "inf", "nan"}

passed = 0
failed = 0


def check(condition, what, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"ok - {what}")
    else:
        failed += 1
        print(f"not ok - {what}" + (f": {detail}" if detail else ""))
    return condition


def catalogue_names():
    text = CATALOGUE.read_text()
    return set(re.findall(r'"(gpuwatch_[a-z0-9_]+)"', text))


def exporter_names():
    """Families src/export names outright, and the MIG variant of every catalogue name."""
    names = set()
    for f in sorted(EXPORTER.glob("*.cc")):
        names |= set(re.findall(r'"(gpuwatch_[a-z0-9_]*[a-z0-9])"', f.read_text()))
    names |= {"gpuwatch_mig_" + n[len("gpuwatch_"):] for n in catalogue_names()
              if not n.startswith(("gpuwatch_process_", "gpuwatch_mig_"))}
    return names


def recorded_names():
    return set(re.findall(r"^\s*- record:\s*(\S+)", RECORDING.read_text(), re.M))


def documented_families():
    """The gpuwatch_* families docs/metrics.md lists in its tables (not patterns such as gpuwatch_process_*)."""
    out = set()
    for line in METRICS_DOC.read_text().splitlines():
        m = re.match(r"\|\s*`(gpuwatch_[a-z0-9_]+)(?:\{[^`]*\})?`\s*\|", line)
        if m:
            out.add(m.group(1))
    return out


def live_families(gpuwatch):
    """The families `gpuwatch --demo serve --process-metrics --process-user` serves on /metrics."""
    with tempfile.TemporaryDirectory() as home:
        log = Path(home) / "serve.log"
        with open(log, "w") as out:
            proc = subprocess.Popen([gpuwatch, "--demo", "serve", "--listen", "127.0.0.1:0", "--process-metrics",
                                     "--process-user"], stdout=out, stderr=subprocess.STDOUT,
                                    env={**os.environ, "HOME": home})
        try:
            port = None
            for _ in range(150):
                m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", log.read_text())
                if m:
                    port = m.group(1)
                    try:
                        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
                            if r.status == 200:
                                break
                    except OSError:
                        pass
                if proc.poll() is not None:
                    break
                time.sleep(0.2)
            if port is None:
                return None, log.read_text()[-2000:]
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                text = r.read().decode()
            return set(re.findall(r"^# TYPE (\S+) ", text, re.M)), ""
        except OSError as e:
            return None, str(e)
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def metric_names(expr):
    """Metric names a PromQL expression selects (not functions, labels, keywords, variables)."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    s = re.sub(r"'(?:[^'\\]|\\.)*'", "''", s)
    s = re.sub(r"\{[^}]*\}", " ", s)
    s = re.sub(r"\[[^\]]*\]", " ", s)
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    s = re.sub(r"\$\{?\w+\}?", " ", s)
    names = []
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", s):
        before = s[m.start() - 1] if m.start() > 0 else " "
        if before.isdigit() or before == ".":
            continue  # the exponent of a number such as 3.6e6
        if s[m.end():].lstrip().startswith("("):
            continue  # a function or aggregation
        if m.group(0).lower() in KEYWORDS:
            continue
        names.append(m.group(0))
    return names


def variables_used(text):
    return set(re.findall(r"\$\{?([A-Za-z_]\w*)", text))


def flatten(panels):
    for p in panels:
        yield p
        for child in p.get("panels", []):
            yield child


def rule_exprs():
    """(name, expr) of the alert and recording rules; every expr is on one line by convention."""
    out = []
    for path in (RULES, RECORDING):
        name = None
        for line in path.read_text().splitlines():
            m = re.match(r"\s*- (?:alert|record):\s*(\S+)", line)
            if m:
                name = m.group(1)
            m = re.match(r"\s*expr:\s*(.+?)\s*$", line)
            if m:
                out.append((name, m.group(1)))
    return out


def selectors(expr):
    """(metric, matchers) of every gpuwatch selector in EXPR; matchers '' when it has none."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"', lambda m: m.group(0).replace("{", "(").replace("}", ")"), expr)
    return [(m.group(1), m.group(2) or "") for m in re.finditer(r"\b(gpuwatch_[a-z0-9_]+)\s*(\{[^}]*\})?", s)]


def overlaps(a, b):
    return (a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and
            a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"])


def static_checks(dash, allowed):
    check(dash.get("schemaVersion") == 39, "schemaVersion is 39", str(dash.get("schemaVersion")))
    inputs = [i.get("name") for i in dash.get("__inputs", [])]
    check("DS_PROMETHEUS" in inputs, "the DS_PROMETHEUS input exists", str(inputs))
    check("${DS_PROMETHEUS}" in json.dumps(dash.get("templating")),
          "the datasource variable defaults to ${DS_PROMETHEUS}")
    variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
    check(variables.get("datasource", {}).get("type") == "datasource" and
          variables["datasource"].get("query") == "prometheus",
          "a templated `datasource` variable of type prometheus")
    for name, label in (("hostname", "hostname"), ("gpu", "gpu")):
        v = variables.get(name, {})
        q = v.get("query", {})
        q = q.get("query", "") if isinstance(q, dict) else q
        check(v.get("type") == "query" and re.fullmatch(rf"label_values\((.+), {label}\)", q or "") is not None,
              f"variable {name} comes from label_values(..., {label})", q)
        for n in metric_names(re.sub(r"^label_values\((.*), \w+\)$", r"\1", q or "")):
            check(n in allowed, f"variable {name} uses a gpuwatch metric ({n})")

    all_panels = list(flatten(dash.get("panels", [])))
    ids = [p.get("id") for p in all_panels]
    check(len(ids) == len(set(ids)) and None not in ids, "panel ids are unique")

    # Layout: top-level panels, and each collapsed row's children, fit the grid without overlap.
    groups = [[p for p in dash["panels"]]] + [p["panels"] for p in dash["panels"] if p.get("panels")]
    layout_ok = True
    for group in groups:
        boxes = [p["gridPos"] for p in group]
        for i, a in enumerate(boxes):
            if a["x"] < 0 or a["w"] <= 0 or a["x"] + a["w"] > 24 or a["h"] <= 0:
                layout_ok = False
            for b in boxes[i + 1:]:
                if overlaps(a, b):
                    layout_ok = False
    check(layout_ok, "panels fit the 24-column grid without overlapping")

    defined = set(variables) | GRAFANA_BUILTINS | {"DS_PROMETHEUS"}
    titles = set()
    for p in all_panels:
        if p.get("type") == "row":
            continue
        title = p.get("title", "")
        check(title and title not in titles, f"panel '{title}' has a unique title")
        titles.add(title)
        check(p.get("datasource", {}).get("uid") == "${datasource}", f"panel '{title}' uses ${{datasource}}")
        targets = p.get("targets", [])
        check(len(targets) > 0, f"panel '{title}' has queries")
        for t in targets:
            expr = t.get("expr", "")
            ref = t.get("refId", "?")
            names = metric_names(expr)
            unknown = [n for n in names if n not in allowed]
            check(names and not unknown, f"panel '{title}' {ref}: only gpuwatch metrics ({', '.join(names)})",
                  f"unknown: {unknown}" if unknown else "no metric")
            check(t.get("datasource", {}).get("uid") == "${datasource}",
                  f"panel '{title}' {ref}: query on ${{datasource}}")
            undefined = variables_used(expr) - defined
            check(not undefined, f"panel '{title}' {ref}: variables defined", str(undefined))
            # The host filter (and the job filter) reach every gpuwatch series of every panel.
            unfiltered = [n for n, m in selectors(expr)
                          if 'hostname=~"$hostname"' not in m or 'job=~"$job"' not in m]
            check(not unfiltered, f"panel '{title}' {ref}: every gpuwatch series filtered by $job and $hostname",
                  str(unfiltered))
            gated = sorted({n for n in names if PROCESS_METRICS_ONLY.match(n)})
            check(not gated or "--process-metrics" in p.get("description", ""),
                  f"panel '{title}' says that {', '.join(gated) or 'its series'} need --process-metrics",
                  p.get("description", ""))

    exprs = rule_exprs()
    alerts = re.findall(r"^\s*- alert:", RULES.read_text(), re.M)
    records = re.findall(r"^\s*- record:", RECORDING.read_text(), re.M)
    check(len(exprs) == len(alerts) + len(records) and alerts and records,
          f"{len(alerts)} alert rules and {len(records)} recording rules, each with a one-line expr")
    for rule, expr in exprs:
        names = metric_names(expr)
        unknown = [n for n in names if n not in allowed]
        check(names and not unknown, f"rule {rule}: only gpuwatch metrics ({', '.join(names)})", str(unknown))


def used_names(dash):
    """Every metric name the dashboard's panels and variables and the rule files use."""
    used = set()
    for p in flatten(dash.get("panels", [])):
        for t in p.get("targets", []):
            used.update(metric_names(t.get("expr", "")))
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query", {})
        q = q.get("query", "") if isinstance(q, dict) else q
        if v.get("type") == "query":
            used.update(metric_names(re.sub(r"^label_values\((.*), \w+\)$", r"\1", q or "")))
    for _, expr in rule_exprs():
        used.update(metric_names(expr))
    return used


def coverage_checks(dash, allowed, gpuwatch):
    exported = documented_families()
    check(len(exported) > 40, f"docs/metrics.md lists {len(exported)} gpuwatch families")
    if gpuwatch is None:
        print("# skip: no --gpuwatch: coverage of docs/metrics.md's families only, not of a live /metrics")
    else:
        live, error = live_families(gpuwatch)
        check(live is not None, "gpuwatch --demo serve --process-metrics --process-user serves /metrics", error)
        live = {n for n in live or set() if n.startswith("gpuwatch_")}
        unknown = sorted(live - allowed)
        check(live and not unknown, f"every one of the {len(live)} families /metrics serves is a name this check knows",
              f"unknown: {unknown}")
        exported |= live
    used = used_names(dash)
    uncovered = sorted(exported - used)
    print(f"# {len(uncovered)} of {len(exported)} exported families appear in neither the dashboard nor the rules"
          + (": " + ", ".join(uncovered) if uncovered else ""))
    missing = [n for n in uncovered if n not in NOT_SHOWN]
    check(not missing, "every exported family is shown in a panel or used by a rule (or in NOT_SHOWN with a reason)",
          "not shown: " + ", ".join(missing))
    stale = sorted(n for n in NOT_SHOWN if n in used)
    check(not stale, "NOT_SHOWN lists no family that is shown", ", ".join(stale))


def live_query(base, expr):
    url = base.rstrip("/") + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return json.load(e)


def substitute(expr):
    expr = expr.replace("$__rate_interval", "1m").replace("$__range", "5m").replace("$__interval", "15s")
    return re.sub(r"\$\{?(job|hostname|gpu)\}?", ".*", expr)


def may_be_absent(name):
    return name in MAY_BE_ABSENT or MAY_BE_ABSENT_FAMILIES.match(name) is not None


def live_checks(dash, base):
    present = set()
    url = base.rstrip("/") + "/api/v1/label/__name__/values"
    with urllib.request.urlopen(url, timeout=10) as r:
        present = set(json.load(r)["data"])
    used = set()
    for p in flatten(dash["panels"]):
        for t in p.get("targets", []):
            expr = substitute(t["expr"])
            names = metric_names(t["expr"])
            used.update(names)
            answer = live_query(base, expr)
            ok = answer.get("status") == "success"
            n = len(answer.get("data", {}).get("result", [])) if ok else 0
            optional = all(may_be_absent(name) or name in PROMETHEUS_SERIES for name in names)
            check(ok and (n > 0 or optional), f"live: panel '{p['title']}' {t['refId']} returns {n} series",
                  answer.get("error", "no data") + f" [{expr}]")
    for v in dash["templating"]["list"]:
        if v.get("type") != "query":
            continue
        q = v["query"]["query"]
        m = re.fullmatch(r"label_values\((.+), (\w+)\)", q)
        selector, label = substitute(m.group(1)), m.group(2)
        url = (base.rstrip("/") + f"/api/v1/label/{label}/values?" +
               urllib.parse.urlencode({"match[]": selector}))
        with urllib.request.urlopen(url, timeout=10) as r:
            values = json.load(r).get("data", [])
        check(len(values) > 0, f"live: variable {v['name']} has values {values}")
    for _, expr in rule_exprs():
        used.update(metric_names(expr))
    for name in sorted(used):
        if may_be_absent(name) or name in PROMETHEUS_SERIES - {"up"}:
            continue
        check(name in present, f"live: {name} is exported", "not in Prometheus")


def main(argv):
    base = None
    gpuwatch = None
    if len(argv) == 3 and argv[1] == "--prometheus":
        base = argv[2]
    elif len(argv) == 3 and argv[1] == "--gpuwatch":
        gpuwatch = argv[2]
    elif len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        dash = json.loads(DASHBOARD.read_text())
    except ValueError as e:
        check(False, f"{DASHBOARD.name} is valid JSON", str(e))
        return 1
    check(True, f"{DASHBOARD.name} is valid JSON")
    allowed = catalogue_names() | exporter_names() | recorded_names() | PROMETHEUS_SERIES
    check(len(catalogue_names()) > 20, "the field catalogue's Prometheus names were read")
    check(len(exporter_names() - catalogue_names()) > 20, "the exporter's own family names were read")
    if base is None:
        static_checks(dash, allowed)
        coverage_checks(dash, allowed, gpuwatch)
    else:
        live_checks(dash, base)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
