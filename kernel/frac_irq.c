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
#include <linux/pci.h>
#include <drm/drm_print.h>

#include "frac_drv.h"
#include "frac_trace.h"

static irqreturn_t frac_queue_irq(int irq, void *arg)
{
	struct frac_queue *q = arg;

	trace_frac_irq(q->fdev->minor, q->id, q->id);
	frac_queue_process_cq(q);
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
	u32 status = frac_rd(fdev, FRAC_REG_INT_STATUS);
	u32 i;

	if (!status || status == U32_MAX)
		return IRQ_NONE;
	trace_frac_irq(fdev->minor, 0, U32_MAX);
	/* Acknowledge first: a completion after this read raises it again. */
	frac_wr(fdev, FRAC_REG_INT_STATUS, status);
	for (i = 0; i < fdev->num_queues; i++)
		if (status & BIT(i))
			frac_queue_process_cq(&fdev->queues[i]);
	if (status & FRAC_INT_ERR)
		frac_handle_error(fdev);
	return IRQ_HANDLED;
}

static bool frac_managed_irqs = true;
module_param_named(managed_irqs, frac_managed_irqs, bool, 0444);
MODULE_PARM_DESC(managed_irqs,
		 "Spread the queues' vectors over the CPUs as managed interrupts (default Y); N: unmanaged, steerable through /proc/irq");

/*
 * Map each CPU to a queue whose managed vector is affine to it, as blk-mq
 * maps CPUs to NVMe queues; without managed vectors (MSI, INTx,
 * managed_irqs=N) CPUs take the queues round-robin.
 */
static int frac_map_cpus(struct frac_device *fdev, u32 nmanaged)
{
	struct device *dev = &fdev->pdev->dev;
	unsigned int cpu;
	u32 i;

	fdev->cpu_queue = devm_kcalloc(dev, nr_cpu_ids, sizeof(*fdev->cpu_queue), GFP_KERNEL);
	if (!fdev->cpu_queue)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		fdev->cpu_queue[cpu] = cpu % fdev->num_queues;
	for (i = nmanaged; i-- > 0;) {
		const struct cpumask *mask = pci_irq_get_affinity(fdev->pdev, i);

		if (!mask)
			continue;
		/* Downwards: a CPU with several queues gets its lowest. */
		for_each_cpu(cpu, mask)
			fdev->cpu_queue[cpu] = i;
	}
	return 0;
}

int frac_irq_init(struct frac_device *fdev)
{
	/*
	 * The first queues' vectors, one per CPU at most, are spread over
	 * the CPUs and managed by the kernel (the core cannot spread more
	 * vectors than CPUs); the other queues' and the error vector are not.
	 */
	u32 nmanaged = frac_managed_irqs ? min_t(u32, fdev->num_queues, num_possible_cpus()) : 0;
	struct irq_affinity affd = { .post_vectors = fdev->num_queues + 1 - nmanaged };
	unsigned int flags = PCI_IRQ_MSIX | (nmanaged ? PCI_IRQ_AFFINITY : 0);
	struct pci_dev *pdev = fdev->pdev;
	struct device *dev = &pdev->dev;
	u32 nvec = fdev->num_queues + 1, i;
	int ret;

	ret = pci_alloc_irq_vectors_affinity(pdev, nvec, nvec, flags, nmanaged ? &affd : NULL);
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
		ret = frac_map_cpus(fdev, 0);
		if (ret)
			return ret;
		return devm_request_irq(dev, fdev->err_irq, frac_legacy_irq, IRQF_SHARED,
					DRIVER_NAME, fdev);
	}

	ret = frac_map_cpus(fdev, nmanaged);
	if (ret)
		return ret;
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
	fdev->err_irq = pci_irq_vector(pdev, fdev->num_queues);
	ret = devm_request_irq(dev, fdev->err_irq, frac_error_irq, 0, "frac-err", fdev);
	if (ret)
		frac_err(fdev, "error vector: request_irq failed: %d\n", ret);
	return ret;
}
