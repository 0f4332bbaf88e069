// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: one call per field for text and JSON alike, so that the two
 * outputs cannot drift: the JSON key is the text's label.
 */
#include <string.h>
#include "krtctl.h"

void pr_item(struct pr *p, const char *item)
{
	int len = (int)strlen(item);

	if (p->col && p->wrap && p->col + 1 + len > p->wrap) {
		putchar('\n');
		p->col = printf("%*s", p->cont, "");
	} else if (p->col) {
		putchar(' ');
		p->col++;
	} else {
		p->col = printf("%*s", p->indent, "");
	}
	p->col += printf("%s", item);
}

/* text: one "@key @val" item */
static void pr_kv(struct pr *p, const char *key, const char *val)
{
	char buf[PR_STR_MAX + 64];

	snprintf(buf, sizeof(buf), "%s %s", key, val);
	pr_item(p, buf);
}

void pr_u64(struct pr *p, const char *key, u64 v)
{
	char t[24];

	if (p->w) {
		jw_uint(p->w, key, v);
		return;
	}
	snprintf(t, sizeof(t), "%llu", (unsigned long long)v);
	pr_kv(p, key, t);
}

/* a rate or other measured number, 3 decimals in both outputs */
void pr_float(struct pr *p, const char *key, double v)
{
	char t[48];

	if (p->w) {
		jw_float(p->w, key, v);
		return;
	}
	snprintf(t, sizeof(t), "%.3f", v == v && v - v == 0 ? v : 0.0);
	pr_kv(p, key, t);
}

/* a time: raw ns under @key in JSON, "@label 12.5us" in text (@label NULL: JSON only) */
void pr_ns(struct pr *p, const char *key, const char *label, u64 ns)
{
	char t[32];

	if (p->w)
		jw_uint(p->w, key, ns);
	else if (label)
		pr_kv(p, label, fmt_ns(t, sizeof(t), ns));
}

/* free text: quoted in text */
void pr_str(struct pr *p, const char *key, const char *v)
{
	char t[PR_STR_MAX + 4];

	if (p->w) {
		jw_str(p->w, key, v);
		return;
	}
	snprintf(t, sizeof(t), "\"%s\"", v);
	pr_kv(p, key, t);
}

/* a word (a state, a name): unquoted in text */
void pr_word(struct pr *p, const char *key, const char *v)
{
	if (p->w)
		jw_str(p->w, key, v);
	else
		pr_kv(p, key, v);
}

/* 64 bits in hex: a string in JSON ("0123456789abcdef") */
void pr_hex64(struct pr *p, const char *key, u64 v)
{
	char t[24];

	if (p->w) {
		jw_hex64(p->w, key, v);
		return;
	}
	snprintf(t, sizeof(t), "%016llx", (unsigned long long)v);
	pr_kv(p, key, t);
}

/* a boolean: true or false in JSON, "@key yes" or "@key no" in text */
void pr_bool(struct pr *p, const char *key, bool v)
{
	if (p->w)
		jw_bool(p->w, key, v);
	else
		pr_kv(p, key, v ? "yes" : "no");
}

/* the numeric attributes of @f that the kernel sent, under their keys */
void pr_fields(struct pr *p, const struct nlattr **tb, const struct nl_field *f, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tb[f[i].type])
			pr_u64(p, f[i].key, attr_uint(tb, f[i].type));
}

/* a flag: true or false under @key in JSON, the word @on or @off in text */
void pr_flag(struct pr *p, const char *key, bool v, const char *on, const char *off)
{
	if (p->w)
		jw_bool(p->w, key, v);
	else
		pr_item(p, v ? on : off);
}

void pr_end_line(struct pr *p)
{
	if (!p->w && p->col)
		putchar('\n');
	p->col = 0;
}

/* text: continue the group on a new line (nothing in JSON) */
void pr_break(struct pr *p)
{
	pr_end_line(p);
}

/* a group: JSON object @key if @obj (@key NULL in an array); a text line, "@label:" first */
void pr_group(struct pr *p, bool obj, const char *key, const char *label, int wrap)
{
	char buf[64];

	pr_end_line(p);
	p->indent = 4;
	p->cont = label ? 8 : 4;
	p->wrap = wrap;
	if (p->w) {
		if (obj)
			jw_start_obj(p->w, key);
		return;
	}
	if (label) {
		snprintf(buf, sizeof(buf), "%s:", label);
		pr_item(p, buf);
	}
}

void pr_group_end(struct pr *p, bool obj)
{
	if (p->w && obj)
		jw_end_obj(p->w);
	pr_end_line(p);
}

/* a JSON array (nothing in text: its entries are groups) */
void pr_array(struct pr *p, const char *key)
{
	if (p->w)
		jw_start_arr(p->w, key);
}

void pr_array_end(struct pr *p)
{
	if (p->w)
		jw_end_arr(p->w);
}

/*
 * An object shown by "show": a JSON object @key (NULL in an array) with
 * @name under @name_key, or a text line "@name:" whose further lines
 * (after pr_break()) are indented.
 */
void pr_obj(struct pr *p, const char *key, const char *name_key, const char *name)
{
	char buf[PR_STR_MAX + 8];

	pr_end_line(p);
	p->indent = 0;
	p->cont = 4;
	p->wrap = 0;
	if (p->w) {
		jw_start_obj(p->w, key);
		jw_str(p->w, name_key, name);
		return;
	}
	snprintf(buf, sizeof(buf), "%s:", name);
	pr_item(p, buf);
	p->indent = 4;
}

void pr_obj_end(struct pr *p)
{
	pr_end_line(p);
	if (p->w)
		jw_end_obj(p->w);
}
