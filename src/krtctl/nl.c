// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: generic netlink plumbing over libmnl: family lookup, requests,
 * acks with extended error messages (printed as "Error: <msg>.").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/krt.h>
#include "krtctl.h"

#define NL_BUF_SIZE (MNL_SOCKET_BUFFER_SIZE * 4)

struct family_info {
	u16 id;
	u32 events;
};

static int parse_mcgrp(const struct nlattr *nest, struct family_info *fi)
{
	const struct nlattr *grp, *a;

	mnl_attr_for_each_nested(grp, nest) {
		const char *name = NULL;
		u32 id = 0;

		mnl_attr_for_each_nested(a, grp) {
			if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_NAME)
				name = mnl_attr_get_str(a);
			else if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_ID)
				id = mnl_attr_get_u32(a);
		}
		if (name && !strcmp(name, KRT_MCGRP_EVENTS))
			fi->events = id;
	}
	return 0;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct family_info *fi = data;
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case CTRL_ATTR_FAMILY_ID:
			fi->id = mnl_attr_get_u16(a);
			break;
		case CTRL_ATTR_MCAST_GROUPS:
			parse_mcgrp(a, fi);
			break;
		}
	}
	return MNL_CB_OK;
}

int nl_parse_attrs(const struct nlmsghdr *nlh, const struct nlattr **tb,
		   unsigned int max)
{
	const struct nlattr *a;

	memset(tb, 0, sizeof(*tb) * (max + 1));
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		unsigned int type = mnl_attr_get_type(a);

		if (type <= max)
			tb[type] = a;
	}
	return 0;
}

/* Print the kernel's extended ack, iproute2 style. Return: 1 if printed. */
static int print_extack(const struct nlmsghdr *nlh)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	const char *msg = NULL;
	int miss = -1;
	size_t hlen = sizeof(*err);

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return 0;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		hlen += mnl_nlmsg_get_payload_len(&err->msg);
	mnl_attr_for_each(a, nlh, hlen) {
		switch (mnl_attr_get_type(a)) {
		case NLMSGERR_ATTR_MSG:
			msg = mnl_attr_get_str(a);
			break;
		case NLMSGERR_ATTR_MISS_TYPE:
			miss = (int)mnl_attr_get_u32(a);
			break;
		}
	}
	if (!msg && miss < 0)
		return 0;
	if (msg)
		fprintf(stderr, "Error: %s", msg);
	else
		fprintf(stderr, "Error: missing required attribute");
	if (miss >= 0 && krtctl.attr_name && krtctl.attr_name(miss))
		fprintf(stderr, " \"%s\"", krtctl.attr_name(miss));
	else if (miss >= 0)
		fprintf(stderr, " %d", miss);
	fprintf(stderr, ".\n");
	return 1;
}

static int error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	int *printed = data;

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (err->error == 0)
		return MNL_CB_STOP;
	if (printed)
		*printed = print_extack(nlh);
	errno = -err->error;
	return MNL_CB_ERROR;
}

/*
 * Test hook: with KRTCTL_FAIL_NTH=N set, make the N-th fault-injection
 * point (failslab) of the request's own system call fail, through
 * /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION kernels only).
 * fail_nth_done() tells whether the request got that far: when it did
 * not, it disarms the hook and says "fail-nth N not reached" on stderr,
 * which is how a sweep knows it has passed every allocation.
 */
static int fail_nth_fd = -1;

static void fail_nth_arm(void)
{
	const char *n = getenv("KRTCTL_FAIL_NTH");

	if (!n || !*n)
		return;
	/* opened before arming: the open's own allocations do not count */
	fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (fail_nth_fd < 0 || pwrite(fail_nth_fd, n, strlen(n), 0) < 0)
		fprintf(stderr, "krtctl: KRTCTL_FAIL_NTH: %s\n", strerror(errno));
}

static void fail_nth_done(void)
{
	int saved = errno;
	char left[16] = "";

	if (fail_nth_fd < 0)
		return;
	/* a count left over means the request made fewer allocations */
	if (pread(fail_nth_fd, left, sizeof(left) - 1, 0) > 0 && atoi(left) > 0) {
		if (pwrite(fail_nth_fd, "0", 1, 0) < 0)
			fprintf(stderr, "krtctl: KRTCTL_FAIL_NTH: %s\n", strerror(errno));
		fprintf(stderr, "krtctl: fail-nth %s not reached\n",
			getenv("KRTCTL_FAIL_NTH"));
	}
	close(fail_nth_fd);
	fail_nth_fd = -1;
	errno = saved;
}

static int nl_answers(struct krtctl *k, u32 seq, mnl_cb_t cb, void *data);

struct nlmsghdr *nl_msg(struct krtctl *k, u8 cmd, u16 flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(k->buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = k->family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++k->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = KRT_GENL_VERSION;
	return nlh;
}

/*
 * Send @nlh and read answers until the ack (or the end of a dump), handing
 * each data message to @cb.  Return: 0, or -1 with errno set and the error
 * already printed when the kernel gave a message.
 */
int nl_talk(struct krtctl *k, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	u32 seq = nlh->nlmsg_seq;
	int ret;

	if (nlh->nlmsg_type == k->family)
		fail_nth_arm();
	if (mnl_socket_sendto(k->nl, nlh, nlh->nlmsg_len) < 0) {
		fail_nth_done();
		return -1;
	}
	ret = nl_answers(k, seq, cb, data);
	fail_nth_done();
	return ret;
}

/* read the answers to request @seq until its ack or the end of a dump */
static int nl_answers(struct krtctl *k, u32 seq, mnl_cb_t cb, void *data)
{
	int printed = 0, ret;
	ssize_t n;

	do {
		n = mnl_socket_recvfrom(k->nl, k->buf, NL_BUF_SIZE);
		if (n < 0)
			return -1;
		ret = mnl_cb_run2(k->buf, n, seq, k->portid, cb, data,
				  NULL, 0);
		if (ret == MNL_CB_ERROR) {
			/* mnl handles NLMSG_ERROR itself; redo it for extack */
			const struct nlmsghdr *h = (const struct nlmsghdr *)k->buf;
			int left = (int)n;

			while (mnl_nlmsg_ok(h, left)) {
				if (h->nlmsg_type == NLMSG_ERROR) {
					error_cb(h, &printed);
					break;
				}
				h = mnl_nlmsg_next(h, &left);
			}
			return printed ? -2 : -1;
		}
	} while (ret > 0);
	return 0;
}

int nl_open(struct krtctl *k)
{
	struct family_info fi = { 0 };
	struct nlmsghdr *nlh;
	struct genlmsghdr *g;
	int one = 1;

	k->buf = malloc(NL_BUF_SIZE);
	if (!k->buf)
		return -1;
	k->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!k->nl)
		return -1;
	mnl_socket_setsockopt(k->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(k->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	if (mnl_socket_bind(k->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -1;
	k->portid = mnl_socket_get_portid(k->nl);
	k->seq = (u32)time(NULL);

	nlh = mnl_nlmsg_put_header(k->buf);
	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++k->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, KRT_GENL_NAME);
	if (nl_talk(k, nlh, family_cb, &fi) < 0 || !fi.id) {
		if (errno == ENOENT || !fi.id) {
			fprintf(stderr,
				"Error: krt is not loaded (no generic netlink family \"%s\").\n",
				KRT_GENL_NAME);
			errno = ENOENT;
			return -2;
		}
		return -1;
	}
	k->family = fi.id;
	k->events_group = fi.events;
	return 0;
}

int nl_join_events(struct krtctl *k)
{
	int grp = (int)k->events_group;

	if (!grp) {
		fprintf(stderr, "Error: krt has no \"%s\" multicast group.\n",
			KRT_MCGRP_EVENTS);
		return -2;
	}
	return mnl_socket_setsockopt(k->nl, NETLINK_ADD_MEMBERSHIP, &grp,
				     sizeof(grp));
}

void nl_close(struct krtctl *k)
{
	if (k->nl)
		mnl_socket_close(k->nl);
	k->nl = NULL;
	free(k->buf);
	k->buf = NULL;
}

u32 attr_u32(const struct nlattr **tb, int type)
{
	return tb[type] ? mnl_attr_get_u32(tb[type]) : 0;
}

u16 attr_u16(const struct nlattr **tb, int type)
{
	return tb[type] ? mnl_attr_get_u16(tb[type]) : 0;
}

bool attr_u8(const struct nlattr **tb, int type)
{
	return tb[type] ? mnl_attr_get_u8(tb[type]) : false;
}

const char *attr_str(const struct nlattr **tb, int type)
{
	return tb[type] ? mnl_attr_get_str(tb[type]) : "";
}

/* Report a failed request that the kernel did not explain. Return: exit status. */
int nl_report(int ret, const char *what)
{
	if (ret == -1)
		fprintf(stderr, "Error: %s: %s.\n", what, strerror(errno));
	return ret ? 1 : 0;
}

/*
 * Send a get or dump request and print every answer with @cb, inside one
 * JSON array with -j.  Return: the exit status.
 */
int nl_show(struct nlmsghdr *nlh, mnl_cb_t cb, const char *what)
{
	struct jw w;
	int ret;

	if (krtctl.json) {
		jw_init(&w, stdout, krtctl.pretty);
		jw_start_arr(&w, NULL);
	}
	ret = nl_talk(&krtctl, nlh, cb, krtctl.json ? &w : NULL);
	if (krtctl.json) {
		jw_end_arr(&w);
		jw_done(&w);
	}
	return nl_report(ret, what);
}
