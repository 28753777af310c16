// SPDX-License-Identifier: MIT
/*
 * frac-example: run a GEMM (fp32 and int8) and a copy through host and device
 * memory on a FRAC device, and check every result against the host.
 *
 * Usage: frac-example [-d INDEX] [-n DIM] [-q QUEUE]
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfrac.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: frac-example [-d INDEX] [-n DIM] [-q QUEUE]\n");
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	return errno || *end || !*s || *out > max ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct frac_bo a, b, c, dev_c, host_c2;
	unsigned long dim = 64, queue = 0, index = (unsigned long)-1;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	struct frac_dev dev;
	size_t n, bad = 0;
	float *fa, *fb, *fc;
	int opt, ret;

	while ((opt = getopt(argc, argv, "d:n:q:h")) != -1) {
		switch (opt) {
		case 'd':
			if (parse_uint(optarg, 63, &index))
				goto bad_arg;
			break;
		case 'n':
			if (parse_uint(optarg, 1024, &dim) || !dim)
				goto bad_arg;
			break;
		case 'q':
			if (parse_uint(optarg, 15, &queue))
				goto bad_arg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "frac-example: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}

	ret = frac_open((int)index, &dev);
	if (ret) {
		fprintf(stderr, "frac-example: no frac device: %s\n", strerror(-ret));
		return 1;
	}
	if (queue >= dev.num_queues) {
		fprintf(stderr, "frac-example: queue %lu out of range (device has %u)\n",
			queue, dev.num_queues);
		return 2;
	}
	n = dim * dim;
	if (frac_bo_create(&dev, n * 4, 0, &a) || frac_bo_create(&dev, n * 4, 0, &b) ||
	    frac_bo_create(&dev, n * 4, 0, &c) || frac_bo_create(&dev, n * 4, 0, &host_c2) ||
	    frac_bo_create(&dev, n * 4, DRM_FRAC_BO_DEVMEM, &dev_c) ||
	    frac_bo_map(&dev, &a) || frac_bo_map(&dev, &b) || frac_bo_map(&dev, &c) ||
	    frac_bo_map(&dev, &host_c2)) {
		fprintf(stderr, "frac-example: buffer allocation failed\n");
		return 1;
	}
	fa = a.map;
	fb = b.map;
	srand(1);
	for (size_t i = 0; i < n; i++) {
		fa[i] = (float)(rand() % 200 - 100) / 50.0f;
		fb[i] = (float)(rand() % 200 - 100) / 50.0f;
	}

	/* C = A x B into device memory, then copied back to host memory. */
	frac_cmdlist_init(&cl);
	frac_cmd_gemm(&cl, DRM_FRAC_GEMM_FP32, dim, dim, dim, &a, 0, &b, 0, &dev_c, 0);
	frac_cmd_copy(&cl, &host_c2, 0, &dev_c, 0, n * 4);
	frac_cmd_gemm(&cl, DRM_FRAC_GEMM_FP32, dim, dim, dim, &a, 0, &b, 0, &c, 0);
	ret = frac_run(&dev, queue, &cl, &res);
	if (ret || res.status) {
		fprintf(stderr, "frac-example: GEMM job failed: %s\n",
			strerror(ret ? -ret : -res.status));
		return 1;
	}
	fc = c.map;
	for (size_t i = 0; i < dim; i++) {
		for (size_t j = 0; j < dim; j++) {
			float ref = 0;

			for (size_t k = 0; k < dim; k++)
				ref += fa[i * dim + k] * fb[k * dim + j];
			if (fabsf(fc[i * dim + j] - ref) > 1e-3f * (1 + fabsf(ref)))
				bad++;
			if (memcmp(&fc[i * dim + j], (float *)host_c2.map + i * dim + j, 4))
				bad++;
		}
	}
	printf("gemm fp32 %lux%lux%lu on queue %lu: %s, device time %llu ns\n",
	       dim, dim, dim, queue, bad ? "MISMATCH" : "ok",
	       (unsigned long long)(res.t_end - res.t_start));
	printf("copy device->host %zu bytes: %s\n", n * 4, bad ? "MISMATCH" : "ok");

	/* CRC32C of A on the device against the host's. */
	frac_cmdlist_init(&cl);
	frac_cmd_crc32c(&cl, &a, 0, n * 4, 0);
	ret = frac_run(&dev, queue, &cl, &res);
	if (ret || res.status || (uint32_t)res.result != frac_crc32c(0, a.map, n * 4)) {
		printf("crc32c %zu bytes: MISMATCH\n", n * 4);
		bad++;
	} else {
		printf("crc32c %zu bytes: ok (%08x)\n", n * 4, (uint32_t)res.result);
	}

	frac_bo_destroy(&dev, &a);
	frac_bo_destroy(&dev, &b);
	frac_bo_destroy(&dev, &c);
	frac_bo_destroy(&dev, &dev_c);
	frac_bo_destroy(&dev, &host_c2);
	frac_close(&dev);
	return bad ? 1 : 0;

bad_arg:
	fprintf(stderr, "frac-example: bad value '%s' for -%c\n", optarg, opt);
	return 2;
}
