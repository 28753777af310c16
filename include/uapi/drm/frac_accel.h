/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * Copyright (c) 2026 The frac authors
 */
#ifndef __UAPI_FRAC_ACCEL_H__
#define __UAPI_FRAC_ACCEL_H__

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DOC: frac accel uAPI
 *
 * The FRAC-1 accelerator is a DRM accel device, /dev/accel/accelN. A client
 * allocates buffer objects (BOs) in host memory or in the device's own memory,
 * maps them, and submits jobs: a job is a list of commands (copy, fill, CRC32C,
 * GEMM, timestamp) that run in order on one hardware queue. Commands name
 * memory only as (BO handle, offset) pairs; the driver checks every range
 * against the BO and builds the device descriptors itself, so a job can reach
 * nothing but the BOs it names.
 *
 * Each job gets a job id, unique within the file, and a fence. Completion is
 * awaited with DRM_IOCTL_FRAC_WAIT (by job id, with a timeout), with a DRM
 * syncobj given as out_syncobj, or with poll() on the file. A job that ends in
 * error reports a negative errno (WAIT's @status, the fence's error):
 *
 * - -EIO: the device reported an error for one of its commands, or the device
 *   failed as a whole (a fatal device error or a PCIe error) while the job
 *   was on it, or the device is wedged (a reset never completed);
 * - -ETIMEDOUT: the job itself exceeded the job timeout and its queue was
 *   reset (the guilty job);
 * - -ECANCELED: the job was innocent: cancelled by the reset of its queue or
 *   of the device after another job hung or after the device wrote a
 *   completion record the driver could not trust (sysfs bad_completions), or
 *   by a function level reset;
 * - -ENODEV: the device was removed;
 * - -ESRCH: the file was closed before the job ran (it never reached the
 *   device). A job SUBMIT wrote to the device itself (frac.ko's
 *   direct_submit parameter, on by default: see frac(4)) never ends -ESRCH:
 *   it ends when the device is done with it, its file closed or not.
 *
 * On a wedged device (a reset the device never confirmed: sysfs frac/wedged
 * reads 1) the jobs that were on it end with -EIO without the device having
 * confirmed it stopped: their BOs may still change, and are never reused.
 * A PCIe error recovery that fails wedges the device too. Either way the
 * queued jobs and every later one end with -EIO without reaching the device
 * (SUBMIT fails with -EIO), and the accel device sends a change uevent with
 * WEDGED=rebind: rebinding the driver brings the device back. A failed
 * recovery's wedge is also cleared by a later reset that works.
 *
 * Whatever way a job ends (but on a wedged device, above), the device has
 * stopped touching the job's BOs when its end is reported: the driver waits
 * for the device to confirm it quiesced before it ends a job a reset
 * cancelled.
 *
 * A new BO reads as zeros, host and device alike: device memory is cleared
 * before it is handed out, so a BO never shows another client's data.
 *
 * Jobs are ordered by the BOs they share (implicit sync, on the BOs'
 * reservation objects): a job that writes a BO runs after every earlier job
 * that reads or writes it, and a job that reads a BO runs after every earlier
 * job that writes it, whatever their queues. Jobs with no BO in common are
 * ordered only within one queue (and priority) of one file.
 *
 * Errors every ioctl can return: -EFAULT (the argument is not readable or
 * writable), -ENODEV (the device was removed), -ENOMEM. An ioctl that fails
 * changes nothing: no output field of the argument is written (SUBMIT and
 * SUBMIT_BATCH have one exception each, said there). The ioctls that can sleep for long
 * (SUBMIT, SUBMIT_BATCH, WAIT) may also be interrupted by a signal (-EINTR,
 * or restarted under SA_RESTART).
 *
 * Every structure is a multiple of 8 bytes with explicit padding. Reserved and
 * padding fields must be zero and unknown flags are rejected with -EINVAL, so
 * they can be given a meaning later; structures grow only at the end (the DRM
 * core zero-fills fields an older userspace does not pass).
 */

#define DRM_FRAC_GET_PARAM		0x00
#define DRM_FRAC_BO_CREATE		0x01
#define DRM_FRAC_BO_INFO		0x02
#define DRM_FRAC_SUBMIT			0x03
#define DRM_FRAC_WAIT			0x04
#define DRM_FRAC_SUBMIT_BATCH		0x05

#define DRM_IOCTL_FRAC_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_FRAC_GET_PARAM, struct drm_frac_get_param)
#define DRM_IOCTL_FRAC_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_FRAC_BO_CREATE, struct drm_frac_bo_create)
#define DRM_IOCTL_FRAC_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_FRAC_BO_INFO, struct drm_frac_bo_info)
#define DRM_IOCTL_FRAC_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_FRAC_SUBMIT, struct drm_frac_submit)
#define DRM_IOCTL_FRAC_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_FRAC_WAIT, struct drm_frac_wait)
#define DRM_IOCTL_FRAC_SUBMIT_BATCH \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_FRAC_SUBMIT_BATCH, struct drm_frac_submit_batch)

/* Parameters of DRM_IOCTL_FRAC_GET_PARAM */
#define DRM_FRAC_PARAM_DEVICE_ID	0	/* PCI vendor << 16 | device */
#define DRM_FRAC_PARAM_HW_VERSION	1	/* major << 16 | minor */
#define DRM_FRAC_PARAM_NUM_QUEUES	2
#define DRM_FRAC_PARAM_DEVMEM_SIZE	3	/* bytes of device memory */
#define DRM_FRAC_PARAM_FEATURES		4	/* DRM_FRAC_FEAT_* */
#define DRM_FRAC_PARAM_GEMM_MAX_DIM	5
#define DRM_FRAC_PARAM_MAX_CMDS		6	/* commands per job */
#define DRM_FRAC_PARAM_DEVICE_CLOCK	7	/* device clock now, ns */
#define DRM_FRAC_PARAM_CLOCK_OFFSET	8	/* CLOCK_MONOTONIC ns - device ns */

#define DRM_FRAC_FEAT_GEMM_FP32		(1 << 0)
#define DRM_FRAC_FEAT_GEMM_INT8		(1 << 1)
#define DRM_FRAC_FEAT_CRC32C		(1 << 2)
#define DRM_FRAC_FEAT_DEVMEM		(1 << 4)
#define DRM_FRAC_FEAT_FAULT_INJ		(1 << 5)
#define DRM_FRAC_FEAT_TIMESTAMP		(1 << 6)

/**
 * struct drm_frac_get_param - query a device parameter
 *
 * Errors: -EINVAL (unknown @param, or @pad not zero).
 */
struct drm_frac_get_param {
	/** @param: in, DRM_FRAC_PARAM_* */
	__u32 param;
	/** @pad: must be zero */
	__u32 pad;
	/** @value: out, the parameter's value */
	__u64 value;
};

/* BO placement */
#define DRM_FRAC_BO_DEVMEM		(1 << 0)	/* in device memory (BAR2) */
/*
 * The DMA direction of a host BO on this device: the device only reads it
 * (TO_DEVICE: a job's inputs) or only writes it (FROM_DEVICE: its results);
 * neither flag: both (the default). SUBMIT refuses a command that would read
 * a FROM_DEVICE BO (src, aux) or write a TO_DEVICE one (dst), and the pages
 * are mapped for that direction alone (the frac_dma_map/unmap events carry
 * it): behind an IOMMU that has read-only mappings, the device cannot write
 * an input; write-only is up to the IOMMU, and most map FROM_DEVICE
 * read-write. The direction is this device's: a dma-buf export of the BO is
 * mapped by its importer as the importer asks.
 */
#define DRM_FRAC_BO_TO_DEVICE		(1 << 1)
#define DRM_FRAC_BO_FROM_DEVICE		(1 << 2)
#define DRM_FRAC_BO_FLAGS		(DRM_FRAC_BO_DEVMEM | DRM_FRAC_BO_TO_DEVICE | \
					 DRM_FRAC_BO_FROM_DEVICE)

/**
 * struct drm_frac_bo_create - allocate a buffer object
 *
 * Host BOs are shmem pages mapped for the device's DMA; device BOs live in
 * the device's memory. A host BO whose pages map to more DMA segments than
 * the device's scatter-gather lists take (65534 on FRAC-1) is refused with
 * -E2BIG; this takes a BO of more than 256 MiB with no two pages adjacent.
 * Both can be mmap()ed at the offset BO_INFO returns; host BOs can also be
 * exported as dma-bufs (device BOs: -EOPNOTSUPP). A new BO reads as zeros.
 * Mappings must be MAP_SHARED: a private mapping fails with -EINVAL. Once
 * the device is removed, mmap() of the device file fails with -ENODEV (the
 * DRM core's check; an exported host BO's dma-buf still maps), and reads
 * and writes of existing mappings complete without a signal, as
 * Documentation/gpu/drm-uapi.rst requires: a host BO's still reach its
 * pages; what a device BO's read is undefined.
 *
 * Where the device's DMA goes through bounce buffers (swiotlb: swiotlb=force,
 * a confidential guest, a DMA mask below the pages), a host BO holds its
 * bounce space from BO_CREATE to its free (-ENOMEM when the pool has no room):
 * a job reads what the CPU wrote before its SUBMIT, and once the writers of
 * what it reads have ended; what it writes is in the pages when it ends
 * successfully; a failed job's destinations are undefined. An imported
 * dma-buf is the exporter's mapping, which frac does not sync: there, jobs
 * read the contents it had when imported and their writes do not reach it.
 *
 * Errors: -EINVAL (unknown @flags, both DRM_FRAC_BO_TO_DEVICE and
 * DRM_FRAC_BO_FROM_DEVICE, either with DRM_FRAC_BO_DEVMEM, @size 0 or over
 * 4 GiB), -ENOSPC (not enough device memory), -E2BIG (see above), -ENOMEM.
 *
 * A dma-buf imported through PRIME (DRM_IOCTL_PRIME_FD_TO_HANDLE) is refused
 * with -E2BIG when its pages need more DMA segments than the device takes,
 * and with -EINVAL when the exporter's scatter-gather table is shorter than
 * the dma-buf.
 */
struct drm_frac_bo_create {
	/** @size: in, bytes (rounded up to the page size), 1 .. device limit */
	__u64 size;
	/** @flags: in, DRM_FRAC_BO_* */
	__u32 flags;
	/** @handle: out, GEM handle */
	__u32 handle;
};

/**
 * struct drm_frac_bo_info - describe a buffer object
 *
 * Errors: -ENOENT (no such handle), -ENOMEM.
 */
struct drm_frac_bo_info {
	/** @handle: in, GEM handle */
	__u32 handle;
	/** @flags: out, DRM_FRAC_BO_* the BO was created with */
	__u32 flags;
	/** @size: out, bytes */
	__u64 size;
	/** @mmap_offset: out, offset to pass to mmap() on the device file */
	__u64 mmap_offset;
	/** @devmem_offset: out, offset in device memory, 0 for host BOs */
	__u64 devmem_offset;
};

/* Commands */
#define DRM_FRAC_OP_NOP			0
#define DRM_FRAC_OP_COPY		1	/* dst = src, len bytes */
#define DRM_FRAC_OP_FILL		2	/* dst = le32 arg[0] repeated, len bytes */
#define DRM_FRAC_OP_CRC32C		3	/* result = crc32c(src, len), seed arg[0] */
#define DRM_FRAC_OP_GEMM		4	/* dst = src(MxK) x aux(KxN), arg = M, N, K, type */
#define DRM_FRAC_OP_TIMESTAMP		5	/* result = device clock; to dst if len == 8 */

#define DRM_FRAC_GEMM_FP32		0	/* fp32 in, fp32 out */
#define DRM_FRAC_GEMM_INT8		1	/* int8 in, int32 out */

/**
 * struct drm_frac_cmd - one command of a job
 *
 * Operands are (GEM handle, byte offset). An unused operand has handle 0 and
 * offset 0. The bytes each command touches: COPY len of src and dst; FILL len
 * of dst; CRC32C len of src; GEMM M*K (src), K*N (aux) elements of 4 (fp32) or
 * 1 (int8) bytes and M*N*4 bytes of dst, with len 0; TIMESTAMP 8 bytes of dst
 * when len is 8, none when len is 0.
 */
struct drm_frac_cmd {
	/** @op: DRM_FRAC_OP_* */
	__u32 op;
	/** @flags: must be zero */
	__u32 flags;
	/** @src_handle: source BO */
	__u32 src_handle;
	/** @dst_handle: destination BO */
	__u32 dst_handle;
	/** @aux_handle: GEMM B operand BO */
	__u32 aux_handle;
	/** @pad: must be zero */
	__u32 pad;
	/** @src_offset: byte offset in @src_handle */
	__u64 src_offset;
	/** @dst_offset: byte offset in @dst_handle */
	__u64 dst_offset;
	/** @aux_offset: byte offset in @aux_handle */
	__u64 aux_offset;
	/** @len: bytes, see above */
	__u64 len;
	/** @arg: FILL pattern; CRC32C seed; GEMM M, N, K, type; else zero */
	__u32 arg[4];
};

#define DRM_FRAC_MAX_CMDS		64

#define DRM_FRAC_PRIO_LOW		0
#define DRM_FRAC_PRIO_NORMAL		1
#define DRM_FRAC_PRIO_HIGH		2

/*
 * Run the job on the queue whose interrupt is affine to the submitting CPU
 * (as blk-mq maps CPUs to NVMe queues): the completion then wakes the
 * submitter on its own CPU. @queue must be 0 on input and holds the queue
 * chosen on return.
 */
#define DRM_FRAC_SUBMIT_LOCAL_QUEUE	(1 << 0)
/*
 * The job gets no job id (@job_id is 0 on return) and is not kept for WAIT:
 * for clients that follow their jobs through @out_syncobj or BO fences only,
 * so that they never hold DRM_FRAC_MAX_UNWAITED ids.
 */
#define DRM_FRAC_SUBMIT_NO_JOB_ID	(1 << 1)
#define DRM_FRAC_SUBMIT_FLAGS		(DRM_FRAC_SUBMIT_LOCAL_QUEUE | \
					 DRM_FRAC_SUBMIT_NO_JOB_ID)

/*
 * Job ids a file may hold at once: a job's id is held from SUBMIT until a
 * WAIT sees the job ended (or the file closes). SUBMIT fails with -EBUSY
 * while a file holds this many, SUBMIT_BATCH when its jobs' ids would take
 * the file past it; WAIT for some of its jobs first, or submit with
 * DRM_FRAC_SUBMIT_NO_JOB_ID.
 */
#define DRM_FRAC_MAX_UNWAITED		4096

/**
 * struct drm_frac_submit - submit a job
 *
 * Errors: -EINVAL (unknown @flags, @cmd_size not 72, @cmd_count 0 or over
 * DRM_FRAC_MAX_CMDS, @queue or @priority out of range, @queue not 0 with
 * DRM_FRAC_SUBMIT_LOCAL_QUEUE, a command's @flags or @pad not zero, an
 * unknown @op, arguments or a length a command does not take, an operand
 * range outside its BO, an unused operand with a handle or offset, an operand
 * whose BO's direction its command does not have: src or aux in a
 * DRM_FRAC_BO_FROM_DEVICE BO, dst in a DRM_FRAC_BO_TO_DEVICE one), -ENOENT
 * (a BO handle or syncobj that does not exist; an @in_syncobj that exists
 * but holds no fence gives -EINVAL), -EACCES (DRM_FRAC_PRIO_HIGH
 * without CAP_SYS_NICE), -EBUSY (DRM_FRAC_MAX_UNWAITED job ids held), -EIO
 * (the device is wedged), -EFAULT (@cmds not readable), -ENOMEM, -ENODEV,
 * -EINTR/-ERESTARTSYS (while waiting for a BO's reservation lock). On any
 * error nothing was submitted and @queue and @job_id are not written, with
 * one exception, as for any ioctl whose result cannot be copied back: when
 * the argument is readable but not writable, the DRM core's copy back of
 * @queue and @job_id fails after the job was submitted, and the call
 * returns -EFAULT. The job runs (its @out_syncobj and its BOs' fences
 * signal); its id, never learnt, stays held (towards DRM_FRAC_MAX_UNWAITED)
 * until the file is closed.
 */
struct drm_frac_submit {
	/** @cmds: in, user pointer to @cmd_count struct drm_frac_cmd */
	__u64 cmds;
	/** @cmd_count: in, 1 .. DRM_FRAC_MAX_CMDS */
	__u32 cmd_count;
	/**
	 * @cmd_size: in, sizeof(struct drm_frac_cmd): 72 in this version. The
	 * stride of @cmds; a later version that grows the command will also
	 * accept this size.
	 */
	__u32 cmd_size;
	/**
	 * @queue: in, hardware queue, 0 .. NUM_QUEUES - 1; with
	 * DRM_FRAC_SUBMIT_LOCAL_QUEUE in 0, out the queue chosen
	 */
	__u32 queue;
	/** @priority: in, DRM_FRAC_PRIO_* */
	__u32 priority;
	/** @flags: in, DRM_FRAC_SUBMIT_* */
	__u32 flags;
	/** @in_syncobj: in, syncobj the job waits for, 0 for none */
	__u32 in_syncobj;
	/** @out_syncobj: in, syncobj that receives the job's fence, 0 for none */
	__u32 out_syncobj;
	/** @job_id: out, id for DRM_IOCTL_FRAC_WAIT */
	__u32 job_id;
};

/* Jobs in one DRM_IOCTL_FRAC_SUBMIT_BATCH */
#define DRM_FRAC_MAX_BATCH		64

/**
 * struct drm_frac_submit_batch - submit several jobs to one queue
 *
 * Submits the @count jobs of the array @jobs, each described as for
 * DRM_IOCTL_FRAC_SUBMIT, in one call. Each job gets its own job id and
 * fence, and is waited for, traced and ended as if SUBMIT had submitted it.
 * The jobs that go to the ring at once (frac.ko's direct_submit: see
 * frac(4)) are announced to the device with one doorbell write.
 *
 * Every job of a batch names the same @queue, @priority and @flags: a batch
 * is for one queue, and its jobs run in the order of the array, one after
 * another, as after consecutive SUBMITs. Each job's dependencies are taken
 * before any job of the batch is submitted: a job follows the earlier jobs
 * of its batch by its queue's order alone, and its @in_syncobj gives the
 * fence the syncobj held when the batch was submitted, not one an earlier
 * job of the same batch puts there: a job whose @in_syncobj is the
 * @out_syncobj of an earlier job of the batch, and held no fence before it,
 * fails the batch with -EINVAL. When several jobs name one @out_syncobj, it
 * ends up with the last one's fence.
 *
 * All or nothing: on success every job was submitted and each one's @queue
 * and @job_id are written in the array, as SUBMIT writes them; when the call
 * fails, no job was submitted and no value in the array changed. Before it
 * prepares any job, the call writes the array back as it read it, so that
 * an array that cannot take the results is refused (-EFAULT) before
 * anything is submitted. One exception remains, as for any ioctl whose
 * result cannot be copied back: when the array stops being writable during
 * the call (another thread unmaps it), the call fails with -EFAULT after
 * the jobs were submitted; their ids, never learnt, stay held (towards
 * DRM_FRAC_MAX_UNWAITED) until the file is closed.
 *
 * Errors: any of SUBMIT's, for any job of the batch; -EINVAL (@count 0 or
 * over DRM_FRAC_MAX_BATCH, @job_size not 40, @flags or @pad not zero, two
 * jobs whose @queue, @priority or @flags differ), -EBUSY (the batch's job
 * ids would take the file over DRM_FRAC_MAX_UNWAITED), -EFAULT (@jobs not
 * readable, or not writable).
 */
struct drm_frac_submit_batch {
	/** @jobs: in, user pointer to @count struct drm_frac_submit; out, see above */
	__u64 jobs;
	/** @count: in, 1 .. DRM_FRAC_MAX_BATCH */
	__u32 count;
	/**
	 * @job_size: in, sizeof(struct drm_frac_submit): 40 in this version.
	 * The stride of @jobs; a later version that grows the structure will
	 * also accept this size.
	 */
	__u32 job_size;
	/** @flags: in, must be zero */
	__u32 flags;
	/** @pad: must be zero */
	__u32 pad;
};

/**
 * struct drm_frac_wait - wait for a job
 *
 * Returns 0 once the job has ended (successfully or not: see @status),
 * -ETIME if @timeout_ns passed first, -EINVAL for an unknown job id (or one
 * whose SUBMIT has not returned yet) or @flags not zero. A job id can be
 * waited for until it has been seen ended once; then it is released.
 *
 * A job SUBMIT wrote to the device itself (frac.ko's direct_submit parameter)
 * has one fence, its hardware fence: WAIT, poll, its out syncobj and the
 * fences on its BOs all see it end when the device is done with it.
 *
 * Interrupted by a signal (-EINTR, or a restart under SA_RESTART), WAIT
 * leaves in @timeout_ns the time still to wait, so a restarted WAIT does not
 * start its timeout again; this is the only field a failed WAIT writes.
 */
struct drm_frac_wait {
	/** @job_id: in, from DRM_IOCTL_FRAC_SUBMIT */
	__u32 job_id;
	/** @flags: in, must be zero */
	__u32 flags;
	/** @timeout_ns: in, relative timeout; 0 polls, negative waits forever */
	__s64 timeout_ns;
	/** @status: out, 0 or the negative errno the job ended with */
	__s32 status;
	/** @pad: out, zero */
	__u32 pad;
	/** @result: out, result of the job's last command (CRC32C, TIMESTAMP) */
	__u64 result;
	/** @t_start: out, device clock when the job's first command started, ns */
	__u64 t_start;
	/** @t_end: out, device clock when its last command ended, ns */
	__u64 t_end;
};

#if defined(__cplusplus)
}
#endif

#endif /* __UAPI_FRAC_ACCEL_H__ */
