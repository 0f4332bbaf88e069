// SPDX-License-Identifier: GPL-2.0
/*
 * krt_bench: generic netlink family "krt_bench".
 *
 * DOC: Netlink
 *
 * One operation, %KRT_BENCH_CMD_RUN (CAP_NET_ADMIN: GENL_ADMIN_PERM),
 * with its own policy: the core rejects unknown attributes and wrong
 * types; the handler checks presence and ranges and answers each refusal
 * with an extack message naming the limit.  The run happens in the
 * caller's system call; the answer carries the request and the result
 * (u64 attributes padded with %KRT_BENCH_A_PAD).  Handlers run in
 * parallel (parallel_ops), so runs may overlap; genl_unregister_family()
 * waits for running handlers at unload, after krt_bench_stop_all() ended
 * their runs.  Spec: Documentation/netlink/specs/krt_bench.yaml.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include "krt_bench.h"

static const struct nla_policy krt_bench_run_policy[KRT_BENCH_A_MAX + 1] = {
	[KRT_BENCH_A_PEER]	= { .type = NLA_NUL_STRING, .len = KRT_PEER_NAME_MAX - 1 },
	[KRT_BENCH_A_OP]	= NLA_POLICY_RANGE(NLA_U32, KRT_BENCH_OP_SEND,
						   KRT_BENCH_OP_WRITE),
	[KRT_BENCH_A_SIZE]	= { .type = NLA_U32 },
	[KRT_BENCH_A_DEPTH]	= { .type = NLA_U32 },
	[KRT_BENCH_A_THREADS]	= { .type = NLA_U32 },
	[KRT_BENCH_A_TIME_S]	= { .type = NLA_U32 },
	[KRT_BENCH_A_COUNT]	= { .type = NLA_U32 },
	[KRT_BENCH_A_VERIFY]	= NLA_POLICY_MAX(NLA_U8, 1),
};

static struct genl_family krt_bench_genl_family;

/* a u32 attribute, @def when absent */
static u32 krt_bench_nl_u32(struct genl_info *info, int type, u32 def)
{
	return info->attrs[type] ? nla_get_u32(info->attrs[type]) : def;
}

/* Refuse attribute @type of @info with the literal @msg; Return: -EINVAL. */
#define KRT_BENCH_NL_BAD(info, type, msg) ({				\
	struct genl_info *__i = (info);					\
									\
	NL_SET_ERR_MSG_MOD(__i->extack, msg);				\
	NL_SET_BAD_ATTR(__i->extack, __i->attrs[type]);			\
	-EINVAL;							\
})

/* The request's arguments; Return: 0 or -EINVAL with an extack message. */
static int krt_bench_nl_args(struct genl_info *info, struct krt_bench_args *a)
{
	if (GENL_REQ_ATTR_CHECK(info, KRT_BENCH_A_PEER) ||
	    GENL_REQ_ATTR_CHECK(info, KRT_BENCH_A_OP) ||
	    GENL_REQ_ATTR_CHECK(info, KRT_BENCH_A_SIZE) ||
	    GENL_REQ_ATTR_CHECK(info, KRT_BENCH_A_DEPTH))
		return -EINVAL;
	nla_strscpy(a->peer, info->attrs[KRT_BENCH_A_PEER], sizeof(a->peer));
	a->op = nla_get_u32(info->attrs[KRT_BENCH_A_OP]);
	a->size = nla_get_u32(info->attrs[KRT_BENCH_A_SIZE]);
	a->depth = nla_get_u32(info->attrs[KRT_BENCH_A_DEPTH]);
	a->threads = krt_bench_nl_u32(info, KRT_BENCH_A_THREADS, 1);
	a->time_s = krt_bench_nl_u32(info, KRT_BENCH_A_TIME_S, 0);
	a->count = krt_bench_nl_u32(info, KRT_BENCH_A_COUNT, 0);
	a->verify = info->attrs[KRT_BENCH_A_VERIFY] &&
		    nla_get_u8(info->attrs[KRT_BENCH_A_VERIFY]);
	if (!a->size)
		return KRT_BENCH_NL_BAD(info, KRT_BENCH_A_SIZE, "size must be at least 1 byte");
	if (!a->depth || a->depth > KRT_BENCH_MAX_DEPTH)
		return KRT_BENCH_NL_BAD(info, KRT_BENCH_A_DEPTH, "depth must be 1 to 1024");
	if (!a->threads || a->threads > KRT_BENCH_MAX_THREADS)
		return KRT_BENCH_NL_BAD(info, KRT_BENCH_A_THREADS, "threads must be 1 to 16");
	if (a->time_s > KRT_BENCH_MAX_TIME_S)
		return KRT_BENCH_NL_BAD(info, KRT_BENCH_A_TIME_S,
					"time must be at most 60 seconds");
	if (a->time_s && a->count) {
		NL_SET_ERR_MSG_MOD(info->extack, "time and count exclude each other");
		return -EINVAL;
	}
	if (!a->time_s && !a->count) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "give a time (1 to 60 s) or a count (at least 1)");
		return -EINVAL;
	}
	return 0;
}

static int krt_bench_nl_put(struct sk_buff *msg, const struct krt_bench_args *a,
			    const struct krt_bench_result *r)
{
	static const struct {
		int type;
		size_t off;
	} u64s[] = {
#define KRT_BENCH_U64(t, f) { KRT_BENCH_A_##t, offsetof(struct krt_bench_result, f) }
		KRT_BENCH_U64(REQUESTS, requests),
		KRT_BENCH_U64(ERRORS, errors),
		KRT_BENCH_U64(MISMATCHES, mismatches),
		KRT_BENCH_U64(BYTES, bytes),
		KRT_BENCH_U64(ELAPSED_NS, elapsed_ns),
		KRT_BENCH_U64(LAT_MIN_NS, lat_min),
		KRT_BENCH_U64(LAT_AVG_NS, lat_avg),
		KRT_BENCH_U64(LAT_P50_NS, lat_p50),
		KRT_BENCH_U64(LAT_P99_NS, lat_p99),
		KRT_BENCH_U64(LAT_P999_NS, lat_p999),
		KRT_BENCH_U64(LAT_MAX_NS, lat_max),
		KRT_BENCH_U64(CPU_NS, cpu_ns),
		KRT_BENCH_U64(CPU_NS_PER_REQ, cpu_ns_per_req),
#undef KRT_BENCH_U64
	};
	size_t i;

	if (nla_put_string(msg, KRT_BENCH_A_PEER, a->peer) ||
	    nla_put_u32(msg, KRT_BENCH_A_OP, a->op) ||
	    nla_put_u32(msg, KRT_BENCH_A_SIZE, a->size) ||
	    nla_put_u32(msg, KRT_BENCH_A_DEPTH, a->depth) ||
	    nla_put_u32(msg, KRT_BENCH_A_THREADS, a->threads) ||
	    nla_put_u32(msg, KRT_BENCH_A_TIME_S, a->time_s) ||
	    nla_put_u32(msg, KRT_BENCH_A_COUNT, a->count) ||
	    nla_put_u8(msg, KRT_BENCH_A_VERIFY, a->verify) ||
	    nla_put_u32(msg, KRT_BENCH_A_FIRST_ERROR, (u32)-r->first_error) ||
	    nla_put_u8(msg, KRT_BENCH_A_STOPPED, r->stopped))
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(u64s); i++)
		if (nla_put_u64_64bit(msg, u64s[i].type,
				      *(const u64 *)((const char *)r + u64s[i].off),
				      KRT_BENCH_A_PAD))
			return -EMSGSIZE;
	return 0;
}

/*
 * KRT_BENCH_CMD_RUN: run the load in the caller's system call, then
 * answer the result.
 */
static int krt_bench_nl_run_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct krt_bench_args a = {};
	struct krt_bench_result r = {};
	struct sk_buff *msg;
	void *hdr;
	int ret;

	ret = krt_bench_nl_args(info, &a);
	if (ret)
		return ret;
	ret = krt_bench_run(&a, &r, info->extack);
	if (ret)
		return ret;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &krt_bench_genl_family, 0, KRT_BENCH_CMD_RUN);
	if (!hdr || krt_bench_nl_put(msg, &a, &r)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static const struct genl_ops krt_bench_genl_ops[] = {
	{
		.cmd		= KRT_BENCH_CMD_RUN,
		.doit		= krt_bench_nl_run_doit,
		.policy		= krt_bench_run_policy,
		.maxattr	= KRT_BENCH_A_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
};

static struct genl_family krt_bench_genl_family __ro_after_init = {
	.name		= KRT_BENCH_GENL_NAME,
	.version	= KRT_BENCH_GENL_VERSION,
	.netnsok	= false,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= krt_bench_genl_ops,
	.n_ops		= ARRAY_SIZE(krt_bench_genl_ops),
};

/**
 * krt_bench_nl_init() - register the "krt_bench" generic netlink family
 *
 * Return: 0 or the error of genl_register_family().
 */
int __init krt_bench_nl_init(void)
{
	return genl_register_family(&krt_bench_genl_family);
}

/**
 * krt_bench_nl_exit() - unregister the family; waits for running handlers
 */
void krt_bench_nl_exit(void)
{
	genl_unregister_family(&krt_bench_genl_family);
}
