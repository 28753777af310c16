// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Copyright (c) 2026 The frac authors
 *
 * fracsnoop: one event per finished FRAC job, through a ring buffer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "fracsnoop.h"
#include "frac_job.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

static __always_inline bool job_record(const struct job_key *key, const struct job_info *j,
				       const __u64 *stages, struct job_stats *st)
{
	struct event *e;
	int i;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		st->rb_dropped++;
		return false;
	}
	e->ts = j->ts[TS_SIGNAL];
#pragma unroll
	for (i = 0; i < NR_STAGES; i++)
		e->stages[i] = stages[i];
	e->bytes = j->bytes;
	e->seqno = j->seqno;
	e->dev = key->dev;
	e->queue = key->queue;
	e->ctx = key->ctx;
	e->job = key->job;
	e->pid = j->pid;
	e->op = j->op;
	e->ncmds = j->ncmds;
	e->prio = j->prio;
	e->status = j->status;
	e->flags = j->flags;
	__builtin_memcpy(e->comm, j->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return true;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
