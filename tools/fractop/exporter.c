// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * --listen ADDR:PORT: a Prometheus exporter. fractop samples every -d seconds, as in the other
 * modes, renders the exposition once per sample (prom.c) and serves it to every scrape of
 * GET /metrics until the next sample; anything else gets 404 (another path), 405 (another
 * method) or 400/431 (not a request it can read).
 *
 * One thread, one poll() loop over the listening socket and up to MAX_CONNS connections, all
 * non-blocking: a slow or stalled client holds only its own connection (and is dropped after
 * IDLE_S seconds without progress), never the sampling or another scrape. HTTP/1.1 keep-alive
 * as Prometheus uses it: requests on a connection are answered in order, one at a time;
 * "Connection: close" or HTTP/1.0 without keep-alive closes after the response. Request bodies
 * are not read: a request that announces one is answered and the connection closed.
 */

#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fractop.h"

#define MAX_CONNS	64
#define REQ_MAX		8192	/* request line + headers */
#define IDLE_S		30.0

struct conn {
	int fd;
	char in[REQ_MAX];
	size_t in_len;
	char *out;
	size_t out_len, out_off;
	bool close_after;
	double last;		/* CLOCK_MONOTONIC of the last progress */
};

struct server {
	int lfd;
	struct conn conns[MAX_CONNS];
	unsigned int nr;
	char *body;		/* the exposition of the last sample */
	size_t body_len;
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int open_listener(const char *spec, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *res, *ai;
	char host[256], port[16], nh[NI_MAXHOST], np[NI_MAXSERV];
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = -1, ret, one = 1, saved = 0;

	if (ft_parse_listen(spec, host, sizeof(host), port, sizeof(port))) {
		snprintf(err, errlen, "--listen %s: not ADDR:PORT", spec);
		return -EINVAL;
	}
	ret = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (ret) {
		snprintf(err, errlen, "--listen %s: %s", spec, gai_strerror(ret));
		return -EINVAL;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 64))
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errlen, "--listen %s: %s", spec, strerror(saved));
		return -saved;
	}
	/* Say where, with the port the kernel chose for :0 (the tests use that). */
	if (!getsockname(fd, (struct sockaddr *)&ss, &sl) &&
	    !getnameinfo((struct sockaddr *)&ss, sl, nh, sizeof(nh), np, sizeof(np),
			 NI_NUMERICHOST | NI_NUMERICSERV))
		fprintf(stderr, "fractop: serving http://%s%s%s:%s/metrics\n",
			strchr(nh, ':') ? "[" : "", nh, strchr(nh, ':') ? "]" : "", np);
	return fd;
}

static void drop(struct server *sv, unsigned int i)
{
	close(sv->conns[i].fd);
	free(sv->conns[i].out);
	sv->conns[i] = sv->conns[--sv->nr];
}

static int respond(struct conn *c, int status, const char *reason, const char *ctype,
		   const char *body, size_t blen, bool head, const char *extra)
{
	char hdr[512];
	int hl = snprintf(hdr, sizeof(hdr),
			  "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n",
			  status, reason, ctype, blen, extra ? extra : "",
			  c->close_after ? "Connection: close\r\n" : "");
	size_t n = hl + (head ? 0 : blen);

	c->out = malloc(n);
	if (!c->out)
		return -ENOMEM;
	memcpy(c->out, hdr, hl);
	if (!head)
		memcpy(c->out + hl, body, blen);
	c->out_len = n;
	c->out_off = 0;
	return 0;
}

static int error_page(struct conn *c, int status, const char *reason, bool head, const char *extra)
{
	char body[96];
	int n = snprintf(body, sizeof(body), "%d %s\n", status, reason);

	return respond(c, status, reason, "text/plain; charset=utf-8", body, n, head, extra);
}

/* A header's value (case-insensitive name) in [hdrs, end), or NULL; *len its length. */
static const char *header(const char *hdrs, const char *end, const char *name, size_t *len)
{
	size_t nl = strlen(name);

	for (const char *p = hdrs; p < end;) {
		const char *eol = memchr(p, '\n', end - p);
		const char *le = eol ? eol : end;

		if ((size_t)(le - p) > nl && p[nl] == ':' && !strncasecmp(p, name, nl)) {
			const char *v = p + nl + 1;

			while (v < le && (*v == ' ' || *v == '\t'))
				v++;
			*len = le - v;
			while (*len && (v[*len - 1] == '\r' || v[*len - 1] == ' '))
				(*len)--;
			return v;
		}
		p = le + 1;
	}
	return NULL;
}

static bool has_token(const char *v, size_t len, const char *tok)
{
	size_t tl = strlen(tok);

	for (size_t i = 0; v && i + tl <= len; i++)
		if (!strncasecmp(v + i, tok, tl) && (i == 0 || v[i - 1] == ' ' || v[i - 1] == ',') &&
		    (i + tl == len || v[i + tl] == ' ' || v[i + tl] == ','))
			return true;
	return false;
}

/* One complete request at the start of c->in (@len bytes with its blank line): the response. */
static int handle_request(struct server *sv, struct conn *c, size_t len)
{
	char line[1100], method[16], target[1024], version[16];
	const char *hdrs = memchr(c->in, '\n', len), *end = c->in + len, *v;
	size_t vl, ll = hdrs ? (size_t)(hdrs - c->in) : 0;
	bool head, keep;

	if (ll >= sizeof(line))
		ll = sizeof(line) - 1;
	memcpy(line, c->in, ll);
	line[ll] = '\0';
	if (!hdrs || sscanf(line, "%15s %1023s %15s", method, target, version) != 3 ||
	    strncmp(version, "HTTP/1.", 7)) {
		c->close_after = true;
		return error_page(c, 400, "Bad Request", false, NULL);
	}
	hdrs++;
	keep = strcmp(version, "HTTP/1.0");
	v = header(hdrs, end, "Connection", &vl);
	if (v && has_token(v, vl, "close"))
		keep = false;
	else if (v && has_token(v, vl, "keep-alive"))
		keep = true;
	/* A body would follow: it is not read, so the connection cannot go on. */
	if (header(hdrs, end, "Transfer-Encoding", &vl) ||
	    ((v = header(hdrs, end, "Content-Length", &vl)) && !(vl == 1 && *v == '0')))
		keep = false;
	c->close_after = !keep;
	head = !strcmp(method, "HEAD");
	if (strcmp(method, "GET") && !head) {
		c->close_after = true;
		return error_page(c, 405, "Method Not Allowed", false, "Allow: GET, HEAD\r\n");
	}
	if (strcmp(target, "/metrics") && strncmp(target, "/metrics?", 9))
		return error_page(c, 404, "Not Found", head, NULL);
	return respond(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", sv->body,
		       sv->body_len, head, NULL);
}

/* The requests buffered on a connection, while its previous response is out. */
static int process_input(struct server *sv, struct conn *c)
{
	while (!c->out && c->in_len) {
		char *e = memmem(c->in, c->in_len, "\r\n\r\n", 4);
		size_t len, skip = 4;

		if (!e) {
			e = memmem(c->in, c->in_len, "\n\n", 2);
			skip = 2;
		}
		if (!e) {
			if (c->in_len == sizeof(c->in)) {
				c->close_after = true;
				c->in_len = 0;
				return error_page(c, 431, "Request Header Fields Too Large", false, NULL);
			}
			return 0;
		}
		len = e - c->in + skip;
		if (handle_request(sv, c, len))
			return -ENOMEM;
		memmove(c->in, c->in + len, c->in_len - len);
		c->in_len -= len;
		if (c->close_after)
			c->in_len = 0;
	}
	return 0;
}

/* false: drop the connection. */
static bool on_readable(struct server *sv, struct conn *c)
{
	for (;;) {
		ssize_t n;

		if (c->in_len == sizeof(c->in) || c->close_after)
			break;
		n = read(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len);
		if (n == 0)
			return false;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			return false;
		}
		c->in_len += n;
		c->last = mono();
	}
	return process_input(sv, c) == 0;
}

static bool on_writable(struct server *sv, struct conn *c)
{
	while (c->out && c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return true;
			return false;
		}
		c->out_off += n;
		c->last = mono();
	}
	if (!c->out)
		return true;
	free(c->out);
	c->out = NULL;
	if (c->close_after)
		return false;
	return process_input(sv, c) == 0;
}

static void accept_all(struct server *sv)
{
	for (;;) {
		int fd = accept4(sv->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		if (sv->nr == MAX_CONNS) {
			close(fd);	/* full: Prometheus retries at its next interval */
			continue;
		}
		memset(&sv->conns[sv->nr], 0, sizeof(sv->conns[0]));
		sv->conns[sv->nr].fd = fd;
		sv->conns[sv->nr].last = mono();
		sv->nr++;
	}
}

static int render(struct server *sv, struct ft_model *m, const struct ft_prom_self *self)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -ENOMEM;
	ft_prom_write(f, &m->view, &m->prev, self);
	if (fclose(f)) {
		free(buf);
		return -ENOMEM;
	}
	free(sv->body);
	sv->body = buf;
	sv->body_len = len;
	return 0;
}

static int take_sample(struct server *sv, struct ft_source *srcs, unsigned int nr,
		       struct ft_model *m, const struct ft_export_opts *o, struct ft_prom_self *self)
{
	struct ft_snapshot snap = { 0 };
	int ret;

	if (ft_sample_all(srcs, nr, &snap) == -ENOMEM) {
		ft_snapshot_free(&snap);
		return -ENOMEM;
	}
	ret = o->rec ? ft_record_sample(o->rec, &snap) : 0;
	if (ret < 0) {
		ft_snapshot_free(&snap);
		fprintf(stderr, "fractop: writing the record: %s\n", strerror(-ret));
		return ret;
	}
	ret = ft_model_update(m, &snap);
	ft_snapshot_free(&snap);
	if (ret)
		return ret;
	self->samples++;
	return render(sv, m, self);
}

int ft_export_run(struct ft_source *srcs, unsigned int nr_srcs, struct ft_model *m,
		  const struct ft_export_opts *o)
{
	static struct server sv;
	struct pollfd pfd[MAX_CONNS + 1];
	struct ft_prom_self self = { 0 };
	char err[300];
	double next;
	long samples = 0;
	int ret = 0;

	sv.lfd = open_listener(o->listen, err, sizeof(err));
	if (sv.lfd < 0) {
		fprintf(stderr, "fractop: %s\n", err);
		return 1;
	}
	/* Counters need no baseline: the first sample is served at once. */
	ret = take_sample(&sv, srcs, nr_srcs, m, o, &self);
	next = mono() + o->delay_s;
	while (!ret && !ft_stop) {
		double now = mono(), wait = next - now;
		unsigned int i;
		int n;

		for (i = 0; i < sv.nr; i++) {
			double left = sv.conns[i].last + IDLE_S - now;

			if (left < wait)
				wait = left;
		}
		pfd[0] = (struct pollfd){ .fd = sv.lfd, .events = POLLIN };
		for (i = 0; i < sv.nr; i++)
			pfd[i + 1] = (struct pollfd){
				.fd = sv.conns[i].fd,
				.events = sv.conns[i].out ? POLLOUT : POLLIN,
			};
		n = poll(pfd, sv.nr + 1, wait > 0 ? (int)ceil(wait * 1000) : 0);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "fractop: poll: %s\n", strerror(errno));
			ret = 1;
			break;
		}
		now = mono();
		/* Connections from the last to the first: drop() moves the last one into i. */
		for (i = sv.nr; i-- > 0;) {
			struct conn *c = &sv.conns[i];
			short re = pfd[i + 1].revents;
			bool keep = true;

			if (re & (POLLERR | POLLNVAL))
				keep = false;
			else if (re & POLLOUT)
				keep = on_writable(&sv, c);
			else if (re & (POLLIN | POLLHUP))
				keep = on_readable(&sv, c);
			if (keep && c->out && !(re & POLLOUT))
				keep = on_writable(&sv, c);	/* answer at once when it can */
			if (!keep || now - c->last > IDLE_S)
				drop(&sv, i);
		}
		if (n > 0 && (pfd[0].revents & POLLIN))
			accept_all(&sv);
		if (mono() >= next) {
			next += o->delay_s;
			if (next < mono())
				next = mono() + o->delay_s;
			ret = take_sample(&sv, srcs, nr_srcs, m, o, &self);
			if (!ret && o->iterations > 0 && ++samples >= o->iterations)
				break;
		}
	}
	if (ret == -ENOMEM)
		fprintf(stderr, "fractop: out of memory\n");
	while (sv.nr)
		drop(&sv, sv.nr - 1);
	close(sv.lfd);
	free(sv.body);
	return ret ? 1 : 0;
}
