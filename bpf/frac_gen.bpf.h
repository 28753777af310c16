/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Copyright (c) 2026 The frac authors
 *
 * Two generations of a tool's hash maps, so the tool can drain them without losing an event.
 *
 * A program that adds to a map element holds a pointer to it while it writes. Deleting the
 * element from user space meanwhile (lookup-and-delete) sends the rest of that write to an
 * element no one reads again: one event lost, with no counter to show it (seen: a fractop
 * latency histogram one job short of the workload's own count after a flood).
 *
 * So each key carries a generation (0 or 1). A program takes the current one with
 * gen_enter(), writes only keys of it, and leaves with gen_exit(). The tool flips frac_gen,
 * waits until no program still holds the old generation (frac_gen_busy[old] is 0), then
 * drains the old generation's keys, which nothing writes any more (gen_flip() and
 * map_drain*() in trace_helpers.c). Both sides order their accesses with fully ordered
 * atomics: a program that raised busy[g] after the flip sees the flip when it checks again
 * and moves to the new generation; one that raised it before is waited for.
 */
#ifndef __FRAC_GEN_BPF_H
#define __FRAC_GEN_BPF_H

#include <bpf/bpf_helpers.h>

/* The generation programs write (0 or 1): flipped by the tool, read here. */
__u32 frac_gen = 0;
/* Programs between gen_enter() and gen_exit(), per generation. */
__u64 frac_gen_busy[2] = {};

static __always_inline __u32 gen_read(void)
{
	return *(volatile __u32 *)&frac_gen & 1;
}

static __always_inline __u32 gen_enter(void)
{
	__u32 g = 0;
	__u64 v;
	int i;

	/*
	 * Fetching atomics are fully ordered; plain ones need not be (BPF's memory model).
	 * A flip between the read and the raise: the tool may not wait for us, so drop it and
	 * take the new generation. A flip needs the old generation's programs gone, so this
	 * does not go round twice; the bound is for the verifier, and the last try is kept.
	 */
	for (i = 0; i < 4; i++) {
		g = gen_read();
		v = __sync_fetch_and_add(&frac_gen_busy[g], 1);
		barrier_var(v);
		if (gen_read() == g || i == 3)
			break;
		v = __sync_fetch_and_sub(&frac_gen_busy[g], 1);
		barrier_var(v);
	}
	return g;
}

static __always_inline void gen_exit(__u32 g)
{
	__u64 v = __sync_fetch_and_sub(&frac_gen_busy[g & 1], 1);

	barrier_var(v);
}

#endif /* __FRAC_GEN_BPF_H */
