// SPDX-License-Identifier: MIT
/*
 * frac_neg_test: every field of every ioctl, given a value the uAPI refuses,
 * gets the exact errno, and the refused call changes nothing: output fields
 * keep the poison written before the call, no job runs, no syncobj gets a
 * fence. Limits are tested at the limit (accepted) and one past (refused).
 *
 * SUBMIT is table-driven: each variant of the `submit` fixture changes one
 * thing in a valid job (one COPY between two host BOs) and names the errno it
 * must get; the accepted ones must also run to completion.
 */
#include "frac_test.h"

#define BO_SIZE		(64 * 1024ull)
#define FRAC_4G		(1ull << 32)

/* ---- GET_PARAM, BO_CREATE, BO_INFO, WAIT, mmap ------------------------- */

FIXTURE(neg) {
	struct frac_dev dev;
};

FIXTURE_SETUP(neg)
{
	self->dev.fd = -1;
	FRAC_OPEN_OR_SKIP(&self->dev);
}

FIXTURE_TEARDOWN(neg)
{
	if (self->dev.fd >= 0)
		frac_close(&self->dev);
}

TEST_F(neg, get_param_unknown)
{
	static const uint32_t params[] = { DRM_FRAC_PARAM_CLOCK_OFFSET + 1, 0x100, 0x7fffffff,
					   0xffffffff };
	struct drm_frac_get_param p;
	uint32_t i;

	for (i = 0; i < FRAC_ARRAY_SIZE(params); i++) {
		frac_poison(&p, sizeof(p));
		p.param = params[i];
		p.pad = 0;
		EXPECT_EQ(-EINVAL, frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_GET_PARAM, &p))
			TH_LOG("param %#x", params[i]);
		EXPECT_EQ(FRAC_POISON64, p.value);
	}
}

TEST_F(neg, get_param_pad)
{
	static const uint32_t pads[] = { 1, 0x80000000u, FRAC_POISON32 };
	struct drm_frac_get_param p;
	uint32_t i;

	for (i = 0; i < FRAC_ARRAY_SIZE(pads); i++) {
		frac_poison(&p, sizeof(p));
		p.param = DRM_FRAC_PARAM_NUM_QUEUES;
		p.pad = pads[i];
		EXPECT_EQ(-EINVAL, frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_GET_PARAM, &p));
		EXPECT_EQ(FRAC_POISON64, p.value);
	}
}

static int bo_create_raw(int fd, uint64_t size, uint32_t flags, uint32_t *handle)
{
	struct drm_frac_bo_create c;
	int ret;

	frac_poison(&c, sizeof(c));
	c.size = size;
	c.flags = flags;
	ret = frac_t_ioctl(fd, DRM_IOCTL_FRAC_BO_CREATE, &c);
	*handle = c.handle;
	return ret;
}

static void gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close cl = { .handle = handle };

	frac_t_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &cl);
}

TEST_F(neg, bo_create_bad_flags)
{
	static const uint32_t flags[] = { 1u << 3, 1u << 31, ~0u,
					  DRM_FRAC_BO_DEVMEM | (1u << 7),
					  /* one direction at most, and host BOs only */
					  DRM_FRAC_BO_TO_DEVICE | DRM_FRAC_BO_FROM_DEVICE,
					  DRM_FRAC_BO_DEVMEM | DRM_FRAC_BO_TO_DEVICE,
					  DRM_FRAC_BO_DEVMEM | DRM_FRAC_BO_FROM_DEVICE };
	uint32_t i, h;

	for (i = 0; i < FRAC_ARRAY_SIZE(flags); i++) {
		EXPECT_EQ(-EINVAL, bo_create_raw(self->dev.fd, 4096, flags[i], &h))
			TH_LOG("flags %#x", flags[i]);
		EXPECT_EQ(FRAC_POISON32, h);
	}
}

/* A host BO in each direction: created, and BO_INFO gives its flags back. */
TEST_F(neg, bo_create_directions)
{
	static const uint32_t flags[] = { 0, DRM_FRAC_BO_TO_DEVICE, DRM_FRAC_BO_FROM_DEVICE };
	struct drm_frac_bo_info info;
	uint32_t i, h;

	for (i = 0; i < FRAC_ARRAY_SIZE(flags); i++) {
		ASSERT_EQ(0, bo_create_raw(self->dev.fd, 4096, flags[i], &h))
			TH_LOG("flags %#x", flags[i]);
		frac_poison(&info, sizeof(info));
		info.handle = h;
		EXPECT_EQ(0, frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_BO_INFO, &info));
		EXPECT_EQ(flags[i], info.flags);
		gem_close(self->dev.fd, h);
	}
}

TEST_F(neg, bo_create_size_zero)
{
	uint32_t h;

	EXPECT_EQ(-EINVAL, bo_create_raw(self->dev.fd, 0, 0, &h));
	EXPECT_EQ(FRAC_POISON32, h);
	EXPECT_EQ(-EINVAL, bo_create_raw(self->dev.fd, 0, DRM_FRAC_BO_DEVMEM, &h));
	EXPECT_EQ(FRAC_POISON32, h);
}

TEST_F(neg, bo_create_too_large)
{
	static const uint64_t sizes[] = { FRAC_4G + 1, FRAC_4G + FRAC_PAGE, 1ull << 40,
					  ~0ull - FRAC_PAGE + 2, ~0ull };
	uint32_t i, h;

	/* Past the 4 GiB a descriptor can move, in either placement. */
	for (i = 0; i < FRAC_ARRAY_SIZE(sizes); i++) {
		EXPECT_EQ(-EINVAL, bo_create_raw(self->dev.fd, sizes[i], 0, &h))
			TH_LOG("host BO of %#llx bytes", (unsigned long long)sizes[i]);
		EXPECT_EQ(FRAC_POISON32, h);
		EXPECT_EQ(-EINVAL, bo_create_raw(self->dev.fd, sizes[i], DRM_FRAC_BO_DEVMEM, &h))
			TH_LOG("device BO of %#llx bytes", (unsigned long long)sizes[i]);
		EXPECT_EQ(FRAC_POISON32, h);
	}
}

/* Device memory: all of it can be one BO; one byte more cannot. */
TEST_F(neg, bo_create_devmem_limit)
{
	uint64_t size = self->dev.devmem_size;
	uint32_t h, h2;

	if (!(self->dev.features & DRM_FRAC_FEAT_DEVMEM))
		SKIP(return, "no device memory");
	EXPECT_EQ(-ENOSPC, bo_create_raw(self->dev.fd, size + 1, DRM_FRAC_BO_DEVMEM, &h));
	EXPECT_EQ(FRAC_POISON32, h);
	ASSERT_EQ(0, bo_create_raw(self->dev.fd, size, DRM_FRAC_BO_DEVMEM, &h))
		TH_LOG("a BO of all %llu bytes of device memory (is some still allocated?)",
		       (unsigned long long)size);
	EXPECT_NE(FRAC_POISON32, h);
	/* Full now. */
	EXPECT_EQ(-ENOSPC, bo_create_raw(self->dev.fd, 1, DRM_FRAC_BO_DEVMEM, &h2));
	EXPECT_EQ(FRAC_POISON32, h2);
	gem_close(self->dev.fd, h);
	/* And free again. */
	ASSERT_EQ(0, bo_create_raw(self->dev.fd, 1, DRM_FRAC_BO_DEVMEM, &h2));
	gem_close(self->dev.fd, h2);
}

TEST_F(neg, bo_info_unknown_handle)
{
	static const uint32_t handles[] = { 0, 1, 12345, ~0u };
	struct drm_frac_bo_info info;
	uint32_t i;

	for (i = 0; i < FRAC_ARRAY_SIZE(handles); i++) {
		frac_poison(&info, sizeof(info));
		info.handle = handles[i];
		EXPECT_EQ(-ENOENT, frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_BO_INFO, &info))
			TH_LOG("handle %u", handles[i]);
		EXPECT_EQ(FRAC_POISON32, info.flags);
		EXPECT_EQ(FRAC_POISON64, info.size);
		EXPECT_EQ(FRAC_POISON64, info.mmap_offset);
		EXPECT_EQ(FRAC_POISON64, info.devmem_offset);
	}
}

TEST_F(neg, mmap_unknown_offset)
{
	struct frac_bo bo;
	void *p;

	ASSERT_EQ(0, frac_bo_create(&self->dev, 4096, 0, &bo));
	/* An offset no BO was given, and the real one plus a page. */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->dev.fd, bo.mmap_offset + (1ull << 30));
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->dev.fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	frac_bo_destroy(&self->dev, &bo);
}

static void expect_wait_untouched(struct __test_metadata *_metadata, const struct drm_frac_wait *w)
{
	EXPECT_EQ((int32_t)FRAC_POISON32, w->status);
	EXPECT_EQ(FRAC_POISON32, w->pad);
	EXPECT_EQ(FRAC_POISON64, w->result);
	EXPECT_EQ(FRAC_POISON64, w->t_start);
	EXPECT_EQ(FRAC_POISON64, w->t_end);
}

TEST_F(neg, wait_unknown_id)
{
	static const uint32_t ids[] = { 0, 1, 2, 12345, ~0u };
	static const int64_t timeouts[] = { 0, 1000000, -1 };
	struct drm_frac_wait w;
	uint32_t i, t;

	/* A fresh file has no jobs; none of these may block either. */
	for (i = 0; i < FRAC_ARRAY_SIZE(ids); i++)
		for (t = 0; t < FRAC_ARRAY_SIZE(timeouts); t++) {
			EXPECT_EQ(-EINVAL, frac_t_wait(self->dev.fd, ids[i], timeouts[t], &w))
				TH_LOG("job id %u", ids[i]);
			expect_wait_untouched(_metadata, &w);
		}
}

/*
 * The one SUBMIT that fails after it submitted: its argument is readable but
 * not writable, so the DRM core's copy back of @queue and @job_id fails
 * after the handler queued the job (-EFAULT, as the uAPI header says). The
 * job runs: its out syncobj signals and its destination is written.
 */
TEST_F(neg, submit_argument_not_writable_job_runs)
{
	struct frac_bo src, dst;
	struct drm_frac_cmd cmd = { .op = DRM_FRAC_OP_COPY, .len = 4096 };
	struct drm_frac_submit *s;
	uint32_t so;

	ASSERT_EQ(0, frac_t_bo(&self->dev, BO_SIZE, 0, &src));
	ASSERT_EQ(0, frac_t_bo(&self->dev, BO_SIZE, 0, &dst));
	frac_fill_random(src.map, BO_SIZE, 11);
	memset(dst.map, FRAC_POISON, BO_SIZE);
	ASSERT_EQ(0, frac_t_syncobj_create(self->dev.fd, &so));
	cmd.src_handle = src.handle;
	cmd.dst_handle = dst.handle;
	s = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, s);
	*s = (struct drm_frac_submit){
		.cmds = (uintptr_t)&cmd,
		.cmd_count = 1,
		.cmd_size = sizeof(cmd),
		.priority = DRM_FRAC_PRIO_NORMAL,
		.out_syncobj = so,
	};
	ASSERT_EQ(0, mprotect(s, 4096, PROT_READ));

	EXPECT_EQ(-EFAULT, frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_SUBMIT, s));
	ASSERT_EQ(0, frac_t_syncobj_wait(self->dev.fd, so, 30 * FRAC_NSEC))
		TH_LOG("the job of the SUBMIT that returned -EFAULT did not run");
	EXPECT_EQ(0, memcmp(dst.map, src.map, 4096));

	munmap(s, 4096);
	frac_t_syncobj_destroy(self->dev.fd, so);
	frac_bo_destroy(&self->dev, &src);
	frac_bo_destroy(&self->dev, &dst);
}

TEST_F(neg, wait_flags)
{
	static const uint32_t flags[] = { 1, 2, 1u << 31, ~0u };
	struct drm_frac_cmd nop = { .op = DRM_FRAC_OP_NOP };
	struct drm_frac_wait w;
	uint32_t id, i;

	ASSERT_EQ(0, frac_t_submit(self->dev.fd, &nop, 1, 0, 0, 0, &id));
	for (i = 0; i < FRAC_ARRAY_SIZE(flags); i++) {
		frac_poison(&w, sizeof(w));
		w.job_id = id;
		w.flags = flags[i];
		w.timeout_ns = -1;
		EXPECT_EQ(-EINVAL, frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_WAIT, &w))
			TH_LOG("flags %#x", flags[i]);
		expect_wait_untouched(_metadata, &w);
	}
	/* The refused waits did not consume the id. */
	ASSERT_EQ(0, frac_t_wait(self->dev.fd, id, -1, &w));
	EXPECT_EQ(0, w.status);
}

/* ---- SUBMIT ------------------------------------------------------------- */

struct submit_ctx {
	struct drm_frac_submit s;
	struct drm_frac_cmd cmds[DRM_FRAC_MAX_CMDS + 1];
	struct drm_frac_cmd *c;		/* cmds[0] */
	uint32_t a, b, x;		/* host BOs of BO_SIZE: source (TO_DEVICE), destination
					 * (FROM_DEVICE), spare (bidirectional) */
	uint32_t nq, gemm_max;
	uint32_t so;			/* a syncobj without a fence */
	int fd;
};

FIXTURE(submit) {
	struct frac_dev dev;
	struct frac_bo a, b, x;
	struct frac_bo y;		/* the destination of in_batch's valid jobs */
	struct submit_ctx ctx;
};

FIXTURE_VARIANT(submit) {
	void (*mutate)(struct submit_ctx *c);
	int err;
};

FIXTURE_SETUP(submit)
{
	struct submit_ctx *c = &self->ctx;

	self->dev.fd = -1;
	FRAC_OPEN_OR_SKIP(&self->dev);
	/* The source only read by the device, the destination only written: every
	 * accepted case below also runs with directional mappings (checked data). */
	ASSERT_EQ(0, frac_t_bo(&self->dev, BO_SIZE, DRM_FRAC_BO_TO_DEVICE, &self->a));
	ASSERT_EQ(0, frac_t_bo(&self->dev, BO_SIZE, DRM_FRAC_BO_FROM_DEVICE, &self->b));
	ASSERT_EQ(0, frac_t_bo(&self->dev, BO_SIZE, 0, &self->x));
	ASSERT_EQ(0, frac_t_bo(&self->dev, BO_SIZE, 0, &self->y));
	frac_fill_random(self->a.map, BO_SIZE, 5);
	memset(self->b.map, FRAC_POISON, BO_SIZE);
	memset(self->y.map, FRAC_POISON, BO_SIZE);

	memset(c, 0, sizeof(*c));
	c->a = self->a.handle;
	c->b = self->b.handle;
	c->x = self->x.handle;
	c->fd = self->dev.fd;
	c->nq = self->dev.num_queues;
	c->gemm_max = self->dev.gemm_max_dim;
	ASSERT_EQ(0, frac_t_syncobj_create(self->dev.fd, &c->so));
	c->c = &c->cmds[0];
	c->c->op = DRM_FRAC_OP_COPY;
	c->c->src_handle = c->a;
	c->c->dst_handle = c->b;
	c->c->len = 4096;
	c->s.cmds = (uintptr_t)c->cmds;
	c->s.cmd_count = 1;
	c->s.cmd_size = sizeof(struct drm_frac_cmd);
	c->s.queue = 0;
	c->s.priority = DRM_FRAC_PRIO_NORMAL;
	c->s.job_id = FRAC_POISON32;
}

FIXTURE_TEARDOWN(submit)
{
	if (self->dev.fd < 0)
		return;
	frac_bo_destroy(&self->dev, &self->a);
	frac_bo_destroy(&self->dev, &self->b);
	frac_bo_destroy(&self->dev, &self->x);
	frac_bo_destroy(&self->dev, &self->y);
	frac_close(&self->dev);
}

TEST_F(submit, run)
{
	struct submit_ctx *c = &self->ctx;
	struct drm_frac_submit before;
	struct drm_frac_wait w;
	uint32_t i;
	int ret;

	if (variant->mutate)
		variant->mutate(c);
	before = c->s;
	ret = frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_SUBMIT, &c->s);
	ASSERT_EQ(variant->err, ret) TH_LOG("SUBMIT returned %d (%s), want %d", ret,
					    strerror(-ret), variant->err);
	if (variant->err) {
		/* Refused: nothing written back, nothing run, nothing published. */
		EXPECT_EQ(0, memcmp(&before, &c->s, sizeof(before)));
		EXPECT_EQ(FRAC_POISON32, c->s.job_id);
		EXPECT_EQ(-EINVAL, frac_t_wait(self->dev.fd, 1, 0, &w))
			TH_LOG("a refused SUBMIT left a job behind");
		EXPECT_EQ(-EINVAL, frac_t_syncobj_wait(self->dev.fd, c->so, 0))
			TH_LOG("a refused SUBMIT put a fence in the syncobj");
		usleep(1000);
		EXPECT_EQ(-1, frac_check_byte(self->b.map, BO_SIZE, FRAC_POISON))
			TH_LOG("a refused SUBMIT wrote the destination");
		return;
	}
	/* Accepted: the job runs to completion. */
	EXPECT_NE(FRAC_POISON32, c->s.job_id);
	ASSERT_EQ(0, frac_t_wait(self->dev.fd, c->s.job_id, 30 * FRAC_NSEC, &w));
	EXPECT_EQ(0, w.status);
	for (i = 0; i < c->s.cmd_count && i < DRM_FRAC_MAX_CMDS; i++)
		if (c->cmds[i].op == DRM_FRAC_OP_COPY && c->cmds[i].src_handle == c->a &&
		    c->cmds[i].dst_handle == c->b)
			EXPECT_EQ(0, memcmp((char *)self->b.map + c->cmds[i].dst_offset,
					    (char *)self->a.map + c->cmds[i].src_offset,
					    c->cmds[i].len));
}

/*
 * Each case again, as the middle job of a SUBMIT_BATCH of three whose first
 * and last jobs are valid copies (a -> y, with the case's queue, priority and
 * flags; the last one into an out syncobj of its own). A batch is all or
 * nothing: a refused case refuses the batch with the same errno, writes
 * nothing back, and neither valid job runs or is left behind; an accepted
 * one runs all three, in order on one queue.
 */
TEST_F(submit, in_batch)
{
	struct submit_ctx *c = &self->ctx;
	struct drm_frac_submit jobs[3], before[3];
	struct drm_frac_submit_batch b = { 0 };
	struct drm_frac_cmd side[2];
	struct drm_frac_wait w;
	uint32_t so, i;
	int ret;

	if (variant->mutate)
		variant->mutate(c);
	ASSERT_EQ(0, frac_t_syncobj_create(self->dev.fd, &so));
	for (i = 0; i < 3; i += 2) {
		struct drm_frac_cmd *sc = &side[i / 2];

		memset(sc, 0, sizeof(*sc));
		sc->op = DRM_FRAC_OP_COPY;
		sc->src_handle = c->a;
		sc->dst_handle = self->y.handle;
		sc->src_offset = sc->dst_offset = i * 4096;
		sc->len = 4096;
		jobs[i] = c->s;
		jobs[i].cmds = (uintptr_t)sc;
		jobs[i].cmd_count = 1;
		jobs[i].cmd_size = sizeof(*sc);
		jobs[i].in_syncobj = 0;
		jobs[i].out_syncobj = i ? so : 0;
	}
	jobs[1] = c->s;
	memcpy(before, jobs, sizeof(jobs));
	b.jobs = (uintptr_t)jobs;
	b.count = 3;
	b.job_size = sizeof(jobs[0]);
	ret = frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_SUBMIT_BATCH, &b);
	ASSERT_EQ(variant->err, ret) TH_LOG("SUBMIT_BATCH returned %d (%s), want %d", ret,
					    strerror(-ret), variant->err);
	if (variant->err) {
		EXPECT_EQ(0, memcmp(before, jobs, sizeof(jobs)))
			TH_LOG("a refused batch wrote its array");
		EXPECT_EQ(-EINVAL, frac_t_wait(self->dev.fd, 1, 0, &w))
			TH_LOG("a refused batch left a job behind");
		EXPECT_EQ(-EINVAL, frac_t_syncobj_wait(self->dev.fd, so, 0))
			TH_LOG("a refused batch put a fence in its last job's syncobj");
		EXPECT_EQ(-EINVAL, frac_t_syncobj_wait(self->dev.fd, c->so, 0));
		usleep(1000);
		EXPECT_EQ(-1, frac_check_byte(self->y.map, 3 * 4096, FRAC_POISON))
			TH_LOG("a refused batch ran a valid job");
		EXPECT_EQ(-1, frac_check_byte(self->b.map, BO_SIZE, FRAC_POISON));
		goto out;
	}
	/* The last job's fence: the queue runs the three in order. */
	ASSERT_EQ(0, frac_t_syncobj_wait(self->dev.fd, so, 30 * FRAC_NSEC));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(jobs[0].queue, jobs[i].queue);
		if (c->s.flags & DRM_FRAC_SUBMIT_NO_JOB_ID) {
			EXPECT_EQ(0u, jobs[i].job_id);
			continue;
		}
		ASSERT_NE(FRAC_POISON32, jobs[i].job_id);
		EXPECT_NE(jobs[i].job_id, jobs[(i + 1) % 3].job_id);
		ASSERT_EQ(0, frac_t_wait(self->dev.fd, jobs[i].job_id, 30 * FRAC_NSEC, &w));
		EXPECT_EQ(0, w.status) TH_LOG("job %u of the batch", i);
	}
	EXPECT_EQ(0, memcmp(self->y.map, self->a.map, 4096));
	EXPECT_EQ(0, memcmp((char *)self->y.map + 8192, (char *)self->a.map + 8192, 4096));
	for (i = 0; i < c->s.cmd_count && i < DRM_FRAC_MAX_CMDS; i++)
		if (c->cmds[i].op == DRM_FRAC_OP_COPY && c->cmds[i].src_handle == c->a &&
		    c->cmds[i].dst_handle == c->b)
			EXPECT_EQ(0, memcmp((char *)self->b.map + c->cmds[i].dst_offset,
					    (char *)self->a.map + c->cmds[i].src_offset,
					    c->cmds[i].len));
out:
	frac_t_syncobj_destroy(self->dev.fd, so);
}

/* One variant: a name, what it changes in the valid job, and the errno it must get. */
#define SUBMIT_CASE(name, errno_, body)						\
	static void mutate_##name(struct submit_ctx *c) { body; }		\
	FIXTURE_VARIANT_ADD(submit, name) { .mutate = mutate_##name, .err = errno_ }

static void set_gemm(struct submit_ctx *c, uint32_t m, uint32_t n, uint32_t k, uint32_t type)
{
	memset(c->c, 0, sizeof(*c->c));
	c->c->op = DRM_FRAC_OP_GEMM;
	c->c->src_handle = c->a;
	c->c->aux_handle = c->x;
	c->c->dst_handle = c->b;
	c->c->arg[0] = m;
	c->c->arg[1] = n;
	c->c->arg[2] = k;
	c->c->arg[3] = type;
}

static void set_op(struct submit_ctx *c, uint32_t op)
{
	memset(c->c, 0, sizeof(*c->c));
	c->c->op = op;
	switch (op) {
	case DRM_FRAC_OP_FILL:
		c->c->dst_handle = c->b;
		c->c->len = 4096;
		break;
	case DRM_FRAC_OP_CRC32C:
		c->c->src_handle = c->a;
		c->c->len = 4096;
		break;
	case DRM_FRAC_OP_TIMESTAMP:
		c->c->dst_handle = c->x;
		c->c->len = 8;
		break;
	}
}

/* The baseline itself, and every limit at its value: accepted. */
FIXTURE_VARIANT_ADD(submit, valid_copy) { .mutate = NULL, .err = 0 };
SUBMIT_CASE(valid_max_cmds, 0, {
	uint32_t i;

	for (i = 1; i < DRM_FRAC_MAX_CMDS; i++)
		c->cmds[i] = c->cmds[0];
	c->s.cmd_count = DRM_FRAC_MAX_CMDS;
});
SUBMIT_CASE(valid_last_queue, 0, c->s.queue = c->nq - 1);
SUBMIT_CASE(valid_prio_low, 0, c->s.priority = DRM_FRAC_PRIO_LOW);
SUBMIT_CASE(valid_prio_high, 0, c->s.priority = DRM_FRAC_PRIO_HIGH);
SUBMIT_CASE(valid_range_to_the_end, 0, {
	c->c->src_offset = BO_SIZE - 4096;
	c->c->dst_offset = BO_SIZE - 4096;
});
SUBMIT_CASE(valid_nop, 0, set_op(c, DRM_FRAC_OP_NOP));
SUBMIT_CASE(valid_fill, 0, set_op(c, DRM_FRAC_OP_FILL));
SUBMIT_CASE(valid_crc32c_any_seed, 0, { set_op(c, DRM_FRAC_OP_CRC32C); c->c->arg[0] = ~0u; });
SUBMIT_CASE(valid_timestamp_len_8, 0, set_op(c, DRM_FRAC_OP_TIMESTAMP));
SUBMIT_CASE(valid_timestamp_len_0, 0, {
	set_op(c, DRM_FRAC_OP_TIMESTAMP);
	c->c->dst_handle = 0;
	c->c->len = 0;
});
SUBMIT_CASE(valid_gemm_m_max, 0, set_gemm(c, c->gemm_max, 1, 1, DRM_FRAC_GEMM_FP32));
SUBMIT_CASE(valid_gemm_n_max, 0, set_gemm(c, 1, c->gemm_max, 1, DRM_FRAC_GEMM_FP32));
SUBMIT_CASE(valid_gemm_k_max, 0, set_gemm(c, 1, 1, c->gemm_max, DRM_FRAC_GEMM_FP32));
SUBMIT_CASE(valid_gemm_fits_exactly, 0, set_gemm(c, 256, 64, 256, DRM_FRAC_GEMM_INT8));
SUBMIT_CASE(valid_in_syncobj_signalled, 0, {
	/* Created signalled: the syncobj holds a signalled stub fence. */
	struct drm_syncobj_create sc = { .flags = DRM_SYNCOBJ_CREATE_SIGNALED };

	if (!frac_t_ioctl(c->fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc))
		c->s.in_syncobj = sc.handle;
});

/* struct drm_frac_submit */
SUBMIT_CASE(cmd_count_0, -EINVAL, c->s.cmd_count = 0);
SUBMIT_CASE(cmd_count_max_plus_1, -EINVAL, {
	uint32_t i;

	for (i = 1; i <= DRM_FRAC_MAX_CMDS; i++)
		c->cmds[i] = c->cmds[0];
	c->s.cmd_count = DRM_FRAC_MAX_CMDS + 1;
});
SUBMIT_CASE(cmd_count_huge, -EINVAL, c->s.cmd_count = ~0u);
SUBMIT_CASE(cmd_size_0, -EINVAL, c->s.cmd_size = 0);
SUBMIT_CASE(cmd_size_short, -EINVAL, c->s.cmd_size = sizeof(struct drm_frac_cmd) - 8);
SUBMIT_CASE(cmd_size_long, -EINVAL, c->s.cmd_size = sizeof(struct drm_frac_cmd) + 8);
SUBMIT_CASE(cmds_null, -EFAULT, c->s.cmds = 0);
SUBMIT_CASE(cmds_unmapped, -EFAULT, c->s.cmds = 4096);
SUBMIT_CASE(cmds_kernel_address, -EFAULT, c->s.cmds = 0xffff888000000000ull);
SUBMIT_CASE(queue_num_queues, -EINVAL, c->s.queue = c->nq);
SUBMIT_CASE(queue_max, -EINVAL, c->s.queue = 16);	/* past any device */
SUBMIT_CASE(queue_u32_max, -EINVAL, c->s.queue = ~0u);
SUBMIT_CASE(priority_3, -EINVAL, c->s.priority = DRM_FRAC_PRIO_HIGH + 1);
SUBMIT_CASE(priority_u32_max, -EINVAL, c->s.priority = ~0u);
SUBMIT_CASE(flags_bit2, -EINVAL, c->s.flags = 1u << 2);
SUBMIT_CASE(local_queue_with_queue, -EINVAL,
	    c->s.flags = DRM_FRAC_SUBMIT_LOCAL_QUEUE; c->s.queue = 1);
SUBMIT_CASE(flags_bit31, -EINVAL, c->s.flags = 1u << 31);
SUBMIT_CASE(in_syncobj_unknown, -ENOENT, c->s.in_syncobj = 12345);
SUBMIT_CASE(out_syncobj_unknown, -ENOENT, c->s.out_syncobj = 12345);
SUBMIT_CASE(in_syncobj_without_fence, -EINVAL, c->s.in_syncobj = c->so);
SUBMIT_CASE(bad_cmd_with_out_syncobj, -EINVAL, { c->s.out_syncobj = c->so; c->c->op = 99; });
SUBMIT_CASE(bad_in_with_out_syncobj, -ENOENT, {
	c->s.out_syncobj = c->so;
	c->s.in_syncobj = 12345;
});

/* struct drm_frac_cmd: opcode, flags, pad */
SUBMIT_CASE(op_after_last, -EINVAL, c->c->op = DRM_FRAC_OP_TIMESTAMP + 1);
SUBMIT_CASE(op_u32_max, -EINVAL, c->c->op = ~0u);
SUBMIT_CASE(cmd_flags, -EINVAL, c->c->flags = 1);
SUBMIT_CASE(cmd_flags_bit31, -EINVAL, c->c->flags = 1u << 31);
SUBMIT_CASE(cmd_pad, -EINVAL, c->c->pad = 1);
SUBMIT_CASE(second_cmd_bad, -EINVAL, {
	c->cmds[1] = c->cmds[0];
	c->cmds[1].flags = 1;
	c->s.cmd_count = 2;
});
SUBMIT_CASE(last_of_max_cmds_bad, -EINVAL, {
	uint32_t i;

	for (i = 1; i < DRM_FRAC_MAX_CMDS; i++)
		c->cmds[i] = c->cmds[0];
	c->cmds[DRM_FRAC_MAX_CMDS - 1].pad = 7;
	c->s.cmd_count = DRM_FRAC_MAX_CMDS;
});

/* Handles */
SUBMIT_CASE(src_unknown_handle, -ENOENT, c->c->src_handle = 12345);
SUBMIT_CASE(dst_unknown_handle, -ENOENT, c->c->dst_handle = 12345);
SUBMIT_CASE(gemm_aux_unknown_handle, -ENOENT, {
	set_gemm(c, 4, 4, 4, DRM_FRAC_GEMM_FP32);
	c->c->aux_handle = 12345;
});
SUBMIT_CASE(src_used_handle_0, -EINVAL, c->c->src_handle = 0);
SUBMIT_CASE(dst_used_handle_0, -EINVAL, c->c->dst_handle = 0);
SUBMIT_CASE(gemm_aux_used_handle_0, -EINVAL, {
	set_gemm(c, 4, 4, 4, DRM_FRAC_GEMM_FP32);
	c->c->aux_handle = 0;
});

/* Unused operands name nothing */
SUBMIT_CASE(copy_unused_aux_handle, -EINVAL, c->c->aux_handle = c->x);
SUBMIT_CASE(copy_unused_aux_offset, -EINVAL, c->c->aux_offset = 8);
SUBMIT_CASE(copy_unused_aux_unknown_handle, -EINVAL, c->c->aux_handle = 12345);
SUBMIT_CASE(fill_unused_src_handle, -EINVAL, { set_op(c, DRM_FRAC_OP_FILL); c->c->src_handle = c->a; });
SUBMIT_CASE(fill_unused_src_offset, -EINVAL, { set_op(c, DRM_FRAC_OP_FILL); c->c->src_offset = 4; });
SUBMIT_CASE(crc32c_unused_dst_handle, -EINVAL, {
	set_op(c, DRM_FRAC_OP_CRC32C);
	c->c->dst_handle = c->b;
});
SUBMIT_CASE(crc32c_unused_aux_offset, -EINVAL, {
	set_op(c, DRM_FRAC_OP_CRC32C);
	c->c->aux_offset = 1;
});
SUBMIT_CASE(nop_with_handle, -EINVAL, { set_op(c, DRM_FRAC_OP_NOP); c->c->dst_handle = c->b; });
SUBMIT_CASE(nop_with_offset, -EINVAL, { set_op(c, DRM_FRAC_OP_NOP); c->c->src_offset = 64; });
SUBMIT_CASE(timestamp_len_0_with_dst, -EINVAL, {
	set_op(c, DRM_FRAC_OP_TIMESTAMP);
	c->c->len = 0;
});
SUBMIT_CASE(timestamp_unused_src, -EINVAL, {
	set_op(c, DRM_FRAC_OP_TIMESTAMP);
	c->c->src_handle = c->a;
});

/* Arguments a command does not use are zero */
SUBMIT_CASE(nop_len, -EINVAL, { set_op(c, DRM_FRAC_OP_NOP); c->c->len = 1; });
SUBMIT_CASE(nop_arg0, -EINVAL, { set_op(c, DRM_FRAC_OP_NOP); c->c->arg[0] = 1; });
SUBMIT_CASE(copy_arg0, -EINVAL, c->c->arg[0] = 1);
SUBMIT_CASE(copy_arg3, -EINVAL, c->c->arg[3] = 1);
SUBMIT_CASE(fill_arg1, -EINVAL, { set_op(c, DRM_FRAC_OP_FILL); c->c->arg[1] = 1; });
SUBMIT_CASE(fill_arg3, -EINVAL, { set_op(c, DRM_FRAC_OP_FILL); c->c->arg[3] = 1; });
SUBMIT_CASE(crc32c_arg2, -EINVAL, { set_op(c, DRM_FRAC_OP_CRC32C); c->c->arg[2] = 1; });
SUBMIT_CASE(timestamp_arg0, -EINVAL, { set_op(c, DRM_FRAC_OP_TIMESTAMP); c->c->arg[0] = 1; });
SUBMIT_CASE(timestamp_arg3, -EINVAL, { set_op(c, DRM_FRAC_OP_TIMESTAMP); c->c->arg[3] = 1; });

/* Ranges */
/* BO directions: the device never reads a FROM_DEVICE BO nor writes a TO_DEVICE one. */
SUBMIT_CASE(copy_dst_in_to_device_bo, -EINVAL, { c->c->dst_handle = c->a; c->c->dst_offset = 8192; });
SUBMIT_CASE(copy_src_in_from_device_bo, -EINVAL, { c->c->src_handle = c->b; c->c->src_offset = 8192; });
SUBMIT_CASE(fill_dst_in_to_device_bo, -EINVAL, { set_op(c, DRM_FRAC_OP_FILL); c->c->dst_handle = c->a; });
SUBMIT_CASE(crc32c_src_in_from_device_bo, -EINVAL, {
	set_op(c, DRM_FRAC_OP_CRC32C);
	c->c->src_handle = c->b;
});
SUBMIT_CASE(gemm_aux_in_from_device_bo, -EINVAL, {
	set_gemm(c, 1, 1, 1, DRM_FRAC_GEMM_FP32);
	c->c->aux_handle = c->b;
	c->c->aux_offset = 8192;
});
SUBMIT_CASE(gemm_dst_in_to_device_bo, -EINVAL, {
	set_gemm(c, 1, 1, 1, DRM_FRAC_GEMM_FP32);
	c->c->dst_handle = c->a;
	c->c->dst_offset = 8192;
});
SUBMIT_CASE(valid_gemm_aux_to_device, 0, {
	set_gemm(c, 1, 1, 1, DRM_FRAC_GEMM_FP32);
	c->c->aux_handle = c->a;
	c->c->aux_offset = 8192;
});
SUBMIT_CASE(valid_copy_src_bidirectional, 0, c->c->src_handle = c->x);
SUBMIT_CASE(valid_copy_dst_bidirectional, 0, c->c->dst_handle = c->x);
SUBMIT_CASE(src_offset_at_end, -EINVAL, { c->c->src_offset = BO_SIZE; c->c->len = 1; });
SUBMIT_CASE(src_one_past_end, -EINVAL, c->c->src_offset = BO_SIZE - 4096 + 1);
SUBMIT_CASE(dst_one_past_end, -EINVAL, c->c->dst_offset = BO_SIZE - 4096 + 1);
SUBMIT_CASE(len_one_past_bo, -EINVAL, c->c->len = BO_SIZE + 1);
SUBMIT_CASE(src_offset_overflow, -EINVAL, c->c->src_offset = ~0ull - 10);
SUBMIT_CASE(dst_offset_overflow, -EINVAL, c->c->dst_offset = ~0ull - 4094);
SUBMIT_CASE(len_overflow, -EINVAL, { c->c->src_offset = 100; c->c->len = ~0ull - 50; });
SUBMIT_CASE(len_over_4g, -EINVAL, c->c->len = FRAC_4G + 1);
SUBMIT_CASE(fill_len_over_4g, -EINVAL, { set_op(c, DRM_FRAC_OP_FILL); c->c->len = FRAC_4G + 1; });
SUBMIT_CASE(fill_one_past_end, -EINVAL, {
	set_op(c, DRM_FRAC_OP_FILL);
	c->c->dst_offset = BO_SIZE - 3;
	c->c->len = 4;
});
SUBMIT_CASE(crc32c_one_past_end, -EINVAL, {
	set_op(c, DRM_FRAC_OP_CRC32C);
	c->c->src_offset = 1;
	c->c->len = BO_SIZE;
});
SUBMIT_CASE(timestamp_one_past_end, -EINVAL, {
	set_op(c, DRM_FRAC_OP_TIMESTAMP);
	c->c->dst_offset = BO_SIZE - 7;
});

/* TIMESTAMP len is 0 or 8 */
SUBMIT_CASE(timestamp_len_1, -EINVAL, { set_op(c, DRM_FRAC_OP_TIMESTAMP); c->c->len = 1; });
SUBMIT_CASE(timestamp_len_4, -EINVAL, { set_op(c, DRM_FRAC_OP_TIMESTAMP); c->c->len = 4; });
SUBMIT_CASE(timestamp_len_7, -EINVAL, { set_op(c, DRM_FRAC_OP_TIMESTAMP); c->c->len = 7; });
SUBMIT_CASE(timestamp_len_9, -EINVAL, { set_op(c, DRM_FRAC_OP_TIMESTAMP); c->c->len = 9; });
SUBMIT_CASE(timestamp_len_16, -EINVAL, { set_op(c, DRM_FRAC_OP_TIMESTAMP); c->c->len = 16; });
SUBMIT_CASE(timestamp_len_8_no_dst, -EINVAL, {
	set_op(c, DRM_FRAC_OP_TIMESTAMP);
	c->c->dst_handle = 0;
});

/* GEMM dimensions, type, len, operand sizes */
SUBMIT_CASE(gemm_m_0, -EINVAL, set_gemm(c, 0, 4, 4, DRM_FRAC_GEMM_FP32));
SUBMIT_CASE(gemm_n_0, -EINVAL, set_gemm(c, 4, 0, 4, DRM_FRAC_GEMM_FP32));
SUBMIT_CASE(gemm_k_0, -EINVAL, set_gemm(c, 4, 4, 0, DRM_FRAC_GEMM_FP32));
SUBMIT_CASE(gemm_m_max_plus_1, -EINVAL, set_gemm(c, c->gemm_max + 1, 1, 1, DRM_FRAC_GEMM_INT8));
SUBMIT_CASE(gemm_n_max_plus_1, -EINVAL, set_gemm(c, 1, c->gemm_max + 1, 1, DRM_FRAC_GEMM_INT8));
SUBMIT_CASE(gemm_k_max_plus_1, -EINVAL, set_gemm(c, 1, 1, c->gemm_max + 1, DRM_FRAC_GEMM_INT8));
SUBMIT_CASE(gemm_dims_u32_max, -EINVAL, set_gemm(c, ~0u, ~0u, ~0u, DRM_FRAC_GEMM_INT8));
SUBMIT_CASE(gemm_type_2, -EINVAL, set_gemm(c, 4, 4, 4, DRM_FRAC_GEMM_INT8 + 1));
SUBMIT_CASE(gemm_type_u32_max, -EINVAL, set_gemm(c, 4, 4, 4, ~0u));
SUBMIT_CASE(gemm_len, -EINVAL, { set_gemm(c, 4, 4, 4, DRM_FRAC_GEMM_FP32); c->c->len = 64; });
SUBMIT_CASE(gemm_a_one_past_end, -EINVAL, {
	set_gemm(c, 256, 64, 256, DRM_FRAC_GEMM_INT8);
	c->c->src_offset = 1;
});
SUBMIT_CASE(gemm_b_one_past_end, -EINVAL, {
	set_gemm(c, 1, 256, 64, DRM_FRAC_GEMM_FP32);	/* B is 64 KiB */
	c->c->aux_offset = 4;
});
SUBMIT_CASE(gemm_c_one_past_end, -EINVAL, {
	set_gemm(c, 256, 64, 256, DRM_FRAC_GEMM_INT8);	/* C is 64 KiB */
	c->c->dst_offset = 4;
});
SUBMIT_CASE(gemm_fp32_a_too_big, -EINVAL, set_gemm(c, 256, 64, 256, DRM_FRAC_GEMM_FP32));

/* ---- SUBMIT_BATCH ------------------------------------------------------- */

/*
 * The batch's own arguments. The valid batch: DRM_FRAC_MAX_BATCH copies of
 * 4 KiB on queue 0, job i from a at (i % 16) * 4 KiB to y at i * 4 KiB. Its
 * array lies in a mapping of its own, followed by a page without access, so
 * that a case can make it unreadable at its end or read-only.
 */
#define BATCH_Y_SIZE	(DRM_FRAC_MAX_BATCH * 4096ull)

struct batch_ctx {
	struct drm_frac_submit_batch b;
	struct drm_frac_submit *jobs;	/* in @map */
	struct drm_frac_cmd cmds[DRM_FRAC_MAX_BATCH];
	uint8_t *map;			/* 2 pages read-write, 1 without access */
	long page;
	uint32_t nq;
};

FIXTURE(batch) {
	struct frac_dev dev;
	struct frac_bo a, y;
	struct batch_ctx ctx;
};

FIXTURE_VARIANT(batch) {
	void (*mutate)(struct batch_ctx *c);
	int err;
};

FIXTURE_SETUP(batch)
{
	struct batch_ctx *c = &self->ctx;
	uint32_t i;

	self->dev.fd = -1;
	FRAC_OPEN_OR_SKIP(&self->dev);
	ASSERT_EQ(0, frac_t_bo(&self->dev, BO_SIZE, DRM_FRAC_BO_TO_DEVICE, &self->a));
	ASSERT_EQ(0, frac_t_bo(&self->dev, BATCH_Y_SIZE, 0, &self->y));
	frac_fill_random(self->a.map, BO_SIZE, 7);
	memset(self->y.map, FRAC_POISON, BATCH_Y_SIZE);

	memset(c, 0, sizeof(*c));
	c->nq = self->dev.num_queues;
	c->page = sysconf(_SC_PAGESIZE);
	c->map = mmap(NULL, 3 * c->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	ASSERT_NE(MAP_FAILED, c->map);
	ASSERT_EQ(0, mprotect(c->map + 2 * c->page, c->page, PROT_NONE));
	ASSERT_LE(DRM_FRAC_MAX_BATCH * sizeof(*c->jobs), (size_t)c->page);
	c->jobs = (struct drm_frac_submit *)c->map;
	for (i = 0; i < DRM_FRAC_MAX_BATCH; i++) {
		c->cmds[i].op = DRM_FRAC_OP_COPY;
		c->cmds[i].src_handle = self->a.handle;
		c->cmds[i].src_offset = (i % 16) * 4096ull;
		c->cmds[i].dst_handle = self->y.handle;
		c->cmds[i].dst_offset = i * 4096ull;
		c->cmds[i].len = 4096;
		c->jobs[i] = (struct drm_frac_submit) {
			.cmds = (uintptr_t)&c->cmds[i],
			.cmd_count = 1,
			.cmd_size = sizeof(c->cmds[i]),
			.priority = DRM_FRAC_PRIO_NORMAL,
			.job_id = FRAC_POISON32,
		};
	}
	c->b.jobs = (uintptr_t)c->jobs;
	c->b.count = DRM_FRAC_MAX_BATCH;
	c->b.job_size = sizeof(struct drm_frac_submit);
}

FIXTURE_TEARDOWN(batch)
{
	if (self->dev.fd < 0)
		return;
	munmap(self->ctx.map, 3 * self->ctx.page);
	frac_bo_destroy(&self->dev, &self->a);
	frac_bo_destroy(&self->dev, &self->y);
	frac_close(&self->dev);
}

TEST_F(batch, run)
{
	struct batch_ctx *c = &self->ctx;
	struct drm_frac_submit before[DRM_FRAC_MAX_BATCH];
	struct drm_frac_submit_batch hdr;
	struct drm_frac_submit *jobs;
	struct drm_frac_wait w;
	uint32_t i, n;
	int ret;

	if (variant->mutate)
		variant->mutate(c);
	jobs = (struct drm_frac_submit *)(uintptr_t)c->b.jobs;
	n = c->b.count <= DRM_FRAC_MAX_BATCH ? c->b.count : DRM_FRAC_MAX_BATCH;
	memcpy(before, c->jobs, sizeof(before));
	hdr = c->b;
	ret = frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_SUBMIT_BATCH, &c->b);
	ASSERT_EQ(variant->err, ret) TH_LOG("SUBMIT_BATCH returned %d (%s), want %d", ret,
					    strerror(-ret), variant->err);
	EXPECT_EQ(0, memcmp(&hdr, &c->b, sizeof(hdr))) TH_LOG("the header is input only");
	if (variant->err) {
		EXPECT_EQ(0, memcmp(before, c->jobs, sizeof(before)))
			TH_LOG("a refused batch wrote its array");
		EXPECT_EQ(-EINVAL, frac_t_wait(self->dev.fd, 1, 0, &w))
			TH_LOG("a refused batch left a job behind");
		usleep(1000);
		EXPECT_EQ(-1, frac_check_byte(self->y.map, BATCH_Y_SIZE, FRAC_POISON))
			TH_LOG("a job of a refused batch ran");
		return;
	}
	for (i = 0; i < n; i++) {
		EXPECT_EQ(jobs[0].queue, jobs[i].queue);
		if (jobs[i].flags & DRM_FRAC_SUBMIT_NO_JOB_ID) {
			EXPECT_EQ(0u, jobs[i].job_id);
			continue;
		}
		ASSERT_NE(FRAC_POISON32, jobs[i].job_id);
		if (i)
			EXPECT_NE(jobs[i - 1].job_id, jobs[i].job_id);
	}
	/* Each job ends through its own id, and did its own copy. */
	for (i = 0; i < n; i++) {
		if (!(jobs[i].flags & DRM_FRAC_SUBMIT_NO_JOB_ID)) {
			ASSERT_EQ(0, frac_t_wait(self->dev.fd, jobs[i].job_id, 30 * FRAC_NSEC, &w));
			EXPECT_EQ(0, w.status) TH_LOG("job %u", i);
		}
	}
	if (jobs[n - 1].flags & DRM_FRAC_SUBMIT_NO_JOB_ID) {
		/* Without ids: a NOP behind them on their queue ends after them. */
		struct drm_frac_cmd nop = { .op = DRM_FRAC_OP_NOP };
		uint32_t id;

		ASSERT_EQ(0, frac_t_submit(self->dev.fd, &nop, 1, jobs[0].queue, 0, 0, &id));
		ASSERT_EQ(0, frac_t_wait(self->dev.fd, id, 30 * FRAC_NSEC, &w));
	}
	for (i = 0; i < n; i++) {
		const struct drm_frac_cmd *cmd = (const void *)(uintptr_t)jobs[i].cmds;

		EXPECT_EQ(0, memcmp((char *)self->y.map + cmd->dst_offset,
				    (char *)self->a.map + cmd->src_offset, 4096)) TH_LOG("job %u", i);
	}
}

#define BATCH_CASE(name, errno_, body)						\
	static void mutate_b_##name(struct batch_ctx *c) { body; }		\
	FIXTURE_VARIANT_ADD(batch, name) { .mutate = mutate_b_##name, .err = errno_ }

FIXTURE_VARIANT_ADD(batch, valid_max) { .mutate = NULL, .err = 0 };
BATCH_CASE(valid_one, 0, c->b.count = 1);
BATCH_CASE(valid_two, 0, c->b.count = 2);
BATCH_CASE(valid_last_queue, 0, {
	for (uint32_t i = 0; i < DRM_FRAC_MAX_BATCH; i++)
		c->jobs[i].queue = c->nq - 1;
});
BATCH_CASE(valid_local_queue, 0, {
	for (uint32_t i = 0; i < DRM_FRAC_MAX_BATCH; i++)
		c->jobs[i].flags = DRM_FRAC_SUBMIT_LOCAL_QUEUE;
});
BATCH_CASE(valid_prio_high, 0, {
	for (uint32_t i = 0; i < DRM_FRAC_MAX_BATCH; i++)
		c->jobs[i].priority = DRM_FRAC_PRIO_HIGH;
});
BATCH_CASE(valid_no_job_id, 0, {
	for (uint32_t i = 0; i < DRM_FRAC_MAX_BATCH; i++)
		c->jobs[i].flags = DRM_FRAC_SUBMIT_NO_JOB_ID;
});
/* A job naming the BO an earlier job of its batch writes: in order, no deadlock. */
BATCH_CASE(valid_two_jobs_one_bo, 0, {
	c->b.count = 2;
	c->cmds[1] = c->cmds[0];
});
/* The array's last byte just before the page without access. */
BATCH_CASE(valid_array_at_page_end, 0, {
	uint8_t *end = c->map + 2 * c->page;

	c->b.count = 3;
	memmove(end - 3 * sizeof(*c->jobs), c->jobs, 3 * sizeof(*c->jobs));
	c->b.jobs = (uintptr_t)(end - 3 * sizeof(*c->jobs));
});
BATCH_CASE(count_0, -EINVAL, c->b.count = 0);
BATCH_CASE(count_max_plus_1, -EINVAL, c->b.count = DRM_FRAC_MAX_BATCH + 1);
BATCH_CASE(count_u32_max, -EINVAL, c->b.count = ~0u);
BATCH_CASE(job_size_0, -EINVAL, c->b.job_size = 0);
BATCH_CASE(job_size_minus_1, -EINVAL, c->b.job_size = sizeof(struct drm_frac_submit) - 1);
BATCH_CASE(job_size_plus_1, -EINVAL, c->b.job_size = sizeof(struct drm_frac_submit) + 1);
BATCH_CASE(job_size_plus_8, -EINVAL, c->b.job_size = sizeof(struct drm_frac_submit) + 8);
BATCH_CASE(flags_bit0, -EINVAL, c->b.flags = 1);
BATCH_CASE(flags_bit31, -EINVAL, c->b.flags = 1u << 31);
BATCH_CASE(pad, -EINVAL, c->b.pad = 1);
/* One queue, priority and flags per batch */
BATCH_CASE(queue_differs, -EINVAL, c->jobs[DRM_FRAC_MAX_BATCH - 1].queue = c->nq > 1 ? 1 : c->nq);
BATCH_CASE(priority_differs, -EINVAL, c->jobs[7].priority = DRM_FRAC_PRIO_LOW);
BATCH_CASE(flags_differ, -EINVAL, c->jobs[1].flags = DRM_FRAC_SUBMIT_NO_JOB_ID);
/* A SUBMIT error in the last job refuses the whole batch */
BATCH_CASE(last_job_unknown_handle, -ENOENT, c->cmds[DRM_FRAC_MAX_BATCH - 1].dst_handle = 999999);
BATCH_CASE(last_job_range, -EINVAL, c->cmds[DRM_FRAC_MAX_BATCH - 1].dst_offset = BATCH_Y_SIZE);
BATCH_CASE(last_job_cmds_unreadable, -EFAULT, c->jobs[DRM_FRAC_MAX_BATCH - 1].cmds = 8);
BATCH_CASE(first_job_cmd_count_0, -EINVAL, c->jobs[0].cmd_count = 0);
/* The array itself */
BATCH_CASE(jobs_null, -EFAULT, c->b.jobs = 0);
BATCH_CASE(jobs_cross_into_no_access, -EFAULT, {
	uint8_t *end = c->map + 2 * c->page;

	c->b.count = 3;
	memmove(end - 2 * sizeof(*c->jobs), c->jobs, 2 * sizeof(*c->jobs));
	c->b.jobs = (uintptr_t)(end - 2 * sizeof(*c->jobs));
});
/* Readable, but where the results cannot go: refused before any job is submitted. */
BATCH_CASE(jobs_read_only, -EFAULT, mprotect(c->map, 2 * c->page, PROT_READ));

TEST_HARNESS_MAIN
