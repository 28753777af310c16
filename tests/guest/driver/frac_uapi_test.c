// SPDX-License-Identifier: MIT
/*
 * frac_uapi_test: the happy path of every ioctl of the frac uAPI, and the
 * isolation of one open file from another.
 *
 * GET_PARAM (every parameter), BO_CREATE and BO_INFO (host and device
 * memory), mmap of both kinds, SUBMIT, WAIT (forever, with a timeout, and the
 * timeout-0 poll), an out syncobj waited with DRM_IOCTL_SYNCOBJ_WAIT and as a
 * sync_file, an in syncobj as a dependency, poll() on the file, dma-buf export
 * of a host BO and its refusal for a device BO, fdinfo, closing BOs and files
 * while jobs still run, SUBMIT_LOCAL_QUEUE on every CPU, and SUBMIT_BATCH:
 * its order, its dependencies, its job-id limit and batches racing.
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/sync_file.h>
#include <sys/stat.h>

#include "frac_test.h"

/* A job that keeps a queue busy for tens of ms: 64 copies of 4 MiB. */
#define LONG_BYTES	(4ull << 20)

static void long_job_cmds(struct drm_frac_cmd *cmds, const struct frac_bo *a,
			  const struct frac_bo *b)
{
	uint32_t i;

	memset(cmds, 0, sizeof(*cmds) * DRM_FRAC_MAX_CMDS);
	for (i = 0; i < DRM_FRAC_MAX_CMDS; i++) {
		cmds[i].op = DRM_FRAC_OP_COPY;
		cmds[i].src_handle = i & 1 ? b->handle : a->handle;
		cmds[i].dst_handle = i & 1 ? a->handle : b->handle;
		cmds[i].len = LONG_BYTES;
	}
}

FIXTURE(uapi) {
	struct frac_dev dev;
	struct frac_bo la, lb;		/* long-job BOs, created on demand */
};

FIXTURE_SETUP(uapi)
{
	self->dev.fd = -1;
	FRAC_OPEN_OR_SKIP(&self->dev);
}

FIXTURE_TEARDOWN(uapi)
{
	if (self->dev.fd >= 0) {
		frac_bo_destroy(&self->dev, &self->la);
		frac_bo_destroy(&self->dev, &self->lb);
		frac_close(&self->dev);
	}
}

static int long_job(struct frac_dev *dev, struct frac_bo *a, struct frac_bo *b,
		    uint32_t queue, uint32_t out_syncobj, uint32_t *id)
{
	struct drm_frac_cmd cmds[DRM_FRAC_MAX_CMDS];
	int ret = 0;

	if (!a->handle)
		ret = frac_bo_create(dev, LONG_BYTES, 0, a);
	if (!ret && !b->handle)
		ret = frac_bo_create(dev, LONG_BYTES, 0, b);
	if (ret)
		return ret;
	long_job_cmds(cmds, a, b);
	return frac_t_submit(dev->fd, cmds, DRM_FRAC_MAX_CMDS, queue, 0, out_syncobj, id);
}

/* ---- GET_PARAM ---------------------------------------------------------- */

static int get_param_raw(int fd, uint32_t param, uint64_t *value)
{
	struct drm_frac_get_param p;
	int ret;

	frac_poison(&p, sizeof(p));
	p.param = param;
	p.pad = 0;
	ret = frac_t_ioctl(fd, DRM_IOCTL_FRAC_GET_PARAM, &p);
	*value = p.value;
	return ret;
}

TEST_F(uapi, get_param_all)
{
	const uint64_t known = DRM_FRAC_FEAT_GEMM_FP32 | DRM_FRAC_FEAT_GEMM_INT8 |
			       DRM_FRAC_FEAT_CRC32C | DRM_FRAC_FEAT_DEVMEM |
			       DRM_FRAC_FEAT_FAULT_INJ | DRM_FRAC_FEAT_TIMESTAMP;
	int fd = self->dev.fd;
	uint64_t v, v2, feat, sysq;
	int64_t t0, t1;

	ASSERT_EQ(0, get_param_raw(fd, DRM_FRAC_PARAM_DEVICE_ID, &v));
	EXPECT_EQ(0x1234fac1ull, v);

	ASSERT_EQ(0, get_param_raw(fd, DRM_FRAC_PARAM_HW_VERSION, &v));
	EXPECT_EQ(1ull, v >> 16);

	ASSERT_EQ(0, get_param_raw(fd, DRM_FRAC_PARAM_NUM_QUEUES, &v));
	EXPECT_GE(v, 1ull);
	EXPECT_LE(v, 16ull);
	sysq = frac_t_counter(&self->dev, "num_queues");
	EXPECT_EQ(sysq, v) TH_LOG("sysfs num_queues disagrees");

	ASSERT_EQ(0, get_param_raw(fd, DRM_FRAC_PARAM_FEATURES, &feat));
	EXPECT_EQ(0ull, feat & ~known) TH_LOG("FEATURES %#llx has bits that are no DRM_FRAC_FEAT_*",
					     (unsigned long long)feat);
	EXPECT_TRUE(feat & DRM_FRAC_FEAT_GEMM_FP32);
	EXPECT_TRUE(feat & DRM_FRAC_FEAT_GEMM_INT8);
	EXPECT_TRUE(feat & DRM_FRAC_FEAT_CRC32C);
	EXPECT_TRUE(feat & DRM_FRAC_FEAT_TIMESTAMP);

	ASSERT_EQ(0, get_param_raw(fd, DRM_FRAC_PARAM_DEVMEM_SIZE, &v));
	if (feat & DRM_FRAC_FEAT_DEVMEM) {
		EXPECT_GT(v, 0ull);
		EXPECT_EQ(0ull, v % FRAC_PAGE);
	} else {
		EXPECT_EQ(0ull, v);
	}

	ASSERT_EQ(0, get_param_raw(fd, DRM_FRAC_PARAM_GEMM_MAX_DIM, &v));
	EXPECT_GE(v, 1ull);
	EXPECT_LE(v, 65535ull);

	ASSERT_EQ(0, get_param_raw(fd, DRM_FRAC_PARAM_MAX_CMDS, &v));
	EXPECT_EQ((uint64_t)DRM_FRAC_MAX_CMDS, v);

	/* The device clock runs: it moves forward over a 20 ms sleep. */
	ASSERT_EQ(0, get_param_raw(fd, DRM_FRAC_PARAM_DEVICE_CLOCK, &v));
	EXPECT_NE(FRAC_POISON64, v);
	usleep(20000);
	ASSERT_EQ(0, get_param_raw(fd, DRM_FRAC_PARAM_DEVICE_CLOCK, &v2));
	EXPECT_GE(v2, v + 10000000ull) TH_LOG("device clock %llu -> %llu over 20 ms",
					      (unsigned long long)v, (unsigned long long)v2);

	/* CLOCK_MONOTONIC = device clock + offset, to within the slack of TCG. */
	ASSERT_EQ(0, get_param_raw(fd, DRM_FRAC_PARAM_CLOCK_OFFSET, &v2));
	t0 = frac_mono_ns();
	ASSERT_EQ(0, get_param_raw(fd, DRM_FRAC_PARAM_DEVICE_CLOCK, &v));
	t1 = frac_mono_ns();
	EXPECT_GE((int64_t)(v + v2), t0 - 50000000ll);
	EXPECT_LE((int64_t)(v + v2), t1 + 50000000ll);
}

/* ---- BO_CREATE, BO_INFO, mmap ------------------------------------------- */

static void bo_create_check(struct __test_metadata *_metadata, struct frac_dev *dev,
			    uint32_t flags, const uint64_t *sizes, size_t nsizes,
			    uint64_t devmem_size)
{
	struct drm_frac_bo_info info[8];
	struct drm_frac_bo_create c;
	uint32_t handles[8];
	size_t i, j;

	ASSERT_LE(nsizes, FRAC_ARRAY_SIZE(handles));
	for (i = 0; i < nsizes; i++) {
		frac_poison(&c, sizeof(c));
		c.size = sizes[i];
		c.flags = flags;
		ASSERT_EQ(0, frac_t_ioctl(dev->fd, DRM_IOCTL_FRAC_BO_CREATE, &c))
			TH_LOG("%s BO of %llu bytes", frac_t_placement(flags),
			       (unsigned long long)sizes[i]);
		EXPECT_NE(0u, c.handle);
		EXPECT_NE(FRAC_POISON32, c.handle);
		EXPECT_EQ(sizes[i], c.size);
		EXPECT_EQ(flags, c.flags);
		handles[i] = c.handle;
		for (j = 0; j < i; j++)
			EXPECT_NE(handles[j], handles[i]);

		frac_poison(&info[i], sizeof(info[i]));
		info[i].handle = c.handle;
		ASSERT_EQ(0, frac_t_ioctl(dev->fd, DRM_IOCTL_FRAC_BO_INFO, &info[i]));
		EXPECT_EQ(c.handle, info[i].handle);
		EXPECT_EQ(flags, info[i].flags);
		EXPECT_EQ((sizes[i] + FRAC_PAGE - 1) & ~(FRAC_PAGE - 1), info[i].size);
		EXPECT_NE(0ull, info[i].mmap_offset);
		EXPECT_EQ(0ull, info[i].mmap_offset % FRAC_PAGE);
		if (flags & DRM_FRAC_BO_DEVMEM) {
			EXPECT_EQ(0ull, info[i].devmem_offset % FRAC_PAGE);
			EXPECT_LE(info[i].devmem_offset + info[i].size, devmem_size);
			for (j = 0; j < i; j++)
				EXPECT_TRUE(info[j].devmem_offset + info[j].size <=
						    info[i].devmem_offset ||
					    info[i].devmem_offset + info[i].size <=
						    info[j].devmem_offset)
					TH_LOG("device BOs %zu and %zu overlap", j, i);
		} else {
			EXPECT_EQ(0ull, info[i].devmem_offset);
		}
		/* Asking again gives the same answer. */
		if (i == 0) {
			struct drm_frac_bo_info again;

			frac_poison(&again, sizeof(again));
			again.handle = c.handle;
			ASSERT_EQ(0, frac_t_ioctl(dev->fd, DRM_IOCTL_FRAC_BO_INFO, &again));
			EXPECT_EQ(0, memcmp(&again, &info[0], sizeof(again)));
		}
	}
	for (i = 0; i < nsizes; i++) {
		struct drm_gem_close cl = { .handle = handles[i] };

		EXPECT_EQ(0, frac_t_ioctl(dev->fd, DRM_IOCTL_GEM_CLOSE, &cl));
	}
}

TEST_F(uapi, bo_create_host)
{
	static const uint64_t sizes[] = { 1, 4096, 4097, 3 * 4096 + 1, 8ull << 20 };

	bo_create_check(_metadata, &self->dev, 0, sizes, FRAC_ARRAY_SIZE(sizes), 0);
}

TEST_F(uapi, bo_create_devmem)
{
	static const uint64_t sizes[] = { 1, 4096, 4097, 1ull << 20, 3 * 4096 + 1 };

	if (!(self->dev.features & DRM_FRAC_FEAT_DEVMEM))
		SKIP(return, "no device memory");
	bo_create_check(_metadata, &self->dev, DRM_FRAC_BO_DEVMEM, sizes,
			FRAC_ARRAY_SIZE(sizes), self->dev.devmem_size);
}

/* The whole BO maps read-write and keeps its data; the device sees it. */
static void bo_mmap_check(struct __test_metadata *_metadata, struct frac_dev *dev,
			  uint32_t flags)
{
	const uint64_t size = 3 * FRAC_PAGE;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	struct frac_bo bo;
	uint8_t *data, *back;
	void *p;

	data = malloc(size);
	back = malloc(size);
	ASSERT_TRUE(data && back);
	frac_fill_random(data, size, 42 + flags);

	ASSERT_EQ(0, frac_bo_create(dev, size, flags, &bo));
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd, bo.mmap_offset);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
	memcpy(p, data, size);
	__sync_synchronize();
	ASSERT_EQ(0, munmap(p, size));

	/* A second mapping sees the data. */
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, dev->fd, bo.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	memcpy(back, p, size);
	EXPECT_EQ(-1, frac_first_diff(data, back, size));
	ASSERT_EQ(0, munmap(p, size));

	/* A part of the BO from its start maps too. */
	p = mmap(NULL, FRAC_PAGE, PROT_READ, MAP_SHARED, dev->fd, bo.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, memcmp(p, data, FRAC_PAGE));
	munmap(p, FRAC_PAGE);

	/* More than the BO, or from inside it, does not. */
	p = mmap(NULL, size + FRAC_PAGE, PROT_READ, MAP_SHARED, dev->fd, bo.mmap_offset);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	if (p != MAP_FAILED)
		munmap(p, size + FRAC_PAGE);
	p = mmap(NULL, FRAC_PAGE, PROT_READ, MAP_SHARED, dev->fd, bo.mmap_offset + FRAC_PAGE);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	if (p != MAP_FAILED)
		munmap(p, FRAC_PAGE);

	/* What the CPU wrote through the mapping is what the device reads. */
	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_crc32c(&cl, &bo, 0, size, 0));
	ASSERT_EQ(0, frac_run(dev, 0, &cl, &res));
	EXPECT_EQ(0, res.status);
	EXPECT_EQ((uint64_t)frac_crc32c(0, data, size), res.result);

	frac_bo_destroy(dev, &bo);
	free(data);
	free(back);
}

TEST_F(uapi, bo_mmap_host)
{
	bo_mmap_check(_metadata, &self->dev, 0);
}

TEST_F(uapi, bo_mmap_devmem)
{
	if (!(self->dev.features & DRM_FRAC_FEAT_DEVMEM))
		SKIP(return, "no device memory");
	bo_mmap_check(_metadata, &self->dev, DRM_FRAC_BO_DEVMEM);
}

TEST_F(uapi, gem_close)
{
	struct drm_frac_bo_info info = { 0 };
	struct drm_gem_close cl = { 0 };
	struct frac_bo bo;

	ASSERT_EQ(0, frac_bo_create(&self->dev, 4096, 0, &bo));
	cl.handle = bo.handle;
	ASSERT_EQ(0, frac_t_ioctl(self->dev.fd, DRM_IOCTL_GEM_CLOSE, &cl));
	info.handle = bo.handle;
	EXPECT_EQ(-ENOENT, frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_BO_INFO, &info));
	EXPECT_EQ(-EINVAL, frac_t_ioctl(self->dev.fd, DRM_IOCTL_GEM_CLOSE, &cl));
}

/* ---- SUBMIT and WAIT ---------------------------------------------------- */

TEST_F(uapi, submit_wait)
{
	struct drm_frac_cmd cmd = { .op = DRM_FRAC_OP_NOP };
	struct drm_frac_wait w;
	uint32_t ids[3], q;
	uint64_t before, after;
	int i, j;

	before = frac_t_clock(&self->dev);
	for (q = 0; q < self->dev.num_queues; q++) {
		for (i = 0; i < 3; i++) {
			ASSERT_EQ(0, frac_t_submit(self->dev.fd, &cmd, 1, q, 0, 0, &ids[i]));
			EXPECT_NE(0u, ids[i]);
			EXPECT_NE(FRAC_POISON32, ids[i]);
			for (j = 0; j < i; j++)
				EXPECT_NE(ids[j], ids[i]);
		}
		for (i = 0; i < 3; i++) {
			ASSERT_EQ(0, frac_t_wait(self->dev.fd, ids[i], -1, &w));
			EXPECT_EQ(ids[i], w.job_id);
			EXPECT_EQ(0, w.status);
			EXPECT_EQ(0u, w.pad);
			EXPECT_EQ(0ull, w.result);
			EXPECT_LE(before, w.t_start);
			EXPECT_LE(w.t_start, w.t_end);
			after = frac_t_clock(&self->dev);
			EXPECT_LE(w.t_end, after);
			/* Seen ended once: the id is gone. */
			EXPECT_EQ(-EINVAL, frac_t_wait(self->dev.fd, ids[i], 0, &w));
		}
	}
}

/*
 * One job at a time, as at queue depth 1, where WAIT keeps the last released
 * id reserved: every id is new, and a released id, reserved or not, is gone.
 */
TEST_F(uapi, ids_one_at_a_time)
{
	struct drm_frac_cmd cmd = { .op = DRM_FRAC_OP_NOP };
	struct drm_frac_wait w;
	uint32_t id, prev = 0, prev2 = 0;
	int i;

	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, frac_t_submit(self->dev.fd, &cmd, 1, 0, 0, 0, &id));
		EXPECT_NE(0u, id);
		EXPECT_NE(prev, id);
		EXPECT_NE(prev2, id);
		if (prev)
			EXPECT_LT(prev, id);	/* cyclic: no wrap in 200 jobs */
		ASSERT_EQ(0, frac_t_wait(self->dev.fd, id, FRAC_NSEC * 10, &w));
		EXPECT_EQ(0, w.status);
		EXPECT_EQ(-EINVAL, frac_t_wait(self->dev.fd, id, 0, &w));
		if (prev)
			EXPECT_EQ(-EINVAL, frac_t_wait(self->dev.fd, prev, 0, &w));
		prev2 = prev;
		prev = id;
	}
}

/* CPUs of the MSI-X vector named frac-q@q of device @bdf, from /proc; 0 when not found. */
static int queue_irq_cpus(const char *bdf, uint32_t q, cpu_set_t *set)
{
	char line[512], name[32], path[64], list[256], *tok, *save;
	FILE *f = fopen("/proc/interrupts", "r");
	int irq = -1;

	CPU_ZERO(set);
	if (!f)
		return 0;
	snprintf(name, sizeof(name), " frac-q%u\n", q);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, bdf) && strstr(line, name)) {
			irq = atoi(line);
			break;
		}
	fclose(f);
	if (irq < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(list, sizeof(list), f))
		list[0] = 0;
	fclose(f);
	for (tok = strtok_r(list, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
		int lo = atoi(tok), hi = strchr(tok, '-') ? atoi(strchr(tok, '-') + 1) : lo;

		for (; lo <= hi && lo < CPU_SETSIZE; lo++)
			CPU_SET(lo, set);
	}
	return CPU_COUNT(set);
}

/*
 * SUBMIT_LOCAL_QUEUE, pinned to each CPU in turn: the queue chosen has its
 * interrupt on that CPU (the driver spreads the vectors, one CPU each), is
 * returned in @queue, and the job completes.
 */
TEST_F(uapi, submit_local_queue)
{
	struct drm_frac_cmd cmd = { .op = DRM_FRAC_OP_NOP };
	char link[PATH_MAX], path[64], *bdf;
	cpu_set_t orig, one, irq_cpus;
	struct drm_frac_wait w;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ssize_t len;
	int cpu;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device", self->dev.index);
	len = readlink(path, link, sizeof(link) - 1);
	ASSERT_LT(0, len);
	link[len] = 0;
	bdf = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(orig), &orig));
	for (cpu = 0; cpu < ncpu && cpu < CPU_SETSIZE; cpu++) {
		struct drm_frac_submit s = {
			.cmds = (uintptr_t)&cmd,
			.cmd_count = 1,
			.cmd_size = sizeof(cmd),
			.priority = DRM_FRAC_PRIO_NORMAL,
			.flags = DRM_FRAC_SUBMIT_LOCAL_QUEUE,
			.job_id = FRAC_POISON32,
		};

		if (!CPU_ISSET(cpu, &orig))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
		ASSERT_EQ(0, frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_SUBMIT, &s));
		EXPECT_LT(s.queue, self->dev.num_queues);
		ASSERT_LT(0, queue_irq_cpus(bdf, s.queue, &irq_cpus)) {
			TH_LOG("no frac-q%u vector of %s in /proc/interrupts", s.queue, bdf);
		}
		EXPECT_TRUE(CPU_ISSET(cpu, &irq_cpus)) {
			TH_LOG("CPU %d got queue %u, whose interrupt is elsewhere", cpu, s.queue);
		}
		/* The vectors are spread: each is on one CPU, not on all. */
		if (ncpu > 1)
			EXPECT_LT(CPU_COUNT(&irq_cpus), ncpu);
		ASSERT_EQ(0, frac_t_wait(self->dev.fd, s.job_id, FRAC_NSEC * 10, &w));
		EXPECT_EQ(0, w.status);
	}
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(orig), &orig));
}

TEST_F(uapi, wait_timeout_poll)
{
	struct drm_frac_wait w;
	int64_t t0, t1, deadline;
	uint32_t id;
	int ret;

	ASSERT_EQ(0, long_job(&self->dev, &self->la, &self->lb, 0, 0, &id));

	/* Still running: timeout 0 polls and reports -ETIME, writing nothing. */
	ASSERT_EQ(-ETIME, frac_t_wait(self->dev.fd, id, 0, &w));
	EXPECT_EQ((int32_t)FRAC_POISON32, w.status);
	EXPECT_EQ(FRAC_POISON64, w.result);

	/* A 1 ms timeout passes first, after at least 1 ms. */
	t0 = frac_mono_ns();
	ASSERT_EQ(-ETIME, frac_t_wait(self->dev.fd, id, 1000000, &w));
	t1 = frac_mono_ns();
	EXPECT_GE(t1 - t0, 1000000ll);

	/* Poll with timeout 0 until it ends. */
	deadline = frac_mono_ns() + 30 * FRAC_NSEC;
	do {
		ret = frac_t_wait(self->dev.fd, id, 0, &w);
		if (ret == -ETIME)
			usleep(2000);
	} while (ret == -ETIME && frac_mono_ns() < deadline);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, w.status);
	EXPECT_EQ(0u, w.pad);
	EXPECT_LT(w.t_start, w.t_end);
	EXPECT_EQ(-EINVAL, frac_t_wait(self->dev.fd, id, 0, &w));

	/* A relative timeout long enough returns as soon as the job ends. */
	ASSERT_EQ(0, long_job(&self->dev, &self->la, &self->lb, 0, 0, &id));
	ASSERT_EQ(0, frac_t_wait(self->dev.fd, id, 30 * FRAC_NSEC, &w));
	EXPECT_EQ(0, w.status);
}

TEST_F(uapi, syncobj_out)
{
	struct drm_syncobj_handle h = { 0 };
	struct sync_file_info sfi;
	struct drm_frac_wait w;
	struct pollfd pfd;
	uint32_t syncobj, id;
	int ret;

	ASSERT_EQ(0, frac_t_syncobj_create(self->dev.fd, &syncobj));
	ASSERT_EQ(0, long_job(&self->dev, &self->la, &self->lb, 0, syncobj, &id));

	/* The syncobj holds the job's fence: not signalled yet. */
	EXPECT_EQ(-ETIME, frac_t_syncobj_wait(self->dev.fd, syncobj, 0));

	/* Also as a sync_file. */
	h.handle = syncobj;
	h.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
	h.fd = -1;
	ASSERT_EQ(0, frac_t_ioctl(self->dev.fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h));
	ASSERT_GE(h.fd, 0);

	ret = frac_t_syncobj_wait(self->dev.fd, syncobj, 30 * FRAC_NSEC);
	ASSERT_EQ(0, ret);

	/* The job has ended: WAIT returns at once. */
	ASSERT_EQ(0, frac_t_wait(self->dev.fd, id, 0, &w));
	EXPECT_EQ(0, w.status);

	pfd.fd = h.fd;
	pfd.events = POLLIN;
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	memset(&sfi, 0, sizeof(sfi));
	ASSERT_EQ(0, frac_t_ioctl(h.fd, SYNC_IOC_FILE_INFO, &sfi));
	EXPECT_EQ(1, sfi.status);
	close(h.fd);
	frac_t_syncobj_destroy(self->dev.fd, syncobj);
}

/*
 * SUBMIT with DRM_FRAC_SUBMIT_NO_JOB_ID: job_id 0, nothing held for WAIT, so a
 * syncobj-only client passes DRM_FRAC_MAX_UNWAITED jobs without -EBUSY; the
 * syncobj still sees each job end, and WAIT knows no id 0.
 */
TEST_F_TIMEOUT(uapi, submit_no_job_id, 120)
{
	struct drm_frac_submit s;
	struct drm_frac_cmd cmd;
	struct drm_frac_wait w;
	uint32_t syncobj, i;

	ASSERT_EQ(0, frac_t_syncobj_create(self->dev.fd, &syncobj));
	for (i = 0; i < DRM_FRAC_MAX_UNWAITED + 16; i++) {
		memset(&cmd, 0, sizeof(cmd));
		cmd.op = DRM_FRAC_OP_NOP;
		frac_poison(&s, sizeof(s));
		s.cmds = (uintptr_t)&cmd;
		s.cmd_count = 1;
		s.cmd_size = sizeof(cmd);
		s.queue = i % self->dev.num_queues;
		s.priority = DRM_FRAC_PRIO_NORMAL;
		s.flags = DRM_FRAC_SUBMIT_NO_JOB_ID;
		s.in_syncobj = 0;
		s.out_syncobj = syncobj;
		ASSERT_EQ(0, frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_SUBMIT, &s))
			TH_LOG("job %u", i);
		ASSERT_EQ(0u, s.job_id) TH_LOG("job %u", i);
		/* Every few jobs, the last one's fence ends through the syncobj. */
		if (i % 512 == 0)
			ASSERT_EQ(0, frac_t_syncobj_wait(self->dev.fd, syncobj, 30 * FRAC_NSEC));
	}
	ASSERT_EQ(0, frac_t_syncobj_wait(self->dev.fd, syncobj, 30 * FRAC_NSEC));
	EXPECT_EQ(-EINVAL, frac_t_wait(self->dev.fd, 0, 0, &w));
	frac_t_syncobj_destroy(self->dev.fd, syncobj);
}

TEST_F(uapi, syncobj_in)
{
	struct drm_frac_cmd ts = { .op = DRM_FRAC_OP_TIMESTAMP, .len = 8 };
	struct drm_frac_wait wa, wb;
	struct frac_bo tsbo;
	uint32_t syncobj, ida, idb, qb;
	uint64_t stored;

	qb = self->dev.num_queues > 1 ? 1 : 0;
	ASSERT_EQ(0, frac_t_bo(&self->dev, 4096, 0, &tsbo));
	ts.dst_handle = tsbo.handle;

	ASSERT_EQ(0, frac_t_syncobj_create(self->dev.fd, &syncobj));
	ASSERT_EQ(0, long_job(&self->dev, &self->la, &self->lb, 0, syncobj, &ida));
	/* B shares no BO with A: only the syncobj orders it. */
	ASSERT_EQ(0, frac_t_submit(self->dev.fd, &ts, 1, qb, syncobj, 0, &idb));

	ASSERT_EQ(0, frac_t_wait(self->dev.fd, idb, 30 * FRAC_NSEC, &wb));
	ASSERT_EQ(0, frac_t_wait(self->dev.fd, ida, 0, &wa))
		TH_LOG("B ended before the job it depends on");
	EXPECT_EQ(0, wa.status);
	EXPECT_EQ(0, wb.status);
	EXPECT_GE(wb.t_start, wa.t_end);
	EXPECT_GE(wb.result, wa.t_end);
	frac_t_read(&tsbo, 0, &stored, 8);
	EXPECT_EQ(wb.result, stored);

	frac_t_syncobj_destroy(self->dev.fd, syncobj);
	frac_bo_destroy(&self->dev, &tsbo);
}

TEST_F(uapi, poll_fd)
{
	struct pollfd pfd = { .fd = self->dev.fd, .events = POLLIN };
	struct drm_frac_wait w;
	uint32_t id;

	/* Nothing submitted, nothing to report. */
	EXPECT_EQ(0, poll(&pfd, 1, 0));

	ASSERT_EQ(0, long_job(&self->dev, &self->la, &self->lb, 0, 0, &id));
	EXPECT_EQ(0, poll(&pfd, 1, 0)) TH_LOG("POLLIN while the job runs");

	/* Wakes up when the job ends. */
	pfd.revents = 0;
	ASSERT_EQ(1, poll(&pfd, 1, 30000));
	EXPECT_TRUE(pfd.revents & POLLIN);

	/* Stays readable until the job is waited for. */
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	ASSERT_EQ(0, frac_t_wait(self->dev.fd, id, 0, &w));
	EXPECT_EQ(0, w.status);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
}

TEST_F(uapi, priorities)
{
	static const uint32_t prios[] = { DRM_FRAC_PRIO_LOW, DRM_FRAC_PRIO_NORMAL,
					  DRM_FRAC_PRIO_HIGH };
	struct frac_submit_opts opts = { 0 };
	struct frac_job_result res;
	struct frac_cmdlist cl;
	struct frac_bo bo;
	uint32_t q, p, id, pattern;
	uint8_t buf[256];

	ASSERT_EQ(0, frac_t_bo(&self->dev, 4096, 0, &bo));
	for (q = 0; q < self->dev.num_queues; q++) {
		for (p = 0; p < FRAC_ARRAY_SIZE(prios); p++) {
			pattern = 0x01020304u * (q * 3 + p + 1);
			frac_cmdlist_init(&cl);
			ASSERT_EQ(0, frac_cmd_fill(&cl, &bo, 0, sizeof(buf), pattern));
			opts.priority = prios[p];
			ASSERT_EQ(0, frac_submit(&self->dev, q, &cl, &opts, &id));
			ASSERT_EQ(0, frac_wait(&self->dev, id, -1, &res));
			EXPECT_EQ(0, res.status);
			frac_t_read(&bo, 0, buf, sizeof(buf));
			EXPECT_EQ(-1, frac_check_fill(buf, sizeof(buf), pattern))
				TH_LOG("queue %u priority %u", q, prios[p]);
		}
	}
	frac_bo_destroy(&self->dev, &bo);
}

/* The job holds its BOs: closing the handles while it runs is harmless. */
TEST_F(uapi, bo_close_while_busy)
{
	struct frac_bo a, b, check;
	struct drm_frac_wait w;
	struct frac_cmdlist cl;
	struct frac_job_result res;
	uint32_t id;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ASSERT_EQ(0, long_job(&self->dev, &a, &b, 0, 0, &id));
	frac_bo_destroy(&self->dev, &a);
	frac_bo_destroy(&self->dev, &b);
	ASSERT_EQ(0, frac_t_wait(self->dev.fd, id, 30 * FRAC_NSEC, &w));
	EXPECT_EQ(0, w.status);

	/* The device is still fine. */
	ASSERT_EQ(0, frac_t_bo(&self->dev, 4096, 0, &check));
	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_fill(&cl, &check, 0, 4096, 0x5a5a5a5a));
	ASSERT_EQ(0, frac_run(&self->dev, 0, &cl, &res));
	EXPECT_EQ(0, res.status);
	EXPECT_EQ(-1, frac_check_fill(check.map, 4096, 0x5a5a5a5a));
	frac_bo_destroy(&self->dev, &check);
}

/* A file closed with jobs in flight: the jobs end, the device goes on. */
TEST_F(uapi, close_with_jobs_in_flight)
{
	struct frac_bo a = { 0 }, b = { 0 }, check;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	struct frac_dev other;
	uint32_t id, q;

	ASSERT_EQ(0, frac_open(self->dev.index, &other));
	for (q = 0; q < other.num_queues; q++)
		ASSERT_EQ(0, long_job(&other, &a, &b, q, 0, &id));
	/* No waits, no GEM_CLOSE: everything goes with the file. */
	frac_close(&other);

	ASSERT_EQ(0, frac_t_bo(&self->dev, 4096, 0, &check));
	for (q = 0; q < self->dev.num_queues; q++) {
		frac_cmdlist_init(&cl);
		ASSERT_EQ(0, frac_cmd_fill(&cl, &check, 0, 4096, 0x11111111u * (q + 1)));
		ASSERT_EQ(0, frac_run(&self->dev, q, &cl, &res));
		EXPECT_EQ(0, res.status);
		EXPECT_EQ(-1, frac_check_fill(check.map, 4096, 0x11111111u * (q + 1)));
	}
	frac_bo_destroy(&self->dev, &check);
}

/* ---- dma-buf ------------------------------------------------------------ */

TEST_F(uapi, prime_export_host)
{
	const uint64_t size = 3 * FRAC_PAGE;
	struct drm_prime_handle p;
	struct frac_job_result res;
	struct drm_frac_bo_info info;
	struct frac_cmdlist cl;
	struct frac_dev other;
	struct frac_bo bo, imported;
	uint64_t shared0 = 0, shared1 = 0;
	uint8_t *data;
	void *map;

	data = malloc(size);
	ASSERT_NE(NULL, data);
	frac_fill_random(data, size, 7);
	ASSERT_EQ(0, frac_t_bo(&self->dev, size, 0, &bo));
	frac_t_write(&bo, 0, data, size);
	ASSERT_EQ(0, frac_t_fdinfo(self->dev.fd, "drm-shared-memory", &shared0));

	frac_poison(&p, sizeof(p));
	p.handle = bo.handle;
	p.flags = DRM_CLOEXEC | DRM_RDWR;
	ASSERT_EQ(0, frac_t_ioctl(self->dev.fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p));
	ASSERT_GE(p.fd, 0);
	EXPECT_EQ((off_t)size, lseek(p.fd, 0, SEEK_END));
	/* Exported, it counts as shared (drm_gem_object_is_shared_for_memory_stats()). */
	ASSERT_EQ(0, frac_t_fdinfo(self->dev.fd, "drm-shared-memory", &shared1));
	EXPECT_EQ(shared0 + size, shared1) TH_LOG("an exported BO in drm-shared-memory");

	/* The dma-buf maps to the same pages. */
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, p.fd, 0);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("dma-buf mmap: %s", strerror(errno));
	EXPECT_EQ(-1, frac_first_diff(map, data, size));
	munmap(map, size);

	/* Importing it back into the same file gives the same handle. */
	{
		struct drm_prime_handle back = { .fd = p.fd };

		ASSERT_EQ(0, frac_t_ioctl(self->dev.fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &back));
		EXPECT_EQ(bo.handle, back.handle);
	}

	/* Another file imports it, and its jobs write what this file reads. */
	ASSERT_EQ(0, frac_open(self->dev.index, &other));
	{
		struct drm_prime_handle imp = { .fd = p.fd };

		ASSERT_EQ(0, frac_t_ioctl(other.fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));
		memset(&imported, 0, sizeof(imported));
		imported.handle = imp.handle;
	}
	frac_poison(&info, sizeof(info));
	info.handle = imported.handle;
	ASSERT_EQ(0, frac_t_ioctl(other.fd, DRM_IOCTL_FRAC_BO_INFO, &info));
	EXPECT_EQ(size, info.size);
	EXPECT_EQ(0u, info.flags);
	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_fill(&cl, &imported, 100, 1000, 0xc0ffee11));
	ASSERT_EQ(0, frac_run(&other, 0, &cl, &res));
	EXPECT_EQ(0, res.status);
	EXPECT_EQ(-1, frac_check_fill((uint8_t *)bo.map + 100, 1000, 0xc0ffee11));
	EXPECT_EQ(0, memcmp(bo.map, data, 100));
	frac_close(&other);

	close(p.fd);
	frac_bo_destroy(&self->dev, &bo);
	free(data);
}

TEST_F(uapi, prime_export_devmem_refused)
{
	struct drm_prime_handle p;
	struct frac_bo bo;

	if (!(self->dev.features & DRM_FRAC_FEAT_DEVMEM))
		SKIP(return, "no device memory");
	ASSERT_EQ(0, frac_bo_create(&self->dev, 4096, DRM_FRAC_BO_DEVMEM, &bo));
	frac_poison(&p, sizeof(p));
	p.handle = bo.handle;
	p.flags = DRM_CLOEXEC | DRM_RDWR;
	EXPECT_EQ(-EOPNOTSUPP, frac_t_ioctl(self->dev.fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p));
	EXPECT_EQ((int32_t)FRAC_POISON32, p.fd);
	frac_bo_destroy(&self->dev, &bo);
}

/*
 * One dma-buf of another exporter imported into two files, and re-exported
 * from the first into a third: every file gets its BO, and jobs of each read
 * what the CPU wrote. The driver attaches and maps the pages for the device
 * once: a second mapping of the same pages for one device is what DMA-API
 * debug reports ("overlapping mappings aren't supported"), which fails the
 * debug lane.
 */
TEST_F(uapi, prime_import_foreign_in_several_files)
{
	const uint64_t size = 8 * FRAC_PAGE;
	struct dma_heap_allocation_data alloc = { .len = size, .fd_flags = O_RDWR | O_CLOEXEC };
	struct drm_prime_handle imp[3], exp;
	struct frac_job_result res;
	struct frac_dev devs[3];
	struct frac_cmdlist cl;
	struct frac_bo bo;
	uint8_t *data, *map;
	int heap, i;

	heap = open("/dev/dma_heap/system", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, heap) TH_LOG("no /dev/dma_heap/system");
	ASSERT_EQ(0, frac_t_ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &alloc));
	close(heap);
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)alloc.fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	data = malloc(size);
	ASSERT_NE(NULL, data);
	frac_fill_random(data, size, 12);
	memcpy(map, data, size);

	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, frac_open(-1, &devs[i]));
	for (i = 0; i < 2; i++) {
		memset(&imp[i], 0, sizeof(imp[i]));
		imp[i].fd = (int)alloc.fd;
		ASSERT_EQ(0, frac_t_ioctl(devs[i].fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp[i]));
	}
	memset(&exp, 0, sizeof(exp));
	exp.handle = imp[0].handle;
	exp.flags = DRM_CLOEXEC | DRM_RDWR;
	ASSERT_EQ(0, frac_t_ioctl(devs[0].fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
	memset(&imp[2], 0, sizeof(imp[2]));
	imp[2].fd = exp.fd;
	ASSERT_EQ(0, frac_t_ioctl(devs[2].fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp[2]));
	close(exp.fd);

	for (i = 0; i < 3; i++) {
		bo.handle = imp[i].handle;
		bo.size = size;
		frac_cmdlist_init(&cl);
		ASSERT_EQ(0, frac_cmd_crc32c(&cl, &bo, 0, size, 0));
		ASSERT_EQ(0, frac_run(&devs[i], 0, &cl, &res));
		EXPECT_EQ(0, res.status);
		EXPECT_EQ((uint64_t)frac_crc32c(0, data, size), res.result)
			TH_LOG("file %d read other bytes", i);
	}
	/* Closing files in any order leaves the others' BO working. */
	frac_close(&devs[0]);
	bo.handle = imp[1].handle;
	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_crc32c(&cl, &bo, 0, size, 0));
	ASSERT_EQ(0, frac_run(&devs[1], 0, &cl, &res));
	EXPECT_EQ((uint64_t)frac_crc32c(0, data, size), res.result);
	frac_close(&devs[1]);
	frac_close(&devs[2]);
	munmap(map, size);
	close((int)alloc.fd);
	free(data);
}

/*
 * A dma-buf from another exporter (the system dma-heap) imported as a BO:
 * jobs read what the CPU wrote into it and write what the CPU then reads.
 */
TEST_F(uapi, prime_import_foreign)
{
	const uint64_t size = 16 * FRAC_PAGE;
	struct dma_heap_allocation_data alloc = { .len = size, .fd_flags = O_RDWR | O_CLOEXEC };
	struct dma_buf_sync sync = { 0 };
	struct drm_prime_handle imp = { 0 };
	struct drm_frac_bo_info info;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	struct frac_bo bo = { 0 };
	uint8_t *data, *map;
	int heap;

	heap = open("/dev/dma_heap/system", O_RDWR | O_CLOEXEC);
	if (heap < 0)
		SKIP(return, "no /dev/dma_heap/system");
	ASSERT_EQ(0, frac_t_ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &alloc));
	close(heap);
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)alloc.fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	data = malloc(size);
	ASSERT_NE(NULL, data);
	frac_fill_random(data, size, 11);
	sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE;
	frac_t_ioctl((int)alloc.fd, DMA_BUF_IOCTL_SYNC, &sync);
	memcpy(map, data, size);
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE;
	frac_t_ioctl((int)alloc.fd, DMA_BUF_IOCTL_SYNC, &sync);

	imp.fd = (int)alloc.fd;
	ASSERT_EQ(0, frac_t_ioctl(self->dev.fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));
	frac_poison(&info, sizeof(info));
	info.handle = imp.handle;
	ASSERT_EQ(0, frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_BO_INFO, &info));
	EXPECT_EQ(size, info.size);
	EXPECT_EQ(0u, info.flags);
	bo.handle = imp.handle;
	bo.size = size;

	/* The device reads what the CPU wrote... */
	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_crc32c(&cl, &bo, 100, size - 200, 0));
	ASSERT_EQ(0, frac_run(&self->dev, 0, &cl, &res));
	EXPECT_EQ(0, res.status);
	EXPECT_EQ((uint64_t)frac_crc32c(0, data + 100, size - 200), res.result);

	/* ...and writes what the CPU reads, across pages. */
	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_fill(&cl, &bo, FRAC_PAGE - 3, 2 * FRAC_PAGE + 7, 0x0badcafe));
	ASSERT_EQ(0, frac_run(&self->dev, 1 % self->dev.num_queues, &cl, &res));
	EXPECT_EQ(0, res.status);
	sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ;
	frac_t_ioctl((int)alloc.fd, DMA_BUF_IOCTL_SYNC, &sync);
	EXPECT_EQ(-1, frac_check_fill(map + FRAC_PAGE - 3, 2 * FRAC_PAGE + 7, 0x0badcafe));
	EXPECT_EQ(0, memcmp(map, data, FRAC_PAGE - 3));
	EXPECT_EQ(0, memcmp(map + 3 * FRAC_PAGE + 4, data + 3 * FRAC_PAGE + 4,
			    size - 3 * FRAC_PAGE - 4));
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
	frac_t_ioctl((int)alloc.fd, DMA_BUF_IOCTL_SYNC, &sync);

	frac_bo_destroy(&self->dev, &bo);
	munmap(map, size);
	close((int)alloc.fd);
	free(data);
}

/* ---- fdinfo ------------------------------------------------------------- */

TEST_F(uapi, fdinfo)
{
	struct frac_job_result res;
	struct frac_cmdlist cl;
	uint64_t before, after, v;
	char key[32];
	uint32_t q;

	ASSERT_EQ(0, frac_t_fdinfo(self->dev.fd, "drm-frac-jobs-completed", &before));
	for (q = 0; q < self->dev.num_queues; q++) {
		snprintf(key, sizeof(key), "drm-engine-queue%u", q);
		EXPECT_EQ(0, frac_t_fdinfo(self->dev.fd, key, &v)) TH_LOG("no %s", key);
	}
	EXPECT_EQ(0, frac_t_fdinfo(self->dev.fd, "drm-client-id", &v));
	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_nop(&cl));
	ASSERT_EQ(0, frac_run(&self->dev, 0, &cl, &res));
	ASSERT_EQ(0, frac_t_fdinfo(self->dev.fd, "drm-frac-jobs-completed", &after));
	EXPECT_EQ(before + 1, after);
}

/*
 * The file's memory in the keys of drm-usage-stats.rst: "memory" for host
 * BOs (the name the document reserves for system memory), "devmem" for
 * device BOs; total, shared, active and resident, and no legacy
 * drm-memory-<region> alias next to drm-resident-<region> (the document
 * allows one of the two).
 */
TEST_F(uapi, fdinfo_memory_regions)
{
	const int fd = self->dev.fd;
	uint64_t t0, t1, d0 = 0, d1 = 0, v;
	struct frac_bo host, dev = { 0 };
	struct frac_job_result res;
	struct frac_cmdlist cl;
	const bool devmem = self->dev.features & DRM_FRAC_FEAT_DEVMEM;

	ASSERT_EQ(0, frac_t_fdinfo(fd, "drm-total-memory", &t0));
	if (devmem)
		ASSERT_EQ(0, frac_t_fdinfo(fd, "drm-total-devmem", &d0));
	EXPECT_EQ(-ENOENT, frac_t_fdinfo(fd, "drm-total-host", &v));
	EXPECT_EQ(-ENOENT, frac_t_fdinfo(fd, "drm-memory-memory", &v));
	EXPECT_EQ(-ENOENT, frac_t_fdinfo(fd, "drm-memory-host", &v));

	ASSERT_EQ(0, frac_t_bo(&self->dev, 3 << 20, 0, &host));
	if (devmem)
		ASSERT_EQ(0, frac_bo_create(&self->dev, 1 << 20, DRM_FRAC_BO_DEVMEM, &dev));
	ASSERT_EQ(0, frac_t_fdinfo(fd, "drm-total-memory", &t1));
	EXPECT_EQ(t0 + (3 << 20), t1);
	ASSERT_EQ(0, frac_t_fdinfo(fd, "drm-resident-memory", &v));
	EXPECT_EQ(t1, v) TH_LOG("host BOs are pinned: all resident");
	if (devmem) {
		ASSERT_EQ(0, frac_t_fdinfo(fd, "drm-total-devmem", &d1));
		EXPECT_EQ(d0 + (1 << 20), d1);
	}

	/* A job that has ended leaves nothing active. */
	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_fill(&cl, &host, 0, host.size, 7));
	if (devmem)
		ASSERT_EQ(0, frac_cmd_copy(&cl, &dev, 0, &host, 0, dev.size));
	ASSERT_EQ(0, frac_run(&self->dev, 0, &cl, &res));
	EXPECT_EQ(0, res.status);
	ASSERT_EQ(0, frac_t_fdinfo(fd, "drm-active-memory", &v));
	EXPECT_EQ(0ull, v);
	if (devmem) {
		ASSERT_EQ(0, frac_t_fdinfo(fd, "drm-active-devmem", &v));
		EXPECT_EQ(0ull, v);
	}

	frac_bo_destroy(&self->dev, &host);
	if (devmem)
		frac_bo_destroy(&self->dev, &dev);
	ASSERT_EQ(0, frac_t_fdinfo(fd, "drm-total-memory", &v));
	EXPECT_EQ(t0, v);
}

/*
 * Each queue's counters in sysfs frac_queues/<q>/: a job on queue q moves
 * jobs_submitted and jobs_completed of q by one and no other queue's, and
 * the queues add up to the device's sums in frac/ (no one else submits
 * here).
 */
TEST_F(uapi, sysfs_queue_counters)
{
	static const char * const names[] = {
		"jobs_submitted", "jobs_completed", "jobs_failed", "job_timeouts",
		"lost_interrupts", "queue_resets", "bad_completions",
	};
	uint64_t before[FRAC_ARRAY_SIZE(names)][16], v, sum;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	uint32_t q, t, nq = self->dev.num_queues < 16 ? self->dev.num_queues : 16;
	size_t i;

	for (q = 0; q < nq; q++)
		for (i = 0; i < FRAC_ARRAY_SIZE(names); i++) {
			before[i][q] = frac_t_queue_counter(&self->dev, q, names[i]);
			ASSERT_NE(~0ull, before[i][q]) TH_LOG("frac_queues/%u/%s", q, names[i]);
		}
	EXPECT_EQ(~0ull, frac_t_queue_counter(&self->dev, nq, "jobs_submitted"))
		TH_LOG("queue %u", nq);
	for (i = 0; i < FRAC_ARRAY_SIZE(names); i++) {
		for (sum = 0, q = 0; q < nq; q++)
			sum += before[i][q];
		v = frac_t_counter(&self->dev, names[i]);
		EXPECT_EQ(v, sum) TH_LOG("frac/%s is not the sum of the queues'", names[i]);
	}

	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_nop(&cl));
	for (t = 0; t < nq; t++) {
		ASSERT_EQ(0, frac_run(&self->dev, t, &cl, &res));
		for (q = 0; q < nq; q++) {
			uint64_t want = before[0][q] + (q <= t);

			EXPECT_EQ(want, frac_t_queue_counter(&self->dev, q, "jobs_submitted"))
				TH_LOG("queue %u after a job on queue %u", q, t);
			EXPECT_EQ(before[1][q] + (q <= t),
				  frac_t_queue_counter(&self->dev, q, "jobs_completed"))
				TH_LOG("queue %u after a job on queue %u", q, t);
		}
	}
}

/* ---- Isolation between open files --------------------------------------- */

TEST_F(uapi, isolation_bo_handles)
{
	struct drm_frac_bo_info info;
	struct drm_frac_cmd cmd = { .op = DRM_FRAC_OP_FILL, .len = 64 };
	struct drm_gem_close cl = { 0 };
	struct drm_prime_handle p;
	struct frac_dev other;
	struct frac_bo bo;
	void *map;

	ASSERT_EQ(0, frac_t_bo(&self->dev, 4096, 0, &bo));
	memset(bo.map, 0x77, 4096);
	ASSERT_EQ(0, frac_open(self->dev.index, &other));

	/* The other file has no BO with that handle. */
	frac_poison(&info, sizeof(info));
	info.handle = bo.handle;
	EXPECT_EQ(-ENOENT, frac_t_ioctl(other.fd, DRM_IOCTL_FRAC_BO_INFO, &info));
	cmd.dst_handle = bo.handle;
	EXPECT_EQ(-ENOENT, frac_t_submit(other.fd, &cmd, 1, 0, 0, 0, NULL));
	frac_poison(&p, sizeof(p));
	p.handle = bo.handle;
	p.flags = DRM_CLOEXEC;
	EXPECT_EQ(-ENOENT, frac_t_ioctl(other.fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p));
	cl.handle = bo.handle;
	EXPECT_EQ(-EINVAL, frac_t_ioctl(other.fd, DRM_IOCTL_GEM_CLOSE, &cl));
	/* Nor may it map the first file's BO through its own fd. */
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, other.fd, bo.mmap_offset);
	EXPECT_EQ(MAP_FAILED, map);
	EXPECT_EQ(EACCES, errno);
	if (map != MAP_FAILED)
		munmap(map, 4096);
	frac_close(&other);

	/* The BO is untouched and still the first file's. */
	EXPECT_EQ(-1, frac_check_byte(bo.map, 4096, 0x77));
	frac_poison(&info, sizeof(info));
	info.handle = bo.handle;
	EXPECT_EQ(0, frac_t_ioctl(self->dev.fd, DRM_IOCTL_FRAC_BO_INFO, &info));
	frac_bo_destroy(&self->dev, &bo);
}

TEST_F(uapi, isolation_job_ids)
{
	struct drm_frac_cmd nop = { .op = DRM_FRAC_OP_NOP };
	struct drm_frac_wait w;
	struct frac_dev other;
	uint32_t id, oid;

	ASSERT_EQ(0, long_job(&self->dev, &self->la, &self->lb, 0, 0, &id));
	ASSERT_EQ(0, frac_open(self->dev.index, &other));
	EXPECT_EQ(-EINVAL, frac_t_wait(other.fd, id, 0, &w));
	EXPECT_EQ(-EINVAL, frac_t_wait(other.fd, id, 1000000, &w));

	/* Its own job may get the same number; waiting on it is its own job. */
	ASSERT_EQ(0, frac_t_submit(other.fd, &nop, 1, 0, 0, 0, &oid));
	ASSERT_EQ(0, frac_t_wait(other.fd, oid, -1, &w));
	EXPECT_EQ(0, w.status);
	frac_close(&other);

	/* The first file's job is still there to wait for. */
	ASSERT_EQ(0, frac_t_wait(self->dev.fd, id, 30 * FRAC_NSEC, &w));
	EXPECT_EQ(0, w.status);
}

/* ---- SUBMIT_BATCH ------------------------------------------------------- */

static void batch_job(struct drm_frac_submit *s, const struct drm_frac_cmd *cmd, uint32_t queue)
{
	memset(s, 0, sizeof(*s));
	s->cmds = (uintptr_t)cmd;
	s->cmd_count = 1;
	s->cmd_size = sizeof(*cmd);
	s->queue = queue;
	s->priority = DRM_FRAC_PRIO_NORMAL;
	s->job_id = FRAC_POISON32;
}

static int submit_batch(int fd, struct drm_frac_submit *jobs, uint32_t n)
{
	struct drm_frac_submit_batch b = {
		.jobs = (uintptr_t)jobs,
		.count = n,
		.job_size = sizeof(*jobs),
	};

	return frac_t_ioctl(fd, DRM_IOCTL_FRAC_SUBMIT_BATCH, &b);
}

/* One round of batch_in_order_on_shared_bos: 0 when Y holds @p and Z @q after it. */
static int batch_order_round(struct __test_metadata *_metadata, struct frac_dev *dev,
			     struct frac_bo *x, struct frac_bo *y, struct frac_bo *z,
			     uint32_t queue, uint32_t in_syncobj, uint32_t p, uint32_t q,
			     uint32_t held)
{
	struct drm_frac_cmd cmds[4] = {
		{ .op = DRM_FRAC_OP_FILL, .dst_handle = x->handle, .len = x->size, .arg = { p } },
		{ .op = DRM_FRAC_OP_COPY, .src_handle = x->handle, .dst_handle = y->handle,
		  .len = x->size },
		{ .op = DRM_FRAC_OP_FILL, .dst_handle = x->handle, .len = x->size, .arg = { q } },
		{ .op = DRM_FRAC_OP_COPY, .src_handle = x->handle, .dst_handle = z->handle,
		  .len = x->size },
	};
	struct drm_frac_submit jobs[4];
	struct drm_frac_wait w;
	uint32_t i;

	for (i = 0; i < 4; i++)
		batch_job(&jobs[i], &cmds[i], queue);
	jobs[0].in_syncobj = in_syncobj;
	EXPECT_EQ(0, submit_batch(dev->fd, jobs, 4));
	/* The job the batch waits for (@held, if any) has not ended yet. */
	if (held)
		EXPECT_EQ(-ETIME, frac_t_wait(dev->fd, held, 0, &w))
			TH_LOG("job %u ended before the batch was in: it held nothing", held);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, frac_t_wait(dev->fd, jobs[i].job_id, 30 * FRAC_NSEC, &w));
		EXPECT_EQ(0, w.status);
	}
	for (i = 0; i < y->size / 4; i++)
		if (((uint32_t *)y->map)[i] != p || ((uint32_t *)z->map)[i] != q)
			return -1;
	return 0;
}

/*
 * The jobs of a batch run in the order of the array, one after another,
 * whatever BOs they share: fill X with p, copy X -> Y, fill X with q, copy
 * X -> Z in one batch gives Y all p and Z all q. Their dependencies are all
 * taken before the batch, so only the queue's order keeps each copy between
 * its fills. Two paths: straight to the ring (direct submission, as the
 * direct_jobs counter shows when it is on), and behind a first job that
 * waits for a long job on another queue, so that drm_sched's run_job writes
 * all four. Injected latency holds the long job's end 5 s, and the test
 * checks that it had not ended when the batch was in: on a slow kernel (KASAN
 * under TCG) a long copy alone ended before the batch's SUBMIT, and the batch
 * then rightly went direct.
 */
TEST_F_TIMEOUT(uapi, batch_in_order_on_shared_bos, 300)
{
	struct frac_bo x, y, z;
	uint32_t r, syncobj, lid, bad = 0;
	uint64_t direct0, direct1;
	struct drm_frac_wait w;
	int on = frac_t_modparam_bool("direct_submit");

	ASSERT_EQ(0, frac_t_bo(&self->dev, 64 << 10, 0, &x));
	ASSERT_EQ(0, frac_t_bo(&self->dev, 64 << 10, 0, &y));
	ASSERT_EQ(0, frac_t_bo(&self->dev, 64 << 10, 0, &z));

	direct0 = frac_t_queue_counter(&self->dev, 0, "jobs_direct");
	for (r = 0; r < 200; r++)
		bad += !!batch_order_round(_metadata, &self->dev, &x, &y, &z, 0, 0,
					   2 * r + 1, 2 * r + 2, 0);
	direct1 = frac_t_queue_counter(&self->dev, 0, "jobs_direct");
	EXPECT_EQ(0u, bad) TH_LOG("%u of 200 direct batches out of order", bad);
	if (on > 0)
		EXPECT_LT(direct0, direct1) TH_LOG("no job of the batches went direct");

	if (self->dev.num_queues < 2)
		SKIP(goto out, "one queue: no long job elsewhere to wait for");
	ASSERT_EQ(0, frac_t_syncobj_create(self->dev.fd, &syncobj));
	for (r = 0; r < 4; r++) {
		ASSERT_EQ(0, frac_t_inject(&self->dev, "latency 1 5000"))
			TH_LOG("no fault injection (fault-injection=on) to hold the long job");
		ASSERT_EQ(0, long_job(&self->dev, &self->la, &self->lb, 1, syncobj, &lid));
		direct0 = frac_t_queue_counter(&self->dev, 0, "jobs_direct");
		bad += !!batch_order_round(_metadata, &self->dev, &x, &y, &z, 0, syncobj,
					   1000 + 2 * r, 1001 + 2 * r, lid);
		direct1 = frac_t_queue_counter(&self->dev, 0, "jobs_direct");
		EXPECT_EQ(direct0, direct1) TH_LOG("a job passed the first one, which waited");
		ASSERT_EQ(0, frac_t_wait(self->dev.fd, lid, 30 * FRAC_NSEC, &w));
	}
	EXPECT_EQ(0u, bad) TH_LOG("%u batches behind a dependency out of order", bad);
	frac_t_syncobj_destroy(self->dev.fd, syncobj);
out:
	frac_bo_destroy(&self->dev, &x);
	frac_bo_destroy(&self->dev, &y);
	frac_bo_destroy(&self->dev, &z);
}

/*
 * A batch takes every job's dependencies before it submits any: an
 * in_syncobj gives the fence its syncobj held before the batch, not the one
 * an earlier job of the batch puts there. A syncobj without a fence is then
 * refused (-EINVAL) even when an earlier job of the batch names it as
 * out_syncobj, and the batch changes nothing: not even that syncobj.
 */
TEST_F(uapi, batch_in_syncobj_is_taken_before_the_batch)
{
	struct drm_frac_cmd nop = { .op = DRM_FRAC_OP_NOP };
	struct drm_frac_submit jobs[2];
	struct drm_frac_wait w;
	uint32_t syncobj;

	ASSERT_EQ(0, frac_t_syncobj_create(self->dev.fd, &syncobj));
	batch_job(&jobs[0], &nop, 0);
	batch_job(&jobs[1], &nop, 0);
	jobs[0].out_syncobj = syncobj;
	jobs[1].in_syncobj = syncobj;
	EXPECT_EQ(-EINVAL, submit_batch(self->dev.fd, jobs, 2));
	EXPECT_EQ(-EINVAL, frac_t_syncobj_wait(self->dev.fd, syncobj, 0))
		TH_LOG("the refused batch put a fence in the syncobj");
	EXPECT_EQ(-EINVAL, frac_t_wait(self->dev.fd, 1, 0, &w));
	/* Once the syncobj holds a fence, the same batch is taken. */
	ASSERT_EQ(0, frac_t_submit(self->dev.fd, &nop, 1, 0, 0, syncobj, NULL));
	ASSERT_EQ(0, submit_batch(self->dev.fd, jobs, 2));
	EXPECT_EQ(0, frac_t_wait(self->dev.fd, jobs[1].job_id, 30 * FRAC_NSEC, &w));
	EXPECT_EQ(0, frac_t_wait(self->dev.fd, jobs[0].job_id, 30 * FRAC_NSEC, &w));
	frac_t_syncobj_destroy(self->dev.fd, syncobj);
}

/*
 * A batch whose ids would take the file past DRM_FRAC_MAX_UNWAITED is
 * refused whole (-EBUSY), its array untouched; the batch that fits is taken.
 */
TEST_F_TIMEOUT(uapi, batch_unwaited_limit, 120)
{
	struct drm_frac_cmd nop = { .op = DRM_FRAC_OP_NOP };
	struct drm_frac_submit jobs[4], before[4];
	struct drm_frac_wait w;
	uint32_t i, id;

	for (i = 0; i < DRM_FRAC_MAX_UNWAITED - 3; i++)
		ASSERT_EQ(0, frac_t_submit(self->dev.fd, &nop, 1, i % self->dev.num_queues, 0, 0,
					   &id)) TH_LOG("job %u", i);
	for (i = 0; i < 4; i++)
		batch_job(&jobs[i], &nop, 0);
	memcpy(before, jobs, sizeof(jobs));
	EXPECT_EQ(-EBUSY, submit_batch(self->dev.fd, jobs, 4));
	EXPECT_EQ(0, memcmp(before, jobs, sizeof(jobs)));
	ASSERT_EQ(0, submit_batch(self->dev.fd, jobs, 3));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, frac_t_wait(self->dev.fd, jobs[i].job_id, 30 * FRAC_NSEC, &w));
}

struct batch_racer {
	struct frac_dev *dev;
	struct frac_bo *bo[2];
	uint32_t queue;
	bool swap;
	int ret;
};

/* 300 batches of two copies between two BOs, one way round or the other. */
static void *batch_racer_run(void *arg)
{
	struct batch_racer *r = arg;
	struct drm_frac_cmd cmds[2] = { 0 };
	struct drm_frac_submit jobs[2];
	struct drm_frac_wait w;
	uint32_t i, k;

	for (k = 0; k < 2; k++) {
		cmds[k].op = DRM_FRAC_OP_COPY;
		cmds[k].src_handle = r->bo[(k + r->swap) % 2]->handle;
		cmds[k].dst_handle = r->bo[(k + 1 + r->swap) % 2]->handle;
		cmds[k].len = r->bo[0]->size;
	}
	for (i = 0; i < 300 && !r->ret; i++) {
		batch_job(&jobs[0], &cmds[0], r->queue);
		batch_job(&jobs[1], &cmds[1], r->queue);
		r->ret = submit_batch(r->dev->fd, jobs, 2);
		for (k = 0; k < 2 && !r->ret; k++) {
			r->ret = frac_t_wait(r->dev->fd, jobs[k].job_id, 30 * FRAC_NSEC, &w);
			if (!r->ret)
				r->ret = w.status;
		}
	}
	return NULL;
}

/*
 * Two threads submit batches that name the same two BOs in opposite orders,
 * on two queues: the batches lock both BOs at once, and neither deadlocks nor
 * fails; every job ends without error. (The debug lane runs this under
 * lockdep and KASAN.)
 */
TEST_F_TIMEOUT(uapi, batch_racing_on_shared_bos, 300)
{
	struct batch_racer r[2];
	struct frac_bo a, b;
	uint32_t i;

	ASSERT_EQ(0, frac_t_bo(&self->dev, 16 << 10, 0, &a));
	ASSERT_EQ(0, frac_t_bo(&self->dev, 16 << 10, 0, &b));
	for (i = 0; i < 2; i++) {
		r[i] = (struct batch_racer) {
			.dev = &self->dev, .bo = { &a, &b },
			.queue = i % self->dev.num_queues, .swap = i,
		};
	}
	{
		pthread_t t[2];

		for (i = 0; i < 2; i++)
			ASSERT_EQ(0, pthread_create(&t[i], NULL, batch_racer_run, &r[i]));
		for (i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
	}
	EXPECT_EQ(0, r[0].ret) TH_LOG("thread 0: %s", strerror(-r[0].ret));
	EXPECT_EQ(0, r[1].ret) TH_LOG("thread 1: %s", strerror(-r[1].ret));
	frac_bo_destroy(&self->dev, &a);
	frac_bo_destroy(&self->dev, &b);
}

TEST_HARNESS_MAIN
