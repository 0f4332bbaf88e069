// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: control tool for the krt in-kernel RDMA transport.
 *
 *   krtctl [OPTIONS] OBJECT { COMMAND | help }
 *
 * Objects and commands match by a prefix that names one of them (krtctl
 * d s = krtctl dev show: "show" wins, see match_word()).
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

/*
 * The word of @words (@n of them, NULL entries skipped) that @arg names:
 * the word itself, or the only word it is a prefix of.  A prefix of
 * several words is ambiguous, except when "show" is one of them: each
 * object's default verb, so "krtctl d s" is "dev show" as it always was.
 * Return: the index; -1 if @arg names no word (the caller says how);
 * -2 when ambiguous, reported here with the candidates ("krtctl: peer:
 * 're' is ambiguous: ..."; @what NULL for objects).
 */
int match_word(const char *arg, const char *const *words, size_t n, const char *what)
{
	size_t i, found = 0;
	int first = -1, show = -1;

	for (i = 0; i < n; i++) {
		if (!words[i] || !matches(arg, words[i]))
			continue;
		if (!strcmp(arg, words[i]))
			return (int)i;
		if (!found++)
			first = (int)i;
		if (!strcmp(words[i], "show"))
			show = (int)i;
	}
	if (found <= 1)
		return first;
	if (show >= 0)
		return show;
	fprintf(stderr, "krtctl: %s%s'%s' is ambiguous:", what ? what : "", what ? ": " : "",
		arg);
	for (i = 0, found = 0; i < n; i++)
		if (words[i] && matches(arg, words[i]))
			fprintf(stderr, "%s %s", found++ ? "," : "", words[i]);
	fprintf(stderr, " (try 'krtctl help%s%s')\n", what ? " " : "", what ? what : "");
	return -2;
}

/*
 * The usage, one source for "krtctl help", "krtctl help OBJECT" and
 * "krtctl OBJECT help" (and krtctl(8), which scripts/check-man checks
 * against it): each line belongs to an object; a line starting with the
 * object's name is a command, the others continue it.
 */
static const struct {
	const char *obj;
	const char *text;
} usage_lines[] = {
	{ "dev", "dev show [NAME]                 RDMA devices as krt sees them" },
	{ "dev", "dev set NAME enabled { on | off }" },
	{ "dev", "                                allow or forbid krt's use of a device" },
	{ "listen", "listen { add | del } ADDR [port PORT]" },
	{ "listen", "listen show                     addresses krt accepts connections on" },
	{ "peer", "peer add NAME addr IP [port P] [conns N] [depth D] [policy rr|min-inflight]" },
	{ "peer", "     [RECOVERY]...              configure a peer, connect its pool" },
	{ "peer", "peer set NAME { conns N | depth D | policy P | RECOVERY }..." },
	{ "peer", "                                resize a live pool, tune it" },
	{ "peer", "     RECOVERY := { reconnect_ms MS | reconnect_max_ms MS | loss_timeout S |" },
	{ "peer", "                   hb_ms MS | hb_misses N }" },
	{ "peer", "peer del NAME" },
	{ "peer", "peer reconnect NAME             recycle every connection of a peer" },
	{ "peer", "peer show [NAME]                peers: state, connections up/total, recovery" },
	{ "peer", "                                (-s: and their main counters)" },
	{ "conn", "conn show [peer NAME [index N] | NAME/INDEX]" },
	{ "conn", "                                connections: state, addresses, QP number" },
	{ "conn", "conn reset { NAME INDEX | NAME/INDEX }" },
	{ "conn", "                                force one connection into error" },
	{ "stats", "stats show [peer NAME [conn INDEX] | conn NAME/INDEX]" },
	{ "stats", "                                counters, gauges, failed WCs, latency" },
	{ "stats", "stats reset [peer NAME]         zero one peer's statistics, or every peer's" },
	{ "top", "top [interval S] [count N] [peer NAME]" },
	{ "top", "                                request rates, throughput, p99 per interval" },
	{ "monitor", "monitor [count N]               print krt events as they happen" },
	{ "ping", "ping NAME [count N] [size S] [timeout MS] [noretry]" },
	{ "ping", "                                echo round trips through the peer's test" },
	{ "ping", "                                service, payload verified, latency shown" },
	{ "xfer", "xfer NAME op { read | write } [size S] [count N] [depth D] [threads T]" },
	{ "xfer", "     [timeout MS] [nowait] [noretry]" },
	{ "xfer", "                                zero-copy RDMA through FRWR, data verified" },
	{ "bench", "bench NAME op { send | read | write } size S depth D [threads N]" },
	{ "bench", "      [time T | count N] [verify]" },
	{ "bench", "                                load from krt_bench.ko: requests/s, MiB/s," },
	{ "bench", "                                latency p50/p99/p99.9/max, CPU per request" },
	{ "save", "save [FILE]                     the running configuration as a -b file" },
	{ "help", "help [OBJECT]                   this text, or one object's commands" },
};

static const char *const examples[] = {
	"krtctl dev show",
	"krtctl -j -p dev show rxe0",
	"krtctl dev set rxe0 enabled off",
	"krtctl listen add 192.0.2.1",
	"krtctl peer add store2 addr 192.0.2.2 conns 4 depth 128",
	"krtctl peer set store2 conns 8",
	"krtctl peer set store2 reconnect_ms 50 loss_timeout 10",
	"krtctl conn show store2/1",
	"krtctl conn reset store2/1",
	"krtctl -s peer show store2",
	"krtctl stats show conn store2/1",
	"krtctl stats reset peer store2",
	"krtctl top interval 0.5 count 20",
	"krtctl -j monitor",
	"krtctl ping store2 count 100 size 512",
	"krtctl xfer store2 op read size 1M count 50 depth 8 threads 4",
	"krtctl bench store2 op read size 4k depth 32 threads 4 time 10",
	"krtctl save /etc/krt/krt.conf",
};

/* the objects, in the order of the usage */
enum { OBJ_DEV, OBJ_LISTEN, OBJ_PEER, OBJ_CONN, OBJ_STATS, OBJ_TOP, OBJ_MONITOR,
	OBJ_PING, OBJ_XFER, OBJ_BENCH, OBJ_SAVE, OBJ_HELP, OBJ_MAX };

static const char *const objects[OBJ_MAX] = {
	[OBJ_DEV] = "dev", [OBJ_LISTEN] = "listen", [OBJ_PEER] = "peer",
	[OBJ_CONN] = "conn", [OBJ_STATS] = "stats", [OBJ_TOP] = "top",
	[OBJ_MONITOR] = "monitor", [OBJ_PING] = "ping", [OBJ_XFER] = "xfer",
	[OBJ_BENCH] = "bench", [OBJ_SAVE] = "save", [OBJ_HELP] = "help",
};

/*
 * Print the usage: every object's (@obj NULL) or one object's, the same
 * lines as in the whole usage.
 */
void usage(FILE *f, const char *obj)
{
	size_t i;

	if (obj) {
		fprintf(f, "Usage: krtctl [OPTIONS] %s ...\n", obj);
		for (i = 0; i < ARRAY_SIZE(usage_lines); i++)
			if (!strcmp(usage_lines[i].obj, obj))
				fprintf(f, "  %s\n", usage_lines[i].text);
		return;
	}
	fprintf(f, "Usage: krtctl [OPTIONS] OBJECT { COMMAND | help }\n"
		"       krtctl [OPTIONS] -b FILE\n"
		"       krtctl help [OBJECT]\n"
		"where  OBJECT := {");
	for (i = 0; i < OBJ_MAX; i++)
		fprintf(f, "%s %s", i ? " |" : "", objects[i]);
	fprintf(f, " }\n"
		"       OPTIONS := { -V[ersion] | -j[son] | -p[retty] | -s[tats] | -b[atch] FILE |\n"
		"                    -f[orce] }\n"
		"\n");
	for (i = 0; i < ARRAY_SIZE(usage_lines); i++)
		fprintf(f, "  %s\n", usage_lines[i].text);
	fprintf(f, "\nExamples:\n");
	for (i = 0; i < ARRAY_SIZE(examples); i++)
		fprintf(f, "  %s\n", examples[i]);
}

/* krtctl help [OBJECT] */
static int cmd_help(int argc, char **argv)
{
	int o;

	if (argc < 1) {
		usage(stdout, NULL);
		return 0;
	}
	if (argc > 1)
		return usage_error("help: unexpected argument", argv[1]);
	o = match_word(argv[0], objects, OBJ_MAX, NULL);
	if (o == -2)
		return 2;
	if (o < 0)
		return usage_error("help: unknown object", argv[0]);
	if (o == OBJ_HELP)
		usage(stdout, NULL);
	else
		usage(stdout, objects[o]);
	return 0;
}

static int do_cmd(int argc, char **argv)
{
	int o;

	if (argc < 1) {
		usage(stdout, NULL);
		return 0;
	}
	o = match_word(argv[0], objects, OBJ_MAX, NULL);
	argc--;
	argv++;
	switch (o) {
	case OBJ_DEV:
		return cmd_dev(argc, argv);
	case OBJ_LISTEN:
		return cmd_listen(argc, argv);
	case OBJ_PEER:
		return cmd_peer(argc, argv);
	case OBJ_CONN:
		return cmd_conn(argc, argv);
	case OBJ_STATS:
		return cmd_stats(argc, argv);
	case OBJ_TOP:
		return cmd_top(argc, argv);
	case OBJ_MONITOR:
		return cmd_monitor(argc, argv);
	case OBJ_PING:
		return cmd_ping(argc, argv);
	case OBJ_XFER:
		return cmd_xfer(argc, argv);
	case OBJ_BENCH:
		return cmd_bench(argc, argv);
	case OBJ_SAVE:
		return cmd_save(argc, argv);
	case OBJ_HELP:
		return cmd_help(argc, argv);
	case -2:
		return 2;
	}
	return usage_error("unknown object", argv[-1]);
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
		{ "stats",	no_argument,		NULL, 's' },
		{ "batch",	required_argument,	NULL, 'b' },
		{ "force",	no_argument,		NULL, 'f' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *batch = NULL;
	int c, ret;

	while ((c = getopt_long(argc, argv, "+Vjpsb:fh", opts, NULL)) != -1) {
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
		case 's':
			krtctl.stats = true;
			break;
		case 'b':
			batch = optarg;
			break;
		case 'f':
			krtctl.force = true;
			break;
		case 'h':
			usage(stdout, NULL);
			return 0;
		default:
			usage(stderr, NULL);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (!batch && argc < 1) {
		usage(stdout, NULL);
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
