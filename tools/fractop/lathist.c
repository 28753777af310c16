// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * The latency figures' pure side, shared by the model's writers, the screen and the tests:
 * percentiles of a struct hist (bpf/frac_hist.h) through bpf/trace_helpers.c's
 * hist_percentile(), the one fraclat prints its "p99 ~X [lo, hi]" with, so that fractop and
 * fraclat give the same figure and bounds for the same histogram; the log2 slots' Prometheus
 * bounds; and the privilege rule of the latency source (latency.c).
 */

#include <math.h>

#include "fractop.h"
#include "trace_helpers.h"

const char *const ft_lat_stat_names[FT_LS_NR] = {
	[FT_LS_UNMATCHED] = "unmatched", [FT_LS_NOID] = "noid", [FT_LS_HIST_FULL] = "hist_full",
	[FT_LS_TABLE_FULL] = "table_full", [FT_LS_RECURSION_MISSES] = "recursion_misses",
	[FT_LS_NORUN] = "norun", [FT_LS_NOCOMPLETE] = "nocomplete", [FT_LS_CLAMPED] = "clamped",
	[FT_LS_NOIRQ] = "noirq", [FT_LS_NODEV] = "nodev",
	[FT_LS_OK] = "ended_ok", [FT_LS_CANCELLED] = "ended_cancelled",
	[FT_LS_TIMEDOUT] = "ended_timedout", [FT_LS_EIO] = "ended_eio",
	[FT_LS_ENODEV] = "ended_enodev", [FT_LS_OTHER] = "ended_other",
};

struct ft_pct ft_lat_percentile(const struct hist *h, double p)
{
	struct ft_pct r = { FT_NUM_NA, FT_NUM_NA, FT_NUM_NA };
	struct pct_est e;

	if (!h->count || !hist_percentile(h, p, &e))
		return r;
	r.est = ft_num_of(e.est);
	r.low = ft_num_of(e.low);
	r.high = ft_num_of(e.high);
	return r;
}

unsigned int ft_lat_slots_used(const struct hist *h)
{
	unsigned int n = MAX_SLOTS;

	while (n && !h->slots[n - 1])
		n--;
	return n;
}

/* Slot k of bits.bpf.h's log2l() holds [2^k, 2^(k+1)) ns (slot 0: 0 and 1): le is inclusive. */
double ft_lat_slot_le_s(unsigned int k)
{
	return (ldexp(1.0, k + 1) - 1) / 1e9;
}

const char *ft_latency_denied(bool no_bpf, bool cap_sys_admin, bool cap_bpf, bool cap_perfmon,
			      bool module_loaded)
{
	if (no_bpf)
		return "latency: off (--no-bpf)";
	/* CAP_SYS_ADMIN covers both (before 5.8 it was the only way); root without them is not. */
	if (!cap_sys_admin && !(cap_bpf && cap_perfmon))
		return "latency: needs CAP_BPF+CAP_PERFMON";
	if (!module_loaded)
		return "latency: frac module not loaded (no frac tracepoints)";
	return NULL;
}

/* "~45.1us [40.9us, 45.1us]", or "n/a" (no job yet, or not known). */
char *ft_fmt_lat_pct(char *buf, size_t len, struct ft_pct p)
{
	char e[24], lo[24], hi[24];

	if (!p.est.ok) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	snprintf(buf, len, "~%s [%s, %s]", ft_fmt_duration(e, sizeof(e), ft_num_of(p.est.v / 1e9)),
		 ft_fmt_duration(lo, sizeof(lo), ft_num_of(p.low.v / 1e9)),
		 ft_fmt_duration(hi, sizeof(hi), ft_num_of(p.high.v / 1e9)));
	return buf;
}

/*
 * A histogram's log2 slots @first..@first+@n-1 as one glyph each, the height its count over
 * the largest count shown (ft_sparkline); a slot without a job is blank. Slots below @first
 * count in the first glyph, slots past the last in the last, so that every job is drawn.
 */
char *ft_lat_hist_line(char *buf, size_t len, const struct hist *h, unsigned int first,
		       unsigned int n, enum ft_glyphs g)
{
	double v[MAX_SLOTS];

	if (n > MAX_SLOTS)
		n = MAX_SLOTS;
	if (first + n > MAX_SLOTS)
		first = MAX_SLOTS - n;
	for (unsigned int i = 0; i < n; i++)
		v[i] = 0;
	for (unsigned int k = 0; k < MAX_SLOTS; k++)
		v[k < first ? 0 : k >= first + n ? n - 1 : k - first] += h->slots[k];
	for (unsigned int i = 0; i < n; i++)
		if (!v[i])
			v[i] = NAN;
	return ft_sparkline(buf, len, v, n, n, 0, g);
}
