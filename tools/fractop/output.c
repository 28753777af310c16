// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * Batch output of a view: -J writes one complete JSON object per line and per interval, -c
 * writes CSV with a header line. Both print every field on every line, whatever the driver:
 * a value that is not known is null (JSON) or an empty cell (CSV), never absent and never 0.
 * The schema (README.md) has a version, FT_SCHEMA_VERSION, on every JSON line and in the
 * CSV header's first column.
 */

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "fractop.h"
#include "trace_helpers.h"

/* A JSON string: quotes, backslash and control characters escaped; bytes >= 0x80 as is. */
void ft_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		switch (c) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

static void json_str_or_null(FILE *f, const char *s)
{
	if (s && *s)
		ft_json_string(f, s);
	else
		fputs("null", f);
}

const char *ft_lat_note;

static void json_num(FILE *f, struct ft_num n)
{
	if (n.ok && isfinite(n.v))
		fprintf(f, "%.10g", n.v);
	else
		fputs("null", f);
}

/* CLOCK_MONOTONIC instants and the intervals between them, to the ns clock_gettime() has. */
static void json_time(FILE *f, struct ft_num n)
{
	if (n.ok && isfinite(n.v))
		fprintf(f, "%.9f", n.v);
	else
		fputs("null", f);
}

/* "reads":{"sysfs":{"t_mono":..., "interval_s":...}, ...}: when each source read it. */
static void json_reads(FILE *f, const char *const *names, const struct ft_num *t,
		       const struct ft_num *dt, unsigned int n)
{
	fputs(",\"reads\":{", f);
	for (unsigned int i = 0; i < n; i++) {
		fprintf(f, "%s\"%s\":{\"t_mono\":", i ? "," : "", names[i]);
		json_time(f, t[i]);
		fputs(",\"interval_s\":", f);
		json_time(f, dt[i]);
		fputc('}', f);
	}
	fputc('}', f);
}

/* Byte counts and other integers carried in a double: exact to 2^53. */
static void json_int(FILE *f, struct ft_num n)
{
	if (n.ok && isfinite(n.v))
		fprintf(f, "%.0f", n.v);
	else
		fputs("null", f);
}

static const char *const mem_names[FT_MEM_NR] = {
	[FT_MEM_MEMORY] = "memory_bytes",
	[FT_MEM_TOTAL] = "total_bytes",
	[FT_MEM_SHARED] = "shared_bytes",
	[FT_MEM_RESIDENT] = "resident_bytes",
	[FT_MEM_PURGEABLE] = "purgeable_bytes",
	[FT_MEM_ACTIVE] = "active_bytes",
};

/* The frac sysfs counters that go out as "counters" (hwmon goes out as converted values). */
#define FT_D_NR_COUNTERS FT_D_TEMP_MC

static void json_engines(FILE *f, const struct ft_view_engine *e, unsigned int n)
{
	fputc('[', f);
	for (unsigned int i = 0; i < n; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		ft_json_string(f, e[i].name);
		fputs(",\"busy_pct\":", f);
		json_num(f, e[i].busy_pct);
		fputs(",\"busy_ns\":", f);
		json_int(f, e[i].ns);
		fputc('}', f);
	}
	fputc(']', f);
}

static void json_regions(FILE *f, const struct ft_view_region *r, unsigned int n)
{
	fputc('[', f);
	for (unsigned int i = 0; i < n; i++) {
		fputs(i ? ",{\"region\":" : "{\"region\":", f);
		ft_json_string(f, r[i].name);
		for (int k = 0; k < FT_MEM_NR; k++) {
			fprintf(f, ",\"%s\":", mem_names[k]);
			json_int(f, r[i].bytes[k]);
		}
		fputc('}', f);
	}
	fputc(']', f);
}

/*
 * One latency histogram (struct hist, ns): exact count, sum, min, max; p50 and p99 with the
 * bounds the nearest-rank sample lies in (bpf/trace_helpers.c's hist_percentile, as fraclat);
 * "log2_ns": the counts of log2 slots 0.. (slot k: [2^k, 2^(k+1)) ns), up to the last used.
 * Not known: every value null and log2_ns null; an empty one has count 0, the rest null, [].
 */
static void json_pct(FILE *f, const char *name, struct ft_pct p)
{
	fprintf(f, ",\"%s_ns\":", name);
	json_num(f, p.est);
	fprintf(f, ",\"%s_low_ns\":", name);
	json_num(f, p.low);
	fprintf(f, ",\"%s_high_ns\":", name);
	json_num(f, p.high);
}

static void json_lat_hist(FILE *f, const struct hist *h)
{
	struct ft_pct na = { FT_NUM_NA, FT_NUM_NA, FT_NUM_NA };
	unsigned int n = h ? ft_lat_slots_used(h) : 0;

	if (!h) {
		fputs("{\"count\":null,\"sum_ns\":null,\"min_ns\":null,\"max_ns\":null", f);
	} else {
		fprintf(f, "{\"count\":%" PRIu64 ",\"sum_ns\":%" PRIu64 ",\"min_ns\":",
			(uint64_t)h->count, (uint64_t)h->sum);
		if (h->count)
			fprintf(f, "%" PRIu64 ",\"max_ns\":%" PRIu64, (uint64_t)h->min,
				(uint64_t)h->max);
		else
			fputs("null,\"max_ns\":null", f);
	}
	json_pct(f, "p50", h ? ft_lat_percentile(h, 0.5) : na);
	json_pct(f, "p99", h ? ft_lat_percentile(h, 0.99) : na);
	if (!h) {
		fputs(",\"log2_ns\":null}", f);
		return;
	}
	fputs(",\"log2_ns\":[", f);
	for (unsigned int k = 0; k < n; k++)
		fprintf(f, "%s%u", k ? "," : "", h->slots[k]);
	fputs("]}", f);
}

/* A queue's "latency": {"total":{..},"submit_run":{..},..} (stage_keys of trace_helpers.c). */
static void json_lat_queue(FILE *f, const struct ft_dev *d, unsigned int q)
{
	bool known = d->lat_ok && q < d->lat_nr_queues;

	fputs(",\"latency\":{", f);
	for (int k = 0; k < NR_STAGES; k++) {
		/* total first: the figure most readers want */
		int s = k == 0 ? STAGE_TOTAL : k - 1;

		fprintf(f, "%s\"%s\":", k ? "," : "", stage_keys[s]);
		json_lat_hist(f, known ? &d->lat[q][s] : NULL);
	}
	fputc('}', f);
}

/*
 * Per-queue counters (debugfs): a frac device whose debugfs could not be read still lists its
 * num_queues queues, every figure null; a device without queues has [].
 */
static void json_queues(FILE *f, const struct ft_view_dev *vd)
{
	const struct ft_dev *d = &vd->dev;
	unsigned int n = d->nr_queues, i;
	bool known = n > 0;

	if (!known && d->is_frac && (d->has & (1ull << FT_D_NUM_QUEUES)))
		n = d->val[FT_D_NUM_QUEUES] < FT_MAX_QUEUES ? d->val[FT_D_NUM_QUEUES] : FT_MAX_QUEUES;
	if (!n && d->lat_ok)
		n = d->lat_nr_queues;
	fputs(",\"queues\":[", f);
	for (i = 0; i < n; i++) {
		fprintf(f, "%s{\"queue\":%u", i ? "," : "", i);
		for (int k = 0; k < FT_Q_NR; k++) {
			fprintf(f, ",\"%s\":", ft_q_names[k]);
			if (known)
				fprintf(f, "%" PRIu64, d->q[i][k]);
			else
				fputs("null", f);
		}
		fputs(",\"jobs_per_s\":", f);
		json_num(f, known ? vd->queues[i].jobs_per_s : FT_NUM_NA);
		fputs(",\"jobs_failed_per_s\":", f);
		json_num(f, known ? vd->queues[i].failed_per_s : FT_NUM_NA);
		json_lat_queue(f, d, i);
		fputc('}', f);
	}
	fputc(']', f);
}

/* MSI/MSI-X vectors: count null when /proc/interrupts did not give every vector. */
static void json_vectors(FILE *f, const struct ft_view_dev *vd)
{
	const struct ft_dev *d = &vd->dev;

	fputs(",\"vectors\":[", f);
	for (unsigned int i = 0; i < d->nr_vec; i++) {
		fprintf(f, "%s{\"irq\":%u,\"name\":", i ? "," : "", d->vec[i].irq);
		json_str_or_null(f, d->vec[i].name);
		fputs(",\"count\":", f);
		if (d->vectors_ok)
			fprintf(f, "%" PRIu64, d->vec[i].count);
		else
			fputs("null", f);
		fputs(",\"per_s\":", f);
		json_num(f, vd->vec_per_s[i]);
		fputc('}', f);
	}
	fputc(']', f);
}

static const char *const fdinfo_name[] = { "fdinfo" };

static void json_dev(FILE *f, const struct ft_view_dev *vd)
{
	const struct ft_dev *d = &vd->dev;
	unsigned int i;

	fputs("{\"device\":", f);
	ft_json_string(f, d->node);
	fprintf(f, ",\"minor\":%u,\"driver\":", d->minor);
	json_str_or_null(f, d->driver);
	fputs(",\"pdev\":", f);
	json_str_or_null(f, d->pdev);
	json_reads(f, ft_src_ts_names, vd->t_src, vd->dt_src, FT_TS_NR);
	fputs(",\"counters\":{", f);
	for (i = 0; i < FT_D_NR_COUNTERS; i++) {
		fprintf(f, "%s\"%s\":", i ? "," : "", ft_dev_keys[i].name);
		if (d->has & (1ull << i))
			fprintf(f, "%" PRIu64, d->val[i]);
		else
			fputs("null", f);
	}
	fputs("},\"rates\":{", f);
	for (i = 0; i < FT_R_NR; i++) {
		fprintf(f, "%s\"%s\":", i ? "," : "", ft_rate_names[i]);
		json_num(f, vd->rate[i]);
	}
	fputs("},\"temperature_c\":", f);
	json_num(f, vd->temp_c);
	fputs(",\"power_w\":", f);
	json_num(f, vd->power_w);
	fprintf(f, ",\"latency_ok\":%s", d->lat_ok ? "true" : "false");
	json_queues(f, vd);
	json_vectors(f, vd);
	fprintf(f, ",\"clients\":%u,\"engines\":", vd->nr_clients);
	json_engines(f, vd->engines, vd->nr_engines);
	fputs(",\"memory\":", f);
	json_regions(f, vd->regions, vd->nr_regions);
	fputs(",\"processes\":[", f);
	for (i = 0; i < vd->nr_procs; i++) {
		const struct ft_view_proc *p = &vd->procs[i];

		fprintf(f, "%s{\"pid\":%d,\"comm\":", i ? "," : "", (int)p->pid);
		ft_json_string(f, p->comm);
		fprintf(f, ",\"clients\":%u,\"busy_pct\":", p->nr_clients);
		json_num(f, p->busy_pct);
		fputs(",\"engines\":", f);
		json_engines(f, p->engines, p->nr_engines);
		fputs(",\"memory\":", f);
		json_regions(f, p->regions, p->nr_regions);
		fputs(",\"memory_bytes\":", f);
		json_int(f, p->mem_bytes);
		fputs(",\"jobs_completed\":", f);
		json_int(f, p->jobs);
		fputs(",\"jobs_per_s\":", f);
		json_num(f, p->jobs_per_s);
		fputs(",\"jobs_failed\":", f);
		json_int(f, p->jobs_failed);
		json_reads(f, fdinfo_name, &p->t_fdinfo, &p->dt_fdinfo, 1);
		fputc('}', f);
	}
	fputs("]}", f);
}

void ft_write_json(FILE *f, const struct ft_view *v)
{
	fprintf(f, "{\"schema_version\":%d,\"timestamp\":%.3f,\"t_mono\":%.9f,\"interval_s\":",
		FT_SCHEMA_VERSION, v->t_wall, v->t_mono);
	json_num(f, v->interval_s);
	fprintf(f, ",\"procs_seen\":%u,\"procs_denied\":%u", v->procs_seen, v->procs_denied);
	/* The BPF job programs' counters since attach: what they lost, how jobs ended. */
	fprintf(f, ",\"latency\":{\"active\":%s,\"note\":", v->lat_ok ? "true" : "false");
	json_str_or_null(f, ft_lat_note ? ft_lat_note : "");
	for (int k = 0; k < FT_LS_NR; k++) {
		fprintf(f, ",\"%s\":", ft_lat_stat_names[k]);
		if (v->lat_ok)
			fprintf(f, "%" PRIu64, v->lat_stats[k]);
		else
			fputs("null", f);
	}
	fputs("},\"devices\":[", f);
	for (unsigned int i = 0; i < v->nr_devs; i++) {
		if (i)
			fputc(',', f);
		json_dev(f, &v->devs[i]);
	}
	fputs("]}\n", f);
}

/* ---- CSV: one row per device per interval (RFC 4180 quoting) ---- */

static void csv_string(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_num(FILE *f, struct ft_num n, bool integer)
{
	fputc(',', f);
	if (n.ok && isfinite(n.v))
		fprintf(f, integer ? "%.0f" : "%.10g", n.v);
}

static void csv_time(FILE *f, struct ft_num n)
{
	fputc(',', f);
	if (n.ok && isfinite(n.v))
		fprintf(f, "%.9f", n.v);
}

void ft_write_csv_header(FILE *f)
{
	unsigned int i;

	fprintf(f, "schema_version,timestamp,interval_s,device,driver,pdev");
	for (i = 0; i < FT_D_NR_COUNTERS; i++)
		fprintf(f, ",%s", ft_dev_keys[i].name);
	for (i = 0; i < FT_R_NR; i++)
		fprintf(f, ",%s", ft_rate_names[i]);
	fputs(",temperature_c,power_w,clients,processes,engine_busy_pct,memory_total_bytes,"
	      "queue_jobs_per_s,queue_failed,queue_timeouts,queue_resets,vector_per_s,"
	      "queue_latency_count,queue_latency_p50_ns,queue_latency_p99_ns,"
	      "queue_latency_log2_ns,t_mono", f);
	for (i = 0; i < FT_TS_NR; i++)
		fprintf(f, ",%s_t_mono,%s_interval_s", ft_src_ts_names[i], ft_src_ts_names[i]);
	fputc('\n', f);
}

/*
 * The per-engine and per-region figures vary in number with the driver, so that the header
 * stays fixed they go in one cell each: "queue0=12.5;queue1=" (empty: not known).
 */
static void csv_pairs_engines(FILE *f, const struct ft_view_dev *vd)
{
	char cell[FT_MAX_ENGINES * (FT_NAME_LEN + 16)];
	size_t pos = 0;

	cell[0] = '\0';
	for (unsigned int i = 0; i < vd->nr_engines && pos < sizeof(cell); i++) {
		const struct ft_view_engine *e = &vd->engines[i];

		pos += snprintf(cell + pos, sizeof(cell) - pos, "%s%s=", i ? ";" : "", e->name);
		if (pos < sizeof(cell) && e->busy_pct.ok && isfinite(e->busy_pct.v))
			pos += snprintf(cell + pos, sizeof(cell) - pos, "%.10g", e->busy_pct.v);
	}
	fputc(',', f);
	csv_string(f, cell);
}

static void csv_pairs_regions(FILE *f, const struct ft_view_dev *vd)
{
	char cell[FT_MAX_REGIONS * (FT_NAME_LEN + 24)];
	size_t pos = 0;

	cell[0] = '\0';
	for (unsigned int i = 0; i < vd->nr_regions && pos < sizeof(cell); i++) {
		const struct ft_view_region *r = &vd->regions[i];
		struct ft_num b = r->bytes[FT_MEM_TOTAL].ok ? r->bytes[FT_MEM_TOTAL]
							    : r->bytes[FT_MEM_MEMORY];

		pos += snprintf(cell + pos, sizeof(cell) - pos, "%s%s=", i ? ";" : "", r->name);
		if (pos < sizeof(cell) && b.ok)
			pos += snprintf(cell + pos, sizeof(cell) - pos, "%.0f", b.v);
	}
	fputc(',', f);
	csv_string(f, cell);
}

/* "0=12.5;1=0" over the debugfs queues: @rate (a rate), or counter @key; "" if none. */
static void csv_queue_cell(FILE *f, const struct ft_view_dev *vd, int key, bool rate)
{
	char cell[FT_MAX_QUEUES * 32];
	size_t pos = 0;

	cell[0] = '\0';
	for (unsigned int i = 0; i < vd->dev.nr_queues && pos < sizeof(cell); i++) {
		struct ft_num r = vd->queues[i].jobs_per_s;

		pos += snprintf(cell + pos, sizeof(cell) - pos, "%s%u=", i ? ";" : "", i);
		if (pos >= sizeof(cell))
			break;
		if (!rate)
			pos += snprintf(cell + pos, sizeof(cell) - pos, "%" PRIu64, vd->dev.q[i][key]);
		else if (r.ok && isfinite(r.v))
			pos += snprintf(cell + pos, sizeof(cell) - pos, "%.10g", r.v);
	}
	fputc(',', f);
	csv_string(f, cell);
}

/*
 * Latency of the total stage per queue: "0=1200;1=" (empty: not known, or no job for a
 * percentile); the histogram as "0=12:3 13:40;1=" (log2 slot:count, the used slots only).
 */
enum csv_lat { CSV_LAT_COUNT, CSV_LAT_P50, CSV_LAT_P99, CSV_LAT_LOG2 };

static void csv_lat_cell(FILE *f, const struct ft_dev *d, enum csv_lat what)
{
	char cell[FT_MAX_QUEUES * MAX_SLOTS * 16];
	size_t pos = 0;

	cell[0] = '\0';
	for (unsigned int i = 0; d->lat_ok && i < d->lat_nr_queues && pos < sizeof(cell); i++) {
		const struct hist *h = &d->lat[i][STAGE_TOTAL];
		struct ft_pct p;

		pos += snprintf(cell + pos, sizeof(cell) - pos, "%s%u=", i ? ";" : "", i);
		if (pos >= sizeof(cell))
			break;
		switch (what) {
		case CSV_LAT_COUNT:
			pos += snprintf(cell + pos, sizeof(cell) - pos, "%" PRIu64, (uint64_t)h->count);
			break;
		case CSV_LAT_P50:
		case CSV_LAT_P99:
			p = ft_lat_percentile(h, what == CSV_LAT_P50 ? 0.5 : 0.99);
			if (p.est.ok)
				pos += snprintf(cell + pos, sizeof(cell) - pos, "%.10g", p.est.v);
			break;
		case CSV_LAT_LOG2:
			for (unsigned int k = 0, sp = 0; k < MAX_SLOTS && pos < sizeof(cell); k++)
				if (h->slots[k])
					pos += snprintf(cell + pos, sizeof(cell) - pos, "%s%u:%u",
							sp++ ? " " : "", k, h->slots[k]);
			break;
		}
	}
	fputc(',', f);
	csv_string(f, cell);
}

static void csv_vector_cell(FILE *f, const struct ft_view_dev *vd)
{
	char cell[FT_MAX_VECTORS * (FT_NAME_LEN + 24)];
	size_t pos = 0;

	cell[0] = '\0';
	for (unsigned int i = 0; i < vd->dev.nr_vec && pos < sizeof(cell); i++) {
		struct ft_num r = vd->vec_per_s[i];

		pos += snprintf(cell + pos, sizeof(cell) - pos, "%s%s=", i ? ";" : "",
				vd->dev.vec[i].name[0] ? vd->dev.vec[i].name : "?");
		if (pos < sizeof(cell) && r.ok && isfinite(r.v))
			pos += snprintf(cell + pos, sizeof(cell) - pos, "%.10g", r.v);
	}
	fputc(',', f);
	csv_string(f, cell);
}

void ft_write_csv(FILE *f, const struct ft_view *v)
{
	for (unsigned int i = 0; i < v->nr_devs; i++) {
		const struct ft_view_dev *vd = &v->devs[i];
		const struct ft_dev *d = &vd->dev;
		unsigned int k;

		fprintf(f, "%d,%.3f", FT_SCHEMA_VERSION, v->t_wall);
		csv_num(f, v->interval_s, false);
		fputc(',', f);
		csv_string(f, d->node);
		fputc(',', f);
		csv_string(f, d->driver);
		fputc(',', f);
		csv_string(f, d->pdev);
		for (k = 0; k < FT_D_NR_COUNTERS; k++) {
			fputc(',', f);
			if (d->has & (1ull << k))
				fprintf(f, "%" PRIu64, d->val[k]);
		}
		for (k = 0; k < FT_R_NR; k++)
			csv_num(f, vd->rate[k], false);
		csv_num(f, vd->temp_c, false);
		csv_num(f, vd->power_w, false);
		fprintf(f, ",%u,%u", vd->nr_clients, vd->nr_procs);
		csv_pairs_engines(f, vd);
		csv_pairs_regions(f, vd);
		csv_queue_cell(f, vd, 0, true);
		csv_queue_cell(f, vd, FT_Q_FAILED, false);
		csv_queue_cell(f, vd, FT_Q_TIMEOUTS, false);
		csv_queue_cell(f, vd, FT_Q_RESETS, false);
		csv_vector_cell(f, vd);
		csv_lat_cell(f, d, CSV_LAT_COUNT);
		csv_lat_cell(f, d, CSV_LAT_P50);
		csv_lat_cell(f, d, CSV_LAT_P99);
		csv_lat_cell(f, d, CSV_LAT_LOG2);
		fprintf(f, ",%.9f", v->t_mono);
		for (k = 0; k < FT_TS_NR; k++) {
			csv_time(f, vd->t_src[k]);
			csv_time(f, vd->dt_src[k]);
		}
		fputc('\n', f);
	}
}
