// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: "listen" and "peer" objects.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/krt.h>
#include "krtctl.h"

static const char *const peer_states[] = {
	[KRT_PEER_CONNECTING]	= "connecting",
	[KRT_PEER_ACTIVE]	= "active",
	[KRT_PEER_DEGRADED]	= "degraded",
	[KRT_PEER_DOWN]		= "down",
	[KRT_PEER_RECONNECTING]	= "reconnecting",
};

static const char *const policies[] = {
	[KRT_POLICY_RR]			= "rr",
	[KRT_POLICY_MIN_INFLIGHT]	= "min-inflight",
};

const char *name_of(const char *const *tbl, size_t n, u32 v)
{
	return v < n && tbl[v] ? tbl[v] : "unknown";
}

/* Format an address attribute; "-" when absent. */
const char *a_addr(const struct nlattr **tb, int type, char *buf, size_t len)
{
	const struct nlattr *a = tb[type];

	if (!a)
		return "-";
	if (mnl_attr_get_payload_len(a) == 4)
		return inet_ntop(AF_INET, mnl_attr_get_payload(a), buf, len);
	if (mnl_attr_get_payload_len(a) == 16)
		return inet_ntop(AF_INET6, mnl_attr_get_payload(a), buf, len);
	return "?";
}

static int put_addr(struct nlmsghdr *nlh, int type, const char *s)
{
	unsigned char buf[16];

	if (inet_pton(AF_INET, s, buf) == 1) {
		mnl_attr_put(nlh, type, 4, buf);
		return 0;
	}
	if (inet_pton(AF_INET6, s, buf) == 1) {
		mnl_attr_put(nlh, type, 16, buf);
		return 0;
	}
	return usage_error("not an IPv4 or IPv6 address:", s);
}

int get_num(const char *s, const char *what, unsigned long max, u32 *val)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || !*s || v > max || *s == '-')
		return usage_error(what, s);
	*val = (u32)v;
	return 0;
}

static const struct nl_attr_pol listen_pol[KRT_A_LISTEN_MAX + 1] = {
	[KRT_A_LISTEN_ADDR]	= { MNL_TYPE_BINARY, 16 },
	[KRT_A_LISTEN_PORT]	= { MNL_TYPE_U16 },
	[KRT_A_LISTEN_STATE]	= { MNL_TYPE_U8 },
	[KRT_A_LISTEN_LOST]	= { MNL_TYPE_U32 },
};

struct nl_policy listen_policy = { "listen", KRT_A_LISTEN_MAX, listen_pol, 0 };

static const struct nl_attr_pol peer_pol[KRT_A_PEER_MAX + 1] = {
	[KRT_A_PEER_NAME]		= { MNL_TYPE_NUL_STRING, KRT_PEER_NAME_MAX },
	[KRT_A_PEER_ADDR]		= { MNL_TYPE_BINARY, 16 },
	[KRT_A_PEER_PORT]		= { MNL_TYPE_U16 },
	[KRT_A_PEER_CONNS]		= { MNL_TYPE_U32 },
	[KRT_A_PEER_DEPTH]		= { MNL_TYPE_U32 },
	[KRT_A_PEER_POLICY]		= { MNL_TYPE_U32 },
	[KRT_A_PEER_STATE]		= { MNL_TYPE_U32 },
	[KRT_A_PEER_CONNS_UP]		= { MNL_TYPE_U32 },
	[KRT_A_PEER_INBOUND]		= { MNL_TYPE_U8 },
	[KRT_A_PEER_NODE_ID]		= { MNL_TYPE_U64 },
	[KRT_A_PEER_REJECT]		= { MNL_TYPE_U32 },
	[KRT_A_PEER_REASON]		= { MNL_TYPE_NUL_STRING },
	[KRT_A_PEER_RECONNECT_MS]	= { MNL_TYPE_U32 },
	[KRT_A_PEER_RECONNECT_MAX_MS]	= { MNL_TYPE_U32 },
	[KRT_A_PEER_LOSS_TIMEOUT_S]	= { MNL_TYPE_U32 },
	[KRT_A_PEER_HB_MS]		= { MNL_TYPE_U32 },
	[KRT_A_PEER_HB_MISSES]		= { MNL_TYPE_U32 },
	[KRT_A_PEER_ATTEMPT]		= { MNL_TYPE_U32 },
	[KRT_A_PEER_NEXT_ATTEMPT_MS]	= { MNL_TYPE_U32 },
	[KRT_A_PEER_LOSS_LEFT_MS]	= { MNL_TYPE_U32 },
	[KRT_A_PEER_ERROR_AGE_MS]	= { MNL_TYPE_U64 },
	[KRT_A_PEER_MEM]		= { MNL_TYPE_U64 },
	[KRT_A_PEER_RESENT]		= { MNL_TYPE_U64 },
	[KRT_A_PEER_QUEUED]		= { MNL_TYPE_U32 },
	[KRT_A_PEER_RECONNECTS]		= { MNL_TYPE_U64 },
};

struct nl_policy peer_policy = { "peer", KRT_A_PEER_MAX, peer_pol, 0 };

/* where recovery stands: on the first line, when the kernel sends them */
static const struct nl_field peer_status_fields[] = {
	{ KRT_A_PEER_ATTEMPT,		"attempt" },
	{ KRT_A_PEER_NEXT_ATTEMPT_MS,	"next_attempt_ms" },
	{ KRT_A_PEER_LOSS_LEFT_MS,	"loss_left_ms" },
};

/* settings and counters: the second line */
static const struct nl_field peer_detail_fields[] = {
	{ KRT_A_PEER_RECONNECT_MS,	"reconnect_ms" },
	{ KRT_A_PEER_RECONNECT_MAX_MS,	"reconnect_max_ms" },
	{ KRT_A_PEER_LOSS_TIMEOUT_S,	"loss_timeout_s" },
	{ KRT_A_PEER_HB_MS,		"hb_ms" },
	{ KRT_A_PEER_HB_MISSES,		"hb_misses" },
	{ KRT_A_PEER_MEM,		"mem" },
	{ KRT_A_PEER_QUEUED,		"queued" },
	{ KRT_A_PEER_RESENT,		"resent" },
	{ KRT_A_PEER_RECONNECTS,	"reconnects" },
};

static const char *listen_attr_name(unsigned int type)
{
	return type == KRT_A_LISTEN_ADDR ? "addr" : NULL;
}

static const char *peer_attr_name(unsigned int type)
{
	static const char *const names[KRT_A_PEER_MAX + 1] = {
		[KRT_A_PEER_NAME] = "name", [KRT_A_PEER_ADDR] = "addr",
		[KRT_A_PEER_PORT] = "port", [KRT_A_PEER_CONNS] = "conns",
		[KRT_A_PEER_DEPTH] = "depth", [KRT_A_PEER_POLICY] = "policy",
		[KRT_A_PEER_RECONNECT_MS] = "reconnect_ms",
		[KRT_A_PEER_RECONNECT_MAX_MS] = "reconnect_max_ms",
		[KRT_A_PEER_LOSS_TIMEOUT_S] = "loss_timeout",
		[KRT_A_PEER_HB_MS] = "hb_ms", [KRT_A_PEER_HB_MISSES] = "hb_misses",
	};

	return type <= KRT_A_PEER_MAX ? names[type] : NULL;
}

/* listen */

static int listen_show_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KRT_A_LISTEN_MAX + 1];
	struct pr p = { .w = data };
	char buf[64];

	if (nl_parse_attrs(nlh, tb, &listen_policy))
		return MNL_CB_OK;
	pr_obj(&p, NULL, "addr", a_addr(tb, KRT_A_LISTEN_ADDR, buf, sizeof(buf)));
	pr_u64(&p, "port", attr_u16(tb, KRT_A_LISTEN_PORT));
	if (tb[KRT_A_LISTEN_STATE])
		pr_word(&p, "state", mnl_attr_get_u8(tb[KRT_A_LISTEN_STATE]) ==
			KRT_LISTEN_ACTIVE ? "active" : "waiting");
	if (tb[KRT_A_LISTEN_LOST])
		pr_u64(&p, "lost", mnl_attr_get_u32(tb[KRT_A_LISTEN_LOST]));
	pr_obj_end(&p);
	return MNL_CB_OK;
}

enum { LISTEN_SHOW, LISTEN_LIST, LISTEN_HELP, LISTEN_ADD, LISTEN_DEL, LISTEN_MAX };

static const char *const listen_verbs[LISTEN_MAX] = {
	[LISTEN_SHOW] = "show", [LISTEN_LIST] = "list", [LISTEN_HELP] = "help",
	[LISTEN_ADD] = "add", [LISTEN_DEL] = "delete",
};

int cmd_listen(int argc, char **argv)
{
	struct nlmsghdr *nlh;
	u32 port;
	u8 cmd;

	krtctl.attr_name = listen_attr_name;
	switch (argc < 1 ? LISTEN_SHOW : match_word(argv[0], listen_verbs, LISTEN_MAX, "listen")) {
	case LISTEN_SHOW:
	case LISTEN_LIST:
		return nl_dump(KRT_CMD_LISTEN_GET, listen_show_cb, "listen show", 0, NULL);
	case LISTEN_HELP:
		usage(stdout, "listen");
		return 0;
	case LISTEN_ADD:
		cmd = KRT_CMD_LISTEN_ADD;
		break;
	case LISTEN_DEL:
		cmd = KRT_CMD_LISTEN_DEL;
		break;
	case -2:
		return 2;
	default:
		return usage_error("listen: unknown command", argv[0]);
	}
	if (argc < 2)
		return usage_error("listen: missing address", NULL);
	nlh = nl_msg(&krtctl, cmd, 0);
	if (put_addr(nlh, KRT_A_LISTEN_ADDR, argv[1]))
		return 2;
	for (argc -= 2, argv += 2; argc > 0; argc -= 2, argv += 2) {
		if (!matches(argv[0], "port") || argc < 2)
			return usage_error("listen: expected \"port PORT\", got", argv[0]);
		if (get_num(argv[1], "bad port", 65535, &port))
			return 2;
		mnl_attr_put_u16(nlh, KRT_A_LISTEN_PORT, (u16)port);
	}
	return nl_report(nl_talk(&krtctl, nlh, NULL, NULL), "listen");
}

/* save: "listen add ADDR port P" */
int listen_save(const struct nlattr **tb, FILE *f)
{
	char buf[64];

	if (!tb[KRT_A_LISTEN_ADDR])
		return 0;
	fprintf(f, "listen add %s port %u\n", a_addr(tb, KRT_A_LISTEN_ADDR, buf, sizeof(buf)),
		attr_u16(tb, KRT_A_LISTEN_PORT));
	return 0;
}

/* peer */

/* peer show -s: the statistics of the peers it shows, fetched before them */
static struct stats_set *peer_stats;

static void peer_stats_print(const struct nlattr **tb, struct jw *w)
{
	const struct stats *s;

	if (!peer_stats || !tb[KRT_A_PEER_NAME])
		return;
	s = stats_find(peer_stats, attr_str(tb, KRT_A_PEER_NAME));
	if (s)
		stats_summary_print(s, w);
}

/* Print one peer; @w is NULL for plain text, @key names a JSON member. */
void peer_print(const struct nlattr **tb, struct jw *w, const char *key)
{
	bool inbound = attr_u8(tb, KRT_A_PEER_INBOUND);
	struct pr p = { .w = w };
	char abuf[64];

	pr_obj(&p, key, "name", attr_str(tb, KRT_A_PEER_NAME));
	pr_word(&p, "direction", inbound ? "inbound" : "outbound");
	if (tb[KRT_A_PEER_ADDR]) {
		pr_word(&p, "addr", a_addr(tb, KRT_A_PEER_ADDR, abuf, sizeof(abuf)));
		pr_u64(&p, "port", attr_u16(tb, KRT_A_PEER_PORT));
	}
	pr_word(&p, "state", name_of(peer_states, ARRAY_SIZE(peer_states),
				     attr_u32(tb, KRT_A_PEER_STATE)));
	pr_u64(&p, "conns_up", attr_u32(tb, KRT_A_PEER_CONNS_UP));
	pr_u64(&p, "conns", attr_u32(tb, KRT_A_PEER_CONNS));
	pr_u64(&p, "depth", attr_u32(tb, KRT_A_PEER_DEPTH));
	pr_word(&p, "policy", name_of(policies, ARRAY_SIZE(policies),
				      attr_u32(tb, KRT_A_PEER_POLICY)));
	pr_hex64(&p, "node_id", attr_u64(tb, KRT_A_PEER_NODE_ID));
	pr_fields(&p, tb, peer_status_fields, ARRAY_SIZE(peer_status_fields));
	if (tb[KRT_A_PEER_REASON])
		pr_str(&p, "reason", attr_str(tb, KRT_A_PEER_REASON));
	if (tb[KRT_A_PEER_ERROR_AGE_MS])
		pr_u64(&p, "error_age_ms", attr_u64(tb, KRT_A_PEER_ERROR_AGE_MS));
	pr_break(&p);
	pr_fields(&p, tb, peer_detail_fields, ARRAY_SIZE(peer_detail_fields));
	pr_end_line(&p);
	peer_stats_print(tb, w);
	pr_obj_end(&p);
}

static int peer_show_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KRT_A_PEER_MAX + 1];

	/* -s: the KRTCTL_REPLY file answers both requests */
	if (peer_stats && genl_cmd_of(nlh) != KRT_CMD_PEER_GET)
		return MNL_CB_OK;
	if (nl_parse_attrs(nlh, tb, &peer_policy))
		return MNL_CB_OK;
	peer_print(tb, data, NULL);
	return MNL_CB_OK;
}

/* krtctl [-s] peer show [NAME] */
static int peer_show(int argc, char **argv)
{
	const char *name = argc ? argv[0] : NULL;
	struct stats_set set = { 0 };
	struct nlmsghdr *nlh;
	int ret;

	if (name && strlen(name) >= KRT_PEER_NAME_MAX)
		return usage_error("peer name is too long:", name);
	if (krtctl.stats) {
		ret = stats_get(&set, name, NULL, true);
		if (ret) {
			stats_set_free(&set);
			return stats_report(ret, "peer show -s");
		}
		peer_stats = &set;
	}
	if (!name) {
		ret = nl_dump(KRT_CMD_PEER_GET, peer_show_cb, "peer show", 0, NULL);
	} else {
		nlh = nl_msg(&krtctl, KRT_CMD_PEER_GET, 0);
		mnl_attr_put_strz(nlh, KRT_A_PEER_NAME, name);
		ret = nl_show(nlh, peer_show_cb, "peer show");
	}
	peer_stats = NULL;
	stats_set_free(&set);
	return ret;
}

/* peer add/set options that take a number */
static const struct {
	const char *name;
	u16 type;
	u16 bits;		/* u16 or u32 */
} peer_num_opts[] = {
	{ "port",		KRT_A_PEER_PORT,		16 },
	{ "conns",		KRT_A_PEER_CONNS,		32 },
	{ "depth",		KRT_A_PEER_DEPTH,		32 },
	{ "reconnect_ms",	KRT_A_PEER_RECONNECT_MS,	32 },
	{ "reconnect_max_ms",	KRT_A_PEER_RECONNECT_MAX_MS,	32 },
	{ "loss_timeout",	KRT_A_PEER_LOSS_TIMEOUT_S,	32 },
	{ "hb_ms",		KRT_A_PEER_HB_MS,		32 },
	{ "hb_misses",		KRT_A_PEER_HB_MISSES,		32 },
};

/* one numeric option; Return: 0, 1 if @opt is none of them, 2 on error */
static int peer_num_opt(struct nlmsghdr *nlh, const char *opt, const char *val)
{
	char what[40];
	size_t i;
	u32 v;

	for (i = 0; i < ARRAY_SIZE(peer_num_opts); i++) {
		if (!matches(opt, peer_num_opts[i].name))
			continue;
		snprintf(what, sizeof(what), "bad %s", peer_num_opts[i].name);
		if (get_num(val, what, peer_num_opts[i].bits == 16 ? 0xffffUL : 0xffffffffUL, &v))
			return 2;
		if (peer_num_opts[i].bits == 16)
			mnl_attr_put_u16(nlh, peer_num_opts[i].type, (u16)v);
		else
			mnl_attr_put_u32(nlh, peer_num_opts[i].type, v);
		return 0;
	}
	return 1;
}

static int peer_policy_opt(struct nlmsghdr *nlh, const char *val)
{
	u32 v;

	if (!strcmp(val, "rr"))
		v = KRT_POLICY_RR;
	else if (!strcmp(val, "min-inflight"))
		v = KRT_POLICY_MIN_INFLIGHT;
	else
		return usage_error("policy: want rr or min-inflight, not", val);
	mnl_attr_put_u32(nlh, KRT_A_PEER_POLICY, v);
	return 0;
}

/* "peer set" alone: name what it can set (port cannot change) */
static int nothing_to_set(void)
{
	char msg[192] = "peer set: nothing to set (";
	size_t i;

	for (i = 0; i < ARRAY_SIZE(peer_num_opts); i++) {
		if (peer_num_opts[i].type == KRT_A_PEER_PORT)
			continue;
		strncat(msg, peer_num_opts[i].name, sizeof(msg) - strlen(msg) - 1);
		strncat(msg, ", ", sizeof(msg) - strlen(msg) - 1);
	}
	strncat(msg, "policy)", sizeof(msg) - strlen(msg) - 1);
	return usage_error(msg, NULL);
}

/* peer add/set options: addr, the numbers above, policy (prefixes in that order) */
static int peer_opts(struct nlmsghdr *nlh, int argc, char **argv, bool add)
{
	bool have_addr = false;
	int ret, n = argc;

	for (; argc > 0; argc -= 2, argv += 2) {
		if (argc < 2)
			return usage_error("peer: missing value after", argv[0]);
		if (matches(argv[0], "addr")) {
			if (put_addr(nlh, KRT_A_PEER_ADDR, argv[1]))
				return 2;
			have_addr = true;
			continue;
		}
		ret = peer_num_opt(nlh, argv[0], argv[1]);
		if (ret == 1 && matches(argv[0], "policy"))
			ret = peer_policy_opt(nlh, argv[1]) ? 2 : 0;
		if (ret == 1)
			return usage_error("peer: unknown option", argv[0]);
		if (ret)
			return ret;
	}
	if (add && !have_addr)
		return usage_error("peer add: missing \"addr IP\"", NULL);
	if (!add && !n)
		return nothing_to_set();
	return 0;
}

/* krtctl peer { del | reconnect } NAME */
static int peer_name_cmd(u8 cmd, const char *what, int argc, char **argv)
{
	struct nlmsghdr *nlh;

	char msg[48];

	if (argc > 2) {
		snprintf(msg, sizeof(msg), "%s: unexpected argument", what);
		return usage_error(msg, argv[2]);
	}
	nlh = nl_msg(&krtctl, cmd, 0);
	mnl_attr_put_strz(nlh, KRT_A_PEER_NAME, argv[1]);
	return nl_report(nl_talk(&krtctl, nlh, NULL, NULL), what);
}

/*
 * save: "peer add" of an outbound peer with every setting the kernel
 * reports, by the keywords peer_opts() reads; inbound peers are the
 * remote's to make.
 */
int peer_save(const struct nlattr **tb, FILE *f)
{
	const char *name = attr_str(tb, KRT_A_PEER_NAME);
	u32 policy = attr_u32(tb, KRT_A_PEER_POLICY);
	char abuf[64];
	size_t i;

	if (attr_u8(tb, KRT_A_PEER_INBOUND) || !tb[KRT_A_PEER_ADDR])
		return 0;
	if (!batch_word_ok(name)) {
		fprintf(stderr, "krtctl: save: peer name \"%s\" %s\n", name,
			"cannot be written in a batch file");
		fprintf(f, "# peer add (unwritable name) addr %s\n",
			a_addr(tb, KRT_A_PEER_ADDR, abuf, sizeof(abuf)));
		return -1;
	}
	fprintf(f, "peer add %s addr %s", name, a_addr(tb, KRT_A_PEER_ADDR, abuf, sizeof(abuf)));
	for (i = 0; i < ARRAY_SIZE(peer_num_opts); i++) {
		if (tb[peer_num_opts[i].type])
			fprintf(f, " %s %llu", peer_num_opts[i].name,
				(unsigned long long)attr_uint(tb, peer_num_opts[i].type));
		if (peer_num_opts[i].type == KRT_A_PEER_DEPTH && tb[KRT_A_PEER_POLICY] &&
		    policy < ARRAY_SIZE(policies) && policies[policy])
			fprintf(f, " policy %s", policies[policy]);
	}
	fprintf(f, "\n");
	return 0;
}

enum { PEER_SHOW, PEER_LIST, PEER_HELP, PEER_DEL, PEER_RECONNECT, PEER_ADD, PEER_SET,
	PEER_MAX };

static const char *const peer_verbs[PEER_MAX] = {
	[PEER_SHOW] = "show", [PEER_LIST] = "list", [PEER_HELP] = "help",
	[PEER_DEL] = "delete", [PEER_RECONNECT] = "reconnect", [PEER_ADD] = "add",
	[PEER_SET] = "set",
};

int cmd_peer(int argc, char **argv)
{
	struct nlmsghdr *nlh;
	int verb;
	bool add;

	krtctl.attr_name = peer_attr_name;
	verb = argc < 1 ? PEER_SHOW : match_word(argv[0], peer_verbs, PEER_MAX, "peer");
	switch (verb) {
	case PEER_SHOW:
	case PEER_LIST:
		return peer_show(argc ? argc - 1 : 0, argv + (argc ? 1 : 0));
	case PEER_HELP:
		usage(stdout, "peer");
		return 0;
	case -2:
		return 2;
	case -1:
		return usage_error("peer: unknown command", argv[0]);
	}
	if (argc < 2)
		return usage_error("peer: missing peer name after", argv[0]);
	if (strlen(argv[1]) >= KRT_PEER_NAME_MAX)
		return usage_error("peer name is too long:", argv[1]);
	if (verb == PEER_DEL)
		return peer_name_cmd(KRT_CMD_PEER_DEL, "peer del", argc, argv);
	if (verb == PEER_RECONNECT)
		return peer_name_cmd(KRT_CMD_PEER_RECONNECT, "peer reconnect", argc, argv);
	add = verb == PEER_ADD;
	nlh = nl_msg(&krtctl, add ? KRT_CMD_PEER_ADD : KRT_CMD_PEER_SET, 0);
	mnl_attr_put_strz(nlh, KRT_A_PEER_NAME, argv[1]);
	if (peer_opts(nlh, argc - 2, argv + 2, add))
		return 2;
	return nl_report(nl_talk(&krtctl, nlh, NULL, NULL), add ? "peer add" : "peer set");
}
