// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Copyright (c) 2026 The frac authors
 *
 * fracirq: FRAC interrupts per vector, handler time, and the latency from the
 * interrupt to each fence the handler signals.
 *
 * The handlers (frac_queue_irq, frac_error_irq, frac_legacy_irq) are traced
 * with fentry/fexit, or without BTF kprobe.multi, else kprobe/kretprobe; the frac_irq and
 * frac_fence_signal tracepoints with tp_btf, or raw_tp. Hard interrupt
 * handlers do not nest on a CPU, so one per-CPU slot holds the handler in
 * progress: a fence signalled while it runs was signalled by it, and one
 * signalled anywhere else (a timeout, a reset) is not counted.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "fracirq.h"
#include "frac_hist.bpf.h"
#include "maps.bpf.h"
#include "frac_gen.bpf.h"

#define MAX_ENTRIES	1024

const volatile bool filter_dev = false;
const volatile __u32 targ_dev = 0;

struct cur_irq {
	__u64 entry_ts;	/* handler entry; 0 outside a handler */
	__u64 irq_ts;	/* frac_irq inside it */
	__u32 irq;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cur_irq);
} cur SEC(".maps");

/*
 * Counts and histograms per CPU: updated without atomics (only hard
 * interrupt handlers on one CPU write them, and they do not nest); the tool
 * sums the CPUs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, MAX_ENTRIES);
	__type(key, struct vec_key);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, MAX_ENTRIES);
	__type(key, struct fracirq_key);
	__type(value, struct hist);
} hists SEC(".maps");

static const struct hist zero_hist;

/* Samples lost because a map had no room for their key (rare: atomics are fine). */
__u64 nr_counts_full = 0;
__u64 nr_hists_full = 0;

static __always_inline int handler_entry(int irq)
{
	__u32 zero = 0;
	struct cur_irq *c = bpf_map_lookup_elem(&cur, &zero);

	if (!c)
		return 0;
	c->entry_ts = bpf_ktime_get_ns();
	c->irq_ts = 0;
	c->irq = irq;
	return 0;
}

static __always_inline int handler_exit(void)
{
	struct fracirq_key key = { .kind = HIST_HANDLER };
	__u32 zero = 0;
	struct cur_irq *c = bpf_map_lookup_elem(&cur, &zero);
	struct hist *h;
	__u64 ts;

	if (!c || !c->entry_ts)
		return 0;
	ts = bpf_ktime_get_ns();
	key.id = c->irq;
	/* -d: a handler that saw no frac_irq of the device (or none at all) is not it. */
	if (!filter_dev || c->irq_ts) {
		key.gen = gen_enter();
		h = bpf_map_lookup_or_try_init(&hists, &key, &zero_hist);
		if (h)
			hist_add_cpu(h, ts - c->entry_ts);
		gen_exit(key.gen);
		if (!h)
			__sync_fetch_and_add(&nr_hists_full, 1);
	}
	c->entry_ts = 0;
	c->irq_ts = 0;
	return 0;
}

static __always_inline int on_irq(__u32 dev, __u32 vector, __u32 queue)
{
	struct vec_key key = { .dev = dev, .vector = vector, .queue = queue };
	static const __u64 zero64;
	__u32 zero = 0;
	struct cur_irq *c;
	__u64 *cnt;

	if (filter_dev && dev != targ_dev)
		return 0;
	key.gen = gen_enter();
	cnt = bpf_map_lookup_or_try_init(&counts, &key, &zero64);
	if (cnt)
		(*cnt)++;
	gen_exit(key.gen);
	if (!cnt)
		__sync_fetch_and_add(&nr_counts_full, 1);
	c = bpf_map_lookup_elem(&cur, &zero);
	if (c && c->entry_ts)
		c->irq_ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int on_signal(__u32 dev, __u32 queue)
{
	struct fracirq_key key = { .kind = HIST_SIGNAL, .dev = dev, .id = queue };
	__u32 zero = 0;
	struct cur_irq *c;
	struct hist *h;

	if (filter_dev && dev != targ_dev)
		return 0;
	c = bpf_map_lookup_elem(&cur, &zero);
	if (!c || !c->entry_ts || !c->irq_ts)
		return 0;
	key.gen = gen_enter();
	h = bpf_map_lookup_or_try_init(&hists, &key, &zero_hist);
	if (h)
		hist_add_cpu(h, bpf_ktime_get_ns() - c->irq_ts);
	gen_exit(key.gen);
	if (!h)
		__sync_fetch_and_add(&nr_hists_full, 1);
	return 0;
}

/* Tracepoints: tp_btf, and raw_tp without BTF. */
SEC("tp_btf/frac_irq")
int BPF_PROG(irq_btf, __u32 dev, __u32 vector, __u32 queue)
{
	return on_irq(dev, vector, queue);
}

SEC("raw_tp/frac_irq")
int BPF_PROG(irq_raw, __u32 dev, __u32 vector, __u32 queue)
{
	return on_irq(dev, vector, queue);
}

SEC("tp_btf/frac_fence_signal")
int BPF_PROG(fence_signal_btf, __u32 dev, __u32 queue)
{
	return on_signal(dev, queue);
}

SEC("raw_tp/frac_fence_signal")
int BPF_PROG(fence_signal_raw, __u32 dev, __u32 queue)
{
	return on_signal(dev, queue);
}

/* Handlers: fentry/fexit, and kprobe/kretprobe without BTF. */
#define FRAC_HANDLER(fn)						\
SEC("fentry/" #fn)							\
int BPF_PROG(fn##_entry, int irq)					\
{									\
	return handler_entry(irq);					\
}									\
SEC("fexit/" #fn)							\
int BPF_PROG(fn##_exit)							\
{									\
	return handler_exit();						\
}									\
SEC("kprobe/" #fn)							\
int BPF_KPROBE(fn##_kprobe, int irq)					\
{									\
	return handler_entry(irq);					\
}									\
SEC("kretprobe/" #fn)							\
int BPF_KRETPROBE(fn##_kretprobe)					\
{									\
	return handler_exit();						\
}

FRAC_HANDLER(frac_queue_irq)
FRAC_HANDLER(frac_error_irq)
FRAC_HANDLER(frac_legacy_irq)

/*
 * Without BTF, first kprobe.multi (fprobe): one program on all three
 * handlers, attached by a BPF link rather than a perf event, so it works
 * where perf_event_paranoid refuses kprobe perf events (Debian's 3 without
 * CAP_SYS_ADMIN). The tool attaches these by hand, with the names.
 */
SEC("kprobe.multi")
int BPF_KPROBE(handlers_kmulti, int irq)
{
	return handler_entry(irq);
}

SEC("kretprobe.multi")
int BPF_KRETPROBE(handlers_kmulti_ret)
{
	return handler_exit();
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
