// SPDX-License-Identifier: MIT
/*
 * frac_fault_test: recovery from every fault kind of the device, injected
 * through debugfs accel/<bdf>/inject_fault while other queues carry load.
 *
 * For each kind the jobs it hits end with the status the uAPI documents
 * (-ETIMEDOUT for the job that hung, -ECANCELED for the innocent jobs its
 * queue reset cancelled, -EIO for jobs the device failed and for the jobs in
 * flight when the device failed as a whole), every other job completes
 * with correct data, the sysfs counters (job_timeouts, lost_interrupts,
 * queue_resets, device_resets, jobs_failed, bad_completions) move by exactly
 * what the fault explains, and afterwards every queue runs jobs again. A
 * completion record the driver cannot trust (bad-id, bad-head, dup) resets
 * its queue: no job ends on its word, its jobs in flight end -ECANCELED.
 *
 * Needs a device with fault-injection=on (else SKIP). Meant to run with a
 * short job timeout (frac.ko job_timeout_ms=500); waits scale with it.
 */
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/sync_file.h>

#include <sys/klog.h>

#include "frac_test.h"

#define LOAD_JOBS	4		/* per loaded queue */
#define LOAD_LEN	(64 * 1024ull)
#define SLICE		(64 * 1024ull)	/* victim job slices */

/* debugfs accel/<bdf>/sched_pause: "<queue> <1|0>". */
static int sched_pause(const struct frac_dev *dev, uint32_t q, int stop)
{
	char bdf[64], path[256], val[32];
	int ret = frac_t_bdf(dev, bdf, sizeof(bdf));

	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/sched_pause", bdf);
	snprintf(val, sizeof(val), "%u %d", q, stop);
	return frac_t_write_str(path, val);
}

FIXTURE(fault) {
	struct frac_dev dev;
	struct frac_bo src, load, victim;
	struct frac_bo qvictim[16];	/* one per queue: jobs sharing a BO are ordered */
	uint32_t load_ids[16][LOAD_JOBS];
	uint32_t load_mask;		/* queues with load outstanding */
	uint64_t timeout_ms;		/* frac.ko job_timeout_ms */
	int64_t wait_ns;		/* generous bound for any job here */
	int direct_was;			/* direct_submit at setup; -1 without it */
};

FIXTURE_SETUP(fault)
{
	uint32_t q;

	self->dev.fd = -1;
	self->direct_was = frac_t_modparam_bool("direct_submit");
	FRAC_OPEN_OR_SKIP(&self->dev);
	if (!(self->dev.features & DRM_FRAC_FEAT_FAULT_INJ))
		SKIP(return, "device without fault injection (fault-injection=on)");
	if (self->dev.num_queues < 2)
		SKIP(return, "needs a second queue to carry load");
	self->timeout_ms = frac_t_modparam("job_timeout_ms", 5000);
	self->wait_ns = (int64_t)(4 * self->timeout_ms) * 1000000 + 30 * FRAC_NSEC;
	ASSERT_EQ(0, frac_t_bo(&self->dev, LOAD_LEN, 0, &self->src));
	ASSERT_EQ(0, frac_t_bo(&self->dev, LOAD_LEN * LOAD_JOBS * 16, 0, &self->load));
	ASSERT_EQ(0, frac_t_bo(&self->dev, SLICE * 8, 0, &self->victim));
	for (q = 0; q < self->dev.num_queues; q++)
		ASSERT_EQ(0, frac_t_bo(&self->dev, SLICE * 8, 0, &self->qvictim[q]));
	frac_fill_random(self->src.map, LOAD_LEN, 1);
}

FIXTURE_TEARDOWN(fault)
{
	uint32_t q;

	if (self->dev.fd < 0)
		return;
	/* What a test that stopped early may have left for the next ones. */
	if (self->direct_was >= 0)
		frac_t_write_str("/sys/module/frac/parameters/direct_submit",
				 self->direct_was ? "1" : "0");
	if (!access("/sys/kernel/debug/accel", F_OK))
		for (q = 0; q < self->dev.num_queues; q++)
			sched_pause(&self->dev, q, 0);
	frac_bo_destroy(&self->dev, &self->src);
	frac_bo_destroy(&self->dev, &self->load);
	frac_bo_destroy(&self->dev, &self->victim);
	for (q = 0; q < 16; q++)
		frac_bo_destroy(&self->dev, &self->qvictim[q]);
	frac_close(&self->dev);
}

static uint8_t *load_slot(FIXTURE_DATA(fault) *self, uint32_t q, uint32_t j)
{
	return (uint8_t *)self->load.map + (q * LOAD_JOBS + j) * LOAD_LEN;
}

/* LOAD_JOBS copies on every queue not in @skip_mask. */
static void load_start(struct __test_metadata *_metadata, FIXTURE_DATA(fault) *self,
		       uint32_t skip_mask)
{
	struct frac_cmdlist cl;
	uint32_t q, j;

	self->load_mask = 0;
	for (q = 0; q < self->dev.num_queues; q++) {
		if (skip_mask & (1u << q))
			continue;
		self->load_mask |= 1u << q;
		for (j = 0; j < LOAD_JOBS; j++) {
			memset(load_slot(self, q, j), 0, LOAD_LEN);
			frac_cmdlist_init(&cl);
			ASSERT_EQ(0, frac_cmd_copy(&cl, &self->load, (q * LOAD_JOBS + j) * LOAD_LEN,
						   &self->src, 0, LOAD_LEN));
			ASSERT_EQ(0, frac_submit(&self->dev, q, &cl, NULL,
						 &self->load_ids[q][j]));
		}
	}
}

/* Every load job completed, with the right data. */
static void load_check(struct __test_metadata *_metadata, FIXTURE_DATA(fault) *self)
{
	struct frac_job_result res;
	uint32_t q, j;

	for (q = 0; q < self->dev.num_queues; q++) {
		if (!(self->load_mask & (1u << q)))
			continue;
		for (j = 0; j < LOAD_JOBS; j++) {
			ASSERT_EQ(0, frac_wait(&self->dev, self->load_ids[q][j], self->wait_ns,
					       &res));
			EXPECT_EQ(0, res.status) TH_LOG("load job %u on queue %u", j, q);
			EXPECT_EQ(0, memcmp(load_slot(self, q, j), self->src.map, LOAD_LEN))
				TH_LOG("load job %u on queue %u: wrong data", j, q);
		}
	}
	self->load_mask = 0;
}

/* A FILL of victim slice @slot on @queue; the slice is poisoned first. */
static uint32_t victim_job(struct __test_metadata *_metadata, FIXTURE_DATA(fault) *self,
			   struct frac_dev *dev, struct frac_bo *victim, uint32_t queue,
			   uint32_t slot, uint32_t out_syncobj)
{
	struct frac_submit_opts opts = { .priority = DRM_FRAC_PRIO_NORMAL,
					 .out_syncobj = out_syncobj };
	struct frac_cmdlist cl;
	uint32_t id = 0;

	(void)self;
	memset((uint8_t *)victim->map + slot * SLICE, FRAC_POISON, SLICE);
	frac_cmdlist_init(&cl);
	EXPECT_EQ(0, frac_cmd_fill(&cl, victim, slot * SLICE, SLICE, 0x10101010u * (slot + 1)));
	EXPECT_EQ(0, frac_submit(dev, queue, &cl, &opts, &id));
	return id;
}

static bool victim_filled(const struct frac_bo *victim, uint32_t slot)
{
	return frac_check_fill((uint8_t *)victim->map + slot * SLICE, SLICE,
			       0x10101010u * (slot + 1)) == -1;
}

static bool victim_untouched(const struct frac_bo *victim, uint32_t slot)
{
	return frac_check_byte((uint8_t *)victim->map + slot * SLICE, SLICE, FRAC_POISON) == -1;
}

/* Every queue runs a job again, and its data is right. */
static void all_queues_work(struct __test_metadata *_metadata, FIXTURE_DATA(fault) *self)
{
	struct frac_job_result res;
	uint32_t q, id;

	for (q = 0; q < self->dev.num_queues; q++) {
		id = victim_job(_metadata, self, &self->dev, &self->victim, q, 7, 0);
		ASSERT_EQ(0, frac_wait(&self->dev, id, self->wait_ns, &res));
		EXPECT_EQ(0, res.status) TH_LOG("queue %u after the fault", q);
		EXPECT_TRUE(victim_filled(&self->victim, 7)) TH_LOG("queue %u", q);
	}
}

struct counters {
	uint64_t timeouts, lost, qresets, dresets, failed;
};

static void counters_read(const struct frac_dev *dev, struct counters *c)
{
	c->timeouts = frac_t_counter(dev, "job_timeouts");
	c->lost = frac_t_counter(dev, "lost_interrupts");
	c->qresets = frac_t_counter(dev, "queue_resets");
	c->dresets = frac_t_counter(dev, "device_resets");
	c->failed = frac_t_counter(dev, "jobs_failed");
}

static int inject(struct __test_metadata *_metadata, struct frac_dev *dev, const char *what)
{
	int ret = frac_t_inject(dev, what);

	EXPECT_EQ(0, ret) TH_LOG("inject_fault \"%s\": %s", what, strerror(-ret));
	return ret;
}

/*
 * Wait until the device has fetched every job written to queue @q's ring
 * (its SQ_HEAD, in debugfs "queues", reached its SQ_TAIL): an injection
 * for "the next job" made before that could be taken by a job still unfetched.
 */
static int wait_fetched(const struct frac_dev *dev, uint32_t q)
{
	char bdf[64], path[256], line[512];
	unsigned int qn, head, tail, st;
	int i, cur, ret = frac_t_bdf(dev, bdf, sizeof(bdf));
	FILE *f;

	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/queues", bdf);
	for (i = 0; i < 1000; i++) {
		f = fopen(path, "re");
		if (!f)
			return -errno;
		cur = -1;
		ret = -ENOENT;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "queue %u:", &qn) == 1)
				cur = qn;
			else if (cur == (int)q &&
				 sscanf(line, "  hw: status %x sq_head %u sq_tail %u", &st, &head, &tail) == 3) {
				ret = head == tail ? 0 : -EAGAIN;
				break;
			}
		}
		fclose(f);
		if (ret != -EAGAIN)
			return ret;
		usleep(10000);
	}
	return -ETIME;
}

/*
 * With frac.ko's direct_submit on, a job that waits for nothing goes direct
 * (SUBMIT writes it to the ring): a hang is then a direct job's. drm_sched
 * never has it (the direct-job watchdog times it), its BOs' reservations
 * hold its hardware fence, and it is to take the blame rather than a job
 * written behind it. faults.sh runs the hang tests with it off and on; @n of
 * the test's jobs on queue @q must have gone direct when it is on, none when
 * off.
 */
static void expect_direct(struct __test_metadata *_metadata, const struct frac_dev *dev,
			  uint32_t q, uint64_t before, uint64_t n)
{
	int on = frac_t_modparam_bool("direct_submit");
	uint64_t now = frac_t_queue_counter(dev, q, "jobs_direct");

	EXPECT_EQ(before + (on == 1 ? n : 0), now)
		TH_LOG("direct_submit %s: %llu jobs went direct", on == 1 ? "on" : "off",
		       (unsigned long long)(now - before));
}

/*
 * hang: the queue stops. Its first job times out (-ETIMEDOUT) and the queue
 * is reset; the jobs behind it on the ring, one of them another file's, are
 * cancelled (-ECANCELED). The other queues' load completes.
 */
TEST_F_TIMEOUT(fault, hang, 120)
{
	const uint32_t hq = 1;
	struct counters before, after;
	struct frac_job_result r1, r2, r3;
	struct frac_dev other;
	struct frac_bo ovictim;
	uint32_t v1, v2, v3;
	int64_t t0, ms;
	uint64_t direct0;

	counters_read(&self->dev, &before);
	direct0 = frac_t_queue_counter(&self->dev, hq, "jobs_direct");
	ASSERT_EQ(0, frac_open(self->dev.index, &other));
	ASSERT_EQ(0, frac_t_bo(&other, SLICE * 8, 0, &ovictim));
	ASSERT_EQ(0, inject(_metadata, &self->dev, "hang 1"));
	t0 = frac_mono_ns();
	v1 = victim_job(_metadata, self, &self->dev, &self->victim, hq, 0, 0);
	v2 = victim_job(_metadata, self, &other, &ovictim, hq, 1, 0);
	v3 = victim_job(_metadata, self, &self->dev, &self->victim, hq, 2, 0);
	load_start(_metadata, self, 1u << hq);

	ASSERT_EQ(0, frac_wait(&self->dev, v1, self->wait_ns, &r1));
	ms = (frac_mono_ns() - t0) / 1000000;
	ASSERT_EQ(0, frac_wait(&other, v2, self->wait_ns, &r2));
	ASSERT_EQ(0, frac_wait(&self->dev, v3, self->wait_ns, &r3));
	EXPECT_EQ(-ETIMEDOUT, r1.status);
	EXPECT_EQ(-ECANCELED, r2.status) TH_LOG("another file's job behind the hung one");
	EXPECT_EQ(-ECANCELED, r3.status);
	EXPECT_GE(ms, (int64_t)self->timeout_ms * 9 / 10) TH_LOG("timed out after %lld ms",
								 (long long)ms);
	EXPECT_TRUE(victim_untouched(&self->victim, 0));
	load_check(_metadata, self);

	counters_read(&self->dev, &after);
	EXPECT_EQ(before.timeouts + 1, after.timeouts);
	EXPECT_EQ(before.qresets + 1, after.qresets);
	EXPECT_EQ(before.dresets, after.dresets);
	/*
	 * All three: v3 writes v1's BO, but a job never waits for a hardware
	 * fence of its own queue (the ring runs in order: frac_job_add_dep()).
	 */
	expect_direct(_metadata, &self->dev, hq, direct0, 3);
	all_queues_work(_metadata, self);
	frac_bo_destroy(&other, &ovictim);
	frac_close(&other);
}

/*
 * A direct job that hangs takes the blame, not a job run_job wrote behind it.
 * This thread, SCHED_FIFO on CPU 0, submits a LOW job, which goes direct
 * (direct_submit on for the test), and stops the queue's submission (debugfs
 * sched_pause); the test checks that the job still holds its direct credits
 * (it is on the ring). Then another file's NORMAL job on the same queue, and
 * the queue restarts: run_job writes the NORMAL job behind the hung one, and
 * whichever times out first, drm_sched's timeout of the NORMAL job or the
 * direct-job watchdog, must blame the oldest job on the ring. The hung direct
 * job must end -ETIMEDOUT, the NORMAL job behind it -ECANCELED; one queue
 * reset, one timeout.
 */
TEST_F_TIMEOUT(fault, direct_hang_blamed_not_the_job_behind, 120)
{
	const uint32_t hq = 1;
	struct frac_submit_opts low = { .priority = DRM_FRAC_PRIO_LOW };
	struct frac_submit_opts normal = { .priority = DRM_FRAC_PRIO_NORMAL };
	struct sched_param fifo = { .sched_priority = 1 }, other = { 0 };
	struct counters before, after;
	struct frac_job_result r1, r2;
	struct frac_cmdlist c1, c2;
	struct frac_dev f2;
	struct frac_bo v2;
	uint64_t direct0, in_ring = 0, credits = ~0ull;
	uint32_t id1, id2;
	cpu_set_t cpus;
	int was = frac_t_modparam_bool("direct_submit"), ret;

	if (was < 0)
		SKIP(return, "frac.ko has no direct_submit parameter");
	if (access("/sys/kernel/debug/accel", F_OK))
		SKIP(return, "no debugfs");
	ASSERT_EQ(0, frac_open(self->dev.index, &f2));
	ASSERT_EQ(0, frac_t_bo(&f2, SLICE * 8, 0, &v2));
	memset(self->victim.map, FRAC_POISON, SLICE);
	frac_cmdlist_init(&c1);
	ASSERT_EQ(0, frac_cmd_fill(&c1, &self->victim, 0, SLICE, 0x10101010u));
	frac_cmdlist_init(&c2);
	ASSERT_EQ(0, frac_cmd_fill(&c2, &v2, SLICE, SLICE, 0x20202020u));
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));
	ASSERT_EQ(0, frac_t_write_str("/sys/module/frac/parameters/direct_submit", "1"));
	counters_read(&self->dev, &before);
	direct0 = frac_t_counter(&self->dev, "jobs_direct");
	ASSERT_EQ(0, inject(_metadata, &self->dev, "hang 1"));

	ASSERT_EQ(0, sched_setscheduler(0, SCHED_FIFO, &fifo));
	id1 = 0;
	id2 = 0;
	EXPECT_EQ(0, frac_submit(&self->dev, hq, &c1, &low, &id1));
	/* Held from here: run_job writes nothing until the queue restarts. */
	ret = sched_pause(&self->dev, hq, 1);
	sched_setscheduler(0, SCHED_OTHER, &other);
	EXPECT_EQ(0, frac_t_direct_ring_state(&self->dev, hq, &in_ring, &credits));
	EXPECT_EQ(0, frac_submit(&f2, hq, &c2, &normal, &id2));
	EXPECT_EQ(0, sched_pause(&self->dev, hq, 0));
	frac_t_write_str("/sys/module/frac/parameters/direct_submit", was ? "1" : "0");
	ASSERT_EQ(0, ret) TH_LOG("sched_pause: %s", strerror(-ret));
	ASSERT_NE(0u, id1);
	ASSERT_NE(0u, id2);
	EXPECT_EQ(1ull, credits) TH_LOG("the LOW job was off the ring before the NORMAL one "
					"was submitted: the test proves nothing");

	ASSERT_EQ(0, frac_wait(&self->dev, id1, self->wait_ns, &r1));
	ASSERT_EQ(0, frac_wait(&f2, id2, self->wait_ns, &r2));
	EXPECT_EQ(direct0 + 1, frac_t_counter(&self->dev, "jobs_direct"))
		TH_LOG("the LOW job did not go direct (or the NORMAL one did): proves nothing");
	EXPECT_EQ(-ETIMEDOUT, r1.status) TH_LOG("the hung direct job");
	EXPECT_EQ(-ECANCELED, r2.status) TH_LOG("the job run_job wrote behind it");
	EXPECT_TRUE(victim_untouched(&self->victim, 0));
	counters_read(&self->dev, &after);
	EXPECT_EQ(before.timeouts + 1, after.timeouts);
	EXPECT_EQ(before.qresets + 1, after.qresets);
	frac_bo_destroy(&f2, &v2);
	frac_close(&f2);
	all_queues_work(_metadata, self);
}

/*
 * A direct job that hangs, whose file is killed, with no job behind it on
 * the ring: drm_sched never has it, and nothing but the direct-job watchdog
 * ends it. Its fence (taken from the child as a sync_file) must still
 * signal, -ETIMEDOUT, with one timeout and one queue reset counted.
 *
 * The child submits at SCHED_FIFO on CPU 1 and spins; this process then
 * stops the queue's submission (debugfs sched_pause) and kills the child.
 * The test checks that the job was still on the ring after the close (its
 * direct credits held), else it proves nothing and fails saying so. The
 * watchdog's recovery restarts submission.
 */
TEST_F_TIMEOUT(fault, killed_file_hung_direct_job_ends, 120)
{
	const uint32_t hq = 1;
	struct counters before, after;
	uint64_t direct0, in_ring = 0, credits = ~0ull;
	struct sync_file_info sfi;
	struct pollfd pf;
	int was, pfd[2], fence_fd, st, ret;
	uint64_t msg[2];
	int64_t t0;
	pid_t pid;

	was = frac_t_modparam_bool("direct_submit");
	if (was < 0)
		SKIP(return, "frac.ko has no direct_submit parameter");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	if (access("/sys/kernel/debug/accel", F_OK))
		SKIP(return, "no debugfs");
	ASSERT_EQ(0, frac_t_write_str("/sys/module/frac/parameters/direct_submit", "1"));
	counters_read(&self->dev, &before);
	direct0 = frac_t_counter(&self->dev, "jobs_direct");
	ASSERT_EQ(0, inject(_metadata, &self->dev, "hang 1"));

	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct frac_submit_opts opts = { .priority = DRM_FRAC_PRIO_NORMAL };
		struct sched_param sp = { .sched_priority = 1 };
		struct drm_syncobj_handle h = {
			.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE, .fd = -1,
		};
		struct frac_dev child = { .fd = -1 };
		struct frac_cmdlist cl;
		struct frac_bo bo = { 0 };
		uint32_t id;

		close(pfd[0]);
		ret = frac_t_child_setup();
		if (ret)
			_exit(ret);
		if (frac_open(self->dev.index, &child) || frac_t_bo(&child, SLICE, 0, &bo) ||
		    frac_t_syncobj_create(child.fd, &opts.out_syncobj))
			_exit(1);
		frac_cmdlist_init(&cl);
		if (frac_cmd_fill(&cl, &bo, 0, SLICE, 0x30303030u))
			_exit(2);
		/* From the SUBMIT on, the run_job work item queued on CPU 1 waits. */
		if (sched_setscheduler(0, SCHED_FIFO, &sp))
			_exit(5);
		if (frac_submit(&child, hq, &cl, &opts, &id))
			_exit(2);
		h.handle = opts.out_syncobj;
		if (frac_t_ioctl(child.fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h))
			_exit(7);
		msg[0] = (uint64_t)h.fd;
		msg[1] = id;
		if (write(pfd[1], msg, sizeof(msg)) != sizeof(msg))
			_exit(3);
		for (;;)
			;
	}
	close(pfd[1]);
	ret = read(pfd[0], msg, sizeof(msg));
	close(pfd[0]);
	if (ret != sizeof(msg)) {
		waitpid(pid, &st, 0);
		ASSERT_TRUE(0) TH_LOG("the child could not submit: exit %d", WEXITSTATUS(st));
	}
	ret = sched_pause(&self->dev, hq, 1);
	fence_fd = frac_t_pidfd_getfd(pid, (int)msg[0]);
	t0 = frac_mono_ns();
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	/* At once: the watchdog ends the job a job timeout after the close. */
	st = frac_t_direct_ring_state(&self->dev, hq, &in_ring, &credits);
	frac_t_write_str("/sys/module/frac/parameters/direct_submit", was ? "1" : "0");
	ASSERT_EQ(0, ret) TH_LOG("sched_pause: %s", strerror(-ret));
	ASSERT_LE(0, fence_fd) TH_LOG("pidfd_open/pidfd_getfd: %s", strerror(errno));
	TH_LOG("the child's file closed %lld ms after the kill",
	       (long long)(frac_mono_ns() - t0) / 1000000);
	EXPECT_EQ(direct0 + 1, frac_t_counter(&self->dev, "jobs_direct"))
		TH_LOG("the child's job did not go direct: proves nothing");
	EXPECT_EQ(0, st);
	EXPECT_EQ(1ull, credits) TH_LOG("the job had ended before its file closed: "
					"the test proves nothing");

	pf = (struct pollfd){ .fd = fence_fd, .events = POLLIN };
	ret = poll(&pf, 1, (int)(self->wait_ns / 1000000));
	/* Whatever happened, the queue runs again. */
	sched_pause(&self->dev, hq, 0);
	ASSERT_EQ(1, ret) TH_LOG("the killed file's hung direct job never ended");
	memset(&sfi, 0, sizeof(sfi));
	ASSERT_EQ(0, frac_t_ioctl(fence_fd, SYNC_IOC_FILE_INFO, &sfi));
	close(fence_fd);
	TH_LOG("its fence signalled %lld ms after the kill, status %d",
	       (long long)(frac_mono_ns() - t0) / 1000000, sfi.status);
	EXPECT_EQ(-ETIMEDOUT, sfi.status);
	counters_read(&self->dev, &after);
	EXPECT_EQ(before.timeouts + 1, after.timeouts);
	EXPECT_EQ(before.qresets + 1, after.qresets);
	all_queues_work(_metadata, self);
}

/*
 * fdinfo's drm-active-memory counts the BOs of jobs that have not ended: a
 * job on a hung queue holds its BO active until the timeout ends it, and then
 * nothing is active. The check is made only if the job was seen pending
 * after the fdinfo read (it cannot end before the timeout, but a descheduled
 * test could read later than that); the log says if it was not.
 */
TEST_F_TIMEOUT(fault, hung_job_bo_is_active, 120)
{
	const uint32_t hq = 1;
	struct frac_job_result r;
	struct frac_dev other;
	struct frac_bo bo;
	uint64_t active = 0, after = ~0ull, direct0;
	uint32_t id;
	int ret;

	ASSERT_EQ(0, frac_open(self->dev.index, &other));
	ASSERT_EQ(0, frac_t_bo(&other, SLICE * 8, 0, &bo));
	ASSERT_EQ(0, frac_t_fdinfo(other.fd, "drm-active-memory", &active));
	EXPECT_EQ(0ull, active) TH_LOG("active before any job");
	direct0 = frac_t_queue_counter(&self->dev, hq, "jobs_direct");
	ASSERT_EQ(0, inject(_metadata, &self->dev, "hang 1"));
	id = victim_job(_metadata, self, &other, &bo, hq, 0, 0);
	ASSERT_EQ(0, frac_t_fdinfo(other.fd, "drm-active-memory", &active));
	ret = frac_wait(&other, id, 0, &r);
	if (ret == -ETIME) {
		EXPECT_EQ(bo.size, active) TH_LOG("the hung job's BO in drm-active-memory");
		ASSERT_EQ(0, frac_wait(&other, id, self->wait_ns, &r));
	} else {
		TH_LOG("the job ended (%d, status %d) before the fdinfo read was checked: "
		       "drm-active-memory %llu not compared", ret, r.status,
		       (unsigned long long)active);
		EXPECT_EQ(0, ret);
	}
	EXPECT_EQ(-ETIMEDOUT, r.status);
	ASSERT_EQ(0, frac_t_fdinfo(other.fd, "drm-active-memory", &after));
	EXPECT_EQ(0ull, after) TH_LOG("active after the job ended");
	expect_direct(_metadata, &self->dev, hq, direct0, 1);
	frac_bo_destroy(&other, &bo);
	frac_close(&other);
	all_queues_work(_metadata, self);
}

/* tools/frac-coredump of this tree: we are tests/guest/driver/frac_fault_test. */
static const char *coredump_tool(void)
{
	static char path[PATH_MAX];
	ssize_t n;

	if (!path[0]) {
		n = readlink("/proc/self/exe", path, sizeof(path) - 64);
		if (n <= 0)
			return "frac-coredump";
		path[n] = 0;
		strcpy(strrchr(path, '/'), "/../../../tools/frac-coredump");
	}
	return path;
}

/* Free every pending FRAC devcoredump; the core keeps one per device. */
static void coredumps_dismiss(void)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "%s --dismiss", coredump_tool());
	if (system(cmd) != 0)
		fprintf(stderr, "# frac-coredump --dismiss failed\n");
}

/*
 * A hang leaves a devcoredump, taken before the reset, that names the hung
 * queue and job and holds the job's descriptor as the driver wrote it; the
 * decoder reads it back (tools/frac-coredump --json, parsed with python3).
 */
TEST_F_TIMEOUT(fault, hang_leaves_coredump, 120)
{
	const uint32_t hq = 2 % self->dev.num_queues;
	struct frac_job_result res;
	uint64_t dumps0, direct0;
	char cmd[PATH_MAX + 1024];
	uint32_t id;
	int ret;

	if (access("/sys/class/devcoredump", F_OK))
		SKIP(return, "kernel without CONFIG_DEV_COREDUMP");
	coredumps_dismiss();
	dumps0 = frac_t_counter(&self->dev, "coredumps");
	direct0 = frac_t_queue_counter(&self->dev, hq, "jobs_direct");
	ASSERT_EQ(0, inject(_metadata, &self->dev, hq == 2 ? "hang 2" : "hang 0"));
	id = victim_job(_metadata, self, &self->dev, &self->victim, hq, 3, 0);
	ASSERT_EQ(0, frac_wait(&self->dev, id, self->wait_ns, &res));
	EXPECT_EQ(-ETIMEDOUT, res.status);
	expect_direct(_metadata, &self->dev, hq, direct0, 1);
	/* The dump is taken before the reset and handed on by a work item. */
	for (int i = 0; i < 50 && frac_t_counter(&self->dev, "coredumps") == dumps0; i++)
		usleep(100000);
	EXPECT_EQ(dumps0 + 1, frac_t_counter(&self->dev, "coredumps"));

	/* The guilty job: its queue, its id, one FILL of SLICE bytes. */
	snprintf(cmd, sizeof(cmd),
		 "%s --json | python3 -c '"
		 "import json, sys; d = json.load(sys.stdin); g = d[\"guilty\"]; "
		 "c = g[\"descs\"]; "
		 "ok = (d[\"complete\"] and d[\"reason\"] == \"job-timeout\" and "
		 "g[\"queue\"] == %u and g[\"job\"] == %u and len(c) == 1 and "
		 "c[0][\"op\"] == \"fill\" and c[0][\"len\"] == %llu and "
		 "c[0][\"arg\"][0] == %u and "
		 "d[\"queues\"][\"%u\"][\"regs\"][\"STATUS\"] & 2); "
		 "print(\"# dump: queue\", g[\"queue\"], \"job\", g[\"job\"], c[0][\"op\"]); "
		 "sys.exit(0 if ok else 1)'",
		 coredump_tool(), hq, id, (unsigned long long)SLICE, 0x10101010u * 4, hq);
	ret = system(cmd);
	EXPECT_EQ(0, ret) TH_LOG("the dump does not name queue %u job %u (%s)", hq, id, cmd);
	coredumps_dismiss();
	all_queues_work(_metadata, self);
}

/*
 * hang with a backlog: ten jobs of DRM_FRAC_MAX_CMDS commands on the hung
 * queue, more than its ring takes, so the scheduler holds some back. The
 * first times out, the others on the ring are cancelled (-ECANCELED), and the ones
 * held back run after the reset, correctly: statuses -ETIMEDOUT, -ECANCELED..., 0...
 */
TEST_F_TIMEOUT(fault, hang_with_backlog, 120)
{
	const uint32_t njobs = 10, hq = 1, piece = 1024;
	struct frac_job_result res[10];
	struct counters before, after;
	struct frac_cmdlist cl;
	uint32_t ids[10], i, c, ncancelled = 0, nok = 0;
	struct frac_bo bo;
	uint64_t direct0;

	ASSERT_EQ(0, frac_t_bo(&self->dev, (uint64_t)njobs * DRM_FRAC_MAX_CMDS * piece, 0, &bo));
	memset(bo.map, 0, bo.size);
	counters_read(&self->dev, &before);
	direct0 = frac_t_queue_counter(&self->dev, hq, "jobs_direct");
	ASSERT_EQ(0, inject(_metadata, &self->dev, "hang 1"));
	for (i = 0; i < njobs; i++) {
		frac_cmdlist_init(&cl);
		for (c = 0; c < DRM_FRAC_MAX_CMDS; c++)
			ASSERT_EQ(0, frac_cmd_fill(&cl, &bo, ((uint64_t)i * DRM_FRAC_MAX_CMDS + c) *
						   piece, piece, 0x01010101u * (i + 1)));
		ASSERT_EQ(0, frac_submit(&self->dev, hq, &cl, NULL, &ids[i]));
	}
	load_start(_metadata, self, 1u << hq);
	for (i = 0; i < njobs; i++)
		ASSERT_EQ(0, frac_wait(&self->dev, ids[i], self->wait_ns, &res[i]));
	load_check(_metadata, self);

	EXPECT_EQ(-ETIMEDOUT, res[0].status);
	for (i = 1; i < njobs && res[i].status == -ECANCELED; i++)
		ncancelled++;
	for (; i < njobs; i++) {
		EXPECT_EQ(0, res[i].status) TH_LOG("job %u (after %u cancelled)", i, ncancelled);
		EXPECT_EQ(-1, frac_check_fill((uint8_t *)bo.map +
					      (uint64_t)i * DRM_FRAC_MAX_CMDS * piece,
					      (uint64_t)DRM_FRAC_MAX_CMDS * piece,
					      0x01010101u * (i + 1)))
			TH_LOG("job %u", i);
		nok++;
	}
	EXPECT_GT(nok, 0u) TH_LOG("no job was held back: the ring took %u jobs", njobs);
	counters_read(&self->dev, &after);
	EXPECT_EQ(before.timeouts + 1, after.timeouts);
	EXPECT_EQ(before.qresets + 1, after.qresets);
	/* The first: the direct credits hold one job of DRM_FRAC_MAX_CMDS commands. */
	expect_direct(_metadata, &self->dev, hq, direct0, 1);
	frac_bo_destroy(&self->dev, &bo);
	all_queues_work(_metadata, self);
}

/*
 * drop-irq: the queue's next three interrupts are lost. No job is: the
 * timeout handler finds each completion on the ring, without a reset.
 */
TEST_F_TIMEOUT(fault, drop_irq, 120)
{
	struct counters before, mid, after;
	struct frac_job_result res;
	uint32_t i, id;

	counters_read(&self->dev, &before);
	ASSERT_EQ(0, inject(_metadata, &self->dev, "drop-irq 0 3"));
	load_start(_metadata, self, 1u << 0);
	for (i = 0; i < 3; i++) {
		id = victim_job(_metadata, self, &self->dev, &self->victim, 0, i, 0);
		ASSERT_EQ(0, frac_wait(&self->dev, id, self->wait_ns, &res));
		EXPECT_EQ(0, res.status) TH_LOG("job %u with its interrupt dropped", i);
		EXPECT_TRUE(victim_filled(&self->victim, i)) TH_LOG("job %u", i);
	}
	load_check(_metadata, self);
	counters_read(&self->dev, &mid);
	EXPECT_EQ(before.lost + 3, mid.lost);
	EXPECT_EQ(before.timeouts, mid.timeouts);
	EXPECT_EQ(before.qresets, mid.qresets);

	/* The drops are used up: interrupts complete jobs again. */
	for (i = 3; i < 6; i++) {
		id = victim_job(_metadata, self, &self->dev, &self->victim, 0, i, 0);
		ASSERT_EQ(0, frac_wait(&self->dev, id, self->wait_ns, &res));
		EXPECT_EQ(0, res.status);
		EXPECT_TRUE(victim_filled(&self->victim, i));
	}
	counters_read(&self->dev, &after);
	EXPECT_EQ(mid.lost, after.lost);
	all_queues_work(_metadata, self);
}

/* How many times @needle occurs in the kernel log (klogctl: root). */
static int klog_count(const char *needle)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0), len, n = 0;
	char *buf, *p;

	if (size <= 0)
		return -1;
	buf = malloc(size + 1);
	if (!buf)
		return -1;
	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	if (len < 0) {
		free(buf);
		return -1;
	}
	buf[len] = 0;
	for (p = buf; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	free(buf);
	return n;
}

/*
 * Every interrupt of 64 jobs is lost: the timeout's scan finds them
 * completed, and says so in one kernel log line per scan, not one per job.
 */
TEST_F_TIMEOUT(fault, lost_interrupts_logged_once_per_scan, 120)
{
	const char *line = "completed without interrupt";
	struct counters before, after;
	struct frac_job_result res;
	struct frac_cmdlist cl;
	uint32_t ids[64], i;
	int log0, log1;

	log0 = klog_count(line);
	ASSERT_LE(0, log0);
	counters_read(&self->dev, &before);
	/* More drops than interrupts: the device coalesces them. */
	ASSERT_EQ(0, inject(_metadata, &self->dev, "drop-irq 0 1000"));
	frac_cmdlist_init(&cl);
	ASSERT_EQ(0, frac_cmd_nop(&cl));
	for (i = 0; i < 64; i++)
		ASSERT_EQ(0, frac_submit(&self->dev, 0, &cl, NULL, &ids[i]));
	for (i = 0; i < 64; i++) {
		ASSERT_EQ(0, frac_wait(&self->dev, ids[i], self->wait_ns, &res));
		EXPECT_EQ(0, res.status) TH_LOG("job %u", i);
	}
	counters_read(&self->dev, &after);
	EXPECT_EQ(before.lost + 64, after.lost);
	EXPECT_EQ(before.qresets, after.qresets);
	log1 = klog_count(line);
	EXPECT_LE(1, log1 - log0);
	EXPECT_GE(4, log1 - log0) TH_LOG("%d lines for 64 lost interrupts", log1 - log0);
	/* A queue reset disarms the drops left: a hung job's. */
	ASSERT_EQ(0, inject(_metadata, &self->dev, "hang 0"));
	ASSERT_EQ(0, frac_submit(&self->dev, 0, &cl, NULL, &ids[0]));
	ASSERT_EQ(0, frac_wait(&self->dev, ids[0], self->wait_ns, &res));
	EXPECT_EQ(-ETIMEDOUT, res.status);
	all_queues_work(_metadata, self);
}

/* sync_file status of a syncobj's fence: 1 signalled, 0 pending, or the error. */
static int syncobj_status(int fd, uint32_t syncobj)
{
	struct drm_syncobj_handle h = {
		.handle = syncobj,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
		.fd = -1,
	};
	struct sync_file_info info;
	int ret;

	ret = frac_t_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);
	if (ret)
		return ret;
	memset(&info, 0, sizeof(info));
	ret = frac_t_ioctl(h.fd, SYNC_IOC_FILE_INFO, &info);
	close(h.fd);
	return ret ? ret : info.status;
}

/*
 * error and dma: the queue's next job fails in the device (-EIO), the error
 * reaches the fence (syncobj, sync_file), and the job after it runs. A job
 * whose first command fails ends with -EIO although its last one succeeded.
 */
static void failed_job(struct __test_metadata *_metadata, FIXTURE_DATA(fault) *self,
		       const char *what, uint32_t fq, bool no_work)
{
	struct counters before, after;
	struct frac_job_result r1, r2, r3;
	uint32_t so, id1, id2, id3;
	uint64_t ff0 = 0, ff1 = 0;

	counters_read(&self->dev, &before);
	ASSERT_EQ(0, frac_t_fdinfo(self->dev.fd, "drm-frac-jobs-failed", &ff0));
	ASSERT_EQ(0, frac_t_syncobj_create(self->dev.fd, &so));
	ASSERT_EQ(0, inject(_metadata, &self->dev, what));
	load_start(_metadata, self, 1u << fq);
	id1 = victim_job(_metadata, self, &self->dev, &self->victim, fq, 0, so);
	id2 = victim_job(_metadata, self, &self->dev, &self->victim, fq, 1, 0);
	ASSERT_EQ(0, frac_wait(&self->dev, id1, self->wait_ns, &r1));
	ASSERT_EQ(0, frac_wait(&self->dev, id2, self->wait_ns, &r2));
	EXPECT_EQ(-EIO, r1.status) TH_LOG("%s", what);
	EXPECT_EQ(0, r2.status) TH_LOG("the job after the failed one");

	/*
	 * The fault hits the first command of a job whose last one succeeds.
	 * (Armed only now: arming sets the count of jobs to fail, it does not
	 * add to what the device has not fetched yet.)
	 */
	ASSERT_EQ(0, inject(_metadata, &self->dev, what));
	{
		struct frac_submit_opts opts = { .priority = DRM_FRAC_PRIO_NORMAL };
		struct frac_cmdlist cl;

		frac_cmdlist_init(&cl);
		ASSERT_EQ(0, frac_cmd_fill(&cl, &self->victim, 2 * SLICE, SLICE, 1));
		ASSERT_EQ(0, frac_cmd_fill(&cl, &self->victim, 3 * SLICE, SLICE, 2));
		ASSERT_EQ(0, frac_cmd_crc32c(&cl, &self->src, 0, 64, 0));
		ASSERT_EQ(0, frac_submit(&self->dev, fq, &cl, &opts, &id3));
	}
	ASSERT_EQ(0, frac_wait(&self->dev, id3, self->wait_ns, &r3));
	EXPECT_EQ(-EIO, r3.status) TH_LOG("a job whose first command failed");
	EXPECT_TRUE(victim_filled(&self->victim, 1));
	if (no_work)
		EXPECT_TRUE(victim_untouched(&self->victim, 0)) TH_LOG("an injected error did work");
	EXPECT_EQ(0, frac_t_syncobj_wait(self->dev.fd, so, 0));
	EXPECT_EQ(-EIO, syncobj_status(self->dev.fd, so)) TH_LOG("the fence lost the error");
	load_check(_metadata, self);

	counters_read(&self->dev, &after);
	EXPECT_EQ(before.failed + 2, after.failed);
	ASSERT_EQ(0, frac_t_fdinfo(self->dev.fd, "drm-frac-jobs-failed", &ff1));
	EXPECT_EQ(ff0 + 2, ff1) TH_LOG("the file's fdinfo drm-frac-jobs-failed");
	EXPECT_EQ(before.timeouts, after.timeouts);
	EXPECT_EQ(before.qresets, after.qresets);
	EXPECT_EQ(before.dresets, after.dresets);
	frac_t_syncobj_destroy(self->dev.fd, so);
	all_queues_work(_metadata, self);
}

TEST_F_TIMEOUT(fault, error, 120)
{
	char what[32];
	uint32_t q = 2 % self->dev.num_queues;

	snprintf(what, sizeof(what), "error %u 1", q);
	failed_job(_metadata, self, what, q, true);
}

TEST_F_TIMEOUT(fault, dma, 120)
{
	failed_job(_metadata, self, "dma 1 1", 1, false);
}

/*
 * fatal: the device stops on every queue. The driver resets it: every job in
 * flight ends with -EIO (each held in flight by injected latency, so none can
 * have finished), and the device works again. Each queue's job writes its own
 * BO: jobs writing one BO are ordered (implicit sync), and would not all be
 * in flight at once.
 */
TEST_F_TIMEOUT(fault, fatal, 120)
{
	struct counters before, after;
	struct frac_job_result res;
	uint32_t q, ids[16];
	char what[32];
	int64_t t0, ms;

	counters_read(&self->dev, &before);
	for (q = 0; q < self->dev.num_queues; q++) {
		snprintf(what, sizeof(what), "latency %u 10000", q);
		ASSERT_EQ(0, inject(_metadata, &self->dev, what));
	}
	t0 = frac_mono_ns();
	for (q = 0; q < self->dev.num_queues; q++)
		ids[q] = victim_job(_metadata, self, &self->dev, &self->qvictim[q], q, 0, 0);
	usleep(20000);
	ASSERT_EQ(0, inject(_metadata, &self->dev, "fatal"));
	for (q = 0; q < self->dev.num_queues; q++) {
		ASSERT_EQ(0, frac_wait(&self->dev, ids[q], self->wait_ns, &res));
		EXPECT_EQ(-EIO, res.status) TH_LOG("queue %u", q);
	}
	ms = (frac_mono_ns() - t0) / 1000000;
	EXPECT_LT(ms, 10000) TH_LOG("the jobs ran out their latency: no reset");

	counters_read(&self->dev, &after);
	EXPECT_EQ(before.dresets + 1, after.dresets);
	EXPECT_EQ(before.timeouts, after.timeouts);

	/* Everything works again, under load. */
	load_start(_metadata, self, 0);
	load_check(_metadata, self);
	all_queues_work(_metadata, self);
}

/*
 * Direct jobs one after another, each running 60% of the job timeout, none
 * of them hung: the direct-job watchdog, queued by the first and finding a
 * later one on the ring when it runs, must give that one a job timeout from
 * its own start, not recover the queue. Every job must
 * complete, with no timeout and no queue reset counted. Runs with the
 * direct_submit parameter on for the test.
 */
TEST_F_TIMEOUT(fault, direct_jobs_back_to_back_not_timed_out, 120)
{
	enum { N = 5 };
	struct counters before, after;
	struct frac_job_result res;
	uint64_t direct0, ms = self->timeout_ms * 6 / 10;
	char what[64];
	uint32_t id;
	int was = frac_t_modparam_bool("direct_submit"), i;

	if (was < 0)
		SKIP(return, "frac.ko has no direct_submit parameter");
	ASSERT_EQ(0, frac_t_write_str("/sys/module/frac/parameters/direct_submit", "1"));
	counters_read(&self->dev, &before);
	direct0 = frac_t_counter(&self->dev, "jobs_direct");
	snprintf(what, sizeof(what), "latency 0 %llu", (unsigned long long)ms);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, inject(_metadata, &self->dev, what));
		id = victim_job(_metadata, self, &self->dev, &self->victim, 0, i % 8, 0);
		ASSERT_EQ(0, frac_wait(&self->dev, id, self->wait_ns, &res));
		EXPECT_EQ(0, res.status) TH_LOG("job %d of %d: status %d", i + 1, N, res.status);
		EXPECT_GE(res.t_end - res.t_start, ms * 1000000ull) TH_LOG("latency not applied");
	}
	counters_read(&self->dev, &after);
	frac_t_write_str("/sys/module/frac/parameters/direct_submit", was ? "1" : "0");
	EXPECT_EQ(direct0 + N, frac_t_counter(&self->dev, "jobs_direct"))
		TH_LOG("not every job went direct: the test proves less");
	EXPECT_EQ(before.timeouts, after.timeouts);
	EXPECT_EQ(before.qresets, after.qresets);
	EXPECT_EQ(before.failed, after.failed);
}

/*
 * Jobs in flight behind long ones: two direct jobs on queue 0 (each waits
 * for nothing), each running 60% of the job timeout, and behind them a job
 * of DRM_FRAC_MAX_CMDS NOPs, which the direct credits the two hold cannot
 * take: run_job writes it at once, and drm_sched's timeout of it runs out
 * while the second direct job runs. Neither timeout may recover the queue:
 * each job at the ring's head gets a job timeout from its start (its ring
 * write, or the end of the job ahead), and drm_sched's, which does not see
 * direct jobs end, is handed back while the head has not had its own.
 * Every job must complete, with no timeout and no queue reset counted; the
 * two went direct, the NOPs did not. Direct submission on for the test.
 */
TEST_F_TIMEOUT(fault, jobs_behind_long_direct_jobs_not_timed_out, 120)
{
	struct counters before, after;
	struct frac_job_result res;
	uint64_t direct0, direct1, ms = self->timeout_ms * 6 / 10;
	struct frac_bo bo[2] = { 0 };
	struct frac_cmdlist cl;
	uint32_t id[3];
	char what[64];
	int was = frac_t_modparam_bool("direct_submit"), i;

	if (was < 0)
		SKIP(return, "frac.ko has no direct_submit parameter");
	/* A BO each: a job writing a BO the other writes would wait for it. */
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, frac_t_bo(&self->dev, SLICE, 0, &bo[i]));
	ASSERT_EQ(0, frac_t_write_str("/sys/module/frac/parameters/direct_submit", "1"));
	counters_read(&self->dev, &before);
	direct0 = frac_t_queue_counter(&self->dev, 0, "jobs_direct");
	snprintf(what, sizeof(what), "latency 0 %llu", (unsigned long long)ms);
	for (i = 0; i < 2; i++) {
		/*
		 * One injection each, each once the device has fetched the job
		 * before: on the debug kernel the second came before the first
		 * job's fetch, which took it, and the second job ran without.
		 */
		ASSERT_EQ(0, wait_fetched(&self->dev, 0)) TH_LOG("queue 0 not fetched in 10 s");
		ASSERT_EQ(0, inject(_metadata, &self->dev, what));
		id[i] = victim_job(_metadata, self, &self->dev, &bo[i], 0, 0, 0);
	}
	frac_cmdlist_init(&cl);
	for (i = 0; i < DRM_FRAC_MAX_CMDS; i++)
		ASSERT_EQ(0, frac_cmd_nop(&cl));
	ASSERT_EQ(0, frac_submit(&self->dev, 0, &cl, NULL, &id[2]));
	direct1 = frac_t_queue_counter(&self->dev, 0, "jobs_direct");
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, frac_wait(&self->dev, id[i], self->wait_ns, &res));
		EXPECT_EQ(0, res.status) TH_LOG("job %d of 3: status %d", i + 1, res.status);
		if (i < 2)
			EXPECT_GE(res.t_end - res.t_start, ms * 1000000ull)
				TH_LOG("latency not applied to job %d", i + 1);
	}
	counters_read(&self->dev, &after);
	frac_t_write_str("/sys/module/frac/parameters/direct_submit", was ? "1" : "0");
	EXPECT_EQ(direct0 + 2, direct1)
		TH_LOG("%llu of the 3 jobs went direct, 2 wanted: the test proves less",
		       (unsigned long long)(direct1 - direct0));
	EXPECT_EQ(before.timeouts, after.timeouts);
	EXPECT_EQ(before.qresets, after.qresets);
	EXPECT_EQ(before.failed, after.failed);
	for (i = 0; i < 2; i++) {
		EXPECT_TRUE(victim_filled(&bo[i], 0)) TH_LOG("job %d's data", i + 1);
		frac_bo_destroy(&self->dev, &bo[i]);
	}
}

/* latency: the next job takes 50 ms longer on the device clock; nothing else changes. */
TEST_F_TIMEOUT(fault, latency, 60)
{
	struct counters before, after;
	struct frac_job_result res;
	uint32_t id;

	counters_read(&self->dev, &before);
	ASSERT_EQ(0, inject(_metadata, &self->dev, "latency 0 50"));
	load_start(_metadata, self, 1u << 0);
	id = victim_job(_metadata, self, &self->dev, &self->victim, 0, 0, 0);
	ASSERT_EQ(0, frac_wait(&self->dev, id, self->wait_ns, &res));
	EXPECT_EQ(0, res.status);
	EXPECT_GE(res.t_end - res.t_start, 50000000ull);
	EXPECT_TRUE(victim_filled(&self->victim, 0));

	id = victim_job(_metadata, self, &self->dev, &self->victim, 0, 1, 0);
	ASSERT_EQ(0, frac_wait(&self->dev, id, self->wait_ns, &res));
	EXPECT_EQ(0, res.status);
	EXPECT_LT(res.t_end - res.t_start, 50000000ull) TH_LOG("latency applied twice");
	load_check(_metadata, self);

	counters_read(&self->dev, &after);
	EXPECT_EQ(before.timeouts, after.timeouts);
	EXPECT_EQ(before.qresets, after.qresets);
	EXPECT_EQ(before.failed, after.failed);
}

#define BIG_LEN		(16 * 1024 * 1024ull)	/* a copy the device takes milliseconds over */

/* @dst's @len bytes are @src's: the end first, which the device writes last. */
static bool copy_done(const struct frac_bo *dst, const struct frac_bo *src, uint64_t len)
{
	const uint64_t tail = 1024 * 1024;

	return !memcmp((uint8_t *)dst->map + len - tail, (uint8_t *)src->map + len - tail, tail) &&
	       !memcmp(dst->map, src->map, len);
}

/*
 * bad-id, bad-head, dup: the device writes a completion record that is not
 * the one of the job it stands for, and the driver must not end a job on
 * its word: the job it names, or the one its sq_head points at, may still
 * be running. On queue 1, idle, the fault is armed (@what), then one
 * SUBMIT_BATCH writes three jobs to the ring with one doorbell (direct
 * submission, on for the test): A, a small FILL whose record is the one the
 * fault bends (or, for dup, writes twice); B, a 16 MiB copy the device takes
 * milliseconds over; C, a FILL behind it. The driver must reset the queue at
 * the bad record, as after a hang but blaming no job: every job that ended
 * 0 has all its data (B's end checked first, before anything else), A ends
 * -ECANCELED unless its own record was true (dup: the copy after it is the
 * bad one), B and C, still on the ring, end -ECANCELED; bad_completions of
 * queue 1 and queue_resets move by one, job_timeouts, lost_interrupts and
 * device_resets by none, the other queues' load completes, and every queue
 * runs a verified job after.
 */
static void bad_record(struct __test_metadata *_metadata, FIXTURE_DATA(fault) *self,
		       const char *what, bool a_record_true)
{
	const uint32_t hq = 1;
	struct counters before, after;
	struct frac_job_result ra, rb, rc;
	struct frac_bo big_src, big_dst;
	struct frac_cmdlist cl[3];
	const struct frac_cmdlist *cls[3] = { &cl[0], &cl[1], &cl[2] };
	uint64_t bad0, bad1, direct0;
	uint32_t ids[3], i;

	ASSERT_EQ(0, frac_t_write_str("/sys/module/frac/parameters/direct_submit", "1"));
	ASSERT_EQ(0, frac_t_bo(&self->dev, BIG_LEN, 0, &big_src));
	ASSERT_EQ(0, frac_t_bo(&self->dev, BIG_LEN, 0, &big_dst));
	frac_fill_random(big_src.map, BIG_LEN, 7);
	memset(big_dst.map, FRAC_POISON, BIG_LEN);
	for (i = 0; i < 2; i++)
		memset((uint8_t *)self->victim.map + i * SLICE, FRAC_POISON, SLICE);
	for (i = 0; i < 3; i++)
		frac_cmdlist_init(&cl[i]);
	ASSERT_EQ(0, frac_cmd_fill(&cl[0], &self->victim, 0, SLICE, 0x10101010u));
	ASSERT_EQ(0, frac_cmd_copy(&cl[1], &big_dst, 0, &big_src, 0, BIG_LEN));
	ASSERT_EQ(0, frac_cmd_fill(&cl[2], &self->victim, SLICE, SLICE, 0x20202020u));
	/* The fault takes the next record the queue writes: none may be due. */
	ASSERT_EQ(0, wait_fetched(&self->dev, hq));
	counters_read(&self->dev, &before);
	bad0 = frac_t_queue_counter(&self->dev, hq, "bad_completions");
	EXPECT_NE(~0ull, bad0) TH_LOG("no frac_queues/%u/bad_completions", hq);
	direct0 = frac_t_queue_counter(&self->dev, hq, "jobs_direct");

	ASSERT_EQ(0, inject(_metadata, &self->dev, what));
	ASSERT_EQ(0, frac_submit_batch(&self->dev, hq, cls, 3, NULL, ids));
	load_start(_metadata, self, 1u << hq);

	ASSERT_EQ(0, frac_wait(&self->dev, ids[1], self->wait_ns, &rb));
	/* Before anything else: a copy ended early is still being written. */
	if (rb.status == 0)
		EXPECT_TRUE(copy_done(&big_dst, &big_src, BIG_LEN))
			TH_LOG("B ended 0 before the device wrote its data");
	EXPECT_EQ(-ECANCELED, rb.status) TH_LOG("B, the copy behind the bad record");
	ASSERT_EQ(0, frac_wait(&self->dev, ids[0], self->wait_ns, &ra));
	if (ra.status == 0)
		EXPECT_TRUE(victim_filled(&self->victim, 0)) TH_LOG("A ended 0 without its data");
	if (a_record_true) {
		EXPECT_EQ(0, ra.status) TH_LOG("A, whose own record was true");
	} else {
		EXPECT_EQ(-ECANCELED, ra.status) TH_LOG("A, the job of the bad record");
	}
	ASSERT_EQ(0, frac_wait(&self->dev, ids[2], self->wait_ns, &rc));
	if (rc.status == 0)
		EXPECT_TRUE(victim_filled(&self->victim, 1)) TH_LOG("C ended 0 without its data");
	EXPECT_EQ(-ECANCELED, rc.status) TH_LOG("C, behind B");
	load_check(_metadata, self);

	counters_read(&self->dev, &after);
	bad1 = frac_t_queue_counter(&self->dev, hq, "bad_completions");
	EXPECT_EQ(bad0 + 1, bad1) TH_LOG("frac_queues/%u/bad_completions", hq);
	EXPECT_EQ(before.qresets + 1, after.qresets);
	EXPECT_EQ(before.timeouts, after.timeouts) TH_LOG("a job timed out");
	EXPECT_EQ(before.lost, after.lost);
	EXPECT_EQ(before.dresets, after.dresets);
	EXPECT_EQ(direct0 + 3, frac_t_queue_counter(&self->dev, hq, "jobs_direct"))
		TH_LOG("the batch did not go to the ring at once");
	all_queues_work(_metadata, self);
	frac_bo_destroy(&self->dev, &big_src);
	frac_bo_destroy(&self->dev, &big_dst);
}

/* bad-id: A's record says job_id A + 1. */
TEST_F_TIMEOUT(fault, bad_record_id, 120)
{
	bad_record(_metadata, self, "bad-id 1", false);
}

/* bad-head: A's record says sq_head one ahead: B's slot. */
TEST_F_TIMEOUT(fault, bad_record_head, 120)
{
	bad_record(_metadata, self, "bad-head 1", false);
}

/* bad-head past any ring (4097: also one ahead once masked to the ring's size). */
TEST_F_TIMEOUT(fault, bad_record_head_out_of_ring, 120)
{
	bad_record(_metadata, self, "bad-head 1 4097", false);
}

/* dup: A's record, then the same record again in the next slot. */
TEST_F_TIMEOUT(fault, bad_record_dup, 120)
{
	bad_record(_metadata, self, "dup 1", true);
}

/* Several kinds at once, one per queue, while queue 0 carries the load. */
TEST_F_TIMEOUT(fault, mixed, 120)
{
	struct frac_job_result res;
	uint32_t id[4];

	if (self->dev.num_queues < 4)
		SKIP(return, "needs four queues");
	ASSERT_EQ(0, inject(_metadata, &self->dev, "hang 1"));
	ASSERT_EQ(0, inject(_metadata, &self->dev, "error 2 1"));
	ASSERT_EQ(0, inject(_metadata, &self->dev, "dma 3 1"));
	ASSERT_EQ(0, inject(_metadata, &self->dev, "drop-irq 0 1"));
	load_start(_metadata, self, 0xe);
	id[1] = victim_job(_metadata, self, &self->dev, &self->qvictim[1], 1, 1, 0);
	id[2] = victim_job(_metadata, self, &self->dev, &self->qvictim[2], 2, 2, 0);
	id[3] = victim_job(_metadata, self, &self->dev, &self->qvictim[3], 3, 3, 0);
	load_check(_metadata, self);
	ASSERT_EQ(0, frac_wait(&self->dev, id[1], self->wait_ns, &res));
	EXPECT_EQ(-ETIMEDOUT, res.status);
	ASSERT_EQ(0, frac_wait(&self->dev, id[2], self->wait_ns, &res));
	EXPECT_EQ(-EIO, res.status);
	ASSERT_EQ(0, frac_wait(&self->dev, id[3], self->wait_ns, &res));
	EXPECT_EQ(-EIO, res.status);
	all_queues_work(_metadata, self);
}

TEST_HARNESS_MAIN
