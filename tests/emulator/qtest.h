/* SPDX-License-Identifier: (GPL-2.0-only OR MIT) */
/*
 * A minimal qtest + QMP client in plain C, modelled on QEMU's
 * tests/qtest/libqtest.c: the test listens on two unix sockets, starts QEMU
 * with "-qtest unix:<sock> -chardev socket,path=<qmp>,id=... -mon ...", and
 * QEMU connects to both. qtest is a line protocol ("readl 0x1000" ->
 * "OK 0x..."); QMP is JSON, one message per line.
 *
 * Every call is synchronous. If QEMU dies or stops answering (no reply within
 * QTS_REPLY_TIMEOUT_S), the session is marked dead, QEMU is killed, and every
 * later call returns at once with all-ones/zero data: tests then fail on their
 * checks instead of hanging. qts_alive() tells whether that happened.
 */
#ifndef FRAC_QTEST_H
#define FRAC_QTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QTS_REPLY_TIMEOUT_S	60

struct qts;

/*
 * Start @qemu with the qtest/QMP plumbing plus @args (split on white space,
 * no quoting). Returns NULL (after printing a "# " diagnostic) if QEMU does
 * not come up.
 */
struct qts *qts_start(const char *qemu, const char *args);

/*
 * Ask QEMU to quit (QMP "quit"), wait for it (killing it after a few
 * seconds), free @s. Returns the wait status, or -1 if QEMU had to be killed.
 */
int qts_quit(struct qts *s);

/*
 * Run @qemu with just @args (plus -L firmware dirs) for at most @timeout_s,
 * for start-up failures. Returns the wait status, -1 if it had to be killed;
 * its stderr goes to @log (NUL-terminated, truncated to @loglen).
 */
int qts_run(const char *qemu, const char *args, char *log, size_t loglen,
	    int timeout_s);

/* True while the connection works and the QEMU process exists. */
bool qts_alive(struct qts *s);
/* Path of the file that collects QEMU's stderr. */
const char *qts_log_path(struct qts *s);

/* Port I/O (PCI configuration mechanism #1 lives at 0xcf8/0xcfc). */
void qts_outb(struct qts *s, uint16_t port, uint8_t v);
void qts_outw(struct qts *s, uint16_t port, uint16_t v);
void qts_outl(struct qts *s, uint16_t port, uint32_t v);
uint8_t qts_inb(struct qts *s, uint16_t port);
uint16_t qts_inw(struct qts *s, uint16_t port);
uint32_t qts_inl(struct qts *s, uint16_t port);

/* Memory accesses through the CPU's address space (RAM and MMIO). */
void qts_writeb(struct qts *s, uint64_t addr, uint8_t v);
void qts_writew(struct qts *s, uint64_t addr, uint16_t v);
void qts_writel(struct qts *s, uint64_t addr, uint32_t v);
void qts_writeq(struct qts *s, uint64_t addr, uint64_t v);
uint8_t qts_readb(struct qts *s, uint64_t addr);
uint16_t qts_readw(struct qts *s, uint64_t addr);
uint32_t qts_readl(struct qts *s, uint64_t addr);
uint64_t qts_readq(struct qts *s, uint64_t addr);
/* writel, then readl, with nothing in QEMU's main loop in between */
uint32_t qts_writel_readl(struct qts *s, uint64_t waddr, uint32_t v, uint64_t raddr);

/* Bulk transfers: hex "read"/"write" for small buffers, base64 otherwise. */
void qts_memread(struct qts *s, uint64_t addr, void *buf, size_t len);
void qts_memwrite(struct qts *s, uint64_t addr, const void *buf, size_t len);
void qts_memset(struct qts *s, uint64_t addr, uint8_t val, size_t len);

/*
 * Advance the virtual clock by @ns and run the timers that expire; @ns == 0
 * means "to the next timer deadline". Returns the new virtual time, or -1 if
 * QEMU refused (no pending deadline, or the session is dead).
 */
int64_t qts_clock_step(struct qts *s, int64_t ns);

/*
 * Send one QMP command (a JSON object, printf format) and return the reply
 * line ({"return": ...} or {"error": ...}), skipping events (kept for
 * qts_qmp_events). malloc'd; NULL if the session is dead.
 */
char *qts_qmp(struct qts *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * The QMP events qts_qmp() has skipped since the last call, one JSON object
 * a line ("" if none); malloc'd.
 */
char *qts_qmp_events(struct qts *s);

/* qom-set of a string property; 0 on success, else -1 and *@err (malloc'd). */
int qts_qom_set_str(struct qts *s, const char *path, const char *prop,
		    const char *value, char **err);
/* qom-get of a string property; malloc'd value or NULL. */
char *qts_qom_get_str(struct qts *s, const char *path, const char *prop);
/* human-monitor-command; malloc'd output or NULL. */
char *qts_hmp(struct qts *s, const char *cmd);

/* JSON helpers used by the above, exported for tests. */
char *qts_json_escape(const char *in);
/* The decoded string value of the top-level key @key in @json, or NULL. */
char *qts_json_get_str(const char *json, const char *key);

#endif /* FRAC_QTEST_H */
