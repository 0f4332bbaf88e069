// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: a streaming JSON writer (objects, arrays, strings, numbers).
 */
#include <string.h>
#include "krtctl.h"

void jw_init(struct jw *w, FILE *f, bool pretty)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->pretty = pretty;
	w->first[0] = true;
}

static void jw_indent(struct jw *w)
{
	int i;

	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (i = 0; i < w->depth; i++)
		fputs("    ", w->f);
}

/*
 * Length of the well-formed UTF-8 sequence at @p (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), 0 if there is none.
 */
static int utf8_len(const unsigned char *p)
{
	unsigned int c;
	int n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	c = p[0] & (0x7f >> n);
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return n;
}

/* one ASCII character, escaped as JSON needs; DEL too */
static void jw_ascii(FILE *f, unsigned char c)
{
	switch (c) {
	case '"':
		fputs("\\\"", f);
		break;
	case '\\':
		fputs("\\\\", f);
		break;
	case '\b':
		fputs("\\b", f);
		break;
	case '\f':
		fputs("\\f", f);
		break;
	case '\n':
		fputs("\\n", f);
		break;
	case '\r':
		fputs("\\r", f);
		break;
	case '\t':
		fputs("\\t", f);
		break;
	default:
		if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

/*
 * A JSON string: valid UTF-8 as it is, control characters escaped, and
 * each byte that is not part of valid UTF-8 replaced by U+FFFD (written
 * "\ufffd"), so that the output is always valid JSON.
 */
static void jw_string(struct jw *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	fputc('"', w->f);
	for (; *p; p += n) {
		n = utf8_len(p);
		if (!n) {
			fputs("\\ufffd", w->f);
			n = 1;
		} else if (n == 1) {
			jw_ascii(w->f, *p);
		} else {
			fwrite(p, 1, (size_t)n, w->f);
		}
	}
	fputc('"', w->f);
}

/* separator, indentation and "key": for the next value */
static void jw_key(struct jw *w, const char *key)
{
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
	if (w->depth)
		jw_indent(w);
	if (key) {
		jw_string(w, key);
		fputs(w->pretty ? ": " : ":", w->f);
	}
}

static void jw_open(struct jw *w, const char *key, char c)
{
	jw_key(w, key);
	fputc(c, w->f);
	if (w->depth < (int)ARRAY_SIZE(w->first) - 1)
		w->depth++;
	w->first[w->depth] = true;
}

static void jw_close(struct jw *w, char c)
{
	bool empty = w->first[w->depth];

	if (w->depth)
		w->depth--;
	if (!empty)
		jw_indent(w);
	fputc(c, w->f);
}

void jw_start_obj(struct jw *w, const char *key)
{
	jw_open(w, key, '{');
}

void jw_end_obj(struct jw *w)
{
	jw_close(w, '}');
}

void jw_start_arr(struct jw *w, const char *key)
{
	jw_open(w, key, '[');
}

void jw_end_arr(struct jw *w)
{
	jw_close(w, ']');
}

void jw_str(struct jw *w, const char *key, const char *val)
{
	jw_key(w, key);
	jw_string(w, val);
}

void jw_uint(struct jw *w, const char *key, unsigned long long val)
{
	jw_key(w, key);
	fprintf(w->f, "%llu", val);
}

/* a finite number with 3 decimals (a rate); JSON has no NaN: 0 then */
void jw_float(struct jw *w, const char *key, double val)
{
	jw_key(w, key);
	fprintf(w->f, "%.3f", val == val && val - val == 0 ? val : 0.0);
}

void jw_hex64(struct jw *w, const char *key, unsigned long long val)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%016llx", val);
	jw_str(w, key, buf);
}

void jw_bool(struct jw *w, const char *key, bool val)
{
	jw_key(w, key);
	fputs(val ? "true" : "false", w->f);
}

void jw_done(struct jw *w)
{
	fputc('\n', w->f);
	fflush(w->f);
}
