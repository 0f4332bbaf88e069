/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krt: what the three parts of a connection's data path share - queue.c
 * (receive ring, validation, deadlines, setup and teardown), queue_clt.c
 * (request slots and replies: the client side) and queue_srv.c (server
 * requests, data transfers and replies: the server side).  Private to
 * them; the rest of krt uses the krt_queue_*() functions of krt.h.
 */
#ifndef KRT_QUEUE_H
#define KRT_QUEUE_H

#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>
#include "krt.h"
#include "wire.h"

#define KRT_WR_REQ	3	/* REG_MR, SEND, LOCAL_INV */
#define KRT_WR_DATA	3	/* REG_MR, RDMA READ/WRITE, LOCAL_INV; or 1-3 RDMA */
#define KRT_WR_REP	1	/* SEND (with invalidate) */

/* what a client request may need besides a slot: krt_q_req_needs() */
#define KRT_X_LARGE	BIT(0)	/* a large set */
#define KRT_X_MBUF	BIT(1)	/* a message buffer */
#define KRT_X_MR	BIT(2)	/* an MR of the QP's pool */
#define KRT_X_KINDS	3

#define KRT_TICK	(HZ / 10)
#define KRT_ESTABLISH_TIMEOUT	(10 * HZ)	/* accept to ESTABLISHED, server */
/**
 * struct krt_large - a scatterlist and an MR for a buffer over KRT_SG_OWN
 *	pages, one of a queue's few (krt_q_nr_large())
 * @entry: on q->large_free while free; q->lock
 * @sg: q->mr_pages entries
 * @mr: an MR of q->mr_pages pages, the queue's own (not from the pool)
 */
struct krt_large {
	struct list_head	entry;
	struct scatterlist	*sg;
	struct ib_mr		*mr;
};

/**
 * struct krt_mbuf - a client's send buffer of %KRT_MSG_BUF bytes, one of
 *	a queue's few (krt_q_nr_mbufs()), for a message over %KRT_SLOT_BUF
 * @entry: on q->mbuf_free while free; q->lock
 * @va: the buffer
 * @dma: its DMA address (DMA_TO_DEVICE)
 */
struct krt_mbuf {
	struct list_head	entry;
	void			*va;
	u64			dma;
};

enum krt_slot_state {
	KRT_SLOT_FREE,
	KRT_SLOT_BUSY,
	KRT_SLOT_ZOMBIE,	/* request timed out, reply not yet seen */
};

/* what a slot still waits for */
#define KRT_P_SEND	0x1
#define KRT_P_REPLY	0x2
#define KRT_P_INV	0x4
#define KRT_P_HELD	0x8	/* its reply is handled late (fault/delay_rx) */

struct krt_rbuf {
	struct ib_cqe		cqe;
	struct krt_queue	*q;
	void			*va;
	u64			dma;
	struct list_head	entry;		/* q->deferred or q->held; q->lock */
	u32			bytes;
	u64			t_recv;		/* local_clock() at arrival */
	unsigned long		due;		/* held: jiffies to handle it; q->lock */
	int			wc_flags;	/* held: of its completion */
	u32			inv_rkey;	/* held: the rkey it invalidated */
};

struct krt_slot {
	struct krt_queue	*q;
	struct list_head	entry;		/* free list; q->lock */
	struct krt_req		*req;
	struct scatterlist	*sg_own;	/* q->own_pages entries, preallocated */
	struct scatterlist	*sg;		/* @sg_own or @large's, while mapped */
	struct krt_large	*large;		/* taken for a large buffer; q->lock */
	struct krt_mbuf		*mbuf;		/* taken for a long message; q->lock */
	unsigned int		nr_sg;		/* entries mapped, 0 when not; q->lock */
	u16			idx;
	u16			gen;
	u8			state;
	u8			pending;
	bool			timed_out;
	bool			inv_left;	/* LOCAL_INV entry still reserved */
	bool			send_held;	/* SEND end held (fault/hold_sends); q->lock */
	struct ib_mr		*mr;
	struct ib_cqe		send_cqe;
	struct ib_cqe		inv_cqe;
	struct ib_cqe		reg_cqe;
	void			*va;		/* KRT_SLOT_BUF bytes */
	u64			dma;
};

enum krt_sreq_state {
	KRT_SREQ_FREE,
	KRT_SREQ_SERVICE,	/* with the service */
	KRT_SREQ_DATA_WAIT,	/* data transfer waits for SQ room */
	KRT_SREQ_DATA,		/* data transfer posted */
	KRT_SREQ_REPLY_WAIT,	/* reply waits for a credit or SQ room */
	KRT_SREQ_REPLY,		/* reply posted */
	KRT_SREQ_CHAIN_WAIT,	/* transfer and reply wait for room */
	KRT_SREQ_CHAIN,		/* transfer and reply posted together */
};

struct krt_sreq {
	struct krt_srv_req	pub;
	struct krt_queue	*q;
	struct krt_service	*svc;
	struct list_head	entry;		/* free or waiting list; q->lock */
	u8			state;
	bool			inv;
	bool			chain;		/* krt_srv_data_reply() */
	bool			inl;		/* the write's data came inline */
	bool			inl_taken;	/* krt_srv_data() copied it; q->lock */
	u32			idx;		/* in q->sreqs */
	u32			gen;		/* bumped per request; q->lock */
	u32			tag;
	u64			raddr;
	u32			rkey;
	s32			status;
	u32			rep_len;
	int			data_status;
	u64			t_recv;		/* local_clock() at receive */
	struct ib_mr		*mr;		/* registered by krt_srv_data() */
	struct ib_reg_wr	reg;		/* its REG_MR, posted with the data */
	struct ib_rdma_wr	*rwr;		/* KRT_WR_DATA WRs (no MR), q's */
	struct ib_sge		*sge;		/* KRT_WR_DATA * q->srv_sge, q's */
	struct scatterlist	*sg_own;	/* q->own_pages entries, preallocated */
	struct krt_large	*large;		/* taken for a large buffer; q->lock */
	struct scatterlist	*sgl;		/* @sg_own or @large's while mapped */
	unsigned long		wait_start;	/* jiffies it began to wait; q->lock */
	int			nents;
	unsigned int		nr_bvec;
	void			(*data_done)(struct krt_srv_req *sreq, int status);
	struct ib_cqe		data_cqe;
	struct ib_cqe		inv_cqe;
	struct ib_cqe		send_cqe;
	void			*msg;		/* copy of the request, in @va */
	void			*va;		/* reply buffer: header, message */
	u64			dma;
};

/**
 * struct krt_queue - data path of one connection
 * @conn: the connection (the queue lives as long as it)
 * @qp: the RC QP; valid until krt_queue_destroy()
 * @ibdev: its device
 * @lkey: the local DMA lkey of the connection's PD
 * @lock: protects everything below marked q->lock
 * @ready: requests may be submitted; q->lock
 * @dead: the connection failed or is closing; q->lock
 * @unmapped: buffers are unmapped, the QP gone (destroyed); q->lock
 * @server: inbound connection: receives requests, sends replies
 * @depth: receive buffers, slots and server requests
 * @nr_slots: slots usable, from the depth the remote granted
 * @credits: messages we may send; q->lock
 * @max_credits: receive buffers the remote posted
 * @grant: buffers re-posted, not yet advertised; q->lock
 * @sq_avail: free SQ entries; q->lock
 * @max_io: negotiated largest data buffer
 * @mr_pages: pages an MR maps
 * @own_pages: pages of a slot's or server request's own scatterlist and
 *	MR (KRT_SG_OWN, or @mr_pages if fewer)
 * @nr_mrs: MRs of the QP's pool: krt_q_clt_nr_mrs() of the depth granted
 *	(krt_queue_set_remote() trims it, under q->lock, before any request)
 *	or krt_q_srv_nr_mrs()
 * @nr_large: large sets (struct krt_large) for buffers over @own_pages
 * @large: @nr_large of them
 * @large_free: those free; q->lock
 * @large_sgs: their scatterlists, @mr_pages entries each
 * @nr_mbufs: client: send buffers for long messages
 * @mbufs: @nr_mbufs of them
 * @mbuf_free: those free; q->lock
 * @clt_sge: client: entries a SEND may name (header, inline write data)
 * @max_inline: inline data the QP takes
 * @send_inv: the device does SEND_WITH_INV and remote invalidation
 * @inline_data: bytes of message and write data a request may carry
 *	(%KRT_MF_INLINE): the server's offer; set before the queue starts
 * @zombies: slots of timed-out requests; q->lock
 * @waiting: requests waiting for room; q->lock
 * @nr_waiting: their number; q->lock
 * @nr_wait_extra: of them those needing a large set, a message buffer or
 *	an MR (&krt_req.krt_extra: krt_q_req_needs() at submit); q->lock
 * @nr_wait_x: of them those needing each KRT_X_* kind; q->lock
 * @wait_room: a waiting request may be waiting for credits or SQ room,
 *	not only for a kind it misses: new ones queue behind it; q->lock
 * @free_slots: q->lock
 * @sfree: free server requests; q->lock
 * @swait: server requests waiting for room; q->lock
 * @deferred: received requests waiting for a free server request; q->lock
 * @deferred_large: received requests with a large buffer waiting for a
 *	large set and a server request; q->lock
 * @inflight: requests submitted and not completed
 * @slots: @depth request slots (client)
 * @sreqs: @depth server requests (server)
 * @rbufs: @depth receive buffers
 * @timer: deadline checks
 * @reset_work: resets the connection from contexts that cannot
 * @free_work: frees its memory (krt_queue_free())
 * @reset_reason: why; q->lock
 * @stats: counters; q->lock
 * @hb_slot: the client's heartbeat slot (not on @free_slots), or NULL
 * @hb_req: the heartbeat request
 * @hb_busy: a heartbeat is in flight; q->lock
 * @last_rx: jiffies of the last message received (read by the timer)
 * @last_tx: client: jiffies of the last request or heartbeat posted;
 *	q->lock
 * @hb_ms: heartbeat interval (client) or the client's (server)
 * @hb_misses: intervals without a message before a reset
 * @mrs_used: MRs in use, the pool's and the large sets'; q->lock
 * @pool_used: of them the pool's (at most @nr_mrs); q->lock
 * @srv_sge: server: entries per RDMA WRITE (the QP's max_write_sge)
 * @srv_sge_rd: server: entries per RDMA READ without an MR (0: always MR)
 * @max_sgl_rd: server: READs of more entries use an MR (0: no limit)
 * @iwarp: server: the sink of an RDMA READ must be registered, remote write
 * @sgs: @depth x @own_pages scatterlist entries, @own_pages per slot or
 *	server request
 * @srv_wrs: server: KRT_WR_DATA RDMA WRs per server request
 * @srv_sges: server: KRT_WR_DATA * @srv_sge entries per server request
 * @held: received messages handled late (fault/delay_rx), in arrival
 *	order; q->lock
 * @held_timer: handles @held's messages when due
 * @srv_id: server: id in krt_srv_queues (&struct krt_srv_ref), 0 if none
 * @gone: server: its memory is going; refs find nothing; q->lock
 * @rcu: the queue itself is freed after a grace period (ref lookups)
 */
struct krt_queue {
	struct krt_conn		*conn;
	struct ib_qp		*qp;
	struct ib_device	*ibdev;
	u32			lkey;
	spinlock_t		lock;		/* see the DOC above */
	bool			ready;
	bool			dead;
	bool			unmapped;
	bool			server;
	u32			depth;
	u32			nr_slots;
	u32			credits;
	unsigned long		nocredit_since;	/* jiffies credits fell to 0; server; q->lock */
	u32			max_credits;
	u32			grant;
	u32			sq_avail;
	u32			max_io;
	u32			mr_pages;
	u32			own_pages;
	u32			nr_mrs;
	u32			nr_large;
	struct krt_large	*large;
	struct list_head	large_free;
	struct scatterlist	*large_sgs;
	u32			nr_mbufs;
	struct krt_mbuf		*mbufs;
	struct list_head	mbuf_free;
	u32			clt_sge;
	u32			max_inline;
	bool			send_inv;
	u32			inline_data;
	u32			zombies;
	struct list_head	waiting;
	u32			nr_waiting;
	u32			nr_wait_extra;
	u32			nr_wait_x[KRT_X_KINDS];
	bool			wait_room;
	struct list_head	free_slots;
	struct list_head	sfree;
	struct list_head	swait;
	struct list_head	deferred;
	struct list_head	deferred_large;
	atomic_t		inflight;
	struct krt_slot		*slots;
	struct krt_sreq		*sreqs;
	struct krt_rbuf		*rbufs;
	struct timer_list	timer;
	struct work_struct	reset_work;
	struct work_struct	free_work;
	const char		*reset_reason;
	struct krt_qstats	stats;
	struct krt_slot		*hb_slot;
	struct krt_req		hb_req;
	bool			hb_busy;
	unsigned long		last_rx;
	unsigned long		last_tx;
	u32			hb_ms;
	u32			hb_misses;
	u32			mrs_used;
	u32			pool_used;
	u32			srv_sge;
	u32			srv_sge_rd;
	u32			max_sgl_rd;
	bool			iwarp;
	struct scatterlist	*sgs;
	struct ib_rdma_wr	*srv_wrs;
	struct ib_sge		*srv_sges;
	struct list_head	held;
	struct timer_list	held_timer;
	u32			srv_id;
	bool			gone;
	struct rcu_head		rcu;
};

/* queue.c: shared */
void krt_q_reset_locked(struct krt_queue *q, const char *why);
void krt_q_reset(struct krt_queue *q, const char *why);
void krt_q_malformed(struct krt_queue *q, const char *why);
bool krt_q_wc_failed(struct krt_queue *q, struct ib_wc *wc, const char *what);
void krt_q_fill_hdr(struct krt_queue *q, void *buf, u8 opcode,
		    u16 flags, u32 len, u16 service, u32 tag, s32 status,
		    u64 req_id);
void krt_send_wr(struct ib_send_wr *wr, struct ib_sge *sge, struct ib_cqe *cqe,
		 void *va, u64 dma, u32 len, u32 lkey, bool inline_ok);
int krt_q_post_send(struct krt_queue *q, const struct ib_send_wr *first);
struct ib_mr *krt_q_mr_get(struct krt_queue *q);
void krt_q_mr_put(struct krt_queue *q, struct ib_mr *mr);
struct krt_large *krt_q_large_get(struct krt_queue *q);
void krt_q_large_put(struct krt_queue *q, struct krt_large *l);

/* A buffer of @pages pages needs a large set (struct krt_large). */
static inline bool krt_q_needs_large(const struct krt_queue *q, u32 pages)
{
	return pages > q->own_pages;
}

/* A buffer of @len bytes at any offset in its first page needs a large set. */
static inline bool krt_q_len_needs_large(const struct krt_queue *q, u32 len)
{
	return krt_q_needs_large(q, DIV_ROUND_UP(len, PAGE_SIZE) + 1);
}

/*
 * A client request needs a large set: by its pages, or by its length at
 * any offset, as the server counts it (the server takes a set for it).
 */
static inline bool krt_q_req_large(const struct krt_queue *q, const struct krt_req *req)
{
	return req->dir != KRT_DATA_NONE &&
	       (krt_q_needs_large(q, req->nr_bvec) || krt_q_len_needs_large(q, req->data_len));
}

/* A client request's header and message do not fit its slot's buffer. */
static inline bool krt_q_req_long(const struct krt_req *req)
{
	return sizeof(struct krt_msg_hdr) + req->msg_len > KRT_SLOT_BUF;
}

/*
 * An inline write's data is copied behind its message where the send
 * buffer holds both: a slot's own buffer, or a message buffer (taken for
 * a long message: it holds any inline write), and then sent inline where
 * the QP takes it; larger data goes by its pages.
 */
static inline bool krt_q_inline_copy(const struct krt_req *req)
{
	return krt_q_req_long(req) ||
	       sizeof(struct krt_msg_hdr) + req->msg_len + req->data_len <= KRT_SLOT_BUF;
}

/*
 * A client write small enough to go with its data in the request
 * (%KRT_MF_INLINE): within what the server offered and the local
 * ``inline_data``, and either copied into its send buffer
 * (krt_q_inline_copy()) or in few enough segments for the SEND to name
 * each beside the header.  q->lock held.
 */
static inline bool krt_q_req_inline(const struct krt_queue *q, const struct krt_req *req)
{
	return req->dir == KRT_DATA_WRITE &&
	       req->msg_len + req->data_len <= min(q->inline_data, krt_q_inline_offer()) &&
	       (req->nr_bvec < q->clt_sge || krt_q_inline_copy(req));
}

/*
 * What a client request needs besides a slot (KRT_X_*): a large set for
 * a buffer over a slot's own pages, a message buffer for a long message,
 * an MR of the QP's pool for other data not sent inline
 * (&krt_req.krt_inline, decided once when it was submitted).  q->lock
 * held.
 */
static inline u8 krt_q_req_needs(const struct krt_queue *q, const struct krt_req *req)
{
	bool large = krt_q_req_large(q, req);

	return (large ? KRT_X_LARGE : 0) | (krt_q_req_long(req) ? KRT_X_MBUF : 0) |
	       (req->dir != KRT_DATA_NONE && !large && !req->krt_inline ? KRT_X_MR : 0);
}

/* The KRT_X_* kinds of which none is free now.  q->lock held. */
static inline u8 krt_q_missing(const struct krt_queue *q)
{
	return (list_empty(&q->large_free) ? KRT_X_LARGE : 0) |
	       (list_empty(&q->mbuf_free) ? KRT_X_MBUF : 0) |
	       (q->pool_used >= q->nr_mrs ? KRT_X_MR : 0);
}

/* The KRT_X_* kinds of which @nr[] counts some.  q->lock held. */
static inline u8 krt_q_kinds(const u32 *nr)
{
	u8 x = 0;
	int b;

	for (b = 0; b < KRT_X_KINDS; b++)
		if (nr[b])
			x |= BIT(b);
	return x;
}

/* @req joins (@add) or leaves q->waiting: its counts.  q->lock held. */
static inline void krt_q_wait_count(struct krt_queue *q, const struct krt_req *req, bool add)
{
	int b;

	if (add)
		q->nr_waiting++;
	else
		q->nr_waiting--;
	if (!req->krt_extra)
		return;
	if (add)
		q->nr_wait_extra++;
	else
		q->nr_wait_extra--;
	for (b = 0; b < KRT_X_KINDS; b++) {
		if (!(req->krt_extra & BIT(b)))
			continue;
		if (add)
			q->nr_wait_x[b]++;
		else
			q->nr_wait_x[b]--;
	}
}

void krt_q_bvec_copy(void *buf, const struct bio_vec *bvec, unsigned int nr,
		     u32 len, bool to_pages);
int krt_q_post_recv(struct krt_queue *q, struct krt_rbuf *rb);
void krt_q_kick_locked(struct krt_queue *q, struct list_head *done);

/* queue_clt.c: the client side */
void krt_slot_free_locked(struct krt_queue *q, struct krt_slot *s);
void krt_slot_unmap_locked(struct krt_queue *q, struct krt_slot *s);
void krt_slot_mr_put_locked(struct krt_queue *q, struct krt_slot *s);
void krt_q_complete(struct krt_queue *q, struct list_head *done);
void krt_slot_reg_done(struct ib_cq *cq, struct ib_wc *wc);
void krt_slot_send_done(struct ib_cq *cq, struct ib_wc *wc);
void krt_slot_send_end_locked(struct krt_queue *q, struct krt_slot *s,
			      struct list_head *done);
bool krt_slot_zombie_locked(struct krt_queue *q, struct krt_slot *s,
			    struct list_head *done);
void krt_slot_inv_done(struct ib_cq *cq, struct ib_wc *wc);
int krt_q_post_req_locked(struct krt_queue *q, struct krt_req *req);
void krt_q_recv_rep(struct krt_queue *q, struct krt_rbuf *rb,
		    const struct krt_msg_hdr *h, u32 bytes, struct ib_wc *wc);
void krt_q_hand_back(struct krt_queue *q, struct list_head *done);
void krt_q_kick_clt_locked(struct krt_queue *q, struct list_head *done);

/* queue_srv.c: the server side */
enum dma_data_direction krt_sreq_dma_dir(enum krt_data_dir dir);
void krt_sreq_send_done(struct ib_cq *cq, struct ib_wc *wc);
void krt_sreq_data_err(struct ib_cq *cq, struct ib_wc *wc);
void krt_sreq_data_done(struct ib_cq *cq, struct ib_wc *wc);
void krt_q_recv_req(struct krt_queue *q, struct krt_rbuf *rb,
		    const struct krt_msg_hdr *h, u32 bytes);
bool krt_q_kick_srv_locked(struct krt_queue *q);
u32 krt_q_srv_nr_mrs(const struct krt_queue *q);
void krt_sreq_release(struct krt_sreq *r);
void krt_sreq_xfer_abort(struct krt_sreq *r);
int krt_q_srv_publish(struct krt_queue *q);
void krt_q_srv_unpublish(struct krt_queue *q);

#endif /* KRT_QUEUE_H */
