"""Checks concurrent `gpuwatch run --gpus auto:K --wait` jobs (issue 19, item 4).

Usage: queue_summary.py queue_1.txt queue_2.txt ...  (in launch order, 0.5 s apart)
Each file holds the job's lines `job I CUDA_VISIBLE_DEVICES=A,B start T` and `job I end T`.
Checks that no GPU was held by two jobs at once and that jobs started in launch order.
Exits 1 when a check failed."""
import re
import sys


def main(paths):
    jobs = []
    for path in paths:
        text = open(path).read()
        start = re.search(r"job (\d+) CUDA_VISIBLE_DEVICES=(\S*) start ([\d.]+)", text)
        end = re.search(r"job \d+ end ([\d.]+)", text)
        if not start or not end:
            print(f"FAILED  {path}: the job did not run: {text.strip()[-300:]}")
            return 1
        jobs.append((int(start.group(1)), start.group(2).split(","), float(start.group(3)),
                     float(end.group(1))))
    jobs.sort()
    t0 = min(j[2] for j in jobs)
    for i, gpus, s, e in jobs:
        print(f"        job {i}: GPUs {','.join(gpus)} from {s - t0:6.2f} s to {e - t0:6.2f} s")
    failed = 0
    for a in jobs:
        for b in jobs:
            if a[0] < b[0] and set(a[1]) & set(b[1]) and a[2] < b[3] and b[2] < a[3]:
                print(f"FAILED  jobs {a[0]} and {b[0]} held GPU(s) {set(a[1]) & set(b[1])} at once")
                failed = 1
    order = [j[0] for j in sorted(jobs, key=lambda j: j[2])]
    ok = order == sorted(order)
    print(("ok      " if ok else "FAILED  ") + f"started in launch order: {order}")
    if not failed:
        print("ok      no GPU held by two jobs at once")
    return 1 if failed or not ok else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
