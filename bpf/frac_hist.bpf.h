/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Copyright (c) 2026 The frac authors
 *
 * Adding a value to a struct hist (frac_hist.h) from BPF.
 */
#ifndef __FRAC_HIST_BPF_H
#define __FRAC_HIST_BPF_H

#include "bits.bpf.h"
#include "frac_hist.h"

/* Display options, set by the tool between open and load. */
const volatile __u32 targ_unit = UNIT_USEC;
const volatile bool targ_linear = false;
const volatile __u64 targ_lin_step = 1;	/* in targ_unit */

/* Log-linear slot of @v: exact below FINE_SUB, then FINE_SUB per power of 2. */
static __always_inline __u32 fine_slot(__u64 v)
{
	__u64 k;

	if (v < FINE_SUB)
		return v;
	k = log2l(v);
	return (k - FINE_SUB_BITS + 1) * FINE_SUB + ((v >> (k - FINE_SUB_BITS)) & (FINE_SUB - 1));
}

static __always_inline void atomic_min(__u64 *p, __u64 v)
{
	int i;

#pragma unroll
	for (i = 0; i < 4; i++) {
		__u64 old = *(volatile __u64 *)p;

		if (v >= old || __sync_val_compare_and_swap(p, old, v) == old)
			return;
	}
}

static __always_inline void atomic_max(__u64 *p, __u64 v)
{
	int i;

#pragma unroll
	for (i = 0; i < 4; i++) {
		__u64 old = *(volatile __u64 *)p;

		if (v <= old || __sync_val_compare_and_swap(p, old, v) == old)
			return;
	}
}

/* The displayed slot (in targ_unit, log2 or linear) of @ns. */
static __always_inline __u32 hist_slot(__u64 ns)
{
	__u64 v = ns, slot;

	if (targ_unit == UNIT_USEC)
		v /= 1000;
	else if (targ_unit == UNIT_MSEC)
		v /= 1000000;
	if (targ_linear)
		slot = targ_lin_step ? v / targ_lin_step : v;
	else
		slot = log2l(v);
	return slot >= MAX_SLOTS ? MAX_SLOTS - 1 : slot;
}

/* The fine (percentile) slot of @ns. */
static __always_inline __u32 hist_fine_slot(__u64 ns)
{
	__u32 slot = fine_slot(ns);

	return slot >= FINE_SLOTS ? FINE_SLOTS - 1 : slot;
}

static __always_inline void hist_add(struct hist *h, __u64 ns)
{
	__sync_fetch_and_add(&h->slots[hist_slot(ns)], 1);
	__sync_fetch_and_add(&h->fine[hist_fine_slot(ns)], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum, ns);
	atomic_min(&h->min, ns);
	atomic_max(&h->max, ns);
}

/*
 * hist_add() for a histogram of one CPU (a per-CPU map): plain stores, no
 * atomics. A zeroed value is an empty histogram: min is set by the first
 * sample. Only the programs of one CPU write it and a program does not nest
 * with itself on a CPU, and the tool reads it only once no program writes its
 * generation any more (frac_gen.bpf.h), so nothing races.
 */
static __always_inline void hist_add_cpu(struct hist *h, __u64 ns)
{
	h->slots[hist_slot(ns)]++;
	h->fine[hist_fine_slot(ns)]++;
	if (!h->count || ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->count++;
	h->sum += ns;
}

#endif /* __FRAC_HIST_BPF_H */
