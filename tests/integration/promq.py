#!/usr/bin/env python3
"""One instant query against Prometheus's HTTP API, printed for shell comparisons.

  promq.py URL QUERY [--time UNIX_SECONDS] [LABEL ...]

Prints one line per series, sorted: the values of the given labels (`-` where a series lacks
one), then the sample value (an integer when it is one, else repr). A scalar prints its value.
Exits 2 (message on stderr) when Prometheus answers with an error or cannot be reached.
Python 3 standard library only.
"""
import json
import sys
import urllib.error
import urllib.parse
import urllib.request


def fmt(value):
    v = float(value)
    return str(int(v)) if v.is_integer() else repr(v)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    base, query, rest = argv[1], argv[2], argv[3:]
    params = {"query": query}
    if len(rest) >= 2 and rest[0] == "--time":
        params["time"] = rest[1]
        rest = rest[2:]
    url = base.rstrip("/") + "/api/v1/query?" + urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            answer = json.load(r)
    except urllib.error.HTTPError as e:
        answer = json.load(e)
    except (OSError, ValueError) as e:
        print(f"promq: {url}: {e}", file=sys.stderr)
        return 2
    if answer.get("status") != "success":
        print(f"promq: {query}: {answer.get('errorType')}: {answer.get('error')}", file=sys.stderr)
        return 2
    data = answer["data"]
    if data["resultType"] == "scalar":
        print(fmt(data["result"][1]))
        return 0
    lines = []
    for series in data["result"]:
        labels = [series["metric"].get(name, "-") for name in rest]
        lines.append(" ".join(labels + [fmt(series["value"][1])]))
    for line in sorted(lines):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
