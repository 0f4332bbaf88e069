// SPDX-License-Identifier: GPL-2.0
/*
 * krt: debugfs.
 *
 * DOC: debugfs layout
 *
 * ``/sys/kernel/debug/krt/`` holds ``version``, ``cm`` (private-data
 * rejects), ``dp`` (data-path counters of all connections, past and
 * present), ``conns`` (each connection's queue: credits, SQ room, waits,
 * counters), ``devices/<dev>/`` with one read-only file per capability
 * (table-driven, one shared fops) and ``stats``, ``peers/<name>/`` with
 * ``stats``, ``latency`` and ``conns/<index>/{state,queue,stats,latency}``, and
 * ``fault/`` with knobs that selftests flip to drive error paths (fault.c,
 * in builds with ``KRT_FAULT=y`` only).  Every
 * file is ``key: value`` lines with the keys of netlink and krtctl -j.
 * Not ABI; stable figures are also in netlink.  Device entries are
 * created from the ib_client callbacks; peer entries by a work item that
 * brings ``peers/`` in line with the peer list (each folder holds a
 * reference on its peer), never under a lock the I/O path takes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>
#include "krt.h"

static struct dentry *krt_dbg_root;
static struct dentry *krt_dbg_devices;
static struct dentry *krt_dbg_peers;

struct krt_dbg_attr {
	const char *name;
	int (*show)(struct krt_device *dev, struct seq_file *m);
};

#define KRT_DBG_CAP(field)						\
static int krt_dbg_show_##field(struct krt_device *dev, struct seq_file *m) \
{									\
	seq_printf(m, "%u\n", (unsigned int)dev->caps.field);		\
	return 0;							\
}

KRT_DBG_CAP(frwr)
KRT_DBG_CAP(send_inv)
KRT_DBG_CAP(sg_gaps)
KRT_DBG_CAP(max_fr_pages)
KRT_DBG_CAP(max_qp_wr)
KRT_DBG_CAP(max_send_sge)
KRT_DBG_CAP(max_recv_sge)
KRT_DBG_CAP(max_inline)
KRT_DBG_CAP(max_cqe)
KRT_DBG_CAP(comp_vectors)
KRT_DBG_CAP(ports)

static int krt_dbg_show_state(struct krt_device *dev, struct seq_file *m)
{
	mutex_lock(&krt_dev_lock);
	seq_printf(m, "%s\n", krt_dev_state_name(krt_dev_state(dev)));
	mutex_unlock(&krt_dev_lock);
	return 0;
}

static int krt_dbg_show_reason(struct krt_device *dev, struct seq_file *m)
{
	seq_printf(m, "%s\n", dev->unusable ?: "-");
	return 0;
}

static int krt_dbg_show_info(struct krt_device *dev, struct seq_file *m)
{
	const struct krt_dev_caps *c = &dev->caps;

	mutex_lock(&krt_dev_lock);
	seq_printf(m, "name: %s\nindex: %u\nstate: %s\nenabled: %d\n",
		   dev->name, dev->index,
		   krt_dev_state_name(krt_dev_state(dev)), dev->enabled);
	mutex_unlock(&krt_dev_lock);
	seq_printf(m, "reason: %s\n", dev->unusable ?: "-");
	seq_printf(m, "frwr: %d\nsend_inv: %d\nsg_gaps: %d\n",
		   c->frwr, c->send_inv, c->sg_gaps);
	seq_printf(m, "max_fast_reg_page_list_len: %u\nmax_qp_wr: %u\n",
		   c->max_fr_pages, c->max_qp_wr);
	seq_printf(m, "max_send_sge: %u\nmax_recv_sge: %u\nmax_inline_data: %u\n",
		   c->max_send_sge, c->max_recv_sge, c->max_inline);
	seq_printf(m, "max_cqe: %u\ncomp_vectors: %u\nports: %u\nnode_guid: %016llx\n",
		   c->max_cqe, c->comp_vectors, c->ports,
		   be64_to_cpu(c->node_guid));
	return 0;
}

/* Counters of every connection the device carried. */
static int krt_dbg_show_dev_stats(struct krt_device *dev, struct seq_file *m)
{
	struct krt_stats_snap *sn = kmalloc(sizeof(*sn), GFP_KERNEL);

	if (!sn)
		return -ENOMEM;
	mutex_lock(&krt_stats_lock);
	krt_stats_read(&dev->st, sn);
	mutex_unlock(&krt_stats_lock);
	seq_printf(m, "mem_used: %lld\n", atomic64_read(&dev->mem_used));
	krt_stats_show(m, sn);
	kfree(sn);
	return 0;
}

static const struct krt_dbg_attr krt_dbg_dev_attrs[] = {
	{ "info",			krt_dbg_show_info },
	{ "stats",			krt_dbg_show_dev_stats },
	{ "state",			krt_dbg_show_state },
	{ "reason",			krt_dbg_show_reason },
	{ "frwr",			krt_dbg_show_frwr },
	{ "send_inv",			krt_dbg_show_send_inv },
	{ "sg_gaps",			krt_dbg_show_sg_gaps },
	{ "max_fast_reg_page_list_len",	krt_dbg_show_max_fr_pages },
	{ "max_qp_wr",			krt_dbg_show_max_qp_wr },
	{ "max_send_sge",		krt_dbg_show_max_send_sge },
	{ "max_recv_sge",		krt_dbg_show_max_recv_sge },
	{ "max_inline_data",		krt_dbg_show_max_inline },
	{ "max_cqe",			krt_dbg_show_max_cqe },
	{ "comp_vectors",		krt_dbg_show_comp_vectors },
	{ "ports",			krt_dbg_show_ports },
};

/* The file's inode holds the attr, its folder's inode the device. */
static int krt_dbg_show(struct seq_file *m, void *v)
{
	const struct krt_dbg_attr *attr = m->private;
	struct krt_device *dev = d_inode(m->file->f_path.dentry->d_parent)->i_private;

	return attr->show(dev, m);
}

static int krt_dbg_open(struct inode *inode, struct file *file)
{
	return single_open(file, krt_dbg_show, inode->i_private);
}

static const struct file_operations krt_dbg_fops = {
	.owner		= THIS_MODULE,
	.open		= krt_dbg_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static int krt_dbg_version_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%s\n", KRT_VERSION);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(krt_dbg_version);

static int krt_dbg_cm_show(struct seq_file *m, void *v)
{
	u32 r;

	seq_printf(m, "node_id: %016llx\n", krt_node_id);
	seq_printf(m, "malformed_private_data: %d\n", atomic_read(&krt_cm_malformed));
	for (r = KRT_REJ_VERSION; r < ARRAY_SIZE(krt_cm_rejects); r++)
		seq_printf(m, "rejects_sent{%s}: %d\n", krt_reject_name(r),
			   atomic_read(&krt_cm_rejects[r]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(krt_dbg_cm);

static int krt_dbg_dp_show(struct seq_file *m, void *v)
{
	struct krt_dp_stats *st = &krt_dp_stats;

	seq_printf(m, "malformed: %lld\nlate_replies: %lld\ntimeouts: %lld\n",
		   atomic64_read(&st->malformed), atomic64_read(&st->late_replies),
		   atomic64_read(&st->timeouts));
	seq_printf(m, "wc_errors: %lld\nrnr_errors: %lld\nbacklog_full: %lld\nresets: %lld\n",
		   atomic64_read(&st->wc_errors), atomic64_read(&st->rnr_errors),
		   atomic64_read(&st->backlog_full), atomic64_read(&st->resets));
	seq_printf(m, "api_misuse: %lld\ndropped: %lld\nmem_total: %llu\nmem_budget: %llu\n",
		   atomic64_read(&st->api_misuse), atomic64_read(&st->dropped),
		   krt_mem_total(), krt_mem_budget());
	seq_printf(m, "inline_checked: %lld\ninline_bad: %lld\nstale_refs: %lld\n",
		   atomic64_read(&st->inline_checked), atomic64_read(&st->inline_bad),
		   atomic64_read(&st->stale_refs));
	seq_printf(m, "stale_refs_gone: %lld\nreplies_dropped: %lld\n",
		   atomic64_read(&st->stale_refs_gone), atomic64_read(&st->replies_dropped));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(krt_dbg_dp);

/* Every connection with a queue: state and data-path counters. */
static int krt_dbg_conns_show(struct seq_file *m, void *v)
{
	struct krt_conn *conn;
	struct krt_peer *peer;

	mutex_lock(&krt_pool_lock);
	list_for_each_entry(peer, &krt_peers, entry) {
		list_for_each_entry(conn, &peer->conns, entry) {
			seq_printf(m, "%s/%u: qpn %u state %u\n", peer->name,
				   conn->index, conn->qpn, conn->state);
			if (conn->q)
				krt_queue_show(conn->q, m);
		}
	}
	mutex_unlock(&krt_pool_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(krt_dbg_conns);

/* ---- peers/<name>/ ---- */

static const char * const krt_dbg_conn_states[] = {
	[KRT_CONN_IDLE]		= "idle",
	[KRT_CONN_CONNECTING]	= "connecting",
	[KRT_CONN_ACTIVE]	= "active",
	[KRT_CONN_CLOSING]	= "closing",
	[KRT_CONN_ERROR]	= "error",
	[KRT_CONN_RECONNECTING]	= "reconnecting",
};

/* Peers that have a folder; krt_dbg_sync_lock. */
static LIST_HEAD(krt_dbg_peer_list);
/* Serialises krt_dbg_sync(): protects the peers' dbg_* fields. */
static DEFINE_MUTEX(krt_dbg_sync_lock);

/*
 * A peer file's inode holds its show function; the peer is in the inode
 * of the peer's folder, a connection index (plus one) in its folder's.
 */
struct krt_dbg_peer_attr {
	const char *name;
	int (*show)(struct krt_peer *peer, struct krt_conn *conn, struct seq_file *m);
	bool conn;
};

static int krt_dbg_peer_show(struct seq_file *m, void *v)
{
	const struct krt_dbg_peer_attr *attr = m->private;
	struct dentry *d = m->file->f_path.dentry->d_parent;
	struct krt_conn *conn, *found = NULL;
	struct krt_peer *peer;
	unsigned long index;
	int ret;

	if (!attr->conn)
		return attr->show(d_inode(d)->i_private, NULL, m);
	/* peers/<name>/conns/<index>/<file> */
	index = (unsigned long)d_inode(d)->i_private - 1;
	peer = d_inode(d->d_parent->d_parent)->i_private;
	mutex_lock(&krt_pool_lock);
	list_for_each_entry(conn, &peer->conns, entry)
		if (conn->index == index)
			found = conn;
	if (found) {
		ret = attr->show(peer, found, m);
	} else {
		seq_puts(m, "state: none\n");
		ret = 0;
	}
	mutex_unlock(&krt_pool_lock);
	return ret;
}

static int krt_dbg_peer_open(struct inode *inode, struct file *file)
{
	return single_open(file, krt_dbg_peer_show, inode->i_private);
}

static const struct file_operations krt_dbg_peer_fops = {
	.owner		= THIS_MODULE,
	.open		= krt_dbg_peer_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* Counters and gauges of a peer (all its connections) or a connection. */
static int krt_dbg_show_stats(struct krt_peer *peer, struct krt_conn *conn,
			      struct seq_file *m)
{
	struct krt_stats *st = conn ? &conn->st : &peer->st;
	struct krt_stats_snap *sn = kmalloc(sizeof(*sn), GFP_KERNEL);
	unsigned long since;

	if (!sn)
		return -ENOMEM;
	mutex_lock(&krt_stats_lock);
	krt_stats_read(st, sn);
	since = st->since;
	mutex_unlock(&krt_stats_lock);
	seq_printf(m, "age_ms: %llu\n", jiffies64_to_msecs(jiffies - since));
	krt_stats_show(m, sn);
	krt_stats_show_lat(m, sn, false);
	kfree(sn);
	return 0;
}

static int krt_dbg_show_peer_stats(struct krt_peer *peer, struct krt_conn *conn,
				   struct seq_file *m)
{
	return krt_dbg_show_stats(peer, NULL, m);
}

/* Summaries and every non-empty bucket. */
static int krt_dbg_show_latency(struct krt_peer *peer, struct krt_conn *conn,
				struct seq_file *m)
{
	struct krt_stats *st = conn ? &conn->st : &peer->st;
	struct krt_stats_snap *sn = kmalloc(sizeof(*sn), GFP_KERNEL);

	if (!sn)
		return -ENOMEM;
	mutex_lock(&krt_stats_lock);
	krt_stats_read(st, sn);
	mutex_unlock(&krt_stats_lock);
	krt_stats_show_lat(m, sn, true);
	kfree(sn);
	return 0;
}

/* Caller holds krt_pool_lock. */
static int krt_dbg_show_conn_state(struct krt_peer *peer, struct krt_conn *conn,
				   struct seq_file *m)
{
	u32 used, mrs = krt_queue_mrs(conn->q, &used);

	seq_printf(m, "state: %s\nindex: %u\ninbound: %d\nqpn: %u\ndepth: %u\n",
		   conn->state < ARRAY_SIZE(krt_dbg_conn_states) &&
		   krt_dbg_conn_states[conn->state] ?
		   krt_dbg_conn_states[conn->state] : "unknown",
		   conn->index, conn->inbound, conn->qpn, conn->depth);
	seq_printf(m, "reason: %s\nreconnects: %u\nattempt: %u\nstate_age_ms: %llu\n",
		   conn->reason[0] ? conn->reason : "-", conn->reconnects,
		   conn->attempt, jiffies64_to_msecs(jiffies - conn->state_time));
	seq_printf(m, "mem: %llu\ninflight: %u\ninflight_hwm: %u\n",
		   conn->mem, krt_queue_inflight(conn->q),
		   READ_ONCE(conn->st.inflight_hwm));
	seq_printf(m, "mrs: %u\nmrs_used: %u\nmrs_hwm: %u\n", mrs, used,
		   READ_ONCE(conn->st.mrs_hwm));
	seq_printf(m, "poll: %s\n", !conn->cq ? "-" :
		   conn->cq->poll_ctx == IB_POLL_SOFTIRQ ? "softirq" : "workqueue");
	krt_fault_conn_show(conn, m);	/* KRT_FAULT=y builds only */
	return 0;
}

/* Caller holds krt_pool_lock. */
static int krt_dbg_show_conn_queue(struct krt_peer *peer, struct krt_conn *conn,
				   struct seq_file *m)
{
	if (conn->q)
		krt_queue_show(conn->q, m);
	else
		seq_puts(m, "role: none\n");
	return 0;
}

static const struct krt_dbg_peer_attr krt_dbg_peer_attrs[] = {
	{ "stats",	krt_dbg_show_peer_stats,	false },
	{ "latency",	krt_dbg_show_latency,		false },
};

static const struct krt_dbg_peer_attr krt_dbg_conn_attrs[] = {
	{ "state",	krt_dbg_show_conn_state,	true },
	{ "queue",	krt_dbg_show_conn_queue,	true },
	{ "stats",	krt_dbg_show_stats,		true },
	{ "latency",	krt_dbg_show_latency,		true },
};

static void krt_dbg_peer_create(struct krt_peer *peer)
{
	struct dentry *dir;
	size_t i;

	dir = debugfs_create_dir(peer->name, krt_dbg_peers);
	if (IS_ERR(dir)) {
		pr_warn("%s: no debugfs folder (%ld)\n", peer->name, PTR_ERR(dir));
		return;
	}
	d_inode(dir)->i_private = peer;
	for (i = 0; i < ARRAY_SIZE(krt_dbg_peer_attrs); i++)
		debugfs_create_file(krt_dbg_peer_attrs[i].name, 0444, dir,
				    (void *)&krt_dbg_peer_attrs[i], &krt_dbg_peer_fops);
	peer->dbg_conns_dir = debugfs_create_dir("conns", dir);
	peer->dbg_dir = dir;
}

/* Make index folders 0..@want-1 exist, and no others. */
static void krt_dbg_peer_resize(struct krt_peer *peer, u32 want)
{
	struct dentry **d;
	char name[12];
	size_t j;
	u32 i;

	if (!peer->dbg_dir || IS_ERR(peer->dbg_conns_dir))
		return;
	for (i = want; i < peer->dbg_nr; i++)
		debugfs_remove_recursive(peer->dbg_conns[i]);
	if (want <= peer->dbg_nr) {
		peer->dbg_nr = want;
		return;
	}
	d = krealloc_array(peer->dbg_conns, want, sizeof(*d), GFP_KERNEL);
	if (!d)
		return;
	peer->dbg_conns = d;
	for (i = peer->dbg_nr; i < want; i++) {
		snprintf(name, sizeof(name), "%u", i);
		d[i] = debugfs_create_dir(name, peer->dbg_conns_dir);
		if (IS_ERR(d[i]))
			break;
		d_inode(d[i])->i_private = (void *)(unsigned long)(i + 1);
		for (j = 0; j < ARRAY_SIZE(krt_dbg_conn_attrs); j++)
			debugfs_create_file(krt_dbg_conn_attrs[j].name, 0444, d[i],
					    (void *)&krt_dbg_conn_attrs[j],
					    &krt_dbg_peer_fops);
	}
	peer->dbg_nr = i;
}

/*
 * Bring peers/ in line with the peer list: folders for new peers (taking
 * a reference), index folders for the pool's size, and away with the
 * folders of deleted peers (debugfs waits for their readers; the
 * reference goes after).
 */
static void krt_dbg_sync(void)
{
	struct krt_peer *peer, *tmp;
	struct krt_conn *conn;

	mutex_lock(&krt_dbg_sync_lock);
	mutex_lock(&krt_pool_lock);
	list_for_each_entry(peer, &krt_dbg_peer_list, dbg_entry)
		peer->dbg_listed = false;
	list_for_each_entry(peer, &krt_peers, entry) {
		if (list_empty(&peer->dbg_entry)) {
			kref_get(&peer->ref);	/* the folder's */
			list_add_tail(&peer->dbg_entry, &krt_dbg_peer_list);
		}
		peer->dbg_listed = true;
		/*
		 * an inbound pool's size is the remote's claim: only the
		 * indexes it really connected get a folder
		 */
		peer->dbg_want = peer->inbound ? 0 : peer->nr_conns;
		list_for_each_entry(conn, &peer->conns, entry)
			peer->dbg_want = max(peer->dbg_want, conn->index + 1);
	}
	mutex_unlock(&krt_pool_lock);

	list_for_each_entry_safe(peer, tmp, &krt_dbg_peer_list, dbg_entry) {
		if (!peer->dbg_listed) {
			debugfs_remove_recursive(peer->dbg_dir);
			peer->dbg_dir = NULL;
			kfree(peer->dbg_conns);
			peer->dbg_conns = NULL;
			peer->dbg_nr = 0;
			list_del_init(&peer->dbg_entry);
			krt_peer_put(peer);
			continue;
		}
		if (!peer->dbg_dir && !IS_ERR_OR_NULL(krt_dbg_peers))
			krt_dbg_peer_create(peer);
		krt_dbg_peer_resize(peer, peer->dbg_want);
	}
	mutex_unlock(&krt_dbg_sync_lock);
}

static void krt_dbg_sync_fn(struct work_struct *work)
{
	krt_dbg_sync();
}

static DECLARE_WORK(krt_dbg_sync_work, krt_dbg_sync_fn);
/* Module unload: no more syncs scheduled; set under krt_pool_lock */
static bool krt_dbg_stopping;

/**
 * krt_debugfs_peers_changed() - a peer or connection came or went
 *
 * Schedules the update of ``peers/``.  Any context.
 */
void krt_debugfs_peers_changed(void)
{
	if (!IS_ERR_OR_NULL(krt_dbg_peers) && !READ_ONCE(krt_dbg_stopping))
		schedule_work(&krt_dbg_sync_work);
}

/**
 * krt_debugfs_dev_add() - create a device's folder
 * @dev: the device, not yet visible to readers of its files
 */
void krt_debugfs_dev_add(struct krt_device *dev)
{
	struct dentry *dir;
	size_t i;

	if (IS_ERR_OR_NULL(krt_dbg_devices))
		return;
	dir = debugfs_create_dir(dev->name, krt_dbg_devices);
	if (IS_ERR(dir)) {
		pr_warn("%s: no debugfs folder (%ld)\n", dev->name, PTR_ERR(dir));
		return;
	}
	d_inode(dir)->i_private = dev;
	for (i = 0; i < ARRAY_SIZE(krt_dbg_dev_attrs); i++)
		debugfs_create_file(krt_dbg_dev_attrs[i].name, 0444, dir,
				    (void *)&krt_dbg_dev_attrs[i], &krt_dbg_fops);
	dev->dbg_dir = dir;
}

/**
 * krt_debugfs_dev_del() - remove a device's folder
 * @dev: the device
 *
 * Returns once no reader is inside one of its files any more.
 */
void krt_debugfs_dev_del(struct krt_device *dev)
{
	debugfs_remove_recursive(dev->dbg_dir);
	dev->dbg_dir = NULL;
}

/**
 * krt_debugfs_dev_rename() - follow a device rename
 * @dev: the device, already carrying its new name
 * @old: the previous name
 */
void krt_debugfs_dev_rename(struct krt_device *dev, const char *old)
{
	struct dentry *d;

	if (!dev->dbg_dir)
		return;
	d = debugfs_rename(krt_dbg_devices, dev->dbg_dir, krt_dbg_devices, dev->name);
	if (IS_ERR(d))
		pr_warn("%s: debugfs folder keeps the name %s\n", dev->name, old);
}

void krt_debugfs_init(void)
{
	krt_dbg_root = debugfs_create_dir("krt", NULL);
	if (IS_ERR(krt_dbg_root))
		return;
	debugfs_create_file("version", 0444, krt_dbg_root, NULL,
			    &krt_dbg_version_fops);
	debugfs_create_file("cm", 0444, krt_dbg_root, NULL, &krt_dbg_cm_fops);
	debugfs_create_file("dp", 0444, krt_dbg_root, NULL, &krt_dbg_dp_fops);
	debugfs_create_file("conns", 0444, krt_dbg_root, NULL, &krt_dbg_conns_fops);
	krt_dbg_devices = debugfs_create_dir("devices", krt_dbg_root);
	krt_dbg_peers = debugfs_create_dir("peers", krt_dbg_root);
	krt_fault_init(krt_dbg_root);
}

void krt_debugfs_exit(void)
{
	/*
	 * ORDER: after krt_pool_exit(): no peer is listed, the sync drops
	 * all.  Syncs are scheduled under krt_pool_lock: none after this.
	 */
	mutex_lock(&krt_pool_lock);
	WRITE_ONCE(krt_dbg_stopping, true);
	mutex_unlock(&krt_pool_lock);
	cancel_work_sync(&krt_dbg_sync_work);
	krt_dbg_sync();
	WARN_ON_ONCE(!list_empty(&krt_dbg_peer_list));
	debugfs_remove_recursive(krt_dbg_root);
	krt_dbg_root = NULL;
	krt_dbg_devices = NULL;
	krt_dbg_peers = NULL;
}
