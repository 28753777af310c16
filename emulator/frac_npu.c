/*
 * FRAC-1 AI-inference accelerator: QEMU device model ("frac-npu").
 *
 * Copyright (c) 2026 The frac authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A PCIe endpoint with hardware submission queues (descriptor rings in host
 * memory, doorbells, completion rings with device timestamps), a DMA engine
 * with scatter-gather lists, on-device memory behind a prefetchable BAR, a
 * compute engine (COPY, FILL, CRC32C, GEMM fp32/int8, TIMESTAMP), per-queue
 * MSI-X with interrupt moderation, telemetry, a timing model and run-time
 * fault injection. The programming interface is include/frac_hw.h and
 * docs/hw-spec.md.
 *
 * Threads. MMIO handlers run on vCPU threads with the BQL held and never do
 * bulk work: a doorbell only records the tail and kicks a bottom half (or a
 * timer, when the model has a fetch latency). Descriptors are fetched and
 * validated in the main loop. Small jobs run there at once; the rest go to a
 * worker thread per queue, which does its DMA and arithmetic without the BQL
 * and hands the finished job back through a bottom half. Completion records
 * and interrupts are always written from the main loop, in submission order,
 * no earlier than the time the timing model gives.
 *
 * Resets. A queue reset, a disable with jobs in flight, the fatal state and
 * unplug drop jobs by bumping the queue's generation; the worker checks it
 * at every 256 KiB chunk, SG segment and GEMM row, so a dropped job stops
 * within microseconds (RAM) to milliseconds (MMIO). A reset is over, and
 * RESETTING / CONTROL.RESET clear, only when the worker has handed back the
 * job it held (the quiesce handshake, docs/hw-spec.md 8). frac_npu_exit joins
 * the workers with the BQL released: a worker's MMIO DMA needs it.
 */

#include "qemu/osdep.h"
#include <math.h>
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/thread.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "qemu/crc32c.h"
#include "qemu/cutils.h"
#include "qemu/bswap.h"
#include "qemu/rcu.h"
#include "qemu/queue.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/pci/pcie_aer.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qom/object.h"
#include "trace.h"

#include "frac_hw.h"

#define TYPE_FRAC_NPU "frac-npu"
OBJECT_DECLARE_SIMPLE_TYPE(FracState, FRAC_NPU)

#define FRAC_PCIE_CAP_OFFSET 0x80
#define FRAC_MSI_CAP_OFFSET 0x60
#define FRAC_AER_OFFSET 0x100

/* Jobs at or below these sizes run in the main loop instead of the worker. */
#define FRAC_INLINE_BYTES (64 * KiB)
#define FRAC_INLINE_MACS (64 * 1024)
#define FRAC_CHUNK (256 * KiB)
/* SQ doorbells waiting out the fetch latency; more are merged into the last */
#define FRAC_DB_PENDING 8

/* Temperature and power model */
#define FRAC_TEMP_AMBIENT_MC 35000
#define FRAC_TEMP_RANGE_MC 50000
#define FRAC_POWER_IDLE_MW 8000
#define FRAC_POWER_RANGE_MW 67000
#define FRAC_THERMAL_TAU_NS (2 * NANOSECONDS_PER_SECOND)
/*
 * The thermal filter steps on a fixed 1 ms grid of the device clock, fed
 * with the share of each step some modelled job was busy: a reading is the
 * state at the last grid point, whenever and however often it is taken.
 */
#define FRAC_THERMAL_STEP_NS (1 * SCALE_MS)
#define FRAC_BUSY_MAX 256 /* disjoint busy intervals ahead of the filter */

typedef struct FracBusy {
    int64_t start, end; /* device clock */
} FracBusy;

/*
 * A guest mistake: its own trace event plus a LOG_GUEST_ERROR line with the
 * same arguments (hw/nvme's NVME_GUEST_ERR).
 */
#define FRAC_GUEST_ERR(trace, fmt, ...) \
    do { \
        (trace_##trace)(__VA_ARGS__); \
        qemu_log_mask(LOG_GUEST_ERROR, "frac-npu: " fmt " (" #trace ")\n", \
                      ## __VA_ARGS__); \
    } while (0)

typedef struct FracQueue FracQueue;

/* What a queue does once its worker has given back every dropped job */
typedef enum FracDrain {
    FRAC_DRAIN_NONE,    /* not draining, or only stopped (the fatal state) */
    FRAC_DRAIN_DISABLE, /* a disable with jobs in flight: registers kept */
    FRAC_DRAIN_RESET,   /* a queue reset: registers to their reset values */
} FracDrain;

typedef enum FracOperandKind {
    FRAC_OPND_HOST,
    FRAC_OPND_SGL,
    FRAC_OPND_DEVMEM,
} FracOperandKind;

typedef struct FracSeg {
    uint64_t addr;
    uint64_t len;
} FracSeg;

typedef struct FracOperand {
    FracOperandKind kind;
    uint64_t addr;  /* host address, SGL address or devmem offset */
    uint64_t len;  /* bytes the job touches */
    FracSeg *segs;  /* resolved SGL, kind == FRAC_OPND_SGL */
    unsigned nsegs;
} FracOperand;

typedef struct FracJob {
    QTAILQ_ENTRY(FracJob) pending; /* FracQueue.pending, main loop */
    QSIMPLEQ_ENTRY(FracJob) link; /* worker lists, under FracQueue.lock */
    FracQueue *q;
    struct frac_desc desc;
    uint32_t gen;  /* FracQueue.gen at fetch */
    uint16_t sq_head;
    bool in_worker;  /* main loop: handed over, not yet back */
    bool finished;  /* main loop: result valid */
    bool inject_error;
    bool inject_dma;
    uint64_t extra_ns; /* injected latency */
    int64_t deadline; /* QEMU_CLOCK_VIRTUAL, post no earlier */
    /* Results */
    uint32_t status;
    uint64_t result;
    uint64_t err_addr;
    uint64_t t_start, t_end; /* device clock */
    uint64_t bytes_rd, bytes_wr;
    uint64_t dma_ns, compute_ns; /* engine time for telemetry */
} FracJob;

struct FracQueue {
    struct FracState *s;
    unsigned id;

    /* Registers; main loop (BQL) only */
    uint64_t sq_base;
    uint64_t cq_base;
    uint32_t size;
    uint32_t ctrl;
    uint32_t status;
    uint32_t sq_head, sq_tail;
    uint32_t cq_head, cq_tail;
    bool phase;
    uint32_t coal;
    uint32_t jobs;

    /* Model state; main loop only */
    uint32_t fetch_tail; /* SQ tail whose fetch latency is over */
    struct {
        uint32_t tail;
        int64_t due; /* QEMU_CLOCK_VIRTUAL */
    } db_pending[FRAC_DB_PENDING]; /* oldest first */
    unsigned db_npending;
    uint32_t gen;  /* read by the worker with qatomic_read */
    int64_t busy_until; /* device clock, end of the last modelled job */
    unsigned inflight; /* fetched, completion not yet posted */
    /* Handed to the worker and not yet back in frac_npu_done_bh, of any gen */
    unsigned outstanding;
    FracDrain drain; /* STATUS.RESETTING while not NONE */
    bool cq_stalled;
    uint32_t coal_pending;
    QTAILQ_HEAD(, FracJob) pending; /* fetch order */
    QEMUBH *fetch_bh;
    QEMUTimer *fetch_timer;
    QEMUTimer *post_timer;
    QEMUTimer *coal_timer;
    QEMUBH *done_bh;

    /* Fault injection; main loop only */
    bool hung;
    uint32_t fi_drop_irqs;
    uint32_t fi_error_jobs;
    uint32_t fi_dma_jobs;
    uint32_t fi_latency_ms;

    /* Worker */
    QemuThread thread;
    QemuMutex lock;  /* Protects work, done, stop (jobs also poll stop) */
    QemuCond cond;
    QSIMPLEQ_HEAD(, FracJob) work;
    QSIMPLEQ_HEAD(, FracJob) done;
    bool stop;
};

struct FracState {
    PCIDevice parent_obj;

    MemoryRegion bar0;
    MemoryRegion regs;
    MemoryRegion db;
    MemoryRegion devmem;
    uint8_t *devmem_ptr;

    FracQueue q[FRAC_MAX_QUEUES];

    /* Registers */
    uint32_t control;
    uint32_t status;
    uint32_t dma_bits;
    uint64_t dma_mask; /* derived from dma_bits; read by workers */
    uint32_t scratch;
    uint32_t err_status;
    uint32_t err_queue;
    uint64_t err_addr;
    uint32_t int_status;
    uint32_t int_mask;
    bool resetting; /* CONTROL.RESET: a global reset waits for its queues */
    bool exiting; /* frac_npu_exit runs: MMIO, BHs and timers do nothing */
    /* HI halves latched by reading LO: CLOCK, then the telemetry counters */
    uint32_t hi_latch[1 + (FRAC_REG_IRQS_LO - FRAC_REG_BUSY_NS_LO(0)) / 8 + 1];
    int64_t clock_base;

    /* Telemetry, main loop only */
    uint64_t busy_ns[FRAC_NUM_ENGINES];
    uint64_t jobs_done, jobs_err;
    uint64_t bytes_rd, bytes_wr;
    uint64_t irqs;
    FracBusy busy[FRAC_BUSY_MAX]; /* union of modelled busy time, sorted */
    unsigned nbusy;
    int64_t therm_t; /* device clock of the filter state, on the grid */
    double util_ewma; /* utilisation through the thermal filter, 0..1 */

    char *last_inject;

    /* Properties */
    uint32_t num_queues;
    uint64_t mem_size;
    uint32_t fetch_latency_ns;
    uint32_t completion_latency_ns;
    uint32_t dma_bw_mbps;
    uint32_t compute_gflops;
    bool zero_latency;
    bool fetch_in_doorbell;
    bool fault_injection;
    bool use_msix;
    bool use_msi;
};

static const char *const frac_npu_op_name[FRAC_OP_MAX] = {
    [FRAC_OP_NOP] = "nop",
    [FRAC_OP_COPY] = "copy",
    [FRAC_OP_FILL] = "fill",
    [FRAC_OP_CRC32C] = "crc32c",
    [FRAC_OP_GEMM] = "gemm",
    [FRAC_OP_TIMESTAMP] = "timestamp",
};

static void frac_npu_queue_kick(FracQueue *q);
static void frac_npu_queue_post(FracQueue *q);
static void frac_npu_queue_drained(FracQueue *q);
static void frac_npu_queue_disable(FracQueue *q);
static void frac_npu_telemetry_update(FracState *s);
static void frac_npu_busy_add(FracState *s, int64_t start, int64_t end);

/* ---- Clocks ------------------------------------------------------------ */

static uint64_t frac_npu_clock(FracState *s)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - s->clock_base;
}

static int64_t frac_npu_dev_to_virt(FracState *s, uint64_t dev_ns)
{
    return (int64_t)dev_ns + s->clock_base;
}

/* ---- Interrupts -------------------------------------------------------- */

static void frac_npu_update_intx(FracState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    bool level = s->int_status & ~s->int_mask;

    if (msix_enabled(pdev)) {
        return;
    }
    if (msi_enabled(pdev)) {
        /* Edge: the caller notifies for newly set bits. */
        return;
    }
    pci_set_irq(pdev, level);
}

/* Signal @vector (queue id, or num_queues for errors). */
static void frac_npu_raise(FracState *s, unsigned vector)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint32_t bit = vector >= s->num_queues ? FRAC_INT_ERR : BIT(vector);

    if (vector < s->num_queues && s->q[vector].fi_drop_irqs) {
        s->q[vector].fi_drop_irqs--;
        trace_frac_npu_irq_dropped(vector, s->q[vector].fi_drop_irqs);
        return;
    }
    s->irqs++;
    if (msix_enabled(pdev)) {
        trace_frac_npu_irq(vector, "msix");
        msix_notify(pdev, vector);
        return;
    }
    s->int_status |= bit;
    if (msi_enabled(pdev)) {
        if (bit & ~s->int_mask) {
            trace_frac_npu_irq(vector, "msi");
            msi_notify(pdev, 0);
        }
        return;
    }
    trace_frac_npu_irq(vector, "intx");
    frac_npu_update_intx(s);
}

static void frac_npu_error(FracState *s, unsigned qid, uint32_t err, uint64_t addr,
                           bool irq)
{
    if (!s->err_status) {
        s->err_queue = qid;
        s->err_addr = addr;
    }
    s->err_status |= err;
    trace_frac_npu_error(qid, err, addr);
    if (irq) {
        frac_npu_raise(s, s->num_queues);
    }
}

static void frac_npu_queue_abort(FracQueue *q);

/*
 * The fatal state: every queue stops as a queue reset stops it (its jobs are
 * dropped, a running one ends at its next chunk), but keeps its registers
 * for the driver to read; STATUS.QUIESCED follows once the workers are idle.
 */
static void frac_npu_enter_fatal(FracState *s)
{
    if (s->status & FRAC_STS_FATAL) {
        return;
    }
    s->status |= FRAC_STS_FATAL;
    s->status &= ~FRAC_STS_READY;
    for (unsigned i = 0; i < s->num_queues; i++) {
        frac_npu_queue_abort(&s->q[i]);
    }
    frac_npu_error(s, 0xff, FRAC_ERR_FATAL, 0, true);
}

/* ---- Operands and DMA (worker or main loop) ---------------------------- */

/*
 * The queue was reset (or the device went fatal) since the job was fetched.
 * Every long operation checks this at least every FRAC_CHUNK bytes or GEMM
 * row, so a dropped job stops touching memory within microseconds (RAM) to
 * tens of milliseconds (a chunk of MMIO, one BQL round trip per access).
 */
static bool frac_npu_job_aborted(FracJob *job)
{
    return qatomic_read(&job->q->gen) != job->gen ||
           qatomic_read(&job->q->stop);
}

/* Does [addr, addr + len) touch one of our own BARs? @hit: its first byte there */
static bool frac_npu_own_bar(FracState *s, uint64_t addr, uint64_t len, uint64_t *hit)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    int bars[] = { FRAC_BAR_REGS, FRAC_BAR_MEM };

    for (int i = 0; i < ARRAY_SIZE(bars); i++) {
        pcibus_t base = pci_get_bar_addr(pdev, bars[i]);
        uint64_t size = pdev->io_regions[bars[i]].size;

        if (base != PCI_BAR_UNMAPPED && size &&
            addr <= base + size - 1 && base <= addr + len - 1) {
            if (hit) {
                *hit = MAX(addr, base);
            }
            return true;
        }
    }
    return false;
}

static bool frac_npu_host_range_ok(FracJob *job, uint64_t addr, uint64_t len)
{
    FracState *s = job->q->s;
    uint64_t last = addr + len - 1;
    uint64_t mask = qatomic_read(&s->dma_mask);

    if (!len) {
        return true;
    }
    if (last < addr || last > mask) {
        job->err_addr = last < addr ? addr : MAX(addr, mask + 1);
        return false;
    }
    if (frac_npu_own_bar(s, addr, len, &job->err_addr)) {
        FRAC_GUEST_ERR(frac_npu_err_dma_own_bar,
                       "q%u job 0x%" PRIx64 " DMA to own BAR at 0x%" PRIx64,
                       job->q->id, job->desc.job_id, addr);
        return false;
    }
    return true;
}

static uint32_t frac_npu_host_rw(FracJob *job, uint64_t addr, void *buf,
                                 uint64_t len, bool write)
{
    PCIDevice *pdev = PCI_DEVICE(job->q->s);
    MemTxResult r;

    if (job->inject_dma && len) {
        /* Injected: the job's first host DMA faults, at its first byte. */
        job->inject_dma = false;
        job->err_addr = addr;
        return FRAC_STATUS_DMA_FAULT;
    }
    if (!frac_npu_host_range_ok(job, addr, len)) {
        return FRAC_STATUS_DMA_FAULT;
    }
    if (write) {
        r = pci_dma_write(pdev, addr, buf, len);
    } else {
        r = pci_dma_read(pdev, addr, buf, len);
    }
    if (r != MEMTX_OK) {
        job->err_addr = addr;
        return FRAC_STATUS_DMA_FAULT;
    }
    if (write) {
        job->bytes_wr += len;
    } else {
        job->bytes_rd += len;
    }
    return FRAC_STATUS_OK;
}

/* Read an SG list into @op->segs; the chain must cover @op->len bytes. */
static uint32_t frac_npu_sgl_resolve(FracJob *job, FracOperand *op)
{
    uint64_t list = op->addr, covered = 0;
    unsigned nlist = 0, cap = 0, total = 0;
    struct frac_sge sge;

    /* The first segment's length is unknown: read entries until covered. */
    nlist = FRAC_SGL_MAX_ENTRIES;
    while (covered < op->len) {
        uint32_t st, flags, elen;
        uint64_t eaddr;

        if (!nlist || ++total > FRAC_SGL_MAX_ENTRIES) {
            goto bad;
        }
        if (!(total % 256) && frac_npu_job_aborted(job)) {
            return FRAC_STATUS_OK;
        }
        st = frac_npu_host_rw(job, list, &sge, sizeof(sge), false);
        if (st) {
            return st;
        }
        eaddr = le64_to_cpu(sge.addr);
        elen = le32_to_cpu(sge.len);
        flags = le32_to_cpu(sge.flags);
        if (flags & ~FRAC_SGE_VALID_MASK || !elen) {
            goto bad;
        }
        if (flags & FRAC_SGE_CHAIN) {
            if (eaddr & (sizeof(sge) - 1)) {
                goto bad;
            }
            list = eaddr;
            nlist = elen;
            continue;
        }
        if (op->nsegs == cap) {
            cap = cap ? cap * 2 : 16;
            op->segs = g_renew(FracSeg, op->segs, cap);
        }
        op->segs[op->nsegs].addr = eaddr;
        op->segs[op->nsegs].len = MIN((uint64_t)elen, op->len - covered);
        covered += op->segs[op->nsegs].len;
        op->nsegs++;
        list += sizeof(sge);
        nlist--;
    }
    return FRAC_STATUS_OK;
bad:
    job->err_addr = list;
    FRAC_GUEST_ERR(frac_npu_err_bad_sgl,
                   "q%u job 0x%" PRIx64 " bad SG list at 0x%" PRIx64,
                   job->q->id, job->desc.job_id, list);
    return FRAC_STATUS_BAD_DESC;
}

static void frac_npu_operand_init(FracOperand *op, uint64_t addr, uint64_t len,
                                  uint8_t flags, uint8_t devmem_flag, uint8_t sgl_flag)
{
    memset(op, 0, sizeof(*op));
    op->addr = addr;
    op->len = len;
    if (flags & devmem_flag) {
        op->kind = FRAC_OPND_DEVMEM;
    } else if (flags & sgl_flag) {
        op->kind = FRAC_OPND_SGL;
    } else {
        op->kind = FRAC_OPND_HOST;
    }
}

static uint32_t frac_npu_operand_prepare(FracJob *job, FracOperand *op)
{
    if (op->kind == FRAC_OPND_SGL && op->len) {
        return frac_npu_sgl_resolve(job, op);
    }
    return FRAC_STATUS_OK;
}

static void frac_npu_operand_free(FracOperand *op)
{
    g_free(op->segs);
    op->segs = NULL;
}

/* Move @len bytes at offset @off of @op to or from @buf: one chunk. */
static uint32_t frac_npu_operand_rw_chunk(FracJob *job, FracOperand *op,
                                          uint64_t off, void *buf, uint64_t len,
                                          bool write)
{
    FracState *s = job->q->s;
    uint8_t *p = buf;
    uint64_t done = 0, pos = 0;

    switch (op->kind) {
    case FRAC_OPND_DEVMEM:
        /* Range checked at fetch. */
        if (write) {
            memcpy(s->devmem_ptr + op->addr + off, buf, len);
            job->bytes_wr += len;
        } else {
            memcpy(buf, s->devmem_ptr + op->addr + off, len);
            job->bytes_rd += len;
        }
        return FRAC_STATUS_OK;
    case FRAC_OPND_HOST:
        return frac_npu_host_rw(job, op->addr + off, buf, len, write);
    case FRAC_OPND_SGL:
        for (unsigned i = 0; i < op->nsegs && done < len; i++) {
            FracSeg *seg = &op->segs[i];
            uint64_t skip, n;
            uint32_t st;

            if (pos + seg->len <= off) {
                pos += seg->len;
                continue;
            }
            if (frac_npu_job_aborted(job)) {
                return FRAC_STATUS_OK;
            }
            skip = off > pos ? off - pos : 0;
            n = MIN(seg->len - skip, len - done);
            st = frac_npu_host_rw(job, seg->addr + skip, p + done, n, write);
            if (st) {
                return st;
            }
            done += n;
            pos += seg->len;
        }
        return FRAC_STATUS_OK;
    }
    g_assert_not_reached();
}

/*
 * Move @len bytes at offset @off of @op to or from @buf, FRAC_CHUNK at a
 * time; a dropped job stops between chunks (its results are discarded).
 */
static uint32_t frac_npu_operand_rw(FracJob *job, FracOperand *op, uint64_t off,
                                    void *buf, uint64_t len, bool write)
{
    uint8_t *p = buf;

    for (uint64_t done = 0; done < len; done += FRAC_CHUNK) {
        uint64_t n = MIN(FRAC_CHUNK, len - done);
        uint32_t st;

        if (frac_npu_job_aborted(job)) {
            return FRAC_STATUS_OK;
        }
        st = frac_npu_operand_rw_chunk(job, op, off + done, p + done, n, write);
        if (st) {
            return st;
        }
    }
    return FRAC_STATUS_OK;
}

/* ---- Commands ---------------------------------------------------------- */

/* A devmem->devmem COPY, in chunks; overlapping ranges move as memmove. */
static void frac_npu_devmem_move(FracJob *job, uint64_t dst, uint64_t src,
                                 uint64_t len)
{
    uint8_t *mem = job->q->s->devmem_ptr;
    bool backward = dst > src && dst < src + len;

    for (uint64_t done = 0; done < len; done += FRAC_CHUNK) {
        uint64_t n = MIN(FRAC_CHUNK, len - done);
        uint64_t off = backward ? len - done - n : done;

        if (frac_npu_job_aborted(job)) {
            return;
        }
        memmove(mem + dst + off, mem + src + off, n);
        job->bytes_rd += n;
        job->bytes_wr += n;
    }
}

static uint32_t frac_npu_do_copy(FracJob *job, FracOperand *src, FracOperand *dst)
{
    uint64_t len = job->desc.len;
    g_autofree uint8_t *buf = NULL;
    uint32_t st;

    if (src->kind == FRAC_OPND_DEVMEM && dst->kind == FRAC_OPND_DEVMEM) {
        frac_npu_devmem_move(job, dst->addr, src->addr, len);
        return FRAC_STATUS_OK;
    }
    buf = g_malloc(MIN(len, FRAC_CHUNK));
    for (uint64_t off = 0; off < len; off += FRAC_CHUNK) {
        uint64_t n = MIN(FRAC_CHUNK, len - off);

        if (frac_npu_job_aborted(job)) {
            return FRAC_STATUS_OK;
        }
        st = frac_npu_operand_rw(job, src, off, buf, n, false);
        if (!st) {
            st = frac_npu_operand_rw(job, dst, off, buf, n, true);
        }
        if (st) {
            return st;
        }
    }
    return FRAC_STATUS_OK;
}

static uint32_t frac_npu_do_fill(FracJob *job, FracOperand *dst)
{
    uint64_t len = job->desc.len;
    uint32_t pattern = job->desc.arg[0];
    g_autofree uint8_t *buf = g_malloc(MIN(len, FRAC_CHUNK));
    uint32_t st;

    for (uint64_t i = 0; i < MIN(len, FRAC_CHUNK); i++) {
        buf[i] = pattern >> (8 * (i & 3));
    }
    for (uint64_t off = 0; off < len; off += FRAC_CHUNK) {
        /* FRAC_CHUNK is a multiple of 4, so the pattern stays aligned. */
        if (frac_npu_job_aborted(job)) {
            return FRAC_STATUS_OK;
        }
        st = frac_npu_operand_rw(job, dst, off, buf, MIN(FRAC_CHUNK, len - off), true);
        if (st) {
            return st;
        }
    }
    return FRAC_STATUS_OK;
}

static uint32_t frac_npu_do_crc32c(FracJob *job, FracOperand *src)
{
    uint64_t len = job->desc.len;
    g_autofree uint8_t *buf = g_malloc(MIN(len, FRAC_CHUNK) + 1);
    /* QEMU's crc32c() inverts on the way out: feed it ~crc to chain. */
    uint32_t crc = job->desc.arg[0];
    uint32_t st;

    for (uint64_t off = 0; off < len; off += FRAC_CHUNK) {
        uint64_t n = MIN(FRAC_CHUNK, len - off);

        if (frac_npu_job_aborted(job)) {
            return FRAC_STATUS_OK;
        }
        st = frac_npu_operand_rw(job, src, off, buf, n, false);
        if (st) {
            return st;
        }
        crc = crc32c(~crc, buf, n);
    }
    job->result = crc;
    return FRAC_STATUS_OK;
}

static uint32_t frac_npu_do_gemm(FracJob *job, FracOperand *a, FracOperand *b,
                                 FracOperand *c)
{
    uint32_t m = job->desc.arg[0], n = job->desc.arg[1], k = job->desc.arg[2];
    bool fp = job->desc.arg[3] == FRAC_GEMM_FP32;
    size_t esz = fp ? 4 : 1;
    g_autofree uint8_t *abuf = g_malloc((size_t)m * k * esz);
    g_autofree uint8_t *bbuf = g_malloc((size_t)k * n * esz);
    g_autofree uint32_t *cbuf = g_malloc0((size_t)m * n * 4);
    uint32_t st;

    st = frac_npu_operand_rw(job, a, 0, abuf, (uint64_t)m * k * esz, false);
    if (!st) {
        st = frac_npu_operand_rw(job, b, 0, bbuf, (uint64_t)k * n * esz, false);
    }
    if (st) {
        return st;
    }
    for (uint32_t i = 0; i < m; i++) {
        if (frac_npu_job_aborted(job)) {
            return FRAC_STATUS_OK;
        }
        if (fp) {
            float *crow = (float *)cbuf + (size_t)i * n;

            for (uint32_t p = 0; p < k; p++) {
                uint32_t abits = ldl_le_p(abuf + ((size_t)i * k + p) * 4);
                float av;
                const float *brow = (const float *)bbuf + (size_t)p * n;

                memcpy(&av, &abits, sizeof(av));
                for (uint32_t j = 0; j < n; j++) {
                    crow[j] += av * brow[j];
                }
            }
        } else {
            uint32_t *crow = cbuf + (size_t)i * n;

            for (uint32_t p = 0; p < k; p++) {
                int32_t av = (int8_t)abuf[(size_t)i * k + p];
                const int8_t *brow = (const int8_t *)bbuf + (size_t)p * n;

                for (uint32_t j = 0; j < n; j++) {
                    crow[j] += (uint32_t)(av * (int32_t)brow[j]);
                }
            }
        }
    }
    return frac_npu_operand_rw(job, c, 0, cbuf, (uint64_t)m * n * 4, true);
}

static uint32_t frac_npu_do_timestamp(FracJob *job, FracOperand *dst)
{
    uint64_t le;

    /* When the job runs: its modelled start (the clock itself without a model). */
    job->result = job->q->s->zero_latency ? frac_npu_clock(job->q->s) : job->t_start;
    if (job->desc.len >= 8) {
        le = cpu_to_le64(job->result);
        return frac_npu_operand_rw(job, dst, 0, &le, 8, true);
    }
    return FRAC_STATUS_OK;
}

/* Byte counts of each operand, from a validated descriptor. */
static void frac_npu_job_sizes(const struct frac_desc *d, uint64_t *src,
                               uint64_t *dst, uint64_t *aux)
{
    uint64_t m = d->arg[0], n = d->arg[1], k = d->arg[2];
    uint64_t esz = d->arg[3] == FRAC_GEMM_FP32 ? 4 : 1;

    *src = *dst = *aux = 0;
    switch (d->opcode) {
    case FRAC_OP_COPY:
        *src = *dst = d->len;
        break;
    case FRAC_OP_FILL:
        *dst = d->len;
        break;
    case FRAC_OP_CRC32C:
        *src = d->len;
        break;
    case FRAC_OP_GEMM:
        *src = m * k * esz;
        *aux = k * n * esz;
        *dst = m * n * 4;
        break;
    case FRAC_OP_TIMESTAMP:
        *dst = d->len >= 8 ? 8 : 0;
        break;
    }
}

/* Run the job's work. Called from the worker, or inline from the main loop. */
static void frac_npu_job_execute(FracJob *job)
{
    FracState *s = job->q->s;
    struct frac_desc *d = &job->desc;
    FracOperand src, dst, aux;
    uint64_t ssz, dsz, asz;
    uint64_t t0 = frac_npu_clock(s);

    frac_npu_job_sizes(d, &ssz, &dsz, &asz);
    frac_npu_operand_init(&src, d->src, ssz, d->flags, FRAC_DF_SRC_DEVMEM, FRAC_DF_SRC_SGL);
    frac_npu_operand_init(&dst, d->dst, dsz, d->flags, FRAC_DF_DST_DEVMEM, FRAC_DF_DST_SGL);
    frac_npu_operand_init(&aux, d->aux, asz, d->flags, FRAC_DF_AUX_DEVMEM, FRAC_DF_AUX_SGL);

    job->status = frac_npu_operand_prepare(job, &src);
    if (!job->status) {
        job->status = frac_npu_operand_prepare(job, &dst);
    }
    if (!job->status) {
        job->status = frac_npu_operand_prepare(job, &aux);
    }
    if (job->status) {
        goto out;
    }

    switch (d->opcode) {
    case FRAC_OP_NOP:
        break;
    case FRAC_OP_COPY:
        job->status = frac_npu_do_copy(job, &src, &dst);
        break;
    case FRAC_OP_FILL:
        job->status = frac_npu_do_fill(job, &dst);
        break;
    case FRAC_OP_CRC32C:
        job->status = frac_npu_do_crc32c(job, &src);
        break;
    case FRAC_OP_GEMM:
        job->status = frac_npu_do_gemm(job, &src, &aux, &dst);
        break;
    case FRAC_OP_TIMESTAMP:
        job->status = frac_npu_do_timestamp(job, &dst);
        break;
    }
out:
    frac_npu_operand_free(&src);
    frac_npu_operand_free(&dst);
    frac_npu_operand_free(&aux);
    if (s->zero_latency) {
        /* No model: the device clock at the real start and end. */
        job->t_start = t0;
        job->t_end = frac_npu_clock(s);
        if (d->opcode == FRAC_OP_GEMM) {
            job->compute_ns = job->t_end - t0;
        } else {
            job->dma_ns = job->t_end - t0;
        }
    }
}

static void *frac_npu_worker(void *opaque)
{
    FracQueue *q = opaque;

    rcu_register_thread();
    qemu_mutex_lock(&q->lock);
    for (;;) {
        FracJob *job;

        while (!q->stop && QSIMPLEQ_EMPTY(&q->work)) {
            qemu_cond_wait(&q->cond, &q->lock);
        }
        if (q->stop) {
            break;
        }
        job = QSIMPLEQ_FIRST(&q->work);
        QSIMPLEQ_REMOVE_HEAD(&q->work, link);
        qemu_mutex_unlock(&q->lock);

        if (!frac_npu_job_aborted(job)) {
            frac_npu_job_execute(job);
        }

        qemu_mutex_lock(&q->lock);
        QSIMPLEQ_INSERT_TAIL(&q->done, job, link);
        qemu_bh_schedule(q->done_bh);
    }
    qemu_mutex_unlock(&q->lock);
    rcu_unregister_thread();
    return NULL;
}

/* ---- Queue: fetch, validate, complete (main loop) ---------------------- */

static uint32_t frac_npu_devmem_check(FracState *s, FracJob *job, uint8_t flag,
                                      uint64_t off, uint64_t len)
{
    if (!(job->desc.flags & flag) || !len) {
        return FRAC_STATUS_OK;
    }
    if (off >= s->mem_size || len > s->mem_size - off) {
        job->err_addr = off;
        FRAC_GUEST_ERR(frac_npu_err_devmem_range,
                       "q%u job 0x%" PRIx64 " device memory [0x%" PRIx64
                       ", +0x%" PRIx64 ") out of range",
                       job->q->id, job->desc.job_id, off, len);
        return FRAC_STATUS_DEVMEM_RANGE;
    }
    return FRAC_STATUS_OK;
}

static uint32_t frac_npu_validate(FracState *s, FracJob *job)
{
    struct frac_desc *d = &job->desc;
    uint64_t ssz, dsz, asz;
    uint32_t st;

    if (d->opcode >= FRAC_OP_MAX) {
        return FRAC_STATUS_BAD_OPCODE;
    }
    if (d->rsvd0 || d->rsvd1 || (d->flags & ~FRAC_DF_VALID_MASK)) {
        return FRAC_STATUS_BAD_DESC;
    }
    if ((d->flags & FRAC_DF_SRC_DEVMEM && d->flags & FRAC_DF_SRC_SGL) ||
        (d->flags & FRAC_DF_DST_DEVMEM && d->flags & FRAC_DF_DST_SGL) ||
        (d->flags & FRAC_DF_AUX_DEVMEM && d->flags & FRAC_DF_AUX_SGL)) {
        return FRAC_STATUS_BAD_DESC;
    }
    if (d->len > FRAC_MAX_XFER) {
        return FRAC_STATUS_BAD_DESC;
    }
    if (d->opcode == FRAC_OP_GEMM) {
        for (int i = 0; i < 3; i++) {
            if (!d->arg[i] || d->arg[i] > FRAC_GEMM_MAX_DIM) {
                return FRAC_STATUS_BAD_DESC;
            }
        }
        if (d->arg[3] > FRAC_GEMM_INT8) {
            return FRAC_STATUS_BAD_DESC;
        }
    } else if (d->opcode != FRAC_OP_FILL && d->opcode != FRAC_OP_CRC32C &&
               (d->arg[0] || d->arg[1] || d->arg[2] || d->arg[3])) {
        return FRAC_STATUS_BAD_DESC;
    } else if ((d->opcode == FRAC_OP_FILL || d->opcode == FRAC_OP_CRC32C) &&
               (d->arg[1] || d->arg[2] || d->arg[3])) {
        return FRAC_STATUS_BAD_DESC;
    }
    frac_npu_job_sizes(d, &ssz, &dsz, &asz);
    st = frac_npu_devmem_check(s, job, FRAC_DF_SRC_DEVMEM, d->src, ssz);
    if (!st) {
        st = frac_npu_devmem_check(s, job, FRAC_DF_DST_DEVMEM, d->dst, dsz);
    }
    if (!st) {
        st = frac_npu_devmem_check(s, job, FRAC_DF_AUX_DEVMEM, d->aux, asz);
    }
    return st;
}

/* Timing model: when the job starts and ends on the device clock. */
static void frac_npu_job_model(FracState *s, FracJob *job, uint64_t now)
{
    FracQueue *q = job->q;
    uint64_t ssz, dsz, asz, bytes, start;

    if (s->zero_latency) {
        job->deadline = 0;
        return;
    }
    frac_npu_job_sizes(&job->desc, &ssz, &dsz, &asz);
    bytes = job->status ? 0 : ssz + dsz + asz;
    job->dma_ns = bytes * 1000 / s->dma_bw_mbps;
    if (!job->status && job->desc.opcode == FRAC_OP_GEMM) {
        uint64_t flops = 2ULL * job->desc.arg[0] * job->desc.arg[1] * job->desc.arg[2];

        job->compute_ns = flops / s->compute_gflops;
    }
    start = MAX(now, (uint64_t)q->busy_until);
    job->t_start = start;
    job->t_end = start + job->dma_ns + job->compute_ns + job->extra_ns;
    frac_npu_telemetry_update(s);
    frac_npu_busy_add(s, start, start + job->dma_ns + job->compute_ns);
    q->busy_until = job->t_end;
    job->deadline = frac_npu_dev_to_virt(s, job->t_end + s->completion_latency_ns);
}

/* Does the validated job do host DMA (the kind an injected fault hits)? */
static bool frac_npu_job_host_dma(const struct frac_desc *d)
{
    uint64_t ssz, dsz, asz;

    frac_npu_job_sizes(d, &ssz, &dsz, &asz);
    return (ssz && !(d->flags & FRAC_DF_SRC_DEVMEM)) ||
           (dsz && !(d->flags & FRAC_DF_DST_DEVMEM)) ||
           (asz && !(d->flags & FRAC_DF_AUX_DEVMEM));
}

static bool frac_npu_job_is_small(FracJob *job)
{
    struct frac_desc *d = &job->desc;

    if (d->opcode == FRAC_OP_GEMM) {
        return (uint64_t)d->arg[0] * d->arg[1] * d->arg[2] <= FRAC_INLINE_MACS;
    }
    return d->len <= FRAC_INLINE_BYTES &&
           !(d->flags & (FRAC_DF_SRC_SGL | FRAC_DF_DST_SGL | FRAC_DF_AUX_SGL));
}

static void frac_npu_job_free(FracJob *job)
{
    g_free(job);
}

static void frac_npu_queue_fetch(FracQueue *q)
{
    FracState *s = q->s;
    PCIDevice *pdev = PCI_DEVICE(s);

    if (s->exiting || !(s->control & FRAC_CTRL_ENABLE) ||
        (s->status & FRAC_STS_FATAL) ||
        !(q->status & FRAC_QSTS_ENABLED) || q->hung) {
        return;
    }
    while (q->sq_head != q->fetch_tail && q->inflight < q->size - 1) {
        uint64_t addr = q->sq_base + (uint64_t)q->sq_head * sizeof(struct frac_desc);
        FracJob *job = g_new0(FracJob, 1);
        struct frac_desc *d = &job->desc;
        uint64_t now = frac_npu_clock(s);

        if (frac_npu_own_bar(s, addr, sizeof(*d), NULL) ||
            pci_dma_read(pdev, addr, d, sizeof(*d)) != MEMTX_OK) {
            FRAC_GUEST_ERR(frac_npu_err_sq_fetch,
                           "q%u descriptor fetch from 0x%" PRIx64 " failed",
                           q->id, addr);
            g_free(job);
            q->status |= FRAC_QSTS_ERROR;
            frac_npu_queue_disable(q);
            frac_npu_error(s, q->id, FRAC_ERR_DMA_FAULT, addr, true);
            return;
        }
        d->rsvd0 = le16_to_cpu(d->rsvd0);
        d->rsvd1 = le32_to_cpu(d->rsvd1);
        d->job_id = le64_to_cpu(d->job_id);
        d->src = le64_to_cpu(d->src);
        d->dst = le64_to_cpu(d->dst);
        d->aux = le64_to_cpu(d->aux);
        d->len = le64_to_cpu(d->len);
        for (int i = 0; i < 4; i++) {
            d->arg[i] = le32_to_cpu(d->arg[i]);
        }

        q->sq_head = (q->sq_head + 1) & (q->size - 1);
        job->q = q;
        job->gen = q->gen;
        job->sq_head = q->sq_head;
        q->inflight++;
        QTAILQ_INSERT_TAIL(&q->pending, job, pending);
        trace_frac_npu_fetch(q->id, q->sq_head, d->job_id,
                             d->opcode < FRAC_OP_MAX ? frac_npu_op_name[d->opcode] : "?",
                             d->flags, d->len);

        job->status = frac_npu_validate(s, job);
        if (job->status) {
            FRAC_GUEST_ERR(frac_npu_bad_desc,
                           "q%u job 0x%" PRIx64 " rejected, status %u",
                           q->id, d->job_id, job->status);
        } else if (q->fi_error_jobs) {
            q->fi_error_jobs--;
            job->status = FRAC_STATUS_INJECTED;
            job->inject_error = true;
        } else if (q->fi_dma_jobs && frac_npu_job_host_dma(d)) {
            q->fi_dma_jobs--;
            job->inject_dma = true;
        }
        if (q->fi_latency_ms) {
            job->extra_ns = (uint64_t)q->fi_latency_ms * SCALE_MS;
            q->fi_latency_ms = 0;
        }
        frac_npu_job_model(s, job, now);

        if (job->status) {
            job->finished = true;
            if (s->zero_latency) {
                job->t_start = job->t_end = frac_npu_clock(s);
            }
        } else if (!q->outstanding && frac_npu_job_is_small(job)) {
            frac_npu_job_execute(job);
            job->finished = true;
        } else {
            job->in_worker = true;
            q->outstanding++;
            qemu_mutex_lock(&q->lock);
            QSIMPLEQ_INSERT_TAIL(&q->work, job, link);
            qemu_cond_signal(&q->cond);
            qemu_mutex_unlock(&q->lock);
        }
    }
    frac_npu_queue_post(q);
}

static void frac_npu_fetch_bh(void *opaque)
{
    frac_npu_queue_fetch(opaque);
}

/*
 * Timers run like the guarded BHs: an MSI-X message or DMA aimed at our own
 * BAR0 must not re-enter the MMIO handlers (a RESET written to CONTROL from
 * inside frac_npu_queue_post frees the job being posted).
 */
static bool frac_npu_guard_engage(FracState *s)
{
    MemReentrancyGuard *g = &DEVICE(s)->mem_reentrancy_guard;
    bool was = g->engaged_in_io;

    g->engaged_in_io = true;
    return was;
}

static void frac_npu_guard_restore(FracState *s, bool was)
{
    DEVICE(s)->mem_reentrancy_guard.engaged_in_io = was;
}

static void frac_npu_guarded(FracQueue *q, void (*fn)(FracQueue *q))
{
    bool was = frac_npu_guard_engage(q->s);

    fn(q);
    frac_npu_guard_restore(q->s, was);
}

/* The fetch latency of the oldest doorbells is over: fetch up to them. */
static void frac_npu_fetch_due(FracQueue *q)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    unsigned n = 0;

    while (n < q->db_npending && q->db_pending[n].due <= now) {
        q->fetch_tail = q->db_pending[n++].tail;
    }
    q->db_npending -= n;
    memmove(q->db_pending, q->db_pending + n,
            q->db_npending * sizeof(q->db_pending[0]));
    if (q->db_npending) {
        timer_mod(q->fetch_timer, q->db_pending[0].due);
    }
    frac_npu_queue_fetch(q);
}

static void frac_npu_fetch_timer(void *opaque)
{
    frac_npu_guarded(opaque, frac_npu_fetch_due);
}

/*
 * An SQ doorbell: its descriptors are fetched fetch-latency-ns after it, not
 * with an earlier doorbell's. More than FRAC_DB_PENDING doorbells within one
 * latency merge into the last: the older ones then come late, never early.
 */
static void frac_npu_queue_doorbell(FracQueue *q)
{
    FracState *s = q->s;
    int64_t due = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + s->fetch_latency_ns;

    if (s->zero_latency || !s->fetch_latency_ns) {
        q->fetch_tail = q->sq_tail;
        qemu_bh_schedule(q->fetch_bh);
        return;
    }
    if (q->db_npending == FRAC_DB_PENDING) {
        q->db_npending--;
    }
    q->db_pending[q->db_npending].tail = q->sq_tail;
    q->db_pending[q->db_npending].due = due;
    if (!q->db_npending++) {
        timer_mod(q->fetch_timer, due);
    }
}

/* Go on fetching what is due (ring space freed, CONTROL.ENABLE set). */
static void frac_npu_queue_kick(FracQueue *q)
{
    if (q->sq_head != q->fetch_tail) {
        qemu_bh_schedule(q->fetch_bh);
    }
}

static void frac_npu_queue_irq(FracQueue *q)
{
    q->coal_pending = 0;
    timer_del(q->coal_timer);
    frac_npu_raise(q->s, q->id);
}

static void frac_npu_coal_fire(FracQueue *q)
{
    if (!q->s->exiting && q->coal_pending) {
        frac_npu_queue_irq(q);
    }
}

static void frac_npu_coal_timer(void *opaque)
{
    frac_npu_guarded(opaque, frac_npu_coal_fire);
}

/*
 * Write a completion record: everything but the dword holding sq_head and
 * the phase flags first, that dword last, so a driver that sees the phase
 * flip sees the whole record (NVMe puts its phase in the CQE's last dword
 * for the same reason).
 */
static bool frac_npu_cqe_write(FracState *s, uint64_t addr,
                           const struct frac_cqe *cqe)
{
    static const struct {
        unsigned off, len;
    } part[] = {
        { 0, offsetof(struct frac_cqe, sq_head) },
        { offsetof(struct frac_cqe, err_addr),
          sizeof(*cqe) - offsetof(struct frac_cqe, err_addr) },
        { offsetof(struct frac_cqe, sq_head), 4 },
    };

    QEMU_BUILD_BUG_ON(offsetof(struct frac_cqe, flags) + 2 !=
                      offsetof(struct frac_cqe, err_addr));
    for (int i = 0; i < ARRAY_SIZE(part); i++) {
        if (pci_dma_write(PCI_DEVICE(s), addr + part[i].off,
                          (const uint8_t *)cqe + part[i].off,
                          part[i].len) != MEMTX_OK) {
            return false;
        }
    }
    return true;
}

static bool frac_npu_post_one(FracQueue *q, FracJob *job)
{
    FracState *s = q->s;
    struct frac_cqe cqe = { 0 };
    uint64_t addr = q->cq_base + (uint64_t)q->cq_tail * sizeof(cqe);
    uint32_t count = FRAC_COAL_COUNT(q->coal);
    uint32_t usecs = FRAC_COAL_USECS(q->coal);

    if (((q->cq_tail + 1) & (q->size - 1)) == q->cq_head) {
        q->cq_stalled = true;
        return false;
    }
    cqe.job_id = cpu_to_le64(job->desc.job_id);
    cqe.result = cpu_to_le64(job->result);
    cqe.t_start = cpu_to_le64(job->t_start);
    cqe.t_end = cpu_to_le64(job->t_end);
    cqe.status = cpu_to_le32(job->status);
    cqe.sq_head = cpu_to_le16(job->sq_head);
    cqe.flags = cpu_to_le16(q->phase ? FRAC_CQE_PHASE : 0);
    cqe.err_addr = cpu_to_le64(job->err_addr);
    if (frac_npu_own_bar(s, addr, sizeof(cqe), NULL) ||
        !frac_npu_cqe_write(s, addr, &cqe)) {
        FRAC_GUEST_ERR(frac_npu_err_cq_write,
                       "q%u completion write to 0x%" PRIx64 " failed",
                       q->id, addr);
        /* frac_npu_queue_post disables the queue once out of its loop. */
        q->status |= FRAC_QSTS_ERROR;
        q->status &= ~FRAC_QSTS_ENABLED;
        frac_npu_error(s, q->id, FRAC_ERR_DMA_FAULT, addr, true);
        return false;
    }
    q->cq_tail = (q->cq_tail + 1) & (q->size - 1);
    if (!q->cq_tail) {
        q->phase = !q->phase;
    }
    trace_frac_npu_complete(q->id, job->desc.job_id, job->status,
                            job->t_start, job->t_end);

    q->jobs++;
    if (job->status) {
        s->jobs_err++;
        if (job->status == FRAC_STATUS_DMA_FAULT) {
            frac_npu_error(s, q->id, FRAC_ERR_DMA_FAULT, job->err_addr, false);
        } else if (job->status != FRAC_STATUS_INJECTED) {
            frac_npu_error(s, q->id, FRAC_ERR_BAD_DESC, job->err_addr, false);
        }
    } else {
        s->jobs_done++;
    }
    s->bytes_rd += job->bytes_rd;
    s->bytes_wr += job->bytes_wr;
    s->busy_ns[FRAC_ENGINE_DMA] += job->dma_ns;
    s->busy_ns[FRAC_ENGINE_COMPUTE] += job->compute_ns;
    if (s->zero_latency) {
        /* No model: the measured time, known only now. */
        frac_npu_telemetry_update(s);
        frac_npu_busy_add(s, job->t_start, job->t_end);
    }

    if (job->desc.flags & FRAC_DF_NO_IRQ) {
        return true;
    }
    q->coal_pending++;
    if (count <= 1 || q->coal_pending >= count) {
        frac_npu_queue_irq(q);
    } else if (usecs && !timer_pending(q->coal_timer)) {
        timer_mod(q->coal_timer,
                  qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + usecs * SCALE_US);
    }
    return true;
}

/* Post finished jobs in fetch order, each no earlier than its deadline. */
static void frac_npu_queue_post(FracQueue *q)
{
    FracState *s = q->s;
    FracJob *job;
    bool posted = false;

    if (s->exiting || (s->status & FRAC_STS_FATAL) || q->hung) {
        return;
    }
    while ((job = QTAILQ_FIRST(&q->pending)) && job->finished) {
        if (job->deadline > qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL)) {
            timer_mod(q->post_timer, job->deadline);
            break;
        }
        if (!(q->status & FRAC_QSTS_ENABLED) || !frac_npu_post_one(q, job)) {
            break;
        }
        QTAILQ_REMOVE(&q->pending, job, pending);
        frac_npu_job_free(job);
        q->inflight--;
        posted = true;
    }
    if (!(q->status & FRAC_QSTS_ENABLED) && (q->ctrl & FRAC_QCTRL_ENABLE)) {
        frac_npu_queue_disable(q); /* the CQ stopped decoding */
        return;
    }
    if (posted) {
        frac_npu_queue_kick(q);
    }
}

static void frac_npu_post_timer(void *opaque)
{
    frac_npu_guarded(opaque, frac_npu_queue_post);
}

static void frac_npu_done_bh(void *opaque)
{
    FracQueue *q = opaque;
    QSIMPLEQ_HEAD(, FracJob) done = QSIMPLEQ_HEAD_INITIALIZER(done);
    FracJob *job;

    if (q->s->exiting) {
        return; /* frac_npu_exit frees what the worker handed back */
    }
    qemu_mutex_lock(&q->lock);
    QSIMPLEQ_CONCAT(&done, &q->done);
    qemu_mutex_unlock(&q->lock);

    while ((job = QSIMPLEQ_FIRST(&done))) {
        QSIMPLEQ_REMOVE_HEAD(&done, link);
        q->outstanding--;
        if (job->gen != q->gen) {
            /* The queue was reset while the job ran: drop it. */
            frac_npu_job_free(job);
            continue;
        }
        job->in_worker = false;
        job->finished = true;
    }
    if (!q->outstanding) {
        frac_npu_queue_drained(q);
    }
    frac_npu_queue_post(q);
}

/*
 * Drop every job of @q (docs/hw-spec.md 8, quiesce handshake). The jobs
 * waiting for the worker, the ones it has finished and the ones in the main
 * loop are freed here; the one the worker is running sees the new generation
 * at its next chunk and comes back through frac_npu_done_bh, which frees it.
 * Nothing of the old generation is posted after this. q->outstanding stays
 * above zero until that last job is back.
 */
static void frac_npu_queue_abort(FracQueue *q)
{
    QSIMPLEQ_HEAD(, FracJob) drop = QSIMPLEQ_HEAD_INITIALIZER(drop);
    FracJob *job, *next;

    qatomic_set(&q->gen, q->gen + 1);
    qemu_mutex_lock(&q->lock);
    QSIMPLEQ_CONCAT(&drop, &q->work);
    QSIMPLEQ_CONCAT(&drop, &q->done);
    qemu_mutex_unlock(&q->lock);
    /* pending holds every job of the old generation, in_worker or not. */
    QTAILQ_FOREACH_SAFE(job, &q->pending, pending, next) {
        QTAILQ_REMOVE(&q->pending, job, pending);
        if (!job->in_worker) {
            frac_npu_job_free(job);
        }
    }
    while ((job = QSIMPLEQ_FIRST(&drop))) {
        QSIMPLEQ_REMOVE_HEAD(&drop, link);
        q->outstanding--;
        frac_npu_job_free(job);
    }
    timer_del(q->fetch_timer);
    timer_del(q->post_timer);
    timer_del(q->coal_timer);
    q->inflight = 0;
    q->db_npending = 0;
    q->busy_until = 0;
    q->cq_stalled = false;
    q->coal_pending = 0;
}

/* The queue registers and model state at their power-on values. */
static void frac_npu_queue_clear(FracQueue *q)
{
    q->sq_base = q->cq_base = 0;
    q->size = 0;
    q->ctrl = q->status = 0;
    q->sq_head = q->sq_tail = q->cq_head = q->cq_tail = 0;
    q->fetch_tail = 0;
    q->phase = true;
    q->coal = 0;
    q->jobs = 0;
    q->drain = FRAC_DRAIN_NONE;
    q->hung = false;
    q->fi_drop_irqs = q->fi_error_jobs = q->fi_dma_jobs = q->fi_latency_ms = 0;
}

/*
 * Queue reset: drop the jobs and stop the queue at once; the registers go to
 * their reset values, and STATUS.RESETTING / CTRL.RESET clear, only once the
 * worker has given back the job it may be running (frac_npu_queue_drained).
 */
static void frac_npu_queue_reset(FracQueue *q)
{
    trace_frac_npu_queue_reset(q->id, q->inflight, q->outstanding);
    frac_npu_queue_abort(q);
    q->status &= ~FRAC_QSTS_ENABLED;
    q->ctrl &= ~FRAC_QCTRL_ENABLE;
    q->drain = FRAC_DRAIN_RESET;
    if (!q->outstanding) {
        frac_npu_queue_drained(q);
    }
}

static void frac_npu_reset_check(FracState *s);

/* The worker has no job of @q any more: finish what waited for that. */
static void frac_npu_queue_drained(FracQueue *q)
{
    switch (q->drain) {
    case FRAC_DRAIN_NONE:
        break;
    case FRAC_DRAIN_DISABLE:
        trace_frac_npu_queue_drained(q->id, "disable");
        q->drain = FRAC_DRAIN_NONE;
        break;
    case FRAC_DRAIN_RESET:
        trace_frac_npu_queue_drained(q->id, "reset");
        frac_npu_queue_clear(q);
        break;
    }
    frac_npu_reset_check(q->s);
}

/*
 * Enable: check the ring and start at slot 0 of both rings, phase 1 (a
 * queue never goes on where it stopped). A refused enable leaves the queue
 * disabled, CTRL.ENABLE reading 0, with STATUS.ERROR set.
 */
static void frac_npu_queue_enable(FracQueue *q)
{
    bool ok = q->size >= FRAC_RING_MIN_ENTRIES &&
              q->size <= FRAC_RING_MAX_ENTRIES && is_power_of_2(q->size) &&
              !(q->sq_base & 63) && !(q->cq_base & 63) &&
              q->sq_base && q->cq_base;

    if (!ok) {
        FRAC_GUEST_ERR(frac_npu_err_bad_ring,
                       "q%u enable with bad ring: size %u sq 0x%" PRIx64
                       " cq 0x%" PRIx64, q->id, q->size, q->sq_base,
                       q->cq_base);
        q->status |= FRAC_QSTS_ERROR;
        q->ctrl &= ~FRAC_QCTRL_ENABLE;
        return;
    }
    q->sq_head = q->sq_tail = q->cq_head = q->cq_tail = 0;
    q->fetch_tail = 0;
    q->db_npending = 0;
    q->phase = true;
    q->busy_until = 0;
    q->ctrl |= FRAC_QCTRL_ENABLE;
    q->status = FRAC_QSTS_ENABLED;
    trace_frac_npu_queue_enable(q->id, q->size, q->sq_base, q->cq_base);
}

/*
 * Disable (CTRL.ENABLE written 0, or a ring that stopped decoding): stop
 * fetching and drop what was fetched, as a reset does; with a job on the
 * worker the queue reads RESETTING until it is back. Registers are kept.
 */
static void frac_npu_queue_disable(FracQueue *q)
{
    bool busy = q->inflight || q->outstanding;

    q->ctrl &= ~FRAC_QCTRL_ENABLE;
    q->status &= ~FRAC_QSTS_ENABLED;
    if (!busy) {
        return;
    }
    trace_frac_npu_queue_reset(q->id, q->inflight, q->outstanding);
    frac_npu_queue_abort(q);
    if (q->outstanding) {
        q->drain = FRAC_DRAIN_DISABLE;
    }
}

/* No DMA of any queue in progress or pending (STATUS.QUIESCED). */
static bool frac_npu_quiesced(FracState *s)
{
    if (s->resetting) {
        return false;
    }
    for (unsigned i = 0; i < s->num_queues; i++) {
        FracQueue *q = &s->q[i];

        if (q->outstanding || q->inflight || q->drain != FRAC_DRAIN_NONE) {
            return false;
        }
    }
    return true;
}

/* The global registers and counters at their power-on values. */
static void frac_npu_reset_regs(FracState *s)
{
    s->control = 0;
    s->status = FRAC_STS_READY;
    s->dma_bits = 64;
    qatomic_set(&s->dma_mask, UINT64_MAX);
    s->scratch = 0;
    s->err_status = s->err_queue = 0;
    s->err_addr = 0;
    s->int_status = 0;
    s->int_mask = 0;
    memset(s->busy_ns, 0, sizeof(s->busy_ns));
    s->jobs_done = s->jobs_err = 0;
    s->bytes_rd = s->bytes_wr = 0;
    s->irqs = 0;
    s->nbusy = 0;
    s->therm_t = frac_npu_clock(s);
    s->util_ewma = 0;
    frac_npu_update_intx(s);
}

/* A global reset waits for every queue's reset; then the rest is reset. */
static void frac_npu_reset_check(FracState *s)
{
    if (!s->resetting) {
        return;
    }
    for (unsigned i = 0; i < s->num_queues; i++) {
        if (s->q[i].drain != FRAC_DRAIN_NONE) {
            return;
        }
    }
    s->resetting = false;
    frac_npu_reset_regs(s);
    trace_frac_npu_reset_done();
}

/*
 * Global reset (CONTROL.RESET, FLR, machine reset): READY and QUIESCED clear
 * and every queue resets; CONTROL.RESET reads 1 until they all have.
 */
static void frac_npu_reset_all(FracState *s, const char *why)
{
    trace_frac_npu_reset(why);
    s->status &= ~FRAC_STS_READY;
    /* Start every queue's reset before one that is over can end ours. */
    s->resetting = false;
    for (unsigned i = 0; i < s->num_queues; i++) {
        frac_npu_queue_reset(&s->q[i]);
    }
    s->resetting = true;
    frac_npu_reset_check(s);
}

/* ---- Telemetry --------------------------------------------------------- */

/* Fraction of [t0, t0 + FRAC_THERMAL_STEP_NS) that some job was busy. */
static double frac_npu_busy_share(FracState *s, int64_t t0)
{
    int64_t t1 = t0 + FRAC_THERMAL_STEP_NS, busy = 0;

    for (unsigned i = 0; i < s->nbusy && s->busy[i].start < t1; i++) {
        int64_t a = MAX(s->busy[i].start, t0), b = MIN(s->busy[i].end, t1);

        busy += b > a ? b - a : 0;
    }
    return (double)busy / FRAC_THERMAL_STEP_NS;
}

/* Step the thermal filter up to the last grid point at or before now. */
static void frac_npu_telemetry_update(FracState *s)
{
    int64_t now = frac_npu_clock(s);
    double alpha = -expm1(-(double)FRAC_THERMAL_STEP_NS / FRAC_THERMAL_TAU_NS);

    while (s->therm_t + FRAC_THERMAL_STEP_NS <= now) {
        int64_t idle_until = s->nbusy ? MIN(now, s->busy[0].start) : now;
        int64_t k = (idle_until - s->therm_t) / FRAC_THERMAL_STEP_NS;
        unsigned drop = 0;

        if (k > 0) {
            /* Idle steps in one go: the state decays towards 0. */
            s->util_ewma *= exp(-(double)(k * FRAC_THERMAL_STEP_NS) /
                                FRAC_THERMAL_TAU_NS);
            s->therm_t += k * FRAC_THERMAL_STEP_NS;
            continue;
        }
        s->util_ewma += alpha * (frac_npu_busy_share(s, s->therm_t) -
                                 s->util_ewma);
        s->therm_t += FRAC_THERMAL_STEP_NS;
        while (drop < s->nbusy && s->busy[drop].end <= s->therm_t) {
            drop++;
        }
        s->nbusy -= drop;
        memmove(s->busy, s->busy + drop, s->nbusy * sizeof(s->busy[0]));
    }
}

/*
 * A job's modelled busy time, added when the model schedules it: the
 * temperature follows the engines as they run, not as jobs complete.
 */
static void frac_npu_busy_add(FracState *s, int64_t start, int64_t end)
{
    unsigned i;

    start = MAX(start, s->therm_t);
    if (end <= start) {
        return;
    }
    /* Intervals arrive nearly in order: find the place from the end. */
    for (i = s->nbusy; i && s->busy[i - 1].start > start; i--) {
        /* nothing */
    }
    if (i && s->busy[i - 1].end >= start) {
        i--; /* overlaps the one before: merge into it */
        s->busy[i].end = MAX(s->busy[i].end, end);
    } else if (s->nbusy == FRAC_BUSY_MAX) {
        /* Full: count the gap before it as busy rather than lose it. */
        i = i ? i - 1 : 0;
        s->busy[i].start = MIN(s->busy[i].start, start);
        s->busy[i].end = MAX(s->busy[i].end, end);
    } else {
        memmove(s->busy + i + 1, s->busy + i,
                (s->nbusy - i) * sizeof(s->busy[0]));
        s->busy[i].start = start;
        s->busy[i].end = end;
        s->nbusy++;
    }
    /* Swallow the following intervals the merged one now reaches. */
    while (i + 1 < s->nbusy && s->busy[i + 1].start <= s->busy[i].end) {
        s->busy[i].end = MAX(s->busy[i].end, s->busy[i + 1].end);
        memmove(s->busy + i + 1, s->busy + i + 2,
                (s->nbusy - i - 2) * sizeof(s->busy[0]));
        s->nbusy--;
    }
}

/* ---- MMIO -------------------------------------------------------------- */

static uint64_t frac_npu_lo(uint64_t v)
{
    return (uint32_t)v;
}

static uint64_t frac_npu_qreg_read(FracQueue *q, hwaddr r)
{
    switch (r) {
    case FRAC_Q_SQ_BASE_LO:
        return frac_npu_lo(q->sq_base);
    case FRAC_Q_SQ_BASE_HI:
        return q->sq_base >> 32;
    case FRAC_Q_SIZE:
        return q->size;
    case FRAC_Q_CTRL:
        return q->ctrl | (q->drain == FRAC_DRAIN_RESET ? FRAC_QCTRL_RESET : 0);
    case FRAC_Q_CQ_BASE_LO:
        return frac_npu_lo(q->cq_base);
    case FRAC_Q_CQ_BASE_HI:
        return q->cq_base >> 32;
    case FRAC_Q_STATUS:
        return q->status | (q->hung ? FRAC_QSTS_HUNG : 0) |
               (q->inflight ? FRAC_QSTS_BUSY : 0) |
               (q->drain != FRAC_DRAIN_NONE ? FRAC_QSTS_RESETTING : 0);
    case FRAC_Q_SQ_HEAD:
        return q->sq_head;
    case FRAC_Q_SQ_TAIL:
        return q->sq_tail;
    case FRAC_Q_CQ_TAIL:
        return q->cq_tail;
    case FRAC_Q_CQ_HEAD:
        return q->cq_head;
    case FRAC_Q_IRQ_COAL:
        return q->coal;
    case FRAC_Q_VECTOR:
        return q->id;
    case FRAC_Q_JOBS:
        return q->jobs;
    }
    return 0;
}

/*
 * The 64-bit clock and counters: @lo is the offset of a LO half. Reading LO
 * latches HI (docs/hw-spec.md 3), so a LO, HI pair of reads is consistent.
 */
static bool frac_npu_counter(FracState *s, hwaddr lo, uint64_t *val,
                             unsigned *slot)
{
    switch (lo) {
    case FRAC_REG_CLOCK_LO:
        *val = frac_npu_clock(s);
        *slot = 0;
        return true;
    case FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_DMA):
    case FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_COMPUTE):
        *val = s->busy_ns[(lo - FRAC_REG_BUSY_NS_LO(0)) / 8];
        break;
    case FRAC_REG_JOBS_DONE_LO:
        *val = s->jobs_done;
        break;
    case FRAC_REG_JOBS_ERR_LO:
        *val = s->jobs_err;
        break;
    case FRAC_REG_BYTES_RD_LO:
        *val = s->bytes_rd;
        break;
    case FRAC_REG_BYTES_WR_LO:
        *val = s->bytes_wr;
        break;
    case FRAC_REG_IRQS_LO:
        *val = s->irqs;
        break;
    default:
        return false;
    }
    *slot = 1 + (lo - FRAC_REG_BUSY_NS_LO(0)) / 8;
    return true;
}

static uint64_t frac_npu_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    FracState *s = opaque;
    uint64_t v = 0, c;
    unsigned slot;

    if (s->exiting) {
        return 0;
    }
    if (addr >= FRAC_QREGS_BASE &&
        addr < FRAC_QREG(s->num_queues, 0)) {
        unsigned qid = (addr - FRAC_QREGS_BASE) / FRAC_QREGS_STRIDE;

        v = frac_npu_qreg_read(&s->q[qid], (addr - FRAC_QREGS_BASE) % FRAC_QREGS_STRIDE);
        trace_frac_npu_mmio_read(addr, v);
        return v;
    }

    if (frac_npu_counter(s, addr & ~4ULL, &c, &slot)) {
        if (addr & 4) {
            v = s->hi_latch[slot];
        } else {
            s->hi_latch[slot] = c >> 32;
            v = frac_npu_lo(c);
        }
        trace_frac_npu_mmio_read(addr, v);
        return v;
    }
    switch (addr) {
    case FRAC_REG_ID:
        v = FRAC_ID_MAGIC;
        break;
    case FRAC_REG_VERSION:
        v = FRAC_VERSION_MAJOR << 16 | FRAC_VERSION_MINOR;
        break;
    case FRAC_REG_CAP0:
        v = s->num_queues | (ctz32(FRAC_RING_MAX_ENTRIES) << 8) |
            (FRAC_NUM_ENGINES << 16);
        break;
    case FRAC_REG_CAP1:
        v = FRAC_FEAT_GEMM_FP32 | FRAC_FEAT_GEMM_INT8 | FRAC_FEAT_CRC32C |
            FRAC_FEAT_SGL | FRAC_FEAT_DEVMEM | FRAC_FEAT_TIMESTAMP |
            (s->fault_injection ? FRAC_FEAT_FAULT_INJ : 0);
        break;
    case FRAC_REG_DEVMEM_SIZE_LO:
        v = frac_npu_lo(s->mem_size);
        break;
    case FRAC_REG_DEVMEM_SIZE_HI:
        v = s->mem_size >> 32;
        break;
    case FRAC_REG_GEMM_MAX_DIM:
        v = FRAC_GEMM_MAX_DIM;
        break;
    case FRAC_REG_SGL_MAX:
        v = FRAC_SGL_MAX_ENTRIES;
        break;
    case FRAC_REG_CONTROL:
        v = s->control | (s->resetting ? FRAC_CTRL_RESET : 0);
        break;
    case FRAC_REG_STATUS:
        v = s->status | (s->control & FRAC_CTRL_ENABLE ? FRAC_STS_ENABLED : 0) |
            (frac_npu_quiesced(s) ? FRAC_STS_QUIESCED : 0);
        break;
    case FRAC_REG_DMA_BITS:
        v = s->dma_bits;
        break;
    case FRAC_REG_SCRATCH:
        v = s->scratch;
        break;
    case FRAC_REG_ERR_STATUS:
        v = s->err_status;
        break;
    case FRAC_REG_ERR_QUEUE:
        v = s->err_queue;
        break;
    case FRAC_REG_ERR_ADDR_LO:
        v = frac_npu_lo(s->err_addr);
        break;
    case FRAC_REG_ERR_ADDR_HI:
        v = s->err_addr >> 32;
        break;
    case FRAC_REG_INT_STATUS:
        v = s->int_status;
        break;
    case FRAC_REG_INT_MASK:
        v = s->int_mask;
        break;
    case FRAC_REG_ERR_VECTOR:
        v = s->num_queues;
        break;
    case FRAC_REG_CLOCK_FREQ:
        v = NANOSECONDS_PER_SECOND;
        break;
    case FRAC_REG_TEMP_MC:
        frac_npu_telemetry_update(s);
        v = FRAC_TEMP_AMBIENT_MC + (uint32_t)(FRAC_TEMP_RANGE_MC * s->util_ewma);
        break;
    case FRAC_REG_POWER_MW:
        frac_npu_telemetry_update(s);
        v = FRAC_POWER_IDLE_MW + (uint32_t)(FRAC_POWER_RANGE_MW * s->util_ewma);
        break;
    case FRAC_REG_FI_ARMED:
        if (s->fault_injection) {
            for (unsigned i = 0; i < s->num_queues; i++) {
                FracQueue *q = &s->q[i];

                v |= q->hung ? BIT(FRAC_FAULT_HANG) : 0;
                v |= q->fi_drop_irqs ? BIT(FRAC_FAULT_DROP_IRQ) : 0;
                v |= q->fi_error_jobs ? BIT(FRAC_FAULT_ERROR) : 0;
                v |= q->fi_dma_jobs ? BIT(FRAC_FAULT_DMA) : 0;
                v |= q->fi_latency_ms ? BIT(FRAC_FAULT_LATENCY) : 0;
            }
            v |= s->status & FRAC_STS_FATAL ? BIT(FRAC_FAULT_FATAL) : 0;
            break;
        }
        /* fall through */
    default:
        FRAC_GUEST_ERR(frac_npu_err_read_unknown,
                       "read of unknown register 0x%" PRIx64, addr);
        break;
    }
    trace_frac_npu_mmio_read(addr, v);
    return v;
}

static void frac_npu_set64(uint64_t *reg, bool hi, uint32_t val)
{
    if (hi) {
        *reg = deposit64(*reg, 32, 32, val);
    } else {
        *reg = deposit64(*reg, 0, 32, val);
    }
}

static void frac_npu_qreg_write(FracQueue *q, hwaddr r, uint32_t val)
{
    bool enabled = q->status & FRAC_QSTS_ENABLED;

    if (q->drain != FRAC_DRAIN_NONE) {
        FRAC_GUEST_ERR(frac_npu_err_qreg_resetting,
                       "q%u register 0x%" PRIx64
                       " written while the queue resets", q->id, r);
        return;
    }

    switch (r) {
    case FRAC_Q_SQ_BASE_LO:
    case FRAC_Q_SQ_BASE_HI:
    case FRAC_Q_CQ_BASE_LO:
    case FRAC_Q_CQ_BASE_HI:
    case FRAC_Q_SIZE:
        /*
         * Only while disabled and idle (not RESETTING, checked above; no
         * job of the fatal state's abort still on the worker).
         */
        if (enabled || q->outstanding || q->inflight) {
            FRAC_GUEST_ERR(frac_npu_err_ring_reg_enabled,
                           "q%u ring register 0x%" PRIx64
                           " written while enabled or busy", q->id, r);
            return;
        }
        if (r == FRAC_Q_SIZE) {
            q->size = val;
        } else if (r <= FRAC_Q_SQ_BASE_HI) {
            frac_npu_set64(&q->sq_base, r == FRAC_Q_SQ_BASE_HI, val);
        } else {
            frac_npu_set64(&q->cq_base, r == FRAC_Q_CQ_BASE_HI, val);
        }
        return;
    case FRAC_Q_CTRL:
        if (val & FRAC_QCTRL_RESET) {
            frac_npu_queue_reset(q);
            return;
        }
        if ((val & FRAC_QCTRL_ENABLE) && !enabled) {
            frac_npu_queue_enable(q);
        } else if (!(val & FRAC_QCTRL_ENABLE)) {
            frac_npu_queue_disable(q);
        }
        return;
    case FRAC_Q_IRQ_COAL:
        q->coal = val & 0xffff00ff;
        return;
    }
    FRAC_GUEST_ERR(frac_npu_err_qreg_ro,
                   "q%u write to read-only register 0x%" PRIx64, q->id, r);
}

static void frac_npu_inject(FracState *s, unsigned kind, unsigned qid, uint32_t arg,
                            Error **errp)
{
    FracQueue *q;

    if (kind == FRAC_FAULT_FATAL) {
        trace_frac_npu_fault(kind, qid, arg);
        frac_npu_enter_fatal(s);
        return;
    }
    if (kind == FRAC_FAULT_NONE || kind >= FRAC_FAULT_MAX) {
        error_setg(errp, "unknown fault kind %u", kind);
        return;
    }
    if (qid >= s->num_queues) {
        error_setg(errp, "queue %u out of range (device has %u)", qid, s->num_queues);
        return;
    }
    q = &s->q[qid];
    trace_frac_npu_fault(kind, qid, arg);
    switch (kind) {
    case FRAC_FAULT_HANG:
        q->hung = true;
        break;
    case FRAC_FAULT_DROP_IRQ:
        q->fi_drop_irqs = arg ? arg : 1;
        break;
    case FRAC_FAULT_ERROR:
        q->fi_error_jobs = arg ? arg : 1;
        break;
    case FRAC_FAULT_DMA:
        q->fi_dma_jobs = arg ? arg : 1;
        break;
    case FRAC_FAULT_LATENCY:
        q->fi_latency_ms = arg ? arg : 100;
        break;
    }
}

static void frac_npu_regs_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    FracState *s = opaque;

    trace_frac_npu_mmio_write(addr, val);
    if (s->exiting) {
        return;
    }
    if (s->resetting) {
        FRAC_GUEST_ERR(frac_npu_err_write_resetting,
                       "write of 0x%" PRIx64 " to 0x%" PRIx64
                       " while a global reset runs", val, addr);
        return;
    }
    if (addr >= FRAC_QREGS_BASE && addr < FRAC_QREG(s->num_queues, 0)) {
        unsigned qid = (addr - FRAC_QREGS_BASE) / FRAC_QREGS_STRIDE;

        frac_npu_qreg_write(&s->q[qid], (addr - FRAC_QREGS_BASE) % FRAC_QREGS_STRIDE, val);
        return;
    }

    switch (addr) {
    case FRAC_REG_CONTROL:
        if (val & FRAC_CTRL_RESET) {
            frac_npu_reset_all(s, "control");
            return;
        }
        s->control = val & FRAC_CTRL_ENABLE;
        if (s->control & FRAC_CTRL_ENABLE) {
            for (unsigned i = 0; i < s->num_queues; i++) {
                frac_npu_queue_kick(&s->q[i]);
            }
        }
        return;
    case FRAC_REG_DMA_BITS:
        if (val < 32 || val > 64) {
            FRAC_GUEST_ERR(frac_npu_err_dma_bits,
                           "DMA_BITS %" PRIu64 " outside 32..64", val);
            return;
        }
        s->dma_bits = val;
        qatomic_set(&s->dma_mask, val == 64 ? UINT64_MAX : (1ULL << val) - 1);
        return;
    case FRAC_REG_SCRATCH:
        s->scratch = val;
        return;
    case FRAC_REG_ERR_STATUS:
        s->err_status &= ~val;
        return;
    case FRAC_REG_INT_STATUS:
        s->int_status &= ~val;
        frac_npu_update_intx(s);
        return;
    case FRAC_REG_INT_MASK: {
        uint32_t unmasked = s->int_mask & ~val;

        s->int_mask = val;
        /* MSI is an edge: a cause pending under the mask is sent on unmask. */
        if (msi_enabled(PCI_DEVICE(s)) && !msix_enabled(PCI_DEVICE(s)) &&
            (s->int_status & unmasked)) {
            msi_notify(PCI_DEVICE(s), 0);
        }
        frac_npu_update_intx(s);
        return;
    }
    case FRAC_REG_FI_CTRL:
        if (s->fault_injection) {
            Error *err = NULL;

            frac_npu_inject(s, val & 0xff, (val >> 8) & 0xff, val >> 16, &err);
            if (err) {
                FRAC_GUEST_ERR(frac_npu_err_fi_ctrl, "FI_CTRL: %s",
                               error_get_pretty(err));
                error_free(err);
            }
            return;
        }
        break;
    }
    FRAC_GUEST_ERR(frac_npu_err_write_unknown, "write of 0x%" PRIx64
                   " to unknown or read-only register 0x%" PRIx64, val, addr);
}

static void frac_npu_db_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    FracState *s = opaque;
    unsigned qid = addr / FRAC_DB_STRIDE;
    bool cq = addr % FRAC_DB_STRIDE;
    FracQueue *q;

    trace_frac_npu_doorbell(qid, cq ? "cq_head" : "sq_tail", val);
    if (s->exiting) {
        return;
    }
    if (qid >= s->num_queues || (addr % 4)) {
        FRAC_GUEST_ERR(frac_npu_err_db_no_queue,
                       "doorbell write at 0x%" PRIx64 " for no queue", addr);
        frac_npu_error(s, qid, FRAC_ERR_BAD_DOORBELL, addr, true);
        return;
    }
    q = &s->q[qid];
    if (s->resetting || q->drain != FRAC_DRAIN_NONE) {
        FRAC_GUEST_ERR(frac_npu_err_db_resetting,
                       "q%u doorbell %" PRIu64 " while resetting", qid, val);
        return;
    }
    if (!(q->status & FRAC_QSTS_ENABLED) || val >= q->size) {
        FRAC_GUEST_ERR(frac_npu_err_bad_doorbell,
                       "q%u bad %s doorbell %" PRIu64 " (size %u, %s)",
                       qid, cq ? "CQ" : "SQ", val, q->size,
                       q->status & FRAC_QSTS_ENABLED ? "enabled" : "disabled");
        frac_npu_error(s, qid, FRAC_ERR_BAD_DOORBELL, val, true);
        return;
    }
    if (cq) {
        /* The head may move up to CQ_TAIL: past it are unwritten records. */
        if (((val - q->cq_head) & (q->size - 1)) >
            ((q->cq_tail - q->cq_head) & (q->size - 1))) {
            FRAC_GUEST_ERR(frac_npu_err_cq_head,
                           "q%u CQ doorbell %" PRIu64 " past CQ_TAIL %u",
                           qid, val, q->cq_tail);
            frac_npu_error(s, qid, FRAC_ERR_BAD_DOORBELL, val, true);
            return;
        }
        q->cq_head = val;
        if (q->cq_stalled) {
            q->cq_stalled = false;
            frac_npu_queue_post(q);
        }
    } else {
        q->sq_tail = val;
        if (s->zero_latency && s->fetch_in_doorbell) {
            /*
             * A device that takes no time: fetch now, in the doorbell
             * write. Small jobs execute and complete before the write
             * returns (their interrupt is taken right after it); large ones
             * go to the queue's worker as always. The write already holds
             * the reentrancy guard, as the fetch BH would. With
             * fetch-in-doorbell=off the fetch runs in a bottom half, the
             * way QEMU's nvme model handles its doorbells.
             */
            q->fetch_tail = q->sq_tail;
            frac_npu_queue_fetch(q);
        } else {
            frac_npu_queue_doorbell(q);
        }
    }
}

static uint64_t frac_npu_db_read(void *opaque, hwaddr addr, unsigned size)
{
    /* Doorbells are write-only. */
    return 0;
}

static const MemoryRegionOps frac_npu_regs_ops = {
    .read = frac_npu_regs_read,
    .write = frac_npu_regs_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

static const MemoryRegionOps frac_npu_db_ops = {
    .read = frac_npu_db_read,
    .write = frac_npu_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

/* ---- QOM: run-time fault injection ------------------------------------- */

static const char *const frac_npu_fault_name[FRAC_FAULT_MAX] = {
    [FRAC_FAULT_HANG] = "hang",
    [FRAC_FAULT_DROP_IRQ] = "drop-irq",
    [FRAC_FAULT_ERROR] = "error",
    [FRAC_FAULT_DMA] = "dma",
    [FRAC_FAULT_FATAL] = "fatal",
    [FRAC_FAULT_LATENCY] = "latency",
};

static void frac_npu_get_inject(Object *obj, Visitor *v, const char *name,
                                void *opaque, Error **errp)
{
    FracState *s = FRAC_NPU(obj);
    char *val = g_strdup(s->last_inject ? s->last_inject : "");

    visit_type_str(v, name, &val, errp);
    g_free(val);
}

/* "kind[:queue[:arg]]", e.g. "hang:1", "drop-irq:0:3", "latency:2:50", "fatal" */
static void frac_npu_set_inject(Object *obj, Visitor *v, const char *name,
                                void *opaque, Error **errp)
{
    FracState *s = FRAC_NPU(obj);
    g_autofree char *val = NULL;
    g_auto(GStrv) parts = NULL;
    unsigned kind = FRAC_FAULT_MAX, qid = 0;
    uint64_t arg = 0;
    bool guard;
    int n;

    if (!visit_type_str(v, name, &val, errp)) {
        return;
    }
    parts = g_strsplit(val, ":", 3);
    n = g_strv_length(parts);
    for (unsigned k = 1; k < FRAC_FAULT_MAX && n; k++) {
        if (!strcmp(parts[0], frac_npu_fault_name[k])) {
            kind = k;
        }
    }
    if (kind == FRAC_FAULT_MAX) {
        error_setg(errp, "unknown fault '%s' "
                   "(hang, drop-irq, error, dma, fatal, latency)",
                   n ? parts[0] : "");
        return;
    }
    if (n > 1) {
        uint64_t tmp;

        if (qemu_strtou64(parts[1], NULL, 0, &tmp) || tmp >= s->num_queues) {
            error_setg(errp, "bad queue '%s'", parts[1]);
            return;
        }
        qid = tmp;
    }
    if (n > 2 && (qemu_strtou64(parts[2], NULL, 0, &arg) || arg > UINT16_MAX)) {
        error_setg(errp, "bad argument '%s' (0..65535)", parts[2]);
        return;
    }
    if (!qdev_is_realized(DEVICE(s)) || s->exiting) {
        error_setg(errp, "device not realized");
        return;
    }
    /* As FI_CTRL does: an error MSI-X aimed at BAR0 must not re-enter. */
    guard = frac_npu_guard_engage(s);
    frac_npu_inject(s, kind, qid, arg, errp);
    frac_npu_guard_restore(s, guard);
    g_free(s->last_inject);
    s->last_inject = g_strdup(val);
}

/* ---- PCI ---------------------------------------------------------------- */

static void frac_npu_write_config(PCIDevice *pdev, uint32_t addr, uint32_t val, int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
}

static void frac_npu_reset(DeviceState *dev)
{
    FracState *s = FRAC_NPU(dev);

    frac_npu_reset_all(s, "device");
}

/* Timing model bounds: 0 bandwidth or rate is not "free" (zero-latency is). */
#define FRAC_MAX_LATENCY_NS NANOSECONDS_PER_SECOND
#define FRAC_MAX_DMA_MBPS 1000000 /* 1 TB/s */
#define FRAC_MAX_GFLOPS 1000000

static bool frac_npu_check_params(FracState *s, Error **errp)
{
    if (s->num_queues < FRAC_MIN_QUEUES || s->num_queues > FRAC_MAX_QUEUES) {
        error_setg(errp, "queues must be %u..%u, not %u", FRAC_MIN_QUEUES,
                   FRAC_MAX_QUEUES, s->num_queues);
        return false;
    }
    if (s->mem_size < 1 * MiB || s->mem_size > 64 * GiB ||
        !is_power_of_2(s->mem_size)) {
        error_setg(errp, "mem-size must be a power of two in 1M..64G");
        return false;
    }
    if (s->fetch_latency_ns > FRAC_MAX_LATENCY_NS ||
        s->completion_latency_ns > FRAC_MAX_LATENCY_NS) {
        error_setg(errp, "fetch-latency-ns and completion-latency-ns must be "
                   "0..%" PRIu64, (uint64_t)FRAC_MAX_LATENCY_NS);
        return false;
    }
    if (!s->dma_bw_mbps || s->dma_bw_mbps > FRAC_MAX_DMA_MBPS) {
        error_setg(errp, "dma-bandwidth-mbps must be 1..%u (zero-latency=on "
                   "models no cost), not %u", FRAC_MAX_DMA_MBPS,
                   s->dma_bw_mbps);
        return false;
    }
    if (!s->compute_gflops || s->compute_gflops > FRAC_MAX_GFLOPS) {
        error_setg(errp, "compute-gflops must be 1..%u (zero-latency=on "
                   "models no cost), not %u", FRAC_MAX_GFLOPS,
                   s->compute_gflops);
        return false;
    }
    return true;
}

static void frac_npu_realize(PCIDevice *pdev, Error **errp)
{
    FracState *s = FRAC_NPU(pdev);
    uint8_t *conf = pdev->config;
    unsigned nvec;
    int ret;

    if (!frac_npu_check_params(s, errp)) {
        return;
    }

    conf[PCI_INTERRUPT_PIN] = 1;
    pci_config_set_class(conf, FRAC_PCI_CLASS);

    memory_region_init(&s->bar0, OBJECT(s), "frac-npu.bar0", FRAC_BAR0_SIZE);
    memory_region_init_io(&s->regs, OBJECT(s), &frac_npu_regs_ops, s, "frac-npu.regs",
                          FRAC_REGS_SIZE);
    memory_region_init_io(&s->db, OBJECT(s), &frac_npu_db_ops, s, "frac-npu.doorbells",
                          FRAC_DB_SIZE);
    memory_region_add_subregion(&s->bar0, FRAC_REGS_OFFSET, &s->regs);
    memory_region_add_subregion(&s->bar0, FRAC_DB_OFFSET, &s->db);
    pci_register_bar(pdev, FRAC_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);

    if (!memory_region_init_ram(&s->devmem, OBJECT(s), "frac-npu.devmem",
                                s->mem_size, errp)) {
        return;
    }
    s->devmem_ptr = memory_region_get_ram_ptr(&s->devmem);
    pci_register_bar(pdev, FRAC_BAR_MEM, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 | PCI_BASE_ADDRESS_MEM_PREFETCH,
                     &s->devmem);

    /* Capabilities: PM, MSI, MSI-X, PCIe (FLR), AER. */
    ret = pci_pm_init(pdev, 0x40, errp);
    if (ret < 0) {
        return;
    }
    if (s->use_msi && msi_init(pdev, FRAC_MSI_CAP_OFFSET, 1, true, false, errp) < 0) {
        return;
    }
    nvec = s->num_queues + 1;
    if (s->use_msix) {
        ret = msix_init(pdev, nvec, &s->bar0, FRAC_BAR_REGS, FRAC_MSIX_TABLE_OFFSET,
                        &s->bar0, FRAC_BAR_REGS, FRAC_MSIX_PBA_OFFSET, 0, errp);
        if (ret < 0) {
            goto err_msi;
        }
        for (unsigned i = 0; i < nvec; i++) {
            msix_vector_use(pdev, i);
        }
    }
    ret = pcie_endpoint_cap_init(pdev, FRAC_PCIE_CAP_OFFSET);
    if (ret < 0) {
        error_setg(errp, "PCIe capability: %d", ret);
        goto err_msix;
    }
    pcie_cap_flr_init(pdev);
    pcie_cap_deverr_init(pdev);
    if (pcie_aer_init(pdev, PCI_ERR_VER, FRAC_AER_OFFSET, PCI_ERR_SIZEOF, errp) < 0) {
        goto err_pcie;
    }

    s->clock_base = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    for (unsigned i = 0; i < s->num_queues; i++) {
        FracQueue *q = &s->q[i];
        g_autofree char *name = g_strdup_printf("frac-npu-q%u", i);

        q->s = s;
        q->id = i;
        q->phase = true;
        QTAILQ_INIT(&q->pending);
        QSIMPLEQ_INIT(&q->work);
        QSIMPLEQ_INIT(&q->done);
        qemu_mutex_init(&q->lock);
        qemu_cond_init(&q->cond);
        q->fetch_bh = qemu_bh_new_guarded(frac_npu_fetch_bh, q,
                                          &DEVICE(s)->mem_reentrancy_guard);
        q->done_bh = qemu_bh_new_guarded(frac_npu_done_bh, q,
                                         &DEVICE(s)->mem_reentrancy_guard);
        q->fetch_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, frac_npu_fetch_timer, q);
        q->post_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, frac_npu_post_timer, q);
        q->coal_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, frac_npu_coal_timer, q);
        qemu_thread_create(&q->thread, name, frac_npu_worker, q, QEMU_THREAD_JOINABLE);
    }
    frac_npu_reset_all(s, "power-on");
    return;

err_pcie:
    pcie_cap_exit(pdev);
err_msix:
    if (s->use_msix) {
        msix_uninit(pdev, &s->bar0, &s->bar0);
    }
err_msi:
    msi_uninit(pdev);
}

static void frac_npu_exit(PCIDevice *pdev)
{
    FracState *s = FRAC_NPU(pdev);

    /* Abort every job (a running one stops at its next chunk) and stop. */
    s->exiting = true;
    for (unsigned i = 0; i < s->num_queues; i++) {
        FracQueue *q = &s->q[i];

        frac_npu_queue_abort(q);
        qemu_mutex_lock(&q->lock);
        qatomic_set(&q->stop, true);
        qemu_cond_signal(&q->cond);
        qemu_mutex_unlock(&q->lock);
    }
    /*
     * A worker doing DMA to MMIO takes the BQL for every access
     * (prepare_mmio_access): joining it with the BQL held deadlocked
     * device_del. Join with the BQL released, as migration joins its
     * threads; s->exiting keeps our MMIO handlers, BHs, timers and the
     * inject property from touching the device meanwhile.
     */
    bql_unlock();
    for (unsigned i = 0; i < s->num_queues; i++) {
        qemu_thread_join(&s->q[i].thread);
    }
    bql_lock();

    for (unsigned i = 0; i < s->num_queues; i++) {
        FracQueue *q = &s->q[i];

        frac_npu_queue_abort(q); /* frees what the workers handed back */
        qemu_bh_delete(q->fetch_bh);
        qemu_bh_delete(q->done_bh);
        timer_free(q->fetch_timer);
        timer_free(q->post_timer);
        timer_free(q->coal_timer);
        qemu_cond_destroy(&q->cond);
        qemu_mutex_destroy(&q->lock);
    }
    pcie_aer_exit(pdev);
    pcie_cap_exit(pdev);
    if (s->use_msix) {
        msix_uninit(pdev, &s->bar0, &s->bar0);
    }
    msi_uninit(pdev);
    g_free(s->last_inject);
}

static const Property frac_npu_props[] = {
    DEFINE_PROP_UINT32("queues", FracState, num_queues, 4),
    DEFINE_PROP_SIZE("mem-size", FracState, mem_size, 256 * MiB),
    DEFINE_PROP_UINT32("fetch-latency-ns", FracState, fetch_latency_ns, 2000),
    DEFINE_PROP_UINT32("completion-latency-ns", FracState, completion_latency_ns, 1000),
    DEFINE_PROP_UINT32("dma-bandwidth-mbps", FracState, dma_bw_mbps, 8000),
    DEFINE_PROP_UINT32("compute-gflops", FracState, compute_gflops, 200),
    DEFINE_PROP_BOOL("zero-latency", FracState, zero_latency, false),
    DEFINE_PROP_BOOL("fetch-in-doorbell", FracState, fetch_in_doorbell, true),
    DEFINE_PROP_BOOL("fault-injection", FracState, fault_injection, false),
    DEFINE_PROP_BOOL("msix", FracState, use_msix, true),
    DEFINE_PROP_BOOL("msi", FracState, use_msi, true),
};

static const VMStateDescription frac_npu_vmstate = {
    .name = "frac-npu",
    .unmigratable = 1,
};

static void frac_npu_instance_init(Object *obj)
{
    object_property_add(obj, "inject", "str", frac_npu_get_inject, frac_npu_set_inject,
                        NULL, NULL);
    object_property_set_description(obj, "inject",
                                    "Inject a fault at run time: kind[:queue[:arg]] with kind one of "
                                    "hang, drop-irq, error, dma, fatal, latency");
}

static void frac_npu_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(oc);

    pc->realize = frac_npu_realize;
    pc->exit = frac_npu_exit;
    pc->config_write = frac_npu_write_config;
    pc->vendor_id = FRAC_PCI_VENDOR_ID;
    pc->device_id = FRAC_PCI_DEVICE_ID;
    pc->revision = FRAC_PCI_REVISION;
    pc->class_id = FRAC_PCI_CLASS;

    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
    dc->desc = "FRAC-1 AI inference accelerator";
    device_class_set_props(dc, frac_npu_props);
    dc->vmsd = &frac_npu_vmstate;
    device_class_set_legacy_reset(dc, frac_npu_reset);
}

static const TypeInfo frac_npu_info = {
    .name = TYPE_FRAC_NPU,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(FracState),
    .instance_init = frac_npu_instance_init,
    .class_init = frac_npu_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void frac_npu_register_types(void)
{
    type_register_static(&frac_npu_info);
}

type_init(frac_npu_register_types)
