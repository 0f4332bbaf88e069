// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: "conn" object, the connections of the pools.
 */
#include <string.h>
#include <linux/krt.h>
#include "krtctl.h"

static const char *const conn_states[] = {
	[KRT_CONN_IDLE]		= "idle",
	[KRT_CONN_CONNECTING]	= "connecting",
	[KRT_CONN_ACTIVE]	= "active",
	[KRT_CONN_CLOSING]	= "closing",
	[KRT_CONN_ERROR]	= "error",
	[KRT_CONN_RECONNECTING]	= "reconnecting",
};

static const struct nl_attr_pol conn_pol[KRT_A_CONN_MAX + 1] = {
	[KRT_A_CONN_PEER]		= { MNL_TYPE_NUL_STRING, KRT_PEER_NAME_MAX },
	[KRT_A_CONN_INDEX]		= { MNL_TYPE_U32 },
	[KRT_A_CONN_STATE]		= { MNL_TYPE_U32 },
	[KRT_A_CONN_LADDR]		= { MNL_TYPE_BINARY, 16 },
	[KRT_A_CONN_LPORT]		= { MNL_TYPE_U16 },
	[KRT_A_CONN_RADDR]		= { MNL_TYPE_BINARY, 16 },
	[KRT_A_CONN_RPORT]		= { MNL_TYPE_U16 },
	[KRT_A_CONN_QPN]		= { MNL_TYPE_U32 },
	[KRT_A_CONN_DEPTH]		= { MNL_TYPE_U32 },
	[KRT_A_CONN_INFLIGHT]		= { MNL_TYPE_U32 },
	[KRT_A_CONN_DEV]		= { MNL_TYPE_NUL_STRING, KRT_DEV_NAME_MAX },
	[KRT_A_CONN_REASON]		= { MNL_TYPE_NUL_STRING },
	[KRT_A_CONN_RECONNECTS]		= { MNL_TYPE_U32 },
	[KRT_A_CONN_STATE_AGE_MS]	= { MNL_TYPE_U64 },
	[KRT_A_CONN_ATTEMPT]		= { MNL_TYPE_U32 },
	[KRT_A_CONN_MEM]		= { MNL_TYPE_U64 },
};

struct nl_policy conn_policy = { "conn", KRT_A_CONN_MAX, conn_pol, 0 };

/* recovery and memory, shown when the kernel sends them */
static const struct nl_field conn_fields[] = {
	{ KRT_A_CONN_RECONNECTS,	"reconnects" },
	{ KRT_A_CONN_ATTEMPT,		"attempt" },
	{ KRT_A_CONN_STATE_AGE_MS,	"state_age_ms" },
	{ KRT_A_CONN_MEM,		"mem" },
};

/* Print one connection; @w is NULL for plain text, @key names a JSON member. */
void conn_print(const struct nlattr **tb, struct jw *w, const char *key)
{
	struct pr p = { .w = w };
	char name[KRT_PEER_NAME_MAX + 16], buf[64];

	if (w) {
		pr_obj(&p, key, "peer", attr_str(tb, KRT_A_CONN_PEER));
		pr_u64(&p, "index", attr_u32(tb, KRT_A_CONN_INDEX));
	} else {
		/* "NAME/INDEX:", the name that commands accept */
		snprintf(name, sizeof(name), "%s/%u", attr_str(tb, KRT_A_CONN_PEER),
			 attr_u32(tb, KRT_A_CONN_INDEX));
		pr_obj(&p, key, "peer", name);
	}
	pr_word(&p, "state", name_of(conn_states, ARRAY_SIZE(conn_states),
				     attr_u32(tb, KRT_A_CONN_STATE)));
	pr_word(&p, "dev", tb[KRT_A_CONN_DEV] ? attr_str(tb, KRT_A_CONN_DEV) : "-");
	pr_word(&p, "laddr", a_addr(tb, KRT_A_CONN_LADDR, buf, sizeof(buf)));
	pr_u64(&p, "lport", attr_u16(tb, KRT_A_CONN_LPORT));
	pr_word(&p, "raddr", a_addr(tb, KRT_A_CONN_RADDR, buf, sizeof(buf)));
	pr_u64(&p, "rport", attr_u16(tb, KRT_A_CONN_RPORT));
	pr_u64(&p, "qpn", attr_u32(tb, KRT_A_CONN_QPN));
	pr_u64(&p, "depth", attr_u32(tb, KRT_A_CONN_DEPTH));
	pr_u64(&p, "inflight", attr_u32(tb, KRT_A_CONN_INFLIGHT));
	pr_fields(&p, tb, conn_fields, ARRAY_SIZE(conn_fields));
	if (tb[KRT_A_CONN_REASON])
		pr_str(&p, "reason", attr_str(tb, KRT_A_CONN_REASON));
	pr_obj_end(&p);
}

/* conn show of one connection: the dump of its peer, filtered here */
static struct {
	bool on;
	u32 index;
	unsigned int found;
} conn_filter;

static int conn_show_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KRT_A_CONN_MAX + 1];

	if (nl_parse_attrs(nlh, tb, &conn_policy))
		return MNL_CB_OK;
	if (conn_filter.on && (!tb[KRT_A_CONN_INDEX] ||
			       attr_u32(tb, KRT_A_CONN_INDEX) != conn_filter.index))
		return MNL_CB_OK;
	conn_filter.found++;
	conn_print(tb, data, NULL);
	return MNL_CB_OK;
}

static const char *conn_attr_name(unsigned int type)
{
	static const char *const names[KRT_A_CONN_MAX + 1] = {
		[KRT_A_CONN_PEER] = "peer", [KRT_A_CONN_INDEX] = "index",
	};

	return type <= KRT_A_CONN_MAX ? names[type] : NULL;
}

/*
 * A connection: NAME INDEX, or NAME/INDEX as conn show prints it (a
 * trailing ':' allowed), for @what ("conn reset").  Return: 0 or the exit
 * status.
 */
static int conn_ref(int argc, char **argv, const char *what, char *name, u32 *index)
{
	const char *slash = strrchr(argv[0], '/'), *idx = argv[1];
	size_t len = strlen(argv[0]);
	char buf[16], msg[64];

	if (argc == 1) {
		if (!slash) {
			snprintf(msg, sizeof(msg), "%s: want NAME INDEX or NAME/INDEX, not", what);
			return usage_error(msg, argv[0]);
		}
		len = (size_t)(slash - argv[0]);
		idx = slash + 1;
	}
	if (!len || len >= KRT_PEER_NAME_MAX) {
		snprintf(msg, sizeof(msg), "%s: bad peer name in", what);
		return usage_error(msg, argv[0]);
	}
	memcpy(name, argv[0], len);
	name[len] = '\0';
	snprintf(msg, sizeof(msg), "%s: bad index", what);
	if (strlen(idx) >= sizeof(buf))
		return usage_error(msg, idx);
	strcpy(buf, idx);
	if (argc == 1 && *buf && buf[strlen(buf) - 1] == ':')
		buf[strlen(buf) - 1] = '\0';
	return get_num(buf, msg, 0xffffffffUL, index);
}

/* krtctl conn reset NAME INDEX | NAME/INDEX */
static int conn_reset(int argc, char **argv)
{
	char name[KRT_PEER_NAME_MAX];
	struct nlmsghdr *nlh;
	u32 index;

	if (argc < 1)
		return usage_error("conn reset: missing NAME INDEX", NULL);
	if (argc > 2)
		return usage_error("conn reset: unexpected argument", argv[2]);
	if (conn_ref(argc, argv, "conn reset", name, &index))
		return 2;
	nlh = nl_msg(&krtctl, KRT_CMD_CONN_RESET, 0);
	mnl_attr_put_strz(nlh, KRT_A_CONN_PEER, name);
	mnl_attr_put_u32(nlh, KRT_A_CONN_INDEX, index);
	return nl_report(nl_talk(&krtctl, nlh, NULL, NULL), "conn reset");
}

/* After the dump: a connection asked for by index that is not there. */
static int conn_show_found(void)
{
	if (!conn_filter.on || conn_filter.found)
		return 0;
	fprintf(stderr, "Error: no such connection.\n");
	return 1;
}

/* krtctl conn show [peer NAME [index N] | NAME/INDEX] */
static int conn_show(int argc, char **argv)
{
	char name[KRT_PEER_NAME_MAX] = "";
	const char *peer = NULL;
	struct nlmsghdr *nlh;

	memset(&conn_filter, 0, sizeof(conn_filter));
	if (argc == 1 && strchr(argv[0], '/')) {
		if (conn_ref(1, argv, "conn show", name, &conn_filter.index))
			return 2;
		peer = name;
		conn_filter.on = true;
		argc = 0;
	}
	for (; argc > 0; argc -= 2, argv += 2) {
		if (!matches(argv[0], "peer") && !matches(argv[0], "index"))
			return usage_error("conn show: expected \"peer NAME\" or NAME/INDEX, got",
					   argv[0]);
		if (argc < 2)
			return usage_error("conn show: missing value after", argv[0]);
		if (matches(argv[0], "peer")) {
			peer = argv[1];
			if (strlen(peer) >= KRT_PEER_NAME_MAX)
				return usage_error("peer name is too long:", peer);
		} else if (matches(argv[0], "index")) {
			if (get_num(argv[1], "conn show: bad index", 0xffffffffUL,
				    &conn_filter.index))
				return 2;
			conn_filter.on = true;
		}
	}
	if (conn_filter.on && !peer)
		return usage_error("conn show: \"index\" needs \"peer NAME\"", NULL);
	nlh = nl_msg(&krtctl, KRT_CMD_CONN_GET, NLM_F_DUMP);
	if (peer)
		mnl_attr_put_strz(nlh, KRT_A_CONN_PEER, peer);
	return nl_show_check(nlh, conn_show_cb, "conn show", conn_show_found);
}

enum { CONN_SHOW, CONN_LIST, CONN_RESET, CONN_HELP, CONN_MAX };

static const char *const conn_verbs[CONN_MAX] = {
	[CONN_SHOW] = "show", [CONN_LIST] = "list", [CONN_RESET] = "reset",
	[CONN_HELP] = "help",
};

int cmd_conn(int argc, char **argv)
{
	krtctl.attr_name = conn_attr_name;
	if (argc < 1)
		return conn_show(0, argv);
	switch (match_word(argv[0], conn_verbs, CONN_MAX, "conn")) {
	case CONN_SHOW:
	case CONN_LIST:
		return conn_show(argc - 1, argv + 1);
	case CONN_RESET:
		return conn_reset(argc - 1, argv + 1);
	case CONN_HELP:
		usage(stdout, "conn");
		return 0;
	case -2:
		return 2;
	}
	return usage_error("conn: unknown command", argv[0]);
}
