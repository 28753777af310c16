// SPDX-License-Identifier: MIT
/*
 * memcpy-bench: GB/s of memcpy between two buffers of SIZE bytes, best of REPS.
 * The physical limit of the emulated DMA engine is the host's memcpy.
 *
 * Usage: memcpy-bench [SIZE_MIB [REPS]]     prints one JSON line
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse(const char *s, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return errno || *end || end == s || *out < 1 || *out > max ? -1 : 0;
}

int main(int argc, char **argv)
{
	long mib = 64, reps = 10;
	double best = 0;
	size_t size;
	char *a, *b;

	if (argc > 3 || (argc > 1 && parse(argv[1], 4096, &mib)) ||
	    (argc > 2 && parse(argv[2], 100000, &reps))) {
		fprintf(stderr, "usage: memcpy-bench [SIZE_MIB [REPS]]\n");
		return 2;
	}
	size = (size_t)mib << 20;
	a = malloc(size);
	b = malloc(size);
	if (!a || !b) {
		fprintf(stderr, "memcpy-bench: cannot allocate 2 x %ld MiB\n", mib);
		return 1;
	}
	memset(a, 1, size);
	memset(b, 2, size);
	for (long i = 0; i < reps; i++) {
		double t0 = now(), t;

		memcpy(b, a, size);
		t = now() - t0;
		if (t > 0 && size / t / 1e9 > best)
			best = size / t / 1e9;
		a[i % size] ^= b[(i * 7) % size];	/* keep the copies live */
	}
	printf("{\"size\":%zu,\"reps\":%ld,\"gbytes_per_sec\":%.3f}\n", size, reps, best);
	return 0;
}
