// SPDX-License-Identifier: MIT
/*
 * fracbench: latency, throughput and bandwidth of jobs on a FRAC device.
 *
 * Modes:
 *   latency     one job in flight (QD1): SUBMIT called -> WAIT returns, per job
 *   throughput  --qdepth jobs in flight per thread, spread over --queues queues
 *   bandwidth   large copies (default 64 MiB) at QD2, GB/s
 *   mixed       copy, CRC32C, fill and GEMM jobs in turn, at --qdepth
 *
 * Results: jobs/s, GB/s, and the round trip's percentiles; -j prints JSON.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libfrac.h"

enum mode { MODE_LATENCY, MODE_THROUGHPUT, MODE_BANDWIDTH, MODE_MIXED };

static const char *const mode_names[] = { "latency", "throughput", "bandwidth", "mixed" };

static struct env {
	enum mode mode;
	int op;			/* -1: the mode's default */
	uint64_t size;		/* bytes per job; GEMM: dimension */
	unsigned int qdepth;
	unsigned int batch;	/* jobs per SUBMIT_BATCH; 1: SUBMIT */
	unsigned int queues;
	unsigned int threads;
	uint64_t jobs;		/* per thread */
	double seconds;		/* 0: run --jobs */
	unsigned int warmup;
	int device;
	bool devmem;
	bool json;
	bool verify;
	bool local;		/* SUBMIT_LOCAL_QUEUE instead of --queues */
} env = {
	.mode = MODE_LATENCY, .op = -1, .size = 0, .qdepth = 1, .batch = 1, .queues = 0,
	.threads = 1, .jobs = 1000, .warmup = 50, .device = -1,
};

const char *argp_program_version = "fracbench 1.0";
static const char doc[] =
"fracbench: measure job latency, throughput and DMA bandwidth on a FRAC device.\n"
"\n"
"EXAMPLES:\n"
"    fracbench                        # QD1 round trip of NOP jobs\n"
"    fracbench -m throughput -d 32    # 32 jobs in flight over all queues\n"
"    fracbench -m throughput -d 32 -b 8   # ... submitted 8 to an ioctl\n"
"    fracbench -m bandwidth -s 64M    # 64 MiB copies, GB/s\n"
"    fracbench -m latency -o copy -s 4k -j\n";

static const struct argp_option opts[] = {
	{ "mode", 'm', "MODE", 0, "latency (default), throughput, bandwidth, mixed", 0 },
	{ "op", 'o', "OP", 0, "nop, copy, fill, crc32c, gemm, timestamp", 0 },
	{ "size", 's', "BYTES", 0, "bytes per job (k, M, G suffixes); GEMM: dimension", 0 },
	{ "qdepth", 'd', "N", 0, "jobs in flight per thread (1..1024)", 0 },
	{ "batch", 'b', "N", 0,
	  "submit N jobs (1..64, <= --qdepth) to one queue per ioctl (SUBMIT_BATCH; default 1: SUBMIT)",
	  0 },
	{ "queues", 'q', "N", 0, "hardware queues to use (default: all)", 0 },
	{ "threads", 't', "N", 0, "submitting threads (1..64)", 0 },
	{ "jobs", 'n', "N", 0, "jobs per thread (default 1000)", 0 },
	{ "time", 'T', "SECONDS", 0, "run for this long instead of --jobs", 0 },
	{ "warmup", 'W', "N", 0, "jobs per thread before measuring (default 50)", 0 },
	{ "device", 'D', "INDEX", 0, "/dev/accel/accelINDEX (default: the first frac)", 0 },
	{ "devmem", 'M', NULL, 0, "operands in device memory", 0 },
	{ "local-queue", 'L', NULL, 0,
	  "each job on the queue whose interrupt is on the submitting CPU", 0 },
	{ "verify", 'V', NULL, 0, "check results of copy/fill/crc32c jobs", 0 },
	{ "json", 'j', NULL, 0, "JSON output", 0 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{},
};

static int parse_u64(const char *s, uint64_t max, uint64_t *out, bool suffix)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	if (suffix && *end) {
		switch (*end) {
		case 'k': case 'K': v <<= 10; break;
		case 'm': case 'M': v <<= 20; break;
		case 'g': case 'G': v <<= 30; break;
		default: return -1;
		}
		end++;
	}
	if (*end || v > max || *s == '-')
		return -1;
	*out = v;
	return 0;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	uint64_t v;
	size_t i;

	switch (key) {
	case 'h':
		argp_state_help(state, stderr, ARGP_HELP_STD_HELP);
		break;
	case 'm':
		for (i = 0; i < 4 && strcmp(arg, mode_names[i]); i++)
			;
		if (i == 4)
			argp_failure(state, 2, 0, "invalid mode '%s'", arg);
		env.mode = i;
		break;
	case 'o':
		env.op = frac_op_parse(arg);
		if (env.op < 0)
			argp_failure(state, 2, 0, "invalid op '%s'", arg);
		break;
	case 's':
		if (parse_u64(arg, 4ULL << 30, &v, true) || !v)
			argp_failure(state, 2, 0, "invalid size '%s'", arg);
		env.size = v;
		break;
	case 'd':
		if (parse_u64(arg, 1024, &v, false) || !v)
			argp_failure(state, 2, 0, "invalid queue depth '%s'", arg);
		env.qdepth = v;
		break;
	case 'b':
		if (parse_u64(arg, DRM_FRAC_MAX_BATCH, &v, false) || !v)
			argp_failure(state, 2, 0, "invalid batch '%s'", arg);
		env.batch = v;
		break;
	case 'q':
		if (parse_u64(arg, 16, &v, false) || !v)
			argp_failure(state, 2, 0, "invalid queue count '%s'", arg);
		env.queues = v;
		break;
	case 't':
		if (parse_u64(arg, 64, &v, false) || !v)
			argp_failure(state, 2, 0, "invalid thread count '%s'", arg);
		env.threads = v;
		break;
	case 'n':
		if (parse_u64(arg, 1ULL << 40, &v, false) || !v)
			argp_failure(state, 2, 0, "invalid job count '%s'", arg);
		env.jobs = v;
		break;
	case 'T': {
		char *end;

		errno = 0;
		env.seconds = strtod(arg, &end);
		if (errno || *end || end == arg || !(env.seconds > 0) || env.seconds > 86400)
			argp_failure(state, 2, 0, "invalid time '%s'", arg);
		break;
	}
	case 'W':
		if (parse_u64(arg, 1000000, &v, false))
			argp_failure(state, 2, 0, "invalid warmup '%s'", arg);
		env.warmup = v;
		break;
	case 'D':
		if (parse_u64(arg, 63, &v, false))
			argp_failure(state, 2, 0, "invalid device '%s'", arg);
		env.device = v;
		break;
	case 'M':
		env.devmem = true;
		break;
	case 'L':
		env.local = true;
		break;
	case 'V':
		env.verify = true;
		break;
	case 'j':
		env.json = true;
		break;
	case ARGP_KEY_ARG:
		argp_failure(state, 2, 0, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct worker {
	pthread_t thread;
	unsigned int id;
	struct frac_dev *dev;
	struct frac_bo src;
	struct frac_bo *dst;	/* one per queue-depth slot: no false dependencies */
	uint64_t *lat;		/* round trips of measured jobs, ns */
	uint64_t nlat, cap;
	uint64_t jobs, bytes, errors;
	uint64_t t0, t1;
	int ret;
};

static struct frac_dev dev;
static volatile bool stop_flag;

static int job_op(uint64_t seq)
{
	static const int mixed[] = { DRM_FRAC_OP_COPY, DRM_FRAC_OP_CRC32C, DRM_FRAC_OP_FILL,
				     DRM_FRAC_OP_GEMM };

	if (env.mode == MODE_MIXED && env.op < 0)
		return mixed[seq % 4];
	return env.op;
}

static int build_job(struct worker *w, uint64_t seq, uint32_t slot, struct frac_cmdlist *cl)
{
	struct frac_bo *dst = &w->dst[slot];
	uint32_t n;

	frac_cmdlist_init(cl);
	switch (job_op(seq)) {
	case DRM_FRAC_OP_NOP:
		return frac_cmd_nop(cl);
	case DRM_FRAC_OP_COPY:
		return frac_cmd_copy(cl, dst, 0, &w->src, 0, env.size);
	case DRM_FRAC_OP_FILL:
		return frac_cmd_fill(cl, dst, 0, env.size, (uint32_t)seq);
	case DRM_FRAC_OP_CRC32C:
		return frac_cmd_crc32c(cl, &w->src, 0, env.size, 0);
	case DRM_FRAC_OP_GEMM:
		n = env.mode == MODE_MIXED ? 32 : (uint32_t)env.size;
		return frac_cmd_gemm(cl, DRM_FRAC_GEMM_FP32, n, n, n, &w->src, 0, &w->src, 0,
				     dst, 0);
	case DRM_FRAC_OP_TIMESTAMP:
		return frac_cmd_timestamp(cl, NULL, 0);
	}
	return -EINVAL;
}

static uint64_t job_bytes(uint64_t seq)
{
	/* Bytes the job produced or consumed once: a copy of N bytes counts N, like memcpy. */
	switch (job_op(seq)) {
	case DRM_FRAC_OP_COPY:
	case DRM_FRAC_OP_FILL:
	case DRM_FRAC_OP_CRC32C:
		return env.size;
	default:
		return 0;
	}
}

static void record(struct worker *w, uint64_t ns)
{
	if (w->nlat == w->cap) {
		uint64_t cap = w->cap ? w->cap * 2 : 4096;
		uint64_t *p = realloc(w->lat, cap * sizeof(*p));

		if (!p)
			return;
		w->lat = p;
		w->cap = cap;
	}
	w->lat[w->nlat++] = ns;
}

static int verify_job(struct worker *w, uint64_t seq, uint32_t slot,
		      const struct frac_job_result *r)
{
	const uint8_t *dst = w->dst[slot].map;

	switch (job_op(seq)) {
	case DRM_FRAC_OP_COPY:
		return memcmp(dst, w->src.map, env.size) ? -1 : 0;
	case DRM_FRAC_OP_CRC32C:
		return (uint32_t)r->result == frac_crc32c(0, w->src.map, env.size) ? 0 : -1;
	case DRM_FRAC_OP_FILL:
		for (uint64_t i = 0; i < env.size; i++)
			if (dst[i] != (uint8_t)((uint32_t)seq >> (8 * (i & 3))))
				return -1;
		return 0;
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint32_t *ids = calloc(env.qdepth, sizeof(*ids));
	uint64_t *sub_ns = calloc(env.qdepth, sizeof(*sub_ns));
	uint64_t *seqs = calloc(env.qdepth, sizeof(*seqs));
	uint64_t total = env.warmup + env.jobs, seq = 0, done = 0, head = 0, inflight = 0;
	uint64_t deadline = 0, t_sub;
	struct frac_cmdlist *cls = calloc(env.batch, sizeof(*cls));
	const struct frac_cmdlist *clp[DRM_FRAC_MAX_BATCH];
	uint32_t batch_ids[DRM_FRAC_MAX_BATCH];

	for (unsigned int k = 0; k < env.batch; k++)
		clp[k] = cls ? &cls[k] : NULL;
	if (!ids || !sub_ns || !seqs || !cls) {
		w->ret = -ENOMEM;
		goto out;
	}
	for (;;) {
		bool measuring;

		/* Fill the window: a batch at a time, each to one queue. */
		while (inflight + env.batch <= env.qdepth && !stop_flag &&
		       (env.seconds > 0 || seq < total)) {
			uint32_t n = env.seconds > 0 || total - seq >= env.batch ?
				     env.batch : (uint32_t)(total - seq);
			uint32_t q = env.local ? FRAC_QUEUE_LOCAL :
				     (w->id + seq / env.batch) % env.queues;
			uint32_t first = (head + inflight) % env.qdepth, k;
			int ret = 0;

			for (k = 0; k < n && !ret; k++)
				ret = build_job(w, seq + k, (first + k) % env.qdepth, &cls[k]);
			/*
			 * The round trip starts before SUBMIT: the ioctl is part
			 * of it, as the submission is part of fio's total latency.
			 */
			t_sub = now_ns();
			if (!ret && env.batch == 1)
				ret = frac_submit(w->dev, q, &cls[0], NULL, batch_ids);
			else if (!ret)
				ret = frac_submit_batch(w->dev, q, clp, n, NULL, batch_ids);
			if (ret) {
				w->ret = ret;
				goto out;
			}
			for (k = 0; k < n; k++) {
				uint32_t slot = (first + k) % env.qdepth;

				ids[slot] = batch_ids[k];
				sub_ns[slot] = t_sub;
				seqs[slot] = seq++;
			}
			inflight += n;
		}
		if (!inflight)
			break;

		/* Reap the oldest: jobs on one queue end in order. */
		{
			struct frac_job_result r;
			uint64_t t;
			int ret = frac_wait(w->dev, ids[head], -1, &r);

			t = now_ns();
			if (ret) {
				w->ret = ret;
				goto out;
			}
			measuring = seqs[head] >= env.warmup;
			if (seqs[head] == env.warmup || (!env.warmup && !done)) {
				w->t0 = sub_ns[head];
				if (env.seconds > 0)
					deadline = w->t0 + (uint64_t)(env.seconds * 1e9);
			}
			if (r.status)
				w->errors++;
			else if (env.verify && verify_job(w, seqs[head], head, &r))
				w->errors++;
			if (measuring) {
				record(w, t - sub_ns[head]);
				w->jobs++;
				w->bytes += job_bytes(seqs[head]);
				w->t1 = t;
			}
			head = (head + 1) % env.qdepth;
			inflight--;
			done++;
			if (deadline && t >= deadline)
				stop_flag = true;
		}
	}
out:
	free(ids);
	free(sub_ns);
	free(seqs);
	free(cls);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t pct(const uint64_t *v, uint64_t n, double p)
{
	uint64_t i;

	if (!n)
		return 0;
	i = (uint64_t)(p / 100.0 * (n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static int setup_worker(struct worker *w, unsigned int id)
{
	uint32_t flags = env.devmem ? DRM_FRAC_BO_DEVMEM : 0;
	uint64_t bytes = env.size;
	int ret;

	w->id = id;
	w->dev = &dev;
	if (job_op(0) == DRM_FRAC_OP_GEMM || env.mode == MODE_MIXED) {
		uint64_t n = env.mode == MODE_MIXED ? 32 : env.size;

		bytes = bytes > n * n * 4 ? bytes : n * n * 4;
	}
	w->dst = calloc(env.qdepth, sizeof(*w->dst));
	if (!w->dst)
		return -ENOMEM;
	ret = frac_bo_create(&dev, bytes, flags, &w->src);
	if (!ret)
		ret = frac_bo_map(&dev, &w->src);
	for (unsigned int i = 0; i < env.qdepth && !ret; i++) {
		ret = frac_bo_create(&dev, bytes, flags, &w->dst[i]);
		if (!ret)
			ret = frac_bo_map(&dev, &w->dst[i]);
	}
	if (ret)
		return ret;
	for (uint64_t i = 0; i < bytes; i++)
		((uint8_t *)w->src.map)[i] = (uint8_t)(i * 131 + id);
	if (job_op(0) == DRM_FRAC_OP_GEMM || env.mode == MODE_MIXED)
		for (uint64_t i = 0; i < bytes / 4; i++)
			((float *)w->src.map)[i] = (float)(i % 7) * 0.25f;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };
	struct worker *w;
	uint64_t *all, n = 0, jobs = 0, bytes = 0, errors = 0, t0 = UINT64_MAX, t1 = 0;
	double secs, sum = 0;
	char qdesc[64];
	int ret;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;

	/* Per-mode defaults. */
	if (env.op < 0 && env.mode != MODE_MIXED)
		env.op = env.mode == MODE_BANDWIDTH ? DRM_FRAC_OP_COPY : DRM_FRAC_OP_NOP;
	if (!env.size)
		env.size = env.mode == MODE_BANDWIDTH ? 64ULL << 20 :
			   env.op == DRM_FRAC_OP_GEMM ? 64 : 4096;
	if (env.mode == MODE_LATENCY)
		env.qdepth = 1;
	else if (env.mode == MODE_BANDWIDTH && env.qdepth == 1)
		env.qdepth = 2;
	if (env.batch > env.qdepth) {
		fprintf(stderr, "fracbench: --batch %u exceeds the queue depth %u\n", env.batch,
			env.qdepth);
		return 2;
	}
	if (env.mode == MODE_BANDWIDTH && env.jobs == 1000)
		env.jobs = 20;
	if (env.mode == MODE_BANDWIDTH && env.warmup == 50)
		env.warmup = 2;
	if (env.op == DRM_FRAC_OP_GEMM && env.size > 1024) {
		fprintf(stderr, "fracbench: GEMM size is a dimension, 1..1024\n");
		return 2;
	}

	ret = frac_open(env.device, &dev);
	if (ret) {
		fprintf(stderr, "fracbench: cannot open a frac device: %s\n", strerror(-ret));
		return 1;
	}
	if (!env.queues)
		env.queues = dev.num_queues;
	if (env.queues > dev.num_queues) {
		fprintf(stderr, "fracbench: %u queues asked, device has %u\n", env.queues,
			dev.num_queues);
		return 2;
	}

	w = calloc(env.threads, sizeof(*w));
	if (!w)
		return 1;
	for (unsigned int i = 0; i < env.threads; i++) {
		ret = setup_worker(&w[i], i);
		if (ret) {
			fprintf(stderr, "fracbench: buffer setup failed: %s\n", strerror(-ret));
			return 1;
		}
	}
	for (unsigned int i = 0; i < env.threads; i++)
		pthread_create(&w[i].thread, NULL, worker_main, &w[i]);
	for (unsigned int i = 0; i < env.threads; i++) {
		pthread_join(w[i].thread, NULL);
		if (w[i].ret) {
			fprintf(stderr, "fracbench: thread %u: %s\n", i, strerror(-w[i].ret));
			return 1;
		}
		n += w[i].nlat;
		jobs += w[i].jobs;
		bytes += w[i].bytes;
		errors += w[i].errors;
		if (w[i].t0 && w[i].t0 < t0)
			t0 = w[i].t0;
		if (w[i].t1 > t1)
			t1 = w[i].t1;
	}
	all = malloc((n ? n : 1) * sizeof(*all));
	if (!all)
		return 1;
	n = 0;
	for (unsigned int i = 0; i < env.threads; i++) {
		memcpy(all + n, w[i].lat, w[i].nlat * sizeof(*all));
		n += w[i].nlat;
	}
	qsort(all, n, sizeof(*all), cmp_u64);
	for (uint64_t i = 0; i < n; i++)
		sum += all[i];
	secs = t1 > t0 ? (t1 - t0) / 1e9 : 0;
	if (env.local)
		snprintf(qdesc, sizeof(qdesc), "the submitting CPU's queue");
	else
		snprintf(qdesc, sizeof(qdesc), "%u queues", env.queues);

	if (env.json) {
		printf("{\"mode\":\"%s\",\"op\":\"%s\",\"size\":%" PRIu64 ",\"qdepth\":%u,"
		       "\"batch\":%u,\"queues\":%u,\"local_queue\":%s,\"threads\":%u,\"devmem\":%s,"
		       "\"jobs\":%" PRIu64
		       ",\"errors\":%" PRIu64 ",\"seconds\":%.6f,\"jobs_per_sec\":%.1f,"
		       "\"gbytes_per_sec\":%.4f,\"lat_ns\":{\"min\":%" PRIu64 ",\"avg\":%.0f,"
		       "\"p50\":%" PRIu64 ",\"p90\":%" PRIu64 ",\"p99\":%" PRIu64 ",\"p99_9\":%"
		       PRIu64 ",\"max\":%" PRIu64 "}}\n",
		       mode_names[env.mode], env.op < 0 ? "mixed" : frac_op_name(env.op), env.size,
		       env.qdepth, env.batch, env.queues, env.local ? "true" : "false", env.threads,
		       env.devmem ? "true" : "false", jobs,
		       errors, secs, secs ? jobs / secs : 0, secs ? bytes / secs / 1e9 : 0,
		       n ? all[0] : 0, n ? sum / n : 0, pct(all, n, 50), pct(all, n, 90),
		       pct(all, n, 99), pct(all, n, 99.9), n ? all[n - 1] : 0);
	} else {
		printf("fracbench %s: op %s, %" PRIu64 " bytes, qdepth %u x %u threads, %s%s",
		       mode_names[env.mode], env.op < 0 ? "mixed" : frac_op_name(env.op), env.size,
		       env.qdepth, env.threads, qdesc, env.devmem ? ", device memory" : "");
		if (env.batch > 1)
			printf(", %u jobs per SUBMIT_BATCH", env.batch);
		printf("\n");
		printf("  jobs %" PRIu64 " in %.3f s: %.1f jobs/s, %.3f GB/s, %" PRIu64 " errors\n",
		       jobs, secs, secs ? jobs / secs : 0, secs ? bytes / secs / 1e9 : 0, errors);
		printf("  round trip us: min %.1f avg %.1f p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f\n",
		       n ? all[0] / 1e3 : 0, n ? sum / n / 1e3 : 0, pct(all, n, 50) / 1e3,
		       pct(all, n, 90) / 1e3, pct(all, n, 99) / 1e3, pct(all, n, 99.9) / 1e3,
		       n ? all[n - 1] / 1e3 : 0);
	}
	for (unsigned int i = 0; i < env.threads; i++) {
		frac_bo_destroy(&dev, &w[i].src);
		for (unsigned int d = 0; d < env.qdepth; d++)
			frac_bo_destroy(&dev, &w[i].dst[d]);
		free(w[i].dst);
		free(w[i].lat);
	}
	free(w);
	free(all);
	frac_close(&dev);
	return errors ? 1 : 0;
}
