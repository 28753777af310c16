/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 The frac authors */
#ifndef __FRACDMA_H
#define __FRACDMA_H

#include "frac_hist.h"

enum fracdma_kind {
	DMA_MAP,
	DMA_UNMAP,
};

struct fracdma_key {
	__u32 dev;
	__u32 kind;	/* enum fracdma_kind */
	__u32 dir;	/* enum dma_data_direction: 0 bidirectional, 1 to device, 2 from device */
	__u32 gen;	/* frac_gen.bpf.h */
};

struct fracdma_val {
	struct hist lat;		/* duration of the map/unmap (ns) */
	__u64 bytes;
	__u64 segs;
	__u32 size_slots[MAX_SLOTS];	/* log2 of the bytes per map/unmap */
};

#endif /* __FRACDMA_H */
