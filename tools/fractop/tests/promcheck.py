#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check a Prometheus text exposition (format 0.0.4) as fractop's exporter writes it.

Usage: promcheck.py FILE        exit 0 if FILE follows the format and the naming rules below;
                                otherwise each problem on stderr and exit 1.
       import promcheck; promcheck.parse(text) -> {family: {"type", "help", "samples"}}

The format: every sample's family has one HELP and one TYPE line before its first sample, a
family's lines are contiguous, label values use only the escapes \\\\ \\" \\n, values are
floats (or +Inf/-Inf/NaN). The naming rules (prometheus.io/docs/practices/naming): the frac_
prefix, counters end in _total, no percentages, histograms have _bucket (with le, cumulative,
ending at +Inf), _sum and _count. Used by tests/run.sh on the host and tests/guest.sh.
"""
import math
import re
import sys

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


class Error(Exception):
    pass


def parse_labels(s, i, lineno):
    """Labels from s[i] == '{'; returns (dict, index after '}')."""
    labels = {}
    i += 1
    while True:
        if s[i] == "}":
            return labels, i + 1
        m = LABEL.match(s, i)
        if not m:
            raise Error(f"line {lineno}: bad label name at {s[i:i+20]!r}")
        name = m.group(0)
        i = m.end()
        if s[i:i + 2] != '="':
            raise Error(f"line {lineno}: expected =\" after {name}")
        i += 2
        val = []
        while s[i] != '"':
            if s[i] == "\\":
                esc = s[i + 1]
                if esc not in '\\"n':
                    raise Error(f"line {lineno}: bad escape \\{esc}")
                val.append("\n" if esc == "n" else esc)
                i += 2
            else:
                val.append(s[i])
                i += 1
        i += 1
        if name in labels:
            raise Error(f"line {lineno}: label {name} twice")
        labels[name] = "".join(val)
        if s[i] == ",":
            i += 1
        elif s[i] != "}":
            raise Error(f"line {lineno}: expected , or }} after a label")


def parse(text):
    fams, order, current = {}, [], None
    if not text.endswith("\n"):
        raise Error("the text does not end with a newline")
    for lineno, line in enumerate(text.split("\n")[:-1], 1):
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            kind, rest = line[2:6], line[7:]
            name, _, arg = rest.partition(" ")
            if not NAME.fullmatch(name):
                raise Error(f"line {lineno}: bad metric name {name!r}")
            f = fams.setdefault(name, {"type": None, "help": None, "samples": []})
            if name != current:
                if name in order:
                    raise Error(f"line {lineno}: family {name} is not contiguous")
                order.append(name)
                current = name
            key = "help" if kind == "HELP" else "type"
            if f[key] is not None:
                raise Error(f"line {lineno}: second {kind} for {name}")
            if f["samples"]:
                raise Error(f"line {lineno}: {kind} of {name} after its samples")
            if key == "type" and arg not in ("counter", "gauge", "histogram", "summary", "untyped"):
                raise Error(f"line {lineno}: bad type {arg!r}")
            f[key] = arg
            continue
        if line.startswith("#") or not line:
            continue
        m = NAME.match(line)
        if not m:
            raise Error(f"line {lineno}: bad sample {line[:40]!r}")
        name, i = m.group(0), m.end()
        labels = {}
        if i < len(line) and line[i] == "{":
            labels, i = parse_labels(line, i, lineno)
        if line[i:i + 1] != " ":
            raise Error(f"line {lineno}: no space before the value")
        parts = line[i + 1:].split(" ")
        if len(parts) not in (1, 2):
            raise Error(f"line {lineno}: bad value {line[i+1:]!r}")
        value = float(parts[0])
        fam = name
        for sfx in ("_bucket", "_sum", "_count"):
            base = name[: -len(sfx)]
            if name.endswith(sfx) and base in fams and fams[base]["type"] == "histogram":
                fam = base
        if fam != current:
            raise Error(f"line {lineno}: sample of {fam} outside its family")
        fams[fam]["samples"].append((name, labels, value))
    return fams


def check(fams):
    problems = []
    for name, f in fams.items():
        if f["help"] is None or f["type"] is None:
            problems.append(f"{name}: no HELP or no TYPE")
        if not f["samples"]:
            problems.append(f"{name}: a family without samples")
        if not name.startswith("frac_"):
            problems.append(f"{name}: not frac_-prefixed")
        if re.search(r"(pct|percent)", name):
            problems.append(f"{name}: a percentage")
        if f["type"] == "counter" and not name.endswith("_total"):
            problems.append(f"{name}: a counter without _total")
        if f["type"] != "counter" and name.endswith("_total"):
            problems.append(f"{name}: _total on a {f['type']}")
        series = set()
        for sname, labels, value in f["samples"]:
            key = (sname, tuple(sorted(labels.items())))
            if key in series:
                problems.append(f"{name}: series {key} twice")
            series.add(key)
            if f["type"] == "counter" and not (value >= 0):
                problems.append(f"{name}: counter value {value}")
        if f["type"] == "histogram":
            buckets = {}
            for sname, labels, value in f["samples"]:
                if sname.endswith("_bucket"):
                    rest = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
                    buckets.setdefault(rest, []).append((float(labels["le"]), value))
            for rest, bs in buckets.items():
                if bs != sorted(bs) or bs[-1][0] != math.inf:
                    problems.append(f"{name}{rest}: buckets not cumulative or no +Inf")
    return problems


def main():
    try:
        fams = parse(open(sys.argv[1], encoding="utf-8").read())
    except (Error, ValueError, IndexError) as e:
        print(f"promcheck: {e}", file=sys.stderr)
        return 1
    problems = check(fams)
    for p in problems:
        print(f"promcheck: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
