#!/usr/bin/env python3
"""Checks the files under deploy/ as far as a machine without Docker, Kubernetes or a GPU can.

  check_deploy.py [BUILD_DIR]       (BUILD_DIR/gpuwatch, or the binary itself)
  check_deploy.py --write-prometheusrule
                                    regenerates deploy/kubernetes/prometheus-operator/prometheusrule.yaml
                                    from deploy/prometheus/gpuwatch-rules.yml + gpuwatch-recording.yml

- Every YAML file parses (PyYAML). Kubernetes (deploy_kubernetes.py): the objects `kubectl
  kustomize` renders for both discovery modes (the Service's annotations by default; the
  ServiceMonitor, or the PodMonitor in its place, of prometheus-operator/), exactly one mode
  active in each; the core kinds round-trip through the typed models of the official Python
  client (python3-kubernetes) when it is installed, so a misspelt or misplaced field is caught;
  the CRDs by hand (selectors, port names, job label, the PrometheusRule equal to the rule files);
  the DaemonSet and Service say what docs/deploy.md promises.
- promtool: `check config` (which also checks the rule files), `check rules`, `test rules` of the
  alert and the recording rules; the commented Kubernetes scrape job of prometheus.yml, uncommented;
  amtool: `check-config` of the Alertmanager example, and that it routes each alert by severity.
- systemd: `systemd-analyze verify` on the unit (ExecStart pointed at BUILD_DIR's gpuwatch, since
  verify wants the binary to exist), `systemd-sysusers` in a scratch root creates the user in
  group video.
- Dockerfile: the stages, the preset, ENTRYPOINT/CMD/HEALTHCHECK as exec-form JSON, EXPOSE,
  non-root USER, the NVIDIA_* environment; with BUILD_DIR, the runtime stage's packages provide
  every shared library the binary links (ldd + dpkg -S), and the HEALTHCHECK command passes
  against `gpuwatch --demo serve` (on 127.0.0.1:19845 instead of 9835) and fails once it stopped.
- With BUILD_DIR: every gpuwatch flag used by the DaemonSet, the unit and the Dockerfile is one
  `gpuwatch --help` / `gpuwatch serve --help` lists.

Prints `ok - ...` / `not ok - ...` per check (`# skip: ...` for a missing tool) and
`N passed, M failed`; exits 1 on a failure.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

import deploy_kubernetes

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"

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


def skip(what):
    print(f"# skip: {what}")


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


# --- YAML ------------------------------------------------------------------------------------
def check_yaml():
    files = sorted(p for p in DEPLOY.rglob("*") if p.suffix in (".yml", ".yaml"))
    check(len(files) >= 4, f"{len(files)} YAML files under deploy/")
    docs = {}
    for f in files:
        try:
            docs[f] = [d for d in yaml.safe_load_all(f.read_text()) if d is not None]
            check(True, f"{f.relative_to(ROOT)} parses as YAML ({len(docs[f])} documents)")
        except yaml.YAMLError as e:
            check(False, f"{f.relative_to(ROOT)} parses as YAML", str(e).replace("\n", " "))
    return docs


# --- Kubernetes ------------------------------------------------------------------------------
def check_kubernetes():
    """Both discovery modes (deploy_kubernetes.py); the DaemonSet and Service as docs/deploy.md says."""
    base, operator, podmode = deploy_kubernetes.render_modes(check, skip)
    extra = [o for o in operator + podmode if o["kind"] not in deploy_kubernetes.CORE_MODELS]
    deploy_kubernetes.check_models(base + extra, check, skip)
    kinds = {p.relative_to(ROOT).as_posix(): [d.get("kind") for d in deploy_kubernetes.load_all(p)]
             for p in sorted(deploy_kubernetes.K8S.rglob("*.yaml"))}
    check(all(k in deploy_kubernetes.API_VERSIONS for ks in kinds.values() for k in ks),
          "kubernetes: every document under deploy/kubernetes is a known kind", str(kinds))
    argv = check_core(base)
    if base and operator and podmode:
        deploy_kubernetes.check_operator_mode(base, operator, check)
        deploy_kubernetes.check_discovery(base, operator, podmode, check)
    return argv


def check_core(objects):
    by_kind = {o["kind"]: o for o in objects}
    check(set(by_kind) >= {"Namespace", "DaemonSet", "Service"}, "kubernetes: Namespace, DaemonSet and Service")
    ds = by_kind.get("DaemonSet")
    svc = by_kind.get("Service")
    if not ds or not svc:
        return []
    check(all(o["metadata"].get("namespace", "gpuwatch") == "gpuwatch" for o in objects if o["kind"] != "Namespace")
          and by_kind["Namespace"]["metadata"]["name"] == "gpuwatch", "kubernetes: everything in namespace gpuwatch")
    pod = ds["spec"]["template"]["spec"]
    check(pod.get("hostPID") is True, "kubernetes: hostPID: true")
    check(any(t.get("key") == "nvidia.com/gpu" for t in pod.get("tolerations", [])),
          "kubernetes: tolerates the nvidia.com/gpu taint")
    check(any("nvidia" in k for k in pod.get("nodeSelector", {})), "kubernetes: a nodeSelector for GPU nodes")
    check(ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(),
          "kubernetes: the DaemonSet's selector matches its pod labels")
    (c,) = pod["containers"]
    argv = c.get("command", []) + c.get("args", [])
    joined = " ".join(argv)
    for want in ("gpuwatch serve", "--listen 0.0.0.0:9835", "--db /var/lib/gpuwatch/history.db",
                 "--host-proc /host/proc"):
        check(want in joined, f"kubernetes: the container runs `{want}`", joined)
    env = {e["name"]: e.get("value") for e in c.get("env", [])}
    check(env.get("NVIDIA_VISIBLE_DEVICES") == "all" and env.get("NVIDIA_DRIVER_CAPABILITIES") == "utility",
          "kubernetes: NVIDIA_VISIBLE_DEVICES=all, NVIDIA_DRIVER_CAPABILITIES=utility")
    check("$(NODE_NAME)" not in joined or "NODE_NAME" in env, "kubernetes: $(NODE_NAME) is defined")
    res = c.get("resources", {})
    check(res.get("requests") == {"cpu": "50m", "memory": "64Mi"} and
          res.get("limits") == {"cpu": "200m", "memory": "256Mi"},
          "kubernetes: requests 50m/64Mi, limits 200m/256Mi", str(res))
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    check(ports.get("metrics") == 9835, "kubernetes: container port metrics = 9835")
    check(c.get("livenessProbe", {}).get("httpGet", {}).get("path") == "/healthz" and
          c.get("readinessProbe", {}).get("httpGet", {}).get("path") == "/readyz",
          "kubernetes: liveness /healthz, readiness /readyz")
    sc = c.get("securityContext", {})
    check(sc.get("readOnlyRootFilesystem") is True and sc.get("allowPrivilegeEscalation") is False and
          sc.get("capabilities", {}).get("drop") == ["ALL"] and not sc.get("privileged"),
          "kubernetes: read-only root, no privilege escalation, capabilities drop ALL, not privileged")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    check(all(m["name"] in volumes for m in mounts.values()), "kubernetes: every volumeMount has its volume")
    hp = mounts.get("/host/proc", {})
    check(hp.get("readOnly") is True and volumes.get(hp.get("name"), {}).get("hostPath", {}).get("path") == "/proc",
          "kubernetes: the host's /proc read-only at /host/proc")
    check("/var/lib/gpuwatch" in mounts, "kubernetes: a volume for the history database")
    check(svc["spec"].get("clusterIP") == "None", "kubernetes: the Service is headless")
    ann = svc["metadata"].get("annotations", {})
    check(ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/port") == "9835" and
          ann.get("prometheus.io/path") == "/metrics", "kubernetes: the Service has prometheus.io annotations")
    check(not any(k.startswith("prometheus.io/")
                  for k in ds["spec"]["template"]["metadata"].get("annotations", {})),
          "kubernetes: the pods carry no prometheus.io annotations (the Service does)")
    check(svc["spec"]["selector"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(),
          "kubernetes: the Service selects the DaemonSet's pods")
    check(all(p.get("targetPort") in ("metrics", 9835) for p in svc["spec"]["ports"]),
          "kubernetes: the Service targets the metrics port")
    return argv


# --- Prometheus ------------------------------------------------------------------------------
def check_promtool():
    d = DEPLOY / "prometheus"
    config = yaml.safe_load((d / "prometheus.yml").read_text())
    check(config.get("rule_files") == ["gpuwatch-rules.yml", "gpuwatch-recording.yml"],
          "prometheus.yml loads gpuwatch-rules.yml and gpuwatch-recording.yml", str(config.get("rule_files")))
    if not shutil.which("promtool"):
        skip("promtool not found (Debian: prometheus): rule and config files not checked")
        return
    r = run(["promtool", "check", "config", "prometheus.yml"], cwd=d)
    check(r.returncode == 0, "promtool check config deploy/prometheus/prometheus.yml", r.stdout + r.stderr)
    for rules, tests in (("gpuwatch-rules.yml", "gpuwatch-rules.test.yml"),
                         ("gpuwatch-recording.yml", "gpuwatch-recording.test.yml")):
        r = run(["promtool", "check", "rules", rules], cwd=d)
        check(r.returncode == 0, f"promtool check rules deploy/prometheus/{rules}", r.stdout + r.stderr)
        r = run(["promtool", "test", "rules", tests], cwd=d)
        check(r.returncode == 0, f"promtool test rules deploy/prometheus/{tests}", (r.stdout + r.stderr)[-3000:])
    # The Kubernetes job at the end of prometheus.yml is a comment: uncommented in place of the
    # static job, it must be a valid configuration too.
    text = (d / "prometheus.yml").read_text()
    block = text[text.index("  # - job_name: gpuwatch\n  #   kubernetes_sd_configs:"):]
    job = "\n".join(line.replace("  # ", "  ", 1) for line in block.splitlines() if line.startswith("  # "))
    head = text[:text.index("scrape_configs:")]
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("gpuwatch-rules.yml", "gpuwatch-recording.yml"):
            shutil.copy(d / name, tmp)
        (Path(tmp) / "prometheus.yml").write_text(head + "scrape_configs:\n" + job + "\n")
        r = run(["promtool", "check", "config", "prometheus.yml"], cwd=tmp)
    if "kubernetes_sd_configs not found" in r.stdout + r.stderr:
        # Debian's prometheus is built without Kubernetes discovery.
        skip("this promtool has no kubernetes_sd_configs: prometheus.yml's Kubernetes job not checked")
    else:
        check(r.returncode == 0 and "role: endpoints" in job,
              "promtool check config: prometheus.yml's Kubernetes (endpoints role) job, uncommented",
              r.stdout + r.stderr)


def check_alertmanager():
    if not shutil.which("amtool"):
        skip("amtool not found (Debian: prometheus-alertmanager): alertmanager.yml not checked")
        return
    d = DEPLOY / "prometheus"
    r = run(["amtool", "check-config", "alertmanager.yml"], cwd=d)
    check(r.returncode == 0, "amtool check-config deploy/prometheus/alertmanager.yml", r.stdout + r.stderr)
    receiver = {"critical": "gpu-oncall", "warning": "gpu-team-chat", "info": "dashboards-only"}
    rules = yaml.safe_load((d / "gpuwatch-rules.yml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            severity = rule["labels"]["severity"]
            for sev in (["info", "warning"] if "{{" in severity else [severity]):
                r = run(["amtool", "config", "routes", "test", "--config.file=alertmanager.yml",
                         f"alertname={rule['alert']}", f"severity={sev}", "hostname=node1", "gpu=0"], cwd=d)
                check(r.stdout.strip() == receiver[sev],
                      f"alertmanager routes {rule['alert']} ({sev}) to {receiver[sev]}", r.stdout + r.stderr)


# --- systemd ---------------------------------------------------------------------------------
def unit_value(text, key):
    return [m.group(1) for m in re.finditer(rf"^{key}=(.*)$", text, re.M)]


def check_systemd(gpuwatch):
    unit = DEPLOY / "systemd" / "gpuwatch.service"
    text = unit.read_text()
    for key, want in (("DynamicUser", "no"), ("ProtectSystem", "strict"), ("ProtectHome", "yes"),
                      ("PrivateTmp", "yes"), ("NoNewPrivileges", "yes"), ("StateDirectory", "gpuwatch"),
                      ("RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"),
                      ("SystemCallFilter", "@system-service"), ("Restart", "on-failure"),
                      ("ExecReload", "/bin/kill -HUP $MAINPID"), ("ReadWritePaths", "/var/lib/gpuwatch"),
                      ("RuntimeDirectory", "gpuwatch"), ("RuntimeDirectoryMode", "0755")):
        check(unit_value(text, key) == [want], f"systemd: {key}={want}", str(unit_value(text, key)))
    check(any(v.startswith("char-nvidia") and v.endswith(" rw") for v in unit_value(text, "DeviceAllow")),
          "systemd: DeviceAllow for the NVIDIA device group, rw")
    (exec_start,) = unit_value(text, "ExecStart")
    if not shutil.which("systemd-analyze"):
        skip("systemd-analyze not found: the unit was not verified")
    elif gpuwatch is None:
        skip("no BUILD_DIR: systemd-analyze verify needs an existing ExecStart binary")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "gpuwatch.service"
            copy.write_text(text.replace("/usr/local/bin/gpuwatch", str(gpuwatch)))
            r = run(["systemd-analyze", "verify", str(copy)])
            out = (r.stdout + r.stderr).strip()
            check(r.returncode == 0 and not out, "systemd-analyze verify deploy/systemd/gpuwatch.service", out)
            r = run(["systemd-analyze", "security", "--offline=true", str(copy)])
            m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", r.stdout)
            check(m is not None and float(m.group(1)) <= 3.0,
                  f"systemd-analyze security: exposure {m.group(1) if m else '?'} (at most 3.0, 'OK')",
                  r.stdout[-500:])
    sysusers = DEPLOY / "systemd" / "gpuwatch.sysusers.conf"
    if shutil.which("systemd-sysusers"):
        with tempfile.TemporaryDirectory() as root:
            (Path(root) / "etc").mkdir()
            (Path(root) / "etc" / "passwd").write_text("root:x:0:0::/root:/bin/sh\n")
            (Path(root) / "etc" / "group").write_text("root:x:0:\nvideo:x:44:\n")
            r = run(["systemd-sysusers", f"--root={root}", str(sysusers)])
            group = (Path(root) / "etc" / "group").read_text()
            passwd = (Path(root) / "etc" / "passwd").read_text()
            check(r.returncode == 0 and re.search(r"^gpuwatch:x:\d+:\d+:", passwd, re.M) is not None and
                  re.search(r"^video:x:44:gpuwatch$", group, re.M) is not None,
                  "systemd-sysusers creates user gpuwatch in group video", r.stderr)
    else:
        skip("systemd-sysusers not found")
    return exec_start.split()


# --- Dockerfile ------------------------------------------------------------------------------
def check_dockerfile(gpuwatch):
    text = (DEPLOY / "docker" / "Dockerfile").read_text()
    joined = re.sub(r"\\\n", " ", text)
    stages = re.findall(r"^FROM (\S+)(?: AS (\S+))?", text, re.M)
    check(stages == [("debian:12", "build"), ("debian:12-slim", "")],
          "docker: a debian:12 build stage and a debian:12-slim runtime stage", str(stages))
    check("npm ci --prefix web" in joined, "docker: npm ci in web/")
    check("cmake --preset release" in joined and "cmake --build --preset release" in joined and
          "cmake --install build/release" in joined, "docker: release preset build and install")
    presets = json.loads((ROOT / "CMakePresets.json").read_text())
    by_name = {p["name"]: p for p in presets["configurePresets"]}
    release = by_name.get("release", {})
    binary_dir = release.get("binaryDir") or by_name.get(release.get("inherits", ""), {}).get("binaryDir")
    check(release and binary_dir == "${sourceDir}/build/${presetName}",
          "docker: the release preset builds into build/release")
    for src in re.findall(r"^COPY (?!--from)(.+) \S+$", text, re.M):
        for path in src.split():
            if path != ".":
                check((ROOT / path).exists(), f"docker: COPY source {path} exists")
    exec_form = {}
    for key in ("ENTRYPOINT", "CMD"):
        m = re.findall(rf"^{key} (\[.*\])$", text, re.M)
        try:
            exec_form[key] = json.loads(m[-1])
            check(True, f"docker: {key} is exec-form JSON")
        except (IndexError, ValueError) as e:
            check(False, f"docker: {key} is exec-form JSON", str(e))
            exec_form[key] = []
    check(exec_form["ENTRYPOINT"][:4] == ["gpuwatch", "serve", "--listen", "0.0.0.0:9835"],
          "docker: ENTRYPOINT gpuwatch serve --listen 0.0.0.0:9835")
    m = re.search(r"HEALTHCHECK .*?CMD (\[.*\])$", joined, re.M)
    check(m is not None and "/healthz" in m.group(1) and json.loads(m.group(1)),
          "docker: a HEALTHCHECK on /healthz (exec-form JSON)")
    if m is not None and gpuwatch is not None:
        check_healthcheck(gpuwatch, json.loads(m.group(1)))
    check(re.search(r"^EXPOSE 9835$", text, re.M) is not None, "docker: EXPOSE 9835")
    users = re.findall(r"^USER (\S+)$", text, re.M)
    check(users and not users[-1].startswith("0") and users[-1] != "root", "docker: runs as a non-root USER")
    check("NVIDIA_VISIBLE_DEVICES=all" in joined and "NVIDIA_DRIVER_CAPABILITIES=utility" in joined,
          "docker: NVIDIA_VISIBLE_DEVICES=all, NVIDIA_DRIVER_CAPABILITIES=utility")

    runtime = joined.split("FROM debian:12-slim", 1)[1]
    m = re.search(r"apt-get install -y --no-install-recommends (.*?)&&", runtime, re.S)
    packages = set(m.group(1).split()) if m else set()
    if gpuwatch is None:
        skip("no BUILD_DIR: runtime packages not compared with the binary's libraries")
    elif not (shutil.which("ldd") and shutil.which("dpkg")):
        skip("ldd or dpkg not found: runtime packages not compared with the binary's libraries")
    else:
        base = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"}  # in debian:12-slim
        ldd = run(["ldd", str(gpuwatch)]).stdout
        # A GCC sanitizer build links its runtimes as shared libraries; the image is a
        # release build, which does not.
        libs = [lib for lib in re.findall(r"=> (/\S+)", ldd)
                if not re.match(r"lib(asan|ubsan|tsan|lsan)\.so", Path(lib).name)]
        missing = []
        for lib in libs:
            r = run(["dpkg", "-S", os.path.realpath(lib)])
            if r.returncode != 0:
                r = run(["dpkg", "-S", lib])
            pkg = r.stdout.split(":")[0] if r.returncode == 0 else f"?{lib}"
            if pkg not in packages | base:
                missing.append(f"{Path(lib).name} ({pkg})")
        check(libs and not missing, f"docker: the runtime stage installs the packages of all {len(libs)} "
                                    "libraries gpuwatch links", "missing: " + ", ".join(missing))
    return exec_form["ENTRYPOINT"] + exec_form["CMD"]


def check_healthcheck(gpuwatch, argv, port=19845):
    """Runs the image's HEALTHCHECK command (on another port) against `gpuwatch --demo serve`."""
    argv = [a.replace("9835", str(port)) for a in argv]
    with tempfile.TemporaryDirectory() as home:
        server = subprocess.Popen([str(gpuwatch), "--demo", "serve", "--listen", f"127.0.0.1:{port}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env={**os.environ, "HOME": home})
        try:
            healthy = 1
            for _ in range(50):
                healthy = run(argv).returncode
                if healthy == 0:
                    break
                time.sleep(0.2)
        finally:
            server.terminate()
            server.wait(timeout=20)
        after = run(argv).returncode
    check(healthy == 0 and after != 0,
          "docker: the HEALTHCHECK command passes against gpuwatch serve and fails once it stopped",
          f"while serving: {healthy}, after: {after}")


# --- flags against the binary ----------------------------------------------------------------
def check_flags(gpuwatch, commands):
    if gpuwatch is None:
        skip("no BUILD_DIR: the gpuwatch flags of the deploy files were not checked against the binary")
        return
    known = set()
    for argv in ([str(gpuwatch), "--help"], [str(gpuwatch), "serve", "--help"]):
        known |= set(re.findall(r"(--[a-z][a-z0-9-]*)", run(argv).stdout))
    for where, argv in commands:
        flags = [a for a in argv if a.startswith("--")]
        unknown = [f for f in flags if f not in known]
        check(flags and not unknown, f"{where}: every gpuwatch flag is known to the binary ({' '.join(flags)})",
              f"unknown: {unknown}")


def main(argv):
    gpuwatch = None
    if argv[1:] == ["--write-prometheusrule"]:
        print(f"wrote {deploy_kubernetes.write_prometheusrule().relative_to(ROOT)}")
        return 0
    if len(argv) == 2:
        p = Path(argv[1])
        gpuwatch = (p / "gpuwatch" if p.is_dir() else p).resolve()
        if not os.access(gpuwatch, os.X_OK):
            check(False, f"{gpuwatch} is an executable")
            print(f"{passed} passed, {failed} failed")
            return 1
    elif len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    check_yaml()
    ds_argv = check_kubernetes()
    check_promtool()
    check_alertmanager()
    unit_argv = check_systemd(gpuwatch)
    docker_argv = check_dockerfile(gpuwatch)
    check_flags(gpuwatch, [("kubernetes DaemonSet", ds_argv), ("systemd ExecStart", unit_argv),
                           ("docker ENTRYPOINT+CMD", docker_argv)])
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
