// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * fractop: a live monitor of accel devices (/dev/accel/accel*), with everything frac.ko
 * exports for FRAC-1. This file owns the command line, the sources' life cycle and the batch
 * loop; ui.c owns the screen. See README.md for the data sources and the output schema.
 */

#include <argp.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fractop.h"

const char *argp_program_version = "fractop 0.2 (schema 3)";

static const char doc[] =
"fractop: a live monitor of accel devices (/dev/accel/accel*).\n"
"Device counters from sysfs and hwmon; per-process engine use and memory from fdinfo;\n"
"per-queue job latency from the frac tracepoints (BPF: CAP_BPF+CAP_PERFMON).\n"
"\n"
"USAGE: fractop [-d SECONDS] [-D DEVICE] [-n COUNT] [-w FILE] [--no-bpf]\n"
"               [-J | -c | --listen ADDR:PORT]\n"
"       fractop -r FILE [-J | -c] [-n COUNT] [-d SECONDS]\n"
"\v"
"EXAMPLES:\n"
"    fractop                 # the screen, refreshed every second\n"
"    fractop -d 0.5 -D 1     # every half second, accel1 only\n"
"    fractop -J -n 10        # ten JSON lines, one per second\n"
"    fractop -c -d 5 > x.csv # CSV every 5 s until interrupted\n"
"    fractop -w s.rec        # the screen, every sample recorded into s.rec\n"
"    fractop -r s.rec        # replay it in the screen (space, n, Left/Right, Home/End)\n"
"    fractop -r s.rec -J     # the JSON lines the recorded run would have printed\n"
"    fractop --listen 127.0.0.1:9464   # Prometheus metrics at /metrics\n";

enum { OPT_SYSROOT = 0x100, OPT_USAGE, OPT_LISTEN, OPT_NO_BPF, OPT_NO_BTF };

static const struct argp_option opts[] = {
	{ "delay", 'd', "SECONDS", 0, "Refresh interval (default 1; 0.05 to 3600)", 0 },
	{ "iterations", 'n', "COUNT", 0, "Stop after COUNT samples", 0 },
	{ "json", 'J', NULL, 0, "Batch mode: one JSON object per line and interval", 0 },
	{ "csv", 'c', NULL, 0, "Batch mode: CSV with a header line, a row per device", 0 },
	{ "device", 'D', "DEVICE", 0, "Only this device: N or accelN", 0 },
	{ "write", 'w', "FILE", 0, "Record every sample into FILE (JSON lines)", 0 },
	{ "read", 'r', "FILE", 0, "Replay FILE (from -w) instead of reading the system", 0 },
	{ "listen", OPT_LISTEN, "ADDR:PORT", 0,
	  "Serve Prometheus metrics on http://ADDR:PORT/metrics (no screen)", 0 },
	{ "no-bpf", OPT_NO_BPF, NULL, 0, "No BPF latency source (no latency pane or histograms)", 0 },
	{ "no-btf", OPT_NO_BTF, NULL, 0, "Latency source: attach with raw_tp even if tp_btf works", 0 },
	{ "help", '?', NULL, 0, "Give this help list", -1 },
	{ NULL, 'h', NULL, OPTION_ALIAS, NULL, -1 },
	{ "usage", OPT_USAGE, NULL, 0, "Give a short usage message", -1 },
	{ "version", 'V', NULL, 0, "Print the program version", -1 },
	{ "sysroot", OPT_SYSROOT, "DIR", OPTION_HIDDEN,
	  "Read DIR/proc and DIR/sys instead of /proc and /sys (tests)", 0 },
	{ NULL },
};

struct args {
	double delay_s;
	bool delay_set;
	long iterations;
	bool json, csv;
	const char *record, *replay, *listen;
	bool device_set;
	struct ft_config cfg;
};

static void bad_arg(const char *fmt, const char *what)
{
	fprintf(stderr, "fractop: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, " (see fractop --help)\n");
	exit(2);
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct args *a = state->input;
	char *end;

	switch (key) {
	/*
	 * ARGP_NO_ERRS, so that a bad argument gets our one line (and exit 2) rather than
	 * getopt's line plus argp's "Try" line; it also silences argp's own --help, hence ours.
	 */
	case '?':
	case 'h':
		argp_help(state->root_argp, stdout, ARGP_HELP_STD_HELP, "fractop");
		exit(0);
	case OPT_USAGE:
		argp_help(state->root_argp, stdout, ARGP_HELP_USAGE, "fractop");
		exit(0);
	case 'V':
		printf("%s\n", argp_program_version);
		exit(0);
	case 'd':
		errno = 0;
		a->delay_s = strtod(arg, &end);
		if (errno || end == arg || *end || !isfinite(a->delay_s) || a->delay_s < 0.05 ||
		    a->delay_s > 3600)
			bad_arg("invalid delay '%s': seconds from 0.05 to 3600", arg);
		a->delay_set = true;
		break;
	case 'n':
		errno = 0;
		a->iterations = strtol(arg, &end, 10);
		if (errno || end == arg || *end || a->iterations < 1)
			bad_arg("invalid count '%s': a positive integer", arg);
		break;
	case 'J':
		a->json = true;
		break;
	case 'c':
		a->csv = true;
		break;
	case 'D': {
		const char *s = strncmp(arg, "accel", 5) ? arg : arg + 5;
		long m;

		errno = 0;
		m = strtol(s, &end, 10);
		if (errno || end == s || *end || m < 0 || m > 0xfffff)
			bad_arg("invalid device '%s': N or accelN", arg);
		a->cfg.only_minor = m;
		a->device_set = true;
		break;
	}
	case 'w':
		if (!*arg)
			bad_arg("%s: -w needs a file name", "-w");
		a->record = arg;
		break;
	case 'r':
		if (!*arg)
			bad_arg("%s: -r needs a file name", "-r");
		a->replay = arg;
		break;
	case OPT_SYSROOT:
		a->cfg.sysroot = arg;
		break;
	case OPT_NO_BPF:
		a->cfg.no_bpf = true;
		break;
	case OPT_NO_BTF:
		a->cfg.no_btf = true;
		break;
	case OPT_LISTEN: {
		char host[256], port[16];

		if (ft_parse_listen(arg, host, sizeof(host), port, sizeof(port)))
			bad_arg("invalid --listen '%s': ADDR:PORT, [ADDR]:PORT or :PORT", arg);
		a->listen = arg;
		break;
	}
	case ARGP_KEY_ARG:
		bad_arg("unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (a->json && a->csv)
			bad_arg("%s: -J and -c are exclusive", "-J -c");
		if (a->record && a->replay)
			bad_arg("%s: -w and -r are exclusive", "-w -r");
		if (a->replay && a->device_set)
			bad_arg("%s: -D does not apply to a replay (it shows what was recorded)", "-r -D");
		if (a->listen && (a->json || a->csv || a->replay))
			bad_arg("%s: --listen serves metrics; not with -J, -c or -r", "--listen");
		if (a->replay && (a->cfg.no_bpf || a->cfg.no_btf))
			bad_arg("%s: --no-bpf/--no-btf do not apply to a replay", "-r");
		if (a->replay && a->cfg.sysroot[0])
			bad_arg("%s: --sysroot does not apply to a replay", "-r --sysroot");
		break;
	case ARGP_KEY_ERROR:
		/* getopt's refusal: an unknown option or a missing argument. */
		bad_arg("unknown option or missing argument: '%s'",
			state->next > 0 && state->next <= state->argc ? state->argv[state->next - 1]
								      : "?");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int ft_sample_all(struct ft_source *srcs, unsigned int nr_srcs, struct ft_snapshot *snap)
{
	int ret = 0;

	ft_snapshot_reset(snap);
	snap->t_mono = now(CLOCK_MONOTONIC);
	snap->t_wall = now(CLOCK_REALTIME);
	for (unsigned int i = 0; i < nr_srcs; i++) {
		int r;

		if (!srcs[i].active)
			continue;
		r = srcs[i].ops->sample(&srcs[i], snap);
		if (r == -ENOMEM)
			return r;
		if (r && !ret)
			ret = r;
	}
	return ret;
}

volatile sig_atomic_t ft_stop;

static void on_signal(int sig)
{
	(void)sig;
	ft_stop = 1;
}

/* Sleep until @deadline (CLOCK_MONOTONIC seconds); false if a signal asked to stop. */
static bool sleep_until(double deadline)
{
	struct timespec ts = {
		.tv_sec = (time_t)deadline,
		.tv_nsec = (long)((deadline - floor(deadline)) * 1e9),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		if (ft_stop)
			return false;
	return !ft_stop;
}

/* -w: the sample into the record, before the model takes it; false if that failed. */
static bool record_failed;

static int record(struct ft_recorder *rec, const struct ft_snapshot *snap)
{
	int ret = rec ? ft_record_sample(rec, snap) : 0;

	if (ret < 0) {
		fprintf(stderr, "fractop: writing the record: %s\n", strerror(-ret));
		record_failed = true;
	}
	return ret;
}

static int write_line(const struct args *a, struct ft_model *m)
{
	if (a->json)
		ft_write_json(stdout, &m->view);
	else
		ft_write_csv(stdout, &m->view);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "fractop: writing the output: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * -r with -J or -c: the lines the recorded run printed. Its first sample was the baseline
 * (batch mode prints nothing for it), so lines start at the second; -n limits them.
 */
static int run_replay_batch(struct ft_replay *rp, struct ft_model *m, const struct args *a)
{
	struct ft_snapshot snap = { 0 };
	char err[256];
	long lines = 0;
	int ret = 0;

	if (a->csv)
		ft_write_csv_header(stdout);
	for (unsigned int i = 0; i < rp->nr && (a->iterations < 0 || lines < a->iterations); i++) {
		ret = ft_replay_read(rp, i, &snap, err, sizeof(err));
		if (ret || (ret = ft_model_update(m, &snap))) {
			fprintf(stderr, "fractop: %s: %s\n", a->replay, ret == -ENOMEM ? "out of memory"
									       : err);
			ret = 1;
			break;
		}
		if (i == 0)
			continue;
		lines++;
		ret = write_line(a, m);
		if (ret)
			break;
	}
	ft_snapshot_free(&snap);
	return ret;
}

static int run_batch(struct ft_source *srcs, unsigned int n, struct ft_model *m,
		     const struct args *a, struct ft_recorder *rec)
{
	struct ft_snapshot snap = { 0 };
	double next;
	long i;
	int ret;

	/* A baseline, so that every line printed has rates over a full interval. */
	ret = ft_sample_all(srcs, n, &snap);
	if (ret == -ENOMEM || record(rec, &snap) || ft_model_update(m, &snap))
		goto oom;
	next = m->prev.t_mono;
	if (a->csv)
		ft_write_csv_header(stdout);
	for (i = 0; a->iterations < 0 || i < a->iterations; i++) {
		next += a->delay_s;
		if (!sleep_until(next))
			break;
		ret = ft_sample_all(srcs, n, &snap);
		if (ret == -ENOMEM || record(rec, &snap) || ft_model_update(m, &snap))
			goto oom;
		if (write_line(a, m)) {
			ft_snapshot_free(&snap);
			return 1;
		}
	}
	ft_snapshot_free(&snap);
	return 0;
oom:
	ft_snapshot_free(&snap);
	if (!record_failed)
		fprintf(stderr, "fractop: out of memory\n");
	return 1;
}

/* -r: the record's samples through the same model, into the same writers or screen. */
static int replay_main(const struct args *a)
{
	static struct ft_source_ops names[FT_RECORD_MAX_SOURCES];
	struct ft_source srcs[FT_RECORD_MAX_SOURCES] = { 0 };
	struct ft_replay rp;
	struct ft_model m;
	char err[512];
	int ret;

	if (ft_replay_open(&rp, a->replay, err, sizeof(err))) {
		fprintf(stderr, "fractop: %s\n", err);
		return 1;
	}
	/* The recorded sources' names and states, so that the screen says what was missing. */
	for (unsigned int i = 0; i < rp.hdr.nr_sources; i++) {
		names[i].name = rp.hdr.sources[i].name;
		srcs[i].ops = &names[i];
		srcs[i].active = rp.hdr.sources[i].active;
		snprintf(srcs[i].why, sizeof(srcs[i].why), "%s", rp.hdr.sources[i].why);
		if (!strcmp(names[i].name, "latency"))
			ft_lat_note = srcs[i].why;
	}
	ft_model_init(&m);
	if (a->json || a->csv) {
		ret = run_replay_batch(&rp, &m, a);
	} else {
		struct ft_ui_opts o = {
			.delay_s = a->delay_s, .iterations = a->iterations, .replay = &rp,
			.replay_name = a->replay, .replay_fixed_delay = a->delay_set,
		};

		ret = ft_ui_run(srcs, rp.hdr.nr_sources, &m, &o);
	}
	ft_model_fini(&m);
	ft_replay_close(&rp);
	return ret;
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { opts, parse_opt, NULL, doc, NULL, NULL, NULL };
	struct args a = { .delay_s = 1.0, .iterations = -1, .cfg = { .sysroot = "", .only_minor = -1 } };
	struct ft_source srcs[] = {
		{ .ops = &ft_sysfs_source },
		{ .ops = &ft_fdinfo_source },
		{ .ops = &ft_debugfs_source },
		{ .ops = &ft_irq_source },
		{ .ops = &ft_latency_source },
	};
	const unsigned int nr = sizeof(srcs) / sizeof(srcs[0]);
	struct sigaction sa = { .sa_handler = on_signal };
	struct ft_recorder rec = { 0 };
	struct ft_model m;
	char why[512];
	unsigned int i;
	int ret;

	setlocale(LC_ALL, "");
	argp_parse(&argp, argc, argv, ARGP_NO_ERRS | ARGP_NO_HELP, NULL, &a);

	if (!a.json && !a.csv && !a.listen && !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "fractop: standard output is not a terminal: use -J or -c\n");
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (a.replay)
		return replay_main(&a);
	if (!ft_sysfs_count_devices(&a.cfg, why, sizeof(why))) {
		fprintf(stderr, "fractop: %s\n", why);
		return 1;
	}
	for (i = 0; i < nr; i++) {
		srcs[i].cfg = &a.cfg;
		ret = srcs[i].ops->init(&srcs[i], &a.cfg);
		srcs[i].active = !ret;
		if (ret && !srcs[i].why[0])
			snprintf(srcs[i].why, sizeof(srcs[i].why), "%s", strerror(-ret));
	}
	if (!srcs[0].active) {
		fprintf(stderr, "fractop: sysfs: %s\n", srcs[0].why);
		return 1;
	}
	ft_lat_note = srcs[nr - 1].why;
	if (a.record) {
		struct ft_record_header h = {
			.version = FT_RECORD_VERSION, .created = wall_now(), .delay_s = a.delay_s,
			.only_minor = a.cfg.only_minor, .nr_sources = nr,
		};

		snprintf(h.program, sizeof(h.program), "%s", argp_program_version);
		for (i = 0; i < nr; i++) {
			snprintf(h.sources[i].name, sizeof(h.sources[i].name), "%s", srcs[i].ops->name);
			h.sources[i].active = srcs[i].active;
			snprintf(h.sources[i].why, sizeof(h.sources[i].why), "%s", srcs[i].why);
		}
		ret = ft_record_open(&rec, a.record, &h);
		if (ret) {
			fprintf(stderr, "fractop: %s: %s\n", a.record, strerror(-ret));
			ret = 1;
			goto out;
		}
	}

	ft_model_init(&m);
	if (a.listen) {
		struct ft_export_opts eo = { .listen = a.listen, .delay_s = a.delay_s,
					     .iterations = a.iterations,
					     .rec = a.record ? &rec : NULL };

		ret = ft_export_run(srcs, nr, &m, &eo);
	} else if (a.json || a.csv) {
		ret = run_batch(srcs, nr, &m, &a, a.record ? &rec : NULL);
	} else {
		struct ft_ui_opts o = { .delay_s = a.delay_s, .iterations = a.iterations,
					.rec = a.record ? &rec : NULL };

		ret = ft_ui_run(srcs, nr, &m, &o);
	}
	ft_model_fini(&m);
	if (ft_record_close(&rec) && !ret) {
		fprintf(stderr, "fractop: %s: %s\n", a.record, strerror(errno));
		ret = 1;
	}
out:
	for (i = 0; i < nr; i++)
		if (srcs[i].active)
			srcs[i].ops->fini(&srcs[i]);
	return ret;
}
