#!/usr/bin/env python3
# frac-stackcollapse.py - fold `perf script` call chains into flame graph input
# SPDX-License-Identifier: GPL-2.0
#
# Usage:
#
#     perf record -g -a -- workload
#     perf script | frac-stackcollapse.py [--event cpu-clock] [--grep frac_] > folded.txt
#     flamegraph.pl folded.txt > flame.svg       (or https://www.speedscope.app)
#
# Reads the text of `perf script` (samples with call chains: a header line, one
# "\t<addr> <sym>+<off> (<dso>)" line per frame, innermost first, then a blank
# line) and writes one "comm;outermost;...;innermost count" line per distinct
# stack, the format of Brendan Gregg's stackcollapse-perf.pl. --grep keeps
# only the stacks with a frame containing the string. Exits 1 when no stack is
# written (no samples with call chains, or none matching --grep).

import argparse
import re
import sys

_FRAME = re.compile(r"^\s*[0-9a-fA-F]+\s+(?P<sym>.*?)\s+\((?P<dso>[^()]*)\)\s*$")
_OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")
_HEADER = re.compile(r"^\s*(?P<comm>.*?)\s+(?P<pid>\d+)(?:/(?P<tid>\d+))?\s")
# "... 30.123456:     250000 cpu-clock:ppp: " or "... 30.123456: frac:frac_irq: dev=0"
_EVENT = re.compile(r"\s\d+\.\d+:\s+(?:\d+\s+)?(?P<event>\S+?):?(?:\s|$)")


def _parse_args():
    parser = argparse.ArgumentParser(
        prog="frac-stackcollapse.py",
        description="Fold perf script call chains into 'a;b;c count' lines.")
    parser.add_argument("input", nargs="?", default="-",
                        help="perf script output (default '-': stdin)")
    parser.add_argument("-o", "--output", default="-", help="folded output (default stdout)")
    parser.add_argument("--grep", metavar="STR",
                        help="keep only stacks with a frame containing STR (e.g. frac_)")
    parser.add_argument("--no-comm", dest="comm", action="store_false",
                        help="do not start stacks with the command name")
    parser.add_argument("--pid", action="store_true", help="add the pid to the command name")
    parser.add_argument("--event", metavar="NAME",
                        help="keep only samples of this event (cpu-clock matches "
                             "cpu-clock:ppp; frac:frac_irq)")
    parser.add_argument("--skip-event", metavar="NAME",
                        help="leave out the samples of this event")
    parser.add_argument("--kernel", action="store_true",
                        help="mark kernel frames with _[k] (flamegraph.pl colours them)")
    return parser.parse_args()


def _frame_name(sym, dso, kernel):
    if sym in ("", "[unknown]"):
        name = "[%s]" % dso.split("/")[-1] if dso and dso != "[unknown]" else "[unknown]"
    else:
        name = _OFFSET.sub("", sym)
    name = name.replace(";", ":")
    if kernel and (dso.startswith("[kernel") or (dso.startswith("[") and dso != "[unknown]")):
        name += "_[k]"
    return name


def _event_matches(header, event):
    m = _EVENT.search(header)
    return m is not None and (m.group("event") == event or
                              m.group("event").startswith(event + ":"))


def fold(lines, comm=True, pid=False, kernel=False, event=None, skip_event=None):
    """{stack string: samples} from perf script text lines."""
    stacks = {}
    head, frames = None, []
    keep = [True]

    def flush():
        if head is None or not keep[0]:
            return
        parts = list(reversed(frames))
        if comm:
            parts.insert(0, head)
        if not parts:
            return
        key = ";".join(parts)
        stacks[key] = stacks.get(key, 0) + 1

    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            head, frames = None, []
            continue
        if line[0] in " \t" and head is not None:
            m = _FRAME.match(line)
            if m:
                frames.append(_frame_name(m.group("sym"), m.group("dso"), kernel))
                continue
        # A header line (a new sample, even without a blank line before it).
        flush()
        frames = []
        keep[0] = ((event is None or _event_matches(line, event)) and
                   (skip_event is None or not _event_matches(line, skip_event)))
        m = _HEADER.match(line)
        if m:
            head = m.group("comm").replace(" ", "_").replace(";", ":") or "[unknown]"
            if pid:
                head += "-" + m.group("pid")
        else:
            head = "[unknown]"
    flush()
    return stacks


def main():
    args = _parse_args()
    src = sys.stdin if args.input == "-" else open(args.input, errors="replace")
    try:
        stacks = fold(src, args.comm, args.pid, args.kernel, args.event, args.skip_event)
    finally:
        if src is not sys.stdin:
            src.close()
    out = sys.stdout if args.output == "-" else open(args.output, "w")
    n = 0
    for key in sorted(stacks):
        if args.grep and args.grep not in key:
            continue
        out.write("%s %d\n" % (key, stacks[key]))
        n += 1
    if out is not sys.stdout:
        out.close()
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main())
