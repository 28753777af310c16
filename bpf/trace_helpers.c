// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Helpers shared by the frac BPF tools.
 *
 * print_stars(), print_log2_hist() and print_linear_hist() are adapted from
 * iovisor/bcc libbpf-tools/trace_helpers.c, Copyright (c) 2020 Wenbo Zhang.
 * The rest: Copyright (c) 2026 The frac authors.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "trace_helpers.h"

#define min(x, y) ((x) < (y) ? (x) : (y))

const char *tool_name = "frac";
bool tool_verbose;

/* ---- arguments ------------------------------------------------------------------ */

void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tool_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_USAGE);
}

bool parse_u64(const char *s, unsigned long long min, unsigned long long max,
	       unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

void parse_interval_count(const char *arg, int pos, unsigned long long *interval,
			  unsigned long long *count)
{
	if (pos == 0) {
		if (!parse_u64(arg, 1, 1000000, interval))
			usage_error("invalid interval '%s'", arg);
	} else if (pos == 1) {
		if (!parse_u64(arg, 1, 1000000000, count))
			usage_error("invalid count '%s'", arg);
	} else {
		usage_error("unexpected argument '%s'", arg);
	}
}

int libbpf_print_fn(enum libbpf_print_level level, const char *format, va_list args)
{
	if (level == LIBBPF_DEBUG && !tool_verbose)
		return 0;
	if (level == LIBBPF_INFO && !tool_verbose)
		return 0;
	return vfprintf(stderr, format, args);
}

/* ---- environment ---------------------------------------------------------------- */

#define CAP_SYS_ADMIN	21
#define CAP_PERFMON	38
#define CAP_BPF		39

/* Effective capabilities (capget), whatever the euid: root may have dropped them. */
static bool cap_effective(int cap, bool *known)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	if (syscall(SYS_capget, &hdr, data)) {
		*known = false;
		return false;
	}
	*known = true;
	return data[cap / 32].effective >> (cap % 32) & 1;
}

bool have_cap(int cap)
{
	bool known;

	return cap_effective(cap, &known);
}

static bool frac_module_loaded(void)
{
	return !access("/sys/module/" FRAC_MODULE, F_OK);
}

bool frac_check_env(void)
{
	bool known;

	if (!frac_module_loaded()) {
		fprintf(stderr, "%s: %s module not loaded (no frac tracepoints)\n", tool_name,
			FRAC_MODULE);
		return false;
	}
	if (!cap_effective(CAP_SYS_ADMIN, &known) && known &&
	    !(have_cap(CAP_BPF) && have_cap(CAP_PERFMON))) {
		fprintf(stderr, "%s: permission denied: needs CAP_BPF and CAP_PERFMON (and "
			"CAP_SYS_ADMIN for tp_btf/fentry), effective: %s%s%s\n", tool_name,
			have_cap(CAP_BPF) ? "CAP_BPF " : "", have_cap(CAP_PERFMON) ? "CAP_PERFMON " : "",
			!have_cap(CAP_BPF) && !have_cap(CAP_PERFMON) ? "neither" : "only");
		return false;
	}
	return true;
}

void report_bpf_error(const char *what, int err)
{
	if (err < 0)
		err = -err;
	if (err == EPERM || err == EACCES)
		fprintf(stderr, "%s: %s: permission denied (%s)\n", tool_name, what,
			!have_cap(CAP_SYS_ADMIN) ?
			"without CAP_SYS_ADMIN; under perf_event_paranoid > 2 kprobes need it" :
			"with CAP_SYS_ADMIN: a security module or a lockdown?");
	else if (err == ENOENT && !frac_module_loaded())
		fprintf(stderr, "%s: %s module not loaded (no frac tracepoints)\n", tool_name,
			FRAC_MODULE);
	else
		fprintf(stderr, "%s: %s: %s%s\n", tool_name, what, strerror(err),
			tool_verbose ? "" : " (-v shows libbpf's log)");
}

void report_fallback(const char *chosen, const char *instead_of, bool forced)
{
	fprintf(stderr, "%s: attaching with %s, not %s: %s\n", tool_name, chosen, instead_of,
		forced ? "--no-btf" : probe_why);
}

/* ---- probes --------------------------------------------------------------------- */

char probe_why[256];

static void probe_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void probe_failed(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(probe_why, sizeof(probe_why), fmt, ap);
	va_end(ap);
}

/* fd of the kernel BTF object named @module, its id in *id; -errno if none. */
static int module_btf_fd(const char *module, __u32 *id)
{
	__u32 next = 0;
	int err;

	while (!(err = bpf_btf_get_next_id(next, &next))) {
		struct bpf_btf_info info = {};
		__u32 len = sizeof(info);
		char name[64] = "";
		int fd;

		fd = bpf_btf_get_fd_by_id(next);
		if (fd < 0) {
			if (errno == EPERM)
				return -EPERM;
			continue;
		}
		info.name = (__u64)(unsigned long)name;
		info.name_len = sizeof(name);
		if (!bpf_btf_get_info_by_fd(fd, &info, &len) && info.kernel_btf &&
		    !strcmp(name, module)) {
			*id = next;
			return fd;
		}
		close(fd);
	}
	return errno == EPERM ? -EPERM : -ENOENT;
}

/* A module's BTF, opened once for all the probes of one object. */
struct probe_btf {
	int fd;
	struct btf *vmlinux, *btf;
};

static bool probe_btf_open(struct probe_btf *pb, const char *module)
{
	__u32 id;

	memset(pb, 0, sizeof(*pb));
	pb->fd = module_btf_fd(module, &id);
	if (pb->fd == -EPERM) {
		probe_failed("looking up the %s module's BTF needs CAP_SYS_ADMIN "
			     "(BPF_BTF_GET_NEXT_ID: EPERM)", module);
		return false;
	}
	if (pb->fd < 0) {
		probe_failed("no BTF of the %s module", module);
		return false;
	}
	pb->vmlinux = btf__load_vmlinux_btf();
	if (!pb->vmlinux) {
		probe_failed("no kernel BTF: %s", strerror(errno));
		return false;
	}
	pb->btf = btf__load_from_kernel_by_id_split(id, pb->vmlinux);
	if (!pb->btf) {
		probe_failed("reading the %s module's BTF: %s", module, strerror(errno));
		return false;
	}
	return true;
}

static void probe_btf_close(struct probe_btf *pb)
{
	btf__free(pb->btf);
	btf__free(pb->vmlinux);
	if (pb->fd >= 0)
		close(pb->fd);
}

/*
 * Load a do-nothing tracing program against @name (@kind) in the module's
 * BTF, attach it and detach it again, as libbpf-tools' fentry_can_attach():
 * loading alone does not show that the attach works. On failure probe_why
 * says why.
 */
static bool probe_tracing(const struct probe_btf *pb, const char *module, const char *name,
			  __u32 kind, enum bpf_attach_type type)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int prog_fd, link_fd, tid;

	tid = btf__find_by_name_kind(pb->btf, name, kind);
	if (tid <= 0) {
		probe_failed("no %s in the %s module's BTF", name, module);
		return false;
	}
	{
		LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type,
			    .attach_btf_id = tid, .attach_btf_obj_fd = pb->fd);

		prog_fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns,
					sizeof(insns) / sizeof(insns[0]), &opts);
	}
	if (prog_fd < 0) {
		probe_failed("loading a probe on %s: %s", name, strerror(errno));
		return false;
	}
	if (type == BPF_TRACE_RAW_TP)
		link_fd = bpf_raw_tracepoint_open(NULL, prog_fd);
	else
		link_fd = bpf_link_create(prog_fd, 0, type, NULL);
	if (link_fd < 0)
		probe_failed("attaching a probe to %s: %s", name, strerror(errno));
	else
		close(link_fd);		/* detach */
	close(prog_fd);
	if (tool_verbose)
		fprintf(stderr, "%s: probe %s: %s\n", tool_name, name,
			link_fd < 0 ? probe_why : "attached and detached");
	return link_fd >= 0;
}

/*
 * Probe every program of @obj whose section starts with one of @kinds, on
 * the target its section names, as it will be attached: the probe covers
 * what the tool uses, not a sample of it.
 */
struct probe_kind {
	const char *prefix;		/* section prefix: "tp_btf/" */
	const char *btf_prefix;		/* the target's BTF name: "btf_trace_" + tracepoint */
	__u32 btf_kind;
	enum bpf_attach_type type;
};

static bool probe_progs(struct bpf_object *obj, const char *module,
			const struct probe_kind *kinds, int nkinds)
{
	struct bpf_program *prog;
	struct probe_btf pb;
	bool ok;

	ok = probe_btf_open(&pb, module);
	bpf_object__for_each_program(prog, obj) {
		const char *sec = bpf_program__section_name(prog);
		char name[128];
		int k;

		for (k = 0; ok && k < nkinds; k++) {
			size_t len = strlen(kinds[k].prefix);

			if (strncmp(sec, kinds[k].prefix, len) || !sec[len])
				continue;
			snprintf(name, sizeof(name), "%s%s", kinds[k].btf_prefix, sec + len);
			ok = probe_tracing(&pb, module, name, kinds[k].btf_kind, kinds[k].type);
		}
	}
	probe_btf_close(&pb);
	return ok;
}

bool probe_tp_btf_progs(struct bpf_object *obj, const char *module)
{
	static const struct probe_kind kinds[] = {
		{ "tp_btf/", "btf_trace_", BTF_KIND_TYPEDEF, BPF_TRACE_RAW_TP },
	};

	return probe_progs(obj, module, kinds, 1);
}

bool probe_fentry_progs(struct bpf_object *obj, const char *module)
{
	static const struct probe_kind kinds[] = {
		{ "fentry/", "", BTF_KIND_FUNC, BPF_TRACE_FENTRY },
		{ "fexit/", "", BTF_KIND_FUNC, BPF_TRACE_FEXIT },
	};

	return probe_progs(obj, module, kinds, 2);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

void select_progs(struct bpf_object *obj, bool tp_btf, bool fentry)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		const char *sec = bpf_program__section_name(prog);
		bool load = true;

		if (has_prefix(sec, "tp_btf/"))
			load = tp_btf;
		else if (has_prefix(sec, "raw_tp/"))
			load = !tp_btf;
		else if (has_prefix(sec, "fentry/") || has_prefix(sec, "fexit/"))
			load = fentry;
		else if (has_prefix(sec, "kprobe/") || has_prefix(sec, "kretprobe/"))
			load = !fentry;
		bpf_program__set_autoload(prog, load);
	}
}

/* ---- histograms ----------------------------------------------------------------- */

const char *unit_name(int unit)
{
	return unit == UNIT_NSEC ? "nsecs" : unit == UNIT_MSEC ? "msecs" : "usecs";
}

unsigned long long unit_ns(int unit)
{
	return unit == UNIT_NSEC ? 1 : unit == UNIT_MSEC ? 1000000 : 1000;
}

static void print_stars(unsigned int val, unsigned int val_max, int width)
{
	int num_stars, num_spaces, i;
	bool need_plus;

	num_stars = min(val, val_max) * width / val_max;
	num_spaces = width - num_stars;
	need_plus = val > val_max;

	for (i = 0; i < num_stars; i++)
		printf("*");
	for (i = 0; i < num_spaces; i++)
		printf(" ");
	if (need_plus)
		printf("+");
}

void print_log2_hist(const unsigned int *vals, int vals_size, const char *val_type)
{
	int stars_max = 40, idx_max = -1;
	unsigned int val, val_max = 0;
	unsigned long long low, high;
	int stars, width, i;

	for (i = 0; i < vals_size; i++) {
		val = vals[i];
		if (val > 0)
			idx_max = i;
		if (val > val_max)
			val_max = val;
	}

	if (idx_max < 0)
		return;

	printf("%*s%-*s : count    distribution\n", idx_max <= 32 ? 5 : 15, "",
	       idx_max <= 32 ? 19 : 29, val_type);

	if (idx_max <= 32)
		stars = stars_max;
	else
		stars = stars_max / 2;

	for (i = 0; i <= idx_max; i++) {
		low = (1ULL << (i + 1)) >> 1;
		high = (1ULL << (i + 1)) - 1;
		if (low == high)
			low -= 1;
		val = vals[i];
		width = idx_max <= 32 ? 10 : 20;
		printf("%*lld -> %-*lld : %-8d |", width, low, width, high, val);
		print_stars(val, val_max, stars);
		printf("|\n");
	}
}

/* As bcc's, plus: the last slot holds everything above it. */
void print_linear_hist(const unsigned int *vals, int vals_size, unsigned int base,
		       unsigned int step, const char *val_type)
{
	int i, stars_max = 40, idx_min = -1, idx_max = -1;
	unsigned int val, val_max = 0;
	char label[32];

	for (i = 0; i < vals_size; i++) {
		val = vals[i];
		if (val > 0) {
			idx_max = i;
			if (idx_min < 0)
				idx_min = i;
		}
		if (val > val_max)
			val_max = val;
	}

	if (idx_max < 0)
		return;

	printf("     %-13s : count     distribution\n", val_type);
	for (i = idx_min; i <= idx_max; i++) {
		val = vals[i];
		if (!val)
			continue;
		if (i == vals_size - 1)
			snprintf(label, sizeof(label), ">= %u", base + i * step);
		else
			snprintf(label, sizeof(label), "%u", base + i * step);
		printf("        %-10s : %-8d |", label, val);
		print_stars(val, val_max, stars_max);
		printf("|\n");
	}
}

/* Range [low, low + width) of fine slot @i, in ns. */
static void fine_bounds(int i, double *low, double *width)
{
	int k, sub;

	if (i < FINE_SUB) {
		*low = i;
		*width = 1;
		return;
	}
	k = i / FINE_SUB + FINE_SUB_BITS - 1;
	sub = i % FINE_SUB;
	*low = (double)((unsigned long long)(FINE_SUB + sub) << (k - FINE_SUB_BITS));
	*width = (double)(1ULL << (k - FINE_SUB_BITS));
}

bool hist_percentile(const struct hist *h, double p, struct pct_est *out)
{
	unsigned long long total = 0, cum = 0, rank;
	double low, width, high;
	int i;

	for (i = 0; i < FINE_SLOTS; i++)
		total += h->fine[i];
	if (!total)
		return false;
	/* Nearest rank: the ceil(p * total)-th smallest sample, 1-based. */
	rank = (unsigned long long)(p * total);
	if (rank < p * total)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank > total)
		rank = total;
	for (i = 0; i < FINE_SLOTS; i++) {
		if (cum + h->fine[i] >= rank)
			break;
		cum += h->fine[i];
	}
	if (i == FINE_SLOTS)
		i = FINE_SLOTS - 1;
	fine_bounds(i, &low, &width);
	/* Samples are whole ns: the bucket holds [low, low + width - 1]. */
	high = low + width - 1;
	/*
	 * Narrow by the exact min and max where they lie in the bucket. A copy
	 * taken while a program was half-way through hist_add_cpu() can hold a
	 * sample in the fine slots that min or max do not know of yet (min ~0 and
	 * max 0 for an interval's first sample): then they are not in the bucket,
	 * and the bucket alone bounds the sample (hist_test "torn").
	 */
	if ((double)h->min > low && (double)h->min <= high)
		low = h->min;
	if ((double)h->max < high && (double)h->max >= low)
		high = h->max;
	out->low = low;
	out->high = high;
	/* Interpolate within what is left of the bucket, never out of it. */
	out->est = low + (high - low) * (rank - cum - 0.5) / h->fine[i];
	if (out->est < low)
		out->est = low;
	if (out->est > high)
		out->est = high;
	return true;
}

static void print_val(double ns, int unit)
{
	double v = ns / unit_ns(unit);

	if (unit == UNIT_NSEC)
		printf("%.0f", v);
	else if (unit == UNIT_USEC)
		printf("%.1f", v);
	else
		printf("%.3f", v);
}

static void print_pct_text(const struct hist *h, const char *name, double p, int unit)
{
	struct pct_est e;

	if (!hist_percentile(h, p, &e))
		return;
	printf("  %s ~", name);
	print_val(e.est, unit);
	printf(" [");
	print_val(e.low, unit);
	printf(", ");
	print_val(e.high, unit);
	printf("]");
}

void print_hist_summary(const struct hist *h, int unit)
{
	if (!h->count) {
		printf("count 0\n");
		return;
	}
	printf("count %llu  min ", (unsigned long long)h->count);
	print_val(h->min, unit);
	printf("  avg ");
	print_val((double)h->sum / h->count, unit);
	print_pct_text(h, "p50", 0.50, unit);
	print_pct_text(h, "p99", 0.99, unit);
	printf("  max ");
	print_val(h->max, unit);
	printf("  (%s; ~ bucket estimate, [] its bucket: the exact percentile lies there)\n",
	       unit_name(unit));
}

void print_hist(const struct hist *h, int unit, bool linear, unsigned int step)
{
	if (linear)
		print_linear_hist(h->slots, MAX_SLOTS, 0, step, unit_name(unit));
	else
		print_log2_hist(h->slots, MAX_SLOTS, unit_name(unit));
	print_hist_summary(h, unit);
}

static void print_pct_json(const struct hist *h, const char *name, double p)
{
	struct pct_est e;

	/* count 0 ("no samples") with fine slots set: a torn copy, no percentile either. */
	if (!h->count || !hist_percentile(h, p, &e)) {
		printf(",\"%s_ns\":null,\"%s_low_ns\":null,\"%s_high_ns\":null", name, name, name);
		return;
	}
	printf(",\"%s_ns\":%.0f,\"%s_low_ns\":%.0f,\"%s_high_ns\":%.0f", name, e.est, name, e.low,
	       name, e.high);
}

void print_hist_json(const struct hist *h, int unit, bool linear, unsigned int step)
{
	bool first = true;
	int i;

	printf("{\"count\":%llu,\"sum_ns\":%llu", (unsigned long long)h->count,
	       (unsigned long long)h->sum);
	if (h->count)
		printf(",\"min_ns\":%llu,\"avg_ns\":%.0f,\"max_ns\":%llu,\"null_reason\":null",
		       (unsigned long long)h->min, (double)h->sum / h->count,
		       (unsigned long long)h->max);
	else
		printf(",\"min_ns\":null,\"avg_ns\":null,\"max_ns\":null,"
		       "\"null_reason\":\"no samples\"");
	print_pct_json(h, "p50", 0.50);
	print_pct_json(h, "p99", 0.99);
	printf(",\"percentiles\":\"bucket estimates: the nearest-rank value lies in "
	       "[pN_low_ns, pN_high_ns], log-linear buckets of 1/%d of a power of 2\"", FINE_SUB);
	printf(",\"unit\":\"%s\",\"buckets\":[", unit_name(unit));
	for (i = 0; i < MAX_SLOTS; i++) {
		unsigned long long low, high;

		if (!h->slots[i])
			continue;
		if (linear) {
			low = (unsigned long long)i * step;
			high = low + step - 1;
		} else {
			low = (1ULL << (i + 1)) >> 1;
			high = (1ULL << (i + 1)) - 1;
			if (i == 0)
				low = 0;
		}
		printf("%s{\"low\":%llu,", first ? "" : ",", low);
		/* Every bucket carries high_reason, not only the one whose high is null. */
		if (i == MAX_SLOTS - 1 && linear)
			printf("\"high\":null,\"high_reason\":\"overflow bucket\",");
		else
			printf("\"high\":%llu,\"high_reason\":null,", high);
		printf("\"count\":%u}", h->slots[i]);
		first = false;
	}
	printf("]}");
}

/* ---- job losses ----------------------------------------------------------------- */

const char *const status_names[NR_STATUS] = {
	[STATUS_OK] = "ok",
	[STATUS_CANCELLED] = "cancelled",
	[STATUS_TIMEDOUT] = "timedout",
	[STATUS_EIO] = "eio",
	[STATUS_ENODEV] = "enodev",
	[STATUS_OTHER] = "other",
};

int job_stats_read(int fd, struct job_stats *out)
{
	int ncpus = libbpf_num_possible_cpus(), cpu;
	size_t i, nf = sizeof(*out) / sizeof(__u64);
	struct job_stats *vals;
	__u32 zero = 0;

	if (ncpus < 0)
		return ncpus;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &zero, vals)) {
		int err = -errno;

		free(vals);
		return err;
	}
	memset(out, 0, sizeof(*out));
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i < nf; i++)
			((__u64 *)out)[i] += ((__u64 *)&vals[cpu])[i];
	free(vals);
	return 0;
}

void job_stats_delta(struct job_stats *d, const struct job_stats *cur, struct job_stats *prev)
{
	size_t i, nf = sizeof(*d) / sizeof(__u64);

	for (i = 0; i < nf; i++)
		((__u64 *)d)[i] = ((const __u64 *)cur)[i] - ((__u64 *)prev)[i];
	*prev = *cur;
}

void prog_misses_init(struct prog_misses *m, struct bpf_object *obj)
{
	struct bpf_program *prog;

	memset(m, 0, sizeof(*m));
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog) || bpf_program__fd(prog) < 0 ||
		    m->n == MAX_TOOL_PROGS)
			continue;
		m->name[m->n] = bpf_program__name(prog);
		m->fd[m->n] = bpf_program__fd(prog);
		m->n++;
	}
	prog_misses_update(m, true);
}

void prog_misses_update(struct prog_misses *m, bool commit)
{
	int i;

	m->total = 0;
	m->err = 0;
	for (i = 0; i < m->n; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_prog_get_info_by_fd(m->fd[i], &info, &len)) {
			m->err = -errno;
			m->delta[i] = 0;
			continue;
		}
		m->delta[i] = info.recursion_misses - m->last[i];
		if (commit)
			m->last[i] = info.recursion_misses;
		m->total += m->delta[i];
	}
}

unsigned long long prog_misses_of(const struct prog_misses *m, const char *prefix)
{
	unsigned long long n = 0;
	int i;

	for (i = 0; i < m->n; i++)
		if (!strncmp(m->name[i], prefix, strlen(prefix)))
			n += m->delta[i];
	return n;
}

void prog_misses_print_json(const struct prog_misses *m)
{
	int i;

	if (m->err) {
		printf(",\"recursion_misses\":null,\"recursion_misses_reason\":");
		print_json_str(strerror(-m->err));
		printf(",\"recursion_misses_by_prog\":null");
		return;
	}
	printf(",\"recursion_misses\":%llu,\"recursion_misses_reason\":null,"
	       "\"recursion_misses_by_prog\":{", m->total);
	for (i = 0; i < m->n; i++)
		printf("%s\"%s\":%llu", i ? "," : "", m->name[i], m->delta[i]);
	printf("}");
}

unsigned long long job_stats_lost(const struct job_stats *d, const struct prog_misses *m)
{
	return d->unmatched + d->noid + d->hist_full + d->rb_dropped +
	       prog_misses_of(m, "job_done");
}

void print_job_stats_text(const struct job_stats *d, const struct prog_misses *m,
			  const char *failed_note)
{
	int i;

	printf("clamped %llu  no-irq %llu  no-device-times %llu  no-run-stamp %llu\n",
	       (unsigned long long)d->clamped, (unsigned long long)d->noirq,
	       (unsigned long long)d->nodev, (unsigned long long)d->norun);
	printf("ended:");
	for (i = 0; i < NR_STATUS; i++)
		printf(" %s %llu", status_names[i], (unsigned long long)d->status[i]);
	printf("%s\n", failed_note ? failed_note : "");
	printf("lost %llu: unmatched %llu  hist-map-full %llu  ringbuf-full %llu  "
	       "job-done-misses %llu",
	       job_stats_lost(d, m), (unsigned long long)d->unmatched,
	       (unsigned long long)d->hist_full, (unsigned long long)d->rb_dropped,
	       prog_misses_of(m, "job_done"));
	if (m->err)
		printf("  (recursion misses unknown: %s)", strerror(-m->err));
	else
		printf("  (bpf recursion misses, all programs: %llu)", m->total);
	printf("\n");
}

void print_job_stats_json(const struct job_stats *d, const struct prog_misses *m)
{
	int i;

	printf(",\"clamped\":%llu,\"noirq\":%llu,\"nodev\":%llu,\"norun\":%llu,\"nocomplete\":%llu",
	       (unsigned long long)d->clamped, (unsigned long long)d->noirq,
	       (unsigned long long)d->nodev, (unsigned long long)d->norun,
	       (unsigned long long)d->nocomplete);
	printf(",\"ended\":{");
	for (i = 0; i < NR_STATUS; i++)
		printf("%s\"%s\":%llu", i ? "," : "", status_names[i],
		       (unsigned long long)d->status[i]);
	printf("},\"lost\":{\"total\":%llu,\"unmatched\":%llu,\"table_full\":%llu,\"noid\":%llu,"
	       "\"hist_full\":%llu,\"rb_dropped\":%llu,\"fence_signal_misses\":%llu}",
	       job_stats_lost(d, m), (unsigned long long)d->unmatched,
	       (unsigned long long)d->table_full, (unsigned long long)d->noid,
	       (unsigned long long)d->hist_full, (unsigned long long)d->rb_dropped,
	       prog_misses_of(m, "job_done"));
	prog_misses_print_json(m);
}

/* ---- maps ---------------------------------------------------------------------- */

#define MAX_KEY_SIZE	64

/* The keys of a map, in one array of *n keys. */
static int map_keys(int fd, size_t key_size, char **out, size_t *n)
{
	size_t cap = 0, nkeys = 0;
	char *keys = NULL, *prev = NULL;
	char key[MAX_KEY_SIZE];

	if (key_size > sizeof(key))
		return -EINVAL;
	while (!bpf_map_get_next_key(fd, prev, key)) {
		if (nkeys == cap) {
			char *tmp = realloc(keys, (cap = cap ? cap * 2 : 64) * key_size);

			if (!tmp) {
				free(keys);
				return -ENOMEM;
			}
			keys = tmp;
		}
		memcpy(keys + nkeys * key_size, key, key_size);
		prev = keys + nkeys++ * key_size;
	}
	*out = keys;
	*n = nkeys;
	return 0;
}

__u32 gen_flip(__u32 *gen, __u64 *busy)
{
	__u32 old = __atomic_load_n(gen, __ATOMIC_RELAXED) & 1;
	struct timespec ts = { .tv_nsec = 20000 };
	int spins = 0;

	/* Sequentially consistent: the flip is seen before busy is read (frac_gen.bpf.h). */
	__atomic_store_n(gen, old ^ 1, __ATOMIC_SEQ_CST);
	/* A program's write takes microseconds: spin a little, then sleep between looks. */
	while (__atomic_load_n(&busy[old], __ATOMIC_SEQ_CST))
		if (++spins > 1000)
			nanosleep(&ts, NULL);
	return old;
}

static bool key_of_gen(const char *key, size_t gen_off, __u32 gen)
{
	__u32 g;

	memcpy(&g, key + gen_off, sizeof(g));
	return g == gen;
}

int map_drain(int fd, size_t key_size, size_t gen_off, __u32 gen, size_t value_off,
	      size_t entry_size, void **out, size_t *n)
{
	size_t nkeys, i;
	char *keys, *entries;
	int err;

	err = map_keys(fd, key_size, &keys, &nkeys);
	if (err)
		return err;
	entries = calloc(nkeys ? nkeys : 1, entry_size);
	if (!entries) {
		free(keys);
		return -ENOMEM;
	}
	*n = 0;
	for (i = 0; i < nkeys; i++) {
		char *e = entries + *n * entry_size;

		if (!key_of_gen(keys + i * key_size, gen_off, gen))
			continue;
		memcpy(e, keys + i * key_size, key_size);
		if (bpf_map_lookup_and_delete_elem(fd, e, e + value_off)) {
			if (errno == ENOENT)
				continue;
			err = -errno;
			break;
		}
		(*n)++;
	}
	free(keys);
	*out = entries;
	return err;
}

/*
 * map_drain() for a per-CPU hash map with values of @value_size bytes:
 * @merge(dst, src, first) folds each CPU's value into the entry's.
 */
int map_drain_percpu(int fd, size_t key_size, size_t gen_off, __u32 gen, size_t value_size,
		     size_t value_off, size_t entry_size,
		     void (*merge)(void *dst, const void *src, bool first), void **out, size_t *n)
{
	size_t stride = (value_size + 7) & ~(size_t)7, nkeys, i;
	int ncpus = libbpf_num_possible_cpus(), cpu, err;
	char *keys, *entries, *vals;

	if (ncpus < 0)
		return ncpus;
	err = map_keys(fd, key_size, &keys, &nkeys);
	if (err)
		return err;
	entries = calloc(nkeys ? nkeys : 1, entry_size);
	vals = calloc(ncpus, stride);
	if (!entries || !vals) {
		free(keys);
		free(entries);
		free(vals);
		return -ENOMEM;
	}
	*n = 0;
	for (i = 0; i < nkeys; i++) {
		char *e = entries + *n * entry_size;

		if (!key_of_gen(keys + i * key_size, gen_off, gen))
			continue;
		memcpy(e, keys + i * key_size, key_size);
		if (bpf_map_lookup_and_delete_elem(fd, e, vals)) {
			if (errno == ENOENT)
				continue;
			err = -errno;
			break;
		}
		for (cpu = 0; cpu < ncpus; cpu++)
			merge(e + value_off, vals + cpu * stride, cpu == 0);
		(*n)++;
	}
	free(keys);
	free(vals);
	*out = entries;
	return err;
}

/* Fold one CPU's histogram into @dst (a copy when @first). */
void hist_merge(struct hist *dst, const struct hist *src, bool first)
{
	int i;

	if (first) {
		*dst = *src;
		if (!dst->count)
			dst->min = ~0ULL;
		return;
	}
	if (src->count) {
		if (!dst->count || src->min < dst->min)
			dst->min = src->min;
		if (src->max > dst->max)
			dst->max = src->max;
	}
	dst->count += src->count;
	dst->sum += src->sum;
	for (i = 0; i < MAX_SLOTS; i++)
		dst->slots[i] += src->slots[i];
	for (i = 0; i < FINE_SLOTS; i++)
		dst->fine[i] += src->fine[i];
	if (!dst->comm[0])
		memcpy(dst->comm, src->comm, sizeof(dst->comm));
}

/* ---- misc ----------------------------------------------------------------------- */

void print_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

const char *frac_dir_name(unsigned int dir)
{
	static const char *const names[] = { "bidirectional", "to_device", "from_device", "none" };

	return dir < sizeof(names) / sizeof(names[0]) ? names[dir] : "unknown";
}

unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

const char *time_str(void)
{
	static char buf[16];
	time_t t = time(NULL);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	return buf;
}

const char *const stage_names[NR_STAGES] = {
	[STAGE_SUBMIT_RUN] = "submit -> run",
	[STAGE_RUN_START] = "run -> device start",
	[STAGE_EXEC] = "device execution",
	[STAGE_END_IRQ] = "device end -> interrupt",
	[STAGE_IRQ_SIGNAL] = "interrupt -> fence signalled",
	[STAGE_TOTAL] = "total: submit -> fence signalled",
};

const char *const stage_keys[NR_STAGES] = {
	[STAGE_SUBMIT_RUN] = "submit_run",
	[STAGE_RUN_START] = "run_start",
	[STAGE_EXEC] = "exec",
	[STAGE_END_IRQ] = "end_irq",
	[STAGE_IRQ_SIGNAL] = "irq_signal",
	[STAGE_TOTAL] = "total",
};
