/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Copyright (c) 2026 The frac authors
 *
 * Job stage tracking shared by fraclat and fracsnoop: the programs on the
 * five job tracepoints, each as tp_btf (module BTF) and as raw_tp (no BTF
 * needed: every argument is a scalar in ctx->args[]); the tool enables one
 * set at run time. The including file defines frac_job_done(), called once
 * per job when its fence signals, with the stage durations.
 */
#ifndef __FRAC_JOB_BPF_H
#define __FRAC_JOB_BPF_H

#include "frac_job.h"
#include "maps.bpf.h"

#define MAX_JOBS	16384

/* Filters, set by the tool between open and load. */
const volatile bool filter_dev = false;
const volatile __u32 targ_dev = 0;
const volatile bool filter_queue = false;
const volatile __u32 targ_queue = 0;
const volatile bool filter_pid = false;
const volatile __u32 targ_pid = 0;

/* Counters the tool reports. */
__u64 nr_clamped = 0;	/* device times clamped into [run, irq] */
__u64 nr_noirq = 0;	/* jobs completed without an interrupt of their queue */
__u64 nr_nodev = 0;	/* jobs without device times */

/* Set by the tool: copy the submitter's comm into each job (fracsnoop, fraclat -P). */
const volatile bool need_comm = true;

/*
 * Jobs in flight, in an array indexed by a hash of their id: an array lookup
 * is a bounds check and an add, inlined by the verifier, where a hash map
 * costs a hash, a bucket walk and, for an update, a lock per event. Job ids
 * count up per context, so ids of one context share a slot only when
 * MAX_JOBS of its jobs are in flight (jobs of different contexts or queues,
 * whose offsets differ, by chance); each slot keeps its job's key and a job
 * whose slot was taken is dropped, as an LRU map would evict it.
 */
struct job_slot {
	struct job_key key;
	__u32 used;
	__u32 pad;
	struct job_info info;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_JOBS);
	__type(key, __u32);
	__type(value, struct job_slot);
} jobs SEC(".maps");

#define MAX_DEVS	64
#define MAX_QUEUES	16	/* FRAC_MAX_QUEUES of include/frac_hw.h */
#define IRQ_QUEUES	(MAX_QUEUES + 1)	/* the last: FRAC_NO_QUEUE */

/* Time of the last interrupt per (dev, queue), indexed dev * IRQ_QUEUES + queue. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_DEVS * IRQ_QUEUES);
	__type(key, __u32);
	__type(value, __u64);
} last_irq SEC(".maps");

static __always_inline __u32 job_slot_idx(const struct job_key *k)
{
	__u32 h = k->ctx * 0x9e3779b1U ^ k->queue * 0x85ebca77U ^ k->dev * 0xc2b2ae3dU;

	return (k->job + (h >> 16)) & (MAX_JOBS - 1);
}

static __always_inline bool job_key_eq(const struct job_key *a, const struct job_key *b)
{
	return a->dev == b->dev && a->queue == b->queue && a->ctx == b->ctx && a->job == b->job;
}

/* The job's slot if it holds this job, else NULL. */
static __always_inline struct job_info *job_lookup(const struct job_key *key)
{
	__u32 idx = job_slot_idx(key);
	struct job_slot *s = bpf_map_lookup_elem(&jobs, &idx);

	if (!s || !s->used || !job_key_eq(&s->key, key))
		return NULL;
	return &s->info;
}

static __always_inline void job_forget(const struct job_key *key)
{
	__u32 idx = job_slot_idx(key);
	struct job_slot *s = bpf_map_lookup_elem(&jobs, &idx);

	if (s && job_key_eq(&s->key, key))
		s->used = 0;
}

static __always_inline __u64 *irq_lookup(__u32 dev, __u32 queue)
{
	__u32 idx;

	if (dev >= MAX_DEVS)
		return NULL;
	if (queue == FRAC_NO_QUEUE)
		queue = IRQ_QUEUES - 1;
	else if (queue >= MAX_QUEUES)
		return NULL;
	idx = dev * IRQ_QUEUES + queue;
	return bpf_map_lookup_elem(&last_irq, &idx);
}

static __always_inline void frac_job_done(const struct job_key *key, const struct job_info *j,
					  const __u64 *stages);

static __always_inline int on_submit(__u32 dev, __u32 queue, __u32 ctx_id, __u32 job,
				     __u32 ncmds, __u32 op, __u32 prio, __u64 bytes)
{
	struct job_key key = { .dev = dev, .queue = queue, .ctx = ctx_id, .job = job };
	__u64 ts = bpf_ktime_get_ns();	/* first: the submit's time, not ours */
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 idx = job_slot_idx(&key);
	struct job_slot *s;

	if (filter_dev && dev != targ_dev)
		return 0;
	if (filter_queue && queue != targ_queue)
		return 0;
	if (filter_pid && tgid != targ_pid)
		return 0;
	s = bpf_map_lookup_elem(&jobs, &idx);
	if (!s)
		return 0;
	s->used = 0;
	s->key = key;
	__builtin_memset(&s->info, 0, sizeof(s->info));
	s->info.ts[TS_SUBMIT] = ts;
	s->info.pid = tgid;
	s->info.op = op;
	s->info.ncmds = ncmds;
	s->info.prio = prio;
	s->info.bytes = bytes;
	if (need_comm)
		bpf_get_current_comm(&s->info.comm, sizeof(s->info.comm));
	s->used = 1;
	return 0;
}

static __always_inline int on_run(__u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u64 seqno)
{
	struct job_key key = { .dev = dev, .queue = queue, .ctx = ctx_id, .job = job };
	struct job_info *j = job_lookup(&key);

	if (!j)
		return 0;
	j->ts[TS_RUN] = bpf_ktime_get_ns();
	j->seqno = seqno;
	return 0;
}

static __always_inline int on_irq(__u32 dev, __u32 vector, __u32 queue)
{
	__u64 *t;

	/* The error vector (MSI-X) completes nothing; the legacy vector (0) does. */
	if (queue == FRAC_NO_QUEUE && vector != 0)
		return 0;
	t = irq_lookup(dev, queue);
	if (t)
		*t = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int on_complete(__u32 dev, __u32 queue, __u32 ctx_id, __u32 job,
				       __s32 status, __u64 dev_start, __u64 dev_end)
{
	struct job_key key = { .dev = dev, .queue = queue, .ctx = ctx_id, .job = job };
	struct job_info *j = job_lookup(&key);
	__u64 irq = 0, *t;

	if (!j)
		return 0;
	t = irq_lookup(dev, queue);
	if (t)
		irq = *t;
	t = irq_lookup(dev, FRAC_NO_QUEUE);
	if (t && *t > irq)
		irq = *t;
	/* An interrupt older than the job's run cannot have completed it. */
	if (!irq || irq < j->ts[TS_RUN]) {
		irq = bpf_ktime_get_ns();
		j->flags |= JOB_F_NOIRQ;
	}
	j->ts[TS_IRQ] = irq;
	j->ts[TS_DEV_START] = dev_start;
	j->ts[TS_DEV_END] = dev_end;
	j->status = status;
	j->flags |= JOB_F_COMPLETED;
	return 0;
}

/* Clamp *v into [lo, hi], counting an adjustment. */
static __always_inline __u32 clamp_ts(__u64 *v, __u64 lo, __u64 hi)
{
	if (*v < lo) {
		*v = lo;
		return 1;
	}
	if (*v > hi) {
		*v = hi;
		return 1;
	}
	return 0;
}

static __always_inline int on_signal(__u32 dev, __u32 queue, __u32 ctx_id, __u32 job)
{
	struct job_key key = { .dev = dev, .queue = queue, .ctx = ctx_id, .job = job };
	struct job_info *j = job_lookup(&key);
	__u64 stages[NR_STAGES];
	__u64 sub, run, ds, de, irq, sig;
	__u32 clamped = 0;

	if (!j)
		return 0;
	sig = bpf_ktime_get_ns();
	sub = j->ts[TS_SUBMIT];
	run = j->ts[TS_RUN];
	/* Host times are ordered already; these only guard against a missed event. */
	if (run < sub || run > sig)
		run = sub;
	irq = j->ts[TS_IRQ];
	if (!(j->flags & JOB_F_COMPLETED)) {
		irq = sig;
		j->flags |= JOB_F_NOIRQ;
	}
	if (irq < run || irq > sig)
		irq = irq < run ? run : sig;
	ds = j->ts[TS_DEV_START];
	de = j->ts[TS_DEV_END];
	if (!ds && !de) {
		ds = de = irq;
		j->flags |= JOB_F_NODEV;
		__sync_fetch_and_add(&nr_nodev, 1);
	} else {
		clamped += clamp_ts(&ds, run, irq);
		clamped += clamp_ts(&de, ds, irq);
	}
	if (clamped) {
		j->flags |= JOB_F_CLAMPED;
		__sync_fetch_and_add(&nr_clamped, clamped);
	}
	if (j->flags & JOB_F_NOIRQ)
		__sync_fetch_and_add(&nr_noirq, 1);
	j->ts[TS_RUN] = run;
	j->ts[TS_DEV_START] = ds;
	j->ts[TS_DEV_END] = de;
	j->ts[TS_IRQ] = irq;
	j->ts[TS_SIGNAL] = sig;
	stages[STAGE_SUBMIT_RUN] = run - sub;
	stages[STAGE_RUN_START] = ds - run;
	stages[STAGE_EXEC] = de - ds;
	stages[STAGE_END_IRQ] = irq - de;
	stages[STAGE_IRQ_SIGNAL] = sig - irq;
	stages[STAGE_TOTAL] = sig - sub;
	frac_job_done(&key, j, stages);
	job_forget(&key);
	return 0;
}

/* tp_btf: typed through the module's BTF. */
SEC("tp_btf/frac_job_submit")
int BPF_PROG(job_submit_btf, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u32 ncmds,
	     __u32 op, __u32 prio, __u64 bytes)
{
	return on_submit(dev, queue, ctx_id, job, ncmds, op, prio, bytes);
}

SEC("tp_btf/frac_job_run")
int BPF_PROG(job_run_btf, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u64 seqno)
{
	return on_run(dev, queue, ctx_id, job, seqno);
}

SEC("tp_btf/frac_irq")
int BPF_PROG(irq_btf, __u32 dev, __u32 vector, __u32 queue)
{
	return on_irq(dev, vector, queue);
}

SEC("tp_btf/frac_job_complete")
int BPF_PROG(job_complete_btf, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u64 seqno,
	     __s32 status, __u64 dev_start, __u64 dev_end)
{
	return on_complete(dev, queue, ctx_id, job, status, dev_start, dev_end);
}

SEC("tp_btf/frac_fence_signal")
int BPF_PROG(fence_signal_btf, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job)
{
	return on_signal(dev, queue, ctx_id, job);
}

/* raw_tp: the same arguments from ctx->args[], without BTF. */
SEC("raw_tp/frac_job_submit")
int BPF_PROG(job_submit_raw, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u32 ncmds,
	     __u32 op, __u32 prio, __u64 bytes)
{
	return on_submit(dev, queue, ctx_id, job, ncmds, op, prio, bytes);
}

SEC("raw_tp/frac_job_run")
int BPF_PROG(job_run_raw, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u64 seqno)
{
	return on_run(dev, queue, ctx_id, job, seqno);
}

SEC("raw_tp/frac_irq")
int BPF_PROG(irq_raw, __u32 dev, __u32 vector, __u32 queue)
{
	return on_irq(dev, vector, queue);
}

SEC("raw_tp/frac_job_complete")
int BPF_PROG(job_complete_raw, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u64 seqno,
	     __s32 status, __u64 dev_start, __u64 dev_end)
{
	return on_complete(dev, queue, ctx_id, job, status, dev_start, dev_end);
}

SEC("raw_tp/frac_fence_signal")
int BPF_PROG(fence_signal_raw, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job)
{
	return on_signal(dev, queue, ctx_id, job);
}

#endif /* __FRAC_JOB_BPF_H */
