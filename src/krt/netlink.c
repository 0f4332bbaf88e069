// SPDX-License-Identifier: GPL-2.0
/*
 * krt: generic netlink family "krt".
 *
 * DOC: Netlink
 *
 * The control plane of krt.  Spec: Documentation/netlink/specs/krt.yaml;
 * uapi: include/uapi/linux/krt.h.  Every operation has its own policy, so
 * the core rejects unknown attributes, wrong types, oversize strings and
 * out-of-range values before a handler runs; handlers check presence with
 * GENL_REQ_ATTR_CHECK and answer every refusal with an extack message.
 * Operations that change state carry GENL_ADMIN_PERM (CAP_NET_ADMIN).
 * Changes are announced on the "events" multicast group, which only
 * CAP_NET_ADMIN may join (GENL_MCAST_CAP_NET_ADMIN, where the kernel has
 * it).
 *
 * Peer and connection dumps walk lists with positional cursors; each pass
 * sets the dump's sequence from krt_pool_gen, so a dump across a change of
 * those lists is flagged NLM_F_DUMP_INTR (and should be repeated) rather
 * than silently skipping or repeating entries.
 *
 * Handlers run in parallel (parallel_ops): each takes krt_pool_lock or
 * krt_dev_lock for what it reads or changes, so a long KRT_CMD_TEST run
 * does not hold up the rest of the control plane.
 * genl_unregister_family() waits for running handlers at unload.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/ipv6.h>
#include "krt.h"

enum krt_mcgrp {
	KRT_MCGRP_EVENTS_ID,
};

/*
 * Events carry peer and connection addresses, the node ids remotes claim
 * and failure reasons, as they happen: joining needs CAP_NET_ADMIN.  A
 * kernel without GENL_MCAST_CAP_NET_ADMIN lets every user join.
 */
#ifdef GENL_MCAST_CAP_NET_ADMIN
#define KRT_MCGRP_EVENTS_FLAGS	GENL_MCAST_CAP_NET_ADMIN
#else
#define KRT_MCGRP_EVENTS_FLAGS	0
#endif

static const struct genl_multicast_group krt_mcgrps[] = {
	[KRT_MCGRP_EVENTS_ID] = {
		.name	= KRT_MCGRP_EVENTS,
		.flags	= KRT_MCGRP_EVENTS_FLAGS,
	},
};

static const struct nla_policy krt_dev_get_policy[KRT_A_DEV_MAX + 1] = {
	[KRT_A_DEV_NAME]	= { .type = NLA_NUL_STRING,
				    .len = KRT_DEV_NAME_MAX - 1 },
};

static const struct nla_policy krt_dev_set_policy[KRT_A_DEV_MAX + 1] = {
	[KRT_A_DEV_NAME]	= { .type = NLA_NUL_STRING,
				    .len = KRT_DEV_NAME_MAX - 1 },
	[KRT_A_DEV_ENABLED]	= NLA_POLICY_MAX(NLA_U8, 1),
};

static const struct nla_policy krt_listen_policy[KRT_A_LISTEN_MAX + 1] = {
	[KRT_A_LISTEN_ADDR]	= { .type = NLA_BINARY, .len = 16 },
	[KRT_A_LISTEN_PORT]	= { .type = NLA_U16 },
	[KRT_A_LISTEN_STATE]	= { .type = NLA_REJECT },
	[KRT_A_LISTEN_LOST]	= { .type = NLA_REJECT },
};

static struct netlink_range_validation krt_reconnect_ms_range = {
	.min = 1, .max = 3600000,
};

static struct netlink_range_validation krt_loss_timeout_range = {
	.min = 1, .max = 86400,
};

static struct netlink_range_validation krt_hb_ms_range = {
	.min = KRT_HB_MIN_MS, .max = KRT_HB_MAX_MS,
};

static const struct nla_policy krt_peer_policy[KRT_A_PEER_MAX + 1] = {
	[KRT_A_PEER_NAME]	= { .type = NLA_NUL_STRING,
				    .len = KRT_PEER_NAME_MAX - 1 },
	[KRT_A_PEER_ADDR]	= { .type = NLA_BINARY, .len = 16 },
	[KRT_A_PEER_PORT]	= { .type = NLA_U16 },
	[KRT_A_PEER_CONNS]	= { .type = NLA_U32 },
	[KRT_A_PEER_DEPTH]	= { .type = NLA_U32 },
	[KRT_A_PEER_POLICY]	= { .type = NLA_U32 },
	[KRT_A_PEER_RECONNECT_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &krt_reconnect_ms_range),
	[KRT_A_PEER_RECONNECT_MAX_MS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &krt_reconnect_ms_range),
	[KRT_A_PEER_LOSS_TIMEOUT_S] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &krt_loss_timeout_range),
	[KRT_A_PEER_HB_MS]	= NLA_POLICY_FULL_RANGE(NLA_U32, &krt_hb_ms_range),
	[KRT_A_PEER_HB_MISSES]	= NLA_POLICY_RANGE(NLA_U32, 1, KRT_HB_MAX_MISSES),
};

/* KRT_CMD_PEER_RECONNECT: the peer's name, nothing else */
static const struct nla_policy krt_peer_name_policy[KRT_A_PEER_MAX + 1] = {
	[KRT_A_PEER_NAME]	= { .type = NLA_NUL_STRING,
				    .len = KRT_PEER_NAME_MAX - 1 },
};

static const struct nla_policy krt_conn_policy[KRT_A_CONN_MAX + 1] = {
	[KRT_A_CONN_PEER]	= { .type = NLA_NUL_STRING,
				    .len = KRT_PEER_NAME_MAX - 1 },
};

/* KRT_CMD_CONN_RESET: peer name and connection index */
static const struct nla_policy krt_conn_reset_policy[KRT_A_CONN_MAX + 1] = {
	[KRT_A_CONN_PEER]	= { .type = NLA_NUL_STRING,
				    .len = KRT_PEER_NAME_MAX - 1 },
	[KRT_A_CONN_INDEX]	= { .type = NLA_U32 },
};

/* KRT_CMD_STATS_GET and KRT_CMD_STATS_RESET */
static const struct nla_policy krt_stats_policy[KRT_A_STATS_MAX + 1] = {
	[KRT_A_STATS_PEER]	= { .type = NLA_NUL_STRING,
				    .len = KRT_PEER_NAME_MAX - 1 },
	[KRT_A_STATS_CONN]	= { .type = NLA_U32 },
};

static struct netlink_range_validation krt_test_count_range = {
	.min = 1, .max = 1000000,
};

static struct netlink_range_validation krt_test_size_range = {
	.min = 0, .max = 16 << 20,
};

static struct netlink_range_validation krt_test_timeout_range = {
	.min = 1, .max = 3600000,
};

static const struct nla_policy krt_test_policy[KRT_A_TEST_MAX + 1] = {
	[KRT_A_TEST_PEER]	= { .type = NLA_NUL_STRING,
				    .len = KRT_PEER_NAME_MAX - 1 },
	[KRT_A_TEST_OP]		= NLA_POLICY_RANGE(NLA_U32, KRT_TEST_PING, KRT_TEST_WRITE),
	[KRT_A_TEST_COUNT]	= NLA_POLICY_FULL_RANGE(NLA_U32, &krt_test_count_range),
	[KRT_A_TEST_SIZE]	= NLA_POLICY_FULL_RANGE(NLA_U32, &krt_test_size_range),
	[KRT_A_TEST_DEPTH]	= NLA_POLICY_RANGE(NLA_U32, 1, KRT_MAX_DEPTH),
	[KRT_A_TEST_THREADS]	= NLA_POLICY_RANGE(NLA_U32, 1, 64),
	[KRT_A_TEST_TIMEOUT]	= NLA_POLICY_FULL_RANGE(NLA_U32, &krt_test_timeout_range),
	[KRT_A_TEST_NOWAIT]	= NLA_POLICY_MAX(NLA_U8, 1),
	[KRT_A_TEST_NORETRY]	= NLA_POLICY_MAX(NLA_U8, 1),
};

static struct genl_family krt_genl_family;

/* Caller holds krt_dev_lock. */
static int krt_nl_fill_dev(struct sk_buff *skb, struct krt_device *dev,
			   u8 cmd, u32 portid, u32 seq, int flags)
{
	const struct krt_dev_caps *c = &dev->caps;
	void *hdr;

	lockdep_assert_held(&krt_dev_lock);
	hdr = genlmsg_put(skb, portid, seq, &krt_genl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, KRT_A_DEV_NAME, dev->name) ||
	    nla_put_u32(skb, KRT_A_DEV_INDEX, dev->index) ||
	    nla_put_u32(skb, KRT_A_DEV_STATE, krt_dev_state(dev)) ||
	    (dev->unusable &&
	     nla_put_string(skb, KRT_A_DEV_REASON, dev->unusable)) ||
	    nla_put_u8(skb, KRT_A_DEV_ENABLED, dev->enabled) ||
	    nla_put_u8(skb, KRT_A_DEV_FRWR, c->frwr) ||
	    nla_put_u8(skb, KRT_A_DEV_SEND_INV, c->send_inv) ||
	    nla_put_u8(skb, KRT_A_DEV_SG_GAPS, c->sg_gaps) ||
	    nla_put_u32(skb, KRT_A_DEV_MAX_FR_PAGES, c->max_fr_pages) ||
	    nla_put_u32(skb, KRT_A_DEV_MAX_QP_WR, c->max_qp_wr) ||
	    nla_put_u32(skb, KRT_A_DEV_MAX_SEND_SGE, c->max_send_sge) ||
	    nla_put_u32(skb, KRT_A_DEV_MAX_RECV_SGE, c->max_recv_sge) ||
	    nla_put_u32(skb, KRT_A_DEV_MAX_INLINE, c->max_inline) ||
	    nla_put_u32(skb, KRT_A_DEV_MAX_CQE, c->max_cqe) ||
	    nla_put_u32(skb, KRT_A_DEV_COMP_VECTORS, c->comp_vectors) ||
	    nla_put_u32(skb, KRT_A_DEV_PORTS, c->ports) ||
	    nla_put_u64_64bit(skb, KRT_A_DEV_NODE_GUID,
			      be64_to_cpu(c->node_guid), KRT_A_DEV_PAD) ||
	    nla_put_u64_64bit(skb, KRT_A_DEV_MEM_USED,
			      atomic64_read(&dev->mem_used), KRT_A_DEV_PAD) ||
	    nla_put_u64_64bit(skb, KRT_A_DEV_MEM_BUDGET, krt_mem_budget(),
			      KRT_A_DEV_PAD) ||
	    nla_put_u64_64bit(skb, KRT_A_DEV_MEM_TOTAL, krt_mem_total(),
			      KRT_A_DEV_PAD))
		goto cancel;
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* Caller holds krt_dev_lock. */
static struct krt_device *krt_nl_dev_lookup(struct genl_info *info)
{
	struct nlattr *attr = info->attrs[KRT_A_DEV_NAME];
	struct krt_device *dev;

	dev = krt_dev_find_locked(nla_data(attr));
	if (!dev)
		NL_SET_ERR_MSG_ATTR(info->extack, attr, "no such RDMA device");
	return dev;
}

static int krt_nl_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct krt_device *dev;
	struct sk_buff *msg;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, KRT_A_DEV_NAME))
		return -EINVAL;
	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	mutex_lock(&krt_dev_lock);
	dev = krt_nl_dev_lookup(info);
	if (!dev) {
		ret = -ENODEV;
		goto err_unlock;
	}
	ret = krt_nl_fill_dev(msg, dev, KRT_CMD_DEV_GET, info->snd_portid,
			      info->snd_seq, 0);
	if (ret)
		goto err_unlock;
	mutex_unlock(&krt_dev_lock);
	return genlmsg_reply(msg, info);

err_unlock:
	mutex_unlock(&krt_dev_lock);
	nlmsg_free(msg);
	return ret;
}

/* Dump cursor: devices are listed in ascending index order. */
struct krt_nl_dev_dump_ctx {
	u32 next_index;
};

static int krt_nl_dev_get_dumpit(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	struct krt_nl_dev_dump_ctx *ctx = (void *)cb->ctx;
	struct krt_device *dev;
	int ret = 0;

	BUILD_BUG_ON(sizeof(*ctx) > sizeof(cb->ctx));
	mutex_lock(&krt_dev_lock);
	list_for_each_entry(dev, &krt_dev_list, entry) {
		if (dev->index < ctx->next_index)
			continue;
		ret = krt_nl_fill_dev(skb, dev, KRT_CMD_DEV_GET,
				      NETLINK_CB(cb->skb).portid,
				      cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (ret)
			break;
		ctx->next_index = dev->index + 1;
	}
	mutex_unlock(&krt_dev_lock);
	/* a partly filled skb goes out now; the rest follows from the cursor */
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret ?: skb->len;
}

static int krt_nl_dev_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *en = info->attrs[KRT_A_DEV_ENABLED];
	struct krt_device *dev;
	bool changed = false;
	int ret = 0;

	if (GENL_REQ_ATTR_CHECK(info, KRT_A_DEV_NAME))
		return -EINVAL;
	if (!en) {
		NL_SET_ERR_MSG(info->extack, "nothing to change: give an attribute to set");
		return -EINVAL;
	}

	mutex_lock(&krt_dev_lock);
	dev = krt_nl_dev_lookup(info);
	if (!dev) {
		ret = -ENODEV;
		goto out_unlock;
	}
	if (nla_get_u8(en) != dev->enabled) {
		ret = krt_dev_set_enabled(dev, nla_get_u8(en));
		if (ret) {
			NL_SET_ERR_MSG_ATTR(info->extack, en,
					    "device is unusable and cannot be enabled");
			goto out_unlock;
		}
		changed = true;
		kref_get(&dev->ref);
	}
out_unlock:
	mutex_unlock(&krt_dev_lock);
	if (changed) {
		krt_nl_dev_event(dev, KRT_CMD_DEV_CHANGE_NTF);
		krt_dev_put(dev);
	}
	return ret;
}

/* Address and port attributes into a sockaddr; port 0 means the default. */
static int krt_nl_get_addr(struct genl_info *info, int addr_type, int port_type,
			   struct sockaddr_storage *ss)
{
	struct nlattr *a = info->attrs[addr_type];
	struct nlattr *p = info->attrs[port_type];
	u16 port = krt_port;

	memset(ss, 0, sizeof(*ss));
	if (p) {
		port = nla_get_u16(p);
		if (!port) {
			NL_SET_ERR_MSG_ATTR(info->extack, p, "port: must not be 0");
			return -EINVAL;
		}
	}
	if (nla_len(a) == 4) {
		struct sockaddr_in *sin = (void *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, nla_data(a), 4);
		if (sin->sin_addr.s_addr == htonl(INADDR_ANY) && addr_type == KRT_A_PEER_ADDR)
			goto bad;
		return 0;
	}
	if (nla_len(a) == 16) {
		struct sockaddr_in6 *sin6 = (void *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, nla_data(a), 16);
		if (ipv6_addr_any(&sin6->sin6_addr) && addr_type == KRT_A_PEER_ADDR)
			goto bad;
		return 0;
	}
bad:
	NL_SET_ERR_MSG_ATTR(info->extack, a,
			    "addr: must be a 4-byte IPv4 or 16-byte IPv6 address, not a wildcard");
	return -EINVAL;
}

static int krt_nl_put_addr(struct sk_buff *skb, int addr_type, int port_type,
			   const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		return nla_put(skb, addr_type, 4, &sin->sin_addr) ||
		       nla_put_u16(skb, port_type, ntohs(sin->sin_port));
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;

		return nla_put(skb, addr_type, 16, &sin6->sin6_addr) ||
		       nla_put_u16(skb, port_type, ntohs(sin6->sin6_port));
	}
	return 0;
}

static int krt_nl_listen_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sockaddr_storage ss;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, KRT_A_LISTEN_ADDR))
		return -EINVAL;
	ret = krt_nl_get_addr(info, KRT_A_LISTEN_ADDR, KRT_A_LISTEN_PORT, &ss);
	if (ret)
		return ret;
	if (info->genlhdr->cmd == KRT_CMD_LISTEN_ADD)
		return krt_listen_add(&ss, info->extack);
	return krt_listen_del(&ss, info->extack);
}

/* Dump cursor: positions in the lists; @started after the first pass. */
struct krt_nl_dump_ctx {
	long idx;
	long sub;
	bool started;
};

static int krt_nl_listen_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct krt_nl_dump_ctx *ctx = (void *)cb->ctx;
	struct krt_listener *l;
	long i = 0;
	void *hdr;

	BUILD_BUG_ON(sizeof(*ctx) > sizeof(cb->ctx));
	mutex_lock(&krt_pool_lock);
	list_for_each_entry(l, &krt_listeners, entry) {
		if (i++ < ctx->idx)
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &krt_genl_family, NLM_F_MULTI, KRT_CMD_LISTEN_GET);
		if (!hdr)
			break;
		if (krt_nl_put_addr(skb, KRT_A_LISTEN_ADDR, KRT_A_LISTEN_PORT, &l->addr) ||
		    nla_put_u8(skb, KRT_A_LISTEN_STATE,
			       l->cm_id ? KRT_LISTEN_ACTIVE : KRT_LISTEN_WAITING) ||
		    nla_put_u32(skb, KRT_A_LISTEN_LOST, l->lost)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		ctx->idx = i;
	}
	mutex_unlock(&krt_pool_lock);
	return skb->len;
}

/*
 * The dump's sequence: krt_pool_gen changes whenever a peer or connection
 * joins or leaves a list.  Never 0 (0 turns the consistency check off).
 */
static void krt_nl_dump_seq(struct netlink_callback *cb)
{
	lockdep_assert_held(&krt_pool_lock);
	/* fault/dump_intr: a change between two parts of this dump */
	if (cb->prev_seq && krt_fault_dump_intr())
		krt_pool_changed();
	cb->seq = (krt_pool_gen << 1) | 1;
}

/* ms since @since (jiffies) */
static u64 krt_nl_age_ms(unsigned long since)
{
	return jiffies64_to_msecs(jiffies - since);
}

/* What peer add and peer set configure (outbound peers only). */
static int krt_nl_put_peer_prm(struct sk_buff *skb, const struct krt_peer *peer)
{
	const struct krt_peer_params *prm = &peer->prm;

	if (peer->inbound)
		return 0;
	return nla_put_u32(skb, KRT_A_PEER_RECONNECT_MS, prm->reconnect_ms) ||
	       nla_put_u32(skb, KRT_A_PEER_RECONNECT_MAX_MS, prm->reconnect_max_ms) ||
	       nla_put_u32(skb, KRT_A_PEER_LOSS_TIMEOUT_S, prm->loss_timeout_s) ||
	       nla_put_u32(skb, KRT_A_PEER_HB_MS, prm->hb_ms) ||
	       nla_put_u32(skb, KRT_A_PEER_HB_MISSES, prm->hb_misses);
}

/* Where recovery stands, and the peer's counters. */
static int krt_nl_put_peer_recovery(struct sk_buff *skb, struct krt_peer *peer)
{
	unsigned long err_time = peer->err_time;
	bool scheduled, counting;
	u32 next, left;

	next = krt_peer_next_attempt_ms(peer, &scheduled);
	left = krt_peer_loss_left_ms(peer, &counting);
	return nla_put_u32(skb, KRT_A_PEER_ATTEMPT, krt_peer_attempt(peer)) ||
	       (scheduled && nla_put_u32(skb, KRT_A_PEER_NEXT_ATTEMPT_MS, next)) ||
	       (counting && nla_put_u32(skb, KRT_A_PEER_LOSS_LEFT_MS, left)) ||
	       (err_time && nla_put_u64_64bit(skb, KRT_A_PEER_ERROR_AGE_MS,
					      krt_nl_age_ms(err_time), KRT_A_PEER_PAD)) ||
	       nla_put_u64_64bit(skb, KRT_A_PEER_MEM, atomic64_read(&peer->mem),
				 KRT_A_PEER_PAD) ||
	       nla_put_u64_64bit(skb, KRT_A_PEER_RESENT, atomic64_read(&peer->resent),
				 KRT_A_PEER_PAD) ||
	       nla_put_u32(skb, KRT_A_PEER_QUEUED, krt_peer_queued(peer)) ||
	       nla_put_u64_64bit(skb, KRT_A_PEER_RECONNECTS, peer->reconnects,
				 KRT_A_PEER_PAD);
}

/*
 * A peer's attributes.  Caller holds krt_pool_lock, or the peer is
 * unlisted and has no connections left.  @cb: the dump, or NULL.
 */
static int krt_nl_fill_peer(struct sk_buff *skb, struct krt_peer *peer, u8 cmd,
			    u32 portid, u32 seq, int flags,
			    struct netlink_callback *cb)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &krt_genl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	if (nla_put_string(skb, KRT_A_PEER_NAME, peer->name) ||
	    (!peer->inbound &&
	     krt_nl_put_addr(skb, KRT_A_PEER_ADDR, KRT_A_PEER_PORT, &peer->addr)) ||
	    nla_put_u32(skb, KRT_A_PEER_CONNS, peer->nr_conns) ||
	    nla_put_u32(skb, KRT_A_PEER_DEPTH, peer->depth) ||
	    nla_put_u32(skb, KRT_A_PEER_POLICY, peer->policy) ||
	    nla_put_u32(skb, KRT_A_PEER_STATE, peer->state) ||
	    nla_put_u32(skb, KRT_A_PEER_CONNS_UP, krt_peer_conns_up(peer)) ||
	    nla_put_u8(skb, KRT_A_PEER_INBOUND, peer->inbound) ||
	    nla_put_u64_64bit(skb, KRT_A_PEER_NODE_ID, peer->node_id, KRT_A_PEER_PAD) ||
	    (peer->reject && nla_put_u32(skb, KRT_A_PEER_REJECT, peer->reject)) ||
	    (peer->reason[0] && nla_put_string(skb, KRT_A_PEER_REASON, peer->reason)) ||
	    krt_nl_put_peer_prm(skb, peer) ||
	    krt_nl_put_peer_recovery(skb, peer))
		goto cancel;
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* A connection's attributes; caller holds krt_pool_lock.  @cb: the dump, or NULL. */
static int krt_nl_fill_conn(struct sk_buff *skb, struct krt_conn *conn, u8 cmd,
			    u32 portid, u32 seq, int flags,
			    struct netlink_callback *cb)
{
	char devname[KRT_DEV_NAME_MAX] = "";
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &krt_genl_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	/* conn->dev is stable under krt_pool_lock; its name is not (rename) */
	if (conn->dev)
		krt_dev_copy_name(conn->dev, devname);
	if (nla_put_string(skb, KRT_A_CONN_PEER, conn->peer->name) ||
	    nla_put_u32(skb, KRT_A_CONN_INDEX, conn->index) ||
	    nla_put_u32(skb, KRT_A_CONN_STATE, conn->state) ||
	    krt_nl_put_addr(skb, KRT_A_CONN_LADDR, KRT_A_CONN_LPORT, &conn->laddr) ||
	    krt_nl_put_addr(skb, KRT_A_CONN_RADDR, KRT_A_CONN_RPORT, &conn->raddr) ||
	    nla_put_u32(skb, KRT_A_CONN_QPN, conn->qpn) ||
	    nla_put_u32(skb, KRT_A_CONN_DEPTH, conn->depth) ||
	    nla_put_u32(skb, KRT_A_CONN_INFLIGHT, krt_queue_inflight(conn->q)) ||
	    (devname[0] && nla_put_string(skb, KRT_A_CONN_DEV, devname)) ||
	    (conn->reason[0] && nla_put_string(skb, KRT_A_CONN_REASON, conn->reason)) ||
	    nla_put_u32(skb, KRT_A_CONN_RECONNECTS, conn->reconnects) ||
	    nla_put_u64_64bit(skb, KRT_A_CONN_STATE_AGE_MS,
			      krt_nl_age_ms(conn->state_time), KRT_A_CONN_PAD) ||
	    nla_put_u32(skb, KRT_A_CONN_ATTEMPT, conn->attempt) ||
	    nla_put_u64_64bit(skb, KRT_A_CONN_MEM, conn->mem, KRT_A_CONN_PAD))
		goto cancel;
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static u32 krt_nl_u32(struct genl_info *info, int type, u32 def)
{
	return info->attrs[type] ? nla_get_u32(info->attrs[type]) : def;
}

/*
 * The settings of a peer request, 0 where absent.  The policy checked the
 * ranges of the recovery settings; conns, depth and policy are checked
 * here (their messages name the attribute).
 */
static int krt_nl_peer_params(struct genl_info *info, struct krt_peer_params *prm)
{
	struct nlattr *a;

	memset(prm, 0, sizeof(*prm));
	a = info->attrs[KRT_A_PEER_CONNS];
	if (a) {
		prm->conns = nla_get_u32(a);
		if (!prm->conns) {
			NL_SET_ERR_MSG_ATTR(info->extack, a, "conns: must be at least 1");
			return -EINVAL;
		}
	}
	a = info->attrs[KRT_A_PEER_DEPTH];
	if (a) {
		prm->depth = nla_get_u32(a);
		if (prm->depth < 2 || prm->depth > KRT_MAX_DEPTH) {
			NL_SET_ERR_MSG_ATTR(info->extack, a, "depth: must be 2..4096");
			return -EINVAL;
		}
	}
	a = info->attrs[KRT_A_PEER_POLICY];
	if (a) {
		prm->policy = nla_get_u32(a);
		if (prm->policy != KRT_POLICY_RR && prm->policy != KRT_POLICY_MIN_INFLIGHT) {
			NL_SET_ERR_MSG_ATTR(info->extack, a, "policy: must be rr or min-inflight");
			return -EINVAL;
		}
	}
	prm->reconnect_ms = krt_nl_u32(info, KRT_A_PEER_RECONNECT_MS, 0);
	prm->reconnect_max_ms = krt_nl_u32(info, KRT_A_PEER_RECONNECT_MAX_MS, 0);
	prm->loss_timeout_s = krt_nl_u32(info, KRT_A_PEER_LOSS_TIMEOUT_S, 0);
	prm->hb_ms = krt_nl_u32(info, KRT_A_PEER_HB_MS, 0);
	prm->hb_misses = krt_nl_u32(info, KRT_A_PEER_HB_MISSES, 0);
	/* one given alone is checked against the other's value by pool.c */
	if (prm->reconnect_ms && prm->reconnect_max_ms &&
	    prm->reconnect_max_ms < prm->reconnect_ms) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[KRT_A_PEER_RECONNECT_MAX_MS],
				    "reconnect_max_ms: must not be below reconnect_ms");
		return -EINVAL;
	}
	return 0;
}

static int krt_nl_peer_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct krt_peer_params prm;
	struct sockaddr_storage ss;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, KRT_A_PEER_NAME) ||
	    GENL_REQ_ATTR_CHECK(info, KRT_A_PEER_ADDR))
		return -EINVAL;
	if (!nla_len(info->attrs[KRT_A_PEER_NAME]) ||
	    !*(char *)nla_data(info->attrs[KRT_A_PEER_NAME]) ||
	    !strncmp(nla_data(info->attrs[KRT_A_PEER_NAME]), "in-", 3)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[KRT_A_PEER_NAME],
				    "name: must not be empty nor start with \"in-\"");
		return -EINVAL;
	}
	ret = krt_nl_get_addr(info, KRT_A_PEER_ADDR, KRT_A_PEER_PORT, &ss);
	if (ret)
		return ret;
	ret = krt_nl_peer_params(info, &prm);
	if (ret)
		return ret;
	return krt_peer_add(nla_data(info->attrs[KRT_A_PEER_NAME]), &ss, &prm,
			    info->extack);
}

static int krt_nl_peer_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, KRT_A_PEER_NAME))
		return -EINVAL;
	return krt_peer_del(nla_data(info->attrs[KRT_A_PEER_NAME]), info->extack);
}

static int krt_nl_peer_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	static const struct krt_peer_params none;
	struct krt_peer_params prm;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, KRT_A_PEER_NAME))
		return -EINVAL;
	if (info->attrs[KRT_A_PEER_ADDR] || info->attrs[KRT_A_PEER_PORT]) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "addr and port cannot change: delete and add the peer");
		return -EINVAL;
	}
	ret = krt_nl_peer_params(info, &prm);
	if (ret)
		return ret;
	if (!memcmp(&prm, &none, sizeof(prm))) {
		NL_SET_ERR_MSG(info->extack,
			       "nothing to change: give conns, depth, policy, reconnect_ms, reconnect_max_ms, loss_timeout_s, hb_ms or hb_misses");
		return -EINVAL;
	}
	return krt_peer_set(nla_data(info->attrs[KRT_A_PEER_NAME]), &prm, info->extack);
}

static int krt_nl_peer_reconnect_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, KRT_A_PEER_NAME))
		return -EINVAL;
	return krt_peer_reconnect(nla_data(info->attrs[KRT_A_PEER_NAME]), info->extack);
}

static int krt_nl_conn_reset_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (GENL_REQ_ATTR_CHECK(info, KRT_A_CONN_PEER) ||
	    GENL_REQ_ATTR_CHECK(info, KRT_A_CONN_INDEX))
		return -EINVAL;
	return krt_conn_reset(nla_data(info->attrs[KRT_A_CONN_PEER]),
			      nla_get_u32(info->attrs[KRT_A_CONN_INDEX]), info->extack);
}

static int krt_nl_peer_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct krt_peer *peer;
	struct sk_buff *msg;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, KRT_A_PEER_NAME))
		return -EINVAL;
	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&krt_pool_lock);
	peer = krt_peer_find_locked(nla_data(info->attrs[KRT_A_PEER_NAME]));
	if (!peer) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[KRT_A_PEER_NAME], "no such peer");
		ret = -ENOENT;
	} else {
		ret = krt_nl_fill_peer(msg, peer, KRT_CMD_PEER_GET, info->snd_portid,
				       info->snd_seq, 0, NULL);
	}
	mutex_unlock(&krt_pool_lock);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

static int krt_nl_peer_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct krt_nl_dump_ctx *ctx = (void *)cb->ctx;
	struct krt_peer *peer;
	long i = 0;

	mutex_lock(&krt_pool_lock);
	krt_nl_dump_seq(cb);
	list_for_each_entry(peer, &krt_peers, entry) {
		if (i++ < ctx->idx)
			continue;
		if (krt_nl_fill_peer(skb, peer, KRT_CMD_PEER_GET,
				     NETLINK_CB(cb->skb).portid,
				     cb->nlh->nlmsg_seq, NLM_F_MULTI, cb))
			break;
		ctx->idx = i;
	}
	mutex_unlock(&krt_pool_lock);
	return skb->len;
}

static int krt_nl_conn_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	struct nlattr *filter = info->attrs[KRT_A_CONN_PEER];
	struct krt_nl_dump_ctx *ctx = (void *)cb->ctx;
	struct krt_peer *peer;
	struct krt_conn *conn;
	long i = 0, j;

	mutex_lock(&krt_pool_lock);
	krt_nl_dump_seq(cb);
	/*
	 * An unknown peer is an error on the first pass only: one deleted
	 * during the dump ends it, flagged interrupted (krt_pool_gen moved).
	 */
	if (filter && !ctx->started && !krt_peer_find_locked(nla_data(filter))) {
		mutex_unlock(&krt_pool_lock);
		NL_SET_ERR_MSG_ATTR(cb->extack, filter, "no such peer");
		return -ENOENT;
	}
	ctx->started = true;
	list_for_each_entry(peer, &krt_peers, entry) {
		if (i++ < ctx->idx)
			continue;
		if (filter && strcmp(peer->name, nla_data(filter)))
			goto next;
		j = 0;
		list_for_each_entry(conn, &peer->conns, entry) {
			if (j++ < ctx->sub)
				continue;
			if (krt_nl_fill_conn(skb, conn, KRT_CMD_CONN_GET,
					     NETLINK_CB(cb->skb).portid,
					     cb->nlh->nlmsg_seq, NLM_F_MULTI, cb))
				goto out;
			ctx->sub = j;
		}
next:
		ctx->idx = i;
		ctx->sub = 0;
	}
out:
	mutex_unlock(&krt_pool_lock);
	return skb->len;
}

/* ---- statistics ---- */

static int krt_nl_put_hist(struct sk_buff *skb, int type,
			   const struct krt_hist_snap *h, bool buckets)
{
	struct nlattr *nest, *bn, *b;
	u32 i;

	nest = nla_nest_start(skb, type);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, KRT_A_LAT_COUNT, h->count, KRT_A_LAT_PAD) ||
	    nla_put_u64_64bit(skb, KRT_A_LAT_SUM_NS, h->sum, KRT_A_LAT_PAD))
		goto cancel;
	if (h->count &&
	    (nla_put_u64_64bit(skb, KRT_A_LAT_MIN_NS, h->min, KRT_A_LAT_PAD) ||
	     nla_put_u64_64bit(skb, KRT_A_LAT_MAX_NS, h->max, KRT_A_LAT_PAD) ||
	     nla_put_u64_64bit(skb, KRT_A_LAT_AVG_NS, div64_u64(h->sum, h->count),
			       KRT_A_LAT_PAD) ||
	     nla_put_u64_64bit(skb, KRT_A_LAT_P50_NS, krt_hist_pct(h, 500), KRT_A_LAT_PAD) ||
	     nla_put_u64_64bit(skb, KRT_A_LAT_P90_NS, krt_hist_pct(h, 900), KRT_A_LAT_PAD) ||
	     nla_put_u64_64bit(skb, KRT_A_LAT_P99_NS, krt_hist_pct(h, 990), KRT_A_LAT_PAD) ||
	     nla_put_u64_64bit(skb, KRT_A_LAT_P999_NS, krt_hist_pct(h, 999), KRT_A_LAT_PAD)))
		goto cancel;
	if (buckets && h->count) {
		bn = nla_nest_start(skb, KRT_A_LAT_BUCKETS);
		if (!bn)
			goto cancel;
		for (i = 0; i < KRT_HIST_NR; i++) {
			if (!h->b[i])
				continue;
			b = nla_nest_start(skb, KRT_A_LAT_BUCKET);
			if (!b ||
			    nla_put_u64_64bit(skb, KRT_A_BUCKET_LE_NS, krt_hist_le(i),
					      KRT_A_BUCKET_PAD) ||
			    nla_put_u64_64bit(skb, KRT_A_BUCKET_COUNT, h->b[i],
					      KRT_A_BUCKET_PAD))
				goto cancel;
			nla_nest_end(skb, b);
		}
		nla_nest_end(skb, bn);
	}
	nla_nest_end(skb, nest);
	return 0;
cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

static int krt_nl_put_snap(struct sk_buff *skb, const struct krt_stats_snap *sn,
			   bool buckets)
{
	struct nlattr *nest, *e;
	u32 i;

	nest = nla_nest_start(skb, KRT_A_STATS_COUNTERS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < KRT_STAT_NR; i++)
		if (nla_put_u64_64bit(skb, krt_stats_table[i].attr, sn->c[i],
				      KRT_A_STAT_PAD))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	nest = nla_nest_start(skb, KRT_A_STATS_WC);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < KRT_WC_NR; i++) {
		if (!sn->wc[i])
			continue;
		e = nla_nest_start(skb, KRT_A_WC_ENTRY);
		if (!e || nla_put_u32(skb, KRT_A_WC_STATUS, i) ||
		    nla_put_string(skb, KRT_A_WC_NAME, ib_wc_status_msg(i)) ||
		    nla_put_u64_64bit(skb, KRT_A_WC_COUNT, sn->wc[i], KRT_A_WC_PAD))
			return -EMSGSIZE;
		nla_nest_end(skb, e);
	}
	nla_nest_end(skb, nest);
	if (krt_nl_put_hist(skb, KRT_A_STATS_LAT_RTT, &sn->h[KRT_HIST_RTT], buckets) ||
	    krt_nl_put_hist(skb, KRT_A_STATS_LAT_SVC, &sn->h[KRT_HIST_SVC], buckets))
		return -EMSGSIZE;
	return 0;
}

/* Gauges of one connection.  Caller holds krt_pool_lock. */
static void krt_nl_conn_gauges(struct krt_conn *conn, u32 *g)
{
	u32 used;

	g[0] += krt_queue_inflight(conn->q);
	g[1] = max(g[1], READ_ONCE(conn->st.inflight_hwm));
	g[2] += krt_queue_mrs(conn->q, &used);
	g[3] += used;
	g[4] = max(g[4], READ_ONCE(conn->st.mrs_hwm));
}

/*
 * One peer's statistics, or one connection's (@conn).  A peer's high-water
 * marks are the largest of its connections'.  Caller holds krt_pool_lock;
 * takes krt_stats_lock, so that a reset is seen whole or not at all.
 */
static int krt_nl_fill_stats(struct sk_buff *skb, struct krt_peer *peer,
			     struct krt_conn *conn, struct krt_stats_snap *sn,
			     u32 portid, u32 seq, int flags, bool buckets,
			     struct netlink_callback *cb)
{
	struct krt_stats *st = conn ? &conn->st : &peer->st;
	struct krt_conn *c;
	u32 g[5] = {};
	u64 age;
	void *hdr;

	lockdep_assert_held(&krt_pool_lock);
	if (conn) {
		krt_nl_conn_gauges(conn, g);
	} else {
		/* the peer's marks outlive the connections that set them */
		g[1] = READ_ONCE(peer->st.inflight_hwm);
		g[4] = READ_ONCE(peer->st.mrs_hwm);
		list_for_each_entry(c, &peer->conns, entry)
			krt_nl_conn_gauges(c, g);
	}
	mutex_lock(&krt_stats_lock);
	krt_stats_read(st, sn);
	age = krt_nl_age_ms(st->since);
	mutex_unlock(&krt_stats_lock);

	hdr = genlmsg_put(skb, portid, seq, &krt_genl_family, flags, KRT_CMD_STATS_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (cb)
		genl_dump_check_consistent(cb, hdr);
	if (nla_put_string(skb, KRT_A_STATS_PEER, peer->name) ||
	    (conn && nla_put_u32(skb, KRT_A_STATS_CONN, conn->index)) ||
	    nla_put_u8(skb, KRT_A_STATS_INBOUND, peer->inbound) ||
	    nla_put_u64_64bit(skb, KRT_A_STATS_AGE_MS, age, KRT_A_STATS_PAD) ||
	    nla_put_u32(skb, KRT_A_STATS_INFLIGHT, g[0]) ||
	    nla_put_u32(skb, KRT_A_STATS_INFLIGHT_HWM, g[1]) ||
	    nla_put_u32(skb, KRT_A_STATS_MRS, g[2]) ||
	    nla_put_u32(skb, KRT_A_STATS_MRS_USED, g[3]) ||
	    nla_put_u32(skb, KRT_A_STATS_MRS_HWM, g[4]) ||
	    krt_nl_put_snap(skb, sn, buckets)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* A connection of a peer by index.  Caller holds krt_pool_lock. */
static struct krt_conn *krt_nl_conn_find(struct krt_peer *peer, u32 index)
{
	struct krt_conn *conn;

	list_for_each_entry(conn, &peer->conns, entry)
		if (conn->index == index)
			return conn;
	return NULL;
}

/* Room for one message: counters, two histograms with every bucket. */
#define KRT_NL_STATS_SIZE	(16 * 1024)

static int krt_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct krt_stats_snap *sn;
	struct krt_conn *conn = NULL;
	struct krt_peer *peer;
	struct sk_buff *msg;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, KRT_A_STATS_PEER))
		return -EINVAL;
	sn = kmalloc(sizeof(*sn), GFP_KERNEL);
	msg = nlmsg_new(KRT_NL_STATS_SIZE, GFP_KERNEL);
	if (!sn || !msg) {
		ret = -ENOMEM;
		goto out_free;
	}
	mutex_lock(&krt_pool_lock);
	peer = krt_peer_find_locked(nla_data(info->attrs[KRT_A_STATS_PEER]));
	if (!peer) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[KRT_A_STATS_PEER],
				    "no such peer");
		ret = -ENOENT;
		goto out_unlock;
	}
	if (info->attrs[KRT_A_STATS_CONN]) {
		conn = krt_nl_conn_find(peer, nla_get_u32(info->attrs[KRT_A_STATS_CONN]));
		if (!conn) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[KRT_A_STATS_CONN],
					    "the peer has no connection with this index");
			ret = -ENOENT;
			goto out_unlock;
		}
	}
	ret = krt_nl_fill_stats(msg, peer, conn, sn, info->snd_portid,
				info->snd_seq, 0, true, NULL);
out_unlock:
	mutex_unlock(&krt_pool_lock);
	if (!ret) {
		kfree(sn);
		return genlmsg_reply(msg, info);
	}
out_free:
	nlmsg_free(msg);
	kfree(sn);
	return ret;
}

/* Dump: one message per peer (optionally only KRT_A_STATS_PEER). */
static int krt_nl_stats_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	struct nlattr *filter = info->attrs[KRT_A_STATS_PEER];
	struct krt_nl_dump_ctx *ctx = (void *)cb->ctx;
	struct krt_stats_snap *sn;
	struct krt_peer *peer;
	long i = 0;
	int ret;

	sn = kmalloc(sizeof(*sn), GFP_KERNEL);
	if (!sn)
		return -ENOMEM;
	mutex_lock(&krt_pool_lock);
	krt_nl_dump_seq(cb);
	if (filter && !ctx->started && !krt_peer_find_locked(nla_data(filter))) {
		mutex_unlock(&krt_pool_lock);
		kfree(sn);
		NL_SET_ERR_MSG_ATTR(cb->extack, filter, "no such peer");
		return -ENOENT;
	}
	ctx->started = true;
	list_for_each_entry(peer, &krt_peers, entry) {
		if (i++ < ctx->idx)
			continue;
		if (filter && strcmp(peer->name, nla_data(filter)))
			goto next;
		ret = krt_nl_fill_stats(skb, peer, NULL, sn, NETLINK_CB(cb->skb).portid,
					cb->nlh->nlmsg_seq, NLM_F_MULTI, true, cb);
		/* a message too big for an empty skb goes without buckets */
		if (ret && !skb->len)
			ret = krt_nl_fill_stats(skb, peer, NULL, sn,
						NETLINK_CB(cb->skb).portid,
						cb->nlh->nlmsg_seq, NLM_F_MULTI, false, cb);
		if (ret && !skb->len) {
			mutex_unlock(&krt_pool_lock);
			kfree(sn);
			return -EMSGSIZE;
		}
		if (ret)
			break;
next:
		ctx->idx = i;
	}
	mutex_unlock(&krt_pool_lock);
	kfree(sn);
	return skb->len;
}

static int krt_nl_stats_reset_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *name = info->attrs[KRT_A_STATS_PEER];
	struct krt_peer *peer, *one = NULL;
	struct krt_conn *conn;
	int ret = 0;
	u32 used;

	if (info->attrs[KRT_A_STATS_CONN]) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[KRT_A_STATS_CONN],
				    "a reset is per peer: its connections go with it");
		return -EINVAL;
	}
	mutex_lock(&krt_pool_lock);
	if (name) {
		one = krt_peer_find_locked(nla_data(name));
		if (!one) {
			mutex_unlock(&krt_pool_lock);
			NL_SET_ERR_MSG_ATTR(info->extack, name, "no such peer");
			return -ENOENT;
		}
	}
	/* ORDER: one critical section: readers see all of it or none */
	mutex_lock(&krt_stats_lock);
	list_for_each_entry(peer, &krt_peers, entry) {
		if (one && peer != one)
			continue;
		ret = krt_stats_prepare(&peer->st);
		list_for_each_entry(conn, &peer->conns, entry)
			ret = ret ?: krt_stats_prepare(&conn->st);
		if (ret)
			goto out;
	}
	list_for_each_entry(peer, &krt_peers, entry) {
		if (one && peer != one)
			continue;
		krt_stats_reset(&peer->st);
		list_for_each_entry(conn, &peer->conns, entry) {
			krt_stats_reset(&conn->st);
			/* high-water marks start from what is there now */
			WRITE_ONCE(conn->st.inflight_hwm, krt_queue_inflight(conn->q));
			WRITE_ONCE(conn->st.mrs_hwm, krt_queue_mrs(conn->q, &used) ? used : 0);
			krt_hwm_raise(&peer->st.inflight_hwm, conn->st.inflight_hwm);
			krt_hwm_raise(&peer->st.mrs_hwm, conn->st.mrs_hwm);
		}
	}
out:
	mutex_unlock(&krt_stats_lock);
	mutex_unlock(&krt_pool_lock);
	if (ret) {
		NL_SET_ERR_MSG(info->extack, "no memory for the reset: nothing reset");
		return ret;
	}
	/* everything: the devices' counters too, the peers' already done */
	if (!one && krt_dev_stats_reset()) {
		NL_SET_ERR_MSG(info->extack,
			       "no memory to reset the device counters: only the peers were reset");
		return -ENOMEM;
	}
	return 0;
}

/*
 * KRT_CMD_TEST: run ping or xfer requests through the test service and
 * answer with the outcome.  Runs for as long as the requests take.
 */
static int krt_nl_test_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct krt_test_args args = {};
	struct krt_test_result res = {};
	struct sk_buff *msg;
	void *hdr;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, KRT_A_TEST_PEER) ||
	    GENL_REQ_ATTR_CHECK(info, KRT_A_TEST_OP))
		return -EINVAL;
	nla_strscpy(args.peer, info->attrs[KRT_A_TEST_PEER], sizeof(args.peer));
	args.op = nla_get_u32(info->attrs[KRT_A_TEST_OP]);
	args.count = krt_nl_u32(info, KRT_A_TEST_COUNT, 10);
	args.size = krt_nl_u32(info, KRT_A_TEST_SIZE, args.op == KRT_TEST_PING ? 64 : 4096);
	args.depth = krt_nl_u32(info, KRT_A_TEST_DEPTH, 1);
	args.threads = krt_nl_u32(info, KRT_A_TEST_THREADS, 1);
	args.timeout_ms = krt_nl_u32(info, KRT_A_TEST_TIMEOUT, 0);
	args.nowait = info->attrs[KRT_A_TEST_NOWAIT] &&
		      nla_get_u8(info->attrs[KRT_A_TEST_NOWAIT]);
	args.noretry = info->attrs[KRT_A_TEST_NORETRY] &&
		       nla_get_u8(info->attrs[KRT_A_TEST_NORETRY]);
	ret = krt_test_run(&args, &res, info->extack);
	if (ret)
		return ret;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &krt_genl_family, 0, KRT_CMD_TEST);
	if (!hdr)
		goto err_free;
	if (nla_put_string(msg, KRT_A_TEST_PEER, args.peer) ||
	    nla_put_u32(msg, KRT_A_TEST_OP, args.op) ||
	    nla_put_u32(msg, KRT_A_TEST_COUNT, args.count) ||
	    nla_put_u32(msg, KRT_A_TEST_SIZE, args.size) ||
	    nla_put_u32(msg, KRT_A_TEST_DEPTH, args.depth) ||
	    nla_put_u32(msg, KRT_A_TEST_THREADS, args.threads) ||
	    nla_put_u64_64bit(msg, KRT_A_TEST_OK, res.ok, KRT_A_TEST_PAD) ||
	    nla_put_u64_64bit(msg, KRT_A_TEST_ERRORS, res.errors, KRT_A_TEST_PAD) ||
	    nla_put_u64_64bit(msg, KRT_A_TEST_MISMATCHES, res.mismatches, KRT_A_TEST_PAD) ||
	    nla_put_u64_64bit(msg, KRT_A_TEST_DOUBLE, res.double_done, KRT_A_TEST_PAD) ||
	    nla_put_u64_64bit(msg, KRT_A_TEST_BYTES, res.bytes, KRT_A_TEST_PAD) ||
	    nla_put_u64_64bit(msg, KRT_A_TEST_ELAPSED_NS, res.elapsed_ns, KRT_A_TEST_PAD) ||
	    nla_put_u64_64bit(msg, KRT_A_TEST_LAT_MIN_NS, res.lat_min, KRT_A_TEST_PAD) ||
	    nla_put_u64_64bit(msg, KRT_A_TEST_LAT_AVG_NS, res.lat_avg, KRT_A_TEST_PAD) ||
	    nla_put_u64_64bit(msg, KRT_A_TEST_LAT_P99_NS, res.lat_p99, KRT_A_TEST_PAD) ||
	    nla_put_u64_64bit(msg, KRT_A_TEST_LAT_MAX_NS, res.lat_max, KRT_A_TEST_PAD) ||
	    nla_put_u64_64bit(msg, KRT_A_TEST_EAGAIN, res.eagain, KRT_A_TEST_PAD) ||
	    nla_put_u64_64bit(msg, KRT_A_TEST_RESENT, res.resent, KRT_A_TEST_PAD) ||
	    nla_put_u32(msg, KRT_A_TEST_FIRST_ERROR, (u32)-res.first_error))
		goto err_free;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static const struct genl_ops krt_genl_ops[] = {
	{
		.cmd		= KRT_CMD_DEV_GET,
		.doit		= krt_nl_dev_get_doit,
		.dumpit		= krt_nl_dev_get_dumpit,
		.policy		= krt_dev_get_policy,
		.maxattr	= ARRAY_SIZE(krt_dev_get_policy) - 1,
	},
	{
		.cmd		= KRT_CMD_DEV_SET,
		.doit		= krt_nl_dev_set_doit,
		.policy		= krt_dev_set_policy,
		.maxattr	= ARRAY_SIZE(krt_dev_set_policy) - 1,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= KRT_CMD_LISTEN_ADD,
		.doit		= krt_nl_listen_doit,
		.policy		= krt_listen_policy,
		.maxattr	= KRT_A_LISTEN_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= KRT_CMD_LISTEN_DEL,
		.doit		= krt_nl_listen_doit,
		.policy		= krt_listen_policy,
		.maxattr	= KRT_A_LISTEN_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= KRT_CMD_LISTEN_GET,
		.dumpit		= krt_nl_listen_dumpit,
		.policy		= krt_listen_policy,
		.maxattr	= KRT_A_LISTEN_MAX,
	},
	{
		.cmd		= KRT_CMD_PEER_ADD,
		.doit		= krt_nl_peer_add_doit,
		.policy		= krt_peer_policy,
		.maxattr	= KRT_A_PEER_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= KRT_CMD_PEER_DEL,
		.doit		= krt_nl_peer_del_doit,
		.policy		= krt_peer_policy,
		.maxattr	= KRT_A_PEER_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= KRT_CMD_PEER_SET,
		.doit		= krt_nl_peer_set_doit,
		.policy		= krt_peer_policy,
		.maxattr	= KRT_A_PEER_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= KRT_CMD_PEER_GET,
		.doit		= krt_nl_peer_get_doit,
		.dumpit		= krt_nl_peer_dumpit,
		.policy		= krt_peer_policy,
		.maxattr	= KRT_A_PEER_MAX,
	},
	{
		.cmd		= KRT_CMD_TEST,
		.doit		= krt_nl_test_doit,
		.policy		= krt_test_policy,
		.maxattr	= KRT_A_TEST_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= KRT_CMD_CONN_GET,
		.dumpit		= krt_nl_conn_dumpit,
		.policy		= krt_conn_policy,
		.maxattr	= KRT_A_CONN_MAX,
	},
	{
		.cmd		= KRT_CMD_PEER_RECONNECT,
		.doit		= krt_nl_peer_reconnect_doit,
		.policy		= krt_peer_name_policy,
		.maxattr	= KRT_A_PEER_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= KRT_CMD_CONN_RESET,
		.doit		= krt_nl_conn_reset_doit,
		.policy		= krt_conn_reset_policy,
		.maxattr	= KRT_A_CONN_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
	{
		.cmd		= KRT_CMD_STATS_GET,
		.doit		= krt_nl_stats_get_doit,
		.dumpit		= krt_nl_stats_dumpit,
		.policy		= krt_stats_policy,
		.maxattr	= KRT_A_STATS_MAX,
	},
	{
		.cmd		= KRT_CMD_STATS_RESET,
		.doit		= krt_nl_stats_reset_doit,
		.policy		= krt_stats_policy,
		.maxattr	= KRT_A_STATS_MAX,
		.flags		= GENL_ADMIN_PERM,
	},
};

static struct genl_family krt_genl_family __ro_after_init = {
	.name		= KRT_GENL_NAME,
	.version	= KRT_GENL_VERSION,
	.netnsok	= false,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= krt_genl_ops,
	.n_ops		= ARRAY_SIZE(krt_genl_ops),
	.mcgrps		= krt_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(krt_mcgrps),
};

/**
 * krt_nl_dev_event() - announce a device event on the "events" group
 * @dev: the device
 * @cmd: KRT_CMD_DEV_ADD_NTF, KRT_CMD_DEV_DEL_NTF or KRT_CMD_DEV_CHANGE_NTF
 *
 * Takes krt_dev_lock.  Best effort: an event that cannot be allocated is
 * lost, as with every netlink notification.
 */
void krt_nl_dev_event(struct krt_device *dev, u8 cmd)
{
	struct sk_buff *msg;
	int ret;

	if (!genl_has_listeners(&krt_genl_family, &init_net, KRT_MCGRP_EVENTS_ID))
		return;
	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	mutex_lock(&krt_dev_lock);
	ret = krt_nl_fill_dev(msg, dev, cmd, 0, 0, 0);
	mutex_unlock(&krt_dev_lock);
	if (ret) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast_netns(&krt_genl_family, &init_net, msg, 0,
				KRT_MCGRP_EVENTS_ID, GFP_KERNEL);
}

/* Send @msg (with header filled by the caller) to the events group. */
static void krt_nl_multicast(struct sk_buff *msg)
{
	genlmsg_multicast_netns(&krt_genl_family, &init_net, msg, 0,
				KRT_MCGRP_EVENTS_ID, GFP_KERNEL);
}

/**
 * krt_nl_peer_event() - announce a peer's state, or its removal
 * @peer: the peer; caller holds krt_pool_lock unless it is unlisted
 * @cmd: KRT_CMD_PEER_STATE_NTF or KRT_CMD_PEER_DEL_NTF
 */
void krt_nl_peer_event(struct krt_peer *peer, u8 cmd)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&krt_genl_family, &init_net, KRT_MCGRP_EVENTS_ID))
		return;
	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	if (krt_nl_fill_peer(msg, peer, cmd, 0, 0, 0, NULL)) {
		nlmsg_free(msg);
		return;
	}
	krt_nl_multicast(msg);
}

/**
 * krt_nl_conn_event() - announce a connection's state
 * @conn: the connection; caller holds krt_pool_lock
 */
void krt_nl_conn_event(struct krt_conn *conn)
{
	struct sk_buff *msg;

	if (!genl_has_listeners(&krt_genl_family, &init_net, KRT_MCGRP_EVENTS_ID))
		return;
	msg = nlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return;
	if (krt_nl_fill_conn(msg, conn, KRT_CMD_CONN_STATE_NTF, 0, 0, 0, NULL)) {
		nlmsg_free(msg);
		return;
	}
	krt_nl_multicast(msg);
}

/**
 * krt_netlink_init() - register the "krt" generic netlink family
 *
 * Return: 0 or the error of genl_register_family().
 */
int __init krt_netlink_init(void)
{
	if (!KRT_MCGRP_EVENTS_FLAGS)
		pr_notice("kernel without GENL_MCAST_CAP_NET_ADMIN: every user may join the events group\n");
	return genl_register_family(&krt_genl_family);
}

/**
 * krt_netlink_exit() - unregister the family; waits for running handlers
 */
void krt_netlink_exit(void)
{
	genl_unregister_family(&krt_genl_family);
}
