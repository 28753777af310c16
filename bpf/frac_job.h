/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Copyright (c) 2026 The frac authors
 *
 * The stages of a FRAC job, as fraclat and fracsnoop measure them from the
 * driver's frac_job_done tracepoint (kernel/frac_trace.h), which carries the
 * job's struct frac_job_stamps (include/frac_hw.h):
 *
 *   submit      submit_ns: the SUBMIT ioctl queued the job
 *   run         run_ns: the scheduler handed it to the driver (run_job)
 *   dev start   dev_start_ns (device clock, converted)
 *   dev end     dev_end_ns
 *   irq         irq_ns: when the interrupt handler found the job's completion
 *               record (0: no interrupt ended it, a timeout's scan or a reset
 *               did; the job counts as no-irq)
 *   signal      frac_job_done itself: emitted just before the fence signals
 *
 * The device times come from another clock and may be slightly off: they are
 * clamped into [run, irq] so that no stage is negative and the five stages
 * always add up to the total; every adjustment counts as one "clamped" (irq
 * itself is host time taken after the record was seen: never before run).
 */
#ifndef __FRAC_JOB_H
#define __FRAC_JOB_H

#include "frac_hist.h"

enum frac_stage {
	STAGE_SUBMIT_RUN,	/* submit -> run (scheduler queueing) */
	STAGE_RUN_START,	/* run -> device start */
	STAGE_EXEC,		/* device start -> device end */
	STAGE_END_IRQ,		/* device end -> interrupt */
	STAGE_IRQ_SIGNAL,	/* interrupt -> fence signalled */
	STAGE_TOTAL,		/* submit -> fence signalled */
	NR_STAGES,
};

enum frac_ts {
	TS_SUBMIT,
	TS_RUN,
	TS_DEV_START,
	TS_DEV_END,
	TS_IRQ,
	TS_SIGNAL,
	NR_TS,
};

/* Job flags */
#define JOB_F_COMPLETED	1	/* the device stages are known (always, from frac_job_done) */
#define JOB_F_NOIRQ	2	/* no interrupt ended it: irq_ns 0 (timeout scan, reset) */
#define JOB_F_NODEV	4	/* no device times (failed by a reset): device stages are 0 */
#define JOB_F_CLAMPED	8	/* a device time clamped into [run, irq] (or irq into [run, signal]) */
#define JOB_F_NORUN	16	/* not stamped at run: submit -> run and run -> start unmeasured */
#define JOB_F_NOCOMPLETE 32	/* never set since frac_job_done (kept for the JSON) */

/*
 * How a job's end is sorted (fraclat's status breakdown): by the error its
 * fence signalled with (frac_fence_signal's error, README "When a job hangs").
 */
enum frac_status_class {
	STATUS_OK,		/* 0 */
	STATUS_CANCELLED,	/* -ECANCELED: an innocent job ended by a reset or an FLR */
	STATUS_TIMEDOUT,	/* -ETIMEDOUT: it hung and its queue was reset */
	STATUS_EIO,		/* -EIO: the device failed it */
	STATUS_ENODEV,		/* -ENODEV: the device went away */
	STATUS_OTHER,		/* any other errno */
	NR_STATUS,
};

/*
 * What the job program counts, cumulative since the tool attached; the tool
 * prints the difference per interval. Every frac_job_done the program sees
 * is either measured (a histogram sample, a fracsnoop event) or counted in
 * exactly one of the "lost" counters, so for a workload that runs while the
 * tool is attached: measured + unmatched + hist_full + rb_dropped + (recursion
 * misses of the job_done program) == jobs ended. noid, table_full and
 * nocomplete cannot move since one event carries the whole job (no table of
 * jobs in flight, no key to match, no event to miss): they stay, always 0,
 * so that consumers of JSON schema 2 keep their keys.
 */
struct job_stats {
	/* jobs ended but not measured (one counter per job) */
	__u64 unmatched;	/* not stamped at submit: submitted before the tool attached */
	__u64 noid;		/* always 0 (schema 2): jobs without an id are measured */
	__u64 hist_full;	/* fraclat: the histogram map had no room for its group */
	__u64 rb_dropped;	/* fracsnoop: the ring buffer had no room for its event */
	__u64 table_full;	/* always 0 (schema 2): there is no job table */
	/* measured, with a stage left out */
	__u64 norun;		/* not stamped at run (the event was off then) */
	__u64 nocomplete;	/* always 0 (schema 2): the device stages come with the event */
	/* measured, adjusted */
	__u64 clamped;		/* device times clamped into [run, irq], irq into [run, signal] */
	__u64 noirq;		/* no interrupt ended it: irq_ns 0 (timeout scan, reset) */
	__u64 nodev;		/* no device times (failed by a reset): device stages are 0 */
	/* measured jobs by how they ended */
	__u64 status[NR_STATUS];
};

struct job_key {
	__u32 dev;
	__u32 queue;
	__u32 ctx;
	__u32 job;
};

struct job_info {
	__u64 ts[NR_TS];
	__u64 bytes;
	__u64 seqno;
	__u32 pid;
	__u32 op;
	__u32 ncmds;
	__u32 prio;
	__s32 status;
	__u32 flags;
	char comm[TASK_COMM_LEN];
};

/* Does a job with these flags (JOB_F_*) have a measurement of @stage? */
static inline bool stage_measured(__u32 flags, int stage)
{
	if (stage == STAGE_SUBMIT_RUN)
		return !(flags & JOB_F_NORUN);
	if (stage == STAGE_RUN_START)
		return !(flags & (JOB_F_NORUN | JOB_F_NOCOMPLETE));
	if (stage == STAGE_TOTAL)
		return true;
	return !(flags & JOB_F_NOCOMPLETE);
}

#endif /* __FRAC_JOB_H */
