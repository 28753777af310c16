// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The frac authors
 *
 * fracload: a known FRAC workload for testing the BPF tools. It submits N
 * single-command jobs, cycling through the given queues and, for each round
 * of queues, the next op, keeping up to DEPTH jobs in flight, and says what
 * it did (what the tools should then count). With -j it also gives each
 * job's own ground truth: CLOCK_MONOTONIC (the clock of bpf_ktime_get_ns())
 * just before its SUBMIT and just after its WAIT returned, a window that
 * holds every tracer's submit -> fence-signalled interval, and its device
 * time from the completion record, which that interval holds.
 *
 *
 * A flood (-D as large as -n) submits every job before it waits for any. Its
 * own ground truth of how many were in flight at once: right after the last
 * SUBMIT it polls every job (WAIT with timeout 0); "inflight_after_submit" is
 * how many had not ended then, a lower bound of the jobs in flight together
 * (each of them was in flight from its SUBMIT to after the last one's).
 *
 * With -U every job but the last is submitted with DRM_FRAC_SUBMIT_NO_JOB_ID
 * (one queue only: waiting for the last job waits for them all, a queue
 * runs its jobs in order); such jobs have job 0 and no status of their own.
 *
 * SIGINT or SIGTERM ends the run early and cleanly: at most the job being
 * submitted then goes after it, the jobs in flight are waited for, and the summary (exit status
 * included) covers the jobs actually submitted; "stopped" says so. A test can
 * thus run a workload for as long as it needs one and still know exactly
 * what ran. With -U the next job, with an id, is the last. A second signal
 * takes its default action.
 *
 * Usage: fracload [-d INDEX] [-n JOBS] [-q QUEUES] [-o OPS] [-s SIZE] [-D DEPTH] [-U] [-j]
 *   QUEUES  comma-separated queue numbers (default 0)
 *   OPS     comma-separated ops: nop, copy, fill, crc32c, gemm, timestamp (default copy)
 *   SIZE    bytes per copy/fill/crc32c, a multiple of 4096 (default 16384)
 *   DEPTH   jobs in flight at most, 1..4096 (DRM_FRAC_MAX_UNWAITED; default 4)
 *   -j      print the summary as one JSON object
 */
#include <errno.h>
#include <getopt.h>
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

#define MAX_OPS		16
#define MAX_DEPTH	DRM_FRAC_MAX_UNWAITED	/* job ids a file may hold */
#define GEMM_DIM	16

static int parse_list(char *s, const char *what, unsigned int *out, int max, bool ops)
{
	int n = 0;
	char *tok;

	for (tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		unsigned long v;
		char *end;

		if (n == max)
			goto bad;
		if (ops) {
			int op = frac_op_parse(tok);

			if (op < 0)
				goto bad;
			v = op;
		} else {
			errno = 0;
			v = strtoul(tok, &end, 10);
			if (errno || *end || !*tok || v >= FRAC_MAX_QUEUES)
				goto bad;
		}
		out[n++] = v;
	}
	if (n)
		return n;
bad:
	fprintf(stderr, "fracload: invalid %s '%s'\n", what, s);
	exit(2);
}

static unsigned long parse_num(const char *s, const char *what, unsigned long min,
			       unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !*s || *s == '-' || v < min || v > max) {
		fprintf(stderr, "fracload: invalid %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

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

/* Record the end of a job: WAIT returned @ret and, on success, @res. */
static void job_ended(struct job_rec *r, unsigned int op, int ret,
		      const struct frac_job_result *res, int *failed)
{
	r->done_ns = mono_ns();
	r->status = ret ? ret : res->status;
	r->dev_ns = ret ? 0 : res->t_end - res->t_start;
	if (ret || res->status) {
		fprintf(stderr, "fracload: %s job failed: %s\n", frac_op_name(op),
			strerror(ret ? -ret : -res->status));
		(*failed)++;
	}
}

int main(int argc, char **argv)
{
	unsigned int queues[FRAC_MAX_QUEUES] = { 0 }, ops[MAX_OPS] = { 1 };
	unsigned long njobs = 16, size = 16384, depth = 4;
	unsigned long per_queue[FRAC_MAX_QUEUES] = { 0 }, per_op[FRAC_NR_OPS] = { 0 };
	unsigned long long job_bytes[FRAC_NR_OPS] = { 0 }, bo_bytes = 0;
	struct frac_bo src = {}, dst = {}, ga = {}, gb = {}, gc = {};
	static struct inflight fl[MAX_DEPTH];
	unsigned long inflight_after_submit = 0;
	bool polled = false;
	int nq = 1, nops = 1, index = -1, opt, ret, failed = 0, nbos = 0;
	unsigned long i, head = 0, tail = 0;
	bool json = false, need_gemm = false, need_buf = false, noid = false, stopped = false;
	struct sigaction sa = { .sa_handler = on_stop_signal,
				.sa_flags = SA_RESTART | SA_RESETHAND };
	unsigned long nnoid = 0;
	struct job_rec *recs = NULL;
	struct frac_dev dev;

	/*
	 * First: a stop at any time gets its summary. SA_RESTART: a WAIT in
	 * progress goes on and the loop sees the flag next; SA_RESETHAND: a
	 * second signal (a WAIT on a hung job) takes the default action.
	 */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL)) {
		fprintf(stderr, "fracload: sigaction: %s\n", strerror(errno));
		return 1;
	}
	while ((opt = getopt(argc, argv, "d:n:q:o:s:D:Ujh")) != -1) {
		switch (opt) {
		case 'd':
			index = parse_num(optarg, "device", 0, 63);
			break;
		case 'n':
			njobs = parse_num(optarg, "job count", 1, 1000000);
			break;
		case 'q':
			nq = parse_list(optarg, "queue list", queues, FRAC_MAX_QUEUES, false);
			break;
		case 'o':
			nops = parse_list(optarg, "op list", ops, MAX_OPS, true);
			break;
		case 's':
			size = parse_num(optarg, "size", 1, 1 << 24);
			if (size % 4096) {
				fprintf(stderr, "fracload: size must be a multiple of 4096\n");
				return 2;
			}
			break;
		case 'D':
			depth = parse_num(optarg, "depth", 1, MAX_DEPTH);
			break;
		case 'j':
			json = true;
			break;
		case 'U':
			noid = true;
			break;
		case 'h':
			printf("usage: fracload [-d INDEX] [-n JOBS] [-q QUEUES] [-o OPS] [-s SIZE] "
			       "[-D DEPTH] [-U] [-j]\n");
			return 0;
		default:
			return 2;
		}
	}
	if (noid && nq != 1) {
		fprintf(stderr, "fracload: -U takes one queue\n");
		return 2;
	}
	if (optind != argc) {
		fprintf(stderr, "fracload: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	ret = frac_open(index, &dev);
	if (ret) {
		fprintf(stderr, "fracload: no frac device: %s\n", strerror(-ret));
		return 1;
	}
	for (i = 0; i < (unsigned long)nq; i++) {
		if (queues[i] >= dev.num_queues) {
			fprintf(stderr, "fracload: queue %u out of range (device has %u)\n",
				queues[i], dev.num_queues);
			return 2;
		}
	}
	for (i = 0; i < (unsigned long)nops; i++) {
		need_gemm |= ops[i] == DRM_FRAC_OP_GEMM;
		need_buf |= ops[i] != DRM_FRAC_OP_GEMM && ops[i] != DRM_FRAC_OP_NOP;
	}
	if (need_buf) {
		if (frac_bo_create(&dev, size, 0, &src) || frac_bo_create(&dev, size, 0, &dst))
			goto nomem;
		nbos += 2;
		bo_bytes += src.size + dst.size;
	}
	if (need_gemm) {
		if (frac_bo_create(&dev, GEMM_DIM * GEMM_DIM * 4, 0, &ga) ||
		    frac_bo_create(&dev, GEMM_DIM * GEMM_DIM * 4, 0, &gb) ||
		    frac_bo_create(&dev, GEMM_DIM * GEMM_DIM * 4, 0, &gc))
			goto nomem;
		nbos += 3;
		bo_bytes += ga.size + gb.size + gc.size;
	}

	recs = calloc(njobs, sizeof(*recs));
	if (!recs)
		goto nomem;
	for (i = 0; i < njobs || tail < head; ) {
		struct frac_job_result res;
		struct frac_cmdlist cl;
		unsigned int q, op;

		if (stop_requested && !stopped) {
			stopped = true;
			if (i < njobs)
				njobs = noid ? i + 1 : i;
		}
		if (i < njobs && head - tail < depth) {
			q = queues[i % nq];
			op = ops[(i / nq) % nops];
			frac_cmdlist_init(&cl);
			switch (op) {
			case DRM_FRAC_OP_NOP:
				frac_cmd_nop(&cl);
				break;
			case DRM_FRAC_OP_COPY:
				frac_cmd_copy(&cl, &dst, 0, &src, 0, size);
				job_bytes[op] += 2 * size;
				break;
			case DRM_FRAC_OP_FILL:
				frac_cmd_fill(&cl, &dst, 0, size, 0x5a5a5a5a);
				job_bytes[op] += size;
				break;
			case DRM_FRAC_OP_CRC32C:
				frac_cmd_crc32c(&cl, &src, 0, size, 0);
				job_bytes[op] += size;
				break;
			case DRM_FRAC_OP_GEMM:
				frac_cmd_gemm(&cl, DRM_FRAC_GEMM_FP32, GEMM_DIM, GEMM_DIM, GEMM_DIM,
					      &ga, 0, &gb, 0, &gc, 0);
				job_bytes[op] += 3 * GEMM_DIM * GEMM_DIM * 4;
				break;
			case DRM_FRAC_OP_TIMESTAMP:
				frac_cmd_timestamp(&cl, &dst, 0);
				job_bytes[op] += 8;
				break;
			}
			recs[i].queue = q;
			recs[i].op = op;
			recs[i].submit_ns = mono_ns();
			if (noid && i + 1 < njobs) {
				struct drm_frac_submit sub = {
					.cmds = (uintptr_t)cl.cmds, .cmd_count = cl.count,
					.cmd_size = sizeof(struct drm_frac_cmd), .queue = q,
					.flags = DRM_FRAC_SUBMIT_NO_JOB_ID,
				};

				do
					ret = ioctl(dev.fd, DRM_IOCTL_FRAC_SUBMIT, &sub);
				while (ret && (errno == EINTR || errno == EAGAIN));
				if (ret) {
					fprintf(stderr, "fracload: submit failed: %s\n", strerror(errno));
					return 1;
				}
				recs[i].noid = true;
				nnoid++;
				per_queue[q]++;
				per_op[op]++;
				i++;
				continue;
			}
			ret = frac_submit(&dev, q, &cl, NULL, &fl[head % MAX_DEPTH].id);
			if (ret) {
				fprintf(stderr, "fracload: submit failed: %s\n", strerror(-ret));
				return 1;
			}
			recs[i].id = fl[head % MAX_DEPTH].id;
			fl[head % MAX_DEPTH].n = i;
			fl[head % MAX_DEPTH].op = op;
			fl[head % MAX_DEPTH].done = false;
			head++;
			per_queue[q]++;
			per_op[op]++;
			i++;
			continue;
		}
		if (i == njobs && !polled) {
			/* Every job is submitted: which have not ended yet? */
			unsigned long k;

			for (k = tail; k < head; k++) {
				struct inflight *f = &fl[k % MAX_DEPTH];

				ret = frac_wait(&dev, f->id, 0, &res);
				if (ret == -ETIME) {
					inflight_after_submit++;
					continue;
				}
				f->done = true;
				job_ended(&recs[f->n], f->op, ret, &res, &failed);
			}
			polled = true;
			continue;
		}
		if (!fl[tail % MAX_DEPTH].done) {
			struct inflight *f = &fl[tail % MAX_DEPTH];

			ret = frac_wait(&dev, f->id, -1, &res);
			job_ended(&recs[f->n], f->op, ret, &res, &failed);
		}
		tail++;
	}

	frac_bo_destroy(&dev, &src);
	frac_bo_destroy(&dev, &dst);
	frac_bo_destroy(&dev, &ga);
	frac_bo_destroy(&dev, &gb);
	frac_bo_destroy(&dev, &gc);
	frac_close(&dev);

	if (json) {
		const char *sep = "";

		printf("{\"schema_version\":2,\"pid\":%d,\"jobs\":%lu,\"noid_jobs\":%lu,"
		       "\"failed\":%d,\"inflight_after_submit\":%lu,\"host_bos\":%d,"
		       "\"host_bo_bytes\":%llu,\"stopped\":%s,\"queues\":{", getpid(), njobs, nnoid,
		       failed, inflight_after_submit, nbos, bo_bytes, stopped ? "true" : "false");
		for (i = 0; i < FRAC_MAX_QUEUES; i++) {
			if (per_queue[i]) {
				printf("%s\"%lu\":%lu", sep, i, per_queue[i]);
				sep = ",";
			}
		}
		printf("},\"ops\":{");
		sep = "";
		for (i = 0; i < FRAC_NR_OPS; i++) {
			if (per_op[i]) {
				printf("%s\"%s\":%lu", sep, frac_op_name(i), per_op[i]);
				sep = ",";
			}
		}
		printf("},\"job_bytes\":{");
		sep = "";
		for (i = 0; i < FRAC_NR_OPS; i++) {
			if (per_op[i]) {
				printf("%s\"%s\":%llu", sep, frac_op_name(i), job_bytes[i]);
				sep = ",";
			}
		}
		printf("},\"job_list\":[");
		for (i = 0; i < njobs; i++) {
			printf("%s{\"job\":%u,\"queue\":%u,\"op\":\"%s\",\"submit_ns\":%llu,",
			       i ? "," : "", recs[i].id, recs[i].queue, frac_op_name(recs[i].op),
			       recs[i].submit_ns);
			if (recs[i].noid)
				printf("\"status\":null,\"done_ns\":null,\"dev_ns\":null,"
				       "\"status_reason\":\"no job id (-U): not waited for\"}");
			else
				printf("\"status\":%d,\"done_ns\":%llu,\"dev_ns\":%llu,"
				       "\"status_reason\":null}", recs[i].status, recs[i].done_ns,
				       recs[i].dev_ns);
		}
		printf("]}\n");
	} else {
		printf("fracload: %lu jobs on %d queue(s), %d op(s), %d failed; %d host BOs, "
		       "%llu bytes%s\n", njobs, nq, nops, failed, nbos, bo_bytes,
		       stopped ? "; stopped by a signal" : "");
	}
	free(recs);
	return failed ? 1 : 0;

nomem:
	fprintf(stderr, "fracload: buffer allocation failed\n");
	return 1;
}
