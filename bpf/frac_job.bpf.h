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

/* Jobs in flight; LRU so that jobs we never see end cannot fill it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_JOBS);
	__type(key, struct job_key);
	__type(value, struct job_info);
} jobs SEC(".maps");

struct irq_key {
	__u32 dev;
	__u32 queue;
};

/* Time of the last interrupt per (dev, queue); queue FRAC_NO_QUEUE: legacy vector. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct irq_key);
	__type(value, __u64);
} last_irq SEC(".maps");

static __always_inline void frac_job_done(const struct job_key *key, const struct job_info *j,
					  const __u64 *stages);

static __always_inline int on_submit(__u32 dev, __u32 queue, __u32 ctx_id, __u32 job,
				     __u32 ncmds, __u32 op, __u32 prio, __u64 bytes)
{
	struct job_key key = { .dev = dev, .queue = queue, .ctx = ctx_id, .job = job };
	struct job_info info = {};
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (filter_dev && dev != targ_dev)
		return 0;
	if (filter_queue && queue != targ_queue)
		return 0;
	if (filter_pid && tgid != targ_pid)
		return 0;
	info.ts[TS_SUBMIT] = bpf_ktime_get_ns();
	info.pid = tgid;
	info.op = op;
	info.ncmds = ncmds;
	info.prio = prio;
	info.bytes = bytes;
	bpf_get_current_comm(&info.comm, sizeof(info.comm));
	bpf_map_update_elem(&jobs, &key, &info, BPF_ANY);
	return 0;
}

static __always_inline int on_run(__u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u64 seqno)
{
	struct job_key key = { .dev = dev, .queue = queue, .ctx = ctx_id, .job = job };
	struct job_info *j = bpf_map_lookup_elem(&jobs, &key);

	if (!j)
		return 0;
	j->ts[TS_RUN] = bpf_ktime_get_ns();
	j->seqno = seqno;
	return 0;
}

static __always_inline int on_irq(__u32 dev, __u32 vector, __u32 queue)
{
	struct irq_key key = { .dev = dev, .queue = queue };
	__u64 ts = bpf_ktime_get_ns();

	/* The error vector (MSI-X) completes nothing; the legacy vector (0) does. */
	if (queue == FRAC_NO_QUEUE && vector != 0)
		return 0;
	bpf_map_update_elem(&last_irq, &key, &ts, BPF_ANY);
	return 0;
}

static __always_inline int on_complete(__u32 dev, __u32 queue, __u32 ctx_id, __u32 job,
				       __s32 status, __u64 dev_start, __u64 dev_end)
{
	struct job_key key = { .dev = dev, .queue = queue, .ctx = ctx_id, .job = job };
	struct irq_key ikey = { .dev = dev, .queue = queue };
	struct job_info *j = bpf_map_lookup_elem(&jobs, &key);
	__u64 irq = 0, *t;

	if (!j)
		return 0;
	t = bpf_map_lookup_elem(&last_irq, &ikey);
	if (t)
		irq = *t;
	ikey.queue = FRAC_NO_QUEUE;
	t = bpf_map_lookup_elem(&last_irq, &ikey);
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
	struct job_info *j = bpf_map_lookup_elem(&jobs, &key);
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
	bpf_map_delete_elem(&jobs, &key);
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
