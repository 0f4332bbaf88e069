/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krt: in-kernel RDMA transport - internal definitions shared by the
 * module's files.  Not exported.
 */
#ifndef _KRT_INTERNAL_H
#define _KRT_INTERNAL_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <uapi/linux/krt.h>

#define KRT_VERSION	"0.1.0"

/**
 * struct krt_dev_caps - what krt needs to know of a device's limits
 * @frwr: fast registration work requests (MEM_MGT_EXTENSIONS)
 * @send_inv: remote invalidation through SEND_WITH_INV
 * @sg_gaps: IB_MR_TYPE_SG_GAPS registrations
 * @max_fr_pages: max_fast_reg_page_list_len
 * @max_qp_wr: largest work queue
 * @max_send_sge: scatter/gather entries per send WR
 * @max_recv_sge: scatter/gather entries per receive WR
 * @max_inline: inline data a RC QP accepts, probed at add time
 * @max_cqe: largest completion queue
 * @comp_vectors: completion vectors (interrupt sources) of the device
 * @ports: physical ports
 * @node_guid: node GUID, as ib_core keeps it
 *
 * Read-only once the device is added, so readable without a lock.
 */
struct krt_dev_caps {
	bool		frwr;
	bool		send_inv;
	bool		sg_gaps;
	u32		max_fr_pages;
	u32		max_qp_wr;
	u32		max_send_sge;
	u32		max_recv_sge;
	u32		max_inline;
	u32		max_cqe;
	u32		comp_vectors;
	u32		ports;
	__be64		node_guid;
};

/**
 * struct krt_device - krt's context for one RDMA device
 * @ref: lifetime; the ib_client holds one reference until remove
 * @entry: in krt_dev_list; protected by krt_dev_lock
 * @ibdev: the device; valid until @removed is set (krt_dev_lock)
 * @pd: protection domain, NULL when the device is unusable
 * @index: ib device index, stable for the device's life
 * @name: current device name; protected by krt_dev_lock
 * @caps: capabilities, read-only after add
 * @unusable: NULL, or why krt cannot use the device; read-only after add
 * @enabled: administrator's switch; protected by krt_dev_lock
 * @removed: the device is going away; protected by krt_dev_lock
 * @dbg_dir: debugfs folder; created and removed by the ib_client callbacks
 */
struct krt_device {
	struct kref		ref;
	struct list_head	entry;
	struct ib_device	*ibdev;
	struct ib_pd		*pd;
	u32			index;
	char			name[KRT_DEV_NAME_MAX];
	struct krt_dev_caps	caps;
	const char		*unusable;
	bool			enabled;
	bool			removed;
	struct dentry		*dbg_dir;
};

/* device.c */
extern struct mutex krt_dev_lock;
extern struct list_head krt_dev_list;
extern bool krt_autoenable;

int krt_device_init(void);
void krt_device_exit(void);
extern struct ib_client krt_ib_client;

struct krt_device *krt_dev_find_locked(const char *name);
struct krt_device *krt_dev_get_by_name(const char *name);
void krt_dev_put(struct krt_device *dev);
enum krt_dev_state krt_dev_state(const struct krt_device *dev);
int krt_dev_set_enabled(struct krt_device *dev, bool enabled);
const char *krt_dev_state_name(enum krt_dev_state state);

/* debugfs.c */
extern bool krt_fault_mask_frwr;

void krt_debugfs_init(void);
void krt_debugfs_exit(void);
void krt_debugfs_dev_add(struct krt_device *dev);
void krt_debugfs_dev_del(struct krt_device *dev);
void krt_debugfs_dev_rename(struct krt_device *dev, const char *old);

/* netlink.c */
int __init krt_netlink_init(void);
void krt_netlink_exit(void);
void krt_nl_dev_event(struct krt_device *dev, u8 cmd);

#endif /* _KRT_INTERNAL_H */
