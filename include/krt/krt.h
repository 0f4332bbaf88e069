/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krt: in-kernel RDMA transport - the API a storage ULP calls.
 *
 * DOC: Using krt from a kernel module
 *
 * A client looks a peer up by the name an administrator gave it
 * (``krtctl peer add``), fills a &struct krt_req and submits it; the
 * request travels over one connection of the peer's pool and its @done
 * callback runs exactly once, with @status 0 when the service answered or
 * a negative errno when the transport could not get an answer.
 *
 * A server registers a &struct krt_service; its @request callback gets
 * every request for the service's id, moves data with krt_srv_data() if
 * the request carries a buffer, and answers with krt_srv_reply().  Every
 * &struct krt_srv_req must be answered exactly once, even after its
 * connection went away (the answer is then dropped).
 *
 * Requests flow from the node that configured the pool (the client) to
 * the node that accepted it (the server); a node that is both configures a
 * pool each way.
 */
#ifndef _KRT_KRT_H
#define _KRT_KRT_H

#include <linux/bvec.h>
#include <linux/list.h>
#include <linux/types.h>

struct krt_peer;
struct krt_conn;

/* Largest request or reply message (inline payload), in bytes. */
#define KRT_MAX_MSG		4048

/* Service ids 1..15 exist; 1 is krt's own test service. */
#define KRT_MAX_SERVICES	16
#define KRT_SERVICE_TEST	1

/**
 * enum krt_data_dir - what a request's buffer is for
 * @KRT_DATA_NONE: no buffer
 * @KRT_DATA_READ: the client reads: the server RDMA-WRITEs into the pages
 * @KRT_DATA_WRITE: the client writes: the server RDMA-READs from the pages,
 *	or a small write's data goes in the request (``inline_data``)
 */
enum krt_data_dir {
	KRT_DATA_NONE,
	KRT_DATA_READ,
	KRT_DATA_WRITE,
};

/* &struct krt_req flags */
#define KRT_REQ_NOWAIT		0x1	/* -EAGAIN instead of waiting for room */
#define KRT_REQ_NORETRY		0x2	/* fail with -ECONNRESET, never re-send */

/**
 * struct krt_req - one request of a client, owned by the caller
 * @service: id of the service on the server
 * @flags: KRT_REQ_*
 * @timeout_ms: deadline from submission; 0 for the module's req_timeout_ms
 * @msg: request message, copied at submission
 * @msg_len: its length, at most %KRT_MAX_MSG
 * @rsp: buffer for the reply message, or NULL
 * @rsp_max: size of @rsp
 * @dir: enum krt_data_dir
 * @bvec: the data buffer, any pages; only the first segment may start and
 *	only the last may end inside a page.  krt only reads the array, so
 *	requests in flight may share one array and its pages (as a load
 *	generator that never looks at the data does)
 * @nr_bvec: segments in @bvec
 * @data_len: bytes in @bvec, at most the connection's max IO size
 * @done: called once when the request completes, in softirq context or
 *	from a workqueue; must not sleep; may submit (this request again, or
 *	another): krt holds none of its locks while it calls @done
 * @priv: the caller's
 * @status: 0 if the service answered (see @rsp_status), else -ETIMEDOUT
 *	(deadline passed), -ENOTCONN (no connection came up within the
 *	peer's loss_timeout), -ECONNRESET (%KRT_REQ_NORETRY and its
 *	connection failed, or re-sent too often), -ESHUTDOWN (peer deleted or
 *	module unloading), -EIO
 * @id: set by krt_submit(): the request's id, the same on every re-send;
 *	a service sees it as &krt_srv_req.req_id
 * @rsp_status: the service's status from the reply (0 or -errno)
 * @rsp_len: reply message length; more than @rsp_max means truncated
 * @krt_entry: private to krt
 * @krt_conn: private to krt
 * @krt_sgl: private to krt
 * @krt_nents: private to krt
 * @krt_deadline: private to krt
 * @krt_start: private to krt
 * @krt_peer: private to krt
 * @krt_sends: private to krt
 * @krt_from: private to krt
 * @krt_inline: private to krt
 * @krt_extra: private to krt
 */
struct krt_req {
	u16			service;
	u16			flags;
	u32			timeout_ms;
	const void		*msg;
	u32			msg_len;
	void			*rsp;
	u32			rsp_max;
	enum krt_data_dir	dir;
	struct bio_vec		*bvec;
	unsigned int		nr_bvec;
	u32			data_len;
	void			(*done)(struct krt_req *req);
	void			*priv;

	int			status;
	int			rsp_status;
	u32			rsp_len;
	u64			id;

	struct list_head	krt_entry;
	struct krt_conn		*krt_conn;
	struct scatterlist	*krt_sgl;
	int			krt_nents;
	unsigned long		krt_deadline;
	u64			krt_start;
	struct krt_peer		*krt_peer;
	u32			krt_sends;
	u32			krt_from;
	bool			krt_inline;
	u8			krt_extra;
};

/**
 * struct krt_srv_req - one request as a service sees it
 * @service: the service id
 * @node_id: the node id the client claimed when it connected: it tells
 *	connections of one client apart, it does not authenticate it (any
 *	host that reaches a listener may claim any id; krt only refuses a
 *	second address for the id, pool and index of a live connection)
 * @req_id: the client's id of the request, the same on every re-send
 * @resent: the client sent this request before, on a connection that
 *	failed: its first reply may have been lost, or the first copy may
 *	never have arrived.  A service that must not execute a request twice
 *	remembers (node_id, req_id) of what it executed.
 * @msg: request message; valid until the reply
 * @msg_len: its length
 * @dir: enum krt_data_dir, from the client's point of view
 * @data_len: bytes of the client's buffer
 * @priv: the service's
 */
struct krt_srv_req {
	u16			service;
	u64			node_id;
	u64			req_id;
	bool			resent;
	const void		*msg;
	u32			msg_len;
	enum krt_data_dir	dir;
	u32			data_len;
	void			*priv;
};

/**
 * struct krt_srv_ref - a server request named by value
 * @krt_queue: private to krt: the connection's queue id
 * @krt_index: private to krt: the server request's index
 * @krt_gen: private to krt: which of its requests
 *
 * Valid for any length of time: once its request was answered, its
 * server request reused or its connection gone, krt_srv_reply_ref()
 * refuses it with -ESTALE.  Never zero for a request krt gave a service.
 */
struct krt_srv_ref {
	u32			krt_queue;
	u32			krt_index;
	u32			krt_gen;
};

/**
 * struct krt_service - a service that answers requests
 * @id: 1..%KRT_MAX_SERVICES - 1
 * @name: for messages
 * @request: called for each request, in softirq context (on a workqueue
 *	for connections accepted while the module parameter ``srv_poll_wq``
 *	is set): must not sleep; may answer at once or later from any
 *	context but hardirq or with interrupts disabled
 * @priv: the service's
 * @krt_active: private to krt
 */
struct krt_service {
	u16			id;
	const char		*name;
	void			(*request)(struct krt_service *svc,
					   struct krt_srv_req *sreq);
	void			*priv;
	atomic_t		krt_active;
};

struct krt_peer *krt_peer_get(const char *name);
void krt_peer_put(struct krt_peer *peer);
u32 krt_peer_max_io(struct krt_peer *peer);
int krt_submit(struct krt_peer *peer, struct krt_req *req);

int krt_service_register(struct krt_service *svc);
void krt_service_unregister(struct krt_service *svc);
int krt_srv_data(struct krt_srv_req *sreq, struct bio_vec *bvec,
		 unsigned int nr_bvec,
		 void (*done)(struct krt_srv_req *sreq, int status));
void krt_srv_reply(struct krt_srv_req *sreq, int status, const void *msg,
		   u32 len);
int krt_srv_data_reply(struct krt_srv_req *sreq, struct bio_vec *bvec,
		       unsigned int nr_bvec, int status, const void *msg, u32 len,
		       void (*done)(struct krt_srv_req *sreq, int status));
struct krt_srv_ref krt_srv_req_ref(const struct krt_srv_req *sreq);
int krt_srv_reply_ref(const struct krt_srv_ref *ref, int status,
		      const void *msg, u32 len);

#endif /* _KRT_KRT_H */
