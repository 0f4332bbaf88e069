// SPDX-License-Identifier: GPL-2.0
/*
 * krt: peers, their connection pools, and listeners.
 *
 * DOC: Pools
 *
 * A peer is a remote node reached over a pool of connections.  Outbound
 * peers are configured (``krtctl peer add``): krt opens ``conns``
 * connections to the peer's address, each with ``depth`` work requests
 * per direction.  Connections from a remote node arrive on a listener and
 * are grouped by the node id and pool id in their private data (one
 * inbound peer per pool of the remote), named ``in-<node id>-<pool id>``.
 * Limits: ``max_conns`` outbound connections in all, ``max_peer_conns``
 * per peer; inbound ones separately, ``max_inbound_conns`` in all and
 * ``max_inbound_per_addr`` per source address (both counting connections
 * still closing), so a flood from remotes cannot lock the administrator
 * out of ``peer add``; with ``accept=configured`` only addresses of
 * configured peers may connect.
 *
 * DOC: Memory budget
 *
 * Each connection is charged, before anything is allocated, an estimate
 * from above of what it holds, krt's and its device driver's: receive
 * ring, request or reply buffers, scatterlists, MRs with their page
 * lists, work queues and its share of the shared CQs (krt_conn_mem());
 * only a server queue whose QP takes fewer SGEs than its device said is
 * charged more once set up (krt_mem_charge_mrs()).  The charges of all
 * connections and peers' statistics stay within ``mem_budget_mb``
 * (default: a quarter of RAM), inbound connections and the statistics of
 * the peers remotes made within half of it, a peer's within ``peer_mem_mb``
 * (default: a quarter of the budget).  What does not fit is refused: an
 * extack error for ``peer add`` and ``peer set``, reject reason
 * "resources" for an inbound connection.  A charge is returned when the
 * connection is freed, so connections still closing count.
 *
 * krt_pool_lock (a mutex) protects the peer and listener lists and every
 * peer and connection field marked so; it is the control plane's lock and
 * never held across rdma_destroy_id() or a wait for a cm handler.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include "krt.h"
#include "wire.h"
#include "trace.h"

/* Protects krt_peers, krt_listeners and the fields of peers and conns. */
DEFINE_MUTEX(krt_pool_lock);
LIST_HEAD(krt_peers);
LIST_HEAD(krt_listeners);
struct workqueue_struct *krt_wq;
/*
 * Closes, which wait for works on krt_wq (release, reconnect): never on
 * krt_wq itself, whose rescuer would wait for itself under memory
 * pressure.
 */
struct workqueue_struct *krt_close_wq;
/* Pool id of the next outbound peer, sent in private data; krt_pool_lock. */
static u16 krt_pool_next_id;
/* Set at unload: no new peer or listener; krt_pool_lock. */
static bool krt_pool_closing;
/* Changes whenever a peer or connection joins or leaves a list; krt_pool_lock. */
u32 krt_pool_gen = 1;
/* Every inbound connection alive, closing ones included; krt_in_lock. */
static LIST_HEAD(krt_in_conns);
static DEFINE_SPINLOCK(krt_in_lock);
/* Bytes charged by all connections, and by inbound ones. */
static atomic64_t krt_mem_all = ATOMIC64_INIT(0);
static atomic64_t krt_mem_in = ATOMIC64_INIT(0);

unsigned int krt_port = 7471;
module_param_named(port, krt_port, uint, 0444);
MODULE_PARM_DESC(port, "Default port for listeners and peers (default: 7471)");

static unsigned int krt_max_conns = 1024;
module_param_named(max_conns, krt_max_conns, uint, 0644);
MODULE_PARM_DESC(max_conns, "Outbound connections in all peers (inbound ones: max_inbound_conns) (default: 1024)");

unsigned int krt_max_peer_conns = 64;
module_param_named(max_peer_conns, krt_max_peer_conns, uint, 0644);
MODULE_PARM_DESC(max_peer_conns, "Connections per peer, and highest inbound index + 1 (default: 64)");

unsigned int krt_max_inbound_depth = 128;
module_param_named(max_inbound_depth, krt_max_inbound_depth, uint, 0644);
MODULE_PARM_DESC(max_inbound_depth, "Largest queue depth granted to a remote's connection (default: 128)");

static unsigned int krt_max_inbound_conns = 256;
module_param_named(max_inbound_conns, krt_max_inbound_conns, uint, 0644);
MODULE_PARM_DESC(max_inbound_conns, "Inbound connections in all, closing ones included (default: 256)");

static unsigned int krt_max_inbound_per_addr = 128;
module_param_named(max_inbound_per_addr, krt_max_inbound_per_addr, uint, 0644);
MODULE_PARM_DESC(max_inbound_per_addr, "Inbound connections per source address, closing ones included (default: 128)");

static unsigned int krt_mem_budget_mb;
module_param_named(mem_budget_mb, krt_mem_budget_mb, uint, 0644);
MODULE_PARM_DESC(mem_budget_mb, "MiB all connections may hold, 0 for a quarter of RAM (default: 0)");

static unsigned int krt_peer_mem_mb;
module_param_named(peer_mem_mb, krt_peer_mem_mb, uint, 0644);
MODULE_PARM_DESC(peer_mem_mb, "MiB one peer's connections may hold, 0 for a quarter of the budget (default: 0)");

static unsigned int krt_reconnect_ms = 100;
module_param_named(reconnect_ms, krt_reconnect_ms, uint, 0644);
MODULE_PARM_DESC(reconnect_ms, "Default first reconnect delay, ms (default: 100)");

static unsigned int krt_reconnect_max_ms = 5000;
module_param_named(reconnect_max_ms, krt_reconnect_max_ms, uint, 0644);
MODULE_PARM_DESC(reconnect_max_ms, "Default cap of the reconnect backoff, ms (default: 5000)");

static unsigned int krt_loss_timeout_s = 30;
module_param_named(loss_timeout_s, krt_loss_timeout_s, uint, 0644);
MODULE_PARM_DESC(loss_timeout_s, "Default seconds without a connection before queued requests fail with ENOTCONN (default: 30)");

static unsigned int krt_hb_ms = 500;
module_param_named(hb_ms, krt_hb_ms, uint, 0644);
MODULE_PARM_DESC(hb_ms, "Default heartbeat interval on idle connections, ms (default: 500)");

static unsigned int krt_hb_misses = 4;
module_param_named(hb_misses, krt_hb_misses, uint, 0644);
MODULE_PARM_DESC(hb_misses, "Default heartbeat intervals without a sign of life before a reset (default: 4)");

static char *krt_accept = "any";
module_param_named(accept, krt_accept, charp, 0444);
MODULE_PARM_DESC(accept, "Who may connect: 'any' (default) or 'configured' (addresses of configured peers only)");

u64 krt_node_id;
module_param_named(node_id, krt_node_id, ullong, 0444);
MODULE_PARM_DESC(node_id, "This node's id in connection private data (default: random at load)");

static u32 krt_list_len(struct list_head *head)
{
	struct list_head *p;
	u32 n = 0;

	list_for_each(p, head)
		n++;
	return n;
}

/* Outbound connections of every peer.  Caller holds krt_pool_lock. */
static u32 krt_conns_total(void)
{
	struct krt_peer *peer;
	u32 n = 0;

	list_for_each_entry(peer, &krt_peers, entry)
		if (!peer->inbound)
			n += krt_list_len(&peer->conns);
	return n;
}

/**
 * krt_mem_budget() - bytes all connections may hold
 *
 * Return: ``mem_budget_mb``, or a quarter of RAM when it is 0.
 */
u64 krt_mem_budget(void)
{
	u32 mb = READ_ONCE(krt_mem_budget_mb);

	return mb ? (u64)mb << 20 : ((u64)totalram_pages() << PAGE_SHIFT) / 4;
}

/**
 * krt_mem_total() - bytes charged by all connections now
 *
 * Return: the sum of their charges.
 */
u64 krt_mem_total(void)
{
	return atomic64_read(&krt_mem_all);
}

static u64 krt_peer_mem_cap(void)
{
	u32 mb = READ_ONCE(krt_peer_mem_mb);

	return mb ? (u64)mb << 20 : krt_mem_budget() / 4;
}

/*
 * What the device's driver allocates for a work queue of @n entries of
 * @size bytes: rxe and mlx5 round both up to a power of two
 * (rxe one entry more), and the buffer to whole pages.
 */
static u64 krt_wq_mem(u32 n, u32 size)
{
	return PAGE_ALIGN((u64)roundup_pow_of_two(n + 1) * roundup_pow_of_two(size)) +
	       PAGE_SIZE;
}

/*
 * An MR of @pages pages: the driver's page list in whole pages at 16
 * bytes an entry (rxe's map; mlx5's, 8 bytes an entry and up to 2 KiB of
 * alignment, takes 4 KiB of slab for 17 pages),
 * the driver's MR and the core's.
 */
static u64 krt_mr_mem(u64 pages)
{
	return PAGE_ALIGN(pages * 16) + 1024;
}

/**
 * krt_conn_mem() - what a connection of a given depth holds, in bytes
 * @depth: queue depth
 * @inbound: server side (larger work requests)
 * @max_io: largest data buffer the remote may send (a server's client), or
 *	0 for the local max_io; MRs and scatterlists are sized for the
 *	smaller of it and the local max_io (krt_q_max_io())
 * @mrs: MRs of up to KRT_SG_OWN pages it keeps: a client's
 *	krt_q_clt_nr_mrs(), a server's krt_q_srv_charge_mrs()
 *
 * An estimate from above of the memory of one connection, krt's and what
 * the device's driver allocates for it: receive ring, request buffers (a
 * client's slot buffers of KRT_SLOT_BUF and its few full-size ones,
 * krt_q_nr_mbufs()) or reply buffers, per-request scatterlists of
 * KRT_SG_OWN pages, @mrs MRs of as many pages, the few large sets (krt_q_nr_large()),
 * the send and receive queues (a send entry: KRT_WQE_HDR plus the larger
 * of 16 bytes per SGE and the inline size) and the connection's share of the
 * shared CQs (KRT_CQE_MEM per entry).
 *
 * Return: bytes.
 */
u64 krt_conn_mem(u32 depth, bool inbound, u32 max_io, u32 mrs)
{
	u64 pages = DIV_ROUND_UP(krt_q_max_io(max_io), PAGE_SIZE) + 1;
	u64 own = min_t(u64, pages, KRT_SG_OWN);
	u32 sge = inbound ? KRT_SRV_SGE : KRT_CLT_SGE;
	/* the few large sets: scatterlist, MR */
	u64 large = (u64)krt_q_nr_large(depth, pages) *
		    (pages * sizeof(struct scatterlist) + krt_mr_mem(pages));
	/* receive buffer; request buffer, or reply buffer holding the request */
	u64 per = KRT_MSG_BUF + (inbound ? KRT_MSG_BUF : KRT_SLOT_BUF) +
		  /* own scatterlist (one array for all) */
		  own * sizeof(struct scatterlist) +
		  512 +					/* slot or server request */
		  /* server: 3 RDMA WRs of KRT_SRV_SGE entries */
		  (inbound ? KRT_SRV_SGE * 3 * sizeof(struct ib_sge) +
			     3 * sizeof(struct ib_rdma_wr) : 0);
	/* 3 send entries per request (conn.c), +1 each for the drain */
	u64 wqs = krt_wq_mem(3 * depth + 1,
			     KRT_WQE_HDR + max_t(u32, sge * sizeof(struct ib_sge),
						 KRT_QP_INLINE)) +
		  krt_wq_mem(depth + 1, KRT_RQE_MEM) +
		  (u64)KRT_CONN_CQES(depth) * KRT_CQE_MEM;
	u64 mbufs = inbound ? 0 : (u64)krt_q_nr_mbufs(depth) * KRT_MSG_BUF;

	/* plus what does not grow with the depth, and its counters (stats.c) */
	return (u64)depth * per + mrs * krt_mr_mem(own) + large + wqs + mbufs +
	       KRT_CONN_FIXED + krt_stats_mem(true, true);
}

/**
 * krt_mem_charge() - charge a new connection to the budget
 * @conn: the connection, with its depth set, not yet listed
 * @ibdev: the device of an inbound connection, or NULL
 * @max_io: the max IO size the connection may use
 *
 * Sets @conn->nr_mrs, the MRs its queue will keep.  Caller holds
 * krt_pool_lock.
 *
 * Return: 0, or -ENOSPC over the budget, the inbound share or the peer's
 * cap (nothing charged then).
 */
int krt_mem_charge(struct krt_conn *conn, struct ib_device *ibdev, u32 max_io)
{
	u32 mrs = conn->inbound && ibdev ?
		  krt_q_srv_charge_mrs(ibdev, conn->depth, max_io) :
		  krt_q_clt_nr_mrs(conn->depth);
	u64 mem = krt_conn_mem(conn->depth, conn->inbound, max_io, mrs);
	u64 budget = krt_mem_budget();

	lockdep_assert_held(&krt_pool_lock);
	if (atomic64_read(&krt_mem_all) + mem > budget ||
	    (conn->inbound && atomic64_read(&krt_mem_in) + mem > budget / 2) ||
	    atomic64_read(&conn->peer->mem) + mem > krt_peer_mem_cap())
		return -ENOSPC;
	conn->mem = mem;
	conn->nr_mrs = mrs;
	atomic64_add(mem, &krt_mem_all);
	atomic64_add(mem, &conn->peer->mem);
	if (conn->inbound) {
		atomic64_add(mem, &krt_mem_in);
		spin_lock_bh(&krt_in_lock);
		list_add_tail(&conn->in_entry, &krt_in_conns);
		spin_unlock_bh(&krt_in_lock);
	}
	return 0;
}

/**
 * krt_mem_charge_mrs() - a queue keeps more MRs than its connection was charged for
 * @conn: the connection, charged
 * @nr: MRs its queue keeps
 * @pages: pages of each
 *
 * A server queue whose QP cannot move every buffer without an MR, on a
 * device whose attributes said it could (krt_q_srv_charge_mrs()), keeps
 * one per request: the difference is charged, over the budget if need be
 * (its queue is being set up; it is returned with the rest).  Nothing to
 * do for a queue as charged.  Takes krt_pool_lock; may sleep.
 */
void krt_mem_charge_mrs(struct krt_conn *conn, u32 nr, u32 pages)
{
	u64 more;

	mutex_lock(&krt_pool_lock);
	if (conn->mem && nr > conn->nr_mrs) {
		more = (u64)(nr - conn->nr_mrs) * krt_mr_mem(pages);
		conn->nr_mrs = nr;
		conn->mem += more;
		atomic64_add(more, &krt_mem_all);
		atomic64_add(more, &conn->peer->mem);
		if (conn->inbound)
			atomic64_add(more, &krt_mem_in);
	}
	mutex_unlock(&krt_pool_lock);
}

/**
 * krt_mem_uncharge() - a connection is freed: return its charge
 * @conn: the connection; any context
 */
void krt_mem_uncharge(struct krt_conn *conn)
{
	if (!conn->mem)
		return;
	atomic64_sub(conn->mem, &krt_mem_all);
	atomic64_sub(conn->mem, &conn->peer->mem);
	if (conn->inbound) {
		atomic64_sub(conn->mem, &krt_mem_in);
		spin_lock_bh(&krt_in_lock);
		list_del_init(&conn->in_entry);
		spin_unlock_bh(&krt_in_lock);
	}
	conn->mem = 0;
}

/**
 * krt_pool_inbound_room() - may one more inbound connection come from @src?
 * @src: the remote's address
 * @replacing: connections of @src the new one replaces (still counted)
 *
 * Counts every inbound connection alive, closing ones included, whatever
 * node or pool id they claimed.
 *
 * Return: true if ``max_inbound_conns`` and ``max_inbound_per_addr`` allow it.
 */
bool krt_pool_inbound_room(const struct sockaddr_storage *src, u32 replacing)
{
	u32 all = 0, here = 0;
	struct krt_conn *c;

	spin_lock_bh(&krt_in_lock);
	list_for_each_entry(c, &krt_in_conns, in_entry) {
		all++;
		here += krt_addr_equal(&c->raddr, src, false);
	}
	spin_unlock_bh(&krt_in_lock);
	return all < READ_ONCE(krt_max_inbound_conns) + replacing &&
	       here < READ_ONCE(krt_max_inbound_per_addr) + replacing;
}

static void krt_peer_free(struct kref *ref)
{
	struct krt_peer *peer = container_of(ref, struct krt_peer, ref);

	atomic64_sub(peer->stats_mem, &krt_mem_all);
	if (peer->inbound)
		atomic64_sub(peer->stats_mem, &krt_mem_in);
	krt_stats_free(&peer->st);
	free_percpu(peer->dp_cursor);
	kfree(peer);
}

/**
 * krt_peer_put() - drop a reference on a peer
 * @peer: from krt_peer_get(); the peer may be freed
 */
void krt_peer_put(struct krt_peer *peer)
{
	kref_put(&peer->ref, krt_peer_free);
}
EXPORT_SYMBOL_GPL(krt_peer_put);

/**
 * krt_peer_find_locked() - look a peer up by name
 * @name: peer name
 *
 * Caller holds krt_pool_lock.
 *
 * Return: the peer, or NULL.
 */
struct krt_peer *krt_peer_find_locked(const char *name)
{
	struct krt_peer *peer;

	lockdep_assert_held(&krt_pool_lock);
	list_for_each_entry(peer, &krt_peers, entry)
		if (!strcmp(peer->name, name))
			return peer;
	return NULL;
}

/**
 * krt_peer_conns_up() - active connections of a peer
 * @peer: the peer; caller holds krt_pool_lock
 *
 * Return: how many of its connections are active.
 */
u32 krt_peer_conns_up(struct krt_peer *peer)
{
	struct krt_conn *conn;
	u32 n = 0;

	list_for_each_entry(conn, &peer->conns, entry)
		n += conn->state == KRT_CONN_ACTIVE;
	return n;
}

/**
 * krt_peer_update_state() - recompute a peer's state, announce a change
 * @peer: the peer; caller holds krt_pool_lock
 */
void krt_peer_update_state(struct krt_peer *peer)
{
	u32 up = 0, connecting = 0, state;
	struct krt_conn *conn;

	lockdep_assert_held(&krt_pool_lock);
	list_for_each_entry(conn, &peer->conns, entry) {
		up += conn->state == KRT_CONN_ACTIVE;
		connecting += conn->state == KRT_CONN_CONNECTING ||
			      conn->state == KRT_CONN_IDLE;
	}
	if (peer->inbound)	/* the remote sizes it: count what is there */
		peer->nr_conns = krt_list_len(&peer->conns);
	if (up && up >= peer->nr_conns)
		state = KRT_PEER_ACTIVE;
	else if (up)
		state = KRT_PEER_DEGRADED;
	else if (!peer->inbound && krt_peer_lost(peer))
		state = KRT_PEER_DOWN;
	else if (!peer->inbound && (peer->was_up || peer->err_time))
		state = KRT_PEER_RECONNECTING;
	else if (connecting || !peer->inbound)
		state = KRT_PEER_CONNECTING;
	else
		state = KRT_PEER_DOWN;
	if (up)
		peer->was_up = true;
	if (state != peer->state) {
		trace_krt_peer_state(peer, peer->state, state, up);
		peer->state = state;
		krt_nl_peer_event(peer, KRT_CMD_PEER_STATE_NTF);
	}
}

/* Defaults for what @prm leaves 0. */
static void krt_peer_prm_default(struct krt_peer_params *prm)
{
	prm->depth = prm->depth ?: 128;
	prm->policy = prm->policy ?: KRT_POLICY_RR;
	prm->reconnect_ms = prm->reconnect_ms ?: max(READ_ONCE(krt_reconnect_ms), 1U);
	prm->reconnect_max_ms = prm->reconnect_max_ms ?:
		max(READ_ONCE(krt_reconnect_max_ms), prm->reconnect_ms);
	prm->loss_timeout_s = prm->loss_timeout_s ?:
		clamp(READ_ONCE(krt_loss_timeout_s), 1U, 86400U);
	prm->hb_ms = clamp_t(u32, prm->hb_ms ?: READ_ONCE(krt_hb_ms),
			     KRT_HB_MIN_MS, KRT_HB_MAX_MS);
	prm->hb_misses = clamp_t(u32, prm->hb_misses ?: READ_ONCE(krt_hb_misses),
				 1, KRT_HB_MAX_MISSES);
}

static struct krt_peer *krt_peer_alloc(const char *name, u32 depth, u32 policy)
{
	struct krt_peer *peer;

	peer = krt_fault_connect() ? NULL : kzalloc(sizeof(*peer), GFP_KERNEL);
	if (!peer)
		return NULL;
	peer->dp_cursor = alloc_percpu(u32);
	if (!peer->dp_cursor || krt_stats_init(&peer->st, true, false, GFP_KERNEL)) {
		free_percpu(peer->dp_cursor);
		kfree(peer);
		return NULL;
	}
	/*
	 * its statistics count against the budget (connections over it are
	 * refused); peers themselves are bounded by the administrator
	 * (outbound) and by the inbound connection limits
	 */
	peer->stats_mem = krt_stats_mem(true, false);
	atomic64_add(peer->stats_mem, &krt_mem_all);
	kref_init(&peer->ref);
	INIT_LIST_HEAD(&peer->dbg_entry);
	INIT_LIST_HEAD(&peer->entry);
	INIT_LIST_HEAD(&peer->conns);
	spin_lock_init(&peer->dp_lock);
	INIT_LIST_HEAD(&peer->dp_conns);
	INIT_LIST_HEAD(&peer->pending);
	INIT_DELAYED_WORK(&peer->pending_work, krt_peer_pending_work);
	atomic64_set(&peer->resent, 0);
	atomic64_set(&peer->mem, 0);
	strscpy(peer->name, name, sizeof(peer->name));
	peer->depth = depth;
	peer->policy = policy;
	peer->state = KRT_PEER_CONNECTING;
	peer->down_since = jiffies ?: 1;
	krt_peer_prm_default(&peer->prm);
	peer->prm.depth = depth;
	peer->prm.policy = policy;
	return peer;
}

/*
 * Add connections up to @n to a pool and put them on @start for the caller
 * to start once it dropped the lock.  Caller holds krt_pool_lock.
 */
static int krt_peer_grow_locked(struct krt_peer *peer, u32 n,
				struct list_head *start)
{
	struct krt_conn *conn;
	u32 i;

	for (i = krt_list_len(&peer->conns); i < n; i++) {
		conn = krt_conn_alloc(peer, i, false);
		if (!conn)
			return -ENOMEM;
		if (krt_mem_charge(conn, NULL, 0)) {
			krt_conn_put(conn);
			return -ENOSPC;
		}
		list_add_tail(&conn->entry, &peer->conns);
		krt_pool_changed();
		kref_get(&conn->ref);		/* for @start */
		list_add_tail(&conn->start_entry, start);
	}
	peer->nr_conns = n;
	return 0;
}

/*
 * Unlist connections from index @n on and put them on @close.  Caller
 * holds krt_pool_lock.
 */
static void krt_peer_shrink_locked(struct krt_peer *peer, u32 n,
				   struct list_head *close)
{
	struct krt_conn *conn, *tmp;

	list_for_each_entry_safe(conn, tmp, &peer->conns, entry) {
		if (conn->index < n)
			continue;
		list_del_init(&conn->entry);
		krt_pool_changed();
		list_add_tail(&conn->work_entry, close);
	}
	peer->nr_conns = n;
}

/* Caller holds krt_pool_lock; the connections never had a cm id. */
static void krt_drop_unstarted(struct list_head *start)
{
	struct krt_conn *conn, *tmp;

	list_for_each_entry_safe(conn, tmp, start, start_entry) {
		list_del_init(&conn->start_entry);
		list_del_init(&conn->entry);
		krt_conn_put(conn);		/* @start's */
		krt_conn_put(conn);		/* the pool's */
	}
}

static void krt_start_list(struct list_head *start)
{
	struct krt_conn *conn, *tmp;

	list_for_each_entry_safe(conn, tmp, start, start_entry) {
		list_del_init(&conn->start_entry);
		krt_conn_start(conn);
		krt_conn_put(conn);
	}
}

static void krt_close_list(struct list_head *close)
{
	struct krt_conn *conn, *tmp;

	list_for_each_entry_safe(conn, tmp, close, work_entry) {
		list_del_init(&conn->work_entry);
		krt_conn_close(conn);
	}
}

/**
 * krt_addr_equal() - same address (and port)?
 * @a: an address
 * @b: another
 * @port: compare the ports too
 *
 * Return: true if equal.
 */
bool krt_addr_equal(const struct sockaddr_storage *a,
		    const struct sockaddr_storage *b, bool port)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_addr.s_addr == y->sin_addr.s_addr &&
		       (!port || x->sin_port == y->sin_port);
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return ipv6_addr_equal(&x->sin6_addr, &y->sin6_addr) &&
		       (!port || x->sin6_port == y->sin6_port);
	}
	return false;
}

static int krt_check_conns(u32 conns, u32 have, struct netlink_ext_ack *extack)
{
	if (conns > krt_max_peer_conns) {
		NL_SET_ERR_MSG_MOD(extack, "more connections than max_peer_conns allows");
		return -ENOSPC;
	}
	if (krt_conns_total() - have + conns > krt_max_conns) {
		NL_SET_ERR_MSG_MOD(extack, "total connection limit (max_conns) reached");
		return -ENOSPC;
	}
	return 0;
}

/* Memory for @n more connections of @depth; caller holds krt_pool_lock. */
static int krt_check_mem(struct krt_peer *peer, u32 n, u32 depth,
			 struct netlink_ext_ack *extack)
{
	u64 mem = (u64)n * krt_conn_mem(depth, false, 0, krt_q_clt_nr_mrs(depth));
	u64 have = peer ? atomic64_read(&peer->mem) : 0;

	if (atomic64_read(&krt_mem_all) + mem > krt_mem_budget()) {
		NL_SET_ERR_MSG_MOD(extack,
				   "memory budget (mem_budget_mb) exceeded: fewer conns or a smaller depth");
		return -ENOSPC;
	}
	if (have + mem > krt_peer_mem_cap()) {
		NL_SET_ERR_MSG_MOD(extack,
				   "per-peer memory cap (peer_mem_mb) exceeded: fewer conns or a smaller depth");
		return -ENOSPC;
	}
	return 0;
}

/* Check a reconnect configuration; caller holds krt_pool_lock. */
static int krt_check_prm(const struct krt_peer_params *prm,
			 struct netlink_ext_ack *extack)
{
	if (prm->reconnect_max_ms < prm->reconnect_ms) {
		NL_SET_ERR_MSG_MOD(extack, "reconnect_max_ms is below reconnect_ms");
		return -EINVAL;
	}
	return 0;
}

/**
 * krt_peer_add() - configure an outbound peer and connect its pool
 * @name: unique peer name
 * @addr: remote address and port
 * @prm: pool size (0: online CPUs, at most 64), depth (0: 128), policy
 *	(0: round-robin), reconnect, loss timeout and heartbeat (0: the
 *	module parameters)
 * @extack: for error messages
 *
 * Return: 0 (connections come up in the background), -EEXIST, -ENOSPC
 * over a limit or the memory budget, -EINVAL, -ENOMEM; nothing is left
 * behind on error.
 */
int krt_peer_add(const char *name, struct sockaddr_storage *addr,
		 const struct krt_peer_params *prm, struct netlink_ext_ack *extack)
{
	struct krt_peer_params p = *prm;
	struct krt_peer *peer;
	LIST_HEAD(start);
	int ret;

	if (!p.conns)
		p.conns = min_t(u32, num_online_cpus(), min(64U, krt_max_peer_conns));
	krt_peer_prm_default(&p);
	mutex_lock(&krt_pool_lock);
	if (krt_pool_closing) {
		ret = -ESHUTDOWN;
		goto out_unlock;
	}
	if (krt_peer_find_locked(name)) {
		NL_SET_ERR_MSG_MOD(extack, "a peer of that name exists");
		ret = -EEXIST;
		goto out_unlock;
	}
	ret = krt_check_conns(p.conns, 0, extack) ?:
	      krt_check_mem(NULL, p.conns, p.depth, extack) ?:
	      krt_check_prm(&p, extack);
	if (ret)
		goto out_unlock;
	peer = krt_peer_alloc(name, p.depth, p.policy);
	if (!peer) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	peer->prm = p;
	memcpy(&peer->addr, addr, sizeof(peer->addr));
	peer->pool_id = ++krt_pool_next_id ?: ++krt_pool_next_id;
	ret = krt_peer_grow_locked(peer, p.conns, &start);
	if (ret)
		goto err_undo;
	list_add_tail(&peer->entry, &krt_peers);
	krt_pool_changed();
	krt_nl_peer_event(peer, KRT_CMD_PEER_STATE_NTF);
	/* the loss timeout counts from now until a connection is up */
	mod_delayed_work(krt_wq, &peer->pending_work, p.loss_timeout_s * HZ + 1);
	mutex_unlock(&krt_pool_lock);
	krt_start_list(&start);
	return 0;

err_undo:
	/* nothing was started: drop the connections and the peer */
	if (ret == -ENOSPC)
		NL_SET_ERR_MSG_MOD(extack, "memory budget exceeded");
	krt_drop_unstarted(&start);
	mutex_unlock(&krt_pool_lock);
	krt_peer_put(peer);
	return ret;

out_unlock:
	mutex_unlock(&krt_pool_lock);
	return ret;
}

/* Unlist a peer and close its pool.  Caller must not hold krt_pool_lock. */
static void krt_peer_remove(struct krt_peer *peer)
{
	LIST_HEAD(close);
	bool listed;

	mutex_lock(&krt_pool_lock);
	listed = !list_empty(&peer->entry);
	list_del_init(&peer->entry);
	krt_pool_changed();
	krt_peer_shrink_locked(peer, 0, &close);
	mutex_unlock(&krt_pool_lock);
	/* ORDER: requests stop being re-sent, then the connections go */
	krt_peer_shutdown(peer);
	krt_close_list(&close);
	if (!listed)		/* an inbound peer that went by itself */
		return;
	krt_nl_peer_event(peer, KRT_CMD_PEER_DEL_NTF);
	krt_peer_put(peer);	/* krt_peers' reference */
}

/**
 * krt_pool_drop_empty_inbound() - forget an inbound peer left without connections
 * @peer: the peer; caller holds krt_pool_lock
 */
void krt_pool_drop_empty_inbound(struct krt_peer *peer)
{
	lockdep_assert_held(&krt_pool_lock);
	if (!peer->inbound || !list_empty(&peer->conns) || list_empty(&peer->entry))
		return;
	list_del_init(&peer->entry);
	krt_pool_changed();
	krt_nl_peer_event(peer, KRT_CMD_PEER_DEL_NTF);
	krt_peer_put(peer);
}

/**
 * krt_peer_del() - close a peer's pool and forget it
 * @name: peer name (outbound or inbound)
 * @extack: for error messages
 *
 * Return: 0, or -ENOENT.
 */
int krt_peer_del(const char *name, struct netlink_ext_ack *extack)
{
	struct krt_peer *peer = krt_peer_get(name);

	if (!peer) {
		NL_SET_ERR_MSG_MOD(extack, "no such peer");
		return -ENOENT;
	}
	krt_peer_remove(peer);
	krt_peer_put(peer);
	return 0;
}

/**
 * krt_peer_set() - resize a live pool, change depth, policy, recovery
 * @name: an outbound peer
 * @prm: what to change; 0 fields are kept
 * @extack: for error messages
 *
 * Growing connects the new connections; shrinking closes the ones with the
 * highest indices (their requests are re-sent on the others).  A new
 * depth applies to connections made from now on; the recovery settings to
 * the next attempt and the next connection.
 *
 * Return: 0, -ENOENT, -EOPNOTSUPP for an inbound peer, -ENOSPC over a
 * limit or the memory budget, -EINVAL.
 */
int krt_peer_set(const char *name, const struct krt_peer_params *prm,
		 struct netlink_ext_ack *extack)
{
	struct krt_peer_params p;
	struct krt_peer *peer;
	LIST_HEAD(start);
	LIST_HEAD(close);
	u32 have;
	int ret = 0;

	mutex_lock(&krt_pool_lock);
	peer = krt_peer_find_locked(name);
	if (!peer) {
		NL_SET_ERR_MSG_MOD(extack, "no such peer");
		ret = -ENOENT;
		goto out_unlock;
	}
	if (peer->inbound) {
		NL_SET_ERR_MSG_MOD(extack,
				   "inbound peer: its pool is configured on the remote node");
		ret = -EOPNOTSUPP;
		goto out_unlock;
	}
	have = krt_list_len(&peer->conns);
	p = peer->prm;
	p.conns = prm->conns ?: have;
	p.depth = prm->depth ?: peer->depth;
	p.policy = prm->policy ?: peer->policy;
	p.reconnect_ms = prm->reconnect_ms ?: p.reconnect_ms;
	p.reconnect_max_ms = prm->reconnect_max_ms ?: max(p.reconnect_max_ms, p.reconnect_ms);
	p.loss_timeout_s = prm->loss_timeout_s ?: p.loss_timeout_s;
	p.hb_ms = prm->hb_ms ? clamp_t(u32, prm->hb_ms, KRT_HB_MIN_MS, KRT_HB_MAX_MS) : p.hb_ms;
	p.hb_misses = prm->hb_misses ? min_t(u32, prm->hb_misses, KRT_HB_MAX_MISSES) : p.hb_misses;
	ret = krt_check_prm(&p, extack);
	if (!ret && prm->conns)
		ret = krt_check_conns(p.conns, have, extack);
	/* the new depth applies to new connections; the old ones keep theirs */
	if (!ret && p.conns > have)
		ret = krt_check_mem(peer, p.conns - have, p.depth, extack);
	if (ret)
		goto out_unlock;
	peer->depth = p.depth;
	peer->policy = p.policy;
	peer->prm = p;	/* fields are read with READ_ONCE() */
	if (p.conns > have) {
		ret = krt_peer_grow_locked(peer, p.conns, &start);
		if (ret) {
			if (ret == -ENOSPC)
				NL_SET_ERR_MSG_MOD(extack, "memory budget exceeded");
			krt_drop_unstarted(&start);
			peer->nr_conns = have;
			goto out_unlock;
		}
	} else if (p.conns < have) {
		krt_peer_shrink_locked(peer, p.conns, &close);
	}
	krt_peer_update_state(peer);
	krt_nl_peer_event(peer, KRT_CMD_PEER_STATE_NTF);
out_unlock:
	mutex_unlock(&krt_pool_lock);
	krt_start_list(&start);
	krt_close_list(&close);
	return ret;
}

/*
 * Fail some connections of a peer, as an administrator asked.  One at a
 * time by index, with a reference and without a list: a parallel close
 * owns the connection's work_entry.
 */
static int krt_peer_fail_conns(const char *name, s64 index, const char *why,
			       struct netlink_ext_ack *extack)
{
	struct krt_conn *conn, *hit;
	struct krt_peer *peer;
	u32 next = index >= 0 ? index : 0;
	bool found = false;
	int ret = 0;

	for (;;) {
		mutex_lock(&krt_pool_lock);
		peer = krt_peer_find_locked(name);
		if (!peer) {
			mutex_unlock(&krt_pool_lock);
			if (found)
				return 0;	/* deleted meanwhile */
			NL_SET_ERR_MSG_MOD(extack, "no such peer");
			return -ENOENT;
		}
		hit = NULL;
		list_for_each_entry(conn, &peer->conns, entry) {
			if (conn->index < next || (hit && conn->index > hit->index))
				continue;
			if (index >= 0 && conn->index != index)
				continue;
			hit = conn;
		}
		if (hit && hit->state != KRT_CONN_ACTIVE && hit->state != KRT_CONN_CONNECTING) {
			if (index >= 0) {
				NL_SET_ERR_MSG_MOD(extack,
						   "connection is not active or connecting");
				ret = -EAGAIN;
			}
			next = hit->index + 1;
			mutex_unlock(&krt_pool_lock);
			if (index >= 0)
				break;
			continue;
		}
		if (hit)
			kref_get(&hit->ref);
		mutex_unlock(&krt_pool_lock);
		if (!hit)
			break;
		found = true;
		next = hit->index + 1;
		krt_conn_fail(hit, why);
		krt_conn_put(hit);
		if (index >= 0)
			break;
	}
	if (index >= 0 && !found && !ret) {
		NL_SET_ERR_MSG_MOD(extack, "no connection of that index");
		ret = -ENOENT;
	}
	return ret;
}

/**
 * krt_peer_reconnect() - recycle every connection of a peer
 * @name: the peer
 * @extack: for error messages
 *
 * Each active or connecting connection fails ("reconnect requested") and,
 * for an outbound peer, comes back after the first backoff step; its
 * requests are re-sent on the others or wait for one.
 *
 * Return: 0, or -ENOENT.
 */
int krt_peer_reconnect(const char *name, struct netlink_ext_ack *extack)
{
	return krt_peer_fail_conns(name, -1, "reconnect requested", extack);
}

/**
 * krt_conn_reset() - force one connection into error
 * @name: the peer
 * @index: the connection's index in the pool
 * @extack: for error messages
 *
 * As if its QP had failed: outstanding requests are re-sent, an outbound
 * connection reconnects.
 *
 * Return: 0, -ENOENT, or -EAGAIN when it is neither active nor connecting.
 */
int krt_conn_reset(const char *name, u32 index, struct netlink_ext_ack *extack)
{
	return krt_peer_fail_conns(name, index, "reset by administrator", extack);
}

/**
 * krt_conn_get_by_name() - a connection of a peer's pool, for fault knobs
 * @name: the peer's name
 * @index: the connection's index in its pool
 *
 * Looks it up under krt_pool_lock; the caller drops the reference with
 * krt_conn_put().
 *
 * Return: the connection with a reference, or NULL when there is none.
 */
struct krt_conn *krt_conn_get_by_name(const char *name, u32 index)
{
	struct krt_conn *conn, *hit = NULL;
	struct krt_peer *peer;

	mutex_lock(&krt_pool_lock);
	peer = krt_peer_find_locked(name);
	if (peer) {
		list_for_each_entry(conn, &peer->conns, entry) {
			if (conn->index == index) {
				hit = conn;
				kref_get(&hit->ref);
				break;
			}
		}
	}
	mutex_unlock(&krt_pool_lock);
	return hit;
}

/**
 * krt_conn_inject_fatal() - fault/qp_fatal: a fatal QP event on a connection
 * @name: the peer
 * @index: the connection's index in the pool
 *
 * Return: 0, -ENOENT for an unknown peer or index, -ENOTCONN when the
 * connection is not active.
 */
int krt_conn_inject_fatal(const char *name, u32 index)
{
	struct krt_conn *hit = krt_conn_get_by_name(name, index);
	int ret;

	if (!hit)
		return -ENOENT;
	ret = krt_conn_inject_qp_fatal(hit);
	krt_conn_put(hit);
	return ret;
}

/**
 * krt_peer_attempt() - connect attempts since the last success
 * @peer: the peer; caller holds krt_pool_lock
 *
 * Return: the highest count among its connections.
 */
u32 krt_peer_attempt(struct krt_peer *peer)
{
	struct krt_conn *conn;
	u32 n = 0;

	list_for_each_entry(conn, &peer->conns, entry)
		n = max(n, conn->attempt);
	return n;
}

/**
 * krt_peer_next_attempt_ms() - time to a peer's next connect attempt
 * @peer: the peer; caller holds krt_pool_lock
 * @scheduled: set to whether an attempt is scheduled
 *
 * Return: ms until the soonest scheduled attempt, 0 when none is.
 */
u32 krt_peer_next_attempt_ms(struct krt_peer *peer, bool *scheduled)
{
	unsigned long next = 0, now = jiffies;
	struct krt_conn *conn;

	*scheduled = false;
	list_for_each_entry(conn, &peer->conns, entry) {
		if (conn->state != KRT_CONN_RECONNECTING)
			continue;
		if (!*scheduled || time_before(conn->next_attempt, next))
			next = conn->next_attempt;
		*scheduled = true;
	}
	if (!*scheduled || time_after_eq(now, next))
		return 0;
	return jiffies_to_msecs(next - now);
}

/**
 * krt_peer_loss_left_ms() - time left until a peer's loss timeout
 * @peer: the peer
 * @counting: set to whether it counts (no active connection, not yet lost)
 *
 * Return: ms left, 0 when not counting.
 */
u32 krt_peer_loss_left_ms(struct krt_peer *peer, bool *counting)
{
	unsigned long since = READ_ONCE(peer->down_since), end;

	*counting = false;
	if (!since || peer->inbound)
		return 0;
	end = since + READ_ONCE(peer->prm.loss_timeout_s) * HZ;
	if (time_after_eq(jiffies, end))
		return 0;
	*counting = true;
	return jiffies_to_msecs(end - jiffies);
}

/**
 * krt_peer_lost() - has a peer been without a connection past loss_timeout?
 * @peer: an outbound peer
 *
 * Return: true if so.
 */
bool krt_peer_lost(struct krt_peer *peer)
{
	unsigned long since = READ_ONCE(peer->down_since);

	return since && time_after_eq(jiffies,
				      since + READ_ONCE(peer->prm.loss_timeout_s) * HZ);
}

/**
 * krt_pool_accept_from() - may a remote address connect?
 * @src: the remote's address
 *
 * Caller holds krt_pool_lock.
 *
 * Return: true with accept=any, or when a configured peer has that address.
 */
bool krt_pool_accept_from(const struct sockaddr_storage *src)
{
	struct krt_peer *peer;

	if (strcmp(krt_accept, "configured"))
		return true;
	list_for_each_entry(peer, &krt_peers, entry)
		if (!peer->inbound && krt_addr_equal(&peer->addr, src, false))
			return true;
	return false;
}

/**
 * krt_pool_check_limit() - room for one more connection in an inbound peer?
 * @peer: the inbound peer it would join, or NULL
 *
 * Caller holds krt_pool_lock.  The totals are krt_pool_inbound_room()'s.
 *
 * Return: true if ``max_peer_conns`` allows it.
 */
bool krt_pool_check_limit(struct krt_peer *peer)
{
	return !peer || krt_list_len(&peer->conns) + 1 <= krt_max_peer_conns;
}

/**
 * krt_pool_inbound_peer() - the inbound peer of a remote node, created on demand
 * @node_id: the remote's node id
 * @pool_id: which of the remote's pools
 * @nr_conns: size of the remote's pool, from its private data
 * @depth: the remote's queue depth
 *
 * Caller holds krt_pool_lock.
 *
 * Return: the peer (listed; no extra reference), or NULL without memory.
 */
struct krt_peer *krt_pool_inbound_peer(u64 node_id, u16 pool_id, u32 nr_conns,
				       u32 depth)
{
	char name[KRT_PEER_NAME_MAX];
	struct krt_peer *peer;

	if (krt_pool_closing)
		return NULL;
	list_for_each_entry(peer, &krt_peers, entry)
		if (peer->inbound && peer->node_id == node_id &&
		    peer->pool_id == pool_id)
			goto found;
	snprintf(name, sizeof(name), "in-%016llx-%u", node_id, pool_id);
	peer = krt_peer_alloc(name, depth, KRT_POLICY_RR);
	if (!peer)
		return NULL;
	peer->inbound = true;
	/* a remote made it: its statistics count in the inbound share too */
	atomic64_add(peer->stats_mem, &krt_mem_in);
	peer->node_id = node_id;
	peer->pool_id = pool_id;
	peer->down_since = 0;
	list_add_tail(&peer->entry, &krt_peers);
	krt_pool_changed();
found:
	peer->nr_conns = nr_conns;
	return peer;
}

static struct krt_listener *krt_listen_find_locked(struct sockaddr_storage *addr)
{
	struct krt_listener *l;

	list_for_each_entry(l, &krt_listeners, entry)
		if (krt_addr_equal(&l->addr, addr, true))
			return l;
	return NULL;
}

/* Caller holds krt_pool_lock. */
static int krt_listen_check_locked(struct sockaddr_storage *addr,
				   struct netlink_ext_ack *extack)
{
	if (krt_pool_closing)
		return -ESHUTDOWN;
	if (krt_listen_find_locked(addr)) {
		NL_SET_ERR_MSG_MOD(extack, "already listening there");
		return -EEXIST;
	}
	return 0;
}

/*
 * Unlist a listener and take its id, in one critical section so that a
 * DEVICE_REMOVAL handler either sees it listed with its id (and frees it)
 * or not at all.  Caller holds krt_pool_lock.
 */
static struct rdma_cm_id *krt_listen_unlist_locked(struct krt_listener *l)
{
	struct rdma_cm_id *id = l->cm_id;

	list_del_init(&l->entry);
	l->cm_id = NULL;
	return id;
}

/*
 * Serialises listen add/del, the rebind work and unload, so that the rebind
 * work may use a listener outside krt_pool_lock: none is freed meanwhile.
 * ORDER: before krt_pool_lock; cm handlers never take it.
 */
static DEFINE_MUTEX(krt_listen_mutex);

static void krt_listen_rebind_fn(struct work_struct *w);
static DECLARE_DELAYED_WORK(krt_listen_rebind_work, krt_listen_rebind_fn);
#define KRT_LISTEN_REBIND_MS	1000

/*
 * A new listening id on @l's address, set as @l's id.  Caller holds
 * krt_listen_mutex.  A DEVICE_REMOVAL of the new id before it is set
 * (@l->bind_lost) fails the bind: rdma_cm waits for that id to go.
 */
static int krt_listen_bind(struct krt_listener *l, struct netlink_ext_ack *extack)
{
	struct rdma_cm_id *id;
	bool lost;
	int ret;

	mutex_lock(&krt_pool_lock);
	l->binding = true;
	l->bind_lost = false;
	mutex_unlock(&krt_pool_lock);
	/* ORDER: rdma_cm calls outside krt_pool_lock, which handlers take */
	id = rdma_create_id(&init_net, krt_cm_handler, l, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto out;
	}
	ret = rdma_bind_addr(id, (struct sockaddr *)&l->addr);
	if (ret) {
		NL_SET_ERR_MSG_MOD(extack,
				   "cannot bind: address not local to an RDMA device, or in use");
		goto err;
	}
	ret = rdma_listen(id, 128);
	if (ret) {
		NL_SET_ERR_MSG_MOD(extack, "rdma_listen failed");
		goto err;
	}
	mutex_lock(&krt_pool_lock);
	lost = l->bind_lost;
	if (!lost)
		l->cm_id = id;
	l->binding = false;
	mutex_unlock(&krt_pool_lock);
	if (!lost)
		return 0;
	NL_SET_ERR_MSG_MOD(extack, "the address's RDMA device went away");
	ret = -ENODEV;
err:
	rdma_destroy_id(id);
out:
	mutex_lock(&krt_pool_lock);
	l->binding = false;
	mutex_unlock(&krt_pool_lock);
	return ret;
}

/**
 * krt_listen_add() - accept connections on a local address
 * @addr: address and port
 * @extack: for error messages
 *
 * Return: 0, -EEXIST, or the rdma_cm error (e.g. -EADDRNOTAVAIL,
 * -EADDRINUSE).
 */
int krt_listen_add(struct sockaddr_storage *addr, struct netlink_ext_ack *extack)
{
	struct krt_listener *l;
	struct rdma_cm_id *id;
	int ret;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	l->ctx = KRT_CM_LISTENER;
	INIT_LIST_HEAD(&l->entry);
	memcpy(&l->addr, addr, sizeof(l->addr));

	mutex_lock(&krt_listen_mutex);
	mutex_lock(&krt_pool_lock);
	ret = krt_listen_check_locked(addr, extack);
	mutex_unlock(&krt_pool_lock);
	if (ret)
		goto err_free;
	ret = krt_listen_bind(l, extack);
	if (ret)
		goto err_free;
	mutex_lock(&krt_pool_lock);
	ret = krt_listen_check_locked(addr, extack);	/* unload may have begun */
	if (!ret)
		list_add_tail(&l->entry, &krt_listeners);
	else
		id = krt_listen_unlist_locked(l);
	mutex_unlock(&krt_pool_lock);
	if (ret)
		goto err_id;
	mutex_unlock(&krt_listen_mutex);
	return 0;

err_id:
	if (id)
		rdma_destroy_id(id);
err_free:
	mutex_unlock(&krt_listen_mutex);
	kfree(l);
	return ret;
}

/**
 * krt_listen_lost() - a listener's device went away
 * @l: the listener; its id is being destroyed by rdma_cm
 *
 * Called from the listener's DEVICE_REMOVAL handler, with krt_pool_lock
 * held, once @l's id was taken.  The listener stays listed, waiting for an
 * RDMA device with its address: the rebind work tries every second until
 * it listens again or is deleted.
 */
void krt_listen_lost(struct krt_listener *l)
{
	lockdep_assert_held(&krt_pool_lock);
	l->lost++;
	if (!krt_pool_closing)
		mod_delayed_work(krt_wq, &krt_listen_rebind_work,
				 msecs_to_jiffies(KRT_LISTEN_REBIND_MS));
}

/* Listen again on the addresses whose device went; retry while one waits. */
static void krt_listen_rebind_fn(struct work_struct *w)
{
	struct krt_listener *l;
	struct rdma_cm_id *id;
	bool waiting = false;

	mutex_lock(&krt_listen_mutex);
	/* no listener is freed while krt_listen_mutex is held */
	list_for_each_entry(l, &krt_listeners, entry) {
		mutex_lock(&krt_pool_lock);
		id = l->cm_id;
		mutex_unlock(&krt_pool_lock);
		if (id)
			continue;
		if (krt_listen_bind(l, NULL)) {
			waiting = true;
			continue;
		}
		pr_info("listening again on %pISpc\n", &l->addr);
	}
	if (waiting && !READ_ONCE(krt_pool_closing))
		mod_delayed_work(krt_wq, &krt_listen_rebind_work,
				 msecs_to_jiffies(KRT_LISTEN_REBIND_MS));
	mutex_unlock(&krt_listen_mutex);
}

/* Destroy a listener's id (waits for its handler) and free it. */
static void krt_listen_free(struct krt_listener *l, struct rdma_cm_id *id)
{
	if (id)
		rdma_destroy_id(id);
	kfree(l);
}

/**
 * krt_listen_del() - stop accepting on an address
 * @addr: address and port
 * @extack: for error messages
 *
 * Established connections stay.
 *
 * Return: 0, or -ENOENT.
 */
int krt_listen_del(struct sockaddr_storage *addr, struct netlink_ext_ack *extack)
{
	struct rdma_cm_id *id = NULL;
	struct krt_listener *l;

	mutex_lock(&krt_listen_mutex);
	mutex_lock(&krt_pool_lock);
	l = krt_listen_find_locked(addr);
	if (l)
		id = krt_listen_unlist_locked(l);
	mutex_unlock(&krt_pool_lock);
	if (l)
		krt_listen_free(l, id);
	mutex_unlock(&krt_listen_mutex);
	if (!l) {
		NL_SET_ERR_MSG_MOD(extack, "no listener there");
		return -ENOENT;
	}
	return 0;
}

static void krt_pool_dev_close_conns(struct krt_device *dev);

/**
 * krt_pool_dev_remove() - fail and release every connection on a device
 * @dev: the device being removed
 *
 * Called from the ib_client remove callback before the PD goes.
 */
void krt_pool_dev_remove(struct krt_device *dev)
{
	unsigned int waited = 0;

	/*
	 * Connections are the only long-term holders of a device reference
	 * besides the ib_client: close them until only that one is left (a
	 * connection may be between its device lookup and publishing it).
	 * Never give up: the PD must outlive every QP on it.
	 */
	for (;;) {
		krt_pool_dev_close_conns(dev);
		if (wait_var_event_timeout(&dev->ref, kref_read(&dev->ref) <= 1, HZ))
			return;
		if (++waited % 10 == 0)
			pr_warn("%s: still %u references after closing its connections (%u s)\n",
				dev->name, kref_read(&dev->ref) - 1, waited);
	}
}

static void krt_pool_dev_close_conns(struct krt_device *dev)
{
	struct krt_conn *conn, *tmp;
	struct krt_peer *peer;
	LIST_HEAD(gone);

	mutex_lock(&krt_pool_lock);
	list_for_each_entry(peer, &krt_peers, entry) {
		list_for_each_entry(conn, &peer->conns, entry) {
			if (conn->dev != dev)
				continue;
			kref_get(&conn->ref);
			list_add_tail(&conn->dev_entry, &gone);
		}
	}
	mutex_unlock(&krt_pool_lock);
	list_for_each_entry_safe(conn, tmp, &gone, dev_entry) {
		list_del_init(&conn->dev_entry);
		krt_conn_fail(conn, "RDMA device removed");
		krt_conn_release(conn);
		flush_work(&conn->release_work);
		krt_conn_put(conn);
	}
	/* unlisted connections still closing in the background hold QPs too */
	flush_workqueue(krt_close_wq);
	flush_workqueue(krt_wq);
}

int krt_pool_init(void)
{
	if (strcmp(krt_accept, "any") && strcmp(krt_accept, "configured")) {
		pr_err("accept must be 'any' or 'configured', not '%s'\n", krt_accept);
		return -EINVAL;
	}
	if (!krt_node_id)
		krt_node_id = get_random_u64() ?: 1;
	krt_wq = alloc_workqueue("krt", WQ_MEM_RECLAIM, 0);
	if (!krt_wq)
		return -ENOMEM;
	krt_close_wq = alloc_workqueue("krt_close", WQ_MEM_RECLAIM, 0);
	if (!krt_close_wq) {
		destroy_workqueue(krt_wq);
		return -ENOMEM;
	}
	return 0;
}

/* Close every peer and listener: before the ib_client goes. */
void krt_pool_exit(void)
{
	struct krt_listener *l;
	struct krt_peer *peer;

	mutex_lock(&krt_pool_lock);
	krt_pool_closing = true;
	list_for_each_entry(peer, &krt_peers, entry)
		krt_peer_mark_closing(peer);
	mutex_unlock(&krt_pool_lock);
	/* krt_pool_closing is set: the rebind work queues itself no more */
	cancel_delayed_work_sync(&krt_listen_rebind_work);
	mutex_lock(&krt_listen_mutex);
	for (;;) {
		struct rdma_cm_id *id = NULL;

		mutex_lock(&krt_pool_lock);
		l = list_first_entry_or_null(&krt_listeners, struct krt_listener, entry);
		if (l)
			id = krt_listen_unlist_locked(l);
		mutex_unlock(&krt_pool_lock);
		if (!l)
			break;
		krt_listen_free(l, id);
	}
	mutex_unlock(&krt_listen_mutex);
	for (;;) {
		mutex_lock(&krt_pool_lock);
		peer = list_first_entry_or_null(&krt_peers, struct krt_peer, entry);
		if (peer)
			kref_get(&peer->ref);
		mutex_unlock(&krt_pool_lock);
		if (!peer)
			break;
		krt_peer_remove(peer);
		krt_peer_put(peer);
	}
	/* ORDER: closes handed to the workqueues finish before devices go */
	flush_workqueue(krt_close_wq);
	flush_workqueue(krt_wq);
}

void krt_pool_destroy_wq(void)
{
	destroy_workqueue(krt_close_wq);
	destroy_workqueue(krt_wq);
}
