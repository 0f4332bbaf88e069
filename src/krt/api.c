// SPDX-License-Identifier: GPL-2.0
/*
 * krt: the exported API - peers, request submission, services.
 *
 * DOC: Submission and connection selection
 *
 * krt_submit() checks a request, picks a connection among the peer's
 * active outbound ones by the peer's policy (round-robin, or the fewest
 * requests in flight) and hands the request to the connection's queue,
 * which DMA-maps the buffer for its device.  If the connection
 * stopped taking requests meanwhile, the next one is tried.  The peer's
 * dp_lock (a spinlock) protects its list of such connections; a
 * connection joins it when it becomes active and leaves it when it fails
 * or closes, before its queue is destroyed.
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

static struct krt_service __rcu *krt_services[KRT_MAX_SERVICES];
static DEFINE_MUTEX(krt_svc_lock);	/* writers of krt_services */

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
	if (list_empty(&conn->dp_entry)) {
		kref_get(&conn->ref);		/* the list's */
		list_add_tail(&conn->dp_entry, &peer->dp_conns);
	}
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
	listed = !list_empty(&conn->dp_entry);
	list_del_init(&conn->dp_entry);
	spin_unlock_bh(&peer->dp_lock);
	if (listed)
		krt_conn_put(conn);
}

/* Pick a connection by the peer's policy, with a reference; or NULL. */
static struct krt_conn *krt_peer_pick(struct krt_peer *peer, u32 skip)
{
	struct krt_conn *conn, *best = NULL;
	u32 n = 0, i = 0, want, load, best_load = U32_MAX;

	spin_lock_bh(&peer->dp_lock);
	list_for_each_entry(conn, &peer->dp_conns, dp_entry)
		n++;
	if (!n)
		goto out;
	if (READ_ONCE(peer->policy) == KRT_POLICY_MIN_INFLIGHT) {
		list_for_each_entry(conn, &peer->dp_conns, dp_entry) {
			load = krt_queue_inflight(conn->q);
			if (load < best_load) {
				best = conn;
				best_load = load;
			}
		}
	} else {
		want = (peer->dp_rr++ + skip) % n;
		list_for_each_entry(conn, &peer->dp_conns, dp_entry)
			if (i++ == want) {
				best = conn;
				break;
			}
	}
	if (best)
		kref_get(&best->ref);
out:
	spin_unlock_bh(&peer->dp_lock);
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

/**
 * krt_submit() - send a request to a peer
 * @peer: from krt_peer_get()
 * @req: the request, filled as &struct krt_req says; untouched by krt
 *	until @req->done is called, except for its private fields
 *
 * May be called from any context (from softirq with %KRT_REQ_NOWAIT or
 * not: krt never sleeps here).  The request waits for room on its
 * connection unless %KRT_REQ_NOWAIT is set.
 *
 * Return: 0 when the request was taken (@req->done will be called once),
 * else an error and @req->done is not called: -EMSGSIZE (message over
 * %KRT_MAX_MSG, or data over the connection's max IO size), -EINVAL
 * (malformed request, or a buffer one MR cannot map), -ENOTCONN (no
 * active connection), -EAGAIN (NOWAIT and no room), -EBUSY (too many
 * waiting), -ENOMEM, -EIO (DMA mapping).
 */
int krt_submit(struct krt_peer *peer, struct krt_req *req)
{
	struct krt_conn *conn;
	u32 pages = 0, try;
	int ret;

	ret = krt_req_check(req, &pages);
	if (ret)
		return ret;
	req->status = -EINPROGRESS;
	req->rsp_status = 0;
	req->rsp_len = 0;
	req->krt_sgl = NULL;
	req->krt_nents = 0;
	INIT_LIST_HEAD(&req->krt_entry);
	req->krt_start = local_clock();
	req->krt_deadline = jiffies +
		msecs_to_jiffies(req->timeout_ms ?: READ_ONCE(krt_req_timeout_ms));

	for (try = 0; try < 4; try++) {
		conn = krt_peer_pick(peer, try);
		if (!conn)
			return -ENOTCONN;
		if (req->dir != KRT_DATA_NONE &&
		    req->data_len > krt_queue_max_io(conn->q)) {
			krt_conn_put(conn);
			return -EMSGSIZE;
		}
		if (req->dir != KRT_DATA_NONE) {
			req->krt_sgl = krt_frwr_sg(req->bvec, req->nr_bvec,
						   in_task() ? GFP_NOIO : GFP_ATOMIC);
			if (!req->krt_sgl) {
				krt_conn_put(conn);
				return -ENOMEM;
			}
		}
		req->krt_conn = conn;
		/* maps the buffer; the request keeps the reference until done */
		ret = krt_queue_submit(conn->q, req);
		if (!ret)
			return 0;
		kfree(req->krt_sgl);
		req->krt_sgl = NULL;
		req->krt_conn = NULL;
		krt_conn_put(conn);
		if (ret != -ESHUTDOWN)
			return ret;
		/* the connection stopped meanwhile: pick another */
	}
	return -ENOTCONN;
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
