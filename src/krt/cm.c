// SPDX-License-Identifier: GPL-2.0
/*
 * krt: rdma_cm event handling and connection private data.
 *
 * DOC: Connection private data
 *
 * The active side's CONNECT_REQUEST carries &struct krt_cm_req (40 bytes,
 * big endian): magic ``KRT1``, protocol version, connection index, pool
 * size, pool id (which of the sender's pools), queue depth, node id,
 * credits (receive buffers it posted), max IO size, heartbeat interval and
 * misses.  The passive side validates every field before it allocates
 * anything, and treats what the remote asks for as a wish bounded by local
 * limits: the depth is capped by ``max_inbound_depth``, the max IO size by
 * the local one, the index by ``max_peer_conns``, the number of inbound
 * connections by ``max_inbound_conns`` in all and ``max_inbound_per_addr``
 * per source address (closing ones included), their memory by the budget.
 * A request that claims the node, pool and index of a live connection from
 * another address is refused (``KRT_REJ_IDENTITY``).  It accepts with
 * &struct krt_cm_rep (28 bytes: its node id, the depth it granted, its
 * receive credits, the max IO size both use, and how many bytes of
 * message and write data it takes in one request, ``inline_data``: 0 from
 * a server that takes none, which an older one sends) or rejects with
 * &struct krt_cm_rej naming the reason (enum krt_reject_reason), which the
 * active side reports in ``conn show``, ``peer show`` and an event.
 * Malformed private data is counted (debugfs ``cm``) and rejected.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/sizes.h>
#include <rdma/ib_cm.h>
#include "krt.h"
#include "trace.h"

#define KRT_CM_MAGIC	0x4b525431	/* "KRT1" */
#define KRT_PROTO_VER	2

struct krt_cm_req {
	__be32	magic;
	__be16	version;
	__be16	conn_index;
	__be16	conn_count;
	__be16	pool_id;
	__be32	depth;
	__be64	node_id;
	__be32	credits;
	__be32	max_io;
	__be32	hb_ms;
	__be16	hb_misses;
	__be16	reserved;
} __packed;

struct krt_cm_rep {
	__be32	magic;
	__be16	version;
	__be16	inline_data;
	__be64	node_id;
	__be32	depth;
	__be32	credits;
	__be32	max_io;
} __packed;

struct krt_cm_rej {
	__be32	magic;
	__be16	version;
	__be16	reason;
} __packed;

/* Counters of what the passive side refused, by reason; read by debugfs. */
atomic_t krt_cm_rejects[KRT_REJ_MAX + 1];
atomic_t krt_cm_malformed;

static const char * const krt_reject_names[] = {
	[KRT_REJ_NONE]		= "none",
	[KRT_REJ_VERSION]	= "protocol version mismatch",
	[KRT_REJ_MALFORMED]	= "malformed private data",
	[KRT_REJ_LIMIT]		= "connection limit reached",
	[KRT_REJ_UNKNOWN_NODE]	= "unknown node (accept=configured)",
	[KRT_REJ_NO_DEVICE]	= "RDMA device unusable or disabled",
	[KRT_REJ_NO_RESOURCES]	= "out of resources",
	[KRT_REJ_IDENTITY]	= "node, pool and index in use from another address",
};

/**
 * krt_reject_name() - printable reject reason
 * @reason: enum krt_reject_reason
 *
 * Return: a static string.
 */
const char *krt_reject_name(u32 reason)
{
	if (reason < ARRAY_SIZE(krt_reject_names) && krt_reject_names[reason])
		return krt_reject_names[reason];
	return "unknown reason";
}

static int krt_cm_reject(struct rdma_cm_id *id, u16 reason)
{
	struct krt_cm_rej rej = {
		.magic		= cpu_to_be32(KRT_CM_MAGIC),
		.version	= cpu_to_be16(KRT_PROTO_VER),
		.reason		= cpu_to_be16(reason),
	};

	trace_krt_cm_reject(id, reason);
	atomic_inc(&krt_cm_rejects[reason]);
	rdma_reject(id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
	/* non-zero: rdma_cm destroys the new id */
	return 1;
}

/* Return: a reject reason, or KRT_REJ_NONE if @req is acceptable. */
static u16 krt_cm_check_req(const struct krt_cm_req *req, u8 len)
{
	u32 depth, credits;

	if (!req || len < sizeof(*req) || be32_to_cpu(req->magic) != KRT_CM_MAGIC)
		return KRT_REJ_MALFORMED;
	if (be16_to_cpu(req->version) != KRT_PROTO_VER)
		return KRT_REJ_VERSION;
	depth = be32_to_cpu(req->depth);
	credits = be32_to_cpu(req->credits);
	if (!req->node_id || !req->conn_count ||
	    be16_to_cpu(req->conn_index) >= be16_to_cpu(req->conn_count) ||
	    depth < 2 || depth > KRT_MAX_DEPTH ||
	    credits < 2 || credits > KRT_MAX_DEPTH ||
	    be32_to_cpu(req->max_io) < PAGE_SIZE || req->reserved)
		return KRT_REJ_MALFORMED;
	if (be16_to_cpu(req->conn_index) >= krt_max_peer_conns)
		return KRT_REJ_LIMIT;
	return KRT_REJ_NONE;
}

/*
 * Is @src allowed to take index @index of @peer?  Only if the connection
 * there is not active, or comes from the same address.  Caller holds
 * krt_pool_lock.  Return: the connection to replace (unlisted), NULL, or
 * an ERR_PTR(-EADDRINUSE) for an impersonation.
 */
static struct krt_conn *krt_cm_take_index(struct krt_peer *peer, u32 index,
					  const struct sockaddr_storage *src)
{
	struct krt_conn *c;

	list_for_each_entry(c, &peer->conns, entry) {
		if (c->index != index)
			continue;
		if (c->state == KRT_CONN_ACTIVE && !krt_addr_equal(&c->raddr, src, false))
			return ERR_PTR(-EADDRINUSE);
		list_del_init(&c->entry);
		krt_pool_changed();
		return c;
	}
	return NULL;
}

static int krt_cm_connect_request(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	const struct krt_cm_req *req = ev->param.conn.private_data;
	struct rdma_conn_param param = {};
	struct sockaddr_storage src;
	struct krt_cm_rep rep = {};
	struct krt_conn *conn, *old;
	struct krt_peer *peer;
	bool ours, listed;
	u16 reason;
	u32 depth;
	int ret;

	reason = krt_cm_check_req(req, ev->param.conn.private_data_len);
	if (reason) {
		if (reason == KRT_REJ_MALFORMED)
			atomic_inc(&krt_cm_malformed);
		return krt_cm_reject(id, reason);
	}
	memcpy(&src, &id->route.addr.dst_addr, sizeof(src));

	depth = min_t(u32, be32_to_cpu(req->depth), READ_ONCE(krt_max_inbound_depth));
	depth = max_t(u32, depth, 2);
	mutex_lock(&krt_pool_lock);
	if (!krt_pool_accept_from(&src)) {
		mutex_unlock(&krt_pool_lock);
		return krt_cm_reject(id, KRT_REJ_UNKNOWN_NODE);
	}
	peer = krt_pool_inbound_peer(be64_to_cpu(req->node_id),
				     be16_to_cpu(req->pool_id),
				     be16_to_cpu(req->conn_count), depth);
	if (!peer) {
		mutex_unlock(&krt_pool_lock);
		return krt_cm_reject(id, KRT_REJ_NO_RESOURCES);
	}
	/* a connection of the same index replaces the old one */
	old = krt_cm_take_index(peer, be16_to_cpu(req->conn_index), &src);
	if (IS_ERR(old)) {
		krt_pool_drop_empty_inbound(peer);
		mutex_unlock(&krt_pool_lock);
		return krt_cm_reject(id, KRT_REJ_IDENTITY);
	}
	/* the connection it replaces still counts until it is freed */
	if (!krt_pool_inbound_room(&src, old ? 1 : 0) || !krt_pool_check_limit(peer)) {
		reason = KRT_REJ_LIMIT;
		goto err_unlock;
	}
	conn = krt_conn_alloc(peer, be16_to_cpu(req->conn_index), true);
	if (!conn) {
		reason = KRT_REJ_NO_RESOURCES;
		goto err_unlock;
	}
	conn->depth = depth;
	conn->hb_ms = clamp_t(u32, be32_to_cpu(req->hb_ms), KRT_HB_MIN_MS, KRT_HB_MAX_MS);
	conn->hb_misses = clamp_t(u32, be16_to_cpu(req->hb_misses), 1, KRT_HB_MAX_MISSES);
	memcpy(&conn->raddr, &src, sizeof(conn->raddr));
	/* its buffers are sized for what the client may send (checked >= a page) */
	conn->max_io = krt_q_max_io(be32_to_cpu(req->max_io));
	if (krt_mem_charge(conn, id->device, conn->max_io)) {
		krt_conn_put(conn);
		reason = KRT_REJ_NO_RESOURCES;
		goto err_unlock;
	}
	krt_conn_set_state(conn, KRT_CONN_CONNECTING, NULL);
	conn->cm_id = id;
	kref_get(&conn->ref);			/* held by the id */
	id->context = conn;
	list_add_tail(&conn->entry, &peer->conns);
	krt_pool_changed();
	mutex_unlock(&krt_pool_lock);

	if (old)	/* hands the pool's reference over; no waiting here */
		queue_work(krt_close_wq, &old->close_work);

	ret = krt_conn_setup_qp(conn, id);
	if (ret) {
		reason = ret == -ENODEV ? KRT_REJ_NO_DEVICE : KRT_REJ_NO_RESOURCES;
		goto err_reject;
	}
	krt_queue_set_remote(conn->q, be32_to_cpu(req->credits), conn->depth,
			     be32_to_cpu(req->max_io), krt_q_inline_offer());
	rep.magic = cpu_to_be32(KRT_CM_MAGIC);
	rep.version = cpu_to_be16(KRT_PROTO_VER);
	rep.node_id = cpu_to_be64(krt_node_id);
	rep.depth = cpu_to_be32(conn->depth);
	rep.credits = cpu_to_be32(conn->depth);
	rep.max_io = cpu_to_be32(krt_queue_max_io(conn->q));
	rep.inline_data = cpu_to_be16(krt_queue_inline_data(conn->q));
	param.private_data = &rep;
	param.private_data_len = sizeof(rep);
	/* RDMA READs we take as a target, and issue as an initiator */
	param.responder_resources = min_t(u32, ev->param.conn.initiator_depth,
					  id->device->attrs.max_qp_rd_atom);
	param.initiator_depth = min_t(u32, ev->param.conn.responder_resources,
				      id->device->attrs.max_qp_init_rd_atom);
	param.rnr_retry_count = min_t(u32, READ_ONCE(krt_rnr_retry), 7);
	ret = krt_fault_connect() ? -ENOMEM : rdma_accept(id, &param);
	if (ret) {
		reason = KRT_REJ_NO_RESOURCES;
		goto err_reject;
	}
	return 0;

err_unlock:
	if (old) {
		list_add_tail(&old->entry, &peer->conns);
		krt_pool_changed();
	}
	krt_pool_drop_empty_inbound(peer);
	mutex_unlock(&krt_pool_lock);
	return krt_cm_reject(id, reason);

err_reject:
	/*
	 * Returning non-zero makes rdma_cm destroy the id, unless a close of
	 * the peer took the id meanwhile: that release waits for this handler
	 * and tears everything down, so only refuse the request then.
	 */
	mutex_lock(&krt_pool_lock);
	ours = conn->cm_id == id;
	if (ours)
		WRITE_ONCE(conn->cm_id, NULL);
	listed = !list_empty(&conn->entry);
	list_del_init(&conn->entry);
	krt_pool_changed();
	/* a closer or a failure may have moved it on already */
	if (conn->state != KRT_CONN_CLOSING && conn->state != KRT_CONN_ERROR)
		krt_conn_set_state(conn, KRT_CONN_ERROR, krt_reject_name(reason));
	krt_pool_drop_empty_inbound(conn->peer);
	mutex_unlock(&krt_pool_lock);
	if (!ours) {
		if (listed)
			krt_conn_put(conn);	/* the pool's */
		krt_cm_reject(id, reason);
		return 0;
	}
	krt_conn_destroy_qp(conn, id);
	id->context = NULL;
	krt_conn_put(conn);		/* the id's */
	if (listed)
		krt_conn_put(conn);	/* the pool's; else its closer holds it */
	return krt_cm_reject(id, reason);
}

/**
 * krt_cm_fill_req() - the private data of an outbound CONNECT_REQUEST
 * @conn: the connection
 * @buf: at least sizeof(struct krt_cm_req) bytes
 * @len: set to the length used
 */
static void krt_cm_fill_req(struct krt_conn *conn, void *buf, u8 *len)
{
	struct krt_cm_req *req = buf;

	memset(req, 0, sizeof(*req));
	req->magic = cpu_to_be32(KRT_CM_MAGIC);
	req->version = cpu_to_be16(KRT_PROTO_VER);
	req->conn_index = cpu_to_be16(conn->index);
	req->pool_id = cpu_to_be16(conn->peer->pool_id);
	req->conn_count = cpu_to_be16(max(conn->peer->nr_conns, conn->index + 1));
	req->depth = cpu_to_be32(conn->depth);
	req->node_id = cpu_to_be64(krt_node_id);
	req->credits = cpu_to_be32(conn->depth);
	req->max_io = cpu_to_be32(conn->q ? krt_queue_max_io(conn->q) : krt_max_io);
	req->hb_ms = cpu_to_be32(conn->hb_ms);
	req->hb_misses = cpu_to_be16(conn->hb_misses);
	*len = sizeof(*req);
	switch (krt_fault_cm_req()) {	/* debugfs fault/cm_req: test the passive side */
	case 1:
		req->magic = cpu_to_be32(0xdeadbeef);
		break;
	case 2:
		req->version = cpu_to_be16(KRT_PROTO_VER + 1);
		break;
	case 3:
		*len = 8;
		break;
	case 4:
		req->conn_index = req->conn_count;
		break;
	}
}

static int krt_cm_route_resolved(struct krt_conn *conn, struct rdma_cm_id *id)
{
	struct rdma_conn_param param = {};
	u8 buf[sizeof(struct krt_cm_req)];
	int ret;

	ret = krt_conn_setup_qp(conn, id);
	if (ret) {
		krt_conn_fail(conn, ret == -ENODEV ?
			      "RDMA device unusable or disabled for krt" :
			      "cannot create CQ/QP");
		return 0;
	}
	mutex_lock(&krt_pool_lock);
	krt_cm_fill_req(conn, buf, &param.private_data_len);
	mutex_unlock(&krt_pool_lock);
	param.private_data = buf;
	param.responder_resources = id->device->attrs.max_qp_rd_atom;
	param.initiator_depth = id->device->attrs.max_qp_init_rd_atom;
	param.retry_count = 7;
	/* with credits an RNR is a bug: make it visible (rnr_retry, default 0) */
	param.rnr_retry_count = min_t(u32, READ_ONCE(krt_rnr_retry), 7);
	ret = krt_fault_connect() ? -ENOMEM : rdma_connect_locked(id, &param);
	if (ret)
		krt_conn_fail(conn, "rdma_connect failed");
	return 0;
}

static void krt_cm_established(struct krt_conn *conn, struct rdma_cm_id *id,
			       struct rdma_cm_event *ev)
{
	const struct krt_cm_rep *rep = ev->param.conn.private_data;

	if (!conn->inbound) {
		if (!rep || ev->param.conn.private_data_len < sizeof(*rep) ||
		    be32_to_cpu(rep->magic) != KRT_CM_MAGIC ||
		    be16_to_cpu(rep->version) != KRT_PROTO_VER ||
		    be32_to_cpu(rep->depth) < 2 ||
		    be32_to_cpu(rep->depth) > KRT_MAX_DEPTH ||
		    !be32_to_cpu(rep->credits) ||
		    be32_to_cpu(rep->credits) > KRT_MAX_DEPTH ||
		    be32_to_cpu(rep->max_io) < PAGE_SIZE) {
			atomic_inc(&krt_cm_malformed);
			krt_conn_fail(conn, "malformed accept from the peer");
			return;
		}
		krt_queue_set_remote(conn->q, be32_to_cpu(rep->credits),
				     be32_to_cpu(rep->depth),
				     be32_to_cpu(rep->max_io),
				     be16_to_cpu(rep->inline_data));
		mutex_lock(&krt_pool_lock);
		conn->peer->node_id = be64_to_cpu(rep->node_id);
		mutex_unlock(&krt_pool_lock);
	}
	krt_conn_established(conn, id);
}

static void krt_cm_rejected(struct krt_conn *conn, struct rdma_cm_id *id,
			    struct rdma_cm_event *ev)
{
	const struct krt_cm_rej *rej;
	char msg[64];
	u8 len = 0;
	u16 reason = KRT_REJ_NONE;

	rej = rdma_consumer_reject_data(id, ev, &len);
	if (rej && len >= sizeof(*rej) && be32_to_cpu(rej->magic) == KRT_CM_MAGIC)
		reason = be16_to_cpu(rej->reason);
	if (reason) {
		snprintf(msg, sizeof(msg), "rejected: %s", krt_reject_name(reason));
	} else {
		snprintf(msg, sizeof(msg), "rejected: %s",
			 rdma_reject_msg(id, ev->status));
	}
	/* not krt_stat_inc(): conn->dev may go with a racing release */
	this_cpu_inc(conn->st.pc->c[KRT_STAT_IDX(KRT_A_STAT_ERR_REJECT)]);
	krt_peer_stat_add(conn->peer, KRT_A_STAT_ERR_REJECT, 1);
	mutex_lock(&krt_pool_lock);
	conn->peer->reject = reason;
	mutex_unlock(&krt_pool_lock);
	krt_conn_fail(conn, msg);
}

static int krt_cm_listener_event(struct krt_listener *l, struct rdma_cm_id *id,
				 struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return krt_cm_connect_request(id, ev);
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
		bool mine;

		/*
		 * The listener's device went away: rdma_cm destroys the id
		 * when we return non-zero; the listener stays listed and
		 * listens again when a device has its address (the rebind
		 * work).  If krt_listen_del() or unload took the id first,
		 * they destroy it.
		 */
		mutex_lock(&krt_pool_lock);
		mine = l->cm_id == id;
		if (mine) {
			l->cm_id = NULL;
			krt_listen_lost(l);
		} else if (l->binding) {
			/* an id being bound: krt_listen_bind() destroys it */
			l->bind_lost = true;
		}
		mutex_unlock(&krt_pool_lock);
		return mine;
	}
	return 0;
}

/**
 * krt_cm_handler() - rdma_cm event handler of every krt id
 * @id: the id
 * @ev: the event
 *
 * rdma_cm serialises the calls per id.  A listener's context is its
 * &struct krt_listener, a connection's its &struct krt_conn.
 *
 * Return: non-zero only when rdma_cm is to destroy @id (rejected requests).
 */
int krt_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	enum krt_cm_ctx *ctx = id->context;
	struct krt_conn *conn;

	if (!ctx)
		return 0;
	if (*ctx == KRT_CM_LISTENER) {
		trace_krt_cm_listen_event(id, ev);
		return krt_cm_listener_event(id->context, id, ev);
	}
	conn = id->context;
	if (conn->dying)
		return 0;
	trace_krt_cm_event(conn, ev);

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (krt_fault_connect() ||
		    rdma_resolve_route(id, KRT_RESOLVE_TIMEOUT_MS))
			krt_conn_fail(conn, "route resolution failed to start");
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		return krt_cm_route_resolved(conn, id);
	case RDMA_CM_EVENT_ESTABLISHED:
		krt_cm_established(conn, id, ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		krt_cm_rejected(conn, id, ev);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		krt_conn_fail(conn, "address resolution failed");
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		krt_conn_fail(conn, "route resolution failed");
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		krt_conn_fail(conn, "peer unreachable");
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		krt_conn_fail(conn, "connection error");
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		krt_conn_fail(conn, "disconnected");
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		krt_conn_fail(conn, "RDMA device removed");
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		krt_conn_fail(conn, "local address changed");
		break;
	default:
		pr_debug("%s/%u: cm event %s (%d) ignored\n", conn->peer->name,
			 conn->index, rdma_event_msg(ev->event), ev->status);
		break;
	}
	return 0;
}
