// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * Interrupts. With MSI-X every queue has its own vector and one more vector
 * reports device errors. Completions are handled in the hard interrupt
 * handler, as nvme does: consuming a completion record and signalling a fence
 * is short and cannot sleep, and a threaded or workqueue bottom half would
 * add a context switch to every job's latency. Without MSI-X one MSI or INTx
 * vector serves everything and INT_STATUS tells the causes apart.
 */

#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/pci.h>
#include <drm/drm_print.h>

#include "frac_drv.h"
#include "frac_trace.h"

static irqreturn_t frac_queue_irq(int irq, void *arg)
{
	struct frac_queue *q = arg;

	trace_frac_irq(q->fdev->minor, q->id, q->id);
	frac_queue_process_cq(q, false);
	return IRQ_HANDLED;
}

static void frac_handle_error(struct frac_device *fdev)
{
	u32 err = frac_rd(fdev, FRAC_REG_ERR_STATUS);
	u32 status;

	if (!err)
		return;
	frac_wr(fdev, FRAC_REG_ERR_STATUS, err);
	atomic64_inc(&fdev->errors);
	status = frac_rd(fdev, FRAC_REG_STATUS);
	trace_frac_device_error(fdev->minor, err, frac_rd(fdev, FRAC_REG_ERR_QUEUE),
				frac_rd64(fdev, FRAC_REG_ERR_ADDR_LO), status);
	frac_err(fdev, "device error %#x on queue %u at %#llx, status %#x\n", err,
		 frac_rd(fdev, FRAC_REG_ERR_QUEUE), frac_rd64(fdev, FRAC_REG_ERR_ADDR_LO),
		 status);
	if ((err & FRAC_ERR_FATAL) || (status & FRAC_STS_FATAL))
		schedule_work(&fdev->reset_work);
}

static irqreturn_t frac_error_irq(int irq, void *arg)
{
	struct frac_device *fdev = arg;

	trace_frac_irq(fdev->minor, fdev->num_queues, U32_MAX);
	frac_handle_error(fdev);
	return IRQ_HANDLED;
}

/* The single vector of MSI or INTx mode, possibly shared. */
static irqreturn_t frac_legacy_irq(int irq, void *arg)
{
	struct frac_device *fdev = arg;
	u32 status;
	u32 i;

	/* Stopped: any interrupt now is another device's on the shared line. */
	if (READ_ONCE(fdev->irq_stopped))
		return IRQ_NONE;
	status = frac_rd(fdev, FRAC_REG_INT_STATUS);
	if (!status || status == U32_MAX)
		return IRQ_NONE;
	trace_frac_irq(fdev->minor, 0, U32_MAX);
	/* Acknowledge first: a completion after this read raises it again. */
	frac_wr(fdev, FRAC_REG_INT_STATUS, status);
	for (i = 0; i < fdev->num_queues; i++)
		if (status & BIT(i))
			frac_queue_process_cq(&fdev->queues[i], false);
	if (status & FRAC_INT_ERR)
		frac_handle_error(fdev);
	return IRQ_HANDLED;
}

/*
 * No interrupt from the device any more (its removal). The MSI-X vectors are
 * its own: the error vector is disabled as the queues' are. The one vector
 * of MSI or INTx mode may be a line shared with other devices, which must
 * keep their interrupts: the device's causes are masked at the device
 * (INT_MASK) instead, and the handler, which may still run for the others,
 * claims nothing from now on. Called with fdev->reset_lock held, after the
 * device reset (which clears INT_MASK).
 */
void frac_irq_stop(struct frac_device *fdev)
{
	lockdep_assert_held(&fdev->reset_lock);
	if (fdev->err_irq <= 0)
		return;
	if (fdev->pdev->msix_enabled) {
		disable_irq(fdev->err_irq);
		return;
	}
	frac_wr(fdev, FRAC_REG_INT_MASK, U32_MAX);
	WRITE_ONCE(fdev->irq_stopped, true);
	/* A handler that read INT_STATUS before the mask is done with it. */
	synchronize_irq(fdev->err_irq);
}

/*
 * The queue whose interrupt is on the calling CPU, for SUBMIT_LOCAL_QUEUE:
 * the lowest such queue by its vector's effective affinity as it is now
 * (after any change through /proc/irq, irqbalance, or a CPU going offline);
 * when none is, CPUs take the queues round-robin.
 */
u32 frac_local_queue(struct frac_device *fdev)
{
	unsigned int cpu = raw_smp_processor_id();
	u32 i;

	for (i = 0; i < fdev->num_queues; i++) {
		struct irq_data *d = fdev->queues[i].irqd;

		if (d && cpumask_test_cpu(cpu, irq_data_get_effective_affinity_mask(d)))
			return i;
	}
	return cpu % fdev->num_queues;
}

/*
 * Spread the queues' vectors over the online CPUs, queue i on the
 * (i mod n)-th, as blk-mq spreads NVMe queues. Not managed: the kernel moves
 * them off a CPU that goes offline, and they can be steered through
 * /proc/irq; frac_local_queue() follows wherever they are.
 */
static void frac_spread_irqs(struct frac_device *fdev)
{
	unsigned int cpu = cpumask_first(cpu_online_mask);
	u32 i;

	for (i = 0; i < fdev->num_queues; i++) {
		struct frac_queue *q = &fdev->queues[i];
		int ret = irq_set_affinity(q->irq, cpumask_of(cpu));

		if (ret)
			frac_dbg(fdev, IRQ, "q%u: irq %d stays on its CPUs: %d\n", i, q->irq, ret);
		q->irqd = irq_get_irq_data(q->irq);
		cpu = cpumask_next(cpu, cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			cpu = cpumask_first(cpu_online_mask);
	}
}

int frac_irq_init(struct frac_device *fdev)
{
	struct pci_dev *pdev = fdev->pdev;
	struct device *dev = &pdev->dev;
	u32 nvec = fdev->num_queues + 1, i;
	int ret;

	ret = pci_alloc_irq_vectors(pdev, nvec, nvec, PCI_IRQ_MSIX);
	if (ret < 0) {
		int msix_err = ret;

		ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_INTX);
		if (ret < 0) {
			frac_err(fdev, "no interrupt vector: %d\n", ret);
			return ret;
		}
		fdev->err_irq = pci_irq_vector(pdev, 0);
		frac_info(fdev, "MSI-X unavailable (%d), using %s\n", msix_err,
			  pdev->msi_enabled ? "MSI" : "INTx");
		return devm_request_irq(dev, fdev->err_irq, frac_legacy_irq, IRQF_SHARED,
					DRIVER_NAME, fdev);
	}

	for (i = 0; i < fdev->num_queues; i++) {
		struct frac_queue *q = &fdev->queues[i];
		char *name = devm_kasprintf(dev, GFP_KERNEL, "frac-q%u", i);

		if (!name)
			return -ENOMEM;
		q->irq = pci_irq_vector(pdev, i);
		ret = devm_request_irq(dev, q->irq, frac_queue_irq, 0, name, q);
		if (ret) {
			frac_err(fdev, "q%u: request_irq failed: %d\n", i, ret);
			return ret;
		}
	}
	frac_spread_irqs(fdev);
	fdev->err_irq = pci_irq_vector(pdev, fdev->num_queues);
	ret = devm_request_irq(dev, fdev->err_irq, frac_error_irq, 0, "frac-err", fdev);
	if (ret)
		frac_err(fdev, "error vector: request_irq failed: %d\n", ret);
	return ret;
}
ALLOW_ERROR_INJECTION(frac_irq_init, ERRNO);
