// SPDX-License-Identifier: GPL-2.0
/*
 * Malformed requests to the krt generic netlink family get a clear error
 * (errno and, where the kernel gives one, an extack message) and change
 * nothing.
 *
 * usage: nl_malformed DEVICE    (DEVICE: a usable, enabled krt device)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/krt.h>
#include "kselftest.h"

static struct mnl_socket *nl;
static char buf[16384];
static unsigned int seq, portid;
static int family;

struct answer {
	int error;		/* 0 or -errno */
	char msg[256];		/* extack message, "" if none */
	int miss_type;		/* missing attribute, -1 if none */
	int enabled;		/* from a DEV_GET reply, -1 if none */
};

static struct nlmsghdr *msg_start(int type, int cmd, int flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	return nlh;
}

static void parse_ack(const struct nlmsghdr *nlh, struct answer *a)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	size_t hlen = sizeof(*err);
	const struct nlattr *attr;

	a->error = err->error;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		hlen += mnl_nlmsg_get_payload_len(&err->msg);
	mnl_attr_for_each(attr, nlh, hlen) {
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG)
			snprintf(a->msg, sizeof(a->msg), "%s", mnl_attr_get_str(attr));
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MISS_TYPE)
			a->miss_type = (int)mnl_attr_get_u32(attr);
	}
}

static void parse_reply(const struct nlmsghdr *nlh, struct answer *a)
{
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(attr) == KRT_A_DEV_ENABLED)
			a->enabled = mnl_attr_get_u8(attr);
		if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID &&
		    nlh->nlmsg_type == GENL_ID_CTRL)
			family = mnl_attr_get_u16(attr);
	}
}

/* Send and read until the ack; fills @a. */
static int talk(struct nlmsghdr *nlh, struct answer *a)
{
	bool done = false;

	memset(a, 0, sizeof(*a));
	a->miss_type = -1;
	a->enabled = -1;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	while (!done) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		const struct nlmsghdr *h = (const void *)buf;
		int left = (int)n;

		if (n < 0)
			return -1;
		for (; mnl_nlmsg_ok(h, left); h = mnl_nlmsg_next(h, &left)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				parse_ack(h, a);
				done = true;
			} else if (h->nlmsg_type == NLMSG_DONE) {
				done = true;
			} else {
				parse_reply(h, a);
			}
		}
	}
	return 0;
}

static int dev_enabled(const char *dev)
{
	struct nlmsghdr *nlh = msg_start(family, KRT_CMD_DEV_GET, 0);
	struct answer a;

	mnl_attr_put_strz(nlh, KRT_A_DEV_NAME, dev);
	if (talk(nlh, &a) || a.error)
		return -1;
	return a.enabled;
}

/* expect: errno, extack message wanted, then the report */
static void expect(const char *name, struct nlmsghdr *nlh, int want_err,
		   bool want_msg, int want_miss)
{
	struct answer a;
	bool ok;

	if (talk(nlh, &a)) {
		ksft_test_result_fail("%s: netlink: %s\n", name, strerror(errno));
		return;
	}
	ok = a.error == -want_err;
	if (want_msg && !a.msg[0])
		ok = false;
	if (want_miss >= 0 && a.miss_type != want_miss)
		ok = false;
	ksft_print_msg("%s: error %d (%s) extack \"%s\" missing-attr %d\n", name,
		       a.error, strerror(-a.error), a.msg, a.miss_type);
	ksft_test_result(ok, "%s\n", name);
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : NULL;
	char longname[200];
	struct nlmsghdr *nlh;
	struct answer a;
	int one = 1, before;

	ksft_print_header();
	ksft_set_plan(11);
	if (!dev)
		ksft_exit_fail_msg("usage: nl_malformed DEVICE\n");

	nl = mnl_socket_open(NETLINK_GENERIC);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0)
		ksft_exit_fail_msg("netlink socket: %s\n", strerror(errno));
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	portid = mnl_socket_get_portid(nl);
	seq = (unsigned int)time(NULL);

	nlh = msg_start(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, KRT_GENL_NAME);
	if (talk(nlh, &a) || a.error || !family)
		ksft_exit_fail_msg("family %s not found\n", KRT_GENL_NAME);

	before = dev_enabled(dev);
	if (before != 1)
		ksft_exit_fail_msg("%s is not an enabled krt device\n", dev);

	nlh = msg_start(family, KRT_CMD_MAX + 50, 0);
	expect("unknown_command", nlh, EOPNOTSUPP, false, -1);

	nlh = msg_start(family, KRT_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KRT_A_DEV_NAME, dev);
	mnl_attr_put_u32(nlh, KRT_A_DEV_ENABLED, 0);
	expect("wrong_attribute_type", nlh, EINVAL, true, -1);

	nlh = msg_start(family, KRT_CMD_DEV_SET, 0);
	mnl_attr_put_u8(nlh, KRT_A_DEV_ENABLED, 0);
	expect("missing_attribute", nlh, EINVAL, false, KRT_A_DEV_NAME);

	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	nlh = msg_start(family, KRT_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KRT_A_DEV_NAME, longname);
	mnl_attr_put_u8(nlh, KRT_A_DEV_ENABLED, 0);
	expect("oversize_string", nlh, EINVAL, true, -1);

	nlh = msg_start(family, KRT_CMD_DEV_SET, 0);
	mnl_attr_put(nlh, KRT_A_DEV_NAME, strlen(dev), dev);	/* no NUL */
	mnl_attr_put_u8(nlh, KRT_A_DEV_ENABLED, 0);
	expect("string_not_nul_terminated", nlh, EINVAL, true, -1);

	nlh = msg_start(family, KRT_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KRT_A_DEV_NAME, dev);
	mnl_attr_put_u8(nlh, KRT_A_DEV_ENABLED, 2);
	expect("value_out_of_range", nlh, ERANGE, true, -1);

	nlh = msg_start(family, KRT_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KRT_A_DEV_NAME, dev);
	mnl_attr_put_u8(nlh, KRT_A_DEV_MAX + 20, 0);
	mnl_attr_put_u8(nlh, KRT_A_DEV_ENABLED, 0);
	expect("unknown_attribute", nlh, EINVAL, true, -1);

	nlh = msg_start(family, KRT_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KRT_A_DEV_NAME, dev);
	expect("nothing_to_change", nlh, EINVAL, true, -1);

	nlh = msg_start(family, KRT_CMD_DEV_SET, 0);
	mnl_attr_put_strz(nlh, KRT_A_DEV_NAME, "krt_no_such_dev");
	mnl_attr_put_u8(nlh, KRT_A_DEV_ENABLED, 0);
	expect("unknown_device", nlh, ENODEV, true, -1);

	nlh = msg_start(family, KRT_CMD_DEV_SET, 0);
	((struct genlmsghdr *)mnl_nlmsg_get_payload(nlh))->reserved = 1;
	mnl_attr_put_strz(nlh, KRT_A_DEV_NAME, dev);
	mnl_attr_put_u8(nlh, KRT_A_DEV_ENABLED, 0);
	expect("reserved_header_field_set", nlh, EINVAL, false, -1);

	ksft_test_result(dev_enabled(dev) == before,
			 "state_unchanged_after_bad_requests\n");

	mnl_socket_close(nl);
	ksft_finished();
}
