// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * PCI: probe and remove, BARs and DMA mask, capabilities read from the device,
 * PCIe error recovery and function level reset.
 */

#include <linux/dma-mapping.h>
#include <linux/iopoll.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "frac_drv.h"

/* Learn what the device is from its registers; assume nothing. */
static noinline int frac_hw_discover(struct frac_device *fdev)
{
	struct pci_dev *pdev = fdev->pdev;
	u32 id, cap0, bar_queues;
	u64 devmem;
	int ret;

	id = frac_rd(fdev, FRAC_REG_ID);
	if (id != FRAC_ID_MAGIC) {
		frac_err(fdev, "unexpected ID register %#x\n", id);
		return -ENODEV;
	}
	fdev->hw_version = frac_rd(fdev, FRAC_REG_VERSION);
	if (fdev->hw_version >> 16 != FRAC_VERSION_MAJOR) {
		frac_err(fdev, "unsupported hardware version %u.%u\n",
			 fdev->hw_version >> 16, fdev->hw_version & 0xffff);
		return -ENODEV;
	}
	ret = frac_device_hw_reset(fdev);
	if (ret) {
		frac_err(fdev, "device not ready after reset\n");
		return ret;
	}

	cap0 = frac_rd(fdev, FRAC_REG_CAP0);
	bar_queues = FRAC_CAP0_NQUEUES(cap0);
	if (!bar_queues || bar_queues > FRAC_MAX_QUEUES) {
		frac_err(fdev, "bad queue count %u\n", bar_queues);
		return -ENODEV;
	}
	if (BIT(FRAC_CAP0_RING_MAX_ORDER(cap0)) < FRAC_RING_ENTRIES) {
		frac_err(fdev, "rings of %lu entries unsupported\n",
			 BIT(FRAC_CAP0_RING_MAX_ORDER(cap0)));
		return -ENODEV;
	}
	fdev->num_queues = bar_queues;
	fdev->features = frac_rd(fdev, FRAC_REG_CAP1);
	fdev->gemm_max_dim = frac_rd(fdev, FRAC_REG_GEMM_MAX_DIM);
	fdev->sgl_max = frac_rd(fdev, FRAC_REG_SGL_MAX);
	if (fdev->sgl_max < 16) {
		frac_err(fdev, "SG lists of %u entries too short\n", fdev->sgl_max);
		return -ENODEV;
	}

	devmem = frac_rd64(fdev, FRAC_REG_DEVMEM_SIZE_LO);
	fdev->devmem_base = pci_resource_start(pdev, FRAC_BAR_MEM);
	fdev->devmem_size = min_t(u64, devmem, pci_resource_len(pdev, FRAC_BAR_MEM));
	if (!(fdev->features & FRAC_FEAT_DEVMEM))
		fdev->devmem_size = 0;
	return 0;
}
ALLOW_ERROR_INJECTION(frac_hw_discover, ERRNO);

static void frac_devmem_fini(struct drm_device *dev, void *arg)
{
	drm_mm_takedown(&to_frac_device(dev)->devmem_mm);
}

static int frac_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct frac_device *fdev;
	int ret;

	fdev = devm_drm_dev_alloc(&pdev->dev, &frac_drm_driver, struct frac_device, drm);
	if (IS_ERR(fdev))
		return PTR_ERR(fdev);
	fdev->pdev = pdev;
	raw_spin_lock_init(&fdev->latch_lock);
	pci_set_drvdata(pdev, fdev);

	ret = pcim_enable_device(pdev);
	if (ret) {
		frac_err(fdev, "pcim_enable_device failed: %d\n", ret);
		return ret;
	}
	pci_set_master(pdev);

	fdev->regs = pcim_iomap_region(pdev, FRAC_BAR_REGS, DRIVER_NAME);
	if (IS_ERR(fdev->regs)) {
		frac_err(fdev, "cannot map BAR%d\n", FRAC_BAR_REGS);
		return PTR_ERR(fdev->regs);
	}
	ret = pcim_request_region(pdev, FRAC_BAR_MEM, DRIVER_NAME);
	if (ret) {
		frac_err(fdev, "cannot claim BAR%d: %d\n", FRAC_BAR_MEM, ret);
		return ret;
	}

	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(32));
	if (ret) {
		frac_err(fdev, "no usable DMA mask: %d\n", ret);
		return ret;
	}
	dma_set_max_seg_size(&pdev->dev, SZ_2G);
	/* Every reset writes it to DMA_BITS again (frac_device_init_regs()). */
	fdev->dma_bits = fls64(dma_get_mask(&pdev->dev));

	ret = frac_hw_discover(fdev);
	if (ret)
		return ret;

	if (fdev->devmem_size) {
		fdev->devmem_va = devm_ioremap_wc(&pdev->dev, fdev->devmem_base,
						  fdev->devmem_size);
		if (!fdev->devmem_va) {
			frac_err(fdev, "cannot map BAR%d\n", FRAC_BAR_MEM);
			return -ENOMEM;
		}
	}

	ret = drmm_mutex_init(&fdev->drm, &fdev->reset_lock);
	if (!ret)
		ret = drmm_mutex_init(&fdev->drm, &fdev->reap_lock);
	if (!ret)
		ret = drmm_mutex_init(&fdev->drm, &fdev->devmem_lock);
	if (!ret)
		ret = drmm_mutex_init(&fdev->drm, &fdev->import_lock);
	if (!ret)
		ret = drmm_mutex_init(&fdev->drm, &fdev->dma_lock);
	if (ret)
		return ret;
	INIT_LIST_HEAD(&fdev->imports);
	INIT_LIST_HEAD(&fdev->dma_bos);
	init_waitqueue_head(&fdev->dma_wq);
	drm_mm_init(&fdev->devmem_mm, 0, fdev->devmem_size);
	ret = drmm_add_action_or_reset(&fdev->drm, frac_devmem_fini, NULL);
	if (ret)
		return ret;
	INIT_WORK(&fdev->reset_work, frac_reset_work);
	INIT_DELAYED_WORK(&fdev->recovery_work, frac_recovery_work);
	INIT_WORK(&fdev->put_work, frac_job_put_work);
	init_llist_head(&fdev->put_list);
	INIT_DELAYED_WORK(&fdev->reap_work, frac_job_reap_work);
	init_llist_head(&fdev->reap_list);
	init_waitqueue_head(&fdev->sched_jobs_wq);
	INIT_DELAYED_WORK(&fdev->clock_work, frac_clock_work);
	xa_init_flags(&fdev->contexts, XA_FLAGS_ALLOC1);

	ret = frac_coredump_init(fdev);
	if (ret)
		return ret;
	ret = frac_queues_init(fdev);
	if (ret)
		return ret;
	ret = frac_irq_init(fdev);
	if (ret)
		goto err_stop;

	ret = frac_sysfs_init(fdev);
	if (ret)
		goto err_stop;

	ret = drm_dev_register(&fdev->drm, 0);
	if (ret) {
		frac_err(fdev, "drm_dev_register failed: %d\n", ret);
		goto err_stop;
	}
	fdev->minor = fdev->drm.accel->index;
	frac_debugfs_init(fdev);
	pci_save_state(pdev);
	frac_clock_offset_refresh(fdev);
	schedule_delayed_work(&fdev->clock_work, HZ);

	frac_info(fdev, "FRAC-1 v%u.%u: %u queues, %llu MiB device memory, %s\n",
		  fdev->hw_version >> 16, fdev->hw_version & 0xffff, fdev->num_queues,
		  fdev->devmem_size >> 20, fdev->queues[0].irq > 0 ? "MSI-X" : "MSI/INTx");
	return 0;

err_stop:
	/* Nothing was submitted yet; the rings are freed after this returns. */
	frac_device_hw_reset(fdev);
	return ret;
}

static void frac_remove(struct pci_dev *pdev)
{
	struct frac_device *fdev = pci_get_drvdata(pdev);

	/* Open files now get -ENODEV; jobs on the rings end with -ENODEV. */
	drm_dev_unplug(&fdev->drm);
	cancel_work_sync(&fdev->reset_work);
	cancel_delayed_work_sync(&fdev->recovery_work);
	cancel_delayed_work_sync(&fdev->clock_work);
	frac_device_stop(fdev);
	/*
	 * The jobs the schedulers still hold end now (run_job() refuses them),
	 * those of closed files too, and the direct jobs on the rings. Wait until
	 * the schedulers have freed them and the direct ones are retired:
	 * drm_sched_fini(), when the DRM device is released, would leak them
	 * with their BOs (and the release is here if no file is open).
	 */
	if (!wait_event_timeout(fdev->sched_jobs_wq, !atomic_read(&fdev->sched_jobs),
				10 * HZ))
		frac_warn(fdev, "%d jobs not freed by their schedulers\n",
			  atomic_read(&fdev->sched_jobs));
	flush_work(&fdev->put_work);
	flush_delayed_work(&fdev->reap_work);
	frac_coredump_flush(fdev);
	/* An error interrupt before frac_device_stop() disabled it requeued it. */
	cancel_work_sync(&fdev->reset_work);
	/*
	 * The device is stopped and its jobs have ended; with its bus mastering
	 * off it cannot reach host memory whatever it does. The BOs that open
	 * files still hold give their DMA mappings back now: the DMA API's
	 * state for the device must not outlive its driver (the rings are
	 * managed, freed after this returns).
	 */
	pci_clear_master(pdev);
	frac_gem_unplug(fdev);
}

static pci_ers_result_t frac_error_detected(struct pci_dev *pdev,
					    pci_channel_state_t state)
{
	struct frac_device *fdev = pci_get_drvdata(pdev);

	frac_warn(fdev, "PCIe error, channel state %d\n", state);
	atomic64_inc(&fdev->errors);
	switch (state) {
	case pci_channel_io_normal:
		return PCI_ERS_RESULT_CAN_RECOVER;
	case pci_channel_io_frozen:
		frac_device_reset_prepare(fdev, -EIO);
		/* Nothing follows a failed recovery: see frac_recovery_work(). */
		mod_delayed_work(system_wq, &fdev->recovery_work,
				 msecs_to_jiffies(FRAC_PCI_RECOVERY_TIMEOUT_MS));
		return PCI_ERS_RESULT_NEED_RESET;
	case pci_channel_io_perm_failure:
		/* Later kernels' word that the recovery failed; or no recovery at all. */
		frac_device_reset_prepare(fdev, -EIO);
		frac_device_recovery_failed(fdev);
		return PCI_ERS_RESULT_DISCONNECT;
	}
	return PCI_ERS_RESULT_NEED_RESET;
}

static pci_ers_result_t frac_slot_reset(struct pci_dev *pdev)
{
	struct frac_device *fdev = pci_get_drvdata(pdev);

	frac_info(fdev, "restarting after slot reset\n");
	pci_restore_state(pdev);
	pci_save_state(pdev);
	/*
	 * The restored state has bus mastering on: not for a device that never
	 * quiesced (one wedged by a failed recovery works again in resume()).
	 */
	if (READ_ONCE(fdev->unquiesced))
		pci_clear_master(pdev);
	return PCI_ERS_RESULT_RECOVERED;
}

static void frac_error_resume(struct pci_dev *pdev)
{
	struct frac_device *fdev = pci_get_drvdata(pdev);

	/* The recovery worked: its watchdog must not wedge the device. */
	cancel_delayed_work_sync(&fdev->recovery_work);
	/*
	 * After a frozen-channel reset, or one whose watchdog had given up on
	 * it. A no-op for a recovered non-fatal error, unless an earlier
	 * recovery had failed: then the device is no longer wedged if it is
	 * ready (frac_device_resume_locked() wedges it again if not).
	 */
	frac_device_reset_done(fdev);
	frac_info(fdev, "resumed after PCIe error\n");
}

static void frac_reset_prepare(struct pci_dev *pdev)
{
	/* An FLR asked for by someone else: the jobs are innocent. */
	frac_device_reset_prepare(pci_get_drvdata(pdev), -ECANCELED);
}

static void frac_reset_done(struct pci_dev *pdev)
{
	frac_device_reset_done(pci_get_drvdata(pdev));
}

static const struct pci_error_handlers frac_err_handlers = {
	.error_detected = frac_error_detected,
	.slot_reset = frac_slot_reset,
	.resume = frac_error_resume,
	.reset_prepare = frac_reset_prepare,
	.reset_done = frac_reset_done,
};

static const struct pci_device_id frac_pci_ids[] = {
	{ PCI_DEVICE(FRAC_PCI_VENDOR_ID, FRAC_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, frac_pci_ids);

static struct pci_driver frac_pci_driver = {
	.name = DRIVER_NAME,
	.id_table = frac_pci_ids,
	.probe = frac_probe,
	.remove = frac_remove,
	.err_handler = &frac_err_handlers,
};
module_pci_driver(frac_pci_driver);
