/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The frac authors
 */
#ifndef __FRAC_DRV_H__
#define __FRAC_DRV_H__

#include <linux/dma-direction.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>

#include "frac_hw.h"

/*
 * The steps of probe, BO creation, SUBMIT and reset that can fail carry
 * ALLOW_ERROR_INJECTION: on a kernel with CONFIG_FUNCTION_ERROR_INJECTION,
 * fail_function makes them fail one by one (tests/guest/errinj.sh); elsewhere
 * the macro is empty. The static ones are noinline, so that every call goes
 * through the function's entry, where the injection happens.
 */
#include <linux/error-injection.h>

#define DRIVER_NAME	"frac"
#define DRIVER_DESC	"FRAC-1 AI inference accelerator"

#define FRAC_RING_ENTRIES	256
/* SG entries per ring slot: two per operand (a partial first one, a chain) */
#define FRAC_SLOT_SGES		6
#define FRAC_NUM_PRIO		3
/*
 * Ring slots that jobs written by SUBMIT itself (direct submission) may hold
 * until they end; the scheduler's credits are the rest of the ring, so
 * together they never overflow it.
 */
#define FRAC_DIRECT_CREDITS	DRM_FRAC_MAX_CMDS
/*
 * reap_work's delay: only for a client that stops calling the driver, its
 * SUBMITs and WAITs reap the rest. Long enough that reap_work stays rare
 * while jobs keep coming.
 */
#define FRAC_REAP_DELAY_MS	20
/* A frozen channel's recovery failed if resume() has not come by then (frac_recovery_work()) */
#define FRAC_PCI_RECOVERY_TIMEOUT_MS	70000

#define FRAC_DBG_REG	BIT(0)
#define FRAC_DBG_IRQ	BIT(1)
#define FRAC_DBG_JOB	BIT(2)
#define FRAC_DBG_BO	BIT(3)
#define FRAC_DBG_RESET	BIT(4)

extern unsigned int frac_dbg_mask;

#define frac_err(fdev, fmt, ...) \
	drm_err(&(fdev)->drm, "%s(): " fmt, __func__, ##__VA_ARGS__)
#define frac_warn(fdev, fmt, ...) \
	drm_warn(&(fdev)->drm, "%s(): " fmt, __func__, ##__VA_ARGS__)
#define frac_info(fdev, fmt, ...) drm_info(&(fdev)->drm, fmt, ##__VA_ARGS__)
#define frac_dbg(fdev, type, fmt, ...) do {					\
	if (unlikely(FRAC_DBG_##type & frac_dbg_mask))				\
		dev_dbg((fdev)->drm.dev, "[%s] " fmt, #type, ##__VA_ARGS__);	\
} while (0)

struct frac_device;
struct frac_job;

/**
 * struct frac_queue - one hardware submission queue and its scheduler
 */
struct frac_queue {
	struct frac_device *fdev;
	u32 id;
	u32 size;
	char name[16];			/* "frac-qN": the scheduler's and fences' timeline */

	struct frac_desc *sq;
	dma_addr_t sq_dma;
	struct frac_cqe *cq;
	dma_addr_t cq_dma;
	struct frac_sge *sgl;		/* FRAC_SLOT_SGES per slot */
	dma_addr_t sgl_dma;

	/* Protected by fdev->reset_lock: a timeout during removal stopped sched */
	bool sched_stopped;

	/*
	 * Protects the submission side: sq_tail, seqno, the descriptors and SG
	 * areas, the SQ doorbell, the frac_file's queued[] counts of this queue
	 * and the direct-job watchdog's seqno. Taken by run_job
	 * (frac_job_ring_locked()), by SUBMIT for its jobs' ring writes and
	 * doorbell (frac_jobs_try_direct()), and by the watchdog;
	 * frac_queue_stop_submit() uses it to wait out a direct SUBMIT.
	 */
	spinlock_t ring_lock;
	u32 sq_tail;
	u64 seqno;			/* hardware job sequence number */
	/* Slots of direct jobs not yet ended (<= FRAC_DIRECT_CREDITS) */
	atomic_t direct_credits;
	/*
	 * Per priority: jobs of every file pushed to drm_sched and not yet
	 * written by run_job (the sums of the files' queued[][] of this
	 * queue). Protected by ring_lock. No job goes direct past a queued
	 * job of a higher priority.
	 */
	u32 queued[FRAC_NUM_PRIO];
	/* Seqno of the last job that ended; written under cq_lock, read without */
	u64 seqno_done;
	/*
	 * When it ended (or the ring was started), jiffies: the job behind it
	 * started then at the latest. Written under cq_lock, read without.
	 */
	unsigned long ended;

	/*
	 * Protects cq_head, phase, cq_db_stopped, cq_bad, slot_job[], the
	 * partial-job state below, and orders the CQ_HEAD doorbell (written
	 * under it).
	 */
	spinlock_t cq_lock;
	u32 cq_head;
	bool phase;
	/*
	 * When set (under cq_lock), the interrupt handler does not write
	 * CQ_HEAD: set before the queue (or the device) is reset, cleared by
	 * frac_queue_hw_start(). A CQ_HEAD write reaching a queue that the reset
	 * left disabled is a BAD_DOORBELL device error.
	 */
	bool cq_db_stopped;
	/*
	 * Set (under cq_lock) when the record at cq_head is not the one the
	 * driver expects there: the handler consumes nothing more until
	 * frac_queue_fail_inflight() has emptied the ring after the queue's
	 * reset, which bad_cqe_work runs (frac_queue_bad_cqe_work()).
	 */
	bool cq_bad;
	struct frac_job *slot_job[FRAC_RING_ENTRIES];	/* job ending in slot */
	int part_status;		/* first error of the job in progress */
	u64 part_start;			/* t_start of its first command */
	bool part_started;

	u64 fence_context;		/* of its hardware fences */

	struct drm_gpu_scheduler sched;
	/*
	 * The direct-job watchdog (frac_queue_direct_timedout()), for the jobs
	 * drm_sched never times: the seqno of the last direct job written to
	 * the ring. Protected by ring_lock.
	 */
	u64 direct_seqno;
	struct delayed_work direct_tdr;
	/* Resets the queue after a bad record, on tdr_wq: frac_queue_bad_cqe_work() */
	struct work_struct bad_cqe_work;
	int irq;
	struct irq_data *irqd;		/* of @irq: its effective affinity */

	/* Counters, for sysfs and debugfs */
	atomic64_t jobs_submitted;
	atomic64_t jobs_direct;		/* of them, written to the ring by SUBMIT */
	atomic64_t jobs_completed;
	atomic64_t jobs_failed;
	atomic64_t timeouts;
	atomic64_t lost_irqs;
	atomic64_t resets;
	atomic64_t bad_cqes;		/* records not the expected ones */
};

/**
 * struct frac_device - a FRAC-1 device
 */
struct frac_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;		/* BAR0 registers and doorbells */
	resource_size_t devmem_base;	/* BAR2 bus address */
	void __iomem *devmem_va;	/* BAR2, write-combined: clearing new BOs */
	u64 devmem_size;

	u32 minor;			/* accel minor, the "dev" of trace events */
	u32 num_queues;
	u32 features;
	u32 hw_version;
	u32 gemm_max_dim;
	u32 sgl_max;			/* SG entries per operand, chains included */
	int err_irq;
	/*
	 * Set under reset_lock at removal (frac_irq_stop()), read by the
	 * MSI/INTx handler: the device's interrupts are masked for good
	 */
	bool irq_stopped;

	/* Protects devmem_mm */
	struct mutex devmem_lock;
	struct drm_mm devmem_mm;

	/*
	 * Protects imports: the BOs imported from other exporters' dma-bufs,
	 * each on the list (by its import_link) from its import to its free,
	 * so that a dma-buf imported into several files is attached and
	 * mapped for the device once.
	 */
	struct mutex import_lock;
	struct list_head imports;

	/*
	 * Protects dma_bos: the host BOs (our own and imports) holding DMA
	 * mappings for the device and a device SG list, each on the list by
	 * its dma_link from its mapping on. The BO's free or the device's
	 * removal (frac_gem_unplug()), whichever comes first, takes it off
	 * under the lock and then, without it, gives the mappings back once
	 * (frac_bo_dma_release()). A leaf lock, never held over an unmap: an
	 * import's takes the exporter's reservation lock, and a BO may be
	 * freed with another held. Mappings are made only inside
	 * drm_dev_enter(), so none comes after the removal's pass.
	 */
	struct mutex dma_lock;
	struct list_head dma_bos;
	/* BOs put on dma_bos whose mappings are not given back yet; removal waits for 0 */
	atomic_t dma_bos_mapped;
	wait_queue_head_t dma_wq;

	/*
	 * Serialises queue and device resets and removal; protects
	 * in_pci_reset, wedged and unquiesced (written under it, read anywhere
	 * with READ_ONCE), recovery_failed and each queue's sched_stopped.
	 * Lock order: reset_lock, then a queue's cq_lock, then a hardware
	 * fence's lock.
	 */
	struct mutex reset_lock;
	bool in_pci_reset;		/* between reset_prepare and reset_done */
	bool wedged;			/* no job reaches the device: -EIO */
	bool unquiesced;		/* ...because a reset never quiesced: keep job BOs */
	bool recovery_failed;		/* ...because a PCIe error recovery failed */
	/* Wedges the device if no resume follows a frozen channel in time */
	struct delayed_work recovery_work;
	bool recovering;		/* a TDR recovery runs: defer BO puts */
	atomic64_t bos_kept;		/* BO references kept because wedged */
	u32 dma_bits;			/* DMA mask width, for DMA_BITS */
	struct work_struct reset_work;	/* device reset after a fatal error */
	atomic64_t device_resets;
	atomic64_t errors;
	atomic64_t coredumps;		/* devcoredumps taken */
	/* Captured under reset_lock, handed on by coredump_work (frac_coredump.c) */
	char *coredump_buf;
	size_t coredump_len;
	unsigned long coredump_busy;	/* bit 0: coredump_buf in use */
	struct work_struct coredump_work;

	/*
	 * Jobs handed to a scheduler and not yet freed by it, and direct jobs
	 * not yet retired (frac_job_retire()); removal waits for 0
	 */
	atomic_t sched_jobs;
	wait_queue_head_t sched_jobs_wq;
	/* Jobs freed during a recovery: put_work retires them */
	struct llist_head put_list;
	struct work_struct put_work;
	/*
	 * Direct jobs that ended: the next SUBMIT, WAIT or BO_CREATE, or
	 * reap_work FRAC_REAP_DELAY_MS after the first, retires them
	 */
	struct llist_head reap_list;
	struct delayed_work reap_work;
	/*
	 * Held by a reaper from its taking of reap_list to its last retire:
	 * WAIT and BO_CREATE take it to wait out a reap that another thread
	 * is in the middle of (frac_job_reap_sync()).
	 */
	struct mutex reap_lock;

	struct xarray contexts;		/* ids of open files (reserved entries); own lock */
	u32 context_next;

	/*
	 * Protects the device's HI latches: a 64-bit register's LO read latches
	 * its HI half for the HI read that follows (frac_rd64()), and a reader
	 * between another's two reads would hand it its own HI.
	 */
	raw_spinlock_t latch_lock;
	/* CLOCK_MONOTONIC ns minus device clock ns, refreshed every second */
	s64 clock_offset;
	unsigned long clock_sampled;	/* jiffies of the last sample */
	/* The clock work's shortest bracket, ns: the interrupt handler's yardstick */
	u64 clock_rtt_ref;
	/*
	 * Jobs whose device times moved the offset (frac_job_clock_offset()),
	 * and the largest move, ns: debugfs "clock". Written without a lock.
	 */
	atomic64_t clock_moves;
	u64 clock_move_max;
	struct delayed_work clock_work;

	/* run_job and free_job of every queue's scheduler */
	struct workqueue_struct *submit_wq;
	/*
	 * Ordered: drm_sched's job timeouts of every queue and the direct-job
	 * watchdogs (frac_queue_direct_timedout()) run one at a time, so that
	 * no recovery restarts a queue's submission that another has stopped.
	 */
	struct workqueue_struct *tdr_wq;

	struct frac_queue queues[FRAC_MAX_QUEUES];
	/* sysfs frac_queues/ and its queues' directories (frac_sysfs.c) */
	struct kobject *queues_kobj;
	struct kobject *queue_kobjs[FRAC_MAX_QUEUES];
};

/**
 * struct frac_file - per-open-file context
 */
struct frac_file {
	struct kref ref;		/* held by the open file and by its jobs */
	struct rcu_head rcu;		/* freed after a grace period: frac_job_complete() */
	/*
	 * Held from drm_sched_job_arm() to drm_sched_entity_push_job(), and
	 * over a direct SUBMIT's check and ring write (frac_submit_push())
	 */
	struct mutex submit_lock;
	struct frac_device *fdev;
	u32 id;
	struct drm_sched_entity entity[FRAC_MAX_QUEUES][FRAC_NUM_PRIO];
	/*
	 * Per entity: jobs pushed to drm_sched and not yet written to the ring
	 * by run_job. Protected by the queue's ring_lock. A job goes direct
	 * only when its entity has none, so an entity's jobs reach the ring in
	 * their submission order.
	 */
	u32 queued[FRAC_MAX_QUEUES][FRAC_NUM_PRIO];
	struct xarray jobs;		/* job id -> frac_job, unwaited */
	u32 job_next;
	/* Protected by the jobs xarray's lock */
	u32 jobs_unwaited;		/* ids in @jobs */
	u32 job_reserved;		/* the last id released by WAIT, kept reserved; 0: none */
	wait_queue_head_t wq;		/* woken when a job of this file ends */
	atomic64_t engine_ns[FRAC_MAX_QUEUES];	/* device time, for fdinfo */
	atomic64_t jobs_done;		/* ended without error, for fdinfo */
	atomic64_t jobs_failed;		/* ended with an error on the device, for fdinfo */
};

/**
 * struct frac_bo - buffer object: shmem pages, or a range of device memory
 */
struct frac_bo {
	struct drm_gem_shmem_object base;
	u32 flags;			/* DRM_FRAC_BO_* */
	/*
	 * Host BOs: the pages mapped for the device in the BO's direction
	 * (not the shmem helper's sgt, which it maps and unmaps bidirectional),
	 * and its DMA segments as a device SG list (coherent memory)
	 */
	struct sg_table *dma_sgt;
	enum dma_data_direction dir;
	/*
	 * Host BOs: the device reaches a bounce copy of some of the pages
	 * (swiotlb), which each job syncs (frac_bo_sync()). Set at the mapping.
	 */
	bool need_sync;
	bool pinned;			/* drm_gem_shmem_pin() done: unpinned at free */
	struct frac_sge *sgl;
	dma_addr_t sgl_dma;
	u32 nsegs;
	/* Device BOs */
	struct drm_mm_node node;
	/*
	 * What the BO's mappings show once the device is gone: one zeroed
	 * page, set once (cmpxchg) by the first fault after the unplug and
	 * freed with the BO (its VMAs hold a reference, so none maps it then).
	 */
	struct page *dummy;
	/* Imported BOs: on frac_device.imports (import_lock), else empty */
	struct list_head import_link;
	/*
	 * Host BOs: on frac_device.dma_bos (dma_lock) while dma_sgt, sgl or an
	 * import's mapping (base.sgt) is the BO's to give back, else empty
	 */
	struct list_head dma_link;
	/*
	 * An import detached from its exporter at the device's removal
	 * (import_attach NULL from then on): the dma-buf reference that the
	 * attachment held, put at the BO's free (the BO's resv is the dma-buf's)
	 */
	struct dma_buf *detached;
};

static inline struct frac_device *to_frac_device(struct drm_device *dev)
{
	return container_of(dev, struct frac_device, drm);
}

static inline struct frac_bo *to_frac_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct frac_bo, base.base);
}

static inline u32 frac_rd(struct frac_device *fdev, u32 reg)
{
	return readl(fdev->regs + reg);
}

static inline void frac_wr(struct frac_device *fdev, u32 reg, u32 val)
{
	writel(val, fdev->regs + reg);
}

/* A latched 64-bit register: LO, then HI, as one pair under latch_lock. */
static inline u64 frac_rd64(struct frac_device *fdev, u32 lo)
{
	unsigned long flags;
	u32 l, h;

	raw_spin_lock_irqsave(&fdev->latch_lock, flags);
	l = frac_rd(fdev, lo);
	h = frac_rd(fdev, lo + 4);
	raw_spin_unlock_irqrestore(&fdev->latch_lock, flags);
	return (u64)h << 32 | l;
}

/* frac_drv.c */
#define FRAC_CLOCK_BRACKETS	3	/* round trips per clock offset sample (one in the IRQ) */
/* An IRQ-path bracket longer than twice the clock work's shortest, plus this, is not used. */
#define FRAC_CLOCK_RTT_SLACK_NS	2000
extern const struct drm_driver frac_drm_driver;
u64 frac_device_clock(struct frac_device *fdev);
s64 frac_clock_offset_sample(struct frac_device *fdev, int brackets, u64 *rtt);
void frac_clock_offset_refresh(struct frac_device *fdev);
void frac_clock_work(struct work_struct *work);

/* frac_queue.c */
int frac_queues_init(struct frac_device *fdev);
void frac_queue_hw_start(struct frac_queue *q);
void frac_queue_stop_cq_db(struct frac_queue *q);
void frac_device_init_regs(struct frac_device *fdev);
int frac_job_sched_init(struct frac_queue *q);
u32 frac_queue_process_cq(struct frac_queue *q, bool lost_irq);
void frac_job_complete(struct frac_job *job, int status, u64 result,
		       u64 t_start, u64 t_end, u64 irq_ns);

/* frac_reset.c */
void frac_queue_fail_inflight(struct frac_queue *q, struct frac_job *guilty,
			      int guilty_err, int err);
void frac_queue_recover_locked(struct frac_queue *q, struct frac_job *guilty,
			       struct drm_sched_job *bad);
int frac_device_hw_reset(struct frac_device *fdev);
void frac_device_reset(struct frac_device *fdev, int err);
void frac_device_reset_prepare(struct frac_device *fdev, int err);
void frac_device_reset_done(struct frac_device *fdev);
void frac_device_stop(struct frac_device *fdev);
void frac_reset_work(struct work_struct *work);
void frac_queue_bad_cqe_work(struct work_struct *work);
void frac_recovery_work(struct work_struct *work);
void frac_device_recovery_failed(struct frac_device *fdev);
void frac_job_quarantine(struct frac_device *fdev, struct frac_job *job);

/* frac_irq.c */
int frac_irq_init(struct frac_device *fdev);
void frac_irq_stop(struct frac_device *fdev);
u32 frac_local_queue(struct frac_device *fdev);

/* frac_gem.c */
struct drm_gem_object *frac_gem_create_object(struct drm_device *dev, size_t size);
struct drm_gem_object *frac_gem_prime_import(struct drm_device *dev, struct dma_buf *dma_buf);
struct drm_gem_object *frac_gem_prime_import_sg_table(struct drm_device *dev,
						      struct dma_buf_attachment *attach,
						      struct sg_table *sgt);
int frac_bo_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int frac_bo_info_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
bool frac_bo_is_devmem(struct drm_gem_object *obj);
void frac_bo_sync(struct frac_device *fdev, struct frac_bo *bo, u64 offset, u64 len,
		  bool for_cpu, bool may_sleep);
void frac_gem_unplug(struct frac_device *fdev);

/* frac_job.c */
int frac_submit_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int frac_submit_batch_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int frac_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int frac_file_jobs_init(struct frac_file *ff);
void frac_file_put(struct frac_file *ff);
void frac_file_jobs_fini(struct frac_file *ff);
void frac_job_put_work(struct work_struct *work);
void frac_job_reap(struct frac_device *fdev);
void frac_job_reap_work(struct work_struct *work);
void frac_job_reap_sync(struct frac_device *fdev);
__poll_t frac_poll(struct file *filp, struct poll_table_struct *wait);

/* frac_coredump.c */
#if IS_ENABLED(CONFIG_DEV_COREDUMP)
int frac_coredump_init(struct frac_device *fdev);
void frac_coredump_flush(struct frac_device *fdev);
void frac_coredump(struct frac_device *fdev, const char *reason, struct frac_job *guilty);
#else
static inline int frac_coredump_init(struct frac_device *fdev)
{
	return 0;
}

static inline void frac_coredump_flush(struct frac_device *fdev)
{
}

static inline void frac_coredump(struct frac_device *fdev, const char *reason,
				 struct frac_job *guilty)
{
}
#endif

/* frac_debugfs.c */
void frac_debugfs_init(struct frac_device *fdev);

/* frac_sysfs.c */
int frac_sysfs_init(struct frac_device *fdev);

#endif /* __FRAC_DRV_H__ */
