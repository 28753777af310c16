/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Copyright (c) 2026 The frac authors
 *
 * Job stage tracking shared by fraclat and fracsnoop: one program per job,
 * on the driver's frac_job_done tracepoint, as tp_btf (module BTF) and as
 * raw_tp (no BTF needed: the scalars are in ctx->args[] and the stamps are
 * read by their layout in include/frac_hw.h); the tool enables one at run
 * time. The including file defines job_record(), called once per measured
 * job with its stage durations.
 */
#ifndef __FRAC_JOB_BPF_H
#define __FRAC_JOB_BPF_H

#include "frac_hw.h"
#include "frac_job.h"
#include "maps.bpf.h"

/* Filters, set by the tool between open and load. */
const volatile bool filter_dev = false;
const volatile __u32 targ_dev = 0;
const volatile bool filter_queue = false;
const volatile __u32 targ_queue = 0;
const volatile bool filter_pid = false;
const volatile __u32 targ_pid = 0;

/*
 * One program per job: the driver's frac_job_done event carries every stage
 * of the job (struct frac_job_stamps, include/frac_hw.h), stamped by the
 * driver only while the event is enabled, so no program runs on submit, run
 * or complete and there is no table of jobs in flight to fill or evict from.
 */

/*
 * The counters of struct job_stats, per CPU: plain increments (a program
 * does not nest with itself on a CPU); the tool sums the CPUs.
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
static __always_inline bool job_record(const struct job_key *key, const struct job_info *j,
				       const __u64 *stages, struct job_stats *st);

static __always_inline bool job_filtered(__u32 dev, __u32 queue)
{
	return (filter_dev && dev != targ_dev) || (filter_queue && queue != targ_queue);
}

/* A job whose stamps could not be read (never seen so far): counted, as unmatched. */
static __always_inline int count_unreadable(void)
{
	struct job_stats *st = stats_cpu();

	if (st)
		st->unmatched++;
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

/*
 * frac_job_done: the job's fence is about to signal (now is its signal
 * time), @t holds its stamps. A job the driver did not stamp at submit
 * (submit_ns 0: submitted before the event was enabled) is unmatched.
 */
static __always_inline int on_done(__u32 dev, __u32 queue, __u32 ctx_id, __u32 job,
				   __u64 seqno, __s32 error, const struct frac_job_stamps *t)
{
	struct job_key key = { .dev = dev, .queue = queue, .ctx = ctx_id, .job = job };
	__u64 sig = bpf_ktime_get_ns();	/* first: the signal's time, not ours */
	__u64 stages[NR_STAGES] = {};
	struct job_info j = {};
	__u64 sub, run, ds, de, irq;
	struct job_stats *st;
	__u32 clamped = 0;

	if (job_filtered(dev, queue))
		return 0;
	if (filter_pid && t->pid != targ_pid)
		return 0;	/* with -p, an unstamped job (pid 0) is not counted */
	st = stats_cpu();
	if (!st)
		return 0;
	sub = t->submit_ns;
	if (!sub) {
		st->unmatched++;
		return 0;
	}
	run = t->run_ns;
	irq = t->irq_ns;
	ds = t->dev_start_ns;
	de = t->dev_end_ns;
	j.bytes = t->bytes;
	j.seqno = seqno;
	j.pid = t->pid;
	j.op = t->op;
	j.ncmds = t->ncmds;
	j.prio = t->prio;
	j.status = error;
	j.flags = JOB_F_COMPLETED;
	__builtin_memcpy(j.comm, t->comm, sizeof(j.comm));
	if (!run) {
		/* Not stamped (the event was off when it ran): submit -> run unmeasured. */
		j.flags |= JOB_F_NORUN;
		st->norun++;
		run = sub;
	}
	if (!irq) {
		irq = sig;
		j.flags |= JOB_F_NOIRQ;
		st->noirq++;
	}
	clamped += clamp_ts(&irq, run, sig);
	if (!ds && !de) {
		ds = de = irq;
		j.flags |= JOB_F_NODEV;
		st->nodev++;
	} else {
		clamped += clamp_ts(&ds, run, irq);
		clamped += clamp_ts(&de, ds, irq);
	}
	if (clamped) {
		j.flags |= JOB_F_CLAMPED;
		st->clamped += clamped;
	}
	j.ts[TS_SUBMIT] = sub;
	j.ts[TS_RUN] = run;
	j.ts[TS_DEV_START] = ds;
	j.ts[TS_DEV_END] = de;
	j.ts[TS_IRQ] = irq;
	j.ts[TS_SIGNAL] = sig;
	if (!(j.flags & JOB_F_NORUN)) {
		stages[STAGE_SUBMIT_RUN] = run - sub;
		stages[STAGE_RUN_START] = ds - run;
	}
	stages[STAGE_EXEC] = de - ds;
	stages[STAGE_END_IRQ] = irq - de;
	stages[STAGE_IRQ_SIGNAL] = sig - irq;
	stages[STAGE_TOTAL] = sig - sub;
	if (job_record(&key, &j, stages, st))
		st->status[status_class(error)]++;
	return 0;
}

/*
 * The raw_tp program reads the driver's stamps by this layout, with no BTF to
 * check it against: pin every field here too (frac_hw.h's own asserts are
 * sizeof-only in BPF builds, where its offsetof() is CO-RE's).
 */
_Static_assert(sizeof(struct frac_job_stamps) == 80, "frac_job_stamps layout");
_Static_assert(__builtin_offsetof(struct frac_job_stamps, run_ns) == 8, "stamps layout");
_Static_assert(__builtin_offsetof(struct frac_job_stamps, irq_ns) == 32, "stamps layout");
_Static_assert(__builtin_offsetof(struct frac_job_stamps, pid) == 48, "stamps layout");
_Static_assert(__builtin_offsetof(struct frac_job_stamps, comm) == 64, "stamps layout");

/*
 * tp_btf: typed through the module's BTF; @t is read directly (the driver never passes
 * NULL, but the verifier types a tracepoint's pointer argument as maybe-NULL).
 */
SEC("tp_btf/frac_job_done")
int BPF_PROG(job_done_btf, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u64 seqno,
	     __s32 error, const struct frac_job_stamps *t)
{
	if (!t)
		return count_unreadable();
	return on_done(dev, queue, ctx_id, job, seqno, error, t);
}

/* raw_tp: the same arguments from ctx->args[], without BTF: @t copied by its layout. */
SEC("raw_tp/frac_job_done")
int BPF_PROG(job_done_raw, __u32 dev, __u32 queue, __u32 ctx_id, __u32 job, __u64 seqno,
	     __s32 error, const struct frac_job_stamps *t)
{
	struct frac_job_stamps copy;

	if (bpf_probe_read_kernel(&copy, sizeof(copy), t))
		return count_unreadable();
	return on_done(dev, queue, ctx_id, job, seqno, error, &copy);
}

#endif /* __FRAC_JOB_BPF_H */
