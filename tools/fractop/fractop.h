/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The frac authors
 *
 * fractop's shared types. The program is three layers that meet only here:
 *  - sources (struct ft_source_ops: sysfs.c, procwalk.c, debugfs.c, irq.c, latency.c)
 *    fill a struct ft_snapshot with raw values, each with a validity bit;
 *  - the model (model.c) turns two snapshots into a struct ft_view of rates and ratios,
 *    each a struct ft_num that is either a value or "not known" (never a made-up 0);
 *  - the writers (output.c: JSON lines, CSV) and the screen (ui.c) only print a view, through
 *    the pure formatting and layout functions of format.c.
 */
#ifndef FRACTOP_H
#define FRACTOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>
#include <linux/types.h>

#include "frac_job.h"		/* bpf/: the job stages and struct hist that fraclat uses */
#include "frac_hw.h"		/* include/: FRAC_MAX_QUEUES */

#define FT_NAME_LEN	32	/* engine and region names, driver, pdev */
#define FT_MAX_ENGINES	32	/* per fd; frac has at most FRAC_MAX_QUEUES (16) queues */
#define FT_MAX_REGIONS	8	/* per fd */
#define FT_COMM_LEN	16	/* TASK_COMM_LEN */
#define FT_HIST_LEN	256	/* samples of history for the sparklines */

#define FT_ACCEL_MAJOR	261	/* drivers/accel/drm_accel.c: ACCEL_MAJOR */

#define FT_SCHEMA_VERSION 3	/* of the -J and -c output; bump on any change of meaning */

/* A derived number: a value, or not known. */
struct ft_num {
	double v;
	bool ok;
};

static inline struct ft_num ft_num_of(double v)
{
	return (struct ft_num){ .v = v, .ok = true };
}

#define FT_NUM_NA ((struct ft_num){ .v = 0, .ok = false })

/* ---- fdinfo (fdinfo.c: a pure parser of Documentation/gpu/drm-usage-stats.rst) ---- */

enum ft_eng_key {
	FT_ENG_NS,		/* drm-engine-<e>: <uint> ns */
	FT_ENG_CAPACITY,	/* drm-engine-capacity-<e>: <uint> */
	FT_ENG_CYCLES,		/* drm-cycles-<e>: <uint> */
	FT_ENG_TOTAL_CYCLES,	/* drm-total-cycles-<e>: <uint> */
	FT_ENG_MAXFREQ,		/* drm-maxfreq-<e>: <uint> [Hz|KHz|MHz], kept in Hz */
	FT_ENG_NR
};

enum ft_mem_key {
	FT_MEM_MEMORY,		/* drm-memory-<r>: <uint> [KiB|MiB], kept in bytes */
	FT_MEM_TOTAL,		/* drm-total-<r> */
	FT_MEM_SHARED,		/* drm-shared-<r> */
	FT_MEM_RESIDENT,	/* drm-resident-<r> */
	FT_MEM_PURGEABLE,	/* drm-purgeable-<r> */
	FT_MEM_ACTIVE,		/* drm-active-<r> */
	FT_MEM_NR
};

struct ft_engine {
	char name[FT_NAME_LEN];
	uint64_t val[FT_ENG_NR];
	unsigned int has;	/* bit (1 << enum ft_eng_key) when the key was seen */
};

struct ft_region {
	char name[FT_NAME_LEN];
	uint64_t val[FT_MEM_NR];
	unsigned int has;	/* bit (1 << enum ft_mem_key) */
};

/* Driver-specific keys fractop knows (frac.ko's, kernel/frac_drv.c). */
enum ft_drv_key {
	FT_DRV_FRAC_CONTEXT,		/* drm-frac-context: <uint> */
	FT_DRV_FRAC_JOBS_COMPLETED,	/* drm-frac-jobs-completed: <uint> */
	FT_DRV_FRAC_JOBS_FAILED,	/* drm-frac-jobs-failed: <uint> */
	FT_DRV_NR
};

struct ft_fdinfo {
	char driver[FT_NAME_LEN];
	char pdev[FT_NAME_LEN];
	uint64_t client_id;
	bool has_driver, has_pdev, has_client_id;
	struct ft_engine engines[FT_MAX_ENGINES];
	unsigned int nr_engines;
	struct ft_region regions[FT_MAX_REGIONS];
	unsigned int nr_regions;
	uint64_t drv[FT_DRV_NR];
	unsigned int drv_has;	/* bit (1 << enum ft_drv_key) */
	unsigned int malformed;	/* drm- lines that break the format (ignored) */
	unsigned int dropped;	/* engines or regions past the limits above (ignored) */
};

int ft_fdinfo_parse(const char *text, size_t len, struct ft_fdinfo *out);
int ft_parse_u64(const char *s, const char **end, uint64_t *v);

/* ---- snapshot: what the sources read at one instant ---- */

/* Device counters and gauges, from the frac sysfs group and hwmon (sysfs.c). */
enum ft_dev_key {
	FT_D_BUSY_NS_DMA,
	FT_D_BUSY_NS_COMPUTE,
	FT_D_DEVICE_JOBS_DONE,
	FT_D_DEVICE_JOBS_FAILED,
	FT_D_BYTES_READ,
	FT_D_BYTES_WRITTEN,
	FT_D_INTERRUPTS,
	FT_D_DEVICE_CLOCK_NS,
	FT_D_JOBS_SUBMITTED,
	FT_D_JOBS_COMPLETED,
	FT_D_JOBS_FAILED,
	FT_D_JOB_TIMEOUTS,
	FT_D_LOST_INTERRUPTS,
	FT_D_QUEUE_RESETS,
	FT_D_DEVICE_RESETS,
	FT_D_ERRORS,
	FT_D_COREDUMPS,
	FT_D_WEDGED,
	FT_D_NUM_QUEUES,
	FT_D_TEMP_MC,		/* hwmon temp1_input, milli-degrees C (any driver) */
	FT_D_POWER_UW,		/* hwmon power1_input or power1_average, microwatts */
	FT_D_NR
};

struct ft_dev_key_desc {
	const char *name;	/* sysfs attribute (frac group) or hwmon file */
	bool counter;		/* monotonic between resets: a rate is meaningful */
};

extern const struct ft_dev_key_desc ft_dev_keys[FT_D_NR];

/* Per-queue counters of frac.ko's debugfs "queues" file (debugfs.c; root only). */
enum ft_q_key {
	FT_Q_SUBMITTED,
	FT_Q_COMPLETED,
	FT_Q_FAILED,
	FT_Q_TIMEOUTS,
	FT_Q_LOST_IRQS,
	FT_Q_RESETS,
	FT_Q_IN_RING,		/* a gauge: jobs on the ring now */
	FT_Q_NR
};

extern const char *const ft_q_names[FT_Q_NR];

#define FT_MAX_QUEUES	FRAC_MAX_QUEUES	/* include/frac_hw.h */
#define FT_MAX_VECTORS	40	/* MSI-X vectors of one device we follow */

struct ft_vector {
	unsigned int irq;
	char name[FT_NAME_LEN];		/* the action name in /proc/interrupts: "frac-q0" */
	uint64_t count;			/* summed over CPUs */
};

/*
 * Which source read a device's figures, for the instant each was read at: a source reads its
 * devices one after another, and a rate is a counter's delta over the time between the same
 * source's two reads of it, not over the sample's nominal interval.
 */
enum ft_src_ts {
	FT_TS_SYSFS,		/* val[], has */
	FT_TS_DEBUGFS,		/* q[] */
	FT_TS_IRQ,		/* vec[] */
	FT_TS_LATENCY,		/* lat[] */
	FT_TS_NR
};

extern const char *const ft_src_ts_names[FT_TS_NR];	/* "sysfs", "debugfs", ... */

/* CLOCK_MONOTONIC, in seconds. */
static inline double ft_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct ft_dev {
	char node[FT_NAME_LEN];		/* "accel0" */
	unsigned int minor;
	char driver[FT_NAME_LEN];	/* from the device's driver link; "" if unbound */
	char pdev[FT_NAME_LEN];		/* PCI address, "" if not PCI */
	bool is_frac;
	uint64_t val[FT_D_NR];
	uint64_t has;			/* bit (1ull << enum ft_dev_key) */
	/* debugfs.c: per-queue counters, valid when nr_queues > 0 */
	uint64_t q[FT_MAX_QUEUES][FT_Q_NR];
	unsigned int nr_queues;
	/* irq.c: the device's MSI/MSI-X vectors, valid when vectors_ok */
	struct ft_vector vec[FT_MAX_VECTORS];
	unsigned int nr_vec;
	bool vectors_ok;
	/*
	 * latency.c: per queue and stage (enum frac_stage), the jobs that ended without an
	 * error since the BPF source attached (cumulative), in bpf/frac_hist.h's struct hist
	 * (exact count/sum/min/max, log2 slots in ns, the fine slots percentiles come from).
	 * Valid when lat_ok; lat_nr_queues of them.
	 */
	bool lat_ok;
	unsigned int lat_nr_queues;
	struct hist lat[FT_MAX_QUEUES][NR_STAGES];
	/*
	 * CLOCK_MONOTONIC seconds at which each source read this device: the midpoint of a clock
	 * read just before and one just after its reads; 0 when that source did not read it.
	 */
	double t_src[FT_TS_NR];
};

/* The BPF job programs' counters (struct job_stats, summed over CPUs), cumulative. */
enum ft_lat_stat {
	FT_LS_UNMATCHED, FT_LS_NOID, FT_LS_HIST_FULL, FT_LS_TABLE_FULL, FT_LS_RECURSION_MISSES,
	FT_LS_NORUN, FT_LS_NOCOMPLETE, FT_LS_CLAMPED, FT_LS_NOIRQ, FT_LS_NODEV,
	FT_LS_OK, FT_LS_CANCELLED, FT_LS_TIMEDOUT, FT_LS_EIO, FT_LS_ENODEV, FT_LS_OTHER,
	FT_LS_NR
};

extern const char *const ft_lat_stat_names[FT_LS_NR];
#define FT_LS_FIRST_STATUS	FT_LS_OK	/* from here: measured jobs by how they ended */
#define FT_LS_NR_LOST		(FT_LS_RECURSION_MISSES + 1)	/* the first ones, minus table_full */

/* One DRM client (struct drm_file), de-duplicated over the fds and processes holding it. */
struct ft_client {
	struct ft_fdinfo fi;
	int dev;			/* index in ft_snapshot.devs, -1 if the node is unknown */
	pid_t pid;			/* the lowest pid holding it */
	char comm[FT_COMM_LEN + 1];
	unsigned int nr_fds;		/* fds (in all processes) that point at it */
	unsigned int nr_pids;		/* processes holding it */
	double t_mono;			/* when its fdinfo was read (midpoint); 0: unknown */
};

struct ft_snapshot {
	double t_mono;			/* CLOCK_MONOTONIC seconds of the sample's start */
	double t_wall;			/* CLOCK_REALTIME seconds */
	struct ft_dev *devs;
	unsigned int nr_devs, cap_devs;
	struct ft_client *clients;
	unsigned int nr_clients, cap_clients;
	/* What the fdinfo walk saw: processes listed, of which not (fully) readable; fds. */
	unsigned int procs_seen, procs_denied, fds_seen, accel_fds;
	bool fdinfo_ok;			/* the fdinfo source ran */
	bool sysfs_ok;			/* the sysfs source ran */
	bool lat_ok;			/* the BPF latency source ran: lat_stats valid */
	uint64_t lat_stats[FT_LS_NR];
};

void ft_snapshot_reset(struct ft_snapshot *s);
void ft_snapshot_free(struct ft_snapshot *s);
struct ft_dev *ft_snapshot_add_dev(struct ft_snapshot *s);
struct ft_client *ft_snapshot_add_client(struct ft_snapshot *s);
int ft_snapshot_dev_by_minor(const struct ft_snapshot *s, unsigned int minor);

/* ---- sources ---- */

struct ft_config {
	const char *sysroot;		/* "" normally; a fixture tree in tests (--sysroot) */
	int only_minor;			/* -1: all devices */
	bool no_bpf;			/* --no-bpf: the latency source stays off */
	bool no_btf;			/* --no-btf: raw_tp even when tp_btf works */
};

struct ft_source;

/*
 * One data source. sample() adds what it reads to the snapshot; sources run in the order of
 * ft_sources[] (devices first, so that later sources can attach to them). A source that
 * cannot run (no permission, nothing to read) sets why and returns a negative errno from
 * init(); the rest still run.
 */
struct ft_source_ops {
	const char *name;
	int (*init)(struct ft_source *src, const struct ft_config *cfg);
	int (*sample)(struct ft_source *src, struct ft_snapshot *snap);
	void (*fini)(struct ft_source *src);
};

struct ft_source {
	const struct ft_source_ops *ops;
	const struct ft_config *cfg;
	void *priv;
	bool active;
	char why[256];			/* why it is not active */
};

extern const struct ft_source_ops ft_sysfs_source;	/* sysfs.c */
extern const struct ft_source_ops ft_fdinfo_source;	/* procwalk.c */
extern const struct ft_source_ops ft_debugfs_source;	/* debugfs.c */
extern const struct ft_source_ops ft_irq_source;	/* irq.c */
extern const struct ft_source_ops ft_latency_source;	/* latency.c: BPF, fraclat's object */

/*
 * Why the latency source cannot run, before it tries (pure, for the tests): NULL when it may,
 * else the line the screen shows ("latency: needs CAP_BPF+CAP_PERFMON").
 */
const char *ft_latency_denied(bool no_bpf, bool cap_sys_admin, bool cap_bpf, bool cap_perfmon,
			      bool module_loaded);

/* A percentile of a latency histogram with its bounds (bpf/trace_helpers.c's nearest rank). */
struct ft_pct {
	struct ft_num est, low, high;	/* ns; not known when the histogram is empty */
};
struct ft_pct ft_lat_percentile(const struct hist *h, double p);
/* The highest log2 slot in use + 1 (0 when empty). */
unsigned int ft_lat_slots_used(const struct hist *h);
char *ft_fmt_lat_pct(char *buf, size_t len, struct ft_pct p);
/* Prometheus bucket bound of log2 slot @k: its largest value, (2^(k+1) - 1) ns, in seconds. */
double ft_lat_slot_le_s(unsigned int k);

int ft_sysfs_count_devices(const struct ft_config *cfg, char *why, size_t whylen);
int ft_parse_debugfs_queues(const char *text, size_t len, struct ft_dev *d);
int ft_parse_interrupts_line(const char *line, unsigned int ncpu, unsigned int *irq,
			     uint64_t *count, char *name, size_t namelen);

/* ---- model (model.c) ---- */

struct ft_view_engine {
	char name[FT_NAME_LEN];
	struct ft_num busy_pct;		/* over the interval, per unit of capacity */
	struct ft_num ns;		/* cumulative busy time, ns (drm-engine-) */
};

struct ft_view_region {
	char name[FT_NAME_LEN];
	struct ft_num bytes[FT_MEM_NR];
};

struct ft_view_proc {
	pid_t pid;
	char comm[FT_COMM_LEN + 1];
	unsigned int nr_clients;
	struct ft_view_engine engines[FT_MAX_ENGINES];
	unsigned int nr_engines;
	struct ft_view_region regions[FT_MAX_REGIONS];
	unsigned int nr_regions;
	struct ft_num jobs;		/* drm-frac-jobs-completed, summed over its clients */
	struct ft_num jobs_per_s;
	struct ft_num jobs_failed;	/* drm-frac-jobs-failed, summed over its clients */
	struct ft_num busy_pct;		/* sum over its engines (for sorting) */
	struct ft_num mem_bytes;	/* sum of drm-total- (or drm-memory-) over regions */
	/* When its fdinfo was read (its first client's), and since that client's last read. */
	struct ft_num t_fdinfo, dt_fdinfo;
};

enum ft_rate {
	FT_R_BUSY_DMA_PCT,		/* device busy counters over the device clock */
	FT_R_BUSY_COMPUTE_PCT,
	FT_R_JOBS_PER_S,		/* jobs_completed */
	FT_R_FAILED_PER_S,		/* jobs_failed */
	FT_R_READ_BPS,
	FT_R_WRITE_BPS,
	FT_R_IRQ_PER_S,
	FT_R_NR
};

extern const char *const ft_rate_names[FT_R_NR];

struct ft_view_queue {
	struct ft_num jobs_per_s;	/* completed */
	struct ft_num failed_per_s;
};

struct ft_view_dev {
	struct ft_dev dev;		/* raw values of this sample */
	struct ft_num rate[FT_R_NR];
	struct ft_view_queue queues[FT_MAX_QUEUES];	/* dev.nr_queues of them */
	struct ft_num vec_per_s[FT_MAX_VECTORS];	/* dev.nr_vec of them */
	struct ft_num temp_c, power_w;
	/* Each source's read of this device (dev.t_src) and the interval its rates are over. */
	struct ft_num t_src[FT_TS_NR], dt_src[FT_TS_NR];
	/* Per engine (for frac: per queue), summed over the device's clients' fdinfo. */
	struct ft_view_engine engines[FT_MAX_ENGINES];
	unsigned int nr_engines;
	struct ft_view_region regions[FT_MAX_REGIONS];
	unsigned int nr_regions;
	unsigned int nr_clients;
	struct ft_view_proc *procs;
	unsigned int nr_procs;
	/* History of the rates, oldest first; NaN where not known. */
	double hist[FT_R_NR][FT_HIST_LEN];
	unsigned int hist_len;
};

struct ft_view {
	double t_wall;
	double t_mono;			/* the sample's start, as the snapshot's */
	struct ft_num interval_s;	/* between the samples' starts */
	struct ft_view_dev *devs;
	unsigned int nr_devs;
	unsigned int procs_seen, procs_denied, fds_seen, accel_fds;
	bool lat_ok;			/* lat_stats valid (the snapshot's) */
	uint64_t lat_stats[FT_LS_NR];
};

struct ft_model {
	struct ft_snapshot prev;
	bool have_prev;
	struct ft_view view;
};

void ft_model_init(struct ft_model *m);
void ft_model_fini(struct ft_model *m);
int ft_model_clone(struct ft_model *dst, const struct ft_model *src);
/* Takes the new snapshot (ownership moves into the model; *snap is left empty). */
int ft_model_update(struct ft_model *m, struct ft_snapshot *snap);

/* Pure helpers of the model, for the tests. */
struct ft_num ft_counter_rate(uint64_t prev, bool prev_ok, uint64_t cur, bool cur_ok, double dt);
struct ft_num ft_engine_busy_pct(const struct ft_engine *prev, const struct ft_engine *cur,
				 double dt);
double ft_src_interval(double t_prev, double t_cur, double dt_sample);

/* ---- formatting and layout (format.c, pure) ---- */

char *ft_fmt_iec(char *buf, size_t len, struct ft_num bytes);
char *ft_fmt_si(char *buf, size_t len, struct ft_num v, const char *unit);
char *ft_fmt_pct(char *buf, size_t len, struct ft_num pct);
char *ft_fmt_duration(char *buf, size_t len, struct ft_num seconds);
char *ft_fmt_count(char *buf, size_t len, struct ft_num v);

enum ft_glyphs { FT_GLYPHS_ASCII, FT_GLYPHS_UTF8 };
char *ft_sparkline(char *buf, size_t len, const double *vals, unsigned int n,
		   unsigned int width, double max, enum ft_glyphs g);
/* A latency histogram's log2 slots as glyphs (lathist.c). */
char *ft_lat_hist_line(char *buf, size_t len, const struct hist *h, unsigned int first,
		       unsigned int n, enum ft_glyphs g);

struct ft_col {
	const char *name;
	int min;		/* width it needs */
	int max;		/* width it may grow to (>= min) */
	int prio;		/* lower drops first when the line is too narrow; 0 never drops */
};

int ft_layout_columns(const struct ft_col *cols, int n, int width, int gap, int *out);

/* ---- batch writers (output.c) ---- */

void ft_json_string(FILE *f, const char *s);
/* The latency source's note for -J ("latency: needs CAP_BPF+CAP_PERFMON", "attached with
 * tp_btf"): set by main from the source, or from a replayed record's header. */
extern const char *ft_lat_note;
void ft_write_json(FILE *f, const struct ft_view *v);
void ft_write_csv_header(FILE *f);
void ft_write_csv(FILE *f, const struct ft_view *v);

/* ---- JSON reader (json.c, pure) ---- */

enum ft_jtype { FT_J_NULL, FT_J_BOOL, FT_J_NUM, FT_J_STR, FT_J_ARR, FT_J_OBJ };

struct ft_jval {
	enum ft_jtype type;
	bool b;			/* FT_J_BOOL */
	const char *str;	/* FT_J_STR: decoded text; FT_J_NUM: the number as written */
	unsigned int n;		/* FT_J_ARR, FT_J_OBJ: how many items */
	struct ft_jval *items;
	const char **keys;	/* FT_J_OBJ: items[i]'s key */
};

struct arena_block;

struct ft_json {
	struct ft_jval *root;
	struct arena_block *arena;
};

int ft_json_parse(struct ft_json *doc, const char *text, size_t len, char *err, size_t errlen);
void ft_json_free(struct ft_json *doc);
const struct ft_jval *ft_json_get(const struct ft_jval *obj, const char *key);
bool ft_json_u64(const struct ft_jval *v, uint64_t *out);
bool ft_json_num(const struct ft_jval *v, double *out);

/* ---- record and replay (record.c) ---- */

#define FT_RECORD_VERSION	3	/* of the -w file; README.md "Record format" */
#define FT_RECORD_MAX_SOURCES	8

/* The header line: what recorded, and which sources could run (the screen says why not). */
struct ft_record_header {
	int version;
	char program[64];
	double created;			/* CLOCK_REALTIME seconds */
	double delay_s;
	int only_minor;			/* -D, or -1 */
	unsigned int nr_sources;
	struct {
		char name[FT_NAME_LEN];
		bool active;
		char why[256];
	} sources[FT_RECORD_MAX_SOURCES];
};

struct ft_recorder {
	FILE *f;
};

int ft_record_open(struct ft_recorder *r, const char *path, const struct ft_record_header *h);
int ft_record_sample(struct ft_recorder *r, const struct ft_snapshot *s);
int ft_record_close(struct ft_recorder *r);
void ft_record_write_header(FILE *f, const struct ft_record_header *h);
void ft_record_write_sample(FILE *f, const struct ft_snapshot *s);
int ft_record_parse_header(const char *line, size_t len, struct ft_record_header *h,
			   char *err, size_t errlen);
int ft_record_parse_sample(const char *line, size_t len, struct ft_snapshot *s,
			   char *err, size_t errlen);

struct ft_replay {
	FILE *f;
	struct ft_record_header hdr;
	off_t *off;			/* each sample line's offset in the file */
	double *t_mono;			/* each sample's time */
	unsigned int nr;
	char *line;
	size_t cap;
};

/* Reads and checks every line; on error, one line in @err ("FILE:LINE: what"). */
int ft_replay_open(struct ft_replay *rp, const char *path, char *err, size_t errlen);
int ft_replay_read(struct ft_replay *rp, unsigned int i, struct ft_snapshot *snap,
		   char *err, size_t errlen);
void ft_replay_close(struct ft_replay *rp);

/* ---- Prometheus text exposition (prom.c, pure) and the HTTP exporter (exporter.c) ---- */

struct ft_prom_label {
	const char *name;
	const char *value;	/* escaped by the writer */
};

enum ft_prom_kind { FT_PROM_U64, FT_PROM_NS_AS_S, FT_PROM_DOUBLE };

struct ft_prom_value {
	enum ft_prom_kind kind;
	uint64_t u;		/* FT_PROM_U64; FT_PROM_NS_AS_S: ns, written as exact seconds */
	double d;		/* FT_PROM_DOUBLE */
};

struct ft_prom_self {
	uint64_t samples;	/* taken since the start */
};

void ft_prom_family(FILE *f, const char *name, const char *type, const char *help);
void ft_prom_sample(FILE *f, const char *name, const struct ft_prom_label *l, unsigned int n,
		    const struct ft_prom_value *v);
void ft_prom_histogram(FILE *f, const char *name, const struct ft_prom_label *l, unsigned int n,
		       const double *le, const uint64_t *counts, unsigned int nb, double sum,
		       uint64_t count);
/* The view's families; per-client ones from @s, the snapshot the view was made from. */
void ft_prom_write(FILE *f, const struct ft_view *v, const struct ft_snapshot *s,
		   const struct ft_prom_self *self);

struct ft_export_opts {
	const char *listen;	/* ADDR:PORT, [ADDR]:PORT or :PORT */
	double delay_s;
	long iterations;	/* -1: until SIGINT/SIGTERM */
	struct ft_recorder *rec;
};

int ft_export_run(struct ft_source *srcs, unsigned int nr_srcs, struct ft_model *m,
		  const struct ft_export_opts *o);
int ft_parse_listen(const char *s, char *host, size_t hostlen, char *port, size_t portlen);

/* ---- the screen (ui.c) ---- */

struct ft_ui_opts {
	double delay_s;
	long iterations;		/* -1: until q */
	struct ft_recorder *rec;	/* -w: every sample into it, or NULL */
	struct ft_replay *replay;	/* -r: samples from it instead of the sources, or NULL */
	const char *replay_name;
	bool replay_fixed_delay;	/* -d given with -r: this pace, not the recorded one */
};

int ft_ui_run(struct ft_source *srcs, unsigned int nr_srcs, struct ft_model *m,
	      const struct ft_ui_opts *o);

int ft_sample_all(struct ft_source *srcs, unsigned int nr_srcs, struct ft_snapshot *snap);

#include <signal.h>
extern volatile sig_atomic_t ft_stop;	/* SIGINT or SIGTERM seen */

#endif /* FRACTOP_H */
