// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * Jobs: validation of command lists, scheduling through drm_sched, descriptor
 * building, fences, waits and the job timeout.
 */

#include <linux/dma-resv.h>
#include <linux/overflow.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>

#include "frac_drv.h"
#include "frac_job.h"
#include "frac_trace.h"

static unsigned int frac_job_timeout_ms = 5000;
module_param_named(job_timeout_ms, frac_job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms, "Job timeout before its queue is reset (ms)");

/* ---- Hardware fences ---------------------------------------------------- */

struct frac_fence {
	struct dma_fence base;
	struct frac_queue *q;
};

static const char *frac_fence_driver_name(struct dma_fence *fence)
{
	return DRIVER_NAME;
}

static const char *frac_fence_timeline_name(struct dma_fence *fence)
{
	struct frac_fence *f = container_of(fence, struct frac_fence, base);

	return f->q->sched.name;
}

static const struct dma_fence_ops frac_fence_ops = {
	.get_driver_name = frac_fence_driver_name,
	.get_timeline_name = frac_fence_timeline_name,
};

/* ---- Job lifetime ------------------------------------------------------- */

static void frac_job_release(struct kref *ref)
{
	struct frac_job *job = container_of(ref, struct frac_job, ref);

	if (job->hw_fence && job->hw_fence->ops)
		dma_fence_put(job->hw_fence);
	else
		kfree(job->hw_fence);	/* allocated, never initialised */
	dma_fence_put(job->finished);
	frac_file_put(job->ff);
	kfree(job);
}

void frac_job_put(struct frac_job *job)
{
	kref_put(&job->ref, frac_job_release);
}

static void frac_job_put_bos(struct frac_job *job)
{
	u32 i;

	for (i = 0; i < job->nbos; i++)
		drm_gem_object_put(job->bos[i]);
	kfree(job->bos);
	job->bos = NULL;
	job->nbos = 0;
}

/*
 * Record the job's outcome and signal its hardware fence. Called with the
 * queue's cq_lock held, from the IRQ or a reset; the job may be freed as soon
 * as the fence signals, so nothing touches it after.
 */
void frac_job_complete(struct frac_job *job, int status, u64 result,
		       u64 t_start, u64 t_end)
{
	struct frac_file *ff = job->ff;
	struct frac_queue *q = job->q;
	struct frac_device *fdev = q->fdev;
	u32 ctx = ff->id, id = job->id;
	u64 seqno = job->seqno;

	job->status = status;
	job->result = result;
	job->t_start = t_start;
	job->t_end = t_end;
	if (status) {
		atomic64_inc(&q->jobs_failed);
		dma_fence_set_error(job->hw_fence, status);
	} else {
		atomic64_inc(&q->jobs_completed);
		atomic64_inc(&ff->jobs_done);
	}
	if (t_end > t_start)
		atomic64_add(t_end - t_start, &ff->engine_ns[q->id]);
	trace_frac_job_complete(fdev->minor, q->id, ctx, id, seqno, status,
				frac_dev_to_host_ns(fdev, t_start),
				frac_dev_to_host_ns(fdev, t_end), result);
	/*
	 * Before the signal, as dma_fence's own tracepoint: once signalled, a
	 * waiter on another CPU may run, and submit, before an event logged here
	 * afterwards.
	 */
	trace_frac_fence_signal(fdev->minor, q->id, ctx, id, seqno, status);
	dma_fence_signal(job->hw_fence);
	/* The job may be gone now. */
	wake_up_all(&ff->wq);
}

/* ---- Descriptors -------------------------------------------------------- */

/*
 * Point a descriptor operand at @op. Device BOs are offsets in device memory.
 * A host range inside one DMA segment is a plain address; otherwise the slot's
 * SG area gets the partial first segment and a chain to the rest of the BO's
 * prebuilt list, so no SG list is built per job.
 */
static u64 frac_operand_addr(struct frac_queue *q, u32 slot, u32 opnd,
			     const struct frac_operand *op, u8 *flags,
			     u8 devmem_flag, u8 sgl_flag)
{
	struct frac_bo *bo;
	u64 pos = 0, skip;
	u32 i;

	if (!op->bo)
		return 0;
	bo = to_frac_bo(op->bo);
	if (bo->flags & DRM_FRAC_BO_DEVMEM) {
		*flags |= devmem_flag;
		return bo->node.start + op->offset;
	}
	for (i = 0; i < bo->nsegs; i++) {
		u32 seglen = le32_to_cpu(bo->sgl[i].len);

		if (op->offset < pos + seglen)
			break;
		pos += seglen;
	}
	if (WARN_ON_ONCE(i == bo->nsegs))
		return 0;
	skip = op->offset - pos;
	if (skip + op->len <= le32_to_cpu(bo->sgl[i].len))
		return le64_to_cpu(bo->sgl[i].addr) + skip;

	{
		u32 idx = slot * FRAC_SLOT_SGES + opnd * 2;
		struct frac_sge *sge = &q->sgl[idx];

		sge[0].addr = cpu_to_le64(le64_to_cpu(bo->sgl[i].addr) + skip);
		sge[0].len = cpu_to_le32(le32_to_cpu(bo->sgl[i].len) - skip);
		sge[0].flags = 0;
		sge[1].addr = cpu_to_le64(bo->sgl_dma + (u64)(i + 1) * sizeof(*sge));
		sge[1].len = cpu_to_le32(bo->nsegs - i - 1);
		sge[1].flags = cpu_to_le32(FRAC_SGE_CHAIN);
		*flags |= sgl_flag;
		return q->sgl_dma + (u64)idx * sizeof(*sge);
	}
}

static void frac_build_desc(struct frac_queue *q, u32 slot, struct frac_job *job,
			    const struct frac_cmd *cmd, bool last)
{
	struct frac_desc *d = &q->sq[slot];
	/* One interrupt per job: for its last command. */
	u8 flags = last ? 0 : FRAC_DF_NO_IRQ;
	u64 src, dst, aux;
	int i;

	src = frac_operand_addr(q, slot, 0, &cmd->src, &flags, FRAC_DF_SRC_DEVMEM,
				FRAC_DF_SRC_SGL);
	dst = frac_operand_addr(q, slot, 1, &cmd->dst, &flags, FRAC_DF_DST_DEVMEM,
				FRAC_DF_DST_SGL);
	aux = frac_operand_addr(q, slot, 2, &cmd->aux, &flags, FRAC_DF_AUX_DEVMEM,
				FRAC_DF_AUX_SGL);

	d->opcode = cmd->args.op;
	d->flags = flags;
	d->rsvd0 = 0;
	d->rsvd1 = 0;
	d->job_id = cpu_to_le64(job->seqno);
	d->src = cpu_to_le64(src);
	d->dst = cpu_to_le64(dst);
	d->aux = cpu_to_le64(aux);
	d->len = cpu_to_le64(cmd->args.op == DRM_FRAC_OP_GEMM ? 0 : cmd->args.len);
	for (i = 0; i < 4; i++)
		d->arg[i] = cpu_to_le32(cmd->args.arg[i]);
}

/* ---- Scheduler backend -------------------------------------------------- */

static struct dma_fence *frac_job_run(struct drm_sched_job *sched_job)
{
	struct frac_job *job = to_frac_job(sched_job);
	struct frac_queue *q = job->q;
	struct frac_device *fdev = q->fdev;
	struct frac_fence *f = container_of(job->hw_fence, struct frac_fence, base);
	unsigned long flags;
	u32 i, slot = 0;
	int idx;

	if (!drm_dev_enter(&fdev->drm, &idx))
		return ERR_PTR(-ENODEV);
	if (unlikely(sched_job->s_fence->finished.error)) {
		drm_dev_exit(idx);
		return ERR_PTR(sched_job->s_fence->finished.error);
	}

	job->seqno = ++q->seqno;
	trace_frac_job_run(fdev->minor, q->id, job->ff->id, job->id, job->seqno,
			   job->ncmds, q->sq_tail);
	f->q = q;
	dma_fence_init(&f->base, &frac_fence_ops, &q->fence_lock, q->fence_context,
		       job->seqno);

	for (i = 0; i < job->ncmds; i++) {
		slot = q->sq_tail;
		frac_build_desc(q, slot, job, &job->cmds[i], i == job->ncmds - 1);
		q->sq_tail = (slot + 1) & (q->size - 1);
	}

	spin_lock_irqsave(&q->cq_lock, flags);
	q->slot_job[slot] = job;
	spin_unlock_irqrestore(&q->cq_lock, flags);

	/* writel() orders the descriptor and SG writes before the doorbell. */
	writel(q->sq_tail, fdev->regs + FRAC_DB_SQ_TAIL(q->id));
	trace_frac_job_doorbell(fdev->minor, q->id, job->ff->id, job->id, job->seqno,
				job->ncmds, q->sq_tail);
	atomic64_inc(&q->jobs_submitted);
	frac_dbg(fdev, JOB, "q%u seqno %llu: %u cmds, tail %u\n", q->id, job->seqno,
		 job->ncmds, q->sq_tail);
	drm_dev_exit(idx);

	/* The scheduler takes this reference; the job keeps its own. */
	return dma_fence_get(job->hw_fence);
}

/* Put a job the timeout handler took off the pending list back on it. */
static void frac_job_requeue(struct drm_sched_job *sched_job)
{
	struct drm_gpu_scheduler *sched = sched_job->sched;

	spin_lock(&sched->job_list_lock);
	list_add(&sched_job->list, &sched->pending_list);
	spin_unlock(&sched->job_list_lock);
}

static enum drm_gpu_sched_stat frac_job_timedout(struct drm_sched_job *sched_job)
{
	struct frac_job *job = to_frac_job(sched_job);
	struct frac_queue *q = job->q;
	struct frac_device *fdev = q->fdev;
	int idx;

	if (!drm_dev_enter(&fdev->drm, &idx))
		return DRM_GPU_SCHED_STAT_ENODEV;

	/*
	 * Back on the pending list before anything can signal it, so the
	 * scheduler frees it; our reference keeps it until we are done.
	 */
	kref_get(&job->ref);
	frac_job_requeue(sched_job);

	/*
	 * Already ended by a reset, its scheduler stopped (a PCI reset in
	 * progress or one whose recovery failed): nothing was lost, nothing to do.
	 */
	if (dma_fence_is_signaled(job->hw_fence))
		goto out;

	/* The job may have completed with its interrupt lost: look first. */
	frac_queue_process_cq(q);
	trace_frac_job_timeout(fdev->minor, q->id, job->ff->id, job->id, job->seqno,
			       dma_fence_is_signaled(job->hw_fence));
	if (dma_fence_is_signaled(job->hw_fence)) {
		atomic64_inc(&q->lost_irqs);
		frac_warn(fdev, "q%u seqno %llu: completed without interrupt\n",
			  q->id, job->seqno);
	} else {
		atomic64_inc(&q->timeouts);
		frac_warn(fdev, "q%u seqno %llu (context %u job %u) timed out, resetting queue\n",
			  q->id, job->seqno, job->ff->id, job->id);
		frac_queue_reset(q, job);
	}
out:
	frac_job_put(job);
	drm_dev_exit(idx);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

static void frac_job_free(struct drm_sched_job *sched_job)
{
	struct frac_job *job = to_frac_job(sched_job);
	struct frac_device *fdev = job->fdev;

	drm_sched_job_cleanup(sched_job);
	frac_job_put_bos(job);
	frac_job_put(job);
	if (atomic_dec_and_test(&fdev->sched_jobs))
		wake_up_all(&fdev->sched_jobs_wq);
}

static const struct drm_sched_backend_ops frac_sched_ops = {
	.run_job = frac_job_run,
	.timedout_job = frac_job_timedout,
	.free_job = frac_job_free,
};

int frac_job_sched_init(struct frac_queue *q)
{
	struct frac_device *fdev = q->fdev;
	char *name;

	name = devm_kasprintf(&fdev->pdev->dev, GFP_KERNEL, "frac-q%u", q->id);
	if (!name)
		return -ENOMEM;

	/* Credits are ring slots: one per command, so the ring never overflows. */
	return drm_sched_init(&q->sched, &frac_sched_ops, fdev->submit_wq,
			      DRM_SCHED_PRIORITY_COUNT, q->size - 1, 0,
			      msecs_to_jiffies(frac_job_timeout_ms), NULL, NULL,
			      name, fdev->drm.dev);
}

/* ---- Per-file state ----------------------------------------------------- */

static const enum drm_sched_priority frac_prio_map[FRAC_NUM_PRIO] = {
	[DRM_FRAC_PRIO_LOW] = DRM_SCHED_PRIORITY_LOW,
	[DRM_FRAC_PRIO_NORMAL] = DRM_SCHED_PRIORITY_NORMAL,
	[DRM_FRAC_PRIO_HIGH] = DRM_SCHED_PRIORITY_HIGH,
};

int frac_file_jobs_init(struct frac_file *ff)
{
	struct frac_device *fdev = ff->fdev;
	u32 i, p;
	int ret;

	xa_init_flags(&ff->jobs, XA_FLAGS_ALLOC1);
	for (i = 0; i < fdev->num_queues; i++) {
		struct drm_gpu_scheduler *sched = &fdev->queues[i].sched;

		for (p = 0; p < FRAC_NUM_PRIO; p++) {
			ret = drm_sched_entity_init(&ff->entity[i][p], frac_prio_map[p],
						    &sched, 1, NULL);
			if (ret)
				goto err_fini;
		}
	}
	return 0;

err_fini:
	while (p--)
		drm_sched_entity_destroy(&ff->entity[i][p]);
	while (i--)
		for (p = 0; p < FRAC_NUM_PRIO; p++)
			drm_sched_entity_destroy(&ff->entity[i][p]);
	return ret;
}

void frac_file_jobs_fini(struct frac_file *ff)
{
	struct frac_device *fdev = ff->fdev;
	struct frac_job *job;
	unsigned long id;
	u32 i, p;

	for (i = 0; i < fdev->num_queues; i++)
		for (p = 0; p < FRAC_NUM_PRIO; p++)
			drm_sched_entity_destroy(&ff->entity[i][p]);
	xa_for_each(&ff->jobs, id, job) {
		xa_erase(&ff->jobs, id);
		frac_job_put(job);
	}
	xa_destroy(&ff->jobs);
}

/* ---- SUBMIT ------------------------------------------------------------- */

/* Bytes of each operand a command touches, from its validated arguments. */
static int frac_cmd_sizes(struct frac_device *fdev, const struct drm_frac_cmd *c,
			  u64 *src, u64 *dst, u64 *aux)
{
	u64 m = c->arg[0], n = c->arg[1], k = c->arg[2];
	u64 esz;

	*src = *dst = *aux = 0;
	switch (c->op) {
	case DRM_FRAC_OP_NOP:
		if (c->len || c->arg[0] || c->arg[1] || c->arg[2] || c->arg[3])
			return -EINVAL;
		return 0;
	case DRM_FRAC_OP_COPY:
		if (c->arg[0] || c->arg[1] || c->arg[2] || c->arg[3])
			return -EINVAL;
		*src = *dst = c->len;
		break;
	case DRM_FRAC_OP_FILL:
		if (c->arg[1] || c->arg[2] || c->arg[3])
			return -EINVAL;
		*dst = c->len;
		break;
	case DRM_FRAC_OP_CRC32C:
		if (c->arg[1] || c->arg[2] || c->arg[3])
			return -EINVAL;
		*src = c->len;
		break;
	case DRM_FRAC_OP_GEMM:
		if (c->len || !m || !n || !k || m > fdev->gemm_max_dim ||
		    n > fdev->gemm_max_dim || k > fdev->gemm_max_dim ||
		    c->arg[3] > DRM_FRAC_GEMM_INT8)
			return -EINVAL;
		esz = c->arg[3] == DRM_FRAC_GEMM_FP32 ? 4 : 1;
		*src = m * k * esz;
		*aux = k * n * esz;
		*dst = m * n * 4;
		return 0;
	case DRM_FRAC_OP_TIMESTAMP:
		if ((c->len != 0 && c->len != 8) || c->arg[0] || c->arg[1] ||
		    c->arg[2] || c->arg[3])
			return -EINVAL;
		*dst = c->len;
		return 0;
	default:
		return -EINVAL;
	}
	if (c->len > FRAC_MAX_XFER)
		return -EINVAL;
	return 0;
}

/* Keep @obj in the job's list of unique BOs, taking over the caller's reference. */
static void frac_add_bo(struct frac_job *job, struct drm_gem_object *obj)
{
	u32 i;

	for (i = 0; i < job->nbos; i++) {
		if (job->bos[i] == obj) {
			drm_gem_object_put(obj);
			return;
		}
	}
	job->bos[job->nbos++] = obj;
}

/* Look up one operand and check that [offset, offset + len) lies in the BO. */
static int frac_resolve_operand(struct drm_file *file, struct frac_job *job,
				struct frac_operand *op, u32 handle, u64 offset,
				u64 len)
{
	struct drm_gem_object *obj;
	u64 end;

	if (!len) {
		/* An unused operand names nothing. */
		return handle || offset ? -EINVAL : 0;
	}
	if (!handle)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, handle);
	if (!obj)
		return -ENOENT;
	if (check_add_overflow(offset, len, &end) || end > obj->size) {
		drm_gem_object_put(obj);
		return -EINVAL;
	}
	/* job->bos holds the reference for as long as the job lives. */
	op->bo = obj;
	op->offset = offset;
	op->len = len;
	frac_add_bo(job, obj);
	return 0;
}

static int frac_job_parse(struct drm_file *file, struct frac_job *job,
			  struct drm_frac_submit *args)
{
	struct frac_device *fdev = job->fdev;
	void __user *ucmds = u64_to_user_ptr(args->cmds);
	u32 i;
	int ret;

	for (i = 0; i < job->ncmds; i++) {
		struct frac_cmd *c = &job->cmds[i];
		u64 ssz, dsz, asz;

		if (copy_from_user(&c->args, ucmds + (size_t)i * args->cmd_size,
				   sizeof(c->args)))
			return -EFAULT;
		if (c->args.flags || c->args.pad)
			return -EINVAL;
		ret = frac_cmd_sizes(fdev, &c->args, &ssz, &dsz, &asz);
		if (ret)
			return ret;
		job->bytes += ssz + dsz + asz;
		ret = frac_resolve_operand(file, job, &c->src, c->args.src_handle,
					   c->args.src_offset, ssz);
		if (!ret)
			ret = frac_resolve_operand(file, job, &c->dst, c->args.dst_handle,
						   c->args.dst_offset, dsz);
		if (!ret)
			ret = frac_resolve_operand(file, job, &c->aux, c->args.aux_handle,
						   c->args.aux_offset, asz);
		if (ret)
			return ret;
	}
	return 0;
}

/* Order the job after users of its BOs, and publish its fence on them. */
static int frac_job_add_deps(struct frac_job *job, struct ww_acquire_ctx *ctx)
{
	u32 i, c;
	int ret;

	ret = drm_gem_lock_reservations(job->bos, job->nbos, ctx);
	if (ret)
		return ret;
	for (i = 0; i < job->nbos; i++) {
		struct drm_gem_object *obj = job->bos[i];
		bool write = false;

		for (c = 0; c < job->ncmds; c++)
			write |= job->cmds[c].dst.bo == obj;
		ret = dma_resv_reserve_fences(obj->resv, 1);
		if (!ret)
			ret = drm_sched_job_add_implicit_dependencies(&job->base, obj, write);
		if (ret) {
			drm_gem_unlock_reservations(job->bos, job->nbos, ctx);
			return ret;
		}
	}
	return 0;
}

static void frac_job_publish(struct frac_job *job, struct ww_acquire_ctx *ctx)
{
	u32 i, c;

	for (i = 0; i < job->nbos; i++) {
		struct drm_gem_object *obj = job->bos[i];
		bool write = false;

		for (c = 0; c < job->ncmds; c++)
			write |= job->cmds[c].dst.bo == obj;
		dma_resv_add_fence(obj->resv, job->finished,
				   write ? DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
	}
	drm_gem_unlock_reservations(job->bos, job->nbos, ctx);
}

int frac_submit_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct frac_device *fdev = to_frac_device(dev);
	struct frac_file *ff = file->driver_priv;
	struct drm_frac_submit *args = data;
	struct drm_syncobj *out_syncobj = NULL;
	struct frac_fence *hw_fence;
	struct ww_acquire_ctx ctx;
	struct frac_job *job;
	int idx, ret;

	if ((args->flags & ~DRM_FRAC_SUBMIT_FLAGS) ||
	    args->cmd_size != sizeof(struct drm_frac_cmd) ||
	    !args->cmd_count || args->cmd_count > DRM_FRAC_MAX_CMDS ||
	    args->queue >= fdev->num_queues || args->priority >= FRAC_NUM_PRIO)
		return -EINVAL;
	if (args->flags & DRM_FRAC_SUBMIT_LOCAL_QUEUE) {
		if (args->queue)
			return -EINVAL;
		/* A hint: running elsewhere by the time the job ends only costs a wakeup. */
		args->queue = frac_local_queue(fdev);
	}

	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;

	job = kzalloc(struct_size(job, cmds, args->cmd_count), GFP_KERNEL);
	if (!job) {
		ret = -ENOMEM;
		goto err_dev_exit;
	}
	kref_init(&job->ref);
	job->ncmds = args->cmd_count;
	job->fdev = fdev;
	job->ff = ff;
	kref_get(&ff->ref);
	job->q = &fdev->queues[args->queue];
	job->prio = args->priority;
	job->bos = kcalloc(args->cmd_count * 3, sizeof(*job->bos), GFP_KERNEL);
	hw_fence = kzalloc(sizeof(*hw_fence), GFP_KERNEL);
	job->hw_fence = hw_fence ? &hw_fence->base : NULL;
	if (!job->bos || !job->hw_fence) {
		ret = -ENOMEM;
		goto err_put_job;
	}

	ret = frac_job_parse(file, job, args);
	if (ret)
		goto err_put_bos;

	if (args->out_syncobj) {
		out_syncobj = drm_syncobj_find(file, args->out_syncobj);
		if (!out_syncobj) {
			ret = -ENOENT;
			goto err_put_bos;
		}
	}

	ret = drm_sched_job_init(&job->base, &ff->entity[args->queue][args->priority],
				 job->ncmds, ff);
	if (ret)
		goto err_put_syncobj;

	if (args->in_syncobj) {
		ret = drm_sched_job_add_syncobj_dependency(&job->base, file,
							   args->in_syncobj, 0);
		if (ret)
			goto err_cleanup;
	}

	xa_lock(&ff->jobs);
	ret = __xa_alloc_cyclic(&ff->jobs, &job->id, job, xa_limit_32b, &ff->job_next,
				GFP_KERNEL);
	if (ret >= 0)
		ff->jobs_unwaited++;
	xa_unlock(&ff->jobs);
	if (ret < 0)
		goto err_cleanup;

	ret = frac_job_add_deps(job, &ctx);
	if (ret)
		goto err_xa_erase;

	drm_sched_job_arm(&job->base);
	job->finished = dma_fence_get(&job->base.s_fence->finished);
	frac_job_publish(job, &ctx);
	if (out_syncobj) {
		drm_syncobj_replace_fence(out_syncobj, job->finished);
		drm_syncobj_put(out_syncobj);
	}

	/* One reference for the scheduler, one for the job table. */
	kref_get(&job->ref);
	args->job_id = job->id;
	trace_frac_job_submit(fdev->minor, job->q->id, ff->id, job->id, job->ncmds,
			      job->cmds[0].args.op, job->prio, job->bytes);
	atomic_inc(&fdev->sched_jobs);	/* until frac_job_free() */
	drm_sched_entity_push_job(&job->base);
	drm_dev_exit(idx);
	return 0;

err_xa_erase:
	xa_lock(&ff->jobs);
	__xa_erase(&ff->jobs, job->id);
	ff->jobs_unwaited--;
	xa_unlock(&ff->jobs);
err_cleanup:
	drm_sched_job_cleanup(&job->base);
err_put_syncobj:
	if (out_syncobj)
		drm_syncobj_put(out_syncobj);
err_put_bos:
	frac_job_put_bos(job);
err_put_job:
	frac_job_put(job);
err_dev_exit:
	drm_dev_exit(idx);
	return ret;
}

/* ---- WAIT and poll ------------------------------------------------------ */

int frac_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct frac_file *ff = file->driver_priv;
	struct drm_frac_wait *args = data;
	struct frac_job *job;
	long timeout, remain;
	bool released, keep;
	int ret;

	if (args->flags)
		return -EINVAL;

	xa_lock(&ff->jobs);
	job = xa_load(&ff->jobs, args->job_id);
	if (job)
		kref_get(&job->ref);
	xa_unlock(&ff->jobs);
	if (!job)
		return -EINVAL;

	if (args->timeout_ns < 0)
		timeout = MAX_SCHEDULE_TIMEOUT;
	else
		timeout = nsecs_to_jiffies(args->timeout_ns) + 1;	/* round up */

	if (!args->timeout_ns)
		remain = dma_fence_is_signaled(job->finished) ? 1 : 0;
	else
		remain = dma_fence_wait_timeout(job->finished, true, timeout);
	if (remain <= 0) {
		ret = remain ? remain : -ETIME;
		goto out;
	}

	args->status = job->finished->error;
	args->pad = 0;
	args->result = job->result;
	args->t_start = job->t_start;
	args->t_end = job->t_end;
	ret = 0;
	/*
	 * Seen ended: the id is released. The file's last unwaited id stays
	 * reserved (WAIT sees no job, SUBMIT never allocates it) until the next
	 * release: erasing it would empty the xarray, whose nodes would then be
	 * freed through RCU and allocated again for the next job, every job at
	 * queue depth 1.
	 */
	xa_lock(&ff->jobs);
	keep = ff->jobs_unwaited == 1;
	released = __xa_cmpxchg(&ff->jobs, args->job_id, job, keep ? XA_ZERO_ENTRY : NULL,
				GFP_NOWAIT) == job;
	if (released) {
		ff->jobs_unwaited--;
		if (ff->job_reserved)
			__xa_cmpxchg(&ff->jobs, ff->job_reserved, XA_ZERO_ENTRY, NULL, GFP_NOWAIT);
		ff->job_reserved = keep ? args->job_id : 0;
	}
	xa_unlock(&ff->jobs);
	if (released)
		frac_job_put(job);
out:
	frac_job_put(job);
	return ret;
}

/* POLLIN when a job of this file has ended and has not been waited for. */
__poll_t frac_poll(struct file *filp, struct poll_table_struct *wait)
{
	struct drm_file *file = filp->private_data;
	struct frac_file *ff = file->driver_priv;
	struct frac_job *job;
	unsigned long id;
	__poll_t mask = 0;

	poll_wait(filp, &ff->wq, wait);
	xa_lock(&ff->jobs);
	xa_for_each(&ff->jobs, id, job) {
		if (job->finished && dma_fence_is_signaled(job->finished)) {
			mask = EPOLLIN | EPOLLRDNORM;
			break;
		}
	}
	xa_unlock(&ff->jobs);
	return mask;
}
