// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: generic netlink plumbing over libmnl: family lookup, requests,
 * acks with extended error messages (printed as "Error: <msg>.").
 */
#define _GNU_SOURCE		/* memfd_create() */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/krt.h>
#include "krtctl.h"

#define NL_BUF_SIZE (MNL_SOCKET_BUFFER_SIZE * 4)
#define NL_REQ_SIZE MNL_SOCKET_BUFFER_SIZE

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
			if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_NAME &&
			    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
				name = mnl_attr_get_str(a);
			else if (mnl_attr_get_type(a) == CTRL_ATTR_MCAST_GRP_ID &&
				 mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
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

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(struct genlmsghdr))
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		switch (mnl_attr_get_type(a)) {
		case CTRL_ATTR_FAMILY_ID:
			if (mnl_attr_validate(a, MNL_TYPE_U16) >= 0)
				fi->id = mnl_attr_get_u16(a);
			break;
		case CTRL_ATTR_MCAST_GROUPS:
			if (mnl_attr_validate(a, MNL_TYPE_NESTED) >= 0)
				parse_mcgrp(a, fi);
			break;
		}
	}
	return MNL_CB_OK;
}

/* Report an attribute that does not fit its policy, once per type. */
static void attr_warn(struct nl_policy *p, const struct nlattr *a)
{
	unsigned int type = mnl_attr_get_type(a);

	if (p->warned & (1ULL << type))
		return;
	p->warned |= 1ULL << type;
	fprintf(stderr, "krtctl: ignoring a malformed %s attribute (type %u, %u bytes)\n",
		p->obj, type, (unsigned int)mnl_attr_get_payload_len(a));
}

static bool attr_fits(const struct nlattr *a, const struct nl_attr_pol *pol)
{
	if (mnl_attr_validate(a, (enum mnl_attr_data_type)pol->type) < 0)
		return false;
	return !pol->len || mnl_attr_get_payload_len(a) <= pol->len;
}

/*
 * Fill @tb with the attributes of a krt message that @p knows and that fit
 * their type (iproute2's devlink does the same): unknown types (a newer
 * kernel) are skipped silently, malformed ones with a warning, so that no
 * getter reads past an attribute.  Return: 0, -1 for a message too short.
 */
int nl_parse_attrs(const struct nlmsghdr *nlh, const struct nlattr **tb,
		   struct nl_policy *p)
{
	const struct nlattr *a;

	memset(tb, 0, sizeof(*tb) * (p->max + 1));
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(struct genlmsghdr))
		return -1;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		unsigned int type = mnl_attr_get_type(a);

		if (mnl_attr_type_valid(a, (u16)p->max) < 0 ||
		    p->pol[type].type == MNL_TYPE_UNSPEC)
			continue;
		if (attr_fits(a, &p->pol[type]))
			tb[type] = a;
		else
			attr_warn(p, a);
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
	if (hlen > mnl_nlmsg_get_payload_len(nlh))
		return 0;
	mnl_attr_for_each(a, nlh, hlen) {
		switch (mnl_attr_get_type(a)) {
		case NLMSGERR_ATTR_MSG:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
				msg = mnl_attr_get_str(a);
			break;
		case NLMSGERR_ATTR_MISS_TYPE:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				miss = (int)(mnl_attr_get_u32(a) & 0xffff);
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

/*
 * Test hook: with KRTCTL_REPLY=FILE set, krtctl sends nothing (it does not
 * even open a socket) and reads FILE, raw netlink messages as the kernel
 * would send them, as the answer to each request, and as the events of
 * "monitor".  Tests of reply parsing and output use it.
 */
static ssize_t replay_read(struct krtctl *k)
{
	ssize_t n;
	FILE *f;

	if (k->replayed)
		return 0;
	k->replayed = true;
	f = fopen(k->replay, "r");
	if (!f)
		return -1;
	n = (ssize_t)fread(k->buf, 1, NL_BUF_SIZE, f);
	if (ferror(f))
		n = -1;
	fclose(f);
	return n;
}

/*
 * Every message of a datagram within it: libmnl 1.0.4's mnl_nlmsg_ok()
 * takes a length over INT_MAX for a small one and walks off the buffer.
 */
static bool msgs_fit(const char *buf, ssize_t n)
{
	const struct nlmsghdr *h;

	while (n >= (ssize_t)sizeof(*h)) {
		h = (const struct nlmsghdr *)buf;
		if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > (size_t)n)
			return false;
		n -= (ssize_t)NLMSG_ALIGN(h->nlmsg_len);
		buf += NLMSG_ALIGN(h->nlmsg_len);
	}
	return true;
}

/*
 * Receive one datagram of answers or events into k->buf; 0 at the end (of
 * a KRTCTL_REPLY file), -1 with errno set (EBADMSG: malformed).
 */
ssize_t nl_recv(struct krtctl *k)
{
	ssize_t n;

	if (k->replay)
		n = replay_read(k);
	else
		n = mnl_socket_recvfrom(k->nl, k->buf, NL_BUF_SIZE);
	if (n > 0 && !msgs_fit(k->buf, n)) {
		errno = EBADMSG;
		return -1;
	}
	return n;
}

struct nlmsghdr *nl_msg(struct krtctl *k, u8 cmd, u16 flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(k->req);
	struct genlmsghdr *g;

	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++k->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = KRT_GENL_VERSION;
	return nlh;
}

/* After MNL_CB_ERROR: print the error message's extack. Return: 1 if printed. */
static int answers_error(struct krtctl *k, ssize_t n)
{
	/* mnl handles NLMSG_ERROR itself; redo it for extack */
	const struct nlmsghdr *h = (const struct nlmsghdr *)k->buf;
	int left = (int)n, printed = 0, saved = errno;

	while (mnl_nlmsg_ok(h, left)) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			error_cb(h, &printed);
			return printed;
		}
		h = mnl_nlmsg_next(h, &left);
	}
	errno = saved;
	return 0;
}

/* read the answers to request @seq until its ack or the end of a dump */
static int nl_answers(struct krtctl *k, u32 seq, mnl_cb_t cb, void *data)
{
	ssize_t n;
	int ret;

	do {
		n = nl_recv(k);
		if (n <= 0)
			return n < 0 ? -1 : 0;
		ret = mnl_cb_run2(k->buf, (size_t)n, seq, k->portid, cb, data,
				  NULL, 0);
		if (ret == MNL_CB_ERROR)
			return answers_error(k, n) ? -2 : -1;
	} while (ret > 0);
	return 0;
}

/* The datagrams of one dump, kept until it is known to be consistent. */
struct dump_part {
	struct dump_part *next;
	ssize_t len;
	char buf[];
};

static void dump_free(struct dump_part *p)
{
	while (p) {
		struct dump_part *next = p->next;

		free(p);
		p = next;
	}
}

/*
 * How many times a dump that krt flagged NLM_F_DUMP_INTR (its lists
 * changed while it ran) is repeated before giving up: KRTCTL_DUMP_TRIES,
 * 1 to 100, default 5.
 */
static int dump_tries(void)
{
	const char *v = getenv("KRTCTL_DUMP_TRIES");
	char *end;
	long n;

	if (!v || !*v)
		return 5;
	n = strtol(v, &end, 10);
	return *end || n < 1 || n > 100 ? 5 : (int)n;
}

/*
 * Receive the answers to dump @seq until its end or an error, keeping each
 * datagram.  Return: 0 with *@intr set if a message carried
 * NLM_F_DUMP_INTR, or -1 with errno set.
 */
static int dump_collect(struct krtctl *k, u32 seq, struct dump_part **head, bool *intr)
{
	struct dump_part **tail = head;
	bool end = false;

	*intr = false;
	while (!end) {
		const struct nlmsghdr *h;
		struct dump_part *p;
		ssize_t n = nl_recv(k);
		int left;

		if (n <= 0) {
			if (!n)
				errno = EPROTO;	/* the socket ended mid-dump */
			return -1;
		}
		/* a stale answer (another request's): not part of this dump */
		if (n >= (ssize_t)sizeof(*h) &&
		    ((const struct nlmsghdr *)k->buf)->nlmsg_seq != seq)
			continue;
		p = malloc(sizeof(*p) + (size_t)n);
		if (!p)
			return -1;
		p->next = NULL;
		p->len = n;
		memcpy(p->buf, k->buf, (size_t)n);
		*tail = p;
		tail = &p->next;
		left = (int)n;
		for (h = (const struct nlmsghdr *)k->buf; mnl_nlmsg_ok(h, left);
		     h = mnl_nlmsg_next(h, &left)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_flags & NLM_F_DUMP_INTR)
				*intr = true;
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				end = true;
		}
	}
	return 0;
}

/*
 * The error a dump ended with: the kernel puts a dump callback's error in
 * NLMSG_DONE's payload (and its extack after it), which libmnl's default
 * NLMSG_DONE handling ignores.  Return: 0, -1 with errno set, or -2 when
 * the kernel's message was printed.
 */
static int dump_done_error(const struct dump_part *p, u32 seq)
{
	const struct nlmsghdr *h;
	int left = (int)p->len, err;

	for (h = (const struct nlmsghdr *)p->buf; mnl_nlmsg_ok(h, left);
	     h = mnl_nlmsg_next(h, &left)) {
		const struct nlattr *a;
		const char *msg = NULL;

		if (h->nlmsg_seq != seq || h->nlmsg_type != NLMSG_DONE ||
		    mnl_nlmsg_get_payload_len(h) < sizeof(err))
			continue;
		memcpy(&err, mnl_nlmsg_get_payload(h), sizeof(err));
		if (err >= 0)
			return 0;
		if (h->nlmsg_flags & NLM_F_ACK_TLVS) {
			mnl_attr_for_each(a, h, sizeof(err))
				if (mnl_attr_get_type(a) == NLMSGERR_ATTR_MSG &&
				    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
					msg = mnl_attr_get_str(a);
		}
		errno = -err;
		if (!msg)
			return -1;
		fprintf(stderr, "Error: %s.\n", msg);
		return -2;
	}
	return 0;
}

/*
 * A dump whose answers are printed only once one pass ran without krt's
 * lists changing under it: a pass flagged NLM_F_DUMP_INTR may have skipped
 * or repeated entries, so it is dropped and the dump sent again.
 */
static int nl_dump_xfer(struct krtctl *k, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	int tries = dump_tries(), try, ret = 0;
	struct dump_part *parts = NULL, *p;
	bool intr = true;

	for (try = 1; intr && try <= tries; try++) {
		dump_free(parts);
		parts = NULL;
		if (try > 1)
			nlh->nlmsg_seq = ++k->seq;
		if (mnl_socket_sendto(k->nl, nlh, nlh->nlmsg_len) < 0 ||
		    dump_collect(k, nlh->nlmsg_seq, &parts, &intr)) {
			dump_free(parts);
			return -1;
		}
	}
	if (intr) {
		dump_free(parts);
		fprintf(stderr, "Error: krt's lists changed during each of %d dumps %s.\n",
			tries, "(entries may be missing or repeated); run it again");
		return -2;
	}
	for (p = parts; p; p = p->next) {
		memcpy(k->buf, p->buf, (size_t)p->len);
		ret = mnl_cb_run2(k->buf, (size_t)p->len, nlh->nlmsg_seq, k->portid,
				  cb, data, NULL, 0);
		if (ret == MNL_CB_ERROR) {
			ret = answers_error(k, p->len) ? -2 : -1;
			break;
		}
		ret = 0;
		if (!p->next)
			ret = dump_done_error(p, nlh->nlmsg_seq);
	}
	dump_free(parts);
	return ret;
}

static int nl_xfer(struct krtctl *k, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	if (!k->replay && (nlh->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP)
		return nl_dump_xfer(k, nlh, cb, data);
	if (k->replay) {
		k->replayed = false;
		return nl_answers(k, nlh->nlmsg_seq, cb, data);
	}
	if (mnl_socket_sendto(k->nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	return nl_answers(k, nlh->nlmsg_seq, cb, data);
}

/*
 * Send @nlh, a request of nl_msg(), and read answers until the ack (or the
 * end of a dump), handing each data message to @cb.  Opens the socket on
 * first use.  Return: 0, or -1 with errno set, or -2 when the error was
 * printed already (the kernel gave a message).
 */
int nl_talk(struct krtctl *k, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	int ret = nl_ready(k);

	if (ret)
		return ret;
	if (!nlh->nlmsg_type)	/* krt's, unless nl_family_resolve() gave another */
		nlh->nlmsg_type = k->family;
	if (!k->replay)
		fail_nth_arm();
	ret = nl_xfer(k, nlh, cb, data);
	fail_nth_done();
	return ret;
}

int nl_init(struct krtctl *k)
{
	const char *replay = getenv("KRTCTL_REPLY");

	k->replay = replay && *replay ? replay : NULL;
	k->seq = (u32)time(NULL);
	k->buf = malloc(NL_BUF_SIZE);
	k->req = malloc(NL_REQ_SIZE);
	return k->buf && k->req ? 0 : -1;
}

/*
 * Look generic netlink family @name up on the open socket.  Return: 0,
 * -1 with errno set, -2 when the error was printed (@module, the module
 * that registers the family, is not loaded).
 */
static int nl_resolve(struct krtctl *k, const char *name, const char *module,
		      struct family_info *fi)
{
	u32 buf[64];	/* k->req holds the request waiting for the family */
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++k->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
	if (nl_xfer(k, nlh, family_cb, fi) < 0 || !fi->id) {
		if (errno == ENOENT || !fi->id) {
			fprintf(stderr,
				"Error: %s is not loaded (no generic netlink family \"%s\").\n",
				module, name);
			errno = ENOENT;
			return -2;
		}
		return -1;
	}
	return 0;
}

static int nl_family(struct krtctl *k)
{
	struct family_info fi = { 0 };
	int ret = nl_resolve(k, KRT_GENL_NAME, "krt", &fi);

	if (ret)
		return ret;
	k->family = fi.id;
	k->events_group = fi.events;
	return 0;
}

/*
 * The id of another generic netlink family than krt's (krt_bench's), for
 * the nlmsg_type of a request of nl_msg(); nl_talk() sends a request with
 * a type set as it is.  krt must be loaded too.  With KRTCTL_REPLY: 0.
 * Return: 0, -1 with errno set, -2 when the error was printed.
 */
int nl_family_resolve(struct krtctl *k, const char *name, const char *module, u16 *id)
{
	struct family_info fi = { 0 };
	int ret = nl_ready(k);

	*id = 0;
	if (ret || k->replay)
		return ret;
	ret = nl_resolve(k, name, module, &fi);
	if (!ret)
		*id = fi.id;
	return ret;
}

static int nl_open(struct krtctl *k)
{
	int one = 1;

	k->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!k->nl)
		return -1;
	mnl_socket_setsockopt(k->nl, NETLINK_CAP_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(k->nl, NETLINK_EXT_ACK, &one, sizeof(one));
	if (mnl_socket_bind(k->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -1;
	k->portid = mnl_socket_get_portid(k->nl);
	return nl_family(k);
}

/*
 * Open the socket and look the family up, once (commands parse their
 * arguments first, so usage errors need no kernel).  Return: 0, -1 with
 * errno set, -2 when the error was printed.
 */
int nl_ready(struct krtctl *k)
{
	int ret, saved;

	if (k->replay || k->family)
		return 0;
	ret = nl_open(k);
	if (ret) {
		saved = errno;
		if (k->nl)
			mnl_socket_close(k->nl);
		k->nl = NULL;
		errno = saved;
	}
	return ret;
}

int nl_join_events(struct krtctl *k)
{
	int grp, ret = nl_ready(k);

	if (ret || k->replay)
		return ret;
	grp = (int)k->events_group;
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
	free(k->req);
	k->req = NULL;
}

/*
 * Getters of attributes nl_parse_attrs() checked against their policy: an
 * attribute is in @tb only with the size its type says.
 */
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

u64 attr_u64(const struct nlattr **tb, int type)
{
	return tb[type] ? mnl_attr_get_u64(tb[type]) : 0;
}

/* any unsigned integer attribute, by its (checked) size */
u64 attr_uint(const struct nlattr **tb, int type)
{
	if (!tb[type])
		return 0;
	switch (mnl_attr_get_payload_len(tb[type])) {
	case 1:
		return mnl_attr_get_u8(tb[type]);
	case 2:
		return mnl_attr_get_u16(tb[type]);
	case 4:
		return mnl_attr_get_u32(tb[type]);
	case 8:
		return mnl_attr_get_u64(tb[type]);
	}
	return 0;
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
 * Text output of a show goes to a memory file while the answers are
 * printed: standard output is pointed at it (the printers use printf()).
 * Return: the saved standard output, or -1 with errno set.
 */
static int text_capture(int *mfd)
{
	int saved;

	fflush(stdout);
	*mfd = memfd_create("krtctl-show", MFD_CLOEXEC);
	if (*mfd < 0)
		return -1;
	/* standard output closed: the memfd took its number */
	if (*mfd <= STDERR_FILENO) {
		int fd = fcntl(*mfd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);

		close(*mfd);
		*mfd = fd;
		if (fd < 0)
			return -1;
	}
	saved = dup(STDOUT_FILENO);
	if (saved < 0 || dup2(*mfd, STDOUT_FILENO) < 0) {
		int e = errno;

		if (saved >= 0)
			close(saved);
		close(*mfd);
		errno = e;
		return -1;
	}
	return saved;
}

/*
 * Restore standard output and, if @print, copy what was captured to it.
 * Return: 0, or -1 with errno set when the output could not be kept or
 * copied.
 */
static int text_release(int saved, int mfd, bool print)
{
	int ret = fflush(stdout) ? -1 : 0, e = errno;
	char buf[8192];
	ssize_t n;

	if (dup2(saved, STDOUT_FILENO) < 0 && !ret) {
		ret = -1;
		e = errno;
	}
	close(saved);
	if (print && !ret && lseek(mfd, 0, SEEK_SET) == 0) {
		while ((n = read(mfd, buf, sizeof(buf))) > 0)
			if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
				break;
		if (n || fflush(stdout)) {
			ret = -1;
			e = errno ? errno : EIO;
		}
	}
	close(mfd);
	errno = e;
	return ret;
}

/*
 * Send a get or dump request and print every answer with @cb, inside one
 * JSON array with -j.  The output is printed only if the request succeeded
 * and @check (if any) found what was asked for (it says why not and
 * returns the exit status): a script must not read "[]" (nothing there),
 * or the first lines of a dump, from a request that failed.  Return: the
 * exit status.
 */
int nl_show_check(struct nlmsghdr *nlh, mnl_cb_t cb, const char *what, int (*check)(void))
{
	int saved = -1, mfd = -1;
	char *json = NULL;
	size_t json_len = 0;
	FILE *f = NULL;
	struct jw w;
	int ret;

	ret = nl_ready(&krtctl);
	if (ret)
		return nl_report(ret, what);
	if (!krtctl.json) {
		saved = text_capture(&mfd);
		if (saved < 0) {
			fprintf(stderr, "Error: %s: cannot buffer its output: %s.\n", what,
				strerror(errno));
			return 1;
		}
	} else {
		f = open_memstream(&json, &json_len);
		if (!f) {
			fprintf(stderr, "Error: %s: %s.\n", what, strerror(errno));
			return 1;
		}
		jw_init(&w, f, krtctl.pretty);
		jw_start_arr(&w, NULL);
	}
	ret = nl_talk(&krtctl, nlh, cb, krtctl.json ? &w : NULL);
	if (!ret && check && check())
		ret = -2;	/* @check said why */
	if (saved >= 0 && text_release(saved, mfd, !ret) && !ret) {
		fprintf(stderr, "Error: %s: cannot print its output: %s.\n", what,
			strerror(errno));
		ret = -2;
	}
	if (krtctl.json) {
		jw_end_arr(&w);
		jw_done(&w);
		/* a stream that ran out of memory holds part of the array */
		if ((ferror(f) | fclose(f)) && !ret) {
			fprintf(stderr, "Error: %s: cannot buffer its output.\n", what);
			ret = -2;
		}
		if (!ret)
			fwrite(json, 1, json_len, stdout);
		free(json);
	}
	return nl_report(ret, what);
}

/* nl_show_check() with nothing to check. */
int nl_show(struct nlmsghdr *nlh, mnl_cb_t cb, const char *what)
{
	return nl_show_check(nlh, cb, what, NULL);
}

/* Dump @cmd, optionally filtered by a string attribute, printing with @cb. */
int nl_dump(u8 cmd, mnl_cb_t cb, const char *what, int filter_type, const char *filter)
{
	struct nlmsghdr *nlh = nl_msg(&krtctl, cmd, NLM_F_DUMP);

	if (filter)
		mnl_attr_put_strz(nlh, (u16)filter_type, filter);
	return nl_show(nlh, cb, what);
}
