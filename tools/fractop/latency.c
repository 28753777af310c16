// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * The BPF latency source: fraclat's own BPF object (bpf/fraclat.bpf.c with bpf/frac_job.bpf.h,
 * its one program per job on frac_job_done, stages and loss counters; the skeleton bpf/
 * builds), loaded with histograms per queue (GROUP_QUEUE) in nanoseconds. Nothing of the BPF
 * side is forked: fractop sets the same rodata fraclat's -Q -N would, and picks tp_btf or
 * raw_tp with the same probe. Failed jobs are counted by status (lat_stats), not put in the
 * histograms, as fraclat without -S.
 *
 * Each sample flips the map's generation and drains the one the program left (lookup-and-
 * delete of elements no program writes any more: bpf/frac_gen.bpf.h, so nothing is lost or
 * torn) into cumulative histograms kept here, and copies them into every frac
 * device of the snapshot by accel minor (the tracepoints' dev). A device whose jobs have not
 * ended yet gets empty histograms: known zero, not "not known".
 */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fractop.h"
#include "fraclat.h"
#include "fraclat.skel.h"
#include "trace_helpers.h"

#define LAT_MAX_DEVS	8

struct lat_dev {
	unsigned int minor;
	unsigned int nr_queues;		/* highest queue seen + 1 */
	struct hist h[FT_MAX_QUEUES][NR_STAGES];
};

struct lat_priv {
	struct fraclat_bpf *obj;
	struct prog_misses misses;
	unsigned long long misses_total;
	struct lat_dev devs[LAT_MAX_DEVS];
	unsigned int nr_devs;
};

struct entry {
	struct fraclat_key key;
	struct fraclat_hists h;
};

static void merge_hists(void *dst, const void *src, bool first)
{
	struct fraclat_hists *d = dst;
	const struct fraclat_hists *s = src;

	for (int i = 0; i < NR_STAGES; i++)
		hist_merge(&d->stage[i], &s->stage[i], first);
}

static struct lat_dev *lat_dev_get(struct lat_priv *p, unsigned int minor)
{
	struct lat_dev *d;

	for (unsigned int i = 0; i < p->nr_devs; i++)
		if (p->devs[i].minor == minor)
			return &p->devs[i];
	if (p->nr_devs == LAT_MAX_DEVS)
		return NULL;
	d = &p->devs[p->nr_devs++];
	memset(d, 0, sizeof(*d));
	d->minor = minor;
	for (int q = 0; q < FT_MAX_QUEUES; q++)
		for (int s = 0; s < NR_STAGES; s++)
			d->h[q][s].min = ~0ULL;
	return d;
}

static int lat_init(struct ft_source *src, const struct ft_config *cfg)
{
	struct lat_priv *p;
	const char *denied;
	bool tp_btf;
	int err;

	tool_name = "fractop";
	denied = ft_latency_denied(cfg->no_bpf, have_cap(CAP_SYS_ADMIN), have_cap(CAP_BPF),
				   have_cap(CAP_PERFMON), !access("/sys/module/frac", F_OK));
	if (denied) {
		snprintf(src->why, sizeof(src->why), "%s", denied);
		return -EPERM;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	libbpf_set_print(libbpf_print_fn);	/* quiet unless tool_verbose */
	p->obj = fraclat_bpf__open();
	if (!p->obj) {
		err = -errno;
		snprintf(src->why, sizeof(src->why), "latency: opening the BPF object: %s",
			 strerror(-err));
		goto fail;
	}
	p->obj->rodata->targ_group = GROUP_QUEUE;
	p->obj->rodata->targ_by_status = false;
	p->obj->rodata->targ_unit = UNIT_NSEC;
	if (cfg->only_minor >= 0) {
		p->obj->rodata->filter_dev = true;
		p->obj->rodata->targ_dev = cfg->only_minor;
	}
	tp_btf = !cfg->no_btf && probe_tp_btf_progs(p->obj->obj, FRAC_MODULE);
	select_progs(p->obj->obj, tp_btf, false);
	err = fraclat_bpf__load(p->obj);
	if (!err)
		err = fraclat_bpf__attach(p->obj);
	if (err) {
		snprintf(src->why, sizeof(src->why), "latency: loading/attaching BPF: %s",
			 strerror(err < 0 ? -err : err));
		goto fail;
	}
	prog_misses_init(&p->misses, p->obj->obj);
	/* Active: why says how it attached (the screen and the record's header show it). */
	if (tp_btf)
		snprintf(src->why, sizeof(src->why), "attached with tp_btf");
	else
		snprintf(src->why, sizeof(src->why), "attached with raw_tp, not tp_btf: %.200s",
			 cfg->no_btf ? "--no-btf" : probe_why);
	src->priv = p;
	return 0;
fail:
	fraclat_bpf__destroy(p->obj);
	free(p);
	return err < 0 ? err : -err;
}

static int lat_sample(struct ft_source *src, struct ft_snapshot *snap)
{
	struct lat_priv *p = src->priv;
	struct job_stats st;
	struct entry *e = NULL;
	size_t n = 0;
	double t0, t;
	int err;

	t0 = ft_mono_s();
	err = map_drain_percpu(bpf_map__fd(p->obj->maps.hists), sizeof(struct fraclat_key),
			       offsetof(struct fraclat_key, gen),
			       gen_flip(&p->obj->bss->frac_gen, p->obj->bss->frac_gen_busy),
			       sizeof(struct fraclat_hists), offsetof(struct entry, h), sizeof(*e),
			       merge_hists, (void **)&e, &n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		struct lat_dev *d = lat_dev_get(p, e[i].key.dev);
		unsigned int q = e[i].key.id;

		if (!d || q >= FT_MAX_QUEUES)
			continue;	/* beyond what a frac device has: not shown */
		for (int s = 0; s < NR_STAGES; s++)
			hist_merge(&d->h[q][s], &e[i].h.stage[s], false);
		if (q + 1 > d->nr_queues)
			d->nr_queues = q + 1;
	}
	free(e);

	if (!job_stats_read(bpf_map__fd(p->obj->maps.job_stats), &st)) {
		uint64_t *ls = snap->lat_stats;

		prog_misses_update(&p->misses, true);
		p->misses_total += prog_misses_of(&p->misses, "job_done");
		ls[FT_LS_UNMATCHED] = st.unmatched;
		ls[FT_LS_NOID] = st.noid;
		ls[FT_LS_HIST_FULL] = st.hist_full;
		ls[FT_LS_TABLE_FULL] = st.table_full;
		ls[FT_LS_RECURSION_MISSES] = p->misses_total;
		ls[FT_LS_NORUN] = st.norun;
		ls[FT_LS_NOCOMPLETE] = st.nocomplete;
		ls[FT_LS_CLAMPED] = st.clamped;
		ls[FT_LS_NOIRQ] = st.noirq;
		ls[FT_LS_NODEV] = st.nodev;
		for (int k = 0; k < NR_STATUS; k++)
			ls[FT_LS_FIRST_STATUS + k] = st.status[k];
		snap->lat_ok = true;
	}
	t = (t0 + ft_mono_s()) / 2;

	for (unsigned int i = 0; i < snap->nr_devs; i++) {
		struct ft_dev *fd = &snap->devs[i];
		struct lat_dev *d;
		unsigned int nq;

		if (!fd->is_frac)
			continue;
		d = lat_dev_get(p, fd->minor);
		if (!d)
			continue;
		nq = d->nr_queues;
		if ((fd->has & (1ull << FT_D_NUM_QUEUES)) && fd->val[FT_D_NUM_QUEUES] > nq)
			nq = fd->val[FT_D_NUM_QUEUES];
		if (nq > FT_MAX_QUEUES)
			nq = FT_MAX_QUEUES;
		memcpy(fd->lat, d->h, sizeof(fd->lat[0]) * nq);
		fd->lat_nr_queues = nq;
		fd->lat_ok = true;
		fd->t_src[FT_TS_LATENCY] = t;
	}
	return 0;
}

static void lat_fini(struct ft_source *src)
{
	struct lat_priv *p = src->priv;

	if (!p)
		return;
	fraclat_bpf__destroy(p->obj);
	free(p);
	src->priv = NULL;
}

const struct ft_source_ops ft_latency_source = {
	.name = "latency",
	.init = lat_init,
	.sample = lat_sample,
	.fini = lat_fini,
};
