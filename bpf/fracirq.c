// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Copyright (c) 2026 The frac authors
 *
 * fracirq: summarize FRAC interrupts: count and rate per vector, handler time
 * histograms, and interrupt -> fence signalled latency.
 * Modelled on iovisor/bcc libbpf-tools/hardirqs.
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

#include "fracirq.h"
#include "fracirq.skel.h"
#include "trace_helpers.h"

static struct env {
	int unit;
	bool linear;
	unsigned long long step;
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

const char *argp_program_version = "fracirq 0.1";
static const char argp_program_doc[] =
"Summarize FRAC interrupts: count and rate per vector, handler time, and\n"
"interrupt -> fence signalled latency for the fences a handler signals.\n"
"\n"
"USAGE: fracirq [--help] [-m | -N] [-L STEP] [-d DEV] [-T] [-j] [interval] [count]\n"
"\n"
"EXAMPLES:\n"
"    fracirq              # summarize until Ctrl-C\n"
"    fracirq 1 10         # 1 second summaries, 10 times\n"
"    fracirq -N           # nanosecond histograms\n"
"    fracirq -j 5         # JSON, one object per 5 s interval\n";

enum { OPT_NO_BTF = 256 };

static const struct argp_option opts[] = {
	{ "milliseconds", 'm', NULL, 0, "Millisecond histograms", 0 },
	{ "nanoseconds", 'N', NULL, 0, "Nanosecond histograms", 0 },
	{ "linear", 'L', "STEP", 0, "Linear buckets of STEP units (default: log2)", 0 },
	{ "dev", 'd', "DEV", 0, "Trace this device only (accel minor)", 0 },
	{ "timestamp", 'T', NULL, 0, "Include a timestamp on output", 0 },
	{ "json", 'j', NULL, 0, "JSON output, one object per interval", 0 },
	{ "no-btf", OPT_NO_BTF, NULL, 0, "Use raw_tp and kprobes even when BTF attach works", 0 },
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

/* The action name of Linux irq @irq in /proc/interrupts ("frac-q0"), or "?". */
static const char *irq_name(unsigned int irq)
{
	static char name[64];
	char line[1024], *p, *last;
	unsigned int n;
	FILE *f;

	snprintf(name, sizeof(name), "?");
	f = fopen("/proc/interrupts", "r");
	if (!f)
		return name;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %u:", &n) != 1 || n != irq)
			continue;
		last = NULL;
		for (p = strtok(line, " \t\n"); p; p = strtok(NULL, " \t\n"))
			last = p;
		if (last)
			snprintf(name, sizeof(name), "%s", last);
		break;
	}
	fclose(f);
	return name;
}

static const char *vector_name(const struct vec_key *k)
{
	static char name[32];

	if (k->queue != FRAC_NO_QUEUE)
		snprintf(name, sizeof(name), "frac-q%u", k->queue);
	else if (k->vector == 0)
		snprintf(name, sizeof(name), "frac");	/* the one MSI/INTx vector */
	else
		snprintf(name, sizeof(name), "frac-err");
	return name;
}

struct vec_entry {
	struct vec_key key;
	__u64 count;
};

struct hist_entry {
	struct fracirq_key key;
	struct hist hist;
};

static void merge_count(void *dst, const void *src, bool first)
{
	__u64 *d = dst;

	*d = (first ? 0 : *d) + *(const __u64 *)src;
}

static void merge_hist(void *dst, const void *src, bool first)
{
	hist_merge(dst, src, first);
}

static int cmp_vec(const void *a, const void *b)
{
	const struct vec_key *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->vector < y->vector ? -1 : x->vector > y->vector;
}

static int cmp_hist(const void *a, const void *b)
{
	const struct fracirq_key *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int print_stats(struct fracirq_bpf *obj, const char *attach, double secs,
		       struct prog_misses *misses)
{
	static __u64 prev_counts_full, prev_hists_full;
	__u64 counts_full = obj->bss->nr_counts_full, hists_full = obj->bss->nr_hists_full;
	struct hist_entry *h = NULL;
	struct vec_entry *v = NULL;
	size_t nv = 0, nh = 0, i;
	bool first;
	__u32 gen;
	int err;

	gen = gen_flip(&obj->bss->frac_gen, obj->bss->frac_gen_busy);
	err = map_drain_percpu(bpf_map__fd(obj->maps.counts), sizeof(struct vec_key),
			       offsetof(struct vec_key, gen), gen, sizeof(__u64),
			       offsetof(struct vec_entry, count), sizeof(*v), merge_count,
			       (void **)&v, &nv);
	if (!err)
		err = map_drain_percpu(bpf_map__fd(obj->maps.hists), sizeof(struct fracirq_key),
				       offsetof(struct fracirq_key, gen), gen, sizeof(struct hist),
				       offsetof(struct hist_entry, hist), sizeof(*h), merge_hist,
				       (void **)&h, &nh);
	if (err) {
		fprintf(stderr, "%s: failed to read maps: %s\n", tool_name, strerror(-err));
		goto out;
	}
	qsort(v, nv, sizeof(*v), cmp_vec);
	qsort(h, nh, sizeof(*h), cmp_hist);
	prog_misses_update(misses, true);

	if (env.json) {
		printf("{\"schema_version\":%d,\"time\":\"%s\",\"ts_ns\":%llu,\"attach\":\"%s\","
		       "\"interval_s\":%.3f,\"lost\":{\"counts_map_full\":%llu,"
		       "\"hists_map_full\":%llu}", FRAC_JSON_SCHEMA, time_str(), mono_ns(), attach,
		       secs, (unsigned long long)(counts_full - prev_counts_full),
		       (unsigned long long)(hists_full - prev_hists_full));
		prog_misses_print_json(misses);
		printf(",\"vectors\":[");
		for (i = 0; i < nv; i++) {
			printf("%s{\"dev\":%u,\"vector\":%u,", i ? "," : "", v[i].key.dev,
			       v[i].key.vector);
			if (v[i].key.queue == FRAC_NO_QUEUE)
				printf("\"queue\":null,\"queue_reason\":\"%s\",", v[i].key.vector ?
				       "the error vector" : "the one MSI/INTx vector of every queue");
			else
				printf("\"queue\":%u,\"queue_reason\":null,", v[i].key.queue);
			printf("\"name\":\"%s\",\"count\":%llu,\"per_sec\":%.1f}",
			       vector_name(&v[i].key), (unsigned long long)v[i].count,
			       v[i].count / secs);
		}
		printf("],\"handlers\":[");
		first = true;
		for (i = 0; i < nh; i++) {
			if (h[i].key.kind != HIST_HANDLER)
				continue;
			printf("%s{\"irq\":%u,\"name\":", first ? "" : ",", h[i].key.id);
			print_json_str(irq_name(h[i].key.id));
			printf(",\"time\":");
			print_hist_json(&h[i].hist, env.unit, env.linear, env.step);
			printf("}");
			first = false;
		}
		printf("],\"irq_signal\":[");
		first = true;
		for (i = 0; i < nh; i++) {
			if (h[i].key.kind != HIST_SIGNAL)
				continue;
			printf("%s{\"dev\":%u,\"queue\":%u,\"latency\":", first ? "" : ",",
			       h[i].key.dev, h[i].key.id);
			print_hist_json(&h[i].hist, env.unit, env.linear, env.step);
			printf("}");
			first = false;
		}
		printf("]}\n");
		goto out;
	}

	if (env.timestamp)
		printf("%-8s\n", time_str());
	printf("%-4s %-7s %-12s %10s %10s\n", "DEV", "VECTOR", "NAME", "COUNT", "IRQ/s");
	for (i = 0; i < nv; i++)
		printf("%-4u %-7u %-12s %10llu %10.1f\n", v[i].key.dev, v[i].key.vector,
		       vector_name(&v[i].key), (unsigned long long)v[i].count, v[i].count / secs);
	if (!nv)
		printf("(no interrupts)\n");
	for (i = 0; i < nh; i++) {
		if (h[i].key.kind == HIST_HANDLER)
			printf("\nhandler time, %s (irq %u)\n", irq_name(h[i].key.id), h[i].key.id);
		else
			printf("\ninterrupt -> fence signalled, dev %u queue %u\n", h[i].key.dev,
			       h[i].key.id);
		print_hist(&h[i].hist, env.unit, env.linear, env.step);
	}
	printf("\nlost: counts-map-full %llu  hists-map-full %llu  bpf recursion misses %llu\n",
	       (unsigned long long)(counts_full - prev_counts_full),
	       (unsigned long long)(hists_full - prev_hists_full), misses->total);
out:
	prev_counts_full = counts_full;
	prev_hists_full = hists_full;
	fflush(stdout);
	free(v);
	free(h);
	return err;
}

static char kmulti_why[128];

/*
 * Without fentry: the three handlers through kprobe.multi links if the kernel
 * takes them (no perf event), the kprobe/kretprobe programs are then not
 * attached; else those. True for kprobe.multi.
 */
static bool attach_handlers_kprobe(struct fracirq_bpf *obj)
{
	static const char *syms[] = { "frac_queue_irq", "frac_error_irq", "frac_legacy_irq" };
	LIBBPF_OPTS(bpf_kprobe_multi_opts, opts, .syms = syms, .cnt = 3);
	struct bpf_program *prog;
	struct bpf_link *entry, *ret;

	entry = bpf_program__attach_kprobe_multi_opts(obj->progs.handlers_kmulti, NULL, &opts);
	opts.retprobe = true;
	ret = entry ? bpf_program__attach_kprobe_multi_opts(obj->progs.handlers_kmulti_ret, NULL,
							    &opts) : NULL;
	if (!entry || !ret) {
		snprintf(kmulti_why, sizeof(kmulti_why), "%s", strerror(errno));
		bpf_link__destroy(entry);
		return false;
	}
	obj->links.handlers_kmulti = entry;
	obj->links.handlers_kmulti_ret = ret;
	bpf_object__for_each_program(prog, obj->obj) {
		const char *sec = bpf_program__section_name(prog);

		if (!strncmp(sec, "kprobe/", 7) || !strncmp(sec, "kretprobe/", 10))
			bpf_program__set_autoattach(prog, false);
	}
	return true;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.args_doc = "[interval] [count]",
		.doc = argp_program_doc,
	};
	struct fracirq_bpf *obj;
	struct prog_misses misses;
	unsigned long long last, now;
	bool tp_btf, fentry;
	char attach[32];
	int err;

	tool_name = "fracirq";
	argp_err_exit_status = EXIT_USAGE;
	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return EXIT_USAGE;

	libbpf_set_print(libbpf_print_fn);
	if (!frac_check_env())
		return EXIT_FAIL;

	obj = fracirq_bpf__open();
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
	if (!tp_btf)
		report_fallback("raw_tp", "tp_btf", env.no_btf);
	/* Every handler the object attaches to, fentry and fexit. */
	fentry = !env.no_btf && probe_fentry_progs(obj->obj, FRAC_MODULE);
	select_progs(obj->obj, tp_btf, fentry);
	/* Without fentry both kprobe kinds load; attach decides (attach_handlers_kprobe). */
	bpf_program__set_autoload(obj->progs.handlers_kmulti, !fentry);
	bpf_program__set_autoload(obj->progs.handlers_kmulti_ret, !fentry);

	err = fracirq_bpf__load(obj);
	if (err) {
		report_bpf_error("failed to load BPF programs", err);
		goto cleanup;
	}
	if (!fentry) {
		bool kmulti = attach_handlers_kprobe(obj);

		/* One line: what, instead of what, why. */
		fprintf(stderr, "%s: attaching with %s, not fentry/fexit: %s%s%s\n", tool_name,
			kmulti ? "kprobe.multi" : "kprobe/kretprobe",
			env.no_btf ? "--no-btf" : probe_why, kmulti ? "" : "; kprobe.multi: ",
			kmulti ? "" : kmulti_why);
		snprintf(attach, sizeof(attach), "%s+%s", tp_btf ? "tp_btf" : "raw_tp",
			 kmulti ? "kprobe.multi" : "kprobe");
	} else {
		snprintf(attach, sizeof(attach), "%s+fentry", tp_btf ? "tp_btf" : "raw_tp");
	}
	err = fracirq_bpf__attach(obj);
	if (err) {
		report_bpf_error("failed to attach BPF programs", err);
		goto cleanup;
	}

	prog_misses_init(&misses, obj->obj);
	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);

	fprintf(env.json ? stderr : stdout,
		"Tracing FRAC interrupts (%s)... Hit Ctrl-C to end.\n", attach);
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
	fracirq_bpf__destroy(obj);
	return err != 0 ? EXIT_FAIL : 0;
}
