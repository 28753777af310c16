// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Copyright (c) 2026 The frac authors
 *
 * fracdma: summarize FRAC DMA mapping: map/unmap latency histograms, bytes,
 * segments and throughput per direction.
 * Modelled on iovisor/bcc libbpf-tools/biolatency and bitesize.
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

#include "fracdma.h"
#include "fracdma.skel.h"
#include "trace_helpers.h"

static struct env {
	int unit;
	bool linear;
	unsigned long long step;
	bool sizes;
	bool filter_dev;
	unsigned long long dev;
	bool timestamp;
	bool json;
	bool no_btf;
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

const char *argp_program_version = "fracdma 0.1";
static const char argp_program_doc[] =
"Summarize FRAC DMA mapping of host buffers: map and unmap latency, bytes,\n"
"segments and throughput per direction.\n"
"\n"
"BYTES and KB/s are the sizes of the buffers mapped and unmapped, not bytes the\n"
"device moved (fracsnoop and fraclat -O give the jobs' operand bytes). DIR is\n"
"the direction the buffer was created with (DRM_FRAC_BO_TO_DEVICE,\n"
"DRM_FRAC_BO_FROM_DEVICE, else bidirectional).\n"
"\n"
"USAGE: fracdma [--help] [-m | -N] [-L STEP] [-s] [-d DEV] [-T] [-j] [interval] [count]\n"
"\n"
"EXAMPLES:\n"
"    fracdma              # summarize until Ctrl-C\n"
"    fracdma 1 10         # 1 second summaries, 10 times\n"
"    fracdma -s           # also a histogram of the mapping sizes\n"
"    fracdma -j 5         # JSON, one object per 5 s interval\n";

enum { OPT_NO_BTF = 256 };

static const struct argp_option opts[] = {
	{ "milliseconds", 'm', NULL, 0, "Millisecond histograms", 0 },
	{ "nanoseconds", 'N', NULL, 0, "Nanosecond histograms", 0 },
	{ "linear", 'L', "STEP", 0, "Linear buckets of STEP units (default: log2)", 0 },
	{ "sizes", 's', NULL, 0, "Also print a histogram of the mapping sizes", 0 },
	{ "dev", 'd', "DEV", 0, "Trace this device only (accel minor)", 0 },
	{ "timestamp", 'T', NULL, 0, "Include a timestamp on output", 0 },
	{ "json", 'j', NULL, 0, "JSON output, one object per interval", 0 },
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
	case 's':
		env.sizes = true;
		break;
	case 'd':
		if (!parse_u64(arg, 0, 0xffffffffU, &env.dev))
			usage_error("invalid device '%s'", arg);
		env.filter_dev = true;
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
	struct fracdma_key key;
	struct fracdma_val val;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct fracdma_key *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->dir != y->dir)
		return x->dir < y->dir ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

static const char *kind_name(__u32 kind)
{
	return kind == DMA_MAP ? "map" : "unmap";
}

static int print_stats(struct fracdma_bpf *obj, const char *attach, double secs,
		       struct prog_misses *misses)
{
	static __u64 prev_full;
	__u64 full = obj->bss->nr_stats_full, dfull = full - prev_full;
	struct entry *e = NULL;
	size_t n = 0, i;
	int err, j;

	err = map_drain(bpf_map__fd(obj->maps.stats), sizeof(struct fracdma_key),
			offsetof(struct fracdma_key, gen),
			gen_flip(&obj->bss->frac_gen, obj->bss->frac_gen_busy),
			offsetof(struct entry, val), sizeof(*e), (void **)&e, &n);
	if (err) {
		fprintf(stderr, "%s: failed to read the map: %s\n", tool_name, strerror(-err));
		free(e);
		return err;
	}
	qsort(e, n, sizeof(*e), cmp_entry);
	prev_full = full;
	prog_misses_update(misses, true);
	if (env.json) {
		printf("{\"schema_version\":%d,\"time\":\"%s\",\"ts_ns\":%llu,\"attach\":\"%s\","
		       "\"interval_s\":%.3f,\"lost\":{\"stats_map_full\":%llu}", FRAC_JSON_SCHEMA,
		       time_str(), mono_ns(), attach, secs, (unsigned long long)dfull);
		prog_misses_print_json(misses);
		printf(",\"dma\":[");
		for (i = 0; i < n; i++) {
			const struct fracdma_val *v = &e[i].val;
			bool first = true;

			printf("%s{\"dev\":%u,\"op\":\"%s\",\"dir\":\"%s\",\"count\":%llu,"
			       "\"bytes\":%llu,\"segs\":%llu,\"bytes_per_sec\":%.0f,\"latency\":",
			       i ? "," : "", e[i].key.dev, kind_name(e[i].key.kind),
			       frac_dir_name(e[i].key.dir), (unsigned long long)v->lat.count,
			       (unsigned long long)v->bytes, (unsigned long long)v->segs,
			       v->bytes / secs);
			print_hist_json(&v->lat, env.unit, env.linear, env.step);
			printf(",\"sizes\":[");
			for (j = 0; j < MAX_SLOTS; j++) {
				if (!v->size_slots[j])
					continue;
				printf("%s{\"low\":%llu,\"high\":%llu,\"count\":%u}", first ? "" : ",",
				       j ? 1ULL << j : 0ULL, (2ULL << j) - 1, v->size_slots[j]);
				first = false;
			}
			printf("]}");
		}
		printf("]}\n");
		goto out;
	}

	if (env.timestamp)
		printf("%-8s\n", time_str());
	printf("%-4s %-6s %-14s %8s %12s %10s %8s %10s\n", "DEV", "OP", "DIR", "COUNT", "BYTES",
	       "AVG_BYTES", "SEGS", "KB/s");
	for (i = 0; i < n; i++) {
		const struct fracdma_val *v = &e[i].val;

		printf("%-4u %-6s %-14s %8llu %12llu %10llu %8llu %10.1f\n", e[i].key.dev,
		       kind_name(e[i].key.kind), frac_dir_name(e[i].key.dir),
		       (unsigned long long)v->lat.count, (unsigned long long)v->bytes,
		       (unsigned long long)(v->lat.count ? v->bytes / v->lat.count : 0),
		       (unsigned long long)v->segs, v->bytes / secs / 1e3);
	}
	if (!n)
		printf("(no DMA mappings)\n");
	for (i = 0; i < n; i++) {
		const struct fracdma_val *v = &e[i].val;

		printf("\n%s latency, dev %u, %s\n", kind_name(e[i].key.kind), e[i].key.dev,
		       frac_dir_name(e[i].key.dir));
		print_hist(&v->lat, env.unit, env.linear, env.step);
		if (env.sizes) {
			printf("\n%s sizes, dev %u, %s\n", kind_name(e[i].key.kind), e[i].key.dev,
			       frac_dir_name(e[i].key.dir));
			print_log2_hist(v->size_slots, MAX_SLOTS, "bytes");
		}
	}
	printf("\nlost: stats-map-full %llu  bpf recursion misses %llu\n",
	       (unsigned long long)dfull, misses->total);
out:
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
	struct fracdma_bpf *obj;
	struct prog_misses misses;
	unsigned long long last, now;
	const char *attach;
	bool tp_btf;
	int err;

	tool_name = "fracdma";
	argp_err_exit_status = EXIT_USAGE;
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return EXIT_USAGE;

	libbpf_set_print(libbpf_print_fn);
	if (!frac_check_env())
		return EXIT_FAIL;

	obj = fracdma_bpf__open();
	if (!obj) {
		report_bpf_error("failed to open BPF object", -errno);
		return EXIT_FAIL;
	}
	obj->rodata->targ_unit = env.unit;
	obj->rodata->targ_linear = env.linear;
	obj->rodata->targ_lin_step = env.step;
	obj->rodata->filter_dev = env.filter_dev;
	obj->rodata->targ_dev = env.dev;

	tp_btf = !env.no_btf && probe_tp_btf_progs(obj->obj, FRAC_MODULE);
	attach = tp_btf ? "tp_btf" : "raw_tp";
	if (!tp_btf)
		report_fallback("raw_tp", "tp_btf", env.no_btf);
	select_progs(obj->obj, tp_btf, false);

	err = fracdma_bpf__load(obj);
	if (err) {
		report_bpf_error("failed to load BPF programs", err);
		goto cleanup;
	}
	err = fracdma_bpf__attach(obj);
	if (err) {
		report_bpf_error("failed to attach BPF programs", err);
		goto cleanup;
	}

	prog_misses_init(&misses, obj->obj);
	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);

	fprintf(env.json ? stderr : stdout,
		"Tracing FRAC DMA mapping (%s)... Hit Ctrl-C to end.\n", attach);
	fflush(stdout);

	last = mono_ns();
	while (1) {
		sleep(env.interval);
		now = mono_ns();
		if (!env.json)
			printf("\n");
		err = print_stats(obj, attach, (now - last) / 1e9, &misses);
		last = now;
		if (err)
			break;
		if (exiting || --env.times == 0)
			break;
	}

cleanup:
	fracdma_bpf__destroy(obj);
	return err != 0 ? EXIT_FAIL : 0;
}
