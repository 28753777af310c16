// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * DRM accel driver for the FRAC-1 AI inference accelerator: the DRM device,
 * its ioctls and per-file contexts.
 */

#include <linux/dma-resv.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_print.h>

#include <frac_accel.h>

#include "frac_drv.h"

unsigned int frac_dbg_mask;
module_param_named(dbg_mask, frac_dbg_mask, uint, 0644);
MODULE_PARM_DESC(dbg_mask, "Debug categories: 1 REG, 2 IRQ, 4 JOB, 8 BO, 16 RESET");

u64 frac_device_clock(struct frac_device *fdev)
{
	/* Reading CLOCK_LO latches CLOCK_HI: a pair under latch_lock. */
	return frac_rd64(fdev, FRAC_REG_CLOCK_LO);
}

/*
 * Bracket the device clock's sample with two host reads; take the midpoint.
 * The read of CLOCK_LO takes the sample (it latches CLOCK_HI), so the bracket
 * holds that read alone: bracketing CLOCK_HI's read too put the midpoint half
 * a register read after the sample. The reads run with interrupts off and
 * under latch_lock: the clock work runs preemptible, and another reader's
 * CLOCK_LO between ours and our CLOCK_HI would re-latch HI, 2^32 ns off if
 * LO wrapped in between. Of @brackets round trips the shortest gives the
 * offset: a vCPU descheduled by the host mid-read stretches one bracket, not
 * all of them (FRAC_CLOCK_BRACKETS; the interrupt handler takes one, to keep
 * its interrupts-off time short).
 */
s64 frac_clock_offset_sample(struct frac_device *fdev, int brackets, u64 *rtt)
{
	u64 best_rtt = U64_MAX;
	unsigned long flags;
	s64 offset = 0;
	int i;

	for (i = 0; i < brackets; i++) {
		u64 t0, t1, dev_ns;
		u32 lo;

		raw_spin_lock_irqsave(&fdev->latch_lock, flags);
		t0 = ktime_get_ns();
		lo = frac_rd(fdev, FRAC_REG_CLOCK_LO);
		t1 = ktime_get_ns();
		dev_ns = (u64)frac_rd(fdev, FRAC_REG_CLOCK_HI) << 32 | lo;
		raw_spin_unlock_irqrestore(&fdev->latch_lock, flags);
		if (t1 - t0 < best_rtt) {
			best_rtt = t1 - t0;
			offset = (s64)(t0 + (t1 - t0) / 2 - dev_ns);
		}
	}
	if (rtt)
		*rtt = best_rtt;
	return offset;
}

/*
 * A full refresh of the clock offset (probe, after a reset, the clock work):
 * FRAC_CLOCK_BRACKETS brackets, and their shortest kept as the yardstick of
 * the interrupt handler's one-bracket refreshes (frac_queue.c).
 */
void frac_clock_offset_refresh(struct frac_device *fdev)
{
	u64 rtt;

	WRITE_ONCE(fdev->clock_offset, frac_clock_offset_sample(fdev, FRAC_CLOCK_BRACKETS, &rtt));
	WRITE_ONCE(fdev->clock_rtt_ref, rtt);
	WRITE_ONCE(fdev->clock_sampled, jiffies);
}

void frac_clock_work(struct work_struct *work)
{
	struct frac_device *fdev = container_of(to_delayed_work(work), struct frac_device,
						clock_work);
	int idx;

	if (!drm_dev_enter(&fdev->drm, &idx))
		return;
	frac_clock_offset_refresh(fdev);
	drm_dev_exit(idx);
	schedule_delayed_work(&fdev->clock_work, HZ);
}

/* Hardware feature bits that are DRM_FRAC_FEAT_* bits too (the values match). */
#define FRAC_UAPI_FEATURES	(DRM_FRAC_FEAT_GEMM_FP32 | DRM_FRAC_FEAT_GEMM_INT8 |	\
				 DRM_FRAC_FEAT_CRC32C | DRM_FRAC_FEAT_DEVMEM |		\
				 DRM_FRAC_FEAT_FAULT_INJ | DRM_FRAC_FEAT_TIMESTAMP)
static_assert(DRM_FRAC_FEAT_GEMM_FP32 == FRAC_FEAT_GEMM_FP32 &&
	      DRM_FRAC_FEAT_GEMM_INT8 == FRAC_FEAT_GEMM_INT8 &&
	      DRM_FRAC_FEAT_CRC32C == FRAC_FEAT_CRC32C &&
	      DRM_FRAC_FEAT_DEVMEM == FRAC_FEAT_DEVMEM &&
	      DRM_FRAC_FEAT_FAULT_INJ == FRAC_FEAT_FAULT_INJ &&
	      DRM_FRAC_FEAT_TIMESTAMP == FRAC_FEAT_TIMESTAMP);

static int frac_get_param_ioctl(struct drm_device *dev, void *data,
				struct drm_file *file)
{
	struct frac_device *fdev = to_frac_device(dev);
	struct drm_frac_get_param *args = data;
	int idx, ret = 0;

	if (args->pad)
		return -EINVAL;
	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;

	switch (args->param) {
	case DRM_FRAC_PARAM_DEVICE_ID:
		args->value = (u32)fdev->pdev->vendor << 16 | fdev->pdev->device;
		break;
	case DRM_FRAC_PARAM_HW_VERSION:
		args->value = fdev->hw_version;
		break;
	case DRM_FRAC_PARAM_NUM_QUEUES:
		args->value = fdev->num_queues;
		break;
	case DRM_FRAC_PARAM_DEVMEM_SIZE:
		args->value = fdev->devmem_size;
		break;
	case DRM_FRAC_PARAM_FEATURES:
		/* Only the bits the uAPI defines: FRAC_FEAT_SGL is the driver's business. */
		args->value = fdev->features & FRAC_UAPI_FEATURES;
		break;
	case DRM_FRAC_PARAM_GEMM_MAX_DIM:
		args->value = fdev->gemm_max_dim;
		break;
	case DRM_FRAC_PARAM_MAX_CMDS:
		args->value = DRM_FRAC_MAX_CMDS;
		break;
	case DRM_FRAC_PARAM_DEVICE_CLOCK:
		args->value = frac_device_clock(fdev);
		break;
	case DRM_FRAC_PARAM_CLOCK_OFFSET:
		args->value = frac_clock_offset_sample(fdev, FRAC_CLOCK_BRACKETS, NULL);
		break;
	default:
		ret = -EINVAL;
	}

	drm_dev_exit(idx);
	return ret;
}

static void frac_file_release(struct kref *ref)
{
	struct frac_file *ff = container_of(ref, struct frac_file, ref);

	mutex_destroy(&ff->submit_lock);
	kfree_rcu(ff, rcu);
}

void frac_file_put(struct frac_file *ff)
{
	kref_put(&ff->ref, frac_file_release);
}

static int frac_open(struct drm_device *dev, struct drm_file *file)
{
	struct frac_device *fdev = to_frac_device(dev);
	struct frac_file *ff;
	int idx, ret;

	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;

	ff = kzalloc(sizeof(*ff), GFP_KERNEL);
	if (!ff) {
		ret = -ENOMEM;
		goto err_dev_exit;
	}
	kref_init(&ff->ref);
	ff->fdev = fdev;
	mutex_init(&ff->submit_lock);
	init_waitqueue_head(&ff->wq);

	/* Only the id is kept: nothing looks a file up by it. */
	ret = xa_alloc_cyclic(&fdev->contexts, &ff->id, NULL, xa_limit_32b,
			      &fdev->context_next, GFP_KERNEL);
	if (ret < 0)
		goto err_free;

	ret = frac_file_jobs_init(ff);
	if (ret)
		goto err_xa_erase;

	file->driver_priv = ff;
	frac_dbg(fdev, JOB, "context %u opened by %d\n", ff->id, task_pid_nr(current));
	drm_dev_exit(idx);
	return 0;

err_xa_erase:
	xa_erase(&fdev->contexts, ff->id);
err_free:
	kfree(ff);
err_dev_exit:
	drm_dev_exit(idx);
	return ret;
}

static void frac_postclose(struct drm_device *dev, struct drm_file *file)
{
	struct frac_device *fdev = to_frac_device(dev);
	struct frac_file *ff = file->driver_priv;

	frac_file_jobs_fini(ff);
	xa_erase(&fdev->contexts, ff->id);
	frac_dbg(fdev, JOB, "context %u closed\n", ff->id);
	frac_file_put(ff);
}

/*
 * Per-region memory of the file's BOs, in the keys of drm-usage-stats.rst:
 * "memory" (the region name it reserves for system memory: shmem pages) and
 * "devmem" (BAR2). A BO is shared when another handle or a dma-buf refers
 * to it (drm_gem_object_is_shared_for_memory_stats()); it is active while a
 * job that uses it has not ended (an unsignalled fence in its reservation
 * object), as drm_show_memory_stats() counts them.
 */
static void frac_show_memory(struct drm_printer *p, struct drm_file *file)
{
	struct drm_memory_stats stats[2] = { };
	static const char * const region[2] = { "memory", "devmem" };
	struct drm_gem_object *obj;
	int id, r;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		struct drm_memory_stats *st = &stats[frac_bo_is_devmem(obj)];

		if (drm_gem_object_is_shared_for_memory_stats(obj))
			st->shared += obj->size;
		else
			st->private += obj->size;
		if (obj->funcs->status && obj->funcs->status(obj) & DRM_GEM_OBJECT_RESIDENT)
			st->resident += obj->size;
		if (!dma_resv_test_signaled(obj->resv, dma_resv_usage_rw(true)))
			st->active += obj->size;
	}
	spin_unlock(&file->table_lock);

	for (r = 0; r < 2; r++)
		drm_print_memory_stats(p, &stats[r], DRM_GEM_OBJECT_RESIDENT, region[r]);
}

static void frac_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct frac_device *fdev = to_frac_device(file->minor->dev);
	struct frac_file *ff = file->driver_priv;
	u32 i;

	for (i = 0; i < fdev->num_queues; i++)
		drm_printf(p, "drm-engine-queue%u:\t%llu ns\n", i,
			   atomic64_read(&ff->engine_ns[i]));
	for (i = 0; i < fdev->num_queues; i++)
		drm_printf(p, "drm-engine-capacity-queue%u:\t1\n", i);
	drm_printf(p, "drm-frac-context:\t%u\n", ff->id);
	drm_printf(p, "drm-frac-jobs-completed:\t%llu\n", atomic64_read(&ff->jobs_done));
	drm_printf(p, "drm-frac-jobs-failed:\t%llu\n", atomic64_read(&ff->jobs_failed));
	frac_show_memory(p, file);
}

static const struct drm_ioctl_desc frac_ioctls[] = {
	DRM_IOCTL_DEF_DRV(FRAC_GET_PARAM, frac_get_param_ioctl, 0),
	DRM_IOCTL_DEF_DRV(FRAC_BO_CREATE, frac_bo_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(FRAC_BO_INFO, frac_bo_info_ioctl, 0),
	DRM_IOCTL_DEF_DRV(FRAC_SUBMIT, frac_submit_ioctl, 0),
	DRM_IOCTL_DEF_DRV(FRAC_WAIT, frac_wait_ioctl, 0),
	DRM_IOCTL_DEF_DRV(FRAC_SUBMIT_BATCH, frac_submit_batch_ioctl, 0),
};

static const struct file_operations frac_fops = {
	/* DRM_ACCEL_FOPS, but poll() waits for jobs of the file, not DRM events */
	.owner = THIS_MODULE,
	.open = accel_open,
	.release = drm_release,
	.unlocked_ioctl = drm_ioctl,
	.compat_ioctl = drm_compat_ioctl,
	.poll = frac_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = drm_gem_mmap,
	.fop_flags = FOP_UNSIGNED_OFFSET,
	.show_fdinfo = drm_show_fdinfo,
};

const struct drm_driver frac_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL | DRIVER_SYNCOBJ,
	.open = frac_open,
	.postclose = frac_postclose,
	.show_fdinfo = frac_show_fdinfo,
	.gem_create_object = frac_gem_create_object,
	.gem_prime_import = frac_gem_prime_import,
	.gem_prime_import_sg_table = frac_gem_prime_import_sg_table,
	.ioctls = frac_ioctls,
	.num_ioctls = ARRAY_SIZE(frac_ioctls),
	.fops = &frac_fops,
	.name = DRIVER_NAME,
	.desc = DRIVER_DESC,
	.date = "20261130",
	.major = 1,
	.minor = 0,
};

MODULE_DESCRIPTION(DRIVER_DESC);
MODULE_AUTHOR("The frac authors");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
