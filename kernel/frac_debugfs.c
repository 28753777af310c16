// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * debugfs: queue and ring state, registers, device fault injection, resets.
 */

#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "frac_drv.h"
#include "frac_job.h"

static int frac_queues_show(struct seq_file *s, void *unused)
{
	struct frac_device *fdev = s->private;
	u32 i, slot;
	int idx;

	if (!drm_dev_enter(&fdev->drm, &idx))
		return -ENODEV;
	for (i = 0; i < fdev->num_queues; i++) {
		struct frac_queue *q = &fdev->queues[i];
		unsigned long flags;
		u32 inflight = 0;

		spin_lock_irqsave(&q->cq_lock, flags);
		for (slot = 0; slot < q->size; slot++)
			inflight += !!q->slot_job[slot];
		seq_printf(s, "queue %u: size %u sq_tail %u cq_head %u phase %u jobs_in_ring %u\n",
			   i, q->size, q->sq_tail, q->cq_head, q->phase, inflight);
		spin_unlock_irqrestore(&q->cq_lock, flags);
		seq_printf(s, "  hw: status %#x sq_head %u sq_tail %u cq_tail %u cq_head %u coal %#x jobs %u\n",
			   frac_rd(fdev, FRAC_QREG(i, FRAC_Q_STATUS)),
			   frac_rd(fdev, FRAC_QREG(i, FRAC_Q_SQ_HEAD)),
			   frac_rd(fdev, FRAC_QREG(i, FRAC_Q_SQ_TAIL)),
			   frac_rd(fdev, FRAC_QREG(i, FRAC_Q_CQ_TAIL)),
			   frac_rd(fdev, FRAC_QREG(i, FRAC_Q_CQ_HEAD)),
			   frac_rd(fdev, FRAC_QREG(i, FRAC_Q_IRQ_COAL)),
			   frac_rd(fdev, FRAC_QREG(i, FRAC_Q_JOBS)));
		/* Appended fields only: fractop reads the first six by position. */
		seq_printf(s, "  submitted %lld completed %lld failed %lld timeouts %lld lost_irqs %lld resets %lld direct %lld direct_credits %d bad_cqes %lld\n",
			   atomic64_read(&q->jobs_submitted), atomic64_read(&q->jobs_completed),
			   atomic64_read(&q->jobs_failed), atomic64_read(&q->timeouts),
			   atomic64_read(&q->lost_irqs), atomic64_read(&q->resets),
			   atomic64_read(&q->jobs_direct), atomic_read(&q->direct_credits),
			   atomic64_read(&q->bad_cqes));
		if (READ_ONCE(q->sched.pause_submit))
			seq_puts(s, "  submission stopped\n");
	}
	drm_dev_exit(idx);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(frac_queues);

static int frac_regs_show(struct seq_file *s, void *unused)
{
	static const struct { const char *name; u32 reg; } regs[] = {
		{ "ID", FRAC_REG_ID }, { "VERSION", FRAC_REG_VERSION },
		{ "CAP0", FRAC_REG_CAP0 }, { "CAP1", FRAC_REG_CAP1 },
		{ "CONTROL", FRAC_REG_CONTROL }, { "STATUS", FRAC_REG_STATUS },
		{ "DMA_BITS", FRAC_REG_DMA_BITS }, { "ERR_STATUS", FRAC_REG_ERR_STATUS },
		{ "ERR_QUEUE", FRAC_REG_ERR_QUEUE }, { "INT_STATUS", FRAC_REG_INT_STATUS },
		{ "INT_MASK", FRAC_REG_INT_MASK }, { "TEMP_MC", FRAC_REG_TEMP_MC },
		{ "POWER_MW", FRAC_REG_POWER_MW },
	};
	struct frac_device *fdev = s->private;
	int idx;
	u32 i;

	if (!drm_dev_enter(&fdev->drm, &idx))
		return -ENODEV;
	for (i = 0; i < ARRAY_SIZE(regs); i++)
		seq_printf(s, "%-12s %#010x\n", regs[i].name, frac_rd(fdev, regs[i].reg));
	seq_printf(s, "%-12s %llu\n", "CLOCK", frac_device_clock(fdev));
	drm_dev_exit(idx);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(frac_regs);

/*
 * The clock offset the tracepoints convert device times with, its last
 * sample's shortest bracket, and how often and how far the jobs' own
 * stamps moved it (frac_job_clock_offset()).
 */
static int frac_clock_show(struct seq_file *s, void *unused)
{
	struct frac_device *fdev = s->private;

	seq_printf(s, "offset_ns %lld\n", READ_ONCE(fdev->clock_offset));
	seq_printf(s, "sample_rtt_ns %llu\n", READ_ONCE(fdev->clock_rtt_ref));
	seq_printf(s, "job_moves %lld\n", atomic64_read(&fdev->clock_moves));
	seq_printf(s, "job_move_max_ns %llu\n", READ_ONCE(fdev->clock_move_max));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(frac_clock);

static const char * const frac_fault_names[FRAC_FAULT_MAX] = {
	[FRAC_FAULT_HANG] = "hang",
	[FRAC_FAULT_DROP_IRQ] = "drop-irq",
	[FRAC_FAULT_ERROR] = "error",
	[FRAC_FAULT_DMA] = "dma",
	[FRAC_FAULT_FATAL] = "fatal",
	[FRAC_FAULT_LATENCY] = "latency",
	[FRAC_FAULT_BAD_ID] = "bad-id",
	[FRAC_FAULT_BAD_HEAD] = "bad-head",
	[FRAC_FAULT_DUP] = "dup",
};

/* "<kind> [queue [arg]]", kind as in docs/hw-spec.md section 10 */
static ssize_t frac_fault_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	struct frac_device *fdev = file->private_data;
	char buf[64], name[16];
	u32 kind, q = 0, arg = 0;
	int n, idx;

	if (!(fdev->features & FRAC_FEAT_FAULT_INJ))
		return -EOPNOTSUPP;
	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	n = sscanf(buf, "%15s %u %u", name, &q, &arg);
	if (n < 1)
		return -EINVAL;
	for (kind = 1; kind < FRAC_FAULT_MAX; kind++)
		if (!strcmp(name, frac_fault_names[kind]))
			break;
	if (kind == FRAC_FAULT_MAX || q >= fdev->num_queues || arg > U16_MAX)
		return -EINVAL;
	if (!drm_dev_enter(&fdev->drm, &idx))
		return -ENODEV;
	frac_wr(fdev, FRAC_REG_FI_CTRL, FRAC_FI_CMD(kind, q, arg));
	drm_dev_exit(idx);
	return len;
}

static const struct file_operations frac_fault_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = frac_fault_write,
};

static ssize_t frac_reset_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	struct frac_device *fdev = file->private_data;
	int idx;

	if (!drm_dev_enter(&fdev->drm, &idx))
		return -ENODEV;
	frac_device_reset(fdev, -EIO);
	drm_dev_exit(idx);
	return len;
}

static const struct file_operations frac_reset_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = frac_reset_write,
};

/*
 * "<queue> <1|0>": stop, or restart, the queue's submission (drm_sched's
 * run_job and free_job, and direct SUBMITs) as a reset does while it runs.
 * For tests of what happens to jobs run_job has not yet taken. While stopped
 * run_job writes and free_job frees no job, and a job run_job has not taken
 * is not timed (a direct job on the ring still ends, and is still timed);
 * any recovery of the queue (a reset, a timeout, the direct-job watchdog)
 * restarts it. "queues" shows it as "submission stopped".
 */
static ssize_t frac_sched_pause_write(struct file *file, const char __user *ubuf,
				      size_t len, loff_t *ppos)
{
	struct frac_device *fdev = file->private_data;
	struct frac_queue *q;
	char buf[32];
	u32 qi, stop;
	int idx;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%u %u", &qi, &stop) != 2 || qi >= fdev->num_queues || stop > 1)
		return -EINVAL;
	if (!drm_dev_enter(&fdev->drm, &idx))
		return -ENODEV;
	q = &fdev->queues[qi];
	if (stop) {
		/* Not under reset_lock: it waits for free_job (frac_job_timedout()). */
		frac_queue_stop_submit(q);
	} else {
		mutex_lock(&fdev->reset_lock);
		if (!fdev->in_pci_reset)
			drm_sched_wqueue_start(&q->sched);
		mutex_unlock(&fdev->reset_lock);
	}
	drm_dev_exit(idx);
	return len;
}

static const struct file_operations frac_sched_pause_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = frac_sched_pause_write,
};

void frac_debugfs_init(struct frac_device *fdev)
{
	struct dentry *root = fdev->drm.accel->debugfs_root;

	debugfs_create_file("queues", 0444, root, fdev, &frac_queues_fops);
	debugfs_create_file("regs", 0444, root, fdev, &frac_regs_fops);
	debugfs_create_file("clock", 0444, root, fdev, &frac_clock_fops);
	debugfs_create_file("inject_fault", 0200, root, fdev, &frac_fault_fops);
	debugfs_create_file("reset", 0200, root, fdev, &frac_reset_fops);
	debugfs_create_file("sched_pause", 0200, root, fdev, &frac_sched_pause_fops);
}
