/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Copyright (c) 2026 The frac authors
 *
 * The latency histogram the frac BPF tools share between their BPF and user
 * sides. Every histogram keeps exact count, sum, min and max (ns), the slots
 * that are displayed (log2 or linear, in the tool's unit) and a finer
 * log-linear histogram in ns (8 sub-buckets per power of two, so a bucket is
 * at most 1/8 of its value wide) that the percentiles are estimated from.
 */
#ifndef __FRAC_HIST_H
#define __FRAC_HIST_H

#define MAX_SLOTS	64	/* displayed: log2 buckets, or linear buckets (last: overflow) */
#define FINE_SUB_BITS	3
#define FINE_SUB	(1 << FINE_SUB_BITS)
#define FINE_SLOTS	512	/* (64 - FINE_SUB_BITS + 1) * FINE_SUB = 496 used */
#define TASK_COMM_LEN	16

/* Units of the displayed slots. */
enum frac_unit {
	UNIT_NSEC = 0,
	UNIT_USEC = 1,
	UNIT_MSEC = 2,
};

struct hist {
	__u64 count;
	__u64 sum;	/* ns */
	__u64 min;	/* ns; ~0 while count is 0 */
	__u64 max;	/* ns */
	__u32 slots[MAX_SLOTS];
	__u32 fine[FINE_SLOTS];
	char comm[TASK_COMM_LEN];	/* the process, when grouped by process */
};

#endif /* __FRAC_HIST_H */
