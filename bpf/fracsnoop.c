// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Copyright (c) 2026 The frac authors
 *
 * fracsnoop: trace FRAC jobs, one line per job with its stage timings.
 * Modelled on iovisor/bcc libbpf-tools/biosnoop.
 */
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fracsnoop.h"
#include "fracsnoop.skel.h"
#include "trace_helpers.h"
#include "libfrac.h"

static struct env {
	bool filter_dev, filter_queue, filter_pid;
	unsigned long long dev, queue, pid;
	unsigned long long duration;
	bool json;
	bool no_btf;
	int npos;
} env = {
};

static volatile sig_atomic_t exiting;
static unsigned long long start_ns;

const char *argp_program_version = "fracsnoop 0.1";
static const char argp_program_doc[] =
"Trace FRAC jobs: one line per job with its stage timings (usecs).\n"
"\n"
"Columns: SUB>RUN submit -> run, RUN>DEV run -> device start, DEVICE device\n"
"execution, END>IRQ device end -> interrupt, IRQ>SIG interrupt -> fence\n"
"signalled, TOTAL submit -> fence signalled (the sum of the five).\n"
"Jobs that ended but could not be shown are counted: a \"lost\" line (a\n"
"JSON object of \"type\":\"stats\") each second something was lost, and at exit.\n"
"\n"
"USAGE: fracsnoop [--help] [-d DEV] [-q QUEUE] [-p PID] [-j] [duration]\n"
"\n"
"EXAMPLES:\n"
"    fracsnoop            # trace every job until Ctrl-C\n"
"    fracsnoop -q 1       # jobs on queue 1 only\n"
"    fracsnoop -j 10      # JSON lines (ns), for 10 seconds\n";

enum { OPT_NO_BTF = 256 };

static const struct argp_option opts[] = {
	{ "dev", 'd', "DEV", 0, "Trace this device only (accel minor)", 0 },
	{ "queue", 'q', "QUEUE", 0, "Trace this queue only", 0 },
	{ "pid", 'p', "PID", 0, "Trace jobs submitted by this process only", 0 },
	{ "json", 'j', NULL, 0, "JSON output, one object per job (times in ns)", 0 },
	{ "no-btf", OPT_NO_BTF, NULL, 0, "Use raw_tp even when tp_btf works", 0 },
	{ "verbose", 'v', NULL, 0, "Verbose debug output", 0 },
	{ NULL, 'h', NULL, OPTION_HIDDEN, "Show the full help", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'h':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
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
		if (env.npos++)
			usage_error("unexpected argument '%s'", arg);
		if (!parse_u64(arg, 1, 1000000000, &env.duration))
			usage_error("invalid duration '%s'", arg);
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

static const char *flags_str(__u32 flags)
{
	static char buf[64];

	buf[0] = 0;
	if (flags & JOB_F_CLAMPED)
		strcat(buf, "clamped ");
	if (flags & JOB_F_NOIRQ)
		strcat(buf, "noirq ");
	if (flags & JOB_F_NODEV)
		strcat(buf, "nodev ");
	if (flags & JOB_F_NORUN)
		strcat(buf, "norun ");
	if (flags & JOB_F_NOCOMPLETE)
		strcat(buf, "nocomplete ");
	if (buf[0])
		buf[strlen(buf) - 1] = 0;
	return buf;
}

static int handle_event(void *ctx, void *data, size_t size)
{
	const struct event *e = data;
	char comm[TASK_COMM_LEN + 1];
	int i;

	(void)ctx;
	if (size < sizeof(*e))
		return 0;
	memcpy(comm, e->comm, TASK_COMM_LEN);
	comm[TASK_COMM_LEN] = 0;
	if (env.json) {
		printf("{\"schema_version\":%d,\"type\":\"job\",\"ts_ns\":%llu,\"comm\":",
		       FRAC_JSON_SCHEMA, (unsigned long long)e->ts);
		print_json_str(comm);
		printf(",\"pid\":%u,\"dev\":%u,\"queue\":%u,\"ctx\":%u,\"job\":%u,\"seqno\":%llu,"
		       "\"op\":\"%s\",\"ncmds\":%u,\"prio\":%u,\"bytes\":%llu,\"status\":%d",
		       e->pid, e->dev, e->queue, e->ctx, e->job, (unsigned long long)e->seqno,
		       frac_op_name(e->op), e->ncmds, e->prio, (unsigned long long)e->bytes,
		       e->status);
		for (i = 0; i < NR_STAGES; i++) {
			if (stage_measured(e->flags, i))
				printf(",\"%s_ns\":%llu,\"%s_reason\":null", stage_keys[i],
				       (unsigned long long)e->stages[i], stage_keys[i]);
			else
				printf(",\"%s_ns\":null,\"%s_reason\":\"%s\"", stage_keys[i],
				       stage_keys[i], e->flags & JOB_F_NORUN && i <= STAGE_RUN_START ?
				       "not stamped at run" : "frac_job_complete not seen");
		}
		printf(",\"clamped\":%s,\"noirq\":%s,\"nodev\":%s,\"norun\":%s,"
		       "\"nocomplete\":%s}\n",
		       e->flags & JOB_F_CLAMPED ? "true" : "false",
		       e->flags & JOB_F_NOIRQ ? "true" : "false",
		       e->flags & JOB_F_NODEV ? "true" : "false",
		       e->flags & JOB_F_NORUN ? "true" : "false",
		       e->flags & JOB_F_NOCOMPLETE ? "true" : "false");
	} else {
		printf("%-11.6f %-15s %-7u %-3u %-5u %-5u %-6u %-9s %10llu",
		       e->ts > start_ns ? (e->ts - start_ns) / 1e9 : 0.0, comm, e->pid, e->dev,
		       e->queue, e->ctx, e->job, frac_op_name(e->op),
		       (unsigned long long)e->bytes);
		for (i = 0; i < NR_STAGES; i++) {
			if (stage_measured(e->flags, i))
				printf(" %9.1f", e->stages[i] / 1e3);
			else
				printf(" %9s", "-");
		}
		printf(" %6d%s%s\n", e->status, e->flags & ~JOB_F_COMPLETED ? " " : "",
		       flags_str(e->flags));
	}
	return 0;
}

/* The programs' misses when they were loaded: the run's are counted from there. */
static struct prog_misses misses_at_start;

/* The whole run's counters: @cur (the map, zeroed at load), the misses since the start. */
static void print_run_stats(const struct job_stats *cur, const struct prog_misses *misses)
{
	struct prog_misses run = *misses;
	int i;

	run.total = 0;
	for (i = 0; i < run.n; i++) {
		run.delta[i] = misses->last[i] + misses->delta[i] - misses_at_start.last[i];
		run.total += run.delta[i];
	}
	if (env.json) {
		printf(",\"run\":{\"start_ns\":%llu", start_ns);
		print_job_stats_json(cur, &run);
		printf("},\"run_reason\":null");
	} else {
		printf("== at exit, the whole run:\n");
		print_job_stats_text(cur, &run, NULL);
	}
}

/*
 * What was lost since the last report: as a "type":"stats" JSON object, or a
 * "lost" line. @final: at exit, printed even when nothing was lost, and with the
 * whole run's counters ("run"; null in the other reports).
 */
static int report_stats(struct fracsnoop_bpf *obj, struct prog_misses *misses, bool final)
{
	static struct job_stats prev;
	struct job_stats cur, d, p = prev;
	int err;

	err = job_stats_read(bpf_map__fd(obj->maps.job_stats), &cur);
	if (err) {
		fprintf(stderr, "%s: failed to read the counters: %s\n", tool_name, strerror(-err));
		return err;
	}
	/* Since the last report: neither the counters nor the misses move on until printed. */
	job_stats_delta(&d, &cur, &p);
	prog_misses_update(misses, false);
	if (!final && !job_stats_lost(&d, misses) && !d.table_full && !d.norun && !d.nocomplete &&
	    !misses->total)
		return 0;
	prev = p;
	if (env.json) {
		printf("{\"schema_version\":%d,\"type\":\"stats\",\"final\":%s,\"ts_ns\":%llu,"
		       JOB_TABLE_SIZE_JSON, FRAC_JSON_SCHEMA, final ? "true" : "false", mono_ns());
		print_job_stats_json(&d, misses);
		if (final)
			print_run_stats(&cur, misses);
		else
			printf(",\"run\":null,\"run_reason\":\"the final object has the run's totals\"");
		printf("}\n");
	} else {
		printf("%s", final ? "== at exit, since the last report:\n" : "== ");
		print_job_stats_text(&d, misses, NULL);
		if (final)
			print_run_stats(&cur, misses);
	}
	for (err = 0; err < misses->n; err++)	/* exactly what was printed becomes the last */
		misses->last[err] += misses->delta[err];
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.args_doc = "[duration]",
		.doc = argp_program_doc,
	};
	struct ring_buffer *rb = NULL;
	struct fracsnoop_bpf *obj;
	struct prog_misses misses;
	unsigned long long end_ns = 0, next_stats;
	const char *attach;
	bool tp_btf;
	int err;

	tool_name = "fracsnoop";
	argp_err_exit_status = EXIT_USAGE;
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return EXIT_USAGE;

	libbpf_set_print(libbpf_print_fn);
	if (!frac_check_env())
		return EXIT_FAIL;

	obj = fracsnoop_bpf__open();
	if (!obj) {
		report_bpf_error("failed to open BPF object", -errno);
		return EXIT_FAIL;
	}
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

	err = fracsnoop_bpf__load(obj);
	if (err) {
		report_bpf_error("failed to load BPF programs", err);
		goto cleanup;
	}
	err = fracsnoop_bpf__attach(obj);
	if (err) {
		report_bpf_error("failed to attach BPF programs", err);
		goto cleanup;
	}
	rb = ring_buffer__new(bpf_map__fd(obj->maps.events), handle_event, NULL, NULL);
	if (!rb) {
		err = -errno;
		report_bpf_error("failed to create ring buffer", err);
		goto cleanup;
	}

	prog_misses_init(&misses, obj->obj);
	misses_at_start = misses;
	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);

	start_ns = mono_ns();
	next_stats = start_ns + NSEC_PER_SEC;
	if (env.duration)
		end_ns = start_ns + env.duration * NSEC_PER_SEC;
	fprintf(stderr, "Tracing FRAC jobs (%s)... Hit Ctrl-C to end.\n", attach);
	if (!env.json)
		printf("%-11s %-15s %-7s %-3s %-5s %-5s %-6s %-9s %10s %9s %9s %9s %9s %9s %9s %6s\n",
		       "TIME(s)", "COMM", "PID", "DEV", "QUEUE", "CTX", "JOB", "OP", "BYTES",
		       "SUB>RUN", "RUN>DEV", "DEVICE", "END>IRQ", "IRQ>SIG", "TOTAL(us)",
		       "STATUS");
	fflush(stdout);

	while (!exiting) {
		err = ring_buffer__poll(rb, 100);
		if (err == -EINTR) {
			err = 0;
			break;
		}
		if (err < 0) {
			fprintf(stderr, "%s: polling the ring buffer: %s\n", tool_name,
				strerror(-err));
			break;
		}
		err = 0;
		fflush(stdout);
		if (mono_ns() >= next_stats) {
			/* Events first, so a loss is reported after the jobs before it. */
			ring_buffer__consume(rb);
			err = report_stats(obj, &misses, false);
			if (err)
				break;
			next_stats += NSEC_PER_SEC;
		}
		if (end_ns && mono_ns() >= end_ns)
			break;
	}
	/* What is left in the buffer. */
	if (!err) {
		ring_buffer__consume(rb);
		err = report_stats(obj, &misses, true);
	}
	fflush(stdout);

cleanup:
	ring_buffer__free(rb);
	fracsnoop_bpf__destroy(obj);
	return err != 0 ? EXIT_FAIL : 0;
}
