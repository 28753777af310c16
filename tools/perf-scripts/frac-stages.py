# frac-stages.py - per-stage latency of frac jobs from the frac:* tracepoints
# SPDX-License-Identifier: GPL-2.0
#
# Usage:
#
#     perf record -a -k mono -e 'frac:*' -- workload         (frac-stages-record workload)
#     perf script -s frac-stages.py -- [--csv FILE] [--by queue,op] [--unit us]
#                                                           (frac-stages-report [...])
# or, from ftrace:
#
#     trace-cmd record -C mono -e frac workload
#     trace-cmd report -t | python3 frac-stages.py [--csv FILE] -
#
# Prints, per (device, queue) and per op (the job's first command), the count
# and p50/p90/p99/max of each stage of docs/tracing.md: submit->run,
# run->device start, device execution, device end->irq, irq->fence, and
# total. --csv writes one row per job with the stage times in ns; a row's
# stage columns add up to its total. -a is needed: run_job, the interrupt and
# the fence happen outside the submitting task. -k mono (trace-cmd -C mono)
# puts the event times on the clock of the device times; negative stage
# differences are clamped to 0 and counted (see frac_jobs.py).

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
        prog="frac-stages.py",
        description="Per-stage latency of frac jobs (perf script handler, or trace-cmd "
                    "report text on stdin or in a file).")
    parser.add_argument("--csv", metavar="FILE", help="write one row per job to FILE ('-': stdout)")
    parser.add_argument("--by", default="queue,op",
                        help="tables to print: comma list of queue, op (default queue,op; "
                             "'none' for only the summary)")
    parser.add_argument("--unit", choices=("ns", "us", "ms"), default="us",
                        help="unit of the tables (default us)")
    if not IN_PERF:
        parser.add_argument("input", help="trace-cmd report -t (or perf script --ns) text, "
                                          "'-' for stdin")
    args = parser.parse_args()
    args.by = [] if args.by == "none" else [b for b in args.by.split(",") if b]
    for b in args.by:
        if b not in ("queue", "op"):
            parser.error("--by: unknown table '%s'" % b)
    return args


args = _parse_args()
tracker = frac_jobs.JobTracker()


def _ts(secs, nsecs):
    return secs * 1000000000 + nsecs


def trace_begin():
    pass


def trace_end():
    out = sys.stdout
    if args.csv == "-":
        frac_jobs.write_csv(out, tracker.sorted_jobs())
        out = sys.stderr
    elif args.csv:
        frac_jobs.write_csv(args.csv, tracker.sorted_jobs())
    for line in frac_jobs.report_lines(tracker, args.by, args.unit):
        out.write(line + "\n")
    if args.csv and args.csv != "-":
        out.write("\nwrote %d jobs to %s\n" % (len(tracker.jobs), args.csv))


def frac__frac_job_submit(event_name, context, common_cpu, common_secs, common_nsecs,
                          common_pid, common_comm, common_callchain, dev, queue, ctx, job,
                          ncmds, op, prio, bytes):
    tracker.submit(_ts(common_secs, common_nsecs), common_cpu, dev, queue, ctx, job, ncmds,
                   op, prio, bytes, common_comm, common_pid)


def frac__frac_job_run(event_name, context, common_cpu, common_secs, common_nsecs,
                       common_pid, common_comm, common_callchain, dev, queue, ctx, job,
                       seqno, ncmds, sq_tail):
    tracker.run(_ts(common_secs, common_nsecs), common_cpu, dev, queue, ctx, job, seqno)


def frac__frac_job_doorbell(event_name, context, common_cpu, common_secs, common_nsecs,
                            common_pid, common_comm, common_callchain, dev, queue, ctx, job,
                            seqno, ncmds, sq_tail):
    tracker.doorbell(_ts(common_secs, common_nsecs), common_cpu, dev, queue, ctx, job, seqno)


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


def frac__frac_job_timeout(event_name, context, common_cpu, common_secs, common_nsecs,
                           common_pid, common_comm, common_callchain, dev, queue, ctx, job,
                           seqno, lost_irq):
    tracker.timeout(_ts(common_secs, common_nsecs))


def frac__frac_reset(event_name, context, common_cpu, common_secs, common_nsecs, common_pid,
                     common_comm, common_callchain, dev, kind, queue, err):
    tracker.reset(_ts(common_secs, common_nsecs))


def trace_unhandled(event_name, context, event_fields_dict):
    """frac_device_error, frac_dma_map/unmap and other events: counted only."""
    tracker.other(event_name.split("__", 1)[-1],
                  _ts(event_fields_dict["common_s"], event_fields_dict["common_ns"]))


def main():
    f = sys.stdin if args.input == "-" else open(args.input)
    try:
        used = frac_jobs.feed_text(tracker, f)
    finally:
        if f is not sys.stdin:
            f.close()
    if not used:
        sys.stderr.write("frac-stages.py: no frac events in %s\n" % args.input)
        return 1
    trace_begin()
    trace_end()
    return 0


if __name__ == "__main__" and not IN_PERF:
    sys.exit(main())
