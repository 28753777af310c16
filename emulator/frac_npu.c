/*
 * FRAC-1 device model: the device. Interrupts (MSI-X, MSI, INTx) and error
 * reporting, the MMIO registers and doorbells (vCPU threads, BQL held),
 * telemetry (counters, the thermal and power model), run-time fault
 * injection (the "inject" property and FI_CTRL), and the PCI/QOM glue:
 * properties, realize, exit, reset. The queues are frac_npu_queue.c, the
 * engine frac_npu_engine.c; frac_npu.h says which runs where.
 *
 * Copyright (c) 2026 The frac authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <math.h>
#include "qemu/cutils.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/pci/pcie.h"
#include "hw/pci/pcie_aer.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "trace.h"
#include "frac_npu.h"

#define FRAC_PCIE_CAP_OFFSET 0x80
#define FRAC_MSI_CAP_OFFSET 0x60
#define FRAC_AER_OFFSET 0x100

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

/* ---- Interrupts -------------------------------------------------------- */

void frac_npu_update_intx(FracState *s)
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
void frac_npu_raise(FracState *s, unsigned vector)
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

void frac_npu_error(FracState *s, unsigned qid, uint32_t err, uint64_t addr,
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
void frac_npu_telemetry_update(FracState *s)
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
void frac_npu_busy_add(FracState *s, int64_t start, int64_t end)
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

/*
 * Registers are dispatched through tables indexed by offset / 4, as
 * hw/net/e1000e_core.c dispatches through e1000e_macreg_readops[]. A 64-bit
 * register is a LO, HI pair whose read function returns the whole value.
 * The clock and the telemetry counters latch: reading LO latches HI
 * (docs/hw-spec.md 3), so a LO, HI pair of reads is consistent, and reading
 * HI returns the latch without reading the value.
 */
enum {
    FRAC_NPU_REG_HI = 1 << 0,    /* the upper half of a 64-bit value */
    FRAC_NPU_REG_LATCH = 1 << 1, /* LO latches HI in hi_latch[latch] */
    FRAC_NPU_REG_FI = 1 << 2,    /* exists with fault-injection=on only */
};

#define FRAC_NPU_REG_IDX(addr) ((addr) / 4)

/* hi_latch[] slots: the clock, then the counters in register order */
#define FRAC_NPU_LATCH_CLOCK 0
#define FRAC_NPU_LATCH(lo) (1 + ((lo) - FRAC_REG_BUSY_NS_LO(0)) / 8)

typedef struct FracNpuQregRead {
    uint64_t (*read)(FracQueue *q);
    uint8_t flags;
} FracNpuQregRead;

typedef struct FracNpuRegRead {
    uint64_t (*read)(FracState *s);
    uint8_t flags;
    uint8_t latch;
} FracNpuRegRead;

typedef struct FracNpuRegWrite {
    void (*write)(FracState *s, uint64_t val);
    uint8_t flags;
} FracNpuRegWrite;

#define FRAC_NPU_RD(reg, fn) \
    [FRAC_NPU_REG_IDX(reg)] = { .read = (fn) }
#define FRAC_NPU_RD64(lo, fn) \
    [FRAC_NPU_REG_IDX(lo)] = { .read = (fn) }, \
    [FRAC_NPU_REG_IDX(lo) + 1] = { .read = (fn), .flags = FRAC_NPU_REG_HI }
#define FRAC_NPU_RD64_LATCHED(lo, fn, slot) \
    [FRAC_NPU_REG_IDX(lo)] = { .read = (fn), .flags = FRAC_NPU_REG_LATCH, \
                               .latch = (slot) }, \
    [FRAC_NPU_REG_IDX(lo) + 1] = { .read = (fn), .latch = (slot), \
                                   .flags = FRAC_NPU_REG_LATCH | \
                                            FRAC_NPU_REG_HI }

/* Queue registers (FRAC_QREG(q, r)) */

static uint64_t frac_npu_q_sq_base(FracQueue *q)
{
    return q->sq_base;
}

static uint64_t frac_npu_q_cq_base(FracQueue *q)
{
    return q->cq_base;
}

static uint64_t frac_npu_q_size(FracQueue *q)
{
    return q->size;
}

static uint64_t frac_npu_q_ctrl(FracQueue *q)
{
    return q->ctrl | (q->drain == FRAC_DRAIN_RESET ? FRAC_QCTRL_RESET : 0);
}

static uint64_t frac_npu_q_status(FracQueue *q)
{
    return q->status | (q->hung ? FRAC_QSTS_HUNG : 0) |
           (q->inflight ? FRAC_QSTS_BUSY : 0) |
           (q->drain != FRAC_DRAIN_NONE ? FRAC_QSTS_RESETTING : 0);
}

static uint64_t frac_npu_q_sq_head(FracQueue *q)
{
    return q->sq_head;
}

static uint64_t frac_npu_q_sq_tail(FracQueue *q)
{
    return q->sq_tail;
}

static uint64_t frac_npu_q_cq_tail(FracQueue *q)
{
    return q->cq_tail;
}

static uint64_t frac_npu_q_cq_head(FracQueue *q)
{
    return q->cq_head;
}

static uint64_t frac_npu_q_irq_coal(FracQueue *q)
{
    return q->coal;
}

static uint64_t frac_npu_q_vector(FracQueue *q)
{
    return q->id;
}

static uint64_t frac_npu_q_jobs(FracQueue *q)
{
    return q->jobs;
}

/* An offset with no entry reads 0, without a guest error. */
static const FracNpuQregRead frac_npu_qreg_readops[FRAC_QREGS_STRIDE / 4] = {
    FRAC_NPU_RD64(FRAC_Q_SQ_BASE_LO, frac_npu_q_sq_base),
    FRAC_NPU_RD(FRAC_Q_SIZE, frac_npu_q_size),
    FRAC_NPU_RD(FRAC_Q_CTRL, frac_npu_q_ctrl),
    FRAC_NPU_RD64(FRAC_Q_CQ_BASE_LO, frac_npu_q_cq_base),
    FRAC_NPU_RD(FRAC_Q_STATUS, frac_npu_q_status),
    FRAC_NPU_RD(FRAC_Q_SQ_HEAD, frac_npu_q_sq_head),
    FRAC_NPU_RD(FRAC_Q_SQ_TAIL, frac_npu_q_sq_tail),
    FRAC_NPU_RD(FRAC_Q_CQ_TAIL, frac_npu_q_cq_tail),
    FRAC_NPU_RD(FRAC_Q_CQ_HEAD, frac_npu_q_cq_head),
    FRAC_NPU_RD(FRAC_Q_IRQ_COAL, frac_npu_q_irq_coal),
    FRAC_NPU_RD(FRAC_Q_VECTOR, frac_npu_q_vector),
    FRAC_NPU_RD(FRAC_Q_JOBS, frac_npu_q_jobs),
};

static uint64_t frac_npu_qreg_read(FracQueue *q, hwaddr r)
{
    const FracNpuQregRead *op = &frac_npu_qreg_readops[FRAC_NPU_REG_IDX(r)];
    uint64_t v;

    if (!op->read) {
        return 0;
    }
    v = op->read(q);
    return op->flags & FRAC_NPU_REG_HI ? v >> 32 : (uint32_t)v;
}

/* Global registers: identity and capabilities */

static uint64_t frac_npu_r_id(FracState *s)
{
    return FRAC_ID_MAGIC;
}

static uint64_t frac_npu_r_version(FracState *s)
{
    return FRAC_VERSION_MAJOR << 16 | FRAC_VERSION_MINOR;
}

static uint64_t frac_npu_r_cap0(FracState *s)
{
    return s->num_queues | (ctz32(FRAC_RING_MAX_ENTRIES) << 8) |
           (FRAC_NUM_ENGINES << 16);
}

static uint64_t frac_npu_r_cap1(FracState *s)
{
    return FRAC_FEAT_GEMM_FP32 | FRAC_FEAT_GEMM_INT8 | FRAC_FEAT_CRC32C |
           FRAC_FEAT_SGL | FRAC_FEAT_DEVMEM | FRAC_FEAT_TIMESTAMP |
           (s->fault_injection ? FRAC_FEAT_FAULT_INJ : 0);
}

static uint64_t frac_npu_r_devmem_size(FracState *s)
{
    return s->mem_size;
}

static uint64_t frac_npu_r_gemm_max_dim(FracState *s)
{
    return FRAC_GEMM_MAX_DIM;
}

static uint64_t frac_npu_r_sgl_max(FracState *s)
{
    return FRAC_SGL_MAX_ENTRIES;
}

static uint64_t frac_npu_r_err_vector(FracState *s)
{
    return s->num_queues;
}

static uint64_t frac_npu_r_clock_freq(FracState *s)
{
    return NANOSECONDS_PER_SECOND;
}

/* Global registers: control, status, errors, interrupts */

static uint64_t frac_npu_r_control(FracState *s)
{
    return s->control | (s->resetting ? FRAC_CTRL_RESET : 0);
}

static uint64_t frac_npu_r_status(FracState *s)
{
    return s->status |
           (s->control & FRAC_CTRL_ENABLE ? FRAC_STS_ENABLED : 0) |
           (frac_npu_quiesced(s) ? FRAC_STS_QUIESCED : 0);
}

static uint64_t frac_npu_r_dma_bits(FracState *s)
{
    return s->dma_bits;
}

static uint64_t frac_npu_r_scratch(FracState *s)
{
    return s->scratch;
}

static uint64_t frac_npu_r_err_status(FracState *s)
{
    return s->err_status;
}

static uint64_t frac_npu_r_err_queue(FracState *s)
{
    return s->err_queue;
}

static uint64_t frac_npu_r_err_addr(FracState *s)
{
    return s->err_addr;
}

static uint64_t frac_npu_r_int_status(FracState *s)
{
    return s->int_status;
}

static uint64_t frac_npu_r_int_mask(FracState *s)
{
    return s->int_mask;
}

/* Global registers: the clock and telemetry */

static uint64_t frac_npu_r_clock(FracState *s)
{
    return frac_npu_clock(s);
}

static uint64_t frac_npu_r_temp_mc(FracState *s)
{
    frac_npu_telemetry_update(s);
    return FRAC_TEMP_AMBIENT_MC +
           (uint32_t)(FRAC_TEMP_RANGE_MC * s->util_ewma);
}

static uint64_t frac_npu_r_power_mw(FracState *s)
{
    frac_npu_telemetry_update(s);
    return FRAC_POWER_IDLE_MW +
           (uint32_t)(FRAC_POWER_RANGE_MW * s->util_ewma);
}

static uint64_t frac_npu_r_busy_dma(FracState *s)
{
    return s->busy_ns[FRAC_ENGINE_DMA];
}

static uint64_t frac_npu_r_busy_compute(FracState *s)
{
    return s->busy_ns[FRAC_ENGINE_COMPUTE];
}

static uint64_t frac_npu_r_jobs_done(FracState *s)
{
    return s->jobs_done;
}

static uint64_t frac_npu_r_jobs_err(FracState *s)
{
    return s->jobs_err;
}

static uint64_t frac_npu_r_bytes_rd(FracState *s)
{
    return s->bytes_rd;
}

static uint64_t frac_npu_r_bytes_wr(FracState *s)
{
    return s->bytes_wr;
}

static uint64_t frac_npu_r_irqs(FracState *s)
{
    return s->irqs;
}

/* Global registers: fault injection */

static uint64_t frac_npu_r_fi_armed(FracState *s)
{
    uint64_t v = 0;

    for (unsigned i = 0; i < s->num_queues; i++) {
        FracQueue *q = &s->q[i];

        v |= q->hung ? BIT(FRAC_FAULT_HANG) : 0;
        v |= q->fi_drop_irqs ? BIT(FRAC_FAULT_DROP_IRQ) : 0;
        v |= q->fi_error_jobs ? BIT(FRAC_FAULT_ERROR) : 0;
        v |= q->fi_dma_jobs ? BIT(FRAC_FAULT_DMA) : 0;
        v |= q->fi_latency_ms ? BIT(FRAC_FAULT_LATENCY) : 0;
    }
    v |= s->status & FRAC_STS_FATAL ? BIT(FRAC_FAULT_FATAL) : 0;
    return v;
}

static const FracNpuRegRead frac_npu_readops[FRAC_QREGS_BASE / 4] = {
    FRAC_NPU_RD(FRAC_REG_ID, frac_npu_r_id),
    FRAC_NPU_RD(FRAC_REG_VERSION, frac_npu_r_version),
    FRAC_NPU_RD(FRAC_REG_CAP0, frac_npu_r_cap0),
    FRAC_NPU_RD(FRAC_REG_CAP1, frac_npu_r_cap1),
    FRAC_NPU_RD64(FRAC_REG_DEVMEM_SIZE_LO, frac_npu_r_devmem_size),
    FRAC_NPU_RD(FRAC_REG_GEMM_MAX_DIM, frac_npu_r_gemm_max_dim),
    FRAC_NPU_RD(FRAC_REG_SGL_MAX, frac_npu_r_sgl_max),
    FRAC_NPU_RD(FRAC_REG_CONTROL, frac_npu_r_control),
    FRAC_NPU_RD(FRAC_REG_STATUS, frac_npu_r_status),
    FRAC_NPU_RD(FRAC_REG_DMA_BITS, frac_npu_r_dma_bits),
    FRAC_NPU_RD(FRAC_REG_SCRATCH, frac_npu_r_scratch),
    FRAC_NPU_RD(FRAC_REG_ERR_STATUS, frac_npu_r_err_status),
    FRAC_NPU_RD(FRAC_REG_ERR_QUEUE, frac_npu_r_err_queue),
    FRAC_NPU_RD64(FRAC_REG_ERR_ADDR_LO, frac_npu_r_err_addr),
    FRAC_NPU_RD(FRAC_REG_INT_STATUS, frac_npu_r_int_status),
    FRAC_NPU_RD(FRAC_REG_INT_MASK, frac_npu_r_int_mask),
    FRAC_NPU_RD(FRAC_REG_ERR_VECTOR, frac_npu_r_err_vector),
    FRAC_NPU_RD64_LATCHED(FRAC_REG_CLOCK_LO, frac_npu_r_clock,
                          FRAC_NPU_LATCH_CLOCK),
    FRAC_NPU_RD(FRAC_REG_CLOCK_FREQ, frac_npu_r_clock_freq),
    FRAC_NPU_RD(FRAC_REG_TEMP_MC, frac_npu_r_temp_mc),
    FRAC_NPU_RD(FRAC_REG_POWER_MW, frac_npu_r_power_mw),
    FRAC_NPU_RD64_LATCHED(FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_DMA),
                          frac_npu_r_busy_dma,
                          FRAC_NPU_LATCH(FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_DMA))),
    FRAC_NPU_RD64_LATCHED(FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_COMPUTE),
                          frac_npu_r_busy_compute,
                          FRAC_NPU_LATCH(FRAC_REG_BUSY_NS_LO(
                                             FRAC_ENGINE_COMPUTE))),
    FRAC_NPU_RD64_LATCHED(FRAC_REG_JOBS_DONE_LO, frac_npu_r_jobs_done,
                          FRAC_NPU_LATCH(FRAC_REG_JOBS_DONE_LO)),
    FRAC_NPU_RD64_LATCHED(FRAC_REG_JOBS_ERR_LO, frac_npu_r_jobs_err,
                          FRAC_NPU_LATCH(FRAC_REG_JOBS_ERR_LO)),
    FRAC_NPU_RD64_LATCHED(FRAC_REG_BYTES_RD_LO, frac_npu_r_bytes_rd,
                          FRAC_NPU_LATCH(FRAC_REG_BYTES_RD_LO)),
    FRAC_NPU_RD64_LATCHED(FRAC_REG_BYTES_WR_LO, frac_npu_r_bytes_wr,
                          FRAC_NPU_LATCH(FRAC_REG_BYTES_WR_LO)),
    FRAC_NPU_RD64_LATCHED(FRAC_REG_IRQS_LO, frac_npu_r_irqs,
                          FRAC_NPU_LATCH(FRAC_REG_IRQS_LO)),
    [FRAC_NPU_REG_IDX(FRAC_REG_FI_ARMED)] = { .read = frac_npu_r_fi_armed,
                                              .flags = FRAC_NPU_REG_FI },
};

QEMU_BUILD_BUG_ON(FRAC_NPU_LATCH(FRAC_REG_IRQS_LO) >=
                  ARRAY_SIZE(((FracState *)0)->hi_latch));

/* One global register: 0 and a guest error for one that does not exist. */
static uint64_t frac_npu_reg_read(FracState *s, hwaddr addr)
{
    const FracNpuRegRead *op = NULL;
    uint64_t v;

    if (addr < FRAC_QREGS_BASE) {
        op = &frac_npu_readops[FRAC_NPU_REG_IDX(addr)];
    }
    if (!op || !op->read ||
        ((op->flags & FRAC_NPU_REG_FI) && !s->fault_injection)) {
        FRAC_GUEST_ERR(frac_npu_err_read_unknown,
                       "read of unknown register 0x%" PRIx64, addr);
        return 0;
    }
    if ((op->flags & FRAC_NPU_REG_LATCH) && (op->flags & FRAC_NPU_REG_HI)) {
        return s->hi_latch[op->latch];
    }
    v = op->read(s);
    if (op->flags & FRAC_NPU_REG_LATCH) {
        s->hi_latch[op->latch] = v >> 32;
    }
    return op->flags & FRAC_NPU_REG_HI ? v >> 32 : (uint32_t)v;
}

static uint64_t frac_npu_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    FracState *s = opaque;
    uint64_t v;

    if (s->exiting) {
        return 0;
    }
    if (addr >= FRAC_QREGS_BASE && addr < FRAC_QREG(s->num_queues, 0)) {
        unsigned qid = (addr - FRAC_QREGS_BASE) / FRAC_QREGS_STRIDE;

        v = frac_npu_qreg_read(&s->q[qid],
                               (addr - FRAC_QREGS_BASE) % FRAC_QREGS_STRIDE);
    } else {
        v = frac_npu_reg_read(s, addr);
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

static void frac_npu_w_control(FracState *s, uint64_t val)
{
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
}

static void frac_npu_w_dma_bits(FracState *s, uint64_t val)
{
    if (val < 32 || val > 64) {
        FRAC_GUEST_ERR(frac_npu_err_dma_bits,
                       "DMA_BITS %" PRIu64 " outside 32..64", val);
        return;
    }
    s->dma_bits = val;
    qatomic_set(&s->dma_mask, val == 64 ? UINT64_MAX : (1ULL << val) - 1);
}

static void frac_npu_w_scratch(FracState *s, uint64_t val)
{
    s->scratch = val;
}

static void frac_npu_w_err_status(FracState *s, uint64_t val)
{
    s->err_status &= ~val;
}

static void frac_npu_w_int_status(FracState *s, uint64_t val)
{
    s->int_status &= ~val;
    frac_npu_update_intx(s);
}

static void frac_npu_w_int_mask(FracState *s, uint64_t val)
{
    uint32_t unmasked = s->int_mask & ~val;

    s->int_mask = val;
    /* MSI is an edge: a cause pending under the mask is sent on unmask. */
    if (msi_enabled(PCI_DEVICE(s)) && !msix_enabled(PCI_DEVICE(s)) &&
        (s->int_status & unmasked)) {
        msi_notify(PCI_DEVICE(s), 0);
    }
    frac_npu_update_intx(s);
}

static void frac_npu_w_fi_ctrl(FracState *s, uint64_t val)
{
    Error *err = NULL;

    frac_npu_inject(s, val & 0xff, (val >> 8) & 0xff, val >> 16, &err);
    if (err) {
        FRAC_GUEST_ERR(frac_npu_err_fi_ctrl, "FI_CTRL: %s",
                       error_get_pretty(err));
        error_free(err);
    }
}

#define FRAC_NPU_WR(reg, fn, fl) \
    [FRAC_NPU_REG_IDX(reg)] = { .write = (fn), .flags = (fl) }

static const FracNpuRegWrite frac_npu_writeops[FRAC_QREGS_BASE / 4] = {
    FRAC_NPU_WR(FRAC_REG_CONTROL, frac_npu_w_control, 0),
    FRAC_NPU_WR(FRAC_REG_DMA_BITS, frac_npu_w_dma_bits, 0),
    FRAC_NPU_WR(FRAC_REG_SCRATCH, frac_npu_w_scratch, 0),
    FRAC_NPU_WR(FRAC_REG_ERR_STATUS, frac_npu_w_err_status, 0),
    FRAC_NPU_WR(FRAC_REG_INT_STATUS, frac_npu_w_int_status, 0),
    FRAC_NPU_WR(FRAC_REG_INT_MASK, frac_npu_w_int_mask, 0),
    FRAC_NPU_WR(FRAC_REG_FI_CTRL, frac_npu_w_fi_ctrl, FRAC_NPU_REG_FI),
};

static void frac_npu_regs_write(void *opaque, hwaddr addr, uint64_t val,
                                unsigned size)
{
    FracState *s = opaque;
    const FracNpuRegWrite *op = NULL;

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

        frac_npu_qreg_write(&s->q[qid],
                            (addr - FRAC_QREGS_BASE) % FRAC_QREGS_STRIDE, val);
        return;
    }
    if (addr < FRAC_QREGS_BASE) {
        op = &frac_npu_writeops[FRAC_NPU_REG_IDX(addr)];
    }
    if (!op || !op->write ||
        ((op->flags & FRAC_NPU_REG_FI) && !s->fault_injection)) {
        FRAC_GUEST_ERR(frac_npu_err_write_unknown, "write of 0x%" PRIx64
                       " to unknown or read-only register 0x%" PRIx64,
                       val, addr);
        return;
    }
    op->write(s, val);
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

/* Queue bookkeeping that allocates nothing (so nothing to undo on error). */
static void frac_npu_init_state(FracState *s)
{
    for (unsigned i = 0; i < s->num_queues; i++) {
        FracQueue *q = &s->q[i];

        q->s = s;
        q->id = i;
        q->phase = true;
        QTAILQ_INIT(&q->pending);
        QSIMPLEQ_INIT(&q->work);
        QSIMPLEQ_INIT(&q->done);
    }
}

/* Config space, BARs, device memory and the capabilities. */
static bool frac_npu_init_pci(FracState *s, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint8_t *conf = pdev->config;
    unsigned nvec;
    int ret;

    conf[PCI_INTERRUPT_PIN] = 1;
    pci_config_set_class(conf, FRAC_PCI_CLASS);

    memory_region_init(&s->bar0, OBJECT(s), "frac-npu.bar0", FRAC_BAR0_SIZE);
    memory_region_init_io(&s->regs, OBJECT(s), &frac_npu_regs_ops, s,
                          "frac-npu.regs", FRAC_REGS_SIZE);
    memory_region_init_io(&s->db, OBJECT(s), &frac_npu_db_ops, s,
                          "frac-npu.doorbells", FRAC_DB_SIZE);
    memory_region_add_subregion(&s->bar0, FRAC_REGS_OFFSET, &s->regs);
    memory_region_add_subregion(&s->bar0, FRAC_DB_OFFSET, &s->db);
    pci_register_bar(pdev, FRAC_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);

    if (!memory_region_init_ram(&s->devmem, OBJECT(s), "frac-npu.devmem",
                                s->mem_size, errp)) {
        return false;
    }
    s->devmem_ptr = memory_region_get_ram_ptr(&s->devmem);
    pci_register_bar(pdev, FRAC_BAR_MEM, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->devmem);

    /* Capabilities: PM, MSI, MSI-X, PCIe (FLR), AER. */
    ret = pci_pm_init(pdev, 0x40, errp);
    if (ret < 0) {
        return false;
    }
    if (s->use_msi &&
        msi_init(pdev, FRAC_MSI_CAP_OFFSET, 1, true, false, errp) < 0) {
        return false;
    }
    nvec = s->num_queues + 1;
    if (s->use_msix) {
        ret = msix_init(pdev, nvec, &s->bar0, FRAC_BAR_REGS,
                        FRAC_MSIX_TABLE_OFFSET, &s->bar0, FRAC_BAR_REGS,
                        FRAC_MSIX_PBA_OFFSET, 0, errp);
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
    if (pcie_aer_init(pdev, PCI_ERR_VER, FRAC_AER_OFFSET, PCI_ERR_SIZEOF,
                      errp) < 0) {
        goto err_pcie;
    }
    return true;

err_pcie:
    pcie_cap_exit(pdev);
err_msix:
    if (s->use_msix) {
        msix_uninit(pdev, &s->bar0, &s->bar0);
    }
err_msi:
    msi_uninit(pdev);
    return false;
}

/*
 * The device clock starts, each queue gets its bottom halves, timers and
 * worker, and the device powers on as from a global reset.
 */
static void frac_npu_init_device(FracState *s)
{
    s->clock_base = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    for (unsigned i = 0; i < s->num_queues; i++) {
        FracQueue *q = &s->q[i];
        g_autofree char *name = g_strdup_printf("frac-npu-q%u", i);

        qemu_mutex_init(&q->lock);
        qemu_cond_init(&q->cond);
        q->fetch_bh = qemu_bh_new_guarded(frac_npu_fetch_bh, q,
                                          &DEVICE(s)->mem_reentrancy_guard);
        q->done_bh = qemu_bh_new_guarded(frac_npu_done_bh, q,
                                         &DEVICE(s)->mem_reentrancy_guard);
        q->fetch_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                      frac_npu_fetch_timer, q);
        q->post_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                     frac_npu_post_timer, q);
        q->coal_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                     frac_npu_coal_timer, q);
        qemu_thread_create(&q->thread, name, frac_npu_worker, q,
                           QEMU_THREAD_JOINABLE);
    }
    frac_npu_reset_all(s, "power-on");
}

/* As nvme_realize: check the properties, then init state, PCI, device. */
static void frac_npu_realize(PCIDevice *pdev, Error **errp)
{
    FracState *s = FRAC_NPU(pdev);

    if (!frac_npu_check_params(s, errp)) {
        return;
    }
    frac_npu_init_state(s);
    if (!frac_npu_init_pci(s, errp)) {
        return;
    }
    frac_npu_init_device(s);
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
