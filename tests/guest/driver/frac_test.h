/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the frac guest tests: opening the device (or skipping),
 * raw ioctls that return -errno, poisoning, host references for every
 * command, and the device's sysfs and debugfs files.
 *
 * The tests talk to the driver through the raw uAPI where the ioctl itself is
 * under test, and through libfrac where it is only the means.
 */
#ifndef FRAC_TEST_H
#define FRAC_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "libfrac.h"

#define FRAC_POISON		0xa5
#define FRAC_POISON32		0xa5a5a5a5u
#define FRAC_POISON64		0xa5a5a5a5a5a5a5a5ull
#define FRAC_PAGE		4096ull
#define FRAC_NSEC		1000000000ll
#define FRAC_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- Device ------------------------------------------------------------- */

/*
 * Open the first frac device into @dev, or SKIP the test when there is none
 * (no /dev/accel, no frac device, or the module is not loaded).
 */
#define FRAC_OPEN_OR_SKIP(dev) do {						\
	int __ret = frac_open(-1, (dev));					\
	if (__ret == -ENODEV || __ret == -ENOENT)				\
		SKIP(return, "no frac device: %s", strerror(-__ret));		\
	ASSERT_EQ(0, __ret) TH_LOG("frac_open: %s", strerror(-__ret));		\
} while (0)

/* ioctl() returning 0 or -errno; EINTR is retried like libfrac does. */
static inline int frac_t_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && errno == EINTR);
	return ret ? -errno : 0;
}

static inline void frac_poison(void *p, size_t len)
{
	memset(p, FRAC_POISON, len);
}

static inline int64_t frac_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * FRAC_NSEC + ts.tv_nsec;
}

static inline uint64_t frac_t_clock(struct frac_dev *dev)
{
	uint64_t v = 0;

	if (frac_get_param(dev, DRM_FRAC_PARAM_DEVICE_CLOCK, &v))
		return 0;
	return v;
}

/* SUBMIT with the raw struct; @job_id may be NULL. */
static inline int frac_t_submit(int fd, const struct drm_frac_cmd *cmds, uint32_t count,
				uint32_t queue, uint32_t in_syncobj, uint32_t out_syncobj,
				uint32_t *job_id)
{
	struct drm_frac_submit s = {
		.cmds = (uintptr_t)cmds,
		.cmd_count = count,
		.cmd_size = sizeof(struct drm_frac_cmd),
		.queue = queue,
		.priority = DRM_FRAC_PRIO_NORMAL,
		.in_syncobj = in_syncobj,
		.out_syncobj = out_syncobj,
		.job_id = FRAC_POISON32,
	};
	int ret = frac_t_ioctl(fd, DRM_IOCTL_FRAC_SUBMIT, &s);

	if (!ret && job_id)
		*job_id = s.job_id;
	return ret;
}

/* WAIT with the raw struct, outputs poisoned first. */
static inline int frac_t_wait(int fd, uint32_t job_id, int64_t timeout_ns,
			      struct drm_frac_wait *w)
{
	frac_poison(w, sizeof(*w));
	w->job_id = job_id;
	w->flags = 0;
	w->timeout_ns = timeout_ns;
	return frac_t_ioctl(fd, DRM_IOCTL_FRAC_WAIT, w);
}

static inline int frac_t_syncobj_create(int fd, uint32_t *handle)
{
	struct drm_syncobj_create c = { .flags = 0 };
	int ret = frac_t_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	*handle = c.handle;
	return ret;
}

static inline void frac_t_syncobj_destroy(int fd, uint32_t handle)
{
	struct drm_syncobj_destroy d = { .handle = handle };

	frac_t_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

/* DRM_IOCTL_SYNCOBJ_WAIT on one syncobj, @timeout_ns relative (converted to absolute). */
static inline int frac_t_syncobj_wait(int fd, uint32_t handle, int64_t timeout_ns)
{
	struct drm_syncobj_wait w = {
		.handles = (uintptr_t)&handle,
		.timeout_nsec = frac_mono_ns() + timeout_ns,
		.count_handles = 1,
	};

	return frac_t_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
}

/* ---- BOs ---------------------------------------------------------------- */

/* Create and map a BO; 0 or -errno. */
static inline int frac_t_bo(struct frac_dev *dev, uint64_t size, uint32_t flags,
			    struct frac_bo *bo)
{
	int ret = frac_bo_create(dev, size, flags, bo);

	if (!ret)
		ret = frac_bo_map(dev, bo);
	return ret;
}

static inline const char *frac_t_placement(uint32_t flags)
{
	return flags & DRM_FRAC_BO_DEVMEM ? "devmem" : "host";
}

/*
 * Copy in and out of a BO mapping. Device memory is mapped write-combined
 * from a BAR: plain byte copies work, but keep them to memcpy.
 */
static inline void frac_t_write(struct frac_bo *bo, uint64_t off, const void *src, size_t len)
{
	memcpy((char *)bo->map + off, src, len);
	__sync_synchronize();
}

static inline void frac_t_read(const struct frac_bo *bo, uint64_t off, void *dst, size_t len)
{
	__sync_synchronize();
	memcpy(dst, (const char *)bo->map + off, len);
}

/* ---- Random data and host references ----------------------------------- */

static inline uint64_t frac_rng(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

static inline void frac_fill_random(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	uint64_t s = seed | 1;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v = frac_rng(&s);

		memcpy(p + i, &v, 8);
	}
	for (; i < len; i++)
		p[i] = (uint8_t)frac_rng(&s);
}

/* Byte @i of a FILL of @pattern (le32 repeated from the start of the range). */
static inline uint8_t frac_fill_byte(uint32_t pattern, uint64_t i)
{
	return (uint8_t)(pattern >> (8 * (i % 4)));
}

/* Index of the first byte of a FILL range that is wrong, or -1. */
static inline long frac_check_fill(const uint8_t *p, uint64_t len, uint32_t pattern)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i] != frac_fill_byte(pattern, i))
			return (long)i;
	return -1;
}

/* Index of the first byte that differs, or -1. */
static inline long frac_first_diff(const void *a, const void *b, size_t len)
{
	const uint8_t *x = a, *y = b;
	size_t i;

	if (!memcmp(a, b, len))
		return -1;
	for (i = 0; i < len; i++)
		if (x[i] != y[i])
			return (long)i;
	return -1;
}

/* Index of the first byte that is not @v, or -1. */
static inline long frac_check_byte(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return (long)i;
	return -1;
}

/*
 * Index of the first fp32 result off the reference by more than the error
 * bound of any summation order, (k + 2) eps sum |a b|, or -1.
 */
static inline long frac_check_gemm_f32(const float *got, const double *ref, const double *mag,
				       uint32_t m, uint32_t n, uint32_t k)
{
	size_t i;

	for (i = 0; i < (size_t)m * n; i++) {
		double tol = (k + 2) * (double)FLT_EPSILON * mag[i] + 1e-30;

		if (!(fabs((double)got[i] - ref[i]) <= tol))
			return (long)i;
	}
	return -1;
}

/* ---- sysfs and debugfs --------------------------------------------------- */

/* PCI address of the device behind /dev/accel/accel<index>, e.g. 0000:01:00.0. */
static inline int frac_t_bdf(const struct frac_dev *dev, char *bdf, size_t len)
{
	char path[128], link[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device", dev->index);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	if (strlen(base) >= len)
		return -ENAMETOOLONG;
	memcpy(bdf, base, strlen(base) + 1);
	return 0;
}

static inline int frac_t_read_u64(const char *path, uint64_t *v)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	*v = strtoull(buf, NULL, 0);
	return 0;
}

static inline int frac_t_write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	if (n < 0)
		return -errno;
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

/* A counter of /sys/bus/pci/devices/<bdf>/frac/; ~0 when unreadable. */
static inline uint64_t frac_t_counter(const struct frac_dev *dev, const char *name)
{
	char path[256];
	uint64_t v = ~0ull;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/frac/%s", dev->index,
		 name);
	if (frac_t_read_u64(path, &v))
		return ~0ull;
	return v;
}

/* A counter of /sys/class/accel/accel<N>/device/frac_queues/<q>/; ~0 when unreadable. */
static inline uint64_t frac_t_queue_counter(const struct frac_dev *dev, uint32_t q,
					    const char *name)
{
	char path[256];
	uint64_t v = ~0ull;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/frac_queues/%u/%s",
		 dev->index, q, name);
	return frac_t_read_u64(path, &v) ? ~0ull : v;
}

/* Write "<kind> [queue [arg]]" to debugfs accel/<bdf>/inject_fault. */
static inline int frac_t_inject(const struct frac_dev *dev, const char *what)
{
	char bdf[64], path[256];
	int ret = frac_t_bdf(dev, bdf, sizeof(bdf));

	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/inject_fault", bdf);
	return frac_t_write_str(path, what);
}

/* A module parameter of frac; @def when unreadable. */
static inline uint64_t frac_t_modparam(const char *name, uint64_t def)
{
	char path[128];
	uint64_t v = def;

	snprintf(path, sizeof(path), "/sys/module/frac/parameters/%s", name);
	return frac_t_read_u64(path, &v) ? def : v;
}

/*
 * From debugfs accel/<bdf>/queues, queue @q's jobs_in_ring and direct_credits;
 * -errno when unreadable.
 */
static inline int frac_t_direct_ring_state(const struct frac_dev *dev, uint32_t q, uint64_t *in_ring,
					   uint64_t *credits)
{
	char bdf[64], path[256], line[512];
	unsigned int qn, sz, tail, head, phase;
	unsigned long long ring, v;
	int cur = -1, ret = frac_t_bdf(dev, bdf, sizeof(bdf));
	FILE *f;

	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/queues", bdf);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ret = -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		const char *dc = strstr(line, " direct_credits ");

		if (sscanf(line, "queue %u: size %u sq_tail %u cq_head %u phase %u jobs_in_ring %llu",
			   &qn, &sz, &tail, &head, &phase, &ring) == 6) {
			cur = qn;
			if (cur == (int)q)
				*in_ring = ring;
		} else if (cur == (int)q && dc && sscanf(dc, " direct_credits %llu", &v) == 1) {
			*credits = v;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* A bool parameter of frac.ko: 1 (Y), 0 (N), -1 when there is none. */
static inline int frac_t_modparam_bool(const char *name)
{
	char path[128], c = 0;
	int fd;

	snprintf(path, sizeof(path), "/sys/module/frac/parameters/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == 'Y' ? 1 : c == 'N' ? 0 : -1;
}

/*
 * The value of @key in the fdinfo of @fd, with a KiB/MiB/GiB unit converted
 * to bytes (drm-usage-stats.rst); 0, -ENOENT when the key is absent, -errno.
 */
static inline int frac_t_fdinfo(int fd, const char *key, uint64_t *v)
{
	char path[64], line[256], unit[8];
	size_t klen = strlen(key);
	unsigned long long n;
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		unit[0] = '\0';
		if (sscanf(line + klen + 1, "%llu %7s", &n, unit) < 1) {
			ret = -EINVAL;
			break;
		}
		if (!strcmp(unit, "KiB"))
			n <<= 10;
		else if (!strcmp(unit, "MiB"))
			n <<= 20;
		else if (!strcmp(unit, "GiB"))
			n <<= 30;
		*v = n;
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/*
 * In a test's forked child: die with the parent (an ASSERT there ends the
 * test, and the child must not be left spinning) and run on CPU 1 alone.
 * 0, or the status the child should _exit() with: 6 if it cannot die with
 * the parent (or the parent is already gone), 4 if it cannot be pinned.
 */
static inline int frac_t_child_setup(void)
{
	cpu_set_t cpus;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
		return 6;
	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		return 4;
	return 0;
}

/* Process @pid's file descriptor @fd, duplicated here: a new fd, or -1 (errno). */
static inline int frac_t_pidfd_getfd(pid_t pid, int fd)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), ret, err;

	if (pidfd < 0)
		return -1;
	ret = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	err = errno;
	close(pidfd);
	errno = err;
	return ret;
}

/* drivers/pci/pcie/aer_inject.c */
struct aer_error_inj {
	uint8_t bus, dev, fn;
	uint32_t uncor_status, cor_status;
	uint32_t header_log0, header_log1, header_log2, header_log3;
	uint32_t domain;
};

#define PCI_ERR_UNC_MALF_TLP	0x00040000

/*
 * A fatal (frozen-channel) AER error on the device at @bdf, through
 * aer_inject (the module loaded); -errno on failure.
 */
static inline int frac_t_aer_inject_fatal(const char *bdf)
{
	struct aer_error_inj e = { .uncor_status = PCI_ERR_UNC_MALF_TLP };
	unsigned int dom, bus, dev, fn;
	ssize_t n;
	int fd;

	if (sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return -EINVAL;
	e.domain = dom;
	e.bus = bus;
	e.dev = dev;
	e.fn = fn;
	fd = open("/dev/aer_inject", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, &e, sizeof(e));
	close(fd);
	return n == (ssize_t)sizeof(e) ? 0 : -errno;
}

#endif /* FRAC_TEST_H */
