// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * The sysfs source: every accel device (/sys/class/accel/accel*), its driver and PCI address,
 * frac.ko's counters (the "frac" group on the PCI device, kernel/frac_sysfs.c) and any
 * driver's hwmon temperature and power. It runs first and defines the snapshot's devices.
 *
 * The attribute files stay open between samples and are re-read with pread() at offset 0,
 * which makes kernfs call the show() method again: one syscall per value per sample instead of
 * three. A device that goes away fails its reads (ENODEV) and its values become not known; the
 * directory is looked at again on every sample, so new devices appear and removed ones go.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fractop.h"

const struct ft_dev_key_desc ft_dev_keys[FT_D_NR] = {
	[FT_D_BUSY_NS_DMA]	  = { "busy_ns_dma", true },
	[FT_D_BUSY_NS_COMPUTE]	  = { "busy_ns_compute", true },
	[FT_D_DEVICE_JOBS_DONE]	  = { "device_jobs_done", true },
	[FT_D_DEVICE_JOBS_FAILED] = { "device_jobs_failed", true },
	[FT_D_BYTES_READ]	  = { "bytes_read", true },
	[FT_D_BYTES_WRITTEN]	  = { "bytes_written", true },
	[FT_D_INTERRUPTS]	  = { "interrupts", true },
	[FT_D_DEVICE_CLOCK_NS]	  = { "device_clock_ns", true },
	[FT_D_JOBS_SUBMITTED]	  = { "jobs_submitted", true },
	[FT_D_JOBS_COMPLETED]	  = { "jobs_completed", true },
	[FT_D_JOBS_FAILED]	  = { "jobs_failed", true },
	[FT_D_JOB_TIMEOUTS]	  = { "job_timeouts", true },
	[FT_D_LOST_INTERRUPTS]	  = { "lost_interrupts", true },
	[FT_D_QUEUE_RESETS]	  = { "queue_resets", true },
	[FT_D_DEVICE_RESETS]	  = { "device_resets", true },
	[FT_D_ERRORS]		  = { "errors", true },
	[FT_D_COREDUMPS]	  = { "coredumps", true },
	[FT_D_WEDGED]		  = { "wedged", false },
	[FT_D_NUM_QUEUES]	  = { "num_queues", false },
	[FT_D_TEMP_MC]		  = { "temp1_input", false },
	[FT_D_POWER_UW]		  = { "power1_input", false },
};

struct sysfs_dev {
	char node[FT_NAME_LEN];
	ino_t dev_ino;			/* of .../accelN/device: identity across samples */
	unsigned int minor;
	char driver[FT_NAME_LEN];
	char pdev[FT_NAME_LEN];
	bool is_frac;
	int fd[FT_D_NR];		/* -1: absent */
	bool seen;
};

struct sysfs_priv {
	int class_fd;			/* /sys/class/accel */
	DIR *class_dir;
	struct sysfs_dev *devs;
	unsigned int nr, cap;
};

static void close_dev(struct sysfs_dev *d)
{
	for (int i = 0; i < FT_D_NR; i++)
		if (d->fd[i] >= 0)
			close(d->fd[i]);
}

/* Basename of a symlink's target, or "" if it is not a link. */
static void link_base(int dirfd, const char *name, char *out, size_t len)
{
	char buf[PATH_MAX];
	ssize_t n = readlinkat(dirfd, name, buf, sizeof(buf) - 1);
	const char *b;

	out[0] = '\0';
	if (n <= 0)
		return;
	buf[n] = '\0';
	b = strrchr(buf, '/');
	b = b ? b + 1 : buf;
	if (strlen(b) < len)
		memcpy(out, b, strlen(b) + 1);
}

static bool is_pci_addr(const char *s)
{
	unsigned int d, b, sl, f;
	char tail;

	return sscanf(s, "%x:%x:%x.%x%c", &d, &b, &sl, &f, &tail) == 4;
}

static int read_small(int dirfd, const char *name, char *buf, size_t len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* The first hwmon device under the device: temp1_input, power1_input or power1_average. */
static void open_hwmon(struct sysfs_dev *d, int devfd)
{
	int hfd = openat(devfd, "hwmon", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *dir;

	if (hfd < 0)
		return;
	dir = fdopendir(hfd);
	if (!dir) {
		close(hfd);
		return;
	}
	while ((de = readdir(dir))) {
		int mfd;

		if (strncmp(de->d_name, "hwmon", 5))
			continue;
		mfd = openat(dirfd(dir), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (mfd < 0)
			continue;
		d->fd[FT_D_TEMP_MC] = openat(mfd, "temp1_input", O_RDONLY | O_CLOEXEC);
		d->fd[FT_D_POWER_UW] = openat(mfd, "power1_input", O_RDONLY | O_CLOEXEC);
		if (d->fd[FT_D_POWER_UW] < 0)	/* amdgpu-style hwmon has only the average */
			d->fd[FT_D_POWER_UW] = openat(mfd, "power1_average", O_RDONLY | O_CLOEXEC);
		close(mfd);
		break;
	}
	closedir(dir);
}

static int open_dev(struct sysfs_dev *d, int class_fd, const char *node)
{
	unsigned int maj, min;
	int cfd, devfd, gfd;
	struct stat st;
	char buf[64];

	memset(d, 0, sizeof(*d));
	for (int i = 0; i < FT_D_NR; i++)
		d->fd[i] = -1;
	snprintf(d->node, sizeof(d->node), "%s", node);

	cfd = openat(class_fd, node, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cfd < 0)
		return -errno;
	if (read_small(cfd, "dev", buf, sizeof(buf)) || sscanf(buf, "%u:%u", &maj, &min) != 2 ||
	    maj != FT_ACCEL_MAJOR) {
		close(cfd);
		return -ENODEV;
	}
	d->minor = min;
	devfd = openat(cfd, "device", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (devfd < 0) {
		close(cfd);
		return 0;	/* a node without a parent device: fdinfo only */
	}
	if (!fstat(devfd, &st))
		d->dev_ino = st.st_ino;
	link_base(cfd, "device", d->pdev, sizeof(d->pdev));
	if (!is_pci_addr(d->pdev))
		d->pdev[0] = '\0';
	close(cfd);
	link_base(devfd, "driver", d->driver, sizeof(d->driver));
	d->is_frac = !strcmp(d->driver, "frac");
	open_hwmon(d, devfd);

	gfd = d->is_frac ? openat(devfd, "frac", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	close(devfd);
	if (gfd < 0)
		return 0;	/* not frac, or an older frac.ko without the group */
	for (int i = 0; i < FT_D_NR; i++) {
		if (i == FT_D_TEMP_MC || i == FT_D_POWER_UW)
			continue;
		d->fd[i] = openat(gfd, ft_dev_keys[i].name, O_RDONLY | O_CLOEXEC);
	}
	close(gfd);
	return 0;
}

static bool pread_u64(int fd, uint64_t *v)
{
	char buf[32];
	ssize_t n;

	if (fd < 0)
		return false;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return ft_parse_u64(buf, NULL, v) == 0;
}

static int sysfs_init(struct ft_source *src, const struct ft_config *cfg)
{
	struct sysfs_priv *p = calloc(1, sizeof(*p));
	char path[PATH_MAX];

	if (!p)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/sys/class/accel", cfg->sysroot);
	p->class_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->class_fd < 0) {
		int err = -errno;

		snprintf(src->why, sizeof(src->why), "/sys/class/accel: %s", strerror(errno));
		free(p);
		return err;
	}
	p->class_dir = fdopendir(dup(p->class_fd));
	if (!p->class_dir) {
		close(p->class_fd);
		free(p);
		return -ENOMEM;
	}
	src->priv = p;
	return 0;
}

static int cmp_node(const void *a, const void *b)
{
	const struct sysfs_dev *x = a, *y = b;

	return (x->minor > y->minor) - (x->minor < y->minor);
}

static int sysfs_sample(struct ft_source *src, struct ft_snapshot *snap)
{
	struct sysfs_priv *p = src->priv;
	struct dirent *de;
	unsigned int i, j;
	double t0;

	rewinddir(p->class_dir);
	for (i = 0; i < p->nr; i++)
		p->devs[i].seen = false;
	while ((de = readdir(p->class_dir))) {
		struct sysfs_dev *d = NULL;
		struct stat st;
		ino_t ino = 0;
		char path[FT_NAME_LEN + 8];

		if (strncmp(de->d_name, "accel", 5) || strlen(de->d_name) >= FT_NAME_LEN)
			continue;
		snprintf(path, sizeof(path), "%s/device", de->d_name);
		if (!fstatat(p->class_fd, path, &st, 0))
			ino = st.st_ino;
		for (i = 0; i < p->nr; i++) {
			if (!strcmp(p->devs[i].node, de->d_name) && p->devs[i].dev_ino == ino) {
				d = &p->devs[i];
				break;
			}
		}
		if (!d) {
			struct sysfs_dev nd;

			if (open_dev(&nd, p->class_fd, de->d_name))
				continue;
			if (src->cfg->only_minor >= 0 && nd.minor != (unsigned int)src->cfg->only_minor) {
				close_dev(&nd);
				continue;
			}
			if (p->nr == p->cap) {
				unsigned int cap = p->cap ? 2 * p->cap : 4;
				struct sysfs_dev *n = realloc(p->devs, cap * sizeof(*n));

				if (!n) {
					close_dev(&nd);
					return -ENOMEM;
				}
				p->devs = n;
				p->cap = cap;
			}
			p->devs[p->nr] = nd;
			d = &p->devs[p->nr++];
		}
		d->seen = true;
	}

	for (i = 0, j = 0; i < p->nr; i++) {
		if (p->devs[i].seen)
			p->devs[j++] = p->devs[i];
		else
			close_dev(&p->devs[i]);
	}
	p->nr = j;
	qsort(p->devs, p->nr, sizeof(*p->devs), cmp_node);

	for (i = 0; i < p->nr; i++) {
		struct sysfs_dev *d = &p->devs[i];
		struct ft_dev *o = ft_snapshot_add_dev(snap);

		if (!o)
			return -ENOMEM;
		snprintf(o->node, sizeof(o->node), "%s", d->node);
		snprintf(o->driver, sizeof(o->driver), "%s", d->driver);
		snprintf(o->pdev, sizeof(o->pdev), "%s", d->pdev);
		o->minor = d->minor;
		o->is_frac = d->is_frac;
		/* The instant of these reads: the rates are over the time between two of them. */
		t0 = ft_mono_s();
		for (j = 0; j < FT_D_NR; j++)
			if (pread_u64(d->fd[j], &o->val[j]))
				o->has |= 1ull << j;
		o->t_src[FT_TS_SYSFS] = (t0 + ft_mono_s()) / 2;
	}
	snap->sysfs_ok = true;
	return 0;
}

static void sysfs_fini(struct ft_source *src)
{
	struct sysfs_priv *p = src->priv;

	if (!p)
		return;
	for (unsigned int i = 0; i < p->nr; i++)
		close_dev(&p->devs[i]);
	free(p->devs);
	closedir(p->class_dir);
	close(p->class_fd);
	free(p);
	src->priv = NULL;
}

const struct ft_source_ops ft_sysfs_source = {
	.name = "sysfs",
	.init = sysfs_init,
	.sample = sysfs_sample,
	.fini = sysfs_fini,
};

/* For the start-up check: how many accel devices there are (0 with a reason in why). */
int ft_sysfs_count_devices(const struct ft_config *cfg, char *why, size_t whylen)
{
	char dir_path[PATH_MAX];
	struct dirent *de;
	DIR *dir;
	int n = 0;

	snprintf(dir_path, sizeof(dir_path), "%s/sys/class/accel", cfg->sysroot);
	dir = opendir(dir_path);
	if (!dir) {
		snprintf(why, whylen, "%s: %s (no accel device: is the driver, e.g. frac.ko, loaded?)",
			 dir_path, strerror(errno));
		return 0;
	}
	while ((de = readdir(dir))) {
		unsigned int minor;
		char tail;

		if (sscanf(de->d_name, "accel%u%c", &minor, &tail) != 1)
			continue;
		if (cfg->only_minor >= 0 && minor != (unsigned int)cfg->only_minor)
			continue;
		n++;
	}
	closedir(dir);
	if (!n && cfg->only_minor >= 0)
		snprintf(why, whylen, "no accel device accel%d in %s", cfg->only_minor, dir_path);
	else if (!n)
		snprintf(why, whylen, "no accel device in %s (is the driver, e.g. frac.ko, loaded?)",
			 dir_path);
	return n;
}
