// SPDX-License-Identifier: GPL-2.0
/*
 * krt: connections.
 *
 * DOC: Connections
 *
 * A connection is one RC QP reached through an rdma_cm id.  Outbound ones
 * go Idle -> Connecting (resolve address, resolve route, create CQ and QP,
 * connect) -> Active; inbound ones are created Connecting by a listener's
 * CONNECT_REQUEST and become Active on ESTABLISHED.  Any failure, a
 * disconnect, a missed heartbeat or the device going away moves it to
 * Error with a reason; once its resources are released an outbound one
 * goes to Reconnecting and tries again after a backoff (capped
 * exponential, full jitter: a random delay up to reconnect_ms * 2^attempt,
 * at most reconnect_max_ms), for as long as it is in the pool.  An inbound
 * one leaves the pool: reconnecting is the remote's job.  Closing it (peer
 * deleted, pool shrunk, module unloaded) goes through Closing.  Every
 * transition goes through krt_conn_set_state(), which refuses one its
 * table does not allow.  Events of both kinds are announced on netlink.
 *
 * RDMA resources are created in the cm handler (which rdma_cm serialises
 * per id) and released by krt_conn_release(), never from a cm handler:
 * rdma_destroy_id() waits for the id's handler.  Release first marks the
 * connection dying under the id's handler lock, so any later event is
 * ignored, then disconnects, destroys QP and CQ in reverse order of
 * creation, and destroys the id.  Release is idempotent.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include "krt.h"
#include "trace.h"
#include "wire.h"

static_assert(sizeof(struct krt_msg_hdr) == KRT_QP_INLINE);

static void krt_conn_release_work(struct work_struct *work);
static void krt_conn_fatal_work(struct work_struct *work);
static void krt_conn_queue_release(struct krt_conn *conn);
static void krt_conn_close_work(struct work_struct *work)
{
	krt_conn_close(container_of(work, struct krt_conn, close_work));
}

static unsigned int krt_connect_timeout_ms = 10000;
module_param_named(connect_timeout_ms, krt_connect_timeout_ms, uint, 0644);
MODULE_PARM_DESC(connect_timeout_ms,
		 "Longest outbound connect attempt, address resolution to established, ms, 1000..600000 (default: 10000)");

/*
 * Completions of server connections on an unbound workqueue instead of in
 * softirq on the CPU that raised them: the scheduler can then move a
 * server's work off the CPU its client posts from where the device does
 * not (a software device, rxe or siw, does its work on the posting CPU),
 * at the cost of a wakeup per batch of completions.  A pool CQ's work is
 * not reentrant: the connections sharing it are served one at a time.
 * Connections accepted later use it.
 */
static bool krt_srv_poll_wq;
module_param_named(srv_poll_wq, krt_srv_poll_wq, bool, 0644);
MODULE_PARM_DESC(srv_poll_wq,
		 "Server connections handle completions on an unbound workqueue, not in softirq (default: N)");

static enum ib_poll_context krt_conn_poll_ctx(struct krt_conn *conn)
{
	return conn->inbound && READ_ONCE(krt_srv_poll_wq) ?
	       IB_POLL_UNBOUND_WORKQUEUE : IB_POLL_SOFTIRQ;
}

static unsigned long krt_conn_connect_timeout(void)
{
	return msecs_to_jiffies(clamp_t(u32, READ_ONCE(krt_connect_timeout_ms), 1000, 600000));
}

/*
 * One work, two jobs: after a backoff it starts the next attempt; during
 * an attempt it bounds it.  The CM retries a lost REQ for minutes; an
 * attempt over connect_timeout_ms is given up and the next one starts
 * from a new id (fresh address and route resolution).
 */
static void krt_conn_reconnect_work(struct work_struct *work)
{
	struct krt_conn *conn = container_of(to_delayed_work(work), struct krt_conn,
					     reconnect_work);
	bool late, start;

	mutex_lock(&krt_pool_lock);
	late = !conn->inbound && conn->state == KRT_CONN_CONNECTING &&
	       conn->timeout_attempt == conn->attempt;
	if (late)
		krt_conn_set_state(conn, KRT_CONN_ERROR, "connect attempt timed out");
	start = conn->state == KRT_CONN_IDLE || conn->state == KRT_CONN_RECONNECTING;
	mutex_unlock(&krt_pool_lock);
	if (late)
		krt_conn_queue_release(conn);
	else if (start)
		krt_conn_start(conn);
	krt_conn_put(conn);		/* the work's */
}

/**
 * krt_conn_alloc() - a new, idle connection of a peer's pool
 * @peer: the peer; the connection takes a reference on it
 * @index: position in the pool
 * @inbound: accepted rather than connected out
 *
 * Return: the connection (not yet listed), or NULL.
 */
struct krt_conn *krt_conn_alloc(struct krt_peer *peer, u32 index, bool inbound)
{
	struct krt_conn *conn;

	conn = krt_fault_connect() ? NULL : kzalloc(sizeof(*conn), GFP_KERNEL);
	if (!conn)
		return NULL;
	if (krt_stats_init(&conn->st, true, true, GFP_KERNEL)) {
		kfree(conn);
		return NULL;
	}
	conn->ctx = KRT_CM_CONN;
	kref_init(&conn->ref);
	INIT_LIST_HEAD(&conn->entry);
	INIT_LIST_HEAD(&conn->work_entry);
	INIT_LIST_HEAD(&conn->dev_entry);
	INIT_LIST_HEAD(&conn->start_entry);
	INIT_LIST_HEAD(&conn->dp_entry);
	INIT_LIST_HEAD(&conn->in_entry);
	mutex_init(&conn->release_lock);
	INIT_WORK(&conn->release_work, krt_conn_release_work);
	INIT_WORK(&conn->close_work, krt_conn_close_work);
	INIT_WORK(&conn->fatal_work, krt_conn_fatal_work);
	INIT_DELAYED_WORK(&conn->reconnect_work, krt_conn_reconnect_work);
	kref_get(&peer->ref);
	conn->peer = peer;
	conn->index = index;
	conn->inbound = inbound;
	conn->state = KRT_CONN_IDLE;
	conn->state_time = jiffies;
	conn->depth = peer->depth;
	conn->hb_ms = peer->prm.hb_ms;
	conn->hb_misses = peer->prm.hb_misses;
	return conn;
}

static void krt_conn_free(struct kref *ref)
{
	struct krt_conn *conn = container_of(ref, struct krt_conn, ref);

	WARN_ON_ONCE(conn->cm_id || conn->cq || conn->pd || conn->dev || conn->qp_id);
	/* nobody else sees the connection now: no lock (any context) */
	krt_queue_free(conn->q);
	conn->q = NULL;
	krt_mem_uncharge(conn);
	krt_peer_put(conn->peer);
	krt_stats_free(&conn->st);
	/* a submitter may still look at it on the peer's RCU list */
	kfree_rcu(conn, rcu);
}

/**
 * krt_conn_put() - drop a reference on a connection
 * @conn: the connection
 */
void krt_conn_put(struct krt_conn *conn)
{
	kref_put(&conn->ref, krt_conn_free);
}

/**
 * krt_conn_setup_qp() - create the CQ and RC QP of a connection
 * @conn: the connection
 * @id: its cm id, with a resolved route or from a CONNECT_REQUEST
 *
 * Called from the id's cm handler.  The CQ is spread over the device's
 * completion vectors by pool index.
 *
 * Return: 0, -ENODEV if the device is not usable by krt, or an errno.
 */
int krt_conn_setup_qp(struct krt_conn *conn, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};
	struct krt_device *dev;
	struct krt_queue *q, *old;
	struct ib_cq *cq;
	struct ib_pd *pd;
	bool injected;
	int ret, vec;

	dev = krt_dev_get_by_ibdev(id->device);
	if (!dev)
		return -ENODEV;
	/* the last attempt's QP is gone first (krt_conn_release() orders it) */
	mutex_lock(&krt_pool_lock);
	ret = WARN_ON_ONCE(conn->qp_id) ? -EBUSY : 0;
	mutex_unlock(&krt_pool_lock);
	if (ret)
		goto err_put;
	/*
	 * A PD of its own: the connection's MRs, whose rkeys it sends to its
	 * peer, are reachable through its QP only, never through the QP of
	 * another peer's connection on the same device (nor invalidated by
	 * one, on devices that check the PD of a remote invalidation).
	 */
	pd = krt_fault_connect() ? ERR_PTR(-ENOMEM) : ib_alloc_pd(dev->ibdev, 0);
	if (IS_ERR(pd)) {
		ret = PTR_ERR(pd);
		goto err_put;
	}
	/* a request takes up to 3 send entries (REG_MR, SEND, LOCAL_INV) */
	conn->depth = clamp_t(u32, conn->depth, 2,
			      min((dev->caps.max_qp_wr - 1) / 3,
				  (dev->caps.max_cqe - 2) / 4));
	/*
	 * Send and receive completions from the device's shared CQ pool, as
	 * nvme-rdma and rtrs take theirs: the pool spreads connections over
	 * the completion vectors (so over CPUs) and shares CQs between them.
	 * 3 send and 1 receive entries per request, +1 each for the drain.
	 */
	vec = conn->index;
	cq = krt_fault_connect() ? ERR_PTR(-ENOMEM) :
		ib_cq_pool_get(dev->ibdev, KRT_CONN_CQES(conn->depth), vec,
			       krt_conn_poll_ctx(conn));
	if (IS_ERR(cq)) {
		ret = PTR_ERR(cq);
		goto err_pd;
	}
	attr.event_handler = krt_conn_qp_event;
	attr.qp_context = conn;
	attr.send_cq = cq;
	attr.recv_cq = cq;
	attr.qp_type = IB_QPT_RC;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	/* +1 for the drain work request */
	attr.cap.max_send_wr = 3 * conn->depth + 1;
	attr.cap.max_recv_wr = conn->depth + 1;
	/*
	 * a server's RDMA READ/WRITE names its pages without an MR; a
	 * client's inline write names its data pages beside the header
	 */
	attr.cap.max_send_sge = clamp_t(u32, dev->caps.max_send_sge, 1,
					conn->inbound ? KRT_SRV_SGE : KRT_CLT_SGE);
	attr.cap.max_recv_sge = 1;
	/*
	 * Inline SENDs for a bare header; more only grows every send queue
	 * entry (the device's WQE holds the largest)
	 */
	attr.cap.max_inline_data = min_t(u32, dev->caps.max_inline, KRT_QP_INLINE);
	injected = krt_fault_connect();
	ret = injected ? -ENOMEM : rdma_create_qp(id, pd, &attr);
	if (ret && !injected && attr.cap.max_send_sge > 1) {
		/*
		 * a provider that refuses more entries with the probed inline
		 * size: one entry per WR, so server transfers of up to 3
		 * entries go without an MR, larger ones through one, and a
		 * client sends no write data inline
		 */
		attr.cap.max_send_sge = 1;
		attr.cap.max_inline_data = min_t(u32, dev->caps.max_inline, KRT_QP_INLINE);
		ret = rdma_create_qp(id, pd, &attr);
	}
	if (ret)
		goto err_cq;
	q = krt_queue_create(conn, id, dev, attr.cap.max_inline_data);
	if (IS_ERR(q)) {
		ret = PTR_ERR(q);
		goto err_qp;
	}
	/* netlink, debugfs and krt_pool_dev_remove() read them under the lock */
	mutex_lock(&krt_pool_lock);
	old = conn->q;
	conn->q = q;
	conn->qp_id = id;
	conn->cq = cq;
	conn->cq_nr = KRT_CONN_CQES(conn->depth);
	conn->pd = pd;
	WRITE_ONCE(conn->dev, dev);	/* read locklessly by krt_stat_add() */
	conn->qpn = id->qp->qp_num;
	mutex_unlock(&krt_pool_lock);
	atomic64_add(conn->mem, &dev->mem_used);
	krt_queue_free(old);
	return 0;

err_qp:
	rdma_destroy_qp(id);
err_cq:
	ib_cq_pool_put(cq, KRT_CONN_CQES(conn->depth));
err_pd:
	ib_dealloc_pd(pd);
err_put:
	krt_dev_put(dev);
	return ret;
}

/**
 * krt_conn_destroy_qp() - drain and destroy a connection's queue, QP and CQ
 * @conn: the connection
 * @id: its cm id, not used any more by the cm handler (dying set, or
 *	called from the handler on its own failure)
 *
 * Outstanding requests complete here (krt_queue_destroy()).
 */
void krt_conn_destroy_qp(struct krt_conn *conn, struct rdma_cm_id *id)
{
	struct krt_device *dev = NULL;
	struct ib_cq *cq = NULL;
	u32 cq_nr = 0;
	struct ib_pd *pd = NULL;
	bool mine;

	/*
	 * Only the resources published with @id's QP: a CQ or PD of another
	 * attempt is never freed from under its QP.
	 */
	mutex_lock(&krt_pool_lock);
	mine = id && conn->qp_id == id;
	mutex_unlock(&krt_pool_lock);
	if (id && id->qp) {
		if (!WARN_ONCE(!mine, "krt: %s/%u: QP of an id that is not the connection's\n",
			       conn->peer->name, conn->index))
			krt_queue_destroy(conn);
		rdma_destroy_qp(id);
	}
	mutex_lock(&krt_pool_lock);
	if (mine && conn->qp_id == id) {
		cq = conn->cq;
		cq_nr = conn->cq_nr;
		pd = conn->pd;
		dev = conn->dev;
		conn->cq = NULL;
		conn->pd = NULL;
		conn->qp_id = NULL;
		WRITE_ONCE(conn->dev, NULL);
	}
	mutex_unlock(&krt_pool_lock);
	if (cq)
		ib_cq_pool_put(cq, cq_nr);
	/* ORDER: the MR pool went with the queue, the QP above: the PD is free */
	if (pd)
		ib_dealloc_pd(pd);
	if (dev)
		atomic64_sub(conn->mem, &dev->mem_used);
	/* a client queue holds no server request: its memory goes now */
	if (mine && !conn->inbound)
		krt_queue_free(krt_conn_take_queue(conn));
	if (dev)
		krt_dev_put(dev);
}

/**
 * krt_conn_take_queue() - unpublish a connection's queue
 * @conn: the connection, its queue destroyed (or never started)
 *
 * Return: the queue for krt_queue_free(), or NULL.
 */
struct krt_queue *krt_conn_take_queue(struct krt_conn *conn)
{
	struct krt_queue *q;

	mutex_lock(&krt_pool_lock);
	q = conn->q;
	conn->q = NULL;
	mutex_unlock(&krt_pool_lock);
	return q;
}

/**
 * krt_conn_release() - release a connection's RDMA resources
 * @conn: the connection
 *
 * Must not be called from the connection's cm handler, nor with
 * krt_pool_lock held.  Releases only a connection in Error or Closing.
 * Idempotent.
 */
void krt_conn_release(struct krt_conn *conn)
{
	struct rdma_cm_id *id;

	/*
	 * ORDER: one release at a time, and a second caller returns only
	 * once the first finished: the release work schedules the next
	 * attempt when it returns, which must not start while another
	 * caller (a device removal, a close) still tears the last one down.
	 * cm.c's accept failure tears down without it, from the handler of
	 * an inbound connection's only id, which no releaser holds (taking
	 * it there, under the handler lock, would invert this order).
	 */
	mutex_lock(&conn->release_lock);
	/*
	 * Only a failed or closing connection's id: a release queued twice
	 * must not take the id of the attempt that followed the first one.
	 */
	mutex_lock(&krt_pool_lock);
	id = NULL;
	if (conn->state == KRT_CONN_ERROR || conn->state == KRT_CONN_CLOSING) {
		id = conn->cm_id;
		WRITE_ONCE(conn->cm_id, NULL);
	}
	mutex_unlock(&krt_pool_lock);
	if (!id) {
		mutex_unlock(&conn->release_lock);
		return;
	}

	/* ORDER: no event is handled after this, then tear down */
	rdma_lock_handler(id);
	conn->dying = true;
	rdma_unlock_handler(id);
	krt_peer_dp_del(conn);
	if (id->qp)
		rdma_disconnect(id);
	krt_conn_destroy_qp(conn, id);
	rdma_destroy_id(id);
	/*
	 * The QP is gone and raises no more events: a fatal event of it still
	 * queued must not fail the attempt that follows this release.
	 */
	if (cancel_work_sync(&conn->fatal_work))
		krt_conn_put(conn);	/* the work's */
	mutex_unlock(&conn->release_lock);
	krt_conn_put(conn);		/* the id's reference */
}

/* krt_conn_set_state()'s table: the states each state may go to */
static const u8 krt_conn_next[] = {
	[KRT_CONN_IDLE]		= BIT(KRT_CONN_CONNECTING) | BIT(KRT_CONN_ERROR) |
				  BIT(KRT_CONN_CLOSING),
	[KRT_CONN_CONNECTING]	= BIT(KRT_CONN_ACTIVE) | BIT(KRT_CONN_ERROR) |
				  BIT(KRT_CONN_CLOSING),
	[KRT_CONN_ACTIVE]	= BIT(KRT_CONN_ERROR) | BIT(KRT_CONN_CLOSING),
	[KRT_CONN_ERROR]	= BIT(KRT_CONN_RECONNECTING) | BIT(KRT_CONN_CLOSING),
	[KRT_CONN_RECONNECTING]	= BIT(KRT_CONN_CONNECTING) | BIT(KRT_CONN_ERROR) |
				  BIT(KRT_CONN_CLOSING),
	[KRT_CONN_CLOSING]	= 0,
};

/**
 * krt_conn_set_state() - the one funnel of connection state changes
 * @conn: the connection
 * @state: the new state
 * @reason: failure reason for KRT_CONN_ERROR, else NULL
 *
 * Moves the connection in or out of its peer's data path, records the
 * time and announces the change.  Caller holds krt_pool_lock.
 *
 * Return: true, or false (and a warning, once) for a transition the table
 * does not allow; nothing changes then.
 */
bool krt_conn_set_state(struct krt_conn *conn, enum krt_conn_state state,
			const char *reason)
{
	enum krt_conn_state old = conn->state;
	struct krt_peer *peer = conn->peer;

	lockdep_assert_held(&krt_pool_lock);
	if (WARN_ONCE(old >= ARRAY_SIZE(krt_conn_next) || state > KRT_CONN_RECONNECTING ||
		      !(krt_conn_next[old] & BIT(state)),
		      "krt: %s/%u: no transition %u -> %u\n", peer->name,
		      conn->index, old, state))
		return false;
	trace_krt_conn_state(conn, old, state, reason);
	conn->state = state;
	conn->state_time = jiffies;
	if (state == KRT_CONN_ACTIVE) {
		if (conn->was_up) {
			conn->reconnects++;
			krt_stat_inc(conn, KRT_A_STAT_RECONNECTS);
		}
		if (conn->was_up && !conn->inbound)
			peer->reconnects++;
		conn->was_up = true;
		conn->attempt = 0;
		if (!conn->inbound && conn->q)
			krt_peer_dp_add(conn);
		else if (conn->q)
			krt_queue_start(conn->q);	/* server: heartbeat checks */
	} else if (old == KRT_CONN_ACTIVE) {
		krt_peer_dp_del(conn);
	}
	if (reason) {
		strscpy(conn->reason, reason, sizeof(conn->reason));
		strscpy(peer->reason, reason, sizeof(peer->reason));
		peer->err_time = jiffies ?: 1;
	}
	krt_nl_conn_event(conn);
	krt_peer_update_state(peer);
	return true;
}

/*
 * Backoff before attempt @n (0 = the first after a success): a random
 * delay in [1, min(max, base * 2^n)] ms, full jitter so that the
 * connections of many nodes do not come back in step.
 */
static unsigned long krt_conn_backoff(struct krt_peer *peer, u32 n)
{
	u32 base = max_t(u32, READ_ONCE(peer->prm.reconnect_ms), 1);
	u32 cap = max_t(u32, READ_ONCE(peer->prm.reconnect_max_ms), base);
	u64 d = (u64)base << min_t(u32, n, 20);

	d = min_t(u64, d, cap);
	return msecs_to_jiffies(1 + get_random_u32_below((u32)d));
}

/*
 * After its release: an outbound connection still in the pool tries
 * again after a backoff.  Caller holds krt_pool_lock.
 */
static void krt_conn_schedule_locked(struct krt_conn *conn)
{
	unsigned long delay;

	lockdep_assert_held(&krt_pool_lock);
	if (conn->inbound || list_empty(&conn->entry) || READ_ONCE(conn->peer->closing) ||
	    conn->state != KRT_CONN_ERROR)
		return;
	delay = krt_conn_backoff(conn->peer, conn->attempt);
	if (!krt_conn_set_state(conn, KRT_CONN_RECONNECTING, NULL))
		return;
	trace_krt_reconnect(conn, delay);
	conn->next_attempt = jiffies + delay;
	kref_get(&conn->ref);		/* the work's */
	/* pending still as the last attempt's bound: one reference is enough */
	if (mod_delayed_work(krt_wq, &conn->reconnect_work, delay))
		krt_conn_put(conn);
}

static void krt_conn_release_work(struct work_struct *work)
{
	struct krt_conn *conn = container_of(work, struct krt_conn, release_work);

	krt_conn_release(conn);
	mutex_lock(&krt_pool_lock);
	krt_conn_schedule_locked(conn);
	mutex_unlock(&krt_pool_lock);
	krt_conn_put(conn);		/* the work's */
}

/* Release in the background; the work holds a reference. */
static void krt_conn_queue_release(struct krt_conn *conn)
{
	kref_get(&conn->ref);
	if (!queue_work(krt_wq, &conn->release_work))
		krt_conn_put(conn);
}

static void krt_conn_fatal_work(struct work_struct *work)
{
	struct krt_conn *conn = container_of(work, struct krt_conn, fatal_work);

	krt_conn_fail(conn, "fatal QP error");
	krt_conn_put(conn);		/* the work's */
}

/**
 * krt_conn_qp_event() - asynchronous events of a connection's QP
 * @ev: the event
 * @ctx: the connection
 *
 * A receive before ESTABLISHED is reported to rdma_cm (COMM_EST); a
 * fatal QP error fails the connection (from a work: drivers may call this
 * in interrupt context); the rest is logged.
 */
void krt_conn_qp_event(struct ib_event *ev, void *ctx)
{
	struct krt_conn *conn = ctx;
	struct rdma_cm_id *id;

	trace_krt_qp_event(conn, ev->event);
	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		/*
		 * Read once, without krt_pool_lock (this may be hardirq
		 * context): krt_conn_release() clears it before it destroys
		 * this QP and destroys the id only after, so a non-NULL id
		 * read here outlives this event.
		 */
		id = READ_ONCE(conn->cm_id);
		if (id)
			rdma_notify(id, IB_EVENT_COMM_EST);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
	case IB_EVENT_PATH_MIG_ERR:
		pr_warn_ratelimited("%s/%u: QP event: %s\n", conn->peer->name,
				    conn->index, ib_event_msg(ev->event));
		/* may be hardirq context: fail the connection from a work */
		kref_get(&conn->ref);
		if (!queue_work(krt_wq, &conn->fatal_work))
			krt_conn_put(conn);
		break;
	default:
		pr_debug("%s/%u: QP event: %s\n", conn->peer->name, conn->index,
			 ib_event_msg(ev->event));
		break;
	}
}

/**
 * krt_conn_inject_qp_fatal() - report a fatal QP error as a driver would
 * @conn: the connection; the caller holds a reference
 *
 * For the fault/qp_fatal knob: calls the QP's own event handler with
 * %IB_EVENT_QP_FATAL, the way a driver reports a catastrophic QP error,
 * moves the QP to error as the hardware would (its work requests flush)
 * and waits for the work the event queued.
 *
 * Return: 0, or -ENOTCONN when the connection is not active.
 */
int krt_conn_inject_qp_fatal(struct krt_conn *conn)
{
	struct ib_event ev = { .event = IB_EVENT_QP_FATAL };
	struct ib_qp *qp = NULL;

	/* release_lock keeps the QP until its handler has been called */
	mutex_lock(&conn->release_lock);
	mutex_lock(&krt_pool_lock);
	if (conn->state == KRT_CONN_ACTIVE && conn->qp_id)
		qp = conn->qp_id->qp;
	mutex_unlock(&krt_pool_lock);
	if (qp) {
		struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

		ev.device = qp->device;
		ev.element.qp = qp;
		qp->event_handler(&ev, qp->qp_context);
		/* as on a NIC, the QP is in error: what it had in flight is lost */
		if (ib_modify_qp(qp, &attr, IB_QP_STATE))
			pr_warn_ratelimited("%s/%u: qp_fatal: cannot move the QP to error\n",
					    conn->peer->name, conn->index);
	}
	mutex_unlock(&conn->release_lock);
	if (!qp)
		return -ENOTCONN;
	flush_work(&conn->fatal_work);
	return 0;
}

/**
 * krt_conn_fail() - a connection failed: Error, and release in the background
 * @conn: the connection
 * @reason: what happened, for conn show and events
 *
 * May be called from the connection's cm handler.
 */
void krt_conn_fail(struct krt_conn *conn, const char *reason)
{
	struct krt_peer *peer = conn->peer;
	bool close = false;

	mutex_lock(&krt_pool_lock);
	if (conn->state != KRT_CONN_CLOSING && conn->state != KRT_CONN_ERROR) {
		pr_debug("%s/%u: %s\n", peer->name, conn->index, reason);
		krt_conn_set_state(conn, KRT_CONN_ERROR, reason);
	}
	if (conn->state == KRT_CONN_CLOSING) {
		mutex_unlock(&krt_pool_lock);
		return;		/* its closer releases it */
	}
	/*
	 * An inbound connection is the remote's to re-establish: a failed one
	 * leaves the pool, and an inbound peer without connections goes.
	 */
	if (conn->inbound && !list_empty(&conn->entry)) {
		list_del_init(&conn->entry);
		krt_pool_changed();
		close = true;		/* the pool's reference goes to close_work */
		krt_peer_update_state(peer);
		krt_pool_drop_empty_inbound(peer);
	}
	mutex_unlock(&krt_pool_lock);
	if (close)
		queue_work(krt_close_wq, &conn->close_work);
	else
		krt_conn_queue_release(conn);
}

/**
 * krt_conn_established() - the connection is up
 * @conn: the connection
 * @id: its cm id
 */
void krt_conn_established(struct krt_conn *conn, struct rdma_cm_id *id)
{
	mutex_lock(&krt_pool_lock);
	memcpy(&conn->laddr, &id->route.addr.src_addr, sizeof(conn->laddr));
	memcpy(&conn->raddr, &id->route.addr.dst_addr, sizeof(conn->raddr));
	/* a connection left its pool meanwhile: its closer is on the way */
	if (conn->state == KRT_CONN_CONNECTING && !list_empty(&conn->entry) &&
	    !READ_ONCE(conn->peer->closing))
		krt_conn_set_state(conn, KRT_CONN_ACTIVE, NULL);
	mutex_unlock(&krt_pool_lock);
}

/**
 * krt_conn_start() - connect an outbound connection
 * @conn: a connection of a peer's pool, idle or waiting to reconnect
 *
 * Does nothing if the connection left its pool or changed state since
 * the caller found it (a parallel close, a shrink, an unload).  Failures
 * are reported through the connection's state.
 */
void krt_conn_start(struct krt_conn *conn)
{
	struct rdma_cm_id *id;
	int ret;

	id = krt_fault_connect() ? ERR_PTR(-ENOMEM) :
		rdma_create_id(&init_net, krt_cm_handler, conn, RDMA_PS_TCP,
			       IB_QPT_RC);
	mutex_lock(&krt_pool_lock);
	if (list_empty(&conn->entry) || READ_ONCE(conn->peer->closing) ||
	    (conn->state != KRT_CONN_IDLE && conn->state != KRT_CONN_RECONNECTING)) {
		mutex_unlock(&krt_pool_lock);
		if (!IS_ERR(id))
			rdma_destroy_id(id);
		return;
	}
	conn->attempt++;
	if (IS_ERR(id) || krt_fault_reconnect()) {
		krt_conn_set_state(conn, KRT_CONN_ERROR, IS_ERR(id) ?
				   "cannot create a cm id" : "reconnect failed (fault injected)");
		mutex_unlock(&krt_pool_lock);
		if (!IS_ERR(id))
			rdma_destroy_id(id);
		krt_conn_queue_release(conn);
		return;
	}
	kref_get(&conn->ref);		/* held by the id */
	conn->cm_id = id;
	/* the old id is destroyed: events of the new one count again */
	conn->dying = false;
	conn->hb_ms = conn->peer->prm.hb_ms;
	conn->hb_misses = conn->peer->prm.hb_misses;
	krt_conn_set_state(conn, KRT_CONN_CONNECTING, NULL);
	/* the attempt's bound (the work does nothing once it is active) */
	conn->timeout_attempt = conn->attempt;
	kref_get(&conn->ref);		/* the work's */
	if (mod_delayed_work(krt_wq, &conn->reconnect_work, krt_conn_connect_timeout()))
		krt_conn_put(conn);	/* it was pending: its reference carries over */
	/*
	 * ORDER: resolve under the lock, so that a close (which takes the id
	 * under it) cannot destroy the id under us; rdma_cm reports the
	 * outcome from its own workqueue, never from inside this call.  Safe
	 * only because the id is new: on an id that resolved before,
	 * rdma_resolve_addr() would wait for its handler, which takes this
	 * lock.
	 */
	ret = krt_fault_connect() ? -ENOMEM :
		rdma_resolve_addr(id, NULL, (struct sockaddr *)&conn->peer->addr,
				  KRT_RESOLVE_TIMEOUT_MS);
	mutex_unlock(&krt_pool_lock);
	if (ret)
		krt_conn_fail(conn, "address resolution failed to start");
}

/**
 * krt_conn_close() - close a connection for good and drop the pool's reference
 * @conn: the connection, already unlisted from its peer
 *
 * Caller must not hold krt_pool_lock.
 */
void krt_conn_close(struct krt_conn *conn)
{
	mutex_lock(&krt_pool_lock);
	if (conn->state != KRT_CONN_CLOSING)
		krt_conn_set_state(conn, KRT_CONN_CLOSING, NULL);
	mutex_unlock(&krt_pool_lock);
	/* ORDER: no attempt starts after this, then release what is there */
	if (cancel_delayed_work_sync(&conn->reconnect_work))
		krt_conn_put(conn);	/* the work's */
	krt_conn_release(conn);
	flush_work(&conn->release_work);
	krt_conn_put(conn);
}
