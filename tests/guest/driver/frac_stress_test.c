// SPDX-License-Identifier: MIT
/*
 * frac_stress_test: concurrent submission on all queues, checking every result.
 *
 * Workers (pthreads sharing one file or each with its own, and forked
 * processes with their own file or the inherited one) each run batches of
 * COPY, FILL, CRC32C, GEMM and TIMESTAMP jobs spread over every queue, host
 * and device memory mixed, submitted back to back and then waited for, and
 * check each against the host. Then the rings themselves: jobs of
 * DRM_FRAC_MAX_CMDS commands and hundreds of outstanding jobs, so every ring
 * wraps several times and the scheduler's flow control holds jobs back.
 */
#include <pthread.h>
#include <sys/wait.h>

#include "frac_test.h"

#define WBO		(128 * 1024ull)		/* per-worker BOs */
#define BATCH		5
#define GEMM_DIM	8

struct worker {
	struct frac_dev *shared;	/* the file to use, or NULL to open one */
	int index;
	uint32_t batches;
	uint32_t jobs;			/* results checked */
	char err[256];			/* the first failure, empty if none */
};

#define WFAIL(w, ...) do {							\
	if (!(w)->err[0])							\
		snprintf((w)->err, sizeof((w)->err), __VA_ARGS__);		\
	goto out;								\
} while (0)

struct wjob {
	uint32_t op, queue, id;
	uint64_t off, off2, len;
	uint32_t arg;
	uint64_t t0;
	struct frac_bo *dst;
};

static void worker_run(struct worker *w)
{
	struct frac_bo src = { 0 }, hdst = { 0 }, ddst = { 0 }, g = { 0 };
	struct frac_dev own, *dev = w->shared;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	struct wjob jobs[BATCH];
	uint64_t rng = 0x1234567ull * (w->index + 1);
	uint32_t b, j, nq;
	bool devmem;
	int ret;

	if (!dev) {
		ret = frac_open(-1, &own);
		if (ret) {
			snprintf(w->err, sizeof(w->err), "worker %d: open: %s", w->index,
				 strerror(-ret));
			return;
		}
		dev = &own;
	}
	nq = dev->num_queues;
	devmem = dev->features & DRM_FRAC_FEAT_DEVMEM;
	if (frac_t_bo(dev, WBO, 0, &src) || frac_t_bo(dev, WBO, 0, &hdst) ||
	    frac_t_bo(dev, WBO, devmem ? DRM_FRAC_BO_DEVMEM : 0, &ddst) ||
	    frac_t_bo(dev, 3 * GEMM_DIM * GEMM_DIM * 4, 0, &g))
		WFAIL(w, "worker %d: BO allocation failed", w->index);
	frac_fill_random(src.map, WBO, rng);

	for (b = 0; b < w->batches; b++) {
		/* Submit a batch back to back, one job per queue in turn. */
		for (j = 0; j < BATCH; j++) {
			struct wjob *jb = &jobs[j];

			memset(jb, 0, sizeof(*jb));
			jb->op = j;
			jb->queue = (uint32_t)(w->index + b + j) % nq;
			jb->dst = (b + j) & 1 ? &ddst : &hdst;
			jb->len = 1 + frac_rng(&rng) % (WBO / 4);
			jb->off = frac_rng(&rng) % (WBO / 2);
			jb->off2 = frac_rng(&rng) % (WBO / 2);
			jb->arg = (uint32_t)frac_rng(&rng);
			frac_cmdlist_init(&cl);
			switch (jb->op) {
			case 0:
				ret = frac_cmd_copy(&cl, jb->dst, jb->off2, &src, jb->off, jb->len);
				break;
			case 1:
				ret = frac_cmd_fill(&cl, jb->dst, jb->off2, jb->len, jb->arg);
				break;
			case 2:
				ret = frac_cmd_crc32c(&cl, &src, jb->off, jb->len, jb->arg);
				break;
			case 3:
				frac_fill_random(g.map, 2 * GEMM_DIM * GEMM_DIM, jb->arg);
				ret = frac_cmd_gemm(&cl, DRM_FRAC_GEMM_INT8, GEMM_DIM, GEMM_DIM,
						    GEMM_DIM, &g, 0, &g, GEMM_DIM * GEMM_DIM, &g,
						    2 * GEMM_DIM * GEMM_DIM);
				break;
			default:
				jb->t0 = frac_t_clock(dev);
				ret = frac_cmd_timestamp(&cl, NULL, 0);
				break;
			}
			if (!ret)
				ret = frac_submit(dev, jb->queue, &cl, NULL, &jb->id);
			if (ret)
				WFAIL(w, "worker %d batch %u job %u: submit: %s", w->index, b, j,
				      strerror(-ret));
		}
		/* Wait for them in reverse order, and check each. */
		for (j = BATCH; j-- > 0;) {
			struct wjob *jb = &jobs[j];
			const uint8_t *d = (const uint8_t *)jb->dst->map + jb->off2;
			long bad = -1;

			ret = frac_wait(dev, jb->id, 60 * FRAC_NSEC, &res);
			if (ret || res.status)
				WFAIL(w, "worker %d batch %u op %u queue %u: wait %d status %d",
				      w->index, b, jb->op, jb->queue, ret, res.status);
			switch (jb->op) {
			case 0:
				__sync_synchronize();
				bad = frac_first_diff(d, (uint8_t *)src.map + jb->off, jb->len);
				break;
			case 1:
				__sync_synchronize();
				bad = frac_check_fill(d, jb->len, jb->arg);
				break;
			case 2:
				if (res.result != frac_crc32c(jb->arg, (uint8_t *)src.map + jb->off,
							      jb->len))
					bad = 0;
				break;
			case 3: {
				int32_t ref[GEMM_DIM * GEMM_DIM];
				const int8_t *gm = g.map;

				frac_gemm_ref_i8(gm, gm + GEMM_DIM * GEMM_DIM, ref, GEMM_DIM,
						 GEMM_DIM, GEMM_DIM);
				bad = frac_first_diff(gm + 2 * GEMM_DIM * GEMM_DIM, ref,
						      sizeof(ref));
				break;
			}
			default:
				if (res.result < jb->t0 || res.result > frac_t_clock(dev))
					bad = 0;
				break;
			}
			if (bad >= 0)
				WFAIL(w, "worker %d batch %u op %u queue %u (%s): wrong result at %ld",
				      w->index, b, jb->op, jb->queue, frac_t_placement(jb->dst->flags),
				      bad);
			w->jobs++;
		}
	}
out:
	frac_bo_destroy(dev, &src);
	frac_bo_destroy(dev, &hdst);
	frac_bo_destroy(dev, &ddst);
	frac_bo_destroy(dev, &g);
	if (dev == &own)
		frac_close(&own);
}

static void *worker_thread(void *arg)
{
	worker_run(arg);
	return NULL;
}

FIXTURE(stress) {
	struct frac_dev dev;
	uint32_t nworkers;
};

FIXTURE_SETUP(stress)
{
	self->dev.fd = -1;
	FRAC_OPEN_OR_SKIP(&self->dev);
	self->nworkers = 2 * self->dev.num_queues < 4 ? 4 : 2 * self->dev.num_queues;
	if (self->nworkers > 16)
		self->nworkers = 16;
}

FIXTURE_TEARDOWN(stress)
{
	if (self->dev.fd >= 0)
		frac_close(&self->dev);
}

/* Batches per worker: 12, or $FRAC_STRESS_BATCHES (a long run to kill midway). */
static uint32_t batches(void)
{
	const char *e = getenv("FRAC_STRESS_BATCHES");

	return e && atoi(e) > 0 ? (uint32_t)atoi(e) : 12;
}

static void run_threads(struct __test_metadata *_metadata, struct frac_dev *shared,
			uint32_t n)
{
	struct worker w[16];
	pthread_t t[16];
	uint32_t i;

	for (i = 0; i < n; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].shared = shared;
		w[i].index = (int)i;
		w[i].batches = batches();
		ASSERT_EQ(0, pthread_create(&t[i], NULL, worker_thread, &w[i]));
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, w[i].err[0]) TH_LOG("%s", w[i].err);
		EXPECT_EQ(w[i].batches * BATCH, w[i].jobs);
	}
}

TEST_F_TIMEOUT(stress, threads_one_file, 240)
{
	run_threads(_metadata, &self->dev, self->nworkers);
}

TEST_F_TIMEOUT(stress, threads_own_files, 240)
{
	run_threads(_metadata, NULL, self->nworkers);
}

static void run_processes(struct __test_metadata *_metadata, struct frac_dev *inherited,
			  uint32_t n)
{
	struct worker *w;
	pid_t pids[16];
	uint32_t i;
	int status;

	w = mmap(NULL, sizeof(*w) * n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, w);
	for (i = 0; i < n; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].shared = inherited;
		w[i].index = (int)i;
		w[i].batches = batches();
		pids[i] = fork();
		ASSERT_GE(pids[i], 0);
		if (pids[i] == 0) {
			worker_run(&w[i]);
			_exit(w[i].err[0] ? 1 : 0);
		}
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("process %u: status %#x: %s", i, status, w[i].err);
		EXPECT_EQ(w[i].batches * BATCH, w[i].jobs) TH_LOG("process %u", i);
	}
	munmap(w, sizeof(*w) * n);
}

TEST_F_TIMEOUT(stress, processes_own_files, 240)
{
	run_processes(_metadata, NULL, self->nworkers);
}

TEST_F_TIMEOUT(stress, processes_inherited_file, 240)
{
	run_processes(_metadata, &self->dev, self->nworkers);
}

/*
 * Per queue, 10 jobs of DRM_FRAC_MAX_CMDS commands (63 FILLs and a CRC32C
 * of what they filled) without waiting: 640 descriptors through a ring of
 * 256, on every queue at once.
 */
TEST_F_TIMEOUT(stress, ring_wrap_max_cmds, 120)
{
	const uint32_t njobs = 10, nfill = DRM_FRAC_MAX_CMDS - 1, slice = 64;
	const uint64_t per_job = (uint64_t)nfill * slice;
	uint32_t q, j, i, nq = self->dev.num_queues;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	struct frac_bo bo;
	uint32_t *ids;
	uint8_t *want;

	ids = calloc((size_t)nq * njobs, sizeof(*ids));
	want = malloc(per_job);
	ASSERT_TRUE(ids && want);
	ASSERT_EQ(0, frac_t_bo(&self->dev, per_job * njobs * nq, 0, &bo));
	for (q = 0; q < nq; q++)
		for (j = 0; j < njobs; j++) {
			uint64_t base = (q * njobs + j) * per_job;

			frac_cmdlist_init(&cl);
			for (i = 0; i < nfill; i++)
				ASSERT_EQ(0, frac_cmd_fill(&cl, &bo, base + i * slice, slice,
							   (q << 24) | (j << 16) | i));
			ASSERT_EQ(0, frac_cmd_crc32c(&cl, &bo, base, per_job, 0));
			ASSERT_EQ(0, frac_submit(&self->dev, q, &cl, NULL, &ids[q * njobs + j]));
		}
	for (q = 0; q < nq; q++)
		for (j = 0; j < njobs; j++) {
			uint64_t base = (q * njobs + j) * per_job;

			ASSERT_EQ(0, frac_wait(&self->dev, ids[q * njobs + j], 60 * FRAC_NSEC,
					       &res));
			EXPECT_EQ(0, res.status);
			for (i = 0; i < nfill; i++) {
				uint32_t k;

				for (k = 0; k < slice; k++)
					want[i * slice + k] =
						frac_fill_byte((q << 24) | (j << 16) | i, k);
			}
			EXPECT_EQ(-1, frac_first_diff((uint8_t *)bo.map + base, want, per_job))
				TH_LOG("queue %u job %u", q, j);
			EXPECT_EQ((uint64_t)frac_crc32c(0, want, per_job), res.result)
				TH_LOG("queue %u job %u", q, j);
		}
	frac_bo_destroy(&self->dev, &bo);
	free(ids);
	free(want);
}

/* 600 single-command jobs outstanding at once, waited for newest first. */
TEST_F_TIMEOUT(stress, many_jobs_outstanding, 120)
{
	const uint32_t n = 600;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	struct frac_bo bo;
	uint32_t *ids, i, j;

	ids = calloc(n, sizeof(*ids));
	ASSERT_NE(NULL, ids);
	ASSERT_EQ(0, frac_t_bo(&self->dev, n * 16, 0, &bo));
	for (i = 0; i < n; i++) {
		frac_cmdlist_init(&cl);
		ASSERT_EQ(0, frac_cmd_fill(&cl, &bo, i * 16, 16, i * 0x01000193u));
		ASSERT_EQ(0, frac_submit(&self->dev, i % self->dev.num_queues, &cl, NULL, &ids[i]));
		for (j = 0; j < i; j += 97)
			ASSERT_NE(ids[j], ids[i]);
	}
	for (i = n; i-- > 0;) {
		ASSERT_EQ(0, frac_wait(&self->dev, ids[i], 60 * FRAC_NSEC, &res));
		EXPECT_EQ(0, res.status);
		EXPECT_EQ(-1, frac_check_fill((uint8_t *)bo.map + i * 16, 16, i * 0x01000193u))
			TH_LOG("job %u", i);
	}
	frac_bo_destroy(&self->dev, &bo);
	free(ids);
}

/*
 * Regression test: SUBMIT armed and pushed a job outside one critical
 * section, so two threads submitting to one queue of one file could push
 * in the other order than their fences' seqnos; a job depending on both
 * kept only the later fence and could start before the earlier job ended
 * (a review reproduced it 5 times in 4363 rounds). Each round: threads A
 * and B each FILL their own device BO on queue 0 at once; C on queue 1
 * reads both and must start, on the device clock, after both ended.
 */
#define ORDER_ROUNDS	1500
#define ORDER_BYTES	(8u << 20)

struct order_ctx {
	int fd;
	uint32_t bo[2];
	pthread_barrier_t go, done;
	uint32_t id[2];
	int err[2];
	bool stop;
};

struct order_arg {
	struct order_ctx *c;
	int who;
};

static void *order_submitter(void *p)
{
	struct order_arg *a = p;
	struct order_ctx *c = a->c;
	struct drm_frac_cmd cmd = {
		.op = DRM_FRAC_OP_FILL, .dst_handle = c->bo[a->who], .len = ORDER_BYTES,
		.arg = { 0x11111111u * (a->who + 1) },
	};

	for (;;) {
		pthread_barrier_wait(&c->go);
		if (c->stop)
			return NULL;
		c->err[a->who] = frac_t_submit(c->fd, &cmd, 1, 0, 0, 0, &c->id[a->who]);
		pthread_barrier_wait(&c->done);
	}
}

TEST_F_TIMEOUT(stress, arm_push_order_two_threads, 600)
{
	struct order_ctx c = { .fd = self->dev.fd };
	struct order_arg args[2] = { { &c, 0 }, { &c, 1 } };
	struct frac_bo bo[2];
	pthread_t t[2];
	uint32_t i, late = 0;
	int k;

	if (self->dev.num_queues < 2 || self->dev.devmem_size < 2 * ORDER_BYTES)
		SKIP(return, "needs two queues and %u MiB of device memory", 2 * ORDER_BYTES >> 20);
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, frac_bo_create(&self->dev, ORDER_BYTES, DRM_FRAC_BO_DEVMEM, &bo[k]));
		c.bo[k] = bo[k].handle;
	}
	pthread_barrier_init(&c.go, NULL, 3);
	pthread_barrier_init(&c.done, NULL, 3);
	for (k = 0; k < 2; k++)
		ASSERT_EQ(0, pthread_create(&t[k], NULL, order_submitter, &args[k]));
	for (i = 0; i < ORDER_ROUNDS; i++) {
		struct drm_frac_cmd rd[2] = {
			{ .op = DRM_FRAC_OP_CRC32C, .src_handle = c.bo[0], .len = 4096 },
			{ .op = DRM_FRAC_OP_CRC32C, .src_handle = c.bo[1], .len = 4096 },
		};
		struct drm_frac_wait w[2], wc;
		uint32_t idc;

		pthread_barrier_wait(&c.go);
		pthread_barrier_wait(&c.done);
		ASSERT_EQ(0, c.err[0]);
		ASSERT_EQ(0, c.err[1]);
		ASSERT_EQ(0, frac_t_submit(self->dev.fd, rd, 2, 1, 0, 0, &idc));
		for (k = 0; k < 2; k++) {
			ASSERT_EQ(0, frac_t_wait(self->dev.fd, c.id[k], 30 * FRAC_NSEC, &w[k]));
			ASSERT_EQ(0, w[k].status);
		}
		ASSERT_EQ(0, frac_t_wait(self->dev.fd, idc, 30 * FRAC_NSEC, &wc));
		ASSERT_EQ(0, wc.status);
		if (wc.t_start < w[0].t_end || wc.t_start < w[1].t_end) {
			if (!late)
				TH_LOG("round %u: the reader started at %llu, writers ended %llu, %llu",
				       i, (unsigned long long)wc.t_start,
				       (unsigned long long)w[0].t_end,
				       (unsigned long long)w[1].t_end);
			late++;
		}
	}
	c.stop = true;
	pthread_barrier_wait(&c.go);
	for (k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	EXPECT_EQ(0u, late) TH_LOG("%u of %u rounds ran a job before one it depends on ended",
				  late, ORDER_ROUNDS);
	for (k = 0; k < 2; k++)
		frac_bo_destroy(&self->dev, &bo[k]);
}

TEST_HARNESS_MAIN
