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

static bool has_bpf_caps(void)
{
	unsigned long long eff = 0;
	char line[256];
	bool found = false;
	FILE *f;

	if (geteuid() == 0)
		return true;
	f = fopen("/proc/self/status", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			found = true;
			break;
		}
	}
	fclose(f);
	if (!found)
		return false;
	return (eff >> CAP_SYS_ADMIN & 1) || ((eff >> CAP_BPF & 1) && (eff >> CAP_PERFMON & 1));
}

static bool frac_module_loaded(void)
{
	return !access("/sys/module/" FRAC_MODULE, F_OK);
}

bool frac_check_env(void)
{
	if (!frac_module_loaded()) {
		fprintf(stderr, "%s: %s module not loaded (no frac tracepoints)\n", tool_name,
			FRAC_MODULE);
		return false;
	}
	if (!has_bpf_caps()) {
		fprintf(stderr, "%s: permission denied: run as root (needs CAP_BPF and CAP_PERFMON, "
			"or CAP_SYS_ADMIN)\n", tool_name);
		return false;
	}
	return true;
}

void report_bpf_error(const char *what, int err)
{
	if (err < 0)
		err = -err;
	if (err == EPERM || err == EACCES)
		fprintf(stderr, "%s: %s: permission denied (run as root)\n", tool_name, what);
	else if (err == ENOENT && !frac_module_loaded())
		fprintf(stderr, "%s: %s module not loaded (no frac tracepoints)\n", tool_name,
			FRAC_MODULE);
	else
		fprintf(stderr, "%s: %s: %s%s\n", tool_name, what, strerror(err),
			tool_verbose ? "" : " (-v shows libbpf's log)");
}

/* ---- probes --------------------------------------------------------------------- */

/* fd of the kernel BTF object named @module, its id in *id; -errno if none. */
static int module_btf_fd(const char *module, __u32 *id)
{
	__u32 next = 0;

	while (!bpf_btf_get_next_id(next, &next)) {
		struct bpf_btf_info info = {};
		__u32 len = sizeof(info);
		char name[64] = "";
		int fd;

		fd = bpf_btf_get_fd_by_id(next);
		if (fd < 0)
			continue;
		info.name = (__u64)(unsigned long)name;
		info.name_len = sizeof(name);
		if (!bpf_btf_get_info_by_fd(fd, &info, &len) && info.kernel_btf &&
		    !strcmp(name, module)) {
			*id = next;
			return fd;
		}
		close(fd);
	}
	return -ENOENT;
}

/* Load a do-nothing tracing program against @name (@kind) in @module's BTF. */
static bool probe_tracing(const char *module, const char *name, __u32 kind,
			  enum bpf_attach_type type)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct btf *vmlinux = NULL, *btf = NULL;
	int btf_fd, prog_fd = -1, tid;
	__u32 id;

	btf_fd = module_btf_fd(module, &id);
	if (btf_fd < 0)
		return false;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		goto out;
	btf = btf__load_from_kernel_by_id_split(id, vmlinux);
	if (!btf)
		goto out;
	tid = btf__find_by_name_kind(btf, name, kind);
	if (tid > 0) {
		LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type,
			    .attach_btf_id = tid, .attach_btf_obj_fd = btf_fd);

		prog_fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns,
					sizeof(insns) / sizeof(insns[0]), &opts);
	}
out:
	btf__free(btf);
	btf__free(vmlinux);
	close(btf_fd);
	if (prog_fd < 0)
		return false;
	close(prog_fd);
	return true;
}

bool probe_tp_btf_module(const char *module, const char *tp)
{
	char name[128];

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	return probe_tracing(module, name, BTF_KIND_TYPEDEF, BPF_TRACE_RAW_TP);
}

bool probe_fentry_module(const char *module, const char *func)
{
	return probe_tracing(module, func, BTF_KIND_FUNC, BPF_TRACE_FENTRY);
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

double hist_percentile(const struct hist *h, double p)
{
	unsigned long long total = 0, cum = 0;
	double rank, low, width, v;
	int i;

	for (i = 0; i < FINE_SLOTS; i++)
		total += h->fine[i];
	if (!total)
		return 0;
	rank = p * total;
	if (rank < 1)
		rank = 1;
	for (i = 0; i < FINE_SLOTS; i++) {
		if (!h->fine[i])
			continue;
		if (cum + h->fine[i] >= rank)
			break;
		cum += h->fine[i];
	}
	if (i == FINE_SLOTS)
		i = FINE_SLOTS - 1;
	fine_bounds(i, &low, &width);
	/* Interpolate within the bucket, then stay within the exact extremes. */
	v = low + width * (rank - cum - 0.5) / h->fine[i];
	if (v < (double)h->min)
		v = h->min;
	if (v > (double)h->max)
		v = h->max;
	return v;
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
	printf("  p50 ");
	print_val(hist_percentile(h, 0.50), unit);
	printf("  p99 ");
	print_val(hist_percentile(h, 0.99), unit);
	printf("  max ");
	print_val(h->max, unit);
	printf("  (%s)\n", unit_name(unit));
}

void print_hist(const struct hist *h, int unit, bool linear, unsigned int step)
{
	if (linear)
		print_linear_hist(h->slots, MAX_SLOTS, 0, step, unit_name(unit));
	else
		print_log2_hist(h->slots, MAX_SLOTS, unit_name(unit));
	print_hist_summary(h, unit);
}

void print_hist_json(const struct hist *h, int unit, bool linear, unsigned int step)
{
	bool first = true;
	int i;

	printf("{\"count\":%llu,\"sum_ns\":%llu", (unsigned long long)h->count,
	       (unsigned long long)h->sum);
	if (h->count)
		printf(",\"min_ns\":%llu,\"avg_ns\":%.0f,\"p50_ns\":%.0f,\"p99_ns\":%.0f,"
		       "\"max_ns\":%llu", (unsigned long long)h->min, (double)h->sum / h->count,
		       hist_percentile(h, 0.50), hist_percentile(h, 0.99),
		       (unsigned long long)h->max);
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
		if (i == MAX_SLOTS - 1 && linear)
			printf("\"high\":null,");
		else
			printf("\"high\":%llu,", high);
		printf("\"count\":%u}", h->slots[i]);
		first = false;
	}
	printf("]}");
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

/*
 * Move every entry of a hash map into an array of entries of @entry_size
 * bytes, the key first and the value at @value_off (lookup and delete:
 * nothing is lost).
 */
int map_drain(int fd, size_t key_size, size_t value_off, size_t entry_size, void **out,
	      size_t *n)
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
int map_drain_percpu(int fd, size_t key_size, size_t value_size, size_t value_off,
		     size_t entry_size, void (*merge)(void *dst, const void *src, bool first),
		     void **out, size_t *n)
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

const char *frac_op_name(unsigned int op)
{
	static const char *const names[] = { "nop", "copy", "fill", "crc32c", "gemm", "timestamp" };

	return op < sizeof(names) / sizeof(names[0]) ? names[op] : "unknown";
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
