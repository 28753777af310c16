// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Copyright (c) 2026 The frac authors
 *
 * fraclat: per-stage latency histograms of FRAC jobs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "fraclat.h"
#include "frac_hist.bpf.h"
#include "frac_job.bpf.h"
#include "frac_gen.bpf.h"

#define MAX_ENTRIES	1024

const volatile __u32 targ_group = GROUP_NONE;
/* -S: failed jobs get histograms of their own per status; else they are only counted. */
const volatile bool targ_by_status = false;

/*
 * Per CPU: the six histograms of a job are updated without atomics, one
 * lookup per job; the tool sums the CPUs when it prints.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, MAX_ENTRIES);
	__type(key, struct fraclat_key);
	__type(value, struct fraclat_hists);
} hists SEC(".maps");

static const struct fraclat_hists zero_hists;

static __always_inline bool job_record(const struct job_key *jk, const struct job_info *j,
				       const __u64 *stages, struct job_stats *st)
{
	struct fraclat_key key = { .dev = jk->dev };
	struct fraclat_hists *h;
	int i;

	/* A failed job's latency is not a good job's: counted by status, not mixed in. */
	if (j->status && !targ_by_status)
		return true;
	key.status = status_class(j->status);
	if (targ_group == GROUP_QUEUE)
		key.id = jk->queue;
	else if (targ_group == GROUP_OP)
		key.id = j->op;
	else if (targ_group == GROUP_PID)
		key.id = j->pid;
	key.gen = gen_enter();
	h = bpf_map_lookup_or_try_init(&hists, &key, &zero_hists);
	if (!h) {
		gen_exit(key.gen);
		st->hist_full++;
		return false;
	}
	if (targ_group == GROUP_PID && !h->stage[0].comm[0])
		__builtin_memcpy(h->stage[0].comm, j->comm, sizeof(h->stage[0].comm));
#pragma unroll
	for (i = 0; i < NR_STAGES; i++)
		if (stage_measured(j->flags, i))
			hist_add_cpu(&h->stage[i], stages[i]);
	gen_exit(key.gen);
	return true;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
