/*
 * FRAC-1 device model: the device. Interrupts (MSI-X, MSI, INTx) and error
 * reporting, telemetry (the thermal and power model), run-time fault
 * injection (FI_CTRL and the "inject" property), and the PCI/QOM glue:
 * properties, realize, exit, reset. The registers and doorbells are
 * frac_npu_regs.c, the queues frac_npu_queue.c, the engine
 * frac_npu_engine.c; frac_npu.h says which runs where.
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

/* ---- Fault injection: FI_CTRL and the inject property ----------------- */

void frac_npu_inject(FracState *s, unsigned kind, unsigned qid, uint32_t arg,
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
        error_setg(errp, "queue %u out of range (device has %u)", qid,
                   s->num_queues);
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
    case FRAC_FAULT_BAD_ID:
        q->fi_bad_id = arg ? arg : 1;
        break;
    case FRAC_FAULT_BAD_HEAD:
        q->fi_bad_head = arg ? arg : 1;
        break;
    case FRAC_FAULT_DUP:
        q->fi_dup = arg ? arg : 1;
        break;
    }
}

static const char *const frac_npu_fault_name[FRAC_FAULT_MAX] = {
    [FRAC_FAULT_HANG] = "hang",
    [FRAC_FAULT_DROP_IRQ] = "drop-irq",
    [FRAC_FAULT_ERROR] = "error",
    [FRAC_FAULT_DMA] = "dma",
    [FRAC_FAULT_FATAL] = "fatal",
    [FRAC_FAULT_LATENCY] = "latency",
    [FRAC_FAULT_BAD_ID] = "bad-id",
    [FRAC_FAULT_BAD_HEAD] = "bad-head",
    [FRAC_FAULT_DUP] = "dup",
};

static void frac_npu_get_inject(Object *obj, Visitor *v, const char *name,
                                void *opaque, Error **errp)
{
    FracState *s = FRAC_NPU(obj);
    char *val = g_strdup(s->last_inject ? s->last_inject : "");

    visit_type_str(v, name, &val, errp);
    g_free(val);
}

/*
 * "kind[:queue[:arg]]", e.g. "hang:1", "drop-irq:0:3", "latency:2:50",
 * "bad-head:0:4096", "fatal"
 */
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
                   "(hang, drop-irq, error, dma, fatal, latency, bad-id, "
                   "bad-head, dup)",
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

static void frac_npu_write_config(PCIDevice *pdev, uint32_t addr,
                                  uint32_t val, int len)
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

/*
 * A subregion holds a reference to its owner until it leaves its container:
 * regs and doorbells left in bar0 would keep the device itself alive, never
 * finalized after an unplug. Take them out, as nvme_exit does its iomem.
 */
static void frac_npu_uninit_bar0(FracState *s)
{
    memory_region_del_subregion(&s->bar0, &s->db);
    memory_region_del_subregion(&s->bar0, &s->regs);
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
        goto err_bar0;
    }
    s->devmem_ptr = memory_region_get_ram_ptr(&s->devmem);
    pci_register_bar(pdev, FRAC_BAR_MEM, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->devmem);

    /* Capabilities: PM, MSI, MSI-X, PCIe (FLR), AER. */
    ret = pci_pm_init(pdev, 0x40, errp);
    if (ret < 0) {
        goto err_bar0;
    }
    if (s->use_msi &&
        msi_init(pdev, FRAC_MSI_CAP_OFFSET, 1, true, false, errp) < 0) {
        goto err_bar0;
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
err_bar0:
    frac_npu_uninit_bar0(s);
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
    frac_npu_uninit_bar0(s);
    g_free(s->last_inject);
}

static const Property frac_npu_props[] = {
    DEFINE_PROP_UINT32("queues", FracState, num_queues, 4),
    DEFINE_PROP_SIZE("mem-size", FracState, mem_size, 256 * MiB),
    DEFINE_PROP_UINT32("fetch-latency-ns", FracState, fetch_latency_ns, 2000),
    DEFINE_PROP_UINT32("completion-latency-ns", FracState,
                       completion_latency_ns, 1000),
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
    object_property_add(obj, "inject", "str", frac_npu_get_inject,
                        frac_npu_set_inject, NULL, NULL);
    object_property_set_description(obj, "inject",
                                    "Inject a fault at run time: "
                                    "kind[:queue[:arg]] with kind one of "
                                    "hang, drop-irq, error, dma, fatal, "
                                    "latency, bad-id, bad-head, dup");
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
