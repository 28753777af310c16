// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * Hardware queues, one ring's story in one place (as nvme pci.c): ring memory
 * and registers, the producer (descriptor building, run_job, the doorbell),
 * the consumer (completion records, job completion and its fence) and the
 * lost-interrupt check of the job timeout, and the drm_sched scheduler on each
 * ring. Recovery (resets, quiesce, removal) is frac_reset.c's.
 */

#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/moduleparam.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "frac_drv.h"
#include "frac_job.h"
#include "frac_trace.h"

static unsigned int frac_job_timeout_ms = 5000;
module_param_named(job_timeout_ms, frac_job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms, "Job timeout before its queue is reset (ms)");

/* ---- Ring memory and registers ------------------------------------------ */

static void frac_queue_hw_program(struct frac_queue *q)
{
	struct frac_device *fdev = q->fdev;

	frac_wr(fdev, FRAC_QREG(q->id, FRAC_Q_SQ_BASE_LO), lower_32_bits(q->sq_dma));
	frac_wr(fdev, FRAC_QREG(q->id, FRAC_Q_SQ_BASE_HI), upper_32_bits(q->sq_dma));
	frac_wr(fdev, FRAC_QREG(q->id, FRAC_Q_CQ_BASE_LO), lower_32_bits(q->cq_dma));
	frac_wr(fdev, FRAC_QREG(q->id, FRAC_Q_CQ_BASE_HI), upper_32_bits(q->cq_dma));
	frac_wr(fdev, FRAC_QREG(q->id, FRAC_Q_SIZE), q->size);
	frac_wr(fdev, FRAC_QREG(q->id, FRAC_Q_IRQ_COAL), 0);
	frac_wr(fdev, FRAC_QREG(q->id, FRAC_Q_CTRL), FRAC_QCTRL_ENABLE);
}

/* Start a queue from an empty ring; the device queue must be reset. */
void frac_queue_hw_start(struct frac_queue *q)
{
	unsigned long flags;

	/* Under ring_lock: a direct SUBMIT after the restart sees the new ring. */
	spin_lock(&q->ring_lock);
	memset(q->sq, 0, q->size * sizeof(*q->sq));
	q->sq_tail = 0;
	spin_unlock(&q->ring_lock);
	/* No job ended yet on the new ring: jiffies compare within LONG_MAX. */
	WRITE_ONCE(q->ended, jiffies);
	memset(q->cq, 0, q->size * sizeof(*q->cq));
	spin_lock_irqsave(&q->cq_lock, flags);
	q->cq_head = 0;
	q->phase = true;
	q->part_status = 0;
	q->part_started = false;
	/* The CQ is empty: a handler before the enable finds nothing to ring. */
	q->cq_db_stopped = false;
	spin_unlock_irqrestore(&q->cq_lock, flags);
	frac_queue_hw_program(q);
}

/*
 * Before a reset of @q or of the device: from now on the interrupt handler
 * may still consume records the device wrote (their jobs did end), but does
 * not ring the CQ doorbell of a queue being reset, which the reset leaves
 * disabled until frac_queue_hw_start().
 */
void frac_queue_stop_cq_db(struct frac_queue *q)
{
	unsigned long flags;

	lockdep_assert_held(&q->fdev->reset_lock);
	spin_lock_irqsave(&q->cq_lock, flags);
	q->cq_db_stopped = true;
	spin_unlock_irqrestore(&q->cq_lock, flags);
}

void frac_device_init_regs(struct frac_device *fdev)
{
	u32 i;

	frac_wr(fdev, FRAC_REG_DMA_BITS, fdev->dma_bits);
	for (i = 0; i < fdev->num_queues; i++)
		frac_queue_hw_start(&fdev->queues[i]);
	frac_wr(fdev, FRAC_REG_CONTROL, FRAC_CTRL_ENABLE);
}

/* ---- Hardware fences ---------------------------------------------------- */

static const char *frac_fence_driver_name(struct dma_fence *fence)
{
	return DRIVER_NAME;
}

/*
 * From the module, not the device: a sync_file or another driver's dma_resv
 * may keep the fence after the device, and its queues, are gone.
 */
static const char * const frac_timeline_names[FRAC_MAX_QUEUES] = {
	"frac-q0", "frac-q1", "frac-q2", "frac-q3", "frac-q4", "frac-q5", "frac-q6",
	"frac-q7", "frac-q8", "frac-q9", "frac-q10", "frac-q11", "frac-q12", "frac-q13",
	"frac-q14", "frac-q15",
};

static const char *frac_fence_timeline_name(struct dma_fence *fence)
{
	return frac_timeline_names[container_of(fence, struct frac_fence, base)->qid];
}

static const struct dma_fence_ops frac_fence_ops = {
	.use_64bit_seqno = true,	/* a queue's u64 seqno, never reset */
	.get_driver_name = frac_fence_driver_name,
	.get_timeline_name = frac_fence_timeline_name,
};

/* ---- Descriptors -------------------------------------------------------- */

/* frac_build_desc() passes these uAPI values to the device unchanged. */
static_assert(DRM_FRAC_OP_NOP == FRAC_OP_NOP && DRM_FRAC_OP_COPY == FRAC_OP_COPY &&
	      DRM_FRAC_OP_FILL == FRAC_OP_FILL && DRM_FRAC_OP_CRC32C == FRAC_OP_CRC32C &&
	      DRM_FRAC_OP_GEMM == FRAC_OP_GEMM && DRM_FRAC_OP_TIMESTAMP == FRAC_OP_TIMESTAMP,
	      "uAPI opcodes are the device's");
static_assert(DRM_FRAC_GEMM_FP32 == FRAC_GEMM_FP32 && DRM_FRAC_GEMM_INT8 == FRAC_GEMM_INT8,
	      "uAPI GEMM types are the device's");
static_assert(ARRAY_SIZE(((struct drm_frac_cmd *)0)->arg) ==
	      ARRAY_SIZE(((struct frac_desc *)0)->arg) &&
	      sizeof_field(struct drm_frac_cmd, arg) == sizeof_field(struct frac_desc, arg),
	      "a command's arguments are its descriptor's, one for one");
static_assert(DRM_FRAC_MAX_CMDS < FRAC_RING_ENTRIES - FRAC_DIRECT_CREDITS &&
	      DRM_FRAC_MAX_CMDS <= FRAC_DIRECT_CREDITS,
	      "a job's commands fit the scheduler's credits, and the direct ones");

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

/* ---- Descriptors onto the ring, the doorbell: run_job or SUBMIT ---------- */

/*
 * On by default: a job with nothing to wait for skips drm_sched's run_job and
 * free_job work items, and their wakeups (measured in docs/performance.md).
 */
static bool frac_direct_submit = true;
module_param_named(direct_submit, frac_direct_submit, bool, 0644);
MODULE_PARM_DESC(direct_submit,
		 "SUBMIT writes a job with nothing to wait for to the ring itself (default: on)");

/*
 * Write @job's descriptors to its ring, without the doorbell. The ring has
 * room: drm_sched's credits, or the direct ones, were counted for it.
 */
static void frac_job_write_locked(struct frac_job *job)
{
	struct frac_queue *q = job->q;
	struct frac_device *fdev = q->fdev;
	struct frac_fence *f = container_of(job->hw_fence, struct frac_fence, base);
	unsigned long flags;
	u32 i, slot = 0;

	lockdep_assert_held(&q->ring_lock);
	q->seqno++;
	job->seqno = q->seqno;
	trace_frac_job_run(fdev->minor, q->id, job->ff->id, job->id, job->seqno,
			   job->ncmds, q->sq_tail);
	if (trace_frac_job_done_enabled())
		job->stamps.run_ns = ktime_get_ns();
	f->q = q;
	f->qid = q->id;
	spin_lock_init(&f->lock);
	dma_fence_init(&f->base, &frac_fence_ops, &f->lock, q->fence_context,
		       job->seqno);

	job->written = jiffies;
	job->ring_first = q->sq_tail;
	for (i = 0; i < job->ncmds; i++) {
		slot = q->sq_tail;
		frac_build_desc(q, slot, job, &job->cmds[i], i == job->ncmds - 1);
		q->sq_tail = (slot + 1) & (q->size - 1);
	}

	spin_lock_irqsave(&q->cq_lock, flags);
	q->slot_job[slot] = job;
	spin_unlock_irqrestore(&q->cq_lock, flags);

	/* Counted first: a reader must never see a job completed before submitted. */
	atomic64_inc(&q->jobs_submitted);
}

/* Tell the device about every descriptor written so far. */
static void frac_queue_doorbell_locked(struct frac_queue *q)
{
	lockdep_assert_held(&q->ring_lock);
	/* writel() orders the descriptor and SG writes before the doorbell. */
	writel(q->sq_tail, q->fdev->regs + FRAC_DB_SQ_TAIL(q->id));
}

/* @job's doorbell has been written: its event, with the tail written. */
static void frac_job_rung(struct frac_job *job)
{
	struct frac_queue *q = job->q;

	trace_frac_job_doorbell(q->fdev->minor, q->id, job->ff->id, job->id, job->seqno,
				job->ncmds, q->sq_tail);
	frac_dbg(q->fdev, JOB, "q%u seqno %llu: %u cmds, tail %u%s\n", q->id, job->seqno,
		 job->ncmds, q->sq_tail, job->direct ? " (direct)" : "");
}

/* Write @job to its ring and ring the doorbell: run_job. */
static void frac_job_ring_locked(struct frac_job *job)
{
	frac_job_write_locked(job);
	frac_queue_doorbell_locked(job->q);
	frac_job_rung(job);
}

/* The job goes to drm_sched's run_job: its entity has one more to write. */
static void frac_job_queued_locked(struct frac_job *job)
{
	struct frac_queue *q = job->q;

	lockdep_assert_held(&q->ring_lock);
	job->ff->queued[q->id][job->prio]++;
	q->queued[job->prio]++;
	job->queued = true;
}

/*
 * The job no longer waits to be written by run_job (run_job got to it, or
 * drm_sched dropped it): another job of its entity may go direct.
 */
void frac_job_unqueue(struct frac_job *job)
{
	struct frac_queue *q = job->q;

	spin_lock(&q->ring_lock);
	if (job->queued) {
		job->ff->queued[q->id][job->prio]--;
		q->queued[job->prio]--;
	}
	job->queued = false;
	spin_unlock(&q->ring_lock);
}

/*
 * Bounce buffers (frac_bo_sync()). A job on a BO the device reaches through
 * a bounce copy copies the ranges it reads to the device before its ring
 * write (@sync_in), and, if it succeeded, the ranges it wrote back before
 * its end is visible (@sync_out, frac_job_complete()); a failed job's
 * destinations are not copied back. A copy to the device must not overwrite
 * what a job not yet ended wrote to the same bounce buffer. Such a job is
 * on the same ring: a writer on another queue that it depends on has ended
 * (drm_sched waits for it; a direct job's dependencies have signalled), and
 * a writer that would depend on it waits for it. But drm_sched runs a job as
 * soon as a job of its own queue it depends on is written to the ring, and a
 * job of its own entity at once; a direct job's dependencies leave its own
 * queue to the ring order. So a @sync_in job is written to an idle ring
 * only: drm_sched holds it behind the ring's last job (frac_job_wait_ring()),
 * and it goes direct only if the ring was idle when its SUBMIT began writing
 * (the jobs of that one SUBMIT are all copied before the doorbell that starts
 * them, under the ring lock; run_job copies with no lock held). A writer
 * needs no such wait: it copies nothing to the device, and the device writes
 * in ring order.
 */
static void frac_operand_sync(struct frac_device *fdev, struct frac_operand *op, bool for_cpu,
			      bool may_sleep)
{
	struct frac_bo *bo;

	if (!op->bo)
		return;
	bo = to_frac_bo(op->bo);
	if (bo->need_sync)
		frac_bo_sync(fdev, bo, op->offset, op->len, for_cpu, may_sleep);
}

/* For the device: what the job reads. For the CPU: what it wrote. */
static void frac_job_sync(struct frac_job *job, bool for_cpu, bool may_sleep)
{
	u32 i;

	for (i = 0; i < job->ncmds; i++) {
		struct frac_cmd *c = &job->cmds[i];

		if (for_cpu) {
			frac_operand_sync(job->fdev, &c->dst, true, may_sleep);
		} else {
			frac_operand_sync(job->fdev, &c->src, false, may_sleep);
			frac_operand_sync(job->fdev, &c->aux, false, may_sleep);
		}
	}
}

/*
 * The hardware fence of the last job written to @q's ring, with a reference,
 * if it has not ended; NULL when the ring is idle (jobs end in ring order).
 */
static struct dma_fence *frac_queue_last_fence_locked(struct frac_queue *q)
{
	struct dma_fence *fence = NULL;
	struct frac_job *job;
	unsigned long flags;

	lockdep_assert_held(&q->ring_lock);
	spin_lock_irqsave(&q->cq_lock, flags);
	job = q->slot_job[(q->sq_tail - 1) & (q->size - 1)];
	if (job)
		fence = dma_fence_get(job->hw_fence);
	spin_unlock_irqrestore(&q->cq_lock, flags);
	return fence;
}

static bool frac_queue_idle_locked(struct frac_queue *q)
{
	struct dma_fence *fence = frac_queue_last_fence_locked(q);

	dma_fence_put(fence);
	return !fence;
}

/*
 * drm_sched's prepare_job, after the job's dependencies: a @sync_in job waits
 * for the end of the last job on the ring then. Once only: a job that any
 * writer of what it reads depends on is on the ring by then (drm_sched ran
 * the jobs of the job's entity ahead of it, and those of another entity it
 * depends on), and a later writer waits for it; waiting for a ring that
 * other files keep busy would starve it.
 */
static struct dma_fence *frac_job_wait_ring(struct drm_sched_job *sched_job,
					    struct drm_sched_entity *entity)
{
	struct frac_job *job = to_frac_job(sched_job);
	struct dma_fence *fence;

	if (likely(!job->sync_in) || job->ring_waited)
		return NULL;
	job->ring_waited = true;
	spin_lock(&job->q->ring_lock);
	fence = frac_queue_last_fence_locked(job->q);
	spin_unlock(&job->q->ring_lock);
	return fence;
}

/*
 * The direct-job watchdog. drm_sched never times a direct job
 * (frac_submit_push()); its hardware fence, which its BOs' reservations and out
 * syncobj hold, must still signal if it hangs. As drm_sched's timeout, which
 * restarts at each job's end, it gives the job at the ring's head a job
 * timeout from when it started: its ring write, or the end of the job ahead
 * of it, whichever came last (frac_queue_direct_timedout()). A direct SUBMIT,
 * under ring_lock with its jobs on the ring, records the last one's seqno, and queues
 * the watchdog if it is not already queued (most SUBMITs: no timer is
 * touched); the watchdog queues itself again while a direct job is on the
 * ring.
 */
static void frac_queue_watch_direct_locked(struct frac_queue *q, u64 seqno)
{
	lockdep_assert_held(&q->ring_lock);
	q->direct_seqno = seqno;
	/* Nothing if queued: a SUBMIT never postpones the watchdog's own time. */
	queue_delayed_work(q->fdev->tdr_wq, &q->direct_tdr, msecs_to_jiffies(frac_job_timeout_ms));
}

/* Has a job of a priority above @prio been pushed to drm_sched and not yet written? */
static bool frac_queue_higher_queued_locked(struct frac_queue *q, u32 prio)
{
	u32 p;

	lockdep_assert_held(&q->ring_lock);
	for (p = prio + 1; p < FRAC_NUM_PRIO; p++)
		if (q->queued[p])
			return true;
	return false;
}

/* Has every fence @job depends on signalled? Outside ring_lock: it may signal them. */
bool frac_job_deps_signaled(struct frac_job *job)
{
	struct dma_fence *fence;
	unsigned long index;

	xa_for_each(&job->base.dependencies, index, fence)
		if (!dma_fence_is_signaled(fence))
			return false;
	return true;
}

/*
 * Direct submission, from SUBMIT with the file's submit lock held and its
 * jobs' BOs' reservations locked, the jobs neither armed nor published:
 * when nothing stands in a job's way, write it to the ring now rather than
 * in drm_sched's run_job work item, one wakeup and one hop later (ivpu and
 * qaic submit from the ioctl; nvme rings its doorbell in the submitting
 * syscall). The job is then never drm_sched's (frac_submit_push()): its end is
 * its hardware fence's, which SUBMIT publishes (in its BOs' reservations and
 * its out syncobj); the direct-job watchdog times it out
 * (frac_queue_direct_timedout()), a recovery ends it as any job on the ring,
 * and its fence's callback releases it: no run_job or free_job work item.
 * Nothing stands in the way when:
 *  - direct submission is on (the direct_submit parameter);
 *  - every fence the job depends on has signalled;
 *  - its entity has no job still waiting for run_job, which would otherwise
 *    reach the ring after it, and no file has a job of a higher priority
 *    waiting for run_job on the queue, which it would otherwise pass;
 *  - the direct credits have room for its commands;
 *  - a job that reads through bounce buffers finds the ring idle (see
 *    frac_job_sync());
 *  - the queue's submission is not stopped (a reset, a timeout's look, a PCI
 *    reset or removal: frac_queue_stop_submit(), drm_sched's pause_submit,
 *    which drm_sched_wqueue_ready() does not report) and the device is not
 *    wedged.
 *
 * SUBMIT hands over its jobs (one, or a SUBMIT_BATCH's), all of one entity,
 * in order; bit i of @ready is set when job i's dependencies have signalled
 * (frac_job_deps_signaled(), checked before: it may signal them). Each job
 * goes direct (job->direct set) or is counted as waiting for run_job
 * (frac_job_queued_locked()), after which its entity's later jobs wait too:
 * the direct jobs are the first ones. One doorbell write announces them all.
 * Returns how many went direct.
 */
u32 frac_jobs_try_direct(struct frac_job **jobs, u32 count, u64 ready)
{
	struct frac_queue *q = jobs[0]->q;
	struct frac_device *fdev = q->fdev;
	bool on = READ_ONCE(frac_direct_submit);
	bool idle = true;
	u32 i, ndirect = 0;
	u64 last = 0;

	spin_lock(&q->ring_lock);
	/* Before any of them is written: a sync_in job needs an idle ring. */
	for (i = 0; i < count; i++) {
		if (unlikely(jobs[i]->sync_in)) {
			idle = frac_queue_idle_locked(q);
			break;
		}
	}
	for (i = 0; i < count; i++) {
		struct frac_job *job = jobs[i];

		if (on && (ready & BIT_ULL(i)) && !job->ff->queued[q->id][job->prio] &&
		    !frac_queue_higher_queued_locked(q, job->prio) &&
		    atomic_read(&q->direct_credits) + job->ncmds <= FRAC_DIRECT_CREDITS &&
		    !READ_ONCE(q->sched.pause_submit) && !READ_ONCE(fdev->wedged) &&
		    (likely(!job->sync_in) || idle)) {
			atomic_add(job->ncmds, &q->direct_credits);
			job->direct = true;
			if (unlikely(job->sync_in))
				frac_job_sync(job, false, false);
			frac_job_write_locked(job);
			last = job->seqno;
			ndirect++;
		} else {
			frac_job_queued_locked(job);
		}
	}
	if (ndirect) {
		frac_queue_doorbell_locked(q);
		frac_queue_watch_direct_locked(q, last);
		atomic64_add(ndirect, &q->jobs_direct);
		for (i = 0; i < ndirect; i++)
			frac_job_rung(jobs[i]);
	}
	spin_unlock(&q->ring_lock);
	return ndirect;
}

/*
 * Stop the queue's submission: drm_sched's run_job, and direct SUBMITs.
 * A SUBMIT that saw the queue running before the stop has finished writing
 * to the ring once this returns: it wrote under the ring lock.
 */
void frac_queue_stop_submit(struct frac_queue *q)
{
	drm_sched_wqueue_stop(&q->sched);
	spin_lock(&q->ring_lock);
	spin_unlock(&q->ring_lock);
}

static struct dma_fence *frac_job_run(struct drm_sched_job *sched_job)
{
	struct frac_job *job = to_frac_job(sched_job);
	struct frac_queue *q = job->q;
	struct frac_device *fdev = q->fdev;
	int idx;

	if (!drm_dev_enter(&fdev->drm, &idx)) {
		frac_job_unqueue(job);
		return ERR_PTR(-ENODEV);
	}
	if (unlikely(READ_ONCE(fdev->wedged))) {
		frac_job_unqueue(job);
		drm_dev_exit(idx);
		return ERR_PTR(-EIO);
	}
	if (unlikely(sched_job->s_fence->finished.error)) {
		frac_job_unqueue(job);
		drm_dev_exit(idx);
		return ERR_PTR(sched_job->s_fence->finished.error);
	}
	/* The ring is idle (frac_job_wait_ring()). */
	if (unlikely(job->sync_in))
		frac_job_sync(job, false, true);

	spin_lock(&q->ring_lock);
	frac_job_ring_locked(job);
	job->ff->queued[q->id][job->prio]--;
	q->queued[job->prio]--;
	job->queued = false;
	spin_unlock(&q->ring_lock);
	drm_dev_exit(idx);

	/* The scheduler takes this reference; the job keeps its own. */
	return dma_fence_get(job->hw_fence);
}

/* ---- Completion --------------------------------------------------------- */

static int frac_status_errno(u32 status)
{
	return status == FRAC_STATUS_OK ? 0 : -EIO;
}

/*
 * The offset that converts @job's device times to the host clock, for the
 * tracepoints: the sampled one (frac_clock_offset_sample()), moved into the
 * range the job's own host stamps allow. The device cannot start the job
 * before its run (run_ns, taken before its descriptors were written) nor end
 * it after the handler saw its record (@irq_ns, taken after): the job
 * brackets its device times as a sample's two host reads bracket its clock
 * read, so a sample the host skewed cannot put them before the run. Moved as
 * one, they keep the device's own exec (t_end - t_start). A moved offset is
 * the device's offset from then on (each bound holds the true offset, so a
 * move goes toward it), which keeps the jobs that follow consistent with
 * this one; debugfs "clock" counts the moves and keeps the largest. A bound
 * not stamped (0: the tracepoints were off) is not used; when the two cross
 * (the device's exec longer than run -> irq on the host: the clocks' rates
 * differ), the run's wins, and fraclat clamps the end and counts it.
 */
static s64 frac_job_clock_offset(struct frac_job *job, u64 t_start, u64 t_end,
				 u64 irq_ns)
{
	struct frac_device *fdev = job->q->fdev;
	s64 was = READ_ONCE(fdev->clock_offset), off = was;
	u64 run_ns = job->stamps.run_ns, move;

	if (irq_ns && t_end && off > (s64)(irq_ns - t_end))
		off = irq_ns - t_end;
	if (run_ns && t_start && off < (s64)(run_ns - t_start))
		off = run_ns - t_start;
	if (off != was) {
		WRITE_ONCE(fdev->clock_offset, off);
		atomic64_inc(&fdev->clock_moves);
		move = off > was ? off - was : was - off;
		if (move > READ_ONCE(fdev->clock_move_max))
			WRITE_ONCE(fdev->clock_move_max, move);
	}
	return off;
}

static u64 frac_dev_ns_at(u64 dev_ns, s64 offset)
{
	return dev_ns ? dev_ns + offset : 0;
}

/*
 * Record the job's outcome and signal its hardware fence. Called with the
 * queue's cq_lock held, from the IRQ or a reset; the job may be freed as soon
 * as the fence signals, so nothing touches it after. @irq_ns, for the
 * tracepoints only (0 while they are disabled): when the interrupt handler found
 * the job's record (frac_queue_process_cq()); 0 when no interrupt ended the
 * job (the timeout's scan, a reset, removal).
 */
void frac_job_complete(struct frac_job *job, int status, u64 result,
		       u64 t_start, u64 t_end, u64 irq_ns)
{
	struct frac_file *ff = job->ff;
	struct frac_queue *q = job->q;
	struct frac_device *fdev = q->fdev;
	u32 ctx = ff->id, id = job->id;
	u64 seqno = job->seqno;
	s64 offset;

	lockdep_assert_held(&q->cq_lock);
	/* What the device wrote, back from the bounce buffers before anyone sees the end. */
	if (unlikely(job->sync_out) && !status)
		frac_job_sync(job, true, false);
	job->status = status;
	job->result = result;
	job->t_start = t_start;
	job->t_end = t_end;
	if (status) {
		atomic64_inc(&q->jobs_failed);
		atomic64_inc(&ff->jobs_failed);
		dma_fence_set_error(job->hw_fence, status);
	} else {
		atomic64_inc(&q->jobs_completed);
		atomic64_inc(&ff->jobs_done);
	}
	if (t_end > t_start)
		atomic64_add(t_end - t_start, &ff->engine_ns[q->id]);
	offset = frac_job_clock_offset(job, t_start, t_end, irq_ns);
	trace_frac_job_complete(fdev->minor, q->id, ctx, id, seqno, status,
				frac_dev_ns_at(t_start, offset),
				frac_dev_ns_at(t_end, offset), result, irq_ns);
	if (trace_frac_job_done_enabled()) {
		struct frac_job_stamps *ts = &job->stamps;

		ts->dev_start_ns = frac_dev_ns_at(t_start, offset);
		ts->dev_end_ns = frac_dev_ns_at(t_end, offset);
		ts->irq_ns = irq_ns;
		trace_frac_job_done(fdev->minor, q->id, ctx, id, seqno, status, ts);
	}
	/*
	 * Before the signal, as dma_fence's own tracepoint: once signalled, a
	 * waiter on another CPU may run, and submit, before an event logged here
	 * afterwards.
	 */
	trace_frac_fence_signal(fdev->minor, q->id, ctx, id, seqno, status);
	/*
	 * Jobs end in ring order: the direct-job watchdog's "every direct job
	 * ended", and the start of the job behind this one.
	 */
	WRITE_ONCE(q->seqno_done, seqno);
	WRITE_ONCE(q->ended, jiffies);
	/*
	 * Once signalled, the job may be freed, and with its reference the
	 * file: frac_file_release() frees it after an RCU grace period, so
	 * the wait queue stays valid until rcu_read_unlock().
	 */
	rcu_read_lock();
	dma_fence_signal(job->hw_fence);
	/* The job may be gone now. */
	wake_up_all(&ff->wq);
	rcu_read_unlock();
}

/*
 * How many completion records the ring holds from its head on: the device
 * wrote them (their phase bit flipped). The ring never holds q->size.
 */
static u32 frac_cq_pending(struct frac_queue *q)
{
	u32 head = q->cq_head, n = 0;
	bool phase = q->phase;

	lockdep_assert_held(&q->cq_lock);
	while (n < q->size &&
	       !!(READ_ONCE(q->cq[head].flags) & cpu_to_le16(FRAC_CQE_PHASE)) == phase) {
		n++;
		head = (head + 1) & (q->size - 1);
		if (!head)
			phase = !phase;
	}
	return n;
}

/*
 * The handler's refresh of the clock offset: one bracket, used only when it
 * is not much longer than the clock work's shortest (clock_rtt_ref). A vCPU
 * the host deschedules between the first clock read and the device read
 * makes a long bracket whose midpoint is early: every device time converted
 * with it lands early, before its job's run. Such a sample is dropped and
 * the next handler tries again 10 ms later; the clock work refreshes the
 * offset every second whatever.
 */
static void frac_clock_offset_refresh_irq(struct frac_device *fdev)
{
	u64 ref = READ_ONCE(fdev->clock_rtt_ref), rtt;
	s64 offset = frac_clock_offset_sample(fdev, 1, &rtt);

	if (!ref || rtt <= 2 * ref + FRAC_CLOCK_RTT_SLACK_NS)
		WRITE_ONCE(fdev->clock_offset, offset);
	WRITE_ONCE(fdev->clock_sampled, jiffies);
}

/*
 * Is @cqe, at the CQ's head, the record the driver expects there? A queue
 * writes one record per descriptor, in ring order (docs/hw-spec.md 5): the
 * record in CQ slot i is the one of SQ slot i, so its sq_head is i + 1, and
 * its job_id is the seqno of the oldest job not ended (jobs end in seqno
 * order), which is the job_id of the descriptor in that slot; when the slot
 * is that job's last, slot_job[] holds it. Its status is one the device
 * defines, and its job did not end before it started. A few compares of
 * state under cq_lock and of the SQ, whose slot the driver does not rewrite
 * before its record is consumed (its ring credit is held until its job ends).
 */
static bool frac_cqe_expected(struct frac_queue *q, const struct frac_cqe *cqe)
{
	u32 slot = q->cq_head;
	u64 id = le64_to_cpu(cqe->job_id);
	struct frac_job *job = q->slot_job[slot];

	lockdep_assert_held(&q->cq_lock);
	return le16_to_cpu(cqe->sq_head) == ((slot + 1) & (q->size - 1)) &&
	       id == q->seqno_done + 1 && le64_to_cpu(q->sq[slot].job_id) == id &&
	       (!job || job->seqno == id) &&
	       le32_to_cpu(cqe->status) <= FRAC_STATUS_FATAL &&
	       le64_to_cpu(cqe->t_start) <= le64_to_cpu(cqe->t_end);
}

/*
 * @cqe, at the CQ's head, is not the record expected there: the device may
 * still be writing into the job it names, or into the one the driver would
 * take it for. No job ends on its word: the handler consumes nothing more
 * (cq_bad) and the queue is reset as after a hang, its jobs ending
 * -ECANCELED (frac_queue_bad_cqe_work()).
 */
static void frac_queue_bad_cqe(struct frac_queue *q, const struct frac_cqe *cqe)
{
	struct frac_device *fdev = q->fdev;

	lockdep_assert_held(&q->cq_lock);
	q->cq_bad = true;
	atomic64_inc(&q->bad_cqes);
	dev_warn_ratelimited(fdev->drm.dev,
			     "q%u: bad completion record in slot %u: job_id %llu sq_head %u status %u t_start %llu t_end %llu, expected job_id %llu sq_head %u; resetting queue\n",
			     q->id, q->cq_head, le64_to_cpu(cqe->job_id),
			     le16_to_cpu(cqe->sq_head), le32_to_cpu(cqe->status),
			     le64_to_cpu(cqe->t_start), le64_to_cpu(cqe->t_end),
			     q->seqno_done + 1, (q->cq_head + 1) & (q->size - 1));
	queue_work(fdev->tdr_wq, &q->bad_cqe_work);
}

/*
 * Consume completion records. Called from the queue's interrupt handler, and
 * from the timeout handler (@lost_irq) to catch a completion whose interrupt
 * was lost: each job that scan ends counts as a lost interrupt, counted
 * before its fence signals, so its waiter sees the count. Returns the number
 * of jobs it ended.
 * The device writes records in ring order; a job ends with the record of its
 * last descriptor, the slot of which holds the job. A record that is not the
 * one expected there (frac_cqe_expected()) ends nothing, and nothing after it
 * is consumed until the queue's reset.
 */
u32 frac_queue_process_cq(struct frac_queue *q, bool lost_irq)
{
	struct frac_device *fdev = q->fdev;
	/*
	 * The interrupt time of frac_job_complete and frac_job_done: only
	 * traced, only from the handler.
	 */
	bool traced = trace_frac_job_complete_enabled() || trace_frac_job_done_enabled();
	bool stamp = !lost_irq && traced;
	u32 n = 0, ended = 0, found = 0;
	u64 lost_first = 0, lost_last = 0;
	unsigned long flags;
	u64 irq_ns = 0;

	/*
	 * The device and host clocks drift apart by microseconds per second
	 * under emulation: refresh the offset the completion events use when
	 * it is older than 10 ms (one bracket: two register reads, two clock
	 * reads, interrupts off).
	 */
	if (traced &&
	    time_after(jiffies, READ_ONCE(fdev->clock_sampled) + msecs_to_jiffies(10))) {
		frac_clock_offset_refresh_irq(fdev);
	}

	spin_lock_irqsave(&q->cq_lock, flags);
	for (;;) {
		struct frac_cqe *cqe = &q->cq[q->cq_head];
		struct frac_job *job;
		u32 slot, status;

		if (unlikely(q->cq_bad))
			break;
		if (!!(READ_ONCE(cqe->flags) & cpu_to_le16(FRAC_CQE_PHASE)) != q->phase)
			break;
		/* Read the record only after seeing its phase bit flip. */
		dma_rmb();
		if (unlikely(!frac_cqe_expected(q, cqe))) {
			frac_queue_bad_cqe(q, cqe);
			break;
		}
		/*
		 * frac_job_complete's interrupt time is read after the handler
		 * sees the record, so never before the device wrote it nor
		 * before its job ran. A busy handler also consumes records that
		 * arrive while it runs; those get the time of a later look, not
		 * of the handler's entry.
		 */
		if (stamp && !found) {
			/* at least this one: a device un-flipping a phase bit */
			found = max(frac_cq_pending(q), 1u);
			irq_ns = ktime_get_ns();
		}

		slot = q->cq_head;
		status = le32_to_cpu(cqe->status);
		if (!q->part_started) {
			q->part_start = le64_to_cpu(cqe->t_start);
			q->part_started = true;
		}
		if (status && !q->part_status) {
			q->part_status = frac_status_errno(status);
			atomic64_inc(&fdev->errors);
			frac_dbg(fdev, JOB, "q%u seqno %llu status %u err_addr %#llx\n",
				 q->id, le64_to_cpu(cqe->job_id), status,
				 le64_to_cpu(cqe->err_addr));
		}

		job = q->slot_job[slot];
		if (job) {
			q->slot_job[slot] = NULL;
			if (lost_irq) {
				atomic64_inc(&q->lost_irqs);
				if (!lost_first)
					lost_first = job->seqno;
				lost_last = job->seqno;
			}
			frac_job_complete(job, q->part_status, le64_to_cpu(cqe->result),
					  q->part_start, le64_to_cpu(cqe->t_end), irq_ns);
			ended++;
			q->part_status = 0;
			q->part_started = false;
		}

		q->cq_head = (q->cq_head + 1) & (q->size - 1);
		if (!q->cq_head)
			q->phase = !q->phase;
		n++;
		if (stamp)
			found--;
	}
	if (n && !q->cq_db_stopped)
		writel(q->cq_head, fdev->regs + FRAC_DB_CQ_HEAD(q->id));
	spin_unlock_irqrestore(&q->cq_lock, flags);
	/* One line per scan, and few of those: a lost interrupt may be every one. */
	if (lost_first)
		dev_warn_ratelimited(fdev->drm.dev,
				     "q%u: seqno %llu..%llu completed without interrupt\n",
				     q->id, lost_first, lost_last);
	return ended;
}

/* ---- The job timeout: a lost interrupt, or recovery --------------------- */

/*
 * Has the job's hardware fence signalled, with its callbacks done? Under the
 * fence's lock: dma_fence_signal() sets the flag before it runs the
 * callbacks, and holds the lock until they are done.
 */
static bool frac_job_hw_ended(struct frac_job *job)
{
	unsigned long flags;
	bool ended;

	/* run_job() refused it: drm_sched ended it with that errno. */
	if (!job->hw_fence->ops)
		return true;
	spin_lock_irqsave(job->hw_fence->lock, flags);
	ended = test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &job->hw_fence->flags);
	spin_unlock_irqrestore(job->hw_fence->lock, flags);
	return ended;
}

/*
 * The oldest job on @q's ring, with a reference, if it is no later than
 * seqno @last (the job found hung, or a job ahead of it); else NULL: that job
 * has ended since, and one behind it, which has not hung, is not to blame.
 * Jobs end in ring order, so the oldest is the one the others wait behind.
 */
static struct frac_job *frac_queue_oldest_job_get(struct frac_queue *q, u64 last)
{
	struct frac_job *job = NULL;
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&q->cq_lock, flags);
	for (i = 0; i < q->size && !job; i++)
		job = q->slot_job[(q->cq_head + i) & (q->size - 1)];
	if (job && job->seqno <= last)
		kref_get(&job->ref);
	else
		job = NULL;
	spin_unlock_irqrestore(&q->cq_lock, flags);
	return job;
}

/*
 * When @head, the oldest job on @q's ring, started, jiffies: at its ring
 * write, or when the job ahead of it ended, whichever came last. Each
 * timeout gives the head a job timeout from then, as drm_sched's, which
 * restarts at each of its jobs' ends, would with no direct job on the ring
 * (it does not see those end).
 */
static unsigned long frac_queue_head_since(struct frac_queue *q, struct frac_job *head)
{
	unsigned long ended = READ_ONCE(q->ended);

	return time_after(head->written, ended) ? head->written : ended;
}

/* @guilty hung: count it and say so, before its queue is recovered. */
static void frac_queue_timed_out(struct frac_queue *q, struct frac_job *guilty)
{
	atomic64_inc(&q->timeouts);
	frac_warn(q->fdev, "q%u seqno %llu (context %u job %u%s) timed out, resetting queue\n",
		  q->id, guilty->seqno, guilty->ff->id, guilty->id,
		  guilty->direct ? ", direct" : "");
}

/*
 * drm_sched's timeout of @job ran out, but the job at the ring's head has not
 * had its own job timeout (frac_queue_head_since()): direct jobs ahead of
 * @job, which drm_sched does not see end, ended meanwhile, or are still
 * running within theirs. Hand the job back for another timeout, as etnaviv
 * and v3d do in 6.12 (DRM_GPU_SCHED_STAT_NO_HANG came in 6.17): onto the
 * pending list, where it was first, and restart submission (which runs
 * free_job, for a job that ended since). Not when @job is the head and no
 * job ended after its ring write: drm_sched timed it from then, as it
 * should. Before any lost-interrupt scan or timeout event: a job handed
 * back did not hang. @head: the oldest job on the ring, up to @job. Called
 * with submission stopped and reset_lock held.
 */
static bool frac_job_hand_back_locked(struct frac_job *job, struct frac_job *head)
{
	struct frac_queue *q = job->q;

	lockdep_assert_held(&q->fdev->reset_lock);
	if (!((head != job || time_after(READ_ONCE(q->ended), job->written)) &&
	      time_before(jiffies, frac_queue_head_since(q, head) +
			  msecs_to_jiffies(frac_job_timeout_ms))))
		return false;
	spin_lock(&q->sched.job_list_lock);
	list_add(&job->base.list, &q->sched.pending_list);
	spin_unlock(&q->sched.job_list_lock);
	drm_sched_wqueue_start(&q->sched);
	return true;
}

/*
 * A job outlived the job timeout; drm_sched took it off the pending list
 * before calling us. A job ends only through its hardware fence, and only
 * once the ring no longer holds it (frac_queue_process_cq(),
 * frac_queue_fail_inflight()): drm_sched must never free a job the device
 * may still run. The cases:
 *  - it already ended (a reset, or a completion whose interrupt was lost,
 *    which the ring shows): free it ourselves, as drm_sched_job_timedout()
 *    frees a guilty job that completed. drm_sched_stop()/start() would
 *    cancel the innocent jobs still running behind it;
 *  - the ring's head has not had its own job timeout (direct jobs ahead of
 *    it, which drm_sched does not see end): hand it back
 *    (frac_job_hand_back_locked());
 *  - it hung: frac_queue_recover_locked() resets the queue, waits until the device
 *    has quiesced, ends the ring's jobs, and stops and restarts drm_sched
 *    around that;
 *  - the device is being removed: frac_device_stop() ends the ring's jobs;
 *    wait for that, then free it as one that ended.
 */
static enum drm_gpu_sched_stat frac_job_timedout(struct drm_sched_job *sched_job)
{
	struct frac_job *job = to_frac_job(sched_job);
	struct frac_queue *q = job->q;
	struct frac_device *fdev = q->fdev;
	struct frac_job *guilty = NULL, *head = NULL;
	bool ended;
	int idx;

	/* No run_job or direct SUBMIT while we look at the job, or reset the ring. */
	frac_queue_stop_submit(q);

	if (!drm_dev_enter(&fdev->drm, &idx)) {
		/*
		 * Being removed: frac_device_stop() ends every job on the ring
		 * through its hardware fence, with -ENODEV; wait for that and
		 * free the job, as for one that ended.
		 */
		if (!frac_job_hw_ended(job))
			dma_fence_wait(job->hw_fence, false);
		frac_job_hw_ended(job);	/* its callbacks are done */
		frac_job_free(sched_job);
		drm_sched_wqueue_start(&q->sched);
		return DRM_GPU_SCHED_STAT_ENODEV;
	}

	mutex_lock(&fdev->reset_lock);
	fdev->recovering = true;	/* BO puts go to a worker: frac_job_free() */
	ended = frac_job_hw_ended(job);
	if (!ended && !fdev->in_pci_reset) {
		head = frac_queue_oldest_job_get(q, job->seqno);
		if (head && frac_job_hand_back_locked(job, head)) {
			fdev->recovering = false;
			mutex_unlock(&fdev->reset_lock);
			frac_job_put(head);
			drm_dev_exit(idx);
			return DRM_GPU_SCHED_STAT_NOMINAL;
		}
	}
	if (!ended) {
		/* Counts what it finds as lost interrupts. */
		frac_queue_process_cq(q, true);
		ended = frac_job_hw_ended(job);
		trace_frac_job_timeout(fdev->minor, q->id, job->ff->id, job->id, job->seqno,
				       ended);
	}
	if (!ended && fdev->in_pci_reset) {
		/*
		 * Not reached: reset_prepare() quiesced the device and ended
		 * every job on the rings. Were it, the device is quiesced:
		 * ending the job here is safe.
		 */
		frac_queue_fail_inflight(q, job, -ETIMEDOUT, -ECANCELED);
		ended = true;
	}
	/*
	 * The one to blame is the oldest job on the ring: a direct job ahead
	 * of this one, which drm_sched does not time, is what kept it from
	 * running. None up to this one: it has ended since.
	 */
	if (!ended) {
		guilty = frac_queue_oldest_job_get(q, job->seqno);
		ended = !guilty;
	}
	if (ended) {
		frac_job_free(sched_job);
		/* A PCI reset in progress restarts the scheduler when done. */
		if (!fdev->in_pci_reset)
			drm_sched_wqueue_start(&q->sched);
	} else {
		frac_queue_timed_out(q, guilty);
		frac_queue_recover_locked(q, guilty, sched_job);
	}
	fdev->recovering = false;
	mutex_unlock(&fdev->reset_lock);
	if (guilty)
		frac_job_put(guilty);
	if (head)
		frac_job_put(head);
	drm_dev_exit(idx);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

static void frac_queue_direct_timedout(struct work_struct *work)
{
	struct frac_queue *q = container_of(to_delayed_work(work), struct frac_queue,
					    direct_tdr);
	struct frac_device *fdev = q->fdev;
	unsigned long timeout = msecs_to_jiffies(frac_job_timeout_ms), since, now;
	struct frac_job *head, *guilty = NULL;
	u64 seqno;
	int idx;

	spin_lock(&q->ring_lock);
	seqno = q->direct_seqno;
	spin_unlock(&q->ring_lock);
	/* Jobs end in ring order: the last direct job ended once one as late did. */
	if (READ_ONCE(q->seqno_done) >= seqno)
		return;
	/* None on the ring (a recovery ended them): nothing to time. */
	head = frac_queue_oldest_job_get(q, seqno);
	if (!head)
		return;
	/*
	 * drm_sched times a head of its own; a direct job behind it is looked
	 * at again a job timeout later.
	 */
	since = frac_queue_head_since(q, head);
	now = jiffies;
	if (!head->direct || time_before(now, since + timeout)) {
		mod_delayed_work(fdev->tdr_wq, &q->direct_tdr,
				 head->direct ? since + timeout - now : timeout);
		frac_job_put(head);
		return;
	}
	/* Being removed: frac_device_stop() ends every job on the ring. */
	if (!drm_dev_enter(&fdev->drm, &idx)) {
		frac_job_put(head);
		return;
	}
	/*
	 * Before reset_lock, as frac_job_timedout(): it waits for free_job,
	 * which may put BOs whose exporters wait for a job only a recovery
	 * ends. On the ordered tdr_wq, no timeout restarts it meanwhile.
	 */
	frac_queue_stop_submit(q);
	mutex_lock(&fdev->reset_lock);
	/* A PCI reset in progress ended every job on the rings, and restarts them. */
	if (!fdev->in_pci_reset) {
		fdev->recovering = true;
		/* Counts what it finds as lost interrupts. */
		frac_queue_process_cq(q, true);
		/* Still the head: it hung. Else it ended meanwhile, and the new head has not. */
		guilty = frac_queue_oldest_job_get(q, seqno);
		if (guilty == head) {
			trace_frac_job_timeout(fdev->minor, q->id, guilty->ff->id, guilty->id,
					       guilty->seqno, false);
			frac_queue_timed_out(q, guilty);
			frac_queue_recover_locked(q, guilty, NULL);
		} else {
			drm_sched_wqueue_start(&q->sched);
			if (guilty)
				mod_delayed_work(fdev->tdr_wq, &q->direct_tdr, timeout);
		}
		fdev->recovering = false;
	}
	mutex_unlock(&fdev->reset_lock);
	if (guilty)
		frac_job_put(guilty);
	frac_job_put(head);
	drm_dev_exit(idx);
}

/* ---- Scheduler ---------------------------------------------------------- */

static const struct drm_sched_backend_ops frac_sched_ops = {
	.prepare_job = frac_job_wait_ring,
	.run_job = frac_job_run,
	.timedout_job = frac_job_timedout,
	.free_job = frac_job_free,
};

int frac_job_sched_init(struct frac_queue *q)
{
	struct frac_device *fdev = q->fdev;

	/*
	 * In the queue, not devm: fences (sync_files) name their timeline by it
	 * after the PCI device is unbound, for as long as the DRM device lives
	 * (KASAN saw a devm copy read after removal).
	 */
	snprintf(q->name, sizeof(q->name), "frac-q%u", q->id);

	/*
	 * Credits are ring slots: one per command, so the ring never overflows.
	 * Direct jobs, never drm_sched's, hold up to FRAC_DIRECT_CREDITS more.
	 */
	return drm_sched_init(&q->sched, &frac_sched_ops, fdev->submit_wq,
			      DRM_SCHED_PRIORITY_COUNT, q->size - 1 - FRAC_DIRECT_CREDITS, 0,
			      msecs_to_jiffies(frac_job_timeout_ms), fdev->tdr_wq, NULL,
			      q->name, fdev->drm.dev);
}
ALLOW_ERROR_INJECTION(frac_job_sched_init, ERRNO);

/* ---- Setup -------------------------------------------------------------- */

static void frac_queues_release(struct drm_device *dev, void *arg)
{
	struct frac_device *fdev = to_frac_device(dev);
	u32 i;

	for (i = 0; i < fdev->num_queues; i++) {
		disable_delayed_work_sync(&fdev->queues[i].direct_tdr);
		disable_work_sync(&fdev->queues[i].bad_cqe_work);
		drm_sched_fini(&fdev->queues[i].sched);
	}
}

static void frac_submit_wq_destroy(struct drm_device *dev, void *arg)
{
	destroy_workqueue(to_frac_device(dev)->submit_wq);
}

static void frac_tdr_wq_destroy(struct drm_device *dev, void *arg)
{
	destroy_workqueue(to_frac_device(dev)->tdr_wq);
}

int frac_queues_init(struct frac_device *fdev)
{
	struct device *dev = &fdev->pdev->dev;
	u32 i;
	int ret;

	/*
	 * A per-CPU workqueue rather than drm_sched's default unbound ordered
	 * one: run_job runs on the submitting CPU instead of waking a worker
	 * on another CPU. Normal priority, not WQ_HIGHPRI: a high-priority
	 * worker preempts the submitter at every SUBMIT, two context switches
	 * per job; at normal priority it runs when the submitter sleeps or
	 * yields and then pushes every queued job in one go (measured: QD32
	 * NOP jobs 8.2k/s with WQ_HIGHPRI, 19.5k/s without; QD1 unchanged).
	 * Each scheduler's run and free work items never run concurrently
	 * with themselves, which is all drm_sched needs.
	 */
	fdev->submit_wq = alloc_workqueue("frac-submit", WQ_MEM_RECLAIM, 0);
	if (!fdev->submit_wq)
		return -ENOMEM;
	ret = drmm_add_action_or_reset(&fdev->drm, frac_submit_wq_destroy, NULL);
	if (ret)
		return ret;
	fdev->tdr_wq = alloc_ordered_workqueue("frac-tdr", WQ_MEM_RECLAIM);
	if (!fdev->tdr_wq)
		return -ENOMEM;
	ret = drmm_add_action_or_reset(&fdev->drm, frac_tdr_wq_destroy, NULL);
	if (ret)
		return ret;

	for (i = 0; i < fdev->num_queues; i++) {
		struct frac_queue *q = &fdev->queues[i];

		q->fdev = fdev;
		q->id = i;
		q->size = FRAC_RING_ENTRIES;
		spin_lock_init(&q->ring_lock);
		spin_lock_init(&q->cq_lock);
		INIT_DELAYED_WORK(&q->direct_tdr, frac_queue_direct_timedout);
		INIT_WORK(&q->bad_cqe_work, frac_queue_bad_cqe_work);
		q->fence_context = dma_fence_context_alloc(1);

		q->sq = dmam_alloc_coherent(dev, q->size * sizeof(*q->sq), &q->sq_dma,
					    GFP_KERNEL);
		q->cq = dmam_alloc_coherent(dev, q->size * sizeof(*q->cq), &q->cq_dma,
					    GFP_KERNEL);
		q->sgl = dmam_alloc_coherent(dev, q->size * FRAC_SLOT_SGES * sizeof(*q->sgl),
					     &q->sgl_dma, GFP_KERNEL);
		if (!q->sq || !q->cq || !q->sgl) {
			frac_err(fdev, "q%u: ring allocation failed\n", i);
			ret = -ENOMEM;
			goto err_sched_fini;
		}

		ret = frac_job_sched_init(q);
		if (ret) {
			frac_err(fdev, "q%u: scheduler init failed: %d\n", i, ret);
			goto err_sched_fini;
		}
	}

	/* On failure this runs frac_queues_release(), which finis them all. */
	ret = drmm_add_action_or_reset(&fdev->drm, frac_queues_release, NULL);
	if (ret)
		return ret;

	frac_device_init_regs(fdev);
	return 0;

err_sched_fini:
	while (i--)
		drm_sched_fini(&fdev->queues[i].sched);
	return ret;
}
ALLOW_ERROR_INJECTION(frac_queues_init, ERRNO);
