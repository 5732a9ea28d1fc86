"""Checks `gpuwatch run --json` of a torchrun job of tests/gpu/ddp_job.py (issue 19, item 3).

Usage: ddp_summary.py RUN_JSON JOB_OUTPUT UUIDS_CSV LEAK_RANK
JOB_OUTPUT holds each rank's last line (`rank R pid P cuda:D uuid U backend B ...`),
UUIDS_CSV `gpuwatch query --query-gpu=index,uuid --format=csv,noheader`. Prints each check
as ok / FAILED: every rank's pid in the job's processes on the NVML GPU of its device's UUID;
framework memory reported on every GPU the ranks used, by as many processes as ranks there;
a leak or out-of-memory forecast on the leaking rank's pid and none on another rank's pid.
Exits 1 when a check failed."""
import json
import re
import sys


def plain(uuid):
    u = uuid.strip().lower()
    return u[4:] if u.startswith("gpu-") else u


def main(run_json, job_output, uuids_csv, leak_rank):
    run = json.load(open(run_json))
    nvml_of_uuid = {}
    for line in open(uuids_csv):
        if line.strip():
            index, uuid = [x.strip() for x in line.split(",", 1)]
            nvml_of_uuid[plain(uuid)] = int(index)
    ranks = {}
    for line in open(job_output):
        m = re.match(r"rank (\d+) pid (\d+) cuda:(\d+) uuid (\S*) backend (\w+)", line)
        if m:
            rank, pid, cuda, uuid, backend = m.groups()
            ranks[int(rank)] = {"pid": int(pid), "cuda": int(cuda), "backend": backend,
                                "gpu": nvml_of_uuid.get(plain(uuid))}
    failed = 0

    def check(ok, what):
        nonlocal failed
        failed += not ok
        print(("ok      " if ok else "FAILED  ") + what)

    check(len(ranks) > 0, f"{len(ranks)} ranks reported (exit status {run['exit_status']})")
    procs = {(p["pid"], p["gpu"]): p for p in run["processes"]}
    for r, info in sorted(ranks.items()):
        p = procs.get((info["pid"], info["gpu"]))
        check(p is not None,
              f"rank {r} (pid {info['pid']}, cuda:{info['cuda']}, {info['backend']}) is the "
              f"job's on NVML GPU {info['gpu']}"
              + (f": peak {p['peak_memory_bytes'] / 2**30:.2f} GiB" if p else ""))
    fw = run["framework_memory"]
    for gpu in sorted({i["gpu"] for i in ranks.values()}):
        n = sum(1 for i in ranks.values() if i["gpu"] == gpu)
        f = fw.get(str(gpu))
        check(f is not None and f.get("processes") == n,
              f"GPU {gpu}: framework memory from {n} rank(s): "
              + (f"{f.get('processes')} reported, peak allocated "
                 f"{f['peak'].get('allocated', 0) / 2**30:.2f} GiB" if f else "none"))
    leak_pid = ranks.get(leak_rank, {}).get("pid")
    leaks = run["leaks"]
    for item in leaks:
        print(f"        {item['kind']} GPU {item['gpu']} pid {item['pid']}: {item['message']}")
    check(any(item["pid"] == leak_pid for item in leaks),
          f"rank {leak_rank}'s leak (pid {leak_pid}) is reported under its pid")
    others = {i["pid"] for r, i in ranks.items() if r != leak_rank}
    wrong = [item for item in leaks if item["pid"] in others]
    check(not wrong, "no leak or forecast on another rank's pid"
          + (f": {[w['pid'] for w in wrong]}" if wrong else ""))
    print(f"        leak verdict line: {run['leak_verdict']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
