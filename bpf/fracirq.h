/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 The frac authors */
#ifndef __FRACIRQ_H
#define __FRACIRQ_H

#include "frac_hist.h"

#define FRAC_NO_QUEUE	0xffffffffU	/* frac_irq's queue for the error and legacy vectors */

/* Interrupts counted per vector (frac_irq). */
struct vec_key {
	__u32 dev;
	__u32 vector;
	__u32 queue;	/* FRAC_NO_QUEUE: the error vector, or the one legacy vector (0) */
	__u32 gen;	/* frac_gen.bpf.h */
};

enum fracirq_hist_kind {
	HIST_HANDLER,	/* handler time, per Linux irq number */
	HIST_SIGNAL,	/* interrupt -> fence signalled, per (dev, queue) */
};

struct fracirq_key {
	__u32 kind;
	__u32 dev;	/* HIST_SIGNAL */
	__u32 id;	/* irq number (HIST_HANDLER) or queue (HIST_SIGNAL) */
	__u32 gen;	/* frac_gen.bpf.h */
};

#endif /* __FRACIRQ_H */
