/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * krt: in-kernel RDMA transport - generic netlink interface.
 *
 * Source of truth: Documentation/netlink/specs/krt.yaml.  Shared by the
 * kernel module and the krtctl tool.
 */
#ifndef _UAPI_LINUX_KRT_H
#define _UAPI_LINUX_KRT_H

#define KRT_GENL_NAME		"krt"
#define KRT_GENL_VERSION	1
#define KRT_MCGRP_EVENTS	"events"

/* Longest RDMA device name, including the terminating NUL. */
#define KRT_DEV_NAME_MAX	64

/**
 * enum krt_dev_state - whether krt can use an RDMA device
 * @KRT_DEV_STATE_USABLE: has everything krt needs and is enabled
 * @KRT_DEV_STATE_DISABLED: usable, but disabled by the administrator
 * @KRT_DEV_STATE_UNUSABLE: lacks a capability; see %KRT_A_DEV_REASON
 */
enum krt_dev_state {
	KRT_DEV_STATE_USABLE = 1,
	KRT_DEV_STATE_DISABLED,
	KRT_DEV_STATE_UNUSABLE,
};

/* Attributes of an RDMA device as krt sees it. */
enum krt_a_dev {
	KRT_A_DEV_UNSPEC,
	KRT_A_DEV_NAME,			/* string, ib device name */
	KRT_A_DEV_INDEX,		/* u32, ib device index */
	KRT_A_DEV_STATE,		/* u32, enum krt_dev_state */
	KRT_A_DEV_REASON,		/* string, why it is unusable */
	KRT_A_DEV_ENABLED,		/* u8, 0 or 1; settable */
	KRT_A_DEV_FRWR,			/* u8, FRWR (MEM_MGT_EXTENSIONS) */
	KRT_A_DEV_MAX_FR_PAGES,		/* u32, max_fast_reg_page_list_len */
	KRT_A_DEV_MAX_QP_WR,		/* u32 */
	KRT_A_DEV_MAX_SEND_SGE,		/* u32 */
	KRT_A_DEV_MAX_RECV_SGE,		/* u32 */
	KRT_A_DEV_MAX_INLINE,		/* u32, probed inline data size */
	KRT_A_DEV_MAX_CQE,		/* u32 */
	KRT_A_DEV_COMP_VECTORS,		/* u32, completion vectors */
	KRT_A_DEV_PORTS,		/* u32, physical ports */
	KRT_A_DEV_NODE_GUID,		/* u64, network byte order as ib */
	KRT_A_DEV_SEND_INV,		/* u8, SEND_WITH_INV supported */
	KRT_A_DEV_SG_GAPS,		/* u8, IB_MR_TYPE_SG_GAPS supported */
	KRT_A_DEV_MEM_USED,		/* u64, bytes of connections on this device */
	KRT_A_DEV_MEM_BUDGET,		/* u64, module-wide budget (mem_budget_mb) */
	KRT_A_DEV_MEM_TOTAL,		/* u64, bytes of all krt connections */
	KRT_A_DEV_PAD,

	__KRT_A_DEV_MAX,
	KRT_A_DEV_MAX = __KRT_A_DEV_MAX - 1
};

#define KRT_PEER_NAME_MAX	32	/* including the NUL */

/* Connection states, shown per connection. */
enum krt_conn_state {
	KRT_CONN_IDLE = 1,
	KRT_CONN_CONNECTING,
	KRT_CONN_ACTIVE,
	KRT_CONN_CLOSING,
	KRT_CONN_ERROR,
	KRT_CONN_RECONNECTING,		/* failed; next attempt scheduled */
};

/* Peer states: from how many of its connections are active. */
enum krt_peer_state {
	KRT_PEER_CONNECTING = 1,	/* none active yet, some connecting */
	KRT_PEER_ACTIVE,		/* all active */
	KRT_PEER_DEGRADED,		/* some active */
	KRT_PEER_DOWN,			/* none active for loss_timeout (requests fail) */
	KRT_PEER_RECONNECTING,		/* none active, reconnecting */
};

enum krt_policy {
	KRT_POLICY_RR = 1,		/* round-robin */
	KRT_POLICY_MIN_INFLIGHT,	/* fewest requests in flight */
};

/* Why a passive side refused a connection (sent in the reject). */
enum krt_reject_reason {
	KRT_REJ_NONE,
	KRT_REJ_VERSION,		/* protocol version not spoken */
	KRT_REJ_MALFORMED,		/* private data missing or malformed */
	KRT_REJ_LIMIT,			/* connection limits reached */
	KRT_REJ_UNKNOWN_NODE,		/* accept=configured, not configured */
	KRT_REJ_NO_DEVICE,		/* device unusable or disabled */
	KRT_REJ_NO_RESOURCES,		/* could not allocate, or over the memory budget */
	KRT_REJ_IDENTITY,		/* node/pool/index live from another address */
};

/* Listeners: local addresses krt accepts connections on. */
enum krt_listen_state {
	KRT_LISTEN_ACTIVE,		/* listening */
	KRT_LISTEN_WAITING,		/* its device went: waits for one */
};

enum krt_a_listen {
	KRT_A_LISTEN_UNSPEC,
	KRT_A_LISTEN_ADDR,		/* binary, 4 (IPv4) or 16 (IPv6) bytes */
	KRT_A_LISTEN_PORT,		/* u16 */
	KRT_A_LISTEN_STATE,		/* u8, enum krt_listen_state (dump only) */
	KRT_A_LISTEN_LOST,		/* u32, times its device went (dump only) */

	__KRT_A_LISTEN_MAX,
	KRT_A_LISTEN_MAX = __KRT_A_LISTEN_MAX - 1
};

enum krt_a_peer {
	KRT_A_PEER_UNSPEC,
	KRT_A_PEER_NAME,		/* string */
	KRT_A_PEER_ADDR,		/* binary, 4 or 16 bytes */
	KRT_A_PEER_PORT,		/* u16 */
	KRT_A_PEER_CONNS,		/* u32, pool size */
	KRT_A_PEER_DEPTH,		/* u32, queue depth per connection */
	KRT_A_PEER_POLICY,		/* u32, enum krt_policy */
	KRT_A_PEER_STATE,		/* u32, enum krt_peer_state */
	KRT_A_PEER_CONNS_UP,		/* u32, active connections */
	KRT_A_PEER_INBOUND,		/* u8, 1 if the remote connected to us */
	KRT_A_PEER_NODE_ID,		/* u64, remote node id (0: not known) */
	KRT_A_PEER_REJECT,		/* u32, enum krt_reject_reason (events) */
	KRT_A_PEER_REASON,		/* string, last failure */
	KRT_A_PEER_RECONNECT_MS,	/* u32, first reconnect delay; settable */
	KRT_A_PEER_RECONNECT_MAX_MS,	/* u32, reconnect delay cap; settable */
	KRT_A_PEER_LOSS_TIMEOUT_S,	/* u32, fail queued requests after; settable */
	KRT_A_PEER_HB_MS,		/* u32, heartbeat interval; settable */
	KRT_A_PEER_HB_MISSES,		/* u32, heartbeats missed before reset; settable */
	KRT_A_PEER_ATTEMPT,		/* u32, connect attempts since the last success */
	KRT_A_PEER_NEXT_ATTEMPT_MS,	/* u32, ms to the next attempt (if scheduled) */
	KRT_A_PEER_LOSS_LEFT_MS,	/* u32, ms left until loss_timeout (if none active) */
	KRT_A_PEER_ERROR_AGE_MS,	/* u64, ms since the last failure (if any) */
	KRT_A_PEER_MEM,			/* u64, bytes of its connections */
	KRT_A_PEER_RESENT,		/* u64, requests re-sent after a failure */
	KRT_A_PEER_QUEUED,		/* u32, requests waiting for a connection */
	KRT_A_PEER_RECONNECTS,		/* u64, reconnects of its connections */
	KRT_A_PEER_PAD,

	__KRT_A_PEER_MAX,
	KRT_A_PEER_MAX = __KRT_A_PEER_MAX - 1
};

enum krt_a_conn {
	KRT_A_CONN_UNSPEC,
	KRT_A_CONN_PEER,		/* string, peer name */
	KRT_A_CONN_INDEX,		/* u32, index in the pool */
	KRT_A_CONN_STATE,		/* u32, enum krt_conn_state */
	KRT_A_CONN_LADDR,		/* binary, 4 or 16 bytes */
	KRT_A_CONN_LPORT,		/* u16 */
	KRT_A_CONN_RADDR,		/* binary */
	KRT_A_CONN_RPORT,		/* u16 */
	KRT_A_CONN_QPN,			/* u32 */
	KRT_A_CONN_DEPTH,		/* u32 */
	KRT_A_CONN_INFLIGHT,		/* u32 */
	KRT_A_CONN_DEV,			/* string, RDMA device */
	KRT_A_CONN_REASON,		/* string, last failure */
	KRT_A_CONN_RECONNECTS,		/* u32, times it connected again */
	KRT_A_CONN_STATE_AGE_MS,	/* u64, ms since the last state change */
	KRT_A_CONN_ATTEMPT,		/* u32, attempts since its last success */
	KRT_A_CONN_MEM,			/* u64, bytes accounted to it */
	KRT_A_CONN_PAD,

	__KRT_A_CONN_MAX,
	KRT_A_CONN_MAX = __KRT_A_CONN_MAX - 1
};

/* Test operations of KRT_CMD_TEST (krtctl ping / xfer). */
enum krt_test_op {
	KRT_TEST_PING = 1,		/* echo round trips, payload verified */
	KRT_TEST_READ,			/* server RDMA-WRITEs into our pages */
	KRT_TEST_WRITE,			/* server RDMA-READs from our pages */
};

enum krt_a_test {
	KRT_A_TEST_UNSPEC,
	KRT_A_TEST_PEER,		/* string, outbound peer */
	KRT_A_TEST_OP,			/* u32, enum krt_test_op */
	KRT_A_TEST_COUNT,		/* u32, requests */
	KRT_A_TEST_SIZE,		/* u32, bytes: payload or data buffer */
	KRT_A_TEST_DEPTH,		/* u32, requests in flight per thread */
	KRT_A_TEST_THREADS,		/* u32, submitting threads */
	KRT_A_TEST_TIMEOUT,		/* u32, request deadline in ms */
	KRT_A_TEST_NOWAIT,		/* u8, submit with KRT_REQ_NOWAIT */
	KRT_A_TEST_OK,			/* u64, completed with success */
	KRT_A_TEST_ERRORS,		/* u64, failed (transport or service) */
	KRT_A_TEST_MISMATCHES,		/* u64, data or payload differed */
	KRT_A_TEST_DOUBLE,		/* u64, requests completed twice */
	KRT_A_TEST_BYTES,		/* u64, bytes moved and verified */
	KRT_A_TEST_ELAPSED_NS,		/* u64 */
	KRT_A_TEST_LAT_MIN_NS,		/* u64 */
	KRT_A_TEST_LAT_AVG_NS,		/* u64 */
	KRT_A_TEST_LAT_P99_NS,		/* u64 */
	KRT_A_TEST_LAT_MAX_NS,		/* u64 */
	KRT_A_TEST_FIRST_ERROR,		/* u32, first error as a positive errno */
	KRT_A_TEST_EAGAIN,		/* u64, NOWAIT submissions refused */
	KRT_A_TEST_PAD,
	KRT_A_TEST_RESENT,		/* u64, requests re-sent by krt (peer counter delta) */
	KRT_A_TEST_NORETRY,		/* u8, submit with KRT_REQ_NORETRY */

	__KRT_A_TEST_MAX,
	KRT_A_TEST_MAX = __KRT_A_TEST_MAX - 1
};

/*
 * Counters of KRT_CMD_STATS_GET.  One table (krt_stats.h), expanded by
 * the module (netlink attributes, debugfs keys) and by krtctl (text and
 * JSON keys), so the three cannot drift: KRT_STAT(SUFFIX, key) gives
 * attribute KRT_A_STAT_<SUFFIX> (u64) in the KRT_A_STATS_COUNTERS nest,
 * and "key" is its name in debugfs, krtctl's text and krtctl's JSON.  "Client"
 * counts what this node sent over a peer's outbound connections (requests
 * it submitted); "srv" what it served on inbound connections.  Requests
 * are counted each time they go on the wire (re-sends included, see
 * resent); bytes are payload: message bytes after krt's header, data
 * bytes of the buffers RDMA moves.
 */
#ifdef KRT_STAT
#error "<linux/krt.h> expands KRT_STAT itself: include it before defining KRT_STAT"
#endif
#define KRT_STAT(n, k)	KRT_A_STAT_##n,
enum krt_a_stat {
	KRT_A_STAT_UNSPEC,
	KRT_A_STAT_PAD,
#include "krt_stats.h"

	__KRT_A_STAT_MAX,
	KRT_A_STAT_MAX = __KRT_A_STAT_MAX - 1
};

#undef KRT_STAT

/* Counters in the table; attribute of counter i is KRT_A_STAT_PAD + 1 + i. */
#define KRT_STAT_NR		(KRT_A_STAT_MAX - KRT_A_STAT_PAD)

/*
 * A latency histogram (KRT_A_STATS_LAT_RTT: submission to completion at
 * the client; KRT_A_STATS_LAT_SVC: request received to reply posted at
 * the server).  Buckets are 4 per power of two of nanoseconds, from 1024
 * ns to 2^34 ns (17 s), one below and one above; a percentile is the
 * upper bound of the bucket it falls in, capped by the largest sample.
 */
enum krt_a_lat {
	KRT_A_LAT_UNSPEC,
	KRT_A_LAT_PAD,
	KRT_A_LAT_COUNT,		/* u64, samples */
	KRT_A_LAT_SUM_NS,		/* u64 */
	KRT_A_LAT_MIN_NS,		/* u64; MIN..P999 absent without samples */
	KRT_A_LAT_MAX_NS,		/* u64 */
	KRT_A_LAT_AVG_NS,		/* u64 */
	KRT_A_LAT_P50_NS,		/* u64 */
	KRT_A_LAT_P90_NS,		/* u64 */
	KRT_A_LAT_P99_NS,		/* u64 */
	KRT_A_LAT_P999_NS,		/* u64 */
	KRT_A_LAT_BUCKETS,		/* nest of KRT_A_LAT_BUCKET, non-empty ones */

	__KRT_A_LAT_MAX,
	KRT_A_LAT_MAX = __KRT_A_LAT_MAX - 1
};

enum krt_a_bucket {
	KRT_A_BUCKET_UNSPEC,
	KRT_A_BUCKET_PAD,
	KRT_A_BUCKET_LE_NS,		/* u64, upper bound (inclusive) */
	KRT_A_BUCKET_COUNT,		/* u64 */

	__KRT_A_BUCKET_MAX,
	KRT_A_BUCKET_MAX = __KRT_A_BUCKET_MAX - 1
};

#define KRT_A_LAT_BUCKET	1	/* type of each entry of KRT_A_LAT_BUCKETS */

/* Failed work completions by status (KRT_A_STATS_WC). */
enum krt_a_wc {
	KRT_A_WC_UNSPEC,
	KRT_A_WC_PAD,
	KRT_A_WC_STATUS,		/* u32, enum ib_wc_status */
	KRT_A_WC_NAME,			/* string, ib_wc_status_msg() */
	KRT_A_WC_COUNT,			/* u64 */

	__KRT_A_WC_MAX,
	KRT_A_WC_MAX = __KRT_A_WC_MAX - 1
};

#define KRT_A_WC_ENTRY		1	/* type of each entry of KRT_A_STATS_WC */

/* KRT_CMD_STATS_GET and KRT_CMD_STATS_RESET */
enum krt_a_stats {
	KRT_A_STATS_UNSPEC,
	KRT_A_STATS_PAD,
	KRT_A_STATS_PEER,		/* string; request: the peer (reset: all if absent) */
	KRT_A_STATS_CONN,		/* u32; request: one connection of the peer */
	KRT_A_STATS_INBOUND,		/* u8, the peer is inbound */
	KRT_A_STATS_AGE_MS,		/* u64, ms since created or reset */
	KRT_A_STATS_COUNTERS,		/* nest of KRT_A_STAT_* */
	KRT_A_STATS_WC,			/* nest of KRT_A_WC_ENTRY */
	KRT_A_STATS_LAT_RTT,		/* nest of KRT_A_LAT_* */
	KRT_A_STATS_LAT_SVC,		/* nest of KRT_A_LAT_* */
	KRT_A_STATS_INFLIGHT,		/* u32, requests in flight now */
	KRT_A_STATS_INFLIGHT_HWM,	/* u32, most in flight since reset */
	KRT_A_STATS_MRS,		/* u32, MRs of the connections (pools, large sets) */
	KRT_A_STATS_MRS_USED,		/* u32, of them in use now */
	KRT_A_STATS_MRS_HWM,		/* u32, most in use since reset */

	__KRT_A_STATS_MAX,
	KRT_A_STATS_MAX = __KRT_A_STATS_MAX - 1
};

enum krt_cmd {
	KRT_CMD_UNSPEC,
	KRT_CMD_DEV_GET,		/* do (by name) and dump */
	KRT_CMD_DEV_SET,		/* admin: change KRT_A_DEV_ENABLED */
	KRT_CMD_DEV_ADD_NTF,		/* event: device appeared */
	KRT_CMD_DEV_DEL_NTF,		/* event: device went away */
	KRT_CMD_DEV_CHANGE_NTF,		/* event: renamed or (en|dis)abled */
	KRT_CMD_LISTEN_ADD,		/* admin */
	KRT_CMD_LISTEN_DEL,		/* admin */
	KRT_CMD_LISTEN_GET,		/* dump */
	KRT_CMD_PEER_ADD,		/* admin */
	KRT_CMD_PEER_DEL,		/* admin */
	KRT_CMD_PEER_SET,		/* admin: conns, depth, policy */
	KRT_CMD_PEER_GET,		/* do (by name) and dump */
	KRT_CMD_CONN_GET,		/* dump, optionally of one peer */
	KRT_CMD_PEER_STATE_NTF,		/* event: peer state changed */
	KRT_CMD_CONN_STATE_NTF,		/* event: connection state changed */
	KRT_CMD_PEER_DEL_NTF,		/* event: peer removed */
	KRT_CMD_TEST,			/* admin: ping or xfer through the test service */
	KRT_CMD_PEER_RECONNECT,		/* admin: recycle every connection of a peer */
	KRT_CMD_CONN_RESET,		/* admin: force one connection into error */
	KRT_CMD_STATS_GET,		/* do (peer, or one connection) and dump (peers) */
	KRT_CMD_STATS_RESET,		/* admin: zero one peer's counters, or all */

	__KRT_CMD_MAX,
	KRT_CMD_MAX = __KRT_CMD_MAX - 1
};

#endif /* _UAPI_LINUX_KRT_H */
