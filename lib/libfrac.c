// SPDX-License-Identifier: MIT
/*
 * libfrac: a small C library over the frac accel uAPI.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libfrac.h"

static int frac_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret ? -errno : 0;
}

static int frac_is_ours(int fd)
{
	struct drm_version v;
	char name[16] = "";

	memset(&v, 0, sizeof(v));
	v.name = name;
	v.name_len = sizeof(name) - 1;
	if (frac_ioctl(fd, DRM_IOCTL_VERSION, &v))
		return 0;
	return !strcmp(name, "frac");
}

static int frac_init_dev(struct frac_dev *dev, int fd, int index)
{
	uint64_t v;
	int ret;

	memset(dev, 0, sizeof(*dev));
	dev->fd = fd;
	dev->index = index;
	ret = frac_get_param(dev, DRM_FRAC_PARAM_NUM_QUEUES, &v);
	if (ret)
		return ret;
	dev->num_queues = v;
	ret = frac_get_param(dev, DRM_FRAC_PARAM_DEVMEM_SIZE, &dev->devmem_size);
	if (!ret)
		ret = frac_get_param(dev, DRM_FRAC_PARAM_FEATURES, &dev->features);
	if (!ret)
		ret = frac_get_param(dev, DRM_FRAC_PARAM_GEMM_MAX_DIM, &v);
	dev->gemm_max_dim = v;
	return ret;
}

static int frac_open_path(const char *path, int index, struct frac_dev *dev)
{
	int fd, ret;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!frac_is_ours(fd)) {
		close(fd);
		return -ENODEV;
	}
	ret = frac_init_dev(dev, fd, index);
	if (ret)
		close(fd);
	return ret;
}

int frac_open(int index, struct frac_dev *dev)
{
	char path[64];
	int i, ret = -ENODEV;

	if (index >= 0) {
		snprintf(path, sizeof(path), "/dev/accel/accel%d", index);
		return frac_open_path(path, index, dev);
	}
	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), "/dev/accel/accel%d", i);
		ret = frac_open_path(path, i, dev);
		if (!ret || (ret != -ENODEV && ret != -ENOENT))
			return ret;
	}
	return -ENODEV;
}

int frac_open_pci(const char *bdf, struct frac_dev *dev)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int index = -1;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/accel", bdf);
	d = opendir(path);
	if (!d)
		return -ENODEV;
	while ((de = readdir(d)))
		if (sscanf(de->d_name, "accel%d", &index) == 1)
			break;
	closedir(d);
	if (index < 0)
		return -ENODEV;
	return frac_open(index, dev);
}

void frac_close(struct frac_dev *dev)
{
	if (dev->fd >= 0)
		close(dev->fd);
	dev->fd = -1;
}

int frac_get_param(struct frac_dev *dev, uint32_t param, uint64_t *value)
{
	struct drm_frac_get_param p = { .param = param };
	int ret = frac_ioctl(dev->fd, DRM_IOCTL_FRAC_GET_PARAM, &p);

	if (!ret)
		*value = p.value;
	return ret;
}

int frac_bo_create(struct frac_dev *dev, uint64_t size, uint32_t flags, struct frac_bo *bo)
{
	struct drm_frac_bo_create c = { .size = size, .flags = flags };
	struct drm_frac_bo_info info = { 0 };
	int ret;

	memset(bo, 0, sizeof(*bo));
	ret = frac_ioctl(dev->fd, DRM_IOCTL_FRAC_BO_CREATE, &c);
	if (ret)
		return ret;
	info.handle = c.handle;
	ret = frac_ioctl(dev->fd, DRM_IOCTL_FRAC_BO_INFO, &info);
	if (ret) {
		struct drm_gem_close cl = { .handle = c.handle };

		frac_ioctl(dev->fd, DRM_IOCTL_GEM_CLOSE, &cl);
		return ret;
	}
	bo->handle = c.handle;
	bo->flags = info.flags;
	bo->size = info.size;
	bo->mmap_offset = info.mmap_offset;
	return 0;
}

int frac_bo_map(struct frac_dev *dev, struct frac_bo *bo)
{
	void *p;

	if (bo->map)
		return 0;
	p = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd,
		 bo->mmap_offset);
	if (p == MAP_FAILED)
		return -errno;
	bo->map = p;
	return 0;
}

void frac_bo_destroy(struct frac_dev *dev, struct frac_bo *bo)
{
	struct drm_gem_close cl = { .handle = bo->handle };

	if (bo->map)
		munmap(bo->map, bo->size);
	if (bo->handle)
		frac_ioctl(dev->fd, DRM_IOCTL_GEM_CLOSE, &cl);
	memset(bo, 0, sizeof(*bo));
}

void frac_cmdlist_init(struct frac_cmdlist *cl)
{
	cl->count = 0;
}

static struct drm_frac_cmd *frac_cmd_add(struct frac_cmdlist *cl, uint32_t op)
{
	struct drm_frac_cmd *c;

	if (cl->count >= DRM_FRAC_MAX_CMDS)
		return NULL;
	c = &cl->cmds[cl->count++];
	memset(c, 0, sizeof(*c));
	c->op = op;
	return c;
}

int frac_cmd_nop(struct frac_cmdlist *cl)
{
	return frac_cmd_add(cl, DRM_FRAC_OP_NOP) ? 0 : -E2BIG;
}

int frac_cmd_copy(struct frac_cmdlist *cl, const struct frac_bo *dst, uint64_t dst_off,
		  const struct frac_bo *src, uint64_t src_off, uint64_t len)
{
	struct drm_frac_cmd *c = frac_cmd_add(cl, DRM_FRAC_OP_COPY);

	if (!c)
		return -E2BIG;
	c->src_handle = src->handle;
	c->src_offset = src_off;
	c->dst_handle = dst->handle;
	c->dst_offset = dst_off;
	c->len = len;
	return 0;
}

int frac_cmd_fill(struct frac_cmdlist *cl, const struct frac_bo *dst, uint64_t dst_off,
		  uint64_t len, uint32_t pattern)
{
	struct drm_frac_cmd *c = frac_cmd_add(cl, DRM_FRAC_OP_FILL);

	if (!c)
		return -E2BIG;
	c->dst_handle = dst->handle;
	c->dst_offset = dst_off;
	c->len = len;
	c->arg[0] = pattern;
	return 0;
}

int frac_cmd_crc32c(struct frac_cmdlist *cl, const struct frac_bo *src, uint64_t src_off,
		    uint64_t len, uint32_t seed)
{
	struct drm_frac_cmd *c = frac_cmd_add(cl, DRM_FRAC_OP_CRC32C);

	if (!c)
		return -E2BIG;
	c->src_handle = src->handle;
	c->src_offset = src_off;
	c->len = len;
	c->arg[0] = seed;
	return 0;
}

int frac_cmd_gemm(struct frac_cmdlist *cl, uint32_t type, uint32_t m, uint32_t n, uint32_t k,
		  const struct frac_bo *a, uint64_t a_off, const struct frac_bo *b,
		  uint64_t b_off, const struct frac_bo *c_bo, uint64_t c_off)
{
	struct drm_frac_cmd *c = frac_cmd_add(cl, DRM_FRAC_OP_GEMM);

	if (!c)
		return -E2BIG;
	c->src_handle = a->handle;
	c->src_offset = a_off;
	c->aux_handle = b->handle;
	c->aux_offset = b_off;
	c->dst_handle = c_bo->handle;
	c->dst_offset = c_off;
	c->arg[0] = m;
	c->arg[1] = n;
	c->arg[2] = k;
	c->arg[3] = type;
	return 0;
}

int frac_cmd_timestamp(struct frac_cmdlist *cl, const struct frac_bo *dst, uint64_t dst_off)
{
	struct drm_frac_cmd *c = frac_cmd_add(cl, DRM_FRAC_OP_TIMESTAMP);

	if (!c)
		return -E2BIG;
	if (dst) {
		c->dst_handle = dst->handle;
		c->dst_offset = dst_off;
		c->len = 8;
	}
	return 0;
}

static void submit_args(struct drm_frac_submit *s, uint32_t queue, const struct frac_cmdlist *cl,
			const struct frac_submit_opts *opts)
{
	*s = (struct drm_frac_submit) {
		.cmds = (uintptr_t)cl->cmds,
		.cmd_count = cl->count,
		.cmd_size = sizeof(struct drm_frac_cmd),
		.queue = queue == FRAC_QUEUE_LOCAL ? 0 : queue,
		.flags = queue == FRAC_QUEUE_LOCAL ? DRM_FRAC_SUBMIT_LOCAL_QUEUE : 0,
		.priority = opts ? opts->priority : DRM_FRAC_PRIO_NORMAL,
		.in_syncobj = opts ? opts->in_syncobj : 0,
		.out_syncobj = opts ? opts->out_syncobj : 0,
	};
}

int frac_submit_batch(struct frac_dev *dev, uint32_t queue, const struct frac_cmdlist *const *cls,
		      uint32_t count, const struct frac_submit_opts *opts, uint32_t *job_ids)
{
	struct drm_frac_submit s[DRM_FRAC_MAX_BATCH];
	struct drm_frac_submit_batch b = {
		.jobs = (uintptr_t)s,
		.count = count,
		.job_size = sizeof(s[0]),
	};
	uint32_t i;
	int ret;

	if (!count || count > DRM_FRAC_MAX_BATCH)
		return -EINVAL;
	for (i = 0; i < count; i++)
		submit_args(&s[i], queue, cls[i], opts);
	ret = frac_ioctl(dev->fd, DRM_IOCTL_FRAC_SUBMIT_BATCH, &b);
	if (!ret && job_ids)
		for (i = 0; i < count; i++)
			job_ids[i] = s[i].job_id;
	return ret;
}

int frac_submit(struct frac_dev *dev, uint32_t queue, const struct frac_cmdlist *cl,
		const struct frac_submit_opts *opts, uint32_t *job_id)
{
	struct drm_frac_submit s;
	int ret;

	submit_args(&s, queue, cl, opts);
	ret = frac_ioctl(dev->fd, DRM_IOCTL_FRAC_SUBMIT, &s);

	if (!ret && job_id)
		*job_id = s.job_id;
	return ret;
}

int frac_wait(struct frac_dev *dev, uint32_t job_id, int64_t timeout_ns,
	      struct frac_job_result *res)
{
	struct drm_frac_wait w = { .job_id = job_id, .timeout_ns = timeout_ns };
	int ret = frac_ioctl(dev->fd, DRM_IOCTL_FRAC_WAIT, &w);

	if (!ret && res) {
		res->status = w.status;
		res->result = w.result;
		res->t_start = w.t_start;
		res->t_end = w.t_end;
	}
	return ret;
}

int frac_run(struct frac_dev *dev, uint32_t queue, const struct frac_cmdlist *cl,
	     struct frac_job_result *res)
{
	uint32_t id;
	int ret = frac_submit(dev, queue, cl, NULL, &id);

	return ret ? ret : frac_wait(dev, id, -1, res);
}

/* The one op-name table of user space: every tool prints and parses ops through it. */
static const char *const frac_op_names[] = {
	[DRM_FRAC_OP_NOP] = "nop",
	[DRM_FRAC_OP_COPY] = "copy",
	[DRM_FRAC_OP_FILL] = "fill",
	[DRM_FRAC_OP_CRC32C] = "crc32c",
	[DRM_FRAC_OP_GEMM] = "gemm",
	[DRM_FRAC_OP_TIMESTAMP] = "timestamp",
};
_Static_assert(sizeof(frac_op_names) / sizeof(frac_op_names[0]) == FRAC_NR_OPS,
	       "an op name for each DRM_FRAC_OP_*");

const char *frac_op_name(unsigned int op)
{
	return op < FRAC_NR_OPS && frac_op_names[op] ? frac_op_names[op] : "unknown";
}

int frac_op_parse(const char *name)
{
	for (unsigned int op = 0; op < FRAC_NR_OPS; op++)
		if (frac_op_names[op] && !strcmp(name, frac_op_names[op]))
			return op;
	return -EINVAL;
}

static uint32_t crc32c_table[256];
static int crc32c_ready;

static void frac_crc32c_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78 : c >> 1;
		crc32c_table[i] = c;
	}
	__atomic_store_n(&crc32c_ready, 1, __ATOMIC_RELEASE);
}

uint32_t frac_crc32c(uint32_t seed, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t crc = ~seed;

	/* Racing initialisations write the same values. */
	if (!__atomic_load_n(&crc32c_ready, __ATOMIC_ACQUIRE))
		frac_crc32c_init();
	while (len--)
		crc = crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

void frac_gemm_ref_f32(const float *a, const float *b, double *c, double *mag,
		       uint32_t m, uint32_t n, uint32_t k)
{
	for (uint32_t i = 0; i < m; i++)
		for (uint32_t j = 0; j < n; j++) {
			double s = 0, g = 0;

			for (uint32_t l = 0; l < k; l++) {
				double t = (double)a[(size_t)i * k + l] * b[(size_t)l * n + j];

				s += t;
				g += t < 0 ? -t : t;	/* fabs() without libm */
			}
			c[(size_t)i * n + j] = s;
			if (mag)
				mag[(size_t)i * n + j] = g;
		}
}

void frac_gemm_ref_i8(const int8_t *a, const int8_t *b, int32_t *c,
		      uint32_t m, uint32_t n, uint32_t k)
{
	for (uint32_t i = 0; i < m; i++)
		for (uint32_t j = 0; j < n; j++) {
			uint32_t s = 0;

			for (uint32_t l = 0; l < k; l++)
				s += (uint32_t)((int32_t)a[(size_t)i * k + l] * b[(size_t)l * n + j]);
			c[(size_t)i * n + j] = (int32_t)s;
		}
}
