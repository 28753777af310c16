// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * Record (-w FILE) and replay (-r FILE). A record is JSON lines: a header line, then one line
 * per sample holding the snapshot the sources read (struct ft_snapshot), not the view: the
 * model's raw inputs, so that a replay runs the same model over the same inputs and prints
 * the same rates, byte for byte. Times are written with %.17g, which strtod reads back to the
 * same double; counters as integers. A key absent from a sample means its validity bit was
 * clear. Every device has "latency_ok" and a "histograms" array: the BPF latency source's
 * cumulative histograms (struct hist: count, sum, min, max, the log2 slots and the fine
 * slots percentiles come from, both written sparse), only those with a job in them; a sample
 * has "lat_stats" when that source ran. Every device has "read_at": the instant (CLOCK_MONOTONIC
 * s) at which each source that read it did, and every client its fdinfo read's "t_mono": the
 * model's rates are over those. Version 3; a reader reads its own version only.
 *
 * The reader is strict: replay opens the whole file and checks every line before it shows
 * anything, so a truncated or damaged record is one error line ("FILE:LINE: what"), never a
 * screen of made-up figures.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fractop.h"
#include "trace_helpers.h"

static const char *const eng_keys[FT_ENG_NR] = {
	[FT_ENG_NS] = "ns",
	[FT_ENG_CAPACITY] = "capacity",
	[FT_ENG_CYCLES] = "cycles",
	[FT_ENG_TOTAL_CYCLES] = "total_cycles",
	[FT_ENG_MAXFREQ] = "maxfreq_hz",
};

static const char *const mem_keys[FT_MEM_NR] = {
	[FT_MEM_MEMORY] = "memory",
	[FT_MEM_TOTAL] = "total",
	[FT_MEM_SHARED] = "shared",
	[FT_MEM_RESIDENT] = "resident",
	[FT_MEM_PURGEABLE] = "purgeable",
	[FT_MEM_ACTIVE] = "active",
};

static const char *const drv_keys[FT_DRV_NR] = {
	[FT_DRV_FRAC_CONTEXT] = "frac_context",
	[FT_DRV_FRAC_JOBS_COMPLETED] = "frac_jobs_completed",
	[FT_DRV_FRAC_JOBS_FAILED] = "frac_jobs_failed",
};

/* ---- writer ---- */

void ft_record_write_header(FILE *f, const struct ft_record_header *h)
{
	fprintf(f, "{\"fractop_record\":%d,\"program\":", h->version);
	ft_json_string(f, h->program);
	fprintf(f, ",\"created\":%.17g,\"delay_s\":%.17g,\"device\":", h->created, h->delay_s);
	if (h->only_minor >= 0)
		fprintf(f, "%d", h->only_minor);
	else
		fputs("null", f);
	fputs(",\"sources\":[", f);
	for (unsigned int i = 0; i < h->nr_sources; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		ft_json_string(f, h->sources[i].name);
		fprintf(f, ",\"active\":%s,\"why\":", h->sources[i].active ? "true" : "false");
		ft_json_string(f, h->sources[i].why);
		fputc('}', f);
	}
	fputs("]}\n", f);
}

/* Slots as [[index, count], ...], the used ones only. */
static void write_sparse(FILE *f, const __u32 *v, unsigned int n)
{
	unsigned int k = 0;

	fputc('[', f);
	for (unsigned int i = 0; i < n; i++)
		if (v[i])
			fprintf(f, "%s[%u,%u]", k++ ? "," : "", i, v[i]);
	fputc(']', f);
}

static void write_hist(FILE *f, const struct hist *h, unsigned int q, int st, unsigned int nth)
{
	fprintf(f, "%s{\"queue\":%u,\"stage\":\"%s\",\"unit\":\"ns\",\"count\":%" PRIu64
		",\"sum\":%" PRIu64 ",\"min\":%" PRIu64 ",\"max\":%" PRIu64 ",\"log2\":",
		nth ? "," : "", q, stage_keys[st], (uint64_t)h->count, (uint64_t)h->sum,
		(uint64_t)h->min, (uint64_t)h->max);
	write_sparse(f, h->slots, MAX_SLOTS);
	fputs(",\"fine\":", f);
	write_sparse(f, h->fine, FINE_SLOTS);
	fputc('}', f);
}

static void write_dev(FILE *f, const struct ft_dev *d)
{
	unsigned int i, k;

	fputs("{\"node\":", f);
	ft_json_string(f, d->node);
	fprintf(f, ",\"minor\":%u,\"driver\":", d->minor);
	ft_json_string(f, d->driver);
	fputs(",\"pdev\":", f);
	ft_json_string(f, d->pdev);
	fprintf(f, ",\"is_frac\":%s,\"values\":{", d->is_frac ? "true" : "false");
	for (i = 0, k = 0; i < FT_D_NR; i++)
		if (d->has & (1ull << i))
			fprintf(f, "%s\"%s\":%" PRIu64, k++ ? "," : "", ft_dev_keys[i].name, d->val[i]);
	fputs("},\"queues\":[", f);
	for (i = 0; i < d->nr_queues; i++) {
		fputs(i ? ",[" : "[", f);
		for (k = 0; k < FT_Q_NR; k++)
			fprintf(f, "%s%" PRIu64, k ? "," : "", d->q[i][k]);
		fputc(']', f);
	}
	fprintf(f, "],\"vectors_ok\":%s,\"vectors\":[", d->vectors_ok ? "true" : "false");
	for (i = 0; i < d->nr_vec; i++) {
		fprintf(f, "%s{\"irq\":%u,\"name\":", i ? "," : "", d->vec[i].irq);
		ft_json_string(f, d->vec[i].name);
		fprintf(f, ",\"count\":%" PRIu64 "}", d->vec[i].count);
	}
	fprintf(f, "],\"latency_ok\":%s,\"latency_queues\":%u,\"histograms\":[",
		d->lat_ok ? "true" : "false", d->lat_ok ? d->lat_nr_queues : 0);
	for (i = 0, k = 0; d->lat_ok && i < d->lat_nr_queues; i++)
		for (int st = 0; st < NR_STAGES; st++)
			if (d->lat[i][st].count)
				write_hist(f, &d->lat[i][st], i, st, k++);
	fputs("],\"read_at\":{", f);
	for (i = 0, k = 0; i < FT_TS_NR; i++)
		if (d->t_src[i] > 0)
			fprintf(f, "%s\"%s\":%.17g", k++ ? "," : "", ft_src_ts_names[i],
				d->t_src[i]);
	fputs("}}", f);
}

static void write_client(FILE *f, const struct ft_client *c)
{
	const struct ft_fdinfo *fi = &c->fi;
	unsigned int i, k, n;

	fprintf(f, "{\"dev\":%d,\"pid\":%d,\"comm\":", c->dev, (int)c->pid);
	ft_json_string(f, c->comm);
	fprintf(f, ",\"nr_fds\":%u,\"nr_pids\":%u", c->nr_fds, c->nr_pids);
	if (c->t_mono > 0)
		fprintf(f, ",\"t_mono\":%.17g", c->t_mono);
	if (fi->has_driver) {
		fputs(",\"driver\":", f);
		ft_json_string(f, fi->driver);
	}
	if (fi->has_pdev) {
		fputs(",\"pdev\":", f);
		ft_json_string(f, fi->pdev);
	}
	if (fi->has_client_id)
		fprintf(f, ",\"client_id\":%" PRIu64, fi->client_id);
	fputs(",\"engines\":[", f);
	for (i = 0; i < fi->nr_engines; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		ft_json_string(f, fi->engines[i].name);
		for (k = 0; k < FT_ENG_NR; k++)
			if (fi->engines[i].has & (1u << k))
				fprintf(f, ",\"%s\":%" PRIu64, eng_keys[k], fi->engines[i].val[k]);
		fputc('}', f);
	}
	fputs("],\"regions\":[", f);
	for (i = 0; i < fi->nr_regions; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		ft_json_string(f, fi->regions[i].name);
		for (k = 0; k < FT_MEM_NR; k++)
			if (fi->regions[i].has & (1u << k))
				fprintf(f, ",\"%s\":%" PRIu64, mem_keys[k], fi->regions[i].val[k]);
		fputc('}', f);
	}
	fputs("],\"driver_keys\":{", f);
	for (k = 0, n = 0; k < FT_DRV_NR; k++)
		if (fi->drv_has & (1u << k))
			fprintf(f, "%s\"%s\":%" PRIu64, n++ ? "," : "", drv_keys[k], fi->drv[k]);
	fprintf(f, "},\"malformed\":%u,\"dropped\":%u}", fi->malformed, fi->dropped);
}

void ft_record_write_sample(FILE *f, const struct ft_snapshot *s)
{
	unsigned int i;

	fprintf(f, "{\"t_mono\":%.17g,\"t_wall\":%.17g,\"sysfs_ok\":%s,\"fdinfo_ok\":%s,"
		"\"procs_seen\":%u,\"procs_denied\":%u,\"fds_seen\":%u,\"accel_fds\":%u,\"devices\":[",
		s->t_mono, s->t_wall, s->sysfs_ok ? "true" : "false", s->fdinfo_ok ? "true" : "false",
		s->procs_seen, s->procs_denied, s->fds_seen, s->accel_fds);
	for (i = 0; i < s->nr_devs; i++) {
		if (i)
			fputc(',', f);
		write_dev(f, &s->devs[i]);
	}
	fputs("],\"clients\":[", f);
	for (i = 0; i < s->nr_clients; i++) {
		if (i)
			fputc(',', f);
		write_client(f, &s->clients[i]);
	}
	fputc(']', f);
	if (s->lat_ok) {
		fputs(",\"lat_stats\":{", f);
		for (i = 0; i < FT_LS_NR; i++)
			fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", ft_lat_stat_names[i],
				s->lat_stats[i]);
		fputc('}', f);
	}
	fputs("}\n", f);
}

int ft_record_open(struct ft_recorder *r, const char *path, const struct ft_record_header *h)
{
	r->f = fopen(path, "we");
	if (!r->f)
		return -errno;
	ft_record_write_header(r->f, h);
	if (fflush(r->f)) {
		int err = -errno;

		fclose(r->f);
		r->f = NULL;
		return err;
	}
	return 0;
}

/* One line per sample, flushed, so that a record cut short loses at most its last line. */
int ft_record_sample(struct ft_recorder *r, const struct ft_snapshot *s)
{
	if (!r || !r->f)	/* the screen without -w passes none */
		return 0;
	ft_record_write_sample(r->f, s);
	return fflush(r->f) || ferror(r->f) ? -(errno ? errno : EIO) : 0;
}

int ft_record_close(struct ft_recorder *r)
{
	int ret = 0;

	if (r->f && fclose(r->f))
		ret = -errno;
	r->f = NULL;
	return ret;
}

/* ---- reader ---- */

struct rd {
	char *err;
	size_t errlen;
};

static int bad(struct rd *rd, const char *what, const char *key)
{
	snprintf(rd->err, rd->errlen, "%s%s%s", what, key ? " " : "", key ? key : "");
	return -EINVAL;
}

static const struct ft_jval *need(struct rd *rd, const struct ft_jval *o, const char *key,
				  enum ft_jtype t)
{
	const struct ft_jval *v = ft_json_get(o, key);

	if (!v || v->type != t) {
		bad(rd, "missing or mistyped key", key);
		return NULL;
	}
	return v;
}

static int get_u64(struct rd *rd, const struct ft_jval *o, const char *key, uint64_t *out)
{
	if (!ft_json_u64(ft_json_get(o, key), out))
		return bad(rd, "missing or bad unsigned integer", key);
	return 0;
}

static int get_uint(struct rd *rd, const struct ft_jval *o, const char *key, unsigned int *out)
{
	uint64_t v;

	if (get_u64(rd, o, key, &v))
		return -EINVAL;
	if (v > UINT32_MAX)
		return bad(rd, "out of range:", key);
	*out = v;
	return 0;
}

static int get_bool(struct rd *rd, const struct ft_jval *o, const char *key, bool *out)
{
	const struct ft_jval *v = need(rd, o, key, FT_J_BOOL);

	if (!v)
		return -EINVAL;
	*out = v->b;
	return 0;
}

static int get_str(struct rd *rd, const struct ft_jval *o, const char *key, char *out, size_t len)
{
	const struct ft_jval *v = need(rd, o, key, FT_J_STR);

	if (!v)
		return -EINVAL;
	if (strlen(v->str) >= len)
		return bad(rd, "string too long:", key);
	memcpy(out, v->str, strlen(v->str) + 1);
	return 0;
}

/* The keys of @o must all be in @names[0..n) (NULL entries skipped) or @extra. */
static int only_keys(struct rd *rd, const struct ft_jval *o, const char *const *names,
		     unsigned int n, const char *const *extra)
{
	for (unsigned int i = 0; i < o->n; i++) {
		bool known = false;

		for (unsigned int k = 0; k < n && !known; k++)
			known = names[k] && !strcmp(o->keys[i], names[k]);
		for (const char *const *x = extra; x && *x && !known; x++)
			known = !strcmp(o->keys[i], *x);
		if (!known)
			return bad(rd, "unknown key", o->keys[i]);
	}
	return 0;
}

/* [[index, count], ...] into @v[0..n), indexes increasing. */
static int read_sparse(struct rd *rd, const struct ft_jval *a, __u32 *v, unsigned int n,
		       const char *what)
{
	uint64_t idx, c, last = 0;

	if (!a || a->type != FT_J_ARR)
		return bad(rd, "missing or mistyped key", what);
	for (unsigned int i = 0; i < a->n; i++) {
		const struct ft_jval *p = &a->items[i];

		if (p->type != FT_J_ARR || p->n != 2 || !ft_json_u64(&p->items[0], &idx) ||
		    !ft_json_u64(&p->items[1], &c) || idx >= n || c > UINT32_MAX ||
		    (i && idx <= last))
			return bad(rd, "bad slot in", what);
		v[idx] = c;
		last = idx;
	}
	return 0;
}

/* One histogram of "histograms": its slots must add up to its count. */
static int read_hist(struct rd *rd, const struct ft_jval *o, struct ft_dev *d)
{
	static const char *const hk[] = { "queue", "stage", "unit", "count", "sum", "min", "max",
					  "log2", "fine" };
	char stage[16], unit[8];
	unsigned int q, st;
	uint64_t n1 = 0, n2 = 0;
	struct hist *h;

	if (o->type != FT_J_OBJ)
		return bad(rd, "a histogram is not an object", NULL);
	if (only_keys(rd, o, hk, sizeof(hk) / sizeof(hk[0]), NULL) ||
	    get_uint(rd, o, "queue", &q) || get_str(rd, o, "stage", stage, sizeof(stage)) ||
	    get_str(rd, o, "unit", unit, sizeof(unit)))
		return -EINVAL;
	for (st = 0; st < NR_STAGES && strcmp(stage, stage_keys[st]); st++)
		;
	if (q >= d->lat_nr_queues || st == NR_STAGES || strcmp(unit, "ns"))
		return bad(rd, "bad histogram", "queue/stage/unit");
	h = &d->lat[q][st];
	if (h->count)
		return bad(rd, "histogram twice:", stage);
	if (get_u64(rd, o, "count", &n1) || get_u64(rd, o, "sum", &n2))
		return -EINVAL;
	h->count = n1;
	h->sum = n2;
	if (get_u64(rd, o, "min", &n1) || get_u64(rd, o, "max", &n2))
		return -EINVAL;
	h->min = n1;
	h->max = n2;
	if (read_sparse(rd, ft_json_get(o, "log2"), h->slots, MAX_SLOTS, "log2") ||
	    read_sparse(rd, ft_json_get(o, "fine"), h->fine, FINE_SLOTS, "fine"))
		return -EINVAL;
	n1 = n2 = 0;
	for (unsigned int i = 0; i < MAX_SLOTS; i++)
		n1 += h->slots[i];
	for (unsigned int i = 0; i < FINE_SLOTS; i++)
		n2 += h->fine[i];
	if (!h->count || n1 != h->count || n2 != h->count || h->min > h->max)
		return bad(rd, "histogram slots do not add up to its count:", stage);
	return 0;
}

static int read_dev(struct rd *rd, const struct ft_jval *o, struct ft_dev *d)
{
	const char *dev_names[FT_D_NR];
	const struct ft_jval *vals, *qs, *vs, *hs, *ra;
	unsigned int i, k;

	if (o->type != FT_J_OBJ)
		return bad(rd, "a device is not an object", NULL);
	if (get_str(rd, o, "node", d->node, sizeof(d->node)) ||
	    get_uint(rd, o, "minor", &d->minor) ||
	    get_str(rd, o, "driver", d->driver, sizeof(d->driver)) ||
	    get_str(rd, o, "pdev", d->pdev, sizeof(d->pdev)) ||
	    get_bool(rd, o, "is_frac", &d->is_frac) ||
	    get_bool(rd, o, "vectors_ok", &d->vectors_ok))
		return -EINVAL;
	vals = need(rd, o, "values", FT_J_OBJ);
	qs = need(rd, o, "queues", FT_J_ARR);
	vs = need(rd, o, "vectors", FT_J_ARR);
	hs = need(rd, o, "histograms", FT_J_ARR);
	if (!vals || !qs || !vs || !hs)
		return -EINVAL;
	for (i = 0; i < FT_D_NR; i++) {
		const struct ft_jval *v = ft_json_get(vals, ft_dev_keys[i].name);

		dev_names[i] = ft_dev_keys[i].name;
		if (!v)
			continue;
		if (!ft_json_u64(v, &d->val[i]))
			return bad(rd, "bad value", ft_dev_keys[i].name);
		d->has |= 1ull << i;
	}
	if (only_keys(rd, vals, dev_names, FT_D_NR, NULL))
		return -EINVAL;
	if (qs->n > FT_MAX_QUEUES)
		return bad(rd, "too many queues", NULL);
	for (i = 0; i < qs->n; i++) {
		const struct ft_jval *q = &qs->items[i];

		if (q->type != FT_J_ARR || q->n != FT_Q_NR)
			return bad(rd, "a queue is not an array of", "7 counters");
		for (k = 0; k < FT_Q_NR; k++)
			if (!ft_json_u64(&q->items[k], &d->q[i][k]))
				return bad(rd, "bad queue counter", ft_q_names[k]);
	}
	d->nr_queues = qs->n;
	if (vs->n > FT_MAX_VECTORS)
		return bad(rd, "too many vectors", NULL);
	for (i = 0; i < vs->n; i++) {
		static const char *const vk[] = { "irq", "name", "count" };
		const struct ft_jval *v = &vs->items[i];

		if (v->type != FT_J_OBJ)
			return bad(rd, "a vector is not an object", NULL);
		if (only_keys(rd, v, vk, 3, NULL) || get_uint(rd, v, "irq", &d->vec[i].irq) ||
		    get_str(rd, v, "name", d->vec[i].name, sizeof(d->vec[i].name)) ||
		    get_u64(rd, v, "count", &d->vec[i].count))
			return -EINVAL;
	}
	d->nr_vec = vs->n;
	if (get_bool(rd, o, "latency_ok", &d->lat_ok) ||
	    get_uint(rd, o, "latency_queues", &d->lat_nr_queues))
		return -EINVAL;
	if (d->lat_nr_queues > FT_MAX_QUEUES || (!d->lat_ok && (d->lat_nr_queues || hs->n)))
		return bad(rd, "bad", "latency_queues");
	for (i = 0; i < FT_MAX_QUEUES; i++)
		for (k = 0; k < NR_STAGES; k++)
			d->lat[i][k].min = ~0ULL;
	for (i = 0; i < hs->n; i++)
		if (read_hist(rd, &hs->items[i], d))
			return -EINVAL;
	ra = need(rd, o, "read_at", FT_J_OBJ);
	if (!ra || only_keys(rd, ra, ft_src_ts_names, FT_TS_NR, NULL))
		return -EINVAL;
	for (i = 0; i < FT_TS_NR; i++) {
		const struct ft_jval *v = ft_json_get(ra, ft_src_ts_names[i]);

		if (v && (!ft_json_num(v, &d->t_src[i]) || !(d->t_src[i] > 0)))
			return bad(rd, "bad time", ft_src_ts_names[i]);
	}
	{
		static const char *const dk[] = { "node", "minor", "driver", "pdev", "is_frac",
						  "values", "queues", "vectors_ok", "vectors",
						  "latency_ok", "latency_queues", "histograms",
						  "read_at" };

		return only_keys(rd, o, dk, sizeof(dk) / sizeof(dk[0]), NULL);
	}
}

/* Engines and regions: a name and any of @keys, each setting its validity bit. */
static int read_keyed(struct rd *rd, const struct ft_jval *o, const char *const *keys,
		      unsigned int nkeys, char *name, uint64_t *val, unsigned int *has)
{
	static const char *const name_key[] = { "name", NULL };

	if (o->type != FT_J_OBJ)
		return bad(rd, "an engine or region is not an object", NULL);
	if (get_str(rd, o, "name", name, FT_NAME_LEN) || only_keys(rd, o, keys, nkeys, name_key))
		return -EINVAL;
	*has = 0;
	for (unsigned int k = 0; k < nkeys; k++) {
		const struct ft_jval *v = ft_json_get(o, keys[k]);

		if (!v)
			continue;
		if (!ft_json_u64(v, &val[k]))
			return bad(rd, "bad value", keys[k]);
		*has |= 1u << k;
	}
	return 0;
}

static int read_client(struct rd *rd, const struct ft_jval *o, const struct ft_snapshot *s,
		       struct ft_client *c)
{
	static const char *const ck[] = { "dev", "pid", "comm", "nr_fds", "nr_pids", "t_mono",
					  "driver", "pdev", "client_id", "engines", "regions",
					  "driver_keys", "malformed", "dropped" };
	struct ft_fdinfo *fi = &c->fi;
	const struct ft_jval *v, *en, *rg, *dk;
	unsigned int i;
	uint64_t pid = 0;
	double dev;

	if (o->type != FT_J_OBJ)
		return bad(rd, "a client is not an object", NULL);
	if (only_keys(rd, o, ck, sizeof(ck) / sizeof(ck[0]), NULL))
		return -EINVAL;
	v = ft_json_get(o, "dev");
	if (!ft_json_num(v, &dev) || dev != (int)dev || dev < -1 || dev >= (int)s->nr_devs)
		return bad(rd, "bad device index", "dev");
	c->dev = (int)dev;
	if (get_u64(rd, o, "pid", &pid) || pid > INT32_MAX ||
	    get_str(rd, o, "comm", c->comm, sizeof(c->comm)) ||
	    get_uint(rd, o, "nr_fds", &c->nr_fds) || get_uint(rd, o, "nr_pids", &c->nr_pids) ||
	    get_uint(rd, o, "malformed", &fi->malformed) ||
	    get_uint(rd, o, "dropped", &fi->dropped))
		return pid > INT32_MAX ? bad(rd, "bad", "pid") : -EINVAL;
	c->pid = pid;
	v = ft_json_get(o, "t_mono");
	if (v && (!ft_json_num(v, &c->t_mono) || !(c->t_mono > 0)))
		return bad(rd, "bad time", "t_mono");
	if (ft_json_get(o, "driver")) {
		if (get_str(rd, o, "driver", fi->driver, sizeof(fi->driver)))
			return -EINVAL;
		fi->has_driver = true;
	}
	if (ft_json_get(o, "pdev")) {
		if (get_str(rd, o, "pdev", fi->pdev, sizeof(fi->pdev)))
			return -EINVAL;
		fi->has_pdev = true;
	}
	if (ft_json_get(o, "client_id")) {
		if (get_u64(rd, o, "client_id", &fi->client_id))
			return -EINVAL;
		fi->has_client_id = true;
	}
	en = need(rd, o, "engines", FT_J_ARR);
	rg = need(rd, o, "regions", FT_J_ARR);
	dk = need(rd, o, "driver_keys", FT_J_OBJ);
	if (!en || !rg || !dk)
		return -EINVAL;
	if (en->n > FT_MAX_ENGINES || rg->n > FT_MAX_REGIONS)
		return bad(rd, "too many engines or regions", NULL);
	for (i = 0; i < en->n; i++)
		if (read_keyed(rd, &en->items[i], eng_keys, FT_ENG_NR, fi->engines[i].name,
			       fi->engines[i].val, &fi->engines[i].has))
			return -EINVAL;
	fi->nr_engines = en->n;
	for (i = 0; i < rg->n; i++)
		if (read_keyed(rd, &rg->items[i], mem_keys, FT_MEM_NR, fi->regions[i].name,
			       fi->regions[i].val, &fi->regions[i].has))
			return -EINVAL;
	fi->nr_regions = rg->n;
	if (only_keys(rd, dk, drv_keys, FT_DRV_NR, NULL))
		return -EINVAL;
	for (i = 0; i < FT_DRV_NR; i++) {
		v = ft_json_get(dk, drv_keys[i]);
		if (!v)
			continue;
		if (!ft_json_u64(v, &fi->drv[i]))
			return bad(rd, "bad value", drv_keys[i]);
		fi->drv_has |= 1u << i;
	}
	return 0;
}

int ft_record_parse_sample(const char *line, size_t len, struct ft_snapshot *s,
			   char *err, size_t errlen)
{
	static const char *const sk[] = { "t_mono", "t_wall", "sysfs_ok", "fdinfo_ok",
					  "procs_seen", "procs_denied", "fds_seen", "accel_fds",
					  "devices", "clients", "lat_stats" };
	struct rd rd = { err, errlen };
	const struct ft_jval *o, *devs, *cls;
	struct ft_json doc;
	unsigned int i;
	int ret;

	ft_snapshot_reset(s);
	ret = ft_json_parse(&doc, line, len, err, errlen);
	if (ret)
		return ret;
	o = doc.root;
	ret = -EINVAL;
	if (o->type != FT_J_OBJ) {
		bad(&rd, "a sample is not an object", NULL);
		goto out;
	}
	if (only_keys(&rd, o, sk, sizeof(sk) / sizeof(sk[0]), NULL))
		goto out;
	if (!ft_json_num(ft_json_get(o, "t_mono"), &s->t_mono) ||
	    !ft_json_num(ft_json_get(o, "t_wall"), &s->t_wall)) {
		bad(&rd, "missing or bad time", "t_mono/t_wall");
		goto out;
	}
	if (get_bool(&rd, o, "sysfs_ok", &s->sysfs_ok) ||
	    get_bool(&rd, o, "fdinfo_ok", &s->fdinfo_ok) ||
	    get_uint(&rd, o, "procs_seen", &s->procs_seen) ||
	    get_uint(&rd, o, "procs_denied", &s->procs_denied) ||
	    get_uint(&rd, o, "fds_seen", &s->fds_seen) ||
	    get_uint(&rd, o, "accel_fds", &s->accel_fds))
		goto out;
	devs = need(&rd, o, "devices", FT_J_ARR);
	cls = need(&rd, o, "clients", FT_J_ARR);
	if (!devs || !cls)
		goto out;
	if (ft_json_get(o, "lat_stats")) {
		const struct ft_jval *ls = need(&rd, o, "lat_stats", FT_J_OBJ);

		if (!ls || only_keys(&rd, ls, ft_lat_stat_names, FT_LS_NR, NULL))
			goto out;
		for (i = 0; i < FT_LS_NR; i++)
			if (get_u64(&rd, ls, ft_lat_stat_names[i], &s->lat_stats[i]))
				goto out;
		s->lat_ok = true;
	}
	for (i = 0; i < devs->n; i++) {
		struct ft_dev *d = ft_snapshot_add_dev(s);

		if (!d) {
			ret = -ENOMEM;
			goto out;
		}
		if (read_dev(&rd, &devs->items[i], d))
			goto out;
	}
	for (i = 0; i < cls->n; i++) {
		struct ft_client *c = ft_snapshot_add_client(s);

		if (!c) {
			ret = -ENOMEM;
			goto out;
		}
		if (read_client(&rd, &cls->items[i], s, c))
			goto out;
	}
	ret = 0;
out:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	ft_json_free(&doc);
	return ret;
}

int ft_record_parse_header(const char *line, size_t len, struct ft_record_header *h,
			   char *err, size_t errlen)
{
	static const char *const hk[] = { "fractop_record", "program", "created", "delay_s",
					  "device", "sources" };
	static const char *const srck[] = { "name", "active", "why" };
	struct rd rd = { err, errlen };
	const struct ft_jval *o, *v, *srcs;
	struct ft_json doc;
	uint64_t ver, dev;
	int ret;

	memset(h, 0, sizeof(*h));
	ret = ft_json_parse(&doc, line, len, err, errlen);
	if (ret)
		return ret;
	o = doc.root;
	ret = -EINVAL;
	if (o->type != FT_J_OBJ || !ft_json_get(o, "fractop_record")) {
		bad(&rd, "not a fractop record (no \"fractop_record\" header)", NULL);
		goto out;
	}
	if (!ft_json_u64(ft_json_get(o, "fractop_record"), &ver) || ver != FT_RECORD_VERSION) {
		snprintf(err, errlen, "record version %s, this fractop reads %d",
			 ft_json_get(o, "fractop_record")->str ? ft_json_get(o, "fractop_record")->str
							       : "(not a number)",
			 FT_RECORD_VERSION);
		goto out;
	}
	h->version = ver;
	if (only_keys(&rd, o, hk, sizeof(hk) / sizeof(hk[0]), NULL) ||
	    get_str(&rd, o, "program", h->program, sizeof(h->program)))
		goto out;
	if (!ft_json_num(ft_json_get(o, "created"), &h->created) ||
	    !ft_json_num(ft_json_get(o, "delay_s"), &h->delay_s) || !(h->delay_s > 0)) {
		bad(&rd, "missing or bad", "created/delay_s");
		goto out;
	}
	v = ft_json_get(o, "device");
	h->only_minor = -1;
	if (!v || (v->type != FT_J_NULL && (!ft_json_u64(v, &dev) || dev > 0xfffff))) {
		bad(&rd, "missing or bad", "device");
		goto out;
	}
	if (v->type != FT_J_NULL)
		h->only_minor = dev;
	srcs = need(&rd, o, "sources", FT_J_ARR);
	if (!srcs)
		goto out;
	if (srcs->n > FT_RECORD_MAX_SOURCES) {
		bad(&rd, "too many sources", NULL);
		goto out;
	}
	for (unsigned int i = 0; i < srcs->n; i++) {
		const struct ft_jval *sv = &srcs->items[i];

		if (sv->type != FT_J_OBJ) {
			bad(&rd, "a source is not an object", NULL);
			goto out;
		}
		if (only_keys(&rd, sv, srck, 3, NULL) ||
		    get_str(&rd, sv, "name", h->sources[i].name, sizeof(h->sources[i].name)) ||
		    get_bool(&rd, sv, "active", &h->sources[i].active) ||
		    get_str(&rd, sv, "why", h->sources[i].why, sizeof(h->sources[i].why)))
			goto out;
	}
	h->nr_sources = srcs->n;
	ret = 0;
out:
	ft_json_free(&doc);
	return ret;
}

/* ---- replay: the file's index, and one sample on demand ---- */

/* The next line into rp->line; its length without the newline, -1 at EOF, -2 if unterminated. */
static ssize_t next_line(struct ft_replay *rp)
{
	ssize_t n = getline(&rp->line, &rp->cap, rp->f);

	if (n < 0)
		return -1;
	if (n == 0 || rp->line[n - 1] != '\n')
		return -2;
	rp->line[--n] = '\0';
	return n;
}

int ft_replay_open(struct ft_replay *rp, const char *path, char *err, size_t errlen)
{
	struct ft_snapshot snap = { 0 };
	unsigned int cap = 0, lineno = 1;
	char why[200];
	ssize_t n;
	int ret;

	memset(rp, 0, sizeof(*rp));
	rp->f = fopen(path, "re");
	if (!rp->f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	n = next_line(rp);
	if (n < 0) {
		snprintf(err, errlen, "%s: %s", path, n == -1 ? "empty file, not a fractop record"
							       : "line 1: no newline (truncated?)");
		ret = -EINVAL;
		goto fail;
	}
	ret = ft_record_parse_header(rp->line, n, &rp->hdr, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "%s:1: %s", path, why);
		goto fail;
	}
	for (;;) {
		off_t off = ftello(rp->f);

		lineno++;
		n = next_line(rp);
		if (n == -1)
			break;
		if (n == -2) {
			snprintf(err, errlen, "%s:%u: no newline at the end (truncated?)", path, lineno);
			ret = -EINVAL;
			goto fail;
		}
		ret = ft_record_parse_sample(rp->line, n, &snap, why, sizeof(why));
		if (!ret && rp->nr && !(snap.t_mono > rp->t_mono[rp->nr - 1])) {
			snprintf(why, sizeof(why), "time does not advance (t_mono)");
			ret = -EINVAL;
		}
		if (ret) {
			snprintf(err, errlen, "%s:%u: %s", path, lineno, why);
			goto fail;
		}
		if (rp->nr == cap) {
			unsigned int c = cap ? 2 * cap : 256;
			off_t *no = realloc(rp->off, c * sizeof(*no));
			double *nt = no ? realloc(rp->t_mono, c * sizeof(*nt)) : NULL;

			if (no)
				rp->off = no;
			if (nt)
				rp->t_mono = nt;
			if (!no || !nt) {
				snprintf(err, errlen, "out of memory");
				ret = -ENOMEM;
				goto fail;
			}
			cap = c;
		}
		rp->off[rp->nr] = off;
		rp->t_mono[rp->nr++] = snap.t_mono;
	}
	ft_snapshot_free(&snap);
	if (!rp->nr) {
		snprintf(err, errlen, "%s: no samples after the header", path);
		ft_replay_close(rp);
		return -EINVAL;
	}
	return 0;
fail:
	ft_snapshot_free(&snap);
	ft_replay_close(rp);
	return ret;
}

int ft_replay_read(struct ft_replay *rp, unsigned int i, struct ft_snapshot *snap,
		   char *err, size_t errlen)
{
	ssize_t n;

	if (i >= rp->nr || fseeko(rp->f, rp->off[i], SEEK_SET)) {
		snprintf(err, errlen, "sample %u: cannot seek", i);
		return -EINVAL;
	}
	n = next_line(rp);
	if (n < 0) {
		snprintf(err, errlen, "sample %u: the file changed", i);
		return -EINVAL;
	}
	return ft_record_parse_sample(rp->line, n, snap, err, errlen);
}

void ft_replay_close(struct ft_replay *rp)
{
	if (rp->f)
		fclose(rp->f);
	free(rp->off);
	free(rp->t_mono);
	free(rp->line);
	memset(rp, 0, sizeof(*rp));
}
