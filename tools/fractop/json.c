// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The frac authors
 *
 * A strict JSON reader (RFC 8259) for fractop's own files: the records that -r replays. It
 * builds a tree in an arena that is freed in one go; numbers keep their text, so that a
 * 64-bit counter is read exactly (ft_json_u64) and a double round-trips (ft_json_num, strtod
 * of the %.17g that the recorder wrote). Anything else, including trailing text, a nesting
 * deeper than FT_JSON_MAX_DEPTH or an invalid escape, is an error with its byte offset.
 * Pure: no I/O.
 */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fractop.h"

#define FT_JSON_MAX_DEPTH	32
#define ARENA_BLOCK		(64 * 1024)

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	max_align_t data[];
};

static void *arena_alloc(struct ft_json *doc, size_t n)
{
	struct arena_block *b = doc->arena;
	void *p;

	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (!b || b->size - b->used < n) {
		size_t size = n > ARENA_BLOCK ? n : ARENA_BLOCK;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = size;
		b->used = 0;
		b->next = doc->arena;
		doc->arena = b;
	}
	p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

void ft_json_free(struct ft_json *doc)
{
	struct arena_block *b = doc->arena;

	while (b) {
		struct arena_block *n = b->next;

		free(b);
		b = n;
	}
	doc->arena = NULL;
	doc->root = NULL;
}

struct parser {
	struct ft_json *doc;
	const char *s, *p, *e;
	char *err;
	size_t errlen;
};

static int fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct parser *ps, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ps->err, ps->errlen, "%s at byte %zu", msg, (size_t)(ps->p - ps->s));
	return -EINVAL;
}

static void ws(struct parser *ps)
{
	while (ps->p < ps->e && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' ||
				 *ps->p == '\r'))
		ps->p++;
}

static int parse_value(struct parser *ps, struct ft_jval *v, int depth);

static int hex4(struct parser *ps, unsigned int *out)
{
	unsigned int x = 0;

	if (ps->e - ps->p < 4)
		return fail(ps, "short \\u escape");
	for (int i = 0; i < 4; i++) {
		char c = *ps->p++;

		x <<= 4;
		if (c >= '0' && c <= '9')
			x |= c - '0';
		else if (c >= 'a' && c <= 'f')
			x |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			x |= c - 'A' + 10;
		else
			return fail(ps, "bad \\u escape");
	}
	*out = x;
	return 0;
}

static size_t put_utf8(char *o, unsigned int cp)
{
	if (cp < 0x80) {
		o[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = 0xc0 | cp >> 6;
		o[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = 0xe0 | cp >> 12;
		o[1] = 0x80 | (cp >> 6 & 0x3f);
		o[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	o[0] = 0xf0 | cp >> 18;
	o[1] = 0x80 | (cp >> 12 & 0x3f);
	o[2] = 0x80 | (cp >> 6 & 0x3f);
	o[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/* A string after its opening quote; decoded into the arena (never longer than its text). */
static int parse_string(struct parser *ps, const char **out, size_t *outlen)
{
	const char *q = ps->p;
	char *o, *d;

	while (q < ps->e && *q != '"')
		q += *q == '\\' ? 2 : 1;
	if (q >= ps->e)
		return fail(ps, "unterminated string");
	d = o = arena_alloc(ps->doc, q - ps->p + 1);
	if (!o)
		return -ENOMEM;
	while (*ps->p != '"') {
		unsigned char c = *ps->p++;
		unsigned int cp, lo;

		if (c < 0x20)
			return fail(ps, "control character in a string");
		if (c != '\\') {
			*d++ = c;
			continue;
		}
		switch (*ps->p++) {
		case '"': *d++ = '"'; break;
		case '\\': *d++ = '\\'; break;
		case '/': *d++ = '/'; break;
		case 'b': *d++ = '\b'; break;
		case 'f': *d++ = '\f'; break;
		case 'n': *d++ = '\n'; break;
		case 'r': *d++ = '\r'; break;
		case 't': *d++ = '\t'; break;
		case 'u':
			if (hex4(ps, &cp))
				return -EINVAL;
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (ps->e - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u')
					return fail(ps, "lone surrogate");
				ps->p += 2;
				if (hex4(ps, &lo) || lo < 0xdc00 || lo >= 0xe000)
					return fail(ps, "bad surrogate pair");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				return fail(ps, "lone surrogate");
			}
			if (!cp)
				return fail(ps, "NUL in a string");
			/* \uXXXX is 6 bytes of text, at most 3 of UTF-8; a pair 12 for 4. */
			d += put_utf8(d, cp);
			break;
		default:
			return fail(ps, "bad escape");
		}
	}
	ps->p++;
	*d = '\0';
	*out = o;
	*outlen = d - o;
	return 0;
}

static int parse_number(struct parser *ps, struct ft_jval *v)
{
	const char *q = ps->p;
	char *t;

	if (q < ps->e && *q == '-')
		q++;
	if (q >= ps->e || *q < '0' || *q > '9')
		return fail(ps, "bad number");
	if (*q == '0')
		q++;
	else
		while (q < ps->e && *q >= '0' && *q <= '9')
			q++;
	if (q < ps->e && *q == '.') {
		if (++q >= ps->e || *q < '0' || *q > '9')
			return fail(ps, "bad number");
		while (q < ps->e && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < ps->e && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < ps->e && (*q == '+' || *q == '-'))
			q++;
		if (q >= ps->e || *q < '0' || *q > '9')
			return fail(ps, "bad number");
		while (q < ps->e && *q >= '0' && *q <= '9')
			q++;
	}
	t = arena_alloc(ps->doc, q - ps->p + 1);
	if (!t)
		return -ENOMEM;
	memcpy(t, ps->p, q - ps->p);
	t[q - ps->p] = '\0';
	v->type = FT_J_NUM;
	v->str = t;
	ps->p = q;
	return 0;
}

/* Arrays and objects: items are gathered in a growing heap array, then moved to the arena. */
static int parse_container(struct parser *ps, struct ft_jval *v, int depth, bool obj)
{
	struct ft_jval *items = NULL;
	const char **keys = NULL;
	unsigned int n = 0, cap = 0;
	char close = obj ? '}' : ']';
	int ret = 0;

	if (depth >= FT_JSON_MAX_DEPTH)
		return fail(ps, "nested too deep");
	ps->p++;
	ws(ps);
	if (ps->p < ps->e && *ps->p == close) {
		ps->p++;
		goto done;
	}
	for (;;) {
		const char *key = NULL;
		size_t klen;

		if (n == cap) {
			unsigned int c = cap ? 2 * cap : 8;
			struct ft_jval *ni = realloc(items, c * sizeof(*ni));
			const char **nk = obj ? realloc(keys, c * sizeof(*nk)) : NULL;

			if (ni)
				items = ni;
			if (nk)
				keys = nk;
			if (!ni || (obj && !nk)) {
				ret = -ENOMEM;
				goto out;
			}
			cap = c;
		}
		ws(ps);
		if (obj) {
			if (ps->p >= ps->e || *ps->p != '"') {
				ret = fail(ps, "expected a key");
				goto out;
			}
			ps->p++;
			ret = parse_string(ps, &key, &klen);
			if (ret)
				goto out;
			for (unsigned int i = 0; i < n; i++) {
				if (!strcmp(keys[i], key)) {
					ret = fail(ps, "duplicate key \"%.40s\"", key);
					goto out;
				}
			}
			ws(ps);
			if (ps->p >= ps->e || *ps->p != ':') {
				ret = fail(ps, "expected ':'");
				goto out;
			}
			ps->p++;
			keys[n] = key;
		}
		ret = parse_value(ps, &items[n], depth + 1);
		if (ret)
			goto out;
		n++;
		ws(ps);
		if (ps->p < ps->e && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->e && *ps->p == close) {
			ps->p++;
			break;
		}
		ret = fail(ps, "expected ',' or '%c'", close);
		goto out;
	}
done:
	v->type = obj ? FT_J_OBJ : FT_J_ARR;
	v->n = n;
	v->items = n ? arena_alloc(ps->doc, n * sizeof(*items)) : NULL;
	v->keys = obj && n ? arena_alloc(ps->doc, n * sizeof(*keys)) : NULL;
	if (n && (!v->items || (obj && !v->keys))) {
		ret = -ENOMEM;
		goto out;
	}
	if (n)
		memcpy(v->items, items, n * sizeof(*items));
	if (obj && n)
		memcpy(v->keys, keys, n * sizeof(*keys));
out:
	free(items);
	free(keys);
	return ret;
}

static bool lit(struct parser *ps, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(ps->e - ps->p) < n || memcmp(ps->p, w, n))
		return false;
	ps->p += n;
	return true;
}

static int parse_value(struct parser *ps, struct ft_jval *v, int depth)
{
	size_t len;

	memset(v, 0, sizeof(*v));
	ws(ps);
	if (ps->p >= ps->e)
		return fail(ps, "unexpected end");
	switch (*ps->p) {
	case '{':
		return parse_container(ps, v, depth, true);
	case '[':
		return parse_container(ps, v, depth, false);
	case '"':
		ps->p++;
		v->type = FT_J_STR;
		return parse_string(ps, &v->str, &len);
	case 't':
	case 'f':
		v->type = FT_J_BOOL;
		v->b = *ps->p == 't';
		if (lit(ps, v->b ? "true" : "false"))
			return 0;
		return fail(ps, "bad literal");
	case 'n':
		v->type = FT_J_NULL;
		if (lit(ps, "null"))
			return 0;
		return fail(ps, "bad literal");
	default:
		return parse_number(ps, v);
	}
}

int ft_json_parse(struct ft_json *doc, const char *text, size_t len, char *err, size_t errlen)
{
	struct parser ps = { .doc = doc, .s = text, .p = text, .e = text + len, .err = err,
			     .errlen = errlen };
	struct ft_jval *root;
	int ret;

	memset(doc, 0, sizeof(*doc));
	root = arena_alloc(doc, sizeof(*root));
	if (!root)
		return -ENOMEM;
	ret = parse_value(&ps, root, 0);
	if (!ret) {
		ws(&ps);
		if (ps.p != ps.e)
			ret = fail(&ps, "text after the value");
	}
	if (ret) {
		if (ret == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		ft_json_free(doc);
		return ret;
	}
	doc->root = root;
	return 0;
}

const struct ft_jval *ft_json_get(const struct ft_jval *obj, const char *key)
{
	if (!obj || obj->type != FT_J_OBJ)
		return NULL;
	for (unsigned int i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return &obj->items[i];
	return NULL;
}

bool ft_json_u64(const struct ft_jval *v, uint64_t *out)
{
	const char *end;

	return v && v->type == FT_J_NUM && !ft_parse_u64(v->str, &end, out) && !*end;
}

bool ft_json_num(const struct ft_jval *v, double *out)
{
	char *end;

	if (!v || v->type != FT_J_NUM)
		return false;
	errno = 0;
	*out = strtod(v->str, &end);
	return !errno && !*end && isfinite(*out);
}
