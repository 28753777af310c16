#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check the Grafana dashboard against what fractop's exporter exports.

Usage: dashcheck.py [--bpf-families NAME,...] DASHBOARD.json EXPOSITION.txt|NAMES.names [RULES_OUT.yml]
  - the dashboard parses as JSON, has a title, a uid, panels with unique ids, a gridPos and a
    title each, and every query target a refId, an expr and the ${datasource} data source;
  - every frac_ metric an expr (or a template query) names is a family of EXPOSITION.txt (a
    scrape of fractop --listen), its histogram series (_bucket, _sum, _count) included, or a
    line of NAMES.names (metric names, one a line: what a Prometheus server has ingested);
  - with RULES_OUT, writes every expr as a recording rule, Grafana's variables replaced
    ($__rate_interval by 1m, $device by .*), for `promtool check rules` to parse the PromQL.
  - --bpf-families: histogram families the exporter has only with its BPF latency source
    (a host scrape without it lacks them), accepted with their series as if exported; the
    guest test against a real Prometheus checks them for real.
Prints the problems on stderr; exit 0 if none.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import promcheck  # noqa: E402

METRIC = re.compile(r"\bfrac_[a-zA-Z0-9_]+\b")
GRAFANA_VARS = {"$__rate_interval": "1m", "$__interval": "1m", "$device": ".*"}


def panels(ps):
    for p in ps:
        yield p
        yield from panels(p.get("panels", []))


def main():
    bpf = []
    if len(sys.argv) > 2 and sys.argv[1] == "--bpf-families":
        bpf = [n for n in sys.argv[2].split(",") if n]
        del sys.argv[1:3]
    dash = json.load(open(sys.argv[1]))
    if sys.argv[2].endswith(".names"):
        names = set(open(sys.argv[2]).read().split())
    else:
        fams = promcheck.parse(open(sys.argv[2]).read())
        names = set(fams)
        for n, f in fams.items():
            if f["type"] == "histogram":
                names |= {n + "_bucket", n + "_sum", n + "_count"}
    for n in bpf:
        names |= {n, n + "_bucket", n + "_sum", n + "_count"}
    problems, exprs, ids = [], [], set()
    for k in ("title", "uid", "panels", "schemaVersion"):
        if k not in dash:
            problems.append(f"dashboard: no {k}")
    for p in panels(dash.get("panels", [])):
        where = f"panel {p.get('id')} {p.get('title')!r}"
        for k in ("id", "title", "gridPos", "type"):
            if k not in p:
                problems.append(f"{where}: no {k}")
        if p.get("id") in ids:
            problems.append(f"{where}: id used twice")
        ids.add(p.get("id"))
        if p.get("type") == "row":
            continue
        if p.get("datasource", {}).get("uid") != "${datasource}":
            problems.append(f"{where}: data source is not ${{datasource}}")
        if not p.get("targets"):
            problems.append(f"{where}: no query")
        for t in p.get("targets", []):
            if not t.get("expr") or not t.get("refId"):
                problems.append(f"{where}: a target without expr or refId")
                continue
            exprs.append((where, t["expr"]))
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            q = q.get("query")
        if v.get("type") == "query" and q:
            exprs.append((f"variable {v.get('name')}", q))
    if not exprs:
        problems.append("no expr at all")
    used = set()
    for where, e in exprs:
        found = METRIC.findall(e)
        if not found:
            problems.append(f"{where}: {e!r} names no frac_ metric")
        for m in found:
            used.add(m)
            if m not in names:
                problems.append(f"{where}: {m} is not exported")
    if len(sys.argv) > 3:
        with open(sys.argv[3], "w") as f:
            f.write("groups:\n  - name: dashboard\n    rules:\n")
            for i, (where, e) in enumerate(exprs):
                if e.startswith("label_values("):
                    continue  # Grafana's, not PromQL
                for var, val in GRAFANA_VARS.items():
                    e = e.replace(var, val)
                f.write(f"      - record: dashboard:expr{i}\n        expr: {json.dumps(e)}\n")
    for p in problems:
        print(f"dashcheck: {p}", file=sys.stderr)
    print(f"dashcheck: {len(exprs)} exprs, {len(used)} metrics, all exported"
          if not problems else f"dashcheck: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
