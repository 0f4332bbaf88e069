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
#include <linux/socket.h>
#include <linux/workqueue.h>
#include <linux/seq_file.h>
#include <linux/dma-direction.h>
#include <net/netlink.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <uapi/linux/krt.h>
#include <krt/krt.h>

#define KRT_VERSION	"0.2.0"

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

/* Objects whose pointer is an rdma_cm_id's context start with this. */
enum krt_cm_ctx {
	KRT_CM_LISTENER = 1,
	KRT_CM_CONN,
};

/**
 * struct krt_listener - a local address krt accepts connections on
 * @ctx: KRT_CM_LISTENER
 * @entry: in krt_listeners; krt_pool_lock
 * @addr: address and port
 * @cm_id: listening id; krt_pool_lock (NULL once its device went away)
 */
struct krt_listener {
	enum krt_cm_ctx		ctx;
	struct list_head	entry;
	struct sockaddr_storage	addr;
	struct rdma_cm_id	*cm_id;
};

struct krt_peer;
struct krt_queue;

/**
 * struct krt_conn - one RC connection of a peer's pool
 * @ctx: KRT_CM_CONN
 * @ref: lifetime: the pool holds one reference
 * @entry: in the peer's @conns; krt_pool_lock
 * @peer: owning peer (holds a reference on it)
 * @index: position in the pool
 * @inbound: accepted from a listener rather than connected out
 * @state: enum krt_conn_state; krt_pool_lock
 * @dying: set under the cm handler lock: events are ignored from then on
 * @cm_id: the connection's id; krt_pool_lock; owned by the connection
 * @dev: device of the QP (reference), set when the route is known
 * @cq: completion queue; created and freed with the QP
 * @depth: work requests per direction
 * @qpn: local QP number
 * @laddr: local address; krt_pool_lock
 * @raddr: remote address; krt_pool_lock
 * @reason: last failure; krt_pool_lock
 * @release_work: tears the RDMA resources down outside cm handlers
 * @close_work: krt_conn_close() from a context that cannot wait
 * @work_entry: on a caller's private list while being started or closed
 * @q: data path (queue.c); created with the QP, freed with the connection
 * @dp_entry: in the peer's @dp_conns while it takes requests; peer->dp_lock
 */
struct krt_conn {
	enum krt_cm_ctx		ctx;
	struct kref		ref;
	struct list_head	entry;
	struct krt_peer		*peer;
	u32			index;
	bool			inbound;
	u32			state;
	bool			dying;
	struct rdma_cm_id	*cm_id;
	struct krt_device	*dev;
	struct ib_cq		*cq;
	u32			depth;
	u32			qpn;
	struct sockaddr_storage	laddr;
	struct sockaddr_storage	raddr;
	char			reason[64];
	struct work_struct	release_work;
	struct work_struct	close_work;
	struct list_head	work_entry;
	struct krt_queue	*q;
	struct list_head	dp_entry;
};

/**
 * struct krt_peer - a remote node and the pool of connections to it
 * @ref: lifetime; krt_peers holds one reference while listed
 * @entry: in krt_peers; krt_pool_lock
 * @name: unique name (inbound peers: "in-<node id>-<pool id>")
 * @addr: remote address and port (outbound peers)
 * @inbound: created by connections from the remote
 * @node_id: remote node id, 0 until known; krt_pool_lock
 * @pool_id: outbound: our id for the pool, sent in private data; inbound:
 *	the remote's; set before the peer is listed
 * @nr_conns: pool size; krt_pool_lock
 * @depth: queue depth for new connections; krt_pool_lock
 * @policy: enum krt_policy; krt_pool_lock
 * @state: enum krt_peer_state last announced; krt_pool_lock
 * @conns: the pool, by index; krt_pool_lock
 * @reason: last failure of one of its connections; krt_pool_lock
 * @reject: last reject reason received; krt_pool_lock
 * @dp_lock: protects @dp_conns and @dp_rr; taken in the submit path
 * @dp_conns: active outbound connections that take requests
 * @dp_rr: round-robin cursor
 */
struct krt_peer {
	struct kref		ref;
	struct list_head	entry;
	char			name[KRT_PEER_NAME_MAX];
	struct sockaddr_storage	addr;
	bool			inbound;
	u64			node_id;
	u16			pool_id;
	u32			nr_conns;
	u32			depth;
	u32			policy;
	u32			state;
	struct list_head	conns;
	char			reason[64];
	u32			reject;
	spinlock_t		dp_lock;	/* @dp_conns, @dp_rr */
	struct list_head	dp_conns;
	u32			dp_rr;
};

/* pool.c */
extern struct mutex krt_pool_lock;
extern struct list_head krt_peers;
extern struct list_head krt_listeners;
extern u64 krt_node_id;
extern unsigned int krt_port;

int krt_pool_init(void);
void krt_pool_exit(void);
void krt_pool_destroy_wq(void);
bool krt_pool_accept_from(const struct sockaddr_storage *src);
bool krt_pool_check_limit(struct krt_peer *peer);
void krt_pool_drop_empty_inbound(struct krt_peer *peer);
struct krt_peer *krt_pool_inbound_peer(u64 node_id, u16 pool_id, u32 nr_conns,
				       u32 depth);
void krt_pool_dev_remove(struct krt_device *dev);
int krt_listen_add(struct sockaddr_storage *addr, struct netlink_ext_ack *extack);
int krt_listen_del(struct sockaddr_storage *addr, struct netlink_ext_ack *extack);
int krt_peer_add(const char *name, struct sockaddr_storage *addr, u32 conns,
		 u32 depth, u32 policy, struct netlink_ext_ack *extack);
int krt_peer_del(const char *name, struct netlink_ext_ack *extack);
int krt_peer_set(const char *name, u32 conns, u32 depth, u32 policy,
		 struct netlink_ext_ack *extack);
struct krt_peer *krt_peer_find_locked(const char *name);
u32 krt_peer_conns_up(struct krt_peer *peer);
void krt_peer_update_state(struct krt_peer *peer);
void krt_conn_start(struct krt_conn *conn);
void krt_conn_fail(struct krt_conn *conn, const char *reason);
struct krt_conn *krt_conn_alloc(struct krt_peer *peer, u32 index, bool inbound);
void krt_conn_put(struct krt_conn *conn);
void krt_peer_put(struct krt_peer *peer);
int krt_conn_setup_qp(struct krt_conn *conn, struct rdma_cm_id *id);
void krt_conn_release(struct krt_conn *conn);
void krt_conn_close(struct krt_conn *conn);
void krt_conn_established(struct krt_conn *conn, struct rdma_cm_id *id);
void krt_conn_destroy_qp(struct krt_conn *conn, struct rdma_cm_id *id);
void krt_peer_dp_add(struct krt_conn *conn);
void krt_peer_dp_del(struct krt_conn *conn);

#define KRT_RESOLVE_TIMEOUT_MS	2000
#define KRT_MAX_DEPTH		4096

/* cm.c */
extern atomic_t krt_cm_rejects[KRT_REJ_NO_RESOURCES + 1];
extern atomic_t krt_cm_malformed;

int krt_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);
const char *krt_reject_name(u32 reason);

/* device.c */
extern struct mutex krt_dev_lock;
extern struct list_head krt_dev_list;
extern bool krt_autoenable;

int krt_device_init(void);
void krt_device_exit(void);
extern struct ib_client krt_ib_client;

struct krt_device *krt_dev_find_locked(const char *name);
struct krt_device *krt_dev_get_by_ibdev(struct ib_device *ibdev);
void krt_dev_put(struct krt_device *dev);
enum krt_dev_state krt_dev_state(const struct krt_device *dev);
int krt_dev_set_enabled(struct krt_device *dev, bool enabled);
const char *krt_dev_state_name(enum krt_dev_state state);

/* queue.c: the data path of one connection */
extern unsigned int krt_max_io;
extern unsigned int krt_req_timeout_ms;

/**
 * struct krt_qstats - counters of one connection's data path
 *
 * Updated under the queue's lock, read without it (debugfs).
 */
struct krt_qstats {
	u64	reqs_sent;
	u64	reqs_done;
	u64	reps_recv;
	u64	srv_reqs;
	u64	srv_reps;
	u64	deferred;
	u64	bytes_read;
	u64	bytes_written;
	u64	late_replies;
	u64	timeouts;
	u64	waits;
	u64	credit_waits;
	u64	sq_waits;
	u64	malformed;
	u64	wc_errors;
	u64	local_inv;
	u64	remote_inv;
};

/* Global data-path counters (all connections, past and present). */
struct krt_dp_stats {
	atomic64_t	malformed;
	atomic64_t	late_replies;
	atomic64_t	timeouts;
	atomic64_t	wc_errors;
	atomic64_t	rnr_errors;
	atomic64_t	backlog_full;
	atomic64_t	resets;
};

extern struct krt_dp_stats krt_dp_stats;

int krt_queue_create(struct krt_conn *conn, struct rdma_cm_id *id,
		     struct krt_device *dev, u32 max_inline);
void krt_queue_destroy(struct krt_conn *conn);
void krt_queue_free(struct krt_conn *conn);
void krt_queue_set_remote(struct krt_queue *q, u32 credits, u32 depth,
			  u32 max_io);
u32 krt_queue_max_io(struct krt_queue *q);
void krt_queue_start(struct krt_queue *q);
void krt_queue_stop(struct krt_queue *q);
int krt_queue_submit(struct krt_queue *q, struct krt_req *req);
u32 krt_queue_inflight(struct krt_queue *q);
void krt_queue_show(struct krt_queue *q, struct seq_file *m);
void krt_srv_req_release(struct krt_srv_req *sreq);

/* frwr.c: fast registration of page lists */
int krt_frwr_check(const struct bio_vec *bv, unsigned int nr, u32 *len,
		   u32 *pages);
struct scatterlist *krt_frwr_sg(const struct bio_vec *bv, unsigned int nr, gfp_t gfp);
int krt_frwr_map(struct ib_device *ibdev, struct scatterlist *sgl, unsigned int nr,
		 enum dma_data_direction dir);
void krt_frwr_unmap(struct ib_device *ibdev, struct scatterlist *sgl,
		    unsigned int nr, enum dma_data_direction dir);
int krt_frwr_reg(struct ib_mr *mr, struct scatterlist *sgl, int nents,
		 struct ib_reg_wr *reg, int access);
void krt_frwr_inv(struct ib_send_wr *wr, struct ib_mr *mr, struct ib_cqe *cqe);

/* api.c: peers and services as ULPs see them */
struct krt_service *krt_service_get(u16 id);
void krt_service_put(struct krt_service *svc);

/* testsvc.c: built-in test service, ping and xfer */
struct krt_test_args {
	char	peer[KRT_PEER_NAME_MAX];
	u32	op;
	u32	count;
	u32	size;
	u32	depth;
	u32	threads;
	u32	timeout_ms;
	bool	nowait;
};

struct krt_test_result {
	u64	ok;
	u64	errors;
	u64	mismatches;
	u64	double_done;
	u64	bytes;
	u64	elapsed_ns;
	u64	lat_min;
	u64	lat_avg;
	u64	lat_p99;
	u64	lat_max;
	s32	first_error;
	u64	eagain;
};

extern bool krt_test_service;
int krt_test_init(void);
void krt_test_exit(void);
int krt_test_run(const struct krt_test_args *args, struct krt_test_result *res,
		 struct netlink_ext_ack *extack);
void krt_test_hold(bool hold);
bool krt_test_holding(void);

/* debugfs.c */
extern bool krt_fault_mask_frwr;
extern u32 krt_fault_cm_req;
extern u32 krt_fault_corrupt_msg;
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
bool krt_fault_connect(void);
bool krt_fault_register(void);
#else
/* debugfs fault/connect and fault/register need fault injection */
static inline bool krt_fault_connect(void)
{
	return false;
}

static inline bool krt_fault_register(void)
{
	return false;
}
#endif

void krt_debugfs_init(void);
void krt_debugfs_exit(void);
void krt_debugfs_dev_add(struct krt_device *dev);
void krt_debugfs_dev_del(struct krt_device *dev);
void krt_debugfs_dev_rename(struct krt_device *dev, const char *old);

/* netlink.c */
int __init krt_netlink_init(void);
void krt_netlink_exit(void);
void krt_nl_dev_event(struct krt_device *dev, u8 cmd);
void krt_nl_peer_event(struct krt_peer *peer, u8 cmd);
void krt_nl_conn_event(struct krt_conn *conn);

extern struct workqueue_struct *krt_wq;

#endif /* _KRT_INTERNAL_H */
