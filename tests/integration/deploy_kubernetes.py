"""The Kubernetes part of check_deploy.py: deploy/kubernetes/ as far as a machine without a cluster can.

- The objects `kubectl kustomize` renders for each discovery mode (deploy/kubernetes: the Service's
  prometheus.io annotations; deploy/kubernetes/prometheus-operator: a ServiceMonitor, or the
  PodMonitor in its place), by hand when kubectl is missing. Each mode has exactly one active way
  for Prometheus to find the pods, so no pod is scraped twice.
- Every kind has its apiVersion; the core kinds round-trip through the typed models of the
  official Python client (python3-kubernetes), so a misspelt or misplaced field is caught.
- The Operator's CRDs, which those models do not know, by hand: required fields, known fields
  only, selectors matching the Service's or the pods' labels, ports named on the Service or the
  container, `job` = gpuwatch, and the PrometheusRule's groups equal to those of
  deploy/prometheus/gpuwatch-rules.yml + gpuwatch-recording.yml (`check_deploy.py
  --write-prometheusrule` regenerates it).

`check(condition, what, detail)` and `skip(what)` are check_deploy.py's reporters.
"""
import copy
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "kubernetes"
OPERATOR = K8S / "prometheus-operator"
PROMETHEUS = ROOT / "deploy" / "prometheus"
RULE_FILES = ("gpuwatch-rules.yml", "gpuwatch-recording.yml")

API_VERSIONS = {
    "Namespace": "v1", "ServiceAccount": "v1", "Service": "v1", "DaemonSet": "apps/v1",
    "ServiceMonitor": "monitoring.coreos.com/v1", "PodMonitor": "monitoring.coreos.com/v1",
    "PrometheusRule": "monitoring.coreos.com/v1", "Kustomization": "kustomize.config.k8s.io/v1beta1",
    "Component": "kustomize.config.k8s.io/v1alpha1",
}
CORE_MODELS = {"Namespace": "V1Namespace", "ServiceAccount": "V1ServiceAccount",
               "DaemonSet": "V1DaemonSet", "Service": "V1Service"}
# Fields of monitoring.coreos.com/v1 (prometheus-operator's CRDs) these files may use: a typo is
# an unknown field, which the API server would drop or refuse.
MONITOR_SPEC = {"jobLabel", "selector", "namespaceSelector", "endpoints", "podMetricsEndpoints",
                "targetLabels", "podTargetLabels", "sampleLimit"}
ENDPOINT = {"port", "targetPort", "path", "scheme", "interval", "scrapeTimeout", "honorLabels",
            "honorTimestamps", "relabelings", "metricRelabelings", "tlsConfig", "basicAuth",
            "bearerTokenSecret", "params", "followRedirects", "enableHttp2"}
RELABELING = {"sourceLabels", "separator", "targetLabel", "regex", "modulus", "replacement", "action"}
DURATION = re.compile(r"^(\d+(ms|s|m|h))+$")

PROMETHEUSRULE_HEAD = """\
# gpuwatch's alert and recording rules as a PrometheusRule (Prometheus Operator):
# spec.groups = the groups of deploy/prometheus/gpuwatch-rules.yml followed by
# those of deploy/prometheus/gpuwatch-recording.yml. GENERATED: do not edit;
# after changing either file run
#   python3 tests/integration/check_deploy.py --write-prometheusrule
# (deploy_files_test fails while this file and the rule files differ).
"""


def prometheusrule_object():
    groups = []
    for name in RULE_FILES:
        groups += yaml.safe_load((PROMETHEUS / name).read_text())["groups"]
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "gpuwatch", "namespace": "gpuwatch",
                     # The label your Prometheus's ruleSelector selects on.
                     "labels": {"app.kubernetes.io/name": "gpuwatch", "release": "prometheus"}},
        "spec": {"groups": groups},
    }


def write_prometheusrule():
    text = PROMETHEUSRULE_HEAD + yaml.safe_dump(prometheusrule_object(), sort_keys=False,
                                                allow_unicode=True, width=1 << 20)
    (OPERATOR / "prometheusrule.yaml").write_text(text)
    return OPERATOR / "prometheusrule.yaml"


def load_all(path):
    return [d for d in yaml.safe_load_all(Path(path).read_text()) if d is not None]


def merge(into, patch):
    """A strategic merge patch as far as these files need one: maps merge, scalars replace."""
    for k, v in patch.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            merge(into[k], v)
        else:
            into[k] = copy.deepcopy(v)


def render_by_hand(directory):
    """What `kubectl kustomize DIR` prints, for the features deploy/kubernetes uses."""
    k = yaml.safe_load((directory / "kustomization.yaml").read_text())
    objects = []
    for r in k.get("resources", []):
        p = (directory / r).resolve()
        objects += render_by_hand(p) if p.is_dir() else load_all(p)
    for c in k.get("components", []):
        component = yaml.safe_load((directory / c / "kustomization.yaml").read_text())
        for r in component.get("resources", []):
            objects += load_all(directory / c / r)
        for patch in component.get("patches", []):
            target, body = patch["target"], yaml.safe_load(patch["patch"])
            for o in objects:
                if o["kind"] == target["kind"] and o["metadata"]["name"] == target["name"]:
                    merge(o, body)
    return objects


def variant(tmp, monitor):
    """A copy of deploy/kubernetes in TMP with the prometheus-operator component enabled as its
    kustomization.yaml says, with MONITOR (servicemonitor.yaml or podmonitor.yaml) as the monitor."""
    shutil.copytree(K8S, tmp, dirs_exist_ok=True)
    top = (K8S / "kustomization.yaml").read_text()
    enabled = top.replace("# components:\n#   - prometheus-operator", "components:\n  - prometheus-operator")
    if enabled == top:
        return None
    (tmp / "kustomization.yaml").write_text(enabled)
    comp = tmp / "prometheus-operator" / "kustomization.yaml"
    comp.write_text(comp.read_text().replace("  - servicemonitor.yaml\n", f"  - {monitor}\n"))
    return tmp


def render(directory, check, skip, what=None):
    what = what or str(directory.relative_to(ROOT))
    if shutil.which("kubectl"):
        r = subprocess.run(["kubectl", "kustomize", str(directory)], capture_output=True, text=True)
        check(r.returncode == 0, f"kubernetes: `kubectl kustomize` renders {what}", r.stderr.strip())
        if r.returncode == 0:
            return [d for d in yaml.safe_load_all(r.stdout) if d is not None]
        return []
    skip(f"kubectl not found: {what} rendered by hand, not by kustomize")
    return render_by_hand(directory)


def selects(selector, labels):
    return bool(selector.get("matchLabels")) and selector["matchLabels"].items() <= labels.items()


def discovery_modes(objects):
    """The ways a Prometheus finds gpuwatch's pods in a set of objects (more than one: double scraping)."""
    svc = next((o for o in objects if o["kind"] == "Service"), None)
    ds = next((o for o in objects if o["kind"] == "DaemonSet"), None)
    pod_labels = ds["spec"]["template"]["metadata"].get("labels", {}) if ds else {}
    modes = []
    if svc and svc["metadata"].get("annotations", {}).get("prometheus.io/scrape") == "true":
        modes.append("Service annotations")
    if ds and ds["spec"]["template"]["metadata"].get("annotations", {}).get("prometheus.io/scrape") == "true":
        modes.append("pod annotations")
    for o in objects:
        if o["kind"] == "ServiceMonitor" and svc and selects(o["spec"].get("selector", {}), svc["metadata"]["labels"]):
            modes.append("ServiceMonitor")
        if o["kind"] == "PodMonitor" and selects(o["spec"].get("selector", {}), pod_labels):
            modes.append("PodMonitor")
    return modes


def check_models(objects, check, skip):
    for o in objects:
        want = API_VERSIONS.get(o.get("kind"))
        check(want is not None and o.get("apiVersion") == want,
              f"kubernetes: {o.get('kind')} {o.get('metadata', {}).get('name')} is {want}", str(o.get("apiVersion")))
    try:
        from kubernetes import client  # python3-kubernetes
    except ImportError:
        skip("python3-kubernetes not installed: Kubernetes objects not checked against the API models")
        return
    api = client.ApiClient()

    class Response:
        def __init__(self, obj):
            self.data = json.dumps(obj)

    for obj in objects:
        if obj["kind"] not in CORE_MODELS:
            continue
        what = f"{obj['kind']} {obj['metadata']['name']}"
        try:
            back = api.sanitize_for_serialization(api.deserialize(Response(obj), CORE_MODELS[obj["kind"]]))
            diff = roundtrip_diff(obj, back)
            check(not diff, f"kubernetes: {what} matches the {obj['apiVersion']} API model "
                            f"(no unknown or misplaced field)", ", ".join(diff))
        except (ValueError, TypeError, AttributeError) as e:
            check(False, f"kubernetes: {what} matches the API model", str(e))


def roundtrip_diff(a, b, path=""):
    out = []
    if isinstance(a, dict):
        for k, v in a.items():
            if not isinstance(b, dict) or k not in b:
                out.append(f"{path}/{k}")
            else:
                out += roundtrip_diff(v, b[k], f"{path}/{k}")
    elif isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            out.append(f"{path}: list changed")
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                out += roundtrip_diff(x, y, f"{path}[{i}]")
    elif a != b and str(a) != str(b):
        out.append(f"{path}: {a!r} became {b!r}")
    return out


def check_monitor(mon, labels, ports, endpoints_key, check):
    """A ServiceMonitor (labels/ports of the Service) or PodMonitor (of the pods and container)."""
    kind = mon["kind"]
    spec = mon.get("spec", {})
    check(mon["metadata"].get("name") == "gpuwatch" and mon["metadata"].get("namespace") == "gpuwatch",
          f"kubernetes: {kind} gpuwatch in namespace gpuwatch")
    check(set(spec) <= MONITOR_SPEC, f"kubernetes: {kind} spec has only known fields", str(set(spec) - MONITOR_SPEC))
    check(selects(spec.get("selector", {}), labels),
          f"kubernetes: {kind} selector matches the {'Service' if kind == 'ServiceMonitor' else 'pod'} labels",
          f"{spec.get('selector')} vs {labels}")
    check("gpuwatch" in spec.get("namespaceSelector", {}).get("matchNames", []),
          f"kubernetes: {kind} looks in namespace gpuwatch")
    check(labels.get(spec.get("jobLabel")) == "gpuwatch",
          f"kubernetes: {kind} jobLabel {spec.get('jobLabel')} gives job=gpuwatch (GpuwatchExporterDown)")
    eps = spec.get(endpoints_key, [])
    check(len(eps) == 1, f"kubernetes: {kind} has one {endpoints_key} entry", str(len(eps)))
    for ep in eps:
        check(set(ep) <= ENDPOINT, f"kubernetes: {kind} endpoint has only known fields", str(set(ep) - ENDPOINT))
        check(ep.get("port") in ports, f"kubernetes: {kind} endpoint port '{ep.get('port')}' is named there",
              str(sorted(ports)))
        check(ep.get("path", "/metrics") == "/metrics", f"kubernetes: {kind} scrapes /metrics")
        check(all(DURATION.match(str(ep.get(k, "1s"))) for k in ("interval", "scrapeTimeout")),
              f"kubernetes: {kind} interval and scrapeTimeout are durations")
        for r in ep.get("relabelings", []):
            check(set(r) <= RELABELING, f"kubernetes: {kind} relabeling has only known fields",
                  str(set(r) - RELABELING))


def check_prometheusrule(rule, check):
    check(rule["metadata"].get("name") == "gpuwatch" and rule["metadata"].get("namespace") == "gpuwatch",
          "kubernetes: PrometheusRule gpuwatch in namespace gpuwatch")
    groups = rule.get("spec", {}).get("groups", [])
    names = [g.get("name") for g in groups]
    check(groups and len(names) == len(set(names)) and all(names), "kubernetes: PrometheusRule groups named, unique",
          str(names))
    ok = all(isinstance(r.get("expr"), str) and (("alert" in r) != ("record" in r))
             for g in groups for r in g.get("rules", []))
    check(ok and all(g.get("rules") for g in groups),
          "kubernetes: PrometheusRule: every rule has an expr and exactly one of alert/record")
    want = prometheusrule_object()
    check(rule.get("spec") == want["spec"],
          "kubernetes: PrometheusRule spec.groups = the groups of " + " + ".join(RULE_FILES),
          "differs: run python3 tests/integration/check_deploy.py --write-prometheusrule")
    check(rule == want, "kubernetes: prometheusrule.yaml is what --write-prometheusrule writes")


def check_operator_mode(base, operator, check):
    by_kind = {}
    for o in operator:
        by_kind.setdefault(o["kind"], []).append(o)
    svc = next(o for o in base if o["kind"] == "Service")
    ds = next(o for o in base if o["kind"] == "DaemonSet")
    pod_labels = ds["spec"]["template"]["metadata"]["labels"]
    (c,) = ds["spec"]["template"]["spec"]["containers"]
    container_ports = {p["name"] for p in c.get("ports", [])}
    check(sorted(by_kind) == sorted(["DaemonSet", "Namespace", "PrometheusRule", "Service", "ServiceAccount",
                                     "ServiceMonitor"]),
          "kubernetes: the prometheus-operator component adds a ServiceMonitor and a PrometheusRule",
          str(sorted(by_kind)))
    base_core = list(base)
    op_core = [o for o in operator if o["kind"] in CORE_MODELS]
    op_svc = next((o for o in op_core if o["kind"] == "Service"), {})
    check(op_svc.get("metadata", {}).get("annotations", {}).get("prometheus.io/scrape") == "false",
          "kubernetes: the prometheus-operator component sets the Service's prometheus.io/scrape to \"false\"")
    unpatched = [o for o in op_core if o["kind"] != "Service"] + [copy.deepcopy(svc)]
    key = lambda o: (o["kind"], o["metadata"]["name"])  # noqa: E731
    dump = lambda objs: [json.dumps(o, sort_keys=True) for o in sorted(objs, key=key)]  # noqa: E731
    check(dump(unpatched) == dump(base_core),
          "kubernetes: the prometheus-operator component changes nothing else of the base's objects")
    svc_ports = {p["name"] for p in svc["spec"]["ports"]}
    for mon in by_kind.get("ServiceMonitor", []):
        check_monitor(mon, svc["metadata"]["labels"], svc_ports, "endpoints", check)
    podmonitors = load_all(OPERATOR / "podmonitor.yaml")
    check([o["kind"] for o in podmonitors] == ["PodMonitor"], "kubernetes: podmonitor.yaml holds one PodMonitor")
    for mon in podmonitors:
        check_monitor(mon, pod_labels, container_ports, "podMetricsEndpoints", check)
    for rule in by_kind.get("PrometheusRule", []):
        check_prometheusrule(rule, check)


def render_modes(check, skip):
    """(default, Operator with ServiceMonitor, Operator with PodMonitor) as kustomize renders them."""
    base = render(K8S, check, skip)
    out = [base]
    for monitor in ("servicemonitor.yaml", "podmonitor.yaml"):
        with tempfile.TemporaryDirectory() as tmp:
            d = variant(Path(tmp) / "kubernetes", monitor)
            check(d is not None, "kubernetes: kustomization.yaml has the commented `components: "
                                 "[prometheus-operator]` that docs/deploy.md says to uncomment")
            out.append(render(d, check, skip, f"deploy/kubernetes with the prometheus-operator component "
                                              f"({monitor})") if d else [])
    return out


def check_discovery(base, operator, podmode, check):
    modes = discovery_modes(base)
    check(modes == ["Service annotations"],
          "kubernetes: deploy/kubernetes (the default) has one discovery mode: the Service's annotations", str(modes))
    modes = discovery_modes(operator)
    check(modes == ["ServiceMonitor"],
          "kubernetes: with the prometheus-operator component, one discovery mode: the ServiceMonitor", str(modes))
    modes = discovery_modes(podmode)
    check(modes == ["PodMonitor"], "kubernetes: with the component and podmonitor.yaml in place of "
                                   "servicemonitor.yaml, one discovery mode: the PodMonitor", str(modes))
    # The check sees double scraping: the base's annotations next to the ServiceMonitor.
    doubled = base + [o for o in operator if o["kind"] == "ServiceMonitor"]
    check(discovery_modes(doubled) == ["Service annotations", "ServiceMonitor"],
          "kubernetes: (self-check) the base plus the ServiceMonitor without the patch counts two modes")
