// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Copyright (c) 2026 The frac authors
 *
 * fracdma: FRAC DMA map/unmap latency, bytes and segments per direction,
 * from the frac_dma_map/frac_dma_unmap tracepoints (tp_btf, or raw_tp).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "fracdma.h"
#include "frac_hist.bpf.h"
#include "maps.bpf.h"
#include "frac_gen.bpf.h"

#define MAX_ENTRIES	256

const volatile bool filter_dev = false;
const volatile __u32 targ_dev = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_ENTRIES);
	__type(key, struct fracdma_key);
	__type(value, struct fracdma_val);
} stats SEC(".maps");

static struct fracdma_val initial_val = { .lat.min = ~0ULL };

/* Maps and unmaps lost because the stats map had no room for their key. */
__u64 nr_stats_full = 0;

static __always_inline int on_dma(__u32 kind, __u32 dev, __u64 bytes, __u32 nsegs, __u32 dir,
				  __u64 duration_ns)
{
	struct fracdma_key key = { .dev = dev, .kind = kind, .dir = dir };
	struct fracdma_val *v;
	__u64 slot;

	if (filter_dev && dev != targ_dev)
		return 0;
	key.gen = gen_enter();
	v = bpf_map_lookup_or_try_init(&stats, &key, &initial_val);
	if (!v) {
		gen_exit(key.gen);
		__sync_fetch_and_add(&nr_stats_full, 1);
		return 0;
	}
	hist_add(&v->lat, duration_ns);
	__sync_fetch_and_add(&v->bytes, bytes);
	__sync_fetch_and_add(&v->segs, nsegs);
	slot = log2l(bytes);
	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	__sync_fetch_and_add(&v->size_slots[slot], 1);
	gen_exit(key.gen);
	return 0;
}

SEC("tp_btf/frac_dma_map")
int BPF_PROG(dma_map_btf, __u32 dev, __u64 bytes, __u32 nsegs, __u32 dir, __u64 duration_ns)
{
	return on_dma(DMA_MAP, dev, bytes, nsegs, dir, duration_ns);
}

SEC("tp_btf/frac_dma_unmap")
int BPF_PROG(dma_unmap_btf, __u32 dev, __u64 bytes, __u32 nsegs, __u32 dir, __u64 duration_ns)
{
	return on_dma(DMA_UNMAP, dev, bytes, nsegs, dir, duration_ns);
}

SEC("raw_tp/frac_dma_map")
int BPF_PROG(dma_map_raw, __u32 dev, __u64 bytes, __u32 nsegs, __u32 dir, __u64 duration_ns)
{
	return on_dma(DMA_MAP, dev, bytes, nsegs, dir, duration_ns);
}

SEC("raw_tp/frac_dma_unmap")
int BPF_PROG(dma_unmap_raw, __u32 dev, __u64 bytes, __u32 nsegs, __u32 dir, __u64 duration_ns)
{
	return on_dma(DMA_UNMAP, dev, bytes, nsegs, dir, duration_ns);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
