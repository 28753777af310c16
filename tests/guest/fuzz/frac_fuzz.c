// SPDX-License-Identifier: MIT
/*
 * frac_fuzz: a structured fuzzer of the frac uAPI, run in the guest.
 *
 * Several processes (fork), several threads each, issue random but well-aimed
 * sequences of every ioctl of the device file: BO create/info/close, mmap and
 * touching the mapping, PRIME export/import (also into a second file, after
 * the exporter closed its handle, and foreign dma-bufs from udmabuf), SUBMIT
 * with command lists near every limit, WAIT, syncobjs, poll(), closing the
 * whole file while other threads use it, fork() with the file shared, and
 * signals (SIGALRM with SA_RESTART, SIGUSR1 without) aimed at threads blocked
 * in WAIT. A separate process injects device faults through debugfs meanwhile.
 *
 * It checks oracles, not only "did it crash":
 *  - every errno is one the uAPI header documents for that ioctl (table
 *    errno_table[] below, DOC rows citing the header, CORE rows for what the
 *    DRM core or the syscall layer return for every driver); anything else
 *    is reported as an undocumented errno;
 *  - every job status is one the header documents (0, -EIO, -ETIMEDOUT,
 *    -ENODEV);
 *  - every successful SUBMIT's job ends (WAIT returns) within a bound after
 *    the faults stop;
 *  - WAIT semantics: an id seen ended is refused with -EINVAL, an own id not
 *    yet seen ended is not;
 *  - data: a fresh BO reads as zeros (host and device memory), a FILL that
 *    ended with status 0 wrote its pattern, nothing writes a BO after the
 *    job that wrote it was reported ended (device DMA after a reset);
 *  - after the run: a job on every queue succeeds, the sysfs job counters
 *    add up, no ring slot holds a job.
 * The module unload and the kernel log are checked by tests/guest/fuzz.sh.
 *
 * Reproduction: everything random comes from --seed (printed); each thread of
 * each process writes an op log to --out (fuzz-p<P>-t<T>.log, each ioctl's
 * argument struct in hex). Threads race, so a run is reproduced by the same
 * seed and process/thread counts, not bit for bit; --replay LOG re-issues one
 * thread's logged ioctls in order, single-threaded, on fresh files.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/udmabuf.h>

#include <drm.h>
#include "libfrac.h"

#define MAX_PROCS	16
#define MAX_THREADS	16
#define NBO		96	/* BO table entries per process */
#define NJOB		512
#define NSYNC		24
#define NDMABUF		12
#define NMAP		8
#define NERR		140
#define FRAC_SG_LIMIT	65534ull	/* DMA segments a BO may have (header) */
#define SZ_4G		(1ull << 32)

/* ---- ioctls and the errno table -------------------------------------------- */

enum io {
	IO_GET_PARAM, IO_BO_CREATE, IO_BO_INFO, IO_SUBMIT, IO_WAIT, IO_SUBMIT_BATCH, IO_GEM_CLOSE,
	IO_PRIME_EXPORT, IO_PRIME_IMPORT, IO_SYNCOBJ_CREATE, IO_SYNCOBJ_DESTROY,
	IO_SYNCOBJ_WAIT, IO_SYNCOBJ_RESET, IO_MMAP, IO_POLL, IO_UDMABUF, IO_FD_CLOSE,
	IO_FORK, NIO,
};

static const char *const io_name[NIO] = {
	"GET_PARAM", "BO_CREATE", "BO_INFO", "SUBMIT", "WAIT", "SUBMIT_BATCH", "GEM_CLOSE",
	"PRIME_HANDLE_TO_FD", "PRIME_FD_TO_HANDLE", "SYNCOBJ_CREATE", "SYNCOBJ_DESTROY",
	"SYNCOBJ_WAIT", "SYNCOBJ_RESET", "mmap", "poll", "udmabuf", "close(fd)", "fork",
};

/*
 * DOC: include/uapi/drm/frac_accel.h says so: its "Errors every ioctl can
 * return" (-EFAULT, -ENODEV, -ENOMEM; -EINTR for SUBMIT and WAIT) and each
 * struct's Errors paragraph. CORE: the DRM core's own ioctls (drm_gem.c,
 * drm_prime.c, drm_syncobj.c in 6.12) or the syscall itself.
 * Returned errnos outside the table fail. On top of it: EINTR only when a
 * signal arrived during the call, EFAULT only when we passed a bad pointer,
 * anything when another thread closed the file during the call.
 */
static const struct { enum io io; int err; const char *why; } errno_table[] = {
	{ IO_GET_PARAM, EINVAL, "DOC: unknown @param, @pad not zero" },
	{ IO_BO_CREATE, EINVAL, "DOC: unknown @flags, @size 0 or over 4 GiB" },
	{ IO_BO_CREATE, ENOSPC, "DOC: not enough device memory" },
	{ IO_BO_CREATE, E2BIG, "DOC: more DMA segments than the SG lists take" },
	{ IO_BO_INFO, ENOENT, "DOC: no such handle" },
	{ IO_SUBMIT, EINVAL, "DOC: flags, cmd_size, cmd_count, queue, priority, commands" },
	{ IO_SUBMIT, ENOENT, "DOC: a BO handle or syncobj that does not exist" },
	{ IO_SUBMIT, EACCES, "DOC: PRIO_HIGH without CAP_SYS_NICE" },
	{ IO_SUBMIT, EBUSY, "DOC: DRM_FRAC_MAX_UNWAITED job ids held" },
	{ IO_SUBMIT, EIO, "DOC: the device is wedged" },
	{ IO_SUBMIT, EINTR, "DOC: interrupted while waiting for a reservation lock" },
	{ IO_WAIT, EINVAL, "DOC: unknown job id, @flags not zero" },
	{ IO_WAIT, ETIME, "DOC: timeout_ns passed first" },
	{ IO_WAIT, EINTR, "DOC: interrupted by a signal" },
	{ IO_SUBMIT_BATCH, EINVAL, "DOC: SUBMIT's, count, job_size, flags, pad, mixed queues" },
	{ IO_SUBMIT_BATCH, ENOENT, "DOC: SUBMIT's: a BO handle or syncobj that does not exist" },
	{ IO_SUBMIT_BATCH, EACCES, "DOC: SUBMIT's: PRIO_HIGH without CAP_SYS_NICE" },
	{ IO_SUBMIT_BATCH, EBUSY, "DOC: the batch's ids would pass DRM_FRAC_MAX_UNWAITED" },
	{ IO_SUBMIT_BATCH, EIO, "DOC: SUBMIT's: the device is wedged" },
	{ IO_SUBMIT_BATCH, EINTR, "DOC: interrupted while waiting for a reservation lock" },
	{ IO_GEM_CLOSE, EINVAL, "CORE: drm_gem_handle_delete, unknown handle" },
	{ IO_PRIME_EXPORT, ENOENT, "CORE: drm_gem_prime_handle_to_fd, unknown handle" },
	{ IO_PRIME_EXPORT, EINVAL, "CORE: flags other than DRM_CLOEXEC | DRM_RDWR" },
	{ IO_PRIME_EXPORT, EOPNOTSUPP, "DOC: device BOs do not export" },
	{ IO_PRIME_EXPORT, EMFILE, "CORE: fd table full" },
	{ IO_PRIME_IMPORT, EBADF, "CORE: dma_buf_get, not an open fd" },
	{ IO_PRIME_IMPORT, EINVAL, "CORE: dma_buf_get, not a dma-buf; DOC: short SG table" },
	{ IO_PRIME_IMPORT, E2BIG, "DOC: more DMA segments than the device takes" },
	{ IO_SYNCOBJ_CREATE, EINVAL, "CORE: unknown flags" },
	{ IO_SYNCOBJ_DESTROY, EINVAL, "CORE: unknown handle, pad" },
	{ IO_SYNCOBJ_WAIT, EINVAL, "CORE: flags, count 0, pad" },
	{ IO_SYNCOBJ_WAIT, ENOENT, "CORE: unknown handle" },
	{ IO_SYNCOBJ_WAIT, ETIME, "CORE: timeout" },
	{ IO_SYNCOBJ_WAIT, EINTR, "CORE: interrupted" },
	{ IO_SYNCOBJ_RESET, EINVAL, "CORE: count 0, pad" },
	{ IO_SYNCOBJ_RESET, ENOENT, "CORE: unknown handle" },
	{ IO_MMAP, EINVAL, "CORE: drm_gem_mmap, range past the BO" },
	{ IO_MMAP, EACCES, "CORE: drm_gem_mmap, offset not ours" },
	{ IO_POLL, EINTR, "CORE: interrupted" },
	{ IO_UDMABUF, EINVAL, "CORE: udmabuf size limit" },
	{ IO_UDMABUF, ENOENT, "CORE: no /dev/udmabuf" },
};

/* The frac ioctls: the header's "every ioctl" errors apply, and a failure writes nothing. */
static bool io_is_frac(enum io io)
{
	return io <= IO_SUBMIT_BATCH;
}

static bool errno_documented(enum io io, int err)
{
	size_t i;

	for (i = 0; i < sizeof(errno_table) / sizeof(errno_table[0]); i++)
		if (errno_table[i].io == io && errno_table[i].err == err)
			return true;
	return false;
}

/* Job statuses the header documents. */
static bool status_documented(int32_t s)
{
	return s == 0 || s == -EIO || s == -ETIMEDOUT || s == -ECANCELED || s == -ENODEV;
}

/* ---- Shared (between processes) results ------------------------------------ */

enum fail_class {
	F_RUN,		/* a worker hung, died or could not start */
	F_ERRNO,	/* undocumented errno */
	F_STATUS,	/* undocumented job status */
	F_BOUND,	/* a job did not end within the bound after faults stopped */
	F_DATA,		/* data oracles */
	F_STATE,	/* WAIT/BO/mmap semantics */
	F_AFTER,	/* the device after the run */
	F_COUNTERS,	/* sysfs/debugfs counters */
	NFAIL,
};

static const char *const fail_desc[NFAIL] = {
	"every worker ran and exited (no hang, no crash of the fuzzer)",
	"every errno returned is documented for its ioctl",
	"every job status is documented",
	"every submitted job ended within the bound after faults stopped",
	"data oracles (fresh BOs zero, FILL wrote its pattern, no DMA after a job ended)",
	"uAPI state oracles (WAIT ids, mmap of live BOs)",
	"the device runs a job on every queue after the run",
	"sysfs and debugfs counters consistent after the run",
};

#define NMSG 12
struct shared {
	uint64_t count[NIO][NERR];	/* [io][errno], 0 = success */
	uint64_t status[NERR];		/* job statuses seen, [-status] */
	uint64_t undoc[NIO][NERR];
	char undoc_ex[NIO][NERR][160];
	uint64_t fails[NFAIL];
	char msg[NFAIL][NMSG][256];
	uint64_t raced, signalled, jobs_submitted, jobs_ended, jobs_abandoned;
	uint64_t faults[8], fatals, resets;
	int huge;			/* a huge BO or udmabuf exists somewhere */
	int bigcopy;			/* op_canary_copy's BOs exist somewhere */
	int64_t last_reset_ns;		/* of the last fatal fault or device reset */
	int64_t last_copy_reset_ns;	/* of op_canary_copy's last device reset */
	int stop;			/* workers: stop issuing ops */
	int64_t fault_stop_ns;		/* when the injector stopped */
	uint64_t ops_total;
};
static struct shared *S;

/* ---- Options --------------------------------------------------------------- */

static struct {
	uint64_t seed;
	double duration;
	uint64_t max_ops;	/* per thread, 0: unbounded */
	int procs, threads;
	const char *out;
	int faults;		/* inject faults (needs fault-injection=on) */
	double fatal_every;	/* seconds between fatal/reset faults, 0: never */
	unsigned int avoid_known;	/* AK_* */
	int tap;
	int big;		/* 4 GiB host BOs (can OOM a 2 GiB guest) */
	double scale;		/* time bounds multiplier (debug kernels) */
	const char *replay;
	int verbose;
} opt = {
	.duration = 30, .procs = 3, .threads = 4, .faults = 1, .fatal_every = 10,
	.scale = 1,
};

/* Patterns behind known crashes of the driver, avoided with --avoid-known[=LIST] */
#define AK_WAIT		(1u << 0)	/* WAIT of an id SUBMIT has not returned yet */
#define AK_IMPORT	(1u << 1)	/* import of a dma-buf with too many segments */
#define AK_ALL		(AK_WAIT | AK_IMPORT)

static struct frac_dev gdev;	/* parameters of the device */
static char dev_path[64], bdf[64];
static uint32_t max_cmds = DRM_FRAC_MAX_CMDS;

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "?";
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int64_t t_start_ns;

/* Faults stop this long before the end of the run. */
static int64_t quiet_ns(void)
{
	return (int64_t)((opt.duration / 5 < 5 ? opt.duration / 5 : 5) * 1e9);
}

static int64_t faults_end_ns(void)
{
	return t_start_ns + (int64_t)(opt.duration * 1e9) - quiet_ns();
}

static unsigned int job_timeout_ms = 5000;
static bool have_iommu;		/* DMA segments then say nothing about pages */
static int inject(const char *what);

/* ---- Random numbers: splitmix64 ------------------------------------------- */

static uint64_t rnd64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rnd(uint64_t *s, uint32_t n)	/* 0 .. n-1 */
{
	return n ? (uint32_t)(rnd64(s) % n) : 0;
}

static bool chance(uint64_t *s, uint32_t pct)
{
	return rnd(s, 100) < pct;
}

/* ---- Per-process state ----------------------------------------------------- */

enum { SLOT_A, SLOT_B, SLOT_O, NSLOT };	/* main file, closable file, oracle file */

struct bo_ent {
	uint32_t handle, flags;
	uint64_t size;
	int slot;
	unsigned int gen;
	bool used, live;
	bool closing;		/* a GEM_CLOSE of its handle was issued */
	uint64_t serial;	/* handles are reused: this is not */
};

enum { J_FREE, J_PENDING, J_CLAIMED };

struct job_ent {
	uint32_t id;
	int slot, state;
	unsigned int gen;
	/*
	 * A WAIT that did not claim the job chose it: it may see the job end
	 * and drop its id before it records so, and the claimant's WAIT then
	 * gets EINVAL for a job still listed here.
	 */
	bool raced;
};

struct proc {
	int idx;
	pthread_mutex_t lock;	/* protects everything below */
	int fd[NSLOT];
	unsigned int gen[NSLOT];	/* bumped before a close of fd[slot] */
	struct bo_ent bos[NBO];
	struct job_ent jobs[NJOB];
	uint32_t sync[NSLOT][NSYNC], dead_sync[NSLOT];
	int dmabuf[NDMABUF];
	uint32_t released[NSLOT], max_id[NSLOT];
	uint64_t bo_serial;
	uint32_t stolen[NSLOT][64];	/* ids released by WAITs of non-owners */
	unsigned int nstolen[NSLOT];
	/*
	 * A WAIT in flight (0: none). One on an id the thread does not own, or
	 * one whose file was closed and opened again under it (see
	 * spec_wait_end()), may release the id before its thread records it in
	 * stolen[]: the owner's WAIT then gets EINVAL for a job it still lists.
	 */
	uint32_t spec_id[MAX_THREADS];
	int spec_slot[MAX_THREADS];
	pid_t tids[MAX_THREADS];
};
static struct proc P;

struct map_ent {
	uint8_t *p;
	size_t len;
	bool devmem;
};

struct thr {
	int idx;
	uint64_t rng;
	FILE *log;
	uint64_t nops, seq;
	struct map_ent maps[NMAP];
	/* oracle BOs on SLOT_O, this thread's own */
	struct frac_bo canary, fresh;
	bool canary_armed;
	uint8_t marker;
	int64_t canary_t;
	sigjmp_buf jb;
	volatile int in_touch;
	int finished;		/* left its loop: else it died in a syscall (an oops) */
};

static __thread struct thr *self;
static __thread volatile sig_atomic_t sig_count;

static void on_signal(int sig)
{
	(void)sig;
	sig_count++;
}

static void on_fault(int sig)
{
	if (self && self->in_touch)
		siglongjmp(self->jb, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- Logging and failures -------------------------------------------------- */

static void tlog(struct thr *t, const char *fmt, ...)
{
	va_list ap;

	if (!t || !t->log)
		return;
	fprintf(t->log, "%.3f #%" PRIu64 " ", (now_ns() - t_start_ns) / 1e9, t->seq);
	va_start(ap, fmt);
	vfprintf(t->log, fmt, ap);
	va_end(ap);
	fputc('\n', t->log);
}

static void fail(enum fail_class c, const char *fmt, ...)
{
	char buf[200];
	va_list ap;
	uint64_t n;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	n = __atomic_fetch_add(&S->fails[c], 1, __ATOMIC_RELAXED);
	if (n < NMSG && P.fd[0] < 0)	/* the main process */
		snprintf(S->msg[c][n], sizeof(S->msg[c][n]), "main: %s", buf);
	else if (n < NMSG)
		snprintf(S->msg[c][n], sizeof(S->msg[c][n]), "p%d t%d: %s", P.idx,
			 self ? self->idx : -1, buf);
	if (n < 5)
		fprintf(stderr, "# FAIL [%s] p%d t%d: %s\n", fail_desc[c], P.idx,
			self ? self->idx : -1, buf);
	if (self && self->log) {
		tlog(self, "FAIL %s", buf);
		fflush(self->log);
	}
}

static void hex(char *dst, size_t dlen, const void *src, size_t len)
{
	const uint8_t *b = src;
	size_t i;

	for (i = 0; i < len && 2 * i + 2 < dlen; i++)
		sprintf(dst + 2 * i, "%02x", b[i]);
	dst[2 * (i < len ? i : len)] = '\0';
}

/* ---- The ioctl wrapper: log, count, check the errno ------------------------ */

#define X_BADPTR	(1u << 0)	/* we passed a bad user pointer on purpose */

struct xres {
	int err;		/* 0 or errno */
	bool raced;		/* the file was closed meanwhile */
	bool signalled;
};

static void note_errno(struct thr *t, enum io io, int err, unsigned int xflags,
		       bool signalled, bool raced, const char *what)
{
	if (err < 0 || err >= NERR)
		err = NERR - 1;
	__atomic_fetch_add(&S->count[io][err], 1, __ATOMIC_RELAXED);
	if (!err)
		return;
	if (raced) {
		__atomic_fetch_add(&S->raced, 1, __ATOMIC_RELAXED);
		return;
	}
	if (err == EINTR && signalled) {
		__atomic_fetch_add(&S->signalled, 1, __ATOMIC_RELAXED);
		if (errno_documented(io, err) || !io_is_frac(io))
			return;
	}
	if (err == EFAULT && (xflags & X_BADPTR))
		return;
	if (err == ENOMEM || (io_is_frac(io) && err == ENODEV) || errno_documented(io, err))
		return;
	if (!__atomic_fetch_add(&S->undoc[io][err], 1, __ATOMIC_RELAXED)) {
		snprintf(S->undoc_ex[io][err], sizeof(S->undoc_ex[io][err]), "p%d t%d #%" PRIu64
			 " %s", P.idx, t ? t->idx : -1, t ? t->seq : 0, what);
		fail(F_ERRNO, "%s returned undocumented %s (%s)", io_name[io],
		     ename(err), what);
	}
}

static int slot_fd(int slot, unsigned int *gen)
{
	int fd;

	pthread_mutex_lock(&P.lock);
	fd = P.fd[slot];
	*gen = P.gen[slot];
	pthread_mutex_unlock(&P.lock);
	return fd;
}

static bool slot_raced(int slot, unsigned int gen)
{
	return __atomic_load_n(&P.gen[slot], __ATOMIC_ACQUIRE) != gen;
}

static struct xres xioctl(struct thr *t, enum io io, int slot, unsigned long req, void *arg,
			  size_t len, unsigned int xflags, const void *extra, size_t elen)
{
	struct xres r = { 0 };
	char h[2 * 160 + 1], e[2 * 72 * 4 + 1] = "";
	unsigned int gen;
	int fd = slot_fd(slot, &gen), s0, ret;
	uint8_t before[160];

	t->seq++;
	hex(h, sizeof(h), arg, len);
	if (extra)
		hex(e, sizeof(e), extra, elen);
	tlog(t, "%s fd%d %s%s%s", io_name[io], slot, h, extra ? " x=" : "", e);
	if (fd < 0) {	/* the file is being reopened: not a call */
		tlog(t, "  = not called, raced");
		r.err = EBADF;
		r.raced = true;
		return r;
	}
	if (len <= sizeof(before))
		memcpy(before, arg, len);
	s0 = sig_count;
	ret = ioctl(fd, req, arg);
	r.err = ret < 0 ? errno : 0;
	r.signalled = sig_count != s0;
	r.raced = slot_raced(slot, gen);
	/* "An ioctl that fails changes nothing: no output field of the argument is written." */
	if (r.err && !r.raced && io_is_frac(io) && len <= sizeof(before)) {
		size_t k;

		for (k = 0; k < len; k++) {
			/* WAIT leaves the time still to wait after a signal. */
			if (io == IO_WAIT && k >= 8 && k < 16 && r.signalled)
				continue;
			if (((uint8_t *)arg)[k] != before[k]) {
				fail(F_STATE, "%s failed with %s but wrote its argument at byte %zu "
				     "(%#x -> %#x; in %s)", io_name[io], ename(r.err), k, before[k],
				     ((uint8_t *)arg)[k], h);
				break;
			}
		}
	}
	tlog(t, "  = %s%s%s", r.err ? ename(r.err) : "0", r.raced ? " raced" : "",
	     r.signalled ? " signalled" : "");
	note_errno(t, io, r.err, xflags, r.signalled, r.raced, h);
	t->nops++;
	__atomic_fetch_add(&S->ops_total, 1, __ATOMIC_RELAXED);
	return r;
}

/* ---- Table helpers --------------------------------------------------------- */

static void bo_add(int slot, unsigned int gen, uint32_t handle, uint64_t size, uint32_t flags)
{
	int i, pick = -1;

	pthread_mutex_lock(&P.lock);
	if (P.gen[slot] == gen) {
		for (i = 0; i < NBO && pick < 0; i++)
			if (!P.bos[i].used)
				pick = i;
		for (i = 0; i < NBO && pick < 0; i++)
			if (!P.bos[i].live)
				pick = i;
		if (pick < 0)
			pick = (int)(handle % NBO);	/* forget one: it leaks until close */
		P.bos[pick] = (struct bo_ent){ .handle = handle, .flags = flags, .size = size,
					       .slot = slot, .gen = gen, .used = true,
					       .live = true, .serial = ++P.bo_serial };
	}
	pthread_mutex_unlock(&P.lock);
}

/* A BO entry of @slot: live or closed (its handle stale, maybe reused). */
static bool bo_pick(struct thr *t, int slot, bool want_live, struct bo_ent *out)
{
	int i, n = 0, cand[NBO];

	pthread_mutex_lock(&P.lock);
	for (i = 0; i < NBO; i++)
		if (P.bos[i].used && P.bos[i].slot == slot && P.bos[i].gen == P.gen[slot] &&
		    (!want_live || P.bos[i].live))
			cand[n++] = i;
	if (n)
		*out = P.bos[cand[rnd(&t->rng, n)]];
	pthread_mutex_unlock(&P.lock);
	return n > 0;
}

static void bo_closed(int slot, unsigned int gen, uint32_t handle)
{
	int i;

	pthread_mutex_lock(&P.lock);
	for (i = 0; i < NBO; i++)
		if (P.bos[i].used && P.bos[i].slot == slot && P.bos[i].gen == gen &&
		    P.bos[i].handle == handle)
			P.bos[i].live = false;
	pthread_mutex_unlock(&P.lock);
}

/* Before a GEM_CLOSE: a failure on this handle from now on may be the close. */
static void bo_closing(int slot, uint32_t handle)
{
	int i;

	pthread_mutex_lock(&P.lock);
	for (i = 0; i < NBO; i++)
		if (P.bos[i].used && P.bos[i].slot == slot && P.bos[i].handle == handle)
			P.bos[i].closing = true;
	pthread_mutex_unlock(&P.lock);
}

/* Is the BO of @serial still live, no GEM_CLOSE of its handle issued? */
static bool bo_untouched(int slot, unsigned int gen, uint64_t serial)
{
	bool ok = false;
	int i;

	pthread_mutex_lock(&P.lock);
	for (i = 0; i < NBO; i++)
		if (P.bos[i].used && P.bos[i].serial == serial && P.bos[i].live &&
		    !P.bos[i].closing)
			ok = P.gen[slot] == gen;
	pthread_mutex_unlock(&P.lock);
	return ok;
}

static struct xres gem_close(struct thr *t, int slot, uint32_t handle, uint32_t pad)
{
	struct drm_gem_close c = { .handle = handle, .pad = pad };
	unsigned int gen;
	struct xres r;

	bo_closing(slot, handle);
	slot_fd(slot, &gen);
	r = xioctl(t, IO_GEM_CLOSE, slot, DRM_IOCTL_GEM_CLOSE, &c, sizeof(c), 0, NULL, 0);
	if (!r.err && !r.raced)
		bo_closed(slot, gen, handle);
	return r;
}

static int pick_slot(struct thr *t)
{
	return chance(&t->rng, 75) ? SLOT_A : SLOT_B;
}

static void job_add(struct thr *t, int slot, unsigned int gen, uint32_t id);
static void spec_wait_end(struct thr *t, int slot, unsigned int gen, uint32_t id, bool own,
			  struct xres *r);
static bool wait_job_bounded(struct thr *t, int slot, unsigned int gen, uint32_t id,
			     int64_t bound_ns, struct drm_frac_wait *w);

/* ---- Sizes and offsets near the limits ------------------------------------- */

static uint64_t pick_bo_size(struct thr *t, bool devmem, bool *huge)
{
	const uint64_t pg = 4096;
	uint64_t dm = gdev.devmem_size;

	*huge = false;
	switch (rnd(&t->rng, 20)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return pg - 1;
	case 3: return pg;
	case 4: return pg + 1;
	case 5: return SZ_4G + 1;
	case 6: return UINT64_MAX;
	case 7: return devmem ? dm : 2 * pg;
	case 8: return devmem ? dm + 1 : 3 * pg;
	case 9: return devmem ? dm - pg + 1 : 16 * pg;
	case 10:
		if (devmem)
			return SZ_4G;
		if (!opt.big)
			return SZ_4G + pg;	/* refused before any allocation */
		*huge = true;
		return SZ_4G;
	case 11:
		/* one page past what the SG lists take if no two pages are adjacent */
		if (devmem)
			return dm / 2;
		*huge = chance(&t->rng, 30);
		return *huge ? (FRAC_SG_LIMIT + 1) * pg : 256 * pg;
	default:
		return pg * (1 + rnd(&t->rng, 64)) - (chance(&t->rng, 30) ? rnd(&t->rng, pg) : 0);
	}
}

static uint64_t near(struct thr *t, uint64_t limit)
{
	switch (rnd(&t->rng, 10)) {
	case 0: return 0;
	case 1: return limit;
	case 2: return limit + 1;
	case 3: return limit ? limit - 1 : 0;
	case 4: return rnd64(&t->rng);
	case 5: return UINT64_MAX - rnd(&t->rng, 16);
	default: return limit ? rnd64(&t->rng) % (limit + 1) : 0;
	}
}

/* ---- Ops ------------------------------------------------------------------- */

static void op_get_param(struct thr *t)
{
	struct drm_frac_get_param p = { .param = rnd(&t->rng, 11) };

	if (chance(&t->rng, 10))
		p.param = (uint32_t)rnd64(&t->rng);
	if (chance(&t->rng, 10))
		p.pad = 1u << rnd(&t->rng, 32);
	xioctl(t, IO_GET_PARAM, pick_slot(t), DRM_IOCTL_FRAC_GET_PARAM, &p, sizeof(p), 0, NULL, 0);
}

static void op_bo_create(struct thr *t)
{
	struct drm_frac_bo_create c = { 0 };
	bool devmem = (gdev.features & DRM_FRAC_FEAT_DEVMEM) && chance(&t->rng, 35), huge;
	int slot = pick_slot(t);
	unsigned int gen;
	struct xres r;
	int zero = 0;

	c.size = pick_bo_size(t, devmem, &huge);
	c.flags = devmem ? DRM_FRAC_BO_DEVMEM : 0;
	if (chance(&t->rng, 5))
		c.flags |= 1u << (1 + rnd(&t->rng, 31));
	c.handle = chance(&t->rng, 10) ? (uint32_t)rnd64(&t->rng) : 0;
	if (huge && !__atomic_compare_exchange_n(&S->huge, &zero, 1, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
		c.size = 4096;
	slot_fd(slot, &gen);
	r = xioctl(t, IO_BO_CREATE, slot, DRM_IOCTL_FRAC_BO_CREATE, &c, sizeof(c), 0, NULL, 0);
	if (!r.err && !r.raced) {
		if (huge) {
			/* Never keep a huge BO: the guest has 2 GiB. */
			gem_close(t, slot, c.handle, 0);
		} else {
			bo_add(slot, gen, c.handle, (c.size + 4095) & ~4095ull, c.flags);
		}
	}
	if (huge && c.size != 4096)
		__atomic_store_n(&S->huge, 0, __ATOMIC_RELEASE);
}

static void op_gem_close(struct thr *t)
{
	int slot = pick_slot(t);
	struct bo_ent b;
	uint32_t handle;

	if (chance(&t->rng, 85) && bo_pick(t, slot, chance(&t->rng, 80), &b))
		handle = b.handle;
	else
		handle = chance(&t->rng, 50) ? 0 : 100000 + rnd(&t->rng, 1000000);
	gem_close(t, slot, handle, chance(&t->rng, 5));
}

static void op_bo_info(struct thr *t)
{
	struct drm_frac_bo_info i;
	int slot = pick_slot(t);
	struct bo_ent b = { 0 };
	bool have = bo_pick(t, slot, chance(&t->rng, 80), &b);
	struct xres r;

	memset(&i, 0xa5, sizeof(i));	/* poisoned: out fields must be written */
	i.handle = have ? b.handle : (uint32_t)rnd64(&t->rng);
	r = xioctl(t, IO_BO_INFO, slot, DRM_IOCTL_FRAC_BO_INFO, &i, sizeof(i), 0, NULL, 0);
	if (!r.err && !r.raced && have && b.live && i.handle == b.handle &&
	    (i.size < b.size || i.mmap_offset == 0xa5a5a5a5a5a5a5a5ull))
		tlog(t, "  note: BO %u info size %" PRIu64 " (table %" PRIu64 "), handle reused?",
		     b.handle, (uint64_t)i.size, b.size);
}

/* Read and write a mapping, guarded: a fault is a failure only if the BO lived. */
static bool touch(struct thr *t, uint8_t *p, size_t len, bool write)
{
	volatile uint8_t *v = p;
	bool ok = true;

	t->in_touch = 1;
	if (!sigsetjmp(t->jb, 1)) {
		(void)v[0];
		(void)v[len - 1];
		if (write) {
			v[0] = 0x11;
			v[len - 1] = 0x22;
		}
	} else {
		ok = false;
	}
	t->in_touch = 0;
	return ok;
}

static void op_mmap(struct thr *t)
{
	struct drm_frac_bo_info i = { 0 };
	int slot = pick_slot(t), m = rnd(&t->rng, NMAP), fd;
	struct map_ent *me = &t->maps[m];
	struct bo_ent b;
	unsigned int gen, now;
	size_t len;
	struct xres r;
	void *p;
	int s0;

	if (me->p) {
		touch(t, me->p, me->len, true);
		munmap(me->p, me->len);
		me->p = NULL;
		if (chance(&t->rng, 50))
			return;
	}
	if (!bo_pick(t, slot, true, &b))
		return;
	i.handle = b.handle;
	r = xioctl(t, IO_BO_INFO, slot, DRM_IOCTL_FRAC_BO_INFO, &i, sizeof(i), 0, NULL, 0);
	if (r.err || r.raced)
		return;
	len = i.size;
	switch (rnd(&t->rng, 6)) {
	case 0: len = i.size + 4096; break;		/* one page past: refused */
	case 1: len = 4096; break;
	default: break;
	}
	/*
	 * Judged against the generation the BO was picked in (bo_pick() takes
	 * only the file's current one), not the one mmap() reads its fd in: a
	 * close of fd[slot] by another thread since the pick (op_fd_close())
	 * leaves the fd closed until the reopen, or names the new file, where
	 * the offset means nothing. Either way the call is raced: EBADF is the
	 * VFS's for a closed fd, and the result says nothing about either file.
	 */
	gen = b.gen;
	fd = slot_fd(slot, &now);
	t->seq++;
	tlog(t, "mmap fd%d (%d) handle %u off %#" PRIx64 " len %zu (size %" PRIu64 ")", slot, fd,
	     b.handle, (uint64_t)i.mmap_offset, len, (uint64_t)i.size);
	if (fd < 0) {	/* the file is being reopened: not a call */
		tlog(t, "  = not called, raced");
		return;
	}
	s0 = sig_count;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)i.mmap_offset);
	r.err = p == MAP_FAILED ? errno : 0;
	r.raced = slot_raced(slot, gen);
	tlog(t, "  = %s%s", r.err ? ename(r.err) : "0", r.raced ? " raced" : "");
	note_errno(t, IO_MMAP, r.err, 0, sig_count != s0, r.raced, "mmap");
	if (r.raced) {	/* maybe not our file at all: don't touch */
		if (!r.err)
			munmap(p, len);
		return;
	}
	if (r.err) {
		if (len <= i.size && r.err != ENOMEM && bo_untouched(slot, gen, b.serial))
			fail(F_STATE, "mmap of a live BO (handle %u, %zu of %" PRIu64 " bytes): %s",
			     b.handle, len, (uint64_t)i.size, ename(r.err));
		return;
	}
	if (len > i.size) {
		/* Beyond the BO, the mapping must have been refused. */
		fail(F_STATE, "mmap of %zu bytes of a %" PRIu64 "-byte BO succeeded", len,
		     (uint64_t)i.size);
		munmap(p, len);
		return;
	}
	me->p = p;
	me->len = len;
	me->devmem = i.flags & DRM_FRAC_BO_DEVMEM;
	if (!touch(t, p, len, chance(&t->rng, 70)))
		fail(F_STATE, "touching a fresh mapping of BO %u (%zu bytes) faulted", b.handle, len);
	/* Close the handle under the mapping now and then: the mapping stays valid. */
	if (chance(&t->rng, 20)) {
		r = gem_close(t, slot, b.handle, 0);
		if (!r.err && !r.raced && !touch(t, p, len, true))
			fail(F_STATE, "mapping faulted after GEM_CLOSE of its handle");
	}
}

static int dmabuf_take(struct thr *t, bool remove)
{
	int i = rnd(&t->rng, NDMABUF), fd;

	pthread_mutex_lock(&P.lock);
	fd = P.dmabuf[i];
	if (remove)
		P.dmabuf[i] = -1;
	pthread_mutex_unlock(&P.lock);
	return fd;
}

static void dmabuf_put(struct thr *t, int fd)
{
	int i = rnd(&t->rng, NDMABUF), old;

	pthread_mutex_lock(&P.lock);
	old = P.dmabuf[i];
	P.dmabuf[i] = fd;
	pthread_mutex_unlock(&P.lock);
	if (old >= 0)
		close(old);
}

static void op_prime_export(struct thr *t)
{
	struct drm_prime_handle h = { 0 };
	int slot = pick_slot(t);
	struct bo_ent b;
	unsigned int gen;
	struct xres r;

	if (!bo_pick(t, slot, chance(&t->rng, 90), &b))
		return;
	h.handle = b.handle;
	h.flags = DRM_CLOEXEC | (chance(&t->rng, 70) ? DRM_RDWR : 0);
	if (chance(&t->rng, 5))
		h.flags |= 1u << rnd(&t->rng, 32);
	h.fd = -1;
	slot_fd(slot, &gen);
	r = xioctl(t, IO_PRIME_EXPORT, slot, DRM_IOCTL_PRIME_HANDLE_TO_FD, &h, sizeof(h), 0, NULL, 0);
	/* Device memory has no pages to export: the header says only host BOs export. */
	if (!r.err && !r.raced && (b.flags & DRM_FRAC_BO_DEVMEM) && b.live)
		tlog(t, "  note: devmem BO exported");
	if (r.err || h.fd < 0)
		return;
	/* Close the exporter's handle first, now and then. */
	if (chance(&t->rng, 30))
		gem_close(t, slot, b.handle, 0);
	dmabuf_put(t, h.fd);
}

static void op_prime_import(struct thr *t)
{
	struct drm_prime_handle h = { 0 };
	int slot = pick_slot(t), fd;
	unsigned int gen;
	unsigned int xf = 0;
	struct xres r;
	bool own = false;

	fd = dmabuf_take(t, false);
	switch (rnd(&t->rng, 8)) {
	case 0: h.fd = -1; break;
	case 1: h.fd = 0; break;			/* stdin: not a dma-buf */
	case 2: h.fd = slot_fd(SLOT_A, &gen); break;	/* a DRM file: not a dma-buf */
	default: h.fd = fd; own = true; break;
	}
	if (own && fd < 0)
		return;
	if (chance(&t->rng, 5))
		h.flags = 1u << rnd(&t->rng, 32);
	slot_fd(slot, &gen);
	r = xioctl(t, IO_PRIME_IMPORT, slot, DRM_IOCTL_PRIME_FD_TO_HANDLE, &h, sizeof(h), xf, NULL, 0);
	if (!r.err && !r.raced && own) {
		struct drm_frac_bo_info i = { .handle = h.handle };

		r = xioctl(t, IO_BO_INFO, slot, DRM_IOCTL_FRAC_BO_INFO, &i, sizeof(i), 0, NULL, 0);
		if (!r.err && !r.raced)
			bo_add(slot, gen, h.handle, i.size, i.flags);
	}
}

/*
 * A foreign dma-buf: udmabuf over a sealed memfd, one DMA segment per page.
 * Large ones have more segments than the device's SG lists take, so the
 * import must fail with E2BIG (the known double free on a failed import).
 */
static void op_udmabuf(struct thr *t)
{
	bool big = chance(&t->rng, 4) && !(opt.avoid_known & AK_IMPORT);
	uint64_t pages = big ? FRAC_SG_LIMIT + 1 + rnd(&t->rng, 4) : 1 + rnd(&t->rng, 64);
	struct udmabuf_create uc = { 0 };
	int zero = 0, dfd = -1, mfd = -1, ufd, slot = pick_slot(t);
	struct drm_prime_handle h = { 0 };
	unsigned int gen;
	struct xres r;

	if (big && !__atomic_compare_exchange_n(&S->huge, &zero, 1, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
		return;
	t->seq++;
	tlog(t, "udmabuf %" PRIu64 " pages", pages);
	dfd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dfd < 0) {
		note_errno(t, IO_UDMABUF, errno, 0, false, false, "open /dev/udmabuf");
		goto out;
	}
	mfd = memfd_create("frac_fuzz", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, (off_t)(pages * 4096)) ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		note_errno(t, IO_UDMABUF, errno, 0, false, false, "memfd");
		goto out;
	}
	uc.memfd = mfd;
	uc.flags = UDMABUF_FLAGS_CLOEXEC;
	uc.size = pages * 4096;
	ufd = ioctl(dfd, UDMABUF_CREATE, &uc);
	note_errno(t, IO_UDMABUF, ufd < 0 ? errno : 0, 0, false, false, "UDMABUF_CREATE");
	tlog(t, "  = %s", ufd < 0 ? ename(errno) : "0");
	if (ufd < 0)
		goto out;
	h.fd = ufd;
	slot_fd(slot, &gen);
	r = xioctl(t, IO_PRIME_IMPORT, slot, DRM_IOCTL_PRIME_FD_TO_HANDLE, &h, sizeof(h), 0, NULL, 0);
	/* Behind an IOMMU the pages map to few DMA segments: then it may import. */
	if (big && !r.err && !r.raced && !have_iommu)
		fail(F_STATE, "import of a dma-buf of %" PRIu64 " single-page segments succeeded "
		     "(no IOMMU)", pages);
	if (!r.err && !r.raced) {
		if (big) {
			gem_close(t, slot, h.handle, 0);
		} else {
			bo_add(slot, gen, h.handle, pages * 4096, 0);
		}
	}
	if (big)
		close(ufd);
	else
		dmabuf_put(t, ufd);	/* to import again, into the other file too */
out:
	if (mfd >= 0)
		close(mfd);
	if (dfd >= 0)
		close(dfd);
	if (big)
		__atomic_store_n(&S->huge, 0, __ATOMIC_RELEASE);
}

static uint32_t sync_pick(struct thr *t, int slot)
{
	uint32_t h;

	pthread_mutex_lock(&P.lock);
	switch (rnd(&t->rng, 6)) {
	case 0: h = P.dead_sync[slot]; break;
	case 1: h = (uint32_t)rnd64(&t->rng); break;
	default: h = P.sync[slot][rnd(&t->rng, NSYNC)]; break;
	}
	pthread_mutex_unlock(&P.lock);
	return h;
}

static void op_syncobj(struct thr *t)
{
	int slot = pick_slot(t), i = rnd(&t->rng, NSYNC);
	unsigned int gen;
	struct xres r;

	slot_fd(slot, &gen);
	switch (rnd(&t->rng, 4)) {
	case 0: {
		struct drm_syncobj_create c = { 0 };

		c.flags = chance(&t->rng, 30) ? DRM_SYNCOBJ_CREATE_SIGNALED : 0;
		if (chance(&t->rng, 5))
			c.flags |= 1u << rnd(&t->rng, 32);
		r = xioctl(t, IO_SYNCOBJ_CREATE, slot, DRM_IOCTL_SYNCOBJ_CREATE, &c, sizeof(c), 0,
			   NULL, 0);
		if (!r.err && !r.raced) {
			pthread_mutex_lock(&P.lock);
			if (P.gen[slot] == gen) {
				if (!P.sync[slot][i])
					P.sync[slot][i] = c.handle;
			}
			pthread_mutex_unlock(&P.lock);
		}
		break;
	}
	case 1: {
		struct drm_syncobj_destroy d = { 0 };

		pthread_mutex_lock(&P.lock);
		d.handle = P.sync[slot][i];
		if (chance(&t->rng, 60)) {
			P.sync[slot][i] = 0;
			P.dead_sync[slot] = d.handle;
		}
		pthread_mutex_unlock(&P.lock);
		if (chance(&t->rng, 5))
			d.pad = 1;
		xioctl(t, IO_SYNCOBJ_DESTROY, slot, DRM_IOCTL_SYNCOBJ_DESTROY, &d, sizeof(d), 0,
		       NULL, 0);
		break;
	}
	case 2: {
		struct drm_syncobj_wait w = { 0 };
		uint32_t hs[4];
		uint32_t n = rnd(&t->rng, 5), k;
		unsigned int xf = 0;

		for (k = 0; k < 4; k++)
			hs[k] = sync_pick(t, slot);
		w.handles = (uintptr_t)hs;
		if (chance(&t->rng, 3)) {
			w.handles = 8;
			xf = X_BADPTR;
		}
		w.count_handles = n;
		w.flags = rnd(&t->rng, 4);	/* WAIT_ALL, WAIT_FOR_SUBMIT */
		if (chance(&t->rng, 5))
			w.flags |= 1u << rnd(&t->rng, 32);
		switch (rnd(&t->rng, 3)) {
		case 0: w.timeout_nsec = 0; break;
		case 1: w.timeout_nsec = now_ns() + 1000000 * (int64_t)rnd(&t->rng, 50); break;
		default: w.timeout_nsec = now_ns() - 1000; break;
		}
		r = xioctl(t, IO_SYNCOBJ_WAIT, slot, DRM_IOCTL_SYNCOBJ_WAIT, &w, sizeof(w), xf, hs,
			   sizeof(hs));
		break;
	}
	default: {
		struct drm_syncobj_array a = { 0 };
		uint32_t hs[2] = { sync_pick(t, slot), sync_pick(t, slot) };

		a.handles = (uintptr_t)hs;
		a.count_handles = rnd(&t->rng, 3);
		xioctl(t, IO_SYNCOBJ_RESET, slot, DRM_IOCTL_SYNCOBJ_RESET, &a, sizeof(a), 0, hs,
		       sizeof(hs));
		break;
	}
	}
}

/* One command with operands near the BOs' bounds. */
static void gen_cmd(struct thr *t, int slot, struct drm_frac_cmd *c, bool valid)
{
	struct bo_ent s = { 0 }, d = { 0 }, a = { 0 };
	uint32_t maxd = gdev.gemm_max_dim ?: 64;
	bool hs, hd, ha;

	memset(c, 0, sizeof(*c));
	hs = bo_pick(t, slot, valid || chance(&t->rng, 90), &s);
	hd = bo_pick(t, slot, valid || chance(&t->rng, 90), &d);
	ha = bo_pick(t, slot, valid || chance(&t->rng, 90), &a);
	c->op = valid ? 1 + rnd(&t->rng, 5) : rnd(&t->rng, 8);
	if (!valid && chance(&t->rng, 3))
		c->op = (uint32_t)rnd64(&t->rng);
	switch (c->op) {
	case DRM_FRAC_OP_COPY:
		if (!hs || !hd)
			goto nop;
		c->src_handle = s.handle;
		c->dst_handle = d.handle;
		if (valid) {
			uint64_t m = s.size < d.size ? s.size : d.size;

			c->len = 1 + rnd64(&t->rng) % (m < 65536 ? m : 65536);
			c->src_offset = rnd64(&t->rng) % (s.size - c->len + 1);
			c->dst_offset = rnd64(&t->rng) % (d.size - c->len + 1);
		} else {
			c->len = near(t, s.size);
			c->src_offset = near(t, s.size - (c->len < s.size ? c->len : s.size));
			c->dst_offset = near(t, d.size - (c->len < d.size ? c->len : d.size));
		}
		break;
	case DRM_FRAC_OP_FILL:
		if (!hd)
			goto nop;
		c->dst_handle = d.handle;
		c->arg[0] = (uint32_t)rnd64(&t->rng);
		if (valid) {
			c->len = 1 + rnd64(&t->rng) % (d.size < 262144 ? d.size : 262144);
			c->dst_offset = rnd64(&t->rng) % (d.size - c->len + 1);
		} else {
			c->len = near(t, d.size);
			c->dst_offset = near(t, d.size - (c->len < d.size ? c->len : d.size));
		}
		break;
	case DRM_FRAC_OP_CRC32C:
		if (!hs)
			goto nop;
		c->src_handle = s.handle;
		c->arg[0] = (uint32_t)rnd64(&t->rng);
		if (valid) {
			c->len = 1 + rnd64(&t->rng) % (s.size < 65536 ? s.size : 65536);
			c->src_offset = rnd64(&t->rng) % (s.size - c->len + 1);
		} else {
			c->len = near(t, s.size);
			c->src_offset = near(t, s.size);
		}
		break;
	case DRM_FRAC_OP_GEMM: {
		uint32_t type = valid ? rnd(&t->rng, 2) : rnd(&t->rng, 3);
		uint64_t esz = type == DRM_FRAC_GEMM_INT8 ? 1 : 4;
		uint32_t mm, nn, kk;

		if (!hs || !hd || !ha)
			goto nop;
		mm = 1 + rnd(&t->rng, 16);
		nn = 1 + rnd(&t->rng, 16);
		kk = 1 + rnd(&t->rng, 16);
		if (!valid) {
			uint32_t *dims[3] = { &mm, &nn, &kk };
			uint32_t *dd = dims[rnd(&t->rng, 3)];

			switch (rnd(&t->rng, 4)) {
			case 0: *dd = 0; break;
			case 1: *dd = maxd; break;
			case 2: *dd = maxd + 1; break;
			default: *dd = (uint32_t)rnd64(&t->rng); break;
			}
		}
		c->src_handle = s.handle;
		c->aux_handle = a.handle;
		c->dst_handle = d.handle;
		c->arg[0] = mm;
		c->arg[1] = nn;
		c->arg[2] = kk;
		c->arg[3] = type;
		if (valid && ((uint64_t)mm * kk * esz > s.size || (uint64_t)kk * nn * esz > a.size ||
			      (uint64_t)mm * nn * 4 > d.size))
			goto nop;
		if (valid) {
			c->src_offset = rnd64(&t->rng) % (s.size - (uint64_t)mm * kk * esz + 1);
			c->aux_offset = rnd64(&t->rng) % (a.size - (uint64_t)kk * nn * esz + 1);
			c->dst_offset = rnd64(&t->rng) % (d.size - (uint64_t)mm * nn * 4 + 1);
		} else {
			c->src_offset = near(t, s.size - (uint64_t)mm * kk * esz);
			c->aux_offset = near(t, a.size);
			c->dst_offset = near(t, d.size - (uint64_t)mm * nn * 4);
			if (chance(&t->rng, 20))
				c->len = 4;
		}
		break;
	}
	case DRM_FRAC_OP_TIMESTAMP:
		if (!hd || chance(&t->rng, 30)) {
			c->len = valid ? 0 : rnd(&t->rng, 16);
			break;
		}
		c->dst_handle = d.handle;
		c->len = valid ? 8 : rnd(&t->rng, 16);
		c->dst_offset = valid ? (rnd64(&t->rng) % (d.size - 7)) & ~7ull : near(t, d.size - 8);
		break;
	case DRM_FRAC_OP_NOP:
	nop:
		memset(c, 0, sizeof(*c));
		if (!valid && chance(&t->rng, 30))
			c->arg[rnd(&t->rng, 4)] = 1;
		break;
	default:
		break;
	}
	if (!valid) {
		if (chance(&t->rng, 5))
			c->flags = 1u << rnd(&t->rng, 32);
		if (chance(&t->rng, 5))
			c->pad = 1u << rnd(&t->rng, 32);
		if (chance(&t->rng, 5))
			c->arg[1 + rnd(&t->rng, 3)] ^= 1;
		if (chance(&t->rng, 5))
			c->src_handle = 100000 + rnd(&t->rng, 100000);
	}
}

static void op_submit(struct thr *t)
{
	static __thread struct drm_frac_cmd cmds[DRM_FRAC_MAX_CMDS + 2];
	struct drm_frac_submit s = { 0 };
	bool valid = chance(&t->rng, 60);
	int slot = pick_slot(t);
	unsigned int gen, xf = 0;
	uint32_t n, i;
	struct xres r;

	switch (rnd(&t->rng, 10)) {
	case 0: n = valid ? 1 : 0; break;
	case 1: n = 1; break;
	case 2: n = max_cmds; break;
	case 3: n = valid ? max_cmds : max_cmds + 1; break;
	default: n = 1 + rnd(&t->rng, 8); break;
	}
	for (i = 0; i < n && i < DRM_FRAC_MAX_CMDS + 2; i++)
		gen_cmd(t, slot, &cmds[i], valid || chance(&t->rng, 80));
	s.cmds = (uintptr_t)cmds;
	s.cmd_count = n;
	s.cmd_size = sizeof(struct drm_frac_cmd);
	s.queue = rnd(&t->rng, gdev.num_queues);
	s.priority = rnd(&t->rng, 3);
	if (chance(&t->rng, 15)) {
		s.flags = DRM_FRAC_SUBMIT_LOCAL_QUEUE;
		s.queue = 0;
	}
#ifdef DRM_FRAC_SUBMIT_NO_JOB_ID
	if (chance(&t->rng, 10))
		s.flags |= DRM_FRAC_SUBMIT_NO_JOB_ID;
#endif
	if (chance(&t->rng, 25))
		s.in_syncobj = sync_pick(t, slot);
	if (chance(&t->rng, 25))
		s.out_syncobj = sync_pick(t, slot);
	if (!valid) {
		switch (rnd(&t->rng, 10)) {
		case 0: s.cmd_size = rnd(&t->rng, 2) ? 0 : sizeof(struct drm_frac_cmd) + 8; break;
		case 1: s.queue = gdev.num_queues + rnd(&t->rng, 2) * rnd(&t->rng, 1000); break;
		case 2: s.priority = 3 + rnd(&t->rng, 100); break;
		case 3: {	/* a flag the header does not define */
			uint32_t bit;

			do
				bit = 1u << rnd(&t->rng, 32);
			while (bit & DRM_FRAC_SUBMIT_FLAGS);
			s.flags |= bit;
			break;
		}
		case 4: if (s.flags) s.queue = 1; break;
		case 5: s.cmds = chance(&t->rng, 50) ? 0 : 16; xf = X_BADPTR; break;
		case 6: s.cmds = (uintptr_t)cmds + 4096 * 1024; xf = X_BADPTR; break;
		default: break;
		}
		if (chance(&t->rng, 10))
			s.job_id = (uint32_t)rnd64(&t->rng);	/* out only */
	}
	slot_fd(slot, &gen);
	r = xioctl(t, IO_SUBMIT, slot, DRM_IOCTL_FRAC_SUBMIT, &s, sizeof(s), xf, cmds,
		   (n < 4 ? n : 4) * sizeof(cmds[0]));
	if (r.err || r.raced)
		return;
	__atomic_fetch_add(&S->jobs_submitted, 1, __ATOMIC_RELAXED);
	tlog(t, "  job %u", s.job_id);
#ifdef DRM_FRAC_SUBMIT_NO_JOB_ID
	if (s.flags & DRM_FRAC_SUBMIT_NO_JOB_ID) {
		/* "The job gets no job id (@job_id is 0 on return) and is not kept for WAIT" */
		if (s.job_id)
			fail(F_STATE, "SUBMIT with NO_JOB_ID returned job id %u", s.job_id);
		__atomic_fetch_add(&S->jobs_abandoned, 1, __ATOMIC_RELAXED);
		return;
	}
#endif
	if (!s.job_id)
		fail(F_STATE, "SUBMIT succeeded with job id 0");
	if (s.queue >= gdev.num_queues)
		fail(F_STATE, "SUBMIT succeeded with queue %u out of range", s.queue);
	job_add(t, slot, gen, s.job_id);
}

/*
 * SUBMIT_BATCH: 1-8 jobs of 1-4 commands for one queue, priority and flags;
 * invalid ones break a job's command or the batch's own fields. A failed
 * batch must leave its array as it was; an accepted one gives every job an
 * id (or 0 with NO_JOB_ID), as SUBMIT does.
 */
static void op_submit_batch(struct thr *t)
{
	static __thread struct drm_frac_cmd cmds[8][4];
	static __thread struct drm_frac_submit jobs[DRM_FRAC_MAX_BATCH + 1];
	struct drm_frac_submit before[8];
	struct drm_frac_submit_batch b = { 0 };
	bool valid = chance(&t->rng, 60);
	int slot = pick_slot(t);
	uint32_t n = 1 + rnd(&t->rng, 8), i, k, q, prio, flags = 0;
	unsigned int gen, xf = 0;
	struct xres r;

	q = rnd(&t->rng, gdev.num_queues);
	prio = rnd(&t->rng, 3);
	if (chance(&t->rng, 15)) {
		flags = DRM_FRAC_SUBMIT_LOCAL_QUEUE;
		q = 0;
	}
	if (chance(&t->rng, 10))
		flags |= DRM_FRAC_SUBMIT_NO_JOB_ID;
	memset(jobs, 0, sizeof(jobs));
	for (i = 0; i < n; i++) {
		uint32_t nc = 1 + rnd(&t->rng, 4);

		for (k = 0; k < nc; k++)
			gen_cmd(t, slot, &cmds[i][k], valid || chance(&t->rng, 95));
		jobs[i].cmds = (uintptr_t)cmds[i];
		jobs[i].cmd_count = nc;
		jobs[i].cmd_size = sizeof(struct drm_frac_cmd);
		jobs[i].queue = q;
		jobs[i].priority = prio;
		jobs[i].flags = flags;
		if (chance(&t->rng, 15))
			jobs[i].in_syncobj = sync_pick(t, slot);
		if (chance(&t->rng, 15))
			jobs[i].out_syncobj = sync_pick(t, slot);
	}
	b.jobs = (uintptr_t)jobs;
	b.count = n;
	b.job_size = sizeof(jobs[0]);
	if (!valid) {
		switch (rnd(&t->rng, 9)) {
		case 0: b.count = 0; break;
		case 1: b.count = DRM_FRAC_MAX_BATCH + 1; break;
		case 2: b.job_size = rnd(&t->rng, 2) ? 0 : sizeof(jobs[0]) + 8; break;
		case 3: b.flags = 1u << rnd(&t->rng, 32); break;
		case 4: b.pad = 1 + rnd(&t->rng, 1000); break;
		case 5: jobs[n - 1].queue = (q + 1) % (gdev.num_queues + 1); break;
		case 6: jobs[n - 1].priority = (prio + 1) % 3; break;
		case 7: b.jobs = chance(&t->rng, 50) ? 0 : 16; xf = X_BADPTR; break;
		default: break;
		}
	}
	memcpy(before, jobs, sizeof(before));
	slot_fd(slot, &gen);
	r = xioctl(t, IO_SUBMIT_BATCH, slot, DRM_IOCTL_FRAC_SUBMIT_BATCH, &b, sizeof(b), xf, jobs,
		   (n < 2 ? n : 2) * sizeof(jobs[0]));
	if (r.raced)
		return;
	if (r.err) {
		/* All or nothing: "when the call fails, ... no value in the array changed." */
		if (memcmp(before, jobs, sizeof(before)))
			fail(F_STATE, "SUBMIT_BATCH failed with %s but wrote its array",
			     ename(r.err));
		return;
	}
	for (i = 0; i < n; i++) {
		__atomic_fetch_add(&S->jobs_submitted, 1, __ATOMIC_RELAXED);
		tlog(t, "  job %u", jobs[i].job_id);
		if (jobs[i].queue >= gdev.num_queues || jobs[i].queue != jobs[0].queue)
			fail(F_STATE, "SUBMIT_BATCH job %u: queue %u (job 0: %u)", i, jobs[i].queue,
			     jobs[0].queue);
		if (flags & DRM_FRAC_SUBMIT_NO_JOB_ID) {
			if (jobs[i].job_id)
				fail(F_STATE, "SUBMIT_BATCH with NO_JOB_ID returned job id %u",
				     jobs[i].job_id);
			__atomic_fetch_add(&S->jobs_abandoned, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (!jobs[i].job_id)
			fail(F_STATE, "SUBMIT_BATCH succeeded with job id 0 for job %u", i);
		else
			job_add(t, slot, gen, jobs[i].job_id);
	}
}

static void job_add(struct thr *t, int slot, unsigned int gen, uint32_t id)
{
	int i, pick = -1;
	bool stolen = false;

	pthread_mutex_lock(&P.lock);
	for (i = 0; i < 64; i++)
		stolen |= P.stolen[slot][i] == id;
	if (P.gen[slot] == gen && stolen) {
		pthread_mutex_unlock(&P.lock);
		return;		/* another thread's WAIT saw it ended already */
	}
	if (P.gen[slot] == gen) {
		for (i = 0; i < NJOB && pick < 0; i++)
			if (P.jobs[i].state == J_FREE)
				pick = i;
		if (pick >= 0)
			P.jobs[pick] = (struct job_ent){ .id = id, .slot = slot, .gen = gen,
							 .state = J_PENDING };
		if (id > P.max_id[slot])
			P.max_id[slot] = id;
	}
	pthread_mutex_unlock(&P.lock);
	if (pick < 0 && gen == P.gen[slot]) {
		struct drm_frac_wait w;

		/* Table full: wait for it here, bounded by the job timeout machinery. */
		wait_job_bounded(t, slot, gen, id, (int64_t)(30e9 * opt.scale), &w);
	}
}

static void check_wait_result(struct thr *t, const struct drm_frac_wait *w, uint32_t id)
{
	int32_t st = w->status;

	__atomic_fetch_add(&S->jobs_ended, 1, __ATOMIC_RELAXED);
	if (st <= 0 && -st < NERR)
		__atomic_fetch_add(&S->status[-st], 1, __ATOMIC_RELAXED);
	if (!status_documented(st))
		fail(F_STATUS, "job %u ended with undocumented status %d (%s)", id, st,
		     st < 0 ? ename(-st) : "positive");
	else if (st && !opt.faults)
		fail(F_STATUS, "job %u ended with %s with no fault injected", id, ename(-st));
	if (w->pad)
		fail(F_STATE, "WAIT of job %u: pad %u, documented as zero", id, w->pad);
	tlog(t, "  job %u status %d result %#" PRIx64, id, st, (uint64_t)w->result);
}

/* Mark a job released (WAIT saw it ended); a later WAIT of the id must say EINVAL. */
static void job_released(int slot, unsigned int gen, uint32_t id)
{
	int i;

	pthread_mutex_lock(&P.lock);
	if (P.gen[slot] == gen) {
		for (i = 0; i < NJOB; i++)
			if (P.jobs[i].state != J_FREE && P.jobs[i].id == id &&
			    P.jobs[i].slot == slot)
				P.jobs[i].state = J_FREE;
		P.released[slot] = id;
	}
	pthread_mutex_unlock(&P.lock);
}

/* Not yet released by anyone (a racing WAIT of another thread may have). */
/* Listed, and no WAIT that did not claim it may have ended it meanwhile. */
static bool job_unreleased_unraced(int slot, unsigned int gen, uint32_t id)
{
	bool found = false;
	int i;

	pthread_mutex_lock(&P.lock);
	for (i = 0; i < NJOB; i++)
		if (P.jobs[i].state != J_FREE && P.jobs[i].id == id && P.jobs[i].slot == slot &&
		    P.jobs[i].gen == gen && !P.jobs[i].raced)
			found = true;
	/* Another thread's WAIT took it, or may have and not yet said so. */
	for (i = 0; i < 64; i++)
		if (P.stolen[slot][i] == id)
			found = false;
	for (i = 0; i < MAX_THREADS; i++)
		if (P.spec_id[i] == id && P.spec_slot[i] == slot)
			found = false;
	pthread_mutex_unlock(&P.lock);
	return found;
}

/* Under P.lock: this thread's WAIT of @id begins; spec_wait_end() when it returns. */
static void spec_wait_locked(struct thr *t, int slot, uint32_t id)
{
	P.spec_slot[t->idx] = slot;
	P.spec_id[t->idx] = id;
}

/*
 * WAIT for one own job until it ends or @bound_ns passes (then a bound
 * failure). Signals interrupt it (EINTR without SA_RESTART): retry.
 */
static bool wait_job_bounded(struct thr *t, int slot, unsigned int gen, uint32_t id,
			     int64_t bound_ns, struct drm_frac_wait *w)
{
	int64_t deadline = now_ns() + bound_ns;
	struct xres r;

	do {
		memset(w, 0xa5, sizeof(*w));
		w->job_id = id;
		w->flags = 0;
		w->timeout_ns = 200000000;
		pthread_mutex_lock(&P.lock);
		spec_wait_locked(t, slot, id);
		pthread_mutex_unlock(&P.lock);
		r = xioctl(t, IO_WAIT, slot, DRM_IOCTL_FRAC_WAIT, w, sizeof(*w), 0, NULL, 0);
		spec_wait_end(t, slot, gen, id, true, &r);
		if (r.raced)
			return false;
		if (!r.err) {
			check_wait_result(t, w, id);
			job_released(slot, gen, id);
			return true;
		}
		if (r.err == EINVAL) {
			if (job_unreleased_unraced(slot, gen, id) || slot == SLOT_O)
				fail(F_STATE, "WAIT of own job %u not yet seen ended: EINVAL", id);
			job_released(slot, gen, id);
			return false;
		}
	} while (now_ns() < deadline && (r.err == ETIME || r.err == EINTR));
	if (r.err == ETIME)
		fail(F_BOUND, "job %u (fd%d) has not ended %.1f s after its wait began", id, slot,
		     bound_ns / 1e9);
	return false;
}

static void op_wait(struct thr *t)
{
	struct drm_frac_wait w;
	int slot = pick_slot(t), i, n = 0, cand[NJOB];
	unsigned int gen;
	uint32_t id = 0;
	int claimed = -1;
	bool own = false, released = false, future = false;
	struct xres r;

	pthread_mutex_lock(&P.lock);
	gen = P.gen[slot];
	switch (rnd(&t->rng, 10)) {
	case 0:
		id = P.released[slot];
		released = id != 0;
		break;
	case 1:
		/* An id no SUBMIT has returned yet, maybe one being allocated right now:
		 * the known NULL dereference of WAIT on a job whose SUBMIT has not finished. */
		if (!(opt.avoid_known & AK_WAIT)) {
			id = P.max_id[slot] + 1 + rnd(&t->rng, 3);
			future = true;
		} else {
			id = chance(&t->rng, 50) ? 0 : UINT32_MAX - rnd(&t->rng, 4);
		}
		break;
	case 2:
		id = chance(&t->rng, 50) ? 0 : UINT32_MAX;
		break;
	default:
		for (i = 0; i < NJOB; i++)
			if (P.jobs[i].state == J_PENDING && P.jobs[i].slot == slot &&
			    P.jobs[i].gen == gen)
				cand[n++] = i;
		if (n) {
			i = cand[rnd(&t->rng, n)];
			id = P.jobs[i].id;
			own = true;
			if (chance(&t->rng, 90)) {	/* else race another waiter */
				P.jobs[i].state = J_CLAIMED;
				claimed = i;
			} else {
				P.jobs[i].raced = true;
			}
		}
		break;
	}
	spec_wait_locked(t, slot, id);
	pthread_mutex_unlock(&P.lock);

	memset(&w, 0xa5, sizeof(w));
	w.job_id = id;
	w.flags = chance(&t->rng, 4) ? 1u << rnd(&t->rng, 32) : 0;
	switch (rnd(&t->rng, 8)) {
	case 0: w.timeout_ns = 0; break;
	case 1: w.timeout_ns = -1; break;	/* forever: signals may interrupt it */
	case 2: w.timeout_ns = INT64_MIN; break;
	case 3: w.timeout_ns = 1; break;
	case 4: w.timeout_ns = 1000 * (int64_t)rnd(&t->rng, 1000); break;
	default: w.timeout_ns = 1000000 * (int64_t)(1 + rnd(&t->rng, 300)); break;
	}
	if (w.timeout_ns < 0 && !own)
		w.timeout_ns = 1000000;		/* an unknown id answers at once anyway */
	r = xioctl(t, IO_WAIT, slot, DRM_IOCTL_FRAC_WAIT, &w, sizeof(w), 0, NULL, 0);
	spec_wait_end(t, slot, gen, id, own, &r);
	if (r.raced)
		goto unclaim;
	if (!r.err) {
		check_wait_result(t, &w, id);
		if (released)
			fail(F_STATE, "WAIT of job %u succeeded after it was seen ended", id);
		if (w.flags)
			fail(F_STATE, "WAIT with flags %#x succeeded", w.flags);
		job_released(slot, gen, id);
		return;
	}
	if (r.err == EINVAL && claimed >= 0 && !w.flags) {
		/* Gone from the file's table: released by us, or by another's WAIT. */
		if (job_unreleased_unraced(slot, gen, id))
			fail(F_STATE, "WAIT of own job %u not yet seen ended: EINVAL", id);
		job_released(slot, gen, id);
		return;
	}
	(void)future;
unclaim:
	if (claimed >= 0) {
		pthread_mutex_lock(&P.lock);
		if (P.jobs[claimed].state == J_CLAIMED && P.jobs[claimed].id == id &&
		    P.jobs[claimed].gen == gen)
			P.jobs[claimed].state = J_PENDING;
		pthread_mutex_unlock(&P.lock);
	}
}

/*
 * The WAIT spec_wait_locked() announced returned with @r; @id was chosen
 * when @slot's file was at @gen, @own: as the caller's own job. r->raced is
 * set when the file changed since @gen. A close of fd[slot] and its reopen
 * (op_fd_close()) give the new file the same fd number, and the WAIT may
 * have gone to it: its fd looked up after the close, or looked up again when
 * a signal restarted it (SA_RESTART). There it may have ended and released
 * the new file's job of the same id, which a thread of ours owns. So the id
 * counts as stolen when the WAIT succeeded on an id the caller does not own,
 * or after the file changed, whichever file it went to.
 */
static void spec_wait_end(struct thr *t, int slot, unsigned int gen, uint32_t id, bool own,
			  struct xres *r)
{
	pthread_mutex_lock(&P.lock);
	if (P.gen[slot] != gen)
		r->raced = true;
	if (!r->err && (!own || r->raced))
		P.stolen[slot][P.nstolen[slot]++ % 64] = id;
	P.spec_id[t->idx] = 0;
	pthread_mutex_unlock(&P.lock);
}

/*
 * A burst of WAITs on the ids SUBMIT will hand out next, while other threads
 * submit: the known NULL dereference of WAIT on a job whose SUBMIT has not
 * finished (its id already in the table, its fence not yet armed).
 */
static void op_wait_race(struct thr *t)
{
	int slot = pick_slot(t), k;
	struct drm_frac_wait w;
	unsigned int gen;
	struct xres r;

	if (opt.avoid_known & AK_WAIT)
		return;
	for (k = 0; k < 32; k++) {
		pthread_mutex_lock(&P.lock);
		memset(&w, 0, sizeof(w));
		gen = P.gen[slot];
		w.job_id = P.max_id[slot] + 1 + (k & 1);
		spec_wait_locked(t, slot, w.job_id);
		pthread_mutex_unlock(&P.lock);
		w.timeout_ns = k & 2 ? 0 : 1000;
		r = xioctl(t, IO_WAIT, slot, DRM_IOCTL_FRAC_WAIT, &w, sizeof(w), 0, NULL, 0);
		spec_wait_end(t, slot, gen, w.job_id, false, &r);
		if (!r.err && !r.raced) {
			/* Someone's job: it is released now, its owner will see EINVAL. */
			check_wait_result(t, &w, w.job_id);
			job_released(slot, gen, w.job_id);
		}
	}
}

/*
 * poll() answers a closed fd with POLLNVAL, not an error: judged as EBADF,
 * allowed only when the file was closed (op_fd_close()) during the call.
 */
static void op_poll(struct thr *t)
{
	int slot = pick_slot(t), s0, ret, err;
	unsigned int gen;
	struct pollfd p = { .fd = slot_fd(slot, &gen), .events = POLLIN };
	bool raced;

	t->seq++;
	tlog(t, "poll fd%d (%d)", slot, p.fd);
	if (p.fd < 0) {	/* the file is being reopened: not a call (poll() skips it) */
		tlog(t, "  = not called, raced");
		return;
	}
	s0 = sig_count;
	ret = poll(&p, 1, rnd(&t->rng, 3) ? 0 : (int)rnd(&t->rng, 20));
	err = ret < 0 ? errno : ret > 0 && (p.revents & POLLNVAL) ? EBADF : 0;
	raced = slot_raced(slot, gen);
	tlog(t, "  = %d revents %#x%s", ret, p.revents, raced ? " raced" : "");
	note_errno(t, IO_POLL, err, 0, sig_count != s0, raced, "poll");
}

/* Close the whole second file while other threads use it; open it again. */
static void op_fd_close(struct thr *t)
{
	int fd, i, nfd;

	pthread_mutex_lock(&P.lock);
	fd = P.fd[SLOT_B];
	if (fd >= 0) {
		__atomic_add_fetch(&P.gen[SLOT_B], 1, __ATOMIC_RELEASE);
		P.fd[SLOT_B] = -1;
		for (i = 0; i < NJOB; i++)
			if (P.jobs[i].state != J_FREE && P.jobs[i].slot == SLOT_B) {
				P.jobs[i].state = J_FREE;
				__atomic_fetch_add(&S->jobs_abandoned, 1, __ATOMIC_RELAXED);
			}
		for (i = 0; i < NBO; i++)
			if (P.bos[i].slot == SLOT_B)
				P.bos[i].used = false;
		memset(P.sync[SLOT_B], 0, sizeof(P.sync[SLOT_B]));
		memset(P.stolen[SLOT_B], 0, sizeof(P.stolen[SLOT_B]));
		P.released[SLOT_B] = P.max_id[SLOT_B] = P.dead_sync[SLOT_B] = 0;
	}
	pthread_mutex_unlock(&P.lock);
	t->seq++;
	tlog(t, "close fd%d (%d)", SLOT_B, fd);
	if (fd >= 0) {
		note_errno(t, IO_FD_CLOSE, close(fd) ? errno : 0, 0, false, false, "close");
		if (chance(&t->rng, 50))
			usleep(rnd(&t->rng, 5000));
	}
	nfd = open(dev_path, O_RDWR | O_CLOEXEC);
	if (nfd < 0) {
		fail(F_STATE, "reopening %s: %s", dev_path, strerror(errno));
		return;
	}
	pthread_mutex_lock(&P.lock);
	if (P.fd[SLOT_B] < 0)
		P.fd[SLOT_B] = nfd;
	else
		close(nfd);
	pthread_mutex_unlock(&P.lock);
}

/*
 * fork() with the files shared: the child (only syscalls, no locks: another
 * thread may hold ours) submits and waits on the parent's file, maybe closes
 * it, and reports through its exit status.
 */
static void op_fork(struct thr *t)
{
	int fd = P.fd[SLOT_A], st;
	uint64_t cr = t->rng;
	pid_t pid;

	t->seq++;
	tlog(t, "fork");
	if (t->log)
		fflush(t->log);
	pid = fork();
	if (pid < 0) {
		note_errno(t, IO_FORK, errno, 0, false, false, "fork");
		return;
	}
	if (!pid) {
		struct drm_frac_cmd c = { .op = DRM_FRAC_OP_NOP };
		struct drm_frac_submit s = { .cmds = (uintptr_t)&c, .cmd_count = 1,
					     .cmd_size = sizeof(c) };
		struct drm_frac_wait w = { 0 };
		int k, bad = 0;

		signal(SIGALRM, SIG_DFL);	/* a watchdog, not the restarting handler */
		alarm((unsigned int)(30 * opt.scale) + 5);
		for (k = 0; k < 4; k++) {
			s.queue = rnd(&cr, gdev.num_queues);
			if (ioctl(fd, DRM_IOCTL_FRAC_SUBMIT, &s)) {
				if (errno != EBADF && errno != ENOMEM && errno != EINTR)
					bad = 10 + k;	/* fd shared with a living parent */
				continue;
			}
			w.job_id = s.job_id;
			w.timeout_ns = chance(&cr, 50) ? -1 : 0;
			while (ioctl(fd, DRM_IOCTL_FRAC_WAIT, &w) && errno == EINTR)
				;
		}
		if (chance(&cr, 50))
			close(fd);
		_exit(bad);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	note_errno(t, IO_FORK, 0, 0, false, false, "fork");
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail(F_STATE, "forked child on the shared file: %s %d",
		     WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

/* ---- Data oracles on the oracle file ---------------------------------------- */

static bool all_bytes(const uint8_t *p, size_t len, uint8_t v, size_t *at)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v) {
			*at = i;
			return false;
		}
	return true;
}

/* A fresh BO reads as zeros: device memory must not leak a previous user's data. */
static void op_fresh(struct thr *t)
{
	bool devmem = (gdev.features & DRM_FRAC_FEAT_DEVMEM) && chance(&t->rng, 70);
	uint64_t size = 4096 * (1 + rnd(&t->rng, 16));
	struct frac_dev d = gdev;
	struct frac_bo bo;
	size_t at;
	int ret;

	d.fd = P.fd[SLOT_O];
	t->seq++;
	tlog(t, "fresh %s BO %" PRIu64, devmem ? "devmem" : "host", size);
	ret = frac_bo_create(&d, size, devmem ? DRM_FRAC_BO_DEVMEM : 0, &bo);
	note_errno(t, IO_BO_CREATE, -ret, 0, false, false, "oracle fresh BO");
	if (ret)
		return;
	ret = frac_bo_map(&d, &bo);
	if (ret) {
		fail(F_STATE, "mmap of a fresh %s BO: %s", devmem ? "devmem" : "host",
		     strerror(-ret));
	} else {
		if (!all_bytes(bo.map, size, 0, &at))
			fail(F_DATA, "fresh %s BO of %" PRIu64 " bytes (devmem offset ?) holds %#x at %zu: "
			     "not cleared", devmem ? "device-memory" : "host", size,
			     ((uint8_t *)bo.map)[at], at);
		/* Leave a mark for the next user of this memory to find. */
		memset(bo.map, 0xee, size);
	}
	frac_bo_destroy(&d, &bo);
}

/*
 * Canary: FILL this thread's BO on a random queue (faults hit it), wait, then
 * write a marker; the next round checks the marker first. A device that
 * writes after the job was reported ended (after a reset) changes it.
 */
static void op_canary(struct thr *t)
{
	struct frac_cmdlist cl;
	struct drm_frac_submit s = { 0 };
	struct drm_frac_wait w;
	uint32_t pat = (uint32_t)rnd64(&t->rng) | 1, late;
	size_t at;
	struct xres r;
	unsigned int gen;

	if (!t->canary.map)
		return;
	if (t->canary_armed && !all_bytes(t->canary.map, t->canary.size, t->marker, &at))
		fail(F_DATA, "BO written %.1f ms after its job was reported ended (byte %zu is %#x, "
		     "marker %#x): device DMA after the job ended?", (now_ns() - t->canary_t) / 1e6,
		     at, t->canary.map ? ((uint8_t *)t->canary.map)[at] : 0, t->marker);
	t->canary_armed = false;
	frac_cmdlist_init(&cl);
	frac_cmd_fill(&cl, &t->canary, 0, t->canary.size, pat);
	s.cmds = (uintptr_t)cl.cmds;
	s.cmd_count = cl.count;
	s.cmd_size = sizeof(cl.cmds[0]);
	s.queue = rnd(&t->rng, gdev.num_queues);
	s.priority = rnd(&t->rng, 3);
	/*
	 * Now and then make the job outlive the job timeout: the queue is reset
	 * under it while the device may still be moving its data.
	 */
	late = 0;
	if (opt.faults && chance(&t->rng, 25) && now_ns() < faults_end_ns() - 2000000000ll) {
		char what[48];

		late = job_timeout_ms + rnd(&t->rng, 2 * job_timeout_ms);
		snprintf(what, sizeof(what), "latency %u %u", s.queue, late);
		tlog(t, "inject %s", what);
		if (!inject(what))
			__atomic_fetch_add(&S->faults[4], 1, __ATOMIC_RELAXED);
	}
	slot_fd(SLOT_O, &gen);
	r = xioctl(t, IO_SUBMIT, SLOT_O, DRM_IOCTL_FRAC_SUBMIT, &s, sizeof(s), 0, cl.cmds,
		   sizeof(cl.cmds[0]));
	if (r.err) {
		fail(F_STATE, "oracle SUBMIT (a valid FILL): %s", ename(r.err));
		return;
	}
	__atomic_fetch_add(&S->jobs_submitted, 1, __ATOMIC_RELAXED);
	if (!wait_job_bounded(t, SLOT_O, gen, s.job_id, (int64_t)(30e9 * opt.scale), &w))
		return;
	if (w.status == 0) {
		uint32_t *p = t->canary.map;
		size_t i;

		for (i = 0; i < t->canary.size / 4; i++)
			if (p[i] != pat) {
				fail(F_DATA, "FILL ended with status 0, but word %zu is %#x, not %#x",
				     i, p[i], pat);
				break;
			}
	}
	t->marker = (uint8_t)(0x5a + rnd(&t->rng, 100));
	memset(t->canary.map, t->marker, t->canary.size);
	t->canary_armed = true;
	t->canary_t = now_ns();
	if (w.status || late || chance(&t->rng, 50)) {
		/* A failed job: give a device still running it time to write. */
		usleep(w.status || late ? 1000 * (late + 300) : 2000 + rnd(&t->rng, 20000));
		if (!all_bytes(t->canary.map, t->canary.size, t->marker, &at))
			fail(F_DATA, "BO written %.1f ms after its job (status %d) was reported ended "
			     "(byte %zu): device DMA after the job ended?",
			     (now_ns() - t->canary_t) / 1e6, w.status, at);
	}
}

/* Claim the right to a fatal fault or device reset: at most one per --fatal-every. */
static bool reset_claim(void)
{
	int64_t last = __atomic_load_n(&S->last_reset_ns, __ATOMIC_ACQUIRE), now = now_ns();

	if (opt.fatal_every <= 0 || now - last < (int64_t)(opt.fatal_every * 1e9) ||
	    now > faults_end_ns() - (int64_t)(2e9 * opt.scale))
		return false;
	return __atomic_compare_exchange_n(&S->last_reset_ns, &last, now, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_RELAXED);
}

/* op_canary_copy's own device resets: at most one per 3 s (a reset takes milliseconds). */
static bool copy_reset_claim(void)
{
	int64_t last = __atomic_load_n(&S->last_copy_reset_ns, __ATOMIC_ACQUIRE), now = now_ns();

	if (now - last < (int64_t)(3e9 * opt.scale) ||
	    now > faults_end_ns() - (int64_t)(2e9 * opt.scale))
		return false;
	return __atomic_compare_exchange_n(&S->last_copy_reset_ns, &last, now, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/*
 * The long-command canary: a device-memory COPY of tens of MiB, cut short by
 * the job timeout (injected latency) or a device reset while it runs. Once
 * WAIT reports it ended, the destination gets a marker that must stay: a
 * device still inside the copy would overwrite it.
 */
static void op_canary_copy(struct thr *t)
{
	/* 1/16 to 1/4 of device memory each: the longer the copy, the wider the window */
	uint64_t size = (gdev.devmem_size / 16 + rnd64(&t->rng) % (gdev.devmem_size * 3 / 16)) &
			~0xfffffull;
	struct frac_dev d = gdev;
	struct frac_bo src, dst;
	struct frac_cmdlist cl;
	struct drm_frac_submit s = { 0 };
	struct drm_frac_wait w;
	int zero = 0, how = rnd(&t->rng, 3);
	unsigned int gen;
	struct xres r;
	size_t at;
	uint8_t mark = (uint8_t)(0x30 + rnd(&t->rng, 64));

	if (!(gdev.features & DRM_FRAC_FEAT_DEVMEM) || !size || size * 2 > gdev.devmem_size / 2 ||
	    !__atomic_compare_exchange_n(&S->bigcopy, &zero, 1, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	d.fd = P.fd[SLOT_O];
	t->seq++;
	tlog(t, "canary copy %" PRIu64 " MiB, %s", size >> 20,
	     how == 0 ? "latency" : how == 1 ? "reset" : "plain");
	if (frac_bo_create(&d, size, DRM_FRAC_BO_DEVMEM, &src))
		goto out;
	if (frac_bo_create(&d, size, DRM_FRAC_BO_DEVMEM, &dst))
		goto out_src;
	if (frac_bo_map(&d, &dst))
		goto out_dst;
	frac_cmdlist_init(&cl);
	frac_cmd_copy(&cl, &dst, 0, &src, 0, size);
	s.cmds = (uintptr_t)cl.cmds;
	s.cmd_count = cl.count;
	s.cmd_size = sizeof(cl.cmds[0]);
	s.queue = rnd(&t->rng, gdev.num_queues);
	if (!opt.faults || now_ns() > faults_end_ns() - 2000000000ll)
		how = 2;
	if (how == 0) {
		char what[48];

		snprintf(what, sizeof(what), "latency %u %u", s.queue,
			 job_timeout_ms + rnd(&t->rng, job_timeout_ms));
		tlog(t, "inject %s", what);
		inject(what);
	}
	slot_fd(SLOT_O, &gen);
	r = xioctl(t, IO_SUBMIT, SLOT_O, DRM_IOCTL_FRAC_SUBMIT, &s, sizeof(s), 0, cl.cmds,
		   sizeof(cl.cmds[0]));
	if (r.err)
		goto out_dst;
	__atomic_fetch_add(&S->jobs_submitted, 1, __ATOMIC_RELAXED);
	if (how == 1 && copy_reset_claim()) {
		usleep(1000 + rnd(&t->rng, 20000));	/* into the copy */
		tlog(t, "inject reset");
		if (!inject("reset"))
			__atomic_fetch_add(&S->resets, 1, __ATOMIC_RELAXED);
	}
	if (!wait_job_bounded(t, SLOT_O, gen, s.job_id, (int64_t)(30e9 * opt.scale), &w))
		goto out_dst;
	memset(dst.map, mark, size);
	usleep(100000 + rnd(&t->rng, 400000));
	if (!all_bytes(dst.map, size, mark, &at))
		fail(F_DATA, "device-memory COPY of %" PRIu64 " MiB (status %d) wrote its destination "
		     "after WAIT reported it ended (byte %zu is %#x, marker %#x)", size >> 20,
		     w.status, at, ((uint8_t *)dst.map)[at], mark);
out_dst:
	frac_bo_destroy(&d, &dst);
out_src:
	frac_bo_destroy(&d, &src);
out:
	__atomic_store_n(&S->bigcopy, 0, __ATOMIC_RELEASE);
}

/* ---- Worker threads -------------------------------------------------------- */

struct op_def {
	void (*fn)(struct thr *t);
	unsigned int weight;
};

static const struct op_def ops[] = {
	{ op_get_param, 3 }, { op_bo_create, 12 }, { op_gem_close, 6 }, { op_bo_info, 4 },
	{ op_mmap, 5 }, { op_prime_export, 4 }, { op_prime_import, 4 }, { op_udmabuf, 1 },
	{ op_syncobj, 6 }, { op_submit, 26 }, { op_submit_batch, 6 }, { op_wait, 18 }, { op_wait_race, 2 }, { op_poll, 3 },
	{ op_fd_close, 1 }, { op_fork, 1 }, { op_fresh, 2 }, { op_canary, 3 },
	{ op_canary_copy, 2 },
};

static void *worker(void *arg)
{
	struct thr *t = arg;
	unsigned int total = 0, k, x;
	char path[PATH_MAX];
	struct frac_dev d = gdev;
	int64_t end = t_start_ns + (int64_t)(opt.duration * 1e9);

	self = t;
	P.tids[t->idx] = (pid_t)syscall(SYS_gettid);
	snprintf(path, sizeof(path), "%s/fuzz-p%d-t%d.log", opt.out, P.idx, t->idx);
	t->log = fopen(path, "w");
	if (t->log)
		setvbuf(t->log, NULL, _IOLBF, 0);	/* --out on tmpfs: survives an oops of ours */
	tlog(t, "seed %" PRIu64 " proc %d thread %d rng %#" PRIx64, opt.seed, P.idx, t->idx, t->rng);

	d.fd = P.fd[SLOT_O];
	if (!frac_bo_create(&d, 65536 * (1 + rnd(&t->rng, 4)), 0, &t->canary))
		frac_bo_map(&d, &t->canary);

	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		total += ops[k].weight;
	while (!__atomic_load_n(&S->stop, __ATOMIC_RELAXED) && now_ns() < end &&
	       (!opt.max_ops || t->nops < opt.max_ops)) {
		x = rnd(&t->rng, total);
		for (k = 0; x >= ops[k].weight; k++)
			x -= ops[k].weight;
		ops[k].fn(t);
		/* Keep the last 4-8 MiB of each log: long runs write to tmpfs. */
		if (t->log && !(t->nops & 1023) && ftell(t->log) > (4l << 20)) {
			char old[PATH_MAX + 8];

			snprintf(old, sizeof(old), "%s.1", path);
			fclose(t->log);
			rename(path, old);
			t->log = fopen(path, "w");
			if (t->log)
				setvbuf(t->log, NULL, _IOLBF, 0);
		}
	}
	for (k = 0; k < NMAP; k++)
		if (t->maps[k].p)
			munmap(t->maps[k].p, t->maps[k].len);
	if (t->log)
		fflush(t->log);
	t->finished = 1;
	return NULL;
}

/* Signals at random threads, SIGALRM with SA_RESTART, SIGUSR1 without. */
static volatile int signaller_stop;

static void *signaller(void *arg)
{
	uint64_t rng = *(uint64_t *)arg;
	pid_t pid = getpid();

	while (!signaller_stop) {
		pid_t tid = P.tids[rnd(&rng, opt.threads)];

		if (tid)
			syscall(SYS_tgkill, pid, tid, chance(&rng, 50) ? SIGALRM : SIGUSR1);
		usleep(1000 + rnd(&rng, 20000));
	}
	return NULL;
}

static int open_dev(void)
{
	return open(dev_path, O_RDWR | O_CLOEXEC);
}

/* After the op loop: every own job still pending must end within the bound. */
static void drain(struct thr *t)
{
	int i;

	for (i = 0; i < NJOB; i++) {
		struct job_ent j;
		struct drm_frac_wait w;
		int64_t left, stop;

		pthread_mutex_lock(&P.lock);
		j = P.jobs[i];
		pthread_mutex_unlock(&P.lock);
		if (j.state == J_FREE || j.gen != P.gen[j.slot])
			continue;
		/* The bound counts from when the faults stopped. */
		stop = __atomic_load_n(&S->fault_stop_ns, __ATOMIC_ACQUIRE);
		left = (stop ? stop : now_ns()) + (int64_t)(30e9 * opt.scale) - now_ns();
		if (left < 1000000)
			left = 1000000;
		wait_job_bounded(t, j.slot, j.gen, j.id, left, &w);
	}
}

/*
 * A worker's output goes to a file: one stuck in the kernel after an oops
 * must not hold the TAP pipe open.
 */
static void redirect_output(const char *name)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", opt.out, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	dup2(fd, 1);
	dup2(fd, 2);
	close(fd);
}

static int proc_main(int idx)
{
	struct thr th[MAX_THREADS], dt = { 0 };
	pthread_t pt[MAX_THREADS], sigt;
	struct sigaction sa = { 0 };
	uint64_t ps = opt.seed ^ (0x1000003ull * (uint64_t)(idx + 1)), sseed;
	int i, s;

	P.idx = idx;
	pthread_mutex_init(&P.lock, NULL);
	/*
	 * If memory runs out (a 4 GiB host BO pins its pages before the ioctl
	 * returns, and pinned shmem is nobody's RSS), the OOM killer must take a
	 * worker, not the shell running the test.
	 */
	{
		int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);

		if (fd >= 0) {
			if (write(fd, "1000", 4) != 4)
				fprintf(stderr, "oom_score_adj: %s\n", strerror(errno));
			close(fd);
		}
	}
	for (s = 0; s < NSLOT; s++) {
		P.fd[s] = open_dev();
		if (P.fd[s] < 0) {
			fail(F_RUN, "open %s: %s", dev_path, strerror(errno));
			return 1;
		}
	}
	for (i = 0; i < NDMABUF; i++)
		P.dmabuf[i] = -1;

	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_flags = 0;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_fault;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);

	for (i = 0; i < opt.threads; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].idx = i;
		th[i].rng = ps + 0x9e37ull * (uint64_t)(i + 1);
		rnd64(&th[i].rng);
		pthread_create(&pt[i], NULL, worker, &th[i]);
	}
	sseed = ps ^ 0x5157;
	pthread_create(&sigt, NULL, signaller, &sseed);
	for (i = 0; i < opt.threads; i++) {
		pthread_join(pt[i], NULL);
		if (!th[i].finished)
			fail(F_RUN, "thread %d died inside a syscall after %" PRIu64
			     " ops (killed by a kernel oops?): its last op is the last line "
			     "of fuzz-p%d-t%d.log", i, th[i].seq, idx, i);
	}
	signaller_stop = 1;
	pthread_join(sigt, NULL);

	/* Drain with the thread structure of thread 0 (its log). */
	dt = th[0];
	dt.log = NULL;
	self = &dt;
	{
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/fuzz-p%d-drain.log", opt.out, idx);
		dt.log = fopen(path, "w");
	}
	drain(&dt);
	if (dt.log)
		fclose(dt.log);
	for (i = 0; i < opt.threads; i++) {
		if (th[i].log)
			fclose(th[i].log);
		th[i].log = NULL;
	}
	return 0;
}

/* ---- Fault injector -------------------------------------------------------- */

static int inject(const char *what)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/%s", bdf,
		 strcmp(what, "reset") ? "inject_fault" : "reset");
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, strcmp(what, "reset") ? what : "1", strcmp(what, "reset") ? strlen(what) : 1) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Faults during the run, none in the last stretch: hang, drop-irq, error, dma,
 * latency on random queues every 20-300 ms; a fatal error or a debugfs device
 * reset at most every --fatal-every seconds (the reset work must finish and
 * the queues restart before the next one).
 */
static int injector_main(void)
{
	static const char *const kinds[] = { "hang", "drop-irq", "error", "dma", "latency" };
	uint64_t rng = opt.seed ^ 0xfa017ull;
	int64_t end = t_start_ns + (int64_t)(opt.duration * 1e9), quiet;
	char what[64], path[PATH_MAX];
	FILE *log;

	quiet = quiet_ns();
	snprintf(path, sizeof(path), "%s/fuzz-faults.log", opt.out);
	log = fopen(path, "w");
	while (now_ns() < end - quiet && !__atomic_load_n(&S->stop, __ATOMIC_RELAXED)) {
		unsigned int k = rnd(&rng, 5), q = rnd(&rng, gdev.num_queues), arg;
		int ret;

		usleep(20000 + rnd(&rng, 280000));
		if (reset_claim()) {
			snprintf(what, sizeof(what), "%s", chance(&rng, 50) ? "fatal" : "reset");
			__atomic_fetch_add(what[0] == 'f' ? &S->fatals : &S->resets, 1,
					   __ATOMIC_RELAXED);
		} else {
			switch (k) {
			case 0: arg = 0; break;
			case 1: arg = 1 + rnd(&rng, 3); break;
			case 4: arg = 10 + rnd(&rng, 1000); break;
			default: arg = 1 + rnd(&rng, 4); break;
			}
			snprintf(what, sizeof(what), "%s %u %u", kinds[k], q, arg);
			__atomic_fetch_add(&S->faults[k], 1, __ATOMIC_RELAXED);
		}
		ret = inject(what);
		if (log) {
			fprintf(log, "%.3f %s%s%s\n", (now_ns() - t_start_ns) / 1e9, what,
				ret ? " = " : "", ret ? strerror(-ret) : "");
			fflush(log);
		}
	}
	__atomic_store_n(&S->fault_stop_ns, now_ns(), __ATOMIC_RELEASE);
	if (log)
		fclose(log);
	return 0;
}

/* ---- After the run --------------------------------------------------------- */

static void after_run(void)
{
	struct frac_dev d;
	struct frac_bo bo;
	uint32_t q;
	int ret, k;

	ret = frac_open(gdev.index, &d);
	if (ret) {
		fail(F_AFTER, "open after the run: %s", strerror(-ret));
		return;
	}
	if (frac_bo_create(&d, 65536, 0, &bo) || frac_bo_map(&d, &bo)) {
		fail(F_AFTER, "BO after the run");
		frac_close(&d);
		return;
	}
	for (q = 0; q < d.num_queues; q++) {
		/* Faults may still be armed (error n, dma n, drop-irq, hang): a few tries. */
		for (k = 0; k < 12; k++) {
			struct frac_cmdlist cl;
			struct frac_job_result res;
			uint32_t id;

			frac_cmdlist_init(&cl);
			frac_cmd_fill(&cl, &bo, 0, 65536, 0x1234567u + q);
			frac_cmd_crc32c(&cl, &bo, 0, 65536, 0);
			ret = frac_submit(&d, q, &cl, NULL, &id);
			if (!ret)
				ret = frac_wait(&d, id, (int64_t)(20e9 * opt.scale), &res);
			if (ret) {
				fail(F_AFTER, "queue %u after the run: %s", q, strerror(-ret));
				break;
			}
			if (res.status)
				continue;
			if ((uint32_t)res.result != frac_crc32c(0, bo.map, 65536))
				fail(F_AFTER, "queue %u after the run: CRC32C %#x, expected %#x", q,
				     (uint32_t)res.result, frac_crc32c(0, bo.map, 65536));
			break;
		}
		if (k == 12)
			fail(F_AFTER, "queue %u: 12 jobs in a row failed after the run", q);
	}
	frac_bo_destroy(&d, &bo);
	frac_close(&d);
}

static uint64_t counter(const char *name)
{
	char path[256], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/frac/%s", gdev.index, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return UINT64_MAX;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return UINT64_MAX;
	buf[n] = '\0';
	return strtoull(buf, NULL, 0);
}

static void check_counters(uint64_t sub0, uint64_t done0, uint64_t failed0)
{
	uint64_t sub = counter("jobs_submitted"), done = counter("jobs_completed"),
		 failed = counter("jobs_failed");
	char path[256], line[512];
	FILE *f;

	if (sub == UINT64_MAX || done == UINT64_MAX || failed == UINT64_MAX) {
		fail(F_COUNTERS, "sysfs job counters unreadable");
		return;
	}
	printf("# sysfs: jobs_submitted +%" PRIu64 " jobs_completed +%" PRIu64
	       " jobs_failed +%" PRIu64 " job_timeouts %" PRIu64 " lost_interrupts %" PRIu64
	       " queue_resets %" PRIu64 " device_resets %" PRIu64 "\n", sub - sub0, done - done0,
	       failed - failed0, counter("job_timeouts"), counter("lost_interrupts"),
	       counter("queue_resets"), counter("device_resets"));
	/* Every job that reached a ring ended exactly once. */
	if (sub - sub0 != (done - done0) + (failed - failed0))
		fail(F_COUNTERS, "jobs_submitted +%" PRIu64 " != jobs_completed +%" PRIu64
		     " + jobs_failed +%" PRIu64 " with no job in flight", sub - sub0, done - done0,
		     failed - failed0);
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/queues", bdf);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "jobs_in_ring ");

		if (p && strtoul(p + 13, NULL, 0))
			fail(F_COUNTERS, "idle device, yet debugfs queues says %.*s", (int)strcspn(line, "\n"),
			     line);
	}
	fclose(f);
}

static void summary(void)
{
	int io, e;
	uint64_t tot = 0;

	printf("# ops by ioctl and errno:\n");
	for (io = 0; io < NIO; io++) {
		char buf[1024];
		size_t n = 0;
		uint64_t sum = 0;

		for (e = 0; e < NERR; e++)
			sum += S->count[io][e];
		if (!sum)
			continue;
		tot += sum;
		n += snprintf(buf + n, sizeof(buf) - n, "#   %-19s %8" PRIu64 ":", io_name[io], sum);
		for (e = 0; e < NERR && n < sizeof(buf) - 40; e++)
			if (S->count[io][e])
				n += snprintf(buf + n, sizeof(buf) - n, " %s %" PRIu64,
					      e ? ename(e) : "ok", S->count[io][e]);
		printf("%s\n", buf);
	}
	printf("# total %" PRIu64 " calls; %" PRIu64 " raced a close of their file, %" PRIu64
	       " interrupted by signals\n", tot, S->raced, S->signalled);
	printf("# jobs: %" PRIu64 " submitted, %" PRIu64 " seen ended, %" PRIu64
	       " not waited (their file closed, or NO_JOB_ID); statuses:", S->jobs_submitted, S->jobs_ended,
	       S->jobs_abandoned);
	for (e = 0; e < NERR; e++)
		if (S->status[e])
			printf(" %s %" PRIu64, e ? ename(e) : "0", S->status[e]);
	printf("\n# faults injected: hang %" PRIu64 " drop-irq %" PRIu64 " error %" PRIu64
	       " dma %" PRIu64 " latency %" PRIu64 " fatal %" PRIu64 " reset %" PRIu64 "\n",
	       S->faults[0], S->faults[1], S->faults[2], S->faults[3], S->faults[4], S->fatals,
	       S->resets);
	for (io = 0; io < NIO; io++)
		for (e = 0; e < NERR; e++)
			if (S->undoc[io][e])
				printf("# undocumented: %s -> %s, %" PRIu64 " times; first: %s\n",
				       io_name[io], ename(e), S->undoc[io][e],
				       S->undoc_ex[io][e]);
}

/* ---- Replay ---------------------------------------------------------------- */

static int unhex(const char *s, void *dst, size_t max)
{
	uint8_t *b = dst;
	size_t n = 0;
	unsigned int v;

	while (n < max && sscanf(s, "%2x", &v) == 1) {
		b[n++] = (uint8_t)v;
		s += 2;
		if (!isxdigit((unsigned char)s[0]))
			break;
	}
	return (int)n;
}

/*
 * Re-issue one thread's logged ioctls in order on fresh files (slot N of the
 * log is file N). Handles and job ids come out the same as long as the order
 * does; the extra (x=) buffer is the first command(s) of a SUBMIT or the
 * handle array of a syncobj call.
 */
static int replay(const char *file)
{
	static const struct { const char *name; unsigned long req; } rq[] = {
		{ "GET_PARAM", DRM_IOCTL_FRAC_GET_PARAM }, { "BO_CREATE", DRM_IOCTL_FRAC_BO_CREATE },
		{ "BO_INFO", DRM_IOCTL_FRAC_BO_INFO }, { "SUBMIT", DRM_IOCTL_FRAC_SUBMIT },
		/* Not SUBMIT_BATCH: the log does not hold its jobs' commands. */
		{ "WAIT", DRM_IOCTL_FRAC_WAIT }, { "GEM_CLOSE", DRM_IOCTL_GEM_CLOSE },
		{ "SYNCOBJ_CREATE", DRM_IOCTL_SYNCOBJ_CREATE },
		{ "SYNCOBJ_DESTROY", DRM_IOCTL_SYNCOBJ_DESTROY },
		{ "SYNCOBJ_WAIT", DRM_IOCTL_SYNCOBJ_WAIT }, { "SYNCOBJ_RESET", DRM_IOCTL_SYNCOBJ_RESET },
	};
	char line[4096], name[32], h[1024], got[32] = "";
	uint8_t arg[256], extra[1024];
	int fds[NSLOT], s, n = 0, differ = 0;
	FILE *f = fopen(file, "r");

	if (!f) {
		perror(file);
		return 1;
	}
	for (s = 0; s < NSLOT; s++)
		fds[s] = open_dev();
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '#'), *x;
		int slot, len, ret;
		size_t k;

		if (p && got[0] && (x = strstr(p, "   = "))) {
			/* the logged result of the call just replayed ("not called": none) */
			char want[32];

			if (sscanf(x + 5, "%31s", want) == 1 && strcmp(want, "not") &&
			    strcmp(want, got)) {
				printf("%d   logged %s, replayed %s\n", n, want, got);
				differ++;
			}
			got[0] = '\0';
			continue;
		}
		if (!p || sscanf(p, "#%*u %31s fd%d %1023s", name, &slot, h) != 3 || slot < 0 ||
		    slot >= NSLOT)
			continue;
		for (k = 0; k < sizeof(rq) / sizeof(rq[0]); k++)
			if (!strcmp(rq[k].name, name))
				break;
		if (k == sizeof(rq) / sizeof(rq[0]))
			continue;
		memset(arg, 0, sizeof(arg));
		len = unhex(h, arg, sizeof(arg));
		x = strstr(p, " x=");
		if (x) {
			unhex(x + 3, extra, sizeof(extra));
			if (!strcmp(name, "SUBMIT"))
				((struct drm_frac_submit *)arg)->cmds = (uintptr_t)extra;
			else if (!strcmp(name, "SYNCOBJ_WAIT"))
				((struct drm_syncobj_wait *)arg)->handles = (uintptr_t)extra;
			else
				((struct drm_syncobj_array *)arg)->handles = (uintptr_t)extra;
		}
		if (!strcmp(name, "WAIT") && ((struct drm_frac_wait *)arg)->timeout_ns < 0)
			((struct drm_frac_wait *)arg)->timeout_ns = 10000000000ll;
		(void)len;
		ret = ioctl(fds[slot], rq[k].req, arg);
		snprintf(got, sizeof(got), "%s", ret ? ename(errno) : "0");
		printf("%d %s fd%d = %s\n", ++n, name, slot, got);
	}
	fclose(f);
	printf("# replayed %d calls, %d with another result than logged\n", n, differ);
	for (s = 0; s < NSLOT; s++)
		close(fds[s]);
	return 0;
}

/* ---- main ------------------------------------------------------------------ */

static const char *avoid_str(void)
{
	switch (opt.avoid_known) {
	case 0: return "";
	case AK_WAIT: return " --avoid-known=wait";
	case AK_IMPORT: return " --avoid-known=import";
	default: return " --avoid-known";
	}
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [options]\n"
		"  --seed N          random seed (default: from the clock; printed)\n"
		"  --duration S      seconds of ops (default 30)\n"
		"  --ops N           at most N ops per thread (default: no bound)\n"
		"  --procs N         worker processes (default 3, max %d)\n"
		"  --threads N       threads per process (default 4, max %d)\n"
		"  --out DIR         op logs (default $FRAC_OUT or .)\n"
		"  --no-faults       inject no device faults\n"
		"  --fatal-every S   a fatal error or device reset at most every S s (default 10, 0 never)\n"
		"  --avoid-known[=wait,import]  avoid the patterns behind known crashes: WAIT of\n"
		"                    ids SUBMIT has not returned yet (wait), import of a dma-buf\n"
		"                    with more segments than the device takes (import); all by default\n"
		"  --big             also 4 GiB host BOs (may OOM a 2 GiB guest)\n"
		"  --scale X         multiply every time bound by X (debug kernels)\n"
		"  --tap             TAP output\n"
		"  --replay LOG      re-issue the ioctls of one thread's op log, in order\n",
		argv0, MAX_PROCS, MAX_THREADS);
	exit(2);
}

int main(int argc, char **argv)
{
	P.fd[0] = -1;	/* the main process: a worker opens its files */
	pid_t pids[MAX_PROCS + 1];
	uint64_t sub0, done0, failed0;
	int i, c, nfail = 0, injector = -1;
	int64_t hard;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

#define ARG(name) (!strcmp(a, name) && v && ++i)
		if (ARG("--seed"))
			opt.seed = strtoull(v, NULL, 0);
		else if (ARG("--duration"))
			opt.duration = atof(v);
		else if (ARG("--ops"))
			opt.max_ops = strtoull(v, NULL, 0);
		else if (ARG("--procs"))
			opt.procs = atoi(v);
		else if (ARG("--threads"))
			opt.threads = atoi(v);
		else if (ARG("--out"))
			opt.out = v;
		else if (ARG("--fatal-every"))
			opt.fatal_every = atof(v);
		else if (ARG("--scale"))
			opt.scale = atof(v);
		else if (ARG("--replay"))
			opt.replay = v;
		else if (!strcmp(a, "--no-faults"))
			opt.faults = 0;
		else if (!strcmp(a, "--avoid-known"))
			opt.avoid_known = AK_ALL;
		else if (!strncmp(a, "--avoid-known=", 14))
			opt.avoid_known = (strstr(a, "wait") ? AK_WAIT : 0) |
					  (strstr(a, "import") ? AK_IMPORT : 0);
		else if (!strcmp(a, "--big"))
			opt.big = 1;
		else if (!strcmp(a, "--tap"))
			opt.tap = 1;
		else
			usage(argv[0]);
#undef ARG
	}
	if (opt.procs < 1 || opt.procs > MAX_PROCS || opt.threads < 1 ||
	    opt.threads > MAX_THREADS || opt.scale <= 0)
		usage(argv[0]);
	if (!opt.seed)
		opt.seed = (uint64_t)now_ns() ^ ((uint64_t)getpid() << 32);
	if (!opt.out)
		opt.out = getenv("FRAC_OUT") ?: ".";
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (opt.tap)
		printf("TAP version 13\n");
	if (frac_open(-1, &gdev)) {
		if (opt.tap)
			printf("1..0 # SKIP no frac device\n");
		else
			fprintf(stderr, "no frac device\n");
		return opt.tap ? 0 : 4;
	}
	{
		uint64_t v;

		if (!frac_get_param(&gdev, DRM_FRAC_PARAM_MAX_CMDS, &v))
			max_cmds = (uint32_t)v;
	}
	snprintf(dev_path, sizeof(dev_path), "/dev/accel/accel%d", gdev.index);
	{
		char link[PATH_MAX], path[128];
		ssize_t n;

		snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device", gdev.index);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = '\0';
			const char *b = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;

			snprintf(bdf, sizeof(bdf), "%.63s", b);
		}
	}
	close(gdev.fd);
	if (opt.replay)
		return replay(opt.replay);

	{
		FILE *f = fopen("/sys/module/frac/parameters/job_timeout_ms", "r");

		if (f) {
			if (fscanf(f, "%u", &job_timeout_ms) != 1)
				job_timeout_ms = 5000;
			fclose(f);
		}
	}
	{
		char path[128];
		struct stat st;

		snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/iommu_group",
			 gdev.index);
		have_iommu = !stat(path, &st);
	}
	if (opt.faults && !(gdev.features & DRM_FRAC_FEAT_FAULT_INJ)) {
		printf("# device without fault injection: no faults\n");
		opt.faults = 0;
	}
	printf("# frac_fuzz --seed %" PRIu64 " --duration %g --procs %d --threads %d%s%s "
	       "--fatal-every %g --scale %g --out %s\n", opt.seed, opt.duration, opt.procs,
	       opt.threads, opt.faults ? "" : " --no-faults", avoid_str(),
	       opt.fatal_every, opt.scale, opt.out);
	printf("# device %s (%s): %u queues, %" PRIu64 " bytes devmem, features %#" PRIx64
	       ", gemm max %u, max cmds %u\n", dev_path, bdf, gdev.num_queues, gdev.devmem_size,
	       gdev.features, gdev.gemm_max_dim, max_cmds);
	if (opt.tap)
		printf("1..%d\n", NFAIL);

	S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (S == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	mkdir(opt.out, 0755);
	sub0 = counter("jobs_submitted");
	done0 = counter("jobs_completed");
	failed0 = counter("jobs_failed");
	t_start_ns = now_ns();
	S->last_reset_ns = t_start_ns;

	fflush(NULL);
	for (i = 0; i < opt.procs; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			char name[32];

			snprintf(name, sizeof(name), "fuzz-p%d.out", i);
			redirect_output(name);
			_exit(proc_main(i));
		}
	}
	if (opt.faults) {
		injector = fork();
		if (!injector) {
			redirect_output("fuzz-faults.out");
			_exit(injector_main());
		}
	} else {
		S->fault_stop_ns = t_start_ns + (int64_t)(opt.duration * 1e9);
	}

	/* Hard deadline: the run, the drain bound, slack. A worker past it is hung. */
	hard = t_start_ns + (int64_t)((opt.duration + 45 * opt.scale + 15) * 1e9);
	for (;;) {
		int st, left = 0;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p > 0) {
			for (i = 0; i < opt.procs; i++)
				if (pids[i] == p) {
					pids[i] = 0;
					if (!WIFEXITED(st) || WEXITSTATUS(st))
						fail(F_RUN, "worker %d ended by %s %d", i,
						     WIFEXITED(st) ? "exit" : "signal",
						     WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
				}
			if (p == injector)
				injector = 0;
			continue;
		}
		for (i = 0; i < opt.procs; i++)
			left += pids[i] > 0;
		if (!left && injector <= 0)
			break;
		if (now_ns() > hard) {
			S->stop = 1;
			for (i = 0; i < opt.procs; i++)
				if (pids[i] > 0) {
					fail(F_RUN, "worker %d still running %.0f s past the end "
					     "(hung in the kernel? see its log and dmesg)", i,
					     (now_ns() - t_start_ns) / 1e9 - opt.duration);
					kill(pids[i], SIGKILL);
				}
			if (injector > 0)
				kill(injector, SIGKILL);
			/* A task stuck in the kernel may not die: don't wait for it forever. */
			sleep(2);
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
			break;
		}
		usleep(100000);
	}

	if (!S->fails[F_RUN]) {
		after_run();
		check_counters(sub0, done0, failed0);
	}
	summary();
	printf("# seed %" PRIu64 ", %" PRIu64 " ops in %.1f s\n", opt.seed, S->ops_total,
	       (now_ns() - t_start_ns) / 1e9);
	for (c = 0; c < NFAIL; c++) {
		unsigned int k;

		if (opt.tap)
			printf("%s %d - %s\n", S->fails[c] ? "not ok" : "ok", c + 1, fail_desc[c]);
		else if (S->fails[c])
			printf("FAIL: %s\n", fail_desc[c]);
		for (k = 0; k < S->fails[c] && k < NMSG; k++)
			printf("#   %s\n", S->msg[c][k]);
		if (S->fails[c] > NMSG)
			printf("#   ... %" PRIu64 " in all\n", S->fails[c]);
		nfail += S->fails[c] > 0;
	}
	if (nfail)
		printf("# reproduce: frac_fuzz --seed %" PRIu64 " --procs %d --threads %d%s%s%s\n",
		       opt.seed, opt.procs, opt.threads, opt.faults ? "" : " --no-faults",
		       avoid_str(), opt.big ? " --big" : "");
	return nfail ? 1 : 0;
}
