// SPDX-License-Identifier: GPL-2.0
/*
 * krt: RDMA device tracking.
 *
 * DOC: Devices
 *
 * krt registers an ib_client.  ib_core calls krt_ib_add() for every RDMA
 * device present at load time and for each one that appears later, and
 * krt_ib_remove() when a device goes away (driver unload, ``rdma link del``)
 * or when krt is unloaded.  For each device krt keeps a refcounted
 * &struct krt_device holding a protection domain and the capabilities the
 * transport depends on.  A device that lacks one (FRWR above all) is still
 * tracked and listed, as unusable, with the reason.
 *
 * Lifetime: the ib_client holds the first reference.  Connections take
 * their own with krt_dev_get_by_ibdev() and drop it with krt_dev_put().
 * On remove the device is unlinked and marked removed under krt_dev_lock
 * first, so no new reference can be taken,
 * then its PD is released while ib_core still guarantees the ib_device, and
 * the memory goes with the last reference.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wait_bit.h>
#include "krt.h"

/* Protects krt_dev_list and the mutable fields of every krt_device. */
DEFINE_MUTEX(krt_dev_lock);
LIST_HEAD(krt_dev_list);
/*
 * Protects every krt_device's name against a rename, for readers that
 * hold krt_pool_lock rather than krt_dev_lock (a connection's device in
 * a dump); innermost, a rename takes it inside krt_dev_lock.
 */
static DEFINE_SPINLOCK(krt_dev_name_lock);

bool krt_autoenable = true;
module_param_named(autoenable, krt_autoenable, bool, 0644);
MODULE_PARM_DESC(autoenable,
		 "Enable new RDMA devices for krt on arrival (default: Y); with N an administrator enables them with 'krtctl dev set NAME enabled on'");

static void krt_dev_release(struct kref *ref)
{
	struct krt_device *dev = container_of(ref, struct krt_device, ref);

	WARN_ON_ONCE(dev->pd);
	krt_stats_free(&dev->st);
	kfree(dev);
}

/**
 * krt_dev_put() - drop a reference on a krt device
 * @dev: device from krt_dev_get_by_ibdev(); may be NULL
 */
void krt_dev_put(struct krt_device *dev)
{
	/* the remove callback, holding the last reference, waits for this */
	if (dev && !kref_put(&dev->ref, krt_dev_release))
		wake_up_var(&dev->ref);
}

/**
 * krt_dev_find_locked() - look a device up by name
 * @name: RDMA device name
 *
 * Caller must hold krt_dev_lock; no reference is taken.
 *
 * Return: the device, or NULL if there is no such (live) device.
 */
struct krt_device *krt_dev_find_locked(const char *name)
{
	struct krt_device *dev;

	lockdep_assert_held(&krt_dev_lock);
	list_for_each_entry(dev, &krt_dev_list, entry)
		if (!strcmp(dev->name, name))
			return dev;
	return NULL;
}

/**
 * krt_dev_get_by_ibdev() - the usable, enabled krt device of an ib_device
 * @ibdev: the ib device (of an rdma_cm id)
 *
 * Return: the device with a reference (krt_dev_put()), or NULL when krt
 * does not track it, or it is unusable or disabled.
 */
struct krt_device *krt_dev_get_by_ibdev(struct ib_device *ibdev)
{
	struct krt_device *dev, *found = NULL;

	mutex_lock(&krt_dev_lock);
	list_for_each_entry(dev, &krt_dev_list, entry) {
		if (dev->ibdev == ibdev && !dev->removed && !dev->unusable &&
		    dev->enabled && kref_get_unless_zero(&dev->ref)) {
			found = dev;
			break;
		}
	}
	mutex_unlock(&krt_dev_lock);
	return found;
}

/**
 * krt_dev_state() - usable, disabled or unusable
 * @dev: the device; caller holds krt_dev_lock
 *
 * Return: the device's &enum krt_dev_state.
 */
enum krt_dev_state krt_dev_state(const struct krt_device *dev)
{
	if (dev->unusable)
		return KRT_DEV_STATE_UNUSABLE;
	return dev->enabled ? KRT_DEV_STATE_USABLE : KRT_DEV_STATE_DISABLED;
}

/**
 * krt_dev_copy_name() - a device's name, whole even during a rename
 * @dev: the device (a reference or a lock keeps it alive)
 * @buf: KRT_DEV_NAME_MAX bytes
 *
 * For readers that do not hold krt_dev_lock, under which a rename
 * rewrites the name in place.
 */
void krt_dev_copy_name(const struct krt_device *dev, char *buf)
{
	spin_lock(&krt_dev_name_lock);
	strscpy(buf, dev->name, KRT_DEV_NAME_MAX);
	spin_unlock(&krt_dev_name_lock);
}

/**
 * krt_dev_state_name() - printable name of a device state
 * @state: the state
 *
 * Return: a static string.
 */
const char *krt_dev_state_name(enum krt_dev_state state)
{
	switch (state) {
	case KRT_DEV_STATE_USABLE:
		return "usable";
	case KRT_DEV_STATE_DISABLED:
		return "disabled";
	case KRT_DEV_STATE_UNUSABLE:
		return "unusable";
	}
	return "unknown";
}

/*
 * The kernel verbs API has no attribute for inline data, so ask the driver:
 * the largest max_inline_data an RC QP can be created with, by bisection
 * (a dozen QP creations at add time, on a private CQ).
 */
static int krt_dev_try_inline(struct krt_device *dev, struct ib_cq *cq, u32 size,
			      u32 *granted)
{
	struct ib_qp_init_attr attr = {
		.send_cq	= cq,
		.recv_cq	= cq,
		.qp_type	= IB_QPT_RC,
		.sq_sig_type	= IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr	= 1,
			.max_recv_wr	= 1,
			.max_send_sge	= 1,
			.max_recv_sge	= 1,
			.max_inline_data = size,
		},
	};
	struct ib_qp *qp;

	qp = ib_create_qp(dev->pd, &attr);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	*granted = attr.cap.max_inline_data;
	ib_destroy_qp(qp);
	return 0;
}

static u32 krt_dev_probe_inline(struct krt_device *dev)
{
	u32 lo = 0, hi = 4096, granted = 0, g;
	struct ib_cq *cq;

	cq = ib_alloc_cq(dev->ibdev, NULL, 2, 0, IB_POLL_DIRECT);
	if (IS_ERR(cq))
		return 0;
	if (krt_dev_try_inline(dev, cq, 0, &granted))
		goto out;
	/* invariant: lo is accepted, anything above hi is not tried */
	while (lo < hi) {
		u32 mid = lo + (hi - lo + 1) / 2;

		if (krt_dev_try_inline(dev, cq, mid, &g) == 0) {
			lo = mid;
			granted = max(g, mid);
		} else {
			hi = mid - 1;
		}
	}
out:
	ib_free_cq(cq);
	return granted;
}

static void krt_dev_read_caps(struct krt_device *dev)
{
	const struct ib_device_attr *a = &dev->ibdev->attrs;
	struct krt_dev_caps *c = &dev->caps;

	c->frwr = !!(a->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS);
	if (krt_fault_mask_frwr())
		c->frwr = false;
	/* remote invalidation comes with the memory management extensions */
	c->send_inv = c->frwr;
	c->sg_gaps = !!(a->kernel_cap_flags & IBK_SG_GAPS_REG);
	c->max_fr_pages = a->max_fast_reg_page_list_len;
	c->max_qp_wr = max(a->max_qp_wr, 0);
	c->max_send_sge = max(a->max_send_sge, 0);
	c->max_recv_sge = max(a->max_recv_sge, 0);
	c->max_cqe = max(a->max_cqe, 0);
	c->comp_vectors = max(dev->ibdev->num_comp_vectors, 0);
	c->ports = rdma_end_port(dev->ibdev) - rdma_start_port(dev->ibdev) + 1;
	c->node_guid = dev->ibdev->node_guid;
}

/* Return: NULL when krt can use the device, else why not. */
static const char *krt_dev_check_caps(const struct krt_dev_caps *c)
{
	if (!c->frwr)
		return "no FRWR support (IB_DEVICE_MEM_MGT_EXTENSIONS)";
	if (!c->max_fr_pages)
		return "max_fast_reg_page_list_len is 0";
	if (c->max_qp_wr < 16)
		return "max_qp_wr below 16";
	if (!c->max_send_sge || !c->max_recv_sge)
		return "no scatter/gather entries";
	return NULL;
}

/**
 * krt_dev_stats_reset() - restart the counters of every device
 *
 * What "krtctl stats reset" of everything does to the devices, after the
 * peers: all of them or, when memory for a reset is short, none.
 *
 * Context: process; takes krt_dev_lock, then krt_stats_lock.
 * Return: 0, or -ENOMEM with no device reset.
 */
int krt_dev_stats_reset(void)
{
	struct krt_device *dev;
	int ret = 0;

	mutex_lock(&krt_dev_lock);
	mutex_lock(&krt_stats_lock);
	list_for_each_entry(dev, &krt_dev_list, entry) {
		ret = krt_stats_prepare(&dev->st);
		if (ret)
			goto out;
	}
	list_for_each_entry(dev, &krt_dev_list, entry)
		krt_stats_reset(&dev->st);
out:
	mutex_unlock(&krt_stats_lock);
	mutex_unlock(&krt_dev_lock);
	return ret;
}

static int krt_ib_add(struct ib_device *ibdev)
{
	struct krt_device *dev;

	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return -ENOMEM;
	if (krt_stats_init(&dev->st, false, false, GFP_KERNEL)) {
		kfree(dev);
		return -ENOMEM;
	}
	kref_init(&dev->ref);
	INIT_LIST_HEAD(&dev->entry);
	dev->ibdev = ibdev;
	dev->index = ibdev->index;
	strscpy(dev->name, dev_name(&ibdev->dev), sizeof(dev->name));

	krt_dev_read_caps(dev);
	dev->unusable = krt_dev_check_caps(&dev->caps);
	if (!dev->unusable) {
		dev->pd = ib_alloc_pd(ibdev, 0);
		if (IS_ERR(dev->pd)) {
			dev->pd = NULL;
			dev->unusable = "cannot allocate a protection domain";
		}
	}
	if (dev->pd)
		dev->caps.max_inline = krt_dev_probe_inline(dev);
	/* an unusable device is never enabled: there is nothing to use */
	dev->enabled = krt_autoenable && !dev->unusable;

	mutex_lock(&krt_dev_lock);
	list_add_tail(&dev->entry, &krt_dev_list);
	mutex_unlock(&krt_dev_lock);
	ib_set_client_data(ibdev, &krt_ib_client, dev);

	krt_debugfs_dev_add(dev);
	krt_nl_dev_event(dev, KRT_CMD_DEV_ADD_NTF);
	if (dev->unusable)
		pr_info("%s: unusable: %s\n", dev->name, dev->unusable);
	else
		pr_debug("%s: added\n", dev->name);
	return 0;
}

static void krt_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct krt_device *dev = client_data;

	/* ORDER: unlink first so no new reference is handed out */
	mutex_lock(&krt_dev_lock);
	list_del_init(&dev->entry);
	dev->removed = true;
	mutex_unlock(&krt_dev_lock);

	/* connections on this device go before its PD does */
	krt_pool_dev_remove(dev);
	krt_nl_dev_event(dev, KRT_CMD_DEV_DEL_NTF);
	krt_debugfs_dev_del(dev);
	if (dev->pd) {
		ib_dealloc_pd(dev->pd);
		dev->pd = NULL;
	}
	mutex_lock(&krt_dev_lock);
	dev->ibdev = NULL;
	mutex_unlock(&krt_dev_lock);
	krt_dev_put(dev);
}

static void krt_ib_rename(struct ib_device *ibdev, void *client_data)
{
	struct krt_device *dev = client_data;
	char old[KRT_DEV_NAME_MAX];

	mutex_lock(&krt_dev_lock);
	strscpy(old, dev->name, sizeof(old));
	spin_lock(&krt_dev_name_lock);
	strscpy(dev->name, dev_name(&ibdev->dev), sizeof(dev->name));
	spin_unlock(&krt_dev_name_lock);
	mutex_unlock(&krt_dev_lock);

	krt_debugfs_dev_rename(dev, old);
	krt_nl_dev_event(dev, KRT_CMD_DEV_CHANGE_NTF);
}

struct ib_client krt_ib_client = {
	.name	= "krt",
	.add	= krt_ib_add,
	.remove	= krt_ib_remove,
	.rename	= krt_ib_rename,
};

/**
 * krt_dev_set_enabled() - the administrator's switch for a device
 * @dev: the device; caller holds krt_dev_lock
 * @enabled: new value
 *
 * Return: 0, or -EOPNOTSUPP when the device is unusable (nothing changes).
 */
int krt_dev_set_enabled(struct krt_device *dev, bool enabled)
{
	lockdep_assert_held(&krt_dev_lock);
	if (dev->unusable && enabled)
		return -EOPNOTSUPP;
	dev->enabled = enabled;
	return 0;
}

int krt_device_init(void)
{
	return ib_register_client(&krt_ib_client);
}

void krt_device_exit(void)
{
	ib_unregister_client(&krt_ib_client);
	WARN_ON(!list_empty(&krt_dev_list));
}
