// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * FRAC-1 device model tests without a guest kernel.
 *
 * The test plays the role of firmware and driver at once: it drives QEMU's
 * "frac-npu" through the qtest protocol (qtest.c), programs PCI config space
 * through ports 0xcf8/0xcfc, places the BARs itself (no firmware runs under
 * qtest), builds descriptor and completion rings in guest RAM, rings
 * doorbells and checks every result against a host-side reference.
 *
 * Interrupts: MSI-X vector v is programmed to write the data 0x100 + v to the
 * guest RAM word MSI_BASE + 4 * v. An MSI is just a DMA write, so with no
 * interrupt controller in the way the test sees an interrupt as that word
 * changing from 0; it zeroes the words before each check. (The PBA is checked
 * separately with a masked vector.)
 *
 * Time: under qtest the virtual clock stands still unless the test moves it
 * (clock_step). The device's fetch latency, timing model and interrupt
 * moderation run on that clock, and big jobs run on a worker thread in real
 * time, so waiting for a completion is a bounded loop of "look at the CQ
 * phase bit, else advance the clock to the next timer (or sleep briefly if
 * no timer is pending, while the worker computes)". Nothing asserts wall
 * clock durations; device timestamps are model facts.
 *
 * Output is TAP. QEMU is started once per property set ("group"), not per test.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "frac_hw.h"
#include "libfrac.h"
#include "qtest.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MiB		(1024ULL * 1024)
#define GiB		(1024ULL * MiB)

/* ---- guest physical layout -------------------------------------------- */

/*
 * q35 with -m 4608M has RAM at [0, 2G) and [4G, 6.5G); the 32-bit PCI hole
 * is [2G, 0xfec00000) minus MMCONFIG (0xb0000000, off until firmware turns it
 * on), the 64-bit hole starts above the high RAM. Groups that run with
 * -m 256M use only the low part of this map.
 */
#define BAR0_ADDR	0xc0000000ULL
#define BAR2_ADDR	0x800000000ULL	/* 32 GiB */
#define MSI_BASE	0x00100000ULL	/* vector v writes 0x100 + v here + 4v */
#define MSI_DATA(v)	(0x100u + (v))
#define RING_BASE	0x00200000ULL	/* queue q: SQ at + q * 512K, CQ 256K above */
#define RING_STRIDE	0x80000ULL
#define SGL_BASE	0x00c00000ULL	/* 4 MiB for SG lists */
#define BUF(n)		(0x01000000ULL + (uint64_t)(n) * 0x400000)	/* 4 MiB each, n < 56 */
#define HIGH_RAM	0x100000000ULL	/* RAM above 4 GiB (main group only) */
#define UNMAPPED	0xdead00000000ULL	/* decodes to nothing */

#define QOM_PATH	"/machine/peripheral/frac0"
#define WAIT_S		10.0	/* wall-clock bound of one wait (jobs take ms) */

/* ---- TAP ---------------------------------------------------------------- */

static int tap_num;
static int tap_failures;
static bool cur_failed;
static const char *cur_name;

static bool check_impl(bool ok, int line, const char *expr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool check_impl(bool ok, int line, const char *expr, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return true;
	cur_failed = true;
	printf("#   %s: line %d: %s", cur_name ? cur_name : "?", line, expr);
	if (fmt && *fmt) {
		printf(": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("\n");
	fflush(stdout);
	return false;
}

/* CHECK(cond, fmt, ...): records a failure with a message, returns cond. */
#define CHECK(cond, ...)	check_impl(!!(cond), __LINE__, #cond, __VA_ARGS__)
#define CHECK_EQ(a, b, what)	check_eq((a), (b), __LINE__, #a, what)

static bool check_eq(uint64_t a, uint64_t b, int line, const char *expr, const char *what)
{
	return check_impl(a == b, line, expr, "%s: got 0x%" PRIx64 ", want 0x%" PRIx64,
			  what, a, b);
}

static void tap_result(const char *name, bool ok, const char *directive)
{
	tap_num++;
	if (!ok)
		tap_failures++;
	printf("%sok %d - %s%s%s\n", ok ? "" : "not ", tap_num, name,
	       directive ? " # " : "", directive ? directive : "");
	fflush(stdout);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- host references ---------------------------------------------------- */

static uint64_t rng_state = 0x853c49e6748fea9bULL;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static void rnd_fill(void *buf, size_t len)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = rnd() >> 56;
}

static float rnd_float(void)
{
	return (float)((double)(rnd() >> 11) / (double)(1ULL << 53) * 2.0 - 1.0);
}

/* ---- device fixture ----------------------------------------------------- */

struct dev {
	struct qts *q;
	int devfn;
	unsigned nq;		/* from CAP0 */
	uint64_t mem_size;	/* DEVMEM_SIZE */
	uint64_t bar0, bar2;
	uint8_t pm_cap, msi_cap, msix_cap, pcie_cap;
	bool high_ram;		/* the group has RAM at HIGH_RAM */
};

static uint32_t cfg_addr(struct dev *d, uint8_t off)
{
	return 0x80000000u | (uint32_t)d->devfn << 8 | (off & 0xfc);
}

static uint32_t cfg_rl(struct dev *d, uint8_t off)
{
	qts_outl(d->q, 0xcf8, cfg_addr(d, off));
	return qts_inl(d->q, 0xcfc);
}

static uint16_t cfg_rw(struct dev *d, uint8_t off)
{
	qts_outl(d->q, 0xcf8, cfg_addr(d, off));
	return qts_inw(d->q, 0xcfc + (off & 2));
}

static uint8_t cfg_rb(struct dev *d, uint8_t off)
{
	qts_outl(d->q, 0xcf8, cfg_addr(d, off));
	return qts_inb(d->q, 0xcfc + (off & 3));
}

static void cfg_wl(struct dev *d, uint8_t off, uint32_t v)
{
	qts_outl(d->q, 0xcf8, cfg_addr(d, off));
	qts_outl(d->q, 0xcfc, v);
}

static void cfg_ww(struct dev *d, uint8_t off, uint16_t v)
{
	qts_outl(d->q, 0xcf8, cfg_addr(d, off));
	qts_outw(d->q, 0xcfc + (off & 2), v);
}

static uint32_t rd(struct dev *d, uint32_t off)
{
	return qts_readl(d->q, d->bar0 + off);
}

static void wr(struct dev *d, uint32_t off, uint32_t v)
{
	qts_writel(d->q, d->bar0 + off, v);
}

static uint64_t rd64(struct dev *d, uint32_t lo)
{
	uint64_t l = rd(d, lo);

	return l | (uint64_t)rd(d, lo + 4) << 32;
}

static uint32_t qrd(struct dev *d, unsigned q, uint32_t r)
{
	return rd(d, FRAC_QREG(q, r));
}

static void qwr(struct dev *d, unsigned q, uint32_t r, uint32_t v)
{
	wr(d, FRAC_QREG(q, r), v);
}

static uint64_t dev_clock(struct dev *d)
{
	return rd64(d, FRAC_REG_CLOCK_LO);
}

static uint8_t find_cap(struct dev *d, uint8_t id)
{
	uint8_t pos = cfg_rb(d, 0x34) & 0xfc;

	for (int guard = 0; pos && guard < 48; guard++) {
		if (cfg_rb(d, pos) == id)
			return pos;
		pos = cfg_rb(d, pos + 1) & 0xfc;
	}
	return 0;
}

static uint32_t msi_word(struct dev *d, unsigned v)
{
	return qts_readl(d->q, MSI_BASE + 4 * v);
}

static bool msi_fired(struct dev *d, unsigned v)
{
	return msi_word(d, v) == MSI_DATA(v);
}

static void msi_clear(struct dev *d)
{
	qts_memset(d->q, MSI_BASE, 0, 4 * (FRAC_MAX_QUEUES + 1));
}

/* Point MSI-X vector @v at its RAM word; @masked sets the vector mask bit. */
static void msix_vector(struct dev *d, unsigned v, bool masked)
{
	uint64_t e = d->bar0 + FRAC_MSIX_TABLE_OFFSET + 16 * v;

	qts_writel(d->q, e + 0, MSI_BASE + 4 * v);
	qts_writel(d->q, e + 4, 0);
	qts_writel(d->q, e + 8, MSI_DATA(v));
	qts_writel(d->q, e + 12, masked);
}

/*
 * What firmware and a driver's probe would do: find 1234:fac1 on bus 0,
 * place BAR0 and BAR2, enable memory decoding and bus mastering, and turn
 * MSI-X on with every vector aimed at RAM. Also after FLR/system reset.
 */
static bool pci_setup(struct dev *d)
{
	if (d->devfn < 0) {
		for (int devfn = 0; devfn < 256; devfn++) {
			d->devfn = devfn;
			if (cfg_rl(d, 0) == ((uint32_t)FRAC_PCI_DEVICE_ID << 16 | FRAC_PCI_VENDOR_ID))
				break;
			d->devfn = -1;
		}
		if (d->devfn < 0) {
			printf("# no 1234:fac1 on bus 0\n");
			return false;
		}
	}
	d->bar0 = BAR0_ADDR;
	d->bar2 = BAR2_ADDR;
	cfg_wl(d, 0x10, (uint32_t)d->bar0);
	cfg_wl(d, 0x14, d->bar0 >> 32);
	cfg_wl(d, 0x18, (uint32_t)d->bar2);
	cfg_wl(d, 0x1c, d->bar2 >> 32);
	cfg_ww(d, 0x04, 0x0006);	/* memory space, bus master */

	d->pm_cap = find_cap(d, 0x01);
	d->msi_cap = find_cap(d, 0x05);
	d->msix_cap = find_cap(d, 0x11);
	d->pcie_cap = find_cap(d, 0x10);
	if (rd(d, FRAC_REG_ID) != FRAC_ID_MAGIC) {
		printf("# BAR0 does not decode: ID reads 0x%x\n", rd(d, FRAC_REG_ID));
		return false;
	}
	d->nq = FRAC_CAP0_NQUEUES(rd(d, FRAC_REG_CAP0));
	d->mem_size = rd64(d, FRAC_REG_DEVMEM_SIZE_LO);
	if (d->msix_cap) {
		unsigned n = (cfg_rw(d, d->msix_cap + 2) & 0x7ff) + 1;

		for (unsigned v = 0; v < n; v++)
			msix_vector(d, v, false);
		cfg_ww(d, d->msix_cap + 2, 0x8000);	/* enable, no function mask */
	}
	msi_clear(d);
	return true;
}

/* Poll @off until @bit reads 0; the wall time that took, or -1 after 5 s. */
static double wait_clear(struct dev *d, uint32_t off, uint32_t bit)
{
	double t0 = now_s();

	while (rd(d, off) & bit) {
		if (now_s() - t0 > 5 || !qts_alive(d->q))
			return -1;
		usleep(100);
	}
	return now_s() - t0;
}

/* Global reset (waiting for it, as a driver does), then enable. */
static void fresh(struct dev *d)
{
	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	wait_clear(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_ENABLE);
	msi_clear(d);
}

/* ---- rings -------------------------------------------------------------- */

struct ring {
	struct dev *d;
	unsigned q, size;
	uint64_t sq, cq;
	unsigned tail;		/* next SQ slot the driver fills */
	unsigned head;		/* next CQ record the driver reads */
	bool phase;		/* phase of a new record at head */
	bool no_ack;		/* don't write the CQ head doorbell */
};

static bool ring_init(struct dev *d, struct ring *r, unsigned q, unsigned size, uint32_t coal)
{
	memset(r, 0, sizeof(*r));
	r->d = d;
	r->q = q;
	r->size = size;
	r->sq = RING_BASE + q * RING_STRIDE;
	r->cq = r->sq + RING_STRIDE / 2;
	r->phase = true;
	qwr(d, q, FRAC_Q_CTRL, FRAC_QCTRL_RESET);
	qts_memset(d->q, r->sq, 0, size * sizeof(struct frac_desc));
	qts_memset(d->q, r->cq, 0, size * sizeof(struct frac_cqe));
	qwr(d, q, FRAC_Q_SQ_BASE_LO, (uint32_t)r->sq);
	qwr(d, q, FRAC_Q_SQ_BASE_HI, r->sq >> 32);
	qwr(d, q, FRAC_Q_CQ_BASE_LO, (uint32_t)r->cq);
	qwr(d, q, FRAC_Q_CQ_BASE_HI, r->cq >> 32);
	qwr(d, q, FRAC_Q_SIZE, size);
	qwr(d, q, FRAC_Q_IRQ_COAL, coal);
	qwr(d, q, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
	return CHECK(qrd(d, q, FRAC_Q_STATUS) & FRAC_QSTS_ENABLED, "queue %u did not enable", q);
}

static void ring_put(struct ring *r, const struct frac_desc *desc)
{
	qts_memwrite(r->d->q, r->sq + r->tail * sizeof(*desc), desc, sizeof(*desc));
	r->tail = (r->tail + 1) & (r->size - 1);
}

static void ring_kick(struct ring *r)
{
	wr(r->d, FRAC_DB_SQ_TAIL(r->q), r->tail);
}

/* A new record at the head? Then read it into @c (does not consume it). */
static bool ring_peek(struct ring *r, struct frac_cqe *c)
{
	uint64_t a = r->cq + r->head * sizeof(*c);
	uint32_t w = qts_readl(r->d->q, a + offsetof(struct frac_cqe, sq_head));

	if (!!((w >> 16) & FRAC_CQE_PHASE) != r->phase)
		return false;
	qts_memread(r->d->q, a, c, sizeof(*c));
	return true;
}

static void ring_pop(struct ring *r)
{
	r->head = (r->head + 1) & (r->size - 1);
	if (!r->head)
		r->phase = !r->phase;
	if (!r->no_ack)
		wr(r->d, FRAC_DB_CQ_HEAD(r->q), r->head);
}

/*
 * Wait for and consume the next record. Moves the virtual clock to the next
 * timer deadline while nothing is there; when no timer is pending the work
 * is on the worker thread, so sleep a little instead.
 */
static bool cur_timed_out;	/* a wait of the current test timed out */

static bool ring_wait(struct ring *r, struct frac_cqe *c)
{
	/* After one timeout the device is wedged for this test: fail fast. */
	double limit = cur_timed_out ? 0.5 : WAIT_S, end = now_s() + limit;

	for (;;) {
		if (ring_peek(r, c)) {
			ring_pop(r);
			return true;
		}
		if (!qts_alive(r->d->q))
			return CHECK(false, "QEMU died waiting on queue %u", r->q);
		if (now_s() > end) {
			cur_timed_out = true;
			return CHECK(false, "no completion on queue %u at CQ %u within %.1f s "
				     "(SQ_HEAD %u CQ_TAIL %u STATUS 0x%x)", r->q, r->head, limit,
				     qrd(r->d, r->q, FRAC_Q_SQ_HEAD),
				     qrd(r->d, r->q, FRAC_Q_CQ_TAIL),
				     qrd(r->d, r->q, FRAC_Q_STATUS));
		}
		if (qts_clock_step(r->d->q, 0) < 0)
			usleep(200);
	}
}

/* Move the virtual clock by @ns in @steps steps; true if no record came. */
static bool ring_quiet(struct ring *r, int64_t ns, int steps)
{
	struct frac_cqe c;

	for (int i = 0; i < steps; i++) {
		qts_clock_step(r->d->q, ns / steps);
		if (ring_peek(r, &c))
			return false;
	}
	usleep(20000);
	return !ring_peek(r, &c);
}

static const char *status_name(uint32_t st)
{
	static const char *const n[] = { "OK", "BAD_OPCODE", "BAD_DESC", "DMA_FAULT",
					  "DEVMEM_RANGE", "INJECTED", "FATAL" };

	return st < ARRAY_SIZE(n) ? n[st] : "?";
}

/* Submit one descriptor, wait for its record; checks the record's basics. */
static bool run1(struct ring *r, const struct frac_desc *desc, struct frac_cqe *c)
{
	struct frac_cqe tmp;

	if (!c)
		c = &tmp;
	ring_put(r, desc);
	ring_kick(r);
	if (!ring_wait(r, c))
		return false;
	CHECK(c->job_id == desc->job_id, "job_id 0x%" PRIx64 ", want 0x%" PRIx64,
	      c->job_id, desc->job_id);
	CHECK(c->t_start <= c->t_end, "t_start %" PRIu64 " > t_end %" PRIu64,
	      c->t_start, c->t_end);
	CHECK(c->sq_head == r->tail, "record sq_head %u, want %u", c->sq_head, r->tail);
	return true;
}

/* run1 and expect @want as the status. */
static bool run_expect(struct ring *r, const struct frac_desc *desc, uint32_t want,
		       const char *what)
{
	struct frac_cqe c;

	if (!run1(r, desc, &c))
		return false;
	return check_impl(c.status == want, __LINE__, "status", "%s: status %u (%s), want %u (%s)",
			  what, c.status, status_name(c.status), want, status_name(want));
}

/* run1 and expect OK; @c gets the record. */
static bool run_ok(struct ring *r, const struct frac_desc *desc, struct frac_cqe *c)
{
	if (!run1(r, desc, c))
		return false;
	return check_impl(c->status == FRAC_STATUS_OK, __LINE__, "status",
			  "job 0x%" PRIx64 " (opcode %u): status %u (%s)", desc->job_id,
			  desc->opcode, c->status, status_name(c->status));
}

#define RUN_OK(r, ...)	run_expect(r, &(struct frac_desc){ __VA_ARGS__ }, FRAC_STATUS_OK, #__VA_ARGS__)

static bool mem_eq(struct dev *d, uint64_t addr, const void *want, size_t len, const char *what)
{
	uint8_t *got = malloc(len);
	bool ok;

	qts_memread(d->q, addr, got, len);
	ok = !memcmp(got, want, len);
	if (!ok) {
		size_t i = 0;

		while (i < len && got[i] == ((const uint8_t *)want)[i])
			i++;
		CHECK(false, "%s: first difference at byte %zu of %zu: 0x%02x, want 0x%02x",
		      what, i, len, got[i], ((const uint8_t *)want)[i]);
	}
	free(got);
	return ok;
}

/* Guest memory filled with @val? */
static bool mem_is(struct dev *d, uint64_t addr, uint8_t val, size_t len, const char *what)
{
	uint8_t *want = malloc(len);
	bool ok;

	memset(want, val, len);
	ok = mem_eq(d, addr, want, len, what);
	free(want);
	return ok;
}

static void *rnd_buf(size_t len)
{
	void *p = malloc(len);

	rnd_fill(p, len);
	return p;
}

/* ---- register snapshots (reset tests) ------------------------------------ */

static uint32_t poweron[FRAC_REGS_SIZE / 4];
static bool have_poweron;

/* Registers that legitimately move on their own. */
static bool snap_skip(uint32_t off)
{
	return off == FRAC_REG_CLOCK_LO || off == FRAC_REG_CLOCK_HI ||
	       off == FRAC_REG_TEMP_MC || off == FRAC_REG_POWER_MW;
}

static void snap(struct dev *d, uint32_t *buf)
{
	for (uint32_t off = 0; off < FRAC_REGS_SIZE; off += 4)
		buf[off / 4] = snap_skip(off) ? 0 : rd(d, off);
}

static void snap_compare(struct dev *d, const char *what)
{
	uint32_t now[FRAC_REGS_SIZE / 4];
	int bad = 0;

	if (!CHECK(have_poweron, "no power-on snapshot (the power-on test must run first)"))
		return;
	snap(d, now);
	for (uint32_t off = 0; off < FRAC_REGS_SIZE; off += 4) {
		if (now[off / 4] != poweron[off / 4] && bad++ < 8)
			CHECK(false, "%s: register 0x%03x is 0x%x, 0x%x at power-on", what, off,
			      now[off / 4], poweron[off / 4]);
	}
}

/* ---- PCI identity, registers --------------------------------------------- */

static uint64_t bar_size(struct dev *d, int bar, uint32_t *flags)
{
	uint8_t off = 0x10 + 4 * bar;
	uint32_t lo = cfg_rl(d, off), hi = cfg_rl(d, off + 4), mlo, mhi;

	cfg_wl(d, off, ~0u);
	cfg_wl(d, off + 4, ~0u);
	mlo = cfg_rl(d, off);
	mhi = cfg_rl(d, off + 4);
	cfg_wl(d, off, lo);
	cfg_wl(d, off + 4, hi);
	*flags = lo & 0xf;
	return ~(((uint64_t)mhi << 32 | mlo) & ~0xfULL) + 1;
}

static void t_pci_identity(struct dev *d, intptr_t arg)
{
	uint16_t cmd = cfg_rw(d, 0x04);
	uint32_t flags, tbl, pba;
	uint64_t size;
	char *info;
	(void)arg;

	CHECK_EQ(cfg_rw(d, 0x00), FRAC_PCI_VENDOR_ID, "vendor");
	CHECK_EQ(cfg_rw(d, 0x02), FRAC_PCI_DEVICE_ID, "device");
	CHECK_EQ(cfg_rb(d, 0x08), FRAC_PCI_REVISION, "revision");
	CHECK_EQ(cfg_rw(d, 0x0a), FRAC_PCI_CLASS, "class");
	CHECK_EQ(cfg_rb(d, 0x09), 0, "prog-if");
	CHECK_EQ(cfg_rb(d, 0x0e) & 0x7f, 0, "header type");
	CHECK_EQ(cfg_rb(d, 0x3d), 1, "interrupt pin INTA");
	CHECK(cfg_rw(d, 0x06) & 0x10, "no capability list");

	cfg_ww(d, 0x04, 0);	/* no decoding while sizing */
	size = bar_size(d, 0, &flags);
	CHECK_EQ(flags, 0x4, "BAR0: 64-bit memory, non-prefetchable");
	CHECK_EQ(size, FRAC_BAR0_SIZE, "BAR0 size");
	size = bar_size(d, 2, &flags);
	CHECK_EQ(flags, 0xc, "BAR2: 64-bit memory, prefetchable");
	CHECK_EQ(size, d->mem_size, "BAR2 size = DEVMEM_SIZE");
	cfg_wl(d, 0x20, ~0u);
	CHECK_EQ(cfg_rl(d, 0x20), 0, "BAR4 unimplemented");
	cfg_ww(d, 0x04, cmd);

	CHECK_EQ(d->pm_cap, 0x40, "PM capability");
	CHECK_EQ(d->pcie_cap, 0x80, "PCIe capability");
	if (d->pcie_cap) {
		unsigned type = (cfg_rw(d, d->pcie_cap + 2) >> 4) & 0xf;

		/* On q35's root bus QEMU makes an endpoint a root-complex integrated one. */
		CHECK(type == 0 || type == 9, "PCIe device/port type %u", type);
		CHECK(cfg_rl(d, d->pcie_cap + 4) & (1u << 28), "DEVCAP: no FLR");
	}
	CHECK_EQ(d->msi_cap, 0x60, "MSI capability");
	if (d->msi_cap)
		CHECK(cfg_rw(d, d->msi_cap + 2) & 0x80, "MSI not 64-bit capable");
	if (CHECK(d->msix_cap, "no MSI-X capability")) {
		CHECK_EQ((cfg_rw(d, d->msix_cap + 2) & 0x7ff) + 1, d->nq + 1, "MSI-X vectors");
		tbl = cfg_rl(d, d->msix_cap + 4);
		pba = cfg_rl(d, d->msix_cap + 8);
		CHECK_EQ(tbl, FRAC_MSIX_TABLE_OFFSET | FRAC_BAR_REGS, "MSI-X table offset/BIR");
		CHECK_EQ(pba, FRAC_MSIX_PBA_OFFSET | FRAC_BAR_REGS, "MSI-X PBA offset/BIR");
	}
	info = qts_hmp(d->q, "info pci");
	CHECK(info && strstr(info, "1234:fac1"), "HMP info pci does not list 1234:fac1");
	free(info);
}

static void t_regs_poweron(struct dev *d, intptr_t arg)
{
	uint32_t cap1 = FRAC_FEAT_GEMM_FP32 | FRAC_FEAT_GEMM_INT8 | FRAC_FEAT_CRC32C |
			FRAC_FEAT_SGL | FRAC_FEAT_DEVMEM | FRAC_FEAT_TIMESTAMP;
	uint32_t r;

	/* arg: 1 if the group runs with fault-injection=on */
	if (arg)
		cap1 |= FRAC_FEAT_FAULT_INJ;
	CHECK_EQ(rd(d, FRAC_REG_ID), FRAC_ID_MAGIC, "ID");
	CHECK_EQ(rd(d, FRAC_REG_VERSION), FRAC_VERSION_MAJOR << 16 | FRAC_VERSION_MINOR, "VERSION");
	r = rd(d, FRAC_REG_CAP0);
	CHECK_EQ(FRAC_CAP0_RING_MAX_ORDER(r), 12, "CAP0 ring max order");
	CHECK_EQ(FRAC_CAP0_NENGINES(r), FRAC_NUM_ENGINES, "CAP0 engines");
	CHECK_EQ(r >> 24, 0, "CAP0 reserved bits");
	CHECK_EQ(rd(d, FRAC_REG_CAP1), cap1, "CAP1");
	CHECK_EQ(rd(d, FRAC_REG_GEMM_MAX_DIM), FRAC_GEMM_MAX_DIM, "GEMM_MAX_DIM");
	CHECK_EQ(rd(d, FRAC_REG_SGL_MAX), FRAC_SGL_MAX_ENTRIES, "SGL_MAX");
	CHECK_EQ(rd(d, FRAC_REG_CLOCK_FREQ), 1000000000, "CLOCK_FREQ");
	CHECK_EQ(rd(d, FRAC_REG_CONTROL), 0, "CONTROL");
	CHECK_EQ(rd(d, FRAC_REG_STATUS), FRAC_STS_READY | FRAC_STS_QUIESCED,
		 "STATUS is READY and QUIESCED only");
	CHECK_EQ(rd(d, FRAC_REG_DMA_BITS), 64, "DMA_BITS");
	CHECK_EQ(rd(d, FRAC_REG_SCRATCH), 0, "SCRATCH");
	CHECK_EQ(rd(d, FRAC_REG_ERR_STATUS), 0, "ERR_STATUS");
	CHECK_EQ(rd(d, FRAC_REG_ERR_QUEUE), 0, "ERR_QUEUE");
	CHECK_EQ(rd64(d, FRAC_REG_ERR_ADDR_LO), 0, "ERR_ADDR");
	CHECK_EQ(rd(d, FRAC_REG_INT_STATUS), 0, "INT_STATUS");
	CHECK_EQ(rd(d, FRAC_REG_INT_MASK), 0, "INT_MASK");
	CHECK_EQ(rd(d, FRAC_REG_ERR_VECTOR), d->nq, "ERR_VECTOR");
	for (int e = 0; e < FRAC_NUM_ENGINES; e++)
		CHECK_EQ(rd64(d, FRAC_REG_BUSY_NS_LO(e)), 0, "BUSY_NS");
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_DONE_LO), 0, "JOBS_DONE");
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_ERR_LO), 0, "JOBS_ERR");
	CHECK_EQ(rd64(d, FRAC_REG_BYTES_RD_LO), 0, "BYTES_RD");
	CHECK_EQ(rd64(d, FRAC_REG_BYTES_WR_LO), 0, "BYTES_WR");
	CHECK_EQ(rd64(d, FRAC_REG_IRQS_LO), 0, "IRQS");
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED");
	for (unsigned q = 0; q < d->nq; q++) {
		for (uint32_t r2 = 0; r2 < FRAC_QREGS_STRIDE; r2 += 4) {
			char what[48];

			snprintf(what, sizeof(what), "queue %u register 0x%02x", q, r2);
			CHECK_EQ(qrd(d, q, r2), r2 == FRAC_Q_VECTOR ? q : 0, what);
		}
	}
	snap(d, poweron);
	have_poweron = true;
}

/* CAP0, ERR_VECTOR, DEVMEM_SIZE and the MSI-X table follow the properties. */
static void t_props(struct dev *d, intptr_t arg)
{
	/* arg: queues << 40 | mem-size */
	unsigned want_nq = arg >> 40;
	uint64_t want_mem = arg & ((1ULL << 40) - 1);
	uint32_t f;

	CHECK_EQ(rd(d, FRAC_REG_CAP0),
		 want_nq | 12u << 8 | (uint32_t)FRAC_NUM_ENGINES << 16, "CAP0");
	CHECK_EQ(rd(d, FRAC_REG_ERR_VECTOR), want_nq, "ERR_VECTOR");
	CHECK_EQ(rd64(d, FRAC_REG_DEVMEM_SIZE_LO), want_mem, "DEVMEM_SIZE");
	if (d->msix_cap)
		CHECK_EQ((cfg_rw(d, d->msix_cap + 2) & 0x7ff) + 1, want_nq + 1, "MSI-X vectors");
	cfg_ww(d, 0x04, 0);
	CHECK_EQ(bar_size(d, 2, &f), want_mem, "BAR2 size");
	cfg_ww(d, 0x04, 0x6);
	for (unsigned q = 0; q < want_nq; q++)
		CHECK_EQ(qrd(d, q, FRAC_Q_VECTOR), q, "queue VECTOR");
	/* The register block past the last queue is not decoded. */
	if (want_nq < FRAC_MAX_QUEUES) {
		qwr(d, want_nq, FRAC_Q_SQ_BASE_LO, 0x1000);
		qwr(d, want_nq, FRAC_Q_SIZE, 8);
		CHECK_EQ(qrd(d, want_nq, FRAC_Q_SQ_BASE_LO), 0, "SQ_BASE of a missing queue");
		CHECK_EQ(qrd(d, want_nq, FRAC_Q_SIZE), 0, "SIZE of a missing queue");
		CHECK_EQ(qrd(d, want_nq, FRAC_Q_VECTOR), 0, "VECTOR of a missing queue");
	}
}

static void t_regs_unknown(struct dev *d, intptr_t arg)
{
	static const uint32_t holes[] = { 0x05c, 0x060, 0x0fc, 0x108, 0x10c, 0x120, 0x158,
					  0x15c, 0x1fc, 0x208, 0x300, 0x3fc, 0xffc };
	(void)arg;

	for (size_t i = 0; i < ARRAY_SIZE(holes); i++) {
		char what[40];

		snprintf(what, sizeof(what), "unknown register 0x%03x", holes[i]);
		CHECK_EQ(rd(d, holes[i]), 0, what);
		wr(d, holes[i], 0xffffffff);
		CHECK_EQ(rd(d, holes[i]), 0, what);
	}
	for (unsigned q = 0; q < d->nq; q++) {
		CHECK_EQ(qrd(d, q, 0x38), 0, "queue register hole 0x38");
		CHECK_EQ(qrd(d, q, 0x3c), 0, "queue register hole 0x3c");
	}
	/* Doorbells are write-only; nothing decodes past the PBA. */
	CHECK_EQ(rd(d, FRAC_DB_SQ_TAIL(0)), 0, "doorbell read");
	CHECK_EQ(rd(d, FRAC_DB_CQ_HEAD(1)), 0, "doorbell read");
	CHECK_EQ(rd(d, 0x4000), 0, "BAR0 0x4000");
	CHECK_EQ(rd(d, FRAC_BAR0_SIZE - 4), 0, "BAR0 end");

	/* Read-only registers ignore writes. */
	wr(d, FRAC_REG_ID, 0);
	wr(d, FRAC_REG_CAP0, 0);
	wr(d, FRAC_REG_STATUS, 0xffffffff);
	wr(d, FRAC_REG_ERR_VECTOR, 7);
	wr(d, FRAC_REG_CLOCK_FREQ, 1);
	qwr(d, 0, FRAC_Q_SQ_HEAD, 5);
	qwr(d, 0, FRAC_Q_VECTOR, 3);
	CHECK_EQ(rd(d, FRAC_REG_ID), FRAC_ID_MAGIC, "ID after write");
	CHECK_EQ(FRAC_CAP0_NQUEUES(rd(d, FRAC_REG_CAP0)), d->nq, "CAP0 after write");
	CHECK_EQ(rd(d, FRAC_REG_STATUS) & FRAC_STS_FATAL, 0, "STATUS after write");
	CHECK_EQ(rd(d, FRAC_REG_ERR_VECTOR), d->nq, "ERR_VECTOR after write");
	CHECK_EQ(rd(d, FRAC_REG_CLOCK_FREQ), 1000000000, "CLOCK_FREQ after write");
	CHECK_EQ(qrd(d, 0, FRAC_Q_SQ_HEAD), 0, "SQ_HEAD after write");
	CHECK_EQ(qrd(d, 0, FRAC_Q_VECTOR), 0, "VECTOR after write");

	/* SCRATCH is plain storage; DMA_BITS takes 32..64 only. */
	wr(d, FRAC_REG_SCRATCH, 0xa5a55a5a);
	CHECK_EQ(rd(d, FRAC_REG_SCRATCH), 0xa5a55a5a, "SCRATCH");
	wr(d, FRAC_REG_DMA_BITS, 31);
	CHECK_EQ(rd(d, FRAC_REG_DMA_BITS), 64, "DMA_BITS 31 ignored");
	wr(d, FRAC_REG_DMA_BITS, 65);
	CHECK_EQ(rd(d, FRAC_REG_DMA_BITS), 64, "DMA_BITS 65 ignored");
	wr(d, FRAC_REG_DMA_BITS, 32);
	CHECK_EQ(rd(d, FRAC_REG_DMA_BITS), 32, "DMA_BITS 32");
	wr(d, FRAC_REG_DMA_BITS, 0);
	CHECK_EQ(rd(d, FRAC_REG_DMA_BITS), 32, "DMA_BITS 0 ignored");
	wr(d, FRAC_REG_DMA_BITS, 64);
	CHECK_EQ(rd(d, FRAC_REG_DMA_BITS), 64, "DMA_BITS 64");

	/* BAR0 takes 32-bit accesses only: others are dropped, nothing breaks. */
	qts_writeb(d->q, d->bar0 + FRAC_REG_SCRATCH, 0x11);
	qts_writew(d->q, d->bar0 + FRAC_REG_SCRATCH, 0x2222);
	CHECK_EQ(rd(d, FRAC_REG_SCRATCH), 0xa5a55a5a, "SCRATCH after byte/word writes");
	qts_readb(d->q, d->bar0 + FRAC_REG_ID);
	qts_readw(d->q, d->bar0 + FRAC_REG_ID + 2);
	qts_readq(d->q, d->bar0 + FRAC_REG_ID);
	wr(d, FRAC_REG_SCRATCH, 0);
	CHECK(qts_alive(d->q), "QEMU died");
	CHECK_EQ(rd(d, FRAC_REG_ID), FRAC_ID_MAGIC, "ID at the end");
}

/* ---- commands -------------------------------------------------------------- */

static void t_nop(struct dev *d, intptr_t arg)
{
	struct ring r;
	struct frac_cqe c;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		return;
	if (!run1(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 0x1122334455667788 }, &c))
		return;
	CHECK_EQ(c.status, FRAC_STATUS_OK, "status");
	CHECK_EQ(c.result, 0, "result");
	CHECK_EQ(c.err_addr, 0, "err_addr");
	CHECK_EQ(c.flags, FRAC_CQE_PHASE, "flags");
	CHECK_EQ(c.rsvd[0] | c.rsvd[1], 0, "reserved");
	CHECK_EQ(qrd(d, 0, FRAC_Q_JOBS), 1, "queue JOBS");
	CHECK_EQ(qrd(d, 0, FRAC_Q_SQ_HEAD), 1, "SQ_HEAD");
	CHECK_EQ(qrd(d, 0, FRAC_Q_CQ_TAIL), 1, "CQ_TAIL");
	CHECK_EQ(qrd(d, 0, FRAC_Q_STATUS), FRAC_QSTS_ENABLED, "queue STATUS idle");
	CHECK(msi_fired(d, 0), "no MSI-X on vector 0 (word 0x%x)", msi_word(d, 0));
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_DONE_LO), 1, "JOBS_DONE");
}

static void t_copy_host(struct dev *d, intptr_t arg)
{
	static const size_t sizes[] = { 1, 4097, 64 * 1024, MiB + 3 };
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t n = sizes[i];
		uint8_t *src = rnd_buf(n);

		qts_memwrite(d->q, BUF(0) + 5, src, n);
		qts_memset(d->q, BUF(1), 0xee, n + 64);
		RUN_OK(&r, .opcode = FRAC_OP_COPY, .job_id = i, .src = BUF(0) + 5,
		       .dst = BUF(1), .len = n);
		mem_eq(d, BUF(1), src, n, "copy");
		mem_is(d, BUF(1) + n, 0xee, 64, "bytes after the copy");
		free(src);
	}
}

static void t_copy_devmem(struct dev *d, intptr_t arg)
{
	uint8_t *a = rnd_buf(5000), *big = rnd_buf(MiB + 1), *e = rnd_buf(3000);
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		goto out;
	/* host -> devmem, seen through BAR2 */
	qts_memwrite(d->q, BUF(0), a, 5000);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_DST_DEVMEM, .job_id = 1,
	       .src = BUF(0), .dst = 0x123, .len = 5000);
	mem_eq(d, d->bar2 + 0x123, a, 5000, "host->devmem, via BAR2");
	/* devmem -> host */
	qts_memset(d->q, BUF(1), 0xee, 5100);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_SRC_DEVMEM, .job_id = 2,
	       .src = 0x123, .dst = BUF(1), .len = 5000);
	mem_eq(d, BUF(1), a, 5000, "devmem->host");
	mem_is(d, BUF(1) + 5000, 0xee, 100, "after devmem->host");
	/* devmem -> devmem */
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_SRC_DEVMEM | FRAC_DF_DST_DEVMEM,
	       .job_id = 3, .src = 0x123, .dst = 0x100007, .len = 5000);
	mem_eq(d, d->bar2 + 0x100007, a, 5000, "devmem->devmem");
	/* written by the host through BAR2, read by a job */
	qts_memwrite(d->q, d->bar2 + 0x80001, e, 3000);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_SRC_DEVMEM, .job_id = 4,
	       .src = 0x80001, .dst = BUF(2), .len = 3000);
	mem_eq(d, BUF(2), e, 3000, "BAR2 write -> devmem->host");
	/* worker-sized both ways */
	qts_memwrite(d->q, BUF(0), big, MiB + 1);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_DST_DEVMEM, .job_id = 5,
	       .src = BUF(0), .dst = 0x200000, .len = MiB + 1);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_SRC_DEVMEM | FRAC_DF_DST_DEVMEM,
	       .job_id = 6, .src = 0x200000, .dst = 0x400003, .len = MiB + 1);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_SRC_DEVMEM, .job_id = 7,
	       .src = 0x400003, .dst = BUF(3), .len = MiB + 1);
	mem_eq(d, BUF(3), big, MiB + 1, "1 MiB through devmem twice");
	/* the last bytes of device memory */
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_DST_DEVMEM, .job_id = 8,
	       .src = BUF(0), .dst = d->mem_size - 8, .len = 8);
	mem_eq(d, d->bar2 + d->mem_size - 8, big, 8, "end of devmem");
out:
	free(a);
	free(big);
	free(e);
}

static void put_sgl(struct dev *d, uint64_t at, const struct frac_sge *e, unsigned n)
{
	qts_memwrite(d->q, at, e, n * sizeof(*e));
}

/*
 * A 9103-byte operand in four odd pieces, with a CHAIN after the second and
 * a last entry longer than needed. @data goes into the pieces if non-NULL.
 */
#define SGL_LEN	(1 + 4095 + 7 + 5000)
static uint64_t sgl_a(struct dev *d, uint64_t base, uint64_t lists, const uint8_t *data)
{
	const struct frac_sge l1[] = {
		{ base + 3, 1, 0 },
		{ base + 0x10001, 4095, 0 },
		{ lists + 0x100, 2, FRAC_SGE_CHAIN },
	};
	const struct frac_sge l2[] = {
		{ base + 0x20005, 7, 0 },
		{ base + 0x30000, 6000, 0 },
	};

	put_sgl(d, lists, l1, 3);
	put_sgl(d, lists + 0x100, l2, 2);
	if (data) {
		qts_memwrite(d->q, base + 3, data, 1);
		qts_memwrite(d->q, base + 0x10001, data + 1, 4095);
		qts_memwrite(d->q, base + 0x20005, data + 4096, 7);
		qts_memwrite(d->q, base + 0x30000, data + 4103, 5000);
	}
	return lists;
}

/* Another shape: a list that starts with a CHAIN, pieces of 13, 9000, 90. */
static uint64_t sgl_b(struct dev *d, uint64_t base, uint64_t lists)
{
	const struct frac_sge l1[] = { { lists + 0x200, 3, FRAC_SGE_CHAIN } };
	const struct frac_sge l2[] = {
		{ base + 1, 13, 0 },
		{ base + 0x8000, 9000, 0 },
		{ base + 0x20000, 90, 0 },
	};

	put_sgl(d, lists, l1, 1);
	put_sgl(d, lists + 0x200, l2, 3);
	qts_memset(d->q, base, 0xee, 0x20000 + 200);
	return lists;
}

static void sgl_b_check(struct dev *d, uint64_t base, const uint8_t *want)
{
	mem_eq(d, base + 1, want, 13, "sgl piece 1");
	mem_eq(d, base + 0x8000, want + 13, 9000, "sgl piece 2");
	mem_eq(d, base + 0x20000, want + 9013, 90, "sgl piece 3");
	mem_is(d, base, 0xee, 1, "before piece 1");
	mem_is(d, base + 14, 0xee, 16, "after piece 1");
	mem_is(d, base + 0x8000 + 9000, 0xee, 16, "after piece 2");
	mem_is(d, base + 0x20000 + 90, 0xee, 16, "after piece 3");
}

static void t_copy_sgl(struct dev *d, intptr_t arg)
{
	uint8_t *data = rnd_buf(SGL_LEN);
	uint64_t la, lb;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		goto out;
	/* SGL -> host */
	la = sgl_a(d, BUF(0), SGL_BASE, data);
	qts_memset(d->q, BUF(1), 0xee, SGL_LEN + 16);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_SRC_SGL, .job_id = 1,
	       .src = la, .dst = BUF(1), .len = SGL_LEN);
	mem_eq(d, BUF(1), data, SGL_LEN, "SGL -> host");
	mem_is(d, BUF(1) + SGL_LEN, 0xee, 16, "after SGL -> host");
	/* host -> SGL */
	lb = sgl_b(d, BUF(2), SGL_BASE + 0x1000);
	qts_memwrite(d->q, BUF(3), data, SGL_LEN);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_DST_SGL, .job_id = 2,
	       .src = BUF(3), .dst = lb, .len = SGL_LEN);
	sgl_b_check(d, BUF(2), data);
	/* SGL -> SGL */
	lb = sgl_b(d, BUF(2), SGL_BASE + 0x1000);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_SRC_SGL | FRAC_DF_DST_SGL,
	       .job_id = 3, .src = la, .dst = lb, .len = SGL_LEN);
	sgl_b_check(d, BUF(2), data);
	/* devmem -> SGL and SGL -> devmem */
	qts_memwrite(d->q, d->bar2 + 0x5000, data, SGL_LEN);
	lb = sgl_b(d, BUF(2), SGL_BASE + 0x1000);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_SRC_DEVMEM | FRAC_DF_DST_SGL,
	       .job_id = 4, .src = 0x5000, .dst = lb, .len = SGL_LEN);
	sgl_b_check(d, BUF(2), data);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_SRC_SGL | FRAC_DF_DST_DEVMEM,
	       .job_id = 5, .src = la, .dst = 0x9001, .len = SGL_LEN);
	mem_eq(d, d->bar2 + 0x9001, data, SGL_LEN, "SGL -> devmem");
	/* a shorter job over the same list uses a prefix of it */
	qts_memset(d->q, BUF(1), 0xee, 4200);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_SRC_SGL, .job_id = 6,
	       .src = la, .dst = BUF(1), .len = 4100);
	mem_eq(d, BUF(1), data, 4100, "SGL prefix");
	mem_is(d, BUF(1) + 4100, 0xee, 100, "after SGL prefix");
out:
	free(data);
}

/* SG lists over several 256 KiB chunks, segments straddling chunk borders. */
static void t_sgl_big(struct dev *d, intptr_t arg)
{
	static const uint32_t seg[] = { 100003, 250001, 3, 300000, 49994 };
	const size_t n = 700001;
	const uint64_t l = SGL_BASE + 0x4000;
	uint8_t *data = rnd_buf(n), *want = malloc(n);
	struct frac_sge e[6];
	struct frac_cqe c;
	struct ring r;
	size_t off;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		goto out;
	for (unsigned i = 0, k = 0; i < ARRAY_SIZE(seg); i++, k++) {
		if (i == 3)	/* chain to a second segment holding the last two */
			e[k++] = (struct frac_sge){ l + 0x100, 2, FRAC_SGE_CHAIN };
		e[k] = (struct frac_sge){ BUF(10) + i * 0x80000 + i, seg[i], 0 };
	}
	put_sgl(d, l, e, 4);
	put_sgl(d, l + 0x100, e + 4, 2);
	off = 0;
	for (unsigned i = 0; i < ARRAY_SIZE(seg); off += seg[i], i++)
		qts_memwrite(d->q, BUF(10) + i * 0x80000 + i, data + off, seg[i]);

	qts_memset(d->q, BUF(20), 0xee, n + 16);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_SRC_SGL, .job_id = 1, .src = l,
	       .dst = BUF(20), .len = n);
	mem_eq(d, BUF(20), data, n, "copy from a 700001-byte SG list");
	mem_is(d, BUF(20) + n, 0xee, 16, "after the copy");
	if (run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .flags = FRAC_DF_SRC_SGL,
					    .job_id = 2, .src = l, .len = n }, &c))
		CHECK_EQ(c.result, frac_crc32c(0, data, n), "crc32c over a 700001-byte SG list");

	RUN_OK(&r, .opcode = FRAC_OP_FILL, .flags = FRAC_DF_DST_SGL, .job_id = 3, .dst = l,
	       .len = n, .arg = { 0x44332211 });
	for (size_t i = 0; i < n; i++)
		want[i] = 0x11 + (i & 3) * 0x11;
	off = 0;
	for (unsigned i = 0; i < ARRAY_SIZE(seg); off += seg[i], i++)
		mem_eq(d, BUF(10) + i * 0x80000 + i, want + off, seg[i], "fill into an SG list");

	qts_memwrite(d->q, BUF(20), data, n);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .flags = FRAC_DF_DST_SGL, .job_id = 4, .src = BUF(20),
	       .dst = l, .len = n);
	off = 0;
	for (unsigned i = 0; i < ARRAY_SIZE(seg); off += seg[i], i++)
		mem_eq(d, BUF(10) + i * 0x80000 + i, data + off, seg[i], "copy into an SG list");
out:
	free(data);
	free(want);
}

static void t_fill(struct dev *d, intptr_t arg)
{
	const size_t big = 300 * 1024 + 1;
	uint8_t *want = malloc(big);
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		goto out;
	for (size_t i = 0; i < big; i++)
		want[i] = 0xdeadbeef >> (8 * (i & 3));
	qts_memset(d->q, BUF(0), 0xee, 1100);
	RUN_OK(&r, .opcode = FRAC_OP_FILL, .job_id = 1, .dst = BUF(0), .len = 1027,
	       .arg = { 0xdeadbeef });
	mem_eq(d, BUF(0), want, 1027, "fill 1027 bytes");
	mem_is(d, BUF(0) + 1027, 0xee, 64, "after the fill");
	/* Bigger than a 256 KiB chunk, runs on the worker. */
	qts_memset(d->q, BUF(1), 0xee, big + 64);
	RUN_OK(&r, .opcode = FRAC_OP_FILL, .job_id = 2, .dst = BUF(1), .len = big,
	       .arg = { 0xdeadbeef });
	mem_eq(d, BUF(1), want, big, "fill 300K+1");
	mem_is(d, BUF(1) + big, 0xee, 64, "after the big fill");
	/* Device memory, odd offset. */
	qts_memset(d->q, d->bar2, 0xee, 32);
	RUN_OK(&r, .opcode = FRAC_OP_FILL, .flags = FRAC_DF_DST_DEVMEM, .job_id = 3,
	       .dst = 3, .len = 10, .arg = { 0x04030201 });
	mem_eq(d, d->bar2 + 3, "\x01\x02\x03\x04\x01\x02\x03\x04\x01\x02", 10, "devmem fill");
	mem_is(d, d->bar2 + 13, 0xee, 8, "after devmem fill");
	/* Into an SG list. */
	qts_memset(d->q, BUF(2), 0xee, 64);
	put_sgl(d, SGL_BASE, (struct frac_sge[]){ { BUF(2) + 1, 3, 0 }, { BUF(2) + 20, 5, 0 } }, 2);
	RUN_OK(&r, .opcode = FRAC_OP_FILL, .flags = FRAC_DF_DST_SGL, .job_id = 4,
	       .dst = SGL_BASE, .len = 8, .arg = { 0xdeadbeef });
	mem_eq(d, BUF(2) + 1, "\xef\xbe\xad", 3, "SGL fill piece 1");
	mem_eq(d, BUF(2) + 20, "\xde\xef\xbe\xad\xde", 5, "SGL fill piece 2");
	/* Zero length: nothing written. */
	qts_memset(d->q, BUF(0), 0xee, 16);
	RUN_OK(&r, .opcode = FRAC_OP_FILL, .job_id = 5, .dst = BUF(0), .len = 0,
	       .arg = { 0 });
	mem_is(d, BUF(0), 0xee, 16, "zero-length fill");
out:
	free(want);
}

static void t_crc32c(struct dev *d, intptr_t arg)
{
	const size_t n = 200000, n1 = 100003, big = 700001;
	uint8_t *data = rnd_buf(big);
	struct frac_cqe c, c2;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		goto out;
	CHECK_EQ(frac_crc32c(0, "123456789", 9), 0xe3069283, "host reference");
	qts_memwrite(d->q, BUF(0), "123456789", 9);
	if (run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 1,
					  .src = BUF(0), .len = 9 }, &c))
		CHECK_EQ(c.result, 0xe3069283, "crc32c(\"123456789\")");
	if (run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 2,
					  .src = BUF(0), .len = 0 }, &c))
		CHECK_EQ(c.result, 0, "crc32c of nothing");
	if (run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 3,
					  .src = BUF(0), .len = 0, .arg = { 0x12345678 } }, &c))
		CHECK_EQ(c.result, 0x12345678, "crc32c of nothing after seed");

	/* Random data in two chained jobs (the second on the worker). */
	qts_memwrite(d->q, BUF(1), data, big);
	if (run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 4,
					  .src = BUF(1), .len = n1 }, &c) &&
	    CHECK_EQ(c.result, frac_crc32c(0, data, n1), "first part") &&
	    run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 5,
					  .src = BUF(1) + n1, .len = n - n1,
					  .arg = { (uint32_t)c.result } }, &c2))
		CHECK_EQ(c2.result, frac_crc32c(0, data, n), "chained crc32c of 200000 bytes");
	if (run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 6,
					  .src = BUF(1), .len = n }, &c))
		CHECK_EQ(c.result, frac_crc32c(0, data, n), "crc32c of 200000 bytes in one job");

	/* More than one 256 KiB chunk, in one job and chained across jobs. */
	if (run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 10,
					    .src = BUF(1), .len = big }, &c))
		CHECK_EQ(c.result, frac_crc32c(0, data, big), "crc32c of 700001 bytes");
	if (run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 11,
					    .src = BUF(1), .len = 300001 }, &c) &&
	    run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 12,
					    .src = BUF(1) + 300001, .len = big - 300001,
					    .arg = { (uint32_t)c.result } }, &c2))
		CHECK_EQ(c2.result, frac_crc32c(0, data, big),
			 "chained crc32c of 300001 + 400000 bytes");
	/* From device memory and from an SG list. */
	qts_memwrite(d->q, d->bar2 + 0x40000, data, 4099);
	if (run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .flags = FRAC_DF_SRC_DEVMEM,
					  .job_id = 7, .src = 0x40000, .len = 4099 }, &c))
		CHECK_EQ(c.result, frac_crc32c(0, data, 4099), "crc32c from devmem");
	qts_memwrite(d->q, BUF(2), "1234", 4);
	qts_memwrite(d->q, BUF(2) + 100, "56789", 5);
	put_sgl(d, SGL_BASE, (struct frac_sge[]){ { BUF(2), 4, 0 }, { BUF(2) + 100, 5, 0 } }, 2);
	if (run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .flags = FRAC_DF_SRC_SGL,
					  .job_id = 8, .src = SGL_BASE, .len = 9 }, &c))
		CHECK_EQ(c.result, 0xe3069283, "crc32c over an SG list");
out:
	free(data);
}

/* C (M x N, fp32, at @caddr) against a double-precision reference. */
static bool gemm_check_f32(struct dev *d, uint64_t caddr, const float *a, const float *b,
			   unsigned m, unsigned n, unsigned k, const char *what)
{
	float *c = malloc((size_t)m * n * 4);
	double *ref = calloc((size_t)m * n, sizeof(double));
	double *mag = calloc((size_t)m * n, sizeof(double));
	int bad = 0;

	qts_memread(d->q, caddr, c, (size_t)m * n * 4);
	frac_gemm_ref_f32(a, b, ref, mag, m, n, k);
	for (size_t i = 0; i < (size_t)m * n; i++) {
		if (!(fabs(c[i] - ref[i]) <= 1e-5 * mag[i] + 1e-6) && bad++ < 3)
			CHECK(false, "%s: C[%zu][%zu] = %.9g, reference %.9g", what, i / n, i % n,
			      c[i], ref[i]);
	}
	free(c);
	free(ref);
	free(mag);
	return !bad;
}

static bool gemm_check_i8(struct dev *d, uint64_t caddr, const int8_t *a, const int8_t *b,
			  unsigned m, unsigned n, unsigned k, const char *what)
{
	int32_t *c = malloc((size_t)m * n * 4);
	int32_t *ref = calloc((size_t)m * n, 4);
	int bad = 0;

	qts_memread(d->q, caddr, c, (size_t)m * n * 4);
	frac_gemm_ref_i8(a, b, ref, m, n, k);
	for (size_t i = 0; i < (size_t)m * n; i++) {
		if (c[i] != ref[i] && bad++ < 3)
			CHECK(false, "%s: C[%zu][%zu] = %d, reference %d", what, i / n, i % n,
			      c[i], ref[i]);
	}
	free(c);
	free(ref);
	return !bad;
}

static float *rnd_floats(size_t n)
{
	float *f = malloc(n * sizeof(*f));

	for (size_t i = 0; i < n; i++)
		f[i] = rnd_float();
	return f;
}

static void t_gemm_fp32(struct dev *d, intptr_t arg)
{
	const unsigned m = 33, k = 17, n = 29;
	float *a = rnd_floats(m * k), *b = rnd_floats(k * n);
	size_t bb = (size_t)k * n * 4;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		goto out;
	qts_memwrite(d->q, BUF(0), a, m * k * 4);
	qts_memwrite(d->q, BUF(1), b, bb);
	qts_memset(d->q, BUF(2), 0xee, m * n * 4 + 64);
	if (RUN_OK(&r, .opcode = FRAC_OP_GEMM, .job_id = 1, .src = BUF(0), .aux = BUF(1),
		   .dst = BUF(2), .arg = { m, n, k, FRAC_GEMM_FP32 })) {
		gemm_check_f32(d, BUF(2), a, b, m, n, k, "33x17 * 17x29");
		mem_is(d, BUF(2) + m * n * 4, 0xee, 64, "after C");
	}
	/* A in device memory, B through an SG list split mid-float, C to devmem. */
	qts_memwrite(d->q, d->bar2 + 0x200000, a, m * k * 4);
	qts_memwrite(d->q, BUF(3), b, 7);
	qts_memwrite(d->q, BUF(3) + 0x1000, (uint8_t *)b + 7, bb - 7);
	put_sgl(d, SGL_BASE, (struct frac_sge[]){ { BUF(3), 7, 0 },
						   { BUF(3) + 0x1000, bb - 7, 0 } }, 2);
	if (RUN_OK(&r, .opcode = FRAC_OP_GEMM, .job_id = 2,
		   .flags = FRAC_DF_SRC_DEVMEM | FRAC_DF_AUX_SGL | FRAC_DF_DST_DEVMEM,
		   .src = 0x200000, .aux = SGL_BASE, .dst = 0x300000,
		   .arg = { m, n, k, FRAC_GEMM_FP32 }))
		gemm_check_f32(d, d->bar2 + 0x300000, a, b, m, n, k, "devmem/SGL operands");
	/* Vector shapes at the limits: 1 x 1024 * 1024 x 1. */
	free(a);
	free(b);
	a = rnd_floats(1024);
	b = rnd_floats(1024);
	qts_memwrite(d->q, BUF(0), a, 4096);
	qts_memwrite(d->q, BUF(1), b, 4096);
	if (RUN_OK(&r, .opcode = FRAC_OP_GEMM, .job_id = 3, .src = BUF(0), .aux = BUF(1),
		   .dst = BUF(2), .arg = { 1, 1, 1024, FRAC_GEMM_FP32 }))
		gemm_check_f32(d, BUF(2), a, b, 1, 1, 1024, "dot product K=1024");
	if (RUN_OK(&r, .opcode = FRAC_OP_GEMM, .job_id = 4, .src = BUF(0), .aux = BUF(1),
		   .dst = BUF(2), .arg = { 1024, 1024, 1, FRAC_GEMM_FP32 }))
		gemm_check_f32(d, BUF(2), a, b, 1024, 1024, 1, "outer product 1024x1024");
out:
	free(a);
	free(b);
}

static void t_gemm_fp32_512(struct dev *d, intptr_t arg)
{
	const unsigned s = 512;
	float *a = rnd_floats(s * s), *b = rnd_floats(s * s);
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		goto out;
	qts_memwrite(d->q, BUF(0), a, s * s * 4);
	qts_memwrite(d->q, BUF(1), b, s * s * 4);
	if (RUN_OK(&r, .opcode = FRAC_OP_GEMM, .job_id = 1, .src = BUF(0), .aux = BUF(1),
		   .dst = BUF(2), .arg = { s, s, s, FRAC_GEMM_FP32 }))
		gemm_check_f32(d, BUF(2), a, b, s, s, s, "512^3");
out:
	free(a);
	free(b);
}

static void t_gemm_int8(struct dev *d, intptr_t arg)
{
	const unsigned m = 64, k = 48, n = 80;
	int8_t *a = rnd_buf(1024 * 5), *b = rnd_buf(1024 * 5);
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		goto out;
	qts_memwrite(d->q, BUF(0), a, m * k);
	qts_memwrite(d->q, BUF(1), b, k * n);
	if (RUN_OK(&r, .opcode = FRAC_OP_GEMM, .job_id = 1, .src = BUF(0), .aux = BUF(1),
		   .dst = BUF(2), .arg = { m, n, k, FRAC_GEMM_INT8 }))
		gemm_check_i8(d, BUF(2), a, b, m, n, k, "int8 64x48 * 48x80");
	/* Extremes: -128 * -128 summed 1024 times needs the full int32. */
	memset(a, 0x80, 3 * 1024);
	memset(b, 0x80, 1024 * 5);
	qts_memwrite(d->q, BUF(0), a, 3 * 1024);
	qts_memwrite(d->q, BUF(1), b, 1024 * 5);
	if (RUN_OK(&r, .opcode = FRAC_OP_GEMM, .job_id = 2, .src = BUF(0), .aux = BUF(1),
		   .dst = BUF(2), .arg = { 3, 5, 1024, FRAC_GEMM_INT8 })) {
		gemm_check_i8(d, BUF(2), a, b, 3, 5, 1024, "int8 K=1024 of -128");
		CHECK_EQ(qts_readl(d->q, BUF(2)), 16777216, "C[0][0]");
	}
	/* 127 * -128 mixed signs, M = 1024. */
	memset(a, 0x7f, 1024);
	qts_memwrite(d->q, BUF(0), a, 1024);
	if (RUN_OK(&r, .opcode = FRAC_OP_GEMM, .job_id = 3, .src = BUF(0), .aux = BUF(1),
		   .dst = BUF(2), .arg = { 1024, 1, 1, FRAC_GEMM_INT8 }))
		gemm_check_i8(d, BUF(2), a, b, 1024, 1, 1, "int8 M=1024");
out:
	free(a);
	free(b);
}

static void t_timestamp(struct dev *d, intptr_t arg)
{
	struct frac_cqe c1, c2, c3;
	uint64_t t0, t1, t2;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		return;
	qts_memset(d->q, BUF(0), 0xee, 32);
	t0 = dev_clock(d);
	if (!run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_TIMESTAMP, .job_id = 1,
					     .dst = BUF(0), .len = 16 }, &c1))
		return;
	t1 = dev_clock(d);
	CHECK(t0 <= c1.result && c1.result <= t1, "timestamp %" PRIu64 " not in [%" PRIu64
	      ", %" PRIu64 "]", c1.result, t0, t1);
	CHECK_EQ(qts_readq(d->q, BUF(0)), c1.result, "timestamp written to dst");
	mem_is(d, BUF(0) + 8, 0xee, 8, "only 8 bytes written");
	CHECK(c1.t_start <= c1.result && c1.result <= c1.t_end,
	      "timestamp %" PRIu64 " outside the job [%" PRIu64 ", %" PRIu64 "]",
	      c1.result, c1.t_start, c1.t_end);

	qts_clock_step(d->q, 12345);
	qts_memset(d->q, BUF(1), 0xee, 8);
	if (!run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_TIMESTAMP, .job_id = 2,
					     .dst = BUF(1), .len = 0 }, &c2))
		return;
	t2 = dev_clock(d);
	CHECK(c2.result >= c1.result + 12345, "timestamps not monotonic: %" PRIu64 " then %"
	      PRIu64 " after a 12345 ns step", c1.result, c2.result);
	CHECK(c2.result <= t2, "timestamp after the clock");
	mem_is(d, BUF(1), 0xee, 8, "len 0: nothing written");

	/* Behind other work: the time the job ran, inside its own [t_start, t_end]. */
	for (unsigned i = 0; i < 2; i++) {
		struct frac_cqe cf, ct;

		ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 10 + i,
						  .dst = BUF(2), .len = i ? 2 * MiB : 64 * 1024 });
		ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_TIMESTAMP, .job_id = 20 + i });
		ring_kick(&r);
		if (!ring_wait(&r, &cf) || !ring_wait(&r, &ct))
			return;
		CHECK(ct.t_start >= cf.t_end, "timestamp job started before the fill ended");
		CHECK(ct.result >= cf.t_end && ct.result >= ct.t_start && ct.result <= ct.t_end,
		      "timestamp %" PRIu64 " behind a %s fill that ended at %" PRIu64
		      " (timestamp job ran [%" PRIu64 ", %" PRIu64 "])", ct.result,
		      i ? "2 MiB" : "64 KiB", cf.t_end, ct.t_start, ct.t_end);
	}

	qts_memset(d->q, d->bar2 + 0x10, 0xee, 8);
	if (run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_TIMESTAMP, .job_id = 3,
					    .flags = FRAC_DF_DST_DEVMEM, .dst = 0x10, .len = 8 },
		   &c3)) {
		CHECK(c3.result >= c2.result, "timestamps not monotonic");
		CHECK_EQ(qts_readq(d->q, d->bar2 + 0x10), c3.result, "timestamp to devmem");
	}
}

/* A batch under one doorbell: records in order, every field right. */
static void t_cqe_fields(struct dev *d, intptr_t arg)
{
	const struct frac_desc jobs[] = {
		{ .opcode = FRAC_OP_NOP, .job_id = 0xa0000000000000a0 },
		{ .opcode = FRAC_OP_COPY, .job_id = 0xa1, .src = BUF(0), .dst = BUF(1), .len = 100 },
		{ .opcode = FRAC_OP_FILL, .job_id = 0xa2, .dst = BUF(2), .len = 50, .arg = { 7 } },
		{ .opcode = FRAC_OP_CRC32C, .job_id = 0xa3, .src = BUF(3), .len = 9 },
		{ .opcode = FRAC_OP_TIMESTAMP, .job_id = 0xa4 },
		{ .opcode = FRAC_OP_GEMM, .job_id = 0xa5, .src = BUF(0), .aux = BUF(1),
		  .dst = BUF(4), .arg = { 4, 4, 4, FRAC_GEMM_INT8 } },
		{ .opcode = FRAC_OP_NOP, .job_id = ~0ULL },
	};
	struct frac_cqe c[ARRAY_SIZE(jobs)];
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 16, 0))
		return;
	qts_memwrite(d->q, BUF(3), "123456789", 9);
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++)
		ring_put(&r, &jobs[i]);
	ring_kick(&r);
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++) {
		if (!ring_wait(&r, &c[i]))
			return;
		CHECK_EQ(c[i].job_id, jobs[i].job_id, "job_id in submission order");
		CHECK_EQ(c[i].status, FRAC_STATUS_OK, "status");
		CHECK_EQ(c[i].sq_head, i + 1, "sq_head");
		CHECK_EQ(c[i].flags, FRAC_CQE_PHASE, "flags");
		CHECK_EQ(c[i].err_addr, 0, "err_addr");
		CHECK_EQ(c[i].rsvd[0] | c[i].rsvd[1], 0, "reserved");
		CHECK(c[i].t_start <= c[i].t_end, "job %zu: t_start > t_end", i);
		if (i)
			CHECK(c[i].t_start >= c[i - 1].t_end,
			      "job %zu started at %" PRIu64 " before job %zu ended at %" PRIu64,
			      i, c[i].t_start, i - 1, c[i - 1].t_end);
		/* (CRC32C values are checked by the CRC32C test) */
		if (jobs[i].opcode != FRAC_OP_TIMESTAMP && jobs[i].opcode != FRAC_OP_CRC32C)
			CHECK_EQ(c[i].result, 0, "result of a job without one");
	}
	CHECK_EQ(qrd(d, 0, FRAC_Q_JOBS), ARRAY_SIZE(jobs), "queue JOBS");
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_DONE_LO), ARRAY_SIZE(jobs), "JOBS_DONE");
}

/* ---- rings ------------------------------------------------------------------ */

/* One job at a time through a 4-entry ring, five laps. */
static void t_ring_wrap_single(struct dev *d, intptr_t arg)
{
	const unsigned size = 4, q = 1;
	struct frac_cqe c;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, q, size, 0))
		return;
	for (unsigned i = 0; i < 5 * size; i++) {
		bool phase = r.phase;
		unsigned slot = r.head;

		if (!run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 100 + i }, &c))
			return;
		CHECK(!!(c.flags & FRAC_CQE_PHASE) == phase, "job %u: phase %u on lap %u", i,
		      c.flags & FRAC_CQE_PHASE, i / size);
		CHECK_EQ(slot, i % size, "CQ slot");
		CHECK_EQ(qrd(d, q, FRAC_Q_SQ_TAIL), r.tail, "SQ_TAIL register");
		CHECK_EQ(qrd(d, q, FRAC_Q_SQ_HEAD), r.tail, "SQ_HEAD register");
		CHECK_EQ(qrd(d, q, FRAC_Q_CQ_TAIL), r.head, "CQ_TAIL register");
		CHECK_EQ(qrd(d, q, FRAC_Q_CQ_HEAD), r.head, "CQ_HEAD register");
		if (cur_failed)
			return;
	}
	CHECK_EQ(qrd(d, q, FRAC_Q_JOBS), 5 * size, "queue JOBS");
	CHECK(!r.phase, "driver phase should be 0 after 5 laps");
}

/* Batches that fill an 8-entry ring (SIZE - 1 in flight), over several laps. */
static void t_ring_wrap_batches(struct dev *d, intptr_t arg)
{
	const unsigned size = 8, q = 2;
	uint64_t id = 0, want = 0;
	struct frac_cqe c;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, q, size, 0))
		return;
	for (unsigned round = 0; round < 7; round++) {
		for (unsigned i = 0; i < size - 1; i++, id++)
			ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_TIMESTAMP, .job_id = id,
							   .dst = BUF(0) + 8 * id, .len = 8 });
		ring_kick(&r);
		for (unsigned i = 0; i < size - 1; i++, want++) {
			if (!ring_wait(&r, &c))
				return;
			CHECK_EQ(c.job_id, want, "job order");
			CHECK_EQ(c.status, FRAC_STATUS_OK, "status");
			CHECK_EQ(qts_readq(d->q, BUF(0) + 8 * want), c.result, "timestamp in memory");
		}
		CHECK_EQ(qrd(d, q, FRAC_Q_SQ_HEAD), r.tail, "SQ_HEAD after the batch");
		CHECK_EQ(qrd(d, q, FRAC_Q_CQ_TAIL), r.head, "CQ_TAIL after the batch");
		if (cur_failed)
			return;
	}
	CHECK_EQ(qrd(d, q, FRAC_Q_JOBS), 7 * (size - 1), "queue JOBS");
}

/* The device holds records back while the CQ is full and resumes on CQ_HEAD. */
static void t_ring_cq_full(struct dev *d, intptr_t arg)
{
	const unsigned size = 4, q = 0;
	struct frac_cqe c;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, q, size, 0))
		return;
	r.no_ack = true;
	for (unsigned i = 0; i < 3; i++)
		ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = i });
	ring_kick(&r);
	for (unsigned i = 0; i < 3; i++)
		if (!ring_wait(&r, &c) || !CHECK_EQ(c.job_id, i, "first batch"))
			return;
	/* CQ holds 3 unacknowledged records: nothing more may be written. */
	for (unsigned i = 3; i < 6; i++)
		ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = i });
	ring_kick(&r);
	CHECK(ring_quiet(&r, 1000000, 20), "a record was written into a full CQ");
	CHECK_EQ(qrd(d, q, FRAC_Q_CQ_TAIL), 3, "CQ_TAIL while full");
	CHECK(qrd(d, q, FRAC_Q_STATUS) & FRAC_QSTS_BUSY, "queue not BUSY with jobs held back");
	CHECK_EQ(rd(d, FRAC_REG_ERR_STATUS), 0, "ERR_STATUS (held back is not overflow)");
	/* Consume: the held records come out, in order, phase flipping at the wrap. */
	r.no_ack = false;
	wr(d, FRAC_DB_CQ_HEAD(q), r.head);
	for (unsigned i = 3; i < 6; i++) {
		if (!ring_wait(&r, &c))
			return;
		CHECK_EQ(c.job_id, i, "held-back record");
		CHECK_EQ(c.flags & FRAC_CQE_PHASE, i == 3, "phase");
	}
	CHECK_EQ(qrd(d, q, FRAC_Q_STATUS), FRAC_QSTS_ENABLED, "queue STATUS at the end");
}

/*
 * Enabling starts from slot 0 of the programmed rings; a disable drops what
 * was fetched (docs/hw-spec.md 5). Ring registers are read-only while enabled.
 */
static void t_ring_disable_enable(struct dev *d, intptr_t arg)
{
	const unsigned q = 0;
	struct frac_cqe c;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, q, 4, 0))
		return;
	for (unsigned i = 0; i < 3; i++)
		if (!run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = i }, &c))
			return;
	/* (a) Disabled before the fetch: nothing runs, enable starts over at 0. */
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 10 });
	ring_kick(&r);
	qwr(d, q, FRAC_Q_CTRL, 0);
	CHECK_EQ(qrd(d, q, FRAC_Q_STATUS) & FRAC_QSTS_ENABLED, 0, "STATUS.ENABLED after disable");
	CHECK_EQ(qrd(d, q, FRAC_Q_CTRL), 0, "CTRL after disable");
	CHECK(ring_quiet(&r, 1000000, 10), "a disabled queue completed a job");
	CHECK_EQ(qrd(d, q, FRAC_Q_SQ_HEAD), 3, "a disabled queue fetched");
	qwr(d, q, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
	CHECK_EQ(qrd(d, q, FRAC_Q_CTRL), FRAC_QCTRL_ENABLE, "CTRL after enable");
	CHECK_EQ(qrd(d, q, FRAC_Q_SQ_HEAD) | qrd(d, q, FRAC_Q_SQ_TAIL) |
		 qrd(d, q, FRAC_Q_CQ_HEAD) | qrd(d, q, FRAC_Q_CQ_TAIL), 0, "ring pointers after enable");
	CHECK(ring_quiet(&r, 1000000, 10), "enable ran a descriptor before a doorbell");
	if (!ring_init(d, &r, q, 4, 0))
		return;
	run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 11 }, &c);
	CHECK_EQ(c.flags & FRAC_CQE_PHASE, 1, "phase after enable");
	/* (b) Disabled after the fetch, before the record: the job is dropped. */
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 12 });
	ring_kick(&r);
	for (int i = 0; i < 100 && qrd(d, q, FRAC_Q_SQ_HEAD) != r.tail; i++)
		qts_clock_step(d->q, 100);
	CHECK_EQ(qrd(d, q, FRAC_Q_SQ_HEAD), r.tail, "fetch");
	qwr(d, q, FRAC_Q_CTRL, 0);
	CHECK_EQ(qrd(d, q, FRAC_Q_STATUS) & FRAC_QSTS_BUSY, 0, "BUSY after the disable");
	CHECK(ring_quiet(&r, 1000000, 10), "a disabled queue wrote a record");
	qwr(d, q, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
	CHECK(ring_quiet(&r, 1000000, 10), "a dropped job's record after re-enable");
	/* Ring registers are read-only while enabled. */
	qwr(d, q, FRAC_Q_SIZE, 64);
	qwr(d, q, FRAC_Q_SQ_BASE_LO, 0x40000);
	qwr(d, q, FRAC_Q_CQ_BASE_HI, 1);
	CHECK_EQ(qrd(d, q, FRAC_Q_SIZE), 4, "SIZE written while enabled");
	CHECK_EQ(qrd(d, q, FRAC_Q_SQ_BASE_LO), (uint32_t)r.sq, "SQ_BASE written while enabled");
	CHECK_EQ(qrd(d, q, FRAC_Q_CQ_BASE_HI), 0, "CQ_BASE written while enabled");
	if (ring_init(d, &r, q, 4, 0))
		run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 13 }, &c);
}

/*
 * Bug: a disable left the fetched jobs in flight (STATUS.BUSY stayed set),
 * the ring registers took new values under them, and the re-enable went on
 * at the old CQ_TAIL: SIZE 16 -> 4 wrote a record 640 bytes into a 256-byte
 * CQ. Now the disable drops the jobs (RESETTING until the worker is idle)
 * and the enable starts at slot 0 of the new rings.
 */
static void t_ring_reprogram_inflight(struct dev *d, intptr_t arg)
{
	const unsigned q = 1;
	struct frac_cqe c;
	struct ring r;
	double t;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, q, 16, 0))
		return;
	for (unsigned i = 0; i < 10; i++)
		if (!run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = i }, &c))
			return;
	qts_memset(d->q, d->bar2, 0x11, d->mem_size / 2);
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 0xc0b1,
					  .flags = FRAC_DF_SRC_DEVMEM | FRAC_DF_DST_DEVMEM,
					  .src = 0, .dst = d->mem_size / 2, .len = d->mem_size / 2 });
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 0x11 });
	ring_kick(&r);
	for (int i = 0; i < 100 && qrd(d, q, FRAC_Q_SQ_HEAD) != 12; i++)
		qts_clock_step(d->q, 1000);
	if (!CHECK(qrd(d, q, FRAC_Q_STATUS) & FRAC_QSTS_BUSY, "copy not in flight"))
		return;
	qwr(d, q, FRAC_Q_CTRL, 0);
	t = wait_clear(d, FRAC_QREG(q, FRAC_Q_STATUS), FRAC_QSTS_RESETTING);
	CHECK(t >= 0 && t < FRAC_RESET_TIMEOUT_MS / 1000.0, "disable took %.3f s to drop the jobs",
	      t);
	CHECK_EQ(qrd(d, q, FRAC_Q_STATUS), 0, "queue STATUS after the disable");
	CHECK_EQ(qrd(d, q, FRAC_Q_CTRL), 0, "CTRL after the disable");
	/* Disabled and idle: the ring registers take new values. */
	qwr(d, q, FRAC_Q_SIZE, 4);
	CHECK_EQ(qrd(d, q, FRAC_Q_SIZE), 4, "SIZE written while disabled and idle");
	qts_memset(d->q, r.cq, 0, 4 * sizeof(c));
	qts_memset(d->q, r.cq + 4 * sizeof(c), 0xee, 12 * sizeof(c));
	qwr(d, q, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
	CHECK_EQ(qrd(d, q, FRAC_Q_CQ_TAIL) | qrd(d, q, FRAC_Q_SQ_HEAD), 0,
		 "ring pointers after the enable");
	r.size = 4;
	r.tail = r.head = 0;
	r.phase = true;
	CHECK(ring_quiet(&r, 2000000, 10), "a record of a job dropped by the disable");
	run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 0x44 }, &c);
	mem_is(d, r.cq + 4 * sizeof(c), 0xee, 12 * sizeof(c), "written past the 4-entry CQ");
}

/* Bug: an enable refused for a bad ring left CTRL.ENABLE reading 1. */
static void t_ring_enable_refused(struct dev *d, intptr_t arg)
{
	(void)arg;

	fresh(d);
	qwr(d, 2, FRAC_Q_CTRL, FRAC_QCTRL_RESET);
	qwr(d, 2, FRAC_Q_SIZE, 3);
	qwr(d, 2, FRAC_Q_SQ_BASE_LO, RING_BASE);
	qwr(d, 2, FRAC_Q_CQ_BASE_LO, RING_BASE + 0x1000);
	qwr(d, 2, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
	CHECK_EQ(qrd(d, 2, FRAC_Q_STATUS), FRAC_QSTS_ERROR, "STATUS after a refused enable");
	CHECK_EQ(qrd(d, 2, FRAC_Q_CTRL), 0, "CTRL after a refused enable");
	/* A good enable clears ERROR. */
	qwr(d, 2, FRAC_Q_SIZE, 4);
	qwr(d, 2, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
	CHECK_EQ(qrd(d, 2, FRAC_Q_STATUS), FRAC_QSTS_ENABLED, "STATUS after a good enable");
	CHECK_EQ(qrd(d, 2, FRAC_Q_CTRL), FRAC_QCTRL_ENABLE, "CTRL after a good enable");
	qwr(d, 2, FRAC_Q_CTRL, FRAC_QCTRL_RESET);
}

/* CONTROL.ENABLE gates fetching; setting it starts queues with work waiting. */
static void t_control_enable(struct dev *d, intptr_t arg)
{
	struct ring r0, r1;
	struct frac_cqe c;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r0, 0, 8, 0) || !ring_init(d, &r1, 1, 8, 0))
		return;
	wr(d, FRAC_REG_CONTROL, 0);
	CHECK_EQ(rd(d, FRAC_REG_STATUS), FRAC_STS_READY | FRAC_STS_QUIESCED,
		 "STATUS with CONTROL.ENABLE clear");
	ring_put(&r0, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 1 });
	ring_put(&r1, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 2 });
	ring_kick(&r0);
	ring_kick(&r1);
	CHECK(ring_quiet(&r0, 1000000, 10), "a job ran with CONTROL.ENABLE clear");
	CHECK_EQ(qrd(d, 0, FRAC_Q_SQ_HEAD) | qrd(d, 1, FRAC_Q_SQ_HEAD), 0,
		 "fetched with CONTROL.ENABLE clear");
	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_ENABLE);
	/* The doorbells' latency is over: the jobs are fetched at once (not QUIESCED). */
	CHECK_EQ(rd(d, FRAC_REG_STATUS), FRAC_STS_READY | FRAC_STS_ENABLED, "STATUS");
	if (ring_wait(&r0, &c))
		CHECK_EQ(c.job_id, 1, "queue 0 job");
	if (ring_wait(&r1, &c))
		CHECK_EQ(c.job_id, 2, "queue 1 job");
	CHECK_EQ(rd(d, FRAC_REG_CONTROL), FRAC_CTRL_ENABLE, "CONTROL reads back");
}

/* The AER extended capability, through ECAM, with an error injected over HMP. */
static void t_aer(struct dev *d, intptr_t arg)
{
	const uint64_t ecam = 0xb0000000ULL;
	uint64_t cfg = ecam + ((uint64_t)d->devfn << 12);
	struct dev host = { .q = d->q, .devfn = 0 };
	uint32_t hdr;
	char *out;
	struct ring r;
	(void)arg;

	/* q35: PCIEXBAR (MCH 0x60) = base | 256 buses | enable. */
	cfg_wl(&host, 0x64, 0);
	cfg_wl(&host, 0x60, (uint32_t)ecam | 1);
	if (!CHECK_EQ(qts_readl(d->q, cfg), cfg_rl(d, 0), "ECAM vendor/device"))
		goto out;
	hdr = qts_readl(d->q, cfg + 0x100);
	CHECK_EQ(hdr & 0xffff, 0x0001, "extended capability at 0x100 is AER");
	CHECK_EQ(qts_readl(d->q, cfg + 0x104), 0, "AER uncorrectable status at start");
	out = qts_hmp(d->q, "pcie_aer_inject_error frac0 COMP_TIME");
	CHECK(out && !strncmp(out, "OK", 2), "pcie_aer_inject_error: %s", out ? out : "(no reply)");
	free(out);
	CHECK(qts_readl(d->q, cfg + 0x104) & (1u << 14), "AER: completion timeout not logged "
	      "(status 0x%x)", qts_readl(d->q, cfg + 0x104));
	CHECK(cfg_rw(d, d->pcie_cap + 0x0a) & 0x3, "PCIe DEVSTA: no error detected");
	qts_writel(d->q, cfg + 0x104, 1u << 14);
	CHECK_EQ(qts_readl(d->q, cfg + 0x104), 0, "AER status after W1C");
	/* The device goes on working. */
	fresh(d);
	if (ring_init(d, &r, 0, 8, 0))
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 1);
out:
	cfg_wl(&host, 0x60, 0);
}

/* ---- interrupts ---------------------------------------------------------------- */

static uint64_t irqs(struct dev *d)
{
	return rd64(d, FRAC_REG_IRQS_LO);
}

static void t_irq_each(struct dev *d, intptr_t arg)
{
	struct ring r0, r3;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r0, 0, 8, 0) || !ring_init(d, &r3, 3, 8, FRAC_COAL(1, 0)))
		return;
	for (unsigned i = 0; i < 3; i++) {
		msi_clear(d);
		RUN_OK(&r0, .opcode = FRAC_OP_NOP, .job_id = i);
		CHECK(msi_fired(d, 0), "completion %u: no MSI-X on vector 0", i);
		CHECK(!msi_fired(d, 3) && !msi_fired(d, d->nq), "MSI-X on the wrong vector");
		CHECK_EQ(irqs(d), i + 1, "IRQS");
	}
	msi_clear(d);
	RUN_OK(&r3, .opcode = FRAC_OP_NOP, .job_id = 9);
	CHECK(msi_fired(d, 3), "no MSI-X on vector 3 with COAL count 1");
	CHECK(!msi_fired(d, 0), "MSI-X on vector 0 for a queue 3 job");
	CHECK_EQ(irqs(d), 4, "IRQS");
	CHECK_EQ(rd(d, FRAC_REG_INT_STATUS), 0, "INT_STATUS stays 0 under MSI-X");
}

static void t_irq_coal_count(struct dev *d, intptr_t arg)
{
	const unsigned q = 2;
	struct frac_cqe c;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, q, 16, FRAC_COAL(4, 0)))
		return;
	CHECK_EQ(qrd(d, q, FRAC_Q_IRQ_COAL), FRAC_COAL(4, 0), "IRQ_COAL");
	for (unsigned lap = 0; lap < 2; lap++) {
		for (unsigned i = 0; i < 3; i++)
			if (!run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = i }, &c))
				return;
		/* Moderated records are written at once; the interrupt waits. */
		qts_clock_step(d->q, 10000000);
		CHECK(!msi_fired(d, q), "lap %u: interrupt after 3 of 4 completions", lap);
		CHECK_EQ(irqs(d), lap, "IRQS before the 4th");
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 3);
		CHECK(msi_fired(d, q), "lap %u: no interrupt after the 4th completion", lap);
		CHECK_EQ(irqs(d), lap + 1, "IRQS after the 4th");
		msi_clear(d);
	}
	/* Reserved bits of IRQ_COAL read as 0. */
	qwr(d, q, FRAC_Q_IRQ_COAL, 0xffffffff);
	CHECK_EQ(qrd(d, q, FRAC_Q_IRQ_COAL), 0xffff00ff, "IRQ_COAL reserved bits");
}

static void t_irq_coal_time(struct dev *d, intptr_t arg)
{
	const unsigned q = 2;
	struct frac_cqe c;
	uint64_t t0, t1;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, q, 16, FRAC_COAL(8, 100)))
		return;
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 1 });
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 2 });
	ring_kick(&r);
	if (!ring_wait(&r, &c))
		return;
	t0 = dev_clock(d);	/* the first pending completion was at or before t0 */
	if (!ring_wait(&r, &c))
		return;
	t1 = dev_clock(d);
	if (!msi_fired(d, q)) {
		qts_clock_step(d->q, 50000);
		CHECK(!msi_fired(d, q) || dev_clock(d) - t0 >= 100000,
		      "interrupt before the 100 us threshold");
		qts_clock_step(d->q, 60000);
		CHECK(msi_fired(d, q), "no interrupt 110 us after the completions");
	} else {
		CHECK(t1 - t0 >= 100000, "interrupt with 2 of 8 completions, before 100 us");
	}
	CHECK_EQ(irqs(d), 1, "IRQS");
	/* Nothing pending: no stray interrupt later. */
	msi_clear(d);
	qts_clock_step(d->q, 1000000);
	CHECK(!msi_fired(d, q), "interrupt with nothing pending");
}

static void t_irq_no_irq(struct dev *d, intptr_t arg)
{
	struct ring r, r1;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 8, 0) || !ring_init(d, &r1, 1, 8, FRAC_COAL(2, 0)))
		return;
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .flags = FRAC_DF_NO_IRQ, .job_id = 1);
	qts_clock_step(d->q, 1000000);
	CHECK(!msi_fired(d, 0), "interrupt for a NO_IRQ job");
	CHECK_EQ(irqs(d), 0, "IRQS after a NO_IRQ job");
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 2);
	CHECK(msi_fired(d, 0), "no interrupt for a normal job");
	/* NO_IRQ completions do not count towards the moderation threshold. */
	msi_clear(d);
	RUN_OK(&r1, .opcode = FRAC_OP_NOP, .flags = FRAC_DF_NO_IRQ, .job_id = 3);
	RUN_OK(&r1, .opcode = FRAC_OP_NOP, .flags = FRAC_DF_NO_IRQ, .job_id = 4);
	RUN_OK(&r1, .opcode = FRAC_OP_NOP, .job_id = 5);
	CHECK(!msi_fired(d, 1), "NO_IRQ completions counted towards COAL count 2");
	RUN_OK(&r1, .opcode = FRAC_OP_NOP, .job_id = 6);
	CHECK(msi_fired(d, 1), "no interrupt after 2 normal completions");
	CHECK_EQ(irqs(d), 2, "IRQS");
}

/* A masked MSI-X vector leaves its PBA bit set and fires when unmasked. */
static void t_irq_msix_mask(struct dev *d, intptr_t arg)
{
	uint64_t pba = d->bar0 + FRAC_MSIX_PBA_OFFSET;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 1, 8, 0))
		return;
	msix_vector(d, 1, true);
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 1);
	CHECK(!msi_fired(d, 1), "a masked vector fired");
	CHECK(qts_readl(d->q, pba) & (1u << 1), "PBA bit 1 not set (PBA 0x%x)", qts_readl(d->q, pba));
	msix_vector(d, 1, false);
	CHECK(msi_fired(d, 1), "pending vector did not fire on unmask");
	CHECK_EQ(qts_readl(d->q, pba) & (1u << 1), 0, "PBA bit 1 after unmask");
	/* Function mask. */
	msi_clear(d);
	cfg_ww(d, d->msix_cap + 2, 0xc000);
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 2);
	CHECK(!msi_fired(d, 1), "fired under the function mask");
	cfg_ww(d, d->msix_cap + 2, 0x8000);
	CHECK(msi_fired(d, 1), "pending vector did not fire after the function mask");
}

/* ---- fault injection ---------------------------------------------------------- */

enum { FI_QOM, FI_REG };

static const char *const fault_name[FRAC_FAULT_MAX] = {
	[FRAC_FAULT_HANG] = "hang", [FRAC_FAULT_DROP_IRQ] = "drop-irq",
	[FRAC_FAULT_ERROR] = "error", [FRAC_FAULT_DMA] = "dma",
	[FRAC_FAULT_FATAL] = "fatal", [FRAC_FAULT_LATENCY] = "latency",
	[FRAC_FAULT_BAD_ID] = "bad-id", [FRAC_FAULT_BAD_HEAD] = "bad-head",
	[FRAC_FAULT_DUP] = "dup",
};

/* Arm a fault through qom-set "inject" or through FI_CTRL; @arg 0 = default. */
static bool inject(struct dev *d, int how, unsigned kind, unsigned q, unsigned arg)
{
	char v[64], *err = NULL, *got;

	if (how == FI_REG) {
		wr(d, FRAC_REG_FI_CTRL, FRAC_FI_CMD(kind, q, arg));
		return true;
	}
	if (kind == FRAC_FAULT_FATAL)
		snprintf(v, sizeof(v), "fatal");
	else if (arg)
		snprintf(v, sizeof(v), "%s:%u:%u", fault_name[kind], q, arg);
	else
		snprintf(v, sizeof(v), "%s:%u", fault_name[kind], q);
	if (qts_qom_set_str(d->q, QOM_PATH, "inject", v, &err)) {
		CHECK(false, "qom-set inject \"%s\": %s", v, err ? err : "?");
		free(err);
		return false;
	}
	got = qts_qom_get_str(d->q, QOM_PATH, "inject");
	CHECK(got && !strcmp(got, v), "qom-get inject: \"%s\", want \"%s\"", got ? got : "(null)", v);
	free(got);
	return true;
}

static void t_fault_hang(struct dev *d, intptr_t how)
{
	const unsigned q = 3;
	struct ring r, r0;

	fresh(d);
	if (!ring_init(d, &r, q, 8, 0) || !ring_init(d, &r0, 0, 8, 0))
		return;
	if (!inject(d, how, FRAC_FAULT_HANG, q, 0))
		return;
	CHECK(rd(d, FRAC_REG_FI_ARMED) & (1u << FRAC_FAULT_HANG), "FI_ARMED.HANG not set");
	CHECK(qrd(d, q, FRAC_Q_STATUS) & FRAC_QSTS_HUNG, "STATUS.HUNG not set");
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 1 });
	ring_kick(&r);
	CHECK(ring_quiet(&r, 10000000, 20), "a hung queue completed a job");
	CHECK_EQ(qrd(d, q, FRAC_Q_SQ_HEAD), 0, "a hung queue fetched");
	/* Other queues carry on. */
	RUN_OK(&r0, .opcode = FRAC_OP_NOP, .job_id = 2);
	if (how == FI_QOM) {
		qwr(d, q, FRAC_Q_CTRL, FRAC_QCTRL_RESET);	/* queue reset recovers */
	} else {
		wr(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);	/* so does a global one */
		wr(d, FRAC_REG_CONTROL, FRAC_CTRL_ENABLE);
	}
	CHECK_EQ(qrd(d, q, FRAC_Q_STATUS), 0, "queue STATUS after reset");
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED after reset");
	if (ring_init(d, &r, q, 8, 0))
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 3);
	CHECK(ring_quiet(&r, 1000000, 4), "a stale record after the reset");
}

static void t_fault_drop_irq(struct dev *d, intptr_t how)
{
	const unsigned q = 3, n = how == FI_QOM ? 2 : 1;
	struct ring r;

	fresh(d);
	if (!ring_init(d, &r, q, 8, 0))
		return;
	/* By QOM drop two; by register use the default, one. */
	if (!inject(d, how, FRAC_FAULT_DROP_IRQ, q, how == FI_QOM ? 2 : 0))
		return;
	CHECK(rd(d, FRAC_REG_FI_ARMED) & (1u << FRAC_FAULT_DROP_IRQ), "FI_ARMED.DROP_IRQ");
	for (unsigned i = 0; i <= n; i++) {
		msi_clear(d);
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = i);
		if (i < n)
			CHECK(!msi_fired(d, q), "interrupt %u of %u to drop was signalled", i + 1, n);
		else
			CHECK(msi_fired(d, q), "no interrupt after %u dropped ones", n);
	}
	CHECK_EQ(irqs(d), 1, "IRQS (dropped interrupts are not counted)");
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED after the drops");
}

static void t_fault_error(struct dev *d, intptr_t how)
{
	const unsigned q = 3, n = how == FI_QOM ? 2 : 1;
	uint8_t *src = rnd_buf(256);
	struct frac_desc cp = { .opcode = FRAC_OP_COPY, .src = BUF(0), .dst = BUF(1), .len = 256 };
	struct ring r;

	fresh(d);
	if (!ring_init(d, &r, q, 8, 0))
		goto out;
	qts_memwrite(d->q, BUF(0), src, 256);
	qts_memset(d->q, BUF(1), 0xee, 256);
	if (!inject(d, how, FRAC_FAULT_ERROR, q, how == FI_QOM ? 2 : 0))
		goto out;
	CHECK(rd(d, FRAC_REG_FI_ARMED) & (1u << FRAC_FAULT_ERROR), "FI_ARMED.ERROR");
	for (unsigned i = 0; i < n; i++) {
		cp.job_id = i;
		run_expect(&r, &cp, FRAC_STATUS_INJECTED, "injected error");
		mem_is(d, BUF(1), 0xee, 256, "an INJECTED job did work");
	}
	cp.job_id = n;
	run_expect(&r, &cp, FRAC_STATUS_OK, "after the injected errors");
	mem_eq(d, BUF(1), src, 256, "copy after the injected errors");
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_ERR_LO), n, "JOBS_ERR");
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_DONE_LO), 1, "JOBS_DONE");
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED at the end");
out:
	free(src);
}

static void t_fault_dma(struct dev *d, intptr_t how)
{
	const unsigned q = 3;
	struct frac_cqe c;
	struct ring r;

	fresh(d);
	if (!ring_init(d, &r, q, 8, 0))
		return;
	qts_memset(d->q, BUF(0), 0x5a, 256);
	qts_memset(d->q, BUF(1), 0xee, 256);
	if (!inject(d, how, FRAC_FAULT_DMA, q, how == FI_QOM ? 1 : 0))
		return;
	CHECK(rd(d, FRAC_REG_FI_ARMED) & (1u << FRAC_FAULT_DMA), "FI_ARMED.DMA");
	if (run1(&r, &(struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 1, .src = BUF(0),
					  .dst = BUF(1), .len = 256 }, &c)) {
		CHECK_EQ(c.status, FRAC_STATUS_DMA_FAULT, "status");
		CHECK_EQ(c.err_addr, BUF(0), "err_addr = the first DMA (src)");
	}
	mem_is(d, BUF(1), 0xee, 256, "a DMA-faulted copy wrote");
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_DMA_FAULT, "ERR_STATUS.DMA_FAULT");
	CHECK_EQ(rd(d, FRAC_REG_ERR_QUEUE), q, "ERR_QUEUE");
	CHECK_EQ(rd64(d, FRAC_REG_ERR_ADDR_LO), BUF(0), "ERR_ADDR");
	CHECK(!msi_fired(d, d->nq), "error vector for a single job's fault");
	wr(d, FRAC_REG_ERR_STATUS, ~0u);
	CHECK_EQ(rd(d, FRAC_REG_ERR_STATUS), 0, "ERR_STATUS after W1C");
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .job_id = 2, .src = BUF(0), .dst = BUF(1), .len = 256);
	mem_is(d, BUF(1), 0x5a, 256, "copy after the fault");
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED at the end");
}

/*
 * Bug: an injected DMA fault was used up by a NOP (which does no DMA), and
 * its err_addr was the descriptor's src even when that was a device memory
 * offset. It now hits the first host DMA of the next job that does one.
 */
static void t_fault_dma_first_dma(struct dev *d, intptr_t arg)
{
	const unsigned q = 3;
	struct frac_cqe c;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, q, 8, 0) || !inject(d, FI_QOM, FRAC_FAULT_DMA, q, 2))
		return;
	/* No host DMA: neither consumes the fault. */
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 1);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .job_id = 2,
	       .flags = FRAC_DF_SRC_DEVMEM | FRAC_DF_DST_DEVMEM, .src = 0, .dst = 4096, .len = 64);
	CHECK(rd(d, FRAC_REG_FI_ARMED) & (1u << FRAC_FAULT_DMA), "FI_ARMED.DMA used up");
	/* devmem -> host: the first host DMA is the write to dst. */
	if (run1(&r, &(struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 3,
					  .flags = FRAC_DF_SRC_DEVMEM, .src = 0x1000,
					  .dst = BUF(1), .len = 64 }, &c)) {
		CHECK_EQ(c.status, FRAC_STATUS_DMA_FAULT, "devmem -> host copy status");
		CHECK_EQ(c.err_addr, BUF(1), "err_addr (the host address, not the devmem offset)");
	}
	if (run1(&r, &(struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 4,
					  .dst = BUF(1), .len = 64 }, &c)) {
		CHECK_EQ(c.status, FRAC_STATUS_DMA_FAULT, "fill status");
		CHECK_EQ(c.err_addr, BUF(1), "fill err_addr");
	}
	RUN_OK(&r, .opcode = FRAC_OP_FILL, .job_id = 5, .dst = BUF(1), .len = 64);
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED at the end");
}

static void t_fault_fatal(struct dev *d, intptr_t how)
{
	struct ring r, r1;

	fresh(d);
	if (!ring_init(d, &r, 0, 8, 0) || !ring_init(d, &r1, 1, 8, 0))
		return;
	qts_memset(d->q, d->bar2 + 0x7000, 0x3c, 64);
	ring_put(&r1, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 1 });
	if (!inject(d, how, FRAC_FAULT_FATAL, 0, 0))
		return;
	CHECK_EQ(rd(d, FRAC_REG_STATUS) & (FRAC_STS_FATAL | FRAC_STS_READY), FRAC_STS_FATAL,
		 "STATUS: FATAL set, READY clear");
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_FATAL, "ERR_STATUS.FATAL");
	CHECK_EQ(rd(d, FRAC_REG_ERR_QUEUE), 0xff, "ERR_QUEUE for a device error");
	CHECK(msi_fired(d, d->nq), "no MSI-X on the error vector %u", d->nq);
	CHECK(rd(d, FRAC_REG_FI_ARMED) & (1u << FRAC_FAULT_FATAL), "FI_ARMED.FATAL");
	/* Nothing runs any more, on any queue. */
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 2 });
	ring_kick(&r);
	ring_kick(&r1);
	CHECK(ring_quiet(&r, 10000000, 10), "a job completed in the fatal state");
	CHECK(ring_quiet(&r1, 1000, 1), "a job completed in the fatal state");
	/* A global reset (QOM variant) or an FLR (register variant) recovers. */
	if (how == FI_QOM) {
		wr(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	} else {
		cfg_ww(d, d->pcie_cap + 8, cfg_rw(d, d->pcie_cap + 8) | 0x8000);
		if (!CHECK(pci_setup(d), "device lost after FLR"))
			return;
	}
	CHECK_EQ(rd(d, FRAC_REG_STATUS), FRAC_STS_READY | FRAC_STS_QUIESCED,
		 "STATUS after reset");
	CHECK_EQ(rd(d, FRAC_REG_ERR_STATUS), 0, "ERR_STATUS after reset");
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED after reset");
	mem_is(d, d->bar2 + 0x7000, 0x3c, 64, "device memory across the reset");
	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_ENABLE);
	msi_clear(d);
	if (ring_init(d, &r, 0, 8, 0))
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 3);
	CHECK(msi_fired(d, 0), "no interrupt after recovery");
}

static void t_fault_latency(struct dev *d, intptr_t how)
{
	const unsigned q = 3;
	const uint64_t extra = how == FI_QOM ? 5000000 : 100000000;	/* 5 ms, default 100 */
	struct frac_cqe c0, c1, c2;
	struct ring r;

	fresh(d);
	if (!ring_init(d, &r, q, 8, 0))
		return;
	qts_memset(d->q, BUF(0), 0xee, 16);
	if (!run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 1,
					     .dst = BUF(0), .len = 9 }, &c0))
		return;
	if (!inject(d, how, FRAC_FAULT_LATENCY, q, how == FI_QOM ? 5 : 0))
		return;
	CHECK(rd(d, FRAC_REG_FI_ARMED) & (1u << FRAC_FAULT_LATENCY), "FI_ARMED.LATENCY");
	if (run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 2,
					    .dst = BUF(0), .len = 9 }, &c1)) {
		CHECK(c1.t_end - c1.t_start >= c0.t_end - c0.t_start + extra,
		      "duration %" PRIu64 " ns with %" PRIu64 " ns injected (normal %" PRIu64 ")",
		      c1.t_end - c1.t_start, extra, c0.t_end - c0.t_start);
		mem_is(d, BUF(0), 0, 9, "the slow job's work");
	}
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED after the slow job");
	if (run_ok(&r, &(struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 3,
					    .dst = BUF(0), .len = 9 }, &c2))
		CHECK_EQ(c2.t_end - c2.t_start, c0.t_end - c0.t_start, "only the next job is slow");
}

/* Put a NOP on @r and wait for its record, whatever it says. */
static bool nop_record(struct ring *r, uint64_t job_id, struct frac_cqe *c)
{
	ring_put(r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = job_id });
	ring_kick(r);
	return ring_wait(r, c);
}

/* bad-id: the next n records carry job_id + 1; the jobs themselves run. */
static void t_fault_bad_id(struct dev *d, intptr_t how)
{
	const unsigned q = 3, n = how == FI_QOM ? 2 : 1;
	struct frac_cqe c;
	struct ring r;

	fresh(d);
	if (!ring_init(d, &r, q, 8, 0))
		return;
	if (!inject(d, how, FRAC_FAULT_BAD_ID, q, how == FI_QOM ? 2 : 0))
		return;
	CHECK(rd(d, FRAC_REG_FI_ARMED) & (1u << FRAC_FAULT_BAD_ID), "FI_ARMED.BAD_ID");
	for (unsigned i = 0; i < n; i++) {
		if (!nop_record(&r, 0x100 + i, &c))
			return;
		CHECK_EQ(c.job_id, 0x101 + i, "job_id one more than the descriptor's");
		CHECK_EQ(c.sq_head, r.tail, "sq_head");
		CHECK_EQ(c.status, FRAC_STATUS_OK, "status");
	}
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED after the bad records");
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 0x200);
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_DONE_LO), n + 1, "JOBS_DONE: the jobs ran");
}

/*
 * bad-head: the next record's sq_head moves on by n: one slot ahead (the
 * default), or out of the ring (n = SIZE + 1 by QOM); the one after is true.
 */
static void t_fault_bad_head(struct dev *d, intptr_t how)
{
	const unsigned q = 3, size = 8, n = how == FI_QOM ? size + 1 : 1;
	struct frac_cqe c;
	struct ring r;

	fresh(d);
	if (!ring_init(d, &r, q, size, 0))
		return;
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 1);
	if (!inject(d, how, FRAC_FAULT_BAD_HEAD, q, how == FI_QOM ? n : 0))
		return;
	CHECK(rd(d, FRAC_REG_FI_ARMED) & (1u << FRAC_FAULT_BAD_HEAD), "FI_ARMED.BAD_HEAD");
	if (!nop_record(&r, 2, &c))
		return;
	CHECK_EQ(c.sq_head, r.tail + n, "sq_head past the true one");
	CHECK_EQ(c.job_id, 2, "job_id");
	CHECK_EQ(qrd(d, q, FRAC_Q_SQ_HEAD), r.tail, "SQ_HEAD register");
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED after the bad record");
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 3);
}

/*
 * dup: each of the next n records is written twice, into consecutive CQ
 * slots with their own phase (the first copy here is the ring's last slot,
 * the second its first, on the next lap), one interrupt for the two.
 */
static void t_fault_dup(struct dev *d, intptr_t how)
{
	const unsigned q = 3, n = how == FI_QOM ? 2 : 1;
	struct frac_cqe c, c2;
	struct ring r;

	fresh(d);
	if (!ring_init(d, &r, q, 4, 0))
		return;
	for (unsigned i = 0; i < 3; i++)
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = i);
	if (!inject(d, how, FRAC_FAULT_DUP, q, how == FI_QOM ? 2 : 0))
		return;
	CHECK(rd(d, FRAC_REG_FI_ARMED) & (1u << FRAC_FAULT_DUP), "FI_ARMED.DUP");
	for (unsigned i = 0; i < n; i++) {
		unsigned head = r.head;

		msi_clear(d);
		if (!nop_record(&r, 0x10 + i, &c))
			return;
		CHECK(msi_fired(d, q), "record %u: interrupt", i);
		msi_clear(d);
		if (!CHECK(ring_wait(&r, &c2), "record %u: no duplicate", i))
			return;
		CHECK(!msi_fired(d, q), "record %u: an interrupt for the duplicate", i);
		CHECK_EQ(c.job_id, 0x10 + i, "job_id");
		CHECK_EQ(c.sq_head, r.tail, "sq_head");
		CHECK(!memcmp(&c, &c2, offsetof(struct frac_cqe, flags)) &&
		      !memcmp(&c.err_addr, &c2.err_addr, sizeof(c) - offsetof(struct frac_cqe, err_addr)),
		      "record %u (CQ slot %u): the duplicate differs", i, head);
	}
	CHECK_EQ(qrd(d, q, FRAC_Q_CQ_TAIL), (3 + 2 * n) & 3, "CQ_TAIL counts both copies");
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED after the duplicates");
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 0x20);
	CHECK(ring_quiet(&r, 1000000, 4), "a third copy");
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_DONE_LO), 3 + n + 1, "JOBS_DONE counts a job once");
}

/* A queue reset disarms bad-id, bad-head and dup; the next record is true. */
static void t_fault_cqe_reset_disarms(struct dev *d, intptr_t arg)
{
	const unsigned q = 2;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, q, 8, 0))
		return;
	for (unsigned k = FRAC_FAULT_BAD_ID; k <= FRAC_FAULT_DUP; k++)
		if (!inject(d, FI_REG, k, q, 3))
			return;
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED),
		 (1u << FRAC_FAULT_BAD_ID) | (1u << FRAC_FAULT_BAD_HEAD) | (1u << FRAC_FAULT_DUP),
		 "FI_ARMED");
	if (!ring_init(d, &r, q, 8, 0))	/* a queue reset, then the ring again */
		return;
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED after the queue reset");
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 1);
	CHECK(ring_quiet(&r, 1000000, 4), "a duplicate after the reset");
}

/* Bad requests are refused and leave the device alone. */
static void t_fault_bad_args(struct dev *d, intptr_t arg)
{
	static const char *const bad[] = { "bogus", "", "hang:4", "hang:x", "error:0:65536",
					   "latency:0:-1", "HANG:0" };
	char *err, *got;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!inject(d, FI_QOM, FRAC_FAULT_ERROR, 1, 3))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int ret = qts_qom_set_str(d->q, QOM_PATH, "inject", bad[i], &err);

		CHECK(ret, "qom-set inject \"%s\" accepted", bad[i]);
		free(err);
	}
	got = qts_qom_get_str(d->q, QOM_PATH, "inject");
	CHECK(got && !strcmp(got, "error:1:3"), "inject reads \"%s\" after refused sets",
	      got ? got : "(null)");
	free(got);
	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_ENABLE);
	/* FI_CTRL: unknown kinds, a queue out of range. */
	wr(d, FRAC_REG_FI_CTRL, FRAC_FI_CMD(0, 0, 1));
	wr(d, FRAC_REG_FI_CTRL, FRAC_FI_CMD(FRAC_FAULT_MAX, 0, 1));
	wr(d, FRAC_REG_FI_CTRL, FRAC_FI_CMD(0xff, 0, 1));
	wr(d, FRAC_REG_FI_CTRL, FRAC_FI_CMD(FRAC_FAULT_HANG, d->nq, 0));
	wr(d, FRAC_REG_FI_CTRL, FRAC_FI_CMD(FRAC_FAULT_ERROR, 0xff, 1));
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED after bad FI_CTRL writes");
	CHECK_EQ(rd(d, FRAC_REG_STATUS), FRAC_STS_READY | FRAC_STS_ENABLED | FRAC_STS_QUIESCED,
		 "STATUS");
	for (unsigned q = 0; q < d->nq; q++)
		if (ring_init(d, &r, q, 4, 0))
			RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = q);
	CHECK(qts_alive(d->q), "QEMU died");
}

/* Without fault-injection=on FI_CTRL does nothing; QOM inject still works. */
static void t_fault_fi_ctrl_off(struct dev *d, intptr_t arg)
{
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 8, 0))
		return;
	CHECK_EQ(rd(d, FRAC_REG_CAP1) & FRAC_FEAT_FAULT_INJ, 0, "CAP1.FAULT_INJ");
	for (unsigned k = FRAC_FAULT_HANG; k < FRAC_FAULT_MAX; k++)
		if (k != FRAC_FAULT_FATAL)
			wr(d, FRAC_REG_FI_CTRL, FRAC_FI_CMD(k, 0, 1));
	wr(d, FRAC_REG_FI_CTRL, FRAC_FI_CMD(FRAC_FAULT_FATAL, 0, 0));
	CHECK_EQ(rd(d, FRAC_REG_FI_ARMED), 0, "FI_ARMED");
	CHECK_EQ(rd(d, FRAC_REG_STATUS), FRAC_STS_READY | FRAC_STS_ENABLED | FRAC_STS_QUIESCED,
		 "STATUS");
	CHECK_EQ(qrd(d, 0, FRAC_Q_STATUS), FRAC_QSTS_ENABLED, "queue STATUS");
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 1);
	CHECK(msi_fired(d, 0), "interrupt");
	if (inject(d, FI_QOM, FRAC_FAULT_ERROR, 0, 1))
		run_expect(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 2 },
			   FRAC_STATUS_INJECTED, "QOM inject without fault-injection=on");
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 3);
}

/* ---- guest mistakes ----------------------------------------------------------- */

/* Expect @want for @desc and that the queue still runs; no error interrupt. */
static void expect_status(struct ring *r, struct frac_desc desc, uint32_t want,
			  uint64_t want_err_addr, const char *what)
{
	struct frac_cqe c;

	if (!run1(r, &desc, &c))
		return;
	check_impl(c.status == want, __LINE__, "status", "%s: status %u (%s), want %u (%s)",
		   what, c.status, status_name(c.status), want, status_name(want));
	if (want_err_addr != ~0ULL)
		check_impl(c.err_addr == want_err_addr, __LINE__, "err_addr",
			   "%s: err_addr 0x%" PRIx64 ", want 0x%" PRIx64, what, c.err_addr,
			   want_err_addr);
}

static void t_bad_opcode(struct dev *d, intptr_t arg)
{
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 8, 0))
		return;
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_MAX, .job_id = 1 },
		      FRAC_STATUS_BAD_OPCODE, ~0ULL, "opcode FRAC_OP_MAX");
	expect_status(&r, (struct frac_desc){ .opcode = 0xff, .job_id = 2 },
		      FRAC_STATUS_BAD_OPCODE, ~0ULL, "opcode 0xff");
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_BAD_DESC, "ERR_STATUS.BAD_DESC");
	CHECK_EQ(rd(d, FRAC_REG_ERR_QUEUE), 0, "ERR_QUEUE");
	CHECK(msi_fired(d, 0), "the queue vector fires for an error record");
	CHECK(!msi_fired(d, d->nq), "the error vector fired for a bad descriptor");
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_ERR_LO), 2, "JOBS_ERR");
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 3);
}

static void t_bad_desc(struct dev *d, intptr_t arg)
{
	const struct { struct frac_desc d; const char *what; } cases[] = {
		{ { .opcode = FRAC_OP_NOP, .rsvd0 = 1 }, "rsvd0" },
		{ { .opcode = FRAC_OP_NOP, .rsvd1 = 0x80000000 }, "rsvd1" },
		{ { .opcode = FRAC_OP_NOP, .flags = 0x80 }, "flag bit 7" },
		{ { .opcode = FRAC_OP_COPY, .flags = FRAC_DF_SRC_DEVMEM | FRAC_DF_SRC_SGL,
		    .src = 0, .dst = BUF(0), .len = 16 }, "src DEVMEM|SGL" },
		{ { .opcode = FRAC_OP_COPY, .flags = FRAC_DF_DST_DEVMEM | FRAC_DF_DST_SGL,
		    .src = BUF(0), .dst = 0, .len = 16 }, "dst DEVMEM|SGL" },
		{ { .opcode = FRAC_OP_GEMM, .flags = FRAC_DF_AUX_DEVMEM | FRAC_DF_AUX_SGL,
		    .src = BUF(0), .aux = 0, .dst = BUF(1), .arg = { 1, 1, 1, 0 } }, "aux DEVMEM|SGL" },
		{ { .opcode = FRAC_OP_NOP, .arg = { 0, 0, 0, 1 } }, "NOP arg[3]" },
		{ { .opcode = FRAC_OP_COPY, .src = BUF(0), .dst = BUF(1), .len = 4,
		    .arg = { 1 } }, "COPY arg[0]" },
		{ { .opcode = FRAC_OP_FILL, .dst = BUF(1), .len = 4, .arg = { 1, 2 } }, "FILL arg[1]" },
		{ { .opcode = FRAC_OP_CRC32C, .src = BUF(1), .len = 4, .arg = { 0, 0, 0, 9 } },
		  "CRC32C arg[3]" },
		{ { .opcode = FRAC_OP_TIMESTAMP, .arg = { 0, 0, 1 } }, "TIMESTAMP arg[2]" },
		{ { .opcode = FRAC_OP_COPY, .src = BUF(0), .dst = BUF(1), .len = FRAC_MAX_XFER + 1 },
		  "len 4 GiB + 1" },
		{ { .opcode = FRAC_OP_GEMM, .src = BUF(0), .aux = BUF(1), .dst = BUF(2),
		    .arg = { 0, 4, 4, FRAC_GEMM_FP32 } }, "GEMM M = 0" },
		{ { .opcode = FRAC_OP_GEMM, .src = BUF(0), .aux = BUF(1), .dst = BUF(2),
		    .arg = { 4, 0, 4, FRAC_GEMM_FP32 } }, "GEMM N = 0" },
		{ { .opcode = FRAC_OP_GEMM, .src = BUF(0), .aux = BUF(1), .dst = BUF(2),
		    .arg = { 4, 4, 0, FRAC_GEMM_INT8 } }, "GEMM K = 0" },
		{ { .opcode = FRAC_OP_GEMM, .src = BUF(0), .aux = BUF(1), .dst = BUF(2),
		    .arg = { 1025, 1, 1, FRAC_GEMM_INT8 } }, "GEMM M = 1025" },
		{ { .opcode = FRAC_OP_GEMM, .src = BUF(0), .aux = BUF(1), .dst = BUF(2),
		    .arg = { 1, 1025, 1, FRAC_GEMM_INT8 } }, "GEMM N = 1025" },
		{ { .opcode = FRAC_OP_GEMM, .src = BUF(0), .aux = BUF(1), .dst = BUF(2),
		    .arg = { 1, 1, 1025, FRAC_GEMM_INT8 } }, "GEMM K = 1025" },
		{ { .opcode = FRAC_OP_GEMM, .src = BUF(0), .aux = BUF(1), .dst = BUF(2),
		    .arg = { 1, 1, 0xffffffff, FRAC_GEMM_INT8 } }, "GEMM K = 2^32-1" },
		{ { .opcode = FRAC_OP_GEMM, .src = BUF(0), .aux = BUF(1), .dst = BUF(2),
		    .arg = { 2, 2, 2, 2 } }, "GEMM type 2" },
	};
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		return;
	qts_memset(d->q, BUF(1), 0xee, 64);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct frac_desc desc = cases[i].d;

		desc.job_id = 0x100 + i;
		expect_status(&r, desc, FRAC_STATUS_BAD_DESC, ~0ULL, cases[i].what);
	}
	mem_is(d, BUF(1), 0xee, 64, "a rejected job wrote");
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_BAD_DESC, "ERR_STATUS.BAD_DESC");
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_ERR_LO), ARRAY_SIZE(cases), "JOBS_ERR");
	CHECK(!msi_fired(d, d->nq), "error vector for bad descriptors");
	/* At the limits: fine. */
	RUN_OK(&r, .opcode = FRAC_OP_GEMM, .job_id = 1, .src = BUF(0), .aux = BUF(1), .dst = BUF(2),
	       .arg = { 1, 1024, 1, FRAC_GEMM_INT8 });
	/* 4 GiB exactly passes validation and fails on the device memory range. */
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 2,
		      .flags = FRAC_DF_DST_DEVMEM, .dst = 0, .len = FRAC_MAX_XFER },
		      FRAC_STATUS_DEVMEM_RANGE, 0, "4 GiB fill of device memory");
	CHECK(qts_alive(d->q), "QEMU died");
}

static void t_bad_devmem(struct dev *d, intptr_t arg)
{
	const uint64_t ms = d->mem_size;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		return;
	qts_memset(d->q, d->bar2 + ms - 16, 0xee, 16);
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 1,
		      .flags = FRAC_DF_DST_DEVMEM, .src = BUF(0), .dst = ms - 4, .len = 8 },
		      FRAC_STATUS_DEVMEM_RANGE, ms - 4, "dst runs past the end");
	mem_is(d, d->bar2 + ms - 16, 0xee, 16, "a range-failed copy wrote");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 2,
		      .flags = FRAC_DF_DST_DEVMEM, .src = BUF(0), .dst = ms, .len = 1 },
		      FRAC_STATUS_DEVMEM_RANGE, ms, "dst at the end");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 3,
		      .flags = FRAC_DF_SRC_DEVMEM, .src = ms - 1, .dst = BUF(0), .len = 2 },
		      FRAC_STATUS_DEVMEM_RANGE, ms - 1, "src runs past the end");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 4,
		      .flags = FRAC_DF_SRC_DEVMEM, .src = 0xfffffffffffffff0ULL, .dst = BUF(0),
		      .len = 0x20 }, FRAC_STATUS_DEVMEM_RANGE, 0xfffffffffffffff0ULL,
		      "src offset wraps");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 5,
		      .flags = FRAC_DF_SRC_DEVMEM, .src = 1ULL << 40, .len = 1 },
		      FRAC_STATUS_DEVMEM_RANGE, 1ULL << 40, "crc src far out");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_GEMM, .job_id = 6,
		      .flags = FRAC_DF_AUX_DEVMEM, .src = BUF(0), .aux = ms - 4, .dst = BUF(1),
		      .arg = { 1, 2, 1, FRAC_GEMM_FP32 } },
		      FRAC_STATUS_DEVMEM_RANGE, ms - 4, "GEMM B past the end");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_GEMM, .job_id = 7,
		      .flags = FRAC_DF_DST_DEVMEM, .src = BUF(0), .aux = BUF(0), .dst = ms - 12,
		      .arg = { 2, 2, 1, FRAC_GEMM_FP32 } },
		      FRAC_STATUS_DEVMEM_RANGE, ms - 12, "GEMM C past the end");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_TIMESTAMP, .job_id = 8,
		      .flags = FRAC_DF_DST_DEVMEM, .dst = ms - 7, .len = 8 },
		      FRAC_STATUS_DEVMEM_RANGE, ms - 7, "timestamp past the end");
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_BAD_DESC, "ERR_STATUS.BAD_DESC");
	CHECK(!msi_fired(d, d->nq), "error vector");
	/* The last bytes exactly: fine. */
	RUN_OK(&r, .opcode = FRAC_OP_FILL, .job_id = 9, .flags = FRAC_DF_DST_DEVMEM,
	       .dst = ms - 16, .len = 16, .arg = { 0x01010101 });
	mem_is(d, d->bar2 + ms - 16, 0x01, 16, "fill up to the end of devmem");
}

static void t_bad_dma_unmapped(struct dev *d, intptr_t arg)
{
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		return;
	qts_memset(d->q, BUF(1), 0xee, 64);
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 1, .src = UNMAPPED,
		      .dst = BUF(1), .len = 64 }, FRAC_STATUS_DMA_FAULT, UNMAPPED, "src unmapped");
	mem_is(d, BUF(1), 0xee, 64, "copy from nowhere wrote");
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_DMA_FAULT, "ERR_STATUS.DMA_FAULT");
	CHECK_EQ(rd64(d, FRAC_REG_ERR_ADDR_LO), UNMAPPED, "ERR_ADDR");
	CHECK_EQ(rd(d, FRAC_REG_ERR_QUEUE), 0, "ERR_QUEUE");
	/* The first error stays in ERR_ADDR until ERR_STATUS is cleared. */
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 2,
		      .dst = UNMAPPED + 0x1000, .len = 64 }, FRAC_STATUS_DMA_FAULT,
		      UNMAPPED + 0x1000, "dst unmapped");
	CHECK_EQ(rd64(d, FRAC_REG_ERR_ADDR_LO), UNMAPPED, "ERR_ADDR keeps the first error");
	wr(d, FRAC_REG_ERR_STATUS, FRAC_ERR_DMA_FAULT | FRAC_ERR_BAD_DESC);
	CHECK_EQ(rd(d, FRAC_REG_ERR_STATUS), 0, "ERR_STATUS after W1C");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 3, .src = BUF(0),
		      .dst = UNMAPPED + 0x2000, .len = 64 }, FRAC_STATUS_DMA_FAULT,
		      UNMAPPED + 0x2000, "copy to unmapped");
	CHECK_EQ(rd64(d, FRAC_REG_ERR_ADDR_LO), UNMAPPED + 0x2000, "ERR_ADDR after clearing");
	/* Big (worker) jobs, and a range that starts in RAM and runs out of it. */
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 4,
		      .src = UNMAPPED, .len = 2 * MiB }, FRAC_STATUS_DMA_FAULT, ~0ULL,
		      "big crc from nowhere");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 5,
		      .dst = UNMAPPED, .len = 2 * MiB }, FRAC_STATUS_DMA_FAULT, ~0ULL,
		      "big fill to nowhere");
	/* SG lists: the list itself, or an entry, nowhere. */
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 6,
		      .flags = FRAC_DF_SRC_SGL, .src = UNMAPPED, .dst = BUF(1), .len = 64 },
		      FRAC_STATUS_DMA_FAULT, UNMAPPED, "SG list unmapped");
	put_sgl(d, SGL_BASE, (struct frac_sge[]){ { BUF(0), 16, 0 }, { UNMAPPED + 64, 48, 0 } }, 2);
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 7,
		      .flags = FRAC_DF_SRC_SGL, .src = SGL_BASE, .dst = BUF(1), .len = 64 },
		      FRAC_STATUS_DMA_FAULT, UNMAPPED + 64, "SG entry unmapped");
	/* Addresses that wrap around 2^64. */
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 8,
		      .src = 0xffffffffffffff00ULL, .dst = BUF(1), .len = 0x200 },
		      FRAC_STATUS_DMA_FAULT, ~0ULL, "src wraps");
	CHECK(!msi_fired(d, d->nq), "error vector for single-job faults");
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 9);
	CHECK(qts_alive(d->q), "QEMU died");
}

/* DMA_BITS: an address above the mask faults, the same one below it works. */
static void t_bad_dma_mask(struct dev *d, intptr_t arg)
{
	uint8_t *data = rnd_buf(4096);
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		goto out;
	if (!CHECK(d->high_ram, "this group has no RAM above 4 GiB"))
		goto out;
	qts_memwrite(d->q, HIGH_RAM, data, 4096);
	qts_memset(d->q, BUF(1), 0xee, 4096);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .job_id = 1, .src = HIGH_RAM, .dst = BUF(1), .len = 4096);
	mem_eq(d, BUF(1), data, 4096, "copy from above 4 GiB with DMA_BITS 64");

	wr(d, FRAC_REG_DMA_BITS, 32);
	qts_memset(d->q, BUF(1), 0xee, 4096);
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 2, .src = HIGH_RAM,
		      .dst = BUF(1), .len = 4096 }, FRAC_STATUS_DMA_FAULT, HIGH_RAM,
		      "src above a 32-bit mask");
	mem_is(d, BUF(1), 0xee, 4096, "a masked-out copy wrote");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 3,
		      .dst = HIGH_RAM + 8, .len = 8 }, FRAC_STATUS_DMA_FAULT, HIGH_RAM + 8,
		      "dst above a 32-bit mask");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 4,
		      .src = HIGH_RAM - 0x1000, .dst = BUF(1), .len = 0x2000 },
		      FRAC_STATUS_DMA_FAULT, HIGH_RAM, "src straddles the 32-bit mask");
	put_sgl(d, SGL_BASE, (struct frac_sge[]){ { BUF(0), 16, 0 }, { HIGH_RAM, 48, 0 } }, 2);
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 5,
		      .flags = FRAC_DF_SRC_SGL, .src = SGL_BASE, .dst = BUF(1), .len = 64 },
		      FRAC_STATUS_DMA_FAULT, HIGH_RAM, "SG entry above a 32-bit mask");
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_DMA_FAULT, "ERR_STATUS.DMA_FAULT");

	wr(d, FRAC_REG_DMA_BITS, 33);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .job_id = 6, .src = HIGH_RAM, .dst = BUF(1), .len = 4096);
	mem_eq(d, BUF(1), data, 4096, "copy from above 4 GiB with DMA_BITS 33");
	wr(d, FRAC_REG_DMA_BITS, 64);
out:
	free(data);
}

/* DMA into the device's own BARs is refused. */
static void t_bad_dma_own_bar(struct dev *d, intptr_t arg)
{
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		return;
	wr(d, FRAC_REG_SCRATCH, 0x12345678);
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 1,
		      .dst = d->bar0 + FRAC_REG_CONTROL, .len = 4, .arg = { FRAC_CTRL_RESET } },
		      FRAC_STATUS_DMA_FAULT, d->bar0 + FRAC_REG_CONTROL, "fill into CONTROL");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 2,
		      .dst = d->bar0 - 16, .len = 64, .arg = { 0 } },
		      FRAC_STATUS_DMA_FAULT, d->bar0, "fill running into BAR0");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 3,
		      .src = d->bar0, .dst = BUF(1), .len = 64 },
		      FRAC_STATUS_DMA_FAULT, d->bar0, "copy from BAR0");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 4,
		      .dst = d->bar0 + FRAC_DB_SQ_TAIL(0), .len = 4, .arg = { 3 } },
		      FRAC_STATUS_DMA_FAULT, d->bar0 + FRAC_DB_SQ_TAIL(0), "fill into a doorbell");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 5,
		      .dst = d->bar0 + FRAC_MSIX_TABLE_OFFSET, .len = 16, .arg = { 0 } },
		      FRAC_STATUS_DMA_FAULT, d->bar0 + FRAC_MSIX_TABLE_OFFSET,
		      "fill into the MSI-X table");
	qts_memset(d->q, d->bar2 + 0x1000, 0xee, 64);
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 6,
		      .src = BUF(0), .dst = d->bar2 + 0x1000, .len = 64 },
		      FRAC_STATUS_DMA_FAULT, d->bar2 + 0x1000, "copy into BAR2 by bus address");
	mem_is(d, d->bar2 + 0x1000, 0xee, 64, "BAR2 written by bus address");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 7,
		      .flags = FRAC_DF_SRC_SGL, .src = d->bar0 + FRAC_REG_SCRATCH, .dst = BUF(1),
		      .len = 64 }, FRAC_STATUS_DMA_FAULT, d->bar0 + FRAC_REG_SCRATCH,
		      "SG list in BAR0");
	put_sgl(d, SGL_BASE, (struct frac_sge[]){ { BUF(0), 16, 0 }, { d->bar0, 48, 0 } }, 2);
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 8,
		      .flags = FRAC_DF_DST_SGL, .src = BUF(0), .dst = SGL_BASE, .len = 64 },
		      FRAC_STATUS_DMA_FAULT, d->bar0, "SG entry in BAR0");
	CHECK_EQ(rd(d, FRAC_REG_CONTROL), FRAC_CTRL_ENABLE, "CONTROL");
	CHECK_EQ(rd(d, FRAC_REG_SCRATCH), 0x12345678, "SCRATCH");
	CHECK_EQ(qrd(d, 0, FRAC_Q_SQ_TAIL), r.tail, "SQ_TAIL");
	CHECK_EQ(rd(d, FRAC_REG_STATUS), FRAC_STS_READY | FRAC_STS_ENABLED | FRAC_STS_QUIESCED,
		 "STATUS");
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 9);
	wr(d, FRAC_REG_SCRATCH, 0);
}

static void t_bad_sgl(struct dev *d, intptr_t arg)
{
	const uint64_t l = SGL_BASE;
	struct frac_desc cp = { .opcode = FRAC_OP_COPY, .flags = FRAC_DF_SRC_SGL, .src = l,
				.dst = BUF(1), .len = 64 };
	struct frac_sge *many;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		return;
	put_sgl(d, l, (struct frac_sge[]){ { BUF(0), 16, 0 }, { BUF(0) + 16, 0, 0 },
					   { BUF(0) + 16, 48, 0 } }, 3);
	cp.job_id = 1;
	expect_status(&r, cp, FRAC_STATUS_BAD_DESC, ~0ULL, "zero-length entry");
	put_sgl(d, l, (struct frac_sge[]){ { BUF(0), 64, 2 } }, 1);
	cp.job_id = 2;
	expect_status(&r, cp, FRAC_STATUS_BAD_DESC, ~0ULL, "unknown entry flag");
	put_sgl(d, l, (struct frac_sge[]){ { BUF(0), 16, 0 }, { l + 0x108, 1, FRAC_SGE_CHAIN } }, 2);
	cp.job_id = 3;
	expect_status(&r, cp, FRAC_STATUS_BAD_DESC, ~0ULL, "misaligned chain");
	put_sgl(d, l, (struct frac_sge[]){ { BUF(0), 16, 0 }, { l + 0x100, 0, FRAC_SGE_CHAIN } }, 2);
	cp.job_id = 4;
	expect_status(&r, cp, FRAC_STATUS_BAD_DESC, ~0ULL, "chain to 0 entries");
	/* A chain whose segment ends before the operand is covered. */
	put_sgl(d, l, (struct frac_sge[]){ { l + 0x100, 1, FRAC_SGE_CHAIN } }, 1);
	put_sgl(d, l + 0x100, (struct frac_sge[]){ { BUF(0), 16, 0 }, { BUF(0), 48, 0 } }, 2);
	cp.job_id = 5;
	expect_status(&r, cp, FRAC_STATUS_BAD_DESC, ~0ULL, "segment shorter than its chain count");
	cp.job_id = 6;
	cp.flags = FRAC_DF_DST_SGL;
	cp.src = BUF(0);
	cp.dst = l;
	put_sgl(d, l, (struct frac_sge[]){ { BUF(1), 0, 0 } }, 1);
	expect_status(&r, cp, FRAC_STATUS_BAD_DESC, ~0ULL, "zero-length dst entry");

	/* SGL_MAX entries (chains included) work; one more does not. */
	many = calloc(FRAC_SGL_MAX_ENTRIES + 1, sizeof(*many));
	for (unsigned i = 0; i <= FRAC_SGL_MAX_ENTRIES; i++)
		many[i] = (struct frac_sge){ BUF(2) + i, 1, 0 };
	qts_memwrite(d->q, BUF(3), many, (FRAC_SGL_MAX_ENTRIES + 1) * sizeof(*many));
	RUN_OK(&r, .opcode = FRAC_OP_CRC32C, .flags = FRAC_DF_SRC_SGL, .job_id = 7,
	       .src = BUF(3), .len = FRAC_SGL_MAX_ENTRIES);
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 8,
		      .flags = FRAC_DF_SRC_SGL, .src = BUF(3), .len = FRAC_SGL_MAX_ENTRIES + 1 },
		      FRAC_STATUS_BAD_DESC, ~0ULL, "SGL_MAX + 1 entries");
	free(many);
	/* A chain that loops on itself is bounded by SGL_MAX too. */
	put_sgl(d, l, (struct frac_sge[]){ { l, 1, FRAC_SGE_CHAIN } }, 1);
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 9,
		      .flags = FRAC_DF_SRC_SGL, .src = l, .dst = BUF(1), .len = 64 },
		      FRAC_STATUS_BAD_DESC, ~0ULL, "chain loop");
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_BAD_DESC, "ERR_STATUS.BAD_DESC");
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 10);
}

static void t_bad_doorbell(struct dev *d, intptr_t arg)
{
	const unsigned size = 8;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, size, 0))
		return;
	wr(d, FRAC_DB_SQ_TAIL(0), size);
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_BAD_DOORBELL, "ERR_STATUS.BAD_DOORBELL");
	CHECK_EQ(rd(d, FRAC_REG_ERR_QUEUE), 0, "ERR_QUEUE");
	CHECK_EQ(rd64(d, FRAC_REG_ERR_ADDR_LO), size, "ERR_ADDR holds the value");
	CHECK(msi_fired(d, d->nq), "no error interrupt for a bad doorbell");
	CHECK_EQ(qrd(d, 0, FRAC_Q_SQ_TAIL), 0, "SQ_TAIL took a bad value");
	CHECK(ring_quiet(&r, 1000000, 4), "a bad doorbell started jobs");
	wr(d, FRAC_REG_ERR_STATUS, ~0u);
	msi_clear(d);

	wr(d, FRAC_DB_CQ_HEAD(0), 0xffffffff);
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_BAD_DOORBELL, "bad CQ doorbell");
	CHECK(msi_fired(d, d->nq), "no error interrupt for a bad CQ doorbell");
	CHECK_EQ(qrd(d, 0, FRAC_Q_CQ_HEAD), 0, "CQ_HEAD took a bad value");
	wr(d, FRAC_REG_ERR_STATUS, ~0u);
	msi_clear(d);

	/* A disabled queue, a queue that does not exist, the end of the page. */
	wr(d, FRAC_DB_SQ_TAIL(1), 1);
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_BAD_DOORBELL, "doorbell of a disabled queue");
	CHECK_EQ(rd(d, FRAC_REG_ERR_QUEUE), 1, "ERR_QUEUE");
	CHECK(msi_fired(d, d->nq), "no error interrupt (disabled queue)");
	wr(d, FRAC_REG_ERR_STATUS, ~0u);
	msi_clear(d);
	wr(d, FRAC_DB_SQ_TAIL(d->nq), 1);
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_BAD_DOORBELL, "doorbell of a missing queue");
	CHECK(msi_fired(d, d->nq), "no error interrupt (missing queue)");
	wr(d, FRAC_REG_ERR_STATUS, ~0u);
	wr(d, FRAC_DB_OFFSET + FRAC_DB_SIZE - 4, 1);
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_BAD_DOORBELL, "doorbell page end");
	wr(d, FRAC_REG_ERR_STATUS, ~0u);
	CHECK_EQ(rd(d, FRAC_REG_ERR_STATUS), 0, "ERR_STATUS W1C");
	/* Good doorbells still work. */
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 1);
	CHECK_EQ(rd(d, FRAC_REG_STATUS), FRAC_STS_READY | FRAC_STS_ENABLED | FRAC_STS_QUIESCED,
		 "STATUS");
}

static void t_bad_ring(struct dev *d, intptr_t arg)
{
	static const struct { uint64_t sq, cq; uint32_t size; const char *what; } bad[] = {
		{ RING_BASE, RING_BASE + 0x40000, 0, "size 0" },
		{ RING_BASE, RING_BASE + 0x40000, 1, "size 1" },
		{ RING_BASE, RING_BASE + 0x40000, 3, "size 3" },
		{ RING_BASE, RING_BASE + 0x40000, 8192, "size 8192" },
		{ RING_BASE, RING_BASE + 0x40000, 0x80000000, "size 2^31" },
		{ RING_BASE + 32, RING_BASE + 0x40000, 8, "SQ misaligned" },
		{ RING_BASE, RING_BASE + 0x40008, 8, "CQ misaligned" },
		{ 0, RING_BASE + 0x40000, 8, "SQ zero" },
		{ RING_BASE, 0, 8, "CQ zero" },
	};
	const unsigned q = 0;
	(void)arg;

	fresh(d);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		qwr(d, q, FRAC_Q_CTRL, FRAC_QCTRL_RESET);
		qwr(d, q, FRAC_Q_SQ_BASE_LO, (uint32_t)bad[i].sq);
		qwr(d, q, FRAC_Q_SQ_BASE_HI, bad[i].sq >> 32);
		qwr(d, q, FRAC_Q_CQ_BASE_LO, (uint32_t)bad[i].cq);
		qwr(d, q, FRAC_Q_CQ_BASE_HI, bad[i].cq >> 32);
		qwr(d, q, FRAC_Q_SIZE, bad[i].size);
		qwr(d, q, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
		check_impl(qrd(d, q, FRAC_Q_STATUS) == FRAC_QSTS_ERROR, __LINE__, "STATUS",
			   "%s: queue STATUS 0x%x, want ERROR only", bad[i].what,
			   qrd(d, q, FRAC_Q_STATUS));
	}
	/* At the limits: 2 and 4096 entries. */
	{
		struct ring r;

		if (ring_init(d, &r, q, 2, 0))
			for (unsigned i = 0; i < 3; i++)
				RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = i);
		if (ring_init(d, &r, q, 4096, 0))
			RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 9);
	}
	CHECK(!msi_fired(d, d->nq), "error interrupt for ring programming");
}

/* A ring that does not decode: queue ERROR, DMA_FAULT, error interrupt. */
static void t_bad_ring_dma(struct dev *d, intptr_t arg)
{
	struct ring r;
	(void)arg;

	fresh(d);
	/* Descriptor fetch from nowhere. */
	qwr(d, 1, FRAC_Q_SQ_BASE_LO, (uint32_t)UNMAPPED);
	qwr(d, 1, FRAC_Q_SQ_BASE_HI, UNMAPPED >> 32);
	qwr(d, 1, FRAC_Q_CQ_BASE_LO, RING_BASE + RING_STRIDE);
	qwr(d, 1, FRAC_Q_SIZE, 8);
	qwr(d, 1, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
	wr(d, FRAC_DB_SQ_TAIL(1), 1);
	for (int i = 0; i < 100 && !(qrd(d, 1, FRAC_Q_STATUS) & FRAC_QSTS_ERROR); i++)
		qts_clock_step(d->q, 1000);
	CHECK_EQ(qrd(d, 1, FRAC_Q_STATUS) & (FRAC_QSTS_ERROR | FRAC_QSTS_ENABLED), FRAC_QSTS_ERROR,
		 "queue STATUS after a failed fetch");
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_DMA_FAULT, "ERR_STATUS.DMA_FAULT");
	CHECK_EQ(rd(d, FRAC_REG_ERR_QUEUE), 1, "ERR_QUEUE");
	CHECK_EQ(rd64(d, FRAC_REG_ERR_ADDR_LO), UNMAPPED, "ERR_ADDR = ring address");
	CHECK(msi_fired(d, d->nq), "no error interrupt for a failed fetch");
	wr(d, FRAC_REG_ERR_STATUS, ~0u);
	msi_clear(d);

	/* Completion write to nowhere. */
	qwr(d, 2, FRAC_Q_SQ_BASE_LO, RING_BASE + 2 * RING_STRIDE);
	qts_memset(d->q, RING_BASE + 2 * RING_STRIDE, 0, 64);
	qwr(d, 2, FRAC_Q_CQ_BASE_LO, (uint32_t)(UNMAPPED + 0x1000));
	qwr(d, 2, FRAC_Q_CQ_BASE_HI, (UNMAPPED + 0x1000) >> 32);
	qwr(d, 2, FRAC_Q_SIZE, 8);
	qwr(d, 2, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
	wr(d, FRAC_DB_SQ_TAIL(2), 1);
	for (int i = 0; i < 100 && !(qrd(d, 2, FRAC_Q_STATUS) & FRAC_QSTS_ERROR); i++)
		qts_clock_step(d->q, 1000);
	CHECK_EQ(qrd(d, 2, FRAC_Q_STATUS) & (FRAC_QSTS_ERROR | FRAC_QSTS_ENABLED), FRAC_QSTS_ERROR,
		 "queue STATUS after a failed completion write");
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_DMA_FAULT, "ERR_STATUS.DMA_FAULT");
	CHECK_EQ(rd(d, FRAC_REG_ERR_QUEUE), 2, "ERR_QUEUE");
	CHECK_EQ(rd64(d, FRAC_REG_ERR_ADDR_LO), UNMAPPED + 0x1000, "ERR_ADDR = CQ address");
	CHECK(msi_fired(d, d->nq), "no error interrupt for a failed completion write");
	/* Other queues are fine; the broken ones come back after a queue reset. */
	if (ring_init(d, &r, 0, 8, 0))
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 1);
	if (ring_init(d, &r, 2, 8, 0))
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 2);
	CHECK_EQ(rd(d, FRAC_REG_STATUS), FRAC_STS_READY | FRAC_STS_ENABLED | FRAC_STS_QUIESCED,
		 "STATUS");
}

/*
 * Rings inside the device's own BAR0 (section 11: DMA into the device's own
 * BAR is refused). A completion record written there would land on the
 * registers: with status BAD_DESC (2) its status word hits CONTROL as RESET,
 * a global reset from inside the completion path. Expected: a ring DMA error
 * like a ring that does not decode. These run in their own group (QEMU is
 * restarted after a crash, but other groups stay clean).
 */
static void t_own_bar_cq(struct dev *d, intptr_t arg)
{
	const uint64_t sq1 = RING_BASE + RING_STRIDE;
	(void)arg;

	fresh(d);
	qts_memset(d->q, sq1, 0, 8 * sizeof(struct frac_desc));
	qts_memwrite(d->q, sq1, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .rsvd0 = 1,
						     .job_id = 1 }, sizeof(struct frac_desc));
	qwr(d, 1, FRAC_Q_SQ_BASE_LO, (uint32_t)sq1);
	qwr(d, 1, FRAC_Q_CQ_BASE_LO, (uint32_t)d->bar0);
	qwr(d, 1, FRAC_Q_CQ_BASE_HI, d->bar0 >> 32);
	qwr(d, 1, FRAC_Q_SIZE, 8);
	qwr(d, 1, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
	wr(d, FRAC_DB_SQ_TAIL(1), 1);
	for (int i = 0; i < 100 && qts_alive(d->q) &&
	     !(qrd(d, 1, FRAC_Q_STATUS) & FRAC_QSTS_ERROR); i++)
		qts_clock_step(d->q, 1000);
	if (!CHECK(qts_alive(d->q), "QEMU died writing a completion record into its own BAR0"))
		return;
	CHECK_EQ(rd(d, FRAC_REG_CONTROL), FRAC_CTRL_ENABLE,
		 "CONTROL after a completion record aimed at BAR0");
	CHECK_EQ(qrd(d, 1, FRAC_Q_STATUS) & (FRAC_QSTS_ERROR | FRAC_QSTS_ENABLED), FRAC_QSTS_ERROR,
		 "queue STATUS with the CQ in BAR0");
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_DMA_FAULT, "ERR_STATUS.DMA_FAULT");
	CHECK_EQ(rd64(d, FRAC_REG_ERR_ADDR_LO), d->bar0, "ERR_ADDR = CQ address");
	CHECK(msi_fired(d, d->nq), "no error interrupt");
}

static void t_own_bar_sq(struct dev *d, intptr_t arg)
{
	const uint64_t cq2 = RING_BASE + 2 * RING_STRIDE;
	struct frac_cqe c;
	(void)arg;

	fresh(d);
	qts_memset(d->q, cq2, 0, 8 * sizeof(struct frac_cqe));
	qwr(d, 2, FRAC_Q_SQ_BASE_LO, (uint32_t)d->bar0);
	qwr(d, 2, FRAC_Q_SQ_BASE_HI, d->bar0 >> 32);
	qwr(d, 2, FRAC_Q_CQ_BASE_LO, (uint32_t)cq2);
	qwr(d, 2, FRAC_Q_SIZE, 8);
	qwr(d, 2, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
	wr(d, FRAC_DB_SQ_TAIL(2), 1);
	for (int i = 0; i < 100 && qts_alive(d->q) &&
	     !(qrd(d, 2, FRAC_Q_STATUS) & FRAC_QSTS_ERROR); i++)
		qts_clock_step(d->q, 1000);
	if (!CHECK(qts_alive(d->q), "QEMU died fetching descriptors from its own BAR0"))
		return;
	qts_memread(d->q, cq2, &c, sizeof(c));
	CHECK(!(c.flags & FRAC_CQE_PHASE), "a record for a descriptor fetched from BAR0 "
	      "(job_id 0x%" PRIx64 ", status %u)", c.job_id, c.status);
	CHECK_EQ(qrd(d, 2, FRAC_Q_STATUS) & (FRAC_QSTS_ERROR | FRAC_QSTS_ENABLED), FRAC_QSTS_ERROR,
		 "queue STATUS with the SQ in BAR0");
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_DMA_FAULT, "ERR_STATUS.DMA_FAULT");
	CHECK_EQ(rd64(d, FRAC_REG_ERR_ADDR_LO), d->bar0, "ERR_ADDR = SQ address");
}

/*
 * An MSI-X message aimed at CONTROL with RESET as its data: the interrupt of
 * a completion resets the device from inside the completion path. Whether
 * the write lands is not the point; QEMU must survive and the device work.
 */
static void t_own_bar_msix(struct dev *d, intptr_t arg)
{
	uint64_t e = d->bar0 + FRAC_MSIX_TABLE_OFFSET + 16 * 1;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 1, 8, 0))
		return;
	qts_writel(d->q, e + 0, (uint32_t)(d->bar0 + FRAC_REG_CONTROL));
	qts_writel(d->q, e + 4, (d->bar0 + FRAC_REG_CONTROL) >> 32);
	qts_writel(d->q, e + 8, FRAC_CTRL_RESET);
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 1 });
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 2 });
	ring_kick(&r);
	for (int i = 0; i < 100 && qts_alive(d->q) && qrd(d, 1, FRAC_Q_SQ_HEAD) != 2; i++)
		qts_clock_step(d->q, 1000);
	qts_clock_step(d->q, 1000000);
	if (!CHECK(qts_alive(d->q), "QEMU died on an MSI-X write into its own BAR0"))
		return;
	msix_vector(d, 1, false);
	fresh(d);
	if (ring_init(d, &r, 1, 8, 0))
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 3);
	CHECK(msi_fired(d, 1), "no interrupt afterwards");
}

/* ---- a reset from the device's own DMA or interrupt ------------------------------ */

/*
 * On q35 the device's DMA and MSI-X messages reach the MMCONFIG window, and
 * QEMU's re-entrancy guard does not cover config space: 0x8000 written to the
 * device's own PCIe Device Control is an FLR from inside its completion path
 * or a command. QEMU must survive it, the jobs the FLR drops post no record
 * (docs/hw-spec.md 8), no error is left behind, and the device works after.
 */
#define ECAM_BASE	0xb0000000ULL

/* Turn MMCONFIG on (q35 PCIEXBAR); the address of @d's config space in it. */
static uint64_t ecam_on(struct dev *d)
{
	struct dev host = { .q = d->q, .devfn = 0 };

	cfg_wl(&host, 0x64, 0);
	cfg_wl(&host, 0x60, (uint32_t)ECAM_BASE | 1);
	return ECAM_BASE + ((uint64_t)d->devfn << 12);
}

static void ecam_off(struct dev *d)
{
	struct dev host = { .q = d->q, .devfn = 0 };

	if (qts_alive(d->q))
		cfg_wl(&host, 0x60, 0);
}

/* Move the clock until the reset shows (COMMAND cleared) or QEMU is gone. */
static bool wait_self_flr(struct dev *d)
{
	double end = now_s() + WAIT_S;

	while (qts_alive(d->q) && (cfg_rw(d, 0x04) & 0x6) && now_s() < end) {
		if (qts_clock_step(d->q, 0) < 0)
			usleep(200);
	}
	qts_clock_step(d->q, 1000000);
	if (!CHECK(qts_alive(d->q), "QEMU died on a reset from the device's own DMA"))
		return false;
	return CHECK_EQ(cfg_rw(d, 0x04) & 0x6, 0, "COMMAND: the reset did not happen");
}

/* After the FLR: what the spec says of a reset, then a NOP on @q completes. */
static void after_self_flr(struct dev *d, struct ring *old, unsigned nrec)
{
	struct frac_cqe c;
	struct ring r;

	if (!CHECK(pci_setup(d), "device lost after FLR"))
		return;
	for (int i = 0; i < 5000 && !(rd(d, FRAC_REG_STATUS) & FRAC_STS_READY); i++)
		usleep(1000);
	CHECK_EQ(rd(d, FRAC_REG_STATUS), FRAC_STS_READY | FRAC_STS_QUIESCED, "STATUS after FLR");
	CHECK_EQ(rd(d, FRAC_REG_ERR_STATUS), 0, "ERR_STATUS after FLR");
	CHECK_EQ(qrd(d, old->q, FRAC_Q_STATUS), 0, "queue STATUS after FLR");
	CHECK_EQ(qrd(d, old->q, FRAC_Q_SQ_HEAD), 0, "queue SQ_HEAD after FLR");
	CHECK_EQ(qrd(d, old->q, FRAC_Q_CQ_TAIL), 0, "queue CQ_TAIL after FLR");
	/* The records written before the FLR, then none for the dropped jobs. */
	for (unsigned i = 0; i < old->size; i++) {
		qts_memread(d->q, old->cq + i * sizeof(c), &c, sizeof(c));
		if (i < nrec)
			CHECK(c.flags & FRAC_CQE_PHASE && c.job_id == i + 1 && !c.status,
			      "record %u: job 0x%" PRIx64 " status %u flags 0x%x", i, c.job_id,
			      c.status, c.flags);
		else
			CHECK(!(c.flags & FRAC_CQE_PHASE), "record %u for a dropped job 0x%" PRIx64,
			      i, c.job_id);
	}
	fresh(d);
	if (ring_init(d, &r, old->q, 8, 0))
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 0x77);
	CHECK(msi_fired(d, old->q), "no interrupt after the FLR");
}

/* A NOP's MSI-X message writes Initiate FLR: the reset runs in the post loop. */
static void t_self_flr_msix(struct dev *d, intptr_t arg)
{
	uint64_t e = d->bar0 + FRAC_MSIX_TABLE_OFFSET + 16 * 1, devctl;
	struct ring r;
	(void)arg;

	if (!CHECK(d->pcie_cap, "no PCIe capability"))
		return;
	devctl = ecam_on(d) + d->pcie_cap + 8;
	fresh(d);
	if (!ring_init(d, &r, 1, 8, 0))
		goto out;
	qts_writel(d->q, e + 0, (uint32_t)devctl);
	qts_writel(d->q, e + 4, devctl >> 32);
	qts_writel(d->q, e + 8, 0x8000);
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 1 });
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 2 });
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 3 });
	ring_kick(&r);
	if (wait_self_flr(d))
		after_self_flr(d, &r, 1);
out:
	ecam_off(d);
}

/*
 * The CQ in config space, slot 0 at the PCIe capability: the record's result
 * (a CRC32C of nothing seeded with 0x8000) lands on Device Control.
 */
static void t_self_flr_cq(struct dev *d, intptr_t arg)
{
	uint64_t cfg;
	struct ring r;
	(void)arg;

	if (!CHECK(d->pcie_cap, "no PCIe capability"))
		return;
	cfg = ecam_on(d);
	fresh(d);
	if (!ring_init(d, &r, 1, 8, 0))
		goto out;
	qwr(d, 1, FRAC_Q_CTRL, 0);
	r.cq = cfg + d->pcie_cap + 8 - offsetof(struct frac_cqe, result);
	qwr(d, 1, FRAC_Q_CQ_BASE_LO, (uint32_t)r.cq);
	qwr(d, 1, FRAC_Q_CQ_BASE_HI, r.cq >> 32);
	qwr(d, 1, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
	if (!CHECK(qrd(d, 1, FRAC_Q_STATUS) & FRAC_QSTS_ENABLED, "queue with the CQ in ECAM"))
		goto out;
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 1, .src = BUF(0),
					  .arg = { 0x8000 } });
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 2 });
	ring_kick(&r);
	if (wait_self_flr(d)) {
		r.cq = RING_BASE + RING_STRIDE + RING_STRIDE / 2;	/* nothing there */
		after_self_flr(d, &r, 0);
	}
out:
	ecam_off(d);
}

/* A small (inline) COPY whose destination is Device Control. */
static void t_self_flr_copy(struct dev *d, intptr_t arg)
{
	uint32_t flr = 0x8000;
	uint64_t devctl;
	struct ring r;
	(void)arg;

	if (!CHECK(d->pcie_cap, "no PCIe capability"))
		return;
	devctl = ecam_on(d) + d->pcie_cap + 8;
	fresh(d);
	if (!ring_init(d, &r, 1, 8, 0))
		goto out;
	qts_memwrite(d->q, BUF(0), &flr, sizeof(flr));
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 1, .src = BUF(0),
					  .dst = devctl, .len = sizeof(flr) });
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 2 });
	ring_kick(&r);
	if (wait_self_flr(d))
		after_self_flr(d, &r, 0);
out:
	ecam_off(d);
}

/* With bus mastering off the device cannot reach its rings. */
static void t_bad_bus_master(struct dev *d, intptr_t arg)
{
	struct frac_cqe c;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 8, 0))
		return;
	cfg_ww(d, 0x04, 0x0002);
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 1 });
	ring_kick(&r);
	for (int i = 0; i < 100 && !(qrd(d, 0, FRAC_Q_STATUS) & FRAC_QSTS_ERROR); i++)
		qts_clock_step(d->q, 1000);
	CHECK_EQ(qrd(d, 0, FRAC_Q_STATUS) & (FRAC_QSTS_ERROR | FRAC_QSTS_ENABLED), FRAC_QSTS_ERROR,
		 "queue STATUS after a fetch without bus mastering");
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_DMA_FAULT, "ERR_STATUS.DMA_FAULT");
	CHECK_EQ(rd64(d, FRAC_REG_ERR_ADDR_LO), r.sq, "ERR_ADDR = SQ address");
	CHECK(!ring_peek(&r, &c), "a record written without bus mastering");
	CHECK(!msi_fired(d, 0) && !msi_fired(d, d->nq), "an MSI-X write without bus mastering");
	cfg_ww(d, 0x04, 0x0006);
	wr(d, FRAC_REG_ERR_STATUS, ~0u);
	if (ring_init(d, &r, 0, 8, 0))
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 2);
}

/* Lower bounds from the timing model (section 9), all on the device clock. */
static void t_timing_model(struct dev *d, intptr_t arg)
{
	struct frac_cqe c, c1, c2;
	struct ring r1, r2;
	uint64_t t0;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r1, 1, 8, 0) || !ring_init(d, &r2, 2, 8, 0))
		return;
	t0 = dev_clock(d);
	if (run_ok(&r1, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 1 }, &c)) {
		CHECK(c.t_start >= t0 + 2000, "NOP started %" PRIu64 " ns after the doorbell, "
		      "fetch latency is 2000", c.t_start - t0);
		CHECK(dev_clock(d) >= c.t_end + 1000, "record visible %" PRId64 " ns after the job "
		      "ended, completion latency is 1000", (int64_t)(dev_clock(d) - c.t_end));
	}
	if (run_ok(&r1, &(struct frac_desc){ .opcode = FRAC_OP_GEMM, .job_id = 2, .src = BUF(0),
					     .aux = BUF(1), .dst = BUF(2),
					     .arg = { 64, 64, 64, FRAC_GEMM_FP32 } }, &c))
		CHECK(c.t_end - c.t_start >= 2 * 64 * 64 * 64 / 200,
		      "GEMM 64^3 took %" PRIu64 " ns at 200 GFLOPS", c.t_end - c.t_start);
	if (run_ok(&r1, &(struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 3, .src = BUF(0),
					     .dst = BUF(1), .len = MiB }, &c))
		CHECK(c.t_end - c.t_start >= MiB * 1000 / 8000,
		      "1 MiB copy took %" PRIu64 " ns at 8000 MB/s", c.t_end - c.t_start);
	/* Two queues run in parallel; jobs of one queue run one after another. */
	ring_put(&r1, &(struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 4, .src = BUF(0),
					   .dst = BUF(1), .len = MiB });
	ring_put(&r1, &(struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 5, .src = BUF(0),
					   .dst = BUF(3), .len = MiB });
	ring_put(&r2, &(struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 6, .src = BUF(0),
					   .dst = BUF(2), .len = MiB });
	ring_kick(&r1);
	ring_kick(&r2);
	if (ring_wait(&r1, &c1) && ring_wait(&r2, &c2) && ring_wait(&r1, &c)) {
		CHECK(c2.t_start < c1.t_end, "queue 2 waited for queue 1: %" PRIu64 " >= %" PRIu64,
		      c2.t_start, c1.t_end);
		CHECK(c.t_start >= c1.t_end, "queue 1 overlapped its own jobs");
	}
}

/*
 * Bug: a doorbell rung while the fetch timer of an earlier one was pending
 * was fetched with it, 1000 ns after it was rung instead of the programmed
 * fetch latency (2000 ns).
 */
static void t_fetch_latency_each_doorbell(struct dev *d, intptr_t arg)
{
	struct frac_cqe c1, c2;
	struct ring r;
	uint64_t t1, t2;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 2, 8, 0))
		return;
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 1 });
	t1 = dev_clock(d);
	ring_kick(&r);
	qts_clock_step(d->q, 1000);
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 2 });
	t2 = dev_clock(d);
	ring_kick(&r);
	qts_clock_step(d->q, 1000);	/* the first doorbell's fetch is due */
	CHECK_EQ(qrd(d, 2, FRAC_Q_SQ_HEAD), 1, "SQ_HEAD when only the first doorbell is due");
	qts_clock_step(d->q, 1000);
	CHECK_EQ(qrd(d, 2, FRAC_Q_SQ_HEAD), 2, "SQ_HEAD when the second doorbell is due");
	if (ring_wait(&r, &c1) && ring_wait(&r, &c2)) {
		CHECK(c1.t_start >= t1 + 2000, "job 1 started %" PRIu64 " ns after its doorbell",
		      c1.t_start - t1);
		CHECK(c2.t_start >= t2 + 2000, "job 2 started %" PRIu64 " ns after its doorbell",
		      c2.t_start - t2);
	}
}

/* After all the abuse: QEMU runs, registers read, QMP answers. */
static void t_still_alive(struct dev *d, intptr_t arg)
{
	char *r;
	(void)arg;

	CHECK(qts_alive(d->q), "QEMU process is gone");
	CHECK_EQ(rd(d, FRAC_REG_ID), FRAC_ID_MAGIC, "ID");
	r = qts_qmp(d->q, "{\"execute\": \"query-status\"}");
	CHECK(r && strstr(r, "\"running\": true"), "query-status: %s", r ? r : "(none)");
	free(r);
}

/* ---- resets ------------------------------------------------------------------- */

/* Leave state everywhere a reset has to clear. */
static void dirty(struct dev *d)
{
	struct ring r0, r1;

	fresh(d);
	wr(d, FRAC_REG_SCRATCH, 0xfeedf00d);
	wr(d, FRAC_REG_INT_MASK, 0x5);
	if (ring_init(d, &r0, 0, 8, FRAC_COAL(3, 7)) && ring_init(d, &r1, 1, 16, 0)) {
		RUN_OK(&r0, .opcode = FRAC_OP_FILL, .job_id = 1, .dst = BUF(0), .len = 100,
		       .arg = { 1 });
		RUN_OK(&r1, .opcode = FRAC_OP_GEMM, .job_id = 2, .src = BUF(0), .aux = BUF(0),
		       .dst = BUF(1), .arg = { 8, 8, 8, FRAC_GEMM_INT8 });
		run_expect(&r1, &(struct frac_desc){ .opcode = 0x77, .job_id = 3 },
			   FRAC_STATUS_BAD_OPCODE, "bad opcode");
		/* and one job left waiting in the SQ */
		ring_put(&r1, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 4 });
	}
	wr(d, FRAC_REG_DMA_BITS, 40);
	wr(d, FRAC_DB_SQ_TAIL(3), 1);	/* bad doorbell: ERR_STATUS, ERR_ADDR */
	if (rd(d, FRAC_REG_CAP1) & FRAC_FEAT_FAULT_INJ)
		wr(d, FRAC_REG_FI_CTRL, FRAC_FI_CMD(FRAC_FAULT_HANG, 2, 0));
	qts_memset(d->q, d->bar2 + 0x300, 0x77, 64);
	CHECK(rd(d, FRAC_REG_ERR_STATUS), "dirty: no error recorded");
	CHECK(rd64(d, FRAC_REG_JOBS_DONE_LO) && rd64(d, FRAC_REG_BYTES_WR_LO), "dirty: no jobs");
}

static void after_reset_runs(struct dev *d)
{
	struct ring r;

	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_ENABLE);
	msi_clear(d);
	for (unsigned q = 0; q < d->nq; q++) {
		if (!ring_init(d, &r, q, 8, 0))
			continue;
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = q);
		CHECK(msi_fired(d, q), "queue %u: no interrupt after the reset", q);
	}
	mem_is(d, d->bar2 + 0x300, 0x77, 64, "device memory survives the reset");
}

static void t_reset_global(struct dev *d, intptr_t arg)
{
	uint64_t c0, c1;
	(void)arg;

	dirty(d);
	c0 = dev_clock(d);
	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	CHECK_EQ(rd(d, FRAC_REG_CONTROL), 0, "CONTROL (RESET self-clears)");
	snap_compare(d, "after CONTROL.RESET");
	c1 = dev_clock(d);
	CHECK(c1 >= c0, "the device clock went back on reset: %" PRIu64 " -> %" PRIu64, c0, c1);
	after_reset_runs(d);
}

static void flr(struct dev *d)
{
	cfg_ww(d, d->pcie_cap + 8, cfg_rw(d, d->pcie_cap + 8) | 0x8000);
}

static void t_reset_flr(struct dev *d, intptr_t arg)
{
	uint64_t c0, c1;
	(void)arg;

	if (!CHECK(d->pcie_cap, "no PCIe capability"))
		return;
	dirty(d);
	c0 = dev_clock(d);
	flr(d);
	CHECK_EQ(cfg_rw(d, 0x04) & 0x7, 0, "COMMAND after FLR");
	CHECK_EQ(cfg_rl(d, 0x10), 0x4, "BAR0 after FLR");
	CHECK_EQ(cfg_rl(d, 0x14), 0, "BAR1 after FLR");
	CHECK_EQ(cfg_rl(d, 0x18), 0xc, "BAR2 after FLR");
	CHECK_EQ(cfg_rw(d, d->msix_cap + 2) & 0xc000, 0, "MSI-X control after FLR");
	CHECK_EQ(cfg_rw(d, d->pcie_cap + 8) & 0x8000, 0, "Initiate FLR reads 0");
	if (!CHECK(pci_setup(d), "device lost after FLR"))
		return;
	snap_compare(d, "after FLR");
	c1 = dev_clock(d);
	CHECK(c1 >= c0, "the device clock went back on FLR: %" PRIu64 " -> %" PRIu64, c0, c1);
	after_reset_runs(d);
}

static void t_reset_system(struct dev *d, intptr_t arg)
{
	uint64_t c0;
	char *r;
	int i;
	(void)arg;

	dirty(d);
	c0 = dev_clock(d);
	r = qts_qmp(d->q, "{\"execute\": \"system_reset\"}");
	CHECK(r && !strncmp(r, "{\"return\"", 9), "system_reset: %s", r ? r : "(none)");
	free(r);
	for (i = 0; i < 200 && (cfg_rw(d, 0x04) & 0x6); i++)
		usleep(10000);
	CHECK_EQ(cfg_rw(d, 0x04) & 0x7, 0, "COMMAND after system reset");
	if (!CHECK(pci_setup(d), "device lost after system reset"))
		return;
	snap_compare(d, "after system reset");
	CHECK(dev_clock(d) >= c0, "the device clock went back on system reset");
	after_reset_runs(d);
}

/* Submit a long GEMM on @q and wait until the worker is on it. */
static bool start_long_gemm(struct dev *d, struct ring *r, unsigned q)
{
	if (!ring_init(d, r, q, 8, 0))
		return false;
	qts_memset(d->q, BUF(40), 0xee, 64);
	ring_put(r, &(struct frac_desc){ .opcode = FRAC_OP_GEMM, .job_id = 0x6e33,
					 .src = BUF(41), .aux = BUF(42), .dst = BUF(40),
					 .arg = { 1024, 1024, 1024, FRAC_GEMM_FP32 } });
	ring_kick(r);
	for (int i = 0; i < 100 && qrd(d, q, FRAC_Q_SQ_HEAD) != 1; i++)
		qts_clock_step(d->q, 1000);
	usleep(30000);
	return CHECK(qrd(d, q, FRAC_Q_STATUS) & FRAC_QSTS_BUSY, "GEMM not in flight");
}

/* A queue reset while its job runs on the worker drops the job, and only it. */
static void t_reset_queue_busy(struct dev *d, intptr_t arg)
{
	uint8_t *data = rnd_buf(MiB + 1);
	struct ring r1, r0;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r0, 0, 8, 0) || !start_long_gemm(d, &r1, 1))
		goto out;
	qwr(d, 1, FRAC_Q_CTRL, FRAC_QCTRL_RESET);
	/* The worker stops at the end of a GEMM row: a reset ends soon after. */
	CHECK(wait_clear(d, FRAC_QREG(1, FRAC_Q_CTRL), FRAC_QCTRL_RESET) >= 0,
	      "CTRL.RESET stuck");
	for (uint32_t reg = 0; reg < FRAC_QREGS_STRIDE; reg += 4)
		CHECK_EQ(qrd(d, 1, reg), reg == FRAC_Q_VECTOR ? 1 : 0, "queue register after reset");
	CHECK_EQ(qrd(d, 0, FRAC_Q_STATUS), FRAC_QSTS_ENABLED, "queue 0 untouched by queue 1's reset");
	RUN_OK(&r0, .opcode = FRAC_OP_NOP, .job_id = 1);
	/* The same worker runs the next job: once that is done the GEMM is gone. */
	if (ring_init(d, &r1, 1, 8, 0)) {
		qts_memwrite(d->q, BUF(0), data, MiB + 1);
		RUN_OK(&r1, .opcode = FRAC_OP_COPY, .job_id = 2, .src = BUF(0), .dst = BUF(1),
		       .len = MiB + 1);
		mem_eq(d, BUF(1), data, MiB + 1, "copy after the reset");
		CHECK(ring_quiet(&r1, 1000000, 4), "a record from the dropped job");
	}
	mem_is(d, BUF(40), 0xee, 64, "the dropped GEMM wrote its result");
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_DONE_LO), 2, "JOBS_DONE (the dropped job not counted)");
out:
	free(data);
}

/*
 * After a reset that dropped a GEMM on @q's worker: the next worker job on @q
 * is the first (and only) record there, and the GEMM wrote nothing.
 */
static void check_dropped(struct dev *d, unsigned q)
{
	struct ring r;

	if (!ring_init(d, &r, q, 8, 0))
		return;
	RUN_OK(&r, .opcode = FRAC_OP_FILL, .job_id = 0xf111, .dst = BUF(43), .len = MiB,
	       .arg = { 0 });
	CHECK(ring_quiet(&r, 1000000, 4), "a record from the dropped job");
	mem_is(d, BUF(40), 0xee, 64, "the dropped GEMM wrote its result");
}

/* Global reset and FLR while a queue's worker is busy. */
static void t_reset_busy(struct dev *d, intptr_t arg)
{
	struct ring r;
	(void)arg;

	fresh(d);
	if (start_long_gemm(d, &r, 2)) {
		wr(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
		CHECK(wait_clear(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET) >= 0, "CONTROL.RESET stuck");
		CHECK_EQ(qrd(d, 2, FRAC_Q_STATUS), 0, "queue STATUS after global reset");
		after_reset_runs(d);
		check_dropped(d, 2);
	}
	if (start_long_gemm(d, &r, 3)) {
		flr(d);
		if (CHECK(pci_setup(d), "device lost after FLR")) {
			/* A driver waits for READY after an FLR (docs/hw-spec.md 8). */
			for (int i = 0; i < 5000 && !(rd(d, FRAC_REG_STATUS) & FRAC_STS_READY); i++)
				usleep(1000);
			CHECK_EQ(qrd(d, 3, FRAC_Q_STATUS), 0, "queue STATUS after FLR");
			after_reset_runs(d);
			check_dropped(d, 3);
		}
	}
}

/* ---- quiesce handshake (docs/hw-spec.md 8) ------------------------------------ */

#define QUIESCE_SAMPLES	64

/*
 * A devmem->devmem COPY of half the device memory on @q: src = 0x11, dst =
 * 0x22. True once the worker has it. The old model did it in one memmove.
 */
static bool start_long_devmem_copy(struct dev *d, struct ring *r, unsigned q)
{
	uint64_t half = d->mem_size / 2;

	if (!ring_init(d, r, q, 8, 0))
		return false;
	qts_memset(d->q, d->bar2, 0x11, half);
	qts_memset(d->q, d->bar2 + half, 0x22, half);
	ring_put(r, &(struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 0xc0b1,
					 .flags = FRAC_DF_SRC_DEVMEM | FRAC_DF_DST_DEVMEM,
					 .src = 0, .dst = half, .len = half });
	ring_kick(r);
	for (int i = 0; i < 100 && qrd(d, q, FRAC_Q_SQ_HEAD) != 1; i++)
		qts_clock_step(d->q, 1000);
	return CHECK(qrd(d, q, FRAC_Q_STATUS) & FRAC_QSTS_BUSY, "copy not in flight");
}

/* Bytes spread over the copy's destination. */
static void sample_dst(struct dev *d, uint8_t *v)
{
	uint64_t half = d->mem_size / 2;

	for (unsigned i = 0; i < QUIESCE_SAMPLES; i++)
		v[i] = qts_readb(d->q, d->bar2 + half + i * (half / QUIESCE_SAMPLES) +
				 half / QUIESCE_SAMPLES - 1);
}

/*
 * Once the reset reads complete, the dropped copy must not touch memory any
 * more: sample the destination, wait, sample again.
 */
static void check_stopped(struct dev *d, const char *what)
{
	uint8_t a[QUIESCE_SAMPLES], b[QUIESCE_SAMPLES];

	sample_dst(d, a);
	usleep(300000);
	sample_dst(d, b);
	CHECK(!memcmp(a, b, sizeof(a)), "%s: device memory changed after the reset had "
	      "completed (the dropped job still ran)", what);
}

/* Bug: CTRL.RESET returned at once while the worker was still in the job's memmove. */
static void t_reset_queue_quiesce(struct dev *d, intptr_t arg)
{
	struct ring r;
	double t;
	(void)arg;

	fresh(d);
	CHECK(rd(d, FRAC_REG_STATUS) & FRAC_STS_QUIESCED, "idle device not QUIESCED");
	if (!start_long_devmem_copy(d, &r, 1))
		return;
	CHECK(!(rd(d, FRAC_REG_STATUS) & FRAC_STS_QUIESCED), "QUIESCED with a job running");
	qwr(d, 1, FRAC_Q_CTRL, FRAC_QCTRL_RESET);
	t = wait_clear(d, FRAC_QREG(1, FRAC_Q_CTRL), FRAC_QCTRL_RESET);
	CHECK(t >= 0 && t < FRAC_RESET_TIMEOUT_MS / 1000.0, "queue reset took %.3f s", t);
	printf("#   queue reset quiesced in %.2f ms\n", t * 1e3);
	CHECK_EQ(qrd(d, 1, FRAC_Q_STATUS), 0, "queue STATUS after the reset");
	for (uint32_t reg = 0; reg < FRAC_QREGS_STRIDE; reg += 4)
		CHECK_EQ(qrd(d, 1, reg), reg == FRAC_Q_VECTOR ? 1 : 0, "queue register after reset");
	check_stopped(d, "queue reset");
	CHECK(rd(d, FRAC_REG_STATUS) & FRAC_STS_QUIESCED, "not QUIESCED after the reset");
	if (ring_init(d, &r, 1, 8, 0)) {
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 1);
		CHECK(ring_quiet(&r, 1000000, 4), "a record from the dropped job");
	}
}

/* Bug: CONTROL.RESET returned at once while a worker was still in a memmove. */
static void t_reset_global_quiesce(struct dev *d, intptr_t arg)
{
	struct ring r;
	double t;
	(void)arg;

	fresh(d);
	if (!start_long_devmem_copy(d, &r, 2))
		return;
	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	t = wait_clear(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	CHECK(t >= 0 && t < FRAC_RESET_TIMEOUT_MS / 1000.0, "global reset took %.3f s", t);
	printf("#   global reset quiesced in %.2f ms\n", t * 1e3);
	CHECK_EQ(rd(d, FRAC_REG_STATUS), FRAC_STS_READY | FRAC_STS_QUIESCED,
		 "STATUS after the global reset");
	CHECK_EQ(qrd(d, 2, FRAC_Q_STATUS), 0, "queue STATUS after the global reset");
	check_stopped(d, "global reset");
	qts_memset(d->q, d->bar2 + 0x300, 0x77, 64);	/* what after_reset_runs looks for */
	after_reset_runs(d);
}

/* ---- telemetry ----------------------------------------------------------------- */

static void t_telemetry_counters(struct dev *d, intptr_t arg)
{
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 16, 0))
		return;
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .job_id = 1, .src = BUF(0), .dst = BUF(1), .len = 1000);
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .job_id = 2, .flags = FRAC_DF_DST_DEVMEM,
	       .src = BUF(0), .dst = 0, .len = 3000);
	RUN_OK(&r, .opcode = FRAC_OP_FILL, .job_id = 3, .dst = BUF(1), .len = 300);
	RUN_OK(&r, .opcode = FRAC_OP_CRC32C, .job_id = 4, .src = BUF(0), .len = 500);
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 5);
	RUN_OK(&r, .opcode = FRAC_OP_GEMM, .job_id = 6, .src = BUF(0), .aux = BUF(1),
	       .dst = BUF(2), .arg = { 2, 3, 4, FRAC_GEMM_INT8 });	/* 8 + 12 in, 24 out */
	RUN_OK(&r, .opcode = FRAC_OP_TIMESTAMP, .job_id = 7, .dst = BUF(3), .len = 8);
	run_expect(&r, &(struct frac_desc){ .opcode = 0x42, .job_id = 8 },
		   FRAC_STATUS_BAD_OPCODE, "bad opcode");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 9,
		      .flags = FRAC_DF_SRC_DEVMEM, .src = d->mem_size, .dst = BUF(1), .len = 4 },
		      FRAC_STATUS_DEVMEM_RANGE, ~0ULL, "devmem range");
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_DONE_LO), 7, "JOBS_DONE");
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_ERR_LO), 2, "JOBS_ERR");
	CHECK_EQ(rd64(d, FRAC_REG_BYTES_RD_LO), 1000 + 3000 + 500 + 20, "BYTES_RD");
	CHECK_EQ(rd64(d, FRAC_REG_BYTES_WR_LO), 1000 + 3000 + 300 + 24 + 8, "BYTES_WR");
	CHECK_EQ(rd64(d, FRAC_REG_IRQS_LO), 9, "IRQS");
	CHECK_EQ(qrd(d, 0, FRAC_Q_JOBS), 9, "queue JOBS");
	/* Counters restart from zero on reset. */
	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_DONE_LO) | rd64(d, FRAC_REG_JOBS_ERR_LO) |
		 rd64(d, FRAC_REG_BYTES_RD_LO) | rd64(d, FRAC_REG_BYTES_WR_LO) |
		 rd64(d, FRAC_REG_IRQS_LO) | rd64(d, FRAC_REG_BUSY_NS_LO(0)) |
		 rd64(d, FRAC_REG_BUSY_NS_LO(1)), 0, "counters after reset");
}

/* A transfer that faults moves no data, so it adds no bytes. */
static void t_telemetry_fault_bytes(struct dev *d, intptr_t arg)
{
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 16, 0))
		return;
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 1,
		      .src = UNMAPPED, .dst = BUF(1), .len = 4096 }, FRAC_STATUS_DMA_FAULT,
		      UNMAPPED, "copy from nowhere");
	CHECK_EQ(rd64(d, FRAC_REG_BYTES_RD_LO), 0, "BYTES_RD after a faulted read");
	CHECK_EQ(rd64(d, FRAC_REG_BYTES_WR_LO), 0, "BYTES_WR after a faulted read");
	expect_status(&r, (struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 2,
		      .dst = UNMAPPED, .len = 4096 }, FRAC_STATUS_DMA_FAULT,
		      UNMAPPED, "fill to nowhere");
	CHECK_EQ(rd64(d, FRAC_REG_BYTES_WR_LO), 0, "BYTES_WR after a faulted write");
	CHECK_EQ(rd64(d, FRAC_REG_JOBS_ERR_LO), 2, "JOBS_ERR");
}

static void t_telemetry_busy(struct dev *d, intptr_t arg)
{
	uint64_t dma0, dma1, dma2, cmp0, cmp1, cmp2;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 16, 0))
		return;
	dma0 = rd64(d, FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_DMA));
	cmp0 = rd64(d, FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_COMPUTE));
	CHECK_EQ(dma0 | cmp0, 0, "BUSY_NS after reset");
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .job_id = 1, .src = BUF(0), .dst = BUF(1), .len = 4096);
	dma1 = rd64(d, FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_DMA));
	cmp1 = rd64(d, FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_COMPUTE));
	CHECK(dma1 > dma0, "DMA busy did not grow with a copy");
	CHECK_EQ(cmp1, cmp0, "compute busy grew with a copy");
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .job_id = 2, .src = BUF(0), .dst = BUF(1), .len = MiB);
	dma2 = rd64(d, FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_DMA));
	CHECK(dma2 - dma1 > 100 * (dma1 - dma0), "DMA busy for 1 MiB (%" PRIu64 ") not >> 4 KiB (%"
	      PRIu64 ")", dma2 - dma1, dma1 - dma0);
	RUN_OK(&r, .opcode = FRAC_OP_GEMM, .job_id = 3, .src = BUF(0), .aux = BUF(1),
	       .dst = BUF(2), .arg = { 128, 128, 128, FRAC_GEMM_FP32 });
	cmp2 = rd64(d, FRAC_REG_BUSY_NS_LO(FRAC_ENGINE_COMPUTE));
	CHECK(cmp2 > cmp1, "compute busy did not grow with a GEMM");
}

static void t_telemetry_thermal(struct dev *d, intptr_t arg)
{
	const unsigned jobs = 12;
	uint32_t t_idle, p_idle, t_load, p_load, t_cool;
	struct frac_cqe c;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 16, 0))
		return;
	/* Idle for a while: ambient. */
	qts_clock_step(d->q, 5000000000LL);
	t_idle = rd(d, FRAC_REG_TEMP_MC);
	p_idle = rd(d, FRAC_REG_POWER_MW);
	CHECK(t_idle >= 35000 && t_idle < 36000, "idle TEMP %u mC", t_idle);
	CHECK(p_idle >= 8000 && p_idle < 9000, "idle POWER %u mW", p_idle);
	/* Load: back-to-back 64 MiB device-memory copies (about 17 ms of DMA each). */
	for (unsigned i = 0; i < jobs; i++)
		ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = i,
						  .flags = FRAC_DF_SRC_DEVMEM | FRAC_DF_DST_DEVMEM,
						  .src = 0, .dst = 64 * MiB, .len = 64 * MiB });
	ring_kick(&r);
	for (unsigned i = 0; i < jobs; i++)
		if (!ring_wait(&r, &c) || !CHECK_EQ(c.status, FRAC_STATUS_OK, "load job"))
			return;
	t_load = rd(d, FRAC_REG_TEMP_MC);
	p_load = rd(d, FRAC_REG_POWER_MW);
	printf("#   temp %u -> %u mC, power %u -> %u mW after %u copies (%" PRIu64 " ns DMA busy)\n",
	       t_idle, t_load, p_idle, p_load, jobs, rd64(d, FRAC_REG_BUSY_NS_LO(0)));
	CHECK(t_load >= t_idle + 2000, "TEMP rose only %d mC under load", (int)(t_load - t_idle));
	CHECK(p_load >= p_idle + 2000, "POWER rose only %d mW under load", (int)(p_load - p_idle));
	CHECK(t_load <= 85000 && p_load <= 75000, "TEMP/POWER beyond full load: %u mC %u mW",
	      t_load, p_load);
	/* Cool down. */
	qts_clock_step(d->q, 10000000000LL);
	t_cool = rd(d, FRAC_REG_TEMP_MC);
	CHECK(t_cool < t_load && t_cool < 36000, "TEMP %u mC 10 s after the load", t_cool);
}

/* ---- other property sets ------------------------------------------------------- */

/* The last queue and the error vector of a 16-queue device. */
static void t_last_queue(struct dev *d, intptr_t arg)
{
	const unsigned q = d->nq - 1;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, q, 8, 0))
		return;
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 1);
	CHECK(msi_fired(d, q), "no MSI-X on vector %u", q);
	CHECK(!msi_fired(d, d->nq), "error vector fired");
	wr(d, FRAC_DB_SQ_TAIL(d->nq), 0);
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_BAD_DOORBELL, "ERR_STATUS.BAD_DOORBELL");
	CHECK_EQ(rd(d, FRAC_REG_ERR_QUEUE), d->nq, "ERR_QUEUE");
	CHECK(msi_fired(d, d->nq), "no MSI-X on the error vector %u", d->nq);
	for (unsigned i = 0; i < d->nq; i++)
		if (ring_init(d, &r, i, 2, 0))
			RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = i);
}

static void t_intx(struct dev *d, intptr_t arg)
{
	struct ring r0, r2;
	(void)arg;

	CHECK(!d->msix_cap && !d->msi_cap, "MSI/MSI-X capability with msix=off,msi=off");
	fresh(d);
	if (!ring_init(d, &r0, 0, 8, 0) || !ring_init(d, &r2, 2, 8, 0))
		return;
	CHECK_EQ(cfg_rw(d, 0x06) & 0x8, 0, "INTx asserted before any job");
	RUN_OK(&r0, .opcode = FRAC_OP_NOP, .job_id = 1);
	CHECK_EQ(rd(d, FRAC_REG_INT_STATUS), 1, "INT_STATUS after a queue 0 job");
	CHECK(cfg_rw(d, 0x06) & 0x8, "PCI status: INTx not asserted");
	wr(d, FRAC_REG_INT_MASK, 1);
	CHECK_EQ(cfg_rw(d, 0x06) & 0x8, 0, "INTx asserted while masked");
	CHECK_EQ(rd(d, FRAC_REG_INT_STATUS), 1, "INT_STATUS while masked");
	wr(d, FRAC_REG_INT_MASK, 0);
	CHECK(cfg_rw(d, 0x06) & 0x8, "INTx not asserted after unmask");
	RUN_OK(&r2, .opcode = FRAC_OP_NOP, .job_id = 2);
	CHECK_EQ(rd(d, FRAC_REG_INT_STATUS), 5, "INT_STATUS after a queue 2 job");
	wr(d, FRAC_REG_INT_STATUS, 1);
	CHECK_EQ(rd(d, FRAC_REG_INT_STATUS), 4, "INT_STATUS after W1C of bit 0");
	CHECK(cfg_rw(d, 0x06) & 0x8, "INTx deasserted with bit 2 pending");
	wr(d, FRAC_REG_INT_STATUS, 4);
	CHECK_EQ(rd(d, FRAC_REG_INT_STATUS), 0, "INT_STATUS after W1C");
	CHECK_EQ(cfg_rw(d, 0x06) & 0x8, 0, "INTx still asserted after W1C");
	/* Errors: bit 31. */
	wr(d, FRAC_DB_SQ_TAIL(0), 100);
	CHECK_EQ(rd(d, FRAC_REG_INT_STATUS), FRAC_INT_ERR, "INT_STATUS after a bad doorbell");
	CHECK(cfg_rw(d, 0x06) & 0x8, "INTx not asserted for an error");
	wr(d, FRAC_REG_INT_STATUS, FRAC_INT_ERR);
	CHECK_EQ(cfg_rw(d, 0x06) & 0x8, 0, "INTx asserted after W1C of the error bit");
	/* A completion while masked: latched, asserted on unmask. */
	wr(d, FRAC_REG_INT_MASK, 1);
	RUN_OK(&r0, .opcode = FRAC_OP_NOP, .job_id = 3);
	CHECK_EQ(rd(d, FRAC_REG_INT_STATUS), 1, "INT_STATUS of a masked completion");
	CHECK_EQ(cfg_rw(d, 0x06) & 0x8, 0, "INTx asserted for a masked source");
	wr(d, FRAC_REG_INT_MASK, 0);
	CHECK(cfg_rw(d, 0x06) & 0x8, "INTx not asserted on unmask");
	wr(d, FRAC_REG_INT_STATUS, ~0u);
	CHECK_EQ(cfg_rw(d, 0x06) & 0x8, 0, "INTx after clearing everything");
	CHECK_EQ(irqs(d), 4, "IRQS");
	/* A global reset deasserts. */
	RUN_OK(&r0, .opcode = FRAC_OP_NOP, .job_id = 4);
	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	CHECK_EQ(cfg_rw(d, 0x06) & 0x8, 0, "INTx asserted after CONTROL.RESET");
}

static void t_msi(struct dev *d, intptr_t arg)
{
	const uint64_t addr = MSI_BASE + 0x80;
	uint8_t cap = d->msi_cap;
	struct ring r;
	(void)arg;

	CHECK(!d->msix_cap, "MSI-X capability with msix=off");
	if (!CHECK(cap, "no MSI capability"))
		return;
	fresh(d);
	qts_writel(d->q, addr, 0);
	cfg_wl(d, cap + 4, (uint32_t)addr);
	cfg_wl(d, cap + 8, 0);
	cfg_ww(d, cap + 12, 0x4242);
	cfg_ww(d, cap + 2, cfg_rw(d, cap + 2) | 1);
	if (!ring_init(d, &r, 1, 8, 0))
		return;
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 1);
	CHECK_EQ(qts_readl(d->q, addr), 0x4242, "MSI message");
	CHECK_EQ(rd(d, FRAC_REG_INT_STATUS), 1u << 1, "INT_STATUS in MSI mode");
	CHECK_EQ(cfg_rw(d, 0x06) & 0x8, 0, "INTx asserted in MSI mode");
	/* Masked through INT_MASK: no message. */
	qts_writel(d->q, addr, 0);
	wr(d, FRAC_REG_INT_STATUS, ~0u);
	wr(d, FRAC_REG_INT_MASK, 1u << 1);
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 2);
	CHECK_EQ(qts_readl(d->q, addr), 0, "MSI sent for a masked source");
	CHECK_EQ(rd(d, FRAC_REG_INT_STATUS), 1u << 1, "INT_STATUS of a masked source");
	wr(d, FRAC_REG_INT_MASK, 0);
	wr(d, FRAC_REG_INT_STATUS, ~0u);
	/* Errors use the same message, bit 31. */
	wr(d, FRAC_DB_SQ_TAIL(1), 9);
	CHECK_EQ(qts_readl(d->q, addr), 0x4242, "MSI for an error");
	CHECK_EQ(rd(d, FRAC_REG_INT_STATUS), FRAC_INT_ERR, "INT_STATUS error bit");
	CHECK_EQ(irqs(d), 3, "IRQS");
}

/* With zero-latency=on jobs complete without the virtual clock moving. */
static void t_zero_latency(struct dev *d, intptr_t arg)
{
	uint8_t *data = rnd_buf(MiB);
	struct frac_cqe c;
	uint64_t c0;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 8, 0))
		goto out;
	qts_memwrite(d->q, BUF(0), data, MiB);
	c0 = dev_clock(d);
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 1 });
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 2, .src = BUF(0),
					  .len = MiB });
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 3, .src = BUF(0),
					  .dst = BUF(1), .len = MiB });
	ring_kick(&r);
	for (unsigned i = 1; i <= 3; i++) {
		double end = now_s() + WAIT_S;
		bool got;

		while (!(got = ring_peek(&r, &c)) && now_s() < end && qts_alive(d->q))
			usleep(500);
		if (!CHECK(got, "job %u did not complete without clock steps", i))
			goto out;
		ring_pop(&r);
		CHECK_EQ(c.job_id, i, "job_id");
		CHECK_EQ(c.status, FRAC_STATUS_OK, "status");
		CHECK(c.t_start <= c.t_end, "t_start > t_end");
	}
	mem_eq(d, BUF(1), data, MiB, "copy");
	CHECK_EQ(dev_clock(d), c0, "virtual clock moved");
	CHECK(msi_fired(d, 0), "no interrupt");
out:
	free(data);
}

/*
 * zero-latency=on: the doorbell write itself fetches and completes small jobs,
 * so their records are there when the write returns, with no wait and no
 * clock step. With fetch-in-doorbell=off (@inline_fetch 0) the fetch is a
 * bottom half, which cannot have run when the write returns.
 */
static void t_zero_latency_fetch(struct dev *d, intptr_t inline_fetch)
{
	struct frac_cqe c;
	struct ring r;
	uint32_t w;

	fresh(d);
	if (!ring_init(d, &r, 0, 8, 0))
		return;
	for (unsigned i = 1; i <= 3; i++) {
		double end = now_s() + WAIT_S;
		bool now;

		ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = i,
						  .dst = BUF(0), .len = 4096, .arg = { i } });
		/* The record's phase word, read before the main loop can run. */
		w = qts_writel_readl(d->q, d->bar0 + FRAC_DB_SQ_TAIL(0), r.tail,
				     r.cq + r.head * sizeof(c) + offsetof(struct frac_cqe, sq_head));
		now = !!((w >> 16) & FRAC_CQE_PHASE) == r.phase;
		if (inline_fetch)
			CHECK(now, "job %u: no record when the doorbell write returned", i);
		else
			CHECK(!now, "job %u: record before the fetch bottom half could run", i);
		while (!ring_peek(&r, &c) && now_s() < end && qts_alive(d->q))
			usleep(200);
		if (!CHECK(now_s() < end, "job %u did not complete", i))
			return;
		ring_pop(&r);
		CHECK_EQ(c.job_id, i, "job_id");
		CHECK_EQ(c.status, FRAC_STATUS_OK, "status");
		CHECK_EQ(qts_readl(d->q, BUF(0) + 4092), i, "filled word");
	}
	CHECK(msi_fired(d, 0), "no interrupt");
}

static const char *qemu_path;

/*
 * Properties out of range: realize fails, QEMU exits with an error. Bug:
 * the timing properties were not bounded, and dma-bandwidth-mbps=0 or
 * compute-gflops=0 silently meant "no cost".
 */
static void t_bad_props(struct dev *d, intptr_t arg)
{
	static const struct { const char *p, *msg; } cases[] = {
		{ "queues=0", "queues" }, { "queues=17", "queues" },
		{ "mem-size=512K", "mem-size" }, { "mem-size=3M", "mem-size" },
		{ "mem-size=128G", "mem-size" },
		{ "fetch-latency-ns=1000000001", "fetch-latency-ns" },
		{ "completion-latency-ns=4000000000", "completion-latency-ns" },
		{ "dma-bandwidth-mbps=0", "dma-bandwidth-mbps" },
		{ "dma-bandwidth-mbps=1000001", "dma-bandwidth-mbps" },
		{ "compute-gflops=0", "compute-gflops" },
		{ "compute-gflops=1000001", "compute-gflops" },
	};
	(void)d;
	(void)arg;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char args[256], log[4096];
		int st;

		snprintf(args, sizeof(args), "-machine q35,pit=off,hpet=off -accel qtest -nodefaults "
			 "-display none -m 256M -device frac-npu,%s", cases[i].p);
		st = qts_run(qemu_path, args, log, sizeof(log), 20);
		CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 127,
		      "%s: QEMU did not fail cleanly (status %d)", cases[i].p, st);
		CHECK(strstr(log, cases[i].msg), "%s: no message about %s in: %.200s", cases[i].p,
		      cases[i].msg, log);
	}
}

#define IOAPIC_ADDR	0xfec00000ULL	/* MMIO that reads without error */

/*
 * A job that keeps a worker busy for many seconds: CRC32C over an SG list
 * of 65536 4 KiB entries at the IOAPIC, one BQL round trip per 4-byte read.
 */
static void put_long_mmio_crc(struct dev *d, struct ring *r)
{
	const unsigned nsge = FRAC_SGL_MAX_ENTRIES;
	struct frac_sge *sgl = calloc(nsge, sizeof(*sgl));

	for (unsigned i = 0; i < nsge; i++)
		sgl[i] = (struct frac_sge){ .addr = IOAPIC_ADDR, .len = 4096 };
	qts_memwrite(d->q, SGL_BASE, sgl, nsge * sizeof(*sgl));
	free(sgl);
	ring_put(r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 0xdead,
					 .flags = FRAC_DF_SRC_SGL, .src = SGL_BASE,
					 .len = (uint64_t)nsge * 4096 });
}

/*
 * Bug: the fatal state stopped fetching and posting only: the jobs already
 * fetched (a long CRC32C of MMIO on the worker and a FILL queued behind it)
 * went on doing DMA, and QUIESCED never came.
 */
static void t_fatal_stops_dma(struct dev *d, intptr_t arg)
{
	struct ring r;
	double t;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 1, 8, 0))
		return;
	qts_memset(d->q, BUF(5), 0xee, MiB);
	put_long_mmio_crc(d, &r);
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_FILL, .job_id = 0xf1, .dst = BUF(5),
					  .len = MiB, .arg = { 0x5a5a5a5a } });
	ring_kick(&r);
	for (int i = 0; i < 100 && qrd(d, 1, FRAC_Q_SQ_HEAD) != 2; i++)
		qts_clock_step(d->q, 1000);
	CHECK_EQ(qrd(d, 1, FRAC_Q_SQ_HEAD), 2, "FILL fetched behind the CRC32C");
	if (!CHECK(qrd(d, 1, FRAC_Q_STATUS) & FRAC_QSTS_BUSY, "CRC32C not in flight") ||
	    !inject(d, FI_QOM, FRAC_FAULT_FATAL, 0, 0))
		return;
	t = now_s();
	while (!(rd(d, FRAC_REG_STATUS) & FRAC_STS_QUIESCED) && now_s() - t < 5)
		usleep(100);
	t = now_s() - t;
	CHECK(rd(d, FRAC_REG_STATUS) & FRAC_STS_QUIESCED, "not QUIESCED 5 s into the fatal state");
	CHECK(t < FRAC_RESET_TIMEOUT_MS / 1000.0, "fatal state quiesced after %.3f s", t);
	printf("#   fatal state quiesced in %.2f ms (worker in MMIO DMA)\n", t * 1e3);
	usleep(100000);
	mem_is(d, BUF(5), 0xee, MiB, "a job fetched before the fatal error ran after it");
	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	CHECK(wait_clear(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET) >= 0, "CONTROL.RESET stuck");
	CHECK_EQ(rd(d, FRAC_REG_STATUS), FRAC_STS_READY | FRAC_STS_QUIESCED, "STATUS after reset");
	qts_memset(d->q, d->bar2 + 0x300, 0x77, 64);	/* what after_reset_runs looks for */
	after_reset_runs(d);
}

/*
 * Register and doorbell writes to a RESETTING queue are ignored. The worker
 * is kept in MMIO DMA so the reset drains for a while; each write is paired
 * with a STATUS read that QEMU's main loop cannot come between, so the
 * check holds only for writes that really hit RESETTING. A reset can also
 * find the worker already done with the job (seen on a loaded host: STATUS
 * 0 right after CTRL.RESET): then the queue was never RESETTING and there
 * is nothing to check, so the setup is tried again, up to 5 times.
 */
static bool resetting_try(struct dev *d, bool *size_hit, bool *db_hit)
{
	const uint64_t ctrl = d->bar0 + FRAC_QREG(1, FRAC_Q_CTRL);
	const uint64_t sts = d->bar0 + FRAC_QREG(1, FRAC_Q_STATUS);
	struct ring r;
	uint32_t st;

	fresh(d);
	if (!ring_init(d, &r, 1, 8, 0))
		return false;
	put_long_mmio_crc(d, &r);
	ring_kick(&r);
	for (int i = 0; i < 100 && qrd(d, 1, FRAC_Q_SQ_HEAD) != 1; i++)
		qts_clock_step(d->q, 1000);
	usleep(20000);
	if (!CHECK(qrd(d, 1, FRAC_Q_STATUS) & FRAC_QSTS_BUSY, "CRC32C not in flight"))
		return false;
	st = qts_writel_readl(d->q, ctrl, FRAC_QCTRL_RESET, sts);
	if (!(st & FRAC_QSTS_RESETTING)) {
		printf("#   STATUS 0x%x right after CTRL.RESET: the worker was done, again\n", st);
		CHECK(wait_clear(d, FRAC_QREG(1, FRAC_Q_CTRL), FRAC_QCTRL_RESET) >= 0,
		      "CTRL.RESET stuck");
		return false;
	}
	for (int i = 0; i < 10 && !*size_hit; i++)
		*size_hit = qts_writel_readl(d->q, d->bar0 + FRAC_QREG(1, FRAC_Q_SIZE), 64, sts) &
			    FRAC_QSTS_RESETTING;
	for (int i = 0; i < 10 && !*db_hit; i++)
		*db_hit = qts_writel_readl(d->q, d->bar0 + FRAC_DB_SQ_TAIL(1), 3, sts) &
			  FRAC_QSTS_RESETTING;
	CHECK(wait_clear(d, FRAC_QREG(1, FRAC_Q_CTRL), FRAC_QCTRL_RESET) >= 0, "CTRL.RESET stuck");
	if (*size_hit)
		CHECK_EQ(qrd(d, 1, FRAC_Q_SIZE), 0, "SIZE written while RESETTING");
	if (*db_hit)
		CHECK_EQ(qrd(d, 1, FRAC_Q_SQ_TAIL), 0, "SQ doorbell taken while RESETTING");
	CHECK_EQ(qrd(d, 1, FRAC_Q_STATUS), 0, "queue STATUS after the reset");
	return true;
}

static void t_resetting_ignores_writes(struct dev *d, intptr_t arg)
{
	bool size_hit = false, db_hit = false, hit = false;
	int tries;
	(void)arg;

	for (tries = 1; tries <= 5 && !hit && qts_alive(d->q); tries++)
		hit = resetting_try(d, &size_hit, &db_hit);
	CHECK(hit, "the queue was never RESETTING right after CTRL.RESET in 5 tries");
	printf("#   writes that hit RESETTING: SIZE %s, doorbell %s (try %d)\n",
	       size_hit ? "yes" : "no", db_hit ? "yes" : "no", tries - 1);
}

/*
 * Bug: QOM "inject" entered the fatal state without the re-entrancy guard
 * FI_CTRL has, so an error-vector MSI-X message aimed at CONTROL.RESET ran
 * a global reset inside frac_enter_fatal().
 */
static void t_inject_unguarded(struct dev *d, intptr_t arg)
{
	uint64_t e = d->bar0 + FRAC_MSIX_TABLE_OFFSET + 16 * d->nq;
	char *err = NULL;
	struct ring r;
	(void)arg;

	fresh(d);
	qts_writel(d->q, e + 0, (uint32_t)(d->bar0 + FRAC_REG_CONTROL));
	qts_writel(d->q, e + 4, (d->bar0 + FRAC_REG_CONTROL) >> 32);
	qts_writel(d->q, e + 8, FRAC_CTRL_RESET);
	if (!CHECK(!qts_qom_set_str(d->q, QOM_PATH, "inject", "fatal", &err), "inject: %s",
		   err ? err : "?"))
		goto out;
	if (!CHECK(qts_alive(d->q), "QEMU died"))
		goto out;
	CHECK(rd(d, FRAC_REG_STATUS) & FRAC_STS_FATAL,
	      "not FATAL: the error MSI-X message reset the device from inside inject");
	msix_vector(d, d->nq, false);
	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	wait_clear(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	fresh(d);
	if (ring_init(d, &r, 1, 8, 0))
		RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 3);
out:
	free(err);
}

/*
 * Bug: only CLOCK and BUSY_NS latched their HI half on a LO read, not every
 * counter as documented. BYTES_RD/WR are brought to 4 GiB - 128 MiB with
 * devmem copies, LO is read, one more copy carries into HI, then HI must
 * still read the value latched with LO.
 */
static void t_counter_hi_latch(struct dev *d, intptr_t arg)
{
	const uint64_t len = 128 * MiB;
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 64, 0))
		return;
	for (unsigned i = 0; i < 31; i++)
		if (!RUN_OK(&r, .opcode = FRAC_OP_COPY, .job_id = i,
			    .flags = FRAC_DF_SRC_DEVMEM | FRAC_DF_DST_DEVMEM, .src = 0,
			    .dst = len, .len = len))
			return;
	CHECK_EQ(rd(d, FRAC_REG_BYTES_RD_LO), (uint32_t)(31 * len), "BYTES_RD_LO");
	CHECK_EQ(rd(d, FRAC_REG_BYTES_WR_LO), (uint32_t)(31 * len), "BYTES_WR_LO");
	RUN_OK(&r, .opcode = FRAC_OP_COPY, .job_id = 31,
	       .flags = FRAC_DF_SRC_DEVMEM | FRAC_DF_DST_DEVMEM, .src = 0, .dst = len, .len = len);
	CHECK_EQ(rd(d, FRAC_REG_BYTES_RD_HI), 0, "BYTES_RD_HI not the value latched by LO");
	CHECK_EQ(rd(d, FRAC_REG_BYTES_WR_HI), 0, "BYTES_WR_HI not the value latched by LO");
	CHECK_EQ(rd64(d, FRAC_REG_BYTES_RD_LO), 32 * len, "BYTES_RD read LO then HI");
	CHECK_EQ(rd64(d, FRAC_REG_BYTES_WR_LO), 32 * len, "BYTES_WR read LO then HI");
}

/* Bug: a CQ head doorbell past CQ_TAIL (records not yet written) was taken. */
static void t_cq_head_past_tail(struct dev *d, intptr_t arg)
{
	struct ring r;
	(void)arg;

	fresh(d);
	if (!ring_init(d, &r, 0, 8, 0))
		return;
	r.no_ack = true;
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 1);
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 2);
	wr(d, FRAC_REG_ERR_STATUS, ~0u);
	msi_clear(d);
	wr(d, FRAC_DB_CQ_HEAD(0), 5);
	CHECK(rd(d, FRAC_REG_ERR_STATUS) & FRAC_ERR_BAD_DOORBELL, "ERR_STATUS.BAD_DOORBELL");
	CHECK_EQ(rd64(d, FRAC_REG_ERR_ADDR_LO), 5, "ERR_ADDR holds the value");
	CHECK(msi_fired(d, d->nq), "no error interrupt");
	CHECK_EQ(qrd(d, 0, FRAC_Q_CQ_HEAD), 0, "CQ_HEAD took a value past CQ_TAIL");
	wr(d, FRAC_REG_ERR_STATUS, ~0u);
	/* Up to CQ_TAIL is fine, and so is going nowhere. */
	wr(d, FRAC_DB_CQ_HEAD(0), 1);
	wr(d, FRAC_DB_CQ_HEAD(0), 1);
	wr(d, FRAC_DB_CQ_HEAD(0), 2);
	CHECK_EQ(rd(d, FRAC_REG_ERR_STATUS), 0, "ERR_STATUS after good CQ doorbells");
	CHECK_EQ(qrd(d, 0, FRAC_Q_CQ_HEAD), 2, "CQ_HEAD");
	r.no_ack = false;
	RUN_OK(&r, .opcode = FRAC_OP_NOP, .job_id = 3);
}

/*
 * Bug: the completion record went out in one DMA, its phase bit (in the
 * dword at 36) written before the err_addr after it: a driver polling the
 * phase could read a stale err_addr. The record must be written without
 * that dword first and the dword last. Frac0's CQ is put in frac1's BAR0
 * (offset 0x200, registers that ignore writes), so the record arrives as
 * 4-byte MMIO writes that frac1 traces (frac_npu_mmio_write) in order.
 */
static void t_cqe_phase_last(struct dev *d, intptr_t arg)
{
	struct dev d1 = { .q = d->q, .devfn = d->devfn + 8 };
	const uint64_t bar1 = BAR0_ADDR + 0x100000;
	unsigned order[32], n = 0;
	struct ring r;
	char line[512];
	FILE *f;
	(void)arg;

	if (!CHECK_EQ(cfg_rl(&d1, 0), (uint32_t)FRAC_PCI_DEVICE_ID << 16 | FRAC_PCI_VENDOR_ID,
		      "frac1 next to frac0"))
		return;
	cfg_wl(&d1, 0x10, (uint32_t)bar1);
	cfg_wl(&d1, 0x14, 0);
	cfg_ww(&d1, 0x04, 0x0002);
	fresh(d);
	if (!ring_init(d, &r, 0, 4, 0))
		return;
	qwr(d, 0, FRAC_Q_CTRL, 0);
	qwr(d, 0, FRAC_Q_CQ_BASE_LO, (uint32_t)(bar1 + 0x200));
	qwr(d, 0, FRAC_Q_CQ_BASE_HI, 0);
	qwr(d, 0, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 0x77 });
	ring_kick(&r);
	for (int i = 0; i < 100 && qrd(d, 0, FRAC_Q_CQ_TAIL) != 1; i++)
		qts_clock_step(d->q, 1000);
	CHECK_EQ(qrd(d, 0, FRAC_Q_CQ_TAIL), 1, "record written");
	f = fopen(qts_log_path(d->q), "r");
	if (!CHECK(f, "no QEMU log"))
		return;
	while (fgets(line, sizeof(line), f) && n < ARRAY_SIZE(order)) {
		char *p = strstr(line, "frac_npu_mmio_write addr 0x");
		unsigned a;

		if (p && sscanf(p, "frac_npu_mmio_write addr 0x%x", &a) == 1 &&
		    a >= 0x200 && a < 0x240)
			order[n++] = a - 0x200;
	}
	fclose(f);
	if (!CHECK_EQ(n, 16, "dwords of the record seen"))
		return;
	CHECK_EQ(order[15], offsetof(struct frac_cqe, sq_head),
		 "last dword written (sq_head and the phase flags must be last)");
	for (unsigned i = 0; i < 15; i++)
		CHECK(order[i] != offsetof(struct frac_cqe, sq_head),
		      "the phase dword went out as dword %u of 16", i + 1);
	qwr(d, 0, FRAC_Q_CTRL, FRAC_QCTRL_RESET);
	wait_clear(d, FRAC_QREG(0, FRAC_Q_CTRL), FRAC_QCTRL_RESET);
}

/* Does QEMU's log (trace events and -d guest_errors) hold @what? */
static bool log_has(struct dev *d, const char *what)
{
	char line[512];
	bool found = false;
	FILE *f = fopen(qts_log_path(d->q), "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, what);
	if (f)
		fclose(f);
	return found;
}

/*
 * Bug: guest errors were LOG_GUEST_ERROR lines without a trace event of
 * their own. Each must now be its event plus a log line naming it.
 */
static void t_guest_err_traced(struct dev *d, intptr_t arg)
{
	static const char *const ev[] = {
		"frac_npu_err_read_unknown", "frac_npu_err_dma_bits", "frac_npu_err_write_unknown",
		"frac_npu_err_qreg_ro", "frac_npu_err_bad_doorbell", "frac_npu_err_db_no_queue",
		"frac_npu_err_ring_reg_enabled", "frac_npu_err_bad_ring", "frac_npu_err_cq_head",
	};
	struct ring r;
	(void)arg;

	fresh(d);
	rd(d, 0x0fc);
	wr(d, FRAC_REG_DMA_BITS, 20);
	wr(d, FRAC_REG_CAP0, 1);
	qwr(d, 0, FRAC_Q_SQ_HEAD, 1);
	wr(d, FRAC_DB_SQ_TAIL(1), 1);
	wr(d, FRAC_DB_SQ_TAIL(d->nq), 1);
	if (ring_init(d, &r, 0, 8, 0))
		qwr(d, 0, FRAC_Q_SIZE, 16);
	wr(d, FRAC_DB_CQ_HEAD(0), 3);
	qwr(d, 2, FRAC_Q_SIZE, 3);
	qwr(d, 2, FRAC_Q_CTRL, FRAC_QCTRL_ENABLE);
	wr(d, FRAC_REG_CONTROL, FRAC_CTRL_RESET);
	for (size_t i = 0; i < ARRAY_SIZE(ev); i++) {
		char tagged[80], traced[80];

		snprintf(traced, sizeof(traced), "%s ", ev[i]);
		snprintf(tagged, sizeof(tagged), "(%s)", ev[i]);
		CHECK(log_has(d, traced), "no trace event %s", ev[i]);
		CHECK(log_has(d, tagged), "no guest error line for %s", ev[i]);
	}
}

/*
 * Four 64 MiB devmem copies back to back (about 67 ms of modelled DMA) from
 * a reset device; TEMP_MC 1 s after the doorbell. @reads: TEMP_MC is also
 * read every 10 ms on the way. -1 on failure.
 */
static int64_t thermal_run(struct dev *d, bool reads)
{
	struct ring r;
	int64_t t0, now;

	fresh(d);
	if (!ring_init(d, &r, 0, 8, 0))
		return -1;
	for (unsigned i = 0; i < 4; i++)
		ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = i,
						  .flags = FRAC_DF_SRC_DEVMEM | FRAC_DF_DST_DEVMEM,
						  .src = 0, .dst = 64 * MiB, .len = 64 * MiB });
	t0 = qts_clock_step(d->q, 1);
	ring_kick(&r);
	for (now = t0; now >= 0 && now < t0 + 1000000000LL; ) {
		int64_t step = t0 + 1000000000LL - now;

		if (reads)
			rd(d, FRAC_REG_TEMP_MC);
		now = qts_clock_step(d->q, step < 10000000LL ? step : 10000000LL);
	}
	/* Every job posted (they wait for the worker's real time too). */
	for (int i = 0; i < 5000 && qrd(d, 0, FRAC_Q_CQ_TAIL) != 4; i++)
		usleep(1000);
	if (now < 0 || !CHECK_EQ(qrd(d, 0, FRAC_Q_CQ_TAIL), 4, "copies done"))
		return -1;
	return rd(d, FRAC_REG_TEMP_MC);
}

/*
 * Bug: the temperature moved only when a job's busy time was credited at
 * its completion, and the filter's input was the busy time between two
 * TEMP_MC reads, so the reading depended on how often TEMP_MC was read.
 */
static void t_thermal_read_rate(struct dev *d, intptr_t arg)
{
	struct ring r;
	int64_t once, often;
	uint32_t mid;
	(void)arg;

	/* Mid-job: 30 ms into a 33.5 ms copy, nothing has completed yet. */
	fresh(d);
	if (!ring_init(d, &r, 0, 8, 0))
		return;
	qts_clock_step(d->q, 5000000000LL);
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_COPY, .job_id = 1,
					  .flags = FRAC_DF_SRC_DEVMEM | FRAC_DF_DST_DEVMEM,
					  .src = 0, .dst = 128 * MiB, .len = 128 * MiB });
	ring_kick(&r);
	qts_clock_step(d->q, 30000000LL);
	mid = rd(d, FRAC_REG_TEMP_MC);
	CHECK(mid >= 35000 + 500, "TEMP %u mC 30 ms into a job (nothing credited until it ends)",
	      mid);
	once = thermal_run(d, false);
	often = thermal_run(d, true);
	printf("#   TEMP 1 s after a 67 ms load: %" PRId64 " mC read once, %" PRId64
	       " mC read every 10 ms\n", once, often);
	CHECK(once > 35000 && often > 35000, "runs failed");
	CHECK(llabs(once - often) <= 20, "TEMP depends on how often it is read: %" PRId64
	      " vs %" PRId64 " mC", once, often);
}

/* ---- hot-unplug ------------------------------------------------------------------- */

/*
 * Bug: frac_exit() joined the workers holding the BQL while a worker doing
 * DMA to MMIO waited for the BQL in prepare_mmio_access: device_del hung
 * QEMU. A CRC32C over 256 MiB of IOAPIC registers (an SG list of 65536 4 KiB
 * entries, one BQL round trip per 4-byte read) keeps the worker in MMIO DMA;
 * the device sits behind a root port with native PCIe hotplug (ACPI hotplug
 * off), and the test plays the guest's part of the unplug: power the slot
 * off after the request.
 *
 * Bug: regs and doorbells stayed subregions of bar0, and a subregion holds
 * a reference to its owner: the device was never finalized after the unplug
 * (no DEVICE_DELETED, as NVMe sends). @arg 1: the same unplug of an idle
 * device.
 */
static bool root_port_setup(struct dev *rp)
{
	for (int devfn = 0; devfn < 256 && rp->devfn < 0; devfn++) {
		rp->devfn = devfn;
		if (cfg_rl(rp, 0) != 0x000c1b36)
			rp->devfn = -1;
	}
	if (!CHECK(rp->devfn >= 0, "no pcie-root-port on bus 0"))
		return false;
	/* Firmware's part: bus numbers, windows for BAR0 and BAR2, decoding on. */
	cfg_wl(rp, 0x18, 0x00010100);
	cfg_wl(rp, 0x20, 0xc000c000);			/* 0xc0000000..0xc00fffff */
	cfg_wl(rp, 0x24, 0x0ff00000);			/* + upper 8: 32 GiB + 256 MiB */
	cfg_wl(rp, 0x28, BAR2_ADDR >> 32);
	cfg_wl(rp, 0x2c, BAR2_ADDR >> 32);
	cfg_ww(rp, 0x04, 0x0006);
	return true;
}

static void t_unplug_mmio_dma(struct dev *unused, intptr_t arg)
{
	struct dev rp = { .devfn = -1 }, d = { .devfn = 1 << 8 };	/* bus 1, device 0 */
	const unsigned nsge = FRAC_SGL_MAX_ENTRIES;
	struct frac_sge *sgl = calloc(nsge, sizeof(*sgl));
	uint8_t exp;
	uint16_t sltctl;
	struct ring r;
	double t0, t;
	char *rep, *ev = NULL;
	int st;
	(void)unused;

	d.q = qts_start(qemu_path, "-machine q35,pit=off,hpet=off -nodefaults -m 256M "
			"-global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off "
			"-device pcie-root-port,id=rp0,chassis=1,slot=1 "
			"-device frac-npu,id=frac0,bus=rp0");
	if (!CHECK(d.q, "QEMU did not start"))
		goto out;
	rp.q = d.q;
	if (!root_port_setup(&rp))
		goto quit;
	if (!CHECK(pci_setup(&d), "frac-npu behind the root port not reachable"))
		goto quit;
	fresh(&d);
	if (arg)
		goto unplug;
	if (!ring_init(&d, &r, 0, 8, 0))
		goto quit;
	for (unsigned i = 0; i < nsge; i++)
		sgl[i] = (struct frac_sge){ .addr = IOAPIC_ADDR, .len = 4096 };
	qts_memwrite(d.q, SGL_BASE, sgl, nsge * sizeof(*sgl));
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_CRC32C, .job_id = 0xdead,
					  .flags = FRAC_DF_SRC_SGL, .src = SGL_BASE,
					  .len = (uint64_t)nsge * 4096 });
	ring_kick(&r);
	for (int i = 0; i < 100 && qrd(&d, 0, FRAC_Q_SQ_HEAD) != 1; i++)
		qts_clock_step(d.q, 1000);
	usleep(100000);
	if (!CHECK(qrd(&d, 0, FRAC_Q_STATUS) & FRAC_QSTS_BUSY, "CRC32C not in flight"))
		goto quit;
unplug:
	rep = qts_qmp(d.q, "{\"execute\": \"device_del\", \"arguments\": {\"id\": \"frac0\"}}");
	CHECK(rep && strstr(rep, "\"return\""), "device_del: %s", rep ? rep : "(none)");
	free(rep);
	/* The guest's answer to the attention button: power and indicator off. */
	exp = find_cap(&rp, 0x10);
	sltctl = cfg_rw(&rp, exp + 0x18);
	t0 = now_s();
	cfg_ww(&rp, exp + 0x18, (sltctl & ~0x07c0) | 0x0400 | 0x0300);
	t = now_s() - t0;
	if (!CHECK(qts_alive(d.q), "QEMU hung in the unplug (no reply for %d s)",
		   QTS_REPLY_TIMEOUT_S))
		goto quit;
	printf("#   unplug %s took %.1f ms\n", arg ? "of the idle device" :
	       "with the worker in MMIO DMA", t * 1e3);
	CHECK(t < FRAC_RESET_TIMEOUT_MS / 1000.0, "unplug took %.3f s", t);
	CHECK_EQ(cfg_rl(&d, 0), 0xffffffff, "the device is still on bus 1");
	rep = qts_qmp(d.q, "{\"execute\": \"qom-get\", \"arguments\": "
		      "{\"path\": \"" QOM_PATH "\", \"property\": \"type\"}}");
	CHECK(rep && strstr(rep, "\"error\""), "frac0 still exists: %s", rep ? rep : "(none)");
	free(rep);
	/* Finalized: after an RCU grace period, in QEMU's RCU thread. */
	for (int i = 0; i < 100 && !(ev && strstr(ev, "\"DEVICE_DELETED\"")); i++) {
		usleep(i ? 20000 : 0);
		free(qts_qmp(d.q, "{\"execute\": \"query-status\"}"));
		free(ev);
		ev = qts_qmp_events(d.q);
	}
	CHECK(ev && strstr(ev, "\"DEVICE_DELETED\"") && strstr(ev, "\"frac0\""),
	      "frac0 never finalized (no DEVICE_DELETED within 2 s)");
quit:
	free(ev);
	st = qts_quit(d.q);
	CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "QEMU exit status %d", st);
out:
	free(sgl);
}

/* ---- test table ------------------------------------------------------------------ */

struct test {
	const char *name;
	void (*fn)(struct dev *d, intptr_t arg);
	intptr_t arg;
};

#define PROPS(nq, mem)	((intptr_t)(nq) << 40 | (intptr_t)(mem))

/*
 * A secondary bus reset from the device's own MSI-X message: it writes the
 * dword at 0x3c of the root port above it, Bridge Control (0x3e) with Bus
 * Reset set. Into frac_npu_reset by the same route as an FLR. @zl: with
 * zero-latency=on, inside the doorbell write.
 */
static void t_self_sbr(struct dev *unused, intptr_t zl)
{
	struct dev rp = { .devfn = -1 }, d = { .devfn = 1 << 8 };	/* bus 1, device 0 */
	uint64_t e, bctl;
	char args[512];
	struct ring r;
	int st;
	(void)unused;

	snprintf(args, sizeof(args), "-machine q35,pit=off,hpet=off -nodefaults -m 256M "
		 "-device pcie-root-port,id=rp0,chassis=1,slot=1 "
		 "-device frac-npu,id=frac0,bus=rp0%s", zl ? ",zero-latency=on" : "");
	d.q = qts_start(qemu_path, args);
	if (!CHECK(d.q, "QEMU did not start"))
		return;
	rp.q = d.q;
	if (!root_port_setup(&rp) ||
	    !CHECK(pci_setup(&d), "frac-npu behind the root port not reachable"))
		goto quit;
	bctl = ecam_on(&rp) + 0x3c;
	fresh(&d);
	if (!ring_init(&d, &r, 1, 8, 0))
		goto quit;
	e = d.bar0 + FRAC_MSIX_TABLE_OFFSET + 16 * 1;
	qts_writel(d.q, e + 0, (uint32_t)bctl);
	qts_writel(d.q, e + 4, bctl >> 32);
	qts_writel(d.q, e + 8, 0x00400000 | cfg_rw(&rp, 0x3c));
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 1 });
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 2 });
	ring_put(&r, &(struct frac_desc){ .opcode = FRAC_OP_NOP, .job_id = 3 });
	ring_kick(&r);
	if (wait_self_flr(&d)) {
		CHECK(cfg_rw(&rp, 0x3e) & 0x40, "Bridge Control: no Bus Reset");
		cfg_ww(&rp, 0x3e, 0);
		after_self_flr(&d, &r, 1);
	}
	ecam_off(&rp);
quit:
	st = qts_quit(d.q);
	CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "QEMU exit status 0x%x", st);
}

static const struct test main_tests[] = {
	{ "power-on register values", t_regs_poweron, 1 },
	{ "PCI identity, BARs and capabilities", t_pci_identity, 0 },
	{ "CAP0/ERR_VECTOR/DEVMEM_SIZE follow the properties", t_props, PROPS(4, 256 * MiB) },
	{ "unknown registers read 0, read-only ones ignore writes", t_regs_unknown, 0 },
	{ "NOP", t_nop, 0 },
	{ "COPY host->host", t_copy_host, 0 },
	{ "COPY with device memory", t_copy_devmem, 0 },
	{ "COPY through SG lists", t_copy_sgl, 0 },
	{ "SG lists over several chunks", t_sgl_big, 0 },
	{ "FILL", t_fill, 0 },
	{ "CRC32C", t_crc32c, 0 },
	{ "GEMM fp32", t_gemm_fp32, 0 },
	{ "GEMM fp32 512x512x512", t_gemm_fp32_512, 0 },
	{ "GEMM int8", t_gemm_int8, 0 },
	{ "TIMESTAMP", t_timestamp, 0 },
	{ "completion record fields", t_cqe_fields, 0 },
	{ "timing model bounds", t_timing_model, 0 },
	{ "a second doorbell was fetched with the first one's timer", t_fetch_latency_each_doorbell, 0 },
	{ "ring wrap, one job at a time", t_ring_wrap_single, 0 },
	{ "ring wrap, full batches", t_ring_wrap_batches, 0 },
	{ "full CQ holds records back", t_ring_cq_full, 0 },
	{ "queue disable/enable", t_ring_disable_enable, 0 },
	{ "ring: SIZE 16 -> 4 under a job in flight wrote past the CQ", t_ring_reprogram_inflight, 0 },
	{ "ring: a refused enable left CTRL.ENABLE reading 1", t_ring_enable_refused, 0 },
	{ "CONTROL.ENABLE gates fetching", t_control_enable, 0 },
	{ "interrupt per completion", t_irq_each, 0 },
	{ "interrupt moderation: count", t_irq_coal_count, 0 },
	{ "interrupt moderation: time", t_irq_coal_time, 0 },
	{ "NO_IRQ", t_irq_no_irq, 0 },
	{ "MSI-X vector and function mask, PBA", t_irq_msix_mask, 0 },
	{ "fault hang via QOM inject", t_fault_hang, FI_QOM },
	{ "fault hang via FI_CTRL", t_fault_hang, FI_REG },
	{ "fault drop-irq via QOM inject", t_fault_drop_irq, FI_QOM },
	{ "fault drop-irq via FI_CTRL", t_fault_drop_irq, FI_REG },
	{ "fault error via QOM inject", t_fault_error, FI_QOM },
	{ "fault error via FI_CTRL", t_fault_error, FI_REG },
	{ "fault dma via QOM inject", t_fault_dma, FI_QOM },
	{ "fault dma via FI_CTRL", t_fault_dma, FI_REG },
	{ "fault dma: used up by a NOP, err_addr a devmem offset", t_fault_dma_first_dma, 0 },
	{ "fault fatal via QOM inject", t_fault_fatal, FI_QOM },
	{ "fault fatal via FI_CTRL", t_fault_fatal, FI_REG },
	{ "fault latency via QOM inject", t_fault_latency, FI_QOM },
	{ "fault latency via FI_CTRL", t_fault_latency, FI_REG },
	{ "fault bad-id via QOM inject", t_fault_bad_id, FI_QOM },
	{ "fault bad-id via FI_CTRL", t_fault_bad_id, FI_REG },
	{ "fault bad-head via QOM inject", t_fault_bad_head, FI_QOM },
	{ "fault bad-head via FI_CTRL", t_fault_bad_head, FI_REG },
	{ "fault dup via QOM inject", t_fault_dup, FI_QOM },
	{ "fault dup via FI_CTRL", t_fault_dup, FI_REG },
	{ "fault bad-id, bad-head, dup: a queue reset disarms them", t_fault_cqe_reset_disarms, 0 },
	{ "bad fault requests are refused", t_fault_bad_args, 0 },
	{ "bad opcode", t_bad_opcode, 0 },
	{ "bad descriptors", t_bad_desc, 0 },
	{ "device memory out of range", t_bad_devmem, 0 },
	{ "DMA to unmapped addresses", t_bad_dma_unmapped, 0 },
	{ "DMA beyond DMA_BITS", t_bad_dma_mask, 0 },
	{ "DMA into the device's own BARs", t_bad_dma_own_bar, 0 },
	{ "bad SG lists", t_bad_sgl, 0 },
	{ "bad doorbells", t_bad_doorbell, 0 },
	{ "a CQ head doorbell past CQ_TAIL was taken", t_cq_head_past_tail, 0 },
	{ "bad ring programming", t_bad_ring, 0 },
	{ "rings that do not decode", t_bad_ring_dma, 0 },
	{ "no DMA without bus mastering", t_bad_bus_master, 0 },
	{ "AER error injection", t_aer, 0 },
	{ "QEMU alive after guest mistakes", t_still_alive, 0 },
	{ "telemetry counters", t_telemetry_counters, 0 },
	{ "telemetry: a faulted DMA moves no bytes", t_telemetry_fault_bytes, 0 },
	{ "telemetry busy time", t_telemetry_busy, 0 },
	{ "telemetry temperature and power", t_telemetry_thermal, 0 },
	{ "temperature moved at completion only, by read rate", t_thermal_read_rate, 0 },
	{ "counters: only CLOCK and BUSY_NS latched HI", t_counter_hi_latch, 0 },
	{ "global reset restores power-on values", t_reset_global, 0 },
	{ "FLR restores power-on values", t_reset_flr, 0 },
	{ "system reset restores power-on values", t_reset_system, 0 },
	{ "queue reset while its job runs", t_reset_queue_busy, 0 },
	{ "global reset and FLR while a job runs", t_reset_busy, 0 },
	{ "queue reset: CTRL.RESET read 0 while the job still ran", t_reset_queue_quiesce, 0 },
	{ "global reset: CONTROL.RESET read 0 while a job still ran", t_reset_global_quiesce, 0 },
	{ "fatal state: fetched jobs kept doing DMA", t_fatal_stops_dma, 0 },
	{ "writes to a RESETTING queue are ignored", t_resetting_ignores_writes, 0 },
	{ "QEMU alive at the end", t_still_alive, 0 },
};

static const struct test q16_tests[] = {
	{ "power-on register values", t_regs_poweron, 0 },
	{ "PCI identity, BARs and capabilities", t_pci_identity, 0 },
	{ "CAP0/ERR_VECTOR/DEVMEM_SIZE follow the properties", t_props, PROPS(16, MiB) },
	{ "every queue and the error vector", t_last_queue, 0 },
	{ "device memory out of range", t_bad_devmem, 0 },
	{ "FI_CTRL does nothing without fault-injection=on", t_fault_fi_ctrl_off, 0 },
	{ "global reset restores power-on values", t_reset_global, 0 },
};

static const struct test intx_tests[] = {
	{ "power-on register values", t_regs_poweron, 0 },
	{ "INTx", t_intx, 0 },
};

static const struct test msi_tests[] = {
	{ "MSI", t_msi, 0 },
};

static const struct test zl_tests[] = {
	{ "CAP0/ERR_VECTOR/DEVMEM_SIZE follow the properties", t_props, PROPS(1, 256 * MiB) },
	{ "jobs complete without clock steps", t_zero_latency, 0 },
	{ "the doorbell write completes small jobs", t_zero_latency_fetch, 1 },
};

static const struct test zl_bh_tests[] = {
	{ "jobs complete without clock steps", t_zero_latency, 0 },
	{ "the fetch is a bottom half after the doorbell write", t_zero_latency_fetch, 0 },
};

static const struct test ownbar_tests[] = {
	{ "CQ in the device's own BAR0", t_own_bar_cq, 0 },
	{ "SQ in the device's own BAR0", t_own_bar_sq, 0 },
	{ "MSI-X message into the device's own BAR0", t_own_bar_msix, 0 },
	{ "QOM inject ran without the re-entrancy guard", t_inject_unguarded, 0 },
};

static const struct test selfreset_tests[] = {
	{ "MSI-X message into the device's own Device Control (FLR)", t_self_flr_msix, 0 },
	{ "CQ record into the device's own Device Control (FLR)", t_self_flr_cq, 0 },
	{ "inline COPY into the device's own Device Control (FLR)", t_self_flr_copy, 0 },
};

static const struct test twodev_tests[] = {
	{ "the phase dword was written before the rest of the record", t_cqe_phase_last, 0 },
	{ "guest errors had no trace event of their own", t_guest_err_traced, 0 },
};

static const struct test noqemu_tests[] = {
	{ "out-of-range properties are refused", t_bad_props, 0 },
	{ "hot-unplug hung while a worker did DMA to MMIO", t_unplug_mmio_dma, 0 },
	{ "hot-unplug of an idle device left it unfinalized", t_unplug_mmio_dma, 1 },
	{ "MSI-X message into the root port's Bridge Control (bus reset)", t_self_sbr, 0 },
	{ "MSI-X message into the root port's Bridge Control (bus reset), zero-latency",
	  t_self_sbr, 1 },
};

struct group {
	const char *name;
	const char *device;	/* -device argument; NULL: the tests start QEMU themselves */
	const char *mem;
	bool high_ram;
	const struct test *tests;
	size_t ntests;
};

#define GROUP(n, dev, m, hi, t)	{ n, dev, m, hi, t, ARRAY_SIZE(t) }

static const struct group groups[] = {
	GROUP("main", "frac-npu,id=frac0,fault-injection=on", "4608M", true, main_tests),
	GROUP("16 queues, 1 MiB", "frac-npu,id=frac0,queues=16,mem-size=1M", "256M", false,
	      q16_tests),
	GROUP("INTx", "frac-npu,id=frac0,msix=off,msi=off", "256M", false, intx_tests),
	GROUP("MSI", "frac-npu,id=frac0,msix=off", "256M", false, msi_tests),
	GROUP("zero-latency", "frac-npu,id=frac0,queues=1,zero-latency=on", "256M", false,
	      zl_tests),
	GROUP("zero-latency, fetch in a BH",
	      "frac-npu,id=frac0,queues=1,zero-latency=on,fetch-in-doorbell=off", "256M", false,
	      zl_bh_tests),
	GROUP("own-BAR rings", "frac-npu,id=frac0", "256M", false, ownbar_tests),
	/* The same with the fetch inside the doorbell write. */
	GROUP("own-BAR rings, zero-latency", "frac-npu,id=frac0,zero-latency=on", "256M", false,
	      ownbar_tests),
	/* FLR from the device's own DMA; the same inside the doorbell write. */
	GROUP("own config space", "frac-npu,id=frac0", "256M", false, selfreset_tests),
	GROUP("own config space, zero-latency", "frac-npu,id=frac0,zero-latency=on", "256M",
	      false, selfreset_tests),
	GROUP("two devices", "frac-npu,id=frac0 -device frac-npu,id=frac1 "
	      "-trace frac_npu_mmio_write -trace frac_npu_err_* -d guest_errors", "256M", false,
	      twodev_tests),
	GROUP("properties", NULL, NULL, false, noqemu_tests),
};

static const char *filter;

static bool selected(const struct group *g, const struct test *t)
{
	char full[256];

	snprintf(full, sizeof(full), "%s: %s", g->name, t->name);
	return !filter || strstr(full, filter);
}

static void run_group(const struct group *g)
{
	struct dev d = { .devfn = -1, .high_ram = g->high_ram };
	char args[512], name[256];
	bool any = false, up;
	double t0 = now_s();
	int st;

	for (size_t i = 0; i < g->ntests; i++)
		any |= selected(g, &g->tests[i]);
	if (!any) {
		for (size_t i = 0; i < g->ntests; i++) {
			snprintf(name, sizeof(name), "%s: %s", g->name, g->tests[i].name);
			tap_result(name, true, "SKIP filtered out");
		}
		if (g->device) {
			snprintf(name, sizeof(name), "%s: QEMU shuts down cleanly", g->name);
			tap_result(name, true, "SKIP filtered out");
		}
		return;
	}
	printf("# group %s: %s\n", g->name, g->device ? g->device : "no QEMU");
	if (g->device) {
		/*
		 * pit=off,hpet=off: no periodic timers besides the device's, so
		 * "clock_step" without an argument lands on the device's next event.
		 */
		snprintf(args, sizeof(args), "-machine q35,pit=off,hpet=off -nodefaults -m %s "
			 "-device %s", g->mem, g->device);
		d.q = qts_start(qemu_path, args);
		up = d.q && pci_setup(&d);
	} else {
		up = true;
	}
	have_poweron = false;
	for (size_t i = 0; i < g->ntests; i++) {
		const struct test *t = &g->tests[i];
		double ts = now_s();

		snprintf(name, sizeof(name), "%s: %s", g->name, t->name);
		if (!selected(g, t)) {
			tap_result(name, true, "SKIP filtered out");
			continue;
		}
		if (up && d.q && !qts_alive(d.q)) {
			/* A test killed QEMU: start a fresh one for the rest. */
			printf("# restarting QEMU\n");
			qts_quit(d.q);
			d = (struct dev){ .devfn = -1, .high_ram = g->high_ram };
			d.q = qts_start(qemu_path, args);
			up = d.q && pci_setup(&d);
			have_poweron = false;
		}
		if (!up) {
			tap_result(name, false, "QEMU is not running");
			continue;
		}
		cur_failed = false;
		cur_timed_out = false;
		cur_name = t->name;
		t->fn(&d, t->arg);
		if (d.q && !qts_alive(d.q))
			CHECK(false, "QEMU died during the test");
		if (getenv("FRAC_TEST_VERBOSE"))
			printf("#   %.2f s\n", now_s() - ts);
		tap_result(name, !cur_failed, NULL);
	}
	if (g->device) {
		snprintf(name, sizeof(name), "%s: QEMU shuts down cleanly", g->name);
		st = d.q ? qts_quit(d.q) : -1;
		if (st != -1 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
			printf("#   QEMU exit status 0x%x\n", st);
		tap_result(name, st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, NULL);
	}
	printf("# group %s: %.1f s\n", g->name, now_s() - t0);
}

int main(int argc, char **argv)
{
	int plan = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	qemu_path = argc > 1 ? argv[1] : getenv("QEMU");
	filter = argc > 2 ? argv[2] : getenv("FRAC_TEST_FILTER");
	if (!qemu_path || access(qemu_path, X_OK)) {
		fprintf(stderr, "usage: %s QEMU-BINARY [FILTER]   (or set $QEMU)\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < ARRAY_SIZE(groups); i++)
		plan += groups[i].ntests + (groups[i].device != NULL);
	printf("TAP version 13\n1..%d\n", plan);
	printf("# QEMU %s\n", qemu_path);
	for (size_t i = 0; i < ARRAY_SIZE(groups); i++)
		run_group(&groups[i]);
	printf("# %d of %d tests failed\n", tap_failures, tap_num);
	return tap_failures ? 1 : 0;
}
