#!/usr/bin/env python3
"""Checks deploy/grafana/gpuwatch-dashboard.json and the PromQL of deploy/prometheus.

  check_dashboard.py                      static checks (no server needed)
  check_dashboard.py --prometheus URL     also runs every panel and variable query against a
                                          Prometheus that scrapes gpuwatch (prometheus_test.sh)

Static: the dashboard is valid JSON in the shape Grafana 10.4+ imports (schemaVersion 39, a
DS_PROMETHEUS input, the datasource/job/hostname/gpu variables, unique panel ids, panels
inside the 24-column grid without overlaps, every query on ${datasource}, only defined
variables), and every metric name in a panel's or an alert rule's PromQL is one gpuwatch
exports: a Prometheus name of the field catalogue (src/core/catalogue.cc) or one of the
exporter's own series below, or a series Prometheus itself writes (up, ALERTS, ...).

Live: every query parses and returns data; every gpuwatch metric they use exists.

Prints `ok - ...` / `not ok - ...` per check and `N passed, M failed`; exits 1 on a failure.
Python 3 standard library only.
"""
import json
import re
import sys
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "gpuwatch-dashboard.json"
RULES = ROOT / "deploy" / "prometheus" / "gpuwatch-rules.yml"
CATALOGUE = ROOT / "src" / "core" / "catalogue.cc"

# Series gpuwatch serve writes besides the catalogue's fields (docs/deploy.md, "Metrics").
EXPORTER_SERIES = {
    "gpuwatch_gpu_info", "gpuwatch_gpu_up", "gpuwatch_alert_active", "gpuwatch_leak_suspected",
    "gpuwatch_leak_rate_bytes_per_second", "gpuwatch_time_to_oom_seconds",
    "gpuwatch_exporter_last_sample_age_seconds", "gpuwatch_exporter_sample_duration_seconds",
    "gpuwatch_exporter_scrapes_total", "gpuwatch_exporter_nvml_errors_total", "gpuwatch_devices",
    "gpuwatch_exporter_build_info",
}
# Series Prometheus writes itself.
PROMETHEUS_SERIES = {"up", "scrape_duration_seconds", "scrape_samples_scraped", "ALERTS"}
# Exported only after something went wrong: absent from a healthy fake fleet.
MAY_BE_ABSENT = {"gpuwatch_exporter_nvml_errors_total"}

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
    """(alert, expr) of gpuwatch-rules.yml; every expr is on one line by convention."""
    out = []
    alert = None
    for line in RULES.read_text().splitlines():
        m = re.match(r"\s*- alert:\s*(\S+)", line)
        if m:
            alert = m.group(1)
        m = re.match(r"\s*expr:\s*(.+?)\s*$", line)
        if m:
            out.append((alert, m.group(1)))
    return out


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

    exprs = rule_exprs()
    alerts = re.findall(r"^\s*- alert:", RULES.read_text(), re.M)
    check(len(exprs) == len(alerts) and exprs, f"{len(alerts)} alert rules, each with a one-line expr")
    for alert, expr in exprs:
        names = metric_names(expr)
        unknown = [n for n in names if n not in allowed]
        check(names and not unknown, f"rule {alert}: only gpuwatch metrics ({', '.join(names)})", str(unknown))


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
            optional = all(name in MAY_BE_ABSENT or name in PROMETHEUS_SERIES for name in names)
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
        if name in MAY_BE_ABSENT or name in PROMETHEUS_SERIES - {"up"}:
            continue
        check(name in present, f"live: {name} is exported", "not in Prometheus")


def main(argv):
    base = None
    if len(argv) == 3 and argv[1] == "--prometheus":
        base = argv[2]
    elif len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        dash = json.loads(DASHBOARD.read_text())
    except ValueError as e:
        check(False, f"{DASHBOARD.name} is valid JSON", str(e))
        return 1
    check(True, f"{DASHBOARD.name} is valid JSON")
    allowed = catalogue_names() | EXPORTER_SERIES | PROMETHEUS_SERIES
    check(len(catalogue_names()) > 20, "the field catalogue's Prometheus names were read")
    if base is None:
        static_checks(dash, allowed)
    else:
        live_checks(dash, base)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
