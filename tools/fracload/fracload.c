// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The frac authors
 *
 * fracload: the one workload generator of frac. It submits N single-command
 * jobs over libfrac, cycling through the given queues and, for each round of
 * queues, the next op, keeping up to DEPTH jobs in flight (the oldest is
 * waited for first), and says what it did: what the BPF tools, fractop, the
 * perf scripts and the benchmarks should then count. The tests of all of
 * them drive it (tools/fracload/README.md lists them).
 *
 * With -j it also gives each job's own ground truth: CLOCK_MONOTONIC (the
 * clock of bpf_ktime_get_ns()) just before its SUBMIT and just after its WAIT
 * returned, a window that holds every tracer's submit -> fence-signalled
 * interval, and its device time from the completion record, which that
 * interval holds.
 *
 * A flood (-d as large as -n) submits every job before it waits for any. Its
 * own ground truth of how many were in flight at once: right after the last
 * SUBMIT it polls every job (WAIT with timeout 0); "inflight_after_submit" is
 * how many had not ended then, a lower bound of the jobs in flight together
 * (each of them was in flight from its SUBMIT to after the last one's).
 *
 * With -U every job but the last is submitted with DRM_FRAC_SUBMIT_NO_JOB_ID
 * (one queue only: waiting for the last job waits for them all, a queue runs
 * its jobs in order); such jobs have job 0 and no status of their own.
 *
 * SIGINT or SIGTERM ends the run early and cleanly: at most the job being
 * submitted then goes after it, the jobs in flight are waited for, and the
 * summary (exit status included) covers the jobs actually submitted;
 * "stopped" says so. A test can thus run a workload for as long as it needs
 * one and still know exactly what ran. With -U the next job, with an id, is
 * the last. A second signal takes its default action.
 *
 * Exit status: 0, 1 when a job failed or the device could not be used, 2 for
 * a bad argument (one line on stderr).
 */
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "frac_hw.h"		/* FRAC_MAX_QUEUES */
#include "libfrac.h"

#define EXIT_USAGE	2
#define MAX_OPS		16
#define MAX_DEPTH	DRM_FRAC_MAX_UNWAITED	/* job ids a file may hold */
#define MAX_JOBS	1000000
#define MAX_SIZE	(1UL << 24)
#define GEMM_DIM	16

static struct env {
	int device;		/* -1: the first frac device */
	unsigned long jobs;
	unsigned int queues[FRAC_MAX_QUEUES];
	int nqueues;
	unsigned int ops[MAX_OPS];
	int nops;
	unsigned long size;	/* bytes per copy/fill/crc32c */
	unsigned long qdepth;
	unsigned long batch;	/* jobs per SUBMIT_BATCH; 1: SUBMIT */
	bool noid;
	bool json;
} env = {
	.device = -1, .jobs = 16, .queues = { 0 }, .nqueues = 1,
	.ops = { DRM_FRAC_OP_COPY }, .nops = 1, .size = 16384, .qdepth = 4,
	.batch = 1,
};

const char *argp_program_version = "fracload 1.0";
static const char doc[] =
"fracload: a known workload of FRAC jobs, and its own count of what it ran.\n"
"\n"
"Job i goes to the (i mod Q)th of the Q queues of --queue and runs the next op\n"
"of --op at each round of queues: -n 8 -q 0,2 -o copy,crc32c gives each of the\n"
"two queues copy, crc32c, copy, crc32c. With --batch N, each N jobs in a row\n"
"are one ioctl (DRM_IOCTL_FRAC_SUBMIT_BATCH) and take the place of one job:\n"
"one queue, one op.\n"
"Ops: nop, copy, fill, crc32c, gemm (16x16x16 fp32), timestamp.\n"
"\n"
"EXAMPLES:\n"
"    fracload -n 48 -q 0,1,2,3 -o copy,gemm -j  # JSON: the summary, every job\n"
"    fracload -n 256 -q 0 -o nop -d 256         # a flood: all in flight\n"
"    fracload -n 1000000 -q 0,1 -d 8 &          # a load until SIGTERM\n"
"\v"
"Exit status: 0; 1 when a job failed or the device could not be used; 2 for a\n"
"bad argument, said in one line.\n";

static const struct argp_option opts[] = {
	{ "device", 'D', "INDEX", 0, "/dev/accel/accelINDEX (default: the first frac)", 0 },
	{ "jobs", 'n', "N", 0, "jobs in all, 1..1000000 (default 16)", 0 },
	{ "queue", 'q', "Q[,Q...]", 0, "queues, round robin (default 0)", 0 },
	{ "op", 'o', "OP[,OP...]", 0, "ops, the next at each round of queues (default copy)", 0 },
	{ "size", 's', "BYTES", 0,
	  "bytes per copy/fill/crc32c, a multiple of 4096 up to 16 MiB (default 16384)", 0 },
	{ "qdepth", 'd', "N", 0, "jobs in flight at most, 1..4096 (default 4)", 0 },
	{ "batch", 'b', "N", 0,
	  "submit N jobs at a time to one queue, one ioctl (SUBMIT_BATCH), 1..64 (default 1)", 0 },
	{ "no-job-id", 'U', NULL, 0,
	  "every job but the last without a job id (DRM_FRAC_SUBMIT_NO_JOB_ID; one queue)", 0 },
	{ "json", 'j', NULL, 0, "the summary as one JSON object, with every job's ground truth", 0 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{},
};

/* A bad argument: "fracload: invalid WHAT 'ARG'", one line, exit 2. */
static void __attribute__((noreturn)) usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "fracload: invalid %s '%s'\n", what, arg);
	exit(EXIT_USAGE);
}

/* A decimal number in [@min, @max] into @out; -1 if @s is not one. */
static int to_ulong(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || *end || !*s || *s == '-' || *out < min || *out > max ? -1 : 0;
}

static unsigned long parse_num(const char *s, const char *what, unsigned long min,
			       unsigned long max)
{
	unsigned long v;

	if (to_ulong(s, min, max, &v))
		usage_error(what, s);
	return v;
}

/* A comma list of queue numbers (@ops false) or op names into @out; returns the count. */
static int parse_list(const char *arg, const char *what, unsigned int *out, int max, bool ops)
{
	char *s = strdup(arg), *tok, *save = NULL;
	int n = 0;

	if (!s) {
		fprintf(stderr, "fracload: out of memory\n");
		exit(1);
	}
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long v;
		int op;

		if (n == max)
			break;
		if (ops) {
			op = frac_op_parse(tok);
			if (op < 0)
				break;
			v = op;
		} else if (to_ulong(tok, 0, FRAC_MAX_QUEUES - 1, &v)) {
			break;
		}
		out[n++] = v;
	}
	free(s);
	if (tok || !n)
		usage_error(what, arg);
	return n;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	static FILE *devnull;

	switch (key) {
	case ARGP_KEY_INIT:
		/*
		 * getopt already said what is wrong with an option in one line; argp's
		 * "Try `fracload --help'" line after it goes to /dev/null, so a bad
		 * argument is always one line.
		 */
		if (!devnull)
			devnull = fopen("/dev/null", "w");
		if (devnull)
			state->err_stream = devnull;
		break;
	case 'h':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		break;
	case 'D':
		env.device = parse_num(arg, "device", 0, 63);
		break;
	case 'n':
		env.jobs = parse_num(arg, "job count", 1, MAX_JOBS);
		break;
	case 'q':
		env.nqueues = parse_list(arg, "queue list", env.queues, FRAC_MAX_QUEUES, false);
		break;
	case 'o':
		env.nops = parse_list(arg, "op list", env.ops, MAX_OPS, true);
		break;
	case 's':
		env.size = parse_num(arg, "size", 1, MAX_SIZE);
		if (env.size % 4096) {
			fprintf(stderr, "fracload: size '%s' is not a multiple of 4096\n", arg);
			exit(EXIT_USAGE);
		}
		break;
	case 'd':
		env.qdepth = parse_num(arg, "queue depth", 1, MAX_DEPTH);
		break;
	case 'b':
		env.batch = parse_num(arg, "batch", 1, DRM_FRAC_MAX_BATCH);
		break;
	case 'U':
		env.noid = true;
		break;
	case 'j':
		env.json = true;
		break;
	case ARGP_KEY_ARG:
		usage_error("argument", arg);
		break;
	case ARGP_KEY_END:
		if (env.noid && env.nqueues != 1) {
			fprintf(stderr, "fracload: -U takes one queue\n");
			exit(EXIT_USAGE);
		}
		if (env.batch > 1 && env.noid) {
			fprintf(stderr, "fracload: -U takes no --batch\n");
			exit(EXIT_USAGE);
		}
		if (env.batch > env.qdepth) {
			fprintf(stderr, "fracload: --batch %lu exceeds the queue depth %lu\n",
				env.batch, env.qdepth);
			exit(EXIT_USAGE);
		}
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* DMA directions of host BOs, as enum dma_data_direction and the frac_dma_* events number them. */
enum { DIR_BIDIRECTIONAL, DIR_TO_DEVICE, DIR_FROM_DEVICE, NR_DIRS };
static const char *const dir_names[NR_DIRS] = { "bidirectional", "to_device", "from_device" };

/*
 * The BOs the ops need: src/dst for copy, fill, crc32c and timestamp, a/b/c for GEMM,
 * each mapped in the direction its use needs: what the device
 * only reads (src, GEMM A and B) DRM_FRAC_BO_TO_DEVICE, what it only writes (dst,
 * GEMM C) DRM_FRAC_BO_FROM_DEVICE.
 */
struct buffers {
	struct frac_bo src, dst, a, b, c;
	int count;
	unsigned long long bytes;
	unsigned long long dir_count[NR_DIRS], dir_bytes[NR_DIRS];
};

struct inflight {
	uint32_t id;
	unsigned int op;
	bool done;		/* seen ended by the poll after the last SUBMIT */
	unsigned long n;	/* index in the job records */
};

/* One job as the workload saw it (for -j). */
struct job_rec {
	uint32_t id;
	bool noid;	/* submitted with DRM_FRAC_SUBMIT_NO_JOB_ID */
	unsigned int queue, op;
	int status;
	unsigned long long submit_ns, done_ns, dev_ns;
};

/* What the run did, for the summary. */
struct tally {
	unsigned long jobs, noid, inflight_after_submit;
	unsigned long per_queue[FRAC_MAX_QUEUES], per_op[FRAC_NR_OPS];
	unsigned long long job_bytes[FRAC_NR_OPS];
	int failed;
	bool stopped;
	struct job_rec *recs;
};

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int bo_add(struct frac_dev *dev, struct buffers *b, uint64_t size, uint32_t flags,
		  struct frac_bo *bo)
{
	int ret = frac_bo_create(dev, size, flags, bo);
	int dir = flags & DRM_FRAC_BO_TO_DEVICE ? DIR_TO_DEVICE :
		  flags & DRM_FRAC_BO_FROM_DEVICE ? DIR_FROM_DEVICE : DIR_BIDIRECTIONAL;

	if (!ret) {
		b->count++;
		b->bytes += bo->size;
		b->dir_count[dir]++;
		b->dir_bytes[dir] += bo->size;
	}
	return ret;
}

static int buffers_create(struct frac_dev *dev, struct buffers *b)
{
	const uint64_t gemm = GEMM_DIM * GEMM_DIM * 4;
	bool need_gemm = false, need_buf = false;
	int i, ret;

	for (i = 0; i < env.nops; i++) {
		need_gemm |= env.ops[i] == DRM_FRAC_OP_GEMM;
		need_buf |= env.ops[i] != DRM_FRAC_OP_GEMM && env.ops[i] != DRM_FRAC_OP_NOP;
	}

	if (need_buf && ((ret = bo_add(dev, b, env.size, DRM_FRAC_BO_TO_DEVICE, &b->src)) ||
			 (ret = bo_add(dev, b, env.size, DRM_FRAC_BO_FROM_DEVICE, &b->dst))))
		return ret;
	if (need_gemm && ((ret = bo_add(dev, b, gemm, DRM_FRAC_BO_TO_DEVICE, &b->a)) ||
			  (ret = bo_add(dev, b, gemm, DRM_FRAC_BO_TO_DEVICE, &b->b)) ||
			  (ret = bo_add(dev, b, gemm, DRM_FRAC_BO_FROM_DEVICE, &b->c))))
		return ret;
	return 0;
}

static void buffers_destroy(struct frac_dev *dev, struct buffers *b)
{
	frac_bo_destroy(dev, &b->src);
	frac_bo_destroy(dev, &b->dst);
	frac_bo_destroy(dev, &b->a);
	frac_bo_destroy(dev, &b->b);
	frac_bo_destroy(dev, &b->c);
}

/* One command of @op into @cl; returns the bytes it moves. */
static unsigned long long build_job(struct frac_cmdlist *cl, unsigned int op,
				    const struct buffers *b)
{
	frac_cmdlist_init(cl);
	switch (op) {
	case DRM_FRAC_OP_NOP:
		frac_cmd_nop(cl);
		return 0;
	case DRM_FRAC_OP_COPY:
		frac_cmd_copy(cl, &b->dst, 0, &b->src, 0, env.size);
		return 2 * env.size;
	case DRM_FRAC_OP_FILL:
		frac_cmd_fill(cl, &b->dst, 0, env.size, 0x5a5a5a5a);
		return env.size;
	case DRM_FRAC_OP_CRC32C:
		frac_cmd_crc32c(cl, &b->src, 0, env.size, 0);
		return env.size;
	case DRM_FRAC_OP_GEMM:
		frac_cmd_gemm(cl, DRM_FRAC_GEMM_FP32, GEMM_DIM, GEMM_DIM, GEMM_DIM,
			      &b->a, 0, &b->b, 0, &b->c, 0);
		return 3 * GEMM_DIM * GEMM_DIM * 4;
	case DRM_FRAC_OP_TIMESTAMP:
		frac_cmd_timestamp(cl, &b->dst, 0);
		return 8;
	}
	return 0;
}

/* SUBMIT without a job id: frac_submit() has no way to ask for one. */
static int submit_noid(struct frac_dev *dev, unsigned int queue, const struct frac_cmdlist *cl)
{
	struct drm_frac_submit sub = {
		.cmds = (uintptr_t)cl->cmds, .cmd_count = cl->count,
		.cmd_size = sizeof(struct drm_frac_cmd), .queue = queue,
		.flags = DRM_FRAC_SUBMIT_NO_JOB_ID,
	};
	int ret;

	do
		ret = ioctl(dev->fd, DRM_IOCTL_FRAC_SUBMIT, &sub);
	while (ret && (errno == EINTR || errno == EAGAIN));
	return ret ? -errno : 0;
}

/* Record the end of a job: WAIT returned @ret and, on success, @res. */
static void job_ended(struct tally *t, const struct inflight *f, int ret,
		      const struct frac_job_result *res)
{
	struct job_rec *r = &t->recs[f->n];

	r->done_ns = mono_ns();
	r->status = ret ? ret : res->status;
	r->dev_ns = ret ? 0 : res->t_end - res->t_start;
	if (ret || res->status) {
		fprintf(stderr, "fracload: %s job failed: %s\n", frac_op_name(f->op),
			strerror(ret ? -ret : -res->status));
		t->failed++;
	}
}

/*
 * The run: submit while fewer than --qdepth are in flight, else wait for the
 * oldest; once the last is submitted, poll every job in flight once.
 */
static int run(struct frac_dev *dev, const struct buffers *b, struct tally *t)
{
	static struct inflight fl[MAX_DEPTH];
	static struct frac_cmdlist cls[DRM_FRAC_MAX_BATCH];
	const struct frac_cmdlist *clp[DRM_FRAC_MAX_BATCH];
	unsigned long i, n, head = 0, tail = 0, njobs = env.jobs;
	uint32_t ids[DRM_FRAC_MAX_BATCH];
	struct frac_job_result res;
	bool polled = false;
	int ret;

	for (i = 0; i < DRM_FRAC_MAX_BATCH; i++)
		clp[i] = &cls[i];

	for (i = 0; i < njobs || tail < head; ) {
		if (stop_requested && !t->stopped) {
			t->stopped = true;
			if (i < njobs)
				njobs = env.noid ? i + 1 : i;
		}
		n = njobs - i < env.batch ? njobs - i : env.batch;
		if (i < njobs && head - tail + n <= env.qdepth) {
			unsigned long u = i / env.batch, k;
			unsigned int q = env.queues[u % env.nqueues];
			unsigned int op = env.ops[(u / env.nqueues) % env.nops];
			unsigned long long t0 = mono_ns();

			for (k = 0; k < n; k++) {
				struct job_rec *r = &t->recs[i + k];

				t->job_bytes[op] += build_job(&cls[k], op, b);
				r->queue = q;
				r->op = op;
				r->submit_ns = t0;
			}
			if (env.noid && i + 1 < njobs) {
				ret = submit_noid(dev, q, &cls[0]);
				t->recs[i].noid = true;
				t->noid++;
			} else {
				if (env.batch == 1)
					ret = frac_submit(dev, q, &cls[0], NULL, ids);
				else
					ret = frac_submit_batch(dev, q, clp, n, NULL, ids);
				for (k = 0; !ret && k < n; k++) {
					struct inflight *f = &fl[head % MAX_DEPTH];

					t->recs[i + k].id = ids[k];
					f->id = ids[k];
					f->n = i + k;
					f->op = op;
					f->done = false;
					head++;
				}
			}
			if (ret) {
				fprintf(stderr, "fracload: submit failed: %s\n", strerror(-ret));
				return ret;
			}
			t->per_queue[q] += n;
			t->per_op[op] += n;
			i += n;
			continue;
		}
		if (i == njobs && !polled) {
			/* Every job is submitted: which have not ended yet? */
			unsigned long k;

			for (k = tail; k < head; k++) {
				struct inflight *f = &fl[k % MAX_DEPTH];

				ret = frac_wait(dev, f->id, 0, &res);
				if (ret == -ETIME) {
					t->inflight_after_submit++;
					continue;
				}
				f->done = true;
				job_ended(t, f, ret, &res);
			}
			polled = true;
			continue;
		}
		if (!fl[tail % MAX_DEPTH].done) {
			struct inflight *f = &fl[tail % MAX_DEPTH];

			ret = frac_wait(dev, f->id, -1, &res);
			job_ended(t, f, ret, &res);
		}
		tail++;
	}
	t->jobs = njobs;
	return 0;
}

/* Print the map of @counts (of @n) whose entries are non-zero: {"key":count,...}. */
static void print_map(const char *name, const unsigned long *counts,
		      const unsigned long long *values, unsigned int n, bool op_keys)
{
	const char *sep = "";
	unsigned int i;

	printf(",\"%s\":{", name);
	for (i = 0; i < n; i++) {
		if (!counts[i])
			continue;
		if (op_keys)
			printf("%s\"%s\":", sep, frac_op_name(i));
		else
			printf("%s\"%u\":", sep, i);
		printf("%llu", values ? values[i] : (unsigned long long)counts[i]);
		sep = ",";
	}
	printf("}");
}

/* The JSON summary: bpf/README.md's "fracload" and "load_job" in its schema. */
static void print_json(const struct tally *t, const struct buffers *b)
{
	unsigned long i;

	printf("{\"schema_version\":2,\"pid\":%d,\"jobs\":%lu,\"noid_jobs\":%lu,"
	       "\"failed\":%d,\"inflight_after_submit\":%lu,\"host_bos\":%d,"
	       "\"host_bo_bytes\":%llu,\"stopped\":%s", getpid(), t->jobs, t->noid,
	       t->failed, t->inflight_after_submit, b->count, b->bytes,
	       t->stopped ? "true" : "false");
	for (i = 0; i < 2; i++) {
		int d;

		printf(",\"%s\":{", i ? "host_bo_bytes_by_dir" : "host_bos_by_dir");
		for (d = 0; d < NR_DIRS; d++)
			printf("%s\"%s\":%llu", d ? "," : "", dir_names[d],
			       i ? b->dir_bytes[d] : b->dir_count[d]);
		printf("}");
	}
	print_map("queues", t->per_queue, NULL, FRAC_MAX_QUEUES, false);
	print_map("ops", t->per_op, NULL, FRAC_NR_OPS, true);
	print_map("job_bytes", t->per_op, t->job_bytes, FRAC_NR_OPS, true);
	printf(",\"job_list\":[");
	for (i = 0; i < t->jobs; i++) {
		const struct job_rec *r = &t->recs[i];

		printf("%s{\"job\":%u,\"queue\":%u,\"op\":\"%s\",\"submit_ns\":%llu,",
		       i ? "," : "", r->id, r->queue, frac_op_name(r->op), r->submit_ns);
		if (r->noid)
			printf("\"status\":null,\"done_ns\":null,\"dev_ns\":null,"
			       "\"status_reason\":\"no job id (-U): not waited for\"}");
		else
			printf("\"status\":%d,\"done_ns\":%llu,\"dev_ns\":%llu,"
			       "\"status_reason\":null}", r->status, r->done_ns, r->dev_ns);
	}
	printf("]}\n");
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.doc = doc,
	};
	struct sigaction sa = { .sa_handler = on_stop_signal,
				.sa_flags = SA_RESTART | SA_RESETHAND };
	struct buffers bufs = {};
	struct tally tally = {};
	struct frac_dev dev;
	int i, ret;

	/* getopt's messages start with argv[0]: "fracload: ..." wherever it was run from. */
	argv[0] = "fracload";
	argp_err_exit_status = EXIT_USAGE;
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return EXIT_USAGE;

	/*
	 * Before the device: a stop at any time gets its summary. SA_RESTART: a
	 * WAIT in progress goes on and the loop sees the flag next; SA_RESETHAND:
	 * a second signal (a WAIT on a hung job) takes the default action.
	 */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL)) {
		fprintf(stderr, "fracload: sigaction: %s\n", strerror(errno));
		return 1;
	}
	ret = frac_open(env.device, &dev);
	if (ret) {
		fprintf(stderr, "fracload: no frac device: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < env.nqueues; i++) {
		if (env.queues[i] >= dev.num_queues) {
			fprintf(stderr, "fracload: queue %u out of range (device has %u)\n",
				env.queues[i], dev.num_queues);
			return EXIT_USAGE;
		}
	}
	tally.recs = calloc(env.jobs, sizeof(*tally.recs));
	ret = tally.recs ? buffers_create(&dev, &bufs) : -ENOMEM;
	if (ret) {
		/* -EINVAL on a frac.ko older than the BO directions */
		fprintf(stderr, "fracload: buffer allocation failed: %s\n", strerror(-ret));
		return 1;
	}
	if (run(&dev, &bufs, &tally))
		return 1;
	buffers_destroy(&dev, &bufs);
	frac_close(&dev);

	if (env.json)
		print_json(&tally, &bufs);
	else
		printf("fracload: %lu jobs on %d queue(s), %d op(s), %d failed; %d host BOs, "
		       "%llu bytes%s\n", tally.jobs, env.nqueues, env.nops, tally.failed,
		       bufs.count, bufs.bytes, tally.stopped ? "; stopped by a signal" : "");
	free(tally.recs);
	return tally.failed ? 1 : 0;
}
