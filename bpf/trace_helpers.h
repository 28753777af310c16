/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers shared by the frac BPF tools. The histogram printers come from
 * iovisor/bcc libbpf-tools/trace_helpers.c (Copyright (c) 2020 Wenbo Zhang).
 */
#ifndef __TRACE_HELPERS_H
#define __TRACE_HELPERS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

#include "frac_hist.h"
#include "frac_job.h"

#define NSEC_PER_SEC	1000000000ULL
#define FRAC_MODULE	"frac"

/*
 * The version of the tools' JSON: every object carries "schema_version".
 * 2: schema_version; a field without a value is null with a "<field>_reason"
 * (or "null_reason") beside it, never absent; percentiles with their bucket
 * bounds; loss counters. Fields of version 1 keep their names and meaning.
 */
#define FRAC_JSON_SCHEMA	2

/* Exit statuses of every tool. */
#define EXIT_FAIL	1	/* could not trace (privileges, module, BPF) */
#define EXIT_USAGE	2	/* bad arguments */

extern const char *tool_name;	/* for messages: "fraclat: ..." */
extern bool tool_verbose;	/* libbpf debug output */

/* Print "<tool>: <message>" on stderr and exit EXIT_USAGE. */
void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Parse a decimal integer in [min, max]; false on anything else. */
bool parse_u64(const char *s, unsigned long long min, unsigned long long max,
	       unsigned long long *out);
/* `interval [count]` positional arguments; calls usage_error on a bad one. */
void parse_interval_count(const char *arg, int pos, unsigned long long *interval,
			  unsigned long long *count);

int libbpf_print_fn(enum libbpf_print_level level, const char *format, va_list args);

/*
 * Checks before loading: the frac module's tracepoints exist and we may use
 * BPF. Print a clear message and return false otherwise.
 */
bool frac_check_env(void);
/* Explain a failed load/attach (privileges, missing module) as well as we can. */
void report_bpf_error(const char *what, int err);

/*
 * Run-time probes for the BTF-based attach types on a module's BTF: for
 * every program of @obj of that kind (tp_btf/; fentry/ and fexit/), a
 * do-nothing program is loaded against the target its section names,
 * attached and detached. Call between open and load. On failure probe_why
 * holds the reason (the first target that failed), for report_fallback().
 */
bool probe_tp_btf_progs(struct bpf_object *obj, const char *module);
bool probe_fentry_progs(struct bpf_object *obj, const char *module);
extern char probe_why[256];
/* One stderr line: "<tool>: attaching with <chosen>, not <instead_of>: <why>". */
void report_fallback(const char *chosen, const char *instead_of, bool forced);
/* Is @cap (CAP_*) in the effective set (capget)? */
bool have_cap(int cap);

/*
 * Keep one program of each fallback pair: tp_btf or raw_tp, fentry/fexit or
 * kprobe/kretprobe, by their section names.
 */
void select_progs(struct bpf_object *obj, bool tp_btf, bool fentry);

/* Histograms */
const char *unit_name(int unit);		/* "nsecs", "usecs", "msecs" */
unsigned long long unit_ns(int unit);		/* ns in one unit */
void print_log2_hist(const unsigned int *vals, int vals_size, const char *val_type);
void print_linear_hist(const unsigned int *vals, int vals_size, unsigned int base,
		       unsigned int step, const char *val_type);
/*
 * A percentile (0 < p <= 1) from the fine buckets: the nearest-rank value
 * (the ceil(p * count)-th smallest sample) lies in [low, high] (ns): its
 * fine bucket, narrowed by the exact min and max where they lie in it (a
 * torn copy's may not). @est is an interpolation inside that range: a bucket
 * estimate, good to high - low. False if empty.
 */
struct pct_est {
	double est, low, high;
};
bool hist_percentile(const struct hist *h, double p, struct pct_est *out);
/* The histogram (log2 or linear) and its summary line in @unit. */
void print_hist(const struct hist *h, int unit, bool linear, unsigned int step);
void print_hist_summary(const struct hist *h, int unit);
/*
 * {"count":..,"sum_ns":..,"min_ns":..,"avg_ns":..,"p50_ns":..,"p99_ns":..,"max_ns":..,
 *  "unit":"usecs","buckets":[{"low":..,"high":..,"high_reason":..,"count":..},..]}
 * (bpf/README.md, "JSON", has every key.)
 */
void print_hist_json(const struct hist *h, int unit, bool linear, unsigned int step);

/*
 * Maps of two generations (bpf/frac_gen.bpf.h): gen_flip() moves the programs to the other
 * generation (@gen, @busy: the object's frac_gen and frac_gen_busy, in its mmapped .bss),
 * waits until none still writes the one they left, and returns it, for map_drain*() to drain.
 */
__u32 gen_flip(__u32 *gen, __u64 *busy);

/*
 * Move every entry of generation @gen (the __u32 at @gen_off in the key) of a hash map into a
 * new array (*out, free() it) of *n entries of @entry_size bytes: the key first, the value at
 * @value_off. Lookup-and-delete, of a generation no program writes after gen_flip(): nothing
 * is lost. The other generation's entries stay.
 */
int map_drain(int fd, size_t key_size, size_t gen_off, __u32 gen, size_t value_off,
	      size_t entry_size, void **out, size_t *n);
int map_drain_percpu(int fd, size_t key_size, size_t gen_off, __u32 gen, size_t value_size,
		     size_t value_off, size_t entry_size,
		     void (*merge)(void *dst, const void *src, bool first), void **out, size_t *n);
void hist_merge(struct hist *dst, const struct hist *src, bool first);

/* ---- what the job program loses (fraclat, fracsnoop) ---- */
/*
 * Schema 2's job_table_size: since the one-program-per-job design there is
 * no table of jobs in flight (frac_job_done carries every stage), so the
 * field is null with its reason.
 */
#define JOB_TABLE_SIZE_JSON \
	"\"job_table_size\":null,\"job_table_size_reason\":\"no job table: one program per job, on frac_job_done\""
/* Sum the per-CPU struct job_stats of the job_stats map. */
int job_stats_read(int fd, struct job_stats *out);
/* d = cur - prev, field by field; then prev = cur. */
void job_stats_delta(struct job_stats *d, const struct job_stats *cur, struct job_stats *prev);

/* recursion_misses of every loaded program of a tool (bpf_prog_info), per interval. */
#define MAX_TOOL_PROGS	32
struct prog_misses {
	int n;
	const char *name[MAX_TOOL_PROGS];
	int fd[MAX_TOOL_PROGS];
	unsigned long long last[MAX_TOOL_PROGS];
	unsigned long long delta[MAX_TOOL_PROGS];	/* since the previous update */
	unsigned long long total;			/* sum of delta */
	int err;					/* -errno of a failed read, else 0 */
};
void prog_misses_init(struct prog_misses *m, struct bpf_object *obj);
/* delta = misses since the last committed update; @commit: this one becomes the last. */
void prog_misses_update(struct prog_misses *m, bool commit);
/* The misses (delta) of the programs whose names start with @prefix. */
unsigned long long prog_misses_of(const struct prog_misses *m, const char *prefix);
/* ,"recursion_misses":N,"recursion_misses_by_prog":{"name":n,..} */
void prog_misses_print_json(const struct prog_misses *m);

/*
 * The jobs a tool lost in one interval: unmatched + noid + hist_full +
 * rb_dropped + the fence-signal programs' recursion misses (each a job end
 * not seen).
 */
unsigned long long job_stats_lost(const struct job_stats *d, const struct prog_misses *m);
/* Text lines: adjustments, ends by status, losses. */
void print_job_stats_text(const struct job_stats *d, const struct prog_misses *m,
			  const char *failed_note);
/* ,"clamped":..,"noirq":..,...,"ended":{..},"lost":{..} */
void print_job_stats_json(const struct job_stats *d, const struct prog_misses *m);
extern const char *const status_names[NR_STATUS];

/* JSON string (quoted, escaped). */
void print_json_str(const char *s);

const char *frac_dir_name(unsigned int dir);
/* CLOCK_MONOTONIC ns (the clock of bpf_ktime_get_ns) */
unsigned long long mono_ns(void);
/* "HH:MM:SS" of now */
const char *time_str(void);

/* Stage names of frac_job.h: for people, and JSON keys */
extern const char *const stage_names[NR_STAGES];
extern const char *const stage_keys[NR_STAGES];

#endif /* __TRACE_HELPERS_H */
