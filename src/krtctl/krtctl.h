/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krtctl: control tool for the krt RDMA transport.
 */
#ifndef KRTCTL_H
#define KRTCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>
#include <libmnl/libmnl.h>

#define KRTCTL_VERSION "0.2.0"

/* kernel-style names, as in the kernel's own tools/ */
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct krtctl {
	bool json;
	bool pretty;
	bool force;		/* batch: go on after an error */
	struct mnl_socket *nl;
	u16 family;
	u32 events_group;
	u32 seq;
	u32 portid;
	char *buf;
	/* names of the attributes of the request in flight, for errors */
	const char *(*attr_name)(unsigned int type);
};

extern struct krtctl krtctl;

/* argument helpers, iproute2 style */
bool matches(const char *arg, const char *pattern);
int usage_error(const char *msg, const char *arg);

/* nl.c */
int nl_open(struct krtctl *k);
void nl_close(struct krtctl *k);
struct nlmsghdr *nl_msg(struct krtctl *k, u8 cmd, u16 flags);
int nl_talk(struct krtctl *k, struct nlmsghdr *nlh, mnl_cb_t cb, void *data);
int nl_join_events(struct krtctl *k);
int nl_parse_attrs(const struct nlmsghdr *nlh, const struct nlattr **tb,
		   unsigned int max);
int nl_report(int ret, const char *what);
int nl_show(struct nlmsghdr *nlh, mnl_cb_t cb, const char *what);
u32 attr_u32(const struct nlattr **tb, int type);
u16 attr_u16(const struct nlattr **tb, int type);
bool attr_u8(const struct nlattr **tb, int type);
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
void jw_hex64(struct jw *w, const char *key, unsigned long long val);
void jw_done(struct jw *w);

/* objects */
int cmd_dev(int argc, char **argv);
int cmd_monitor(int argc, char **argv);
int cmd_listen(int argc, char **argv);
int cmd_peer(int argc, char **argv);
int cmd_conn(int argc, char **argv);
int cmd_ping(int argc, char **argv);
int cmd_xfer(int argc, char **argv);
void peer_print(const struct nlattr **tb, struct jw *w, const char *key);
void conn_print(const struct nlattr **tb, struct jw *w, const char *key);
void dev_print(const struct nlattr **tb, struct jw *w, const char *key);
const char *dev_state_name(u32 state);

#endif
