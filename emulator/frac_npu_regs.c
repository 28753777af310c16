/*
 * FRAC-1 device model: the MMIO registers and the doorbells (BAR0), on vCPU
 * threads with the BQL held. Global and queue registers are read and written
 * through tables, one small function per register; a doorbell records the
 * new tail or head and hands over to frac_npu_queue.c. Register layout:
 * include/frac_hw.h, docs/hw-spec.md 3 and 5.
 *
 * Copyright (c) 2026 The frac authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "trace.h"
#include "frac_npu.h"

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

/*
 * hi_latch[] slots: the clock, then the counters in register order (LO and
 * HI of a counter share one)
 */
#define FRAC_NPU_LATCH_CLOCK 0
#define FRAC_NPU_LATCH(reg) (1 + ((reg) - FRAC_REG_BUSY_NS_LO(0)) / 8)

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

/* One table entry each: a 64-bit register is two, LO and HI. */
#define FRAC_NPU_RD(reg, fn) \
    [FRAC_NPU_REG_IDX(reg)] = { .read = (fn) }
#define FRAC_NPU_RD_HI(reg, fn) \
    [FRAC_NPU_REG_IDX(reg)] = { .read = (fn), .flags = FRAC_NPU_REG_HI }
#define FRAC_NPU_RD_LATCH(reg, fn, slot) \
    [FRAC_NPU_REG_IDX(reg)] = { .read = (fn), .flags = FRAC_NPU_REG_LATCH, \
                                .latch = (slot) }
#define FRAC_NPU_RD_LATCH_HI(reg, fn, slot) \
    [FRAC_NPU_REG_IDX(reg)] = { .read = (fn), .latch = (slot), \
                                .flags = FRAC_NPU_REG_LATCH | \
                                         FRAC_NPU_REG_HI }
#define FRAC_NPU_RD_COUNTER(reg, fn) \
    FRAC_NPU_RD_LATCH(reg, fn, FRAC_NPU_LATCH(reg))
#define FRAC_NPU_RD_COUNTER_HI(reg, fn) \
    FRAC_NPU_RD_LATCH_HI(reg, fn, FRAC_NPU_LATCH(reg))

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
    FRAC_NPU_RD(FRAC_Q_SQ_BASE_LO, frac_npu_q_sq_base),
    FRAC_NPU_RD_HI(FRAC_Q_SQ_BASE_HI, frac_npu_q_sq_base),
    FRAC_NPU_RD(FRAC_Q_SIZE, frac_npu_q_size),
    FRAC_NPU_RD(FRAC_Q_CTRL, frac_npu_q_ctrl),
    FRAC_NPU_RD(FRAC_Q_CQ_BASE_LO, frac_npu_q_cq_base),
    FRAC_NPU_RD_HI(FRAC_Q_CQ_BASE_HI, frac_npu_q_cq_base),
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
        v |= q->fi_bad_id ? BIT(FRAC_FAULT_BAD_ID) : 0;
        v |= q->fi_bad_head ? BIT(FRAC_FAULT_BAD_HEAD) : 0;
        v |= q->fi_dup ? BIT(FRAC_FAULT_DUP) : 0;
    }
    v |= s->status & FRAC_STS_FATAL ? BIT(FRAC_FAULT_FATAL) : 0;
    return v;
}

static const FracNpuRegRead frac_npu_readops[FRAC_QREGS_BASE / 4] = {
    FRAC_NPU_RD(FRAC_REG_ID, frac_npu_r_id),
    FRAC_NPU_RD(FRAC_REG_VERSION, frac_npu_r_version),
    FRAC_NPU_RD(FRAC_REG_CAP0, frac_npu_r_cap0),
    FRAC_NPU_RD(FRAC_REG_CAP1, frac_npu_r_cap1),
    FRAC_NPU_RD(FRAC_REG_DEVMEM_SIZE_LO, frac_npu_r_devmem_size),
    FRAC_NPU_RD_HI(FRAC_REG_DEVMEM_SIZE_HI, frac_npu_r_devmem_size),
    FRAC_NPU_RD(FRAC_REG_GEMM_MAX_DIM, frac_npu_r_gemm_max_dim),
    FRAC_NPU_RD(FRAC_REG_SGL_MAX, frac_npu_r_sgl_max),
    FRAC_NPU_RD(FRAC_REG_CONTROL, frac_npu_r_control),
    FRAC_NPU_RD(FRAC_REG_STATUS, frac_npu_r_status),
    FRAC_NPU_RD(FRAC_REG_DMA_BITS, frac_npu_r_dma_bits),
    FRAC_NPU_RD(FRAC_REG_SCRATCH, frac_npu_r_scratch),
    FRAC_NPU_RD(FRAC_REG_ERR_STATUS, frac_npu_r_err_status),
    FRAC_NPU_RD(FRAC_REG_ERR_QUEUE, frac_npu_r_err_queue),
    FRAC_NPU_RD(FRAC_REG_ERR_ADDR_LO, frac_npu_r_err_addr),
    FRAC_NPU_RD_HI(FRAC_REG_ERR_ADDR_HI, frac_npu_r_err_addr),
    FRAC_NPU_RD(FRAC_REG_INT_STATUS, frac_npu_r_int_status),
    FRAC_NPU_RD(FRAC_REG_INT_MASK, frac_npu_r_int_mask),
    FRAC_NPU_RD(FRAC_REG_ERR_VECTOR, frac_npu_r_err_vector),
    FRAC_NPU_RD_LATCH(FRAC_REG_CLOCK_LO, frac_npu_r_clock,
                      FRAC_NPU_LATCH_CLOCK),
    FRAC_NPU_RD_LATCH_HI(FRAC_REG_CLOCK_HI, frac_npu_r_clock,
                         FRAC_NPU_LATCH_CLOCK),
    FRAC_NPU_RD(FRAC_REG_CLOCK_FREQ, frac_npu_r_clock_freq),
    FRAC_NPU_RD(FRAC_REG_TEMP_MC, frac_npu_r_temp_mc),
    FRAC_NPU_RD(FRAC_REG_POWER_MW, frac_npu_r_power_mw),
    FRAC_NPU_RD_COUNTER(FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_DMA),
                        frac_npu_r_busy_dma),
    FRAC_NPU_RD_COUNTER_HI(FRAC_REG_BUSY_NS_HI(FRAC_ENGINE_DMA),
                           frac_npu_r_busy_dma),
    FRAC_NPU_RD_COUNTER(FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_COMPUTE),
                        frac_npu_r_busy_compute),
    FRAC_NPU_RD_COUNTER_HI(FRAC_REG_BUSY_NS_HI(FRAC_ENGINE_COMPUTE),
                           frac_npu_r_busy_compute),
    FRAC_NPU_RD_COUNTER(FRAC_REG_JOBS_DONE_LO, frac_npu_r_jobs_done),
    FRAC_NPU_RD_COUNTER_HI(FRAC_REG_JOBS_DONE_HI, frac_npu_r_jobs_done),
    FRAC_NPU_RD_COUNTER(FRAC_REG_JOBS_ERR_LO, frac_npu_r_jobs_err),
    FRAC_NPU_RD_COUNTER_HI(FRAC_REG_JOBS_ERR_HI, frac_npu_r_jobs_err),
    FRAC_NPU_RD_COUNTER(FRAC_REG_BYTES_RD_LO, frac_npu_r_bytes_rd),
    FRAC_NPU_RD_COUNTER_HI(FRAC_REG_BYTES_RD_HI, frac_npu_r_bytes_rd),
    FRAC_NPU_RD_COUNTER(FRAC_REG_BYTES_WR_LO, frac_npu_r_bytes_wr),
    FRAC_NPU_RD_COUNTER_HI(FRAC_REG_BYTES_WR_HI, frac_npu_r_bytes_wr),
    FRAC_NPU_RD_COUNTER(FRAC_REG_IRQS_LO, frac_npu_r_irqs),
    FRAC_NPU_RD_COUNTER_HI(FRAC_REG_IRQS_HI, frac_npu_r_irqs),
    [FRAC_NPU_REG_IDX(FRAC_REG_FI_ARMED)] = { .read = frac_npu_r_fi_armed,
                                              .flags = FRAC_NPU_REG_FI },
};

QEMU_BUILD_BUG_ON(FRAC_NPU_LATCH(FRAC_REG_IRQS_HI) >=
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

static void frac_npu_db_write(void *opaque, hwaddr addr, uint64_t val,
                              unsigned size)
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

const MemoryRegionOps frac_npu_regs_ops = {
    .read = frac_npu_regs_read,
    .write = frac_npu_regs_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};

const MemoryRegionOps frac_npu_db_ops = {
    .read = frac_npu_db_read,
    .write = frac_npu_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 4 },
    .impl = { .min_access_size = 4, .max_access_size = 4 },
};
