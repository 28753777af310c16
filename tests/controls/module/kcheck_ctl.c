// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcheck_ctl: one deliberate kernel bug per load, for the debug lane's negative controls.
 *
 * tests/controls/run.sh boots the debug kernel, loads this module once per bug with bug=NAME
 * and shows that scripts/kcheck fails each load's part of the kernel log: a checker that never
 * fired is no evidence. Test-only: never installed, never packaged.
 *
 *   uaf       read of a freed slab object                 (KASAN)
 *   abba      two mutexes taken in both orders            (lockdep)
 *   leak      a slab object whose last pointer is dropped (kmemleak)
 *   oob       an array index past the array's end         (UBSAN bounds)
 *   dma-size  a mapping unmapped with another size        (DMA-API debug)
 *   dma-held  a mapping still held when the driver unbinds (DMA-API debug)
 *
 * The two DMA bugs bind a PCI driver to FRAC-1 (1234:fac1), in a boot where frac.ko is not
 * loaded: DMA-API debug checks mappings left at unbind on the PCI bus, as it would frac.ko's.
 *   hung      a task in D state past hung_task_timeout_secs (hung-task detection)
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/sched.h>
#include <linux/slab.h>

static char *bug = "";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "the bug to commit: uaf, abba, leak, oob, dma-size, dma-held, hung");

static unsigned int hung_secs = 15;
module_param(hung_secs, uint, 0444);
MODULE_PARM_DESC(hung_secs, "seconds the hung task stays in D state");

static unsigned int oob_index = 4;
module_param(oob_index, uint, 0444);
MODULE_PARM_DESC(oob_index, "the index oob reads (past the end from 4 on)");

/* Kept global so that the leak is the only unreferenced object. */
static volatile int ctl_sink;

static noinline int ctl_uaf(void)
{
	int *p = kmalloc(64, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	p[0] = 1;
	kfree(p);
	ctl_sink = READ_ONCE(p[0]);
	return 0;
}

static DEFINE_MUTEX(ctl_lock_a);
static DEFINE_MUTEX(ctl_lock_b);

static noinline int ctl_abba(void)
{
	mutex_lock(&ctl_lock_a);
	mutex_lock(&ctl_lock_b);
	mutex_unlock(&ctl_lock_b);
	mutex_unlock(&ctl_lock_a);
	/* The other order, one after the other: no deadlock, but lockdep sees the cycle. */
	mutex_lock(&ctl_lock_b);
	mutex_lock(&ctl_lock_a);
	mutex_unlock(&ctl_lock_a);
	mutex_unlock(&ctl_lock_b);
	return 0;
}

static noinline int ctl_leak(void)
{
	char *p = kmalloc(128, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	strscpy(p, "kcheck_ctl leak", 128);
	ctl_sink = p[0];
	/* p goes out of scope: nothing refers to the object any more. */
	return 0;
}

struct ctl_arrays {
	int a[4];
	int b[4];
};

static noinline int ctl_oob(void)
{
	struct ctl_arrays *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return -ENOMEM;
	/* Past a[]'s end but inside the object: UBSAN's bounds check, not KASAN, sees it. */
	ctl_sink = s->a[oob_index];
	kfree(s);
	return 0;
}

static int ctl_hung_fn(void *data)
{
	schedule_timeout_uninterruptible(hung_secs * HZ);
	complete(data);
	return 0;
}

static noinline int ctl_hung(void)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct task_struct *t;

	t = kthread_run(ctl_hung_fn, &done, "kcheck_ctl_hung");
	if (IS_ERR(t))
		return PTR_ERR(t);
	wait_for_completion_interruptible(&done);
	return 0;
}

/* The DMA controls: a PCI driver for FRAC-1 that maps a buffer through the DMA API. */
static void *ctl_buf;
static dma_addr_t ctl_dma;

static int ctl_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct device *dev = &pdev->dev;
	int ret;

	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	ctl_buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!ctl_buf)
		return -ENOMEM;
	ctl_dma = dma_map_single(dev, ctl_buf, PAGE_SIZE, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, ctl_dma)) {
		kfree(ctl_buf);
		ctl_buf = NULL;
		return -EIO;
	}
	if (!strcmp(bug, "dma-size")) {
		/* Half of what was mapped. */
		dma_unmap_single(dev, ctl_dma, PAGE_SIZE / 2, DMA_TO_DEVICE);
		ctl_dma = 0;
	}
	/* dma-held: the mapping stays until the driver unbinds, at the module's exit. */
	return 0;
}

static void ctl_remove(struct pci_dev *pdev)
{
}

/* No MODULE_DEVICE_TABLE: nothing loads this module for the device on its own. */
static const struct pci_device_id ctl_ids[] = {
	{ PCI_DEVICE(0x1234, 0xfac1) },
	{ }
};

static struct pci_driver ctl_driver = {
	.name = "kcheck_ctl",
	.id_table = ctl_ids,
	.probe = ctl_probe,
	.remove = ctl_remove,
};

static bool ctl_registered;

static int ctl_dma_start(void)
{
	int ret = pci_register_driver(&ctl_driver);

	if (ret)
		return ret;
	if (!ctl_buf) {
		pci_unregister_driver(&ctl_driver);
		pr_err("kcheck_ctl: no FRAC-1 bound: nothing mapped\n");
		return -ENODEV;
	}
	ctl_registered = true;
	return 0;
}

static int __init ctl_init(void)
{
	pr_info("kcheck_ctl: bug=%s\n", bug);
	if (!strcmp(bug, "uaf"))
		return ctl_uaf();
	if (!strcmp(bug, "abba"))
		return ctl_abba();
	if (!strcmp(bug, "leak"))
		return ctl_leak();
	if (!strcmp(bug, "oob"))
		return ctl_oob();
	if (!strcmp(bug, "hung"))
		return ctl_hung();
	if (!strcmp(bug, "dma-size") || !strcmp(bug, "dma-held"))
		return ctl_dma_start();
	pr_err("kcheck_ctl: unknown bug '%s'\n", bug);
	return -EINVAL;
}

static void __exit ctl_exit(void)
{
	/* Unbinds the driver: DMA-API debug checks for mappings still held here. */
	if (ctl_registered)
		pci_unregister_driver(&ctl_driver);
	kfree(ctl_buf);
}

module_init(ctl_init);
module_exit(ctl_exit);
MODULE_DESCRIPTION("Deliberate kernel bugs: the debug lane's negative controls");
MODULE_LICENSE("GPL");
