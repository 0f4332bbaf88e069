// SPDX-License-Identifier: GPL-2.0
/*
 * krt: the exported API - peers, request submission, services.
 *
 * DOC: Submission and connection selection
 *
 * krt_submit() checks a request, picks a connection among the peer's
 * active outbound ones by the peer's policy (round-robin, or the fewest
 * requests in flight) and hands the request to the connection's queue,
 * which DMA-maps the buffer for its device when a slot takes it.  If the
 * connection stopped taking requests meanwhile, the next one is tried.
 * The peer's list of such connections is an RCU list: submitters walk it
 * under rcu_read_lock() and share no lock or counter (each CPU has its
 * own round-robin cursor; min-inflight reads each queue's atomic count);
 * writers hold the peer's dp_lock.  A connection joins the list when it
 * becomes active and leaves it when it fails or closes; its queue is
 * destroyed only after a grace period (krt_queue_destroy() waits for
 * one), and the connection itself is freed after one.
 *
 * DOC: Failover
 *
 * When a connection fails, its queue is drained and its MRs destroyed
 * (no late RDMA can reach the pages any more), then every request it held
 * that has not completed goes through krt_peer_resend(): it fails if it
 * was submitted with %KRT_REQ_NORETRY (-ECONNRESET), is past its deadline
 * (-ETIMEDOUT) or was sent ``max_sends`` times (-ECONNRESET); else it is
 * sent again, flagged as re-sent and with the same id, on another active
 * connection, or waits on the peer's pending list for one to come up.
 * The peer's pending work re-sends waiting requests when a connection
 * becomes active, and fails them at their deadline or once the peer has
 * been without an active connection for ``loss_timeout`` (-ENOTCONN).  A
 * peer being deleted fails them with -ESHUTDOWN.
 *
 * Services live in an RCU-protected table by id; each request given to a
 * service holds a count that krt_service_unregister() waits for.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sched/clock.h>
#include <linux/wait_bit.h>
#include "krt.h"
#include "trace.h"

static struct krt_service __rcu *krt_services[KRT_MAX_SERVICES];
static DEFINE_MUTEX(krt_svc_lock);	/* writers of krt_services */
/* Ids of requests: unique per module load. */
static atomic64_t krt_req_ids = ATOMIC64_INIT(0);

static unsigned int krt_max_sends = 8;
module_param_named(max_sends, krt_max_sends, uint, 0644);
MODULE_PARM_DESC(max_sends, "Times a request may be sent before it fails (default: 8)");

#define KRT_PENDING_TICK	(HZ / 10)
#define KRT_MAX_PENDING		65536	/* requests waiting per peer */

/**
 * krt_peer_get() - look a peer up by name and take a reference
 * @name: the name given with ``krtctl peer add`` (or ``in-<node id>-<pool id>``)
 *
 * Return: the peer, to be released with krt_peer_put(), or NULL.
 */
struct krt_peer *krt_peer_get(const char *name)
{
	struct krt_peer *peer;

	mutex_lock(&krt_pool_lock);
	peer = krt_peer_find_locked(name);
	if (peer)
		kref_get(&peer->ref);
	mutex_unlock(&krt_pool_lock);
	return peer;
}
EXPORT_SYMBOL_GPL(krt_peer_get);

/**
 * krt_peer_max_io() - largest data buffer a request to a peer may carry
 * @peer: the peer
 *
 * Return: bytes, the smallest max IO size negotiated by its active
 * connections, or 0 when none is active.
 */
u32 krt_peer_max_io(struct krt_peer *peer)
{
	struct krt_conn *conn;
	u32 max = 0;

	spin_lock_bh(&peer->dp_lock);
	list_for_each_entry(conn, &peer->dp_conns, dp_entry) {
		u32 m = krt_queue_max_io(conn->q);

		max = max ? min(max, m) : m;
	}
	spin_unlock_bh(&peer->dp_lock);
	return max;
}
EXPORT_SYMBOL_GPL(krt_peer_max_io);

/**
 * krt_peer_dp_add() - an outbound connection takes requests from now on
 * @conn: the connection, active, with its queue
 */
void krt_peer_dp_add(struct krt_conn *conn)
{
	struct krt_peer *peer = conn->peer;

	krt_queue_start(conn->q);
	spin_lock_bh(&peer->dp_lock);
	if (!conn->dp_listed) {
		kref_get(&conn->ref);		/* the list's */
		list_add_tail_rcu(&conn->dp_entry, &peer->dp_conns);
		conn->dp_listed = true;
	}
	peer->down_since = 0;
	/* requests wait for a connection: this one (never once closing) */
	if (peer->nr_pending && !peer->closing)
		mod_delayed_work(krt_wq, &peer->pending_work, 0);
	spin_unlock_bh(&peer->dp_lock);
}

/**
 * krt_peer_dp_del() - a connection takes no more requests
 * @conn: the connection
 */
void krt_peer_dp_del(struct krt_conn *conn)
{
	struct krt_peer *peer = conn->peer;
	bool listed;

	if (conn->q)
		krt_queue_stop(conn->q);
	spin_lock_bh(&peer->dp_lock);
	listed = conn->dp_listed;
	/*
	 * ORDER: readers may still walk through it: its next pointer stays
	 * valid (list_del_rcu()); it is listed again only with a new queue,
	 * after krt_queue_destroy() waited for a grace period
	 */
	if (listed)
		list_del_rcu(&conn->dp_entry);
	conn->dp_listed = false;
	if (listed && list_empty(&peer->dp_conns)) {
		unsigned long loss = READ_ONCE(peer->prm.loss_timeout_s);

		/* the loss timeout counts from now; the work tells when it ends */
		peer->down_since = jiffies ?: 1;
		/*
		 * Requests already parked keep their 100 ms deadline checks;
		 * the work arms the loss timeout itself once none is left.
		 */
		if (!peer->closing)
			mod_delayed_work(krt_wq, &peer->pending_work,
					 peer->nr_pending ? KRT_PENDING_TICK : loss * HZ + 1);
	}
	spin_unlock_bh(&peer->dp_lock);
	if (listed)
		krt_conn_put(conn);
}

/*
 * Pick a connection by the peer's policy, or NULL.  @tried: bit i set when
 * the connection at list position i refused the request (stopped, still
 * listed until its reset work takes it off); those are passed over.
 * Caller holds rcu_read_lock().
 */
static struct krt_conn *krt_peer_pick_rcu(struct krt_peer *peer, u32 start,
					  unsigned long tried, u32 *pos)
{
	bool min_inflight = READ_ONCE(peer->policy) == KRT_POLICY_MIN_INFLIGHT;
	u32 n = 0, i = 0, key, best_key = U32_MAX;
	struct krt_conn *conn, *best = NULL;

	list_for_each_entry_rcu(conn, &peer->dp_conns, dp_entry)
		n++;
	if (!n)
		return NULL;
	start %= n;
	/*
	 * The untried one with the lowest key: its load (min-inflight), or
	 * its distance from the CPU's cursor (round robin).  The list may
	 * change meanwhile: then the pick is merely less fair.
	 */
	list_for_each_entry_rcu(conn, &peer->dp_conns, dp_entry) {
		u32 at = i++;

		if (at < BITS_PER_LONG && (tried & BIT(at)))
			continue;
		key = min_inflight ? krt_queue_inflight(READ_ONCE(conn->q)) :
				     (at + n - start) % n;
		if (key < best_key) {
			best = conn;
			best_key = key;
			*pos = at;
		}
	}
	return best;
}

static int krt_req_check(struct krt_req *req, u32 *pages)
{
	u32 len;
	int ret;

	if (!req->done || req->msg_len > KRT_MAX_MSG ||
	    (req->msg_len && !req->msg))
		return req->msg_len > KRT_MAX_MSG ? -EMSGSIZE : -EINVAL;
	if (!req->service || req->service >= KRT_MAX_SERVICES)
		return -EINVAL;
	if (req->dir == KRT_DATA_NONE)
		return req->bvec || req->nr_bvec || req->data_len ? -EINVAL : 0;
	if (req->dir != KRT_DATA_READ && req->dir != KRT_DATA_WRITE)
		return -EINVAL;
	ret = krt_frwr_check(req->bvec, req->nr_bvec, &len, pages);
	if (ret)
		return ret;
	if (len != req->data_len)
		return -EINVAL;
	return 0;
}

/*
 * Hand a request to one of the peer's active connections.  Return: 0 (it
 * completes through its queue), -ENOTCONN when none takes it, or the
 * queue's error (-EAGAIN, -EBUSY, -EMSGSIZE, -EIO).
 *
 * ORDER: the queue is used under rcu_read_lock(), having been found on
 * the peer's list: a connection leaves the list (krt_peer_dp_del())
 * before its queue is destroyed, and krt_queue_destroy() waits for a
 * grace period first, so the queue cannot go under us; a connection
 * whose last reference went is passed over (freed after a grace period).
 */
static int krt_peer_post(struct krt_peer *peer, struct krt_req *req)
{
	unsigned long tried = 0;
	struct krt_conn *conn;
	u32 try, start, pos;
	int ret = -ENOTCONN;

	rcu_read_lock();
	start = this_cpu_inc_return(*peer->dp_cursor);
	for (try = 0; try < 4; try++) {
		pos = BITS_PER_LONG;
		conn = krt_peer_pick_rcu(peer, start, tried, &pos);
		if (!conn)
			break;
		if (pos < BITS_PER_LONG)
			tried |= BIT(pos);
		if (!kref_get_unless_zero(&conn->ref))	/* the request's, until done */
			continue;
		req->krt_conn = conn;
		ret = krt_queue_submit(READ_ONCE(conn->q), req);
		if (!ret)
			break;
		req->krt_conn = NULL;
		krt_conn_put(conn);
		if (ret != -ESHUTDOWN)
			break;
		/* the connection stopped meanwhile: pick another */
		ret = -ENOTCONN;
	}
	rcu_read_unlock();
	return ret;
}

/*
 * Park a request until a connection comes up.  Return: 0, or an error if
 * the peer is going or lost (the request was not parked).
 */
static int krt_peer_park(struct krt_peer *peer, struct krt_req *req)
{
	int ret = 0;

	spin_lock_bh(&peer->dp_lock);
	if (peer->closing)
		ret = -ESHUTDOWN;
	else if (krt_peer_lost(peer))
		ret = -ENOTCONN;
	else if (peer->nr_pending >= KRT_MAX_PENDING)
		ret = -EBUSY;
	if (!ret) {
		list_add_tail(&req->krt_entry, &peer->pending);
		if (!peer->nr_pending++)
			mod_delayed_work(krt_wq, &peer->pending_work, KRT_PENDING_TICK);
	}
	spin_unlock_bh(&peer->dp_lock);
	return ret;
}

/**
 * krt_req_finish() - a request is done: call its owner
 * @req: the request
 * @status: its final status
 *
 * Drops the request's peer reference.  Any context but a queue lock.
 */
void krt_req_finish(struct krt_req *req, int status)
{
	krt_req_finish_on(req, status, NULL);
}

/**
 * krt_req_finish_on() - krt_req_finish() of a request a connection answered
 * @req: the request
 * @status: its final status
 * @conn: the connection that completed it, or NULL
 *
 * Counts the completion and its round trip on @conn and the peer.
 */
void krt_req_finish_on(struct krt_req *req, int status, struct krt_conn *conn)
{
	struct krt_peer *peer = req->krt_peer;

	if (status) {
		if (conn)
			krt_stat_inc(conn, KRT_A_STAT_DONE_ERROR);
		else
			krt_peer_stat_add(peer, KRT_A_STAT_DONE_ERROR, 1);
	} else {
		if (conn)
			krt_stat_inc(conn, KRT_A_STAT_DONE_OK);
		else
			krt_peer_stat_add(peer, KRT_A_STAT_DONE_OK, 1);
		krt_stats_lat(conn, peer, KRT_HIST_RTT, krt_ns_since(req->krt_start));
	}
	trace_krt_req_done(peer, conn, req, status);
	req->status = status;
	req->krt_peer = NULL;
	req->done(req);
	krt_peer_put(peer);
}

/**
 * krt_peer_resend() - a request's connection failed before it completed
 * @peer: the request's peer
 * @req: the request; its old connection's resources are released (MR
 *	destroyed, buffer unmapped) and it holds no connection reference
 * @status: what the request completes with if it is not re-sent
 *
 * Called without any queue lock, from a workqueue.
 */
void krt_peer_resend(struct krt_peer *peer, struct krt_req *req, int status)
{
	int ret;

	if (READ_ONCE(peer->closing)) {
		krt_req_finish(req, -ESHUTDOWN);
		return;
	}
	if ((req->flags & KRT_REQ_NORETRY) || status == -ETIMEDOUT ||
	    req->krt_sends >= max(READ_ONCE(krt_max_sends), 1U) ||
	    time_after_eq(jiffies, req->krt_deadline)) {
		krt_req_finish(req, time_after_eq(jiffies, req->krt_deadline) ?
			       -ETIMEDOUT : status);
		return;
	}
	atomic64_inc(&peer->resent);
	krt_peer_stat_add(peer, KRT_A_STAT_RESENT, 1);
	ret = krt_peer_post(peer, req);
	if (ret == -ENOTCONN || ret == -EBUSY || ret == -EAGAIN)
		ret = krt_peer_park(peer, req);
	if (ret)
		krt_req_finish(req, ret);
}

/**
 * krt_peer_pending_work() - re-send or fail requests waiting for a connection
 * @work: the peer's pending_work
 *
 * Also recomputes the peer's state when its loss timeout ends.
 */
void krt_peer_pending_work(struct work_struct *work)
{
	struct krt_peer *peer = container_of(to_delayed_work(work), struct krt_peer,
					     pending_work);
	struct krt_req *req, *tmp;
	LIST_HEAD(todo);
	bool lost, closing, again;
	int ret;

	mutex_lock(&krt_pool_lock);
	krt_peer_update_state(peer);
	mutex_unlock(&krt_pool_lock);

	spin_lock_bh(&peer->dp_lock);
	list_splice_init(&peer->pending, &todo);
	peer->nr_pending = 0;
	closing = peer->closing;
	lost = krt_peer_lost(peer);
	spin_unlock_bh(&peer->dp_lock);

	list_for_each_entry_safe(req, tmp, &todo, krt_entry) {
		list_del_init(&req->krt_entry);
		if (closing) {
			krt_req_finish(req, -ESHUTDOWN);
			continue;
		}
		if (time_after_eq(jiffies, req->krt_deadline)) {
			krt_req_finish(req, -ETIMEDOUT);
			continue;
		}
		if (lost) {
			krt_req_finish(req, -ENOTCONN);
			continue;
		}
		ret = krt_peer_post(peer, req);
		if (ret == -ENOTCONN || ret == -EBUSY || ret == -EAGAIN)
			ret = krt_peer_park(peer, req);
		if (ret)
			krt_req_finish(req, ret);
	}
	spin_lock_bh(&peer->dp_lock);
	again = peer->nr_pending && !peer->closing;
	if (again) {
		mod_delayed_work(krt_wq, &peer->pending_work, KRT_PENDING_TICK);
	} else if (peer->down_since && !peer->closing && !krt_peer_lost(peer)) {
		/* no connection: wake up when the loss timeout ends */
		unsigned long end = peer->down_since +
			(unsigned long)READ_ONCE(peer->prm.loss_timeout_s) * HZ;

		mod_delayed_work(krt_wq, &peer->pending_work,
				 time_after(end, jiffies) ? end - jiffies + 1 : 1);
	}
	spin_unlock_bh(&peer->dp_lock);
}

/**
 * krt_peer_queued() - requests waiting for a connection of a peer
 * @peer: the peer
 *
 * Return: their number.
 */
u32 krt_peer_queued(struct krt_peer *peer)
{
	return READ_ONCE(peer->nr_pending);
}

/**
 * krt_peer_mark_closing() - a peer is going: nothing is re-sent to it
 * @peer: the peer
 */
void krt_peer_mark_closing(struct krt_peer *peer)
{
	spin_lock_bh(&peer->dp_lock);
	peer->closing = true;
	spin_unlock_bh(&peer->dp_lock);
}

/**
 * krt_peer_shutdown() - fail a peer's waiting requests before its pool closes
 * @peer: the peer, unlisted
 *
 * Caller holds no lock; waits for the pending work.
 */
void krt_peer_shutdown(struct krt_peer *peer)
{
	krt_peer_mark_closing(peer);
	cancel_delayed_work_sync(&peer->pending_work);
	/* the work cannot be queued again: closing is set */
	krt_peer_pending_work(&peer->pending_work.work);
}

/**
 * krt_submit() - send a request to a peer
 * @peer: from krt_peer_get()
 * @req: the request, filled as &struct krt_req says; untouched by krt
 *	until @req->done is called, except for its private fields and @id
 *
 * May be called from any context but hardirq or with interrupts disabled
 * (krt takes bottom-half locks): krt neither sleeps nor allocates here
 * (the scatterlist of a buffer is preallocated per request slot).  The
 * request waits for room on its connection unless %KRT_REQ_NOWAIT is set;
 * when the peer has no active connection it waits for one to come up,
 * until its deadline or the peer's loss timeout.  If its connection fails
 * it is re-sent on another one (see "Failover") unless %KRT_REQ_NORETRY
 * is set.
 *
 * Return: 0 when the request was taken (@req->done will be called once),
 * else an error and @req->done is not called: -EMSGSIZE (message over
 * %KRT_MAX_MSG, or data over the connection's max IO size), -EINVAL
 * (malformed request, or a buffer one MR cannot map), -ENOTCONN (no
 * active connection and, with %KRT_REQ_NOWAIT, none to wait for, or the
 * peer is past its loss timeout, or it is an inbound peer), -ESHUTDOWN
 * (peer deleted), -EAGAIN (NOWAIT and no room), -EBUSY (too many waiting).
 */
int krt_submit(struct krt_peer *peer, struct krt_req *req)
{
	int ret;
	u32 pages = 0;

	ret = krt_req_check(req, &pages);
	if (ret)
		return ret;
	if (peer->inbound)
		return -ENOTCONN;
	req->status = -EINPROGRESS;
	req->rsp_status = 0;
	req->rsp_len = 0;
	req->krt_sgl = NULL;
	req->krt_nents = 0;
	req->krt_sends = 0;
	req->krt_conn = NULL;
	req->id = atomic64_inc_return(&krt_req_ids);
	INIT_LIST_HEAD(&req->krt_entry);
	req->krt_start = local_clock();
	req->krt_deadline = jiffies +
		msecs_to_jiffies(req->timeout_ms ?: READ_ONCE(krt_req_timeout_ms));
	kref_get(&peer->ref);		/* the request's, until done */
	req->krt_peer = peer;
	/* ORDER: before it is posted: it may complete at once */
	trace_krt_req_submit(peer, req);

	ret = krt_peer_post(peer, req);
	if (ret == -ENOTCONN && !(req->flags & KRT_REQ_NOWAIT))
		ret = krt_peer_park(peer, req);
	if (ret) {
		trace_krt_req_refused(peer, req, ret);
		req->krt_peer = NULL;
		krt_peer_put(peer);
	}
	return ret;
}
EXPORT_SYMBOL_GPL(krt_submit);

/**
 * krt_service_register() - answer requests for a service id
 * @svc: the service; @svc->id and @svc->request set, and it stays
 *	allocated until krt_service_unregister() returned
 *
 * Return: 0, -EINVAL for a bad id, -EBUSY if the id is taken.
 */
int krt_service_register(struct krt_service *svc)
{
	int ret = 0;

	if (!svc->id || svc->id >= KRT_MAX_SERVICES || !svc->request)
		return -EINVAL;
	atomic_set(&svc->krt_active, 0);
	mutex_lock(&krt_svc_lock);
	if (rcu_access_pointer(krt_services[svc->id]))
		ret = -EBUSY;
	else
		rcu_assign_pointer(krt_services[svc->id], svc);
	mutex_unlock(&krt_svc_lock);
	if (!ret)
		pr_debug("service %u (%s) registered\n", svc->id, svc->name ?: "-");
	return ret;
}
EXPORT_SYMBOL_GPL(krt_service_register);

/**
 * krt_service_unregister() - stop a service
 * @svc: a registered service
 *
 * New requests for its id are answered -EPROTONOSUPPORT.  Waits until the
 * service answered every request it was given (krt_srv_reply()).
 */
void krt_service_unregister(struct krt_service *svc)
{
	mutex_lock(&krt_svc_lock);
	if (rcu_access_pointer(krt_services[svc->id]) == svc)
		RCU_INIT_POINTER(krt_services[svc->id], NULL);
	mutex_unlock(&krt_svc_lock);
	synchronize_rcu();
	wait_var_event(&svc->krt_active, !atomic_read(&svc->krt_active));
}
EXPORT_SYMBOL_GPL(krt_service_unregister);

/**
 * krt_service_get() - the service of an id, counted as busy
 * @id: service id from a request
 *
 * Return: the service, to be released with krt_service_put(), or NULL.
 */
struct krt_service *krt_service_get(u16 id)
{
	struct krt_service *svc;

	if (!id || id >= KRT_MAX_SERVICES)
		return NULL;
	rcu_read_lock();
	svc = rcu_dereference(krt_services[id]);
	if (svc)
		atomic_inc(&svc->krt_active);
	rcu_read_unlock();
	return svc;
}

/**
 * krt_service_put() - a request of a service was answered
 * @svc: the service
 */
void krt_service_put(struct krt_service *svc)
{
	if (atomic_dec_and_test(&svc->krt_active))
		wake_up_var(&svc->krt_active);
}
