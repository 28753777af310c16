// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * The Prometheus text exposition (format 0.0.4) of a view: what `--listen` serves on
 * GET /metrics. Pure: it writes into a FILE (the server renders into memory once per sample).
 *
 * Naming follows https://prometheus.io/docs/practices/naming/: the frac_ prefix, base units
 * (_seconds from the ns counters, _bytes, _celsius, _watts), _total on every counter, no
 * percentages (a busy ratio is rate(frac_device_busy_seconds_total) over
 * rate(frac_device_clock_seconds_total), computed by the query). Counters are the raw
 * cumulative values the sources read, not fractop's rates. A value that is not known is not
 * exported (no sample), never 0. Every family gets its HELP and TYPE lines once, then all its
 * samples: the format requires a family's samples to be contiguous, so the writer goes family
 * by family over the devices rather than device by device.
 *
 * ft_prom_histogram() writes a histogram family's _bucket/_sum/_count samples; the BPF latency
 * source will export frac_job_latency_seconds through it (per device, queue and stage), and
 * tests/unit.c checks its output today.
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "fractop.h"
#include "trace_helpers.h"

/* A label value: backslash, double quote and newline escaped (the format's only escapes). */
static void label_value(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void ft_prom_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s ", name);
	for (; *help; help++) {
		if (*help == '\\')
			fputs("\\\\", f);
		else if (*help == '\n')
			fputs("\\n", f);
		else
			fputc(*help, f);
	}
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

static void labels(FILE *f, const struct ft_prom_label *l, unsigned int n, const char *extra_name,
		   const char *extra_value)
{
	if (!n && !extra_name)
		return;
	fputc('{', f);
	for (unsigned int i = 0; i < n; i++) {
		fprintf(f, "%s%s=", i ? "," : "", l[i].name);
		label_value(f, l[i].value);
	}
	if (extra_name) {
		fprintf(f, "%s%s=", n ? "," : "", extra_name);
		label_value(f, extra_value);
	}
	fputc('}', f);
}

/* The shortest text that reads back as @d: "0.004", not "0.0040000000000000001". */
static void fmt_double(char *buf, size_t len, double d)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			return;
	}
}

/* One sample; the value is printed exactly: an integer, or ns as seconds with 9 decimals. */
void ft_prom_sample(FILE *f, const char *name, const struct ft_prom_label *l, unsigned int n,
		    const struct ft_prom_value *v)
{
	fputs(name, f);
	labels(f, l, n, NULL, NULL);
	switch (v->kind) {
	case FT_PROM_U64:
		fprintf(f, " %" PRIu64 "\n", v->u);
		break;
	case FT_PROM_NS_AS_S:
		fprintf(f, " %" PRIu64 ".%09" PRIu64 "\n", v->u / 1000000000u, v->u % 1000000000u);
		break;
	default:
		if (isfinite(v->d)) {
			char num[32];

			fmt_double(num, sizeof(num), v->d);
			fprintf(f, " %s\n", num);
		} else
			fprintf(f, " %s\n", isnan(v->d) ? "NaN" : v->d > 0 ? "+Inf" : "-Inf");
	}
}

static void sample_u64(FILE *f, const char *name, const struct ft_prom_label *l, unsigned int n,
		       uint64_t u)
{
	struct ft_prom_value v = { .kind = FT_PROM_U64, .u = u };

	ft_prom_sample(f, name, l, n, &v);
}

static void sample_ns(FILE *f, const char *name, const struct ft_prom_label *l, unsigned int n,
		      uint64_t ns)
{
	struct ft_prom_value v = { .kind = FT_PROM_NS_AS_S, .u = ns };

	ft_prom_sample(f, name, l, n, &v);
}

static void sample_d(FILE *f, const char *name, const struct ft_prom_label *l, unsigned int n,
		     double d)
{
	struct ft_prom_value v = { .kind = FT_PROM_DOUBLE, .d = d };

	ft_prom_sample(f, name, l, n, &v);
}

/*
 * A histogram: @nb cumulative-from-zero bucket counts for upper bounds @le (ascending, the
 * last may be +Inf; a +Inf bucket equal to @count is added when it is not), then _sum and
 * _count. Buckets are written cumulative, as the format asks; @counts are per bucket.
 */
void ft_prom_histogram(FILE *f, const char *name, const struct ft_prom_label *l, unsigned int n,
		       const double *le, const uint64_t *counts, unsigned int nb, double sum,
		       uint64_t count)
{
	char bname[128], bound[40];
	uint64_t cum = 0;
	bool inf = false;

	snprintf(bname, sizeof(bname), "%s_bucket", name);
	for (unsigned int i = 0; i < nb; i++) {
		cum += counts[i];
		if (isinf(le[i])) {
			snprintf(bound, sizeof(bound), "+Inf");
			inf = true;
		} else {
			fmt_double(bound, sizeof(bound), le[i]);
		}
		fputs(bname, f);
		labels(f, l, n, "le", bound);
		fprintf(f, " %" PRIu64 "\n", cum);
	}
	if (!inf) {
		fputs(bname, f);
		labels(f, l, n, "le", "+Inf");
		fprintf(f, " %" PRIu64 "\n", count);
	}
	snprintf(bname, sizeof(bname), "%s_sum", name);
	sample_d(f, bname, l, n, sum);
	snprintf(bname, sizeof(bname), "%s_count", name);
	sample_u64(f, bname, l, n, count);
}

/* ---- the families of a view ---- */

/*
 * frac sysfs counters: name, help, the key; ns counters go out in seconds. Rows of one family
 * follow each other and differ by an extra label (@lname=@lvalue).
 */
static const struct {
	const char *name;
	const char *help;
	int key;
	bool ns;
	bool counter;
	const char *lname, *lvalue;
} dev_metrics[] = {
#define CTR(n, h, k) { .name = n, .help = h, .key = k, .counter = true }
#define GAUGE(n, h, k) { .name = n, .help = h, .key = k }
	CTR("frac_jobs_submitted_total", "Jobs submitted to the device's queues (driver).",
	    FT_D_JOBS_SUBMITTED),
	CTR("frac_jobs_completed_total", "Jobs that completed successfully (driver).",
	    FT_D_JOBS_COMPLETED),
	CTR("frac_jobs_failed_total", "Jobs that ended with an error (driver).", FT_D_JOBS_FAILED),
	CTR("frac_job_timeouts_total", "Jobs that timed out (driver).", FT_D_JOB_TIMEOUTS),
	CTR("frac_lost_interrupts_total", "Completions found without their interrupt (driver).",
	    FT_D_LOST_INTERRUPTS),
	{ .name = "frac_resets_total", .key = FT_D_QUEUE_RESETS, .counter = true,
	  .help = "Resets (driver): of one queue (scope queue) or of the device (scope device).",
	  .lname = "scope", .lvalue = "queue" },
	{ .name = "frac_resets_total", .key = FT_D_DEVICE_RESETS, .counter = true,
	  .lname = "scope", .lvalue = "device" },
	CTR("frac_errors_total", "Device error interrupts (driver).", FT_D_ERRORS),
	CTR("frac_coredumps_total", "Device coredumps taken (driver).", FT_D_COREDUMPS),
	CTR("frac_device_jobs_done_total",
	    "Jobs the device completed (device telemetry, since its last reset).",
	    FT_D_DEVICE_JOBS_DONE),
	CTR("frac_device_jobs_failed_total",
	    "Jobs the device failed (device telemetry, since its last reset).",
	    FT_D_DEVICE_JOBS_FAILED),
	CTR("frac_dma_read_bytes_total", "Bytes the device read by DMA (device telemetry).",
	    FT_D_BYTES_READ),
	CTR("frac_dma_written_bytes_total", "Bytes the device wrote by DMA (device telemetry).",
	    FT_D_BYTES_WRITTEN),
	CTR("frac_device_interrupts_total", "Interrupts the device raised (device telemetry).",
	    FT_D_INTERRUPTS),
	{ .name = "frac_device_clock_seconds_total", .key = FT_D_DEVICE_CLOCK_NS, .counter = true,
	  .ns = true,
	  .help = "The device's own clock (device telemetry): the denominator of busy ratios." },
	GAUGE("frac_wedged", "1 if the driver gave up on the device.", FT_D_WEDGED),
	GAUGE("frac_queues", "Hardware queues the device has.", FT_D_NUM_QUEUES),
};

#undef CTR
#undef GAUGE
#define NR_DEV_METRICS (sizeof(dev_metrics) / sizeof(dev_metrics[0]))

static const struct {
	const char *name;
	const char *help;
	int key;
	bool counter;
} queue_metrics[] = {
	{ "frac_queue_jobs_submitted_total", "Jobs submitted on the queue (debugfs).",
	  FT_Q_SUBMITTED, true },
	{ "frac_queue_jobs_completed_total", "Jobs completed on the queue (debugfs).",
	  FT_Q_COMPLETED, true },
	{ "frac_queue_jobs_failed_total", "Jobs failed on the queue (debugfs).", FT_Q_FAILED, true },
	{ "frac_queue_job_timeouts_total", "Job timeouts on the queue (debugfs).",
	  FT_Q_TIMEOUTS, true },
	{ "frac_queue_lost_interrupts_total", "Lost interrupts on the queue (debugfs).",
	  FT_Q_LOST_IRQS, true },
	{ "frac_queue_resets_total", "Resets of the queue (debugfs).", FT_Q_RESETS, true },
	{ "frac_queue_jobs_in_ring", "Jobs on the queue's ring now (debugfs).", FT_Q_IN_RING, false },
};

static const struct {
	const char *name;
	const char *help;
	int key;
} mem_metrics[] = {
	{ "frac_client_memory_total_bytes", "Client memory, drm-total- of fdinfo.", FT_MEM_TOTAL },
	{ "frac_client_memory_shared_bytes", "Client memory shared with other clients, drm-shared-.",
	  FT_MEM_SHARED },
	{ "frac_client_memory_resident_bytes", "Client memory resident, drm-resident-.",
	  FT_MEM_RESIDENT },
	{ "frac_client_memory_purgeable_bytes", "Client memory purgeable, drm-purgeable-.",
	  FT_MEM_PURGEABLE },
	{ "frac_client_memory_active_bytes", "Client memory in use by the device, drm-active-.",
	  FT_MEM_ACTIVE },
	{ "frac_client_memory_bytes", "Client memory, drm-memory- of fdinfo (the older key).",
	  FT_MEM_MEMORY },
};

#define DEV_HAS(d, k) ((d)->has & (1ull << (k)))

struct plabels {
	struct ft_prom_label l[6];
	char buf[3][24];
	unsigned int n;
};

static void dev_label(struct plabels *p, const struct ft_dev *d)
{
	p->l[0] = (struct ft_prom_label){ "device", d->node };
	p->n = 1;
}

static void client_labels(struct plabels *p, const struct ft_snapshot *s, const struct ft_client *c)
{
	p->l[0] = (struct ft_prom_label){ "device", s->devs[c->dev].node };
	snprintf(p->buf[0], sizeof(p->buf[0]), "%" PRIu64, c->fi.client_id);
	snprintf(p->buf[1], sizeof(p->buf[1]), "%d", (int)c->pid);
	p->l[1] = (struct ft_prom_label){ "client", c->fi.has_client_id ? p->buf[0] : "" };
	p->l[2] = (struct ft_prom_label){ "pid", p->buf[1] };
	p->l[3] = (struct ft_prom_label){ "comm", c->comm };
	p->n = 4;
}

/*
 * Per-client families come from the snapshot, not the view: a process's or a device's sum over
 * clients drops when a client closes, which a counter must not do; one client's
 * drm-engine- time only grows (the model holds it), so it is a counter, one series per client.
 */
void ft_prom_write(FILE *f, const struct ft_view *v, const struct ft_snapshot *s,
		   const struct ft_prom_self *self)
{
	struct plabels pl;
	unsigned int i, j, k;
	bool any;

	if (v->nr_devs)
		ft_prom_family(f, "frac_device_info", "gauge",
			       "An accel device: 1, with its driver and PCI address as labels.");
	for (i = 0; i < v->nr_devs; i++) {
		const struct ft_dev *d = &v->devs[i].dev;

		dev_label(&pl, d);
		pl.l[1] = (struct ft_prom_label){ "driver", d->driver };
		pl.l[2] = (struct ft_prom_label){ "pdev", d->pdev };
		sample_u64(f, "frac_device_info", pl.l, 3, 1);
	}

	for (k = 0; k < NR_DEV_METRICS; k++) {
		/* A family's header goes before its first row, if any row of it has a sample. */
		if (!k || strcmp(dev_metrics[k - 1].name, dev_metrics[k].name)) {
			for (j = k, any = false; j < NR_DEV_METRICS &&
			     !strcmp(dev_metrics[j].name, dev_metrics[k].name); j++)
				for (i = 0; i < v->nr_devs; i++)
					any |= !!DEV_HAS(&v->devs[i].dev, dev_metrics[j].key);
			if (any)
				ft_prom_family(f, dev_metrics[k].name,
					       dev_metrics[k].counter ? "counter" : "gauge",
					       dev_metrics[k].help);
		}
		for (i = 0; i < v->nr_devs; i++) {
			const struct ft_dev *d = &v->devs[i].dev;
			int key = dev_metrics[k].key;

			if (!DEV_HAS(d, key))
				continue;
			dev_label(&pl, d);
			if (dev_metrics[k].lname)
				pl.l[pl.n++] = (struct ft_prom_label){ dev_metrics[k].lname,
								       dev_metrics[k].lvalue };
			if (dev_metrics[k].ns)
				sample_ns(f, dev_metrics[k].name, pl.l, pl.n, d->val[key]);
			else
				sample_u64(f, dev_metrics[k].name, pl.l, pl.n, d->val[key]);
		}
	}

	/* The device's engines: DMA and compute busy time, in the device's clock. */
	for (i = 0, any = false; i < v->nr_devs; i++)
		any |= DEV_HAS(&v->devs[i].dev, FT_D_BUSY_NS_DMA) ||
		       DEV_HAS(&v->devs[i].dev, FT_D_BUSY_NS_COMPUTE);
	if (any) {
		ft_prom_family(f, "frac_device_busy_seconds_total", "counter",
			       "Time the device's DMA or compute engine was busy (device telemetry).");
		for (i = 0; i < v->nr_devs; i++) {
			const struct ft_dev *d = &v->devs[i].dev;
			static const struct { const char *engine; int key; } e[] = {
				{ "dma", FT_D_BUSY_NS_DMA }, { "compute", FT_D_BUSY_NS_COMPUTE },
			};

			for (j = 0; j < 2; j++) {
				if (!DEV_HAS(d, e[j].key))
					continue;
				dev_label(&pl, d);
				pl.l[1] = (struct ft_prom_label){ "engine", e[j].engine };
				sample_ns(f, "frac_device_busy_seconds_total", pl.l, 2, d->val[e[j].key]);
			}
		}
	}

	for (i = 0, any = false; i < v->nr_devs; i++)
		any |= v->devs[i].temp_c.ok;
	if (any) {
		ft_prom_family(f, "frac_temperature_celsius", "gauge", "Device temperature (hwmon).");
		for (i = 0; i < v->nr_devs; i++) {
			if (!v->devs[i].temp_c.ok)
				continue;
			dev_label(&pl, &v->devs[i].dev);
			sample_d(f, "frac_temperature_celsius", pl.l, pl.n, v->devs[i].temp_c.v);
		}
	}
	for (i = 0, any = false; i < v->nr_devs; i++)
		any |= v->devs[i].power_w.ok;
	if (any) {
		ft_prom_family(f, "frac_power_watts", "gauge", "Device power (hwmon).");
		for (i = 0; i < v->nr_devs; i++) {
			if (!v->devs[i].power_w.ok)
				continue;
			dev_label(&pl, &v->devs[i].dev);
			sample_d(f, "frac_power_watts", pl.l, pl.n, v->devs[i].power_w.v);
		}
	}

	/* Per queue (debugfs, root only). */
	for (k = 0; k < sizeof(queue_metrics) / sizeof(queue_metrics[0]); k++) {
		const char *name = queue_metrics[k].name;

		for (i = 0, any = false; i < v->nr_devs; i++)
			any |= v->devs[i].dev.nr_queues > 0;
		if (!any)
			break;
		ft_prom_family(f, name, queue_metrics[k].counter ? "counter" : "gauge",
			       queue_metrics[k].help);
		for (i = 0; i < v->nr_devs; i++) {
			const struct ft_dev *d = &v->devs[i].dev;

			for (j = 0; j < d->nr_queues; j++) {
				snprintf(pl.buf[0], sizeof(pl.buf[0]), "%u", j);
				dev_label(&pl, d);
				pl.l[1] = (struct ft_prom_label){ "queue", pl.buf[0] };
				sample_u64(f, name, pl.l, 2, d->q[j][queue_metrics[k].key]);
			}
		}
	}

	/*
	 * Job latency (the BPF source): one histogram per device, queue and stage, cumulative
	 * since fractop attached, of the jobs that ended without an error. The log2 slots' own
	 * bounds (slot k holds [2^k, 2^(k+1)) ns, so le is (2^(k+1) - 1) ns), the same set on
	 * every scrape: 1023 ns to about 17 s, the slots below the first summed into it.
	 */
	for (i = 0, any = false; i < v->nr_devs; i++)
		any |= v->devs[i].dev.lat_ok;
	if (any) {
		enum { FIRST = 9, LAST = 33, NB = LAST - FIRST + 2 };
		double le[NB];
		uint64_t cnt[NB];

		for (k = 0; k < NB - 1; k++)
			le[k] = ft_lat_slot_le_s(FIRST + k);
		le[NB - 1] = INFINITY;
		ft_prom_family(f, "frac_job_latency_seconds", "histogram",
			       "Job latency per stage (submit to fence signalled, and its parts) of the "
			       "jobs that ended without an error, since fractop attached (BPF).");
		for (i = 0; i < v->nr_devs; i++) {
			const struct ft_dev *d = &v->devs[i].dev;

			if (!d->lat_ok)
				continue;
			for (j = 0; j < d->lat_nr_queues; j++) {
				for (int st = 0; st < NR_STAGES; st++) {
					const struct hist *h = &d->lat[j][st];

					memset(cnt, 0, sizeof(cnt));
					for (k = 0; k < MAX_SLOTS; k++)
						cnt[k <= FIRST ? 0 : k > LAST ? NB - 1 : k - FIRST] +=
							h->slots[k];
					snprintf(pl.buf[0], sizeof(pl.buf[0]), "%u", j);
					dev_label(&pl, d);
					pl.l[1] = (struct ft_prom_label){ "queue", pl.buf[0] };
					pl.l[2] = (struct ft_prom_label){ "stage", stage_keys[st] };
					ft_prom_histogram(f, "frac_job_latency_seconds", pl.l, 3, le, cnt,
							  NB, h->sum / 1e9, h->count);
				}
			}
		}
	}

	/* Per interrupt vector (msi_irqs + /proc/interrupts). */
	for (i = 0, any = false; i < v->nr_devs; i++)
		any |= v->devs[i].dev.vectors_ok;
	if (any) {
		ft_prom_family(f, "frac_interrupts_total", "counter",
			       "Interrupts of one of the device's MSI/MSI-X vectors, over all CPUs.");
		for (i = 0; i < v->nr_devs; i++) {
			const struct ft_dev *d = &v->devs[i].dev;

			if (!d->vectors_ok)
				continue;
			for (j = 0; j < d->nr_vec; j++) {
				snprintf(pl.buf[0], sizeof(pl.buf[0]), "%u", d->vec[j].irq);
				dev_label(&pl, d);
				pl.l[1] = (struct ft_prom_label){ "vector", d->vec[j].name };
				pl.l[2] = (struct ft_prom_label){ "irq", pl.buf[0] };
				sample_u64(f, "frac_interrupts_total", pl.l, 3, d->vec[j].count);
			}
		}
	}

	if (v->nr_devs)
		ft_prom_family(f, "frac_clients", "gauge", "DRM clients (open files) of the device.");
	for (i = 0; i < v->nr_devs; i++) {
		dev_label(&pl, &v->devs[i].dev);
		sample_u64(f, "frac_clients", pl.l, pl.n, v->devs[i].nr_clients);
	}

	/* Per client, from fdinfo. */
	for (i = 0, any = false; i < s->nr_clients; i++)
		any |= s->clients[i].dev >= 0 && s->clients[i].fi.nr_engines;
	if (any) {
		ft_prom_family(f, "frac_client_engine_busy_seconds_total", "counter",
			       "Time the client's work kept an engine busy, drm-engine- of fdinfo.");
		for (i = 0; i < s->nr_clients; i++) {
			const struct ft_client *c = &s->clients[i];

			if (c->dev < 0)
				continue;
			for (j = 0; j < c->fi.nr_engines; j++) {
				const struct ft_engine *e = &c->fi.engines[j];

				if (!(e->has & (1u << FT_ENG_NS)))
					continue;
				client_labels(&pl, s, c);
				pl.l[4] = (struct ft_prom_label){ "engine", e->name };
				sample_ns(f, "frac_client_engine_busy_seconds_total", pl.l, 5,
					  e->val[FT_ENG_NS]);
			}
		}
	}
	for (i = 0, any = false; i < s->nr_clients; i++)
		any |= s->clients[i].dev >= 0 &&
		       (s->clients[i].fi.drv_has & (1u << FT_DRV_FRAC_JOBS_COMPLETED));
	if (any) {
		ft_prom_family(f, "frac_client_jobs_completed_total", "counter",
			       "Jobs of the client that completed, drm-frac-jobs-completed of fdinfo.");
		for (i = 0; i < s->nr_clients; i++) {
			const struct ft_client *c = &s->clients[i];

			if (c->dev < 0 || !(c->fi.drv_has & (1u << FT_DRV_FRAC_JOBS_COMPLETED)))
				continue;
			client_labels(&pl, s, c);
			sample_u64(f, "frac_client_jobs_completed_total", pl.l, pl.n,
				   c->fi.drv[FT_DRV_FRAC_JOBS_COMPLETED]);
		}
	}
	for (i = 0, any = false; i < s->nr_clients; i++)
		any |= s->clients[i].dev >= 0 &&
		       (s->clients[i].fi.drv_has & (1u << FT_DRV_FRAC_JOBS_FAILED));
	if (any) {
		ft_prom_family(f, "frac_client_jobs_failed_total", "counter",
			       "Jobs of the client that ended with an error, drm-frac-jobs-failed of fdinfo.");
		for (i = 0; i < s->nr_clients; i++) {
			const struct ft_client *c = &s->clients[i];

			if (c->dev < 0 || !(c->fi.drv_has & (1u << FT_DRV_FRAC_JOBS_FAILED)))
				continue;
			client_labels(&pl, s, c);
			sample_u64(f, "frac_client_jobs_failed_total", pl.l, pl.n,
				   c->fi.drv[FT_DRV_FRAC_JOBS_FAILED]);
		}
	}
	for (k = 0; k < sizeof(mem_metrics) / sizeof(mem_metrics[0]); k++) {
		int key = mem_metrics[k].key;

		for (i = 0, any = false; i < s->nr_clients; i++)
			for (j = 0; s->clients[i].dev >= 0 && j < s->clients[i].fi.nr_regions; j++)
				any |= !!(s->clients[i].fi.regions[j].has & (1u << key));
		if (!any)
			continue;
		ft_prom_family(f, mem_metrics[k].name, "gauge", mem_metrics[k].help);
		for (i = 0; i < s->nr_clients; i++) {
			const struct ft_client *c = &s->clients[i];

			for (j = 0; c->dev >= 0 && j < c->fi.nr_regions; j++) {
				const struct ft_region *r = &c->fi.regions[j];

				if (!(r->has & (1u << key)))
					continue;
				client_labels(&pl, s, c);
				pl.l[4] = (struct ft_prom_label){ "region", r->name };
				sample_u64(f, mem_metrics[k].name, pl.l, 5, r->val[key]);
			}
		}
	}

	/* The exporter itself. */
	/*
	 * When each source read each device, and each client's fdinfo: the instant its figures
	 * are for (the sources read one after another, the walk over /proc takes a while), as
	 * Unix time: CLOCK_MONOTONIC moved onto the sample's CLOCK_REALTIME, read just after it.
	 */
	for (i = 0, any = false; i < s->nr_devs; i++)
		for (k = 0; k < FT_TS_NR; k++)
			any |= s->devs[i].t_src[k] > 0;
	if (any) {
		ft_prom_family(f, "frac_source_read_timestamp_seconds", "gauge",
			       "When the source read the device, Unix time.");
		for (i = 0; i < s->nr_devs; i++) {
			for (k = 0; k < FT_TS_NR; k++) {
				if (!(s->devs[i].t_src[k] > 0))
					continue;
				dev_label(&pl, &s->devs[i]);
				pl.l[1] = (struct ft_prom_label){ "source", ft_src_ts_names[k] };
				sample_d(f, "frac_source_read_timestamp_seconds", pl.l, 2,
					 s->t_wall + (s->devs[i].t_src[k] - s->t_mono));
			}
		}
	}
	for (i = 0, any = false; i < s->nr_clients; i++)
		any |= s->clients[i].dev >= 0 && s->clients[i].t_mono > 0;
	if (any) {
		ft_prom_family(f, "frac_client_read_timestamp_seconds", "gauge",
			       "When the client's fdinfo was read, Unix time.");
		for (i = 0; i < s->nr_clients; i++) {
			const struct ft_client *c = &s->clients[i];

			if (c->dev < 0 || !(c->t_mono > 0))
				continue;
			client_labels(&pl, s, c);
			sample_d(f, "frac_client_read_timestamp_seconds", pl.l, pl.n,
				 s->t_wall + (c->t_mono - s->t_mono));
		}
	}

	ft_prom_family(f, "frac_exporter_samples_total", "counter",
		       "Samples fractop has taken since it started.");
	sample_u64(f, "frac_exporter_samples_total", NULL, 0, self->samples);
	ft_prom_family(f, "frac_exporter_last_sample_timestamp_seconds", "gauge",
		       "When the sample served was taken (Unix time).");
	sample_d(f, "frac_exporter_last_sample_timestamp_seconds", NULL, 0, v->t_wall);
	ft_prom_family(f, "frac_exporter_processes", "gauge",
		       "Processes the fdinfo walk listed in the sample served.");
	sample_u64(f, "frac_exporter_processes", NULL, 0, v->procs_seen);
	ft_prom_family(f, "frac_exporter_processes_denied", "gauge",
		       "Of those, processes whose fds could not be read (need root or CAP_SYS_PTRACE).");
	sample_u64(f, "frac_exporter_processes_denied", NULL, 0, v->procs_denied);
}

/* --listen's argument (exporter.c serves it): */
/* "ADDR:PORT", "[V6ADDR]:PORT" or ":PORT" (every address); 0 or -EINVAL. */
int ft_parse_listen(const char *s, char *host, size_t hostlen, char *port, size_t portlen)
{
	const char *colon, *h = s;
	size_t hl;
	char *end;
	long p;

	if (*s == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':')
			return -EINVAL;
		h = s + 1;
		hl = rb - h;
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hl = colon - s;
		if (memchr(s, ':', hl))	/* a bare IPv6 address needs brackets */
			return -EINVAL;
	}
	if (hl >= hostlen || !colon[1] || strlen(colon + 1) >= portlen)
		return -EINVAL;
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno || *end || p < 0 || p > 65535 || !isdigit((unsigned char)colon[1]))
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	snprintf(port, portlen, "%ld", p);
	return 0;
}
