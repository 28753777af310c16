// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * sysfs counters on the PCI device and a hwmon device for temperature and
 * power.
 */

#include <linux/device.h>
#include <linux/hwmon.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <drm/drm_drv.h>

#include "frac_drv.h"

static struct frac_device *frac_from_dev(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

/* A 64-bit device counter, read under drm_dev_enter. */
static ssize_t frac_show_reg64(struct device *dev, char *buf, u32 reg)
{
	struct frac_device *fdev = frac_from_dev(dev);
	u64 v;
	int idx;

	if (!drm_dev_enter(&fdev->drm, &idx))
		return -ENODEV;
	v = frac_rd64(fdev, reg);
	drm_dev_exit(idx);
	return sysfs_emit(buf, "%llu\n", v);
}

#define FRAC_REG64_ATTR(name, reg)						\
static ssize_t name##_show(struct device *dev, struct device_attribute *a,	\
			   char *buf)						\
{										\
	return frac_show_reg64(dev, buf, reg);					\
}										\
static DEVICE_ATTR_RO(name)

FRAC_REG64_ATTR(busy_ns_dma, FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_DMA));
FRAC_REG64_ATTR(busy_ns_compute, FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_COMPUTE));
FRAC_REG64_ATTR(device_jobs_done, FRAC_REG_JOBS_DONE_LO);
FRAC_REG64_ATTR(device_jobs_failed, FRAC_REG_JOBS_ERR_LO);
FRAC_REG64_ATTR(bytes_read, FRAC_REG_BYTES_RD_LO);
FRAC_REG64_ATTR(bytes_written, FRAC_REG_BYTES_WR_LO);
FRAC_REG64_ATTR(interrupts, FRAC_REG_IRQS_LO);
FRAC_REG64_ATTR(device_clock_ns, FRAC_REG_CLOCK_LO);

/* Sum of a per-queue counter over all queues. */
static u64 frac_sum_queues(struct frac_device *fdev, size_t off)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < fdev->num_queues; i++)
		sum += atomic64_read((atomic64_t *)((char *)&fdev->queues[i] + off));
	return sum;
}

#define FRAC_QSUM_ATTR(name, field)						\
static ssize_t name##_show(struct device *dev, struct device_attribute *a,	\
			   char *buf)						\
{										\
	return sysfs_emit(buf, "%llu\n", frac_sum_queues(frac_from_dev(dev),	\
				offsetof(struct frac_queue, field)));		\
}										\
static DEVICE_ATTR_RO(name)

FRAC_QSUM_ATTR(jobs_submitted, jobs_submitted);
FRAC_QSUM_ATTR(jobs_direct, jobs_direct);
FRAC_QSUM_ATTR(jobs_completed, jobs_completed);
FRAC_QSUM_ATTR(jobs_failed, jobs_failed);
FRAC_QSUM_ATTR(job_timeouts, timeouts);
FRAC_QSUM_ATTR(lost_interrupts, lost_irqs);
FRAC_QSUM_ATTR(queue_resets, resets);
FRAC_QSUM_ATTR(bad_completions, bad_cqes);

static ssize_t device_resets_show(struct device *dev, struct device_attribute *a,
				  char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&frac_from_dev(dev)->device_resets));
}
static DEVICE_ATTR_RO(device_resets);

static ssize_t coredumps_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&frac_from_dev(dev)->coredumps));
}
static DEVICE_ATTR_RO(coredumps);

static ssize_t wedged_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(frac_from_dev(dev)->wedged));
}
static DEVICE_ATTR_RO(wedged);

static ssize_t errors_show(struct device *dev, struct device_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(&frac_from_dev(dev)->errors));
}
static DEVICE_ATTR_RO(errors);

static ssize_t num_queues_show(struct device *dev, struct device_attribute *a,
			       char *buf)
{
	return sysfs_emit(buf, "%u\n", frac_from_dev(dev)->num_queues);
}
static DEVICE_ATTR_RO(num_queues);

static struct attribute *frac_attrs[] = {
	&dev_attr_busy_ns_dma.attr,
	&dev_attr_busy_ns_compute.attr,
	&dev_attr_device_jobs_done.attr,
	&dev_attr_device_jobs_failed.attr,
	&dev_attr_bytes_read.attr,
	&dev_attr_bytes_written.attr,
	&dev_attr_interrupts.attr,
	&dev_attr_device_clock_ns.attr,
	&dev_attr_jobs_submitted.attr,
	&dev_attr_jobs_direct.attr,
	&dev_attr_jobs_completed.attr,
	&dev_attr_jobs_failed.attr,
	&dev_attr_job_timeouts.attr,
	&dev_attr_lost_interrupts.attr,
	&dev_attr_queue_resets.attr,
	&dev_attr_bad_completions.attr,
	&dev_attr_device_resets.attr,
	&dev_attr_errors.attr,
	&dev_attr_coredumps.attr,
	&dev_attr_wedged.attr,
	&dev_attr_num_queues.attr,
	NULL
};

static const struct attribute_group frac_attr_group = {
	.name = "frac",
	.attrs = frac_attrs,
};

/*
 * A queue's own counters, in /sys/bus/pci/devices/<bdf>/frac_queues/<N>/
 * (as nvme's /sys/block/<disk>/mq/<N>/ and xe's gt directories are
 * kobjects): the names and meanings of the sums in frac/. The kobjects are
 * the driver's, put when it unbinds; sysfs drains readers before a kobject
 * goes, so a show never outlives the queue.
 */
struct frac_queue_kobj {
	struct kobject base;
	struct frac_queue *q;
};

static void frac_queue_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct frac_queue_kobj, base));
}

static ssize_t frac_queue_show_counter(struct kobject *kobj, char *buf, size_t off)
{
	struct frac_queue *q = container_of(kobj, struct frac_queue_kobj, base)->q;

	return sysfs_emit(buf, "%llu\n", (u64)atomic64_read((atomic64_t *)((char *)q + off)));
}

#define FRAC_QUEUE_ATTR(name, field)						\
static ssize_t q_##name##_show(struct kobject *kobj, struct kobj_attribute *a,	\
			       char *buf)					\
{										\
	return frac_queue_show_counter(kobj, buf, offsetof(struct frac_queue, field)); \
}										\
static struct kobj_attribute q_attr_##name = __ATTR(name, 0444, q_##name##_show, NULL)

FRAC_QUEUE_ATTR(jobs_submitted, jobs_submitted);
FRAC_QUEUE_ATTR(jobs_direct, jobs_direct);
FRAC_QUEUE_ATTR(jobs_completed, jobs_completed);
FRAC_QUEUE_ATTR(jobs_failed, jobs_failed);
FRAC_QUEUE_ATTR(job_timeouts, timeouts);
FRAC_QUEUE_ATTR(lost_interrupts, lost_irqs);
FRAC_QUEUE_ATTR(queue_resets, resets);
FRAC_QUEUE_ATTR(bad_completions, bad_cqes);

static struct attribute *frac_queue_attrs[] = {
	&q_attr_jobs_submitted.attr,
	&q_attr_jobs_direct.attr,
	&q_attr_jobs_completed.attr,
	&q_attr_jobs_failed.attr,
	&q_attr_job_timeouts.attr,
	&q_attr_lost_interrupts.attr,
	&q_attr_queue_resets.attr,
	&q_attr_bad_completions.attr,
	NULL
};
ATTRIBUTE_GROUPS(frac_queue);

static const struct kobj_type frac_queue_ktype = {
	.release = frac_queue_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = frac_queue_groups,
};

static void frac_queue_kobjs_put(void *data)
{
	struct frac_device *fdev = data;
	u32 i;

	/*
	 * Out of sysfs now, whoever still holds a reference: a delayed
	 * release (CONFIG_DEBUG_KOBJECT_RELEASE) must not leave a show that
	 * reaches a freed queue. Then the references go (kobject.rst's
	 * two-stage delete).
	 */
	for (i = 0; i < fdev->num_queues; i++) {
		if (fdev->queue_kobjs[i] && fdev->queue_kobjs[i]->state_in_sysfs)
			kobject_del(fdev->queue_kobjs[i]);
		kobject_put(fdev->queue_kobjs[i]);
	}
	kobject_del(fdev->queues_kobj);
	kobject_put(fdev->queues_kobj);
}

static int frac_queue_kobjs_init(struct frac_device *fdev)
{
	struct device *dev = &fdev->pdev->dev;
	struct frac_queue_kobj *qk;
	u32 i;
	int ret;

	fdev->queues_kobj = kobject_create_and_add("frac_queues", &dev->kobj);
	if (!fdev->queues_kobj)
		return -ENOMEM;
	ret = devm_add_action_or_reset(dev, frac_queue_kobjs_put, fdev);
	if (ret)
		return ret;
	for (i = 0; i < fdev->num_queues; i++) {
		qk = kzalloc(sizeof(*qk), GFP_KERNEL);
		if (!qk)
			return -ENOMEM;
		qk->q = &fdev->queues[i];
		ret = kobject_init_and_add(&qk->base, &frac_queue_ktype, fdev->queues_kobj,
					   "%u", i);
		/* Put by frac_queue_kobjs_put(), which frees it, failed or not. */
		fdev->queue_kobjs[i] = &qk->base;
		if (ret)
			return ret;
	}
	return 0;
}

static umode_t frac_hwmon_is_visible(const void *data, enum hwmon_sensor_types type,
				     u32 attr, int channel)
{
	return 0444;
}

static int frac_hwmon_read(struct device *dev, enum hwmon_sensor_types type,
			   u32 attr, int channel, long *val)
{
	struct frac_device *fdev = dev_get_drvdata(dev);
	int idx;

	if (!drm_dev_enter(&fdev->drm, &idx))
		return -ENODEV;
	if (type == hwmon_temp)
		*val = frac_rd(fdev, FRAC_REG_TEMP_MC);
	else
		*val = (long)frac_rd(fdev, FRAC_REG_POWER_MW) * 1000;	/* uW */
	drm_dev_exit(idx);
	return 0;
}

static const struct hwmon_channel_info * const frac_hwmon_info[] = {
	HWMON_CHANNEL_INFO(temp, HWMON_T_INPUT),
	HWMON_CHANNEL_INFO(power, HWMON_P_INPUT),
	NULL
};

static const struct hwmon_ops frac_hwmon_ops = {
	.is_visible = frac_hwmon_is_visible,
	.read = frac_hwmon_read,
};

static const struct hwmon_chip_info frac_hwmon_chip = {
	.ops = &frac_hwmon_ops,
	.info = frac_hwmon_info,
};

int frac_sysfs_init(struct frac_device *fdev)
{
	struct device *dev = &fdev->pdev->dev;
	struct device *hwmon;
	int ret;

	ret = devm_device_add_group(dev, &frac_attr_group);
	if (ret)
		return ret;
	ret = frac_queue_kobjs_init(fdev);
	if (ret)
		return ret;
	hwmon = devm_hwmon_device_register_with_info(dev, DRIVER_NAME, fdev,
						     &frac_hwmon_chip, NULL);
	return PTR_ERR_OR_ZERO(hwmon);
}
ALLOW_ERROR_INJECTION(frac_sysfs_init, ERRNO);
