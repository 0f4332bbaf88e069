/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * krt_bench: load generator on krt's exported API - generic netlink
 * interface.
 *
 * Source of truth: Documentation/netlink/specs/krt_bench.yaml.  Shared by
 * the krt_bench module and krtctl ("krtctl bench").
 */
#ifndef _UAPI_LINUX_KRT_BENCH_H
#define _UAPI_LINUX_KRT_BENCH_H

#define KRT_BENCH_GENL_NAME	"krt_bench"
#define KRT_BENCH_GENL_VERSION	1

/* Limits of a run, checked by the module (with an extack message each). */
#define KRT_BENCH_MAX_DEPTH	1024	/* requests in flight per thread */
#define KRT_BENCH_MAX_THREADS	16
#define KRT_BENCH_MAX_TIME_S	60

/**
 * enum krt_bench_op - what each request of a run does
 * @KRT_BENCH_OP_SEND: a message of SIZE bytes, answered at once
 * @KRT_BENCH_OP_READ: the server RDMA-WRITEs SIZE bytes into our pages
 * @KRT_BENCH_OP_WRITE: the server RDMA-READs SIZE bytes from our pages
 */
enum krt_bench_op {
	KRT_BENCH_OP_SEND = 1,
	KRT_BENCH_OP_READ,
	KRT_BENCH_OP_WRITE,
};

enum krt_bench_a {
	KRT_BENCH_A_UNSPEC,
	KRT_BENCH_A_PAD,
	/* the request (echoed in the answer) */
	KRT_BENCH_A_PEER,		/* string, outbound peer */
	KRT_BENCH_A_OP,			/* u32, enum krt_bench_op */
	KRT_BENCH_A_SIZE,		/* u32, bytes per request */
	KRT_BENCH_A_DEPTH,		/* u32, requests in flight per thread */
	KRT_BENCH_A_THREADS,		/* u32, submitting kernel threads */
	KRT_BENCH_A_TIME_S,		/* u32, run this long (or COUNT) */
	KRT_BENCH_A_COUNT,		/* u32, requests in all (or TIME_S) */
	KRT_BENCH_A_VERIFY,		/* u8, fill and check a pattern */
	/* the result */
	KRT_BENCH_A_REQUESTS,		/* u64, completed with success */
	KRT_BENCH_A_ERRORS,		/* u64, failed (transport or service) */
	KRT_BENCH_A_MISMATCHES,		/* u64, verify: data differed */
	KRT_BENCH_A_BYTES,		/* u64, bytes of the successful requests */
	KRT_BENCH_A_ELAPSED_NS,		/* u64, threads started to all ended */
	KRT_BENCH_A_LAT_MIN_NS,		/* u64 */
	KRT_BENCH_A_LAT_AVG_NS,		/* u64 */
	KRT_BENCH_A_LAT_P50_NS,		/* u64, from a log2 histogram, 4 buckets per power of 2 */
	KRT_BENCH_A_LAT_P99_NS,		/* u64 */
	KRT_BENCH_A_LAT_P999_NS,	/* u64 */
	KRT_BENCH_A_LAT_MAX_NS,		/* u64 */
	KRT_BENCH_A_CPU_NS,		/* u64, CPU time of this node during the run */
	KRT_BENCH_A_CPU_NS_PER_REQ,	/* u64, CPU_NS / (REQUESTS + ERRORS) */
	KRT_BENCH_A_FIRST_ERROR,	/* u32, first error as a positive errno */
	KRT_BENCH_A_STOPPED,		/* u8, 1: stopped early (signal, module unload) */

	__KRT_BENCH_A_MAX,
	KRT_BENCH_A_MAX = __KRT_BENCH_A_MAX - 1
};

enum krt_bench_cmd {
	KRT_BENCH_CMD_UNSPEC,
	KRT_BENCH_CMD_RUN,		/* admin: run the load, answer the result */

	__KRT_BENCH_CMD_MAX,
	KRT_BENCH_CMD_MAX = __KRT_BENCH_CMD_MAX - 1
};

#endif /* _UAPI_LINUX_KRT_BENCH_H */
