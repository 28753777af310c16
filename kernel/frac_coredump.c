// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * Device coredumps: the state behind a reset, for the engineer who must
 * explain it. On a job timeout, a fatal device error and a PCI reset, before
 * the reset clears anything, the device's global and queue registers, the
 * driver's view of each ring, the jobs on the rings and the raw descriptors
 * of the guilty job go to a devcoredump (/sys/class/devcoredump/devcdN/data),
 * as amdgpu, xe and msm do. The format is line-oriented text, versioned by
 * its first line; tools/frac-coredump decodes the descriptors and records.
 */

#include <linux/devcoredump.h>
#include <linux/ktime.h>
#include <linux/vmalloc.h>
#include <drm/drm_managed.h>

#include "frac_drv.h"
#include "frac_job.h"

/* Big enough for 16 queues of 255 jobs and a job of DRM_FRAC_MAX_CMDS */
#define FRAC_COREDUMP_SIZE	(256 * 1024)
/* Completion records shown from the driver's head onwards */
#define FRAC_COREDUMP_CQES	4

struct frac_dump {
	char *buf;
	size_t len;
};

static __printf(2, 3) void frac_dump_printf(struct frac_dump *d, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	d->len += vscnprintf(d->buf + d->len, FRAC_COREDUMP_SIZE - d->len, fmt, args);
	va_end(args);
}

static void frac_dump_hex(struct frac_dump *d, const char *tag, u32 idx,
			  const void *p, size_t n)
{
	frac_dump_printf(d, "%s %u %*phN\n", tag, idx, (int)n, p);
}

static void frac_dump_regs(struct frac_dump *d, struct frac_device *fdev)
{
	static const struct { const char *name; u32 reg; } regs[] = {
		{ "CONTROL", FRAC_REG_CONTROL }, { "STATUS", FRAC_REG_STATUS },
		{ "DMA_BITS", FRAC_REG_DMA_BITS }, { "ERR_STATUS", FRAC_REG_ERR_STATUS },
		{ "ERR_QUEUE", FRAC_REG_ERR_QUEUE }, { "ERR_ADDR_LO", FRAC_REG_ERR_ADDR_LO },
		{ "ERR_ADDR_HI", FRAC_REG_ERR_ADDR_HI }, { "INT_STATUS", FRAC_REG_INT_STATUS },
		{ "FI_ARMED", FRAC_REG_FI_ARMED },
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(regs); i++)
		frac_dump_printf(d, "reg %s 0x%08x\n", regs[i].name, frac_rd(fdev, regs[i].reg));
}

static void frac_dump_queue(struct frac_dump *d, struct frac_queue *q)
{
	static const struct { const char *name; u32 reg; } qregs[] = {
		{ "CTRL", FRAC_Q_CTRL }, { "STATUS", FRAC_Q_STATUS },
		{ "SQ_HEAD", FRAC_Q_SQ_HEAD }, { "SQ_TAIL", FRAC_Q_SQ_TAIL },
		{ "CQ_TAIL", FRAC_Q_CQ_TAIL }, { "CQ_HEAD", FRAC_Q_CQ_HEAD },
		{ "IRQ_COAL", FRAC_Q_IRQ_COAL }, { "JOBS", FRAC_Q_JOBS },
	};
	struct frac_device *fdev = q->fdev;
	unsigned long flags;
	u32 i;

	frac_dump_printf(d, "queue %u\n", q->id);
	for (i = 0; i < ARRAY_SIZE(qregs); i++)
		frac_dump_printf(d, "qreg %u %s 0x%08x\n", q->id, qregs[i].name,
				 frac_rd(fdev, FRAC_QREG(q->id, qregs[i].reg)));
	spin_lock_irqsave(&q->cq_lock, flags);
	frac_dump_printf(d, "ring %u size %u sq_tail %u cq_head %u phase %u seqno %llu\n",
			 q->id, q->size, q->sq_tail, q->cq_head, q->phase, q->seqno);
	for (i = 0; i < q->size; i++) {
		u32 slot = (q->cq_head + i) & (q->size - 1);
		struct frac_job *job = q->slot_job[slot];

		if (job)
			frac_dump_printf(d, "inflight %u seqno %llu ctx %u job %u slots %u-%u\n",
					 q->id, job->seqno, job->ff->id, job->id,
					 job->ring_first, slot);
	}
	for (i = 0; i < FRAC_COREDUMP_CQES; i++) {
		u32 slot = (q->cq_head + i) & (q->size - 1);

		frac_dump_hex(d, "cqe", slot, &q->cq[slot], sizeof(q->cq[slot]));
	}
	spin_unlock_irqrestore(&q->cq_lock, flags);
}

static void frac_dump_job(struct frac_dump *d, struct frac_job *job)
{
	struct frac_queue *q = job->q;
	u32 i;

	frac_dump_printf(d, "guilty %u seqno %llu ctx %u job %u cmds %u bytes %llu prio %u\n",
			 q->id, job->seqno, job->ff->id, job->id, job->ncmds, job->bytes,
			 job->prio);
	for (i = 0; i < job->ncmds; i++) {
		u32 slot = (job->ring_first + i) & (q->size - 1);

		frac_dump_hex(d, "desc", slot, &q->sq[slot], sizeof(q->sq[slot]));
	}
}

/* Hand the captured text to the devcoredump core, outside any reset. */
static void frac_coredump_work(struct work_struct *work)
{
	struct frac_device *fdev = container_of(work, struct frac_device, coredump_work);
	size_t len = READ_ONCE(fdev->coredump_len);
	char *copy = vmalloc(len);

	if (copy) {
		memcpy(copy, fdev->coredump_buf, len);
		/* The devcoredump core owns the copy now, and frees it. */
		dev_coredumpv(fdev->drm.dev, copy, len, GFP_KERNEL);
		atomic64_inc(&fdev->coredumps);
	}
	/* Pairs with the test_and_set_bit_lock() in frac_coredump(). */
	clear_bit_unlock(0, &fdev->coredump_busy);
}

static void frac_coredump_fini(struct drm_device *dev, void *arg)
{
	struct frac_device *fdev = to_frac_device(dev);

	cancel_work_sync(&fdev->coredump_work);
	vfree(fdev->coredump_buf);
}

/* Removal: the last dump reaches the devcoredump core before the device goes. */
void frac_coredump_flush(struct frac_device *fdev)
{
	flush_work(&fdev->coredump_work);
}

int frac_coredump_init(struct frac_device *fdev)
{
	INIT_WORK(&fdev->coredump_work, frac_coredump_work);
	fdev->coredump_buf = vmalloc(FRAC_COREDUMP_SIZE);
	if (!fdev->coredump_buf)
		return -ENOMEM;
	return drmm_add_action_or_reset(&fdev->drm, frac_coredump_fini, NULL);
}

/*
 * Capture the device's state for @reason, before the reset that follows. With
 * @guilty, its queue and descriptors; without, every queue. Called with
 * fdev->reset_lock held, before the reset ends any fence: nothing here may
 * allocate (reclaim may wait for those fences), so the text goes to a buffer
 * taken at probe and a work item hands it on. While one dump is on its way
 * the next is dropped, as the devcoredump core drops a second pending dump.
 */
void frac_coredump(struct frac_device *fdev, const char *reason, struct frac_job *guilty)
{
	struct frac_dump d = { .buf = fdev->coredump_buf };
	u32 i;

	lockdep_assert_held(&fdev->reset_lock);
	if (!d.buf || test_and_set_bit_lock(0, &fdev->coredump_busy))
		return;
	frac_dump_printf(&d, "FRAC-1 devcoredump 1\n");
	frac_dump_printf(&d, "reason %s\n", reason);
	frac_dump_printf(&d, "time_ns %llu\n", ktime_get_ns());
	frac_dump_printf(&d, "device %s minor %u hw %u.%u queues %u\n",
			 pci_name(fdev->pdev), fdev->minor, fdev->hw_version >> 16,
			 fdev->hw_version & 0xffff, fdev->num_queues);
	frac_dump_printf(&d, "device_clock_ns %llu\n", frac_device_clock(fdev));
	frac_dump_regs(&d, fdev);
	for (i = 0; i < fdev->num_queues; i++)
		if (!guilty || guilty->q == &fdev->queues[i])
			frac_dump_queue(&d, &fdev->queues[i]);
	if (guilty)
		frac_dump_job(&d, guilty);
	frac_dump_printf(&d, "end\n");
	WRITE_ONCE(fdev->coredump_len, d.len);
	queue_work(system_unbound_wq, &fdev->coredump_work);
}
