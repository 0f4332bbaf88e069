// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: "bench": load from krt_bench.ko (generic netlink family
 * "krt_bench", KRT_BENCH_CMD_RUN) against a peer, with the result
 * printed: text and JSON from the same calls, under the same names.
 * Exit status 1 when any request failed or mismatched, or the run was
 * stopped early.
 */
#include <errno.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/krt_bench.h>
#include "krtctl.h"

static_assert(KRT_BENCH_A_MAX <= KRT_A_ANY_MAX, "krt_bench attributes outgrew krtctl's tables");

static const struct nl_attr_pol bench_pol[KRT_BENCH_A_MAX + 1] = {
	[KRT_BENCH_A_PEER]		= { MNL_TYPE_NUL_STRING, KRT_PEER_NAME_MAX },
	[KRT_BENCH_A_OP]		= { MNL_TYPE_U32 },
	[KRT_BENCH_A_SIZE]		= { MNL_TYPE_U32 },
	[KRT_BENCH_A_DEPTH]		= { MNL_TYPE_U32 },
	[KRT_BENCH_A_THREADS]		= { MNL_TYPE_U32 },
	[KRT_BENCH_A_TIME_S]		= { MNL_TYPE_U32 },
	[KRT_BENCH_A_COUNT]		= { MNL_TYPE_U32 },
	[KRT_BENCH_A_VERIFY]		= { MNL_TYPE_U8 },
	[KRT_BENCH_A_REQUESTS]		= { MNL_TYPE_U64 },
	[KRT_BENCH_A_ERRORS]		= { MNL_TYPE_U64 },
	[KRT_BENCH_A_MISMATCHES]	= { MNL_TYPE_U64 },
	[KRT_BENCH_A_BYTES]		= { MNL_TYPE_U64 },
	[KRT_BENCH_A_ELAPSED_NS]	= { MNL_TYPE_U64 },
	[KRT_BENCH_A_LAT_MIN_NS]	= { MNL_TYPE_U64 },
	[KRT_BENCH_A_LAT_AVG_NS]	= { MNL_TYPE_U64 },
	[KRT_BENCH_A_LAT_P50_NS]	= { MNL_TYPE_U64 },
	[KRT_BENCH_A_LAT_P99_NS]	= { MNL_TYPE_U64 },
	[KRT_BENCH_A_LAT_P999_NS]	= { MNL_TYPE_U64 },
	[KRT_BENCH_A_LAT_MAX_NS]	= { MNL_TYPE_U64 },
	[KRT_BENCH_A_CPU_NS]		= { MNL_TYPE_U64 },
	[KRT_BENCH_A_CPU_NS_PER_REQ]	= { MNL_TYPE_U64 },
	[KRT_BENCH_A_FIRST_ERROR]	= { MNL_TYPE_U32 },
	[KRT_BENCH_A_STOPPED]		= { MNL_TYPE_U8 },
};

static struct nl_policy bench_policy = { "bench", KRT_BENCH_A_MAX, bench_pol, 0 };

/* the u64 results, in output order */
static const struct nl_field bench_counts[] = {
	{ KRT_BENCH_A_REQUESTS, "requests" },
	{ KRT_BENCH_A_ERRORS, "errors" },
	{ KRT_BENCH_A_MISMATCHES, "mismatches" },
	{ KRT_BENCH_A_BYTES, "bytes" },
	{ KRT_BENCH_A_ELAPSED_NS, "elapsed_ns" },
};

static const struct nl_field bench_lat[] = {
	{ KRT_BENCH_A_LAT_MIN_NS, "lat_min_ns" },
	{ KRT_BENCH_A_LAT_AVG_NS, "lat_avg_ns" },
	{ KRT_BENCH_A_LAT_P50_NS, "lat_p50_ns" },
	{ KRT_BENCH_A_LAT_P99_NS, "lat_p99_ns" },
	{ KRT_BENCH_A_LAT_P999_NS, "lat_p999_ns" },
	{ KRT_BENCH_A_LAT_MAX_NS, "lat_max_ns" },
};

static const struct nl_field bench_cpu[] = {
	{ KRT_BENCH_A_CPU_NS, "cpu_ns" },
	{ KRT_BENCH_A_CPU_NS_PER_REQ, "cpu_ns_per_req" },
};

static const char *const bench_ops[] = {
	[KRT_BENCH_OP_SEND] = "send", [KRT_BENCH_OP_READ] = "read",
	[KRT_BENCH_OP_WRITE] = "write",
};

struct bench_out {
	bool got;
	int status;		/* the exit status the result asks for */
};

static void bench_print(const struct nlattr **tb, struct jw *w)
{
	/* text: "peer NAME op ..." first, the rest indented under it */
	struct pr p = { .w = w, .indent = 0, .cont = 4 };
	u64 ok = attr_u64(tb, KRT_BENCH_A_REQUESTS), ns = attr_u64(tb, KRT_BENCH_A_ELAPSED_NS);
	u32 err = attr_u32(tb, KRT_BENCH_A_FIRST_ERROR);
	double secs = ns / 1e9;

	if (w)
		jw_start_obj(w, NULL);
	pr_word(&p, "peer", attr_str(tb, KRT_BENCH_A_PEER));
	p.indent = 4;
	pr_word(&p, "op", name_of(bench_ops, ARRAY_SIZE(bench_ops), attr_u32(tb, KRT_BENCH_A_OP)));
	pr_u64(&p, "size", attr_u32(tb, KRT_BENCH_A_SIZE));
	pr_u64(&p, "depth", attr_u32(tb, KRT_BENCH_A_DEPTH));
	pr_u64(&p, "threads", attr_u32(tb, KRT_BENCH_A_THREADS));
	pr_u64(&p, "time_s", attr_u32(tb, KRT_BENCH_A_TIME_S));
	pr_u64(&p, "count", attr_u32(tb, KRT_BENCH_A_COUNT));
	pr_bool(&p, "verify", attr_u8(tb, KRT_BENCH_A_VERIFY));
	pr_bool(&p, "stopped", attr_u8(tb, KRT_BENCH_A_STOPPED));
	pr_break(&p);
	pr_fields(&p, tb, bench_counts, ARRAY_SIZE(bench_counts));
	pr_break(&p);
	pr_float(&p, "requests_per_s", secs > 0 ? ok / secs : 0);
	pr_float(&p, "mib_per_s",
		 secs > 0 ? attr_u64(tb, KRT_BENCH_A_BYTES) / secs / 1048576.0 : 0);
	pr_fields(&p, tb, bench_cpu, ARRAY_SIZE(bench_cpu));
	pr_break(&p);
	pr_fields(&p, tb, bench_lat, ARRAY_SIZE(bench_lat));
	pr_break(&p);
	pr_u64(&p, "first_error", err);
	pr_str(&p, "first_error_name", err ? strerror((int)err) : "");
	pr_end_line(&p);
	if (w)
		jw_end_obj(w);
}

static int bench_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KRT_BENCH_A_MAX + 1];
	struct bench_out *o = data;
	struct jw w;

	if (nl_parse_attrs(nlh, tb, &bench_policy) || !tb[KRT_BENCH_A_REQUESTS])
		return MNL_CB_OK;
	o->got = true;
	if (krtctl.json)
		jw_init(&w, stdout, krtctl.pretty);
	bench_print(tb, krtctl.json ? &w : NULL);
	if (krtctl.json)
		jw_done(&w);
	o->status = attr_u64(tb, KRT_BENCH_A_ERRORS) || attr_u64(tb, KRT_BENCH_A_MISMATCHES) ||
		    attr_u8(tb, KRT_BENCH_A_STOPPED);
	return MNL_CB_OK;
}

static const char *bench_attr_name(unsigned int type)
{
	static const char *const names[KRT_BENCH_A_MAX + 1] = {
		[KRT_BENCH_A_PEER] = "peer", [KRT_BENCH_A_OP] = "op",
		[KRT_BENCH_A_SIZE] = "size", [KRT_BENCH_A_DEPTH] = "depth",
		[KRT_BENCH_A_THREADS] = "threads", [KRT_BENCH_A_TIME_S] = "time",
		[KRT_BENCH_A_COUNT] = "count",
	};

	return type <= KRT_BENCH_A_MAX ? names[type] : NULL;
}

/* bench's keywords, by attribute type (match_word() picks one) */
static const char *const bench_kw[KRT_BENCH_A_MAX + 1] = {
	[KRT_BENCH_A_OP] = "op", [KRT_BENCH_A_SIZE] = "size",
	[KRT_BENCH_A_DEPTH] = "depth", [KRT_BENCH_A_THREADS] = "threads",
	[KRT_BENCH_A_TIME_S] = "time", [KRT_BENCH_A_COUNT] = "count",
	[KRT_BENCH_A_VERIFY] = "verify",
};

/*
 * One keyword, with its value unless it is "verify"; each may be given
 * once (the request buffer holds each attribute once).  Return: 0 or the
 * exit status; *@used says how many words it took.
 */
static int bench_opt(struct nlmsghdr *nlh, int argc, char **argv, u32 *seen, int *used)
{
	int type = match_word(argv[0], bench_kw, ARRAY_SIZE(bench_kw), "bench");
	char what[32];
	u32 v;

	if (type == -2)
		return 2;
	if (type < 0)
		return usage_error("unknown argument", argv[0]);
	if (*seen & (1U << type))
		return usage_error("given twice:", bench_kw[type]);
	*seen |= 1U << type;
	if (type == KRT_BENCH_A_VERIFY) {
		mnl_attr_put_u8(nlh, KRT_BENCH_A_VERIFY, 1);
		*used = 1;
		return 0;
	}
	if (argc < 2)
		return usage_error("missing value after", argv[0]);
	*used = 2;
	if (type == KRT_BENCH_A_OP) {
		for (v = KRT_BENCH_OP_SEND; v <= KRT_BENCH_OP_WRITE; v++)
			if (!strcmp(argv[1], bench_ops[v]))
				break;
		if (v > KRT_BENCH_OP_WRITE)
			return usage_error("op must be send, read or write, not", argv[1]);
	} else if (type == KRT_BENCH_A_SIZE) {
		if (get_size(argv[1], &v))
			return 2;
	} else {
		snprintf(what, sizeof(what), "bad %s", bench_kw[type]);
		if (get_num(argv[1], what, 0xffffffffUL, &v))
			return 2;
	}
	mnl_attr_put_u32(nlh, type, v);
	return 0;
}

/*
 * krtctl bench NAME op { send | read | write } size S depth D [threads N]
 *	[time T | count N] [verify]
 * The module checks the values (and says why it refuses one).
 */
int cmd_bench(int argc, char **argv)
{
	struct bench_out o = { 0 };
	struct nlmsghdr *nlh;
	int ret, i, used = 1;
	u32 seen = 0;
	u16 family;

	krtctl.attr_name = bench_attr_name;
	/* exactly "help": a prefix of it may be a peer's name */
	if (argc < 1 || !strcmp(argv[0], "help")) {
		usage(stdout, "bench");
		return argc < 1 ? 2 : 0;
	}
	if (strlen(argv[0]) >= KRT_PEER_NAME_MAX)
		return usage_error("peer name is too long:", argv[0]);
	nlh = nl_msg(&krtctl, KRT_BENCH_CMD_RUN, 0);
	((struct genlmsghdr *)mnl_nlmsg_get_payload(nlh))->version = KRT_BENCH_GENL_VERSION;
	mnl_attr_put_strz(nlh, KRT_BENCH_A_PEER, argv[0]);
	for (i = 1; i < argc; i += used) {
		ret = bench_opt(nlh, argc - i, argv + i, &seen, &used);
		if (ret)
			return ret;
	}
	if (!(seen & (1U << KRT_BENCH_A_OP)))
		return usage_error("bench: missing \"op send\", \"op read\" or \"op write\"", NULL);
	ret = nl_family_resolve(&krtctl, KRT_BENCH_GENL_NAME, "krt_bench", &family);
	if (ret)
		return nl_report(ret, "bench");
	nlh->nlmsg_type = family;
	ret = nl_talk(&krtctl, nlh, bench_cb, &o);
	if (ret)
		return nl_report(ret, "bench");
	if (!o.got) {
		fprintf(stderr, "Error: bench: no answer from the kernel.\n");
		return 1;
	}
	return o.status;
}
