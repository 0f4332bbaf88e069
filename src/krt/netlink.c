// SPDX-License-Identifier: GPL-2.0
/*
 * krt: generic netlink family "krt".
 *
 * DOC: Netlink
 *
 * The control plane of krt.  Spec: Documentation/netlink/specs/krt.yaml;
 * uapi: include/uapi/linux/krt.h.  Every operation has its own policy, so
 * the core rejects unknown attributes, wrong types and oversize strings
 * before a handler runs; handlers check presence with GENL_REQ_ATTR_CHECK
 * and answer every refusal with an extack message.  Operations that change
 * state carry GENL_ADMIN_PERM (CAP_NET_ADMIN).  Changes are announced on
 * the "events" multicast group.
 *
 * Handlers run under genl_mutex (no parallel_ops), which also makes
 * genl_unregister_family() wait for them at unload.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include "krt.h"

enum krt_mcgrp {
	KRT_MCGRP_EVENTS_ID,
};

static const struct genl_multicast_group krt_mcgrps[] = {
	[KRT_MCGRP_EVENTS_ID] = { .name = KRT_MCGRP_EVENTS },
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
			      be64_to_cpu(c->node_guid), KRT_A_DEV_UNSPEC))
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
};

static struct genl_family krt_genl_family __ro_after_init = {
	.name		= KRT_GENL_NAME,
	.version	= KRT_GENL_VERSION,
	.netnsok	= false,
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

int __init krt_netlink_init(void)
{
	return genl_register_family(&krt_genl_family);
}

void krt_netlink_exit(void)
{
	genl_unregister_family(&krt_genl_family);
}
