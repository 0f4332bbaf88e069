// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: "ping" and "xfer": requests through krt's test service, run by
 * the kernel (KRT_CMD_TEST), with the outcome printed.  Exit status 1 on
 * any error or mismatch.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <linux/krt.h>
#include "krtctl.h"

/* the outcome, copied out of the answer (its buffer is reused for the ack) */
struct test_out {
	bool got, have_resent;
	u64 ok, errors, mismatches, dbl, bytes, ns, lmin, lavg, lp99, lmax, eagain;
	u64 resent;
	u32 first_error, size, depth, threads;
};

static const struct nl_attr_pol test_pol[KRT_A_TEST_MAX + 1] = {
	[KRT_A_TEST_PEER]	= { MNL_TYPE_NUL_STRING, KRT_PEER_NAME_MAX },
	[KRT_A_TEST_OP]		= { MNL_TYPE_U32 },
	[KRT_A_TEST_COUNT]	= { MNL_TYPE_U32 },
	[KRT_A_TEST_SIZE]	= { MNL_TYPE_U32 },
	[KRT_A_TEST_DEPTH]	= { MNL_TYPE_U32 },
	[KRT_A_TEST_THREADS]	= { MNL_TYPE_U32 },
	[KRT_A_TEST_TIMEOUT]	= { MNL_TYPE_U32 },
	[KRT_A_TEST_NOWAIT]	= { MNL_TYPE_U8 },
	[KRT_A_TEST_OK]		= { MNL_TYPE_U64 },
	[KRT_A_TEST_ERRORS]	= { MNL_TYPE_U64 },
	[KRT_A_TEST_MISMATCHES]	= { MNL_TYPE_U64 },
	[KRT_A_TEST_DOUBLE]	= { MNL_TYPE_U64 },
	[KRT_A_TEST_BYTES]	= { MNL_TYPE_U64 },
	[KRT_A_TEST_ELAPSED_NS]	= { MNL_TYPE_U64 },
	[KRT_A_TEST_LAT_MIN_NS]	= { MNL_TYPE_U64 },
	[KRT_A_TEST_LAT_AVG_NS]	= { MNL_TYPE_U64 },
	[KRT_A_TEST_LAT_P99_NS]	= { MNL_TYPE_U64 },
	[KRT_A_TEST_LAT_MAX_NS]	= { MNL_TYPE_U64 },
	[KRT_A_TEST_FIRST_ERROR] = { MNL_TYPE_U32 },
	[KRT_A_TEST_EAGAIN]	= { MNL_TYPE_U64 },
	[KRT_A_TEST_RESENT]	= { MNL_TYPE_U64 },
	[KRT_A_TEST_NORETRY]	= { MNL_TYPE_U8 },
};

static struct nl_policy test_policy = { "test", KRT_A_TEST_MAX, test_pol, 0 };

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
	const struct nlattr *tb[KRT_A_TEST_MAX + 1];
	struct test_out *o = data;
	size_t i;

	if (nl_parse_attrs(nlh, tb, &test_policy))
		return MNL_CB_OK;
	o->got = true;
	for (i = 0; i < ARRAY_SIZE(test_u64s); i++)
		*test_u64(o, i) = attr_u64(tb, test_u64s[i].attr);
	o->first_error = attr_u32(tb, KRT_A_TEST_FIRST_ERROR);
	o->size = attr_u32(tb, KRT_A_TEST_SIZE);
	o->depth = attr_u32(tb, KRT_A_TEST_DEPTH);
	o->threads = attr_u32(tb, KRT_A_TEST_THREADS);
	o->have_resent = tb[KRT_A_TEST_RESENT];
	o->resent = attr_u64(tb, KRT_A_TEST_RESENT);
	return MNL_CB_OK;
}

/*
 * "4096", "4k", "64K", "1m", "2G": bytes; it must fit the u32 of
 * KRT_A_TEST_SIZE (a larger value is an error, never a wrap).
 */
int get_size(const char *s, u32 *val)
{
	static const char units[] = "kmgt";
	unsigned long long v;
	const char *u;
	char *end;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (!isdigit((unsigned char)*s) || end == s)
		return usage_error("bad size", s);
	u = *end ? strchr(units, tolower((unsigned char)*end)) : NULL;
	if (u) {
		shift = 10 * (int)(u - units + 1);
		end++;
	}
	if (*end)
		return usage_error("bad size", s);
	if (errno == ERANGE || v > 0xffffffffULL >> shift)
		return usage_error("size out of range (at most 4294967295 bytes):", s);
	*val = (u32)(v << shift);
	return 0;
}

static int get_u32(const char *s, const char *what, u32 *val)
{
	return get_num(s, what, 0xffffffffUL, val);
}

static const char *const op_names[] = {
	[KRT_TEST_PING] = "ping", [KRT_TEST_READ] = "read", [KRT_TEST_WRITE] = "write",
};

static void test_print_json(struct test_out *o, const char *peer, u32 op, u32 count)
{
	struct jw w;
	size_t i;

	jw_init(&w, stdout, krtctl.pretty);
	jw_start_obj(&w, NULL);
	jw_str(&w, "peer", peer);
	jw_str(&w, "op", op_names[op]);
	jw_uint(&w, "count", count);
	jw_uint(&w, "size", o->size);
	jw_uint(&w, "depth", o->depth);
	jw_uint(&w, "threads", o->threads);
	for (i = 0; i < ARRAY_SIZE(test_u64s); i++)
		jw_uint(&w, test_u64s[i].key, *test_u64(o, i));
	if (o->have_resent)
		jw_uint(&w, "resent", o->resent);
	jw_uint(&w, "first_error", o->first_error);
	jw_str(&w, "first_error_name", o->first_error ? strerror((int)o->first_error) : "");
	jw_end_obj(&w);
	jw_done(&w);
}

static void test_print(struct test_out *o, const char *peer, u32 op, u32 count)
{
	double secs = o->ns / 1e9;

	if (krtctl.json) {
		test_print_json(o, peer, op, count);
		return;
	}
	printf("%s %s: %u requests of %u bytes, %u thread(s) x depth %u\n",
	       op_names[op], peer, count, o->size, o->threads, o->depth);
	printf("  %llu ok, %llu errors, %llu mismatches, %llu double completions",
	       (unsigned long long)o->ok, (unsigned long long)o->errors,
	       (unsigned long long)o->mismatches, (unsigned long long)o->dbl);
	if (o->have_resent)
		printf(", resent %llu", (unsigned long long)o->resent);
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

/* what the command line asked for */
struct test_req {
	u32 op, count, size;
	bool have_size;
	const char *size_arg;	/* as given, for errors */
};

/* a flag option; Return: true if @arg is one */
static bool test_flag(struct nlmsghdr *nlh, const char *arg, bool xfer)
{
	if (xfer && matches(arg, "nowait")) {
		mnl_attr_put_u8(nlh, KRT_A_TEST_NOWAIT, 1);
		return true;
	}
	if (matches(arg, "noretry")) {
		mnl_attr_put_u8(nlh, KRT_A_TEST_NORETRY, 1);
		return true;
	}
	return false;
}

/* "op" and "size"; Return: 0, 1 if @opt is neither, 2 on error */
static int test_op_size(struct test_req *r, const char *opt, const char *val, bool xfer)
{
	if (xfer && matches(opt, "op")) {
		if (!strcmp(val, "read"))
			r->op = KRT_TEST_READ;
		else if (!strcmp(val, "write"))
			r->op = KRT_TEST_WRITE;
		else
			return usage_error("op must be read or write, not", val);
		return 0;
	}
	if (!matches(opt, "size"))
		return 1;
	if (get_size(val, &r->size))
		return 2;
	r->have_size = true;
	r->size_arg = val;
	return 0;
}

/* an option with a value; Return: 0 or the exit status */
static int test_opt(struct nlmsghdr *nlh, struct test_req *r, const char *opt,
		    const char *val, bool xfer)
{
	u32 v;
	int ret = test_op_size(r, opt, val, xfer);

	if (ret != 1)
		return ret;
	if (matches(opt, "count")) {
		if (get_u32(val, "bad count", &r->count))
			return 2;
		mnl_attr_put_u32(nlh, KRT_A_TEST_COUNT, r->count);
	} else if (matches(opt, "timeout")) {
		if (get_u32(val, "bad timeout", &v))
			return 2;
		mnl_attr_put_u32(nlh, KRT_A_TEST_TIMEOUT, v);
	} else if (xfer && matches(opt, "depth")) {
		if (get_u32(val, "bad depth", &v))
			return 2;
		mnl_attr_put_u32(nlh, KRT_A_TEST_DEPTH, v);
	} else if (xfer && matches(opt, "threads")) {
		if (get_u32(val, "bad threads", &v))
			return 2;
		mnl_attr_put_u32(nlh, KRT_A_TEST_THREADS, v);
	} else {
		return usage_error("unknown argument", opt);
	}
	return 0;
}

/* A ping's payload travels in one message, behind the test header. */
static int ping_size_ok(const struct test_req *r)
{
	char msg[128];

	if (r->size <= KRT_PING_MAX)
		return 0;
	snprintf(msg, sizeof(msg),
		 "ping: size over %u bytes, the largest payload (KRT_MAX_MSG %u less the %u-byte test header):",
		 KRT_PING_MAX, KRT_MAX_MSG, KRT_TEST_HDR_LEN);
	return usage_error(msg, r->size_arg);
}

static int test_args(struct nlmsghdr *nlh, struct test_req *r, int argc, char **argv,
		     bool xfer)
{
	int ret;

	/*
	 * Each word adds at most one attribute (8 bytes) to the request
	 * buffer; a repeated keyword is taken again (the last one counts),
	 * so bound the words to keep them all inside it.
	 */
	if (argc > 32)
		return usage_error("too many arguments:", argv[32]);
	while (argc > 0) {
		if (test_flag(nlh, argv[0], xfer)) {
			argc--;
			argv++;
			continue;
		}
		if (argc < 2)
			return usage_error("missing value after", argv[0]);
		ret = test_opt(nlh, r, argv[0], argv[1], xfer);
		if (ret)
			return ret;
		argc -= 2;
		argv += 2;
	}
	if (!r->op)
		return usage_error("xfer: missing \"op read\" or \"op write\"", NULL);
	if (r->op == KRT_TEST_PING && ping_size_ok(r))
		return 2;
	if (r->have_size)
		mnl_attr_put_u32(nlh, KRT_A_TEST_SIZE, r->size);
	mnl_attr_put_u32(nlh, KRT_A_TEST_OP, r->op);
	return 0;
}

/* krtctl ping NAME [...] / krtctl xfer NAME op read|write [...] */
static int run_test(int argc, char **argv, bool xfer)
{
	const char *what = xfer ? "xfer" : "ping";
	struct test_req r = { .op = xfer ? 0 : KRT_TEST_PING, .count = 10 };
	struct test_out o = { 0 };
	struct nlmsghdr *nlh;
	int ret;

	krtctl.attr_name = test_attr_name;
	/* exactly "help": a prefix of it may be a peer's name */
	if (argc < 1 || !strcmp(argv[0], "help")) {
		usage(stdout, what);
		return argc < 1 ? 2 : 0;
	}
	if (strlen(argv[0]) >= KRT_PEER_NAME_MAX)
		return usage_error("peer name is too long:", argv[0]);
	nlh = nl_msg(&krtctl, KRT_CMD_TEST, 0);
	mnl_attr_put_strz(nlh, KRT_A_TEST_PEER, argv[0]);
	if (test_args(nlh, &r, argc - 1, argv + 1, xfer))
		return 2;
	ret = nl_talk(&krtctl, nlh, test_cb, &o);
	if (ret)
		return nl_report(ret, what);
	if (!o.got) {
		fprintf(stderr, "Error: %s: no answer from the kernel.\n", what);
		return 1;
	}
	test_print(&o, argv[0], r.op, r.count);
	return o.errors || o.mismatches || o.dbl || o.ok + o.eagain != r.count ? 1 : 0;
}

int cmd_ping(int argc, char **argv)
{
	return run_test(argc, argv, false);
}

int cmd_xfer(int argc, char **argv)
{
	return run_test(argc, argv, true);
}
