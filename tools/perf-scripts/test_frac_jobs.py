#!/usr/bin/env python3
# test_frac_jobs.py - unit tests of frac_jobs.py and frac-stackcollapse.py
# SPDX-License-Identifier: GPL-2.0
#
# Usage: python3 tools/perf-scripts/test_frac_jobs.py [-v]
#
# Synthetic events only: no perf, no device. The guest test
# tests/guest/perf-scripts.sh runs this too, then the scripts on real data.

import importlib.util
import io
import os
import re
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import frac_jobs  # noqa: E402


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


stackcollapse = _load("frac_stackcollapse", os.path.join(HERE, "frac-stackcollapse.py"))


def run_job(t, ts, cpu=0, dev=0, queue=0, ctx=1, job=1, op=1, dev_start=None, dev_end=None,
            irq=True, status=0, times=(10, 20, 30, 40, 50, 60)):
    """Feed one job's events: submit, run, irq, complete, fence at ts + times."""
    sub, run, start, end, irq_t, fence = (ts + x for x in times)
    t.submit(sub, 1, dev, queue, ctx, job, 1, op, 1, 4096, "w", 42)
    t.run(run, 1, dev, queue, ctx, job, job)
    if irq:
        t.irq(irq_t, cpu, dev, queue, queue)
    t.complete(irq_t + 1, cpu, dev, queue, ctx, job, job, status,
               start if dev_start is None else dev_start,
               end if dev_end is None else dev_end)
    t.fence(fence, cpu, dev, queue, ctx, job, job, status)


class StageTest(unittest.TestCase):
    def test_stages_add_up(self):
        t = frac_jobs.JobTracker()
        run_job(t, 1000)
        (j,) = t.jobs
        pts, vals, clamped = j.stages()
        self.assertEqual(clamped, [])
        self.assertEqual(vals["submit_run"], 10)
        self.assertEqual(vals["run_devstart"], 10)
        self.assertEqual(vals["dev_exec"], 10)
        self.assertEqual(vals["devend_irq"], 10)
        self.assertEqual(vals["irq_fence"], 10)
        self.assertEqual(vals["total"], 50)
        self.assertTrue(j.irq_matched)

    def test_negative_delta_is_clamped_and_counted(self):
        t = frac_jobs.JobTracker()
        # The device says it started 5 ns before run_job: clock offset error.
        run_job(t, 1000, dev_start=1015)
        (j,) = t.jobs
        pts, vals, clamped = j.stages()
        self.assertEqual(clamped, ["run_devstart"])
        self.assertEqual(vals["run_devstart"], 0)
        self.assertEqual(sum(vals[k] for k, _ in frac_jobs.STAGES), vals["total"])
        self.assertTrue(all(vals[k] >= 0 for k, _ in frac_jobs.STAGES))
        per, njobs, worst = frac_jobs.clamp_counts(t.jobs)
        self.assertEqual((per["run_devstart"], njobs, worst["run_devstart"]), (1, 1, -5))
        row = j.csv_row()
        self.assertEqual((row["t_run_ns"], row["t_dev_start_ns"]), (1020, 1015))
        self.assertEqual(row["clamped"], "run_devstart")

    def test_device_end_after_fence_is_clamped(self):
        t = frac_jobs.JobTracker()
        run_job(t, 1000, dev_end=2000)
        (j,) = t.jobs
        pts, vals, clamped = j.stages()
        self.assertIn("devend_irq", clamped)
        self.assertEqual(sum(vals[k] for k, _ in frac_jobs.STAGES), vals["total"])
        self.assertEqual(pts[-1], 1060)

    def test_irq_on_other_cpu_is_not_matched(self):
        t = frac_jobs.JobTracker()
        t.submit(10, 0, 0, 0, 1, 1, 1, 1, 1, 0)
        t.run(20, 0, 0, 0, 1, 1, 1)
        t.irq(45, 1, 0, 0, 0)				# CPU 1
        t.complete(50, 0, 0, 0, 1, 1, 1, 0, 30, 40)	# CPU 0: found by polling
        t.fence(60, 0, 0, 0, 1, 1, 1, 0)
        (j,) = t.jobs
        self.assertFalse(j.irq_matched)
        self.assertEqual(j.stages()[1]["devend_irq"], 10)	# to the complete event

    def test_irq_ns_wins_over_frac_irq(self):
        # frac_job_complete's irq_ns is the driver's own time: used as is, even when a
        # frac_irq on this CPU would have been matched (a busy handler's entry).
        t = frac_jobs.JobTracker()
        t.submit(10, 0, 0, 0, 1, 1, 1, 0, 0, 0)
        t.run(20, 0, 0, 0, 1, 1, 1)
        t.irq(25, 0, 0, 0, 0)
        t.complete(50, 0, 0, 0, 1, 1, 1, 0, 30, 40, irq_ns=45)
        t.fence(60, 0, 0, 0, 1, 1, 1, 0)
        j = t.jobs[0]
        self.assertTrue(j.irq_matched)
        self.assertEqual(j.stages()[1]["devend_irq"], 5)
        self.assertEqual(j.stages()[1]["irq_fence"], 15)

    def test_irq_ns_zero_is_no_irq(self):
        # irq_ns 0: no interrupt ended the job (timeout scan, reset); a frac_irq seen on
        # the CPU is not taken for it.
        t = frac_jobs.JobTracker()
        t.submit(10, 0, 0, 0, 1, 1, 1, 0, 0, 0)
        t.run(20, 0, 0, 0, 1, 1, 1)
        t.irq(45, 0, 0, 0, 0)
        t.complete(50, 0, 0, 0, 1, 1, 1, 0, 30, 40, irq_ns=0)
        t.fence(60, 0, 0, 0, 1, 1, 1, 0)
        self.assertFalse(t.jobs[0].irq_matched)
        self.assertEqual(t.jobs[0].stages()[1]["devend_irq"], 10)	# to the complete event

    def test_shared_vector_irq_matches(self):
        t = frac_jobs.JobTracker()
        t.submit(10, 0, 0, 2, 1, 1, 1, 1, 1, 0)
        t.run(20, 0, 0, 2, 1, 1, 1)
        t.irq(45, 0, 0, 0, 0xFFFFFFFF)			# MSI/INTx: queue -1
        t.complete(50, 0, 0, 2, 1, 1, 1, 0, 30, 40)
        t.fence(60, 0, 0, 2, 1, 1, 1, 0)
        self.assertTrue(t.jobs[0].irq_matched)

    def test_failed_job_without_device_times(self):
        t = frac_jobs.JobTracker()
        t.submit(10, 0, 0, 0, 1, 1, 1, 1, 1, 0)
        t.run(20, 0, 0, 0, 1, 1, 1)
        t.complete(50, 0, 0, 0, 1, 1, 1, -62, 0, 0)
        t.fence(60, 0, 0, 0, 1, 1, 1, -62)
        (j,) = t.jobs
        vals = j.stages()[1]
        self.assertIsNone(vals["dev_exec"])
        self.assertEqual(vals["total"], 50)
        self.assertEqual(j.csv_row()["dev_exec_ns"], "")

    def test_incomplete_and_orphans(self):
        t = frac_jobs.JobTracker()
        t.submit(10, 0, 0, 0, 1, 1, 1, 1, 1, 0)		# never signalled
        t.fence(60, 0, 0, 0, 1, 9, 9, 0)		# submitted before the recording
        self.assertEqual((t.incomplete, t.orphans, len(t.jobs)), (1, 1, 0))


class StatsTest(unittest.TestCase):
    def test_percentile_nearest_rank(self):
        vals = list(range(1, 101))
        self.assertEqual(frac_jobs.percentile(vals, 50), 50)
        self.assertEqual(frac_jobs.percentile(vals, 90), 90)
        self.assertEqual(frac_jobs.percentile(vals, 99), 99)
        self.assertEqual(frac_jobs.percentile([7], 99), 7)
        self.assertIsNone(frac_jobs.percentile([], 50))

    def test_report_groups(self):
        t = frac_jobs.JobTracker()
        for i in range(6):
            run_job(t, 1000 * i, queue=i % 2, job=i + 1, op=1 if i < 4 else 3)
        text = "\n".join(frac_jobs.report_lines(t))
        self.assertIn("dev 0 queue 0: 3 jobs", text)
        self.assertIn("dev 0 queue 1: 3 jobs", text)
        self.assertIn("op copy: 4 jobs", text)
        self.assertIn("op crc32c: 2 jobs", text)
        self.assertIn("clamped negative deltas: 0 in 0 jobs", text)

    def test_csv_rows(self):
        t = frac_jobs.JobTracker()
        for i in range(3):
            run_job(t, 1000 * i, job=i + 1)
        buf = io.StringIO()
        frac_jobs.write_csv(buf, t.sorted_jobs())
        lines = buf.getvalue().splitlines()
        self.assertEqual(len(lines), 4)
        self.assertTrue(lines[0].startswith("dev,queue,ctx,job,"))


class TimelineTest(unittest.TestCase):
    def test_slices_nest_and_tracks(self):
        t = frac_jobs.JobTracker()
        run_job(t, 0, queue=0, job=1)
        run_job(t, 1000, queue=0, job=2)
        run_job(t, 0, queue=3, job=3)
        trace = frac_jobs.chrome_trace(t.sorted_jobs())
        xs = [e for e in trace["traceEvents"] if e["ph"] == "X"]
        self.assertEqual(len(xs), 3 * 6)
        names = [e["args"]["name"] for e in trace["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "thread_name"]
        self.assertEqual(sorted(names), ["queue 0", "queue 3"])
        jobs = [e for e in xs if e["cat"] == "job"]
        for job in jobs:
            kids = [e for e in xs if e["cat"] == "stage" and e["tid"] == job["tid"] and
                    e["args"]["job"] == job["args"]["job"]]
            self.assertEqual(len(kids), 5)
            self.assertAlmostEqual(kids[0]["ts"], job["ts"])
            for a, b in zip(kids, kids[1:]):
                self.assertAlmostEqual(a["ts"] + a["dur"], b["ts"])
            self.assertAlmostEqual(kids[-1]["ts"] + kids[-1]["dur"], job["ts"] + job["dur"])

    def test_overlapping_jobs_get_a_lane(self):
        t = frac_jobs.JobTracker()
        t.submit(0, 0, 0, 0, 1, 1, 1, 1, 1, 0)
        t.submit(5, 0, 0, 0, 1, 2, 1, 1, 1, 0)
        for job, base in ((1, 0), (2, 100)):
            t.run(base + 10, 0, 0, 0, 1, job, job)
            t.irq(base + 40, 0, 0, 0, 0)
            t.complete(base + 41, 0, 0, 0, 1, job, job, 0, base + 20, base + 30)
            t.fence(base + 50, 0, 0, 0, 1, job, job, 0)
        trace = frac_jobs.chrome_trace(t.sorted_jobs())
        names = sorted(e["args"]["name"] for e in trace["traceEvents"]
                       if e["ph"] == "M" and e["name"] == "thread_name")
        self.assertEqual(names, ["queue 0", "queue 0 (lane 2)"])


class TextTest(unittest.TestCase):
    TRACE_CMD = (
        "    frac-example-199   [001]    47.937944123: frac_job_submit:      dev=0 queue=0 "
        "ctx=3 job=1 ncmds=3 op=gemm prio=1 bytes=8192\n"
        "    kworker/u8:0-12    [001]    47.938345000: frac_job_run:         dev=0 queue=0 "
        "ctx=3 job=1 seqno=3 ncmds=3 sq_tail=4\n"
        "     rcu_preempt-18    [000]    47.938671000: frac_irq:             dev=0 vector=0 "
        "queue=0\n"
        "     rcu_preempt-18    [000]    47.938777000: frac_job_complete:    dev=0 queue=0 "
        "ctx=3 job=1 seqno=3 status=0 start=47938466521 end=47938482177 exec_ns=15656 "
        "result=0\n"
        "     rcu_preempt-18    [000]    47.938875000: frac_fence_signal:    dev=0 queue=0 "
        "ctx=3 job=1 seqno=3 error=0\n")

    def test_trace_cmd_report(self):
        t = frac_jobs.JobTracker()
        self.assertEqual(frac_jobs.feed_text(t, self.TRACE_CMD.splitlines()), 5)
        (j,) = t.jobs
        self.assertEqual((j.op, j.comm, j.pid, j.t_submit), ("gemm", "frac-example", 199,
                                                            47937944123))
        self.assertEqual(j.dev_start, 47938466521)
        self.assertTrue(j.irq_matched)

    def test_perf_script_line(self):
        ev = frac_jobs.parse_text_line(
            "    frac-example     186 [001]    27.897102:   frac:frac_job_submit: dev=0 "
            "queue=1 ctx=1 job=1 ncmds=3 op=gemm prio=1 bytes=8192")
        self.assertEqual(ev[0], "frac_job_submit")
        self.assertEqual(ev[1], 27897102000)
        self.assertEqual(ev[3]["queue"], 1)
        self.assertEqual(ev[4], "frac-example")

    def test_irq_minus_one(self):
        ev = frac_jobs.parse_text_line(
            "  <idle>-0  [000]  1.000000001: frac_irq: dev=0 vector=4 queue=-1")
        self.assertEqual(ev[3]["queue"], -1)


class StackCollapseTest(unittest.TestCase):
    SCRIPT = (
        "frac-submit-loo     182 [001]    30.123456:     250000 cpu-clock:ppp: \n"
        "\tffffffffc0a01234 frac_submit_ioctl+0x34 ([frac])\n"
        "\tffffffff81234567 drm_ioctl_kernel+0xa5 ([kernel.kallsyms])\n"
        "\t    7f1234 __GI___ioctl+0x3b (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
        "\n"
        "frac-submit-loo     182 [001]    30.123706:     250000 cpu-clock:ppp: \n"
        "\tffffffffc0a01234 frac_submit_ioctl+0x40 ([frac])\n"
        "\tffffffff81234567 drm_ioctl_kernel+0xa5 ([kernel.kallsyms])\n"
        "\t    7f1234 __GI___ioctl+0x3b (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
        "\n"
        "         swapper       0 [000]    30.124000: frac:frac_irq: dev=0 vector=0 queue=0\n"
        "\tffffffffc0a05678 frac_queue_irq+0x1c ([frac])\n"
        "\tffffffff81111111 [unknown] ([unknown])\n"
        "\n")

    def test_fold(self):
        stacks = stackcollapse.fold(io.StringIO(self.SCRIPT), skip_event="frac:frac_irq")
        self.assertEqual(stacks, {
            "frac-submit-loo;__GI___ioctl;drm_ioctl_kernel;frac_submit_ioctl": 2})

    def test_event_filter(self):
        stacks = stackcollapse.fold(io.StringIO(self.SCRIPT), event="frac:frac_irq")
        self.assertEqual(stacks, {"swapper;[unknown];frac_queue_irq": 1})
        stacks = stackcollapse.fold(io.StringIO(self.SCRIPT), event="cpu-clock")
        self.assertEqual(list(stacks.values()), [2])


class OpNamesTest(unittest.TestCase):
    UAPI = os.path.join(HERE, "..", "..", "include", "uapi", "drm", "frac_accel.h")

    def test_op_names_match_uapi(self):
        """frac_jobs.OP_NAMES is the uAPI's DRM_FRAC_OP_* (libfrac's frac_op_name), no drift."""
        with open(self.UAPI) as f:
            ops = re.findall(r"^#define\s+DRM_FRAC_OP_(\w+)\s+(\d+)", f.read(), re.M)
        self.assertTrue(ops)
        self.assertEqual(frac_jobs.OP_NAMES, {int(v): name.lower() for name, v in ops})


if __name__ == "__main__":
    unittest.main()
