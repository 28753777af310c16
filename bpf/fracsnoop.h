/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 The frac authors */
#ifndef __FRACSNOOP_H
#define __FRACSNOOP_H

#include "frac_job.h"

/* One finished job. */
struct event {
	__u64 ts;			/* fence signalled, CLOCK_MONOTONIC ns */
	__u64 stages[NR_STAGES];	/* ns; the first five add up to the total */
	__u64 bytes;
	__u64 seqno;
	__u32 dev;
	__u32 queue;
	__u32 ctx;
	__u32 job;
	__u32 pid;
	__u32 op;
	__u32 ncmds;
	__u32 prio;
	__s32 status;
	__u32 flags;			/* JOB_F_* */
	char comm[TASK_COMM_LEN];
};

#endif /* __FRACSNOOP_H */
