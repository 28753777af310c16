// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Copyright (c) 2026 The frac authors
 *
 * hist_test: the percentiles every tool prints (hist_percentile() of
 * trace_helpers.c) against the exact nearest-rank percentile of known
 * samples, put into a struct hist by the BPF side's own code
 * (frac_hist.bpf.h's hist_add_cpu(), compiled here as plain C). For every
 * distribution and percentile: the exact value lies in the reported
 * [low, high], the estimate too, and [low, high] is inside the exact value's
 * fine bucket. Prints one line per failure and a summary; exit 1 on any.
 * Runs anywhere (no BPF, no device): tests/guest/bpf-tools.sh runs it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#include "frac_hist.bpf.h"	/* hist_add_cpu(), fine_slot(): the BPF side's bucketing */
#include "trace_helpers.h"

static unsigned long long rng = 88172645463325252ULL;

static unsigned long long next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* The exact fine bucket [lo, hi] of @v (same arithmetic as fine_slot()). */
static void bucket_of(__u64 v, __u64 *lo, __u64 *hi)
{
	__u32 k;

	if (v < FINE_SUB) {
		*lo = *hi = v;
		return;
	}
	for (k = 63; !(v >> k); k--)
		;
	*lo = v >> (k - FINE_SUB_BITS) << (k - FINE_SUB_BITS);
	*hi = *lo + (1ULL << (k - FINE_SUB_BITS)) - 1;
}

static int failures, checks;

static void check(const char *dist, __u64 *v, size_t n)
{
	static const double ps[] = { 0.001, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0 };
	struct hist *h = calloc(1, sizeof(*h));
	size_t i, k;

	for (i = 0; i < n; i++)
		hist_add_cpu(h, v[i]);
	qsort(v, n, sizeof(*v), cmp_u64);
	for (k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
		size_t rank = (size_t)(ps[k] * n);
		struct pct_est e;
		__u64 exact, blo, bhi;

		if (rank < ps[k] * n)
			rank++;
		if (rank < 1)
			rank = 1;
		exact = v[rank - 1];
		bucket_of(exact, &blo, &bhi);
		checks++;
		if (!hist_percentile(h, ps[k], &e) || e.low > exact || e.high < exact ||
		    e.est < e.low || e.est > e.high || e.low < blo || e.high > bhi) {
			printf("FAIL %s n=%zu p=%g: exact %llu (bucket %llu..%llu), got est %.1f "
			       "[%.1f, %.1f]\n", dist, n, ps[k], (unsigned long long)exact,
			       (unsigned long long)blo, (unsigned long long)bhi, e.est, e.low, e.high);
			failures++;
		}
	}
	free(h);
}

/*
 * A histogram copied while a program was half-way through hist_add_cpu()
 * (the drain copies each CPU's value as that CPU writes it): the fine slots
 * hold a sample that min, max or count do not know of yet. min and max then
 * contradict the bucket, and the bounds must stay inside the bucket and hold
 * the value, not collapse onto a min or max that is not in it.
 */
static void check_torn(const char *what, struct hist *h, double p, __u64 exact)
{
	struct pct_est e;
	__u64 blo, bhi;

	bucket_of(exact, &blo, &bhi);
	checks++;
	if (!hist_percentile(h, p, &e) || e.low > exact || e.high < exact || e.est < e.low ||
	    e.est > e.high || e.low < blo || e.high > bhi) {
		printf("FAIL torn, %s p=%g: exact %llu (bucket %llu..%llu), got est %.1f "
		       "[%.1f, %.1f]\n", what, p, (unsigned long long)exact,
		       (unsigned long long)blo, (unsigned long long)bhi, e.est, e.low, e.high);
		failures++;
	}
}

static void torn_tests(void)
{
	struct hist *h = calloc(1, sizeof(*h)), *s = calloc(1, sizeof(*s));
	__u64 v = 1000000 + 12345;
	int i;

	/* The interval's first sample, its fine slot written, nothing else yet. */
	h->fine[hist_fine_slot(v)]++;
	hist_merge(s, h, true);		/* as the tools merge the CPUs: min becomes ~0 */
	check_torn("first sample, min/max unset", s, 0.5, v);
	/* 100 samples, then one above the max whose max is not written yet. */
	memset(h, 0, sizeof(*h));
	for (i = 0; i < 100; i++)
		hist_add_cpu(h, 5000 + i);
	h->fine[hist_fine_slot(v)]++;
	check_torn("a new max not written yet", h, 1.0, v);
	/* ... and one below the min whose min is not written yet. */
	memset(h, 0, sizeof(*h));
	for (i = 0; i < 100; i++)
		hist_add_cpu(h, 5000000 + i);
	h->fine[hist_fine_slot(v)]++;
	check_torn("a new min not written yet", h, 0.001, v);
	free(h);
	free(s);
}

int main(void)
{
	static const size_t sizes[] = { 1, 2, 3, 16, 100, 1000, 10007 };
	size_t s, i, n;
	__u64 *v;

	v = calloc(10007, sizeof(*v));
	if (!v)
		return 1;
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		n = sizes[s];
		for (i = 0; i < n; i++)		/* uniform, 1 us .. 20 ms */
			v[i] = 1000 + next_rand() % 20000000;
		check("uniform", v, n);
		for (i = 0; i < n; i++)		/* long tail: log-uniform over 2^4 .. 2^34 ns */
			v[i] = (1ULL << (4 + next_rand() % 30)) + next_rand() % 1024;
		check("log-uniform", v, n);
		for (i = 0; i < n; i++)		/* two modes, most samples in one bucket */
			v[i] = i % 10 ? 150000 + next_rand() % 64 : 9000000 + next_rand() % 100000;
		check("bimodal", v, n);
		for (i = 0; i < n; i++)		/* every sample at a bucket's lower edge */
			v[i] = 1ULL << (10 + i % 12);
		check("edges", v, n);
		for (i = 0; i < n; i++)
			v[i] = 4242;
		check("constant", v, n);
	}
	free(v);
	torn_tests();
	printf("hist_test: %d of %d percentiles outside their bounds\n", failures, checks);
	return failures != 0;
}
