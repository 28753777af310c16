/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Copyright (c) 2026 The frac authors
 *
 * Job stage tracking shared by fraclat and fracsnoop: the programs on the
 * four job tracepoints, each as tp_btf (module BTF) and as raw_tp (no BTF
 * needed: every argument is a scalar in ctx->args[]); the tool enables one
 * set at run time. The including file defines frac_job_done(), called once
 * per job when its fence signals, with the stage durations. The interrupt
 * time comes with frac_job_complete (irq_ns: when the handler found the
 * job's record), so there is no program on frac_irq.
 */
#ifndef __FRAC_JOB_BPF_H
#define __FRAC_JOB_BPF_H

#include "frac_job.h"
#include "maps.bpf.h"

/* Filters, set by the tool between open and load. */
const volatile bool filter_dev = false;
const volatile __u32 targ_dev = 0;
const volatile bool filter_queue = false;
const volatile __u32 targ_queue = 0;
const volatile bool filter_pid = false;
const volatile __u32 targ_pid = 0;

/* Set by the tool: copy the submitter's comm into each job (fracsnoop, fraclat -P). */
const volatile bool need_comm = true;

/*
 * Jobs in flight, in an array of JOB_TABLE_SIZE slots (the tool sets the size,
 * a power of 2, between open and load; job_mask is size - 1). An array lookup
 * is a bounds check and an add, inlined by the verifier, where a hash map
 * costs a hash, a bucket walk and, for an update, a lock per event.
 *
 * A job has JOB_PROBES candidate slots: the first at its id plus a hash of
 * its context, queue and device (job ids count up per context, so the jobs
 * of one context take consecutive slots and never collide before the table
 * is full), the others a hash-derived odd stride apart (double hashing: away
 * from the runs of consecutive slots other contexts hold). A submit claims
 * the first free candidate with a compare-and-swap; when all are taken it
 * takes none, evicts nothing and counts table_full, and the job ends
 * "unmatched". A lookup compares the key of every candidate.
 *
 * Sizing: one file holds at most DRM_FRAC_MAX_UNWAITED (4096) job ids, the
 * scheduler queues without bound and files are unbounded, so no size holds
 * every backlog: the default holds 16 files' full backlogs, and what does not
 * fit is counted, never overwritten.
 */
#define JOB_PROBES	8

enum { JOB_SLOT_FREE, JOB_SLOT_CLAIMED, JOB_SLOT_USED };

struct job_slot {
	struct job_key key;
	__u32 state;	/* JOB_SLOT_*: claimed by a submit (cmpxchg), used once filled */
	__u32 pad;
	struct job_info info;
};

const volatile __u32 job_mask = 65536 - 1;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);	/* job_mask + 1, set by the tool */
	__type(key, __u32);
	__type(value, struct job_slot);
} jobs SEC(".maps");

/*
 * The counters of struct job_stats, per CPU: plain increments (a field is
 * written by one program only, and a program does not nest with itself on a
 * CPU); the tool sums the CPUs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct job_stats);
} job_stats SEC(".maps");

static __always_inline struct job_stats *stats_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&job_stats, &zero);
}

#define STAT_INC(field)						\
	do {							\
		struct job_stats *__st = stats_cpu();		\
								\
		if (__st)					\
			__st->field++;				\
	} while (0)

static __always_inline __u32 job_hash(const struct job_key *k)
{
	return k->ctx * 0x9e3779b1U ^ k->queue * 0x85ebca77U ^ k->dev * 0xc2b2ae3dU;
}

/* The first candidate slot of a job, and the stride between its candidates. */
static __always_inline __u32 job_slot_idx(const struct job_key *k)
{
	return (k->job + (job_hash(k) >> 16)) & job_mask;
}

static __always_inline __u32 job_slot_stride(const struct job_key *k)
{
	return ((k->job * 0x27d4eb2fU ^ job_hash(k)) >> 8) | 1;
}

static __always_inline bool job_key_eq(const struct job_key *a, const struct job_key *b)
{
	return a->dev == b->dev && a->queue == b->queue && a->ctx == b->ctx && a->job == b->job;
}

/* The slot that holds this job, else NULL. */
static __always_inline struct job_slot *job_lookup(const struct job_key *key)
{
	__u32 idx = job_slot_idx(key), stride = job_slot_stride(key);
	struct job_slot *s;
	int i;

	if (!key->job)
		return NULL;
#pragma unroll
	for (i = 0; i < JOB_PROBES; i++) {
		__u32 k = (idx + i * stride) & job_mask;

		s = bpf_map_lookup_elem(&jobs, &k);
		if (s && s->state == JOB_SLOT_USED && job_key_eq(&s->key, key))
			return s;
	}
	return NULL;
}

/* Claim a free slot for a new job; NULL when all its candidates are taken. */
static __always_inline struct job_slot *job_claim(const struct job_key *key)
{
	__u32 idx = job_slot_idx(key), stride = job_slot_stride(key);
	struct job_slot *s;
	int i;

#pragma unroll
	for (i = 0; i < JOB_PROBES; i++) {
		__u32 k = (idx + i * stride) & job_mask;

		s = bpf_map_lookup_elem(&jobs, &k);
		if (s && s->state == JOB_SLOT_FREE &&
		    __sync_val_compare_and_swap(&s->state, JOB_SLOT_FREE, JOB_SLOT_CLAIMED) == JOB_SLOT_FREE)
			return s;
	}
	return NULL;
}

static __always_inline __u32 status_class(__s32 err)
{
	switch (err) {
	case 0:
		return STATUS_OK;
	case -125:	/* ECANCELED */
		return STATUS_CANCELLED;
	case -110:	/* ETIMEDOUT */
		return STATUS_TIMEDOUT;
	case -5:	/* EIO */
		return STATUS_EIO;
	case -19:	/* ENODEV */
		return STATUS_ENODEV;
	default:
		return STATUS_OTHER;
	}
}

/*
 * Called once per measured job when its fence signals, with its stage
 * durations (a stage the job's flags say is unmeasured holds 0 and must not
 * be counted). Returns true when the job was recorded (a histogram sample, an
 * event); false when it was lost, having counted why.
 */
static __always_inline bool frac_job_done(const struct job_key *key, const struct job_info *j,
					  const __u64 *stages, struct job_stats *st);

static __always_inline bool job_filtered(__u32 dev, __u32 queue)
{
	return (filter_dev && dev != targ_dev) || (filter_queue && queue != targ_queue);
}

static __always_inline int on_submit(__u32 dev, __u32 queue, __u32 ctx_id, __u32 job,
				     __u32 ncmds, __u32 op, __u32 prio, __u64 bytes)
{
	struct job_key key = { .dev = dev, .queue = queue, .ctx = ctx_id, .job = job };
	__u64 ts = bpf_ktime_get_ns();	/* first: the submit's time, not ours */
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct job_slot *s;

	if (job_filtered(dev, queue))
		return 0;
	if (filter_pid && tgid != targ_pid)
		return 0;
	if (!job)	/* NO_JOB_ID: counted as noid when it ends */
		return 0;
	s = job_claim(&key);
	if (!s) {
		STAT_INC(table_full);
		return 0;
	}
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
	/* Publish: lookups match only a used slot, whose key and info are written. */
	__sync_fetch_and_add(&s->state, JOB_SLOT_USED - JOB_SLOT_CLAIMED);
	return 0;
}

static __always_inline int on_run(__u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u64 seqno)
{
	struct job_key key = { .dev = dev, .queue = queue, .ctx = ctx_id, .job = job };
	struct job_slot *s = job_lookup(&key);

	if (!s)
		return 0;
	s->info.ts[TS_RUN] = bpf_ktime_get_ns();
	s->info.seqno = seqno;
	return 0;
}

/*
 * @irq_ns: when the interrupt handler found the job's completion record
 * (frac_queue_process_cq(): ktime_get_ns, our clock, read after the record
 * was seen, so never before the job's run); 0 when no interrupt ended the
 * job (the timeout's lost-interrupt scan, a reset, removal): no-irq, and
 * its interrupt time is now.
 */
static __always_inline int on_complete(__u32 dev, __u32 queue, __u32 ctx_id, __u32 job,
				       __s32 status, __u64 dev_start, __u64 dev_end,
				       __u64 irq_ns)
{
	struct job_key key = { .dev = dev, .queue = queue, .ctx = ctx_id, .job = job };
	struct job_slot *s = job_lookup(&key);
	struct job_info *j;

	if (!s)
		return 0;
	j = &s->info;
	if (!irq_ns) {
		irq_ns = bpf_ktime_get_ns();
		j->flags |= JOB_F_NOIRQ;
	}
	j->ts[TS_IRQ] = irq_ns;
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

static __always_inline int on_signal(__u32 dev, __u32 queue, __u32 ctx_id, __u32 job,
				     __s32 error)
{
	struct job_key key = { .dev = dev, .queue = queue, .ctx = ctx_id, .job = job };
	struct job_stats *st;
	struct job_slot *s;
	struct job_info *j;
	__u64 stages[NR_STAGES] = {};
	__u64 sub, run, ds, de, irq, sig;
	__u32 clamped = 0;

	if (job_filtered(dev, queue))
		return 0;
	st = stats_cpu();
	if (!st)
		return 0;
	if (!job) {
		/* -p cannot be told apart here: the pid is known at submit only. */
		if (!filter_pid)
			st->noid++;
		return 0;
	}
	s = job_lookup(&key);
	if (!s) {
		/* With -p, the jobs of other processes were never recorded: not lost. */
		if (!filter_pid)
			st->unmatched++;
		return 0;
	}
	j = &s->info;
	sig = bpf_ktime_get_ns();
	sub = j->ts[TS_SUBMIT];
	run = j->ts[TS_RUN];
	j->status = error;
	if (!run) {
		/* Missed: the submit -> run and run -> start stages are left out. */
		j->flags |= JOB_F_NORUN;
		st->norun++;
		run = sub;
	}
	if (!(j->flags & JOB_F_COMPLETED)) {
		/* Missed: no device times and no interrupt; only the total is known. */
		j->flags |= JOB_F_NOCOMPLETE;
		st->nocomplete++;
		ds = de = irq = run;
	} else {
		irq = j->ts[TS_IRQ];
		clamped += clamp_ts(&irq, run, sig);
		ds = j->ts[TS_DEV_START];
		de = j->ts[TS_DEV_END];
		if (!ds && !de) {
			ds = de = irq;
			j->flags |= JOB_F_NODEV;
			st->nodev++;
		} else {
			clamped += clamp_ts(&ds, run, irq);
			clamped += clamp_ts(&de, ds, irq);
		}
		if (clamped) {
			j->flags |= JOB_F_CLAMPED;
			st->clamped += clamped;
		}
		if (j->flags & JOB_F_NOIRQ)
			st->noirq++;
	}
	j->ts[TS_RUN] = run;
	j->ts[TS_DEV_START] = ds;
	j->ts[TS_DEV_END] = de;
	j->ts[TS_IRQ] = irq;
	j->ts[TS_SIGNAL] = sig;
	if (!(j->flags & JOB_F_NORUN))
		stages[STAGE_SUBMIT_RUN] = run - sub;
	if (!(j->flags & (JOB_F_NORUN | JOB_F_NOCOMPLETE)))
		stages[STAGE_RUN_START] = ds - run;
	if (!(j->flags & JOB_F_NOCOMPLETE)) {
		stages[STAGE_EXEC] = de - ds;
		stages[STAGE_END_IRQ] = irq - de;
		stages[STAGE_IRQ_SIGNAL] = sig - irq;
	}
	stages[STAGE_TOTAL] = sig - sub;
	if (frac_job_done(&key, j, stages, st))
		st->status[status_class(error)]++;
	s->state = JOB_SLOT_FREE;
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

SEC("tp_btf/frac_job_complete")
int BPF_PROG(job_complete_btf, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u64 seqno,
	     __s32 status, __u64 dev_start, __u64 dev_end, __u64 result, __u64 irq_ns)
{
	return on_complete(dev, queue, ctx_id, job, status, dev_start, dev_end, irq_ns);
}

SEC("tp_btf/frac_fence_signal")
int BPF_PROG(fence_signal_btf, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u64 seqno,
	     __s32 error)
{
	return on_signal(dev, queue, ctx_id, job, error);
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

SEC("raw_tp/frac_job_complete")
int BPF_PROG(job_complete_raw, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u64 seqno,
	     __s32 status, __u64 dev_start, __u64 dev_end, __u64 result, __u64 irq_ns)
{
	return on_complete(dev, queue, ctx_id, job, status, dev_start, dev_end, irq_ns);
}

SEC("raw_tp/frac_fence_signal")
int BPF_PROG(fence_signal_raw, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u64 seqno,
	     __s32 error)
{
	return on_signal(dev, queue, ctx_id, job, error);
}

#endif /* __FRAC_JOB_BPF_H */
