// SPDX-License-Identifier: MIT
/*
 * Systematic allocation failures in frac.ko's syscall paths (fail-nth).
 *
 * /proc/thread-self/fail-nth makes the N-th fault-injection site that the
 * thread reaches fail (Documentation/fault-injection/fault-injection.rst,
 * "Systematic faults using fail-nth"): with failslab and fail_page_alloc
 * told not to skip sleeping allocations, that is the N-th slab or page
 * allocation of the next syscall, in frac.ko or in the DRM, dma-buf, shmem
 * and sysfs code it calls. Each test runs one syscall with N = 1, 2, ...
 * until the syscall completes without reaching its N-th site, so every
 * allocation on its path fails once, and checks after each failure:
 *  - the syscall failed with -ENOMEM (or, where a fallback exists,
 *    succeeded), and wrote nothing back that a retry would trip on;
 *  - the file holds the same memory as before (fdinfo drm-total-*);
 *  - a SUBMIT that failed signalled and replaced nothing (its out-syncobj
 *    still has no fence);
 *  - the device runs a verified job afterwards.
 * Leaks and bad unwinding are for the checkers: on the debug kernel the
 * lane fails on any KASAN, lockdep or kmemleak report (scripts/kcheck).
 *
 * Bind (probe) is the same loop over a write to the driver's bind file, on
 * FRAC_FAILNTH_BIND_SITES of its sites spread evenly (0: every one; a probe
 * on the debug kernel under TCG takes seconds); SKIP when it is not set
 * (an ACPICA use-after-free, see the test). Allocations made by
 * work items and the schedulers' threads are not the writer's; errinj.sh's
 * fail_function cases reach those.
 *
 * Needs CONFIG_FAULT_INJECTION, CONFIG_FAILSLAB and CONFIG_FAIL_PAGE_ALLOC
 * with debugfs (the debug kernel); SKIPs otherwise.
 */
#include <dirent.h>
#include <linux/udmabuf.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "frac_test.h"

/* More sites than any of these paths has: a loop that reaches it is a bug. */
#define NTH_MAX		4000

/* The fault-injection knobs this file sets, and their values to restore. */
static const char * const knobs[][2] = {
	{ "/sys/kernel/debug/failslab/ignore-gfp-wait", "N" },
	{ "/sys/kernel/debug/failslab/verbose", "0" },
	{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N" },
	{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "N" },
	{ "/sys/kernel/debug/fail_page_alloc/min-order", "0" },
	{ "/sys/kernel/debug/fail_page_alloc/verbose", "0" },
};

static char saved[FRAC_ARRAY_SIZE(knobs)][32];

static int knob_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Set the knobs; -ENOENT when this kernel lacks one. */
static int knobs_set(void)
{
	size_t i;
	int ret;

	for (i = 0; i < FRAC_ARRAY_SIZE(knobs); i++) {
		ret = knob_read(knobs[i][0], saved[i], sizeof(saved[i]));
		if (ret)
			return ret;
	}
	for (i = 0; i < FRAC_ARRAY_SIZE(knobs); i++) {
		ret = frac_t_write_str(knobs[i][0], knobs[i][1]);
		if (ret)
			return ret;
	}
	return 0;
}

static void knobs_restore(void)
{
	size_t i;

	for (i = 0; i < FRAC_ARRAY_SIZE(knobs); i++)
		if (saved[i][0])
			frac_t_write_str(knobs[i][0], saved[i]);
}

/* ---- fail-nth ------------------------------------------------------------ */

static int nth_open(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth", (long)syscall(SYS_gettid));
	return open(path, O_RDWR | O_CLOEXEC);
}

static void nth_set(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(fd, buf, (size_t)len, 0) != len)
		abort();
}

/* 0 once the armed failure was injected, else the sites still to go. */
static unsigned int nth_get(int fd)
{
	char buf[16] = "";

	if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
		abort();
	return (unsigned int)strtoul(buf, NULL, 10);
}

/* ---- What the file holds ------------------------------------------------- */

/* The sum of the file's drm-total-* memory keys, in KiB; -1 if unreadable. */
static long long file_memory(int fd)
{
	char path[64], line[256];
	long long sum = 0, v;
	char unit[8];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *val;

		if (strncmp(line, "drm-total-", 10))
			continue;
		val = strchr(line, ':');
		if (!val)
			continue;
		unit[0] = '\0';
		if (sscanf(val + 1, "%lld %7s", &v, unit) < 1)
			continue;
		if (!strcmp(unit, "MiB"))
			v *= 1024;
		else if (!strcmp(unit, "GiB"))
			v *= 1024 * 1024;
		else if (!unit[0])
			v /= 1024;
		sum += v;
	}
	fclose(f);
	return sum;
}

/*
 * The device still runs a verified copy (host -> host, 64 KiB). The loop
 * makes its two BOs once, before it reads the file's memory, and copies
 * fresh random bytes (a new seed each round) over what the last round left
 * in the destination, so each round still proves a job ran and moved the
 * right bytes; BO_CREATE itself is what the bo_create tests fail.
 */
struct works {
	struct frac_bo a, b;
	unsigned int round;
};

static int works_init(struct frac_dev *dev, struct works *w)
{
	int ret;

	memset(w, 0, sizeof(*w));
	ret = frac_t_bo(dev, 64 << 10, 0, &w->a);
	if (!ret)
		ret = frac_t_bo(dev, 64 << 10, 0, &w->b);
	return ret;
}

static void works_fini(struct frac_dev *dev, struct works *w)
{
	if (w->a.handle)
		frac_bo_destroy(dev, &w->a);
	if (w->b.handle)
		frac_bo_destroy(dev, &w->b);
}

static int device_works(struct frac_dev *dev, struct works *w)
{
	struct frac_job_result res;
	struct frac_cmdlist cl;
	int ret;

	frac_fill_random(w->a.map, w->a.size, 77 + w->round++);
	frac_cmdlist_init(&cl);
	ret = frac_cmd_copy(&cl, &w->b, 0, &w->a, 0, w->a.size);
	if (!ret)
		ret = frac_run(dev, 0, &cl, &res);
	if (!ret && res.status)
		ret = res.status;
	if (!ret && memcmp(w->a.map, w->b.map, w->a.size))
		ret = -EILSEQ;
	return ret;
}

/* The same on BOs of its own, for a file that was just opened. */
static int device_works_once(struct frac_dev *dev)
{
	struct works w;
	int ret;

	ret = works_init(dev, &w);
	if (!ret)
		ret = device_works(dev, &w);
	works_fini(dev, &w);
	return ret;
}

/* ---- The loop -------------------------------------------------------------- */

/* Set by an undo() that found what a tolerated failure made broken. */
static int undo_err;

/*
 * One syscall under test: run() makes it once (0 or -errno; no other syscall
 * may come between it and nth_get(), so it must be a single syscall),
 * undo() releases what a successful run() made, check() (optional) looks at
 * the state a failed run() left.
 */
struct nth_op {
	const char *name;
	int (*setup)(struct frac_dev *dev, void *ctx);
	int (*run)(struct frac_dev *dev, void *ctx);
	void (*undo)(struct frac_dev *dev, void *ctx);
	int (*check)(struct frac_dev *dev, void *ctx);
	void (*teardown)(struct frac_dev *dev, void *ctx);
};

static void nth_loop(struct __test_metadata *_metadata, struct frac_dev *dev,
		     const struct nth_op *op, void *ctx)
{
	unsigned int n, failed = 0, tolerated = 0;
	struct works works;
	long long mem0;
	int fd, ret;

	fd = nth_open();
	ASSERT_LE(0, fd) TH_LOG("fail-nth: %s", strerror(errno));
	if (op->setup)
		ASSERT_EQ(0, op->setup(dev, ctx)) TH_LOG("%s: setup", op->name);
	ASSERT_EQ(0, works_init(dev, &works)) TH_LOG("%s: the BOs of the device check", op->name);
	mem0 = file_memory(dev->fd);
	ASSERT_LE(0, mem0);
	for (n = 1; n <= NTH_MAX; n++) {
		unsigned int left;

		nth_set(fd, n);
		ret = op->run(dev, ctx);
		left = nth_get(fd);
		nth_set(fd, 0);
		if (left) {
			/* Fewer than n sites: the syscall ran whole. */
			EXPECT_EQ(0, ret) TH_LOG("%s: %s with no failure injected", op->name,
						 strerror(-ret));
			if (!ret)
				op->undo(dev, ctx);
			break;
		}
		if (!ret) {
			tolerated++;
			undo_err = 0;
			op->undo(dev, ctx);
			EXPECT_EQ(0, undo_err) TH_LOG("%s: what site %u let through is broken",
						      op->name, n);
		} else {
			failed++;
			EXPECT_EQ(-ENOMEM, ret) TH_LOG("%s: site %u failed it with %s", op->name, n,
						       strerror(-ret));
		}
		if (ret && op->check)
			EXPECT_EQ(0, op->check(dev, ctx)) TH_LOG("%s: state after site %u", op->name,
								  n);
		EXPECT_EQ(mem0, file_memory(dev->fd))
			TH_LOG("%s: the file's memory moved after site %u failed", op->name, n);
		EXPECT_EQ(0, device_works(dev, &works)) TH_LOG("%s: device after site %u", op->name,
								 n);
		if (_metadata->exit_code)
			break;
	}
	EXPECT_GT(NTH_MAX, n) TH_LOG("%s: still failing after %u sites", op->name, NTH_MAX);
	TH_LOG("%s: %u allocation sites, %u failed the syscall, %u were tolerated", op->name, n - 1,
	       failed, tolerated);
	works_fini(dev, &works);
	if (op->teardown)
		op->teardown(dev, ctx);
	close(fd);
}

/* ---- The syscalls ---------------------------------------------------------- */

struct ctx {
	struct drm_frac_bo_create create;
	struct drm_prime_handle prime;
	struct drm_frac_cmd cmds[4];
	struct drm_frac_submit submit;
	struct drm_frac_submit batch[2];
	struct drm_frac_wait wait;
	struct frac_bo src, dst, dev_bo;
	uint32_t syncobj_in, syncobj_out;
	int open_fd, udma, memfd, dmabuf;
	char path[64];
	void *map;
};

static int gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return frac_t_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* open() of the device node */
static int open_setup(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	snprintf(c->path, sizeof(c->path), "/dev/accel/accel%d", dev->index);
	return 0;
}

static int open_run(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	(void)dev;
	c->open_fd = open(c->path, O_RDWR | O_CLOEXEC);
	return c->open_fd < 0 ? -errno : 0;
}

static void open_undo(struct frac_dev *dev, void *p)
{
	(void)dev;
	close(((struct ctx *)p)->open_fd);
}

/* BO_CREATE, host and device */
static int create_run(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	c->create.handle = FRAC_POISON32;
	return frac_t_ioctl(dev->fd, DRM_IOCTL_FRAC_BO_CREATE, &c->create);
}

static void create_undo(struct frac_dev *dev, void *p)
{
	gem_close(dev->fd, ((struct ctx *)p)->create.handle);
}

static int create_check(struct frac_dev *dev, void *p)
{
	(void)dev;
	/* A failed BO_CREATE writes no handle back. */
	return ((struct ctx *)p)->create.handle == FRAC_POISON32 ? 0 : -EINVAL;
}

/* mmap() of a host BO */
static int mmap_setup(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	return frac_bo_create(dev, 1 << 20, 0, &c->src);
}

static int mmap_run(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	c->map = mmap(NULL, c->src.size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd,
		      (off_t)c->src.mmap_offset);
	return c->map == MAP_FAILED ? -errno : 0;
}

static void mmap_undo(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	(void)dev;
	munmap(c->map, c->src.size);
}

static void src_teardown(struct frac_dev *dev, void *p)
{
	frac_bo_destroy(dev, &((struct ctx *)p)->src);
}

/* PRIME export of a host BO */
static int export_run(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	c->prime.handle = c->src.handle;
	c->prime.flags = DRM_CLOEXEC | DRM_RDWR;
	c->prime.fd = -1;
	return frac_t_ioctl(dev->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &c->prime);
}

static void export_undo(struct frac_dev *dev, void *p)
{
	(void)dev;
	close(((struct ctx *)p)->prime.fd);
}

/*
 * PRIME import of a udmabuf (its pages are another exporter's) of 129
 * pages: one more than a page of scatterlist entries holds (128 of 32
 * bytes; 102 with CONFIG_DEBUG_SG), so the exporter's sg_table is chained,
 * a page of entries then a kmalloc()ed rest, and each of those allocations
 * fails in turn. No more: each page adds about two allocation sites on the
 * debug kernel (546 to 679 for 1 MiB, 289 for these) and each import maps
 * and unmaps every page, so the sweep grows with the square of the pages.
 */
#define IMPORT_SIZE	(129 * FRAC_PAGE)

static int import_setup(struct frac_dev *dev, void *p)
{
	struct udmabuf_create cr = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = IMPORT_SIZE };
	struct ctx *c = p;

	(void)dev;
	c->udma = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (c->udma < 0)
		return -errno;
	c->memfd = memfd_create("frac-failnth", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (c->memfd < 0 || ftruncate(c->memfd, IMPORT_SIZE) ||
	    fcntl(c->memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		return -errno;
	cr.memfd = (uint32_t)c->memfd;
	c->dmabuf = ioctl(c->udma, UDMABUF_CREATE, &cr);
	return c->dmabuf < 0 ? -errno : 0;
}

static int import_run(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	c->prime.fd = c->dmabuf;
	c->prime.flags = 0;
	c->prime.handle = FRAC_POISON32;
	return frac_t_ioctl(dev->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &c->prime);
}

static void import_undo(struct frac_dev *dev, void *p)
{
	gem_close(dev->fd, ((struct ctx *)p)->prime.handle);
}

static void import_teardown(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	(void)dev;
	close(c->dmabuf);
	close(c->memfd);
	close(c->udma);
}

/*
 * SUBMIT: a copy host -> host, a fill and a CRC of device memory in one
 * job, after an in-syncobj that holds a signalled fence, into an
 * out-syncobj.
 */
static int submit_setup(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	uint32_t id;
	int ret;

	ret = frac_t_bo(dev, 64 << 10, 0, &c->src);
	if (!ret)
		ret = frac_t_bo(dev, 64 << 10, 0, &c->dst);
	if (!ret && (dev->features & DRM_FRAC_FEAT_DEVMEM))
		ret = frac_bo_create(dev, 64 << 10, DRM_FRAC_BO_DEVMEM, &c->dev_bo);
	if (!ret)
		ret = frac_t_syncobj_create(dev->fd, &c->syncobj_in);
	if (!ret)
		ret = frac_t_syncobj_create(dev->fd, &c->syncobj_out);
	if (ret)
		return ret;
	/* The in-syncobj gets the fence of a finished job. */
	frac_cmdlist_init(&cl);
	frac_cmd_nop(&cl);
	ret = frac_t_submit(dev->fd, cl.cmds, cl.count, 0, 0, c->syncobj_in, &id);
	if (!ret)
		ret = frac_wait(dev, id, FRAC_NSEC * 10, &res);
	if (ret)
		return ret;

	frac_cmdlist_init(&cl);
	frac_fill_random(c->src.map, c->src.size, 5);
	ret = frac_cmd_copy(&cl, &c->dst, 0, &c->src, 0, c->src.size);
	if (!ret && c->dev_bo.handle) {
		ret = frac_cmd_fill(&cl, &c->dev_bo, 0, c->dev_bo.size, 0x5a5a5a5a);
		if (!ret)
			ret = frac_cmd_crc32c(&cl, &c->dev_bo, 0, c->dev_bo.size, 0);
	}
	memcpy(c->cmds, cl.cmds, sizeof(cl.cmds[0]) * cl.count);
	c->submit = (struct drm_frac_submit) {
		.cmds = (uintptr_t)c->cmds,
		.cmd_count = cl.count,
		.cmd_size = sizeof(struct drm_frac_cmd),
		.queue = 0,
		.priority = DRM_FRAC_PRIO_NORMAL,
		.in_syncobj = c->syncobj_in,
		.out_syncobj = c->syncobj_out,
	};
	return ret;
}

/*
 * After a SUBMIT or SUBMIT_BATCH: a cleared destination, and a fresh
 * out-syncobj, so that check() can see a fence a failed call left.
 */
static void submit_reset(struct frac_dev *dev, struct ctx *c)
{
	memset(c->dst.map, 0, c->dst.size);
	frac_t_syncobj_destroy(dev->fd, c->syncobj_out);
	frac_t_syncobj_create(dev->fd, &c->syncobj_out);
	c->submit.out_syncobj = c->syncobj_out;
}

static int submit_run(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	c->submit.job_id = FRAC_POISON32;
	return frac_t_ioctl(dev->fd, DRM_IOCTL_FRAC_SUBMIT, &c->submit);
}

static void submit_undo(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;
	struct frac_job_result res;

	/* A SUBMIT that absorbed a failure must have made a job that works. */
	if (frac_wait(dev, c->submit.job_id, FRAC_NSEC * 10, &res) || res.status ||
	    memcmp(c->src.map, c->dst.map, c->src.size))
		undo_err = -EILSEQ;
	submit_reset(dev, c);
}

static int submit_check(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	/* A failed SUBMIT writes no id back and puts no fence in the out-syncobj. */
	if (c->submit.job_id != FRAC_POISON32)
		return -EINVAL;
	if (frac_t_syncobj_wait(dev->fd, c->syncobj_out, 0) != -EINVAL)
		return -EEXIST;
	return 0;
}

static void submit_teardown(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	frac_t_syncobj_destroy(dev->fd, c->syncobj_in);
	frac_t_syncobj_destroy(dev->fd, c->syncobj_out);
	frac_bo_destroy(dev, &c->src);
	frac_bo_destroy(dev, &c->dst);
	if (c->dev_bo.handle)
		frac_bo_destroy(dev, &c->dev_bo);
}

/*
 * SUBMIT_BATCH: SUBMIT's job twice in one batch, so that its BOs are locked
 * once for both jobs, with room for two fences each.
 */
static int batch_run(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;
	struct drm_frac_submit_batch b = {
		.jobs = (uintptr_t)c->batch,
		.count = 2,
		.job_size = sizeof(c->batch[0]),
	};

	c->batch[0] = c->submit;
	c->batch[0].job_id = FRAC_POISON32;
	c->batch[1] = c->batch[0];
	return frac_t_ioctl(dev->fd, DRM_IOCTL_FRAC_SUBMIT_BATCH, &b);
}

static void batch_undo(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;
	struct frac_job_result res;
	int i;

	/* A batch that absorbed a failure must have made two jobs that work. */
	for (i = 0; i < 2; i++)
		if (frac_wait(dev, c->batch[i].job_id, FRAC_NSEC * 10, &res) || res.status)
			undo_err = -EILSEQ;
	if (memcmp(c->src.map, c->dst.map, c->src.size))
		undo_err = -EILSEQ;
	submit_reset(dev, c);
}

static int batch_check(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	/* A failed batch writes no id back and puts no fence in the out-syncobj. */
	if (c->batch[0].job_id != FRAC_POISON32 || c->batch[1].job_id != FRAC_POISON32)
		return -EINVAL;
	if (frac_t_syncobj_wait(dev->fd, c->syncobj_out, 0) != -EINVAL)
		return -EEXIST;
	return 0;
}

/* WAIT on a job that has ended: a failed WAIT leaves the job to wait for. */
static int wait_setup(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;
	struct frac_cmdlist cl;

	frac_cmdlist_init(&cl);
	frac_cmd_nop(&cl);
	return frac_t_submit(dev->fd, cl.cmds, cl.count, 0, 0, 0, &c->wait.job_id);
}

static int wait_run(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;

	c->wait.flags = 0;
	c->wait.timeout_ns = FRAC_NSEC * 10;
	return frac_t_ioctl(dev->fd, DRM_IOCTL_FRAC_WAIT, &c->wait);
}

static void wait_undo(struct frac_dev *dev, void *p)
{
	/* The id is spent: the next round waits for a new job. */
	wait_setup(dev, p);
}

static int wait_check(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;
	struct drm_frac_wait w;

	/* The job can still be waited for. */
	return frac_t_wait(dev->fd, c->wait.job_id, FRAC_NSEC * 10, &w) ?: wait_setup(dev, p);
}

static void wait_teardown(struct frac_dev *dev, void *p)
{
	struct ctx *c = p;
	struct drm_frac_wait w;

	frac_t_wait(dev->fd, c->wait.job_id, FRAC_NSEC * 10, &w);
}

/* ---- Tests ----------------------------------------------------------------- */

FIXTURE(failnth) {
	struct frac_dev dev;
	struct ctx ctx;
};

FIXTURE_SETUP(failnth)
{
	int ret;

	self->dev.fd = -1;
	memset(&self->ctx, 0, sizeof(self->ctx));
	if (access("/proc/self/fail-nth", F_OK))
		SKIP(return, "no /proc/self/fail-nth (needs CONFIG_FAULT_INJECTION)");
	ret = knobs_set();
	if (ret == -ENOENT) {
		knobs_restore();
		SKIP(return, "no failslab/fail_page_alloc in debugfs");
	}
	ASSERT_EQ(0, ret) TH_LOG("fault-injection knobs: %s", strerror(-ret));
	FRAC_OPEN_OR_SKIP(&self->dev);
}

FIXTURE_TEARDOWN(failnth)
{
	knobs_restore();
	if (self->dev.fd >= 0)
		frac_close(&self->dev);
}

TEST_F_TIMEOUT(failnth, open, 300)
{
	static const struct nth_op op = {
		"open", open_setup, open_run, open_undo, NULL, NULL
	};

	nth_loop(_metadata, &self->dev, &op, &self->ctx);
}

TEST_F_TIMEOUT(failnth, bo_create_host, 300)
{
	static const struct nth_op op = {
		"BO_CREATE host", NULL, create_run, create_undo, create_check, NULL
	};

	self->ctx.create.size = 1 << 20;
	nth_loop(_metadata, &self->dev, &op, &self->ctx);
}

TEST_F_TIMEOUT(failnth, bo_create_devmem, 300)
{
	static const struct nth_op op = {
		"BO_CREATE devmem", NULL, create_run, create_undo, create_check, NULL
	};

	if (!(self->dev.features & DRM_FRAC_FEAT_DEVMEM))
		SKIP(return, "no device memory");
	self->ctx.create.size = 1 << 20;
	self->ctx.create.flags = DRM_FRAC_BO_DEVMEM;
	nth_loop(_metadata, &self->dev, &op, &self->ctx);
}

TEST_F_TIMEOUT(failnth, bo_mmap, 300)
{
	static const struct nth_op op = {
		"mmap", mmap_setup, mmap_run, mmap_undo, NULL, src_teardown
	};

	nth_loop(_metadata, &self->dev, &op, &self->ctx);
}

TEST_F_TIMEOUT(failnth, prime_export, 300)
{
	static const struct nth_op op = {
		"PRIME export", mmap_setup, export_run, export_undo, NULL, src_teardown
	};

	nth_loop(_metadata, &self->dev, &op, &self->ctx);
}

TEST_F_TIMEOUT(failnth, prime_import, 300)
{
	static const struct nth_op op = {
		"PRIME import", import_setup, import_run, import_undo, NULL, import_teardown
	};

	if (access("/dev/udmabuf", R_OK | W_OK))
		SKIP(return, "no /dev/udmabuf");
	nth_loop(_metadata, &self->dev, &op, &self->ctx);
}

TEST_F_TIMEOUT(failnth, submit, 300)
{
	static const struct nth_op op = {
		"SUBMIT", submit_setup, submit_run, submit_undo, submit_check, submit_teardown
	};

	nth_loop(_metadata, &self->dev, &op, &self->ctx);
}

TEST_F_TIMEOUT(failnth, submit_batch, 300)
{
	static const struct nth_op op = {
		"SUBMIT_BATCH", submit_setup, batch_run, batch_undo, batch_check, submit_teardown
	};

	nth_loop(_metadata, &self->dev, &op, &self->ctx);
}

TEST_F_TIMEOUT(failnth, wait, 300)
{
	static const struct nth_op op = {
		"WAIT", wait_setup, wait_run, wait_undo, wait_check, wait_teardown
	};

	nth_loop(_metadata, &self->dev, &op, &self->ctx);
}

/*
 * Bind: the probe runs in the writer of the driver's bind file. Each failed
 * probe must leave no accel node, and the next one must work.
 */
static int accel_nodes(void)
{
	DIR *d = opendir("/sys/class/accel");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "accel", 5);
	closedir(d);
	return n;
}

/*
 * Which of a bind's @sites to fail: all of them when FRAC_FAILNTH_BIND_SITES
 * is 0 or not below @sites, else that many, spread evenly from the first.
 */
static unsigned int bind_site(unsigned int i, unsigned int sites, unsigned int max)
{
	return max && max < sites ? 1 + (unsigned int)((unsigned long long)i * sites / max) :
				    i + 1;
}

TEST_F_TIMEOUT(failnth, bind, 1800)
{
	const char *drv = "/sys/bus/pci/drivers/frac", *env;
	unsigned int i, n = 0, sites, max, tries, failed = 0, tolerated = 0;
	char bdf[64], path[128];
	int fd, bind, nodes;
	ssize_t w;

	/*
	 * Opt-in: failing the allocations of pci_enable_device()'s ACPI _PRT
	 * evaluation (a probe step of every PCI driver) made ACPICA free a
	 * namespace object it still used: KASAN slab-use-after-free in
	 * acpi_ut_update_object_reference() at the next _PRT lookup (unbind's
	 * pci_disable_device()), seen on the debug kernel 6.12.95. That is not
	 * frac's to fix, and which of the sampled sites lands there changes
	 * from run to run, so the lane does not run this by default.
	 */
	env = getenv("FRAC_FAILNTH_BIND_SITES");
	if (!env)
		SKIP(return, "set FRAC_FAILNTH_BIND_SITES (0: all sites): an ACPICA use-after-free "
		     "under failed _PRT allocations, not frac's, would fail the lane at random");
	max = (unsigned int)strtoul(env, NULL, 0);
	ASSERT_EQ(0, frac_t_bdf(&self->dev, bdf, sizeof(bdf)));
	frac_close(&self->dev);
	self->dev.fd = -1;
	nodes = accel_nodes();
	snprintf(path, sizeof(path), "%s/unbind", drv);
	ASSERT_EQ(0, frac_t_write_str(path, bdf));
	ASSERT_EQ(nodes - 1, accel_nodes());
	snprintf(path, sizeof(path), "%s/bind", drv);
	bind = open(path, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, bind);
	fd = nth_open();
	ASSERT_LE(0, fd);

	/* fail-nth counts down at every site: one whole bind under a huge N counts them. */
	nth_set(fd, 1u << 30);
	w = pwrite(bind, bdf, strlen(bdf), 0);
	sites = (1u << 30) - nth_get(fd);
	nth_set(fd, 0);
	ASSERT_EQ((ssize_t)strlen(bdf), w) TH_LOG("bind: %s", strerror(errno));
	ASSERT_EQ(0, frac_t_write_str("/sys/bus/pci/drivers/frac/unbind", bdf));
	tries = max && max < sites ? max : sites;
	TH_LOG("bind: %u allocation sites; failing %u of them", sites, tries);

	for (i = 0; i < tries; i++) {
		unsigned int left;

		n = bind_site(i, sites, max);
		nth_set(fd, n);
		w = pwrite(bind, bdf, strlen(bdf), 0);
		left = nth_get(fd);
		nth_set(fd, 0);
		/* Allocations can differ between binds (caches, a worker's timing). */
		if (left) {
			/* No failure reached: the bind must have worked. */
			ASSERT_EQ((ssize_t)strlen(bdf), w) TH_LOG("bind without a failure: %s",
								  strerror(errno));
			ASSERT_EQ(0, frac_t_write_str("/sys/bus/pci/drivers/frac/unbind", bdf));
			continue;
		}
		if (w >= 0) {
			/* A fallback absorbed it: the device must work, then unbind again. */
			tolerated++;
			ASSERT_EQ(0, frac_open_pci(bdf, &self->dev));
			EXPECT_EQ(0, device_works_once(&self->dev)) TH_LOG("after bind site %u", n);
			frac_close(&self->dev);
			self->dev.fd = -1;
			ASSERT_EQ(0, frac_t_write_str("/sys/bus/pci/drivers/frac/unbind", bdf));
		} else {
			failed++;
			EXPECT_EQ(nodes - 1, accel_nodes()) TH_LOG("bind site %u left a node", n);
		}
		if (_metadata->exit_code)
			break;
	}
	close(fd);
	close(bind);
	TH_LOG("bind: %u sites failed the bind, %u were tolerated", failed, tolerated);

	/* A clean bind: the device works. */
	snprintf(path, sizeof(path), "%s/bind", drv);
	EXPECT_EQ(0, frac_t_write_str(path, bdf));
	for (i = 0; i < 100 && frac_open_pci(bdf, &self->dev); i++)
		usleep(100000);
	ASSERT_GT(100, i);
	EXPECT_EQ(0, device_works_once(&self->dev));
}

TEST_HARNESS_MAIN
