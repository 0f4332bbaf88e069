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
 * disconnect or the device going away moves it to Error with a reason;
 * closing it (peer deleted, pool shrunk, module unloaded) goes through
 * Closing.  Events of both kinds are announced on netlink.
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

static void krt_conn_release_work(struct work_struct *work)
{
	krt_conn_release(container_of(work, struct krt_conn, release_work));
}

static void krt_conn_close_work(struct work_struct *work)
{
	krt_conn_close(container_of(work, struct krt_conn, close_work));
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
	conn->ctx = KRT_CM_CONN;
	kref_init(&conn->ref);
	INIT_LIST_HEAD(&conn->entry);
	INIT_LIST_HEAD(&conn->work_entry);
	INIT_LIST_HEAD(&conn->dp_entry);
	INIT_WORK(&conn->release_work, krt_conn_release_work);
	INIT_WORK(&conn->close_work, krt_conn_close_work);
	kref_get(&peer->ref);
	conn->peer = peer;
	conn->index = index;
	conn->inbound = inbound;
	conn->state = KRT_CONN_IDLE;
	conn->depth = peer->depth;
	return conn;
}

static void krt_conn_free(struct kref *ref)
{
	struct krt_conn *conn = container_of(ref, struct krt_conn, ref);

	WARN_ON_ONCE(conn->cm_id || conn->cq || conn->dev);
	krt_queue_free(conn);
	krt_peer_put(conn->peer);
	kfree(conn);
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
	struct ib_cq *cq;
	int ret, vec;

	dev = krt_dev_get_by_ibdev(id->device);
	if (!dev)
		return -ENODEV;
	/* a request takes up to 3 send entries (REG_MR, SEND, LOCAL_INV) */
	conn->depth = clamp_t(u32, conn->depth, 2,
			      min((dev->caps.max_qp_wr - 1) / 3,
				  (dev->caps.max_cqe - 2) / 4));
	vec = dev->caps.comp_vectors ? conn->index % dev->caps.comp_vectors : 0;
	/* send and receive completions share one CQ, +1 each for the drain */
	cq = krt_fault_connect() ? ERR_PTR(-ENOMEM) :
		ib_alloc_cq(dev->ibdev, conn, 4 * conn->depth + 2, vec,
			    IB_POLL_SOFTIRQ);
	if (IS_ERR(cq)) {
		ret = PTR_ERR(cq);
		goto err_put;
	}
	attr.event_handler = NULL;
	attr.send_cq = cq;
	attr.recv_cq = cq;
	attr.qp_type = IB_QPT_RC;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	/* +1 for the drain work request */
	attr.cap.max_send_wr = 3 * conn->depth + 1;
	attr.cap.max_recv_wr = conn->depth + 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = dev->caps.max_inline;
	ret = krt_fault_connect() ? -ENOMEM : rdma_create_qp(id, dev->pd, &attr);
	if (ret)
		goto err_cq;
	ret = krt_queue_create(conn, id, dev, attr.cap.max_inline_data);
	if (ret)
		goto err_qp;
	mutex_lock(&krt_pool_lock);	/* krt_pool_dev_remove() reads them */
	conn->cq = cq;
	conn->dev = dev;
	conn->qpn = id->qp->qp_num;
	mutex_unlock(&krt_pool_lock);
	return 0;

err_qp:
	rdma_destroy_qp(id);
err_cq:
	ib_free_cq(cq);
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
	if (id && id->qp) {
		krt_queue_destroy(conn);
		rdma_destroy_qp(id);
	}
	if (conn->cq) {
		ib_free_cq(conn->cq);
		conn->cq = NULL;
	}
	if (conn->dev) {
		krt_dev_put(conn->dev);
		conn->dev = NULL;
	}
}

/**
 * krt_conn_release() - release a connection's RDMA resources
 * @conn: the connection
 *
 * Must not be called from the connection's cm handler, nor with
 * krt_pool_lock held.  Idempotent.
 */
void krt_conn_release(struct krt_conn *conn)
{
	struct rdma_cm_id *id;

	mutex_lock(&krt_pool_lock);
	id = conn->cm_id;
	conn->cm_id = NULL;
	mutex_unlock(&krt_pool_lock);
	if (!id)
		return;

	/* ORDER: no event is handled after this, then tear down */
	rdma_lock_handler(id);
	conn->dying = true;
	rdma_unlock_handler(id);
	krt_peer_dp_del(conn);
	if (id->qp)
		rdma_disconnect(id);
	krt_conn_destroy_qp(conn, id);
	rdma_destroy_id(id);
	krt_conn_put(conn);		/* the id's reference */
}

/**
 * krt_conn_set_state() - change state and announce it
 * @conn: the connection
 * @state: enum krt_conn_state
 * @reason: failure reason for KRT_CONN_ERROR, else NULL
 *
 * Caller holds krt_pool_lock.
 */
static void krt_conn_set_state(struct krt_conn *conn, u32 state, const char *reason)
{
	u32 old = conn->state;

	lockdep_assert_held(&krt_pool_lock);
	conn->state = state;
	if (state == KRT_CONN_ACTIVE && !conn->inbound && conn->q)
		krt_peer_dp_add(conn);
	else if (old == KRT_CONN_ACTIVE && state != KRT_CONN_ACTIVE)
		krt_peer_dp_del(conn);
	if (reason) {
		strscpy(conn->reason, reason, sizeof(conn->reason));
		strscpy(conn->peer->reason, reason, sizeof(conn->peer->reason));
	}
	krt_nl_conn_event(conn);
	krt_peer_update_state(conn->peer);
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
	/*
	 * An inbound connection is the remote's to re-establish: a failed one
	 * leaves the pool, and an inbound peer without connections goes.
	 */
	if (conn->inbound && !list_empty(&conn->entry)) {
		list_del_init(&conn->entry);
		close = true;		/* the pool's reference goes to close_work */
		krt_peer_update_state(peer);
		krt_pool_drop_empty_inbound(peer);
	}
	mutex_unlock(&krt_pool_lock);
	queue_work(krt_wq, close ? &conn->close_work : &conn->release_work);
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
	if (conn->state == KRT_CONN_CONNECTING)
		krt_conn_set_state(conn, KRT_CONN_ACTIVE, NULL);
	mutex_unlock(&krt_pool_lock);
}

/**
 * krt_conn_start() - connect an outbound connection
 * @conn: an idle connection, listed in its peer's pool
 *
 * Failures are reported through the connection's state.
 */
void krt_conn_start(struct krt_conn *conn)
{
	struct rdma_cm_id *id;
	int ret;

	id = krt_fault_connect() ? ERR_PTR(-ENOMEM) :
		rdma_create_id(&init_net, krt_cm_handler, conn, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(id)) {
		krt_conn_fail(conn, "cannot create a cm id");
		return;
	}
	kref_get(&conn->ref);		/* held by the id */
	mutex_lock(&krt_pool_lock);
	conn->cm_id = id;
	krt_conn_set_state(conn, KRT_CONN_CONNECTING, NULL);
	mutex_unlock(&krt_pool_lock);

	ret = krt_fault_connect() ? -ENOMEM :
		rdma_resolve_addr(id, NULL, (struct sockaddr *)&conn->peer->addr,
				  KRT_RESOLVE_TIMEOUT_MS);
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
	if (conn->state != KRT_CONN_ERROR)
		krt_conn_set_state(conn, KRT_CONN_CLOSING, NULL);
	mutex_unlock(&krt_pool_lock);
	krt_conn_release(conn);
	flush_work(&conn->release_work);
	krt_conn_put(conn);
}
