// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * Jobs: validation of command lists and SUBMIT, a job's references and the
 * puts of its BOs (free_job, or a direct job's end), per-file job state,
 * WAIT and poll. The ring
 * side of a job (descriptors, run_job, completion, the timeout) is
 * frac_queue.c's; recovery is frac_reset.c's.
 */

#include <linux/dma-fence-unwrap.h>
#include <linux/dma-resv.h>
#include <linux/overflow.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>

#include "frac_drv.h"
#include "frac_job.h"
#include "frac_trace.h"

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
 * A job the device is done with: put its BOs (or keep them, from a wedged
 * device) and the creation reference. In process context, without any lock
 * and outside drm_dev_enter() (frac_job_put_work(), frac_job_reap()):
 * putting an imported BO takes its exporter's reservation lock, whose holder
 * may wait for a job that only a recovery or removal ends.
 */
static void frac_job_retire(struct frac_device *fdev, struct frac_job *job)
{
	if (job->keep_bos)
		frac_job_quarantine(fdev, job);
	else
		frac_job_put_bos(job);
	frac_job_put(job);
	if (atomic_dec_and_test(&fdev->sched_jobs))
		wake_up_all(&fdev->sched_jobs_wq);
}

/*
 * The BO puts and the last reference of jobs freed during a recovery, in
 * process context without fdev->reset_lock: putting an imported BO takes its
 * exporter's reservation lock, whose holder may be waiting for a fence that
 * only the recovery ends.
 */
void frac_job_put_work(struct work_struct *work)
{
	struct frac_device *fdev = container_of(work, struct frac_device, put_work);
	struct llist_node *list = llist_del_all(&fdev->put_list);
	struct frac_job *job, *next;

	llist_for_each_entry_safe(job, next, list, put_node)
		frac_job_retire(fdev, job);
}

/*
 * A job the device never ran (run_job refused it: a wedged or removed device,
 * a failed dependency; or its entity was killed with the file) ends here, its
 * finished fence already signalled with the error: frac_job_done reports it
 * too (no run, no device times, no interrupt), so a latency tool accounts for
 * every job it saw submitted.
 */
static void frac_job_done_unrun(struct frac_job *job)
{
	int err = job->base.s_fence ? job->base.s_fence->finished.error : 0;

	trace_frac_job_done(job->fdev->minor, job->q->id, job->ff->id, job->id, 0,
			    err ?: -ECANCELED, &job->stamps);
}

/*
 * A direct job ended (frac_submit_push()): its hardware fence signalled, from
 * the interrupt, a reset or removal, so the device is done with it. Its ring
 * slots are free now, for the next direct SUBMIT; its BOs and the creation
 * reference are put in process context: by the next SUBMIT, WAIT or
 * BO_CREATE on the device, or FRAC_REAP_DELAY_MS later by reap_work
 * (frac_job_reap()). A client whose jobs go direct then costs no work item
 * per job. A fence a
 * wedged device's recovery signalled does not mean the device stopped: its
 * BOs are kept then.
 */
static void frac_job_direct_ended(struct frac_job *job)
{
	atomic_sub(job->ncmds, &job->q->direct_credits);
	job->keep_bos = READ_ONCE(job->fdev->unquiesced);
}

static void frac_job_direct_end_cb(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct frac_job *job = container_of(cb, struct frac_job, release_cb);
	struct frac_device *fdev = job->fdev;

	frac_job_direct_ended(job);
	/* The first on the list queues the work; a SUBMIT meanwhile reaps it. */
	if (llist_add(&job->put_node, &fdev->reap_list))
		queue_delayed_work(system_unbound_wq, &fdev->reap_work,
				   msecs_to_jiffies(FRAC_REAP_DELAY_MS));
}

/*
 * Retire the direct jobs that ended (frac_job_direct_end_cb()), and wait for
 * a reap another thread is in the middle of: WAIT and BO_CREATE, which
 * promise the BOs of a job that has ended back. An empty list alone does not
 * mean that: another file's SUBMIT may have taken it and not yet retired the
 * jobs on it (seen with a preemptible kernel: BO_CREATE -ENOSPC just after a
 * WAIT and a close, in 4 to 15 of 3000 rounds, while four other files
 * submitted). In process context, with no other lock held and outside
 * drm_dev_enter() (frac_job_retire()).
 */
void frac_job_reap_sync(struct frac_device *fdev)
{
	struct llist_node *list;
	struct frac_job *job, *next;

	mutex_lock(&fdev->reap_lock);
	list = llist_del_all(&fdev->reap_list);
	llist_for_each_entry_safe(job, next, list, put_node)
		frac_job_retire(fdev, job);
	mutex_unlock(&fdev->reap_lock);
}

/* The same, only if there is something to retire: SUBMIT and reap_work. */
void frac_job_reap(struct frac_device *fdev)
{
	if (!llist_empty(&fdev->reap_list))
		frac_job_reap_sync(fdev);
}

void frac_job_reap_work(struct work_struct *work)
{
	frac_job_reap(container_of(to_delayed_work(work), struct frac_device, reap_work));
}

/* drm_sched's free_job, and the timeout's for a job that ended (frac_queue.c) */
void frac_job_free(struct drm_sched_job *sched_job)
{
	struct frac_job *job = to_frac_job(sched_job);
	struct frac_device *fdev = job->fdev;

	if (trace_frac_job_done_enabled() && !job->hw_fence->ops)
		frac_job_done_unrun(job);
	drm_sched_job_cleanup(sched_job);
	/* drm_sched dropped it before its run_job: its file was closed. */
	if (unlikely(job->queued))
		frac_job_unqueue(job);
	if (unlikely(READ_ONCE(fdev->recovering)) && !READ_ONCE(fdev->unquiesced)) {
		llist_add(&job->put_node, &fdev->put_list);
		queue_work(system_unbound_wq, &fdev->put_work);
		return;
	}
	/*
	 * A device wedged because it never confirmed it stopped may still
	 * write what the job named. Its BOs are kept until the device is gone.
	 */
	job->keep_bos = READ_ONCE(fdev->unquiesced);
	frac_job_retire(fdev, job);
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
ALLOW_ERROR_INJECTION(frac_file_jobs_init, ERRNO);

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

/*
 * Look up one operand and check that [offset, offset + len) lies in the BO and
 * that its direction allows the access: a BO mapped DMA_TO_DEVICE is never
 * written by the device (@write: the command's dst), one mapped
 * DMA_FROM_DEVICE never read (behind an IOMMU the access would fault).
 */
static int frac_resolve_operand(struct drm_file *file, struct frac_job *job,
				struct frac_operand *op, u32 handle, u64 offset,
				u64 len, bool write)
{
	u32 refused = write ? DRM_FRAC_BO_TO_DEVICE : DRM_FRAC_BO_FROM_DEVICE;
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
	if (check_add_overflow(offset, len, &end) || end > obj->size ||
	    (to_frac_bo(obj)->flags & refused)) {
		drm_gem_object_put(obj);
		return -EINVAL;
	}
	/* job->bos holds the reference for as long as the job lives. */
	op->bo = obj;
	op->offset = offset;
	op->len = len;
	if (to_frac_bo(obj)->need_sync) {
		if (write)
			job->sync_out = true;
		else
			job->sync_in += len;
	}
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
					   c->args.src_offset, ssz, false);
		if (!ret)
			ret = frac_resolve_operand(file, job, &c->dst, c->args.dst_handle,
						   c->args.dst_offset, dsz, true);
		if (!ret)
			ret = frac_resolve_operand(file, job, &c->aux, c->args.aux_handle,
						   c->args.aux_offset, asz, false);
		if (ret)
			return ret;
	}
	return 0;
}

/* Does any command of @job write @obj? Writers take the BO's write slot. */
static bool frac_job_writes_bo(const struct frac_job *job,
			       const struct drm_gem_object *obj)
{
	u32 c;

	for (c = 0; c < job->ncmds; c++)
		if (job->cmds[c].dst.bo == obj)
			return true;
	return false;
}

/*
 * Make @job wait for @fence, unless it is a hardware fence of the job's own
 * queue, which a direct job publishes (frac_submit_push()): that job is on the
 * ring already, and the device runs a ring's jobs in order, so this one,
 * written after it, runs after it (as drm_sched has a job wait for a job of
 * its own scheduler only until it is written to the ring). Consumes the
 * reference to @fence.
 */
static int frac_job_add_dep(struct frac_job *job, struct dma_fence *fence)
{
	if (fence->context == job->q->fence_context) {
		dma_fence_put(fence);
		return 0;
	}
	return drm_sched_job_add_dependency(&job->base, fence);
}

/* drm_sched_job_add_resv_dependencies(), through frac_job_add_dep(). */
static int frac_job_add_resv_deps(struct frac_job *job, struct dma_resv *resv,
				  enum dma_resv_usage usage)
{
	struct dma_resv_iter cursor;
	struct dma_fence *fence;
	int ret;

	dma_resv_assert_held(resv);
	dma_resv_for_each_fence(&cursor, resv, usage, fence) {
		ret = frac_job_add_dep(job, dma_fence_get(fence));
		if (ret)
			return ret;
	}
	return 0;
}

/* drm_sched_job_add_syncobj_dependency(), through frac_job_add_dep(). */
static int frac_job_add_syncobj_dep(struct frac_job *job, struct drm_file *file, u32 handle)
{
	struct dma_fence_unwrap iter;
	struct dma_fence *fence, *f;
	int ret;

	ret = drm_syncobj_find_fence(file, handle, 0, 0, &fence);
	if (ret)
		return ret;
	dma_fence_unwrap_for_each(f, &iter, fence) {
		ret = frac_job_add_dep(job, dma_fence_get(f));
		if (ret)
			break;
	}
	dma_fence_put(fence);
	return ret;
}

/*
 * One SUBMIT, or one SUBMIT_BATCH: @count jobs for one entity, prepared in
 * full before any of them is pushed, so that the call submits all or none.
 */
struct frac_submit {
	struct drm_file *file;
	struct frac_file *ff;
	struct frac_queue *q;
	struct drm_sched_entity *entity;
	u32 count;
	/* The jobs' arguments; @queue and @job_id written once all are pushed */
	struct drm_frac_submit *args;
	struct frac_job **jobs;
	struct drm_syncobj **out_syncobjs;
	/*
	 * Every BO of the jobs, once each (a single job's own list), locked
	 * together: the fences a BO needs room for are counted in @nfences
	 * (NULL: one each).
	 */
	struct drm_gem_object **bos;
	u32 *nfences;
	u32 nbos;
	void *bos_alloc;		/* a batch's: @bos and @nfences */
	struct ww_acquire_ctx ctx;
};

static int frac_bo_ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(struct drm_gem_object * const *)a;
	uintptr_t y = (uintptr_t)*(struct drm_gem_object * const *)b;

	return x < y ? -1 : x > y;
}

/*
 * The BOs of a batch's jobs, each once (sorted, duplicates dropped), and how
 * many of the jobs name each: one fence each will go on it.
 */
static int frac_submit_collect_bos(struct frac_submit *s)
{
	struct drm_gem_object **all;
	u32 i, j, total = 0;

	if (s->count == 1) {
		s->bos = s->jobs[0]->bos;
		s->nbos = s->jobs[0]->nbos;
		return 0;
	}
	for (i = 0; i < s->count; i++)
		total += s->jobs[i]->nbos;
	if (!total)
		return 0;
	all = kvmalloc_array(total, sizeof(*all) + sizeof(*s->nfences), GFP_KERNEL);
	if (!all)
		return -ENOMEM;
	for (i = 0, total = 0; i < s->count; i++)
		for (j = 0; j < s->jobs[i]->nbos; j++)
			all[total++] = s->jobs[i]->bos[j];
	sort(all, total, sizeof(*all), frac_bo_ptr_cmp, NULL);
	s->bos_alloc = all;
	s->bos = all;
	s->nfences = (u32 *)(all + total);
	/*
	 * Drop the duplicates in place. A job names a BO once (frac_add_bo()):
	 * a run of one BO counts its jobs.
	 */
	for (i = 0; i < total; i++) {
		if (s->nbos && s->bos[s->nbos - 1] == all[i]) {
			s->nfences[s->nbos - 1]++;
			continue;
		}
		s->bos[s->nbos] = all[i];
		s->nfences[s->nbos++] = 1;
	}
	return 0;
}

static void frac_submit_free_bos(struct frac_submit *s)
{
	kvfree(s->bos_alloc);
}

/*
 * Order the jobs after users of their BOs; returns with the BOs locked and
 * room reserved for the jobs' fences. A job does not wait for the jobs of
 * its own batch: the queue runs them in order (frac_submit_push()).
 */
static noinline int frac_job_add_deps(struct frac_submit *s)
{
	u32 i, j;
	int ret;

	ret = drm_gem_lock_reservations(s->bos, s->nbos, &s->ctx);
	if (ret)
		return ret;
	for (i = 0; i < s->nbos; i++) {
		ret = dma_resv_reserve_fences(s->bos[i]->resv, s->nfences ? s->nfences[i] : 1);
		if (ret)
			goto err_unlock;
	}
	for (i = 0; i < s->count; i++) {
		struct frac_job *job = s->jobs[i];

		for (j = 0; j < job->nbos; j++) {
			struct drm_gem_object *obj = job->bos[j];
			bool write = frac_job_writes_bo(job, obj);

			ret = frac_job_add_resv_deps(job, obj->resv, dma_resv_usage_rw(write));
			if (ret)
				goto err_unlock;
		}
	}
	return 0;

err_unlock:
	drm_gem_unlock_reservations(s->bos, s->nbos, &s->ctx);
	return ret;
}
ALLOW_ERROR_INJECTION(frac_job_add_deps, ERRNO);

/* Publish the armed job's @fence on its BOs, which the SUBMIT holds locked. */
static void frac_job_publish(struct frac_job *job, struct dma_fence *fence)
{
	u32 i;

	for (i = 0; i < job->nbos; i++) {
		struct drm_gem_object *obj = job->bos[i];

		dma_resv_add_fence(obj->resv, fence,
				   frac_job_writes_bo(job, obj) ? DMA_RESV_USAGE_WRITE :
								  DMA_RESV_USAGE_READ);
	}
}

/* Allocate a job for @ncmds commands on @q, with its hardware fence. */
static noinline struct frac_job *frac_job_create(struct frac_file *ff,
						 struct frac_queue *q, u32 ncmds, u32 prio)
{
	struct frac_fence *hw_fence;
	struct frac_job *job;

	job = kzalloc(struct_size(job, cmds, ncmds), GFP_KERNEL);
	if (!job)
		return NULL;
	kref_init(&job->ref);
	job->ncmds = ncmds;
	job->fdev = q->fdev;
	job->ff = ff;
	kref_get(&ff->ref);
	job->q = q;
	job->prio = prio;
	job->bos = kcalloc(ncmds * 3, sizeof(*job->bos), GFP_KERNEL);
	hw_fence = kzalloc(sizeof(*hw_fence), GFP_KERNEL);
	job->hw_fence = hw_fence ? &hw_fence->base : NULL;
	if (!job->bos || !job->hw_fence) {
		kfree(job->bos);
		job->bos = NULL;
		frac_job_put(job);
		return NULL;
	}
	return job;
}
ALLOW_ERROR_INJECTION(frac_job_create, NULL);

/*
 * Reserve the job's id in the file's table. The id is reserved, not yet
 * published: WAIT sees no job there (-EINVAL) until frac_job_publish_id()
 * stores the job, once it is armed and its fence exists.
 */
static noinline int frac_job_reserve_id(struct frac_file *ff, struct frac_job *job)
{
	int ret;

	xa_lock(&ff->jobs);
	if (ff->jobs_unwaited >= DRM_FRAC_MAX_UNWAITED) {
		ret = -EBUSY;
	} else {
		ret = __xa_alloc_cyclic(&ff->jobs, &job->id, NULL, xa_limit_32b,
					&ff->job_next, GFP_KERNEL);
		if (ret >= 0) {
			ff->jobs_unwaited++;
			ret = 0;
		} else {
			/* __xa_alloc() may have written it: no id is reserved. */
			job->id = 0;
		}
	}
	xa_unlock(&ff->jobs);
	return ret;
}
ALLOW_ERROR_INJECTION(frac_job_reserve_id, ERRNO);

static void frac_job_unreserve_id(struct frac_file *ff, struct frac_job *job)
{
	xa_lock(&ff->jobs);
	__xa_erase(&ff->jobs, job->id);
	ff->jobs_unwaited--;
	xa_unlock(&ff->jobs);
}

/* The table's reference: the job becomes visible to WAIT and poll. */
static void frac_job_publish_id(struct frac_file *ff, struct frac_job *job)
{
	void *old;

	kref_get(&job->ref);
	xa_lock(&ff->jobs);
	/* Overwrites the reserved entry: no allocation, cannot fail. */
	old = __xa_store(&ff->jobs, job->id, job, GFP_NOWAIT);
	xa_unlock(&ff->jobs);
	WARN_ON_ONCE(old);
}

/*
 * Look up every BO the commands name and every syncobj the job waits for
 * or signals. On failure the job holds what it looked up; the caller puts it.
 */
static noinline int frac_job_prepare(struct drm_file *file, struct frac_job *job,
				     struct drm_frac_submit *args,
				     struct drm_syncobj **out_syncobj)
{
	int ret;

	ret = frac_job_parse(file, job, args);
	if (ret)
		return ret;
	if (args->out_syncobj) {
		*out_syncobj = drm_syncobj_find(file, args->out_syncobj);
		if (!*out_syncobj)
			return -ENOENT;
	}
	return 0;
}
ALLOW_ERROR_INJECTION(frac_job_prepare, ERRNO);

/* frac_job_done's submit side: who, what, and when, before the push. */
static void frac_job_stamp_submit(struct frac_job *job)
{
	struct frac_job_stamps *ts = &job->stamps;

	ts->pid = task_tgid_nr(current);
	get_task_comm(ts->comm, current);
	ts->op = job->cmds[0].args.op;
	ts->ncmds = job->ncmds;
	ts->prio = job->prio;
	ts->bytes = job->bytes;
	/* Last: the submit stage starts here, as frac_job_submit's own time. */
	ts->submit_ns = ktime_get_ns();
}

/*
 * A direct job (frac_jobs_try_direct()) is the device's from SUBMIT on and
 * never drm_sched's: it is not armed nor pushed, and its end is its hardware
 * fence's. The direct-job watchdog times it (armed with the ring write,
 * frac_queue_direct_timedout()); its fence's callback ends it. A job that
 * has ended already (it ran in the doorbell write, or its interrupt, a reset
 * or removal came first) goes on the reap list here, which SUBMIT reaps once
 * out of drm_dev_enter() (frac_job_retire()). Once on the list, or once the
 * callback is added, the job may be freed at any time.
 */
static void frac_job_direct_watch(struct frac_job *job)
{
	drm_sched_job_cleanup(&job->base);
	if (dma_fence_add_callback(job->hw_fence, &job->release_cb, frac_job_direct_end_cb)) {
		frac_job_direct_ended(job);
		llist_add(&job->put_node, &job->fdev->reap_list);
	}
}

/*
 * A drm_sched job's finished fence signalled: poll() reports it now. Not
 * only from a hardware fence (frac_job_complete() wakes the file itself):
 * a job that run_job refuses, or that its entity's kill ends, signals
 * nothing else. The scheduler holds the job, and the job its file, until
 * free_job, which comes after this.
 */
static void frac_job_finished_cb(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct frac_job *job = container_of(cb, struct frac_job, end_cb);

	wake_up_all(&job->ff->wq);
}

/*
 * Write the jobs to their ring now, or arm them and hand them to their
 * entity, in order. From here on the jobs cannot fail: each runs, or ends
 * with an errno through its fence.
 */
static void frac_submit_push(struct frac_submit *s)
{
	struct frac_file *ff = s->ff;
	u64 ready = 0;
	u32 i, ndirect;

	for (i = 0; i < s->count; i++)
		if (frac_job_deps_signaled(s->jobs[i]))
			ready |= BIT_ULL(i);
	/*
	 * drm_sched requires arm and push in one critical section per entity:
	 * the finished fences' seqnos must follow the order of the entity's
	 * queue, or a job depending on two of them keeps only the later fence
	 * and may run before the earlier job ends (seen: 5 of 4363 with two
	 * threads submitting to one queue). The direct check needs it too: no
	 * job of the entity may wait for run_job when one goes direct.
	 */
	mutex_lock(&ff->submit_lock);
	for (i = 0; i < s->count; i++) {
		struct frac_job *job = s->jobs[i];

		trace_frac_job_submit(job->fdev->minor, job->q->id, ff->id, job->id, job->ncmds,
				      job->cmds[0].args.op, job->prio, job->bytes);
		if (trace_frac_job_done_enabled())
			frac_job_stamp_submit(job);
		/* Until frac_job_free(), or a direct job's frac_job_retire() */
		atomic_inc(&job->fdev->sched_jobs);
	}
	/*
	 * To the ring now, or by run_job once drm_sched finds them ready; with
	 * their BOs still locked, so that no job that must wait for one of them
	 * finds them before its fence is on them.
	 */
	ndirect = frac_jobs_try_direct(s->jobs, s->count, ready);
	for (i = 0; i < s->count; i++) {
		struct frac_job *job = s->jobs[i];
		struct dma_fence *end;

		if (i >= ndirect) {
			drm_sched_job_arm(&job->base);
			job->finished = dma_fence_get(&job->base.s_fence->finished);
			/* Not pushed yet, so not signalled: the callback is added. */
			dma_fence_add_callback(job->finished, &job->end_cb,
					       frac_job_finished_cb);
		}
		end = frac_job_end_fence(job);
		frac_job_publish(job, end);
		if (s->out_syncobjs[i])
			drm_syncobj_replace_fence(s->out_syncobjs[i], end);
		/* Only now, with job->finished or job->direct set, may WAIT find the job. */
		if (job->id)
			frac_job_publish_id(ff, job);
	}
	drm_gem_unlock_reservations(s->bos, s->nbos, &s->ctx);
	/*
	 * The scheduler, or the direct end, takes over the creation reference.
	 * A pushed job may end and be freed at once (KASAN saw a read of a job
	 * after its push as a use-after-free): the direct jobs are the first
	 * @ndirect, and no pushed job is looked at again.
	 */
	for (i = ndirect; i < s->count; i++)
		drm_sched_entity_push_job(&s->jobs[i]->base);
	mutex_unlock(&ff->submit_lock);
	for (i = 0; i < ndirect; i++)
		frac_job_direct_watch(s->jobs[i]);
}

/*
 * Check the @count jobs' arguments: each as SUBMIT takes it, all for one
 * queue, priority and flags; and, as amdgpu and xe, the high priority is not
 * for everyone.
 */
static int frac_submit_check(struct frac_device *fdev, const struct drm_frac_submit *args,
			     u32 count)
{
	const struct drm_frac_submit *a;

	for (a = args; a < args + count; a++) {
		if ((a->flags & ~DRM_FRAC_SUBMIT_FLAGS) ||
		    a->cmd_size != sizeof(struct drm_frac_cmd) ||
		    !a->cmd_count || a->cmd_count > DRM_FRAC_MAX_CMDS ||
		    a->queue >= fdev->num_queues || a->priority >= FRAC_NUM_PRIO ||
		    ((a->flags & DRM_FRAC_SUBMIT_LOCAL_QUEUE) && a->queue))
			return -EINVAL;
		if (a->queue != args->queue || a->priority != args->priority ||
		    a->flags != args->flags)
			return -EINVAL;
	}
	if (args->priority == DRM_FRAC_PRIO_HIGH && !capable(CAP_SYS_NICE))
		return -EACCES;
	return 0;
}

/* Job @i: allocated, its BOs and syncobjs looked up, its id reserved. */
static int frac_submit_prepare_job(struct frac_submit *s, u32 i)
{
	struct drm_frac_submit *args = &s->args[i];
	struct frac_job *job;
	int ret;

	job = frac_job_create(s->ff, s->q, args->cmd_count, args->priority);
	if (!job)
		return -ENOMEM;
	s->jobs[i] = job;
	ret = frac_job_prepare(s->file, job, args, &s->out_syncobjs[i]);
	if (ret)
		return ret;
	ret = drm_sched_job_init(&job->base, s->entity, job->ncmds, s->ff);
	if (ret)
		return ret;
	if (args->in_syncobj) {
		ret = frac_job_add_syncobj_dep(job, s->file, args->in_syncobj);
		if (ret)
			return ret;
	}
	if (!(args->flags & DRM_FRAC_SUBMIT_NO_JOB_ID))
		ret = frac_job_reserve_id(s->ff, job);
	return ret;
}

/* Undo what frac_submit_prepare_job() did for the jobs not pushed. */
static void frac_submit_unwind(struct frac_submit *s)
{
	u32 i;

	for (i = 0; i < s->count; i++) {
		struct frac_job *job = s->jobs[i];

		if (s->out_syncobjs[i])
			drm_syncobj_put(s->out_syncobjs[i]);
		if (!job)
			continue;
		if (job->id)
			frac_job_unreserve_id(s->ff, job);
		/* drm_sched_job_init() succeeded */
		if (job->base.s_fence)
			drm_sched_job_cleanup(&job->base);
		frac_job_put_bos(job);
		frac_job_put(job);
	}
}

/*
 * Submit the jobs of @s, whose arguments were checked: all of them, or
 * none. On success each one's @queue and @job_id are written in s->args.
 */
static int frac_submit_jobs(struct drm_device *dev, struct frac_submit *s)
{
	struct frac_device *fdev = to_frac_device(dev);
	u32 queue = s->args[0].queue;
	int idx, ret;
	u32 i;

	/*
	 * The direct jobs that ended since: no work item for them. Before
	 * drm_dev_enter(): putting an imported BO may wait for its exporter's
	 * reservation lock, whose holder may wait for a job only removal ends.
	 */
	frac_job_reap(fdev);
	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;
	if (READ_ONCE(fdev->wedged)) {
		ret = -EIO;
		goto out_dev_exit;
	}
	/* A hint: running elsewhere by the time the job ends only costs a wakeup. */
	if (s->args[0].flags & DRM_FRAC_SUBMIT_LOCAL_QUEUE)
		queue = frac_local_queue(fdev);
	s->q = &fdev->queues[queue];
	s->entity = &s->ff->entity[queue][s->args[0].priority];

	for (i = 0; i < s->count; i++) {
		ret = frac_submit_prepare_job(s, i);
		if (ret)
			goto err_unwind;
	}
	ret = frac_submit_collect_bos(s);
	if (ret)
		goto err_unwind;
	ret = frac_job_add_deps(s);
	if (ret)
		goto err_free_bos;

	/*
	 * After the push the jobs are the scheduler's, or the device's: they
	 * may run, end and be freed (by free_job, by their end, or within the
	 * push for a direct job that ended already) before this thread runs
	 * again (KASAN saw a read of job->id after the push as a
	 * use-after-free), so take what SUBMIT returns first. Written back only
	 * on success: a failed SUBMIT changes nothing.
	 */
	for (i = 0; i < s->count; i++) {
		s->args[i].queue = queue;
		s->args[i].job_id = s->jobs[i]->id;
	}
	frac_submit_push(s);
	for (i = 0; i < s->count; i++)
		if (s->out_syncobjs[i])
			drm_syncobj_put(s->out_syncobjs[i]);
	frac_submit_free_bos(s);
	drm_dev_exit(idx);
	/* A direct job that ended in the doorbell write, this one most often. */
	frac_job_reap(fdev);
	return 0;

err_free_bos:
	frac_submit_free_bos(s);
err_unwind:
	frac_submit_unwind(s);
out_dev_exit:
	drm_dev_exit(idx);
	return ret;
}

int frac_submit_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_frac_submit *args = data;
	struct drm_syncobj *out_syncobj = NULL;
	struct frac_job *job = NULL;
	struct frac_submit s = {
		.file = file,
		.ff = file->driver_priv,
		.count = 1,
		.args = args,
		.jobs = &job,
		.out_syncobjs = &out_syncobj,
	};
	int ret;

	ret = frac_submit_check(to_frac_device(dev), args, 1);
	if (ret)
		return ret;
	return frac_submit_jobs(dev, &s);
}

static_assert(DRM_FRAC_MAX_BATCH <= BITS_PER_TYPE(u64), "frac_submit_push()'s ready mask");

int frac_submit_batch_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_frac_submit_batch *batch = data;
	void __user *ujobs = u64_to_user_ptr(batch->jobs);
	struct frac_submit s = {
		.file = file,
		.ff = file->driver_priv,
		.count = batch->count,
	};
	size_t size;
	void *mem;
	int ret;

	if (batch->flags || batch->pad || !batch->count || batch->count > DRM_FRAC_MAX_BATCH ||
	    batch->job_size != sizeof(struct drm_frac_submit))
		return -EINVAL;
	size = batch->count * sizeof(*s.args);
	mem = kzalloc(size + batch->count * (sizeof(*s.jobs) + sizeof(*s.out_syncobjs)),
		      GFP_KERNEL);
	if (!mem)
		return -ENOMEM;
	s.args = mem;
	s.jobs = mem + size;
	s.out_syncobjs = (struct drm_syncobj **)(s.jobs + batch->count);
	if (copy_from_user(s.args, ujobs, size)) {
		ret = -EFAULT;
		goto out;
	}
	ret = frac_submit_check(to_frac_device(dev), s.args, batch->count);
	if (ret)
		goto out;
	/*
	 * The array must take the results before anything is submitted: write
	 * it back as it was read (see the uAPI), before any job is prepared.
	 */
	if (copy_to_user(ujobs, s.args, size)) {
		ret = -EFAULT;
		goto out;
	}
	ret = frac_submit_jobs(dev, &s);
	/* Submitted: only an array unmapped meanwhile fails (see the uAPI). */
	if (!ret && copy_to_user(ujobs, s.args, size))
		ret = -EFAULT;
out:
	kfree(mem);
	return ret;
}

/* ---- WAIT and poll ------------------------------------------------------ */

int frac_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct frac_file *ff = file->driver_priv;
	struct drm_frac_wait *args = data;
	ktime_t start = ktime_get();
	struct dma_fence *fence;
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

	/* A direct job's end is its hardware fence's: one callback sooner. */
	fence = frac_job_end_fence(job);
	if (!args->timeout_ns)
		remain = dma_fence_is_signaled(fence) ? 1 : 0;
	else
		remain = dma_fence_wait_timeout(fence, true, timeout);
	if (remain <= 0) {
		ret = remain ? remain : -ETIME;
		/*
		 * Interrupted: leave the time still to wait in @timeout_ns (as
		 * i915's GEM_WAIT does), so that the restarted call does not
		 * begin the whole timeout again on every signal.
		 */
		if (ret == -ERESTARTSYS && args->timeout_ns > 0)
			args->timeout_ns = max_t(s64, args->timeout_ns -
						 ktime_to_ns(ktime_sub(ktime_get(), start)), 1);
		goto out;
	}

	args->status = fence->error;
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
	/* This job's BOs too, if it went direct: a BO closed now is freed now. */
	if (!ret)
		frac_job_reap_sync(to_frac_device(dev));
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
		if (dma_fence_is_signaled(frac_job_end_fence(job))) {
			mask = EPOLLIN | EPOLLRDNORM;
			break;
		}
	}
	xa_unlock(&ff->jobs);
	return mask;
}
