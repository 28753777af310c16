/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The frac authors
 */
#ifndef __FRAC_JOB_H__
#define __FRAC_JOB_H__

#include <linux/dma-fence.h>
#include <linux/kref.h>
#include <drm/gpu_scheduler.h>

#include <frac_accel.h>

#include "frac_drv.h"

/* A job's hardware fence, on its queue's timeline (frac_queue.c) */
struct frac_fence {
	struct dma_fence base;
	struct frac_queue *q;
	u32 qid;			/* its timeline's name, without the queue */
	/*
	 * The fence's own lock, not its queue's: a direct job publishes this
	 * fence (frac_submit_push()), so a sync_file or another driver's dma_resv
	 * may hold it after the device, and the queue with it, are gone.
	 */
	spinlock_t lock;
};

/* An operand resolved at submit time: the BO holds a reference. */
struct frac_operand {
	struct drm_gem_object *bo;
	u64 offset;
	u64 len;
};

struct frac_cmd {
	struct drm_frac_cmd args;
	struct frac_operand src, dst, aux;
};

/**
 * struct frac_job - one submitted job: a command list for one queue
 *
 * References: the scheduler holds one from submit until free_job (a direct
 * job: its end, frac_job_retire()), the file's job table one until the job
 * is waited for or the file closes.
 */
struct frac_job {
	struct drm_sched_job base;
	struct kref ref;
	struct frac_device *fdev;
	struct frac_file *ff;
	struct frac_queue *q;
	u32 id;				/* per file, for DRM_IOCTL_FRAC_WAIT */
	u64 seqno;			/* per queue, on the device's descriptors */
	u32 ring_first;			/* ring slot of its first descriptor */
	struct llist_node put_node;	/* on fdev->put_list or reap_list */
	struct dma_fence *hw_fence;	/* signalled from the completion IRQ */
	struct dma_fence *finished;	/* the scheduler's finished fence; none if direct */
	/*
	 * Direct submission (frac_jobs_try_direct()): SUBMIT wrote the job to
	 * the ring, and it is never drm_sched's (frac_submit_push()). Set under
	 * the submit lock before WAIT can find the job, never cleared.
	 */
	bool direct;
	/*
	 * It reads (@sync_in: that many bytes) or writes (@sync_out) a BO that
	 * the device reaches through bounce buffers: synced before its ring
	 * write, which only an idle ring gets, or after its end
	 * (frac_job_sync()). Set by the SUBMIT that parses it.
	 */
	u64 sync_in;
	bool sync_out;
	bool ring_waited;		/* frac_job_wait_ring() returned its fence */
	/*
	 * Its ring write, jiffies: when it started, if the ring was idle.
	 * Written under ring_lock before the job is in slot_job[] (under
	 * cq_lock), read by the timeouts after they found it there.
	 */
	unsigned long written;
	/* Protected by the queue's ring_lock; cleared by run_job or free_job */
	bool queued;			/* counted in ff->queued[][] */
	/* A direct job's end: its ring slots freed, its BOs put (frac_job_retire()) */
	struct dma_fence_cb release_cb;
	bool keep_bos;			/* ...and a wedged device's recovery signalled it */
	/*
	 * A drm_sched job's: wakes its file's poll() waiters when its finished
	 * fence signals, however the job ends (run, refused by run_job, its
	 * entity killed)
	 */
	struct dma_fence_cb end_cb;

	/* Written before hw_fence signals, read after */
	int status;
	u64 result;
	u64 t_start;
	u64 t_end;

	u64 bytes;			/* operand bytes of all commands */
	u32 prio;
	/*
	 * For frac_job_done, filled only while it is enabled: submit by the
	 * ioctl before the push, run by run_job, the rest by frac_job_complete
	 * under cq_lock; each written before the next stage can begin.
	 */
	struct frac_job_stamps stamps;

	struct drm_gem_object **bos;	/* unique BOs, for reservations */
	u32 nbos;
	u32 ncmds;
	struct frac_cmd cmds[] __counted_by(ncmds);
};

static inline struct frac_job *to_frac_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct frac_job, base);
}

void frac_job_put(struct frac_job *job);
void frac_job_free(struct drm_sched_job *sched_job);

/* frac_queue.c: submission */
bool frac_job_deps_signaled(struct frac_job *job);
u32 frac_jobs_try_direct(struct frac_job **jobs, u32 count, u64 ready);
void frac_job_unqueue(struct frac_job *job);
void frac_queue_stop_submit(struct frac_queue *q);

/* The fence WAIT and poll look at: the hardware's for a direct job */
static inline struct dma_fence *frac_job_end_fence(struct frac_job *job)
{
	return job->direct ? job->hw_fence : job->finished;
}

#endif /* __FRAC_JOB_H__ */
