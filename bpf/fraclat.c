// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Copyright (c) 2026 The frac authors
 *
 * fraclat: summarize the latency of FRAC jobs per stage as histograms.
 * Modelled on iovisor/bcc libbpf-tools/biolatency.
 */
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fraclat.h"
#include "fraclat.skel.h"
#include "trace_helpers.h"
#include "libfrac.h"

static struct env {
	int group;
	int unit;
	bool linear;
	unsigned long long step;
	bool filter_dev, filter_queue, filter_pid;
	unsigned long long dev, queue, pid;
	bool timestamp;
	bool json;
	bool no_btf;
	bool by_status;
	unsigned long long interval;
	unsigned long long times;
	int npos;
} env = {
	.unit = UNIT_USEC,
	.step = 1,
	.interval = 99999999,
	.times = 99999999,
};

static volatile sig_atomic_t exiting;

const char *argp_program_version = "fraclat 0.1";
static const char argp_program_doc[] =
"Summarize FRAC job latency per stage as histograms.\n"
"\n"
"Stages: submit -> run (scheduler), run -> device start, device execution,\n"
"device end -> interrupt, interrupt -> fence signalled, and the total.\n"
"Jobs that failed are counted by status, not put in the histograms (-S:\n"
"histograms of their own). Jobs that could not be measured are counted as lost,\n"
"with the reason, every interval.\n"
"\n"
"USAGE: fraclat [--help] [-Q | -O | -P] [-S] [-m | -N] [-L STEP] [-d DEV] [-q QUEUE]\n"
"               [-p PID] [-T] [-j] [interval] [count]\n"
"\n"
"EXAMPLES:\n"
"    fraclat              # summarize until Ctrl-C\n"
"    fraclat 1 10         # print 1 second summaries, 10 times\n"
"    fraclat -Q           # a histogram per queue\n"
"    fraclat -O -m        # per op, in milliseconds\n"
"    fraclat -L 50        # linear buckets of 50 usecs\n"
"    fraclat -S           # failed jobs in histograms of their own, per status\n"
"    fraclat -j 5         # JSON, one object per 5 s interval\n";

enum { OPT_NO_BTF = 256 };

static const struct argp_option opts[] = {
	{ "queues", 'Q', NULL, 0, "Print a histogram per queue", 0 },
	{ "ops", 'O', NULL, 0, "Print a histogram per op (of the job's first command)", 0 },
	{ "pids", 'P', NULL, 0, "Print a histogram per submitting process", 0 },
	{ "status", 'S', NULL, 0, "Histograms of failed jobs too, per status", 0 },
	{ "milliseconds", 'm', NULL, 0, "Millisecond histograms", 0 },
	{ "nanoseconds", 'N', NULL, 0, "Nanosecond histograms", 0 },
	{ "linear", 'L', "STEP", 0, "Linear buckets of STEP units (default: log2)", 0 },
	{ "dev", 'd', "DEV", 0, "Trace this device only (accel minor)", 0 },
	{ "queue", 'q', "QUEUE", 0, "Trace this queue only", 0 },
	{ "pid", 'p', "PID", 0, "Trace jobs submitted by this process only", 0 },
	{ "timestamp", 'T', NULL, 0, "Include a timestamp on output", 0 },
	{ "json", 'j', NULL, 0, "JSON output, one object per interval", 0 },
	{ "no-btf", OPT_NO_BTF, NULL, 0, "Use raw_tp even when tp_btf works", 0 },
	{ "verbose", 'v', NULL, 0, "Verbose debug output", 0 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{},
};

static void set_group(int group)
{
	if (env.group && env.group != group)
		usage_error("-Q, -O and -P are mutually exclusive");
	env.group = group;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'h':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		break;
	case 'Q':
		set_group(GROUP_QUEUE);
		break;
	case 'O':
		set_group(GROUP_OP);
		break;
	case 'P':
		set_group(GROUP_PID);
		break;
	case 'S':
		env.by_status = true;
		break;
	case 'm':
		env.unit = UNIT_MSEC;
		break;
	case 'N':
		env.unit = UNIT_NSEC;
		break;
	case 'L':
		if (!parse_u64(arg, 1, 1000000000, &env.step))
			usage_error("invalid linear step '%s'", arg);
		env.linear = true;
		break;
	case 'd':
		if (!parse_u64(arg, 0, 0xffffffffU, &env.dev))
			usage_error("invalid device '%s'", arg);
		env.filter_dev = true;
		break;
	case 'q':
		if (!parse_u64(arg, 0, 0xfffffffeU, &env.queue))
			usage_error("invalid queue '%s'", arg);
		env.filter_queue = true;
		break;
	case 'p':
		if (!parse_u64(arg, 1, 0x7fffffff, &env.pid))
			usage_error("invalid PID '%s'", arg);
		env.filter_pid = true;
		break;
	case 'T':
		env.timestamp = true;
		break;
	case 'j':
		env.json = true;
		break;
	case OPT_NO_BTF:
		env.no_btf = true;
		break;
	case 'v':
		tool_verbose = true;
		break;
	case ARGP_KEY_ARG:
		parse_interval_count(arg, env.npos++, &env.interval, &env.times);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void sig_handler(int sig)
{
	(void)sig;
	exiting = 1;
}

struct entry {
	struct fraclat_key key;
	struct fraclat_hists h;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct fraclat_key *x = &((const struct entry *)a)->key;
	const struct fraclat_key *y = &((const struct entry *)b)->key;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->status < y->status ? -1 : x->status > y->status;
}

static void merge_hists(void *dst, const void *src, bool first)
{
	struct fraclat_hists *d = dst;
	const struct fraclat_hists *s = src;
	int i;

	for (i = 0; i < NR_STAGES; i++)
		hist_merge(&d->stage[i], &s->stage[i], first);
}

static const char *group_name(int group)
{
	return group == GROUP_QUEUE ? "queue" : group == GROUP_OP ? "op" :
	       group == GROUP_PID ? "pid" : "none";
}

static void print_group_text(const struct entry *e)
{
	printf("dev = %u", e->key.dev);
	if (env.group == GROUP_QUEUE)
		printf(", queue = %u", e->key.id);
	else if (env.group == GROUP_OP)
		printf(", op = %s", frac_op_name(e->key.id));
	else if (env.group == GROUP_PID)
		printf(", pid = %u (%.*s)", e->key.id, TASK_COMM_LEN, e->h.stage[0].comm);
	if (env.by_status)
		printf(", status = %s", status_names[e->key.status % NR_STATUS]);
	printf("\n");
}

static void print_group_json(const struct entry *e)
{
	static const char *const not_grouped = "\"not grouped by this (-Q, -O, -P)\"";
	char comm[TASK_COMM_LEN + 1];

	/* Every key in every group: null, with the reason, when not grouped by it. */
	printf("{\"dev\":%u,\"status\":\"%s\"", e->key.dev, status_names[e->key.status % NR_STATUS]);
	if (env.group == GROUP_QUEUE)
		printf(",\"queue\":%u,\"queue_reason\":null", e->key.id);
	else
		printf(",\"queue\":null,\"queue_reason\":%s", not_grouped);
	if (env.group == GROUP_OP)
		printf(",\"op\":\"%s\",\"op_reason\":null", frac_op_name(e->key.id));
	else
		printf(",\"op\":null,\"op_reason\":%s", not_grouped);
	if (env.group == GROUP_PID) {
		memcpy(comm, e->h.stage[0].comm, TASK_COMM_LEN);
		comm[TASK_COMM_LEN] = 0;
		printf(",\"pid\":%u,\"comm\":", e->key.id);
		print_json_str(comm);
		printf(",\"pid_reason\":null");
	} else {
		printf(",\"pid\":null,\"comm\":null,\"pid_reason\":%s", not_grouped);
	}
	printf(",\"stages\":{");
}

static int print_hists(struct fraclat_bpf *obj, const char *attach, struct prog_misses *misses)
{
	static struct job_stats prev;
	struct job_stats cur, d;
	struct entry *e = NULL;
	size_t n = 0, i;
	int err, s;

	err = map_drain_percpu(bpf_map__fd(obj->maps.hists), sizeof(struct fraclat_key),
			       offsetof(struct fraclat_key, gen),
			       gen_flip(&obj->bss->frac_gen, obj->bss->frac_gen_busy),
			       sizeof(struct fraclat_hists), offsetof(struct entry, h), sizeof(*e),
			       merge_hists, (void **)&e, &n);
	if (!err)
		err = job_stats_read(bpf_map__fd(obj->maps.job_stats), &cur);
	if (err) {
		fprintf(stderr, "%s: failed to read the maps: %s\n", tool_name, strerror(-err));
		free(e);
		return err;
	}
	job_stats_delta(&d, &cur, &prev);
	prog_misses_update(misses, true);
	qsort(e, n, sizeof(*e), cmp_entry);
	if (env.json) {
		printf("{\"schema_version\":%d,\"time\":\"%s\",\"ts_ns\":%llu,\"attach\":\"%s\","
		       "\"unit\":\"%s\",\"group\":\"%s\",\"failed_in_histograms\":%s,"
		       JOB_TABLE_SIZE_JSON, FRAC_JSON_SCHEMA, time_str(), mono_ns(), attach,
		       unit_name(env.unit), group_name(env.group), env.by_status ? "true" : "false");
		print_job_stats_json(&d, misses);
		printf(",\"groups\":[");
		for (i = 0; i < n; i++) {
			if (i)
				printf(",");
			print_group_json(&e[i]);
			for (s = 0; s < NR_STAGES; s++) {
				printf("%s\"%s\":", s ? "," : "", stage_keys[s]);
				print_hist_json(&e[i].h.stage[s], env.unit, env.linear, env.step);
			}
			printf("}}");
		}
		printf("]}\n");
	} else {
		if (env.timestamp)
			printf("%-8s\n", time_str());
		if (!n)
			printf("no jobs completed\n");
		for (i = 0; i < n; i++) {
			if (i)
				printf("\n");
			print_group_text(&e[i]);
			for (s = 0; s < NR_STAGES; s++) {
				printf("\n%s\n", stage_names[s]);
				print_hist(&e[i].h.stage[s], env.unit, env.linear, env.step);
			}
		}
		printf("\n");
		print_job_stats_text(&d, misses, env.by_status ? "" :
				     "  (failed jobs are not in the histograms; -S shows them)");
	}
	fflush(stdout);
	free(e);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.args_doc = "[interval] [count]",
		.doc = argp_program_doc,
	};
	struct fraclat_bpf *obj = NULL;
	struct prog_misses misses;
	const char *attach;
	bool tp_btf;
	int err;

	tool_name = "fraclat";
	argp_err_exit_status = EXIT_USAGE;
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return EXIT_USAGE;

	libbpf_set_print(libbpf_print_fn);
	if (!frac_check_env())
		return EXIT_FAIL;

	obj = fraclat_bpf__open();
	if (!obj) {
		report_bpf_error("failed to open BPF object", -errno);
		return EXIT_FAIL;
	}

	obj->rodata->targ_group = env.group;
	obj->rodata->targ_by_status = env.by_status;
	obj->rodata->targ_unit = env.unit;
	obj->rodata->targ_linear = env.linear;
	obj->rodata->targ_lin_step = env.step;
	obj->rodata->filter_dev = env.filter_dev;
	obj->rodata->targ_dev = env.dev;
	obj->rodata->filter_queue = env.filter_queue;
	obj->rodata->targ_queue = env.queue;
	obj->rodata->filter_pid = env.filter_pid;
	obj->rodata->targ_pid = env.pid;

	tp_btf = !env.no_btf && probe_tp_btf_progs(obj->obj, FRAC_MODULE);
	attach = tp_btf ? "tp_btf" : "raw_tp";
	if (!tp_btf)
		report_fallback("raw_tp", "tp_btf", env.no_btf);
	select_progs(obj->obj, tp_btf, false);

	err = fraclat_bpf__load(obj);
	if (err) {
		report_bpf_error("failed to load BPF programs", err);
		goto cleanup;
	}
	err = fraclat_bpf__attach(obj);
	if (err) {
		report_bpf_error("failed to attach BPF programs", err);
		goto cleanup;
	}

	prog_misses_init(&misses, obj->obj);
	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);

	fprintf(env.json ? stderr : stdout,
		"Tracing FRAC job latency (%s)... Hit Ctrl-C to end.\n", attach);
	fflush(stdout);

	while (1) {
		sleep(env.interval);
		if (!env.json)
			printf("\n");
		err = print_hists(obj, attach, &misses);
		if (err)
			break;
		if (exiting || --env.times == 0)
			break;
	}

cleanup:
	fraclat_bpf__destroy(obj);
	return err != 0 ? EXIT_FAIL : 0;
}
