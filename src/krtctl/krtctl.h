/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krtctl: control tool for the krt RDMA transport.
 */
#ifndef KRTCTL_H
#define KRTCTL_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include <linux/krt.h>
#include <libmnl/libmnl.h>

#define KRTCTL_VERSION "0.2.0"

/* kernel-style names, as in the kernel's own tools/ */
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The largest request or reply message: KRT_MAX_MSG of include/krt/krt.h,
 * a kernel header krtctl cannot include (the uapi header may one day carry
 * it).  A ping sends a test header (struct krt_tmsg of src/krt/testsvc.c)
 * in front of its payload.  selftests/krtctl_cli.sh checks both against
 * the sources.
 */
#ifndef KRT_MAX_MSG
#define KRT_MAX_MSG		4048
#endif
#define KRT_TEST_HDR_LEN	12
#define KRT_PING_MAX		(KRT_MAX_MSG - KRT_TEST_HDR_LEN)

/* the largest attribute type of any krt attribute set */
#define KRT_A_ANY_MAX		63
static_assert(KRT_A_DEV_MAX <= KRT_A_ANY_MAX && KRT_A_PEER_MAX <= KRT_A_ANY_MAX &&
	      KRT_A_CONN_MAX <= KRT_A_ANY_MAX && KRT_A_TEST_MAX <= KRT_A_ANY_MAX,
	      "a krt attribute set outgrew krtctl's tables");
static_assert(KRT_A_STATS_MAX <= KRT_A_ANY_MAX && KRT_A_STAT_MAX <= KRT_A_ANY_MAX &&
	      KRT_A_LAT_MAX <= KRT_A_ANY_MAX && KRT_A_BUCKET_MAX <= KRT_A_ANY_MAX &&
	      KRT_A_WC_MAX <= KRT_A_ANY_MAX,
	      "a krt statistics attribute set outgrew krtctl's tables");
/* struct stats keeps bit masks of what the kernel sent */
static_assert(KRT_A_STATS_MAX < 32 && KRT_A_LAT_MAX < 32 && KRT_STAT_NR <= 64,
	      "a krt statistics attribute set outgrew struct stats");

struct krtctl {
	bool json;
	bool pretty;
	bool force;		/* batch: go on after an error */
	bool stats;		/* -s: peer show adds the peers' counters */
	struct mnl_socket *nl;
	u16 family;
	u32 events_group;
	u32 seq;
	u32 portid;
	char *buf;		/* answers */
	char *req;		/* the request being built */
	const char *replay;	/* KRTCTL_REPLY: answers from this file */
	bool replayed;		/* ... read for the request in flight */
	/* names of the attributes of the request in flight, for errors */
	const char *(*attr_name)(unsigned int type);
};

extern struct krtctl krtctl;

/* argument helpers, iproute2 style */
bool matches(const char *arg, const char *pattern);
int match_word(const char *arg, const char *const *words, size_t n, const char *what);
int usage_error(const char *msg, const char *arg);
void usage(FILE *f, const char *obj);
int get_num(const char *s, const char *what, unsigned long max, u32 *val);

/*
 * What krtctl reads of an attribute set: per type, the libmnl data type
 * (MNL_TYPE_UNSPEC: not read, skipped) and for strings and binaries the
 * longest payload.  An attribute that does not fit is left out of the
 * table and reported once per type on standard error.
 */
struct nl_attr_pol {
	u8 type;		/* enum mnl_attr_data_type */
	u16 len;		/* strings, binaries: at most this long */
};

struct nl_policy {
	const char *obj;	/* "peer": for the warning */
	unsigned int max;	/* highest type in @pol, <= KRT_A_ANY_MAX */
	const struct nl_attr_pol *pol;
	u64 warned;		/* types already reported */
};

/* a numeric attribute printed as "key value" in text and JSON */
struct nl_field {
	u16 type;
	const char *key;
};

struct jw;

/* nl.c */
int nl_init(struct krtctl *k);
int nl_ready(struct krtctl *k);
void nl_close(struct krtctl *k);
ssize_t nl_recv(struct krtctl *k);
struct nlmsghdr *nl_msg(struct krtctl *k, u8 cmd, u16 flags);
int nl_talk(struct krtctl *k, struct nlmsghdr *nlh, mnl_cb_t cb, void *data);
int nl_join_events(struct krtctl *k);
int nl_family_resolve(struct krtctl *k, const char *name, const char *module, u16 *id);
int nl_parse_attrs(const struct nlmsghdr *nlh, const struct nlattr **tb,
		   struct nl_policy *p);
int nl_report(int ret, const char *what);
int nl_show(struct nlmsghdr *nlh, mnl_cb_t cb, const char *what);
int nl_show_check(struct nlmsghdr *nlh, mnl_cb_t cb, const char *what, int (*check)(void));
int nl_dump(u8 cmd, mnl_cb_t cb, const char *what, int filter_type, const char *filter);
u32 attr_u32(const struct nlattr **tb, int type);
u16 attr_u16(const struct nlattr **tb, int type);
bool attr_u8(const struct nlattr **tb, int type);
u64 attr_u64(const struct nlattr **tb, int type);
u64 attr_uint(const struct nlattr **tb, int type);
const char *attr_str(const struct nlattr **tb, int type);

/* json.c: a small streaming JSON writer */
struct jw {
	FILE *f;
	bool pretty;
	int depth;
	bool first[32];
};

void jw_init(struct jw *w, FILE *f, bool pretty);
void jw_start_obj(struct jw *w, const char *key);
void jw_end_obj(struct jw *w);
void jw_start_arr(struct jw *w, const char *key);
void jw_end_arr(struct jw *w);
void jw_str(struct jw *w, const char *key, const char *val);
void jw_uint(struct jw *w, const char *key, unsigned long long val);
void jw_bool(struct jw *w, const char *key, bool val);
void jw_float(struct jw *w, const char *key, double val);
void jw_hex64(struct jw *w, const char *key, unsigned long long val);
void jw_done(struct jw *w);

/*
 * print.c: text lines of "key value" pairs, or JSON members, from one call
 * per field.  A group is a JSON object (or nothing) and a text line of its
 * own, which wraps before column @wrap (0: never) at @indent, further in
 * after a label.
 */
#define PR_WRAP		80
#define PR_STR_MAX	256

struct pr {
	struct jw *w;		/* JSON; NULL for text */
	int col;		/* text: the line so far; 0 when none is open */
	int indent;		/* text: where a line of the group starts */
	int cont;		/* text: where its continuation lines start */
	int wrap;
};

void pr_item(struct pr *p, const char *item);
void pr_u64(struct pr *p, const char *key, u64 v);
void pr_float(struct pr *p, const char *key, double v);
void pr_ns(struct pr *p, const char *key, const char *label, u64 ns);
void pr_str(struct pr *p, const char *key, const char *v);
void pr_word(struct pr *p, const char *key, const char *v);
void pr_hex64(struct pr *p, const char *key, u64 v);
void pr_bool(struct pr *p, const char *key, bool v);
void pr_flag(struct pr *p, const char *key, bool v, const char *on, const char *off);
void pr_fields(struct pr *p, const struct nlattr **tb, const struct nl_field *f, size_t n);
void pr_end_line(struct pr *p);
void pr_break(struct pr *p);
void pr_group(struct pr *p, bool obj, const char *key, const char *label, int wrap);
void pr_group_end(struct pr *p, bool obj);
void pr_obj(struct pr *p, const char *key, const char *name_key, const char *name);
void pr_obj_end(struct pr *p);
void pr_array(struct pr *p, const char *key);
void pr_array_end(struct pr *p);

/*
 * stats.c: what KRT_CMD_STATS_GET says of a peer or a connection, copied
 * out of the answer (its buffer is reused).  Absent attributes (an older
 * kernel) are 0 and have no bit in the masks.
 */
#define STATS_WC_NAME_MAX	64

/* counter i of <linux/krt_stats.h> by its suffix: stats.ctr[STAT_IDX(RESENT)] */
#define STAT_IDX(n)		(KRT_A_STAT_##n - KRT_A_STAT_PAD - 1)

struct stats_bucket {
	u64 le_ns;
	u64 count;
};

/* a latency histogram: KRT_A_STATS_LAT_RTT or KRT_A_STATS_LAT_SVC */
struct stats_lat {
	u32 have;			/* bit per KRT_A_LAT_* attribute sent */
	u64 v[KRT_A_LAT_MAX + 1];	/* the u64 attributes, by type */
	struct stats_bucket *b;		/* the non-empty buckets, by le_ns */
	u32 nr_b;
};

struct stats_wc {
	u32 status;			/* enum ib_wc_status */
	u64 count;
	char name[STATS_WC_NAME_MAX];
};

struct stats {
	char peer[KRT_PEER_NAME_MAX];
	u32 conn;			/* with KRT_A_STATS_CONN in @have */
	u32 have;			/* bit per KRT_A_STATS_* attribute sent */
	bool inbound;
	u64 age_ms;
	u64 have_ctr;			/* bit i: counter i sent */
	u64 ctr[KRT_STAT_NR];		/* counter i: KRT_A_STAT_PAD + 1 + i */
	u32 gauge[KRT_A_STATS_MAX + 1];	/* the u32 attributes, by type */
	struct stats_wc *wc;		/* failed completions by status */
	u32 nr_wc;
	struct stats_lat rtt, svc;
};

#define STATS_HAS(s, type)	(((s)->have >> (type)) & 1)

/* the answers of one request, in the kernel's order */
struct stats_set {
	struct stats *s;
	size_t n, cap;
};

int stats_get(struct stats_set *set, const char *peer, const u32 *conn, bool dump);
void stats_free(struct stats *s);
void stats_set_free(struct stats_set *set);
const struct stats *stats_find(const struct stats_set *set, const char *peer);
void stats_summary_print(const struct stats *s, struct jw *w);
int stats_report(int ret, const char *what);
int genl_cmd_of(const struct nlmsghdr *nlh);
const char *fmt_ns(char *buf, size_t len, u64 ns);

/* objects */
int cmd_dev(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_listen(int argc, char **argv);
int cmd_peer(int argc, char **argv);
int cmd_conn(int argc, char **argv);
int cmd_ping(int argc, char **argv);
int cmd_xfer(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int get_size(const char *s, u32 *val);
int cmd_save(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_top(int argc, char **argv);
void peer_print(const struct nlattr **tb, struct jw *w, const char *key);
void conn_print(const struct nlattr **tb, struct jw *w, const char *key);
void dev_print(const struct nlattr **tb, struct jw *w, const char *key);
const char *name_of(const char *const *tbl, size_t n, u32 v);
const char *a_addr(const struct nlattr **tb, int type, char *buf, size_t len);
const char *dev_state_name(u32 state);
extern struct nl_policy dev_policy, peer_policy, conn_policy, listen_policy;

/* save: the batch line of one object, if it is worth one; Return: 0, -1 if it cannot be written */
int dev_save(const struct nlattr **tb, FILE *f, bool autoenable);
int listen_save(const struct nlattr **tb, FILE *f);
int peer_save(const struct nlattr **tb, FILE *f);
bool batch_word_ok(const char *s);

#endif
