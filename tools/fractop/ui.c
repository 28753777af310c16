// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * The ncurses screen. It only draws a struct ft_view: every number goes through format.c,
 * every column width through ft_layout_columns(), every history through ft_sparkline(); what
 * is not known prints "n/a". The screen is redrawn from scratch on each sample, key and
 * KEY_RESIZE (ncurses turns SIGWINCH into KEY_RESIZE and updates LINES/COLS), and drawing
 * never writes past the last column or line, so any terminal size is safe.
 *
 * Keys: q quit, h or ? help, space pause, s/S next/previous sort column, r reverse, Tab or
 * d/D next/previous device, Left/Right (or [ ]) select a queue (engine), 1/2/3 the device,
 * history and process panes, l (or 4) the latency pane.
 */

#include <errno.h>
#include <langinfo.h>
#include <math.h>
#include <ncurses.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fractop.h"

enum sort_key { SORT_BUSY, SORT_QUEUE, SORT_MEM, SORT_JOBS_S, SORT_JOBS, SORT_PID, SORT_COMM,
		SORT_NR };

static const char *const sort_names[SORT_NR] = {
	"busy", "selected engine", "memory", "jobs/s", "jobs", "pid", "command",
};

struct ui {
	const struct ft_view *v;
	struct ft_source *srcs;
	unsigned int nr_srcs;
	int dev;		/* selected device */
	int queue;		/* selected engine index of the device */
	enum sort_key sort;
	bool reverse;
	bool paused, help;
	bool pane_dev, pane_hist, pane_procs, pane_lat;
	enum ft_glyphs glyphs;
	bool color;
	/* Replay (-r): the sample shown, of how many; a seek asked by a key (-1: none). */
	const struct ft_ui_opts *o;
	unsigned int cur;
	long seek;
	struct ft_model *ckpt;	/* the model after sample i * CKPT_EVERY, when ckpt_ok[i] */
	bool *ckpt_ok;
	unsigned int nr_ckpt;
};

/*
 * A replay keeps a copy of the model every CKPT_EVERY samples, so that a seek runs the model
 * over at most that many samples instead of from the first one. Measured: a pass over 10000
 * samples of the fixture tree (2 devices, 3 clients, 2.4 KB a line) took 1.4 s to parse alone
 * on the 2-core host under load.
 */
#define CKPT_EVERY	128

/* enum frac_stage, as short as a column allows */
static const char *const stage_names_short[NR_STAGES] = {
	[STAGE_SUBMIT_RUN] = "submit -> run",
	[STAGE_RUN_START] = "run -> device start",
	[STAGE_EXEC] = "device execution",
	[STAGE_END_IRQ] = "device end -> irq",
	[STAGE_IRQ_SIGNAL] = "irq -> fence signal",
	[STAGE_TOTAL] = "total",
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Print at (y, x), clipped to the screen width; returns the column after the text. */
static int put(int y, int x, const char *s)
{
	int w = COLS - x;

	if (y < 0 || y >= LINES || w <= 0)
		return x;
	mvaddnstr(y, x, s, w);
	return x + (int)strlen(s);
}

static int putf(int y, int x, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int putf(int y, int x, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return put(y, x, buf);
}

/* A text right-aligned or left-aligned in a cell of @w columns. */
static void cell(int y, int x, int w, const char *s, bool right)
{
	char buf[256];

	if (w <= 0)
		return;
	if (w > (int)sizeof(buf) - 1)
		w = sizeof(buf) - 1;
	snprintf(buf, sizeof(buf), right ? "%*.*s" : "%-*.*s", w, w, s);
	put(y, x, buf);
}

static void rule(int y, const char *title)
{
	if (y >= LINES)
		return;
	attron(A_BOLD);
	mvhline(y, 0, ACS_HLINE, COLS);
	putf(y, 1, " %s ", title);
	attroff(A_BOLD);
}

static const char *short_engine(const char *name, char *buf, size_t len)
{
	if (!strncmp(name, "queue", 5) && name[5])
		snprintf(buf, len, "Q%s", name + 5);
	else
		snprintf(buf, len, "%s", name);
	return buf;
}

/* "[||||||    ] 45.2%" in @w columns, the bar in colour by load. */
static void meter(int y, int x, int w, const char *label, struct ft_num pct, bool color)
{
	char txt[16], bar[128];
	int bw = w - (int)strlen(label) - 9, fill, pair;

	ft_fmt_pct(txt, sizeof(txt), pct);
	x = put(y, x, label);
	if (bw < 4) {
		putf(y, x, " %s", txt);
		return;
	}
	if (bw > (int)sizeof(bar) - 1)
		bw = sizeof(bar) - 1;
	fill = pct.ok ? (int)lround(fmin(fmax(pct.v, 0), 100) / 100 * bw) : 0;
	memset(bar, ' ', bw);
	memset(bar, '|', fill);
	bar[bw] = '\0';
	x = put(y, x, "[");
	pair = !pct.ok ? 0 : pct.v < 50 ? 1 : pct.v < 85 ? 2 : 3;
	if (color && pair)
		attron(COLOR_PAIR(pair));
	x = put(y, x, bar);
	if (color && pair)
		attroff(COLOR_PAIR(pair));
	x = put(y, x, "]");
	putf(y, x, " %6s", txt);
}

static struct ft_num dev_num(const struct ft_dev *d, int k)
{
	return d->has & (1ull << k) ? ft_num_of((double)d->val[k]) : FT_NUM_NA;
}

/* The selected queue's counters (debugfs), or why they are not there. */
static int draw_queue(const struct ui *u, const struct ft_view_dev *vd, int y)
{
	const struct ft_dev *d = &vd->dev;
	char a[32], b[32];
	int x, q = u->queue;

	if (!d->nr_queues) {
		put(y, 1, "per-queue counters: n/a (frac debugfs 'queues' not readable: needs root)");
		return y + 1;
	}
	if (q >= (int)d->nr_queues)
		q = d->nr_queues - 1;
	x = putf(y, 1, "queue %d: jobs %s  failed %s", q,
		 ft_fmt_si(a, sizeof(a), vd->queues[q].jobs_per_s, "/s"),
		 ft_fmt_si(b, sizeof(b), vd->queues[q].failed_per_s, "/s"));
	putf(y, x, "  submitted %llu completed %llu failed %llu timeouts %llu resets %llu "
	     "lost-irq %llu in ring %llu",
	     (unsigned long long)d->q[q][FT_Q_SUBMITTED], (unsigned long long)d->q[q][FT_Q_COMPLETED],
	     (unsigned long long)d->q[q][FT_Q_FAILED], (unsigned long long)d->q[q][FT_Q_TIMEOUTS],
	     (unsigned long long)d->q[q][FT_Q_RESETS], (unsigned long long)d->q[q][FT_Q_LOST_IRQS],
	     (unsigned long long)d->q[q][FT_Q_IN_RING]);
	return y + 1;
}

static int draw_dev(const struct ui *u, const struct ft_view_dev *vd, bool selected, int y)
{
	const struct ft_dev *d = &vd->dev;
	char a[32], b[32], c[32], t[128];
	int half = COLS / 2, x;

	snprintf(t, sizeof(t), "%s %s %s", d->node,
		 d->driver[0] ? d->driver : "(no driver)", d->pdev);
	rule(y++, t);
	if (!d->is_frac) {
		/* The frac counters do not exist here: say so once rather than a screen of n/a. */
		putf(y++, 1, "driver %s: no frac counters (jobs, failures, resets, DMA, busy: n/a); "
		     "engines and memory from fdinfo", d->driver[0] ? d->driver : "n/a");
		goto common;
	}
	meter(y, 1, half - 2, "DMA     ", vd->rate[FT_R_BUSY_DMA_PCT], u->color);
	meter(y++, half, COLS - half - 1, "COMPUTE ", vd->rate[FT_R_BUSY_COMPUTE_PCT], u->color);
	x = putf(y, 1, "jobs %s  failed %s", ft_fmt_si(a, sizeof(a), vd->rate[FT_R_JOBS_PER_S], "/s"),
		 ft_fmt_si(b, sizeof(b), vd->rate[FT_R_FAILED_PER_S], "/s"));
	x = putf(y, x, "  done %s failed %s", ft_fmt_count(c, sizeof(c),
		 dev_num(d, FT_D_JOBS_COMPLETED)), ft_fmt_count(t, sizeof(t),
		 dev_num(d, FT_D_JOBS_FAILED)));
	x = putf(y, x, "  timeouts %s", ft_fmt_count(a, sizeof(a), dev_num(d, FT_D_JOB_TIMEOUTS)));
	putf(y++, x, "  resets %s queue / %s device", ft_fmt_count(b, sizeof(b),
	     dev_num(d, FT_D_QUEUE_RESETS)), ft_fmt_count(c, sizeof(c),
	     dev_num(d, FT_D_DEVICE_RESETS)));
	x = putf(y, 1, "DMA read %s", ft_fmt_iec(a, sizeof(a), vd->rate[FT_R_READ_BPS]));
	x = put(y, x, vd->rate[FT_R_READ_BPS].ok ? "/s" : "");
	x = putf(y, x, "  written %s", ft_fmt_iec(b, sizeof(b), vd->rate[FT_R_WRITE_BPS]));
	x = put(y, x, vd->rate[FT_R_WRITE_BPS].ok ? "/s" : "");
	x = putf(y, x, "  irq %s", ft_fmt_si(c, sizeof(c), vd->rate[FT_R_IRQ_PER_S], "/s"));
	x = putf(y, x, "  errors %s lost-irq %s dumps %s", ft_fmt_count(a, sizeof(a),
		 dev_num(d, FT_D_ERRORS)), ft_fmt_count(b, sizeof(b),
		 dev_num(d, FT_D_LOST_INTERRUPTS)), ft_fmt_count(c, sizeof(c),
		 dev_num(d, FT_D_COREDUMPS)));
	if (d->has & (1ull << FT_D_WEDGED) && d->val[FT_D_WEDGED]) {
		attron(A_BOLD | A_REVERSE);
		put(y, x + 2, "WEDGED");
		attroff(A_BOLD | A_REVERSE);
	}
	y++;
common:
	x = putf(y, 1, "temp %s", vd->temp_c.ok ? (snprintf(a, sizeof(a), "%.1f C", vd->temp_c.v), a)
						  : "n/a");
	x = putf(y, x, "  power %s", ft_fmt_si(b, sizeof(b), vd->power_w, "W"));
	x = putf(y, x, "  clients %u  memory:", vd->nr_clients);
	if (!vd->nr_regions)
		x = put(y, x, " n/a");
	for (unsigned int r = 0; r < vd->nr_regions; r++) {
		const struct ft_view_region *vr = &vd->regions[r];

		x = putf(y, x, " %s %s", vr->name, ft_fmt_iec(a, sizeof(a),
			 vr->bytes[FT_MEM_TOTAL].ok ? vr->bytes[FT_MEM_TOTAL]
						    : vr->bytes[FT_MEM_MEMORY]));
	}
	y++;
	/* Engine (for frac: queue) use by the open clients, from fdinfo. */
	x = put(y, 1, "engines (fdinfo):");
	if (!vd->nr_engines)
		x = put(y, x, " no client");
	for (unsigned int e = 0; e < vd->nr_engines; e++) {
		char nm[FT_NAME_LEN];

		if (selected && (int)e == u->queue)
			attron(A_REVERSE);
		x = putf(y, x + 1, "%s %s", short_engine(vd->engines[e].name, nm, sizeof(nm)),
			 ft_fmt_pct(a, sizeof(a), vd->engines[e].busy_pct));
		if (selected && (int)e == u->queue)
			attroff(A_REVERSE);
	}
	y++;
	if (d->is_frac)
		y = draw_queue(u, vd, y);
	if (d->nr_vec) {
		x = put(y, 1, "irq/s:");
		for (unsigned int i = 0; i < d->nr_vec; i++)
			x = putf(y, x + 1, "%s %s", d->vec[i].name[0] ? d->vec[i].name : "?",
				 ft_fmt_si(a, sizeof(a), vd->vec_per_s[i], ""));
		y++;
	}
	return y;
}

/* One line per device in the device list. */
static int draw_dev_line(const struct ft_view_dev *vd, int y)
{
	const struct ft_dev *d = &vd->dev;
	char a[16], b[16], c[32], e[32];

	putf(y, 1, "  %-8s %-10.10s DMA %6s  compute %6s  jobs %-10s  clients %u  temp %s",
	     d->node, d->driver[0] ? d->driver : "n/a",
	     ft_fmt_pct(a, sizeof(a), vd->rate[FT_R_BUSY_DMA_PCT]),
	     ft_fmt_pct(b, sizeof(b), vd->rate[FT_R_BUSY_COMPUTE_PCT]),
	     ft_fmt_si(c, sizeof(c), vd->rate[FT_R_JOBS_PER_S], "/s"), vd->nr_clients,
	     vd->temp_c.ok ? (snprintf(e, sizeof(e), "%.1f C", vd->temp_c.v), e) : "n/a");
	return y + 1;
}

static int draw_hist(const struct ui *u, const struct ft_view_dev *vd, int y)
{
	static const struct { int rate; const char *label; } rows[] = {
		{ FT_R_JOBS_PER_S, "jobs/s" },
		{ FT_R_BUSY_DMA_PCT, "DMA %" },
		{ FT_R_BUSY_COMPUTE_PCT, "compute %" },
		{ FT_R_READ_BPS, "read B/s" },
		{ FT_R_WRITE_BPS, "write B/s" },
	};
	int lw = 11, vw = 11, w = COLS - lw - vw - 3;
	char spark[FT_HIST_LEN * 3 + 1], val[32];

	rule(y++, "history");
	for (unsigned int i = 0; i < sizeof(rows) / sizeof(rows[0]) && y < LINES; i++, y++) {
		int r = rows[i].rate;
		bool pct = r == FT_R_BUSY_DMA_PCT || r == FT_R_BUSY_COMPUTE_PCT;

		cell(y, 1, lw, rows[i].label, false);
		if (w > 0) {
			ft_sparkline(spark, sizeof(spark), vd->hist[r], vd->hist_len,
				     w > FT_HIST_LEN ? FT_HIST_LEN : w, pct ? 100 : 0, u->glyphs);
			put(y, 1 + lw + 1, spark);
		}
		if (pct)
			ft_fmt_pct(val, sizeof(val), vd->rate[r]);
		else if (r == FT_R_READ_BPS || r == FT_R_WRITE_BPS)
			ft_fmt_iec(val, sizeof(val), vd->rate[r]);
		else
			ft_fmt_si(val, sizeof(val), vd->rate[r], "");
		cell(y, COLS - vw - 1, vw, val, true);
	}
	return y;
}

/* The latency source's state: the screen's source (live) or the record's header (replay). */
static const struct ft_source *lat_source(const struct ui *u)
{
	for (unsigned int i = 0; i < u->nr_srcs; i++)
		if (!strcmp(u->srcs[i].ops->name, "latency"))
			return &u->srcs[i];
	return NULL;
}

/*
 * The latency pane: per queue the jobs that ended without an error since the BPF source
 * attached, p50 and p99 with the bounds the sample lies in; for the selected queue, each
 * stage's log2 histogram from 1 us (slot 10) up, one glyph per power of 2.
 */
#define LAT_FIRST_SLOT	10
static int draw_lat(const struct ui *u, const struct ft_view_dev *vd, int y)
{
	const struct ft_source *src = lat_source(u);
	const struct ft_dev *d = &vd->dev;
	const struct ft_view *v = u->v;
	char a[80], b[80], t[320], spark[MAX_SLOTS * 3 + 1];
	int q = u->queue, nsl;

	if (!d->lat_ok) {
		rule(y++, "latency");
		if (y < LINES)
			putf(y++, 1, "%s", !src ? "latency: n/a (no latency source in this record)" :
			     !src->active ? src->why : !d->is_frac ? "latency: n/a (not a frac device)" :
			     "latency: n/a");
		return y;
	}
	snprintf(t, sizeof(t), "latency (BPF, %s; jobs ended ok since attach)",
		 src && src->active ? src->why : "recorded");
	rule(y++, t);
	if (v->lat_ok && y < LINES) {
		uint64_t lost = 0, failed = 0;

		for (int k = 0; k < FT_LS_NR_LOST; k++)
			if (k != FT_LS_TABLE_FULL)
				lost += v->lat_stats[k];
		for (int k = FT_LS_FIRST_STATUS + 1; k < FT_LS_NR; k++)
			failed += v->lat_stats[k];
		putf(y++, 1, "ended ok %llu  failed %llu (not in the histograms)  unmeasured %llu "
		     "(unmatched %llu noid %llu table-full %llu)",
		     (unsigned long long)v->lat_stats[FT_LS_OK], (unsigned long long)failed,
		     (unsigned long long)lost, (unsigned long long)v->lat_stats[FT_LS_UNMATCHED],
		     (unsigned long long)v->lat_stats[FT_LS_NOID],
		     (unsigned long long)v->lat_stats[FT_LS_TABLE_FULL]);
	}
	if (y < LINES)
		putf(y++, 1, "%-6s %10s  %-28s %-28s", "queue", "jobs", "p50 total", "p99 total");
	for (unsigned int i = 0; i < d->lat_nr_queues && y < LINES; i++, y++) {
		const struct hist *h = &d->lat[i][STAGE_TOTAL];

		if ((int)i == q)
			attron(A_REVERSE);
		putf(y, 1, "Q%-5u %10llu  %-28s %-28s", i, (unsigned long long)h->count,
		     ft_fmt_lat_pct(a, sizeof(a), ft_lat_percentile(h, 0.5)),
		     ft_fmt_lat_pct(b, sizeof(b), ft_lat_percentile(h, 0.99)));
		if ((int)i == q)
			attroff(A_REVERSE);
	}
	if (q >= (int)d->lat_nr_queues || y >= LINES)
		return y;
	/* The histogram's columns: 1us up to what the line has room for, at most ~1100 s. */
	nsl = COLS - 1 - 22 - 2 - 28 - 1;
	if (nsl > MAX_SLOTS - LAT_FIRST_SLOT)
		nsl = MAX_SLOTS - LAT_FIRST_SLOT;
	if (nsl > 31)
		nsl = 31;
	putf(y, 1, "queue %d by stage, log2:", q);
	if (nsl > 0)
		putf(y, 1 + 22 + 2 + 28, "|1us      |1ms      |1s");
	y++;
	for (int k = 0; k < NR_STAGES && y < LINES; k++, y++) {
		int s = k == 0 ? STAGE_TOTAL : k - 1;
		const struct hist *h = &d->lat[q][s];
		struct ft_num p50 = ft_lat_percentile(h, 0.5).est, p99 = ft_lat_percentile(h, 0.99).est;

		cell(y, 1, 22, stage_names_short[s], false);
		putf(y, 1 + 22, "  p50 %-8s p99 %-8s",
		     ft_fmt_duration(a, sizeof(a), p50.ok ? ft_num_of(p50.v / 1e9) : FT_NUM_NA),
		     ft_fmt_duration(b, sizeof(b), p99.ok ? ft_num_of(p99.v / 1e9) : FT_NUM_NA));
		if (nsl > 0) {
			ft_lat_hist_line(spark, sizeof(spark), h, LAT_FIRST_SLOT, nsl, u->glyphs);
			put(y, 1 + 22 + 2 + 28, spark);
		}
	}
	return y;
}

/* Sorting of the process rows; qsort has no context argument. */
static enum sort_key g_sort;
static bool g_reverse;
static int g_queue;

static int num_cmp(struct ft_num a, struct ft_num b)
{
	if (a.ok != b.ok)
		return a.ok ? 1 : -1;	/* n/a sorts below any value */
	return a.ok ? (a.v > b.v) - (a.v < b.v) : 0;
}

static struct ft_num proc_queue(const struct ft_view_proc *p, const struct ft_view_dev *vd,
				int q)
{
	if (q < 0 || q >= (int)vd->nr_engines)
		return FT_NUM_NA;
	for (unsigned int e = 0; e < p->nr_engines; e++)
		if (!strcmp(p->engines[e].name, vd->engines[q].name))
			return p->engines[e].busy_pct;
	return FT_NUM_NA;
}

static const struct ft_view_dev *g_dev;

static int cmp_proc(const void *pa, const void *pb)
{
	const struct ft_view_proc *a = pa, *b = pb;
	int r;

	switch (g_sort) {
	case SORT_BUSY:
		r = -num_cmp(a->busy_pct, b->busy_pct);
		break;
	case SORT_QUEUE:
		r = -num_cmp(proc_queue(a, g_dev, g_queue), proc_queue(b, g_dev, g_queue));
		break;
	case SORT_MEM:
		r = -num_cmp(a->mem_bytes, b->mem_bytes);
		break;
	case SORT_JOBS_S:
		r = -num_cmp(a->jobs_per_s, b->jobs_per_s);
		break;
	case SORT_JOBS:
		r = -num_cmp(a->jobs, b->jobs);
		break;
	case SORT_COMM:
		r = strcmp(a->comm, b->comm);
		break;
	default:
		r = 0;
	}
	if (!r)
		r = (a->pid > b->pid) - (a->pid < b->pid);
	return g_reverse ? -r : r;
}

enum { C_PID, C_COMM, C_BUSY, C_MEM, C_JOBS, C_FAILED, C_JOBS_S, C_CLIENTS, C_FIXED };

static int draw_procs(const struct ui *u, struct ft_view_dev *vd, int y)
{
	struct ft_col cols[C_FIXED + FT_MAX_ENGINES] = {
		[C_PID] = { "PID", 7, 7, 0 },
		[C_COMM] = { "COMMAND", 8, 16, 0 },
		[C_BUSY] = { "BUSY", 6, 6, 9 },
		[C_MEM] = { "MEMORY", 9, 9, 8 },
		[C_JOBS] = { "JOBS", 8, 10, 5 },
		[C_FAILED] = { "FAILED", 6, 8, 4 },
		[C_JOBS_S] = { "JOBS/S", 8, 8, 7 },
		[C_CLIENTS] = { "CL", 3, 3, 2 },
	};
	char names[FT_MAX_ENGINES][FT_NAME_LEN], buf[48];
	int w[C_FIXED + FT_MAX_ENGINES], n = C_FIXED + vd->nr_engines, i, x;
	char title[96];

	for (i = 0; i < (int)vd->nr_engines; i++) {
		short_engine(vd->engines[i].name, names[i], sizeof(names[i]));
		/* The selected engine stays longest; the others drop right to left. */
		cols[C_FIXED + i] = (struct ft_col){ names[i], 6, 7,
						     i == u->queue ? 6 : 3 + (i < 4) };
	}
	ft_layout_columns(cols, n, COLS - 1, 1, w);

	snprintf(title, sizeof(title), "processes on %s (%u), sort: %s%s", vd->dev.node,
		 vd->nr_procs, sort_names[u->sort], u->reverse ? " (reversed)" : "");
	rule(y++, title);
	if (y >= LINES)
		return y;
	attron(A_REVERSE);
	mvhline(y, 0, ' ', COLS);
	for (i = 0, x = 1; i < n; i++) {
		if (!w[i])
			continue;
		if (i - C_FIXED == u->queue)
			attron(A_BOLD);
		cell(y, x, w[i], cols[i].name, i != C_COMM);
		if (i - C_FIXED == u->queue)
			attroff(A_BOLD);
		x += w[i] + 1;
	}
	attroff(A_REVERSE);
	y++;

	g_sort = u->sort;
	g_reverse = u->reverse;
	g_queue = u->queue;
	g_dev = vd;
	qsort(vd->procs, vd->nr_procs, sizeof(*vd->procs), cmp_proc);
	for (unsigned int p = 0; p < vd->nr_procs && y < LINES - 1; p++, y++) {
		const struct ft_view_proc *pr = &vd->procs[p];

		for (i = 0, x = 1; i < n; i++) {
			if (!w[i])
				continue;
			switch (i) {
			case C_PID:
				snprintf(buf, sizeof(buf), "%d", (int)pr->pid);
				break;
			case C_COMM:
				snprintf(buf, sizeof(buf), "%s", pr->comm);
				break;
			case C_BUSY:
				ft_fmt_pct(buf, sizeof(buf), pr->busy_pct);
				break;
			case C_MEM:
				ft_fmt_iec(buf, sizeof(buf), pr->mem_bytes);
				break;
			case C_JOBS:
				ft_fmt_count(buf, sizeof(buf), pr->jobs);
				break;
			case C_FAILED:
				ft_fmt_count(buf, sizeof(buf), pr->jobs_failed);
				break;
			case C_JOBS_S:
				ft_fmt_si(buf, sizeof(buf), pr->jobs_per_s, "");
				break;
			case C_CLIENTS:
				snprintf(buf, sizeof(buf), "%u", pr->nr_clients);
				break;
			default:
				ft_fmt_pct(buf, sizeof(buf), proc_queue(pr, vd, i - C_FIXED));
			}
			cell(y, x, w[i], buf, i != C_COMM);
			x += w[i] + 1;
		}
	}
	if (!vd->nr_procs)
		put(y++, 2, "no process has this device open (or none that can be inspected)");
	return y;
}

static void draw_help(void)
{
	static const char *const lines[] = {
		"fractop keys",
		"",
		"  q          quit",
		"  h ?        this help (any key closes it)",
		"  space      pause / resume sampling",
		"  s S        next / previous sort column",
		"  r          reverse the sort",
		"  Tab d D    next / previous device",
		"  Left Right select an engine (queue): highlighted, and the 'selected engine' sort",
		"  1 2 3      show / hide the device, history and process panes",
		"  l 4        show / hide the latency pane (BPF: per-queue p50/p99, histograms)",
		"replay (-r):",
		"  n .        step one sample forward (pauses)   , back one",
		"  Left Right 10 samples back / forward    Home End  first / last",
		"  [ ]        select an engine (Left/Right seek in a replay)",
		"",
		"n/a: not known (first sample, a counter reset, or the source cannot read it)",
	};
	int n = sizeof(lines) / sizeof(lines[0]), w = 0, y0, x0;

	for (int i = 0; i < n; i++)
		if ((int)strlen(lines[i]) > w)
			w = strlen(lines[i]);
	y0 = (LINES - n - 2) / 2;
	x0 = (COLS - w - 4) / 2;
	if (y0 < 0)
		y0 = 0;
	if (x0 < 0)
		x0 = 0;
	for (int i = -1; i <= n; i++) {
		char buf[128];

		snprintf(buf, sizeof(buf), "  %-*s  ", w, i >= 0 && i < n ? lines[i] : "");
		attron(A_REVERSE);
		put(y0 + 1 + i, x0, buf);
		attroff(A_REVERSE);
	}
}

static void draw(struct ui *u, struct ft_view *v)
{
	char ts[32], iv[32];
	time_t t = (time_t)v->t_wall;
	struct tm tm;
	int y = 0;

	erase();
	localtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
	attron(A_BOLD);
	if (u->o->replay)
		putf(y, 0, "fractop  replay %s  sample %u/%u  %u device%s  interval %s%s%s",
		     u->o->replay_name, u->cur + 1, u->o->replay->nr, v->nr_devs,
		     v->nr_devs == 1 ? "" : "s", ft_fmt_duration(iv, sizeof(iv), v->interval_s),
		     u->paused ? "  [paused]" : "", u->cur + 1 == u->o->replay->nr ? "  [end]" : "");
	else
		putf(y, 0, "fractop  %u device%s  every %s%s", v->nr_devs, v->nr_devs == 1 ? "" : "s",
		     ft_fmt_duration(iv, sizeof(iv), v->interval_s), u->paused ? "  [paused]" : "");
	attroff(A_BOLD);
	cell(y++, COLS - 9, 8, ts, true);
	if (v->procs_denied)
		putf(y++, 0, "fdinfo: %u of %u processes not readable (their fds need root or "
		     "CAP_SYS_PTRACE)", v->procs_denied, v->procs_seen);
	for (unsigned int i = 0; i < u->nr_srcs; i++)
		if (!u->srcs[i].active && strcmp(u->srcs[i].ops->name, "latency"))
			putf(y++, 0, "%s: not available: %s", u->srcs[i].ops->name, u->srcs[i].why);
	if (!v->nr_devs) {
		put(y + 1, 1, "no accel device (it went away?)");
	} else {
		if (u->dev >= (int)v->nr_devs)
			u->dev = v->nr_devs - 1;
		/* The selected device in full, the others a line each (Tab selects). */
		if (u->pane_dev && v->nr_devs > 1) {
			rule(y++, "devices (Tab: select)");
			for (unsigned int i = 0; i < v->nr_devs && y < LINES; i++) {
				if ((int)i == u->dev)
					attron(A_REVERSE);
				y = draw_dev_line(&v->devs[i], y);
				if ((int)i == u->dev)
					attroff(A_REVERSE);
			}
		}
		if (u->pane_dev && y < LINES)
			y = draw_dev(u, &v->devs[u->dev], true, y);
		if (u->pane_lat && y < LINES)
			y = draw_lat(u, &v->devs[u->dev], y);
		if (u->pane_hist && y < LINES)
			y = draw_hist(u, &v->devs[u->dev], y);
		if (u->pane_procs && y < LINES)
			draw_procs(u, &v->devs[u->dev], y);
	}
	if (u->help)
		draw_help();
	else if (u->o->replay)
		put(LINES - 1, 0, "h help  q quit  space pause  n step  , back  <- -> 10  Home End  "
		    "[ ] engine  s sort  1/2/3 l panes");
	else
		put(LINES - 1, 0, "h help  q quit  space pause  s sort  Tab device  <> engine  "
		    "1/2/3 l panes");
	refresh();
}

/* One key; false to quit. */
static bool handle_key(struct ui *u, int ch)
{
	const struct ft_view_dev *vd = u->v->nr_devs ? &u->v->devs[u->dev] : NULL;
	int nq = vd ? (int)vd->nr_engines : 0;

	/* Queues to select: the fdinfo engines, or the debugfs queues when there are more. */
	if (vd && (int)vd->dev.nr_queues > nq)
		nq = vd->dev.nr_queues;

	if (u->help && ch != KEY_RESIZE) {
		u->help = false;
		return ch != 'q';
	}
	if (u->o->replay) {
		long last = u->o->replay->nr - 1, to = -1;

		switch (ch) {
		case 'n':
		case '.':
			to = u->cur + 1;
			u->paused = true;
			break;
		case ',':
			to = (long)u->cur - 1;
			u->paused = true;
			break;
		case KEY_RIGHT:
			to = u->cur + 10;
			break;
		case KEY_LEFT:
			to = (long)u->cur - 10;
			break;
		case KEY_HOME:
			to = 0;
			break;
		case KEY_END:
			to = last;
			break;
		case KEY_NPAGE:
			to = u->cur + 100;
			break;
		case KEY_PPAGE:
			to = (long)u->cur - 100;
			break;
		default:
			goto common;
		}
		u->seek = to < 0 ? 0 : to > last ? last : to;
		return true;
	}
common:
	switch (ch) {
	case 'q':
	case 'Q':
		return false;
	case 'h':
	case '?':
		u->help = true;
		break;
	case ' ':
		u->paused = !u->paused;
		break;
	case 's':
		u->sort = (u->sort + 1) % SORT_NR;
		break;
	case 'S':
		u->sort = (u->sort + SORT_NR - 1) % SORT_NR;
		break;
	case 'r':
		u->reverse = !u->reverse;
		break;
	case '\t':
	case 'd':
		if (u->v->nr_devs)
			u->dev = (u->dev + 1) % u->v->nr_devs;
		u->queue = 0;
		break;
	case KEY_BTAB:
	case 'D':
		if (u->v->nr_devs)
			u->dev = (u->dev + u->v->nr_devs - 1) % u->v->nr_devs;
		u->queue = 0;
		break;
	case KEY_RIGHT:
	case ']':
		if (nq)
			u->queue = (u->queue + 1) % nq;
		break;
	case KEY_LEFT:
	case '[':
		if (nq)
			u->queue = (u->queue + nq - 1) % nq;
		break;
	case '1':
		u->pane_dev = !u->pane_dev;
		break;
	case '2':
		u->pane_hist = !u->pane_hist;
		break;
	case 'l':
	case '4':
		u->pane_lat = !u->pane_lat;
		break;
	case '3':
		u->pane_procs = !u->pane_procs;
		break;
	default:	/* KEY_RESIZE and others: just redraw */
		break;
	}
	return true;
}

/*
 * Replay: bring the model to sample @k. Forward by one is one model update; any other move
 * starts from the last checkpoint at or before @k (or the first sample), so that what is shown
 * (held fdinfo values, the history) is exactly what the live screen showed at that sample.
 */
static int replay_goto(struct ui *u, struct ft_model *m, struct ft_snapshot *snap, unsigned int k,
		       bool fresh, char *err, size_t errlen)
{
	unsigned int i = u->cur + 1, c = k / CKPT_EVERY;
	int ret;

	while (c > 0 && !u->ckpt_ok[c])
		c--;
	if (fresh || k <= u->cur || (u->ckpt_ok[c] && c * CKPT_EVERY > u->cur)) {
		ft_model_fini(m);
		ft_model_init(m);
		i = 0;
		if (!fresh && u->ckpt_ok[c]) {
			if (ft_model_clone(m, &u->ckpt[c]))
				return -ENOMEM;
			i = c * CKPT_EVERY + 1;
		}
	}
	for (; i <= k; i++) {
		ret = ft_replay_read(u->o->replay, i, snap, err, errlen);
		if (ret || (ret = ft_model_update(m, snap)))
			return ret;
		c = i / CKPT_EVERY;
		if (i % CKPT_EVERY == 0 && !u->ckpt_ok[c]) {
			if (ft_model_clone(&u->ckpt[c], m))
				return -ENOMEM;
			u->ckpt_ok[c] = true;
		}
	}
	u->cur = k;
	return 0;
}

static void free_ckpts(struct ui *u)
{
	for (unsigned int i = 0; u->ckpt && u->ckpt_ok && i < u->nr_ckpt; i++)
		if (u->ckpt_ok[i])
			ft_model_fini(&u->ckpt[i]);
	free(u->ckpt);
	free(u->ckpt_ok);
}

/* Seconds until the replay's next sample: the recorded interval, or -d. */
static double replay_step(const struct ui *u)
{
	const struct ft_replay *rp = u->o->replay;

	if (u->o->replay_fixed_delay || u->cur + 1 >= rp->nr)
		return u->o->delay_s;
	return rp->t_mono[u->cur + 1] - rp->t_mono[u->cur];
}

int ft_ui_run(struct ft_source *srcs, unsigned int nr_srcs, struct ft_model *m,
	      const struct ft_ui_opts *o)
{
	struct ui u = {
		.v = &m->view, .srcs = srcs, .nr_srcs = nr_srcs,
		.pane_dev = true, .pane_hist = true, .pane_procs = true, .pane_lat = true,
		.o = o, .seek = -1,
	};
	struct ft_snapshot snap = { 0 };
	char err[256] = "out of memory";
	double next;
	long samples = 0;
	int ret = 0;

	const char *cs = nl_langinfo(CODESET);

	u.glyphs = cs && !strcmp(cs, "UTF-8") ? FT_GLYPHS_UTF8 : FT_GLYPHS_ASCII;
	if (o->replay) {
		u.nr_ckpt = o->replay->nr / CKPT_EVERY + 1;
		u.ckpt = calloc(u.nr_ckpt, sizeof(*u.ckpt));
		u.ckpt_ok = calloc(u.nr_ckpt, sizeof(*u.ckpt_ok));
		if (!u.ckpt || !u.ckpt_ok || replay_goto(&u, m, &snap, 0, true, err, sizeof(err))) {
			free_ckpts(&u);
			ft_snapshot_free(&snap);
			fprintf(stderr, "fractop: %s: %s\n", o->replay_name, err);
			return 1;
		}
	} else if (ft_sample_all(srcs, nr_srcs, &snap) == -ENOMEM ||
		   ft_record_sample(o->rec, &snap) < 0 || ft_model_update(m, &snap)) {
		ft_snapshot_free(&snap);
		fprintf(stderr, "fractop: out of memory or writing the record\n");
		return 1;
	}
	if (!initscr()) {
		ft_snapshot_free(&snap);
		fprintf(stderr, "fractop: cannot initialise the terminal\n");
		return 1;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	if (has_colors()) {
		short bg = -1;

		start_color();
		if (use_default_colors() == ERR)	/* the terminal has no default colours */
			bg = COLOR_BLACK;
		init_pair(1, COLOR_GREEN, bg);
		init_pair(2, COLOR_YELLOW, bg);
		init_pair(3, COLOR_RED, bg);
		u.color = true;
	}
	next = mono_now() + (o->replay ? replay_step(&u) : o->delay_s);
	draw(&u, &m->view);
	for (;;) {
		double left = next - mono_now();
		int ch;

		timeout(left > 0 ? (int)ceil(left * 1000) : 0);
		ch = getch();
		if (ft_stop)
			break;
		if (ch != ERR) {
			if (!handle_key(&u, ch))
				break;
			if (u.seek >= 0) {
				ret = replay_goto(&u, m, &snap, u.seek, false, err, sizeof(err));
				u.seek = -1;
				if (ret)
					break;
				next = mono_now() + replay_step(&u);
			}
			draw(&u, &m->view);
			continue;
		}
		if (mono_now() < next)
			continue;
		if (o->replay) {
			next = mono_now() + replay_step(&u);
			if (u.paused || u.cur + 1 >= o->replay->nr)
				continue;
			ret = replay_goto(&u, m, &snap, u.cur + 1, false, err, sizeof(err));
			if (ret)
				break;
		} else {
			next += o->delay_s;
			if (next < mono_now())	/* suspended (^Z) or very slow: do not catch up */
				next = mono_now() + o->delay_s;
			if (u.paused)
				continue;
			if (ft_sample_all(srcs, nr_srcs, &snap) == -ENOMEM) {
				ret = -ENOMEM;
				break;
			}
			ret = ft_record_sample(o->rec, &snap);
			if (ret < 0) {
				snprintf(err, sizeof(err), "writing the record: %s", strerror(-ret));
				break;
			}
			ret = ft_model_update(m, &snap);
			if (ret)
				break;
		}
		draw(&u, &m->view);
		if (o->iterations > 0 && ++samples >= o->iterations)
			break;
	}
	endwin();
	ft_snapshot_free(&snap);
	free_ckpts(&u);
	if (ret) {
		fprintf(stderr, "fractop: %s\n", err);
		return 1;
	}
	return 0;
}
