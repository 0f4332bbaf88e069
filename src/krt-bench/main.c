// SPDX-License-Identifier: GPL-2.0
/*
 * krt_bench: a load generator for krt, built on its exported API only.
 *
 * DOC: krt_bench
 *
 * krt_bench.ko sits on krt.ko as a storage ULP would (as rnbd sits on
 * rtrs): it includes nothing of krt but ``include/krt/krt.h``.  It has two
 * halves, both always there once loaded:
 *
 * - a server: service %KRT_BENCH_SERVICE answers send-only requests at
 *   once and moves the data of read and write requests with
 *   krt_srv_data() into or out of pages it preallocated at load
 *   (``srv.c``);
 * - a client load loop, run by the generic netlink family "krt_bench"
 *   (``KRT_BENCH_CMD_RUN``, ``krtctl bench``): kernel threads each keeping
 *   ``depth`` requests in flight against a named peer for a time or a
 *   count, with a latency histogram and the node's CPU time (``clt.c``).
 *
 * Data is not touched unless a run asks to verify it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/module.h>
#include "krt_bench.h"

/**
 * krt_bench_hist_add() - count one latency
 * @h: the histogram, the caller's alone
 * @ns: the latency
 */
void krt_bench_hist_add(struct krt_bench_hist *h, u64 ns)
{
	u32 idx, msb;

	if (ns < KRT_BENCH_HIST_SUB) {
		idx = ns;
	} else {
		msb = fls64(ns) - 1;	/* >= 2 */
		idx = (msb - 1) * KRT_BENCH_HIST_SUB + ((ns >> (msb - 2)) & 3);
	}
	h->b[min_t(u32, idx, KRT_BENCH_HIST_NR - 1)]++;
	if (!h->count || ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->count++;
	h->sum += ns;
}

/**
 * krt_bench_hist_merge() - add one histogram to another
 * @to: the sum
 * @from: what to add
 */
void krt_bench_hist_merge(struct krt_bench_hist *to, const struct krt_bench_hist *from)
{
	u32 i;

	if (!from->count)
		return;
	for (i = 0; i < KRT_BENCH_HIST_NR; i++)
		to->b[i] += from->b[i];
	if (!to->count || from->min < to->min)
		to->min = from->min;
	to->max = max(to->max, from->max);
	to->count += from->count;
	to->sum += from->sum;
}

/* The largest value bucket @idx holds. */
static u64 krt_bench_hist_top(u32 idx)
{
	u32 msb, sub;

	if (idx < KRT_BENCH_HIST_SUB)
		return idx;
	msb = idx / KRT_BENCH_HIST_SUB + 1;
	sub = idx % KRT_BENCH_HIST_SUB;
	if (msb > 63)
		return U64_MAX;
	return ((u64)(KRT_BENCH_HIST_SUB + sub) << (msb - 2)) + (1ULL << (msb - 2)) - 1;
}

/**
 * krt_bench_hist_pct() - a percentile of a histogram
 * @h: the histogram
 * @permille: 500 for the median, 990 for p99, 999 for p99.9
 *
 * Return: the top of the bucket holding it, at most the largest value
 * seen (so p50 <= p99 <= p99.9 <= max), 0 for an empty histogram.
 */
u64 krt_bench_hist_pct(const struct krt_bench_hist *h, u32 permille)
{
	u64 want, seen = 0;
	u32 i;

	if (!h->count)
		return 0;
	want = div_u64(h->count * permille + 999, 1000);	/* rank, >= 1 */
	for (i = 0; i < KRT_BENCH_HIST_NR; i++) {
		seen += h->b[i];
		if (seen >= want)
			return clamp(krt_bench_hist_top(i), h->min, h->max);
	}
	return h->max;
}

/**
 * krt_bench_pat() - the verify pattern's byte at an offset
 * @seed: the request's seed
 * @off: the byte's offset in the request's data (or message)
 *
 * A bijective mix of the seed and the 32-bit word's index, so that no two
 * words of one request (up to 16 GiB) and no two seeds give the same
 * word: misplaced data differs as well as stale data.
 *
 * Return: the byte.
 */
u8 krt_bench_pat(u32 seed, u32 off)
{
	u32 x = seed ^ ((off >> 2) * 0x9e3779b1U);

	x ^= x >> 16;
	x *= 0x85ebca6bU;
	x ^= x >> 13;
	return (u8)(x >> (8 * (off & 3)));
}

/**
 * krt_bench_pat_mem() - fill or check a pattern in memory
 * @p: the bytes
 * @len: their number
 * @off: offset of @p in the request's data
 * @seed: the request's seed
 * @fill: fill (true) or check (false)
 *
 * Return: bytes that differ (0 when filling).
 */
u32 krt_bench_pat_mem(u8 *p, u32 len, u32 off, u32 seed, bool fill)
{
	u32 j, bad = 0;

	for (j = 0; j < len; j++) {
		if (fill)
			p[j] = krt_bench_pat(seed, off + j);
		else
			bad += p[j] != krt_bench_pat(seed, off + j);
	}
	return bad;
}

/**
 * krt_bench_pat_buf() - fill or check a pattern in a buffer of pages
 * @bv: its segments
 * @nr: their number
 * @seed: the request's seed
 * @fill: fill (true) or check (false)
 *
 * Return: bytes that differ (0 when filling).
 */
u32 krt_bench_pat_buf(struct bio_vec *bv, unsigned int nr, u32 seed, bool fill)
{
	u32 off = 0, bad = 0;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		u8 *p = kmap_local_page(bv[i].bv_page);

		bad += krt_bench_pat_mem(p + bv[i].bv_offset, bv[i].bv_len, off, seed, fill);
		kunmap_local(p);
		off += bv[i].bv_len;
	}
	return bad;
}

static int __init krt_bench_init(void)
{
	int ret;

	ret = krt_bench_srv_init();
	if (ret)
		return ret;
	ret = krt_bench_nl_init();
	if (ret)
		goto err_srv;
	pr_info("service %u registered, netlink family \"%s\"\n", KRT_BENCH_SERVICE,
		KRT_BENCH_GENL_NAME);
	return 0;

err_srv:
	krt_bench_srv_exit();
	return ret;
}

static void __exit krt_bench_exit(void)
{
	/*
	 * ORDER: stop running runs first (they end with what they did),
	 * then unregister the family, which waits for their handlers to
	 * return, then the service, which waits for its requests' answers.
	 */
	krt_bench_stop_all();
	krt_bench_nl_exit();
	krt_bench_srv_exit();
}

module_init(krt_bench_init);
module_exit(krt_bench_exit);
MODULE_DESCRIPTION("krt: load generator (krtctl bench) on the exported API");
MODULE_LICENSE("GPL");
