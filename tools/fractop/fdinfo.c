// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * A parser of the DRM client usage stats that drivers print in /proc/<pid>/fdinfo/<fd>
 * (Documentation/gpu/drm-usage-stats.rst, 6.12): one "key: value [unit]" per line, keys
 * prefixed "drm-". It knows every standard key, whatever the driver, and the driver-specific
 * keys of frac.ko; other keys are ignored, and a drm- line that breaks the format (no colon,
 * whitespace in the key, a value that is not a number, an unknown unit) is counted in
 * ->malformed and ignored, so one bad line never hides the rest. Pure: no I/O.
 */

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "fractop.h"

/* An unsigned decimal, no sign, no overflow; *end after the digits. */
int ft_parse_u64(const char *s, const char **end, uint64_t *v)
{
	uint64_t x = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned int d = *p - '0';

		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	*v = x;
	if (end)
		*end = p;
	return 0;
}

static const char *skip_ws(const char *p, const char *e)
{
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* The unit after a number: its multiplier, or 0 if the unit is not one of @units. */
struct unit {
	const char *name;
	uint64_t mul;
};

static const struct unit mem_units[] = {
	{ "", 1 }, { "KiB", 1ull << 10 }, { "MiB", 1ull << 20 }, { NULL, 0 }
};
static const struct unit ns_units[] = { { "ns", 1 }, { "", 1 }, { NULL, 0 } };
static const struct unit freq_units[] = {
	{ "", 1 }, { "Hz", 1 }, { "KHz", 1000 }, { "kHz", 1000 }, { "MHz", 1000000 }, { NULL, 0 }
};
static const struct unit no_units[] = { { "", 1 }, { NULL, 0 } };

/* Parse "<uint>[ unit]" filling all of [p, e); 0 or -EINVAL/-ERANGE. */
static int parse_value(const char *p, const char *e, const struct unit *units, uint64_t *out)
{
	const char *q;
	uint64_t v;
	size_t ulen;
	int ret;

	ret = ft_parse_u64(p, &q, &v);
	if (ret)
		return ret;
	if (q > e)
		return -EINVAL;
	q = skip_ws(q, e);
	ulen = e - q;
	for (; units->name; units++) {
		if (strlen(units->name) != ulen || memcmp(units->name, q, ulen))
			continue;
		if (units->mul > 1 && v > UINT64_MAX / units->mul)
			return -ERANGE;
		*out = v * units->mul;
		return 0;
	}
	return -EINVAL;
}

static int copy_name(char *dst, const char *s, size_t n)
{
	if (n == 0 || n >= FT_NAME_LEN)
		return -EINVAL;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

static struct ft_engine *find_engine(struct ft_fdinfo *fi, const char *name, size_t n)
{
	unsigned int i;

	for (i = 0; i < fi->nr_engines; i++)
		if (strlen(fi->engines[i].name) == n && !memcmp(fi->engines[i].name, name, n))
			return &fi->engines[i];
	if (fi->nr_engines == FT_MAX_ENGINES || n >= FT_NAME_LEN) {
		fi->dropped++;
		return NULL;
	}
	copy_name(fi->engines[fi->nr_engines].name, name, n);
	return &fi->engines[fi->nr_engines++];
}

static struct ft_region *find_region(struct ft_fdinfo *fi, const char *name, size_t n)
{
	unsigned int i;

	for (i = 0; i < fi->nr_regions; i++)
		if (strlen(fi->regions[i].name) == n && !memcmp(fi->regions[i].name, name, n))
			return &fi->regions[i];
	if (fi->nr_regions == FT_MAX_REGIONS || n >= FT_NAME_LEN) {
		fi->dropped++;
		return NULL;
	}
	copy_name(fi->regions[fi->nr_regions].name, name, n);
	return &fi->regions[fi->nr_regions++];
}

/*
 * Prefixes of the per-engine and per-region keys. Order matters: a longer prefix before any
 * prefix of it ("drm-engine-capacity-" before "drm-engine-", "drm-total-cycles-" before
 * "drm-total-"), so that an engine named "capacity-x" cannot exist: the document reserves it.
 */
static const struct {
	const char *prefix;
	bool engine;
	int key;
	const struct unit *units;
} keyed[] = {
	{ "drm-engine-capacity-", true, FT_ENG_CAPACITY, no_units },
	{ "drm-engine-", true, FT_ENG_NS, ns_units },
	{ "drm-total-cycles-", true, FT_ENG_TOTAL_CYCLES, no_units },
	{ "drm-cycles-", true, FT_ENG_CYCLES, no_units },
	{ "drm-maxfreq-", true, FT_ENG_MAXFREQ, freq_units },
	{ "drm-memory-", false, FT_MEM_MEMORY, mem_units },
	{ "drm-total-", false, FT_MEM_TOTAL, mem_units },
	{ "drm-shared-", false, FT_MEM_SHARED, mem_units },
	{ "drm-resident-", false, FT_MEM_RESIDENT, mem_units },
	{ "drm-purgeable-", false, FT_MEM_PURGEABLE, mem_units },
	{ "drm-active-", false, FT_MEM_ACTIVE, mem_units },
};

static const char *const drv_keys[FT_DRV_NR] = {
	[FT_DRV_FRAC_CONTEXT] = "drm-frac-context",
	[FT_DRV_FRAC_JOBS_COMPLETED] = "drm-frac-jobs-completed",
	[FT_DRV_FRAC_JOBS_FAILED] = "drm-frac-jobs-failed",
};

static bool key_is(const char *k, size_t kn, const char *lit)
{
	return strlen(lit) == kn && !memcmp(k, lit, kn);
}

/* One line, [p, e) without the newline. */
static void parse_line(struct ft_fdinfo *fi, const char *p, const char *e)
{
	const char *colon = memchr(p, ':', e - p);
	const char *k = p, *v;
	size_t kn, i;
	bool drm = (size_t)(e - p) >= 4 && !memcmp(p, "drm-", 4);
	uint64_t x;

	if (!colon) {
		if (drm)
			fi->malformed++;
		return;
	}
	kn = colon - k;
	v = skip_ws(colon + 1, e);
	while (e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	for (i = 0; i < kn; i++) {
		if (isspace((unsigned char)k[i])) {
			if (drm)
				fi->malformed++;
			return;
		}
	}

	/* frac.ko's own keys (drm-frac-*: drm-usage-stats.rst wants every key drm- prefixed). */
	for (i = 0; i < FT_DRV_NR; i++) {
		if (!key_is(k, kn, drv_keys[i]))
			continue;
		if (parse_value(v, e, no_units, &x)) {
			fi->malformed++;
			return;
		}
		fi->drv[i] = x;
		fi->drv_has |= 1u << i;
		return;
	}
	if (!drm)
		return;		/* pos, flags, mnt_id, ino, ...: not ours */

	if (key_is(k, kn, "drm-driver") || key_is(k, kn, "drm-pdev")) {
		char *dst = k[4] == 'd' ? fi->driver : fi->pdev;

		if (copy_name(dst, v, e - v)) {
			fi->malformed++;
			return;
		}
		if (dst == fi->driver)
			fi->has_driver = true;
		else
			fi->has_pdev = true;
		return;
	}
	if (key_is(k, kn, "drm-client-id")) {
		if (parse_value(v, e, no_units, &fi->client_id)) {
			fi->malformed++;
			return;
		}
		fi->has_client_id = true;
		return;
	}

	for (i = 0; i < sizeof(keyed) / sizeof(keyed[0]); i++) {
		size_t pl = strlen(keyed[i].prefix);
		const char *name = k + pl;
		size_t nn = kn - pl;

		if (kn < pl || memcmp(k, keyed[i].prefix, pl))
			continue;
		if (nn == 0 || parse_value(v, e, keyed[i].units, &x)) {
			fi->malformed++;
			return;
		}
		if (keyed[i].engine) {
			struct ft_engine *en;

			/* "Zero capacity is not allowed." */
			if (keyed[i].key == FT_ENG_CAPACITY && x == 0) {
				fi->malformed++;
				return;
			}
			en = find_engine(fi, name, nn);
			if (!en)
				return;
			en->val[keyed[i].key] = x;
			en->has |= 1u << keyed[i].key;
		} else {
			struct ft_region *r = find_region(fi, name, nn);

			if (!r)
				return;
			r->val[keyed[i].key] = x;
			r->has |= 1u << keyed[i].key;
		}
		return;
	}
	/* Another drm- key (drm-curfreq-, drm-client-name, ...): valid, not used. */
}

int ft_fdinfo_parse(const char *text, size_t len, struct ft_fdinfo *out)
{
	const char *p = text, *e = text + len;

	memset(out, 0, sizeof(*out));
	while (p < e) {
		const char *nl = memchr(p, '\n', e - p);
		const char *le = nl ? nl : e;

		if (le > p)
			parse_line(out, p, le);
		p = le + 1;
	}
	return out->has_driver ? 0 : -ENODATA;
}
