// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * Recovery, as ivpu_pm.c owns it: ending the jobs a ring holds, queue and
 * device resets with the quiesce handshake, the wedged state and the
 * quarantine of its jobs' BOs, the timeout's queue recovery, the reset after
 * a fatal error, the two halves of a PCI reset (FLR, AER slot reset) and the
 * stop at removal. fdev->reset_lock serialises them.
 */

#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>

#include "frac_drv.h"
#include "frac_job.h"
#include "frac_trace.h"

/*
 * End every job the ring holds: @guilty with @guilty_err, the rest with @err.
 * Called with fdev->reset_lock held, once the device queue has quiesced (a
 * reset confirmed by the device), so no record arrives and no DMA of these
 * jobs happens any more.
 */
void frac_queue_fail_inflight(struct frac_queue *q, struct frac_job *guilty,
			      int guilty_err, int err)
{
	unsigned long flags;
	u32 i;

	/* Only a reset, with the device quiesced, may end jobs on a ring. */
	lockdep_assert_held(&q->fdev->reset_lock);
	spin_lock_irqsave(&q->cq_lock, flags);
	/* In ring order: fences on one timeline signal in seqno order. */
	for (i = 0; i < q->size; i++) {
		u32 slot = (q->cq_head + i) & (q->size - 1);
		struct frac_job *job = q->slot_job[slot];

		if (!job)
			continue;
		q->slot_job[slot] = NULL;
		/* No interrupt ended it: irq_ns 0. */
		frac_job_complete(job, job == guilty ? guilty_err : err, 0, 0, 0, 0);
	}
	q->part_status = 0;
	q->part_started = false;
	/* The ring is empty: the next record is checked afresh. */
	q->cq_bad = false;
	/*
	 * And the records the reset left: an interrupt handler running before
	 * frac_queue_hw_start() (or ever, on a wedged device) must find
	 * nothing to consume, or a lost-interrupt scan would count a stale
	 * error record again; cq_db_stopped keeps it from ringing the CQ
	 * doorbell meanwhile.
	 */
	memset(q->cq, 0, q->size * sizeof(*q->cq));
	q->cq_head = 0;
	q->phase = true;
	spin_unlock_irqrestore(&q->cq_lock, flags);
}

/*
 * The quiesce handshake (docs/hw-spec.md 8): a reset is over, and the memory
 * the device's jobs named may be reused, only once the device says it has
 * stopped touching it. A register reading all ones is a device that no
 * longer answers: gone from the bus, or behind a frozen channel (AER), where
 * it may still be there and DMA. Its bus mastering goes off before its jobs
 * are called over (frac_device_hw_reset()), and the slot reset that ends the
 * PCIe recovery restores it.
 */
#define FRAC_RESET_POLL_US	10

/* Reset queue @q in the device and wait until it has quiesced. */
static noinline int frac_queue_hw_reset(struct frac_queue *q)
{
	struct frac_device *fdev = q->fdev;
	u32 sts;
	int ret;

	frac_queue_stop_cq_db(q);
	frac_wr(fdev, FRAC_QREG(q->id, FRAC_Q_CTRL), FRAC_QCTRL_RESET);
	ret = readl_poll_timeout(fdev->regs + FRAC_QREG(q->id, FRAC_Q_STATUS), sts,
				 sts == U32_MAX || !(sts & FRAC_QSTS_RESETTING),
				 FRAC_RESET_POLL_US, FRAC_RESET_TIMEOUT_MS * USEC_PER_MSEC);
	if (ret)
		frac_err(fdev, "q%u still resetting after %u ms\n", q->id,
			 FRAC_RESET_TIMEOUT_MS);
	/* No answer: the device reset, which turns bus mastering off, takes over. */
	else if (sts == U32_MAX)
		ret = -ENODEV;
	return ret;
}
ALLOW_ERROR_INJECTION(frac_queue_hw_reset, ERRNO);

/* Global reset; waits until every queue has quiesced. */
int frac_device_hw_reset(struct frac_device *fdev)
{
	u32 ctrl, sts;
	int ret;

	frac_wr(fdev, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	ret = readl_poll_timeout(fdev->regs + FRAC_REG_CONTROL, ctrl,
				 ctrl == U32_MAX || !(ctrl & FRAC_CTRL_RESET),
				 FRAC_RESET_POLL_US, FRAC_RESET_TIMEOUT_MS * USEC_PER_MSEC);
	if (ret) {
		frac_err(fdev, "device still resetting after %u ms\n", FRAC_RESET_TIMEOUT_MS);
		return ret;
	}
	if (ctrl == U32_MAX) {
		pci_clear_master(fdev->pdev);
		return 0;
	}
	sts = frac_rd(fdev, FRAC_REG_STATUS);
	if (!(sts & FRAC_STS_READY)) {
		frac_err(fdev, "device not ready after reset: status %#x\n", sts);
		return -EIO;
	}
	return 0;
}
ALLOW_ERROR_INJECTION(frac_device_hw_reset, ERRNO);

/* Wait until no reset runs and the device is ready (docs/hw-spec.md 8). */
static int frac_device_wait_ready(struct frac_device *fdev)
{
	u32 ctrl, sts;
	int ret;

	ret = readl_poll_timeout(fdev->regs + FRAC_REG_CONTROL, ctrl,
				 ctrl != U32_MAX && !(ctrl & FRAC_CTRL_RESET),
				 FRAC_RESET_POLL_US, FRAC_RESET_TIMEOUT_MS * USEC_PER_MSEC);
	if (!ret)
		ret = readl_poll_timeout(fdev->regs + FRAC_REG_STATUS, sts,
					 sts != U32_MAX && (sts & FRAC_STS_READY),
					 FRAC_RESET_POLL_US,
					 FRAC_RESET_TIMEOUT_MS * USEC_PER_MSEC);
	if (ret)
		frac_err(fdev, "device not ready %u ms after a reset\n", FRAC_RESET_TIMEOUT_MS);
	return ret;
}

/*
 * No job reaches the device any more: SUBMIT fails with -EIO, run_job ends
 * every job with -EIO, and its bus mastering goes off. User space hears of
 * it once, as drm_dev_wedged_event() tells it on later kernels: a KOBJ_CHANGE
 * uevent of the accel device with WEDGED=rebind, the recovery (unbinding and
 * binding the driver again, or removing the device and rescanning) that
 * brings it back.
 */
static void frac_device_set_wedged_locked(struct frac_device *fdev)
{
	char event[] = "WEDGED=rebind";
	char *envp[2] = { event, NULL };
	bool was = fdev->wedged;
	int idx;
	u32 i;

	lockdep_assert_held(&fdev->reset_lock);
	WRITE_ONCE(fdev->wedged, true);
	/* A direct SUBMIT after the queues restart sees it (frac_jobs_try_direct()). */
	for (i = 0; i < fdev->num_queues; i++) {
		spin_lock(&fdev->queues[i].ring_lock);
		spin_unlock(&fdev->queues[i].ring_lock);
	}
	pci_clear_master(fdev->pdev);
	/* Not for a device being removed: its accel device has left sysfs. */
	if (was || !drm_dev_enter(&fdev->drm, &idx))
		return;
	if (kobject_uevent_env(&fdev->drm.accel->kdev->kobj, KOBJ_CHANGE, envp))
		frac_warn(fdev, "no uevent for the wedged device\n");
	drm_dev_exit(idx);
}

/*
 * The device would not confirm that it stopped. Jobs on its rings must still
 * end, but what they named may yet be written: the device is wedged, and
 * from now on every ended job keeps its BOs (frac_job_free(), and a direct
 * job's end).
 */
static void frac_device_wedge(struct frac_device *fdev)
{
	lockdep_assert_held(&fdev->reset_lock);
	if (!fdev->unquiesced)
		frac_err(fdev, "device did not quiesce: wedged; bus mastering off, BOs of its jobs kept\n");
	WRITE_ONCE(fdev->unquiesced, true);
	frac_device_set_wedged_locked(fdev);
}

/*
 * A wedged device may still write what the job named: keep the job's BO
 * references for good (they are never put, so the memory is never reused),
 * and count them in debugfs. Leaking is the only safe choice left.
 */
void frac_job_quarantine(struct frac_device *fdev, struct frac_job *job)
{
	atomic64_add(job->nbos, &fdev->bos_kept);
	kfree(job->bos);
	job->bos = NULL;
	job->nbos = 0;
}

/*
 * Stop every queue's run_job, reset the device and wait for it to quiesce,
 * then end every job on its rings: @guilty with -ETIMEDOUT, the others with
 * @err. A device that does not quiesce is wedged; its jobs still end, all
 * with -EIO, and keep their BOs (frac_job_free(), frac_job_retire()).
 */
static void frac_device_quiesce_locked(struct frac_device *fdev,
				       struct frac_job *guilty, int err)
{
	u32 i;

	int guilty_err = -ETIMEDOUT;

	lockdep_assert_held(&fdev->reset_lock);
	for (i = 0; i < fdev->num_queues; i++) {
		frac_queue_stop_submit(&fdev->queues[i]);
		frac_queue_stop_cq_db(&fdev->queues[i]);
	}
	if (frac_device_hw_reset(fdev)) {
		/* Their ends do not mean the device stopped: say so. */
		frac_device_wedge(fdev);
		guilty_err = -EIO;
		err = -EIO;
	}
	for (i = 0; i < fdev->num_queues; i++)
		frac_queue_fail_inflight(&fdev->queues[i], guilty, guilty_err, err);
}

/* Restart the rings (unless wedged) and every scheduler but @skip's. */
static void frac_device_resume_locked(struct frac_device *fdev, struct frac_queue *skip)
{
	u32 i;

	lockdep_assert_held(&fdev->reset_lock);
	/* After an FLR or a slot reset the device may still be quiescing. */
	if (!fdev->wedged && frac_device_wait_ready(fdev))
		frac_device_wedge(fdev);
	if (!fdev->wedged) {
		frac_device_init_regs(fdev);
		frac_clock_offset_refresh(fdev);
	}
	/* On a wedged device run_job() ends each job with -EIO. */
	for (i = 0; i < fdev->num_queues; i++)
		if (&fdev->queues[i] != skip)
			drm_sched_wqueue_start(&fdev->queues[i].sched);
}

/*
 * Reset queue @q and end the jobs on its ring: @guilty with @err, the others
 * with -ECANCELED; @reason names the cause in the coredump. See
 * frac_queue_recover_locked().
 */
static void frac_queue_reset_locked(struct frac_queue *q, struct frac_job *guilty,
				    struct drm_sched_job *bad, const char *reason, int err)
{
	struct frac_device *fdev = q->fdev;

	lockdep_assert_held(&fdev->reset_lock);
	if (fdev->in_pci_reset) {
		/*
		 * Not reached: reset_prepare() ended every job on the rings
		 * (@guilty too) before it set the flag. Keep the job where
		 * drm_sched frees it; reset_done() restarts the scheduler.
		 */
		if (bad)
			drm_sched_stop(&q->sched, bad);
		return;
	}
	/* Before the reset: it clears the queue's registers. */
	frac_coredump(fdev, reason, guilty);
	if (!fdev->wedged && !frac_queue_hw_reset(q)) {
		trace_frac_reset(fdev->minor, FRAC_TRACE_RESET_QUEUE, q->id, err);
		/* Counted before the jobs end: their waiters see the count. */
		atomic64_inc(&q->resets);
		frac_queue_fail_inflight(q, guilty, err, -ECANCELED);
		if (bad)
			drm_sched_stop(&q->sched, bad);
		frac_queue_hw_start(q);
		if (bad)
			drm_sched_start(&q->sched);
		else
			drm_sched_wqueue_start(&q->sched);
		frac_dbg(fdev, RESET, "q%u reset\n", q->id);
		return;
	}
	/* The queue would not stop: the whole device must. */
	trace_frac_reset(fdev->minor, FRAC_TRACE_RESET_DEVICE, U32_MAX, err);
	atomic64_inc(&fdev->device_resets);
	frac_device_quiesce_locked(fdev, guilty, -ECANCELED);
	if (!bad) {
		frac_device_resume_locked(fdev, NULL);
		return;
	}
	drm_sched_stop(&q->sched, bad);
	frac_device_resume_locked(fdev, q);
	drm_sched_start(&q->sched);
}

/*
 * Recover queue @q after @guilty timed out, with @q's run_job stopped and
 * @guilty still on its ring: reset
 * the queue and wait for it to quiesce (falling back to a device reset), end
 * the ring's jobs (@guilty -ETIMEDOUT, the others -ECANCELED) through their
 * hardware fences, and only then let drm_sched free them and go on. Jobs not
 * yet on the ring are untouched. @bad is the job drm_sched's timeout took off
 * its pending list, handed back to drm_sched_stop(); @guilty is @bad's job,
 * or a direct job ahead of it on the ring, which drm_sched does not time
 * (frac_job_timedout()). Without @bad (the direct-job watchdog's recovery,
 * frac_queue_direct_timedout()) drm_sched is not stopped: its jobs on the
 * ring end through their hardware fences, as in a device reset, and its
 * run_job is restarted.
 */
void frac_queue_recover_locked(struct frac_queue *q, struct frac_job *guilty,
			       struct drm_sched_job *bad)
{
	frac_queue_reset_locked(q, guilty, bad, "job-timeout", -ETIMEDOUT);
}

/*
 * The completion handler stopped at a record that is not the one it
 * expected (frac_queue_process_cq()): the device may still be writing into
 * the job the record names, or the one the driver would take it for, and
 * no job ended on its word. Reset the queue as after a hang, but with no job
 * to blame: once the device has confirmed the queue quiesced, every job on
 * the ring ends -ECANCELED, drm_sched is not stopped (its jobs end through
 * their hardware fences, as the direct-job watchdog's) and submission goes
 * on. On the ordered tdr_wq, so never concurrently with a timeout of the
 * queue; a reset that came first (a timeout's, a device or PCI reset)
 * emptied the ring and cleared cq_bad, and then nothing is left to do.
 */
void frac_queue_bad_cqe_work(struct work_struct *work)
{
	struct frac_queue *q = container_of(work, struct frac_queue, bad_cqe_work);
	struct frac_device *fdev = q->fdev;
	unsigned long flags;
	bool bad;
	int idx;

	/* Being removed: frac_device_stop() ends every job on the ring. */
	if (!drm_dev_enter(&fdev->drm, &idx))
		return;
	/* Before reset_lock, as the timeouts: no run_job or direct SUBMIT now. */
	frac_queue_stop_submit(q);
	mutex_lock(&fdev->reset_lock);
	spin_lock_irqsave(&q->cq_lock, flags);
	bad = q->cq_bad;
	spin_unlock_irqrestore(&q->cq_lock, flags);
	/* A PCI reset in progress ended every job on the rings, and restarts them. */
	if (!fdev->in_pci_reset) {
		if (bad) {
			fdev->recovering = true;	/* BO puts go to a worker */
			frac_queue_reset_locked(q, NULL, NULL, "bad-completion", -ECANCELED);
			fdev->recovering = false;
		} else {
			drm_sched_wqueue_start(&q->sched);
		}
	}
	mutex_unlock(&fdev->reset_lock);
	drm_dev_exit(idx);
}

/* Global reset: every queue's jobs in flight end with @err. */
void frac_device_reset(struct frac_device *fdev, int err)
{
	mutex_lock(&fdev->reset_lock);
	if (!fdev->in_pci_reset) {
		trace_frac_reset(fdev->minor, FRAC_TRACE_RESET_DEVICE, U32_MAX, err);
		frac_coredump(fdev, "device-error", NULL);
		atomic64_inc(&fdev->device_resets);
		frac_device_quiesce_locked(fdev, NULL, err);
		frac_device_resume_locked(fdev, NULL);
		frac_info(fdev, "device reset\n");
	}
	mutex_unlock(&fdev->reset_lock);
}

void frac_reset_work(struct work_struct *work)
{
	struct frac_device *fdev = container_of(work, struct frac_device, reset_work);
	int idx;

	if (!drm_dev_enter(&fdev->drm, &idx))
		return;
	frac_device_reset(fdev, -EIO);
	drm_dev_exit(idx);
}

/*
 * PCI reset (FLR, AER slot reset) in two halves around the reset itself. The
 * halves come from separate callbacks, so a flag, not a held lock, spans them.
 * The device is quiesced before the reset: jobs on the rings end with @err.
 */
void frac_device_reset_prepare(struct frac_device *fdev, int err)
{
	mutex_lock(&fdev->reset_lock);
	if (!fdev->in_pci_reset) {
		trace_frac_reset(fdev->minor, FRAC_TRACE_RESET_PCI, U32_MAX, err);
		frac_coredump(fdev, "pci-reset", NULL);
		frac_device_quiesce_locked(fdev, NULL, err);
		fdev->in_pci_reset = true;
	}
	mutex_unlock(&fdev->reset_lock);
}

/*
 * The reset is over and it worked. A device wedged only because an earlier
 * PCIe error recovery failed works again; one that never quiesced stays
 * wedged (its kept BOs may still be written) until the driver is unbound.
 */
void frac_device_reset_done(struct frac_device *fdev)
{
	mutex_lock(&fdev->reset_lock);
	if (fdev->in_pci_reset || fdev->recovery_failed) {
		if (fdev->recovery_failed && !fdev->unquiesced) {
			frac_info(fdev, "reset after a failed recovery: no longer wedged\n");
			WRITE_ONCE(fdev->wedged, false);
		}
		fdev->recovery_failed = false;
		frac_device_resume_locked(fdev, NULL);
		fdev->in_pci_reset = false;
		atomic64_inc(&fdev->device_resets);
	}
	mutex_unlock(&fdev->reset_lock);
}

/*
 * A PCIe error recovery failed: the device stays as the error left it, and
 * no callback will restart it. The jobs on its rings ended when the channel
 * froze (frac_device_reset_prepare()); the ones queued since, and every
 * later one, end with -EIO: the device is wedged and the schedulers run
 * again, run_job refusing each job.
 */
static void frac_device_recovery_failed_locked(struct frac_device *fdev)
{
	lockdep_assert_held(&fdev->reset_lock);
	if (!fdev->recovery_failed) {
		frac_err(fdev, "PCIe error recovery failed: wedged\n");
		fdev->recovery_failed = true;
		frac_device_set_wedged_locked(fdev);
	}
	if (fdev->in_pci_reset) {
		frac_device_resume_locked(fdev, NULL);
		fdev->in_pci_reset = false;
	}
}

void frac_device_recovery_failed(struct frac_device *fdev)
{
	mutex_lock(&fdev->reset_lock);
	frac_device_recovery_failed_locked(fdev);
	mutex_unlock(&fdev->reset_lock);
}

/*
 * The bound on a frozen channel's recovery (frac_error_detected()). On 6.12
 * pcie_do_recovery() tells a driver nothing when a recovery fails: after
 * error_detected() either slot_reset() and resume() follow, or nothing does
 * (report_perm_failure_detected() only sends a uevent for the device; later
 * kernels call error_detected() with pci_channel_io_perm_failure, which
 * wedges the device at once). The recovery is one synchronous pass in the
 * AER or DPC handler thread, and what it waits for after error_detected()
 * is bounded: the secondary bus reset, then the link and the device's
 * readiness (pci_bridge_wait_for_secondary_bus(): at most
 * PCIE_RESET_READY_POLL_MS, 60 s, after the link is up, which itself takes
 * at most PCIE_LINK_RETRAIN_TIMEOUT_MS, 1 s). A frozen channel with no
 * resume 70 s after error_detected() has failed its recovery. Should a slow
 * one succeed after all, its resume() clears the wedge
 * (frac_device_reset_done()).
 */
void frac_recovery_work(struct work_struct *work)
{
	struct frac_device *fdev = container_of(to_delayed_work(work), struct frac_device,
						recovery_work);

	mutex_lock(&fdev->reset_lock);
	/* Not if the recovery's resume came meanwhile. */
	if (fdev->in_pci_reset)
		frac_device_recovery_failed_locked(fdev);
	mutex_unlock(&fdev->reset_lock);
}

/*
 * Stop for good (device removal): the device quiesces, its interrupts stop,
 * and jobs on the rings end with -ENODEV.
 */
void frac_device_stop(struct frac_device *fdev)
{
	u32 i;

	mutex_lock(&fdev->reset_lock);
	for (i = 0; i < fdev->num_queues; i++) {
		frac_queue_stop_submit(&fdev->queues[i]);
		frac_queue_stop_cq_db(&fdev->queues[i]);
	}
	/*
	 * A device that will not confirm it stopped (seen: after a failed AER
	 * recovery every register reads 0) loses its bus mastering, so it can
	 * no longer reach host memory; its own memory goes away with it.
	 */
	if (frac_device_hw_reset(fdev)) {
		frac_warn(fdev, "no quiesce before removal: bus mastering off\n");
		pci_clear_master(fdev->pdev);
	}
	for (i = 0; i < fdev->num_queues; i++) {
		if (fdev->queues[i].irq > 0)
			disable_irq(fdev->queues[i].irq);
		frac_queue_fail_inflight(&fdev->queues[i], NULL, -ENODEV, -ENODEV);
	}
	frac_irq_stop(fdev);
	/*
	 * Start the schedulers again, so that the jobs they hold end (run_job()
	 * refuses them now that the device is unplugged) and are freed before
	 * the last file closes and releases the DRM device. A PCI reset whose
	 * recovery failed never got its reset_done() either.
	 */
	for (i = 0; i < fdev->num_queues; i++) {
		struct frac_queue *q = &fdev->queues[i];

		/* A timeout during removal left its job on the stopped scheduler. */
		if (q->sched_stopped)
			drm_sched_start(&q->sched);
		else
			drm_sched_wqueue_start(&q->sched);
		q->sched_stopped = false;
	}
	fdev->in_pci_reset = false;
	mutex_unlock(&fdev->reset_lock);
}
