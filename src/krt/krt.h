/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krt: in-kernel RDMA transport - internal definitions shared by the
 * module's files.  Not exported.
 */
#ifndef _KRT_INTERNAL_H
#define _KRT_INTERNAL_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/socket.h>
#include <linux/workqueue.h>
#include <linux/sched/clock.h>
#include <linux/jump_label.h>
#include <linux/seq_file.h>
#include <linux/dma-direction.h>
#include <net/netlink.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <uapi/linux/krt.h>
#include <krt/krt.h>

#define KRT_VERSION	"0.3.0"

/* stats.c: counters and histograms (see the DOC in stats.c) */
enum krt_hist_kind {
	KRT_HIST_RTT,			/* client: submission to completion */
	KRT_HIST_SVC,			/* server: received to reply posted */
	KRT_HIST_KINDS
};

#define KRT_HIST_NR		98
#define KRT_WC_NR		(IB_WC_GENERAL_ERR + 1)
#define KRT_STAT_IDX(attr)	((attr) - KRT_A_STAT_PAD - 1)

/* One CPU's counters: indexed by KRT_STAT_IDX(), and by ib_wc_status. */
struct krt_stats_pcpu {
	u64	c[KRT_STAT_NR];
	u64	wc[KRT_WC_NR];
};

struct krt_hist_one {
	u64	b[KRT_HIST_NR];
	u64	sum;
	u64	min;
	u64	max;
};

struct krt_hist_pcpu {
	struct krt_hist_one	h[KRT_HIST_KINDS];
};

struct krt_hist_atomic {
	atomic64_t	b[KRT_HIST_NR];
	atomic64_t	sum;
	atomic64_t	min;
	atomic64_t	max;
};

struct krt_hist_shared {
	struct krt_hist_atomic	h[KRT_HIST_KINDS];
};

/* A histogram as read: @count is the sum of the buckets. */
struct krt_hist_snap {
	u64	b[KRT_HIST_NR];
	u64	count;
	u64	sum;
	u64	min;
	u64	max;
};

struct krt_stats_snap {
	u64			c[KRT_STAT_NR];
	u64			wc[KRT_WC_NR];
	struct krt_hist_snap	h[KRT_HIST_KINDS];
};

/**
 * struct krt_stats - statistics of a connection, peer or device
 * @pc: per-CPU counters, added to without a lock
 * @hpc: per-CPU histograms (peers), or NULL
 * @ha: shared atomic histograms (connections), or NULL
 * @base: the sums at the last reset, subtracted on read, NULL until the
 *	first reset; krt_stats_lock
 * @since: jiffies of creation or the last reset; krt_stats_lock
 * @inflight_hwm: most requests in flight on one connection (connections,
 *	and peers: the largest of their connections', kept when those are
 *	replaced); raised racily by the data path (krt_hwm_raise()), restarted
 *	by a reset
 * @mrs_hwm: most MRs of one connection's pool in use; as @inflight_hwm
 */
struct krt_stats {
	struct krt_stats_pcpu __percpu	*pc;
	struct krt_hist_pcpu __percpu	*hpc;
	struct krt_hist_shared		*ha;
	struct krt_stats_snap		*base;
	unsigned long			since;
	u32				inflight_hwm;
	u32				mrs_hwm;
};

extern struct mutex krt_stats_lock;
/* module parameter stats: off only to measure what counting costs */
DECLARE_STATIC_KEY_TRUE(krt_stats_on);
/* One counter of the table: its netlink attribute and its key. */
struct krt_stat_desc {
	u32		attr;
	const char	*key;
};

extern const struct krt_stat_desc krt_stats_table[KRT_STAT_NR];

int krt_stats_init(struct krt_stats *st, bool hist, bool shared_hist, gfp_t gfp);
void krt_stats_free(struct krt_stats *st);
u64 krt_stats_mem(bool hist, bool shared_hist);
void krt_stats_read(struct krt_stats *st, struct krt_stats_snap *out);
/*
 * Raise a high-water mark to @n.  No lock: two racing writers may lose the
 * smaller sample, which a mark can afford; a reset rewrites it under
 * krt_stats_lock.
 */
static inline void krt_hwm_raise(u32 *hwm, u32 n)
{
	if (n > READ_ONCE(*hwm))
		WRITE_ONCE(*hwm, n);
}

int krt_stats_prepare(struct krt_stats *st);
void krt_stats_reset(struct krt_stats *st);
u64 krt_hist_le(u32 i);
u64 krt_hist_pct(const struct krt_hist_snap *h, u32 permille);
void krt_stats_show(struct seq_file *m, const struct krt_stats_snap *s);
void krt_stats_show_lat(struct seq_file *m, const struct krt_stats_snap *s,
			bool buckets);

/**
 * struct krt_dev_caps - what krt needs to know of a device's limits
 * @frwr: fast registration work requests (MEM_MGT_EXTENSIONS)
 * @send_inv: remote invalidation through SEND_WITH_INV
 * @sg_gaps: IB_MR_TYPE_SG_GAPS registrations
 * @max_fr_pages: max_fast_reg_page_list_len
 * @max_qp_wr: largest work queue
 * @max_send_sge: scatter/gather entries per send WR
 * @max_recv_sge: scatter/gather entries per receive WR
 * @max_inline: inline data a RC QP accepts, probed at add time
 * @max_cqe: largest completion queue
 * @comp_vectors: completion vectors (interrupt sources) of the device
 * @ports: physical ports
 * @node_guid: node GUID, as ib_core keeps it
 *
 * Read-only once the device is added, so readable without a lock.
 */
struct krt_dev_caps {
	bool		frwr;
	bool		send_inv;
	bool		sg_gaps;
	u32		max_fr_pages;
	u32		max_qp_wr;
	u32		max_send_sge;
	u32		max_recv_sge;
	u32		max_inline;
	u32		max_cqe;
	u32		comp_vectors;
	u32		ports;
	__be64		node_guid;
};

/**
 * struct krt_device - krt's context for one RDMA device
 * @ref: lifetime; the ib_client holds one reference until remove
 * @entry: in krt_dev_list; protected by krt_dev_lock
 * @ibdev: the device; valid until @removed is set (krt_dev_lock)
 * @pd: protection domain, NULL when the device is unusable
 * @index: ib device index, stable for the device's life
 * @name: current device name; written under krt_dev_lock and
 *	krt_dev_name_lock (device.c), read under either (krt_dev_copy_name())
 * @caps: capabilities, read-only after add
 * @unusable: NULL, or why krt cannot use the device; read-only after add
 * @enabled: administrator's switch; protected by krt_dev_lock
 * @removed: the device is going away; protected by krt_dev_lock
 * @dbg_dir: debugfs folder; created and removed by the ib_client callbacks
 * @mem_used: bytes accounted to connections on this device (atomic)
 * @st: counters of its connections, past and present (never reset)
 */
struct krt_device {
	struct kref		ref;
	struct list_head	entry;
	struct ib_device	*ibdev;
	struct ib_pd		*pd;
	u32			index;
	char			name[KRT_DEV_NAME_MAX];
	struct krt_dev_caps	caps;
	const char		*unusable;
	bool			enabled;
	bool			removed;
	struct dentry		*dbg_dir;
	atomic64_t		mem_used;
	struct krt_stats	st;
};

/* Objects whose pointer is an rdma_cm_id's context start with this. */
enum krt_cm_ctx {
	KRT_CM_LISTENER = 1,
	KRT_CM_CONN,
};

/**
 * struct krt_listener - a local address krt accepts connections on
 * @ctx: KRT_CM_LISTENER
 * @entry: in krt_listeners; krt_pool_lock
 * @addr: address and port
 * @cm_id: listening id; krt_pool_lock (NULL once its device went away)
 */
/**
 * struct krt_listener - a local address krt accepts connections on
 * @ctx: KRT_CM_LISTENER
 * @entry: in krt_listeners; krt_pool_lock (and krt_listen_mutex to unlist)
 * @addr: address and port
 * @cm_id: the listening id, NULL while its device is gone; krt_pool_lock
 * @lost: times its device went away; krt_pool_lock
 * @binding: krt_listen_bind() creates its id; krt_pool_lock
 * @bind_lost: that id's device went away meanwhile; krt_pool_lock
 */
struct krt_listener {
	enum krt_cm_ctx		ctx;
	struct list_head	entry;
	struct sockaddr_storage	addr;
	struct rdma_cm_id	*cm_id;
	u32			lost;
	bool			binding;
	bool			bind_lost;
};

struct krt_peer;
struct krt_queue;

/**
 * struct krt_conn_fi - fault knobs of one connection (KRT_FAULT=y builds)
 * @drop_rx: drop the next N messages received (fault/drop_rx_conn); no
 *	lock: written by the knob, counted down with cmpxchg()
 * @delay_n: hold the next N messages received (fault/delay_rx); as @drop_rx
 * @delay_ms: how long each of them is held; no lock (READ_ONCE)
 * @dropped: messages dropped by @drop_rx, across reconnects
 * @delayed: messages held by @delay_n, across reconnects
 *
 * Heartbeats are never taken.  They live with the connection, not its
 * queue, so that a knob armed before a reconnect still applies after it.
 */
struct krt_conn_fi {
	u32		drop_rx;
	u32		delay_n;
	u32		delay_ms;
	atomic64_t	dropped;
	atomic64_t	delayed;
};

/**
 * struct krt_conn - one RC connection of a peer's pool
 * @ctx: KRT_CM_CONN
 * @ref: lifetime: the pool holds one reference
 * @rcu: frees it after a grace period (the peer's @dp_conns is read under RCU)
 * @entry: in the peer's @conns; krt_pool_lock
 * @peer: owning peer (holds a reference on it)
 * @index: position in the pool
 * @inbound: accepted from a listener rather than connected out
 * @state: enum krt_conn_state; krt_pool_lock
 * @dying: set under the cm handler lock: events are ignored from then on
 * @cm_id: the connection's id; krt_pool_lock; owned by the connection
 * @dev: device of the QP (reference), set when the route is known
 * @cq: completion queue, from the device's shared CQ pool; taken and
 *	put back with the QP; krt_pool_lock
 * @cq_nr: entries taken from @cq; krt_pool_lock
 * @pd: the connection's own protection domain, for its QP and MRs;
 *	created and freed with the QP; krt_pool_lock
 * @depth: work requests per direction
 * @qpn: local QP number
 * @laddr: local address; krt_pool_lock
 * @raddr: remote address; krt_pool_lock
 * @reason: last failure; krt_pool_lock
 * @release_work: tears the RDMA resources down outside cm handlers
 *	(holds a reference while queued)
 * @close_work: krt_conn_close() from a context that cannot wait
 * @fatal_work: fails the connection after a fatal QP event (holds a
 *	reference while queued)
 * @work_entry: on a closer's private list (only the one that unlisted it)
 * @start_entry: on the private list of the caller that added it to its
 *	pool, until started
 * @dev_entry: on krt_pool_dev_close_conns()'s list while its device goes
 * @q: data path (queue.c); published and cleared under krt_pool_lock
 * @dp_entry: in the peer's @dp_conns while it takes requests; peer->dp_lock
 * @dp_listed: @dp_entry is on the list; peer->dp_lock
 * @reconnect_work: next connect attempt of an outbound connection, or the
 *	bound (connect_timeout_ms) of the attempt in progress
 * @timeout_attempt: the attempt @reconnect_work bounds
 * @reconnects: times it came up again after the first time; krt_pool_lock
 * @attempt: connect attempts since its last success; krt_pool_lock
 * @state_time: jiffies of the last state change; krt_pool_lock
 * @next_attempt: jiffies of the scheduled attempt; krt_pool_lock
 * @was_up: it was active once; krt_pool_lock
 * @mem: bytes charged to the budget for this connection; krt_pool_lock
 * @hb_ms: heartbeat interval the connection uses (from the peer or the
 *	remote's private data); set before the queue starts
 * @hb_misses: heartbeats missed before the connection is reset
 * @max_io: inbound: the smaller of the client's max IO size and the local
 *	one, which its queue sizes scatterlists and MRs for; 0 on the client
 *	side (the local ``max_io``); set before the queue is created
 * @in_entry: inbound: in the list of every inbound connection; krt_in_lock
 * @st: counters and histograms, across reconnects
 * @qp_id: the cm id whose QP @q, @cq, @pd and @dev belong to; krt_pool_lock
 * @release_lock: serialises krt_conn_release() (taken before krt_pool_lock)
 * @fi: its fault knobs (fault.c), in KRT_FAULT=y builds only
 */
struct krt_conn {
	enum krt_cm_ctx		ctx;
	struct kref		ref;
	struct rcu_head		rcu;
	struct list_head	entry;
	struct krt_peer		*peer;
	u32			index;
	bool			inbound;
	u32			state;
	bool			dying;
	struct rdma_cm_id	*cm_id;
	struct krt_device	*dev;
	struct ib_cq		*cq;
	u32			cq_nr;
	struct ib_pd		*pd;
	u32			depth;
	u32			qpn;
	struct sockaddr_storage	laddr;
	struct sockaddr_storage	raddr;
	char			reason[64];
	struct work_struct	release_work;
	struct work_struct	close_work;
	struct work_struct	fatal_work;
	struct list_head	work_entry;
	struct list_head	start_entry;
	struct list_head	dev_entry;
	struct krt_queue	*q;
	struct list_head	dp_entry;
	bool			dp_listed;
	struct delayed_work	reconnect_work;
	u32			timeout_attempt; /* bounded by reconnect_work; krt_pool_lock */
	u32			reconnects;
	u32			attempt;
	unsigned long		state_time;
	unsigned long		next_attempt;
	bool			was_up;
	u64			mem;
	u32			nr_mrs;	/* MRs charged for; krt_mem_charge() */
	u32			hb_ms;
	u32			hb_misses;
	u32			max_io;
	struct list_head	in_entry;
	struct krt_stats	st;
	struct rdma_cm_id	*qp_id;
	struct mutex		release_lock;	/* krt_conn_release() */
#ifdef KRT_FAULT_INJECTION
	struct krt_conn_fi	fi;
#endif
};

/**
 * struct krt_peer_params - what peer add and peer set configure
 * @conns: pool size
 * @depth: queue depth per connection
 * @policy: enum krt_policy
 * @reconnect_ms: first reconnect delay
 * @reconnect_max_ms: cap of the exponential backoff
 * @loss_timeout_s: seconds without an active connection after which
 *	queued requests fail with -ENOTCONN
 * @hb_ms: heartbeat interval on idle connections
 * @hb_misses: heartbeat intervals without a sign of life before a reset
 *
 * Zero means default (add) or keep (set).
 */
struct krt_peer_params {
	u32	conns;
	u32	depth;
	u32	policy;
	u32	reconnect_ms;
	u32	reconnect_max_ms;
	u32	loss_timeout_s;
	u32	hb_ms;
	u32	hb_misses;
};

/**
 * struct krt_peer - a remote node and the pool of connections to it
 * @ref: lifetime; krt_peers holds one reference while listed
 * @entry: in krt_peers; krt_pool_lock
 * @name: unique name (inbound peers: "in-<node id>-<pool id>")
 * @addr: remote address and port (outbound peers)
 * @inbound: created by connections from the remote
 * @node_id: remote node id, 0 until known; krt_pool_lock
 * @pool_id: outbound: our id for the pool, sent in private data; inbound:
 *	the remote's; set before the peer is listed
 * @nr_conns: pool size; krt_pool_lock
 * @depth: queue depth for new connections; krt_pool_lock
 * @policy: enum krt_policy; krt_pool_lock
 * @state: enum krt_peer_state last announced; krt_pool_lock
 * @conns: the pool, by index; krt_pool_lock
 * @reason: last failure of one of its connections; krt_pool_lock
 * @reject: last reject reason received; krt_pool_lock
 * @dp_lock: protects @dp_conns' writers and @pending
 * @dp_conns: active outbound connections that take requests; RCU list,
 *	written under @dp_lock, read under rcu_read_lock() on submission
 * @dp_cursor: round-robin cursor of each CPU
 * @prm: configuration (reconnect, loss timeout, heartbeat); krt_pool_lock,
 *	read with READ_ONCE() elsewhere
 * @pending: requests waiting for an active connection; @dp_lock
 * @nr_pending: their number; @dp_lock
 * @pending_work: fails pending requests past their deadline or the loss
 *	timeout, and re-sends them when a connection is up
 * @down_since: jiffies since no connection is active (0: one is); @dp_lock
 * @err_time: jiffies of the last failure (0: none); krt_pool_lock
 * @resent: requests re-sent after their connection failed (atomic)
 * @reconnects: reconnects of its connections; krt_pool_lock
 * @mem: bytes charged for its connections (atomic)
 * @closing: being deleted: no reconnects, pending requests fail; @dp_lock
 * @was_up: a connection was active once; krt_pool_lock
 * @st: counters and histograms of its connections, past and present
 * @stats_mem: bytes of @st, charged to the memory budget while it lives
 * @dbg_dir: its debugfs folder (peers/<name>); krt_dbg_sync_lock
 * @dbg_conns_dir: its conns/ folder; krt_dbg_sync_lock
 * @dbg_conns: debugfs folders of its connection indexes; krt_dbg_sync_lock
 * @dbg_nr: how many of them exist; krt_dbg_sync_lock
 * @dbg_want: how many should; krt_dbg_sync_lock
 * @dbg_listed: seen in krt_peers by the last sync; krt_dbg_sync_lock
 * @dbg_entry: on debugfs.c's list of peers with a folder; krt_dbg_sync_lock
 */
struct krt_peer {
	struct kref		ref;
	struct list_head	entry;
	char			name[KRT_PEER_NAME_MAX];
	struct sockaddr_storage	addr;
	bool			inbound;
	u64			node_id;
	u16			pool_id;
	u32			nr_conns;
	u32			depth;
	u32			policy;
	u32			state;
	struct list_head	conns;
	char			reason[64];
	u32			reject;
	spinlock_t		dp_lock;	/* @dp_conns (writers), @pending */
	struct list_head	dp_conns;	/* RCU */
	u32 __percpu		*dp_cursor;
	struct krt_peer_params	prm;
	struct list_head	pending;
	u32			nr_pending;
	struct delayed_work	pending_work;
	unsigned long		down_since;
	unsigned long		err_time;
	atomic64_t		resent;
	u64			reconnects;
	atomic64_t		mem;
	bool			closing;
	bool			was_up;
	struct krt_stats	st;
	u64			stats_mem;
	struct dentry		*dbg_dir;
	struct dentry		*dbg_conns_dir;
	struct dentry		**dbg_conns;
	u32			dbg_nr;
	u32			dbg_want;
	bool			dbg_listed;
	struct list_head	dbg_entry;
};

/*
 * Add to a connection's counter, and to its peer's and device's.  From
 * the data path (the connection has a live queue) or under krt_pool_lock:
 * either keeps @conn->dev from going away.
 */
static inline void krt_stat_add(struct krt_conn *conn, u32 attr, u64 n)
{
	/* the data path runs between QP setup and krt_queue_destroy(): @dev is stable */
	struct krt_device *dev = READ_ONCE(conn->dev);
	u32 i = KRT_STAT_IDX(attr);

	if (!static_branch_likely(&krt_stats_on))
		return;
	this_cpu_add(conn->st.pc->c[i], n);
	this_cpu_add(conn->peer->st.pc->c[i], n);
	if (dev)
		this_cpu_add(dev->st.pc->c[i], n);
}

static inline void krt_stat_inc(struct krt_conn *conn, u32 attr)
{
	krt_stat_add(conn, attr, 1);
}

/* Add to a peer's counter only (events without a connection). */
static inline void krt_peer_stat_add(struct krt_peer *peer, u32 attr, u64 n)
{
	if (static_branch_likely(&krt_stats_on))
		this_cpu_add(peer->st.pc->c[KRT_STAT_IDX(attr)], n);
}

void krt_stats_lat(struct krt_conn *conn, struct krt_peer *peer,
		   enum krt_hist_kind kind, u64 ns);

/*
 * Nanoseconds since @start, a local_clock() of possibly another CPU:
 * local_clock() is monotonic per CPU only, so a small negative difference
 * counts as 0 rather than as 584 years.
 */
static inline u64 krt_ns_since(u64 start)
{
	s64 d = (s64)(local_clock() - start);

	return d > 0 ? d : 0;
}

void krt_stats_wc(struct krt_conn *conn, enum ib_wc_status status);

/* pool.c */
extern struct mutex krt_pool_lock;
extern struct list_head krt_peers;
extern struct list_head krt_listeners;
extern u64 krt_node_id;
extern unsigned int krt_port;
extern u32 krt_pool_gen;
extern unsigned int krt_max_peer_conns;
extern unsigned int krt_max_inbound_depth;

/* heartbeat bounds: what a remote may ask for, what peer set allows */
#define KRT_HB_MIN_MS		50
#define KRT_HB_MAX_MS		60000
#define KRT_HB_MAX_MISSES	100

int krt_pool_init(void);
void krt_pool_exit(void);
void krt_pool_destroy_wq(void);
bool krt_pool_accept_from(const struct sockaddr_storage *src);
bool krt_pool_check_limit(struct krt_peer *peer);
bool krt_pool_inbound_room(const struct sockaddr_storage *src, u32 replacing);
bool krt_addr_equal(const struct sockaddr_storage *a,
		    const struct sockaddr_storage *b, bool port);
u64 krt_conn_mem(u32 depth, bool inbound, u32 max_io, u32 mrs);
void krt_mem_charge_mrs(struct krt_conn *conn, u32 nr, u32 pages);
int krt_mem_charge(struct krt_conn *conn, struct ib_device *ibdev, u32 max_io);
void krt_mem_uncharge(struct krt_conn *conn);
bool krt_peer_lost(struct krt_peer *peer);
void krt_pool_drop_empty_inbound(struct krt_peer *peer);
struct krt_peer *krt_pool_inbound_peer(u64 node_id, u16 pool_id, u32 nr_conns,
				       u32 depth);
void krt_pool_dev_remove(struct krt_device *dev);
void krt_listen_lost(struct krt_listener *l);
int krt_listen_add(struct sockaddr_storage *addr, struct netlink_ext_ack *extack);
int krt_listen_del(struct sockaddr_storage *addr, struct netlink_ext_ack *extack);
int krt_peer_add(const char *name, struct sockaddr_storage *addr,
		 const struct krt_peer_params *prm, struct netlink_ext_ack *extack);
int krt_peer_del(const char *name, struct netlink_ext_ack *extack);
int krt_peer_set(const char *name, const struct krt_peer_params *prm,
		 struct netlink_ext_ack *extack);
int krt_peer_reconnect(const char *name, struct netlink_ext_ack *extack);
int krt_conn_reset(const char *name, u32 index, struct netlink_ext_ack *extack);
int krt_conn_inject_fatal(const char *name, u32 index);
struct krt_conn *krt_conn_get_by_name(const char *name, u32 index);
u32 krt_peer_next_attempt_ms(struct krt_peer *peer, bool *scheduled);
u32 krt_peer_loss_left_ms(struct krt_peer *peer, bool *counting);
u32 krt_peer_attempt(struct krt_peer *peer);
u32 krt_peer_queued(struct krt_peer *peer);
u64 krt_mem_budget(void);
u64 krt_mem_total(void);
struct krt_peer *krt_peer_find_locked(const char *name);
u32 krt_peer_conns_up(struct krt_peer *peer);
void krt_peer_update_state(struct krt_peer *peer);
void krt_conn_start(struct krt_conn *conn);
void krt_conn_fail(struct krt_conn *conn, const char *reason);
int krt_conn_inject_qp_fatal(struct krt_conn *conn);
struct krt_conn *krt_conn_alloc(struct krt_peer *peer, u32 index, bool inbound);
void krt_conn_put(struct krt_conn *conn);
void krt_peer_put(struct krt_peer *peer);
int krt_conn_setup_qp(struct krt_conn *conn, struct rdma_cm_id *id);
void krt_conn_release(struct krt_conn *conn);
void krt_conn_close(struct krt_conn *conn);
void krt_conn_established(struct krt_conn *conn, struct rdma_cm_id *id);
void krt_conn_destroy_qp(struct krt_conn *conn, struct rdma_cm_id *id);
struct krt_queue *krt_conn_take_queue(struct krt_conn *conn);
bool krt_conn_set_state(struct krt_conn *conn, enum krt_conn_state state,
			const char *reason);
void krt_conn_qp_event(struct ib_event *ev, void *ctx);
void krt_peer_dp_add(struct krt_conn *conn);
void krt_peer_dp_del(struct krt_conn *conn);
void krt_peer_resend(struct krt_peer *peer, struct krt_req *req, int status);
void krt_req_finish(struct krt_req *req, int status);
void krt_req_finish_on(struct krt_req *req, int status, struct krt_conn *conn);
void krt_peer_pending_work(struct work_struct *work);
void krt_peer_mark_closing(struct krt_peer *peer);
void krt_peer_shutdown(struct krt_peer *peer);

#define KRT_RESOLVE_TIMEOUT_MS	2000
#define KRT_MAX_DEPTH		4096
/*
 * largest inline SEND a QP is created for: a bare header (a heartbeat, a
 * request or reply without a message).  A message goes by its registered
 * buffer, as nvme-rdma sends every capsule: the inline size sizes every
 * send queue entry (rxe: 208 bytes + the larger of it and 16 per SGE,
 * rounded up to a power of two; mlx5: in 64-byte blocks).
 */
#define KRT_QP_INLINE		48
/* CQ entries a connection of depth @d takes from the shared CQ pool */
#define KRT_CONN_CQES(d)	(4 * (d) + 2)
/*
 * Charged for what the device's driver allocates (krt_conn_mem()): a send
 * queue entry's header (rxe: 208 bytes before its SGEs or inline data), a
 * receive queue entry of one SGE, and an entry of the shared CQ pool's
 * CQs: twice rxe's (a struct ib_wc padded to 128 bytes), for the room
 * that CQs allocated for every completion vector at once leave.  The
 * pool's first CQs on a device (one per CPU, 1 MiB each on rxe, kept
 * until the device goes) are the device's, not a connection's.
 */
#define KRT_WQE_HDR		208
#define KRT_RQE_MEM		64
#define KRT_CQE_MEM		256
/*
 * Charged per connection whatever its depth: krt's connection and queue,
 * its cm id, the driver's QP (rxe: its responder's read resources) and
 * its debugfs entries
 */
#define KRT_CONN_FIXED		16384

/* cm.c */
#define KRT_REJ_MAX	KRT_REJ_IDENTITY
extern atomic_t krt_cm_rejects[KRT_REJ_MAX + 1];
extern atomic_t krt_cm_malformed;

int krt_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);
const char *krt_reject_name(u32 reason);

/* device.c */
extern struct mutex krt_dev_lock;
extern struct list_head krt_dev_list;
extern bool krt_autoenable;

int krt_device_init(void);
void krt_device_exit(void);
extern struct ib_client krt_ib_client;

struct krt_device *krt_dev_find_locked(const char *name);
struct krt_device *krt_dev_get_by_ibdev(struct ib_device *ibdev);
void krt_dev_put(struct krt_device *dev);
enum krt_dev_state krt_dev_state(const struct krt_device *dev);
int krt_dev_set_enabled(struct krt_device *dev, bool enabled);
int krt_dev_stats_reset(void);
const char *krt_dev_state_name(enum krt_dev_state state);
void krt_dev_copy_name(const struct krt_device *dev, char *buf);

/* queue.c: the data path of one connection */
extern unsigned int krt_max_io;
u32 krt_q_max_io(u32 remote);
extern unsigned int krt_req_timeout_ms;
extern unsigned int krt_rnr_retry;

/* scatter/gather entries per RDMA WR of a server transfer without an MR */
#define KRT_SRV_SGE	16
/* client: a slot's own send buffer, for a header and a short message */
#define KRT_SLOT_BUF	512
/*
 * client: send entries of a request's SEND, its buffer and the pages of
 * an inline write (at most 4048 bytes: 2 pages at any offset)
 */
#define KRT_CLT_SGE	3
/* MRs of a server queue that moves its data without: krt_q_srv_nr_mrs() */
#define KRT_SRV_MRS	8

/**
 * struct krt_qstats - counters of one connection's data path
 *
 * Updated under the queue's lock, read without it (debugfs).
 */
struct krt_qstats {
	u64	reqs_sent;
	u64	reqs_done;
	u64	reps_recv;
	u64	srv_reqs;
	u64	srv_reps;
	u64	deferred;
	u64	bytes_read;
	u64	bytes_written;
	u64	late_replies;
	u64	timeouts;
	u64	waits;
	u64	credit_waits;
	u64	sq_waits;
	u64	malformed;
	u64	wc_errors;
	u64	local_inv;
	u64	remote_inv;
	u64	heartbeats;
	u64	hb_timeouts;
	u64	doorbells;	/* ib_post_send() calls */
	u64	wrs;		/* send WRs they posted */
	u64	srv_direct;	/* server transfers without an MR */
	u64	srv_mr;		/* server transfers through an MR */
	u64	large_waits;	/* requests that waited for a large set */
	u64	large_deferred;	/* server requests deferred for one */
	u64	inline_writes;	/* client writes sent with their data inline */
	u64	srv_inline;	/* server: writes served from inline data */
	u64	msg_buf_waits;	/* requests that waited for a message buffer */
	u64	mr_waits;	/* requests that waited for an MR */
};

/* Global data-path counters (all connections, past and present). */
struct krt_dp_stats {
	atomic64_t	malformed;
	atomic64_t	late_replies;
	atomic64_t	timeouts;
	atomic64_t	wc_errors;
	atomic64_t	rnr_errors;
	atomic64_t	backlog_full;
	atomic64_t	resets;
	atomic64_t	api_misuse;
	atomic64_t	dropped;
	atomic64_t	inline_checked;
	atomic64_t	inline_bad;
	atomic64_t	stale_refs;
	atomic64_t	stale_refs_gone;
	atomic64_t	replies_dropped;
};

extern struct krt_dp_stats krt_dp_stats;

struct krt_queue *krt_queue_create(struct krt_conn *conn, struct rdma_cm_id *id,
				   struct krt_device *dev, u32 max_inline);
void krt_queue_destroy(struct krt_conn *conn);
void krt_queue_free(struct krt_queue *q);
void krt_queue_reset(struct krt_queue *q, const char *why);
void krt_queue_set_remote(struct krt_queue *q, u32 credits, u32 depth,
			  u32 max_io, u32 inline_data);
u32 krt_queue_max_io(struct krt_queue *q);
u32 krt_queue_inline_data(struct krt_queue *q);
u32 krt_q_inline_offer(void);
void krt_queue_start(struct krt_queue *q);
void krt_queue_stop(struct krt_queue *q);
int krt_queue_submit(struct krt_queue *q, struct krt_req *req);
u32 krt_queue_inflight(struct krt_queue *q);
u32 krt_queue_mrs(struct krt_queue *q, u32 *used);
/*
 * Pages of a slot's or server request's own scatterlist and MR: a 64 KiB
 * buffer at any offset.  Larger ones take one of the queue's large sets.
 */
#define KRT_SG_OWN	17
/* default bound on one queue's large sets, in bytes of buffer: krt_q_nr_large() */
#define KRT_LARGE_BYTES	(8U << 20)
u32 krt_q_nr_large(u32 depth, u32 pages);
u32 krt_q_clt_nr_mrs(u32 depth);
u32 krt_q_srv_charge_mrs(struct ib_device *ibdev, u32 depth, u32 max_io);
u32 krt_q_nr_mbufs(u32 depth);
void krt_queue_show(struct krt_queue *q, struct seq_file *m);
void krt_srv_req_release(struct krt_srv_req *sreq);

/* frwr.c: fast registration of page lists */
int krt_frwr_check(const struct bio_vec *bv, unsigned int nr, u32 *len,
		   u32 *pages);
void krt_frwr_sg_fill(struct scatterlist *sgl, const struct bio_vec *bv, unsigned int nr);
int krt_frwr_map(struct ib_device *ibdev, struct scatterlist *sgl, unsigned int nr,
		 enum dma_data_direction dir);
int krt_frwr_reg(struct ib_mr *mr, struct scatterlist *sgl, int nents,
		 struct ib_reg_wr *reg, int access);
void krt_frwr_inv(struct ib_send_wr *wr, struct ib_mr *mr, struct ib_cqe *cqe);

/* api.c: peers and services as ULPs see them */
struct krt_service *krt_service_get(u16 id);
void krt_service_put(struct krt_service *svc);

/* testsvc.c: built-in test service, ping and xfer */
struct krt_test_args {
	char	peer[KRT_PEER_NAME_MAX];
	u32	op;
	u32	count;
	u32	size;
	u32	depth;
	u32	threads;
	u32	timeout_ms;
	bool	nowait;
	bool	noretry;
};

struct krt_test_result {
	u64	ok;
	u64	errors;
	u64	mismatches;
	u64	double_done;
	u64	bytes;
	u64	elapsed_ns;
	u64	lat_min;
	u64	lat_avg;
	u64	lat_p99;
	u64	lat_max;
	s32	first_error;
	u64	eagain;
	u64	resent;
};

extern bool krt_test_service;
int krt_test_init(void);
void krt_test_exit(void);
int krt_test_run(const struct krt_test_args *args, struct krt_test_result *res,
		 struct netlink_ext_ack *extack);
void krt_test_hold(bool hold);
bool krt_test_holding(void);

/*
 * fault.c: fault injection, built with KRT_FAULT=y only (see its DOC);
 * inline stubs otherwise, so that a normal build tests nothing on its
 * data path.
 */
#ifdef KRT_FAULT_INJECTION
extern bool krt_fi_mask_frwr;
extern u32 krt_fi_cm_req;
extern u32 krt_fi_corrupt_msg;
extern u32 krt_fi_drop_rx;
extern u32 krt_fi_drop_rep;
extern bool krt_fi_silent;
extern unsigned long krt_fi_stall_until;
extern unsigned long krt_fi_hold_sends_until;
void krt_fault_init(struct dentry *root);
bool krt_fault_reconnect(void);
bool krt_fault_drop_take(void);
bool krt_fault_drop_rep_take(void);
u32 krt_fault_corrupt_take(void);
bool krt_fault_dump_intr(void);
bool krt_fault_conn_drop_take(struct krt_conn *conn);
u32 krt_fault_conn_delay_take(struct krt_conn *conn);
void krt_fault_conn_show(struct krt_conn *conn, struct seq_file *m);

/* fault/mask_frwr: devices added from now on lack FRWR */
static inline bool krt_fault_mask_frwr(void)
{
	return READ_ONCE(krt_fi_mask_frwr);
}

/* fault/cm_req: how to corrupt outbound connect private data, or 0 */
static inline u32 krt_fault_cm_req(void)
{
	return READ_ONCE(krt_fi_cm_req);
}

/* fault/corrupt_msg: how to corrupt this message (taken once), or 0 */
static inline u32 krt_fault_corrupt(void)
{
	return unlikely(READ_ONCE(krt_fi_corrupt_msg)) ? krt_fault_corrupt_take() : 0;
}

/* fault/drop_rx: drop this received message (counted down) */
static inline bool krt_fault_drop(void)
{
	return unlikely(READ_ONCE(krt_fi_drop_rx)) && krt_fault_drop_take();
}

/* fault/drop_replies: drop this reply a client received (counted down) */
static inline bool krt_fault_drop_reply(void)
{
	return unlikely(READ_ONCE(krt_fi_drop_rep)) && krt_fault_drop_rep_take();
}

/* fault/silent: drop every received message */
static inline bool krt_fault_silent(void)
{
	return unlikely(READ_ONCE(krt_fi_silent));
}

/* a fault set for MS milliseconds (fault/stall_data, fault/hold_sends) lasts */
static inline bool krt_fault_until(const unsigned long *knob)
{
	unsigned long until = READ_ONCE(*knob);

	return unlikely(until) && time_before(jiffies, until);
}

/* fault/stall_data: server transfers wait as if the SQ were full */
static inline bool krt_fault_stall_data(void)
{
	return krt_fault_until(&krt_fi_stall_until);
}

/* fault/hold_sends: SEND completions of by-pages inline writes and long messages wait */
static inline bool krt_fault_hold_sends(void)
{
	return krt_fault_until(&krt_fi_hold_sends_until);
}

/* fault/drop_rx_conn: drop this message @conn received (counted down) */
static inline bool krt_fault_conn_drop(struct krt_conn *conn)
{
	return unlikely(READ_ONCE(conn->fi.drop_rx)) && krt_fault_conn_drop_take(conn);
}

/* fault/delay_rx: ms to hold this message @conn received (counted down), or 0 */
static inline u32 krt_fault_conn_delay(struct krt_conn *conn)
{
	return unlikely(READ_ONCE(conn->fi.delay_n)) ? krt_fault_conn_delay_take(conn) : 0;
}
#else
static inline void krt_fault_init(struct dentry *root)
{
}

static inline bool krt_fault_dump_intr(void)
{
	return false;
}

static inline bool krt_fault_reconnect(void)
{
	return false;
}

static inline bool krt_fault_mask_frwr(void)
{
	return false;
}

static inline u32 krt_fault_cm_req(void)
{
	return 0;
}

static inline u32 krt_fault_corrupt(void)
{
	return 0;
}

static inline bool krt_fault_drop(void)
{
	return false;
}

static inline bool krt_fault_drop_reply(void)
{
	return false;
}

static inline bool krt_fault_silent(void)
{
	return false;
}

static inline bool krt_fault_stall_data(void)
{
	return false;
}

static inline bool krt_fault_hold_sends(void)
{
	return false;
}

static inline bool krt_fault_conn_drop(struct krt_conn *conn)
{
	return false;
}

static inline u32 krt_fault_conn_delay(struct krt_conn *conn)
{
	return 0;
}

static inline void krt_fault_conn_show(struct krt_conn *conn, struct seq_file *m)
{
}
#endif

#if defined(KRT_FAULT_INJECTION) && defined(CONFIG_FAULT_INJECTION_DEBUG_FS)
bool krt_fault_connect(void);
bool krt_fault_register(void);
#else
/* fault/connect and fault/register need the kernel's fault injection */
static inline bool krt_fault_connect(void)
{
	return false;
}

static inline bool krt_fault_register(void)
{
	return false;
}
#endif

void krt_debugfs_init(void);
void krt_debugfs_exit(void);
void krt_debugfs_dev_add(struct krt_device *dev);
void krt_debugfs_dev_del(struct krt_device *dev);
void krt_debugfs_dev_rename(struct krt_device *dev, const char *old);
void krt_debugfs_peers_changed(void);

/*
 * A peer or connection was listed or unlisted: dumps restart, debugfs
 * follows.  Caller holds krt_pool_lock (debugfs's unload relies on it).
 */
static inline void krt_pool_changed(void)
{
	lockdep_assert_held(&krt_pool_lock);
	krt_pool_gen++;
	krt_debugfs_peers_changed();
}

/* netlink.c */
int __init krt_netlink_init(void);
void krt_netlink_exit(void);
void krt_nl_dev_event(struct krt_device *dev, u8 cmd);
void krt_nl_peer_event(struct krt_peer *peer, u8 cmd);
void krt_nl_conn_event(struct krt_conn *conn);

extern struct workqueue_struct *krt_wq;
extern struct workqueue_struct *krt_close_wq;

#endif /* _KRT_INTERNAL_H */
