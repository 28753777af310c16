// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * The interrupt source: each device's MSI/MSI-X vectors (the PCI device's msi_irqs/
 * directory) and their counts summed over CPUs from /proc/interrupts, which also gives each
 * vector's action name (frac.ko: frac-q<N> per queue, frac-err). Both are world-readable.
 * /proc/interrupts is read once per sample, and only when some device has vectors.
 */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fractop.h"

/*
 * One line of /proc/interrupts: "  35:   12   7  PCI-MSIX-0000:01:00.0  0-edge  frac-q0".
 * 0 with the irq number, the count summed over @ncpu columns and the last word (the action
 * name, "-" if the vector has none); -EINVAL for the header and the named lines (NMI:, LOC:).
 */
int ft_parse_interrupts_line(const char *line, unsigned int ncpu, unsigned int *irq,
			     uint64_t *count, char *name, size_t namelen)
{
	const char *p = line, *end;
	uint64_t sum = 0, v, n;
	size_t l;

	while (*p == ' ')
		p++;
	if (ft_parse_u64(p, &p, &n) || *p != ':' || n > UINT32_MAX)
		return -EINVAL;
	p++;
	for (unsigned int c = 0; c < ncpu; c++) {
		while (*p == ' ')
			p++;
		if (ft_parse_u64(p, &p, &v))
			return -EINVAL;
		sum += v;
	}
	end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	l = 0;
	while (end - l > p && !isspace((unsigned char)end[-l - 1]))
		l++;
	if (!l || l >= namelen)
		return -EINVAL;
	memcpy(name, end - l, l);
	name[l] = '\0';
	/* An allocated vector nobody requested ends with its trigger: "0-edge", "1-level". */
	if ((l > 5 && !strcmp(name + l - 5, "-edge")) || (l > 6 && !strcmp(name + l - 6, "-level")))
		snprintf(name, namelen, "-");
	*irq = n;
	*count = sum;
	return 0;
}

struct irq_priv {
	char class_dir[PATH_MAX];
	char interrupts[PATH_MAX];
};

static int irq_init(struct ft_source *src, const struct ft_config *cfg)
{
	struct irq_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	snprintf(p->class_dir, sizeof(p->class_dir), "%s/sys/class/accel", cfg->sysroot);
	snprintf(p->interrupts, sizeof(p->interrupts), "%s/proc/interrupts", cfg->sysroot);
	src->priv = p;
	return 0;
}

static int cmp_vec(const void *a, const void *b)
{
	const struct ft_vector *x = a, *y = b;

	return (x->irq > y->irq) - (x->irq < y->irq);
}

/* The device's vector numbers, sorted; false if it has no msi_irqs directory. */
static bool list_vectors(struct irq_priv *p, struct ft_dev *d)
{
	char path[PATH_MAX + FT_NAME_LEN + 32];
	struct dirent *de;
	DIR *dir;

	d->nr_vec = 0;
	snprintf(path, sizeof(path), "%s/%s/device/msi_irqs", p->class_dir, d->node);
	dir = opendir(path);
	if (!dir)
		return false;
	while ((de = readdir(dir)) && d->nr_vec < FT_MAX_VECTORS) {
		uint64_t n;
		const char *e;

		if (ft_parse_u64(de->d_name, &e, &n) || *e || n > UINT32_MAX)
			continue;
		memset(&d->vec[d->nr_vec], 0, sizeof(d->vec[0]));
		d->vec[d->nr_vec++].irq = n;
	}
	closedir(dir);
	qsort(d->vec, d->nr_vec, sizeof(d->vec[0]), cmp_vec);
	return true;
}

static struct ft_vector *find_vec(struct ft_dev *d, unsigned int irq)
{
	unsigned int lo = 0, hi = d->nr_vec;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (d->vec[mid].irq < irq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->nr_vec && d->vec[lo].irq == irq ? &d->vec[lo] : NULL;
}

static int irq_sample(struct ft_source *src, struct ft_snapshot *snap)
{
	struct irq_priv *p = src->priv;
	unsigned int ncpu = 0, i, found = 0, want = 0;
	char *line = NULL;
	size_t cap = 0;
	double t0, t;
	FILE *f;

	for (i = 0; i < snap->nr_devs; i++)
		if (list_vectors(p, &snap->devs[i]))
			want += snap->devs[i].nr_vec;
	if (!want)
		return 0;
	f = fopen(p->interrupts, "re");
	if (!f)
		return -errno;
	t0 = ft_mono_s();
	if (getline(&line, &cap, f) > 0) {
		for (char *t = strtok(line, " \t\n"); t; t = strtok(NULL, " \t\n"))
			ncpu += !strncmp(t, "CPU", 3);
	}
	while (ncpu && found < want && getline(&line, &cap, f) > 0) {
		char name[FT_NAME_LEN];
		unsigned int irq;
		uint64_t count;

		if (ft_parse_interrupts_line(line, ncpu, &irq, &count, name, sizeof(name)))
			continue;
		for (i = 0; i < snap->nr_devs; i++) {
			struct ft_vector *v = find_vec(&snap->devs[i], irq);

			if (!v)
				continue;
			v->count = count;
			memcpy(v->name, name, sizeof(v->name));
			found++;
		}
	}
	t = (t0 + ft_mono_s()) / 2;
	free(line);
	fclose(f);
	/* A vector /proc/interrupts did not list has no count: not known, the device's figures. */
	for (i = 0; i < snap->nr_devs; i++) {
		struct ft_dev *d = &snap->devs[i];
		unsigned int named = 0;

		for (unsigned int v = 0; v < d->nr_vec; v++)
			named += d->vec[v].name[0] != '\0';
		d->vectors_ok = d->nr_vec && named == d->nr_vec;
		if (d->vectors_ok)
			d->t_src[FT_TS_IRQ] = t;
	}
	return 0;
}

static void irq_fini(struct ft_source *src)
{
	free(src->priv);
	src->priv = NULL;
}

const struct ft_source_ops ft_irq_source = {
	.name = "interrupts",
	.init = irq_init,
	.sample = irq_sample,
	.fini = irq_fini,
};
