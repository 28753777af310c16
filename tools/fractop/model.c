// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * The model: from two snapshots, the view that the screen and the writers print. Every figure
 * is a struct ft_num: a rate exists only when both samples have the counter and it did not go
 * backwards (a device reset zeroes frac's counters: that interval's rate is not known, it is
 * not 0 and not a huge wrap-around). fdinfo's engine times follow drm-usage-stats.rst: a
 * value lower than the last one read is held at the last one until it catches up. A client
 * first seen in this sample has no rate yet; it counts from its second sample.
 *
 * A source reads its devices (and the fdinfo walk its clients) one after another, well after the
 * sample's start when the machine is busy: each read carries its own CLOCK_MONOTONIC instant,
 * and a rate is over the time between the same source's two reads (ft_src_interval()), so
 * that a figure never counts what happened before or after the interval it is said to cover.
 *
 * Also here: the snapshot's small container functions, and the rate history of each device
 * (carried across samples by the device's node and PCI address) for the sparklines.
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fractop.h"

const char *const ft_rate_names[FT_R_NR] = {
	[FT_R_BUSY_DMA_PCT] = "busy_dma_pct",
	[FT_R_BUSY_COMPUTE_PCT] = "busy_compute_pct",
	[FT_R_JOBS_PER_S] = "jobs_per_s",
	[FT_R_FAILED_PER_S] = "jobs_failed_per_s",
	[FT_R_READ_BPS] = "read_bytes_per_s",
	[FT_R_WRITE_BPS] = "written_bytes_per_s",
	[FT_R_IRQ_PER_S] = "interrupts_per_s",
};

const char *const ft_src_ts_names[FT_TS_NR] = {
	[FT_TS_SYSFS] = "sysfs",
	[FT_TS_DEBUGFS] = "debugfs",
	[FT_TS_IRQ] = "interrupts",
	[FT_TS_LATENCY] = "latency",
};

/* ---- snapshot containers ---- */

void ft_snapshot_reset(struct ft_snapshot *s)
{
	s->nr_devs = 0;
	s->nr_clients = 0;
	s->procs_seen = s->procs_denied = s->fds_seen = s->accel_fds = 0;
	s->lat_ok = false;
	memset(s->lat_stats, 0, sizeof(s->lat_stats));
	s->fdinfo_ok = s->sysfs_ok = false;
}

void ft_snapshot_free(struct ft_snapshot *s)
{
	free(s->devs);
	free(s->clients);
	memset(s, 0, sizeof(*s));
}

static void *grow(void *arr, unsigned int *cap, size_t size)
{
	unsigned int n = *cap ? 2 * *cap : 8;
	void *p = realloc(arr, n * size);

	if (p)
		*cap = n;
	return p;
}

struct ft_dev *ft_snapshot_add_dev(struct ft_snapshot *s)
{
	if (s->nr_devs == s->cap_devs) {
		struct ft_dev *n = grow(s->devs, &s->cap_devs, sizeof(*n));

		if (!n)
			return NULL;
		s->devs = n;
	}
	memset(&s->devs[s->nr_devs], 0, sizeof(s->devs[0]));
	return &s->devs[s->nr_devs++];
}

struct ft_client *ft_snapshot_add_client(struct ft_snapshot *s)
{
	if (s->nr_clients == s->cap_clients) {
		struct ft_client *n = grow(s->clients, &s->cap_clients, sizeof(*n));

		if (!n)
			return NULL;
		s->clients = n;
	}
	memset(&s->clients[s->nr_clients], 0, sizeof(s->clients[0]));
	s->clients[s->nr_clients].dev = -1;
	return &s->clients[s->nr_clients++];
}

int ft_snapshot_dev_by_minor(const struct ft_snapshot *s, unsigned int minor)
{
	for (unsigned int i = 0; i < s->nr_devs; i++)
		if (s->devs[i].minor == minor)
			return i;
	return -1;
}

/* ---- pure helpers ---- */

struct ft_num ft_counter_rate(uint64_t prev, bool prev_ok, uint64_t cur, bool cur_ok, double dt)
{
	if (!prev_ok || !cur_ok || !(dt > 0) || cur < prev)
		return FT_NUM_NA;
	return ft_num_of((double)(cur - prev) / dt);
}

/*
 * The interval a source's rates are over: from its read in the previous sample to its read in
 * this one; the samples' own interval when either read has no instant of its own (0).
 */
double ft_src_interval(double t_prev, double t_cur, double dt_sample)
{
	if (t_prev > 0 && t_cur > 0)
		return t_cur - t_prev;
	return dt_sample;
}

#define HAS(e, k) ((e)->has & (1u << (k)))

/*
 * One client's use of one engine over the interval, in percent of the engine's capacity:
 * drm-engine- time over wall time; else drm-cycles- over drm-total-cycles- (both in the
 * engine's clock); else drm-cycles- over drm-maxfreq- times wall time.
 */
struct ft_num ft_engine_busy_pct(const struct ft_engine *prev, const struct ft_engine *cur,
				 double dt)
{
	double cap = HAS(cur, FT_ENG_CAPACITY) ? (double)cur->val[FT_ENG_CAPACITY] : 1.0;

	if (!prev || !(dt > 0))
		return FT_NUM_NA;
	if (HAS(prev, FT_ENG_NS) && HAS(cur, FT_ENG_NS)) {
		uint64_t d = cur->val[FT_ENG_NS] > prev->val[FT_ENG_NS] ?
			     cur->val[FT_ENG_NS] - prev->val[FT_ENG_NS] : 0;

		return ft_num_of(100.0 * (double)d / (dt * 1e9) / cap);
	}
	if (HAS(prev, FT_ENG_CYCLES) && HAS(cur, FT_ENG_CYCLES) &&
	    HAS(prev, FT_ENG_TOTAL_CYCLES) && HAS(cur, FT_ENG_TOTAL_CYCLES)) {
		uint64_t tp = prev->val[FT_ENG_TOTAL_CYCLES], tc = cur->val[FT_ENG_TOTAL_CYCLES];
		uint64_t d = cur->val[FT_ENG_CYCLES] > prev->val[FT_ENG_CYCLES] ?
			     cur->val[FT_ENG_CYCLES] - prev->val[FT_ENG_CYCLES] : 0;

		if (tc <= tp)
			return FT_NUM_NA;
		return ft_num_of(100.0 * (double)d / (double)(tc - tp) / cap);
	}
	if (HAS(prev, FT_ENG_CYCLES) && HAS(cur, FT_ENG_CYCLES) && HAS(cur, FT_ENG_MAXFREQ) &&
	    cur->val[FT_ENG_MAXFREQ]) {
		uint64_t d = cur->val[FT_ENG_CYCLES] > prev->val[FT_ENG_CYCLES] ?
			     cur->val[FT_ENG_CYCLES] - prev->val[FT_ENG_CYCLES] : 0;

		return ft_num_of(100.0 * (double)d / ((double)cur->val[FT_ENG_MAXFREQ] * dt) / cap);
	}
	return FT_NUM_NA;
}

/* drm-usage-stats.rst: "stay with that larger previous value until a monotonic update". */
static void hold_monotonic(const struct ft_engine *prev, struct ft_engine *cur)
{
	static const int keys[] = { FT_ENG_NS, FT_ENG_CYCLES, FT_ENG_TOTAL_CYCLES };

	for (unsigned int i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		int k = keys[i];

		if (HAS(prev, k) && HAS(cur, k) && cur->val[k] < prev->val[k])
			cur->val[k] = prev->val[k];
	}
}

/* "queue2" before "queue10": digits compare as numbers. */
static int natcmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			unsigned long x = strtoul(a, (char **)&a, 10);
			unsigned long y = strtoul(b, (char **)&b, 10);

			if (x != y)
				return x < y ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

static int cmp_view_engine(const void *a, const void *b)
{
	return natcmp(((const struct ft_view_engine *)a)->name,
		      ((const struct ft_view_engine *)b)->name);
}

static int cmp_view_region(const void *a, const void *b)
{
	return natcmp(((const struct ft_view_region *)a)->name,
		      ((const struct ft_view_region *)b)->name);
}

static void num_add(struct ft_num *acc, struct ft_num x)
{
	if (!x.ok)
		return;
	acc->v = acc->ok ? acc->v + x.v : x.v;
	acc->ok = true;
}

static struct ft_view_engine *view_engine(struct ft_view_engine *arr, unsigned int *nr,
					  const char *name)
{
	for (unsigned int i = 0; i < *nr; i++)
		if (!strcmp(arr[i].name, name))
			return &arr[i];
	if (*nr == FT_MAX_ENGINES)
		return NULL;
	memset(&arr[*nr], 0, sizeof(arr[0]));
	snprintf(arr[*nr].name, sizeof(arr[0].name), "%s", name);
	return &arr[(*nr)++];
}

static struct ft_view_region *view_region(struct ft_view_region *arr, unsigned int *nr,
					  const char *name)
{
	for (unsigned int i = 0; i < *nr; i++)
		if (!strcmp(arr[i].name, name))
			return &arr[i];
	if (*nr == FT_MAX_REGIONS)
		return NULL;
	memset(&arr[*nr], 0, sizeof(arr[0]));
	snprintf(arr[*nr].name, sizeof(arr[0].name), "%s", name);
	return &arr[(*nr)++];
}

static const struct ft_engine *find_engine(const struct ft_fdinfo *fi, const char *name)
{
	for (unsigned int i = 0; i < fi->nr_engines; i++)
		if (!strcmp(fi->engines[i].name, name))
			return &fi->engines[i];
	return NULL;
}

static bool same_dev(const struct ft_dev *a, const struct ft_dev *b)
{
	return !strcmp(a->node, b->node) && !strcmp(a->pdev, b->pdev) &&
	       !strcmp(a->driver, b->driver);
}

static int find_prev_dev(const struct ft_model *m, const struct ft_dev *d)
{
	if (!m->have_prev)
		return -1;
	for (unsigned int i = 0; i < m->prev.nr_devs; i++)
		if (same_dev(&m->prev.devs[i], d))
			return i;
	return -1;
}

/* Clients in (device, has id, id) order: the previous sample's are searched by bisection. */
static int cmp_client_key(const struct ft_client *x, int dev, bool has_id, uint64_t id)
{
	if (x->dev != dev)
		return x->dev < dev ? -1 : 1;
	if (x->fi.has_client_id != has_id)
		return x->fi.has_client_id < has_id ? -1 : 1;
	if (x->fi.client_id != id)
		return x->fi.client_id < id ? -1 : 1;
	return 0;
}

static int cmp_client(const void *a, const void *b)
{
	const struct ft_client *y = b;
	int r = cmp_client_key(a, y->dev, y->fi.has_client_id, y->fi.client_id);

	return r ? r : (((const struct ft_client *)a)->pid > y->pid) -
		       (((const struct ft_client *)a)->pid < y->pid);
}

static const struct ft_client *find_prev_client(const struct ft_model *m, int pdev,
						const struct ft_client *c)
{
	unsigned int lo = 0, hi = m->prev.nr_clients;

	if (pdev < 0 || !c->fi.has_client_id)
		return NULL;
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (cmp_client_key(&m->prev.clients[mid], pdev, true, c->fi.client_id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->prev.nr_clients &&
	    !cmp_client_key(&m->prev.clients[lo], pdev, true, c->fi.client_id) &&
	    !strcmp(m->prev.clients[lo].fi.driver, c->fi.driver))
		return &m->prev.clients[lo];
	return NULL;
}

static struct ft_view_proc *view_proc(struct ft_view_dev *vd, unsigned int *cap,
				      const struct ft_client *c)
{
	struct ft_view_proc *p;

	for (unsigned int i = 0; i < vd->nr_procs; i++)
		if (vd->procs[i].pid == c->pid)
			return &vd->procs[i];
	if (vd->nr_procs == *cap) {
		p = grow(vd->procs, cap, sizeof(*p));
		if (!p)
			return NULL;
		vd->procs = p;
	}
	p = &vd->procs[vd->nr_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = c->pid;
	memcpy(p->comm, c->comm, sizeof(p->comm));
	return p;
}

static void add_regions(struct ft_view_region *arr, unsigned int *nr, const struct ft_fdinfo *fi)
{
	for (unsigned int r = 0; r < fi->nr_regions; r++) {
		const struct ft_region *reg = &fi->regions[r];
		struct ft_view_region *vr = view_region(arr, nr, reg->name);

		if (!vr)
			continue;
		for (int k = 0; k < FT_MEM_NR; k++)
			if (HAS(reg, k))
				num_add(&vr->bytes[k], ft_num_of((double)reg->val[k]));
	}
}

/* The client's share of one device: engines, memory, jobs, into the device and its process. */
static int add_client(struct ft_model *m, struct ft_view_dev *vd, unsigned int *proc_cap,
		      int pdev, struct ft_client *c, double dt)
{
	const struct ft_client *pc = find_prev_client(m, pdev, c);
	struct ft_view_proc *vp = view_proc(vd, proc_cap, c);

	if (!vp)
		return -ENOMEM;
	/* Over this client's own interval: the time between its two fdinfo reads. */
	dt = ft_src_interval(pc ? pc->t_mono : 0, c->t_mono, dt);
	if (!vp->nr_clients) {
		/* A process's clients are read one after another in its own walk: the first's. */
		if (c->t_mono > 0)
			vp->t_fdinfo = ft_num_of(c->t_mono);
		if (pc && dt > 0)
			vp->dt_fdinfo = ft_num_of(dt);
	}
	vp->nr_clients++;
	vd->nr_clients++;
	for (unsigned int e = 0; e < c->fi.nr_engines; e++) {
		struct ft_engine *en = &c->fi.engines[e];
		const struct ft_engine *pe = pc ? find_engine(&pc->fi, en->name) : NULL;
		struct ft_view_engine *de = view_engine(vd->engines, &vd->nr_engines, en->name);
		struct ft_view_engine *pr = view_engine(vp->engines, &vp->nr_engines, en->name);
		struct ft_num busy;

		if (pe)
			hold_monotonic(pe, en);
		busy = ft_engine_busy_pct(pe, en, dt);
		if (de) {
			num_add(&de->busy_pct, busy);
			if (HAS(en, FT_ENG_NS))
				num_add(&de->ns, ft_num_of((double)en->val[FT_ENG_NS]));
		}
		if (pr) {
			num_add(&pr->busy_pct, busy);
			if (HAS(en, FT_ENG_NS))
				num_add(&pr->ns, ft_num_of((double)en->val[FT_ENG_NS]));
		}
		num_add(&vp->busy_pct, busy);
	}
	add_regions(vd->regions, &vd->nr_regions, &c->fi);
	add_regions(vp->regions, &vp->nr_regions, &c->fi);

	if (c->fi.drv_has & (1u << FT_DRV_FRAC_JOBS_FAILED))
		num_add(&vp->jobs_failed, ft_num_of((double)c->fi.drv[FT_DRV_FRAC_JOBS_FAILED]));
	if (c->fi.drv_has & (1u << FT_DRV_FRAC_JOBS_COMPLETED)) {
		uint64_t cur = c->fi.drv[FT_DRV_FRAC_JOBS_COMPLETED];
		bool pok = pc && (pc->fi.drv_has & (1u << FT_DRV_FRAC_JOBS_COMPLETED));

		num_add(&vp->jobs, ft_num_of((double)cur));
		num_add(&vp->jobs_per_s, ft_counter_rate(pok ? pc->fi.drv[FT_DRV_FRAC_JOBS_COMPLETED]
							     : 0, pok, cur, true, dt));
	}
	return 0;
}

/* A process's memory: drm-total- where the driver gives it, else drm-memory-. */
static void proc_mem(struct ft_view_proc *vp)
{
	vp->mem_bytes = FT_NUM_NA;
	for (unsigned int r = 0; r < vp->nr_regions; r++) {
		const struct ft_view_region *vr = &vp->regions[r];

		num_add(&vp->mem_bytes, vr->bytes[FT_MEM_TOTAL].ok ? vr->bytes[FT_MEM_TOTAL]
								     : vr->bytes[FT_MEM_MEMORY]);
	}
}

#define DEV_OK(d, k) ((d)->has & (1ull << (k)))

static void dev_rates(struct ft_view_dev *vd, const struct ft_dev *p, double dt_sample)
{
	const struct ft_dev *d = &vd->dev;
	double dt_src[FT_TS_NR], dt;
	static const struct { int rate, key; } plain[] = {
		{ FT_R_JOBS_PER_S, FT_D_JOBS_COMPLETED },
		{ FT_R_FAILED_PER_S, FT_D_JOBS_FAILED },
		{ FT_R_READ_BPS, FT_D_BYTES_READ },
		{ FT_R_WRITE_BPS, FT_D_BYTES_WRITTEN },
		{ FT_R_IRQ_PER_S, FT_D_INTERRUPTS },
	};
	static const struct { int rate, key; } busy[] = {
		{ FT_R_BUSY_DMA_PCT, FT_D_BUSY_NS_DMA },
		{ FT_R_BUSY_COMPUTE_PCT, FT_D_BUSY_NS_COMPUTE },
	};
	unsigned int i;

	for (i = 0; i < FT_TS_NR; i++) {
		dt_src[i] = ft_src_interval(p ? p->t_src[i] : 0, d->t_src[i], dt_sample);
		vd->t_src[i] = d->t_src[i] > 0 ? ft_num_of(d->t_src[i]) : FT_NUM_NA;
		vd->dt_src[i] = p && p->t_src[i] > 0 && d->t_src[i] > 0 && dt_src[i] > 0 ?
				ft_num_of(dt_src[i]) : FT_NUM_NA;
	}
	for (i = 0; i < FT_R_NR; i++)
		vd->rate[i] = FT_NUM_NA;
	dt = dt_src[FT_TS_SYSFS];
	if (p) {
		for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
			int k = plain[i].key;

			vd->rate[plain[i].rate] = ft_counter_rate(p->val[k], DEV_OK(p, k), d->val[k],
								  DEV_OK(d, k), dt);
		}
		/* Busy time over the device's own clock: both in device ns, no host jitter. */
		struct ft_num clk = ft_counter_rate(p->val[FT_D_DEVICE_CLOCK_NS],
						    DEV_OK(p, FT_D_DEVICE_CLOCK_NS),
						    d->val[FT_D_DEVICE_CLOCK_NS],
						    DEV_OK(d, FT_D_DEVICE_CLOCK_NS), 1.0);

		for (i = 0; i < sizeof(busy) / sizeof(busy[0]); i++) {
			int k = busy[i].key;
			struct ft_num b = ft_counter_rate(p->val[k], DEV_OK(p, k), d->val[k],
							  DEV_OK(d, k), 1.0);

			if (clk.ok && clk.v > 0 && b.ok)
				vd->rate[busy[i].rate] = ft_num_of(100.0 * b.v / clk.v);
		}
	}
	/* Per queue (debugfs) and per vector (/proc/interrupts), each over its own reads. */
	dt = dt_src[FT_TS_DEBUGFS];
	for (i = 0; i < d->nr_queues; i++) {
		bool pq = p && i < p->nr_queues;

		vd->queues[i].jobs_per_s = ft_counter_rate(pq ? p->q[i][FT_Q_COMPLETED] : 0, pq,
							   d->q[i][FT_Q_COMPLETED], true, dt);
		vd->queues[i].failed_per_s = ft_counter_rate(pq ? p->q[i][FT_Q_FAILED] : 0, pq,
							     d->q[i][FT_Q_FAILED], true, dt);
	}
	dt = dt_src[FT_TS_IRQ];
	for (i = 0; i < d->nr_vec; i++) {
		const struct ft_vector *pv = NULL;

		vd->vec_per_s[i] = FT_NUM_NA;
		for (unsigned int j = 0; p && p->vectors_ok && j < p->nr_vec; j++)
			if (p->vec[j].irq == d->vec[i].irq && !strcmp(p->vec[j].name, d->vec[i].name))
				pv = &p->vec[j];
		if (d->vectors_ok)
			vd->vec_per_s[i] = ft_counter_rate(pv ? pv->count : 0, pv, d->vec[i].count,
							   true, dt);
	}
	vd->temp_c = DEV_OK(d, FT_D_TEMP_MC) ? ft_num_of((double)(int64_t)d->val[FT_D_TEMP_MC] / 1e3)
					      : FT_NUM_NA;
	vd->power_w = DEV_OK(d, FT_D_POWER_UW) ? ft_num_of((double)d->val[FT_D_POWER_UW] / 1e6)
					       : FT_NUM_NA;
}

static void push_hist(struct ft_view_dev *vd)
{
	if (vd->hist_len == FT_HIST_LEN) {
		for (int r = 0; r < FT_R_NR; r++)
			memmove(vd->hist[r], vd->hist[r] + 1, (FT_HIST_LEN - 1) * sizeof(double));
		vd->hist_len--;
	}
	for (int r = 0; r < FT_R_NR; r++)
		vd->hist[r][vd->hist_len] = vd->rate[r].ok ? vd->rate[r].v : NAN;
	vd->hist_len++;
}

void ft_model_init(struct ft_model *m)
{
	memset(m, 0, sizeof(*m));
}

static void free_view(struct ft_view *v)
{
	for (unsigned int i = 0; i < v->nr_devs; i++)
		free(v->devs[i].procs);
	free(v->devs);
	v->devs = NULL;
	v->nr_devs = 0;
}

void ft_model_fini(struct ft_model *m)
{
	free_view(&m->view);
	ft_snapshot_free(&m->prev);
}

static void *dup_array(const void *src, unsigned int n, size_t size)
{
	void *p = malloc(n ? n * size : 1);

	if (p && n)
		memcpy(p, src, n * size);
	return p;
}

/* A deep copy of @src into @dst (which is overwritten, not freed): a replay's checkpoint. */
int ft_model_clone(struct ft_model *dst, const struct ft_model *src)
{
	struct ft_model m = *src;
	unsigned int i;

	m.prev.devs = dup_array(src->prev.devs, src->prev.nr_devs, sizeof(*m.prev.devs));
	m.prev.clients = dup_array(src->prev.clients, src->prev.nr_clients,
				   sizeof(*m.prev.clients));
	m.prev.cap_devs = src->prev.nr_devs;
	m.prev.cap_clients = src->prev.nr_clients;
	m.view.devs = dup_array(src->view.devs, src->view.nr_devs, sizeof(*m.view.devs));
	if (!m.prev.devs || !m.prev.clients || !m.view.devs) {
		free(m.prev.devs);
		free(m.prev.clients);
		free(m.view.devs);
		return -ENOMEM;
	}
	for (i = 0; i < m.view.nr_devs; i++) {
		const struct ft_view_dev *vd = &src->view.devs[i];

		m.view.devs[i].procs = dup_array(vd->procs, vd->nr_procs, sizeof(*vd->procs));
		if (!m.view.devs[i].procs) {
			m.view.nr_devs = i;
			ft_model_fini(&m);
			return -ENOMEM;
		}
	}
	*dst = m;
	return 0;
}

int ft_model_update(struct ft_model *m, struct ft_snapshot *snap)
{
	struct ft_view old = m->view;
	struct ft_view nv = { 0 };
	double dt = m->have_prev ? snap->t_mono - m->prev.t_mono : 0;
	unsigned int i, j;

	nv.t_wall = snap->t_wall;
	nv.t_mono = snap->t_mono;
	nv.interval_s = m->have_prev && dt > 0 ? ft_num_of(dt) : FT_NUM_NA;
	nv.procs_seen = snap->procs_seen;
	nv.procs_denied = snap->procs_denied;
	nv.fds_seen = snap->fds_seen;
	nv.accel_fds = snap->accel_fds;
	nv.lat_ok = snap->lat_ok;
	memcpy(nv.lat_stats, snap->lat_stats, sizeof(nv.lat_stats));
	/* Sources need not sort: the next sample finds these by bisection. */
	qsort(snap->clients, snap->nr_clients, sizeof(*snap->clients), cmp_client);
	nv.devs = calloc(snap->nr_devs ? snap->nr_devs : 1, sizeof(*nv.devs));
	if (!nv.devs)
		return -ENOMEM;
	nv.nr_devs = snap->nr_devs;

	for (i = 0; i < snap->nr_devs; i++) {
		struct ft_view_dev *vd = &nv.devs[i];
		int pdev = find_prev_dev(m, &snap->devs[i]);
		unsigned int proc_cap = 0;

		vd->dev = snap->devs[i];
		dev_rates(vd, pdev >= 0 ? &m->prev.devs[pdev] : NULL, dt);
		for (j = 0; j < snap->nr_clients; j++) {
			if (snap->clients[j].dev != (int)i)
				continue;
			if (add_client(m, vd, &proc_cap, pdev, &snap->clients[j], dt)) {
				m->view = nv;
				free_view(&m->view);
				m->view = old;
				return -ENOMEM;
			}
		}
		for (j = 0; j < vd->nr_procs; j++) {
			struct ft_view_proc *vp = &vd->procs[j];

			proc_mem(vp);
			qsort(vp->engines, vp->nr_engines, sizeof(vp->engines[0]), cmp_view_engine);
			qsort(vp->regions, vp->nr_regions, sizeof(vp->regions[0]), cmp_view_region);
		}
		qsort(vd->engines, vd->nr_engines, sizeof(vd->engines[0]), cmp_view_engine);
		qsort(vd->regions, vd->nr_regions, sizeof(vd->regions[0]), cmp_view_region);

		/* The history of the same device, if it was there before. */
		for (j = 0; j < old.nr_devs; j++) {
			if (same_dev(&old.devs[j].dev, &vd->dev)) {
				memcpy(vd->hist, old.devs[j].hist, sizeof(vd->hist));
				vd->hist_len = old.devs[j].hist_len;
				break;
			}
		}
		push_hist(vd);
	}

	free_view(&old);
	m->view = nv;
	/* The new snapshot (with held engine values) is the next one's previous. */
	ft_snapshot_free(&m->prev);
	m->prev = *snap;
	m->have_prev = true;
	memset(snap, 0, sizeof(*snap));
	return 0;
}
