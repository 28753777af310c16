// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * Number formatting, sparklines and column layout: pure functions of their arguments (no
 * terminal, no locale, no globals), so that tests/unit.c checks them as they are.
 * Every formatter prints "n/a" for a value that is not known, and returns @buf.
 */

#include <math.h>
#include <string.h>

#include "fractop.h"

static bool num_usable(struct ft_num n)
{
	return n.ok && isfinite(n.v);
}

/* Three significant digits: 1.23, 12.3, 123. */
static void sig3(char *buf, size_t len, double v, const char *unit)
{
	double a = fabs(v);
	int prec = a < 9.995 ? 2 : a < 99.95 ? 1 : 0;

	snprintf(buf, len, "%.*f %s", prec, v, unit);
}

/* Bytes with IEC prefixes: "512 B", "1.50 KiB", "12.3 MiB". */
char *ft_fmt_iec(char *buf, size_t len, struct ft_num bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v;
	unsigned int u = 0;

	if (!num_usable(bytes) || bytes.v < 0) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	v = bytes.v;
	if (v < 1024) {
		snprintf(buf, len, "%.0f B", v);
		return buf;
	}
	/* Scale so that the printed value stays below 1024 once rounded to 3 digits. */
	while (u + 1 < sizeof(units) / sizeof(units[0]) && v >= 1023.5) {
		v /= 1024;
		u++;
	}
	sig3(buf, len, v, units[u]);
	return buf;
}

/* A quantity with SI prefixes: "0", "0.50 /s", "999 /s", "1.00 k/s", "12.3 M/s". */
char *ft_fmt_si(char *buf, size_t len, struct ft_num v, const char *unit)
{
	static const char *const pfx[] = { "", "k", "M", "G", "T", "P", "E" };
	char u[32];
	double x, a;
	unsigned int p = 0;

	if (!num_usable(v)) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	x = v.v;
	a = fabs(x);
	if (a == 0) {
		snprintf(buf, len, "0 %s", unit);
		return buf;
	}
	while (p + 1 < sizeof(pfx) / sizeof(pfx[0]) && a >= 999.5) {
		x /= 1000;
		a /= 1000;
		p++;
	}
	snprintf(u, sizeof(u), "%s%s", pfx[p], unit);
	sig3(buf, len, x, u);
	return buf;
}

/* "12.3%", "100%", "0.0%"; n/a. */
char *ft_fmt_pct(char *buf, size_t len, struct ft_num pct)
{
	if (!num_usable(pct))
		snprintf(buf, len, "n/a");
	else if (fabs(pct.v) >= 99.95)
		snprintf(buf, len, "%.0f%%", pct.v);
	else
		snprintf(buf, len, "%.1f%%", pct.v);
	return buf;
}

/* "35ns", "1.2us", "45.0ms", "12.3s", "3m05s", "2h07m", "3d04h". */
char *ft_fmt_duration(char *buf, size_t len, struct ft_num seconds)
{
	double s = seconds.v;

	if (!num_usable(seconds) || s < 0) {
		snprintf(buf, len, "n/a");
		return buf;
	}
	if (s < 1e-6) {
		snprintf(buf, len, "%.0fns", s * 1e9);
	} else if (s < 1e-3) {
		snprintf(buf, len, "%.1fus", s * 1e6);
	} else if (s < 1) {
		snprintf(buf, len, "%.1fms", s * 1e3);
	} else if (s < 59.95) {
		snprintf(buf, len, "%.1fs", s);
	} else {
		unsigned long long t = (unsigned long long)(s + 0.5);

		if (t < 3600)
			snprintf(buf, len, "%llum%02llus", t / 60, t % 60);
		else if (t < 86400)
			snprintf(buf, len, "%lluh%02llum", t / 3600, t % 3600 / 60);
		else
			snprintf(buf, len, "%llud%02lluh", t / 86400, t % 86400 / 3600);
	}
	return buf;
}

/* An integer count, exact up to 2^53: "0", "123456". */
char *ft_fmt_count(char *buf, size_t len, struct ft_num v)
{
	if (!num_usable(v))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.0f", v.v);
	return buf;
}

/*
 * The last @width of @vals (oldest first) as a bar per value, right-aligned (padded with
 * blanks on the left). A value that is not known (NaN) is a blank, 0 is the lowest bar, and
 * any value above 0 is at least the second lowest, so that a little activity shows. @max <= 0
 * scales to the largest value shown. @buf gets at most len - 1 bytes (UTF-8 bars are three).
 */
char *ft_sparkline(char *buf, size_t len, const double *vals, unsigned int n,
		   unsigned int width, double max, enum ft_glyphs g)
{
	static const char *const utf8[8] = { "\u2581", "\u2582", "\u2583", "\u2584",
					     "\u2585", "\u2586", "\u2587", "\u2588" };
	static const char ascii[8] = { '_', '.', ':', '-', '=', '+', '*', '#' };
	unsigned int first = n > width ? n - width : 0, i;
	size_t pos = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (max <= 0) {
		for (i = first; i < n; i++)
			if (isfinite(vals[i]) && vals[i] > max)
				max = vals[i];
	}
	for (i = 0; i < width; i++) {
		unsigned int shown = n - first, pad = width - shown;
		const char *glyph;
		char one[2] = { ' ', '\0' };

		if (i < pad || !isfinite(vals[first + i - pad])) {
			glyph = " ";
		} else {
			double v = vals[first + i - pad];
			int lvl;

			if (v <= 0 || max <= 0)
				lvl = 0;
			else
				lvl = 1 + (int)floor(v / max * 6.999);
			if (lvl > 7)
				lvl = 7;
			if (g == FT_GLYPHS_UTF8) {
				glyph = utf8[lvl];
			} else {
				one[0] = ascii[lvl];
				glyph = one;
			}
		}
		if (pos + strlen(glyph) + 1 > len)
			break;
		memcpy(buf + pos, glyph, strlen(glyph));
		pos += strlen(glyph);
	}
	buf[pos] = '\0';
	return buf;
}

/*
 * Widths of @n columns on a line of @width cells with @gap cells between columns: out[i] is
 * the column's width, or 0 when it was dropped. Columns drop, lowest prio first (the rightmost
 * among equals), until the minimum widths fit; prio 0 never drops. The space left is shared
 * out one cell at a time, left to right, to columns below their max. Returns the number of
 * columns kept; if even the undroppable ones do not fit, they keep their minimum widths (the
 * caller clips the line).
 */
int ft_layout_columns(const struct ft_col *cols, int n, int width, int gap, int *out)
{
	int kept = n, need = 0, left, i;

	for (i = 0; i < n; i++) {
		out[i] = cols[i].min;
		need += cols[i].min;
	}
	need += n > 1 ? (n - 1) * gap : 0;
	while (need > width) {
		int victim = -1;

		for (i = 0; i < n; i++) {
			if (!out[i] || !cols[i].prio)
				continue;
			if (victim < 0 || cols[i].prio <= cols[victim].prio)
				victim = i;
		}
		if (victim < 0)
			break;
		need -= out[victim] + (kept > 1 ? gap : 0);
		out[victim] = 0;
		kept--;
	}
	left = width - need;
	while (left > 0) {
		bool grew = false;

		for (i = 0; i < n && left > 0; i++) {
			if (out[i] && out[i] < cols[i].max) {
				out[i]++;
				left--;
				grew = true;
			}
		}
		if (!grew)
			break;
	}
	return kept;
}
