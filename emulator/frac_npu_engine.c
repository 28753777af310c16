/*
 * FRAC-1 device model: the engine. Operands (host ranges, SG lists, device
 * memory), DMA and the commands (COPY, FILL, CRC32C, GEMM, TIMESTAMP), run
 * by the queue's worker thread without the BQL, or inline in the main loop
 * for small jobs (frac_npu_queue.c decides). This is the only code that runs
 * without the BQL. It writes only the job, device memory and (by DMA) guest
 * memory; besides them it reads what realize fixed (devmem_ptr,
 * zero_latency, clock_base), the atomics FracQueue.gen, FracQueue.stop and
 * FracState.dma_mask, and, in frac_npu_own_bar, the BAR addresses, which a
 * config write may change under a running job (unsynchronised). The worker
 * hands each job back through FracQueue.done (docs/hw-spec.md 5, Commands
 * and Scatter-gather list).
 *
 * Copyright (c) 2026 The frac authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/crc32c.h"
#include "qemu/main-loop.h"
#include "qemu/rcu.h"
#include "hw/pci/pci_device.h"
#include "trace.h"
#include "frac_npu.h"

#define FRAC_CHUNK (256 * KiB)

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

/*
 * Does [addr, addr + len) touch one of our own BARs? @hit: its first byte
 * there
 */
bool frac_npu_own_bar(FracState *s, uint64_t addr, uint64_t len, uint64_t *hit)
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
                                  uint8_t flags, uint8_t devmem_flag,
                                  uint8_t sgl_flag)
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

static uint32_t frac_npu_do_copy(FracJob *job, FracOperand *src,
                                 FracOperand *dst)
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
        st = frac_npu_operand_rw(job, dst, off, buf,
                                 MIN(FRAC_CHUNK, len - off), true);
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

    /* When the job runs: its modelled start (without a model, the clock). */
    job->result = job->q->s->zero_latency ? frac_npu_clock(job->q->s)
                                          : job->t_start;
    if (job->desc.len >= 8) {
        le = cpu_to_le64(job->result);
        return frac_npu_operand_rw(job, dst, 0, &le, 8, true);
    }
    return FRAC_STATUS_OK;
}

/* Byte counts of each operand, from a validated descriptor. */
void frac_npu_job_sizes(const struct frac_desc *d, uint64_t *src,
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
void frac_npu_job_execute(FracJob *job)
{
    FracState *s = job->q->s;
    struct frac_desc *d = &job->desc;
    FracOperand src, dst, aux;
    uint64_t ssz, dsz, asz;
    uint64_t t0 = frac_npu_clock(s);

    frac_npu_job_sizes(d, &ssz, &dsz, &asz);
    frac_npu_operand_init(&src, d->src, ssz, d->flags, FRAC_DF_SRC_DEVMEM,
                          FRAC_DF_SRC_SGL);
    frac_npu_operand_init(&dst, d->dst, dsz, d->flags, FRAC_DF_DST_DEVMEM,
                          FRAC_DF_DST_SGL);
    frac_npu_operand_init(&aux, d->aux, asz, d->flags, FRAC_DF_AUX_DEVMEM,
                          FRAC_DF_AUX_SGL);

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

void *frac_npu_worker(void *opaque)
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
