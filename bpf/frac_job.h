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
 *   irq         the last frac_irq of the job's queue before its completion
 *               was processed (the completion is processed in the handler)
 *   signal      frac_fence_signal
 *
 * The device times come from another clock and may be slightly off: they are
 * clamped into [run, irq] so that no stage is negative and the five stages
 * always add up to the total; every adjustment counts as one "clamped".
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
#define JOB_F_NOIRQ	2	/* completed without an interrupt of its queue (timeout, reset) */
#define JOB_F_NODEV	4	/* no device times (failed by a reset): device stages are 0 */
#define JOB_F_CLAMPED	8	/* a device time was clamped into [run, irq] */

#define FRAC_NO_QUEUE	0xffffffffU	/* frac_irq's queue for the error and legacy vectors */

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

#endif /* __FRAC_JOB_H */
