// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: control tool for the krt in-kernel RDMA transport.
 *
 *   krtctl [OPTIONS] OBJECT { COMMAND | help }
 *
 * Objects and commands match by prefix (krtctl d s = krtctl dev show).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <linux/krt.h>
#include "krtctl.h"

struct krtctl krtctl;

bool matches(const char *arg, const char *pattern)
{
	size_t n = strlen(arg);

	return n && n <= strlen(pattern) && !strncmp(arg, pattern, n);
}

int usage_error(const char *msg, const char *arg)
{
	if (arg)
		fprintf(stderr, "krtctl: %s \"%s\" (try 'krtctl help')\n", msg, arg);
	else
		fprintf(stderr, "krtctl: %s (try 'krtctl help')\n", msg);
	return 2;
}

static const char *const usage_text[] = {
	"Usage: krtctl [OPTIONS] OBJECT { COMMAND | help }",
	"       krtctl [OPTIONS] -b FILE",
	"where  OBJECT := { dev | listen | peer | conn | monitor | ping | xfer | help }",
	"       OPTIONS := { -V[ersion] | -j[son] | -p[retty] | -b[atch] FILE | -f[orce] }",
	"",
	"  dev show [NAME]                 RDMA devices as krt sees them",
	"  dev set NAME enabled { on | off }",
	"                                  allow or forbid krt's use of a device",
	"  listen { add | del } ADDR [port PORT]",
	"  listen show                     addresses krt accepts connections on",
	"  peer add NAME addr IP [port P] [conns N] [depth D] [policy rr|min-inflight]",
	"       [RECOVERY]...",
	"  peer set NAME { conns N | depth D | policy P | RECOVERY }...",
	"                                  resize a live pool, tune it",
	"       RECOVERY := { reconnect_ms MS | reconnect_max_ms MS | loss_timeout S |",
	"                     hb_ms MS | hb_misses N }",
	"  peer del NAME",
	"  peer reconnect NAME             recycle every connection of a peer",
	"  peer show [NAME]                peers: state, connections up/total, recovery",
	"  conn show [peer NAME]           connections: state, addresses, QP number",
	"  conn reset { NAME INDEX | NAME/INDEX }",
	"                                  force one connection into error",
	"  monitor [count N]               print krt events as they happen",
	"  ping NAME [count N] [size S] [timeout MS] [noretry]",
	"                                  echo round trips through the peer's test",
	"                                  service, payload verified, latency shown",
	"  xfer NAME op { read | write } [size S] [count N] [depth D] [threads T]",
	"       [timeout MS] [nowait] [noretry]",
	"                                  zero-copy RDMA through FRWR, data verified",
	"",
	"Examples:",
	"  krtctl dev show",
	"  krtctl -j -p dev show rxe0",
	"  krtctl dev set rxe0 enabled off",
	"  krtctl listen add 192.0.2.1",
	"  krtctl peer add store2 addr 192.0.2.2 conns 4 depth 128",
	"  krtctl peer set store2 conns 8",
	"  krtctl peer set store2 reconnect_ms 50 loss_timeout 10",
	"  krtctl conn reset store2/1",
	"  krtctl -j monitor",
	"  krtctl ping store2 count 100 size 512",
	"  krtctl xfer store2 op read size 1M count 50 depth 8 threads 4",
};

static void usage(FILE *f)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(usage_text); i++)
		fprintf(f, "%s\n", usage_text[i]);
}

static int do_cmd(int argc, char **argv)
{
	if (argc < 1 || matches(argv[0], "help")) {
		usage(stdout);
		return 0;
	}
	if (matches(argv[0], "dev"))
		return cmd_dev(argc - 1, argv + 1);
	if (matches(argv[0], "listen"))
		return cmd_listen(argc - 1, argv + 1);
	if (matches(argv[0], "peer"))
		return cmd_peer(argc - 1, argv + 1);
	if (matches(argv[0], "conn"))
		return cmd_conn(argc - 1, argv + 1);
	if (matches(argv[0], "monitor"))
		return cmd_monitor(argc - 1, argv + 1);
	if (matches(argv[0], "ping"))
		return cmd_ping(argc - 1, argv + 1);
	if (matches(argv[0], "xfer"))
		return cmd_xfer(argc - 1, argv + 1);
	return usage_error("unknown object", argv[0]);
}

/* One command per line; '#' starts a comment. */
static int do_batch(const char *name)
{
	char *line = NULL, *argv[64], *save, *tok;
	size_t cap = 0;
	int ret = 0, lineno = 0;
	FILE *f;

	f = strcmp(name, "-") ? fopen(name, "r") : stdin;
	if (!f) {
		fprintf(stderr, "krtctl: cannot open %s: %s\n", name, strerror(errno));
		return 1;
	}
	while (getline(&line, &cap, f) > 0) {
		int argc = 0, r;

		lineno++;
		for (tok = strtok_r(line, " \t\n", &save); tok && argc < 63;
		     tok = strtok_r(NULL, " \t\n", &save)) {
			if (*tok == '#')
				break;
			argv[argc++] = tok;
		}
		if (!argc)
			continue;
		argv[argc] = NULL;
		r = do_cmd(argc, argv);
		if (r) {
			fprintf(stderr, "krtctl: %s:%d: command failed\n", name, lineno);
			ret = r;
			if (!krtctl.force)
				break;
		}
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "version",	no_argument,		NULL, 'V' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "pretty",	no_argument,		NULL, 'p' },
		{ "batch",	required_argument,	NULL, 'b' },
		{ "force",	no_argument,		NULL, 'f' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *batch = NULL;
	int c, ret;

	while ((c = getopt_long(argc, argv, "+Vjpb:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'V':
			printf("krtctl %s (krt netlink version %d)\n",
			       KRTCTL_VERSION, KRT_GENL_VERSION);
			return 0;
		case 'j':
			krtctl.json = true;
			break;
		case 'p':
			krtctl.pretty = true;
			break;
		case 'b':
			batch = optarg;
			break;
		case 'f':
			krtctl.force = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (!batch && (argc < 1 || matches(argv[0], "help"))) {
		usage(stdout);
		return 0;
	}

	if (nl_init(&krtctl)) {
		fprintf(stderr, "krtctl: %s\n", strerror(errno));
		nl_close(&krtctl);
		return 1;
	}
	ret = batch ? do_batch(batch) : do_cmd(argc, argv);
	nl_close(&krtctl);
	return ret;
}
