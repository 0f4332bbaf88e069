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

static const char *event_name(u8 cmd)
{
	switch (cmd) {
	case KRT_CMD_DEV_ADD_NTF:
		return "dev-add";
	case KRT_CMD_DEV_DEL_NTF:
		return "dev-del";
	case KRT_CMD_DEV_CHANGE_NTF:
		return "dev-change";
	case KRT_CMD_PEER_STATE_NTF:
		return "peer-state";
	case KRT_CMD_PEER_DEL_NTF:
		return "peer-del";
	case KRT_CMD_CONN_STATE_NTF:
		return "conn-state";
	}
	return NULL;
}

static int monitor_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[32];
	void (*print)(const struct nlattr **tb, struct jw *w, const char *key);
	const char *key;
	unsigned int max;
	const char *ev = event_name(g->cmd);
	struct mon *m = data;
	struct jw w;

	if (!ev)
		return MNL_CB_OK;	/* newer kernel, newer event */
	if (g->cmd == KRT_CMD_PEER_STATE_NTF || g->cmd == KRT_CMD_PEER_DEL_NTF) {
		print = peer_print;
		key = "peer";
		max = KRT_A_PEER_MAX;
	} else if (g->cmd == KRT_CMD_CONN_STATE_NTF) {
		print = conn_print;
		key = "conn";
		max = KRT_A_CONN_MAX;
	} else {
		print = dev_print;
		key = "dev";
		max = KRT_A_DEV_MAX;
	}
	nl_parse_attrs(nlh, tb, max);
	if (krtctl.json) {
		jw_init(&w, stdout, krtctl.pretty);
		jw_start_obj(&w, NULL);
		jw_str(&w, "event", ev);
		print(tb, &w, key);
		jw_end_obj(&w);
		jw_done(&w);
	} else {
		printf("[%s] ", ev);
		print(tb, NULL, NULL);
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
			printf("Usage: krtctl monitor [count N]\n");
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
		ssize_t n = mnl_socket_recvfrom(krtctl.nl, krtctl.buf,
						MNL_SOCKET_BUFFER_SIZE * 4);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				fprintf(stderr, "krtctl: events were lost (ENOBUFS)\n");
				continue;
			}
			fprintf(stderr, "Error: monitor: %s.\n", strerror(errno));
			return 1;
		}
		ret = mnl_cb_run(krtctl.buf, n, 0, 0, monitor_cb, &m);
		if (ret == MNL_CB_STOP)
			return 0;
		if (ret < 0) {
			fprintf(stderr, "Error: monitor: %s.\n", strerror(errno));
			return 1;
		}
	}
}
