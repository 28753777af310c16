/* SPDX-License-Identifier: MIT */
/*
 * libfrac: a small C library over the frac accel uAPI.
 *
 * Every function returns 0 or a negative errno; nothing prints.
 */
#ifndef LIBFRAC_H
#define LIBFRAC_H

#include <stddef.h>
#include <stdint.h>

#include "frac_accel.h"

#ifdef __cplusplus
extern "C" {
#endif

struct frac_dev {
	int fd;
	int index;		/* N of /dev/accel/accelN */
	uint32_t num_queues;
	uint64_t devmem_size;
	uint64_t features;
	uint32_t gemm_max_dim;
};

struct frac_bo {
	uint32_t handle;
	uint32_t flags;		/* DRM_FRAC_BO_* */
	uint64_t size;
	uint64_t mmap_offset;
	void *map;		/* NULL until frac_bo_map() */
};

struct frac_cmdlist {
	uint32_t count;
	struct drm_frac_cmd cmds[DRM_FRAC_MAX_CMDS];
};

struct frac_submit_opts {
	uint32_t priority;	/* DRM_FRAC_PRIO_*, default NORMAL */
	uint32_t in_syncobj;
	uint32_t out_syncobj;
};

struct frac_job_result {
	int32_t status;		/* 0 or the negative errno the job ended with */
	uint64_t result;
	uint64_t t_start;	/* device clock, ns */
	uint64_t t_end;
};

/* Open /dev/accel/accel<index> if it is a frac device; index -1: the first one. */
int frac_open(int index, struct frac_dev *dev);
/* Open the frac device at a PCI address such as 0000:00:04.0. */
int frac_open_pci(const char *bdf, struct frac_dev *dev);
void frac_close(struct frac_dev *dev);

int frac_get_param(struct frac_dev *dev, uint32_t param, uint64_t *value);

int frac_bo_create(struct frac_dev *dev, uint64_t size, uint32_t flags, struct frac_bo *bo);
/* mmap() the whole BO read-write; the mapping is kept in bo->map. */
int frac_bo_map(struct frac_dev *dev, struct frac_bo *bo);
void frac_bo_destroy(struct frac_dev *dev, struct frac_bo *bo);

/* Command list builders: return -E2BIG when the list is full. */
void frac_cmdlist_init(struct frac_cmdlist *cl);
int frac_cmd_nop(struct frac_cmdlist *cl);
int frac_cmd_copy(struct frac_cmdlist *cl, const struct frac_bo *dst, uint64_t dst_off,
		  const struct frac_bo *src, uint64_t src_off, uint64_t len);
int frac_cmd_fill(struct frac_cmdlist *cl, const struct frac_bo *dst, uint64_t dst_off,
		  uint64_t len, uint32_t pattern);
int frac_cmd_crc32c(struct frac_cmdlist *cl, const struct frac_bo *src, uint64_t src_off,
		    uint64_t len, uint32_t seed);
int frac_cmd_gemm(struct frac_cmdlist *cl, uint32_t type, uint32_t m, uint32_t n, uint32_t k,
		  const struct frac_bo *a, uint64_t a_off, const struct frac_bo *b,
		  uint64_t b_off, const struct frac_bo *c, uint64_t c_off);
int frac_cmd_timestamp(struct frac_cmdlist *cl, const struct frac_bo *dst, uint64_t dst_off);

/* frac_submit()'s @queue: the queue whose interrupt is on this CPU (SUBMIT_LOCAL_QUEUE) */
#define FRAC_QUEUE_LOCAL	UINT32_MAX

/* Submit @cl to @queue; @opts may be NULL. The job id goes to @job_id. */
int frac_submit(struct frac_dev *dev, uint32_t queue, const struct frac_cmdlist *cl,
		const struct frac_submit_opts *opts, uint32_t *job_id);
/*
 * Submit @count command lists (1 .. DRM_FRAC_MAX_BATCH) to @queue in one
 * DRM_IOCTL_FRAC_SUBMIT_BATCH, with the same @opts (may be NULL): one ioctl,
 * and one doorbell write for the jobs that go to the ring at once. Their ids
 * go to @job_ids[0 .. @count - 1]. All or nothing: on error no job was
 * submitted and @job_ids is not written.
 */
int frac_submit_batch(struct frac_dev *dev, uint32_t queue, const struct frac_cmdlist *const *cls,
		      uint32_t count, const struct frac_submit_opts *opts, uint32_t *job_ids);
/* Wait up to @timeout_ns (negative: forever); -ETIME if it passes. */
int frac_wait(struct frac_dev *dev, uint32_t job_id, int64_t timeout_ns,
	      struct frac_job_result *res);
/* Submit and wait forever. */
int frac_run(struct frac_dev *dev, uint32_t queue, const struct frac_cmdlist *cl,
	     struct frac_job_result *res);

/* Ops are DRM_FRAC_OP_NOP .. DRM_FRAC_OP_TIMESTAMP (the uAPI header's). */
#define FRAC_NR_OPS	(DRM_FRAC_OP_TIMESTAMP + 1)
/* The name of @op ("nop", "copy", "fill", "crc32c", "gemm", "timestamp"); "unknown" if none. */
const char *frac_op_name(unsigned int op);
/* The op named @name, or -EINVAL. */
int frac_op_parse(const char *name);

/*
 * Host references of the device's commands, the one every test checks against.
 * CRC32C (Castagnoli) of @len bytes, chained by @seed like the device's.
 */
uint32_t frac_crc32c(uint32_t seed, const void *buf, size_t len);
/*
 * GEMM, row-major: C (MxN) = A (MxK) x B (KxN). fp32 in, accumulated in double in
 * k order into @c, with sum |a b| per element into @mag (the scale of its rounding
 * error: each test picks its own bound); @mag may be NULL.
 */
void frac_gemm_ref_f32(const float *a, const float *b, double *c, double *mag,
		       uint32_t m, uint32_t n, uint32_t k);
/* GEMM, int8 in, int32 out with wrapping accumulation, as the device's. */
void frac_gemm_ref_i8(const int8_t *a, const int8_t *b, int32_t *c,
		      uint32_t m, uint32_t n, uint32_t k);

#ifdef __cplusplus
}
#endif

#endif /* LIBFRAC_H */
