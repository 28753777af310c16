// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * The debugfs source: frac.ko's per-queue counters, from
 * /sys/kernel/debug/accel/<pci address>/queues (kernel/frac_debugfs.c). sysfs has only their
 * sums over the queues; this is the one place that says which queue failed, timed out or was
 * reset. debugfs is root's (mode 0700 at its mount point) and not an ABI: when the file cannot
 * be read the queue figures are not known, and a line that does not parse leaves the device
 * without them, rather than with numbers from the wrong columns.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fractop.h"

const char *const ft_q_names[FT_Q_NR] = {
	[FT_Q_SUBMITTED] = "submitted",
	[FT_Q_COMPLETED] = "completed",
	[FT_Q_FAILED] = "failed",
	[FT_Q_TIMEOUTS] = "timeouts",
	[FT_Q_LOST_IRQS] = "lost_irqs",
	[FT_Q_RESETS] = "resets",
	[FT_Q_IN_RING] = "jobs_in_ring",
};

/*
 * The file, per queue:
 *   queue N: size S sq_tail T cq_head H phase P jobs_in_ring J
 *     hw: status ... (ignored)
 *     submitted A completed B failed C timeouts D lost_irqs E resets F
 * Fills d->q and d->nr_queues; 0, or -EINVAL (d->nr_queues 0) if the text is not that.
 */
int ft_parse_debugfs_queues(const char *text, size_t len, struct ft_dev *d)
{
	const char *p = text, *e = text + len;
	int cur = -1;

	d->nr_queues = 0;
	while (p < e) {
		const char *nl = memchr(p, '\n', e - p);
		size_t n = (nl ? nl : e) - p;
		char line[512];
		unsigned int qn, sz, tail, head, phase;
		unsigned long long v[6], ring;

		if (n >= sizeof(line))
			goto bad;
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + 1;
		if (sscanf(line, "queue %u: size %u sq_tail %u cq_head %u phase %u jobs_in_ring %llu",
			   &qn, &sz, &tail, &head, &phase, &ring) == 6) {
			if (qn != d->nr_queues || qn >= FT_MAX_QUEUES)
				goto bad;
			cur = qn;
			memset(d->q[cur], 0, sizeof(d->q[cur]));
			d->q[cur][FT_Q_IN_RING] = ring;
			d->nr_queues++;
		} else if (sscanf(line, " submitted %llu completed %llu failed %llu timeouts %llu "
				  "lost_irqs %llu resets %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
				  &v[5]) == 6) {
			if (cur < 0)
				goto bad;
			for (int k = 0; k < 6; k++)
				d->q[cur][FT_Q_SUBMITTED + k] = v[k];
			cur = -1;	/* one counter line per queue */
		} else if (strncmp(line, "  hw:", 5) && line[0]) {
			goto bad;
		}
	}
	/* Every queue must have had its counter line. */
	if (cur >= 0)
		goto bad;
	return d->nr_queues ? 0 : -EINVAL;
bad:
	d->nr_queues = 0;
	return -EINVAL;
}

struct debugfs_priv {
	char root[PATH_MAX];
	char buf[16384];
};

static int debugfs_init(struct ft_source *src, const struct ft_config *cfg)
{
	struct debugfs_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	snprintf(p->root, sizeof(p->root), "%s/sys/kernel/debug/accel", cfg->sysroot);
	if (access(p->root, X_OK)) {
		int err = -errno;

		snprintf(src->why, sizeof(src->why), "per-queue counters need root (%s: %s)",
			 "/sys/kernel/debug/accel", strerror(errno));
		free(p);
		return err;
	}
	src->priv = p;
	return 0;
}

static int debugfs_sample(struct ft_source *src, struct ft_snapshot *snap)
{
	struct debugfs_priv *p = src->priv;

	for (unsigned int i = 0; i < snap->nr_devs; i++) {
		struct ft_dev *d = &snap->devs[i];
		char path[PATH_MAX + FT_NAME_LEN + 16];
		ssize_t n, len = 0;
		double t0, t;
		int fd;

		if (!d->is_frac || !d->pdev[0])
			continue;
		snprintf(path, sizeof(path), "%s/%s/queues", p->root, d->pdev);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* The file is made whole by its first read(): that is the instant it holds. */
		t0 = ft_mono_s();
		while ((n = read(fd, p->buf + len, sizeof(p->buf) - 1 - len)) > 0)
			len += n;
		t = (t0 + ft_mono_s()) / 2;
		close(fd);
		if (n < 0)
			continue;
		if (!ft_parse_debugfs_queues(p->buf, len, d))
			d->t_src[FT_TS_DEBUGFS] = t;
	}
	return 0;
}

static void debugfs_fini(struct ft_source *src)
{
	free(src->priv);
	src->priv = NULL;
}

const struct ft_source_ops ft_debugfs_source = {
	.name = "debugfs",
	.init = debugfs_init,
	.sample = debugfs_sample,
	.fini = debugfs_fini,
};
