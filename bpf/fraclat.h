/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 The frac authors */
#ifndef __FRACLAT_H
#define __FRACLAT_H

#include "frac_job.h"

/* What the histograms are broken down by, besides device and stage. */
enum fraclat_group {
	GROUP_NONE,
	GROUP_QUEUE,
	GROUP_OP,
	GROUP_PID,
};

struct fraclat_key {
	__u32 dev;
	__u32 id;	/* queue, op or pid (GROUP_*), else 0 */
	__u32 status;	/* enum frac_status_class: 0 (ok) unless -S */
	__u32 gen;	/* frac_gen.bpf.h */
};

/* The histograms of one group, one per stage (a per-CPU map value). */
struct fraclat_hists {
	struct hist stage[NR_STAGES];
};

#endif /* __FRACLAT_H */
