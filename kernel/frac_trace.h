/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The frac authors
 *
 * Tracepoints on the submission, DMA and interrupt paths. Every job event
 * carries the same id: device (accel minor), queue, context (per open file)
 * and job (per context, the id DRM_IOCTL_FRAC_SUBMIT returns); events from
 * the moment the job reaches the ring on also carry the queue's hardware
 * sequence number. Arguments are scalars only, so BPF programs can read them
 * from raw tracepoints without BTF. Device timestamps are converted to the
 * host's CLOCK_MONOTONIC (ktime_get_ns) before they are recorded, each job's
 * within its run and interrupt times (frac_job_clock_offset()).
 */
#ifdef FRAC_NO_TRACE
/*
 * Built with -DFRAC_NO_TRACE (make bench does, to measure what the disabled
 * tracepoints cost): no tracepoint at all.
 */
#ifndef _FRAC_TRACE_NONE_H_
#define _FRAC_TRACE_NONE_H_
#define FRAC_TRACE_RESET_QUEUE		0
#define FRAC_TRACE_RESET_DEVICE		1
#define FRAC_TRACE_RESET_PCI		2
/* Arguments stay evaluated-looking, so nothing computed for them goes unused. */
static inline void frac_trace_none(int unused, ...) { }
#define trace_frac_job_submit(...)	do { if (0) frac_trace_none(0, __VA_ARGS__); } while (0)
#define trace_frac_job_run(...)	do { if (0) frac_trace_none(0, __VA_ARGS__); } while (0)
#define trace_frac_job_doorbell(...)	do { if (0) frac_trace_none(0, __VA_ARGS__); } while (0)
#define trace_frac_irq(...)	do { if (0) frac_trace_none(0, __VA_ARGS__); } while (0)
#define trace_frac_job_complete(...)	do { if (0) frac_trace_none(0, __VA_ARGS__); } while (0)
#define trace_frac_fence_signal(...)	do { if (0) frac_trace_none(0, __VA_ARGS__); } while (0)
#define trace_frac_job_done(...)	do { if (0) frac_trace_none(0, __VA_ARGS__); } while (0)
#define trace_frac_job_timeout(...)	do { if (0) frac_trace_none(0, __VA_ARGS__); } while (0)
#define trace_frac_reset(...)	do { if (0) frac_trace_none(0, __VA_ARGS__); } while (0)
#define trace_frac_device_error(...)	do { if (0) frac_trace_none(0, __VA_ARGS__); } while (0)
#define trace_frac_dma_map(...)	do { if (0) frac_trace_none(0, __VA_ARGS__); } while (0)
#define trace_frac_dma_unmap(...)	do { if (0) frac_trace_none(0, __VA_ARGS__); } while (0)
#define trace_frac_job_complete_enabled()	false
#define trace_frac_job_done_enabled()		false
#define trace_frac_dma_map_enabled()		false
#define trace_frac_dma_unmap_enabled()		false
#endif
#elif !defined(_FRAC_TRACE_H_) || defined(TRACE_HEADER_MULTI_READ)
#define _FRAC_TRACE_H_

#include <linux/tracepoint.h>
#include <linux/types.h>

#include <frac_hw.h>

#undef TRACE_SYSTEM
#define TRACE_SYSTEM frac
#define TRACE_INCLUDE_FILE frac_trace

#define frac_trace_op_name(op)				\
	__print_symbolic(op,				\
			 { 0, "nop" },			\
			 { 1, "copy" },			\
			 { 2, "fill" },			\
			 { 3, "crc32c" },		\
			 { 4, "gemm" },			\
			 { 5, "timestamp" })

#define frac_trace_reset_name(kind)			\
	__print_symbolic(kind,				\
			 { 0, "queue" },		\
			 { 1, "device" },		\
			 { 2, "pci" })

#define frac_trace_dir_name(dir)			\
	__print_symbolic(dir,				\
			 { 0, "bidirectional" },	\
			 { 1, "to_device" },		\
			 { 2, "from_device" })

/* Reset kinds */
#define FRAC_TRACE_RESET_QUEUE		0
#define FRAC_TRACE_RESET_DEVICE		1
#define FRAC_TRACE_RESET_PCI		2

TRACE_EVENT(frac_job_submit,
	TP_PROTO(u32 dev, u32 queue, u32 ctx, u32 job, u32 ncmds, u32 op,
		 u32 prio, u64 bytes),
	TP_ARGS(dev, queue, ctx, job, ncmds, op, prio, bytes),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, queue)
		__field(u32, ctx)
		__field(u32, job)
		__field(u32, ncmds)
		__field(u32, op)
		__field(u32, prio)
		__field(u64, bytes)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->queue = queue;
		__entry->ctx = ctx;
		__entry->job = job;
		__entry->ncmds = ncmds;
		__entry->op = op;
		__entry->prio = prio;
		__entry->bytes = bytes;
	),
	TP_printk("dev=%u queue=%u ctx=%u job=%u ncmds=%u op=%s prio=%u bytes=%llu",
		  __entry->dev, __entry->queue, __entry->ctx, __entry->job,
		  __entry->ncmds, frac_trace_op_name(__entry->op), __entry->prio,
		  __entry->bytes)
);

DECLARE_EVENT_CLASS(frac_job_ring,
	TP_PROTO(u32 dev, u32 queue, u32 ctx, u32 job, u64 seqno, u32 ncmds,
		 u32 sq_tail),
	TP_ARGS(dev, queue, ctx, job, seqno, ncmds, sq_tail),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, queue)
		__field(u32, ctx)
		__field(u32, job)
		__field(u64, seqno)
		__field(u32, ncmds)
		__field(u32, sq_tail)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->queue = queue;
		__entry->ctx = ctx;
		__entry->job = job;
		__entry->seqno = seqno;
		__entry->ncmds = ncmds;
		__entry->sq_tail = sq_tail;
	),
	TP_printk("dev=%u queue=%u ctx=%u job=%u seqno=%llu ncmds=%u sq_tail=%u",
		  __entry->dev, __entry->queue, __entry->ctx, __entry->job,
		  __entry->seqno, __entry->ncmds, __entry->sq_tail)
);

/* The scheduler hands the job to the driver (run_job). */
DEFINE_EVENT(frac_job_ring, frac_job_run,
	TP_PROTO(u32 dev, u32 queue, u32 ctx, u32 job, u64 seqno, u32 ncmds,
		 u32 sq_tail),
	TP_ARGS(dev, queue, ctx, job, seqno, ncmds, sq_tail)
);

/* Descriptors written, SQ doorbell rung with the new tail. */
DEFINE_EVENT(frac_job_ring, frac_job_doorbell,
	TP_PROTO(u32 dev, u32 queue, u32 ctx, u32 job, u64 seqno, u32 ncmds,
		 u32 sq_tail),
	TP_ARGS(dev, queue, ctx, job, seqno, ncmds, sq_tail)
);

TRACE_EVENT(frac_irq,
	TP_PROTO(u32 dev, u32 vector, u32 queue),
	TP_ARGS(dev, vector, queue),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, vector)
		__field(u32, queue)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->vector = vector;
		__entry->queue = queue;
	),
	TP_printk("dev=%u vector=%u queue=%d", __entry->dev, __entry->vector,
		  (int)__entry->queue)
);

/*
 * The completion record of the job's last command was processed. irq_ns: when
 * the interrupt handler found that record (CLOCK_MONOTONIC, at its entry or,
 * for a record that arrived while it ran, at a later look at the ring); 0 when
 * no interrupt ended the job (the timeout's lost-interrupt scan, a reset, an
 * FLR, removal).
 */
TRACE_EVENT(frac_job_complete,
	TP_PROTO(u32 dev, u32 queue, u32 ctx, u32 job, u64 seqno, s32 status,
		 u64 dev_start_ns, u64 dev_end_ns, u64 result, u64 irq_ns),
	TP_ARGS(dev, queue, ctx, job, seqno, status, dev_start_ns, dev_end_ns, result,
		irq_ns),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, queue)
		__field(u32, ctx)
		__field(u32, job)
		__field(u64, seqno)
		__field(s32, status)
		__field(u64, dev_start_ns)
		__field(u64, dev_end_ns)
		__field(u64, result)
		__field(u64, irq_ns)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->queue = queue;
		__entry->ctx = ctx;
		__entry->job = job;
		__entry->seqno = seqno;
		__entry->status = status;
		__entry->dev_start_ns = dev_start_ns;
		__entry->dev_end_ns = dev_end_ns;
		__entry->result = result;
		__entry->irq_ns = irq_ns;
	),
	TP_printk("dev=%u queue=%u ctx=%u job=%u seqno=%llu status=%d start=%llu end=%llu exec_ns=%llu result=%#llx irq=%llu",
		  __entry->dev, __entry->queue, __entry->ctx, __entry->job,
		  __entry->seqno, __entry->status, __entry->dev_start_ns,
		  __entry->dev_end_ns, __entry->dev_end_ns - __entry->dev_start_ns,
		  __entry->result, __entry->irq_ns)
);

TRACE_EVENT(frac_fence_signal,
	TP_PROTO(u32 dev, u32 queue, u32 ctx, u32 job, u64 seqno, s32 error),
	TP_ARGS(dev, queue, ctx, job, seqno, error),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, queue)
		__field(u32, ctx)
		__field(u32, job)
		__field(u64, seqno)
		__field(s32, error)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->queue = queue;
		__entry->ctx = ctx;
		__entry->job = job;
		__entry->seqno = seqno;
		__entry->error = error;
	),
	TP_printk("dev=%u queue=%u ctx=%u job=%u seqno=%llu error=%d",
		  __entry->dev, __entry->queue, __entry->ctx, __entry->job,
		  __entry->seqno, __entry->error)
);

/*
 * One event per job with all its stages, emitted just before
 * frac_fence_signal (the event's own time is the signal's): the one event a
 * latency tool needs, one BPF program run per job. The driver stamps submit,
 * run and the interrupt into the job only while this event is enabled (its
 * static key, so the disabled cost is a patched-out branch); a job submitted
 * before it was enabled has submit_ns 0. The per-stage events above stay for
 * trace-cmd and perf users. @ts is the driver's frac_job_stamps
 * (include/frac_hw.h), read by raw_tp programs by that layout.
 */
TRACE_EVENT(frac_job_done,
	TP_PROTO(u32 dev, u32 queue, u32 ctx, u32 job, u64 seqno, s32 status,
		 const struct frac_job_stamps *ts),
	TP_ARGS(dev, queue, ctx, job, seqno, status, ts),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, queue)
		__field(u32, ctx)
		__field(u32, job)
		__field(u64, seqno)
		__field(s32, status)
		__field(u32, pid)
		__field(u32, op)
		__field(u32, ncmds)
		__field(u32, prio)
		__field(u64, bytes)
		__field(u64, submit_ns)
		__field(u64, run_ns)
		__field(u64, dev_start_ns)
		__field(u64, dev_end_ns)
		__field(u64, irq_ns)
		__array(char, comm, 16)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->queue = queue;
		__entry->ctx = ctx;
		__entry->job = job;
		__entry->seqno = seqno;
		__entry->status = status;
		__entry->pid = ts->pid;
		__entry->op = ts->op;
		__entry->ncmds = ts->ncmds;
		__entry->prio = ts->prio;
		__entry->bytes = ts->bytes;
		__entry->submit_ns = ts->submit_ns;
		__entry->run_ns = ts->run_ns;
		__entry->dev_start_ns = ts->dev_start_ns;
		__entry->dev_end_ns = ts->dev_end_ns;
		__entry->irq_ns = ts->irq_ns;
		memcpy(__entry->comm, ts->comm, sizeof(__entry->comm));
	),
	TP_printk("dev=%u queue=%u ctx=%u job=%u seqno=%llu status=%d pid=%u comm=%.16s op=%s ncmds=%u prio=%u bytes=%llu submit=%llu run=%llu start=%llu end=%llu irq=%llu",
		  __entry->dev, __entry->queue, __entry->ctx, __entry->job,
		  __entry->seqno, __entry->status, __entry->pid, __entry->comm,
		  frac_trace_op_name(__entry->op), __entry->ncmds, __entry->prio,
		  __entry->bytes, __entry->submit_ns, __entry->run_ns,
		  __entry->dev_start_ns, __entry->dev_end_ns, __entry->irq_ns)
);

TRACE_EVENT(frac_job_timeout,
	TP_PROTO(u32 dev, u32 queue, u32 ctx, u32 job, u64 seqno, bool lost_irq),
	TP_ARGS(dev, queue, ctx, job, seqno, lost_irq),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, queue)
		__field(u32, ctx)
		__field(u32, job)
		__field(u64, seqno)
		__field(bool, lost_irq)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->queue = queue;
		__entry->ctx = ctx;
		__entry->job = job;
		__entry->seqno = seqno;
		__entry->lost_irq = lost_irq;
	),
	TP_printk("dev=%u queue=%u ctx=%u job=%u seqno=%llu %s",
		  __entry->dev, __entry->queue, __entry->ctx, __entry->job,
		  __entry->seqno, __entry->lost_irq ? "lost_irq" : "hung")
);

TRACE_EVENT(frac_reset,
	TP_PROTO(u32 dev, u32 kind, u32 queue, s32 err),
	TP_ARGS(dev, kind, queue, err),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, kind)
		__field(u32, queue)
		__field(s32, err)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->kind = kind;
		__entry->queue = queue;
		__entry->err = err;
	),
	TP_printk("dev=%u kind=%s queue=%d err=%d", __entry->dev,
		  frac_trace_reset_name(__entry->kind), (int)__entry->queue,
		  __entry->err)
);

TRACE_EVENT(frac_device_error,
	TP_PROTO(u32 dev, u32 err, u32 queue, u64 addr, u32 status),
	TP_ARGS(dev, err, queue, addr, status),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u32, err)
		__field(u32, queue)
		__field(u64, addr)
		__field(u32, status)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->err = err;
		__entry->queue = queue;
		__entry->addr = addr;
		__entry->status = status;
	),
	TP_printk("dev=%u err=%s queue=%u addr=%#llx status=%#x", __entry->dev,
		  __print_flags(__entry->err, "|",
				{ 1, "FATAL" }, { 2, "DMA_FAULT" }, { 4, "BAD_DESC" },
				{ 8, "CQ_OVERFLOW" }, { 16, "BAD_DOORBELL" }),
		  __entry->queue, __entry->addr, __entry->status)
);

DECLARE_EVENT_CLASS(frac_dma,
	TP_PROTO(u32 dev, u64 bytes, u32 nsegs, u32 dir, u64 duration_ns),
	TP_ARGS(dev, bytes, nsegs, dir, duration_ns),
	TP_STRUCT__entry(
		__field(u32, dev)
		__field(u64, bytes)
		__field(u32, nsegs)
		__field(u32, dir)
		__field(u64, duration_ns)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->bytes = bytes;
		__entry->nsegs = nsegs;
		__entry->dir = dir;
		__entry->duration_ns = duration_ns;
	),
	TP_printk("dev=%u bytes=%llu nsegs=%u dir=%s duration_ns=%llu", __entry->dev,
		  __entry->bytes, __entry->nsegs, frac_trace_dir_name(__entry->dir),
		  __entry->duration_ns)
);

/* A host BO's pages pinned and mapped for DMA; duration of the mapping. */
DEFINE_EVENT(frac_dma, frac_dma_map,
	TP_PROTO(u32 dev, u64 bytes, u32 nsegs, u32 dir, u64 duration_ns),
	TP_ARGS(dev, bytes, nsegs, dir, duration_ns)
);

/* A host BO's pages unmapped and released. */
DEFINE_EVENT(frac_dma, frac_dma_unmap,
	TP_PROTO(u32 dev, u64 bytes, u32 nsegs, u32 dir, u64 duration_ns),
	TP_ARGS(dev, bytes, nsegs, dir, duration_ns)
);

#endif /* _FRAC_TRACE_H_ */

#ifndef FRAC_NO_TRACE
/* This part must be outside protection */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#include <trace/define_trace.h>
#endif
