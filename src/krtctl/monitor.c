// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: "monitor", events from the krt "events" multicast group.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/genetlink.h>
#include <linux/krt.h>
#include "krtctl.h"

struct mon {
	long left;	/* events still to print, <0 for no limit */
};

typedef void (*print_fn)(const struct nlattr **tb, struct jw *w, const char *key);

static const struct event {
	u8 cmd;
	const char *name;	/* as printed */
	const char *key;	/* JSON member of the object */
	print_fn print;
	struct nl_policy *pol;
} events[] = {
	{ KRT_CMD_DEV_ADD_NTF,		"dev-add",	"dev",	dev_print,  &dev_policy },
	{ KRT_CMD_DEV_DEL_NTF,		"dev-del",	"dev",	dev_print,  &dev_policy },
	{ KRT_CMD_DEV_CHANGE_NTF,	"dev-change",	"dev",	dev_print,  &dev_policy },
	{ KRT_CMD_PEER_STATE_NTF,	"peer-state",	"peer",	peer_print, &peer_policy },
	{ KRT_CMD_PEER_DEL_NTF,		"peer-del",	"peer",	peer_print, &peer_policy },
	{ KRT_CMD_CONN_STATE_NTF,	"conn-state",	"conn",	conn_print, &conn_policy },
};

static const struct event *event_of(u8 cmd)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(events); i++)
		if (events[i].cmd == cmd)
			return &events[i];
	return NULL;	/* newer kernel, newer event */
}

static int monitor_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[KRT_A_ANY_MAX + 1];
	const struct event *ev;
	struct mon *m = data;
	struct jw w;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*g) ||
	    (krtctl.family && nlh->nlmsg_type != krtctl.family))
		return MNL_CB_OK;
	ev = event_of(g->cmd);
	if (!ev || nl_parse_attrs(nlh, tb, ev->pol))
		return MNL_CB_OK;
	if (krtctl.json) {
		jw_init(&w, stdout, krtctl.pretty);
		jw_start_obj(&w, NULL);
		jw_str(&w, "event", ev->name);
		ev->print(tb, &w, ev->key);
		jw_end_obj(&w);
		jw_done(&w);
	} else {
		printf("[%s] ", ev->name);
		ev->print(tb, NULL, NULL);
	}
	fflush(stdout);
	if (m->left > 0 && --m->left == 0)
		return MNL_CB_STOP;
	return MNL_CB_OK;
}

int cmd_monitor(int argc, char **argv)
{
	struct mon m = { .left = -1 };
	char *end;
	int ret;

	while (argc > 0) {
		if (matches(argv[0], "count") && argc > 1) {
			m.left = strtol(argv[1], &end, 0);
			if (*end || m.left <= 0)
				return usage_error("monitor: bad count", argv[1]);
			argc -= 2;
			argv += 2;
		} else if (matches(argv[0], "help")) {
			usage(stdout, "monitor");
			return 0;
		} else {
			return usage_error("monitor: unknown argument", argv[0]);
		}
	}
	ret = nl_join_events(&krtctl);
	if (ret) {
		if (ret == -1)
			fprintf(stderr, "Error: cannot join events: %s.\n", strerror(errno));
		return 1;
	}
	fprintf(stderr, "krtctl: monitoring krt events\n");
	for (;;) {
		ssize_t n = nl_recv(&krtctl);

		if (!n)
			return 0;	/* end of a KRTCTL_REPLY file */
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				fprintf(stderr, "krtctl: events were lost (ENOBUFS)\n");
				continue;
			}
			if (errno == EBADMSG) {
				fprintf(stderr, "krtctl: ignoring a malformed message\n");
				continue;
			}
			fprintf(stderr, "Error: monitor: %s.\n", strerror(errno));
			return 1;
		}
		ret = mnl_cb_run(krtctl.buf, (size_t)n, 0, 0, monitor_cb, &m);
		if (ret == MNL_CB_STOP)
			return 0;
		if (ret < 0) {
			fprintf(stderr, "Error: monitor: %s.\n", strerror(errno));
			return 1;
		}
	}
}
