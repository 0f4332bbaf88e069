/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krt_bench: a load generator built on krt's exported API only
 * (include/krt/krt.h), as a ULP would be.  Internal header.
 */
#ifndef _KRT_BENCH_H
#define _KRT_BENCH_H

#include <linux/types.h>
#include <krt/krt.h>
#include <uapi/linux/krt.h>
#include <uapi/linux/krt_bench.h>

struct netlink_ext_ack;

/* The service id krt_bench's server answers. */
#define KRT_BENCH_SERVICE	2

/*
 * The request message: this header, then for a send the rest of its
 * SIZE bytes (a pattern when verified).
 */
struct krt_bench_msg {
	__be32	magic;
	__be32	flags;		/* KRT_BENCH_F_* */
	__be32	seed;
} __packed;

#define KRT_BENCH_MAGIC		0x6b626e31	/* "kbn1" */
#define KRT_BENCH_F_VERIFY	0x1

/* latency histogram: log2 buckets, 4 per power of two, of nanoseconds */
#define KRT_BENCH_HIST_SUB	4
#define KRT_BENCH_HIST_NR	256

struct krt_bench_hist {
	u64	count;
	u64	sum;
	u64	min;
	u64	max;
	u64	b[KRT_BENCH_HIST_NR];
};

void krt_bench_hist_add(struct krt_bench_hist *h, u64 ns);
void krt_bench_hist_merge(struct krt_bench_hist *to, const struct krt_bench_hist *from);
u64 krt_bench_hist_pct(const struct krt_bench_hist *h, u32 permille);

u8 krt_bench_pat(u32 seed, u32 off);
u32 krt_bench_pat_buf(struct bio_vec *bv, unsigned int nr, u32 seed, bool fill);
u32 krt_bench_pat_mem(u8 *p, u32 len, u32 off, u32 seed, bool fill);

/* what a run is asked to do */
struct krt_bench_args {
	char	peer[KRT_PEER_NAME_MAX];
	u32	op;		/* enum krt_bench_op */
	u32	size;
	u32	depth;
	u32	threads;
	u32	time_s;		/* or */
	u32	count;
	bool	verify;
};

struct krt_bench_result {
	u64	requests;
	u64	errors;
	u64	mismatches;
	u64	bytes;
	u64	elapsed_ns;
	u64	lat_min;
	u64	lat_avg;
	u64	lat_p50;
	u64	lat_p99;
	u64	lat_p999;
	u64	lat_max;
	u64	cpu_ns;
	u64	cpu_ns_per_req;
	int	first_error;
	bool	stopped;
};

int krt_bench_run(const struct krt_bench_args *a, struct krt_bench_result *res,
		  struct netlink_ext_ack *extack);
void krt_bench_stop_all(void);

int krt_bench_srv_init(void);
void krt_bench_srv_exit(void);

int krt_bench_nl_init(void);
void krt_bench_nl_exit(void);

extern unsigned int krt_bench_mem_mb;

#endif /* _KRT_BENCH_H */
