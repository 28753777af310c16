// SPDX-License-Identifier: (GPL-2.0-only OR MIT)
/*
 * Minimal qtest + QMP client, see qtest.h. Plain C11 + POSIX, no glib.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "qtest.h"

/* Largest chunk moved by one b64read/b64write command. */
#define QTS_B64_CHUNK	(1u << 20)
/* Up to this size a transfer uses the hex read/write commands. */
#define QTS_HEX_MAX	256

struct linebuf {
	char *buf;
	size_t len, cap;
	size_t consumed;	/* bytes of the line handed out last time */
};

struct qts {
	pid_t pid;
	int fd;			/* qtest */
	int qmp_fd;
	bool dead;
	int wstatus;		/* valid once reaped */
	bool reaped;
	struct linebuf qt, qmp;
	char dir[64];
	char sock[96], qmp_sock[96], log[96];
	char *cmd;		/* scratch for formatted commands */
	size_t cmd_cap;
	char *events;		/* QMP events qts_qmp() skipped, one a line */
	size_t events_len;
};

/* ---- process and sockets --------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void qts_reap(struct qts *s, bool block)
{
	int st;
	pid_t r;

	if (s->reaped || s->pid <= 0)
		return;
	r = waitpid(s->pid, &st, block ? 0 : WNOHANG);
	if (r == s->pid) {
		s->reaped = true;
		s->wstatus = st;
	}
}

static void qts_die(struct qts *s, const char *why)
{
	if (s->dead)
		return;
	s->dead = true;
	qts_reap(s, false);
	if (s->reaped) {
		if (WIFSIGNALED(s->wstatus))
			printf("# qtest: %s; QEMU killed by signal %d\n", why,
			       WTERMSIG(s->wstatus));
		else
			printf("# qtest: %s; QEMU exited with %d\n", why,
			       WEXITSTATUS(s->wstatus));
	} else {
		printf("# qtest: %s; killing QEMU\n", why);
		kill(s->pid, SIGKILL);
		qts_reap(s, true);
	}
	fflush(stdout);
}

bool qts_alive(struct qts *s)
{
	if (s->dead)
		return false;
	qts_reap(s, false);
	if (s->reaped) {
		qts_die(s, "QEMU is gone");
		return false;
	}
	return true;
}

const char *qts_log_path(struct qts *s)
{
	return s->log;
}

static int listen_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Accept one connection, giving up if QEMU exits first or after @timeout_s. */
static int accept_or_fail(struct qts *s, int lfd, double timeout_s)
{
	double end = now_s() + timeout_s;
	struct timeval tv = { .tv_sec = QTS_REPLY_TIMEOUT_S };

	while (now_s() < end) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		if (poll(&p, 1, 100) == 1) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0) {
				setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
				return fd;
			}
		}
		qts_reap(s, false);
		if (s->reaped)
			return -1;
	}
	return -1;
}

static void dump_log(const char *path, const char *prefix)
{
	FILE *f = fopen(path, "r");
	char line[1024];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		printf("%s%s\n", prefix, line);
	}
	fclose(f);
}

/* Split @args on white space and append to @argv (capacity @cap). */
static int split_args(char *args, char **argv, int n, int cap)
{
	for (char *tok = strtok(args, " \t\n"); tok && n < cap - 1;
	     tok = strtok(NULL, " \t\n"))
		argv[n++] = tok;
	argv[n] = NULL;
	return n;
}

static pid_t spawn(const char *qemu, char **argv, const char *log)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_RDWR);

		/* QEMU must not outlive the test. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0)
			dup2(fd, 2);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
		}
		execv(qemu, argv);
		fprintf(stderr, "exec %s: %s\n", qemu, strerror(errno));
		_exit(127);
	}
	return pid;
}

/* -L for the firmware QEMU's q35 loads even under qtest (SeaBIOS). */
static int add_firmware_dirs(char **argv, int n)
{
	static char *dirs[] = { "/usr/share/seabios", "/usr/share/qemu" };
	struct stat st;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (!stat(dirs[i], &st) && S_ISDIR(st.st_mode)) {
			argv[n++] = "-L";
			argv[n++] = dirs[i];
		}
	}
	return n;
}

/* ---- line I/O ---------------------------------------------------------- */

static bool send_all(struct qts *s, int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			qts_die(s, "write to QEMU failed");
			return false;
		}
		p += n;
		len -= n;
	}
	return true;
}

/* Next line from @fd, without its "\r\n"; valid until the next call. */
static char *read_line(struct qts *s, int fd, struct linebuf *b)
{
	double end = now_s() + QTS_REPLY_TIMEOUT_S;

	if (b->consumed) {
		memmove(b->buf, b->buf + b->consumed, b->len - b->consumed);
		b->len -= b->consumed;
		b->consumed = 0;
	}
	for (;;) {
		char *nl = b->len ? memchr(b->buf, '\n', b->len) : NULL;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int r;

		if (nl) {
			b->consumed = nl - b->buf + 1;
			*nl = 0;
			if (nl > b->buf && nl[-1] == '\r')
				nl[-1] = 0;
			return b->buf;
		}
		if (b->cap - b->len < 65536) {
			b->cap = b->cap ? b->cap * 2 : 131072;
			b->buf = realloc(b->buf, b->cap);
			if (!b->buf) {
				perror("realloc");
				exit(2);
			}
		}
		r = poll(&p, 1, 1000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			if (now_s() > end) {
				qts_die(s, "no reply from QEMU");
				return NULL;
			}
			qts_reap(s, false);
			if (s->reaped) {
				qts_die(s, "connection lost");
				return NULL;
			}
			continue;
		}
		n = read(fd, b->buf + b->len, b->cap - b->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			qts_die(s, "connection to QEMU closed");
			return NULL;
		}
		b->len += n;
	}
}

/* Send a qtest command line (without "\n"), return the reply line. */
static char *qt_raw(struct qts *s, const char *cmd, size_t len)
{
	char *line;

	if (s->dead)
		return NULL;
	if (!send_all(s, s->fd, cmd, len) || !send_all(s, s->fd, "\n", 1))
		return NULL;
	do {
		line = read_line(s, s->fd, &s->qt);
	} while (line && !strncmp(line, "IRQ", 3));
	return line;
}

static char *qt_cmd(struct qts *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static char *qt_cmd(struct qts *s, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return qt_raw(s, buf, n);
}

/* "OK <number>" -> number; anything else -> ~0 and a diagnostic. */
static uint64_t qt_value(struct qts *s, char *reply, const char *what)
{
	if (!reply)
		return ~0ULL;
	if (strncmp(reply, "OK ", 3)) {
		printf("# qtest: %s: unexpected reply '%.80s'\n", what, reply);
		return ~0ULL;
	}
	(void)s;
	return strtoull(reply + 3, NULL, 0);
}

static void qt_ok(struct qts *s, char *reply, const char *what)
{
	if (reply && strncmp(reply, "OK", 2))
		printf("# qtest: %s: unexpected reply '%.80s'\n", what, reply);
	(void)s;
}

/* ---- start / quit -------------------------------------------------------- */

struct qts *qts_start(const char *qemu, const char *args)
{
	struct qts *s = calloc(1, sizeof(*s));
	char *argv[128], *copy = strdup(args ? args : "");
	char qtest_arg[128], chardev_arg[160];
	int n = 0, lfd = -1, lqmp = -1;
	char *line;

	snprintf(s->dir, sizeof(s->dir), "/tmp/frac-qtest-XXXXXX");
	if (!mkdtemp(s->dir)) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(s->sock, sizeof(s->sock), "%s/qtest.sock", s->dir);
	snprintf(s->qmp_sock, sizeof(s->qmp_sock), "%s/qmp.sock", s->dir);
	snprintf(s->log, sizeof(s->log), "%s/qemu.log", s->dir);
	s->fd = s->qmp_fd = -1;

	lfd = listen_unix(s->sock);
	lqmp = listen_unix(s->qmp_sock);
	if (lfd < 0 || lqmp < 0) {
		printf("# qtest: cannot listen in %s: %s\n", s->dir, strerror(errno));
		goto fail;
	}
	snprintf(qtest_arg, sizeof(qtest_arg), "unix:%s", s->sock);
	snprintf(chardev_arg, sizeof(chardev_arg), "socket,path=%s,id=qmpchr", s->qmp_sock);
	argv[n++] = (char *)qemu;
	argv[n++] = "-qtest";
	argv[n++] = qtest_arg;
	argv[n++] = "-qtest-log";
	argv[n++] = "/dev/null";
	argv[n++] = "-chardev";
	argv[n++] = chardev_arg;
	argv[n++] = "-mon";
	argv[n++] = "chardev=qmpchr,mode=control";
	argv[n++] = "-display";
	argv[n++] = "none";
	argv[n++] = "-accel";
	argv[n++] = "qtest";
	n = add_firmware_dirs(argv, n);
	n = split_args(copy, argv, n, 128);

	s->pid = spawn(qemu, argv, s->log);
	if (s->pid < 0) {
		perror("fork");
		goto fail;
	}
	s->fd = accept_or_fail(s, lfd, 30);
	if (s->fd >= 0)
		s->qmp_fd = accept_or_fail(s, lqmp, 30);
	close(lfd);
	close(lqmp);
	lfd = lqmp = -1;
	if (s->fd < 0 || s->qmp_fd < 0) {
		printf("# qtest: QEMU did not connect\n");
		goto fail;
	}
	line = read_line(s, s->qmp_fd, &s->qmp);	/* greeting */
	if (!line || !strstr(line, "\"QMP\"")) {
		printf("# qtest: no QMP greeting\n");
		goto fail;
	}
	free(qts_qmp(s, "{\"execute\": \"qmp_capabilities\"}"));
	if (s->dead)
		goto fail;
	free(copy);
	return s;

fail:
	if (lfd >= 0)
		close(lfd);
	if (lqmp >= 0)
		close(lqmp);
	free(copy);
	qts_quit(s);
	return NULL;
}

int qts_quit(struct qts *s)
{
	int ret = -1;

	if (!s)
		return -1;
	if (!s->dead && s->qmp_fd >= 0) {
		const char *q = "{\"execute\": \"quit\"}\n";

		send(s->qmp_fd, q, strlen(q), MSG_NOSIGNAL);
	}
	if (s->pid > 0) {
		double end = now_s() + 10;

		while (!s->reaped && now_s() < end) {
			qts_reap(s, false);
			if (!s->reaped)
				usleep(10000);
		}
		if (!s->reaped) {
			printf("# qtest: QEMU did not quit, killing it\n");
			kill(s->pid, SIGKILL);
			qts_reap(s, true);
		} else {
			ret = s->wstatus;
		}
	}
	if (s->fd >= 0)
		close(s->fd);
	if (s->qmp_fd >= 0)
		close(s->qmp_fd);
	dump_log(s->log, "# qemu: ");
	unlink(s->sock);
	unlink(s->qmp_sock);
	unlink(s->log);
	rmdir(s->dir);
	free(s->qt.buf);
	free(s->qmp.buf);
	free(s->cmd);
	free(s->events);
	free(s);
	return ret;
}

int qts_run(const char *qemu, const char *args, char *log, size_t loglen,
	    int timeout_s)
{
	char dir[] = "/tmp/frac-qrun-XXXXXX", path[64], *argv[128];
	char *copy = strdup(args);
	struct qts s = { 0 };
	double end;
	int n = 0, ret = -1;
	FILE *f;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(path, sizeof(path), "%s/qemu.log", dir);
	argv[n++] = (char *)qemu;
	n = add_firmware_dirs(argv, n);
	split_args(copy, argv, n, 128);
	s.pid = spawn(qemu, argv, path);
	end = now_s() + timeout_s;
	while (!s.reaped && now_s() < end) {
		qts_reap(&s, false);
		if (!s.reaped)
			usleep(10000);
	}
	if (s.reaped) {
		ret = s.wstatus;
	} else {
		kill(s.pid, SIGKILL);
		qts_reap(&s, true);
	}
	log[0] = 0;
	f = fopen(path, "r");
	if (f) {
		size_t got = fread(log, 1, loglen - 1, f);

		log[got] = 0;
		fclose(f);
	}
	unlink(path);
	rmdir(dir);
	free(copy);
	return ret;
}

/* ---- qtest commands ------------------------------------------------------ */

void qts_outb(struct qts *s, uint16_t port, uint8_t v)
{
	qt_ok(s, qt_cmd(s, "outb 0x%x 0x%x", port, v), "outb");
}

void qts_outw(struct qts *s, uint16_t port, uint16_t v)
{
	qt_ok(s, qt_cmd(s, "outw 0x%x 0x%x", port, v), "outw");
}

void qts_outl(struct qts *s, uint16_t port, uint32_t v)
{
	qt_ok(s, qt_cmd(s, "outl 0x%x 0x%x", port, v), "outl");
}

uint8_t qts_inb(struct qts *s, uint16_t port)
{
	return qt_value(s, qt_cmd(s, "inb 0x%x", port), "inb");
}

uint16_t qts_inw(struct qts *s, uint16_t port)
{
	return qt_value(s, qt_cmd(s, "inw 0x%x", port), "inw");
}

uint32_t qts_inl(struct qts *s, uint16_t port)
{
	return qt_value(s, qt_cmd(s, "inl 0x%x", port), "inl");
}

void qts_writeb(struct qts *s, uint64_t addr, uint8_t v)
{
	qt_ok(s, qt_cmd(s, "writeb 0x%" PRIx64 " 0x%x", addr, v), "writeb");
}

void qts_writew(struct qts *s, uint64_t addr, uint16_t v)
{
	qt_ok(s, qt_cmd(s, "writew 0x%" PRIx64 " 0x%x", addr, v), "writew");
}

void qts_writel(struct qts *s, uint64_t addr, uint32_t v)
{
	qt_ok(s, qt_cmd(s, "writel 0x%" PRIx64 " 0x%x", addr, v), "writel");
}

void qts_writeq(struct qts *s, uint64_t addr, uint64_t v)
{
	qt_ok(s, qt_cmd(s, "writeq 0x%" PRIx64 " 0x%" PRIx64, addr, v), "writeq");
}

uint8_t qts_readb(struct qts *s, uint64_t addr)
{
	return qt_value(s, qt_cmd(s, "readb 0x%" PRIx64, addr), "readb");
}

uint16_t qts_readw(struct qts *s, uint64_t addr)
{
	return qt_value(s, qt_cmd(s, "readw 0x%" PRIx64, addr), "readw");
}

uint32_t qts_readl(struct qts *s, uint64_t addr)
{
	return qt_value(s, qt_cmd(s, "readl 0x%" PRIx64, addr), "readl");
}

/*
 * writel then readl in one message: QEMU runs both commands of one read in
 * the same callback, so no bottom half or timer can run between them.
 */
uint32_t qts_writel_readl(struct qts *s, uint64_t waddr, uint32_t v, uint64_t raddr)
{
	char buf[128], *line;
	int n;

	if (s->dead)
		return ~0u;
	n = snprintf(buf, sizeof(buf), "writel 0x%" PRIx64 " 0x%x\nreadl 0x%" PRIx64 "\n",
		     waddr, v, raddr);
	if (!send_all(s, s->fd, buf, n))
		return ~0u;
	do {
		line = read_line(s, s->fd, &s->qt);
	} while (line && !strncmp(line, "IRQ", 3));
	qt_ok(s, line, "writel");
	do {
		line = read_line(s, s->fd, &s->qt);
	} while (line && !strncmp(line, "IRQ", 3));
	return qt_value(s, line, "readl");
}

uint64_t qts_readq(struct qts *s, uint64_t addr)
{
	return qt_value(s, qt_cmd(s, "readq 0x%" PRIx64, addr), "readq");
}

static const char b64chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t b64_encode(const uint8_t *in, size_t len, char *out)
{
	size_t o = 0, i;

	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = in[i] << 16 | in[i + 1] << 8 | in[i + 2];

		out[o++] = b64chars[v >> 18];
		out[o++] = b64chars[(v >> 12) & 63];
		out[o++] = b64chars[(v >> 6) & 63];
		out[o++] = b64chars[v & 63];
	}
	if (i < len) {
		uint32_t v = in[i] << 16 | (i + 1 < len ? in[i + 1] << 8 : 0);

		out[o++] = b64chars[v >> 18];
		out[o++] = b64chars[(v >> 12) & 63];
		out[o++] = i + 1 < len ? b64chars[(v >> 6) & 63] : '=';
		out[o++] = '=';
	}
	out[o] = 0;
	return o;
}

static int b64_val(char c)
{
	const char *p = c ? strchr(b64chars, c) : NULL;

	return p ? (int)(p - b64chars) : -1;
}

/* Decode into @out (at most @cap bytes); returns bytes decoded. */
static size_t b64_decode(const char *in, uint8_t *out, size_t cap)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;

	for (; *in && *in != '='; in++) {
		int v = b64_val(*in);

		if (v < 0)
			continue;
		acc = acc << 6 | v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o < cap)
				out[o] = acc >> bits;
			o++;
		}
	}
	return o;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static char *cmd_buf(struct qts *s, size_t need)
{
	if (s->cmd_cap < need) {
		s->cmd_cap = need;
		s->cmd = realloc(s->cmd, need);
		if (!s->cmd) {
			perror("realloc");
			exit(2);
		}
	}
	return s->cmd;
}

void qts_memread(struct qts *s, uint64_t addr, void *buf, size_t len)
{
	uint8_t *p = buf;

	memset(buf, 0xff, len);
	while (len && !s->dead) {
		size_t n = len > QTS_B64_CHUNK ? QTS_B64_CHUNK : len;
		char *r;

		if (n <= QTS_HEX_MAX) {
			r = qt_cmd(s, "read 0x%" PRIx64 " 0x%zx", addr, n);
			if (!r || strncmp(r, "OK 0x", 5) || strlen(r + 5) != 2 * n) {
				printf("# qtest: read: bad reply\n");
				return;
			}
			for (size_t i = 0; i < n; i++)
				p[i] = hexval(r[5 + 2 * i]) << 4 | hexval(r[6 + 2 * i]);
		} else {
			r = qt_cmd(s, "b64read 0x%" PRIx64 " 0x%zx", addr, n);
			if (!r || strncmp(r, "OK ", 3) || b64_decode(r + 3, p, n) != n) {
				printf("# qtest: b64read: bad reply\n");
				return;
			}
		}
		p += n;
		addr += n;
		len -= n;
	}
}

void qts_memwrite(struct qts *s, uint64_t addr, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len && !s->dead) {
		size_t n = len > QTS_B64_CHUNK ? QTS_B64_CHUNK : len;
		char *c = cmd_buf(s, 64 + 2 * n + 4 * (n / 3 + 1));
		size_t o;

		if (n <= QTS_HEX_MAX) {
			o = sprintf(c, "write 0x%" PRIx64 " 0x%zx 0x", addr, n);
			for (size_t i = 0; i < n; i++)
				o += sprintf(c + o, "%02x", p[i]);
		} else {
			o = sprintf(c, "b64write 0x%" PRIx64 " 0x%zx ", addr, n);
			o += b64_encode(p, n, c + o);
		}
		qt_ok(s, qt_raw(s, c, o), "write");
		p += n;
		addr += n;
		len -= n;
	}
}

void qts_memset(struct qts *s, uint64_t addr, uint8_t val, size_t len)
{
	qt_ok(s, qt_cmd(s, "memset 0x%" PRIx64 " 0x%zx 0x%x", addr, len, val), "memset");
}

int64_t qts_clock_step(struct qts *s, int64_t ns)
{
	char *r = ns > 0 ? qt_cmd(s, "clock_step %" PRId64, ns) : qt_cmd(s, "clock_step");

	if (!r || strncmp(r, "OK ", 3))
		return -1;
	return strtoll(r + 3, NULL, 0);
}

/* ---- QMP ------------------------------------------------------------------ */

char *qts_qmp(struct qts *s, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int n;

	if (s->dead)
		return NULL;
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	if (!send_all(s, s->qmp_fd, msg, n) || !send_all(s, s->qmp_fd, "\n", 1)) {
		free(msg);
		return NULL;
	}
	free(msg);
	for (;;) {
		char *line = read_line(s, s->qmp_fd, &s->qmp);

		if (!line)
			return NULL;
		if (!strncmp(line, "{\"return\"", 9) || !strncmp(line, "{\"error\"", 8))
			return strdup(line);
		/* an event: keep it for qts_qmp_events() */
		n = strlen(line);
		msg = realloc(s->events, s->events_len + n + 2);
		if (!msg)
			continue;
		s->events = msg;
		memcpy(s->events + s->events_len, line, n);
		s->events_len += n;
		s->events[s->events_len++] = '\n';
		s->events[s->events_len] = '\0';
	}
}

char *qts_qmp_events(struct qts *s)
{
	char *ev = s->events ? s->events : strdup("");

	s->events = NULL;
	s->events_len = 0;
	return ev;
}

char *qts_json_escape(const char *in)
{
	char *out = malloc(strlen(in) * 6 + 1), *o = out;

	for (; *in; in++) {
		unsigned char c = *in;

		if (c == '"' || c == '\\') {
			*o++ = '\\';
			*o++ = c;
		} else if (c < 0x20) {
			o += sprintf(o, "\\u%04x", c);
		} else {
			*o++ = c;
		}
	}
	*o = 0;
	return out;
}

char *qts_json_get_str(const char *json, const char *key)
{
	char pat[128];
	const char *p;
	char *out, *o;

	snprintf(pat, sizeof(pat), "\"%s\"", key);
	p = strstr(json, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	while (*p == ' ' || *p == ':')
		p++;
	if (*p != '"')
		return NULL;
	p++;
	out = o = malloc(strlen(p) + 1);
	for (; *p && *p != '"'; p++) {
		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		switch (*++p) {
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'u': {
			unsigned v = 0;

			for (int i = 0; i < 4 && p[1]; i++)
				v = v * 16 + hexval(*++p);
			*o++ = v < 0x80 ? (char)v : '?';
			break;
		}
		case 0:
			p--;
			break;
		default:
			*o++ = *p;
		}
	}
	*o = 0;
	return out;
}

int qts_qom_set_str(struct qts *s, const char *path, const char *prop,
		    const char *value, char **err)
{
	char *v = qts_json_escape(value);
	char *r = qts_qmp(s, "{\"execute\": \"qom-set\", \"arguments\": {\"path\": \"%s\", "
			  "\"property\": \"%s\", \"value\": \"%s\"}}", path, prop, v);
	int ret = 0;

	free(v);
	if (err)
		*err = NULL;
	if (!r || strncmp(r, "{\"return\"", 9)) {
		ret = -1;
		if (err)
			*err = r ? qts_json_get_str(r, "desc") : strdup("QEMU is gone");
	}
	free(r);
	return ret;
}

char *qts_qom_get_str(struct qts *s, const char *path, const char *prop)
{
	char *r = qts_qmp(s, "{\"execute\": \"qom-get\", \"arguments\": {\"path\": \"%s\", "
			  "\"property\": \"%s\"}}", path, prop);
	char *v = r ? qts_json_get_str(r, "return") : NULL;

	free(r);
	return v;
}

char *qts_hmp(struct qts *s, const char *cmd)
{
	char *c = qts_json_escape(cmd);
	char *r = qts_qmp(s, "{\"execute\": \"human-monitor-command\", \"arguments\": "
			  "{\"command-line\": \"%s\"}}", c);
	char *v = r ? qts_json_get_str(r, "return") : NULL;

	free(c);
	free(r);
	return v;
}
