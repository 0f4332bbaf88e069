// SPDX-License-Identifier: GPL-2.0
/*
 * krtctl: "top", what each peer did over the last interval, from the
 * difference of two KRT_CMD_STATS_GET dumps: requests and served requests
 * per second, MiB/s in and out, requests in flight, the p99 round trip
 * (from the difference of the histograms) and the errors and re-sends.
 *
 * A peer that appears between two samples starts its baseline there (no
 * line until the next interval); a counter that went down was reset, its
 * new value is the interval's; so are all of a peer whose age went down.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/krt.h>
#include "krtctl.h"

enum { TOP_REQS, TOP_SRV_REQS, TOP_IN, TOP_OUT, TOP_INFLIGHT, TOP_P99, TOP_ERRORS,
	TOP_RESENT, TOP_NR };

enum top_kind {
	TOP_RATE,		/* per second */
	TOP_MIB,		/* MiB per second */
	TOP_COUNT,		/* in the interval, or now */
	TOP_NS,			/* a time, 0 for none */
};

/* the counters of a column, summed */
static const u8 top_reqs[] = { STAT_IDX(REQS_SEND), STAT_IDX(REQS_READ), STAT_IDX(REQS_WRITE) };
static const u8 top_srv_reqs[] = {
	STAT_IDX(SRV_REQS_SEND), STAT_IDX(SRV_REQS_READ), STAT_IDX(SRV_REQS_WRITE),
};

static const u8 top_in[] = {
	STAT_IDX(MSG_BYTES_IN), STAT_IDX(DATA_BYTES_READ), STAT_IDX(SRV_MSG_BYTES_IN),
	STAT_IDX(SRV_DATA_BYTES_WRITTEN),
};

static const u8 top_out[] = {
	STAT_IDX(MSG_BYTES_OUT), STAT_IDX(DATA_BYTES_WRITTEN), STAT_IDX(SRV_MSG_BYTES_OUT),
	STAT_IDX(SRV_DATA_BYTES_READ),
};

static const u8 top_errors[] = {
	STAT_IDX(ERR_WC), STAT_IDX(ERR_MALFORMED), STAT_IDX(DONE_ERROR),
};

static const u8 top_resent[] = { STAT_IDX(RESENT) };

/* the columns: text header and width, JSON key, what they show */
static const struct top_col {
	const char *hdr;
	const char *key;
	int width;
	enum top_kind kind;
	const u8 *ctr;		/* NULL: inflight, p99 */
	size_t nr;
} top_cols[TOP_NR] = {
	[TOP_REQS]	= { "REQ/S", "reqs_per_s", 10, TOP_RATE,
			    top_reqs, ARRAY_SIZE(top_reqs) },
	[TOP_SRV_REQS]	= { "SRV_REQ/S", "srv_reqs_per_s", 10, TOP_RATE,
			    top_srv_reqs, ARRAY_SIZE(top_srv_reqs) },
	[TOP_IN]	= { "MiB/s_IN", "mib_per_s_in", 9, TOP_MIB,
			    top_in, ARRAY_SIZE(top_in) },
	[TOP_OUT]	= { "MiB/s_OUT", "mib_per_s_out", 9, TOP_MIB,
			    top_out, ARRAY_SIZE(top_out) },
	[TOP_INFLIGHT]	= { "INFLIGHT", "inflight", 8, TOP_COUNT, NULL, 0 },
	[TOP_P99]	= { "RTT_P99", "rtt_p99_ns", 9, TOP_NS, NULL, 0 },
	[TOP_ERRORS]	= { "ERRORS", "errors", 7, TOP_COUNT,
			    top_errors, ARRAY_SIZE(top_errors) },
	[TOP_RESENT]	= { "RESENT", "resent", 7, TOP_COUNT,
			    top_resent, ARRAY_SIZE(top_resent) },
};

/* one line: rates in @r, counts and times in @n, by the column's kind */
struct top_row {
	double r[TOP_NR];
	u64 n[TOP_NR];
};

struct top_sample {
	struct stats_set set;
	struct timespec mono;	/* when it was asked for */
	u64 wall_ms;
};

struct top {
	u64 interval_ns;
	u32 count;		/* intervals to print; 0: no end */
	const char *peer;
	bool tty;
	int name_w;		/* text: the width of the first column */
	int lines;		/* text: printed since the header; 0: none yet */
};

#define TOP_NAME_W	16

static u64 ctr_delta(const struct stats *cur, const struct stats *prev, unsigned int i)
{
	if (!prev || !(prev->have_ctr & (1ULL << i)) || cur->ctr[i] < prev->ctr[i])
		return cur->ctr[i];
	return cur->ctr[i] - prev->ctr[i];
}

/* the requests of bucket @b in the interval; @pos walks @prev (sorted like @b's) */
static u64 bucket_delta(const struct stats_bucket *b, const struct stats_lat *prev, u32 *pos)
{
	u64 old = 0;

	if (prev) {
		while (*pos < prev->nr_b && prev->b[*pos].le_ns < b->le_ns)
			(*pos)++;
		if (*pos < prev->nr_b && prev->b[*pos].le_ns == b->le_ns)
			old = prev->b[*pos].count;
	}
	return b->count >= old ? b->count - old : b->count;
}

/*
 * The 99th percentile of the interval: the upper bound of its bucket,
 * capped by the largest sample since the reset (as the kernel caps its
 * own; the open bucket above the last has no other bound).  0: none.
 */
static u64 top_p99(const struct stats_lat *cur, const struct stats_lat *prev)
{
	u64 total = 0, sum = 0, rank, le = 0;
	u32 i, pos = 0;

	for (i = 0; i < cur->nr_b; i++)
		total += bucket_delta(&cur->b[i], prev, &pos);
	if (!total)
		return 0;
	rank = total - total / 100;	/* ceil(0.99 * total) */
	for (i = 0, pos = 0; i < cur->nr_b && sum < rank; i++) {
		sum += bucket_delta(&cur->b[i], prev, &pos);
		le = cur->b[i].le_ns;
	}
	if ((cur->have & (1U << KRT_A_LAT_MAX_NS)) && cur->v[KRT_A_LAT_MAX_NS] < le)
		le = cur->v[KRT_A_LAT_MAX_NS];
	return le;
}

static void top_row(struct top_row *row, const struct stats *cur, const struct stats *prev,
		    double secs)
{
	const struct top_col *c;
	size_t i, j;
	u64 sum;

	/* younger than before: reset (or deleted and added again) */
	if (STATS_HAS(cur, KRT_A_STATS_AGE_MS) && STATS_HAS(prev, KRT_A_STATS_AGE_MS) &&
	    cur->age_ms < prev->age_ms)
		prev = NULL;
	memset(row, 0, sizeof(*row));
	for (i = 0; i < TOP_NR; i++) {
		c = &top_cols[i];
		for (j = 0, sum = 0; j < c->nr; j++)
			sum += ctr_delta(cur, prev, c->ctr[j]);
		row->n[i] = sum;
		row->r[i] = (double)sum / secs;
		if (c->kind == TOP_MIB)
			row->r[i] /= 1048576.0;
	}
	row->n[TOP_INFLIGHT] = cur->gauge[KRT_A_STATS_INFLIGHT];
	row->n[TOP_P99] = top_p99(&cur->rtt, prev ? &prev->rtt : NULL);
}

/* the same peer (or connection) in @set */
static const struct stats *top_find(const struct stats_set *set, const struct stats *s)
{
	bool conn = STATS_HAS(s, KRT_A_STATS_CONN);
	size_t i;

	for (i = 0; i < set->n; i++)
		if (STATS_HAS(&set->s[i], KRT_A_STATS_CONN) == conn &&
		    (!conn || set->s[i].conn == s->conn) && !strcmp(set->s[i].peer, s->peer))
			return &set->s[i];
	return NULL;
}

/*
 * A rate as a JSON number with three decimals: jw has no writer of
 * fractions, so the integer part goes through jw_uint() (key, separator)
 * and the fraction follows it.
 */
static void jw_fixed3(struct jw *w, const char *key, double v)
{
	u64 milli;

	/* nothing real comes near; keeps the conversion defined */
	if (v > 1e15)
		v = 1e15;
	milli = (u64)(v * 1000 + 0.5);

	jw_uint(w, key, milli / 1000);
	fprintf(w->f, ".%03u", (unsigned int)(milli % 1000));
}

static void top_name(const struct stats *s, char *buf, size_t len)
{
	if (STATS_HAS(s, KRT_A_STATS_CONN))
		snprintf(buf, len, "%s/%u", s->peer, s->conn);
	else
		snprintf(buf, len, "%s", s->peer);
}

static void top_row_json(struct jw *w, const char *name, const struct top_row *row)
{
	size_t i;

	jw_start_obj(w, NULL);
	jw_str(w, "peer", name);
	for (i = 0; i < TOP_NR; i++) {
		if (top_cols[i].kind == TOP_RATE || top_cols[i].kind == TOP_MIB)
			jw_fixed3(w, top_cols[i].key, row->r[i]);
		else
			jw_uint(w, top_cols[i].key, row->n[i]);
	}
	jw_end_obj(w);
}

static void top_row_text(const struct top *t, const char *name, const struct top_row *row)
{
	const struct top_col *c;
	char buf[32];
	size_t i;

	printf("%-*s", t->name_w, name);
	for (i = 0; i < TOP_NR; i++) {
		c = &top_cols[i];
		switch (c->kind) {
		case TOP_RATE:
			printf(" %*.1f", c->width, row->r[i]);
			break;
		case TOP_MIB:
			printf(" %*.2f", c->width, row->r[i]);
			break;
		case TOP_COUNT:
			printf(" %*llu", c->width, (unsigned long long)row->n[i]);
			break;
		case TOP_NS:
			if (row->n[i])
				fmt_ns(buf, sizeof(buf), row->n[i]);
			else
				snprintf(buf, sizeof(buf), "-");
			printf(" %*s", c->width, buf);
			break;
		}
	}
	putchar('\n');
}

/*
 * The header before a block of @rows lines: once, or on a terminal when
 * the block would scroll it away, and when the first column widens.
 */
static void top_header(struct top *t, size_t rows, int name_w)
{
	struct winsize ws;
	int screen = 24;
	size_t i;

	if (t->tty && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row > 2)
		screen = ws.ws_row;
	if (t->lines && name_w <= t->name_w &&
	    (!t->tty || t->lines + (int)rows + 1 < screen)) {
		/* several peers: a blank line between the intervals */
		if (rows > 1) {
			putchar('\n');
			t->lines++;
		}
		return;
	}
	if (name_w > t->name_w)
		t->name_w = name_w;
	if (t->lines)
		putchar('\n');
	printf("%-*s", t->name_w, "PEER");
	for (i = 0; i < TOP_NR; i++)
		printf(" %*s", top_cols[i].width, top_cols[i].hdr);
	putchar('\n');
	t->lines = 1;
}

static void top_print(struct top *t, const struct top_sample *cur,
		      const struct top_sample *prev)
{
	double secs = (cur->mono.tv_sec - prev->mono.tv_sec) +
		      (cur->mono.tv_nsec - prev->mono.tv_nsec) / 1e9;
	char name[KRT_PEER_NAME_MAX + 16];
	const struct stats *s, *old;
	struct top_row row;
	size_t i, rows = 0;
	int name_w = t->name_w;
	struct jw w;

	if (secs < 0.001)	/* not below 10 ms but for a clock gone wrong */
		secs = 0.001;
	for (i = 0; i < cur->set.n; i++) {
		s = &cur->set.s[i];
		if (!top_find(&prev->set, s))
			continue;
		rows++;
		top_name(s, name, sizeof(name));
		if ((int)strlen(name) > name_w)
			name_w = (int)strlen(name);
	}
	if (krtctl.json) {
		jw_init(&w, stdout, krtctl.pretty);
		jw_start_obj(&w, NULL);
		jw_uint(&w, "time_ms", cur->wall_ms);
		jw_uint(&w, "interval_ms", (u64)(secs * 1000 + 0.5));
		jw_start_arr(&w, "peers");
	} else if (rows) {
		top_header(t, rows, name_w);
	}
	for (i = 0; i < cur->set.n; i++) {
		s = &cur->set.s[i];
		old = top_find(&prev->set, s);
		if (!old)
			continue;
		top_row(&row, s, old, secs);
		top_name(s, name, sizeof(name));
		if (krtctl.json)
			top_row_json(&w, name, &row);
		else
			top_row_text(t, name, &row);
	}
	if (krtctl.json) {
		jw_end_arr(&w);
		jw_end_obj(&w);
		jw_done(&w);
	} else {
		t->lines += (int)rows;
		fflush(stdout);
	}
}

/*
 * A sample of every peer, or of @peer: the kernel filters the first (a
 * peer it does not know is an error), krtctl the others (a peer deleted
 * meanwhile is not).
 */
static int top_sample(struct top_sample *smp, const char *peer, bool first)
{
	struct stats_set *set = &smp->set;
	struct timespec now;
	size_t i, n = 0;
	int ret;

	stats_set_free(set);
	clock_gettime(CLOCK_MONOTONIC, &smp->mono);
	clock_gettime(CLOCK_REALTIME, &now);
	smp->wall_ms = (u64)now.tv_sec * 1000 + (u64)now.tv_nsec / 1000000;
	ret = stats_get(set, first ? peer : NULL, NULL, true);
	if (ret || !peer)
		return ret;
	for (i = 0; i < set->n; i++) {
		if (strcmp(set->s[i].peer, peer))
			stats_free(&set->s[i]);
		else
			set->s[n++] = set->s[i];
	}
	set->n = n;
	return 0;
}

/* sleep until @next (CLOCK_MONOTONIC); one late sample does not make the next ones early */
static void top_sleep(struct timespec *next, u64 ns)
{
	struct timespec now;

	next->tv_sec += (time_t)(ns / 1000000000);
	next->tv_nsec += (long)(ns % 1000000000);
	if (next->tv_nsec >= 1000000000) {
		next->tv_sec++;
		next->tv_nsec -= 1000000000;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > next->tv_sec ||
	    (now.tv_sec == next->tv_sec && now.tv_nsec > next->tv_nsec)) {
		*next = now;
		return;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) == EINTR)
		;
}

/* seconds: digits with an optional fraction ("1", "0.5", ".25"), 0.01 to 86400 */
static int get_interval(const char *s, u64 *ns)
{
	const char *p = s;
	int digits = 0;
	double v;

	for (; isdigit((unsigned char)*p); p++)
		digits++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			digits++;
	if (!digits || *p)
		return usage_error("top: bad interval", s);
	v = strtod(s, NULL);
	if (v < 0.01 || v > 86400)
		return usage_error("top: interval out of range (0.01 to 86400 s):", s);
	*ns = (u64)(v * 1e9 + 0.5);
	return 0;
}

static int top_args(struct top *t, int argc, char **argv)
{
	for (; argc > 0; argc -= 2, argv += 2) {
		if (!matches(argv[0], "interval") && !matches(argv[0], "count") &&
		    !matches(argv[0], "peer"))
			return usage_error("top: unknown argument", argv[0]);
		if (argc < 2)
			return usage_error("top: missing value after", argv[0]);
		if (matches(argv[0], "interval")) {
			if (get_interval(argv[1], &t->interval_ns))
				return 2;
		} else if (matches(argv[0], "count")) {
			if (get_num(argv[1], "top: bad count", 0xffffffffUL, &t->count))
				return 2;
			if (!t->count)
				return usage_error("top: bad count", argv[1]);
		} else {
			if (!*argv[1])
				return usage_error("top: empty peer name", NULL);
			if (strlen(argv[1]) >= KRT_PEER_NAME_MAX)
				return usage_error("peer name is too long:", argv[1]);
			t->peer = argv[1];
		}
	}
	return 0;
}

/* krtctl top [interval S] [count N] [peer NAME] */
int cmd_top(int argc, char **argv)
{
	struct top t = { .interval_ns = 1000000000, .name_w = TOP_NAME_W };
	struct top_sample smp[2] = { 0 };
	struct top_sample *prev = &smp[0], *cur = &smp[1], *tmp;
	struct timespec next;
	u32 n;
	int ret;

	/* "help", or a prefix of it: no keyword of top starts with h */
	if (argc > 0 && matches(argv[0], "help")) {
		usage(stdout, "top");
		return 0;
	}
	if (top_args(&t, argc, argv))
		return 2;
	t.tty = isatty(STDOUT_FILENO);
	/* the first sample is the baseline */
	ret = top_sample(prev, t.peer, true);
	next = prev->mono;
	for (n = 0; !ret && (!t.count || n < t.count); n++) {
		top_sleep(&next, t.interval_ns);
		ret = top_sample(cur, t.peer, false);
		if (ret)
			break;
		top_print(&t, cur, prev);
		tmp = prev;
		prev = cur;
		cur = tmp;
	}
	stats_set_free(&smp[0].set);
	stats_set_free(&smp[1].set);
	return stats_report(ret, "top");
}
