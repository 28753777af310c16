// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * The fdinfo source: every process's fds that point at an accel node (char major 261), their
 * /proc/<pid>/fdinfo/<fd> parsed by fdinfo.c, de-duplicated into DRM clients by drm-client-id
 * (a dup'd fd, a fork or an fd passed over a socket share one struct drm_file).
 *
 * Cost: a walk must list every fd of every process, and that cannot be avoided (a new fd can
 * appear anywhere). What can be avoided is asking what each fd is: the walk keeps, per
 * (pid, fd), the fd's link text and whether it is an accel node. An fd whose link text has not
 * changed costs one readlinkat(); only a new or changed path costs an fstatat(), and sockets,
 * pipes and anon inodes ("socket:[...]") never do. Only accel fds' fdinfo is opened and read.
 * Processes are cached in an array sorted by pid, their fds in arrays sorted by fd; both are
 * rebuilt by merging with the previous walk, and entries of exited processes are freed.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fractop.h"

struct fd_ent {
	int fd;
	bool accel;
	unsigned int minor;
	char *link;
};

struct pid_ent {
	pid_t pid;
	struct fd_ent *fds;
	unsigned int nr_fds;
	bool seen;
};

struct walk_priv {
	int proc_fd;
	DIR *proc_dir;
	struct pid_ent *pids;
	unsigned int nr_pids, cap_pids;
	char *buf;
	size_t buf_len;
};

#define FDINFO_BUF_MIN	16384

static void free_fds(struct fd_ent *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		free(fds[i].link);
	free(fds);
}

static int walk_init(struct ft_source *src, const struct ft_config *cfg)
{
	struct walk_priv *p = calloc(1, sizeof(*p));
	char path[4096];

	if (!p)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/proc", cfg->sysroot);
	p->proc_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->proc_fd < 0) {
		int err = -errno;

		snprintf(src->why, sizeof(src->why), "%.160s: %s", path, strerror(errno));
		free(p);
		return err;
	}
	p->proc_dir = fdopendir(dup(p->proc_fd));
	p->buf_len = FDINFO_BUF_MIN;
	p->buf = malloc(p->buf_len);
	if (!p->proc_dir || !p->buf) {
		if (p->proc_dir)
			closedir(p->proc_dir);
		close(p->proc_fd);
		free(p->buf);
		free(p);
		return -ENOMEM;
	}
	src->priv = p;
	return 0;
}

/* The cached entry of @pid, inserted (empty) at its sorted place if new. */
static struct pid_ent *get_pid(struct walk_priv *p, pid_t pid)
{
	unsigned int lo = 0, hi = p->nr_pids;

	/* /proc lists pids in increasing order: try the end first. */
	if (p->nr_pids && p->pids[p->nr_pids - 1].pid < pid) {
		lo = p->nr_pids;
	} else {
		while (lo < hi) {
			unsigned int mid = (lo + hi) / 2;

			if (p->pids[mid].pid < pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < p->nr_pids && p->pids[lo].pid == pid)
			return &p->pids[lo];
	}
	if (p->nr_pids == p->cap_pids) {
		unsigned int cap = p->cap_pids ? 2 * p->cap_pids : 256;
		struct pid_ent *n = realloc(p->pids, cap * sizeof(*n));

		if (!n)
			return NULL;
		p->pids = n;
		p->cap_pids = cap;
	}
	memmove(&p->pids[lo + 1], &p->pids[lo], (p->nr_pids - lo) * sizeof(*p->pids));
	p->nr_pids++;
	memset(&p->pids[lo], 0, sizeof(p->pids[lo]));
	p->pids[lo].pid = pid;
	return &p->pids[lo];
}

static struct fd_ent *find_fd(struct fd_ent *fds, unsigned int n, int fd)
{
	unsigned int lo = 0, hi = n;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (fds[mid].fd < fd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && fds[lo].fd == fd ? &fds[lo] : NULL;
}

static int cmp_fd(const void *a, const void *b)
{
	const struct fd_ent *x = a, *y = b;

	return (x->fd > y->fd) - (x->fd < y->fd);
}

/* Read a whole small file relative to @dirfd into p->buf; its length or -errno. */
static ssize_t read_file(struct walk_priv *p, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	size_t len = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (len + 1 >= p->buf_len) {
			char *nb = realloc(p->buf, 2 * p->buf_len);

			if (!nb) {
				close(fd);
				return -ENOMEM;
			}
			p->buf = nb;
			p->buf_len *= 2;
		}
		n = read(fd, p->buf + len, p->buf_len - 1 - len);
		if (n < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	p->buf[len] = '\0';
	return len;
}

static void read_comm(struct walk_priv *p, int pid_fd, char *comm)
{
	ssize_t n = read_file(p, pid_fd, "comm");

	comm[0] = '\0';
	if (n <= 0)
		return;
	if (p->buf[n - 1] == '\n')
		p->buf[--n] = '\0';
	snprintf(comm, FT_COMM_LEN + 1, "%s", p->buf);
}

/*
 * Classify every fd of one process (reusing the cache), then read the fdinfo of its accel
 * fds into snapshot clients.
 */
static int walk_pid(struct walk_priv *p, struct pid_ent *pe, struct ft_snapshot *snap)
{
	struct fd_ent *nfds = NULL;
	unsigned int nr = 0, cap = 0, i;
	int pid_fd, dfd, ifd = -1;
	char name[24], comm[FT_COMM_LEN + 1] = "";
	struct dirent *de;
	DIR *dir;
	bool sorted = true, denied = false;

	snprintf(name, sizeof(name), "%d", pe->pid);
	pid_fd = openat(p->proc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pid_fd < 0)
		return -errno;
	dfd = openat(pid_fd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		int err = -errno;

		close(pid_fd);
		return err;
	}
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		close(pid_fd);
		return -ENOMEM;
	}
	while ((de = readdir(dir))) {
		char link[4096];
		struct fd_ent *old, *e;
		ssize_t n;
		char *end;
		long fd;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		fd = strtol(de->d_name, &end, 10);
		if (*end || fd < 0 || fd > INT32_MAX)
			continue;
		snap->fds_seen++;
		n = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);
		if (n < 0) {
			/* Closed meanwhile, or ptrace access refused (another user namespace). */
			denied |= errno == EACCES || errno == EPERM;
			continue;
		}
		link[n] = '\0';
		if (nr == cap) {
			unsigned int c = cap ? 2 * cap : 16;
			struct fd_ent *t = realloc(nfds, c * sizeof(*t));

			if (!t)
				break;
			nfds = t;
			cap = c;
		}
		e = &nfds[nr];
		e->fd = fd;
		if (nr && nfds[nr - 1].fd > fd)
			sorted = false;
		old = find_fd(pe->fds, pe->nr_fds, fd);
		if (old && old->link && !strcmp(old->link, link)) {
			/* Same fd, same target text: same verdict; take over the string. */
			*e = *old;
			old->link = NULL;
		} else {
			struct stat st;

			e->link = strdup(link);
			e->accel = false;
			e->minor = 0;
			if (link[0] == '/' && !fstatat(dirfd(dir), de->d_name, &st, 0) &&
			    S_ISCHR(st.st_mode) && major(st.st_rdev) == FT_ACCEL_MAJOR) {
				e->accel = true;
				e->minor = minor(st.st_rdev);
			}
		}
		nr++;
	}
	if (!sorted)
		qsort(nfds, nr, sizeof(*nfds), cmp_fd);
	free_fds(pe->fds, pe->nr_fds);
	pe->fds = nfds;
	pe->nr_fds = nr;

	for (i = 0; i < nr; i++) {
		struct ft_client *c;
		double t0, t;
		ssize_t len;
		int dev;

		if (!nfds[i].accel)
			continue;
		snap->accel_fds++;
		dev = ft_snapshot_dev_by_minor(snap, nfds[i].minor);
		if (dev < 0)
			continue;	/* not a device we show (-D, or it went away) */
		if (ifd < 0) {
			ifd = openat(pid_fd, "fdinfo", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (ifd < 0)
				break;
			read_comm(p, pid_fd, comm);
		}
		snprintf(name, sizeof(name), "%d", nfds[i].fd);
		t0 = ft_mono_s();
		len = read_file(p, ifd, name);
		t = (t0 + ft_mono_s()) / 2;
		if (len < 0)
			continue;
		c = ft_snapshot_add_client(snap);
		if (!c)
			break;
		if (ft_fdinfo_parse(p->buf, len, &c->fi)) {
			snap->nr_clients--;	/* not DRM fdinfo after all */
			continue;
		}
		c->dev = dev;
		c->pid = pe->pid;
		memcpy(c->comm, comm, sizeof(c->comm));
		c->nr_fds = 1;
		c->nr_pids = 1;
		c->t_mono = t;
	}
	if (ifd >= 0)
		close(ifd);
	closedir(dir);
	close(pid_fd);
	return denied ? -EACCES : 0;
}

static int cmp_client(const void *a, const void *b)
{
	const struct ft_client *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev - y->dev;
	if (x->fi.has_client_id != y->fi.has_client_id)
		return x->fi.has_client_id - y->fi.has_client_id;
	if (x->fi.client_id != y->fi.client_id)
		return x->fi.client_id < y->fi.client_id ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * One client per drm-client-id and device: the lowest pid holding it keeps it, the others
 * count in nr_fds/nr_pids. An fd without drm-client-id cannot be matched and stays alone.
 */
static void dedup_clients(struct ft_snapshot *snap)
{
	unsigned int i, j = 0;

	qsort(snap->clients, snap->nr_clients, sizeof(*snap->clients), cmp_client);
	for (i = 0; i < snap->nr_clients; i++) {
		struct ft_client *c = &snap->clients[i];

		if (j && c->fi.has_client_id) {
			struct ft_client *k = &snap->clients[j - 1];

			if (k->dev == c->dev && k->fi.has_client_id &&
			    k->fi.client_id == c->fi.client_id) {
				k->nr_fds++;
				/* Sorted by pid within the client: a new pid is a new process. */
				if (c->pid != snap->clients[i - 1].pid)
					k->nr_pids++;
				continue;
			}
		}
		if (j != i)
			snap->clients[j] = *c;
		j++;
	}
	snap->nr_clients = j;
}

static int walk_sample(struct ft_source *src, struct ft_snapshot *snap)
{
	struct walk_priv *p = src->priv;
	struct dirent *de;
	unsigned int i, j;

	for (i = 0; i < p->nr_pids; i++)
		p->pids[i].seen = false;
	rewinddir(p->proc_dir);
	while ((de = readdir(p->proc_dir))) {
		struct pid_ent *pe;
		char *end;
		long pid;
		int ret;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		pe = get_pid(p, pid);
		if (!pe)
			return -ENOMEM;
		pe->seen = true;
		snap->procs_seen++;
		ret = walk_pid(p, pe, snap);
		if (ret == -EACCES || ret == -EPERM)
			snap->procs_denied++;
	}
	for (i = 0, j = 0; i < p->nr_pids; i++) {
		if (p->pids[i].seen)
			p->pids[j++] = p->pids[i];
		else
			free_fds(p->pids[i].fds, p->pids[i].nr_fds);
	}
	p->nr_pids = j;
	dedup_clients(snap);
	snap->fdinfo_ok = true;
	return 0;
}

static void walk_fini(struct ft_source *src)
{
	struct walk_priv *p = src->priv;

	if (!p)
		return;
	for (unsigned int i = 0; i < p->nr_pids; i++)
		free_fds(p->pids[i].fds, p->pids[i].nr_fds);
	free(p->pids);
	free(p->buf);
	closedir(p->proc_dir);
	close(p->proc_fd);
	free(p);
	src->priv = NULL;
}

const struct ft_source_ops ft_fdinfo_source = {
	.name = "fdinfo",
	.init = walk_init,
	.sample = walk_sample,
	.fini = walk_fini,
};
