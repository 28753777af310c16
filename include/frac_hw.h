/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * FRAC-1 hardware programming interface.
 *
 * The one definition of the device's registers and in-memory formats, shared by
 * the QEMU model (emulator/) and the Linux driver (kernel/). docs/hw-spec.md is
 * the prose version; where they disagree this file is right.
 *
 * All registers and in-memory structures are little-endian. 64-bit registers
 * are two 32-bit halves at consecutive offsets (LO first); the device accepts
 * 32-bit accesses only on BAR0.
 */
#ifndef FRAC_HW_H
#define FRAC_HW_H

#if defined(__KERNEL__) || defined(__bpf__)
#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/stddef.h>
#include <linux/build_bug.h>
#define FRAC_STATIC_ASSERT(e, m) static_assert(e, m)
#else
/*
 * BPF programs (bpf/): vmlinux.h has the types and there are no libc headers.
 * The layout asserts are left to the C builds (sizeof() only names @e here):
 * bpf_helpers.h's offsetof(), which CO-RE needs, is no constant expression.
 */
#define FRAC_STATIC_ASSERT(e, m) _Static_assert(sizeof(e), m)
#ifndef offsetof
#define offsetof(t, m) __builtin_offsetof(t, m)	/* bpf_helpers.h replaces it */
#endif
#endif
typedef __u8 frac_u8;
typedef __u16 frac_u16;
typedef __u32 frac_u32;
typedef __u64 frac_u64;
typedef __le16 frac_le16;
typedef __le32 frac_le32;
typedef __le64 frac_le64;
#else
#include <stdint.h>
#include <stddef.h>
#include <assert.h>
#define FRAC_STATIC_ASSERT(e, m) _Static_assert(e, m)
typedef uint8_t frac_u8;
typedef uint16_t frac_u16;
typedef uint32_t frac_u32;
typedef uint64_t frac_u64;
typedef uint16_t frac_le16;
typedef uint32_t frac_le32;
typedef uint64_t frac_le64;
#endif

/* ---- PCI identity ---------------------------------------------------- */
#define FRAC_PCI_VENDOR_ID		0x1234
#define FRAC_PCI_DEVICE_ID		0xfac1
#define FRAC_PCI_CLASS			0x1200	/* processing accelerator */
#define FRAC_PCI_REVISION		0x01

/* ---- BARs ------------------------------------------------------------- */
#define FRAC_BAR_REGS			0	/* 64-bit, non-prefetchable */
#define FRAC_BAR_MEM			2	/* 64-bit, prefetchable device memory */

#define FRAC_BAR0_SIZE			0x10000
#define FRAC_REGS_OFFSET		0x0000	/* global + queue registers */
#define FRAC_REGS_SIZE			0x1000
#define FRAC_DB_OFFSET			0x1000	/* doorbell page */
#define FRAC_DB_SIZE			0x1000
#define FRAC_MSIX_TABLE_OFFSET		0x2000
#define FRAC_MSIX_PBA_OFFSET		0x3000

/* ---- Limits ----------------------------------------------------------- */
#define FRAC_MAX_QUEUES			16
#define FRAC_MIN_QUEUES			1
#define FRAC_RING_MIN_ENTRIES		2
#define FRAC_RING_MAX_ENTRIES		4096
#define FRAC_GEMM_MAX_DIM		1024
#define FRAC_SGL_MAX_ENTRIES		65536	/* per descriptor operand, chains included */
#define FRAC_MAX_XFER			(1ULL << 32)	/* bytes per descriptor */

/* ---- Global registers (BAR0) ----------------------------------------- */
#define FRAC_REG_ID			0x000	/* RO: FRAC_ID_MAGIC */
#define FRAC_REG_VERSION		0x004	/* RO: major << 16 | minor */
#define FRAC_REG_CAP0			0x008	/* RO: see FRAC_CAP0_* */
#define FRAC_REG_CAP1			0x00c	/* RO: FRAC_FEAT_* bits */
#define FRAC_REG_DEVMEM_SIZE_LO		0x010	/* RO: bytes behind BAR2 */
#define FRAC_REG_DEVMEM_SIZE_HI		0x014
#define FRAC_REG_GEMM_MAX_DIM		0x018	/* RO */
#define FRAC_REG_SGL_MAX		0x01c	/* RO: FRAC_SGL_MAX_ENTRIES */
#define FRAC_REG_CONTROL		0x020	/* RW: FRAC_CTRL_* */
#define FRAC_REG_STATUS			0x024	/* RO: FRAC_STS_* */
#define FRAC_REG_DMA_BITS		0x028	/* RW: DMA address width, 32..64 */
#define FRAC_REG_SCRATCH		0x02c	/* RW: no effect, reset to 0 */
#define FRAC_REG_ERR_STATUS		0x030	/* RW1C: FRAC_ERR_* */
#define FRAC_REG_ERR_QUEUE		0x034	/* RO: queue of the first error */
#define FRAC_REG_ERR_ADDR_LO		0x038	/* RO: address of the first fault */
#define FRAC_REG_ERR_ADDR_HI		0x03c
#define FRAC_REG_INT_STATUS		0x040	/* RW1C: bit q = queue q, bit 31 = error */
#define FRAC_REG_INT_MASK		0x044	/* RW: 1 = masked (INTx/MSI only) */
#define FRAC_REG_ERR_VECTOR		0x048	/* RO: MSI-X vector of errors */
#define FRAC_REG_CLOCK_LO		0x050	/* RO: device clock, ns; LO latches HI */
#define FRAC_REG_CLOCK_HI		0x054
#define FRAC_REG_CLOCK_FREQ		0x058	/* RO: ticks per second */

/* Telemetry */
#define FRAC_REG_TEMP_MC		0x100	/* RO: milli-degrees Celsius */
#define FRAC_REG_POWER_MW		0x104	/* RO: milliwatts */
#define FRAC_REG_BUSY_NS_LO(e)		(0x110 + (e) * 8)	/* RO: per engine */
#define FRAC_REG_BUSY_NS_HI(e)		(0x114 + (e) * 8)
#define FRAC_REG_JOBS_DONE_LO		0x130	/* RO: jobs completed OK */
#define FRAC_REG_JOBS_DONE_HI		0x134
#define FRAC_REG_JOBS_ERR_LO		0x138	/* RO: jobs completed in error */
#define FRAC_REG_JOBS_ERR_HI		0x13c
#define FRAC_REG_BYTES_RD_LO		0x140	/* RO: bytes read by DMA */
#define FRAC_REG_BYTES_RD_HI		0x144
#define FRAC_REG_BYTES_WR_LO		0x148	/* RO: bytes written by DMA */
#define FRAC_REG_BYTES_WR_HI		0x14c
#define FRAC_REG_IRQS_LO		0x150	/* RO: interrupts signalled */
#define FRAC_REG_IRQS_HI		0x154

/* Fault injection (decoded only with the fault-injection property on) */
#define FRAC_REG_FI_CTRL		0x200	/* WO: FRAC_FI_CMD() */
#define FRAC_REG_FI_ARMED		0x204	/* RO: bit k = fault kind k armed */

#define FRAC_ID_MAGIC			0x46524143	/* "FRAC" */
#define FRAC_VERSION_MAJOR		1
#define FRAC_VERSION_MINOR		0

#define FRAC_CAP0_NQUEUES(c)		((c) & 0xff)
#define FRAC_CAP0_RING_MAX_ORDER(c)	(((c) >> 8) & 0xff)
#define FRAC_CAP0_NENGINES(c)		(((c) >> 16) & 0xff)

#define FRAC_FEAT_GEMM_FP32		(1u << 0)
#define FRAC_FEAT_GEMM_INT8		(1u << 1)
#define FRAC_FEAT_CRC32C		(1u << 2)
#define FRAC_FEAT_SGL			(1u << 3)
#define FRAC_FEAT_DEVMEM		(1u << 4)
#define FRAC_FEAT_FAULT_INJ		(1u << 5)
#define FRAC_FEAT_TIMESTAMP		(1u << 6)

#define FRAC_CTRL_ENABLE		(1u << 0)
/* Reads 1 until the reset is complete: every queue quiesced (docs/hw-spec.md 8) */
#define FRAC_CTRL_RESET			(1u << 1)

#define FRAC_STS_READY			(1u << 0)	/* clear while a global reset runs */
#define FRAC_STS_FATAL			(1u << 1)
#define FRAC_STS_ENABLED		(1u << 2)
/* Clear while any DMA of any queue may be in progress or pending */
#define FRAC_STS_QUIESCED		(1u << 3)

/*
 * The longest a queue or global reset may take to quiesce; a driver that
 * sees a reset take longer treats the device as broken (docs/hw-spec.md 8).
 */
#define FRAC_RESET_TIMEOUT_MS		1000

#define FRAC_ERR_FATAL			(1u << 0)
#define FRAC_ERR_DMA_FAULT		(1u << 1)
#define FRAC_ERR_BAD_DESC		(1u << 2)
#define FRAC_ERR_CQ_OVERFLOW		(1u << 3)
#define FRAC_ERR_BAD_DOORBELL		(1u << 4)

#define FRAC_INT_ERR			(1u << 31)

/* Engines (telemetry busy counters) */
enum frac_engine {
	FRAC_ENGINE_DMA = 0,
	FRAC_ENGINE_COMPUTE = 1,
	FRAC_NUM_ENGINES = 2,
};

/* ---- Per-queue registers: FRAC_QREG(q, reg) --------------------------- */
#define FRAC_QREGS_BASE			0x400
#define FRAC_QREGS_STRIDE		0x40
#define FRAC_QREG(q, r)			(FRAC_QREGS_BASE + (q) * FRAC_QREGS_STRIDE + (r))

#define FRAC_Q_SQ_BASE_LO		0x00	/* RW: ring base, 64-byte aligned */
#define FRAC_Q_SQ_BASE_HI		0x04
#define FRAC_Q_SIZE			0x08	/* RW: entries, power of two */
#define FRAC_Q_CTRL			0x0c	/* RW: FRAC_QCTRL_* */
#define FRAC_Q_CQ_BASE_LO		0x10	/* RW: completion ring, 64-byte aligned */
#define FRAC_Q_CQ_BASE_HI		0x14
#define FRAC_Q_STATUS			0x18	/* RO: FRAC_QSTS_* */
#define FRAC_Q_SQ_HEAD			0x1c	/* RO: next entry the device fetches */
#define FRAC_Q_SQ_TAIL			0x20	/* RO: last doorbell value */
#define FRAC_Q_CQ_TAIL			0x24	/* RO: next entry the device writes */
#define FRAC_Q_CQ_HEAD			0x28	/* RO: last CQ doorbell value */
#define FRAC_Q_IRQ_COAL			0x2c	/* RW: FRAC_COAL() */
#define FRAC_Q_VECTOR			0x30	/* RO: MSI-X vector of this queue */
#define FRAC_Q_JOBS			0x34	/* RO: jobs completed, wraps */

#define FRAC_QCTRL_ENABLE		(1u << 0)
/* Reads 1 while STATUS.RESETTING: until the queue has quiesced */
#define FRAC_QCTRL_RESET		(1u << 1)

#define FRAC_QSTS_ENABLED		(1u << 0)
#define FRAC_QSTS_HUNG			(1u << 1)	/* injected hang */
#define FRAC_QSTS_ERROR			(1u << 2)	/* ring programming error */
#define FRAC_QSTS_BUSY			(1u << 3)	/* jobs fetched, not completed */
/* A reset was asked for and the queue may still be doing DMA of dropped jobs */
#define FRAC_QSTS_RESETTING		(1u << 4)

/* Interrupt moderation: raise after @count completions or @usecs after the first */
#define FRAC_COAL(count, usecs)		(((count) & 0xff) | (((usecs) & 0xffff) << 16))
#define FRAC_COAL_COUNT(v)		((v) & 0xff)
#define FRAC_COAL_USECS(v)		(((v) >> 16) & 0xffff)

/* ---- Doorbells (BAR0 + FRAC_DB_OFFSET) -------------------------------- */
#define FRAC_DB_STRIDE			8
#define FRAC_DB_SQ_TAIL(q)		(FRAC_DB_OFFSET + (q) * FRAC_DB_STRIDE)
#define FRAC_DB_CQ_HEAD(q)		(FRAC_DB_OFFSET + (q) * FRAC_DB_STRIDE + 4)

/* ---- Submission descriptor (64 bytes) --------------------------------- */
enum frac_opcode {
	FRAC_OP_NOP = 0,
	FRAC_OP_COPY = 1,	/* dst[0..len) = src[0..len) */
	FRAC_OP_FILL = 2,	/* dst[0..len) = repeated le32 arg[0] */
	FRAC_OP_CRC32C = 3,	/* result = crc32c(src[0..len)), seeded by arg[0] */
	FRAC_OP_GEMM = 4,	/* dst(MxN) = src(MxK) * aux(KxN), row-major */
	FRAC_OP_TIMESTAMP = 5,	/* result = device clock; also to dst if len >= 8 */
	FRAC_OP_MAX,
};

/* Descriptor flags: where each operand lives */
#define FRAC_DF_SRC_DEVMEM		(1u << 0)	/* src is an offset in device memory */
#define FRAC_DF_DST_DEVMEM		(1u << 1)
#define FRAC_DF_AUX_DEVMEM		(1u << 2)
#define FRAC_DF_SRC_SGL			(1u << 3)	/* src is the address of an SG list */
#define FRAC_DF_DST_SGL			(1u << 4)
#define FRAC_DF_AUX_SGL			(1u << 5)
#define FRAC_DF_NO_IRQ			(1u << 6)	/* completion without interrupt */
#define FRAC_DF_VALID_MASK		0x7f

enum frac_gemm_type {
	FRAC_GEMM_FP32 = 0,	/* fp32 x fp32 -> fp32 */
	FRAC_GEMM_INT8 = 1,	/* int8 x int8 -> int32 accumulate */
};

struct frac_desc {
	frac_u8 opcode;		/* enum frac_opcode */
	frac_u8 flags;		/* FRAC_DF_* */
	frac_le16 rsvd0;		/* must be zero */
	frac_le32 rsvd1;		/* must be zero */
	frac_le64 job_id;	/* echoed in the completion record */
	frac_le64 src;
	frac_le64 dst;
	frac_le64 aux;		/* GEMM B operand */
	frac_le64 len;		/* bytes (COPY, FILL, CRC32C, TIMESTAMP) */
	frac_le32 arg[4];	/* FILL: pattern; CRC32C: seed; GEMM: M, N, K, type */
};

/* Scatter-gather list entry (16 bytes), in host memory */
#define FRAC_SGE_CHAIN			(1u << 0)	/* addr is the next list segment */
#define FRAC_SGE_VALID_MASK		0x1

struct frac_sge {
	frac_le64 addr;
	frac_le32 len;		/* bytes; for CHAIN: entries in the next segment */
	frac_le32 flags;		/* FRAC_SGE_* */
};

/* ---- Completion record (64 bytes) ------------------------------------- */
enum frac_status {
	FRAC_STATUS_OK = 0,
	FRAC_STATUS_BAD_OPCODE = 1,
	FRAC_STATUS_BAD_DESC = 2,	/* reserved bits, bad sizes, bad SGL */
	FRAC_STATUS_DMA_FAULT = 3,	/* address unreachable, beyond mask, own BAR */
	FRAC_STATUS_DEVMEM_RANGE = 4,	/* device memory offset out of range */
	FRAC_STATUS_INJECTED = 5,	/* fault injection: error completion */
	FRAC_STATUS_FATAL = 6,		/* device entered the fatal state */
};

#define FRAC_CQE_PHASE			(1u << 0)

struct frac_cqe {
	frac_le64 job_id;	/* from the descriptor */
	frac_le64 result;	/* CRC32C value, TIMESTAMP clock, else 0 */
	frac_le64 t_start;	/* device clock, ns, job started */
	frac_le64 t_end;		/* device clock, ns, job finished */
	frac_le32 status;	/* enum frac_status */
	frac_le16 sq_head;	/* SQ head after this job was fetched */
	frac_le16 flags;		/* FRAC_CQE_PHASE */
	frac_le64 err_addr;	/* faulting address for DMA_FAULT/DEVMEM_RANGE */
	frac_le64 rsvd[2];
};

/* ---- Fault injection -------------------------------------------------- */
enum frac_fault {
	FRAC_FAULT_NONE = 0,
	FRAC_FAULT_HANG = 1,		/* queue stops fetching until reset */
	FRAC_FAULT_DROP_IRQ = 2,	/* drop the next @arg interrupts */
	FRAC_FAULT_ERROR = 3,		/* next @arg jobs complete with INJECTED */
	FRAC_FAULT_DMA = 4,		/* next @arg jobs fault their first DMA */
	FRAC_FAULT_FATAL = 5,		/* device fatal error; needs a global reset */
	FRAC_FAULT_LATENCY = 6,		/* next job on the queue takes @arg ms more */
	FRAC_FAULT_BAD_ID = 7,		/* next @arg records: job_id one more */
	FRAC_FAULT_BAD_HEAD = 8,	/* next record: sq_head @arg more */
	FRAC_FAULT_DUP = 9,		/* next @arg records: each written twice */
	FRAC_FAULT_MAX,
};

/* In-memory structures are little-endian (frac_le* are __le* in the kernel). */

/* FI_CTRL: kind in bits 0-7, queue in 8-15, argument in 16-31 */
#define FRAC_FI_CMD(kind, q, arg)	((kind) | ((q) << 8) | ((frac_u32)(arg) << 16))

/* ---- Host-side trace layout (driver <-> BPF tools; not the device's) ---- */
/*
 * struct frac_job_stamps - one job's host times and identity, as the driver's
 * frac_job_done tracepoint hands them to BPF programs (by pointer: a raw
 * tracepoint has at most 12 arguments). The driver fills it only while that
 * event is enabled (its static key), so one program per job (bpf/fraclat,
 * fracsnoop) sees every stage of it; a raw_tp program reads it with one
 * bpf_probe_read_kernel() by this layout, a tp_btf program through BTF.
 * Times are CLOCK_MONOTONIC ns; the device's are converted with the clock
 * offset (FRAC_REG_CLOCK_LO). Kept here, beside the device formats, because
 * this is the one header both kernel/ and bpf/ build with.
 */
struct frac_job_stamps {
	frac_u64 submit_ns;	/* SUBMIT queued it; 0: not stamped (event off then) */
	frac_u64 run_ns;	/* the scheduler ran it (run_job); 0: not stamped */
	frac_u64 dev_start_ns;	/* the device began its first command; 0: no record */
	frac_u64 dev_end_ns;	/* the device ended its last command; 0: no record */
	frac_u64 irq_ns;	/* the IRQ handler found its record; 0: no interrupt
				 * ended it (timeout scan, reset, FLR, removal) */
	frac_u64 bytes;		/* operand bytes of all its commands */
	frac_u32 pid;		/* submitter's thread group id */
	frac_u32 op;		/* DRM_FRAC_OP_* of its first command */
	frac_u32 ncmds;
	frac_u32 prio;		/* DRM_FRAC_PRIO_* */
	char comm[16];		/* submitter's comm (TASK_COMM_LEN) */
};

FRAC_STATIC_ASSERT(sizeof(struct frac_desc) == 64, "descriptor is 64 bytes");
FRAC_STATIC_ASSERT(sizeof(struct frac_sge) == 16, "SG entry is 16 bytes");
FRAC_STATIC_ASSERT(sizeof(struct frac_cqe) == 64, "completion record is 64 bytes");
FRAC_STATIC_ASSERT(offsetof(struct frac_desc, arg) == 48, "desc layout");
FRAC_STATIC_ASSERT(offsetof(struct frac_cqe, status) == 32, "cqe layout");
FRAC_STATIC_ASSERT(offsetof(struct frac_cqe, err_addr) == 40, "cqe layout");
FRAC_STATIC_ASSERT(sizeof(struct frac_job_stamps) == 80, "job stamps are 80 bytes");
FRAC_STATIC_ASSERT(offsetof(struct frac_job_stamps, run_ns) == 8, "job stamps layout");
FRAC_STATIC_ASSERT(offsetof(struct frac_job_stamps, dev_start_ns) == 16, "job stamps layout");
FRAC_STATIC_ASSERT(offsetof(struct frac_job_stamps, dev_end_ns) == 24, "job stamps layout");
FRAC_STATIC_ASSERT(offsetof(struct frac_job_stamps, irq_ns) == 32, "job stamps layout");
FRAC_STATIC_ASSERT(offsetof(struct frac_job_stamps, bytes) == 40, "job stamps layout");
FRAC_STATIC_ASSERT(offsetof(struct frac_job_stamps, pid) == 48, "job stamps layout");
FRAC_STATIC_ASSERT(offsetof(struct frac_job_stamps, op) == 52, "job stamps layout");
FRAC_STATIC_ASSERT(offsetof(struct frac_job_stamps, ncmds) == 56, "job stamps layout");
FRAC_STATIC_ASSERT(offsetof(struct frac_job_stamps, prio) == 60, "job stamps layout");
FRAC_STATIC_ASSERT(offsetof(struct frac_job_stamps, comm) == 64, "job stamps layout");
FRAC_STATIC_ASSERT(FRAC_QREG(FRAC_MAX_QUEUES, 0) <= FRAC_REGS_SIZE, "queue regs fit");

#endif /* FRAC_HW_H */
