/*
 * FRAC-1 device model: the queues, in the main loop with the BQL held.
 * Fetch descriptors after a doorbell (a bottom half, or a timer for the
 * fetch latency), validate them, run small jobs inline and give the rest to
 * the queue's worker (frac_npu_engine.c), schedule each job on the timing
 * model, and post completion records in fetch order no earlier than the
 * model says, with interrupt moderation. Queue enable, disable and reset,
 * the quiesce handshake and the global reset (docs/hw-spec.md 5, 7-9).
 *
 * Copyright (c) 2026 The frac authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/main-loop.h"
#include "hw/pci/pci_device.h"
#include "trace.h"
#include "frac_npu.h"

/* Jobs at or below these sizes run in the main loop instead of the worker. */
#define FRAC_INLINE_BYTES (64 * KiB)
#define FRAC_INLINE_MACS (64 * 1024)

static void frac_npu_queue_drained(FracQueue *q);
static void frac_npu_reset_check(FracState *s);

static const char *const frac_npu_op_name[FRAC_OP_MAX] = {
    [FRAC_OP_NOP] = "nop",
    [FRAC_OP_COPY] = "copy",
    [FRAC_OP_FILL] = "fill",
    [FRAC_OP_CRC32C] = "crc32c",
    [FRAC_OP_GEMM] = "gemm",
    [FRAC_OP_TIMESTAMP] = "timestamp",
};

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
        uint64_t flops = 2ULL * job->desc.arg[0] * job->desc.arg[1] *
                         job->desc.arg[2];

        job->compute_ns = flops / s->compute_gflops;
    }
    start = MAX(now, (uint64_t)q->busy_until);
    job->t_start = start;
    job->t_end = start + job->dma_ns + job->compute_ns + job->extra_ns;
    frac_npu_telemetry_update(s);
    frac_npu_busy_add(s, start, start + job->dma_ns + job->compute_ns);
    q->busy_until = job->t_end;
    job->deadline = frac_npu_dev_to_virt(s, job->t_end +
                                            s->completion_latency_ns);
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

/*
 * Invariant: any DMA or interrupt the main loop issues may reset the device
 * before it returns. On q35 a DMA write or an MSI/MSI-X message can reach
 * the MMCONFIG window, and QEMU's re-entrancy guard covers our BARs, not
 * config space: 0x8000 written to our own Device Control is an FLR (a
 * secondary bus reset through the root port's Bridge Control the same), so
 * frac_npu_reset runs, and frac_npu_queue_abort with it, inside that write.
 * A job the main loop uses across such a call is marked held: the abort
 * unlinks it but leaves it to its holder, who after each DMA or interrupt
 * asks frac_npu_job_dropped(), and if so frees the job and touches neither
 * it nor its queue again (the queue's state is the reset's now). No other
 * pointer to a job is kept across a DMA or an interrupt.
 */
static bool frac_npu_job_dropped(FracJob *job)
{
    return job->gen != job->q->gen;
}

void frac_npu_queue_fetch(FracQueue *q)
{
    FracState *s = q->s;
    PCIDevice *pdev = PCI_DEVICE(s);

    if (s->exiting || !(s->control & FRAC_CTRL_ENABLE) ||
        (s->status & FRAC_STS_FATAL) ||
        !(q->status & FRAC_QSTS_ENABLED) || q->hung) {
        return;
    }
    while (q->sq_head != q->fetch_tail && q->inflight < q->size - 1) {
        uint64_t addr = q->sq_base +
                        (uint64_t)q->sq_head * sizeof(struct frac_desc);
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
                             d->opcode < FRAC_OP_MAX ?
                             frac_npu_op_name[d->opcode] : "?",
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
            job->held = true;
            frac_npu_job_execute(job);
            job->held = false;
            if (frac_npu_job_dropped(job)) {
                /* Reset by its own DMA: it stopped there, posts nothing. */
                frac_npu_job_free(job);
                return;
            }
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

void frac_npu_fetch_bh(void *opaque)
{
    frac_npu_queue_fetch(opaque);
}

/*
 * Timers run like the guarded BHs: an MSI-X message or DMA aimed at our own
 * BAR0 must not re-enter the MMIO handlers (a RESET written to CONTROL from
 * inside frac_npu_queue_post frees the job being posted).
 */
bool frac_npu_guard_engage(FracState *s)
{
    MemReentrancyGuard *g = &DEVICE(s)->mem_reentrancy_guard;
    bool was = g->engaged_in_io;

    g->engaged_in_io = true;
    return was;
}

void frac_npu_guard_restore(FracState *s, bool was)
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

void frac_npu_fetch_timer(void *opaque)
{
    frac_npu_guarded(opaque, frac_npu_fetch_due);
}

/*
 * An SQ doorbell: its descriptors are fetched fetch-latency-ns after it, not
 * with an earlier doorbell's. More than FRAC_DB_PENDING doorbells within one
 * latency merge into the last: the older ones then come late, never early.
 */
void frac_npu_queue_doorbell(FracQueue *q)
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
void frac_npu_queue_kick(FracQueue *q)
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

void frac_npu_coal_timer(void *opaque)
{
    frac_npu_guarded(opaque, frac_npu_coal_fire);
}

/*
 * Write a completion record: everything but the dword holding sq_head and
 * the phase flags first, that dword last, so a driver that sees the phase
 * flip sees the whole record (NVMe puts its phase in the CQE's last dword
 * for the same reason).
 */
static bool frac_npu_cqe_write(FracState *s, FracJob *job, uint64_t addr,
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
                          part[i].len) != MEMTX_OK ||
            frac_npu_job_dropped(job)) {
            return false;
        }
    }
    return true;
}

static bool frac_npu_cq_full(FracQueue *q)
{
    return ((q->cq_tail + 1) & (q->size - 1)) == q->cq_head;
}

/*
 * Write @cqe into the CQ's tail slot with the tail's phase and move the tail
 * on. False when the write failed: the queue is then in error, or the write
 * reset the device (frac_npu_job_dropped).
 */
static bool frac_npu_cqe_post(FracQueue *q, FracJob *job,
                              struct frac_cqe *cqe)
{
    FracState *s = q->s;
    uint64_t addr = q->cq_base + (uint64_t)q->cq_tail * sizeof(*cqe);

    cqe->flags = cpu_to_le16(q->phase ? FRAC_CQE_PHASE : 0);
    if (frac_npu_own_bar(s, addr, sizeof(*cqe), NULL) ||
        !frac_npu_cqe_write(s, job, addr, cqe)) {
        if (frac_npu_job_dropped(job)) {
            return false; /* the write reset us: no error, no record */
        }
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
    return true;
}

/*
 * Injected lies (docs/hw-spec.md 10): a job_id one more than the
 * descriptor's, an sq_head moved on, both in this record only.
 */
static void frac_npu_cqe_corrupt(FracQueue *q, struct frac_cqe *cqe)
{
    if (q->fi_bad_id) {
        q->fi_bad_id--;
        cqe->job_id = cpu_to_le64(le64_to_cpu(cqe->job_id) + 1);
        trace_frac_npu_fault_cqe(q->id, "bad-id", q->cq_tail,
                                 le64_to_cpu(cqe->job_id),
                                 le16_to_cpu(cqe->sq_head));
    }
    if (q->fi_bad_head) {
        cqe->sq_head = cpu_to_le16(le16_to_cpu(cqe->sq_head) + q->fi_bad_head);
        q->fi_bad_head = 0;
        trace_frac_npu_fault_cqe(q->id, "bad-head", q->cq_tail,
                                 le64_to_cpu(cqe->job_id),
                                 le16_to_cpu(cqe->sq_head));
    }
}

static bool frac_npu_post_one(FracQueue *q, FracJob *job)
{
    FracState *s = q->s;
    struct frac_cqe cqe = { 0 };
    uint32_t count = FRAC_COAL_COUNT(q->coal);
    uint32_t usecs = FRAC_COAL_USECS(q->coal);

    if (frac_npu_cq_full(q)) {
        q->cq_stalled = true;
        return false;
    }
    cqe.job_id = cpu_to_le64(job->desc.job_id);
    cqe.result = cpu_to_le64(job->result);
    cqe.t_start = cpu_to_le64(job->t_start);
    cqe.t_end = cpu_to_le64(job->t_end);
    cqe.status = cpu_to_le32(job->status);
    cqe.sq_head = cpu_to_le16(job->sq_head);
    cqe.err_addr = cpu_to_le64(job->err_addr);
    frac_npu_cqe_corrupt(q, &cqe);
    if (!frac_npu_cqe_post(q, job, &cqe)) {
        return false;
    }
    /* An injected duplicate: the same record again, when the CQ has room. */
    if (q->fi_dup && !frac_npu_cq_full(q)) {
        q->fi_dup--;
        trace_frac_npu_fault_cqe(q->id, "dup", q->cq_tail,
                                 le64_to_cpu(cqe.job_id),
                                 le16_to_cpu(cqe.sq_head));
        if (!frac_npu_cqe_post(q, job, &cqe)) {
            return false;
        }
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
void frac_npu_queue_post(FracQueue *q)
{
    FracState *s = q->s;
    FracJob *job;
    bool posted = false, ok;

    if (s->exiting || (s->status & FRAC_STS_FATAL) || q->hung) {
        return;
    }
    while ((job = QTAILQ_FIRST(&q->pending)) && job->finished) {
        if (job->deadline > qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL)) {
            timer_mod(q->post_timer, job->deadline);
            break;
        }
        if (!(q->status & FRAC_QSTS_ENABLED)) {
            break;
        }
        job->held = true;
        ok = frac_npu_post_one(q, job);
        job->held = false;
        if (frac_npu_job_dropped(job)) {
            /* Its record or interrupt reset us; the abort left it to us. */
            frac_npu_job_free(job);
            return;
        }
        if (!ok) {
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

void frac_npu_post_timer(void *opaque)
{
    frac_npu_guarded(opaque, frac_npu_queue_post);
}

void frac_npu_done_bh(void *opaque)
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
 * loop are freed here, but for a held one, which its holder frees (see
 * frac_npu_job_dropped); the one the worker is running sees the new
 * generation at its next chunk and comes back through frac_npu_done_bh,
 * which frees it.
 * Nothing of the old generation is posted after this. q->outstanding stays
 * above zero until that last job is back.
 */
void frac_npu_queue_abort(FracQueue *q)
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
        if (!job->in_worker && !job->held) {
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
    q->fi_bad_id = q->fi_bad_head = q->fi_dup = 0;
}

/*
 * Queue reset: drop the jobs and stop the queue at once; the registers go to
 * their reset values, and STATUS.RESETTING / CTRL.RESET clear, only once the
 * worker has given back the job it may be running (frac_npu_queue_drained).
 */
void frac_npu_queue_reset(FracQueue *q)
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
void frac_npu_queue_enable(FracQueue *q)
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
void frac_npu_queue_disable(FracQueue *q)
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
bool frac_npu_quiesced(FracState *s)
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
void frac_npu_reset_all(FracState *s, const char *why)
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
