/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Copyright (c) 2026 The frac authors
 *
 * The stages of a FRAC job, as fraclat and fracsnoop measure them from the
 * driver's tracepoints (kernel/frac_trace.h):
 *
 *   submit      frac_job_submit: the SUBMIT ioctl queued the job
 *   run         frac_job_run: the scheduler handed it to the driver
 *   dev start   frac_job_complete's dev_start_ns (device clock, converted)
 *   dev end     frac_job_complete's dev_end_ns
 *   irq         frac_job_complete's irq_ns: when the interrupt handler found
 *               the job's completion record (0: no interrupt ended it, a
 *               timeout's scan or a reset did; the job counts as no-irq)
 *   signal      frac_fence_signal
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
#define JOB_F_COMPLETED	1	/* frac_job_complete seen */
#define JOB_F_NOIRQ	2	/* no interrupt ended it: irq_ns 0 (timeout scan, reset) */
#define JOB_F_NODEV	4	/* no device times (failed by a reset): device stages are 0 */
#define JOB_F_CLAMPED	8	/* a device time clamped into [run, irq] (or irq into [run, signal]) */
#define JOB_F_NORUN	16	/* frac_job_run missed: submit -> run and run -> start unmeasured */
#define JOB_F_NOCOMPLETE 32	/* frac_job_complete missed: the device and irq stages unmeasured */

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
 * What the job programs count, cumulative since the tool attached; the tool
 * prints the difference per interval. Every frac_fence_signal the programs
 * see is either measured (a histogram sample, a fracsnoop event) or counted
 * in exactly one of the "lost" counters, so for a workload that runs while
 * the tool is attached: measured + unmatched + noid + hist_full + rb_dropped
 * + (recursion misses of the fence-signal program) == jobs submitted.
 */
struct job_stats {
	/* jobs ended but not measured (one counter per job) */
	__u64 unmatched;	/* no submit on record: submitted before the tool attached,
				 * or refused at submit (table_full), or its submit missed */
	__u64 noid;		/* job id 0 (DRM_FRAC_SUBMIT_NO_JOB_ID): no key to follow it by */
	__u64 hist_full;	/* fraclat: the histogram map had no room for its group */
	__u64 rb_dropped;	/* fracsnoop: the ring buffer had no room for its event */
	/* submit side: why a job later ends unmatched */
	__u64 table_full;	/* no free slot among its probes in the job table */
	/* measured, with a stage left out */
	__u64 norun;		/* frac_job_run missed (counted, not made run = submit) */
	__u64 nocomplete;	/* frac_job_complete missed */
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
