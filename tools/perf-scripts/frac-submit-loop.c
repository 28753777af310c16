// SPDX-License-Identifier: MIT
/*
 * frac-submit-loop: a submit-heavy workload of small jobs, for profiling and
 * tracing the driver's submission and completion paths.
 *
 * Usage: frac-submit-loop [-d INDEX] [-n JOBS] [-q QUEUE[,QUEUE...]]
 *                         [-o OP[,OP...]] [-s BYTES] [-j DEPTH]
 *
 *   -n JOBS    jobs per queue (default 100)
 *   -q QUEUES  queues to submit to, round robin (default 0)
 *   -o OPS     one command per job, cycling through OPS per queue: nop, copy,
 *              fill, crc32c, gemm (8x8x8 fp32), timestamp (default copy)
 *   -s BYTES   operand size of copy, fill and crc32c (default 4096)
 *   -j DEPTH   jobs in flight before waiting for the oldest (default 1)
 *
 * Job i of queue q runs op[i % nops], so with -n 6 -q 0,2 -o copy,crc32c
 * queues 0 and 2 each get 3 copy and 3 crc32c jobs. Exits non-zero if a job
 * fails.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frac_hw.h"		/* FRAC_MAX_QUEUES */
#include "libfrac.h"

#define MAX_OPS		16
#define MAX_DEPTH	64

static void usage(FILE *f)
{
	fprintf(f, "usage: frac-submit-loop [-d INDEX] [-n JOBS] [-q QUEUE[,QUEUE...]]\n"
		   "                        [-o OP[,OP...]] [-s BYTES] [-j DEPTH]\n"
		   "ops: nop copy fill crc32c gemm timestamp\n");
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	return errno || *end || !*s || *out > max ? -1 : 0;
}

/* Split a comma list into at most @max items; each item goes through @conv. */
static int parse_list(char *s, unsigned int max, unsigned int *out,
		      int (*conv)(const char *, unsigned int *))
{
	unsigned int n = 0;
	char *tok, *save;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max || conv(tok, &out[n]))
			return -1;
		n++;
	}
	return n ? (int)n : -1;
}

static int conv_queue(const char *s, unsigned int *out)
{
	unsigned long v;

	if (parse_uint(s, FRAC_MAX_QUEUES - 1, &v))
		return -1;
	*out = v;
	return 0;
}

static int conv_op(const char *s, unsigned int *out)
{
	int op = frac_op_parse(s);

	if (op < 0)
		return -1;
	*out = op;
	return 0;
}

struct buffers {
	struct frac_bo src, dst, a, b, c;
};

static int build_job(struct frac_cmdlist *cl, unsigned int op, const struct buffers *bufs,
		     uint64_t size, uint32_t i)
{
	frac_cmdlist_init(cl);
	switch (op) {
	case DRM_FRAC_OP_NOP:
		return frac_cmd_nop(cl);
	case DRM_FRAC_OP_COPY:
		return frac_cmd_copy(cl, &bufs->dst, 0, &bufs->src, 0, size);
	case DRM_FRAC_OP_FILL:
		return frac_cmd_fill(cl, &bufs->dst, 0, size, i);
	case DRM_FRAC_OP_CRC32C:
		return frac_cmd_crc32c(cl, &bufs->src, 0, size, 0);
	case DRM_FRAC_OP_GEMM:
		return frac_cmd_gemm(cl, DRM_FRAC_GEMM_FP32, 8, 8, 8, &bufs->a, 0, &bufs->b, 0,
				     &bufs->c, 0);
	case DRM_FRAC_OP_TIMESTAMP:
		return frac_cmd_timestamp(cl, NULL, 0);
	}
	return -EINVAL;
}

int main(int argc, char **argv)
{
	unsigned long index = (unsigned long)-1, njobs = 100, size = 4096, depth = 1;
	unsigned int queues[FRAC_MAX_QUEUES] = { 0 }, ops[MAX_OPS] = { DRM_FRAC_OP_COPY };
	int nqueues = 1, nops = 1, opt, ret, failed = 0;
	uint32_t inflight[MAX_DEPTH];
	unsigned long head = 0, count = 0, done = 0;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	struct buffers bufs;
	struct frac_dev dev;

	while ((opt = getopt(argc, argv, "d:n:q:o:s:j:h")) != -1) {
		switch (opt) {
		case 'd':
			if (parse_uint(optarg, 63, &index))
				goto bad_arg;
			break;
		case 'n':
			if (parse_uint(optarg, 10000000, &njobs))
				goto bad_arg;
			break;
		case 'q':
			nqueues = parse_list(optarg, FRAC_MAX_QUEUES, queues, conv_queue);
			if (nqueues < 0)
				goto bad_arg;
			break;
		case 'o':
			nops = parse_list(optarg, MAX_OPS, ops, conv_op);
			if (nops < 0)
				goto bad_arg;
			break;
		case 's':
			if (parse_uint(optarg, 1 << 24, &size) || !size)
				goto bad_arg;
			break;
		case 'j':
			if (parse_uint(optarg, MAX_DEPTH, &depth) || !depth)
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
		fprintf(stderr, "frac-submit-loop: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}

	ret = frac_open((int)index, &dev);
	if (ret) {
		fprintf(stderr, "frac-submit-loop: no frac device: %s\n", strerror(-ret));
		return 1;
	}
	for (int q = 0; q < nqueues; q++) {
		if (queues[q] >= dev.num_queues) {
			fprintf(stderr, "frac-submit-loop: queue %u out of range (device has %u)\n",
				queues[q], dev.num_queues);
			return 2;
		}
	}
	if (frac_bo_create(&dev, size, 0, &bufs.src) || frac_bo_create(&dev, size, 0, &bufs.dst) ||
	    frac_bo_create(&dev, 8 * 8 * 4, 0, &bufs.a) ||
	    frac_bo_create(&dev, 8 * 8 * 4, 0, &bufs.b) ||
	    frac_bo_create(&dev, 8 * 8 * 4, 0, &bufs.c) || frac_bo_map(&dev, &bufs.src)) {
		fprintf(stderr, "frac-submit-loop: buffer allocation failed\n");
		return 1;
	}
	memset(bufs.src.map, 0x5a, size);

	for (unsigned long i = 0; i < njobs; i++) {
		for (int q = 0; q < nqueues; q++) {
			uint32_t id;

			if (count == depth) {
				ret = frac_wait(&dev, inflight[head], -1, &res);
				if (ret || res.status)
					failed++;
				head = (head + 1) % depth;
				count--;
				done++;
			}
			ret = build_job(&cl, ops[i % nops], &bufs, size, (uint32_t)i);
			if (!ret)
				ret = frac_submit(&dev, queues[q], &cl, NULL, &id);
			if (ret) {
				fprintf(stderr, "frac-submit-loop: submit to queue %u failed: %s\n",
					queues[q], strerror(-ret));
				return 1;
			}
			inflight[(head + count) % depth] = id;
			count++;
		}
	}
	while (count) {
		ret = frac_wait(&dev, inflight[head], -1, &res);
		if (ret || res.status)
			failed++;
		head = (head + 1) % depth;
		count--;
		done++;
	}

	printf("frac-submit-loop: %lu jobs on %d queue(s) (", done, nqueues);
	for (int q = 0; q < nqueues; q++)
		printf("%s%u", q ? "," : "", queues[q]);
	printf("), ops ");
	for (int o = 0; o < nops; o++)
		printf("%s%s", o ? "," : "", frac_op_name(ops[o]));
	printf(", depth %lu: %d failed\n", depth, failed);

	frac_bo_destroy(&dev, &bufs.src);
	frac_bo_destroy(&dev, &bufs.dst);
	frac_bo_destroy(&dev, &bufs.a);
	frac_bo_destroy(&dev, &bufs.b);
	frac_bo_destroy(&dev, &bufs.c);
	frac_close(&dev);
	return failed ? 1 : 0;

bad_arg:
	fprintf(stderr, "frac-submit-loop: bad value '%s' for -%c\n", optarg, opt);
	return 2;
}
