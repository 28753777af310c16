/*
 * FRAC-1 AI-inference accelerator, QEMU device model ("frac-npu"): the
 * types and the calls between its three parts.
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
 * The files follow that rule (as hw/net/e1000e.c keeps the device glue
 * apart from e1000e_core.c):
 *   frac_npu_engine.c  operands, DMA, commands and the worker: the only
 *                      code that runs without the BQL
 *   frac_npu_queue.c   fetch, validate, timing model, post, resets (main
 *                      loop)
 *   frac_npu_regs.c    the MMIO registers and doorbells, through tables
 *                      (vCPU threads, BQL held)
 *   frac_npu.c         interrupts, telemetry, fault injection, PCI and QOM
 *                      (BQL held)
 *
 * Resets. A queue reset, a disable with jobs in flight, the fatal state and
 * unplug drop jobs by bumping the queue's generation; the worker checks it
 * at every 256 KiB chunk, SG segment and GEMM row, so a dropped job stops
 * within microseconds (RAM) to milliseconds (MMIO). A reset is over, and
 * RESETTING / CONTROL.RESET clear, only when the worker has handed back the
 * job it held (the quiesce handshake, docs/hw-spec.md 8). frac_npu_exit
 * joins the workers with the BQL released: a worker's MMIO DMA needs it.
 */

#ifndef HW_FRAC_NPU_H
#define HW_FRAC_NPU_H

#include "qemu/log.h"
#include "qemu/queue.h"
#include "qemu/thread.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "hw/pci/pci_device.h"
#include "qom/object.h"

#include "frac_hw.h"

#define TYPE_FRAC_NPU "frac-npu"
OBJECT_DECLARE_SIMPLE_TYPE(FracState, FRAC_NPU)

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
    bool held; /* main loop: in use across a DMA or an interrupt */
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
    uint32_t fi_bad_id; /* records still to post with a wrong job_id */
    uint32_t fi_bad_head; /* added to the next record's sq_head */
    uint32_t fi_dup; /* records still to post twice */

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

/* ---- Clocks ------------------------------------------------------------ */

/* The device clock: ns since realize (CLOCK_LO/HI, completion timestamps). */
static inline uint64_t frac_npu_clock(FracState *s)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - s->clock_base;
}

static inline int64_t frac_npu_dev_to_virt(FracState *s, uint64_t dev_ns)
{
    return (int64_t)dev_ns + s->clock_base;
}

/* ---- frac_npu_engine.c: runs in the worker, or inline in the main loop -- */

bool frac_npu_own_bar(FracState *s, uint64_t addr, uint64_t len,
                      uint64_t *hit);
void frac_npu_job_sizes(const struct frac_desc *d, uint64_t *src,
                        uint64_t *dst, uint64_t *aux);
void frac_npu_job_execute(FracJob *job);
void *frac_npu_worker(void *opaque);

/* ---- frac_npu_queue.c: main loop, BQL held ----------------------------- */

void frac_npu_queue_fetch(FracQueue *q);
void frac_npu_queue_doorbell(FracQueue *q);
void frac_npu_queue_kick(FracQueue *q);
void frac_npu_queue_post(FracQueue *q);
void frac_npu_queue_enable(FracQueue *q);
void frac_npu_queue_disable(FracQueue *q);
void frac_npu_queue_abort(FracQueue *q);
void frac_npu_queue_reset(FracQueue *q);
bool frac_npu_quiesced(FracState *s);
void frac_npu_reset_all(FracState *s, const char *why);
bool frac_npu_guard_engage(FracState *s);
void frac_npu_guard_restore(FracState *s, bool was);
void frac_npu_fetch_bh(void *opaque);
void frac_npu_done_bh(void *opaque);
void frac_npu_fetch_timer(void *opaque);
void frac_npu_post_timer(void *opaque);
void frac_npu_coal_timer(void *opaque);

/* ---- frac_npu.c: BQL held ---------------------------------------------- */

void frac_npu_update_intx(FracState *s);
void frac_npu_raise(FracState *s, unsigned vector);
void frac_npu_error(FracState *s, unsigned qid, uint32_t err, uint64_t addr,
                    bool irq);
void frac_npu_telemetry_update(FracState *s);
void frac_npu_busy_add(FracState *s, int64_t start, int64_t end);
void frac_npu_inject(FracState *s, unsigned kind, unsigned qid, uint32_t arg,
                     Error **errp);

/* ---- frac_npu_regs.c: vCPU threads, BQL held --------------------------- */

extern const MemoryRegionOps frac_npu_regs_ops;
extern const MemoryRegionOps frac_npu_db_ops;

#endif /* HW_FRAC_NPU_H */
