// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: "stats", the counters, gauges, failed work completions and
 * latency histograms of peers and connections (KRT_CMD_STATS_GET), and
 * their reset (KRT_CMD_STATS_RESET).  The answers are copied into struct
 * stats (stats_get()), which "stats show", "peer show -s" and "top" print.
 *
 * Text and JSON come from the same calls of the pr_*() helpers below, as
 * iproute2's print_*(PRINT_ANY, ...): a field printed in one is printed in
 * the other, under the same key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/krt.h>
#include "krtctl.h"

/* the counters: the table of <linux/krt_stats.h> expanded, in its order */
#define KRT_STAT(n, k) \
	[STAT_IDX(n)] = #k,
static const char *const stat_keys[KRT_STAT_NR] = {
#include <linux/krt_stats.h>
};

#undef KRT_STAT

#define KRT_STAT(n, k) \
	[KRT_A_STAT_##n] = { MNL_TYPE_U64 },
static const struct nl_attr_pol stat_pol[KRT_A_STAT_MAX + 1] = {
#include <linux/krt_stats.h>
};

#undef KRT_STAT

static struct nl_policy stat_policy = { "stats counter", KRT_A_STAT_MAX, stat_pol, 0 };

static const struct nl_attr_pol stats_pol[KRT_A_STATS_MAX + 1] = {
	[KRT_A_STATS_PEER]		= { MNL_TYPE_NUL_STRING, KRT_PEER_NAME_MAX },
	[KRT_A_STATS_CONN]		= { MNL_TYPE_U32 },
	[KRT_A_STATS_INBOUND]		= { MNL_TYPE_U8 },
	[KRT_A_STATS_AGE_MS]		= { MNL_TYPE_U64 },
	[KRT_A_STATS_COUNTERS]		= { MNL_TYPE_NESTED },
	[KRT_A_STATS_WC]		= { MNL_TYPE_NESTED },
	[KRT_A_STATS_LAT_RTT]		= { MNL_TYPE_NESTED },
	[KRT_A_STATS_LAT_SVC]		= { MNL_TYPE_NESTED },
	[KRT_A_STATS_INFLIGHT]		= { MNL_TYPE_U32 },
	[KRT_A_STATS_INFLIGHT_HWM]	= { MNL_TYPE_U32 },
	[KRT_A_STATS_MRS]		= { MNL_TYPE_U32 },
	[KRT_A_STATS_MRS_USED]		= { MNL_TYPE_U32 },
	[KRT_A_STATS_MRS_HWM]		= { MNL_TYPE_U32 },
};

static struct nl_policy stats_policy = { "stats", KRT_A_STATS_MAX, stats_pol, 0 };

static const struct nl_attr_pol lat_pol[KRT_A_LAT_MAX + 1] = {
	[KRT_A_LAT_COUNT]	= { MNL_TYPE_U64 },
	[KRT_A_LAT_SUM_NS]	= { MNL_TYPE_U64 },
	[KRT_A_LAT_MIN_NS]	= { MNL_TYPE_U64 },
	[KRT_A_LAT_MAX_NS]	= { MNL_TYPE_U64 },
	[KRT_A_LAT_AVG_NS]	= { MNL_TYPE_U64 },
	[KRT_A_LAT_P50_NS]	= { MNL_TYPE_U64 },
	[KRT_A_LAT_P90_NS]	= { MNL_TYPE_U64 },
	[KRT_A_LAT_P99_NS]	= { MNL_TYPE_U64 },
	[KRT_A_LAT_P999_NS]	= { MNL_TYPE_U64 },
	[KRT_A_LAT_BUCKETS]	= { MNL_TYPE_NESTED },
};

static struct nl_policy lat_policy = { "stats latency", KRT_A_LAT_MAX, lat_pol, 0 };

static const struct nl_attr_pol bucket_pol[KRT_A_BUCKET_MAX + 1] = {
	[KRT_A_BUCKET_LE_NS]	= { MNL_TYPE_U64 },
	[KRT_A_BUCKET_COUNT]	= { MNL_TYPE_U64 },
};

static struct nl_policy bucket_policy = { "stats bucket", KRT_A_BUCKET_MAX, bucket_pol, 0 };

static const struct nl_attr_pol wc_pol[KRT_A_WC_MAX + 1] = {
	[KRT_A_WC_STATUS]	= { MNL_TYPE_U32 },
	[KRT_A_WC_NAME]		= { MNL_TYPE_NUL_STRING, STATS_WC_NAME_MAX },
	[KRT_A_WC_COUNT]	= { MNL_TYPE_U64 },
};

static struct nl_policy wc_policy = { "stats wc", KRT_A_WC_MAX, wc_pol, 0 };

/* the gauges: u32 attributes of the message itself */
static const struct nl_field stats_gauges[] = {
	{ KRT_A_STATS_INFLIGHT,		"inflight" },
	{ KRT_A_STATS_INFLIGHT_HWM,	"inflight_hwm" },
	{ KRT_A_STATS_MRS,		"mrs" },
	{ KRT_A_STATS_MRS_USED,		"mrs_used" },
	{ KRT_A_STATS_MRS_HWM,		"mrs_hwm" },
};

/*
 * The fields of a histogram: JSON key and text label (NULL: JSON only),
 * in the order of the text line.  COUNT is a number, the others times.
 */
static const struct {
	u16 type;
	const char *key;
	const char *label;
} lat_fields[] = {
	{ KRT_A_LAT_COUNT,	"count",	"count" },
	{ KRT_A_LAT_SUM_NS,	"sum_ns",	NULL },
	{ KRT_A_LAT_MIN_NS,	"min_ns",	"min" },
	{ KRT_A_LAT_AVG_NS,	"avg_ns",	"avg" },
	{ KRT_A_LAT_P50_NS,	"p50_ns",	"p50" },
	{ KRT_A_LAT_P90_NS,	"p90_ns",	"p90" },
	{ KRT_A_LAT_P99_NS,	"p99_ns",	"p99" },
	{ KRT_A_LAT_P999_NS,	"p999_ns",	"p99.9" },
	{ KRT_A_LAT_MAX_NS,	"max_ns",	"max" },
};

/* peer show -s: the main counters, of the client (outbound) or the server side */
static const u8 summary_client[] = {
	STAT_IDX(REQS_SEND), STAT_IDX(REQS_READ), STAT_IDX(REQS_WRITE),
	STAT_IDX(DONE_OK), STAT_IDX(DONE_ERROR), STAT_IDX(MSG_BYTES_OUT),
	STAT_IDX(MSG_BYTES_IN), STAT_IDX(DATA_BYTES_READ), STAT_IDX(DATA_BYTES_WRITTEN),
	STAT_IDX(RESENT), STAT_IDX(RECONNECTS), STAT_IDX(ERR_TIMEOUT), STAT_IDX(ERR_WC),
};

static const u8 summary_server[] = {
	STAT_IDX(SRV_REQS_SEND), STAT_IDX(SRV_REQS_READ), STAT_IDX(SRV_REQS_WRITE),
	STAT_IDX(SRV_MSG_BYTES_IN), STAT_IDX(SRV_MSG_BYTES_OUT),
	STAT_IDX(SRV_DATA_BYTES_READ), STAT_IDX(SRV_DATA_BYTES_WRITTEN),
	STAT_IDX(RECONNECTS), STAT_IDX(ERR_MALFORMED), STAT_IDX(ERR_WC),
};

/* the genetlink command of a message; -1 without a genetlink header */
int genl_cmd_of(const struct nlmsghdr *nlh)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*g))
		return -1;
	return g->cmd;
}

/* A time: "850ns", "12.5us", "3.20ms", "1.50s"; "inf" for the open bucket. */
const char *fmt_ns(char *buf, size_t len, u64 ns)
{
	if (ns == UINT64_MAX)
		snprintf(buf, len, "inf");
	else if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
	return buf;
}

/* parsing */

static void nest_warn(struct nl_policy *p, const struct nlattr *a)
{
	unsigned int type = mnl_attr_get_type(a);

	if (p->warned & (1ULL << type))
		return;
	p->warned |= 1ULL << type;
	fprintf(stderr, "krtctl: ignoring a malformed %s attribute (type %u, %u bytes)\n",
		p->obj, type, (unsigned int)mnl_attr_get_payload_len(a));
}

/* nl_parse_attrs() for the attributes of a nest */
static void nest_parse(const struct nlattr *nest, const struct nlattr **tb,
		       struct nl_policy *p)
{
	const struct nlattr *a;

	memset(tb, 0, sizeof(*tb) * (p->max + 1));
	mnl_attr_for_each_nested(a, nest) {
		unsigned int type = mnl_attr_get_type(a);
		const struct nl_attr_pol *pol;

		if (type > p->max || p->pol[type].type == MNL_TYPE_UNSPEC)
			continue;
		pol = &p->pol[type];
		if (mnl_attr_validate(a, (enum mnl_attr_data_type)pol->type) >= 0 &&
		    (!pol->len || mnl_attr_get_payload_len(a) <= pol->len))
			tb[type] = a;
		else
			nest_warn(p, a);
	}
}

/* entries of type @type in a list nest (buckets, wc statuses) */
static u32 list_len(const struct nlattr *nest, u16 type)
{
	const struct nlattr *a;
	u32 n = 0;

	mnl_attr_for_each_nested(a, nest)
		if (mnl_attr_get_type(a) == type && mnl_attr_validate(a, MNL_TYPE_NESTED) >= 0)
			n++;
	return n;
}

static int bucket_cmp(const void *a, const void *b)
{
	const struct stats_bucket *x = a, *y = b;

	return x->le_ns < y->le_ns ? -1 : x->le_ns > y->le_ns;
}

static int lat_parse(struct stats_lat *l, const struct nlattr *nest)
{
	const struct nlattr *tb[KRT_A_LAT_MAX + 1], *bt[KRT_A_BUCKET_MAX + 1], *a;
	unsigned int type;
	u32 n;

	nest_parse(nest, tb, &lat_policy);
	for (type = 0; type <= KRT_A_LAT_MAX; type++) {
		if (!tb[type] || type == KRT_A_LAT_BUCKETS)
			continue;
		l->have |= 1U << type;
		l->v[type] = mnl_attr_get_u64(tb[type]);
	}
	if (!tb[KRT_A_LAT_BUCKETS])
		return 0;
	l->have |= 1U << KRT_A_LAT_BUCKETS;
	n = list_len(tb[KRT_A_LAT_BUCKETS], KRT_A_LAT_BUCKET);
	if (!n)
		return 0;
	l->b = calloc(n, sizeof(*l->b));
	if (!l->b)
		return -1;
	mnl_attr_for_each_nested(a, tb[KRT_A_LAT_BUCKETS]) {
		if (mnl_attr_get_type(a) != KRT_A_LAT_BUCKET ||
		    mnl_attr_validate(a, MNL_TYPE_NESTED) < 0)
			continue;
		nest_parse(a, bt, &bucket_policy);
		if (!bt[KRT_A_BUCKET_LE_NS] || !bt[KRT_A_BUCKET_COUNT])
			continue;
		l->b[l->nr_b].le_ns = mnl_attr_get_u64(bt[KRT_A_BUCKET_LE_NS]);
		l->b[l->nr_b].count = mnl_attr_get_u64(bt[KRT_A_BUCKET_COUNT]);
		l->nr_b++;
	}
	/* top walks them in order */
	qsort(l->b, l->nr_b, sizeof(*l->b), bucket_cmp);
	return 0;
}

static int wc_parse(struct stats *s, const struct nlattr *nest)
{
	const struct nlattr *tb[KRT_A_WC_MAX + 1], *a;
	struct stats_wc *e;
	u32 n = list_len(nest, KRT_A_WC_ENTRY);

	if (!n)
		return 0;
	s->wc = calloc(n, sizeof(*s->wc));
	if (!s->wc)
		return -1;
	mnl_attr_for_each_nested(a, nest) {
		if (mnl_attr_get_type(a) != KRT_A_WC_ENTRY ||
		    mnl_attr_validate(a, MNL_TYPE_NESTED) < 0)
			continue;
		nest_parse(a, tb, &wc_policy);
		if (!tb[KRT_A_WC_STATUS] || !tb[KRT_A_WC_COUNT])
			continue;
		e = &s->wc[s->nr_wc++];
		e->status = mnl_attr_get_u32(tb[KRT_A_WC_STATUS]);
		e->count = mnl_attr_get_u64(tb[KRT_A_WC_COUNT]);
		if (tb[KRT_A_WC_NAME])
			snprintf(e->name, sizeof(e->name), "%s",
				 mnl_attr_get_str(tb[KRT_A_WC_NAME]));
	}
	return 0;
}

static void counters_parse(struct stats *s, const struct nlattr *nest)
{
	const struct nlattr *tb[KRT_A_STAT_MAX + 1];
	unsigned int i;

	nest_parse(nest, tb, &stat_policy);
	for (i = 0; i < KRT_STAT_NR; i++) {
		if (!tb[KRT_A_STAT_PAD + 1 + i])
			continue;
		s->have_ctr |= 1ULL << i;
		s->ctr[i] = mnl_attr_get_u64(tb[KRT_A_STAT_PAD + 1 + i]);
	}
}

/* what @s holds (not @s itself) */
void stats_free(struct stats *s)
{
	free(s->wc);
	free(s->rtt.b);
	free(s->svc.b);
}

/* @s zeroed; Return: 0, -1 out of memory (what was allocated stays in @s) */
static int stats_parse(struct stats *s, const struct nlattr **tb)
{
	size_t i;

	for (i = 0; i <= KRT_A_STATS_MAX; i++)
		if (tb[i])
			s->have |= 1U << i;
	snprintf(s->peer, sizeof(s->peer), "%s", attr_str(tb, KRT_A_STATS_PEER));
	s->conn = attr_u32(tb, KRT_A_STATS_CONN);
	s->inbound = attr_u8(tb, KRT_A_STATS_INBOUND);
	s->age_ms = attr_u64(tb, KRT_A_STATS_AGE_MS);
	for (i = 0; i < ARRAY_SIZE(stats_gauges); i++)
		s->gauge[stats_gauges[i].type] = attr_u32(tb, stats_gauges[i].type);
	if (tb[KRT_A_STATS_COUNTERS])
		counters_parse(s, tb[KRT_A_STATS_COUNTERS]);
	if (tb[KRT_A_STATS_WC] && wc_parse(s, tb[KRT_A_STATS_WC]))
		return -1;
	if (tb[KRT_A_STATS_LAT_RTT] && lat_parse(&s->rtt, tb[KRT_A_STATS_LAT_RTT]))
		return -1;
	if (tb[KRT_A_STATS_LAT_SVC] && lat_parse(&s->svc, tb[KRT_A_STATS_LAT_SVC]))
		return -1;
	return 0;
}

static int stats_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[KRT_A_STATS_MAX + 1];
	struct stats_set *set = data;
	struct stats *s;

	/* another command's message (KRTCTL_REPLY answers every request with one file) */
	if (genl_cmd_of(nlh) != KRT_CMD_STATS_GET || nl_parse_attrs(nlh, tb, &stats_policy) ||
	    !tb[KRT_A_STATS_PEER])
		return MNL_CB_OK;
	if (set->n == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 16;

		s = reallocarray(set->s, cap, sizeof(*s));
		if (!s)
			goto nomem;
		set->s = s;
		set->cap = cap;
	}
	s = &set->s[set->n];
	memset(s, 0, sizeof(*s));
	if (stats_parse(s, tb)) {
		stats_free(s);
		goto nomem;
	}
	set->n++;
	return MNL_CB_OK;
nomem:
	errno = ENOMEM;
	return MNL_CB_ERROR;
}

void stats_set_free(struct stats_set *set)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		stats_free(&set->s[i]);
	free(set->s);
	memset(set, 0, sizeof(*set));
}

const struct stats *stats_find(const struct stats_set *set, const char *peer)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (!STATS_HAS(&set->s[i], KRT_A_STATS_CONN) && !strcmp(set->s[i].peer, peer))
			return &set->s[i];
	return NULL;
}

static const char *stats_attr_name(unsigned int type)
{
	switch (type) {
	case KRT_A_STATS_PEER:
		return "peer";
	case KRT_A_STATS_CONN:
		return "conn";
	}
	return NULL;
}

/*
 * Fetch statistics into @set (empty or freed): a dump of every peer or of
 * @peer (@dump), or one peer's or one connection's (@conn).  Return: 0, -1
 * with errno set, -2 when the error was printed (see nl_talk()).
 */
int stats_get(struct stats_set *set, const char *peer, const u32 *conn, bool dump)
{
	const char *(*attr_name)(unsigned int type) = krtctl.attr_name;
	struct nlmsghdr *nlh;
	int ret;

	nlh = nl_msg(&krtctl, KRT_CMD_STATS_GET, dump ? NLM_F_DUMP : 0);
	if (peer)
		mnl_attr_put_strz(nlh, KRT_A_STATS_PEER, peer);
	if (conn)
		mnl_attr_put_u32(nlh, KRT_A_STATS_CONN, *conn);
	krtctl.attr_name = stats_attr_name;
	ret = nl_talk(&krtctl, nlh, stats_cb, set);
	krtctl.attr_name = attr_name;
	return ret;
}

/* nl_report() that knows a kernel without statistics. Return: the exit status. */
int stats_report(int ret, const char *what)
{
	if (ret == -1 && errno == EOPNOTSUPP) {
		fprintf(stderr, "Error: kernel krt does not support stats.\n");
		return 1;
	}
	return nl_report(ret, what);
}

/* the name: "peer" (and "conn") in JSON, "NAME:" or "NAME/INDEX:" in text */
static void pr_name(struct pr *p, const struct stats *s)
{
	bool conn = STATS_HAS(s, KRT_A_STATS_CONN);
	char buf[KRT_PEER_NAME_MAX + 16];

	if (p->w) {
		jw_str(p->w, "peer", s->peer);
		if (conn)
			jw_uint(p->w, "conn", s->conn);
		return;
	}
	if (conn)
		snprintf(buf, sizeof(buf), "%s/%u:", s->peer, s->conn);
	else
		snprintf(buf, sizeof(buf), "%s:", s->peer);
	pr_item(p, buf);
}

/* "rtt: count N min X avg X p50 X p90 X p99 X p99.9 X max X" */
static void lat_print(struct pr *p, const char *key, const struct stats_lat *l)
{
	size_t i;
	u32 j;

	pr_group(p, true, key, key, 0);
	for (i = 0; i < ARRAY_SIZE(lat_fields); i++) {
		if (!(l->have & (1U << lat_fields[i].type)))
			continue;
		if (lat_fields[i].type == KRT_A_LAT_COUNT)
			pr_u64(p, lat_fields[i].key, l->v[KRT_A_LAT_COUNT]);
		else
			pr_ns(p, lat_fields[i].key, lat_fields[i].label, l->v[lat_fields[i].type]);
	}
	/*
	 * the histogram: JSON only; none without samples, and left out when
	 * the kernel left it out (a dump message too big with it)
	 */
	if (p->w && ((l->have & (1U << KRT_A_LAT_BUCKETS)) || !l->v[KRT_A_LAT_COUNT])) {
		jw_start_arr(p->w, "buckets");
		for (j = 0; j < l->nr_b; j++) {
			jw_start_obj(p->w, NULL);
			jw_uint(p->w, "le_ns", l->b[j].le_ns);
			jw_uint(p->w, "count", l->b[j].count);
			jw_end_obj(p->w);
		}
		jw_end_arr(p->w);
	}
	pr_group_end(p, true);
}

/* the counters' kinds by their keys: client, "srv_", "err_"; a new text line each */
static int stat_kind(const char *key)
{
	if (!strncmp(key, "srv_", 4))
		return 1;
	return strncmp(key, "err_", 4) ? 0 : 2;
}

/* One peer or connection, as "stats show" prints it; @w NULL for text. */
static void stats_print(const struct stats *s, struct jw *w)
{
	struct pr p = { .w = w };
	int kind = -1;
	size_t i;
	u32 j;

	if (w)
		jw_start_obj(w, NULL);
	pr_name(&p, s);
	if (STATS_HAS(s, KRT_A_STATS_INBOUND))
		pr_flag(&p, "inbound", s->inbound, "inbound", "outbound");
	if (STATS_HAS(s, KRT_A_STATS_AGE_MS))
		pr_u64(&p, "age_ms", s->age_ms);
	if (STATS_HAS(s, KRT_A_STATS_COUNTERS)) {
		pr_group(&p, true, "counters", NULL, PR_WRAP);
		for (i = 0; i < KRT_STAT_NR; i++) {
			if (!(s->have_ctr & (1ULL << i)))
				continue;
			if (kind >= 0 && stat_kind(stat_keys[i]) != kind)
				pr_break(&p);
			kind = stat_kind(stat_keys[i]);
			pr_u64(&p, stat_keys[i], s->ctr[i]);
		}
		pr_group_end(&p, true);
	}
	pr_group(&p, false, NULL, NULL, PR_WRAP);
	for (i = 0; i < ARRAY_SIZE(stats_gauges); i++)
		if (STATS_HAS(s, stats_gauges[i].type))
			pr_u64(&p, stats_gauges[i].key, s->gauge[stats_gauges[i].type]);
	pr_group_end(&p, false);
	/* the kernel leaves statuses out that did not happen: none is an empty list */
	pr_array(&p, "wc_errors");
	for (j = 0; j < s->nr_wc; j++) {
		pr_group(&p, true, NULL, "wc_error", 0);
		pr_u64(&p, "status", s->wc[j].status);
		pr_str(&p, "name", s->wc[j].name);
		pr_u64(&p, "count", s->wc[j].count);
		pr_group_end(&p, true);
	}
	pr_array_end(&p);
	if (STATS_HAS(s, KRT_A_STATS_LAT_RTT))
		lat_print(&p, "rtt", &s->rtt);
	if (STATS_HAS(s, KRT_A_STATS_LAT_SVC))
		lat_print(&p, "svc", &s->svc);
	pr_end_line(&p);
	if (w)
		jw_end_obj(w);
}

/*
 * peer show -s: the main counters of a peer, a "stats" member or text
 * line after the peer's: an outbound peer's requests, an inbound peer's
 * served requests (krt counts each side on its own peers).
 */
void stats_summary_print(const struct stats *s, struct jw *w)
{
	const u8 *idx = s->inbound ? summary_server : summary_client;
	size_t i, n = s->inbound ? ARRAY_SIZE(summary_server) : ARRAY_SIZE(summary_client);
	const struct stats_lat *l = s->inbound ? &s->svc : &s->rtt;
	struct pr p = { .w = w };

	pr_group(&p, true, "stats", "stats", PR_WRAP);
	for (i = 0; i < n; i++)
		if (s->have_ctr & (1ULL << idx[i]))
			pr_u64(&p, stat_keys[idx[i]], s->ctr[idx[i]]);
	if (l->have & (1U << KRT_A_LAT_P99_NS)) {
		if (s->inbound)
			pr_ns(&p, "svc_p99_ns", "svc_p99", l->v[KRT_A_LAT_P99_NS]);
		else
			pr_ns(&p, "rtt_p99_ns", "rtt_p99", l->v[KRT_A_LAT_P99_NS]);
	}
	pr_group_end(&p, true);
}

/* the command line */

/* "conn NAME/INDEX" (a trailing ':' allowed, as conn show prints it) */
static int conn_name_index(const char *arg, char *name, u32 *index)
{
	const char *slash = strrchr(arg, '/');
	size_t len = slash ? (size_t)(slash - arg) : 0;
	char buf[16];

	if (!len || len >= KRT_PEER_NAME_MAX)
		return usage_error("stats show: bad peer name in", arg);
	memcpy(name, arg, len);
	name[len] = '\0';
	if (strlen(slash + 1) >= sizeof(buf))
		return usage_error("stats show: bad index", slash + 1);
	strcpy(buf, slash + 1);
	if (*buf && buf[strlen(buf) - 1] == ':')
		buf[strlen(buf) - 1] = '\0';
	return get_num(buf, "stats show: bad index", 0xffffffffUL, index);
}

static int peer_arg(const char *what, const char *name)
{
	char msg[64];

	if (!*name) {
		snprintf(msg, sizeof(msg), "%s: empty peer name", what);
		return usage_error(msg, NULL);
	}
	if (strlen(name) >= KRT_PEER_NAME_MAX)
		return usage_error("peer name is too long:", name);
	return 0;
}

/* krtctl stats show [peer NAME [conn INDEX] | conn NAME/INDEX] */
static int stats_show(int argc, char **argv)
{
	char name[KRT_PEER_NAME_MAX] = "";
	const char *peer = NULL;
	struct stats_set set = { 0 };
	bool conn_on = false;
	u32 conn = 0;
	struct jw w;
	size_t i;
	int ret;

	for (; argc > 0; argc -= 2, argv += 2) {
		bool is_peer = matches(argv[0], "peer");

		if (!is_peer && !matches(argv[0], "conn"))
			return usage_error("stats show: expected \"peer\" or \"conn\", got",
					   argv[0]);
		if (argc < 2)
			return usage_error("stats show: missing value after", argv[0]);
		if (is_peer) {
			if (peer_arg("stats show", argv[1]))
				return 2;
			peer = argv[1];
		} else if (strchr(argv[1], '/')) {
			if (conn_name_index(argv[1], name, &conn))
				return 2;
			conn_on = true;
		} else {
			if (get_num(argv[1], "stats show: bad index", 0xffffffffUL, &conn))
				return 2;
			conn_on = true;
		}
	}
	if (*name && peer && strcmp(name, peer))
		return usage_error("stats show: \"conn NAME/INDEX\" names another peer than",
				   peer);
	if (*name)
		peer = name;
	if (conn_on && !peer)
		return usage_error("stats show: \"conn INDEX\" needs \"peer NAME\"", NULL);

	ret = stats_get(&set, peer, conn_on ? &conn : NULL, !peer);
	if (!ret && krtctl.json) {
		jw_init(&w, stdout, krtctl.pretty);
		jw_start_arr(&w, NULL);
		for (i = 0; i < set.n; i++)
			stats_print(&set.s[i], &w);
		jw_end_arr(&w);
		jw_done(&w);
	} else if (!ret) {
		for (i = 0; i < set.n; i++)
			stats_print(&set.s[i], NULL);
	}
	stats_set_free(&set);
	return stats_report(ret, "stats show");
}

/* krtctl stats reset [peer NAME] */
static int stats_reset(int argc, char **argv)
{
	struct nlmsghdr *nlh;
	const char *(*attr_name)(unsigned int type) = krtctl.attr_name;
	int ret;

	if (argc > 0 && !matches(argv[0], "peer"))
		return usage_error("stats reset: expected \"peer NAME\", got", argv[0]);
	if (argc == 1)
		return usage_error("stats reset: missing value after", argv[0]);
	if (argc > 2)
		return usage_error("stats reset: unexpected argument", argv[2]);
	if (argc == 2 && peer_arg("stats reset", argv[1]))
		return 2;
	nlh = nl_msg(&krtctl, KRT_CMD_STATS_RESET, 0);
	if (argc == 2)
		mnl_attr_put_strz(nlh, KRT_A_STATS_PEER, argv[1]);
	krtctl.attr_name = stats_attr_name;
	ret = nl_talk(&krtctl, nlh, NULL, NULL);
	krtctl.attr_name = attr_name;
	return stats_report(ret, "stats reset");
}

enum { STATS_SHOW, STATS_LIST, STATS_RESET, STATS_HELP, STATS_MAX };

static const char *const stats_verbs[STATS_MAX] = {
	[STATS_SHOW] = "show", [STATS_LIST] = "list", [STATS_RESET] = "reset",
	[STATS_HELP] = "help",
};

int cmd_stats(int argc, char **argv)
{
	if (argc < 1)
		return stats_show(0, argv);
	switch (match_word(argv[0], stats_verbs, STATS_MAX, "stats")) {
	case STATS_SHOW:
	case STATS_LIST:
		return stats_show(argc - 1, argv + 1);
	case STATS_RESET:
		return stats_reset(argc - 1, argv + 1);
	case STATS_HELP:
		usage(stdout, "stats");
		return 0;
	case -2:
		return 2;
	}
	return usage_error("stats: unknown command", argv[0]);
}
