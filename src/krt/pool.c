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
 * Limits: ``max_conns`` in all, ``max_peer_conns`` per peer; with
 * ``accept=configured`` only addresses of configured peers may connect.
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
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include "krt.h"

/* Protects krt_peers, krt_listeners and the fields of peers and conns. */
DEFINE_MUTEX(krt_pool_lock);
LIST_HEAD(krt_peers);
LIST_HEAD(krt_listeners);
struct workqueue_struct *krt_wq;
/* Pool id of the next outbound peer, sent in private data; krt_pool_lock. */
static u16 krt_pool_next_id;
/* Set at unload: no new peer or listener; krt_pool_lock. */
static bool krt_pool_closing;

unsigned int krt_port = 7471;
module_param_named(port, krt_port, uint, 0444);
MODULE_PARM_DESC(port, "Default port for listeners and peers (default: 7471)");

static unsigned int krt_max_conns = 1024;
module_param_named(max_conns, krt_max_conns, uint, 0644);
MODULE_PARM_DESC(max_conns, "Connections in all, inbound and outbound (default: 1024)");

static unsigned int krt_max_peer_conns = 64;
module_param_named(max_peer_conns, krt_max_peer_conns, uint, 0644);
MODULE_PARM_DESC(max_peer_conns, "Connections per peer (default: 64)");

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

/* Caller holds krt_pool_lock. */
static u32 krt_conns_total(void)
{
	struct krt_peer *peer;
	u32 n = 0;

	list_for_each_entry(peer, &krt_peers, entry)
		n += krt_list_len(&peer->conns);
	return n;
}

static void krt_peer_free(struct kref *ref)
{
	kfree(container_of(ref, struct krt_peer, ref));
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
	else if (connecting)
		state = KRT_PEER_CONNECTING;
	else
		state = KRT_PEER_DOWN;
	if (state != peer->state) {
		peer->state = state;
		krt_nl_peer_event(peer, KRT_CMD_PEER_STATE_NTF);
	}
}

static struct krt_peer *krt_peer_alloc(const char *name, u32 depth, u32 policy)
{
	struct krt_peer *peer;

	peer = krt_fault_connect() ? NULL : kzalloc(sizeof(*peer), GFP_KERNEL);
	if (!peer)
		return NULL;
	kref_init(&peer->ref);
	INIT_LIST_HEAD(&peer->entry);
	INIT_LIST_HEAD(&peer->conns);
	spin_lock_init(&peer->dp_lock);
	INIT_LIST_HEAD(&peer->dp_conns);
	strscpy(peer->name, name, sizeof(peer->name));
	peer->depth = depth;
	peer->policy = policy;
	peer->state = KRT_PEER_CONNECTING;
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
		list_add_tail(&conn->entry, &peer->conns);
		kref_get(&conn->ref);		/* for @start */
		list_add_tail(&conn->work_entry, start);
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
		list_add_tail(&conn->work_entry, close);
	}
	peer->nr_conns = n;
}

/* Caller holds krt_pool_lock; the connections never had a cm id. */
static void krt_drop_unstarted(struct list_head *start)
{
	struct krt_conn *conn, *tmp;

	list_for_each_entry_safe(conn, tmp, start, work_entry) {
		list_del_init(&conn->work_entry);
		list_del_init(&conn->entry);
		krt_conn_put(conn);		/* @start's */
		krt_conn_put(conn);		/* the pool's */
	}
}

static void krt_start_list(struct list_head *start)
{
	struct krt_conn *conn, *tmp;

	list_for_each_entry_safe(conn, tmp, start, work_entry) {
		list_del_init(&conn->work_entry);
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

static bool krt_addr_equal(const struct sockaddr_storage *a,
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

/**
 * krt_peer_add() - configure an outbound peer and connect its pool
 * @name: unique peer name
 * @addr: remote address and port
 * @conns: pool size, 0 for the default (online CPUs, at most 64)
 * @depth: queue depth per connection, 0 for the default (128)
 * @policy: enum krt_policy, 0 for round-robin
 * @extack: for error messages
 *
 * Return: 0 (connections come up in the background), -EEXIST, -ENOSPC
 * over a limit, -ENOMEM; nothing is left behind on error.
 */
int krt_peer_add(const char *name, struct sockaddr_storage *addr, u32 conns,
		 u32 depth, u32 policy, struct netlink_ext_ack *extack)
{
	struct krt_peer *peer;
	LIST_HEAD(start);
	LIST_HEAD(undo);
	int ret;

	if (!conns)
		conns = min_t(u32, num_online_cpus(), min(64U, krt_max_peer_conns));
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
	ret = krt_check_conns(conns, 0, extack);
	if (ret)
		goto out_unlock;
	peer = krt_peer_alloc(name, depth ?: 128, policy ?: KRT_POLICY_RR);
	if (!peer) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	memcpy(&peer->addr, addr, sizeof(peer->addr));
	peer->pool_id = ++krt_pool_next_id ?: ++krt_pool_next_id;
	ret = krt_peer_grow_locked(peer, conns, &start);
	if (ret)
		goto err_undo;
	list_add_tail(&peer->entry, &krt_peers);
	krt_nl_peer_event(peer, KRT_CMD_PEER_STATE_NTF);
	mutex_unlock(&krt_pool_lock);
	krt_start_list(&start);
	return 0;

err_undo:
	/* nothing was started: drop the connections and the peer */
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
	krt_peer_shrink_locked(peer, 0, &close);
	mutex_unlock(&krt_pool_lock);
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
 * krt_peer_set() - resize a live pool, change depth or policy
 * @name: an outbound peer
 * @conns: new pool size, 0 to keep
 * @depth: queue depth for connections made from now on, 0 to keep
 * @policy: new selection policy, 0 to keep
 * @extack: for error messages
 *
 * Growing connects the new connections; shrinking closes the ones with the
 * highest indices.
 *
 * Return: 0, -ENOENT, -EOPNOTSUPP for an inbound peer, -ENOSPC over a limit.
 */
int krt_peer_set(const char *name, u32 conns, u32 depth, u32 policy,
		 struct netlink_ext_ack *extack)
{
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
	if (conns) {
		ret = krt_check_conns(conns, have, extack);
		if (ret)
			goto out_unlock;
	}
	if (depth)
		peer->depth = depth;
	if (policy)
		peer->policy = policy;
	if (conns > have) {
		ret = krt_peer_grow_locked(peer, conns, &start);
		if (ret) {
			krt_drop_unstarted(&start);
			peer->nr_conns = have;
			goto out_unlock;
		}
	} else if (conns && conns < have) {
		krt_peer_shrink_locked(peer, conns, &close);
	}
	krt_peer_update_state(peer);
	krt_nl_peer_event(peer, KRT_CMD_PEER_STATE_NTF);
out_unlock:
	mutex_unlock(&krt_pool_lock);
	krt_start_list(&start);
	krt_close_list(&close);
	return ret;
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
 * krt_pool_check_limit() - room for one more connection?
 * @peer: the inbound peer it would join, or NULL
 *
 * Caller holds krt_pool_lock.
 *
 * Return: true if both limits allow it.
 */
bool krt_pool_check_limit(struct krt_peer *peer)
{
	if (krt_conns_total() + 1 > krt_max_conns)
		return false;
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
	peer->node_id = node_id;
	peer->pool_id = pool_id;
	list_add_tail(&peer->entry, &krt_peers);
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

	mutex_lock(&krt_pool_lock);
	ret = krt_listen_check_locked(addr, extack);
	mutex_unlock(&krt_pool_lock);
	if (ret)
		goto err_free;

	/* ORDER: rdma_cm calls outside krt_pool_lock, which handlers take */
	id = rdma_create_id(&init_net, krt_cm_handler, l, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto err_free;
	}
	ret = rdma_bind_addr(id, (struct sockaddr *)addr);
	if (ret) {
		NL_SET_ERR_MSG_MOD(extack,
				   "cannot bind: address not local to an RDMA device, or in use");
		goto err_id;
	}
	ret = rdma_listen(id, 128);
	if (ret) {
		NL_SET_ERR_MSG_MOD(extack, "rdma_listen failed");
		goto err_id;
	}

	mutex_lock(&krt_pool_lock);
	ret = krt_listen_check_locked(addr, extack);	/* unload may have begun */
	if (!ret) {
		l->cm_id = id;
		list_add_tail(&l->entry, &krt_listeners);
	}
	mutex_unlock(&krt_pool_lock);
	if (ret)
		goto err_id;
	return 0;

err_id:
	rdma_destroy_id(id);
err_free:
	kfree(l);
	return ret;
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

	mutex_lock(&krt_pool_lock);
	l = krt_listen_find_locked(addr);
	if (l)
		id = krt_listen_unlist_locked(l);
	mutex_unlock(&krt_pool_lock);
	if (!l) {
		NL_SET_ERR_MSG_MOD(extack, "no listener there");
		return -ENOENT;
	}
	krt_listen_free(l, id);
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
	int tries;

	/*
	 * Connections are the only long-term holders of a device reference
	 * besides the ib_client: close them until only that one is left (a
	 * connection may be between its device lookup and publishing it).
	 */
	for (tries = 0; tries < 500; tries++) {
		krt_pool_dev_close_conns(dev);
		if (kref_read(&dev->ref) <= 1)
			return;
		msleep(20);
	}
	pr_warn("%s: references left after closing its connections\n", dev->name);
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
			list_add_tail(&conn->work_entry, &gone);
		}
	}
	mutex_unlock(&krt_pool_lock);
	list_for_each_entry_safe(conn, tmp, &gone, work_entry) {
		list_del_init(&conn->work_entry);
		krt_conn_fail(conn, "RDMA device removed");
		krt_conn_release(conn);
		flush_work(&conn->release_work);
		krt_conn_put(conn);
	}
	/* unlisted connections still closing in the background hold QPs too */
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
	return krt_wq ? 0 : -ENOMEM;
}

/* Close every peer and listener: before the ib_client goes. */
void krt_pool_exit(void)
{
	struct krt_listener *l;
	struct krt_peer *peer;

	mutex_lock(&krt_pool_lock);
	krt_pool_closing = true;
	mutex_unlock(&krt_pool_lock);
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
	/* ORDER: closes handed to the workqueue finish before devices go */
	flush_workqueue(krt_wq);
}

void krt_pool_destroy_wq(void)
{
	destroy_workqueue(krt_wq);
}
