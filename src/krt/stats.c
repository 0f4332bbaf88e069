// SPDX-License-Identifier: GPL-2.0
/*
 * krt: counters and latency histograms of connections, peers and devices.
 *
 * DOC: statistics
 *
 * Every connection, peer and device carries a &struct krt_stats.  The
 * data path adds to per-CPU counters with this_cpu_add(): no lock, no
 * shared cache line, safe against interrupts on the same CPU.  An event on
 * a connection is added to the connection, its peer and its device, so a
 * peer's totals survive its connections being recycled and last until the
 * peer is deleted.  Round-trip times (client: submission to completion)
 * and service times (server: request received to reply posted) go to
 * histograms with four buckets per power of two of nanoseconds from 1 us
 * to about 17 s: per CPU for peers, atomic per connection (a
 * connection's completions run one at a time on its CQ, so its histogram is
 * rarely contended, and a per-CPU copy per connection would cost
 * nr_cpu_ids times 1.6 KiB).
 *
 * Readers sum the CPUs and subtract a base, the sums at the last reset.
 * Resets and reads both hold krt_stats_lock, so a reader sees a peer (and
 * its connections) either before or after a reset, never half of it; the
 * data path never takes it.  The table of counters (krt_stats.h in the
 * uapi header) gives the netlink attributes, the debugfs keys and
 * krtctl's keys at once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/jiffies.h>
#include "krt.h"

/* Serialises resets against readers (never taken by the data path). */
DEFINE_MUTEX(krt_stats_lock);

DEFINE_STATIC_KEY_TRUE(krt_stats_on);

static int krt_stats_param_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	if (on)
		static_branch_enable(&krt_stats_on);
	else
		static_branch_disable(&krt_stats_on);
	return 0;
}

static int krt_stats_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%c\n", static_key_enabled(&krt_stats_on) ? 'Y' : 'N');
}

static const struct kernel_param_ops krt_stats_param_ops = {
	.set	= krt_stats_param_set,
	.get	= krt_stats_param_get,
};

module_param_cb(stats, &krt_stats_param_ops, NULL, 0644);
MODULE_PARM_DESC(stats,
		 "Count requests, bytes, errors and latencies (default: Y); N stops counting, to measure what counting costs (scripts/bench-stats): counters keep their values");

/* in the table's order, which is the attributes' */
#define KRT_STAT(n, k)	{ KRT_A_STAT_##n, #k },
const struct krt_stat_desc krt_stats_table[KRT_STAT_NR] = {
#include <uapi/linux/krt_stats.h>
};

#undef KRT_STAT

static_assert(ARRAY_SIZE(krt_stats_table) == KRT_STAT_NR);

/*
 * Buckets: 0 holds samples under 1024 ns; 1 + 4 * (b - 10) + s holds
 * samples whose highest set bit is b (10..33) and next two bits are s;
 * the last holds 2^34 ns (17 s) and above.
 */
#define KRT_HIST_LOW_BIT	10
#define KRT_HIST_HIGH_BIT	34

static_assert(KRT_HIST_NR == 2 + 4 * (KRT_HIST_HIGH_BIT - KRT_HIST_LOW_BIT));

static u32 krt_hist_index(u64 ns)
{
	u32 b;

	if (ns < BIT_ULL(KRT_HIST_LOW_BIT))
		return 0;
	b = fls64(ns) - 1;
	if (b >= KRT_HIST_HIGH_BIT)
		return KRT_HIST_NR - 1;
	return 1 + 4 * (b - KRT_HIST_LOW_BIT) + ((ns >> (b - 2)) & 3);
}

/**
 * krt_hist_le() - upper bound of a histogram bucket
 * @i: bucket index
 *
 * Return: the largest value in nanoseconds bucket @i holds (U64_MAX for
 * the last).
 */
u64 krt_hist_le(u32 i)
{
	u32 b, s;

	if (i == 0)
		return BIT_ULL(KRT_HIST_LOW_BIT) - 1;
	if (i >= KRT_HIST_NR - 1)
		return U64_MAX;
	b = (i - 1) / 4 + KRT_HIST_LOW_BIT;
	s = (i - 1) % 4;
	return ((u64)(4 + s + 1) << (b - 2)) - 1;
}

/**
 * krt_stats_init() - set up a statistics block
 * @st: the block, zeroed
 * @hist: keep histograms at all (devices keep counters only)
 * @shared_hist: keep histograms as shared atomics (connections) instead
 *	of per CPU (peers)
 * @gfp: allocation flags
 *
 * Return: 0 or -ENOMEM.
 */
int krt_stats_init(struct krt_stats *st, bool hist, bool shared_hist, gfp_t gfp)
{
	int cpu, i;

	st->pc = alloc_percpu_gfp(struct krt_stats_pcpu, gfp);
	if (!st->pc)
		return -ENOMEM;
	if (hist && shared_hist) {
		st->ha = kzalloc(sizeof(*st->ha), gfp);
		if (!st->ha)
			goto err;
		for (i = 0; i < KRT_HIST_KINDS; i++)
			atomic64_set(&st->ha[0].h[i].min, U64_MAX);
	} else if (hist) {
		st->hpc = alloc_percpu_gfp(struct krt_hist_pcpu, gfp);
		if (!st->hpc)
			goto err;
		for_each_possible_cpu(cpu)
			for (i = 0; i < KRT_HIST_KINDS; i++)
				per_cpu_ptr(st->hpc, cpu)->h[i].min = U64_MAX;
	}
	st->since = jiffies;
	return 0;
err:
	krt_stats_free(st);
	return -ENOMEM;
}

/**
 * krt_stats_free() - free a statistics block's memory
 * @st: the block, no longer updated or read
 */
void krt_stats_free(struct krt_stats *st)
{
	free_percpu(st->pc);
	free_percpu(st->hpc);
	kfree(st->ha);
	kfree(st->base);
	st->pc = NULL;
	st->hpc = NULL;
	st->ha = NULL;
	st->base = NULL;
}

/**
 * krt_stats_mem() - bytes a statistics block takes
 * @hist: with histograms
 * @shared_hist: histograms shared (atomic) rather than per CPU
 *
 * Return: the bytes, for the memory budget.
 */
u64 krt_stats_mem(bool hist, bool shared_hist)
{
	/* the base of a reset comes from the slab, rounded up */
	u64 n = (u64)nr_cpu_ids * sizeof(struct krt_stats_pcpu) +
		kmalloc_size_roundup(sizeof(struct krt_stats_snap));

	if (hist && shared_hist)
		n += kmalloc_size_roundup(sizeof(struct krt_hist_shared));
	else if (hist)
		n += (u64)nr_cpu_ids * sizeof(struct krt_hist_pcpu);
	return n;
}

static void krt_hist_add(struct krt_stats *st, enum krt_hist_kind k, u32 i, u64 ns)
{
	if (st->ha) {
		struct krt_hist_atomic *h = &st->ha->h[k];
		s64 v;

		atomic64_inc(&h->b[i]);
		atomic64_add(ns, &h->sum);
		v = atomic64_read(&h->max);
		while ((u64)v < ns && !atomic64_try_cmpxchg(&h->max, &v, ns))
			;
		v = atomic64_read(&h->min);
		while ((u64)v > ns && !atomic64_try_cmpxchg(&h->min, &v, ns))
			;
	} else if (st->hpc) {
		struct krt_hist_one *h;

		/* completions run in softirq or process context, never hardirq */
		local_bh_disable();
		h = this_cpu_ptr(&st->hpc->h[k]);
		h->b[i]++;
		h->sum += ns;
		if (ns > h->max)
			h->max = ns;
		if (ns < h->min)
			h->min = ns;
		local_bh_enable();
	}
}

/**
 * krt_stats_lat() - record a latency sample
 * @conn: the connection it was measured on, or NULL
 * @peer: the peer (@conn's, when @conn is given)
 * @kind: round trip or service time
 * @ns: the sample
 *
 * Any context.
 */
void krt_stats_lat(struct krt_conn *conn, struct krt_peer *peer,
		   enum krt_hist_kind kind, u64 ns)
{
	u32 i = krt_hist_index(ns);

	if (!static_branch_likely(&krt_stats_on))
		return;
	if (conn)
		krt_hist_add(&conn->st, kind, i, ns);
	krt_hist_add(&peer->st, kind, i, ns);
}

/**
 * krt_stats_wc() - count a failed work completion by status
 * @conn: the connection
 * @status: its ib_wc_status
 */
void krt_stats_wc(struct krt_conn *conn, enum ib_wc_status status)
{
	struct krt_device *dev = READ_ONCE(conn->dev);
	u32 s = min_t(u32, status, KRT_WC_NR - 1);

	if (!static_branch_likely(&krt_stats_on))
		return;
	krt_stat_inc(conn, KRT_A_STAT_ERR_WC);
	if (status == IB_WC_RNR_RETRY_EXC_ERR)
		krt_stat_inc(conn, KRT_A_STAT_ERR_RNR);

	this_cpu_inc(conn->st.pc->wc[s]);
	this_cpu_inc(conn->peer->st.pc->wc[s]);
	if (dev)
		this_cpu_inc(dev->st.pc->wc[s]);
}

/* Raw sums since creation; @out zeroed by the caller. */
static void krt_stats_sum(struct krt_stats *st, struct krt_stats_snap *out)
{
	int cpu, i, k;

	for_each_possible_cpu(cpu) {
		const struct krt_stats_pcpu *p = per_cpu_ptr(st->pc, cpu);

		for (i = 0; i < KRT_STAT_NR; i++)
			out->c[i] += READ_ONCE(p->c[i]);
		for (i = 0; i < KRT_WC_NR; i++)
			out->wc[i] += READ_ONCE(p->wc[i]);
	}
	for (k = 0; k < KRT_HIST_KINDS; k++) {
		struct krt_hist_snap *o = &out->h[k];

		o->min = U64_MAX;
		if (st->ha) {
			struct krt_hist_atomic *h = &st->ha->h[k];

			for (i = 0; i < KRT_HIST_NR; i++)
				o->b[i] = atomic64_read(&h->b[i]);
			o->sum = atomic64_read(&h->sum);
			o->min = atomic64_read(&h->min);
			o->max = atomic64_read(&h->max);
			continue;
		}
		if (!st->hpc)
			continue;
		for_each_possible_cpu(cpu) {
			const struct krt_hist_one *h = &per_cpu_ptr(st->hpc, cpu)->h[k];

			for (i = 0; i < KRT_HIST_NR; i++)
				o->b[i] += READ_ONCE(h->b[i]);
			o->sum += READ_ONCE(h->sum);
			o->min = min(o->min, READ_ONCE(h->min));
			o->max = max(o->max, READ_ONCE(h->max));
		}
	}
}

/**
 * krt_stats_read() - the counters and histograms since the last reset
 * @st: the block
 * @out: filled in
 *
 * Caller holds krt_stats_lock.
 */
void krt_stats_read(struct krt_stats *st, struct krt_stats_snap *out)
{
	const struct krt_stats_snap *b = st->base;
	int i, k, lo, hi;

	lockdep_assert_held(&krt_stats_lock);
	memset(out, 0, sizeof(*out));
	krt_stats_sum(st, out);
	for (i = 0; b && i < KRT_STAT_NR; i++)
		out->c[i] -= b->c[i];
	for (i = 0; b && i < KRT_WC_NR; i++)
		out->wc[i] -= b->wc[i];
	for (k = 0; k < KRT_HIST_KINDS; k++) {
		struct krt_hist_snap *o = &out->h[k];

		o->count = 0;
		lo = -1;
		hi = -1;
		for (i = 0; i < KRT_HIST_NR; i++) {
			if (b)
				o->b[i] -= b->h[k].b[i];
			o->count += o->b[i];
			if (o->b[i]) {
				hi = i;
				if (lo < 0)
					lo = i;
			}
		}
		if (b)
			o->sum -= b->h[k].sum;
		if (!o->count) {
			o->min = 0;
			o->max = 0;
			continue;
		}
		/* only samples racing a reset leave these unset: use the buckets */
		if (o->min == U64_MAX)
			o->min = lo > 0 ? krt_hist_le(lo - 1) + 1 : 0;
		if (!o->max)
			o->max = krt_hist_le(hi);
	}
}

/**
 * krt_stats_prepare() - allocate what a reset needs
 * @st: the block
 *
 * Caller holds krt_stats_lock.  Lets a reset of many blocks fail before
 * it changes any.
 *
 * Return: 0 or -ENOMEM.
 */
int krt_stats_prepare(struct krt_stats *st)
{
	lockdep_assert_held(&krt_stats_lock);
	if (!st->base)
		st->base = kzalloc(sizeof(*st->base), GFP_KERNEL);
	return st->base ? 0 : -ENOMEM;
}

/**
 * krt_stats_reset() - start counting from zero
 * @st: the block
 *
 * Caller holds krt_stats_lock and called krt_stats_prepare().  Samples
 * racing with the reset land on one side of it; min and max restart from
 * the next sample.
 */
void krt_stats_reset(struct krt_stats *st)
{
	int cpu, k;

	lockdep_assert_held(&krt_stats_lock);
	if (WARN_ON_ONCE(!st->base))
		return;
	/* ORDER: min/max first, so that a sample after the base sets them */
	for (k = 0; k < KRT_HIST_KINDS; k++) {
		if (st->ha) {
			atomic64_set(&st->ha->h[k].min, U64_MAX);
			atomic64_set(&st->ha->h[k].max, 0);
		} else if (st->hpc) {
			for_each_possible_cpu(cpu) {
				struct krt_hist_one *h = &per_cpu_ptr(st->hpc, cpu)->h[k];

				WRITE_ONCE(h->min, U64_MAX);
				WRITE_ONCE(h->max, 0);
			}
		}
	}
	memset(st->base, 0, sizeof(*st->base));
	krt_stats_sum(st, st->base);
	st->since = jiffies;
	WRITE_ONCE(st->inflight_hwm, 0);
	WRITE_ONCE(st->mrs_hwm, 0);
}

/**
 * krt_hist_pct() - a percentile of a histogram
 * @h: the histogram, with @h->count samples
 * @permille: which, in tenths of a percent (500: median)
 *
 * Return: the upper bound of the bucket holding it, capped by the largest
 * sample; 0 without samples.
 */
u64 krt_hist_pct(const struct krt_hist_snap *h, u32 permille)
{
	u64 want, seen = 0;
	u32 i;

	if (!h->count)
		return 0;
	want = div_u64(h->count * permille + 999, 1000);
	if (!want)
		want = 1;
	for (i = 0; i < KRT_HIST_NR; i++) {
		seen += h->b[i];
		if (seen >= want)
			return h->max ? min(krt_hist_le(i), h->max) : krt_hist_le(i);
	}
	return h->max;
}

/**
 * krt_stats_show() - print a snapshot as "key: value" lines, for debugfs
 * @m: the file
 * @s: the snapshot
 */
void krt_stats_show(struct seq_file *m, const struct krt_stats_snap *s)
{
	u32 i;

	for (i = 0; i < KRT_STAT_NR; i++)
		seq_printf(m, "%s: %llu\n", krt_stats_table[i].key, s->c[i]);
	for (i = 0; i < KRT_WC_NR; i++)
		if (s->wc[i])
			seq_printf(m, "wc_errors{%s}: %llu\n",
				   ib_wc_status_msg(i), s->wc[i]);
}

static const char * const krt_hist_names[KRT_HIST_KINDS] = {
	[KRT_HIST_RTT] = "rtt",
	[KRT_HIST_SVC] = "svc",
};

/**
 * krt_stats_show_lat() - print the latency summaries and buckets
 * @m: the file
 * @s: the snapshot
 * @buckets: also print every non-empty bucket
 */
void krt_stats_show_lat(struct seq_file *m, const struct krt_stats_snap *s,
			bool buckets)
{
	u32 k, i;

	for (k = 0; k < KRT_HIST_KINDS; k++) {
		const struct krt_hist_snap *h = &s->h[k];
		const char *n = krt_hist_names[k];

		seq_printf(m, "%s_count: %llu\n%s_min_ns: %llu\n%s_avg_ns: %llu\n",
			   n, h->count, n, h->min, n,
			   h->count ? div64_u64(h->sum, h->count) : 0);
		seq_printf(m, "%s_p50_ns: %llu\n%s_p90_ns: %llu\n%s_p99_ns: %llu\n",
			   n, krt_hist_pct(h, 500), n, krt_hist_pct(h, 900),
			   n, krt_hist_pct(h, 990));
		seq_printf(m, "%s_p999_ns: %llu\n%s_max_ns: %llu\n",
			   n, krt_hist_pct(h, 999), n, h->max);
		if (!buckets)
			continue;
		for (i = 0; i < KRT_HIST_NR; i++) {
			if (!h->b[i])
				continue;
			if (i == KRT_HIST_NR - 1)
				seq_printf(m, "%s_bucket{le=+Inf}: %llu\n", n, h->b[i]);
			else
				seq_printf(m, "%s_bucket{le=%llu}: %llu\n", n,
					   krt_hist_le(i), h->b[i]);
		}
	}
}
