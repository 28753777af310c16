# frac-timeline.py - frac job timeline as Chrome/Perfetto trace JSON
# SPDX-License-Identifier: GPL-2.0
#
# Usage:
#
#     perf record -a -k mono -e 'frac:*' -- workload         (frac-stages-record workload)
#     perf script -s frac-timeline.py -- [-o frac-timeline.json]
# or, from ftrace:
#
#     trace-cmd record -C mono -e frac workload
#     trace-cmd report -t | python3 frac-timeline.py [-o frac-timeline.json] -
#
# Open the JSON in https://ui.perfetto.dev (or chrome://tracing). There is one
# process per device ("frac accelN") and one track per queue ("queue N"); each
# job is a slice from submit to fence signalled, named "<op> ctx C job J",
# with one child slice per stage (submit->run, run->device start, device
# execution, device end->irq, irq->fence), the children abutting. A job that
# begins before the previous one on its queue has ended goes to an extra lane,
# "queue N (lane 2)", so that slices on one track always nest. Times are the
# recording's clock in microseconds (CLOCK_MONOTONIC with -k mono / -C mono).

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frac_jobs  # noqa: E402

try:
    import perf_trace_context  # noqa: F401  (only inside perf script)
    IN_PERF = True
except ImportError:
    IN_PERF = False


def _parse_args():
    parser = argparse.ArgumentParser(
        prog="frac-timeline.py",
        description="Export frac jobs and their stages as Chrome/Perfetto trace JSON "
                    "(perf script handler, or trace-cmd report text on stdin or in a file).")
    parser.add_argument("-o", "--output", metavar="FILE", default="frac-timeline.json",
                        help="JSON file to write ('-': stdout; default frac-timeline.json)")
    parser.add_argument("--title", default="frac jobs", help="trace title (otherData)")
    if not IN_PERF:
        parser.add_argument("input", help="trace-cmd report -t (or perf script --ns) text, "
                                          "'-' for stdin")
    return parser.parse_args()


args = _parse_args()
tracker = frac_jobs.JobTracker()


def _ts(secs, nsecs):
    return secs * 1000000000 + nsecs


def trace_begin():
    pass


def trace_end():
    jobs = tracker.sorted_jobs()
    trace = frac_jobs.chrome_trace(jobs, args.title)
    frac_jobs.write_json(args.output, trace)
    log = sys.stderr if args.output == "-" else sys.stdout
    slices = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    names = dict(((e["pid"], e["tid"]), e["args"]["name"]) for e in trace["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "thread_name")
    per_track = {}
    for e in slices:
        per_track[(e["pid"], e["tid"])] = per_track.get((e["pid"], e["tid"]), 0) + 1
    log.write("frac-timeline: %d jobs, %d slices, %d incomplete jobs left out -> %s\n" %
              (len(jobs), len(slices), tracker.incomplete, args.output))
    for key in sorted(per_track):
        log.write("  accel%d %-20s %d slices\n" % (key[0] - 1000, names[key], per_track[key]))


def frac__frac_job_submit(event_name, context, common_cpu, common_secs, common_nsecs,
                          common_pid, common_comm, common_callchain, dev, queue, ctx, job,
                          ncmds, op, prio, bytes):
    tracker.submit(_ts(common_secs, common_nsecs), common_cpu, dev, queue, ctx, job, ncmds,
                   op, prio, bytes, common_comm, common_pid)


def frac__frac_job_run(event_name, context, common_cpu, common_secs, common_nsecs,
                       common_pid, common_comm, common_callchain, dev, queue, ctx, job,
                       seqno, ncmds, sq_tail):
    tracker.run(_ts(common_secs, common_nsecs), common_cpu, dev, queue, ctx, job, seqno)


def frac__frac_irq(event_name, context, common_cpu, common_secs, common_nsecs, common_pid,
                   common_comm, common_callchain, dev, vector, queue):
    tracker.irq(_ts(common_secs, common_nsecs), common_cpu, dev, vector, queue)


def frac__frac_job_complete(event_name, context, common_cpu, common_secs, common_nsecs,
                            common_pid, common_comm, common_callchain, dev, queue, ctx, job,
                            seqno, status, dev_start_ns, dev_end_ns, result, irq_ns=None):
    tracker.complete(_ts(common_secs, common_nsecs), common_cpu, dev, queue, ctx, job, seqno,
                     status, dev_start_ns, dev_end_ns, irq_ns)


def frac__frac_fence_signal(event_name, context, common_cpu, common_secs, common_nsecs,
                            common_pid, common_comm, common_callchain, dev, queue, ctx, job,
                            seqno, error):
    tracker.fence(_ts(common_secs, common_nsecs), common_cpu, dev, queue, ctx, job, seqno,
                  error)


def trace_unhandled(event_name, context, event_fields_dict):
    pass


def main():
    f = sys.stdin if args.input == "-" else open(args.input)
    try:
        used = frac_jobs.feed_text(tracker, f)
    finally:
        if f is not sys.stdin:
            f.close()
    if not used:
        sys.stderr.write("frac-timeline.py: no frac events in %s\n" % args.input)
        return 1
    trace_begin()
    trace_end()
    return 0


if __name__ == "__main__" and not IN_PERF:
    sys.exit(main())
