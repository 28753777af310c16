// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * Host unit tests of fractop's pure parts: the fdinfo parser (fixtures in the documented
 * format for frac, amdxdna, ivpu, i915, amdgpu, xe, panfrost, and malformed lines), the rate
 * and validity logic of the model, number formatting, sparklines, column layout and the JSON
 * and CSV writers, the JSON reader and the record format. No terminal, no device. Prints TAP result lines without a plan: tests/run.sh
 * adds its end-to-end checks, numbers them and writes the plan.
 * Usage: tests/unit FIXTURE_DIR [JSON_OUT CSV_OUT]
 */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fractop.h"

static int failures;
static const char *fixdir;

static void ok(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		failures++;
}

static void is_str(const char *got, const char *want, const char *what)
{
	ok(!strcmp(got, want), "%s: '%s'", what, want);
	if (strcmp(got, want))
		printf("#   got '%s'\n", got);
}

static void is_u64(uint64_t got, uint64_t want, const char *what)
{
	ok(got == want, "%s = %llu", what, (unsigned long long)want);
	if (got != want)
		printf("#   got %llu\n", (unsigned long long)got);
}

static void is_num(struct ft_num got, double want, const char *what)
{
	bool good = got.ok && fabs(got.v - want) <= 1e-9 * fmax(1, fabs(want));

	ok(good, "%s = %g", what, want);
	if (!good)
		printf("#   got %s%g\n", got.ok ? "" : "n/a ", got.v);
}

static void is_na(struct ft_num got, const char *what)
{
	ok(!got.ok, "%s is n/a", what);
	if (got.ok)
		printf("#   got %g\n", got.v);
}

static char *slurp(const char *name, size_t *len)
{
	char path[1024];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", fixdir, name);
	f = fopen(path, "r");
	if (!f) {
		printf("# cannot open %s: %s\n", path, strerror(errno));
		*len = 0;
		return calloc(1, 1);
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	*len = fread(buf, 1, n, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static struct ft_fdinfo *parse_fixture(const char *name, int *ret)
{
	static struct ft_fdinfo fi;
	size_t len;
	char *text = slurp(name, &len);

	*ret = ft_fdinfo_parse(text, len, &fi);
	free(text);
	return &fi;
}

static const struct ft_engine *eng(const struct ft_fdinfo *fi, const char *name)
{
	for (unsigned int i = 0; i < fi->nr_engines; i++)
		if (!strcmp(fi->engines[i].name, name))
			return &fi->engines[i];
	return NULL;
}

static const struct ft_region *reg(const struct ft_fdinfo *fi, const char *name)
{
	for (unsigned int i = 0; i < fi->nr_regions; i++)
		if (!strcmp(fi->regions[i].name, name))
			return &fi->regions[i];
	return NULL;
}

#define HAS(x, k) (!!((x)->has & (1u << (k))))

static void test_fdinfo_frac(void)
{
	int ret;
	struct ft_fdinfo *fi = parse_fixture("frac.txt", &ret);
	const struct ft_engine *q0, *q3;
	const struct ft_region *sys, *dev;

	ok(ret == 0, "frac: parses (drm-driver present)");
	is_str(fi->driver, "frac", "frac: drm-driver");
	is_str(fi->pdev, "0000:01:00.0", "frac: drm-pdev");
	ok(fi->has_client_id && fi->client_id == 7, "frac: drm-client-id 7");
	is_u64(fi->nr_engines, 4, "frac: engines");
	q0 = eng(fi, "queue0");
	q3 = eng(fi, "queue3");
	ok(q0 && HAS(q0, FT_ENG_NS) && q0->val[FT_ENG_NS] == 1500000 && HAS(q0, FT_ENG_CAPACITY) &&
	   q0->val[FT_ENG_CAPACITY] == 1, "frac: queue0 1500000 ns, capacity 1");
	ok(q3 && q3->val[FT_ENG_NS] == UINT64_MAX, "frac: queue3 UINT64_MAX ns (no overflow)");
	ok(fi->drv_has == 7 && fi->drv[FT_DRV_FRAC_CONTEXT] == 3 &&
	   fi->drv[FT_DRV_FRAC_JOBS_COMPLETED] == 96 && fi->drv[FT_DRV_FRAC_JOBS_FAILED] == 2,
	   "frac: drm-frac-context 3, drm-frac-jobs-completed 96, drm-frac-jobs-failed 2");
	is_u64(fi->nr_regions, 2, "frac: regions");
	sys = reg(fi, "memory");
	dev = reg(fi, "devmem");
	ok(sys && sys->val[FT_MEM_TOTAL] == 192 * 1024 && sys->val[FT_MEM_SHARED] == 64 * 1024 &&
	   sys->val[FT_MEM_MEMORY] == 192 * 1024 && !HAS(sys, FT_MEM_PURGEABLE),
	   "frac: memory region total 192 KiB, shared 64 KiB, no purgeable key");
	ok(dev && dev->val[FT_MEM_TOTAL] == 4u << 20 && HAS(dev, FT_MEM_SHARED) &&
	   dev->val[FT_MEM_SHARED] == 0 && dev->val[FT_MEM_RESIDENT] == 4u << 20,
	   "frac: devmem total 4 MiB (MiB unit), shared 0 (no unit), resident 4096 KiB");
	is_u64(fi->malformed, 0, "frac: malformed lines");
}

static void test_fdinfo_others(void)
{
	const struct ft_engine *e;
	const struct ft_region *r;
	struct ft_fdinfo *fi;
	int ret;

	fi = parse_fixture("amdxdna.txt", &ret);
	ok(!ret && !strcmp(fi->driver, "amdxdna_accel_driver") && fi->client_id == 12,
	   "amdxdna: driver and client id");
	e = eng(fi, "npu-amdxdna");
	ok(e && e->val[FT_ENG_NS] == 123456789 && !HAS(e, FT_ENG_CAPACITY),
	   "amdxdna: engine npu-amdxdna, no capacity key (parser assumes 1 later)");
	r = reg(fi, "memory");
	ok(r && r->val[FT_MEM_TOTAL] == 2 << 20 && r->val[FT_MEM_ACTIVE] == 1 << 20 &&
	   r->val[FT_MEM_PURGEABLE] == 512 << 10 && !HAS(r, FT_MEM_MEMORY),
	   "amdxdna: memory total/active/purgeable, no legacy drm-memory-");

	fi = parse_fixture("ivpu.txt", &ret);
	e = eng(fi, "compute");
	ok(!ret && e && e->val[FT_ENG_NS] == 5000000000ull && reg(fi, "memory") &&
	   reg(fi, "memory")->val[FT_MEM_TOTAL] == 8 << 20, "ivpu: compute 5 s, 8 MiB total");

	fi = parse_fixture("i915.txt", &ret);
	ok(!ret && fi->nr_engines == 4, "i915: 4 engines (render, copy, video, video-enhance)");
	e = eng(fi, "video");
	ok(e && HAS(e, FT_ENG_CAPACITY) && e->val[FT_ENG_CAPACITY] == 2,
	   "i915: drm-engine-capacity-video: 2");
	ok(eng(fi, "video-enhance") && !eng(fi, "capacity-video"),
	   "i915: 'video-enhance' is an engine, 'capacity-video' is not");
	ok(reg(fi, "system0") && reg(fi, "stolen-system0") &&
	   reg(fi, "system0")->val[FT_MEM_PURGEABLE] == 140 << 10, "i915: regions system0, stolen-system0");

	fi = parse_fixture("amdgpu.txt", &ret);
	ok(!ret && fi->nr_regions == 3 && reg(fi, "vram") &&
	   reg(fi, "vram")->val[FT_MEM_MEMORY] == 4620 << 10 && !HAS(reg(fi, "vram"), FT_MEM_TOTAL),
	   "amdgpu: legacy drm-memory-vram 4620 KiB, 3 regions, amd- keys ignored");
	ok(fi->nr_engines == 3 && eng(fi, "gfx") && eng(fi, "gfx")->val[FT_ENG_NS] == 1095812,
	   "amdgpu: gfx 1095812 ns");

	fi = parse_fixture("xe.txt", &ret);
	e = eng(fi, "rcs");
	ok(!ret && e && HAS(e, FT_ENG_CYCLES) && HAS(e, FT_ENG_TOTAL_CYCLES) && !HAS(e, FT_ENG_NS) &&
	   e->val[FT_ENG_TOTAL_CYCLES] == 7655183225ull, "xe: rcs cycles and total-cycles, no ns");

	fi = parse_fixture("panfrost.txt", &ret);
	e = eng(fi, "vertex-tiler");
	ok(!ret && !fi->has_pdev && e && e->val[FT_ENG_MAXFREQ] == 800000000ull,
	   "panfrost: maxfreq '800 MHz' = 8e8 Hz, no pdev");
	e = eng(fi, "fragment");
	ok(e && e->val[FT_ENG_MAXFREQ] == 799999987ull && fi->malformed == 0,
	   "panfrost: maxfreq in Hz; drm-curfreq- ignored, not malformed");
}

static void test_fdinfo_malformed(void)
{
	struct ft_fdinfo *fi;
	const struct ft_region *r;
	char text[8192];
	size_t len = 0;
	int ret;

	fi = parse_fixture("malformed.txt", &ret);
	ok(!ret, "malformed: still parses (drm-driver present)");
	is_u64(fi->malformed, 10, "malformed: bad lines counted");
	ok(fi->nr_engines == 1 && eng(fi, "queue0") && eng(fi, "queue0")->val[FT_ENG_NS] == 100 &&
	   !HAS(eng(fi, "queue0"), FT_ENG_CAPACITY) && !HAS(eng(fi, "queue0"), FT_ENG_CYCLES),
	   "malformed: only queue0's good line kept; capacity 0 and cycles -5 refused");
	r = reg(fi, "devmem");
	ok(r && r->has == 1u << FT_MEM_RESIDENT && r->val[FT_MEM_RESIDENT] == 8192,
	   "malformed: devmem only resident '  8 KiB  \\r' = 8192 (GB unit and overflow refused)");
	ok(!fi->has_client_id && !fi->drv_has, "malformed: no client id, drm-frac-jobs-completed 'many' refused");

	ret = ft_fdinfo_parse("pos:\t0\nflags:\t0\n", strlen("pos:\t0\nflags:\t0\n"), fi);
	ok(ret == -ENODATA, "no drm-driver: -ENODATA");
	ret = ft_fdinfo_parse("", 0, fi);
	ok(ret == -ENODATA, "empty text: -ENODATA");
	ret = ft_fdinfo_parse("drm-driver:\tx\ndrm-engine-a:\t5 ns",
			      strlen("drm-driver:\tx\ndrm-engine-a:\t5 ns"), fi);
	ok(!ret && eng(fi, "a") && eng(fi, "a")->val[FT_ENG_NS] == 5, "last line without newline");

	/* Limits: FT_MAX_ENGINES engines fit, one more is dropped; names up to 31 chars. */
	len = snprintf(text, sizeof(text), "drm-driver: t\n");
	for (int i = 0; i <= FT_MAX_ENGINES; i++)
		len += snprintf(text + len, sizeof(text) - len, "drm-engine-e%d: %d ns\n", i, i);
	ft_fdinfo_parse(text, len, fi);
	ok(fi->nr_engines == FT_MAX_ENGINES && fi->dropped == 1,
	   "%d engines kept, the %dth dropped and counted", FT_MAX_ENGINES, FT_MAX_ENGINES + 1);
	len = snprintf(text, sizeof(text),
		       "drm-driver: t\ndrm-engine-%031d: 1 ns\ndrm-engine-%032d: 2 ns\n", 0, 0);
	ft_fdinfo_parse(text, len, fi);
	ok(fi->nr_engines == 1 && strlen(fi->engines[0].name) == 31 && fi->dropped == 1,
	   "a 31-character engine name kept, a 32-character one dropped");
	len = snprintf(text, sizeof(text), "drm-driver: %032d\n", 0);
	ok(ft_fdinfo_parse(text, len, fi) == -ENODATA && fi->malformed == 1,
	   "a 32-character drm-driver is malformed");
}

static void test_rates(void)
{
	struct ft_engine a = { .name = "q" }, b = { .name = "q" };

	is_num(ft_counter_rate(100, true, 350, true, 2.5), 100, "rate: 250 over 2.5 s");
	is_num(ft_counter_rate(7, true, 7, true, 1), 0, "rate: unchanged counter is a real 0");
	is_na(ft_counter_rate(500, true, 10, true, 1), "rate: counter went backwards (reset)");
	is_na(ft_counter_rate(0, false, 10, true, 1), "rate: no previous value");
	is_na(ft_counter_rate(0, true, 10, false, 1), "rate: no current value");
	is_na(ft_counter_rate(0, true, 10, true, 0), "rate: zero interval");

	a.has = b.has = 1u << FT_ENG_NS;
	a.val[FT_ENG_NS] = 1000000000;
	b.val[FT_ENG_NS] = 1500000000;
	is_num(ft_engine_busy_pct(&a, &b, 1.0), 50, "busy: 0.5 s of ns over 1 s");
	is_na(ft_engine_busy_pct(NULL, &b, 1.0), "busy: new client has no rate");
	b.has |= 1u << FT_ENG_CAPACITY;
	b.val[FT_ENG_CAPACITY] = 2;
	is_num(ft_engine_busy_pct(&a, &b, 1.0), 25, "busy: capacity 2 halves it");
	b.has = a.has = (1u << FT_ENG_CYCLES) | (1u << FT_ENG_TOTAL_CYCLES);
	a.val[FT_ENG_CYCLES] = 100;
	b.val[FT_ENG_CYCLES] = 400;
	a.val[FT_ENG_TOTAL_CYCLES] = 1000;
	b.val[FT_ENG_TOTAL_CYCLES] = 2000;
	is_num(ft_engine_busy_pct(&a, &b, 123.0), 30, "busy: cycles over total-cycles, wall time unused");
	b.val[FT_ENG_TOTAL_CYCLES] = 1000;
	is_na(ft_engine_busy_pct(&a, &b, 1.0), "busy: total-cycles did not advance");
	a.has = 1u << FT_ENG_CYCLES;
	b.has = (1u << FT_ENG_CYCLES) | (1u << FT_ENG_MAXFREQ);
	b.val[FT_ENG_MAXFREQ] = 1000;
	is_num(ft_engine_busy_pct(&a, &b, 0.5), 60, "busy: 300 cycles at 1 kHz max over 0.5 s");
	b.has = 1u << FT_ENG_CYCLES;
	is_na(ft_engine_busy_pct(&a, &b, 1.0), "busy: cycles alone give no ratio");
}

/* A frac device and a non-frac one; clients as the fdinfo walk would leave them. */
/*
 * A job of @ns into a histogram, as bpf/frac_hist.bpf.h's hist_add_cpu() does with fractop's
 * rodata (targ_unit UNIT_NSEC, log2): slot log2(ns), fine slot FINE_SUB per power of 2.
 */
static unsigned int ilog2(uint64_t v)
{
	unsigned int k = 0;

	while (v >>= 1)
		k++;
	return k;
}

static void lat_add(struct hist *h, uint64_t ns)
{
	unsigned int k = ilog2(ns), fine;

	fine = ns < FINE_SUB ? ns : (k - FINE_SUB_BITS + 1) * FINE_SUB +
				    ((ns >> (k - FINE_SUB_BITS)) & (FINE_SUB - 1));
	h->slots[k >= MAX_SLOTS ? MAX_SLOTS - 1 : k]++;
	h->fine[fine >= FINE_SLOTS ? FINE_SLOTS - 1 : fine]++;
	if (!h->count || ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->count++;
	h->sum += ns;
}

/* Queue 0 of @d: @n jobs of 1, 2, .. n us in every stage; queue 1 none. */
static void mk_latency(struct ft_snapshot *s, struct ft_dev *d, unsigned int n)
{
	d->lat_ok = true;
	d->lat_nr_queues = 2;
	for (int st = 0; st < NR_STAGES; st++)
		for (unsigned int i = 1; i <= n; i++)
			lat_add(&d->lat[0][st], i * 1000ull);
	s->lat_ok = true;
	s->lat_stats[FT_LS_OK] = n;
	s->lat_stats[FT_LS_EIO] = 2;
	s->lat_stats[FT_LS_UNMATCHED] = 1;
}

static void mk_snapshot(struct ft_snapshot *s, double t, uint64_t jobs, uint64_t busy_dma,
			uint64_t clock, uint64_t c1_ns, bool with_c2, uint64_t c2_ns)
{
	struct ft_dev *d = ft_snapshot_add_dev(s), *o;
	struct ft_client *c;

	s->t_mono = t;
	s->t_wall = 1000 + t;
	snprintf(d->node, sizeof(d->node), "accel0");
	snprintf(d->driver, sizeof(d->driver), "frac");
	snprintf(d->pdev, sizeof(d->pdev), "0000:01:00.0");
	d->is_frac = true;
	for (int k = 0; k < FT_D_POWER_UW; k++)
		d->has |= 1ull << k;
	d->val[FT_D_JOBS_COMPLETED] = jobs;
	d->val[FT_D_BUSY_NS_DMA] = busy_dma;
	d->val[FT_D_DEVICE_CLOCK_NS] = clock;
	d->val[FT_D_TEMP_MC] = 41500;
	d->val[FT_D_NUM_QUEUES] = 2;

	o = ft_snapshot_add_dev(s);
	snprintf(o->node, sizeof(o->node), "accel1");
	snprintf(o->driver, sizeof(o->driver), "ivpu \"x\"");
	o->minor = 1;

	c = ft_snapshot_add_client(s);
	c->dev = 0;
	c->pid = 100;
	snprintf(c->comm, sizeof(c->comm), "load\t\"q\"");
	snprintf(c->fi.driver, sizeof(c->fi.driver), "frac");
	c->fi.has_driver = c->fi.has_client_id = true;
	c->fi.client_id = 1;
	c->fi.nr_engines = 2;
	snprintf(c->fi.engines[0].name, FT_NAME_LEN, "queue1");
	snprintf(c->fi.engines[1].name, FT_NAME_LEN, "queue0");
	c->fi.engines[0].has = c->fi.engines[1].has = 1u << FT_ENG_NS;
	c->fi.engines[0].val[FT_ENG_NS] = c1_ns;
	c->fi.engines[1].val[FT_ENG_NS] = 0;
	c->fi.nr_regions = 1;
	snprintf(c->fi.regions[0].name, FT_NAME_LEN, "devmem");
	c->fi.regions[0].has = 1u << FT_MEM_TOTAL;
	c->fi.regions[0].val[FT_MEM_TOTAL] = 1 << 20;
	c->fi.drv_has = 1u << FT_DRV_FRAC_JOBS_COMPLETED;
	c->fi.drv[FT_DRV_FRAC_JOBS_COMPLETED] = jobs;
	if (!with_c2)
		return;
	mk_latency(s, &s->devs[0], 100);
	c = ft_snapshot_add_client(s);
	*c = s->clients[0];
	c->fi.client_id = 2;
	c->fi.engines[0].val[FT_ENG_NS] = c2_ns;
	c->fi.drv[FT_DRV_FRAC_JOBS_COMPLETED] = 0;
}

static struct ft_num veng(const struct ft_view_engine *e, unsigned int n, const char *name)
{
	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			return e[i].busy_pct;
	printf("# no engine %s\n", name);
	return FT_NUM_NA;
}

static void test_model(FILE *json, FILE *csv)
{
	struct ft_snapshot s = { 0 };
	struct ft_model m;
	const struct ft_view_dev *vd;
	const struct ft_view_proc *p;

	ft_model_init(&m);
	mk_snapshot(&s, 10.0, 100, 0, 1000000000, 0, false, 0);
	ok(!ft_model_update(&m, &s), "model: first sample");
	vd = &m.view.devs[0];
	is_na(m.view.interval_s, "model: first sample has no interval");
	is_na(vd->rate[FT_R_JOBS_PER_S], "model: first sample has no jobs/s (not 0)");
	is_num(vd->temp_c, 41.5, "model: temperature from milli-degrees");
	is_na(vd->power_w, "model: power absent is n/a");
	ok(vd->nr_engines == 2 && !strcmp(vd->engines[0].name, "queue0") &&
	   !vd->engines[0].busy_pct.ok, "model: engines sorted, busy n/a on the first sample");
	if (json)
		ft_write_json(json, &m.view);
	if (csv) {
		ft_write_csv_header(csv);
		ft_write_csv(csv, &m.view);
	}

	/* 2 s later: 300 jobs, DMA busy 0.5 s of 1 s of device clock, client 1 +0.5 s on q1. */
	memset(&s, 0, sizeof(s));
	mk_snapshot(&s, 12.0, 400, 500000000, 2000000000, 500000000, true, 7);
	ok(!ft_model_update(&m, &s), "model: second sample");
	vd = &m.view.devs[0];
	is_num(m.view.interval_s, 2.0, "model: interval 2 s");
	is_num(vd->rate[FT_R_JOBS_PER_S], 150, "model: jobs/s from jobs_completed");
	is_num(vd->rate[FT_R_BUSY_DMA_PCT], 50, "model: DMA busy over the device clock, not wall time");
	is_num(vd->rate[FT_R_FAILED_PER_S], 0, "model: failed/s 0 (counter present, unchanged)");
	is_na(m.view.devs[1].rate[FT_R_JOBS_PER_S], "model: non-frac device has no jobs/s");
	is_na(m.view.devs[1].temp_c, "model: non-frac device without hwmon: no temperature");
	is_num(veng(vd->engines, vd->nr_engines, "queue1"), 25,
	       "model: queue1 25% (client 1's 0.5 s over 2 s; new client 2 not counted yet)");
	ok(vd->nr_clients == 2 && vd->nr_procs == 1, "model: two clients, one process");
	p = &vd->procs[0];
	ok(p->pid == 100 && p->nr_clients == 2, "model: process 100 holds both clients");
	is_num(p->mem_bytes, 2 << 20, "model: process memory sums drm-total- of its clients");
	is_num(p->jobs, 400, "model: process jobs = sum of drm-frac-jobs-completed");
	is_num(p->jobs_per_s, 150, "model: process jobs/s from the client that had a sample");
	is_num(veng(vd->engines, vd->nr_engines, "queue0"), 0,
	       "model: queue0 unchanged: a real 0%");
	ok(vd->hist_len == 2 && isnan(vd->hist[FT_R_JOBS_PER_S][0]) &&
	   vd->hist[FT_R_JOBS_PER_S][1] == 150, "model: history keeps n/a as NaN, then 150");
	if (json)
		ft_write_json(json, &m.view);
	if (csv)
		ft_write_csv(csv, &m.view);

	/* A device reset: counters back near 0; client 1's time goes backwards (held). */
	memset(&s, 0, sizeof(s));
	mk_snapshot(&s, 13.0, 5, 1000, 3000, 100, true, 1000000007);
	ok(!ft_model_update(&m, &s), "model: third sample");
	vd = &m.view.devs[0];
	is_na(vd->rate[FT_R_JOBS_PER_S], "model: counter reset gives n/a, not a wrap-around");
	is_na(vd->rate[FT_R_BUSY_DMA_PCT], "model: device clock reset gives n/a");
	is_num(veng(vd->engines, vd->nr_engines, "queue1"), 100,
	       "model: client 1 held at its larger value (0%), client 2 +1 s over 1 s");
	if (json)
		ft_write_json(json, &m.view);
	if (csv)
		ft_write_csv(csv, &m.view);

	memset(&s, 0, sizeof(s));
	mk_snapshot(&s, 14.0, 6, 2000, 4000, 500000000 + 250000000, true, 1000000007);
	ft_model_update(&m, &s);
	vd = &m.view.devs[0];
	is_num(veng(vd->engines, vd->nr_engines, "queue1"), 25,
	       "model: after the hold, client 1 counts from its held value (0.25 s over 1 s)");
	is_num(vd->rate[FT_R_JOBS_PER_S], 1, "model: rates resume after the reset");
	ok(vd->hist_len == 4, "model: history of 4 samples");
	if (json)
		ft_write_json(json, &m.view);
	if (csv)
		ft_write_csv(csv, &m.view);
	ft_model_fini(&m);
}

static void test_format(void)
{
	char b[64];

	is_str(ft_fmt_iec(b, sizeof(b), ft_num_of(0)), "0 B", "iec 0");
	is_str(ft_fmt_iec(b, sizeof(b), ft_num_of(1023)), "1023 B", "iec 1023");
	is_str(ft_fmt_iec(b, sizeof(b), ft_num_of(1024)), "1.00 KiB", "iec 1024");
	is_str(ft_fmt_iec(b, sizeof(b), ft_num_of(1536)), "1.50 KiB", "iec 1536");
	is_str(ft_fmt_iec(b, sizeof(b), ft_num_of(10.0 * (1 << 20))), "10.0 MiB", "iec 10 MiB");
	is_str(ft_fmt_iec(b, sizeof(b), ft_num_of(1023.9 * 1024)), "1.00 MiB",
	       "iec 1023.9 KiB rounds up to the next unit, not '1024 KiB'");
	is_str(ft_fmt_iec(b, sizeof(b), ft_num_of(3.0 * (1ull << 40))), "3.00 TiB", "iec 3 TiB");
	is_str(ft_fmt_iec(b, sizeof(b), FT_NUM_NA), "n/a", "iec n/a");
	is_str(ft_fmt_iec(b, sizeof(b), ft_num_of(NAN)), "n/a", "iec NaN is n/a");
	is_str(ft_fmt_si(b, sizeof(b), ft_num_of(0), "/s"), "0 /s", "si 0");
	is_str(ft_fmt_si(b, sizeof(b), ft_num_of(0.5), "/s"), "0.50 /s", "si 0.5");
	is_str(ft_fmt_si(b, sizeof(b), ft_num_of(999), "/s"), "999 /s", "si 999");
	is_str(ft_fmt_si(b, sizeof(b), ft_num_of(999.7), "/s"), "1.00 k/s", "si 999.7 -> 1.00 k");
	is_str(ft_fmt_si(b, sizeof(b), ft_num_of(1234567), "W"), "1.23 MW", "si 1234567");
	is_str(ft_fmt_si(b, sizeof(b), ft_num_of(31.25), "W"), "31.2 W", "si 31.25");
	is_str(ft_fmt_si(b, sizeof(b), FT_NUM_NA, "W"), "n/a", "si n/a");
	is_str(ft_fmt_pct(b, sizeof(b), ft_num_of(12.345)), "12.3%", "pct 12.345");
	is_str(ft_fmt_pct(b, sizeof(b), ft_num_of(0)), "0.0%", "pct 0");
	is_str(ft_fmt_pct(b, sizeof(b), ft_num_of(99.96)), "100%", "pct 99.96");
	is_str(ft_fmt_pct(b, sizeof(b), FT_NUM_NA), "n/a", "pct n/a");
	is_str(ft_fmt_duration(b, sizeof(b), ft_num_of(35e-9)), "35ns", "duration 35 ns");
	is_str(ft_fmt_duration(b, sizeof(b), ft_num_of(1.2e-6)), "1.2us", "duration 1.2 us");
	is_str(ft_fmt_duration(b, sizeof(b), ft_num_of(0.045)), "45.0ms", "duration 45 ms");
	is_str(ft_fmt_duration(b, sizeof(b), ft_num_of(1.0)), "1.0s", "duration 1 s");
	is_str(ft_fmt_duration(b, sizeof(b), ft_num_of(185)), "3m05s", "duration 185 s");
	is_str(ft_fmt_duration(b, sizeof(b), ft_num_of(7620)), "2h07m", "duration 7620 s");
	is_str(ft_fmt_duration(b, sizeof(b), ft_num_of(273600)), "3d04h", "duration 273600 s");
	is_str(ft_fmt_duration(b, sizeof(b), ft_num_of(-1)), "n/a", "duration negative");
	is_str(ft_fmt_count(b, sizeof(b), ft_num_of(9007199254740992.0)), "9007199254740992",
	       "count 2^53 exact");
	is_str(ft_fmt_iec(b, 4, ft_num_of(1536)), "1.5", "iec truncated to the buffer");
}

static void test_sparkline(void)
{
	double v[] = { 0, 50, 100 }, w[] = { 1, NAN, 2, 4 }, big[300];
	char b[1024];

	is_str(ft_sparkline(b, sizeof(b), v, 3, 5, 100, FT_GLYPHS_ASCII), "  _=#",
	       "spark: right-aligned, 0 lowest, 50% mid, 100% top");
	is_str(ft_sparkline(b, sizeof(b), w, 4, 3, 0, FT_GLYPHS_ASCII), " =#",
	       "spark: last 3 of 4, NaN blank, auto max");
	is_str(ft_sparkline(b, sizeof(b), v, 3, 3, 100, FT_GLYPHS_UTF8),
	       "\u2581\u2585\u2588", "spark: UTF-8 bars");
	is_str(ft_sparkline(b, 7, v, 3, 3, 100, FT_GLYPHS_UTF8), "\u2581\u2585",
	       "spark: a UTF-8 bar is never cut in half by the buffer");
	is_str(ft_sparkline(b, sizeof(b), (double[]){ 0.001 }, 1, 1, 100, FT_GLYPHS_ASCII), ".",
	       "spark: any activity shows above the zero bar");
	is_str(ft_sparkline(b, sizeof(b), v, 0, 2, 0, FT_GLYPHS_ASCII), "  ", "spark: no data");
	for (int i = 0; i < 300; i++)
		big[i] = 200;
	ft_sparkline(b, sizeof(b), big, 300, 80, 100, FT_GLYPHS_ASCII);
	ok(strlen(b) == 80 && strspn(b, "#") == 80, "spark: values above max clamp to the top bar");
}

static void test_layout(void)
{
	const struct ft_col cols[] = {
		{ "PID", 7, 7, 0 }, { "COMM", 8, 16, 0 }, { "A", 6, 6, 3 }, { "B", 6, 6, 9 },
		{ "C", 6, 6, 3 },
	};
	int w[5], kept;

	kept = ft_layout_columns(cols, 5, 80, 1, w);
	ok(kept == 5 && w[0] == 7 && w[1] == 16 && w[2] == 6 && w[3] == 6 && w[4] == 6,
	   "layout: wide line, all columns, COMM grows to its max");
	kept = ft_layout_columns(cols, 5, 7 + 8 + 6 + 6 + 6 + 4, 1, w);
	ok(kept == 5 && w[1] == 8, "layout: exact fit keeps all at minimum");
	kept = ft_layout_columns(cols, 5, 36, 1, w);
	ok(kept == 4 && w[4] == 0 && w[2] == 6 && w[3] == 6,
	   "layout: one too narrow drops the rightmost lowest-priority column");
	kept = ft_layout_columns(cols, 5, 22, 1, w);
	ok(kept == 2 && w[2] == 0 && w[3] == 0 && w[4] == 0 && w[0] == 7 && w[1] == 14,
	   "layout: narrow: only prio-0 columns, COMM takes the rest");
	kept = ft_layout_columns(cols, 5, 29, 1, w);
	ok(kept == 3 && w[3] == 6 && w[1] == 14 && !w[2] && !w[4], "layout: the high-priority column stays longest");
	kept = ft_layout_columns(cols, 5, 5, 1, w);
	ok(kept == 2 && w[0] == 7 && w[1] == 8, "layout: too narrow for anything: minimums, caller clips");
	kept = ft_layout_columns(cols, 0, 80, 1, w);
	ok(kept == 0, "layout: no columns");
}

static void test_debugfs_irq(void)
{
	struct ft_dev d = { 0 };
	char name[FT_NAME_LEN], bad[512];
	unsigned int irq = 0;
	uint64_t count = 0;
	size_t len;
	char *text = slurp("debugfs-queues.txt", &len);

	ok(ft_parse_debugfs_queues(text, len, &d) == 0 && d.nr_queues == 2,
	   "debugfs: two queues parsed");
	ok(d.q[0][FT_Q_SUBMITTED] == 17 && d.q[0][FT_Q_COMPLETED] == 16 && d.q[0][FT_Q_FAILED] == 1 &&
	   d.q[0][FT_Q_TIMEOUTS] == 1 && d.q[0][FT_Q_RESETS] == 1 && d.q[0][FT_Q_IN_RING] == 0,
	   "debugfs: queue 0 counters");
	ok(d.q[1][FT_Q_LOST_IRQS] == 2 && d.q[1][FT_Q_IN_RING] == 2 && d.q[1][FT_Q_COMPLETED] == 3,
	   "debugfs: queue 1 lost irqs 2, 2 jobs in ring");
	/* The last queue without its counter line: the whole file is refused. */
	snprintf(bad, sizeof(bad), "%.*s", (int)(strstr(text, "  submitted 5") - text), text);
	ok(ft_parse_debugfs_queues(bad, strlen(bad), &d) == -EINVAL && d.nr_queues == 0,
	   "debugfs: a queue without its counters refuses the file");
	snprintf(bad, sizeof(bad), "queue 1: size 2 sq_tail 0 cq_head 0 phase 1 jobs_in_ring 0\n");
	ok(ft_parse_debugfs_queues(bad, strlen(bad), &d) == -EINVAL, "debugfs: queues out of order refused");
	snprintf(bad, sizeof(bad), "%s  brand new line 1 2 3\n", text);
	ok(ft_parse_debugfs_queues(bad, strlen(bad), &d) == -EINVAL && d.nr_queues == 0,
	   "debugfs: an unknown line (format changed) refuses the file");
	free(text);

	ok(!ft_parse_interrupts_line(" 35:         10          7  PCI-MSIX-0000:01:00.0   0-edge      frac-q0\n",
				     2, &irq, &count, name, sizeof(name)) &&
	   irq == 35 && count == 17 && !strcmp(name, "frac-q0"), "interrupts: 35 frac-q0 17 over 2 CPUs");
	ok(!ft_parse_interrupts_line(" 38:   0   0  PCI-MSIX-0000:01:00.0   3-edge\n", 2, &irq, &count,
				     name, sizeof(name)) && !strcmp(name, "-"),
	   "interrupts: a vector without an action is named '-'");
	ok(ft_parse_interrupts_line("NMI:   0   0   Non-maskable interrupts\n", 2, &irq, &count, name,
				    sizeof(name)) == -EINVAL, "interrupts: NMI line refused");
	ok(ft_parse_interrupts_line("           CPU0       CPU1\n", 2, &irq, &count, name,
				    sizeof(name)) == -EINVAL, "interrupts: header refused");
	ok(ft_parse_interrupts_line(" 35:  10\n", 2, &irq, &count, name, sizeof(name)) == -EINVAL,
	   "interrupts: fewer CPU columns than CPUs refused");
}

static void test_json_string(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ft_json_string(f, "a\"b\\c\n\t\x01\x7f\xc3\xa9");
	fclose(f);
	is_str(buf, "\"a\\\"b\\\\c\\n\\t\\u0001\\u007f\xc3\xa9\"",
	       "json string: quote, backslash, controls escaped, UTF-8 kept");
	free(buf);
}

static void test_json_reader(void)
{
	static const struct { const char *text; const char *what; } bad[] = {
		{ "", "empty text" },
		{ "{\"a\":1,}", "trailing comma" },
		{ "{\"a\":1} x", "text after the value" },
		{ "{\"a\":1,\"a\":2}", "duplicate key" },
		{ "[01]", "leading zero" },
		{ "[1.]", "no digit after the point" },
		{ "[\"\\x\"]", "bad escape" },
		{ "[\"\\ud800\"]", "lone surrogate" },
		{ "[\"a\tb\"]", "raw control character" },
		{ "[\"abc", "unterminated string" },
		{ "[tru]", "bad literal" },
		{ "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", "too deep" },
	};
	const char *good = " {\"s\":\"a\\\"\\u00e9\\ud83d\\ude00\\n\",\"u\":18446744073709551615,"
			   "\"d\":14563.072406854001,\"n\":null,\"b\":true,\"a\":[1,[],{}]} ";
	struct ft_json doc;
	char err[200];
	uint64_t u;
	double d;

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = ft_json_parse(&doc, bad[i].text, strlen(bad[i].text), err, sizeof(err));

		ok(ret == -EINVAL && strstr(err, "at byte"), "json reader refuses: %s (%s)",
		   bad[i].what, ret ? err : "accepted");
		if (!ret)
			ft_json_free(&doc);
	}
	ok(!ft_json_parse(&doc, good, strlen(good), err, sizeof(err)), "json reader: a valid object");
	ok(!strcmp(ft_json_get(doc.root, "s")->str, "a\"\xc3\xa9\xf0\x9f\x98\x80\n"),
	   "json reader: escapes, \\u00e9 and a surrogate pair to UTF-8");
	ok(ft_json_u64(ft_json_get(doc.root, "u"), &u) && u == UINT64_MAX,
	   "json reader: 2^64-1 read exactly");
	ok(ft_json_num(ft_json_get(doc.root, "d"), &d) && d == 14563.072406854001,
	   "json reader: a double read back exactly");
	ok(!ft_json_u64(ft_json_get(doc.root, "d"), &u) && !ft_json_u64(ft_json_get(doc.root, "n"), &u),
	   "json reader: a fraction or null is not an unsigned integer");
	ok(ft_json_get(doc.root, "b")->b && ft_json_get(doc.root, "a")->n == 3 &&
	   !ft_json_get(doc.root, "missing"), "json reader: bool, array, missing key");
	ft_json_free(&doc);
}

/*
 * Sources read one after another, each at its own instant: the rates are over each source's
 * own interval. The workload completes 224 jobs/s, evenly, seen by all three counters (sysfs'
 * jobs_completed, the queue's debugfs completed, the client's drm-frac-jobs-completed). The
 * samples start at 10 s and 11 s; sysfs reads 10 ms and 5 ms after, fdinfo 20 ms and 300 ms,
 * debugfs 124 ms and 33 ms (as measured in the guest under load). Over the samples' 1 s, the
 * old figures were 224 * 0.985 (sysfs), 224 * 1.28 (fdinfo: 286.72, more than could have
 * completed in that second) and 224 * 0.909 (debugfs).
 */
static void mk_timed(struct ft_snapshot *s, double t, double t_sys, double t_fd, double t_dbg)
{
	uint64_t jobs_sys = (uint64_t)(224 * t_sys + 0.5), jobs_fd = (uint64_t)(224 * t_fd + 0.5);
	uint64_t jobs_dbg = (uint64_t)(224 * t_dbg + 0.5);
	struct ft_dev *d;

	mk_snapshot(s, t, jobs_sys, 0, 1000000000, 0, false, 0);
	d = &s->devs[0];
	d->t_src[FT_TS_SYSFS] = t_sys;
	d->nr_queues = 1;
	d->q[0][FT_Q_COMPLETED] = jobs_dbg;
	d->t_src[FT_TS_DEBUGFS] = t_dbg;
	s->clients[0].fi.drv[FT_DRV_FRAC_JOBS_COMPLETED] = jobs_fd;
	s->clients[0].t_mono = t_fd;
}

static void test_model_read_instants(void)
{
	struct ft_snapshot s = { 0 };
	const struct ft_view_dev *vd;
	struct ft_model m;

	is_num(ft_num_of(ft_src_interval(10.01, 11.005, 1.0)), 0.995,
	       "source interval: between the source's own two reads");
	is_num(ft_num_of(ft_src_interval(0, 11.005, 1.0)), 1.0,
	       "source interval: the samples' when a read has no instant");
	ft_model_init(&m);
	mk_timed(&s, 10.0, 10.010, 10.020, 10.124);
	ft_model_update(&m, &s);
	memset(&s, 0, sizeof(s));
	mk_timed(&s, 11.0, 11.005, 11.300, 11.033);
	ft_model_update(&m, &s);
	vd = &m.view.devs[0];
	is_num(m.view.interval_s, 1.0, "read instants: the samples are 1 s apart");
	is_num(vd->dt_src[FT_TS_SYSFS], 0.995, "read instants: sysfs interval 0.995 s");
	is_num(vd->dt_src[FT_TS_DEBUGFS], 0.909, "read instants: debugfs interval 0.909 s");
	is_na(vd->dt_src[FT_TS_IRQ], "read instants: interrupts not read, its interval");
	is_num(vd->t_src[FT_TS_DEBUGFS], 11.033, "read instants: debugfs read at 11.033");
	is_num(vd->rate[FT_R_JOBS_PER_S], (2465 - 2242) / 0.995,
	       "read instants: device jobs/s over sysfs's own interval (223 jobs in 0.995 s)");
	is_num(vd->queues[0].jobs_per_s, (2471 - 2268) / 0.909,
	       "read instants: queue jobs/s over debugfs's own interval (203 jobs in 0.909 s)");
	is_num(vd->procs[0].jobs_per_s, (2531 - 2244) / 1.28,
	       "read instants: process jobs/s over its fdinfo's own interval (287 jobs in 1.28 s)");
	is_num(vd->procs[0].t_fdinfo, 11.3, "read instants: the process's fdinfo read at 11.3");
	is_num(vd->procs[0].dt_fdinfo, 1.28, "read instants: the process's interval 1.28 s");
	ok(vd->rate[FT_R_JOBS_PER_S].v <= 224 + 1 / 0.995 &&
	   vd->queues[0].jobs_per_s.v <= 224 + 1 / 0.909 &&
	   vd->procs[0].jobs_per_s.v <= 224 + 1 / 1.28,
	   "read instants: no rate above the 224 jobs/s that could have completed (+1 job)");
	ft_model_fini(&m);
}

/* write(parse(write(s))) == write(s), and the model gives the same view from either. */
static void test_record_roundtrip(void)
{
	struct ft_snapshot s = { 0 }, r = { 0 };
	struct ft_model m1, m2;
	char *a = NULL, *b = NULL, *va = NULL, *vb = NULL, err[200];
	size_t al = 0, bl = 0, val = 0, vbl = 0;
	FILE *fa, *fb, *fva = open_memstream(&va, &val), *fvb = open_memstream(&vb, &vbl);
	bool same = true;
	int ret;

	ft_model_init(&m1);
	ft_model_init(&m2);
	for (int i = 0; i < 3; i++) {
		memset(&s, 0, sizeof(s));
		mk_snapshot(&s, 10.0 + i * 1.25, 100 + 300 * i, 500000000ull * i,
			    1000000000ull * (i + 1), 250000000ull * i, i > 0, 7 * i);
		/* Each source's own instant, not a round number: %.17g must bring it back. */
		for (int k = 0; k < FT_TS_NR; k++)
			s.devs[0].t_src[k] = s.t_mono + 0.0123456789 * (k + 1) + 0.001 * i;
		for (unsigned int c = 0; c < s.nr_clients; c++)
			s.clients[c].t_mono = s.t_mono + 0.0171717 + 0.003 * i;
		fa = open_memstream(&a, &al);
		ft_record_write_sample(fa, &s);
		fclose(fa);
		ret = ft_record_parse_sample(a, al - 1, &r, err, sizeof(err));
		ok(!ret, "record: sample %d parses back (%s)", i, ret ? err : "ok");
		fb = open_memstream(&b, &bl);
		ft_record_write_sample(fb, &r);
		fclose(fb);
		same &= !strcmp(a, b);
		ft_model_update(&m1, &s);
		ft_model_update(&m2, &r);
		ft_write_json(fva, &m1.view);
		ft_write_json(fvb, &m2.view);
		free(a);
		free(b);
		a = b = NULL;
	}
	fclose(fva);
	fclose(fvb);
	ok(same, "record: every sample written again from what was read is the same text");
	{
		/* A replay checkpoint: a clone fed the same samples prints what the original does. */
		struct ft_model c;
		char *x = NULL, *y = NULL;
		size_t xl = 0, yl = 0;
		FILE *fx = open_memstream(&x, &xl), *fy = open_memstream(&y, &yl);
		bool cloned = !ft_model_clone(&c, &m1);

		for (int i = 3; cloned && i < 6; i++) {
			struct ft_snapshot s1 = { 0 }, s2 = { 0 };

			mk_snapshot(&s1, 10.0 + i * 1.25, 100 + 300 * i, 500000000ull * i,
				    1000000000ull * (i + 1), 250000000ull * i, true, 7 * i);
			mk_snapshot(&s2, 10.0 + i * 1.25, 100 + 300 * i, 500000000ull * i,
				    1000000000ull * (i + 1), 250000000ull * i, true, 7 * i);
			ft_model_update(&m1, &s1);
			ft_model_update(&c, &s2);
			ft_write_json(fx, &m1.view);
			ft_write_json(fy, &c.view);
			is_u64(c.view.devs[0].hist_len, m1.view.devs[0].hist_len,
			       "model clone: the same history length");
		}
		fclose(fx);
		fclose(fy);
		ok(cloned && !strcmp(x, y), "model clone: the same JSON over three more samples");
		if (cloned)
			ft_model_fini(&c);
		free(x);
		free(y);
	}
	ok(!strcmp(va, vb), "record: the model over the samples read back prints the same JSON");
	ft_model_fini(&m1);
	ft_model_fini(&m2);
	ft_snapshot_free(&s);
	ft_snapshot_free(&r);
	free(va);
	free(vb);

	/* What the reader refuses, each with a reason. */
	{
		static const struct { const char *line; const char *want; } bad[] = {
			{ "[]", "not an object" },
			{ "{\"t_mono\":1}", "t_mono/t_wall" },
			{ "{\"t_mono\":1,\"t_wall\":2,\"sysfs_ok\":true,\"fdinfo_ok\":true,"
			  "\"procs_seen\":0,\"procs_denied\":0,\"fds_seen\":0,\"accel_fds\":0,"
			  "\"devices\":[],\"clients\":[],\"extra\":1}", "unknown key extra" },
			{ "{\"t_mono\":1,\"t_wall\":2,\"sysfs_ok\":true,\"fdinfo_ok\":true,"
			  "\"procs_seen\":-1,\"procs_denied\":0,\"fds_seen\":0,\"accel_fds\":0,"
			  "\"devices\":[],\"clients\":[]}", "procs_seen" },
			{ "{\"t_mono\":1,\"t_wall\":2,\"sysfs_ok\":true,\"fdinfo_ok\":true,"
			  "\"procs_seen\":0,\"procs_denied\":0,\"fds_seen\":0,\"accel_fds\":0,"
			  "\"devices\":[],\"clients\":[{\"dev\":0}]}", "dev" },
			/* a histogram whose slots do not add up to its count */
			{ "{\"t_mono\":1,\"t_wall\":2,\"sysfs_ok\":true,\"fdinfo_ok\":true,"
			  "\"procs_seen\":0,\"procs_denied\":0,\"fds_seen\":0,\"accel_fds\":0,"
			  "\"devices\":[{\"node\":\"accel0\",\"minor\":0,\"driver\":\"frac\","
			  "\"pdev\":\"\",\"is_frac\":true,\"values\":{},\"queues\":[],"
			  "\"vectors_ok\":false,\"vectors\":[],\"latency_ok\":true,"
			  "\"latency_queues\":1,\"histograms\":[{\"queue\":0,\"stage\":\"total\","
			  "\"unit\":\"ns\",\"count\":2,\"sum\":3,\"min\":1,\"max\":2,"
			  "\"log2\":[[0,1],[1,1]],\"fine\":[[1,1]]}]}],\"clients\":[]}",
			  "do not add up" },
			/* a histogram of a queue past latency_queues */
			{ "{\"t_mono\":1,\"t_wall\":2,\"sysfs_ok\":true,\"fdinfo_ok\":true,"
			  "\"procs_seen\":0,\"procs_denied\":0,\"fds_seen\":0,\"accel_fds\":0,"
			  "\"devices\":[{\"node\":\"accel0\",\"minor\":0,\"driver\":\"frac\","
			  "\"pdev\":\"\",\"is_frac\":true,\"values\":{},\"queues\":[],"
			  "\"vectors_ok\":false,\"vectors\":[],\"latency_ok\":true,"
			  "\"latency_queues\":1,\"histograms\":[{\"queue\":1,\"stage\":\"total\","
			  "\"unit\":\"ns\",\"count\":1,\"sum\":1,\"min\":1,\"max\":1,"
			  "\"log2\":[[0,1]],\"fine\":[[1,1]]}]}],\"clients\":[]}",
			  "queue/stage/unit" },
		};

		for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			ret = ft_record_parse_sample(bad[i].line, strlen(bad[i].line), &r, err,
						     sizeof(err));
			ok(ret == -EINVAL && strstr(err, bad[i].want), "record refuses: %s ('%s')",
			   bad[i].want, ret ? err : "accepted");
		}
		ft_snapshot_free(&r);
	}
}

/* A multi-line text against what it should be; on a difference both as diagnostics. */
static void multiline(const char *got, const char *want, const char *what)
{
	bool same = !strcmp(got, want);

	ok(same, "%s", what);
	if (same)
		return;
	for (const char *t[2] = { want, got }, **p = t; p < t + 2; p++) {
		printf("#   %s:\n#     ", p == t ? "want" : "got");
		for (const char *c = *p; *c; c++)
			fputs(*c == '\n' ? "\n#     " : (char[2]){ *c, 0 }, stdout);
		printf("\n");
	}
}

static void test_latency(void)
{
	struct hist h = { .min = ~0ULL }, e = { .min = ~0ULL };
	struct ft_pct p50, p99;
	char buf[256];

	for (unsigned int i = 1; i <= 100; i++)
		lat_add(&h, i * 1000ull);
	p50 = ft_lat_percentile(&h, 0.5);
	p99 = ft_lat_percentile(&h, 0.99);
	/* Nearest rank: the 50th of 1..100 us is 50 us, the 99th 99 us. */
	ok(p50.est.ok && p50.low.v <= 50000 && 50000 <= p50.high.v && p50.low.v <= p50.est.v &&
	   p50.est.v <= p50.high.v && p50.high.v - p50.low.v <= 50000 / 8.0,
	   "latency: p50 of 1..100 us: 50 us inside [%g, %g], at most 1/8 wide", p50.low.v,
	   p50.high.v);
	ok(p99.est.ok && p99.low.v <= 99000 && 99000 <= p99.high.v && p99.high.v <= 100000,
	   "latency: p99 of 1..100 us: 99 us inside [%g, %g], not past max", p99.low.v, p99.high.v);
	p50 = ft_lat_percentile(&e, 0.5);
	ok(!p50.est.ok && !p50.low.ok && !p50.high.ok, "latency: an empty histogram's p50 is n/a");
	is_str(ft_fmt_lat_pct(buf, sizeof(buf), p50), "n/a", "latency: n/a printed");
	h = (struct hist){ .min = ~0ULL };
	lat_add(&h, 7000);
	p99 = ft_lat_percentile(&h, 0.99);
	ok(p99.low.v == 7000 && p99.high.v == 7000, "latency: one job: p99 bounds are its value");
	is_str(ft_fmt_lat_pct(buf, sizeof(buf), p99), "~7.0us [7.0us, 7.0us]",
	       "latency: p99 formatted with its bounds");
	ok(ft_lat_slots_used(&e) == 0 && ft_lat_slots_used(&h) == 13,
	   "latency: slots used: 0 empty, 13 for 7000 ns (slot 12)");
	ok(ft_lat_slot_le_s(0) == 1e-9 && ft_lat_slot_le_s(9) == 1023e-9,
	   "latency: log2 slot k's le is (2^(k+1) - 1) ns: slot 0 1 ns, slot 9 1023 ns");
	lat_add(&h, 7000);
	lat_add(&h, 1000);	/* slot 9, below the first shown: drawn in the first glyph */
	lat_add(&h, 40000);	/* slot 15 */
	ft_lat_hist_line(buf, sizeof(buf), &h, 10, 6, FT_GLYPHS_ASCII);
	is_str(buf, "= #  =", "latency: log2 line: slots 9+10 (1 job), 11 empty, 12 (2), 15 (1)");

	/* Who may run the BPF source (latency.c asks the capability checks of trace_helpers.c). */
	is_str(ft_latency_denied(false, false, false, false, true) ?: "(null)",
	       "latency: needs CAP_BPF+CAP_PERFMON", "latency denied: no capability");
	is_str(ft_latency_denied(false, false, true, false, true) ?: "(null)",
	       "latency: needs CAP_BPF+CAP_PERFMON", "latency denied: CAP_BPF without CAP_PERFMON");
	is_str(ft_latency_denied(false, false, false, true, true) ?: "(null)",
	       "latency: needs CAP_BPF+CAP_PERFMON", "latency denied: CAP_PERFMON without CAP_BPF");
	ok(!ft_latency_denied(false, false, true, true, true), "latency: CAP_BPF+CAP_PERFMON may");
	ok(!ft_latency_denied(false, true, false, false, true), "latency: CAP_SYS_ADMIN may");
	is_str(ft_latency_denied(true, true, true, true, true) ?: "(null)",
	       "latency: off (--no-bpf)", "latency: --no-bpf first");
	is_str(ft_latency_denied(false, true, true, true, false) ?: "(null)",
	       "latency: frac module not loaded (no frac tracepoints)", "latency: no module");
}

/* The exporter's latency histogram: cumulative, 1023 ns .. +Inf, _sum in seconds, _count. */
static void test_prom_latency(void)
{
	struct ft_snapshot s = { 0 };
	struct ft_prom_self self = { 1 };
	struct ft_model m;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ft_model_init(&m);
	mk_snapshot(&s, 10.0, 100, 0, 1000000000, 0, true, 0);
	ft_model_update(&m, &s);
	f = open_memstream(&buf, &len);
	ft_prom_write(f, &m.view, &m.prev, &self);
	fclose(f);
	ok(strstr(buf, "# TYPE frac_job_latency_seconds histogram\n") != NULL,
	   "prom latency: a histogram family");
	/* 1..100 us: le 1023 ns holds the 1000 ns job (slot 9), 2047 ns 2 jobs, 65535 ns 65. */
	ok(strstr(buf, "frac_job_latency_seconds_bucket{device=\"accel0\",queue=\"0\",stage=\"total\","
		  "le=\"1.023e-06\"} 1\n") &&
	   strstr(buf, "frac_job_latency_seconds_bucket{device=\"accel0\",queue=\"0\",stage=\"total\","
		  "le=\"2.047e-06\"} 2\n") &&
	   strstr(buf, "frac_job_latency_seconds_bucket{device=\"accel0\",queue=\"0\",stage=\"total\","
		  "le=\"6.5535e-05\"} 65\n") &&
	   strstr(buf, "frac_job_latency_seconds_bucket{device=\"accel0\",queue=\"0\",stage=\"exec\","
		  "le=\"+Inf\"} 100\n") &&
	   strstr(buf, "frac_job_latency_seconds_sum{device=\"accel0\",queue=\"0\",stage=\"total\"} "
		  "0.00505\n") &&
	   strstr(buf, "frac_job_latency_seconds_count{device=\"accel0\",queue=\"1\",stage=\"total\"} "
		  "0\n"),
	   "prom latency: cumulative buckets at the log2 bounds, +Inf, _sum in s, an empty queue");
	if (!strstr(buf, "le=\"6.5535e-05\"} 65\n"))
		printf("# %.2000s\n", strstr(buf, "frac_job_latency") ?: buf);
	free(buf);
	ft_model_fini(&m);
}

static void test_prom(void)
{
	static const double le[] = { 0.001, 0.002, 0.004 };
	static const uint64_t counts[] = { 1, 0, 2 };
	struct ft_prom_label l[] = { { "device", "accel0" }, { "comm", "a\"b\\c\nd" } };
	struct ft_prom_value v = { .kind = FT_PROM_NS_AS_S, .u = 1500000001 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	char listen_h[64], listen_p[16];

	ft_prom_family(f, "frac_x_seconds_total", "counter", "Help with \\ and\nnewline.");
	ft_prom_sample(f, "frac_x_seconds_total", l, 2, &v);
	v = (struct ft_prom_value){ .kind = FT_PROM_U64, .u = UINT64_MAX };
	ft_prom_sample(f, "frac_y_total", NULL, 0, &v);
	ft_prom_histogram(f, "frac_job_latency_seconds", l, 1, le, counts, 3, 0.0095, 3);
	fclose(f);
	multiline(buf,
	       "# HELP frac_x_seconds_total Help with \\\\ and\\nnewline.\n"
	       "# TYPE frac_x_seconds_total counter\n"
	       "frac_x_seconds_total{device=\"accel0\",comm=\"a\\\"b\\\\c\\nd\"} 1.500000001\n"
	       "frac_y_total 18446744073709551615\n"
	       "frac_job_latency_seconds_bucket{device=\"accel0\",le=\"0.001\"} 1\n"
	       "frac_job_latency_seconds_bucket{device=\"accel0\",le=\"0.002\"} 1\n"
	       "frac_job_latency_seconds_bucket{device=\"accel0\",le=\"0.004\"} 3\n"
	       "frac_job_latency_seconds_bucket{device=\"accel0\",le=\"+Inf\"} 3\n"
	       "frac_job_latency_seconds_sum{device=\"accel0\"} 0.0095\n"
	       "frac_job_latency_seconds_count{device=\"accel0\"} 3\n",
	       "prom: HELP and label escapes, ns as exact seconds, u64, a cumulative histogram");
	free(buf);

	ok(!ft_parse_listen("127.0.0.1:9464", listen_h, sizeof(listen_h), listen_p, sizeof(listen_p)) &&
	   !strcmp(listen_h, "127.0.0.1") && !strcmp(listen_p, "9464"), "listen: ADDR:PORT");
	ok(!ft_parse_listen("[::1]:0", listen_h, sizeof(listen_h), listen_p, sizeof(listen_p)) &&
	   !strcmp(listen_h, "::1") && !strcmp(listen_p, "0"), "listen: [V6]:PORT");
	ok(!ft_parse_listen(":9464", listen_h, sizeof(listen_h), listen_p, sizeof(listen_p)) &&
	   !listen_h[0], "listen: :PORT is every address");
	ok(ft_parse_listen("::1:9464", listen_h, sizeof(listen_h), listen_p, sizeof(listen_p)) &&
	   ft_parse_listen("localhost", listen_h, sizeof(listen_h), listen_p, sizeof(listen_p)) &&
	   ft_parse_listen("h:65536", listen_h, sizeof(listen_h), listen_p, sizeof(listen_p)) &&
	   ft_parse_listen("h:-1", listen_h, sizeof(listen_h), listen_p, sizeof(listen_p)) &&
	   ft_parse_listen("h:", listen_h, sizeof(listen_h), listen_p, sizeof(listen_p)) &&
	   ft_parse_listen("[::1]9464", listen_h, sizeof(listen_h), listen_p, sizeof(listen_p)),
	   "listen: refuses a bare v6 address, no port, 65536, -1, an empty port, no colon");
}

int main(int argc, char **argv)
{
	FILE *json = NULL, *csv = NULL;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURE_DIR [JSON_OUT CSV_OUT]\n", argv[0]);
		return 2;
	}
	fixdir = argv[1];
	if (argc >= 4) {
		json = fopen(argv[2], "w");
		csv = fopen(argv[3], "w");
	}
	test_fdinfo_frac();
	test_fdinfo_others();
	test_fdinfo_malformed();
	test_rates();
	test_model(json, csv);
	test_model_read_instants();
	test_format();
	test_sparkline();
	test_layout();
	test_debugfs_irq();
	test_json_string();
	test_json_reader();
	test_record_roundtrip();
	test_prom();
	test_latency();
	test_prom_latency();
	if (json)
		fclose(json);
	if (csv)
		fclose(csv);
	return failures ? 1 : 0;
}
