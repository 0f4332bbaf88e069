// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: "listen", "peer" and "conn" objects.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/krt.h>
#include "krtctl.h"

static const char *const conn_states[] = {
	[KRT_CONN_IDLE]		= "idle",
	[KRT_CONN_CONNECTING]	= "connecting",
	[KRT_CONN_ACTIVE]	= "active",
	[KRT_CONN_CLOSING]	= "closing",
	[KRT_CONN_ERROR]	= "error",
};

static const char *const peer_states[] = {
	[KRT_PEER_CONNECTING]	= "connecting",
	[KRT_PEER_ACTIVE]	= "active",
	[KRT_PEER_DEGRADED]	= "degraded",
	[KRT_PEER_DOWN]		= "down",
};

static const char *const policies[] = {
	[KRT_POLICY_RR]			= "rr",
	[KRT_POLICY_MIN_INFLIGHT]	= "min-inflight",
};

static const char *name_of(const char *const *tbl, size_t n, u32 v)
{
	return v < n && tbl[v] ? tbl[v] : "unknown";
}

/* Format an address attribute; "-" when absent. */
static const char *a_addr(const struct nlattr **tb, int type, char *buf, size_t len)
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

static int get_num(const char *s, const char *what, unsigned long max, u32 *val)
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

static const char *listen_attr_name(unsigned int type)
{
	return type == KRT_A_LISTEN_ADDR ? "addr" : NULL;
}

static const char *peer_attr_name(unsigned int type)
{
	static const char *const names[KRT_A_PEER_MAX + 1] = {
		[KRT_A_PEER_NAME] = "name", [KRT_A_PEER_ADDR] = "addr",
	};

	return type <= KRT_A_PEER_MAX ? names[type] : NULL;
}

/* listen */

static int listen_show_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KRT_A_LISTEN_MAX + 1];
	struct jw *w = data;
	const char *addr;
	char buf[64];

	nl_parse_attrs(nlh, tb, KRT_A_LISTEN_MAX);
	addr = a_addr(tb, KRT_A_LISTEN_ADDR, buf, sizeof(buf));
	if (w) {
		jw_start_obj(w, NULL);
		jw_str(w, "addr", addr);
		jw_uint(w, "port", attr_u16(tb, KRT_A_LISTEN_PORT));
		jw_end_obj(w);
	} else {
		printf("%s port %u\n", addr, attr_u16(tb, KRT_A_LISTEN_PORT));
	}
	return MNL_CB_OK;
}

static int dump(u8 cmd, mnl_cb_t cb, const char *what, int filter_type,
		const char *filter)
{
	struct nlmsghdr *nlh = nl_msg(&krtctl, cmd, NLM_F_DUMP);

	if (filter)
		mnl_attr_put_strz(nlh, filter_type, filter);
	return nl_show(nlh, cb, what);
}

int cmd_listen(int argc, char **argv)
{
	struct nlmsghdr *nlh;
	u32 port;
	u8 cmd;

	krtctl.attr_name = listen_attr_name;
	if (argc < 1 || matches(argv[0], "show") || matches(argv[0], "list"))
		return dump(KRT_CMD_LISTEN_GET, listen_show_cb, "listen show", 0, NULL);
	if (matches(argv[0], "help")) {
		printf("Usage: krtctl listen { add | del } ADDR [port PORT]\n"
		       "       krtctl listen show\n");
		return 0;
	}
	if (matches(argv[0], "add"))
		cmd = KRT_CMD_LISTEN_ADD;
	else if (matches(argv[0], "delete"))
		cmd = KRT_CMD_LISTEN_DEL;
	else
		return usage_error("listen: unknown command", argv[0]);
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

/* peer */

void peer_print(const struct nlattr **tb, struct jw *w, const char *key)
{
	bool inbound = tb[KRT_A_PEER_INBOUND] && mnl_attr_get_u8(tb[KRT_A_PEER_INBOUND]);
	unsigned long long node = tb[KRT_A_PEER_NODE_ID] ?
		(unsigned long long)mnl_attr_get_u64(tb[KRT_A_PEER_NODE_ID]) : 0;
	u32 state = attr_u32(tb, KRT_A_PEER_STATE);
	char abuf[64];
	const char *addr = a_addr(tb, KRT_A_PEER_ADDR, abuf, sizeof(abuf));

	if (w) {
		jw_start_obj(w, key);
		jw_str(w, "name", attr_str(tb, KRT_A_PEER_NAME));
		jw_str(w, "direction", inbound ? "inbound" : "outbound");
		if (tb[KRT_A_PEER_ADDR]) {
			jw_str(w, "addr", addr);
			jw_uint(w, "port", attr_u16(tb, KRT_A_PEER_PORT));
		}
		jw_str(w, "state", name_of(peer_states, ARRAY_SIZE(peer_states), state));
		jw_uint(w, "conns_up", attr_u32(tb, KRT_A_PEER_CONNS_UP));
		jw_uint(w, "conns", attr_u32(tb, KRT_A_PEER_CONNS));
		jw_uint(w, "depth", attr_u32(tb, KRT_A_PEER_DEPTH));
		jw_str(w, "policy", name_of(policies, ARRAY_SIZE(policies),
					    attr_u32(tb, KRT_A_PEER_POLICY)));
		jw_hex64(w, "node_id", node);
		if (tb[KRT_A_PEER_REASON])
			jw_str(w, "reason", attr_str(tb, KRT_A_PEER_REASON));
		jw_end_obj(w);
		return;
	}
	printf("%s: %s", attr_str(tb, KRT_A_PEER_NAME), inbound ? "inbound" : "outbound");
	if (tb[KRT_A_PEER_ADDR])
		printf(" addr %s port %u", addr, attr_u16(tb, KRT_A_PEER_PORT));
	printf(" state %s conns %u/%u depth %u policy %s node %016llx",
	       name_of(peer_states, ARRAY_SIZE(peer_states), state),
	       attr_u32(tb, KRT_A_PEER_CONNS_UP),
	       attr_u32(tb, KRT_A_PEER_CONNS), attr_u32(tb, KRT_A_PEER_DEPTH),
	       name_of(policies, ARRAY_SIZE(policies), attr_u32(tb, KRT_A_PEER_POLICY)), node);
	if (tb[KRT_A_PEER_REASON])
		printf(" last-error \"%s\"", attr_str(tb, KRT_A_PEER_REASON));
	printf("\n");
}

static int peer_show_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KRT_A_PEER_MAX + 1];

	nl_parse_attrs(nlh, tb, KRT_A_PEER_MAX);
	peer_print(tb, data, NULL);
	return MNL_CB_OK;
}

static int peer_show(int argc, char **argv)
{
	struct nlmsghdr *nlh;

	if (!argc)
		return dump(KRT_CMD_PEER_GET, peer_show_cb, "peer show", 0, NULL);
	if (strlen(argv[0]) >= KRT_PEER_NAME_MAX)
		return usage_error("peer name is too long:", argv[0]);
	nlh = nl_msg(&krtctl, KRT_CMD_PEER_GET, 0);
	mnl_attr_put_strz(nlh, KRT_A_PEER_NAME, argv[0]);
	return nl_show(nlh, peer_show_cb, "peer show");
}

/* peer add/set options: addr, port, conns, depth, policy */
static int peer_opts(struct nlmsghdr *nlh, int argc, char **argv, bool add)
{
	bool have_addr = false, any = false;
	u32 v;

	for (; argc > 0; argc -= 2, argv += 2) {
		if (argc < 2)
			return usage_error("peer: missing value after", argv[0]);
		if (matches(argv[0], "addr")) {
			if (put_addr(nlh, KRT_A_PEER_ADDR, argv[1]))
				return 2;
			have_addr = true;
		} else if (matches(argv[0], "port")) {
			if (get_num(argv[1], "bad port", 65535, &v))
				return 2;
			mnl_attr_put_u16(nlh, KRT_A_PEER_PORT, (u16)v);
		} else if (matches(argv[0], "conns")) {
			if (get_num(argv[1], "bad conns", 0xffffffffUL, &v))
				return 2;
			mnl_attr_put_u32(nlh, KRT_A_PEER_CONNS, v);
		} else if (matches(argv[0], "depth")) {
			if (get_num(argv[1], "bad depth", 0xffffffffUL, &v))
				return 2;
			mnl_attr_put_u32(nlh, KRT_A_PEER_DEPTH, v);
		} else if (matches(argv[0], "policy")) {
			if (!strcmp(argv[1], "rr"))
				v = KRT_POLICY_RR;
			else if (!strcmp(argv[1], "min-inflight"))
				v = KRT_POLICY_MIN_INFLIGHT;
			else
				return usage_error("policy: want rr or min-inflight, not",
						   argv[1]);
			mnl_attr_put_u32(nlh, KRT_A_PEER_POLICY, v);
		} else {
			return usage_error("peer: unknown option", argv[0]);
		}
		any = true;
	}
	if (add && !have_addr)
		return usage_error("peer add: missing \"addr IP\"", NULL);
	if (!add && !any)
		return usage_error("peer set: nothing to set (conns, depth, policy)", NULL);
	return 0;
}

int cmd_peer(int argc, char **argv)
{
	struct nlmsghdr *nlh;
	bool add;

	krtctl.attr_name = peer_attr_name;
	if (argc < 1 || matches(argv[0], "show") || matches(argv[0], "list"))
		return peer_show(argc ? argc - 1 : 0, argv + (argc ? 1 : 0));
	if (matches(argv[0], "help")) {
		printf("Usage: krtctl peer add NAME addr IP [port P] [conns N] [depth D]\n"
		       "                      [policy rr|min-inflight]\n"
		       "       krtctl peer set NAME { conns N | depth D | policy P }...\n"
		       "       krtctl peer del NAME\n"
		       "       krtctl peer show [NAME]\n");
		return 0;
	}
	if (argc < 2)
		return usage_error("peer: missing peer name after", argv[0]);
	if (strlen(argv[1]) >= KRT_PEER_NAME_MAX)
		return usage_error("peer name is too long:", argv[1]);
	if (matches(argv[0], "delete")) {
		if (argc > 2)
			return usage_error("peer del: unexpected argument", argv[2]);
		nlh = nl_msg(&krtctl, KRT_CMD_PEER_DEL, 0);
		mnl_attr_put_strz(nlh, KRT_A_PEER_NAME, argv[1]);
		return nl_report(nl_talk(&krtctl, nlh, NULL, NULL), "peer del");
	}
	if (matches(argv[0], "add"))
		add = true;
	else if (matches(argv[0], "set"))
		add = false;
	else
		return usage_error("peer: unknown command", argv[0]);
	nlh = nl_msg(&krtctl, add ? KRT_CMD_PEER_ADD : KRT_CMD_PEER_SET, 0);
	mnl_attr_put_strz(nlh, KRT_A_PEER_NAME, argv[1]);
	if (peer_opts(nlh, argc - 2, argv + 2, add))
		return 2;
	return nl_report(nl_talk(&krtctl, nlh, NULL, NULL), add ? "peer add" : "peer set");
}

/* conn */

void conn_print(const struct nlattr **tb, struct jw *w, const char *key)
{
	char lbuf[64], rbuf[64];
	u32 state = attr_u32(tb, KRT_A_CONN_STATE);
	const char *la = a_addr(tb, KRT_A_CONN_LADDR, lbuf, sizeof(lbuf));
	const char *ra = a_addr(tb, KRT_A_CONN_RADDR, rbuf, sizeof(rbuf));

	if (w) {
		jw_start_obj(w, key);
		jw_str(w, "peer", attr_str(tb, KRT_A_CONN_PEER));
		jw_uint(w, "index", attr_u32(tb, KRT_A_CONN_INDEX));
		jw_str(w, "state", name_of(conn_states, ARRAY_SIZE(conn_states), state));
		jw_str(w, "dev", attr_str(tb, KRT_A_CONN_DEV));
		jw_str(w, "laddr", la);
		jw_uint(w, "lport", attr_u16(tb, KRT_A_CONN_LPORT));
		jw_str(w, "raddr", ra);
		jw_uint(w, "rport", attr_u16(tb, KRT_A_CONN_RPORT));
		jw_uint(w, "qpn", attr_u32(tb, KRT_A_CONN_QPN));
		jw_uint(w, "depth", attr_u32(tb, KRT_A_CONN_DEPTH));
		jw_uint(w, "inflight", attr_u32(tb, KRT_A_CONN_INFLIGHT));
		if (tb[KRT_A_CONN_REASON])
			jw_str(w, "reason", attr_str(tb, KRT_A_CONN_REASON));
		jw_end_obj(w);
		return;
	}
	printf("%s/%u: state %s dev %s local %s:%u remote %s:%u qpn %u depth %u inflight %u",
	       attr_str(tb, KRT_A_CONN_PEER), attr_u32(tb, KRT_A_CONN_INDEX),
	       name_of(conn_states, ARRAY_SIZE(conn_states), state),
	       tb[KRT_A_CONN_DEV] ? attr_str(tb, KRT_A_CONN_DEV) : "-",
	       la, attr_u16(tb, KRT_A_CONN_LPORT), ra, attr_u16(tb, KRT_A_CONN_RPORT),
	       attr_u32(tb, KRT_A_CONN_QPN), attr_u32(tb, KRT_A_CONN_DEPTH),
	       attr_u32(tb, KRT_A_CONN_INFLIGHT));
	if (tb[KRT_A_CONN_REASON])
		printf(" reason \"%s\"", attr_str(tb, KRT_A_CONN_REASON));
	printf("\n");
}

static int conn_show_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KRT_A_CONN_MAX + 1];

	nl_parse_attrs(nlh, tb, KRT_A_CONN_MAX);
	conn_print(tb, data, NULL);
	return MNL_CB_OK;
}

int cmd_conn(int argc, char **argv)
{
	const char *peer = NULL;

	if (argc > 0 && matches(argv[0], "help")) {
		printf("Usage: krtctl conn show [peer NAME]\n");
		return 0;
	}
	if (argc > 0 && !matches(argv[0], "show") && !matches(argv[0], "list"))
		return usage_error("conn: unknown command", argv[0]);
	if (argc > 1) {
		if (!matches(argv[1], "peer") || argc != 3)
			return usage_error("conn show: expected \"peer NAME\", got", argv[1]);
		peer = argv[2];
		if (strlen(peer) >= KRT_PEER_NAME_MAX)
			return usage_error("peer name is too long:", peer);
	}
	return dump(KRT_CMD_CONN_GET, conn_show_cb, "conn show", KRT_A_CONN_PEER, peer);
}
