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

static void jw_string(struct jw *w, const char *s)
{
	const unsigned char *p;

	fputc('"', w->f);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", w->f);
			break;
		case '\\':
			fputs("\\\\", w->f);
			break;
		case '\n':
			fputs("\\n", w->f);
			break;
		case '\t':
			fputs("\\t", w->f);
			break;
		default:
			if (*p < 0x20)
				fprintf(w->f, "\\u%04x", *p);
			else
				fputc(*p, w->f);
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
