// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: "ping" and "xfer": requests through krt's test service, run by
 * the kernel (KRT_CMD_TEST), with the outcome printed.  Exit status 1 on
 * any error or mismatch.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <linux/krt.h>
#include "krtctl.h"

struct test_out {
	const struct nlattr *tb[KRT_A_TEST_MAX + 1];
	bool got;
	u64 ok, errors, mismatches, dbl, bytes, ns, lmin, lavg, lp99, lmax, eagain;
	u32 first_error;
};

static u64 a64(const struct nlattr **tb, int type)
{
	return tb[type] ? mnl_attr_get_u64(tb[type]) : 0;
}

/* the u64 results: attribute, JSON key (in output order), field */
#define TEST_U64(a, k, f) { a, k, offsetof(struct test_out, f) }
static const struct {
	int attr;
	const char *key;
	size_t off;
} test_u64s[] = {
	TEST_U64(KRT_A_TEST_OK, "ok", ok),
	TEST_U64(KRT_A_TEST_ERRORS, "errors", errors),
	TEST_U64(KRT_A_TEST_MISMATCHES, "mismatches", mismatches),
	TEST_U64(KRT_A_TEST_DOUBLE, "double_completions", dbl),
	TEST_U64(KRT_A_TEST_EAGAIN, "eagain", eagain),
	TEST_U64(KRT_A_TEST_BYTES, "bytes", bytes),
	TEST_U64(KRT_A_TEST_ELAPSED_NS, "elapsed_ns", ns),
	TEST_U64(KRT_A_TEST_LAT_MIN_NS, "lat_min_ns", lmin),
	TEST_U64(KRT_A_TEST_LAT_AVG_NS, "lat_avg_ns", lavg),
	TEST_U64(KRT_A_TEST_LAT_P99_NS, "lat_p99_ns", lp99),
	TEST_U64(KRT_A_TEST_LAT_MAX_NS, "lat_max_ns", lmax),
};

static u64 *test_u64(struct test_out *o, size_t i)
{
	return (u64 *)((char *)o + test_u64s[i].off);
}

static int test_cb(const struct nlmsghdr *nlh, void *data)
{
	struct test_out *o = data;
	size_t i;

	nl_parse_attrs(nlh, o->tb, KRT_A_TEST_MAX);
	o->got = true;
	for (i = 0; i < ARRAY_SIZE(test_u64s); i++)
		*test_u64(o, i) = a64(o->tb, test_u64s[i].attr);
	o->first_error = attr_u32(o->tb, KRT_A_TEST_FIRST_ERROR);
	return MNL_CB_OK;
}

/* "4096", "4k", "64K", "1m", "2M": bytes */
static int get_size(const char *s, u32 *val)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		return usage_error("bad size", s);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || v > 0xffffffffULL)
		return usage_error("bad size", s);
	*val = (u32)v;
	return 0;
}

static int get_u32(const char *s, const char *what, u32 *val)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || !*s || *s == '-' || v > 0xffffffffUL)
		return usage_error(what, s);
	*val = (u32)v;
	return 0;
}

static const char *const op_names[] = {
	[KRT_TEST_PING] = "ping", [KRT_TEST_READ] = "read", [KRT_TEST_WRITE] = "write",
};

static void test_print(struct test_out *o, const char *peer, u32 op, u32 count)
{
	double secs = o->ns / 1e9;
	struct jw w;
	size_t i;

	if (krtctl.json) {
		jw_init(&w, stdout, krtctl.pretty);
		jw_start_obj(&w, NULL);
		jw_str(&w, "peer", peer);
		jw_str(&w, "op", op_names[op]);
		jw_uint(&w, "count", count);
		jw_uint(&w, "size", attr_u32(o->tb, KRT_A_TEST_SIZE));
		jw_uint(&w, "depth", attr_u32(o->tb, KRT_A_TEST_DEPTH));
		jw_uint(&w, "threads", attr_u32(o->tb, KRT_A_TEST_THREADS));
		for (i = 0; i < ARRAY_SIZE(test_u64s); i++)
			jw_uint(&w, test_u64s[i].key, *test_u64(o, i));
		jw_uint(&w, "first_error", o->first_error);
		jw_str(&w, "first_error_name", o->first_error ? strerror((int)o->first_error) : "");
		jw_end_obj(&w);
		jw_done(&w);
		return;
	}
	printf("%s %s: %u requests of %u bytes, %u thread(s) x depth %u\n",
	       op_names[op], peer, count, attr_u32(o->tb, KRT_A_TEST_SIZE),
	       attr_u32(o->tb, KRT_A_TEST_THREADS), attr_u32(o->tb, KRT_A_TEST_DEPTH));
	printf("  %llu ok, %llu errors, %llu mismatches, %llu double completions",
	       (unsigned long long)o->ok, (unsigned long long)o->errors,
	       (unsigned long long)o->mismatches, (unsigned long long)o->dbl);
	if (o->eagain)
		printf(", %llu refused (EAGAIN)", (unsigned long long)o->eagain);
	printf("\n");
	if (o->first_error)
		printf("  first error: %s (%u)\n", strerror((int)o->first_error), o->first_error);
	if (o->ok)
		printf("  latency us: min %.1f avg %.1f p99 %.1f max %.1f\n",
		       o->lmin / 1e3, o->lavg / 1e3, o->lp99 / 1e3, o->lmax / 1e3);
	if (secs > 0)
		printf("  %.3f s, %.0f requests/s, %.2f MiB/s verified\n", secs,
		       (o->ok + o->errors) / secs, o->bytes / secs / 1048576.0);
}

static const char *test_attr_name(unsigned int type)
{
	static const char *const names[KRT_A_TEST_MAX + 1] = {
		[KRT_A_TEST_PEER] = "peer", [KRT_A_TEST_OP] = "op",
		[KRT_A_TEST_COUNT] = "count", [KRT_A_TEST_SIZE] = "size",
		[KRT_A_TEST_DEPTH] = "depth", [KRT_A_TEST_THREADS] = "threads",
		[KRT_A_TEST_TIMEOUT] = "timeout",
	};

	return type <= KRT_A_TEST_MAX ? names[type] : NULL;
}

/* krtctl ping NAME [...] / krtctl xfer NAME op read|write [...] */
static int run_test(int argc, char **argv, bool xfer)
{
	const char *what = xfer ? "xfer" : "ping";
	struct test_out o = { 0 };
	struct nlmsghdr *nlh;
	u32 v, op = xfer ? 0 : KRT_TEST_PING, count = 10;
	const char *peer;
	int ret;

	krtctl.attr_name = test_attr_name;
	if (argc < 1 || matches(argv[0], "help")) {
		printf(xfer ?
		       "Usage: krtctl xfer NAME op { read | write } [size S] [count N] [depth D]\n"
		       "                   [threads T] [timeout MS] [nowait]\n" :
		       "Usage: krtctl ping NAME [count N] [size S] [timeout MS]\n");
		return argc < 1 ? 2 : 0;
	}
	peer = argv[0];
	nlh = nl_msg(&krtctl, KRT_CMD_TEST, 0);
	mnl_attr_put_strz(nlh, KRT_A_TEST_PEER, peer);
	for (argc--, argv++; argc > 0; argc -= 2, argv += 2) {
		if (matches(argv[0], "nowait") && xfer) {
			mnl_attr_put_u8(nlh, KRT_A_TEST_NOWAIT, 1);
			argc++, argv--;
			continue;
		}
		if (argc < 2)
			return usage_error("missing value after", argv[0]);
		if (xfer && matches(argv[0], "op")) {
			if (!strcmp(argv[1], "read"))
				op = KRT_TEST_READ;
			else if (!strcmp(argv[1], "write"))
				op = KRT_TEST_WRITE;
			else
				return usage_error("op must be read or write, not", argv[1]);
		} else if (matches(argv[0], "size")) {
			if (get_size(argv[1], &v))
				return 2;
			mnl_attr_put_u32(nlh, KRT_A_TEST_SIZE, v);
		} else if (matches(argv[0], "count")) {
			if (get_u32(argv[1], "bad count", &count))
				return 2;
			mnl_attr_put_u32(nlh, KRT_A_TEST_COUNT, count);
		} else if (matches(argv[0], "timeout")) {
			if (get_u32(argv[1], "bad timeout", &v))
				return 2;
			mnl_attr_put_u32(nlh, KRT_A_TEST_TIMEOUT, v);
		} else if (xfer && matches(argv[0], "depth")) {
			if (get_u32(argv[1], "bad depth", &v))
				return 2;
			mnl_attr_put_u32(nlh, KRT_A_TEST_DEPTH, v);
		} else if (xfer && matches(argv[0], "threads")) {
			if (get_u32(argv[1], "bad threads", &v))
				return 2;
			mnl_attr_put_u32(nlh, KRT_A_TEST_THREADS, v);
		} else {
			return usage_error("unknown argument", argv[0]);
		}
	}
	if (!op)
		return usage_error("xfer: missing \"op read\" or \"op write\"", NULL);
	mnl_attr_put_u32(nlh, KRT_A_TEST_OP, op);
	ret = nl_talk(&krtctl, nlh, test_cb, &o);
	if (ret)
		return nl_report(ret, what);
	if (!o.got) {
		fprintf(stderr, "Error: %s: no answer from the kernel.\n", what);
		return 1;
	}
	test_print(&o, peer, op, count);
	return o.errors || o.mismatches || o.dbl || o.ok + o.eagain != count ? 1 : 0;
}

int cmd_ping(int argc, char **argv)
{
	return run_test(argc, argv, false);
}

int cmd_xfer(int argc, char **argv)
{
	return run_test(argc, argv, true);
}
