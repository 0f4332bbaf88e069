// SPDX-License-Identifier: GPL-2.0
/*
 * krt: the data path of one connection - receive ring, send slots,
 * credits, request tags, deadlines, message validation.
 *
 * DOC: Queues
 *
 * Each connection has ``depth`` receive buffers of %KRT_MSG_BUF bytes
 * posted before it connects, and:
 *
 * - on the client (outbound) side, ``depth`` request slots: a slot holds
 *   one request from its SEND until its reply has arrived, its SEND has
 *   completed and its MR is invalid.  A slot's tag is its index plus a
 *   generation that changes on every use, so a stale reply is recognised.
 * - on the server (inbound) side, ``depth`` server requests: a request is
 *   copied out of its receive buffer (which is posted again at once) and
 *   lives until the SEND of its reply completes.  The client may reuse its
 *   slot before that completion is polled here, so a request can find
 *   every server request taken: it then stays in its receive buffer, not
 *   re-posted (its credit stays taken), until one is released.
 *
 * Credits: a side may send a message only while it holds a credit, one
 * per receive buffer the other side has posted for it.  Every message
 * carries the credits its sender has granted since its last message (the
 * buffers it re-posted).  Requests and replies pair up, and a server
 * re-posts a buffer before it answers, so each reply returns the credit of
 * its request and no credit-only message is ever needed.  A peer that
 * grants more than it could have posted is malformed.
 *
 * Send queue: a request reserves 3 SQ entries (REG_MR, SEND, LOCAL_INV), a
 * server data transfer 3, a reply 1; the SQ is sized 3 * depth + 1 (the +1
 * for the drain) and the accounting makes an overflow impossible.
 * Signalling: REG_MR and RDMA READ/WRITE are unsignalled; the SEND or
 * LOCAL_INV that ends a chain is signalled and returns the chain's
 * entries.  Every WR has a wr_cqe, so a flushed or failed unsignalled WR
 * is handled too.
 *
 * Server data transfers: the server's buffer is local memory, so, as the
 * RDMA core's R/W API does on InfiniBand and RoCE, krt names it by DMA
 * address and the PD's local DMA lkey in the RDMA READ/WRITE itself: up
 * to 3 WRs of up to ``max_send_sge`` (16 at most) entries each, the last
 * one signalled, and no registration.  A buffer that needs more WRs, a
 * READ on iWARP (whose sink must be registered for remote write) and a
 * READ over the device's efficient READ sge count (``max_sgl_rd``) use an
 * MR of the connection's pool instead: REG_MR, the transfer and a fenced
 * LOCAL_INV.  krt does not call rdma_rw_ctx_init() itself because it
 * allocates with GFP_KERNEL for more than one entry, and krt_srv_data()
 * may be called in atomic context; what it builds is the same.
 *
 * Counters: every ib_post_send() is a doorbell and counts the WRs it
 * posts (``doorbells`` and ``wrs`` in debugfs), so that WRs and doorbells
 * per request can be read off a benchmark run.
 *
 * Backpressure: a request that finds no free slot, no credit or no SQ room
 * waits on the connection's list (``backlog`` at most, -EBUSY beyond), or
 * fails at once with -EAGAIN when submitted with %KRT_REQ_NOWAIT.
 *
 * Failover: when the connection fails, requests not completed are handed
 * back to the peer (krt_peer_resend()) once the QP is drained and the MRs
 * destroyed, and are re-sent with the same id on another connection.
 *
 * Heartbeats: the last slot of a client queue is the heartbeat's, so a
 * heartbeat can always be sent, however busy the other slots are.  When
 * nothing was received for ``hb_ms`` the client sends one (service 0,
 * answered by the server's krt at once); when nothing was received for
 * ``hb_ms`` x ``hb_misses`` the connection is reset.  The server resets a
 * connection on which nothing arrived for twice the client's detection
 * time, and one whose replies waited that long for a credit (a client
 * that stopped re-posting receives).
 *
 * Deadlines: a timer checks the connection every 100 ms.  A request
 * without data past its deadline completes with -ETIMEDOUT and its slot
 * stays reserved until the late reply comes (discarded and counted) or the
 * connection goes.  A request with data cannot be given back while the
 * server may still access its pages: the connection is reset, as
 * nvme-rdma does, and the request completes with -ETIMEDOUT once the QP is
 * drained and its MRs are deregistered.
 *
 * Validation: every received message is checked (magic, version, length
 * against the bytes received, opcode for this side, flags, data length
 * against the max IO size, tag, credits) before anything else; a
 * malformed one is counted, its buffer is not re-posted, and the
 * connection is reset.
 *
 * Locking: q->lock (a spinlock, taken with bottom halves off) protects
 * the slots, server requests, credits, SQ accounting, the waiting lists
 * and the counters.  Completion handlers run in softirq context, one at a
 * time per connection (one CQ); callbacks of users are called without
 * the lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <rdma/mr_pool.h>
#include "krt.h"
#include "wire.h"
#include "trace.h"

unsigned int krt_max_io = SZ_1M;
module_param_named(max_io, krt_max_io, uint, 0444);
MODULE_PARM_DESC(max_io, "Largest data buffer of a request, in bytes (default: 1 MiB)");

unsigned int krt_req_timeout_ms = 30000;

/* req_timeout_ms: 1 ms .. 1 day; 0 would fail every request at once */
static int krt_param_set_timeout(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret = kstrtouint(val, 0, &v);

	if (ret)
		return ret;
	if (!v || v > 86400000)
		return -EINVAL;
	*(unsigned int *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops krt_timeout_ops = {
	.set	= krt_param_set_timeout,
	.get	= param_get_uint,
};

module_param_cb(req_timeout_ms, &krt_timeout_ops, &krt_req_timeout_ms, 0644);
MODULE_PARM_DESC(req_timeout_ms, "Default request deadline in ms, 1..86400000 (default: 30000)");

static unsigned int krt_backlog = 4096;
module_param_named(backlog, krt_backlog, uint, 0644);
MODULE_PARM_DESC(backlog, "Requests that may wait per connection (default: 4096)");

static bool krt_remote_inv = true;
module_param_named(remote_invalidate, krt_remote_inv, bool, 0644);
MODULE_PARM_DESC(remote_invalidate, "Ask servers for SEND_WITH_INV where the device has it (default: on)");

struct krt_dp_stats krt_dp_stats;

#define KRT_WR_REQ	3	/* REG_MR, SEND, LOCAL_INV */
#define KRT_WR_DATA	3	/* REG_MR, RDMA READ/WRITE, LOCAL_INV; or 1-3 RDMA */
#define KRT_WR_REP	1	/* SEND (with invalidate) */
#define KRT_TICK	(HZ / 10)
#define KRT_ESTABLISH_TIMEOUT	(10 * HZ)	/* accept to ESTABLISHED, server */

unsigned int krt_rnr_retry;
module_param_named(rnr_retry, krt_rnr_retry, uint, 0644);
MODULE_PARM_DESC(rnr_retry, "RNR retries of connections (0..7, 7 = forever); with credits an RNR is a bug, so 0 makes it visible (default: 0)");

/* Check every inline SEND's address (on in debug builds). */
static bool krt_srv_direct = true;
module_param_named(srv_direct, krt_srv_direct, bool, 0644);
MODULE_PARM_DESC(srv_direct, "Server transfers of up to 3 WRs without an MR (default: Y; N: REG_MR and LOCAL_INV for each)");

static bool krt_check_inline = IS_ENABLED(CONFIG_DEBUG_VIRTUAL);
module_param_named(check_inline, krt_check_inline, bool, 0644);
MODULE_PARM_DESC(check_inline, "Check that inline SENDs carry a kernel virtual address of a krt buffer (default: on with CONFIG_DEBUG_VIRTUAL)");

enum krt_slot_state {
	KRT_SLOT_FREE,
	KRT_SLOT_BUSY,
	KRT_SLOT_ZOMBIE,	/* request timed out, reply not yet seen */
};

/* what a slot still waits for */
#define KRT_P_SEND	0x1
#define KRT_P_REPLY	0x2
#define KRT_P_INV	0x4

struct krt_rbuf {
	struct ib_cqe		cqe;
	struct krt_queue	*q;
	void			*va;
	u64			dma;
	struct list_head	entry;		/* q->deferred; q->lock */
	u32			bytes;
	u64			t_recv;		/* local_clock() at arrival */
};

struct krt_slot {
	struct krt_queue	*q;
	struct list_head	entry;		/* free list; q->lock */
	struct krt_req		*req;
	struct scatterlist	*sg;		/* mr_pages entries, preallocated */
	unsigned int		nr_sg;		/* entries mapped, 0 when not; q->lock */
	u16			idx;
	u16			gen;
	u8			state;
	u8			pending;
	bool			timed_out;
	bool			inv_left;	/* LOCAL_INV entry still reserved */
	struct ib_mr		*mr;
	struct ib_cqe		send_cqe;
	struct ib_cqe		inv_cqe;
	struct ib_cqe		reg_cqe;
	void			*va;
	u64			dma;
};

enum krt_sreq_state {
	KRT_SREQ_FREE,
	KRT_SREQ_SERVICE,	/* with the service */
	KRT_SREQ_DATA_WAIT,	/* data transfer waits for SQ room */
	KRT_SREQ_DATA,		/* data transfer posted */
	KRT_SREQ_REPLY_WAIT,	/* reply waits for a credit or SQ room */
	KRT_SREQ_REPLY,		/* reply posted */
};

struct krt_sreq {
	struct krt_srv_req	pub;
	struct krt_queue	*q;
	struct krt_service	*svc;
	struct list_head	entry;		/* free or waiting list; q->lock */
	u8			state;
	bool			inv;
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
	struct scatterlist	*sg;		/* mr_pages entries, preallocated */
	struct scatterlist	*sgl;		/* @sg while mapped, else NULL */
	unsigned long		wait_start;	/* jiffies it began to wait; q->lock */
	int			nents;
	unsigned int		nr_bvec;
	void			(*data_done)(struct krt_srv_req *sreq, int status);
	struct ib_cqe		data_cqe;
	struct ib_cqe		inv_cqe;
	struct ib_cqe		send_cqe;
	void			*msg;		/* copy of the request */
	void			*va;		/* reply buffer */
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
 * @max_inline: inline data the QP takes
 * @send_inv: the device does SEND_WITH_INV and remote invalidation
 * @zombies: slots of timed-out requests; q->lock
 * @waiting: requests waiting for room; q->lock
 * @nr_waiting: their number; q->lock
 * @free_slots: q->lock
 * @sfree: free server requests; q->lock
 * @swait: server requests waiting for room; q->lock
 * @deferred: received requests waiting for a free server request; q->lock
 * @inflight: requests submitted and not completed
 * @slots: @depth request slots (client)
 * @sreqs: @depth server requests (server)
 * @rbufs: @depth receive buffers
 * @timer: deadline checks
 * @reset_work: resets the connection from contexts that cannot
 * @reset_reason: why; q->lock
 * @stats: counters; q->lock
 * @hb_slot: the client's heartbeat slot (not on @free_slots), or NULL
 * @hb_req: the heartbeat request
 * @hb_busy: a heartbeat is in flight; q->lock
 * @last_rx: jiffies of the last message received (read by the timer)
 * @hb_ms: heartbeat interval (client) or the client's (server)
 * @hb_misses: intervals without a message before a reset
 * @in_timer: the timer runs the data path (no completion there); q->lock
 * @mrs_used: MRs taken from the QP's pool; q->lock
 * @srv_sge: server: entries per RDMA WRITE (the QP's max_write_sge)
 * @srv_sge_rd: server: entries per RDMA READ without an MR (0: always MR)
 * @srv_wrs: server: KRT_WR_DATA RDMA WRs per server request
 * @srv_sges: server: KRT_WR_DATA * @srv_sge entries per server request
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
	u32			max_credits;
	u32			grant;
	u32			sq_avail;
	u32			max_io;
	u32			mr_pages;
	u32			max_inline;
	bool			send_inv;
	u32			zombies;
	struct list_head	waiting;
	u32			nr_waiting;
	struct list_head	free_slots;
	struct list_head	sfree;
	struct list_head	swait;
	struct list_head	deferred;
	atomic_t		inflight;
	struct krt_slot		*slots;
	struct krt_sreq		*sreqs;
	struct krt_rbuf		*rbufs;
	struct timer_list	timer;
	struct work_struct	reset_work;
	const char		*reset_reason;
	struct krt_qstats	stats;
	struct krt_slot		*hb_slot;
	struct krt_req		hb_req;
	bool			hb_busy;
	unsigned long		last_rx;
	u32			hb_ms;
	u32			hb_misses;
	u32			mrs_used;
	u32			srv_sge;
	u32			srv_sge_rd;
	struct ib_rdma_wr	*srv_wrs;
	struct ib_sge		*srv_sges;
};

static void krt_q_kick_locked(struct krt_queue *q, struct list_head *done);

/*
 * Reset the connection: the work calls krt_conn_fail(), which releases it
 * (disconnect, drain, krt_queue_destroy()).  Caller holds q->lock.
 */
static void krt_q_reset_locked(struct krt_queue *q, const char *why)
{
	bool first = !q->reset_reason && !q->unmapped;

	q->dead = true;
	q->ready = false;
	if (!first)
		return;
	q->reset_reason = why;
	atomic64_inc(&krt_dp_stats.resets);
	pr_info_ratelimited("%s/%u: resetting the connection: %s\n",
			    q->conn->peer->name, q->conn->index, why);
	kref_get(&q->conn->ref);
	if (!queue_work(krt_wq, &q->reset_work))
		krt_conn_put(q->conn);
}

/* Reset the connection from any context but q->lock held. */
static void krt_q_reset(struct krt_queue *q, const char *why)
{
	spin_lock_bh(&q->lock);
	krt_q_reset_locked(q, why);
	spin_unlock_bh(&q->lock);
}

/**
 * krt_queue_reset() - reset a connection from any context
 * @q: its queue, or NULL (nothing to do)
 * @why: reason, a static string
 */
void krt_queue_reset(struct krt_queue *q, const char *why)
{
	if (q)
		krt_q_reset(q, why);
}

static void krt_q_reset_work(struct work_struct *work)
{
	struct krt_queue *q = container_of(work, struct krt_queue, reset_work);
	struct krt_conn *conn = q->conn;

	krt_conn_fail(conn, q->reset_reason ?: "reset");
	krt_conn_put(conn);
}

static void krt_q_malformed(struct krt_queue *q, const char *why)
{
	spin_lock_bh(&q->lock);
	q->stats.malformed++;
	spin_unlock_bh(&q->lock);
	atomic64_inc(&krt_dp_stats.malformed);
	krt_stat_inc(q->conn, KRT_A_STAT_ERR_MALFORMED);
	trace_krt_msg_malformed(q->conn, why);
	pr_warn_ratelimited("%s/%u: malformed message from the peer: %s\n",
			    q->conn->peer->name, q->conn->index, why);
	krt_q_reset(q, "malformed message from the peer");
}

/* A work completion failed: count, reset unless it is a flush. */
static bool krt_q_wc_failed(struct krt_queue *q, struct ib_wc *wc, const char *what)
{
	if (likely(wc->status == IB_WC_SUCCESS))
		return false;
	if (wc->status != IB_WC_WR_FLUSH_ERR) {
		trace_krt_wc_error(q->conn, what, wc->status);
		atomic64_inc(&krt_dp_stats.wc_errors);
		if (wc->status == IB_WC_RNR_RETRY_EXC_ERR)
			atomic64_inc(&krt_dp_stats.rnr_errors);
		krt_stats_wc(q->conn, wc->status);
		spin_lock_bh(&q->lock);
		q->stats.wc_errors++;
		spin_unlock_bh(&q->lock);
		pr_warn_ratelimited("%s/%u: %s failed: %s (%d)\n",
				    q->conn->peer->name, q->conn->index, what,
				    ib_wc_status_msg(wc->status), wc->status);
		krt_q_reset(q, "work request failed");
	}
	return true;
}

static enum dma_data_direction krt_req_dma_dir(enum krt_data_dir dir)
{
	return dir == KRT_DATA_READ ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
}

/* The server's buffer moves the other way from the client's. */
static enum dma_data_direction krt_sreq_dma_dir(enum krt_data_dir dir)
{
	return dir == KRT_DATA_READ ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
}

/* Fill a message header in @buf.  Caller holds q->lock. */
static void krt_q_fill_hdr(struct krt_queue *q, void *buf, u8 opcode,
			   u16 flags, u32 len, u16 service, u32 tag, s32 status,
			   u64 req_id)
{
	struct krt_msg_hdr *h = buf;

	memset(h, 0, sizeof(*h));
	h->magic = cpu_to_be32(KRT_MSG_MAGIC);
	h->version = KRT_MSG_VERSION;
	h->opcode = opcode;
	h->flags = cpu_to_be16(flags);
	h->len = cpu_to_be32(len);
	h->credits = cpu_to_be16(q->grant);
	q->grant = 0;
	h->service = cpu_to_be16(service);
	h->tag = cpu_to_be32(tag);
	h->status = cpu_to_be32((u32)status);
	h->req_id = cpu_to_be64(req_id);
	/* fault/corrupt_msg: the next message of a service, never a heartbeat */
	switch (service != KRT_SERVICE_HB ? krt_fault_corrupt() : 0) {
	case 1:
		h->magic = cpu_to_be32(0xdeadbeef);
		break;
	case 2:
		h->version = KRT_MSG_VERSION + 1;
		break;
	case 3:
		h->len = cpu_to_be32(len + 100);
		break;
	case 4:
		h->opcode = 0x7f;
		break;
	case 5:
		h->flags = cpu_to_be16(KRT_MF_READ);
		h->data_len = cpu_to_be32(U32_MAX);
		break;
	case 6:
		h->credits = cpu_to_be16(0xffff);
		break;
	}
}

/*
 * A signalled SEND of @len bytes of one of krt's message buffers, @va
 * mapped at @dma.  ORDER: for an inline SEND the driver copies the data
 * from sge.addr at post time *with the CPU* (mlx5 set_data_inl_seg()):
 * it must be the kernel virtual address, not the DMA address; the buffer
 * is then not read by the device at all.  Taking @va as a pointer keeps a
 * DMA address from being passed there without a cast (rxe and siw use
 * virtual addresses as DMA addresses, so no test there could tell).
 */
static void krt_send_wr(struct ib_send_wr *wr, struct ib_sge *sge, struct ib_cqe *cqe,
			void *va, u64 dma, u32 len, u32 lkey, bool inline_ok)
{
	memset(wr, 0, sizeof(*wr));
	sge->addr = inline_ok ? (uintptr_t)va : dma;
	sge->length = len;
	sge->lkey = lkey;
	wr->opcode = IB_WR_SEND;
	wr->wr_cqe = cqe;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = IB_SEND_SIGNALED | (inline_ok ? IB_SEND_INLINE : 0);
	if (READ_ONCE(krt_check_inline) && inline_ok)
		WARN_ONCE(!virt_addr_valid(va) || sge->addr != (uintptr_t)va,
			  "krt: inline SEND without the buffer's virtual address\n");
}

/*
 * ib_post_send() of a chain, counted: one doorbell and its WRs.  Caller
 * holds q->lock.
 */
static int krt_q_post_send(struct krt_queue *q, const struct ib_send_wr *first)
{
	const struct ib_send_wr *wr;
	int ret;

	ret = ib_post_send(q->qp, first, NULL);
	if (!ret) {
		q->stats.doorbells++;
		for (wr = first; wr; wr = wr->next)
			q->stats.wrs++;
	}
	return ret;
}

/* A request went on the wire: count it by kind.  q->lock held. */
static void krt_q_count_req(struct krt_queue *q, const struct krt_req *req, bool hb)
{
	struct krt_conn *conn = q->conn;

	if (hb) {
		krt_stat_inc(conn, KRT_A_STAT_HEARTBEATS);
		return;
	}
	krt_stat_add(conn, KRT_A_STAT_MSG_BYTES_OUT, req->msg_len);
	if (req->dir == KRT_DATA_READ) {
		krt_stat_inc(conn, KRT_A_STAT_REQS_READ);
		krt_stat_add(conn, KRT_A_STAT_DATA_BYTES_READ, req->data_len);
	} else if (req->dir == KRT_DATA_WRITE) {
		krt_stat_inc(conn, KRT_A_STAT_REQS_WRITE);
		krt_stat_add(conn, KRT_A_STAT_DATA_BYTES_WRITTEN, req->data_len);
	} else {
		krt_stat_inc(conn, KRT_A_STAT_REQS_SEND);
	}
}

/* MRs from the QP's pool, counted for the statistics.  q->lock held. */
static struct ib_mr *krt_q_mr_get(struct krt_queue *q)
{
	struct ib_mr *mr = ib_mr_pool_get(q->qp, &q->qp->rdma_mrs);

	if (mr) {
		krt_hwm_raise(&q->conn->st.mrs_hwm, ++q->mrs_used);
		krt_hwm_raise(&q->conn->peer->st.mrs_hwm, q->mrs_used);
	}
	return mr;
}

static void krt_q_mr_put(struct krt_queue *q, struct ib_mr *mr)
{
	q->mrs_used--;
	ib_mr_pool_put(q->qp, &q->qp->rdma_mrs, mr);
}

/* ---- client side ---- */

static void krt_slot_free_locked(struct krt_queue *q, struct krt_slot *s)
{
	if (s->inv_left) {
		q->sq_avail++;
		s->inv_left = false;
	}
	if (s->state == KRT_SLOT_ZOMBIE)
		q->zombies--;
	s->state = KRT_SLOT_FREE;
	s->req = NULL;
	s->gen++;
	s->timed_out = false;
	if (s != q->hb_slot)
		list_add_tail(&s->entry, &q->free_slots);
}

/*
 * A slot has nothing pending: give its MR back, free it and queue its
 * request for completion (not for a zombie: its request completed on
 * timeout).  Caller holds q->lock.
 */
/* Unmap a slot's buffer (the MR is invalid or destroyed).  q->lock held. */
static void krt_slot_unmap_locked(struct krt_queue *q, struct krt_slot *s)
{
	if (!s->nr_sg)
		return;
	ib_dma_unmap_sg(q->ibdev, s->sg, s->nr_sg, krt_req_dma_dir(s->req->dir));
	s->nr_sg = 0;
}

static void krt_slot_finish_locked(struct krt_queue *q, struct krt_slot *s,
				   struct list_head *done)
{
	struct krt_req *req = s->req;

	if (s->mr) {
		krt_q_mr_put(q, s->mr);
		s->mr = NULL;
	}
	if (req)
		krt_slot_unmap_locked(q, s);
	if (s == q->hb_slot) {
		q->hb_busy = false;
		s->state = KRT_SLOT_FREE;
		s->req = NULL;
		s->gen++;
		s->timed_out = false;
		if (req)
			list_add_tail(&req->krt_entry, done);
		krt_q_kick_locked(q, done);
		return;
	}
	if (s->state == KRT_SLOT_BUSY && req) {
		q->stats.reqs_done++;
		list_add_tail(&req->krt_entry, done);
	}
	krt_slot_free_locked(q, s);
	krt_q_kick_locked(q, done);
}

/* Complete requests collected on @done.  Called without q->lock. */
static void krt_q_complete(struct krt_queue *q, struct list_head *done)
{
	struct krt_req *req, *tmp;

	list_for_each_entry_safe(req, tmp, done, krt_entry) {
		list_del_init(&req->krt_entry);
		req->krt_conn = NULL;
		if (req == &q->hb_req) {
			krt_conn_put(q->conn);	/* the heartbeat's */
			continue;
		}
		atomic_dec(&q->inflight);
		krt_req_finish_on(req, req->status, q->conn);
		krt_conn_put(q->conn);		/* the request's */
	}
}

static void krt_slot_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krt_slot *s = container_of(wc->wr_cqe, struct krt_slot, reg_cqe);

	krt_q_wc_failed(s->q, wc, "REG_MR");	/* unsignalled: errors only */
}

static void krt_slot_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krt_slot *s = container_of(wc->wr_cqe, struct krt_slot, send_cqe);
	struct krt_queue *q = s->q;
	LIST_HEAD(done);

	krt_q_wc_failed(q, wc, "request SEND");
	spin_lock_bh(&q->lock);
	q->sq_avail += s->mr ? 2 : 1;
	s->pending &= ~KRT_P_SEND;
	if (!s->pending)
		krt_slot_finish_locked(q, s, &done);
	else
		krt_q_kick_locked(q, &done);
	spin_unlock_bh(&q->lock);
	krt_q_complete(q, &done);
}

static void krt_slot_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krt_slot *s = container_of(wc->wr_cqe, struct krt_slot, inv_cqe);
	struct krt_queue *q = s->q;
	LIST_HEAD(done);

	if (krt_q_wc_failed(q, wc, "LOCAL_INV")) {
		/* the MR may still be valid: it stays out of the pool */
		spin_lock_bh(&q->lock);
		q->sq_avail++;
		spin_unlock_bh(&q->lock);
		return;
	}
	spin_lock_bh(&q->lock);
	q->sq_avail++;
	q->stats.local_inv++;
	krt_stat_inc(q->conn, KRT_A_STAT_LOCAL_INV);
	s->pending &= ~KRT_P_INV;
	if (!s->pending)
		krt_slot_finish_locked(q, s, &done);
	spin_unlock_bh(&q->lock);
	krt_q_complete(q, &done);
}

/*
 * Post a request in a free slot.  Caller holds q->lock and checked that a
 * slot, a credit and KRT_WR_REQ SQ entries are there.
 */
/* DMA-map a request's buffer into a slot's scatterlist.  q->lock held. */
static int krt_slot_map_locked(struct krt_queue *q, struct krt_slot *s,
			       struct krt_req *req)
{
	int nents;

	krt_frwr_sg_fill(s->sg, req->bvec, req->nr_bvec);
	nents = krt_frwr_map(q->ibdev, s->sg, req->nr_bvec, krt_req_dma_dir(req->dir));
	if (nents < 0)
		return nents;
	s->nr_sg = req->nr_bvec;
	req->krt_nents = nents;
	return 0;
}

static int krt_q_post_req_locked(struct krt_queue *q, struct krt_req *req)
{
	bool hb = req == &q->hb_req, data = req->dir != KRT_DATA_NONE;
	struct krt_slot *s = hb ? q->hb_slot :
		list_first_entry(&q->free_slots, struct krt_slot, entry);
	struct ib_send_wr wr, *first = &wr;
	struct ib_reg_wr reg;
	struct ib_sge sge;
	u32 len = sizeof(struct krt_msg_hdr) + req->msg_len;
	u16 flags = 0;
	int ret;

	if (!hb)
		list_del_init(&s->entry);
	s->state = KRT_SLOT_BUSY;
	s->req = req;
	s->pending = KRT_P_SEND | KRT_P_REPLY;
	s->inv_left = false;
	q->sq_avail -= data ? KRT_WR_REQ : 1;
	q->credits--;
	if (data) {
		s->mr = krt_q_mr_get(q);
		ret = !s->mr ? -EBUSY : krt_slot_map_locked(q, s, req);
		if (!ret)
			ret = krt_frwr_reg(s->mr, s->sg, req->krt_nents, &reg,
					   req->dir == KRT_DATA_READ ?
					   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE :
					   IB_ACCESS_REMOTE_READ);
		if (ret) {
			krt_stat_inc(q->conn, KRT_A_STAT_ERR_REG);
			trace_krt_mr_error(q->conn, req->id, req->data_len, ret);
			if (s->mr)
				krt_q_mr_put(q, s->mr);
			s->mr = NULL;
			krt_slot_unmap_locked(q, s);
			q->sq_avail += KRT_WR_REQ;
			q->credits++;
			krt_slot_free_locked(q, s);
			return ret;
		}
		reg.wr.wr_cqe = &s->reg_cqe;
		reg.wr.next = &wr;
		first = &reg.wr;
		s->inv_left = true;
		flags = req->dir == KRT_DATA_READ ? KRT_MF_READ : KRT_MF_WRITE;
		if (q->send_inv && READ_ONCE(krt_remote_inv))
			flags |= KRT_MF_INV;
	}
	if (req->krt_sends++)
		flags |= KRT_MF_RESENT;
	krt_q_fill_hdr(q, s->va, KRT_OP_REQ, flags, len, req->service,
		       (u32)s->gen << 16 | s->idx, 0, req->id);
	if (s->mr) {
		struct krt_msg_hdr *h = s->va;

		h->addr = cpu_to_be64(s->mr->iova);
		h->rkey = cpu_to_be32(s->mr->rkey);
		h->data_len = cpu_to_be32(req->data_len);
	}
	if (req->msg_len)
		memcpy(s->va + sizeof(struct krt_msg_hdr), req->msg, req->msg_len);
	ib_dma_sync_single_for_device(q->ibdev, s->dma, len, DMA_TO_DEVICE);
	krt_send_wr(&wr, &sge, &s->send_cqe, s->va, s->dma, len, q->lkey,
		    len <= q->max_inline);
	if (hb)
		q->stats.heartbeats++;
	else
		q->stats.reqs_sent++;
	if (req->dir == KRT_DATA_READ)
		q->stats.bytes_read += req->data_len;
	else if (req->dir == KRT_DATA_WRITE)
		q->stats.bytes_written += req->data_len;
	ret = krt_q_post_send(q, first);
	if (ret) {
		/* nothing was posted: the reset completes the request */
		s->pending = KRT_P_REPLY;
		return -ECONNRESET;
	}
	krt_q_count_req(q, req, hb);
	trace_krt_req_send(q->conn, req, hb, q->credits);
	trace_krt_req_resend(q->conn, req);
	return 0;
}

static bool krt_q_room_for_req(struct krt_queue *q, struct krt_req *req)
{
	if (list_empty(&q->free_slots))
		return false;
	if (!q->credits) {
		q->stats.credit_waits++;
		krt_stat_inc(q->conn, KRT_A_STAT_CREDIT_WAITS);
		trace_krt_credit_wait(q->conn, req->id, q->credits, q->sq_avail,
				      q->nr_waiting);
		return false;
	}
	if (q->sq_avail < (req->dir != KRT_DATA_NONE ? KRT_WR_REQ : 1)) {
		q->stats.sq_waits++;
		krt_stat_inc(q->conn, KRT_A_STAT_SQ_WAITS);
		trace_krt_sq_wait(q->conn, req->id, q->credits, q->sq_avail,
				  q->nr_waiting);
		return false;
	}
	return true;
}

/* ---- server side ---- */

static void krt_sreq_put_locked(struct krt_queue *q, struct krt_sreq *r)
{
	r->state = KRT_SREQ_FREE;
	list_add_tail(&r->entry, &q->sfree);
}

static void krt_q_serve(struct krt_queue *q, struct krt_sreq *r,
			struct krt_rbuf *rb, const struct krt_msg_hdr *h, u32 bytes);

/*
 * The service is done with @r: let it go, and give it to a request that
 * waits for one.  Outside q->lock.
 */
static void krt_sreq_release(struct krt_sreq *r)
{
	struct krt_queue *q = r->q;
	struct krt_conn *conn = q->conn;
	struct krt_service *svc;
	struct krt_rbuf *rb = NULL;

	spin_lock_bh(&q->lock);
	/*
	 * Cleared before @r is free again: once on sfree, a receive may
	 * take it (on this CPU as soon as bottom halves are enabled) and set
	 * its own service.
	 */
	svc = r->svc;
	r->svc = NULL;
	if (!q->dead && !list_empty(&q->deferred)) {
		rb = list_first_entry(&q->deferred, struct krt_rbuf, entry);
		list_del_init(&rb->entry);
	} else {
		krt_sreq_put_locked(q, r);
	}
	spin_unlock_bh(&q->lock);
	if (svc)
		krt_service_put(svc);
	if (rb)
		krt_q_serve(q, r, rb, rb->va, rb->bytes);
	krt_conn_put(conn);		/* the server request's */
}

static int krt_sreq_post_reply_locked(struct krt_queue *q, struct krt_sreq *r)
{
	struct ib_send_wr wr;
	struct ib_sge sge;
	u32 len = sizeof(struct krt_msg_hdr) + r->rep_len;
	int ret;

	krt_q_fill_hdr(q, r->va, KRT_OP_REP, 0, len, r->pub.service, r->tag,
		       r->status, r->pub.req_id);
	ib_dma_sync_single_for_device(q->ibdev, r->dma, len, DMA_TO_DEVICE);
	krt_send_wr(&wr, &sge, &r->send_cqe, r->va, r->dma, len, q->lkey,
		    len <= q->max_inline);
	if (r->inv && q->send_inv) {
		wr.opcode = IB_WR_SEND_WITH_INV;
		wr.ex.invalidate_rkey = r->rkey;
	}
	q->credits--;
	q->sq_avail -= KRT_WR_REP;
	if (r->pub.service != KRT_SERVICE_HB)
		q->stats.srv_reps++;
	r->state = KRT_SREQ_REPLY;
	ret = krt_q_post_send(q, &wr);
	if (!ret && r->pub.service != KRT_SERVICE_HB) {
		krt_stat_add(q->conn, KRT_A_STAT_SRV_MSG_BYTES_OUT, r->rep_len);
		krt_stats_lat(q->conn, q->conn->peer, KRT_HIST_SVC,
			      krt_ns_since(r->t_recv));
	}
	return ret;
}

static void krt_sreq_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krt_sreq *r = container_of(wc->wr_cqe, struct krt_sreq, send_cqe);
	struct krt_queue *q = r->q;
	LIST_HEAD(done);

	krt_q_wc_failed(q, wc, "reply SEND");
	spin_lock_bh(&q->lock);
	q->sq_avail += KRT_WR_REP;
	krt_q_kick_locked(q, &done);
	spin_unlock_bh(&q->lock);
	krt_q_complete(q, &done);
	krt_sreq_release(r);
}

static void krt_sreq_data_err(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krt_sreq *r = container_of(wc->wr_cqe, struct krt_sreq, data_cqe);

	/* REG_MR or RDMA READ/WRITE: unsignalled, so errors only */
	if (krt_q_wc_failed(r->q, wc, "RDMA transfer"))
		r->data_status = wc->status == IB_WC_WR_FLUSH_ERR ? -ECONNRESET : -EIO;
}

static void krt_sreq_data_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krt_sreq *r = container_of(wc->wr_cqe, struct krt_sreq, inv_cqe);
	struct krt_queue *q = r->q;
	LIST_HEAD(done);
	int status = r->data_status;

	if (krt_q_wc_failed(q, wc, r->mr ? "LOCAL_INV" : "RDMA transfer") && !status)
		status = wc->status == IB_WC_WR_FLUSH_ERR ? -ECONNRESET : -EIO;
	spin_lock_bh(&q->lock);
	q->sq_avail += KRT_WR_DATA;
	/* a failed LOCAL_INV leaves the MR to krt_queue_destroy() */
	if (r->mr && wc->status == IB_WC_SUCCESS) {
		krt_q_mr_put(q, r->mr);
		r->mr = NULL;
	}
	r->state = KRT_SREQ_SERVICE;
	krt_q_kick_locked(q, &done);
	spin_unlock_bh(&q->lock);
	krt_q_complete(q, &done);
	ib_dma_unmap_sg(q->ibdev, r->sgl, r->nr_bvec, krt_sreq_dma_dir(r->pub.dir));
	r->sgl = NULL;
	r->data_done(&r->pub, status);
}

/*
 * Build a server request's transfer without an MR: RDMA READ/WRITE WRs
 * of the mapped entries, naming them by DMA address and the local DMA
 * lkey, the last one signalled.  krt_srv_data() checked that they fit in
 * KRT_WR_DATA WRs.  Return: the first WR.
 */
static struct ib_send_wr *krt_sreq_build_direct(struct krt_queue *q, struct krt_sreq *r)
{
	bool write = r->pub.dir == KRT_DATA_READ;	/* the client reads */
	u32 per = write ? q->srv_sge : q->srv_sge_rd;
	struct ib_rdma_wr *w = r->rwr;
	struct ib_sge *sge = r->sge;
	u64 raddr = r->raddr;
	struct scatterlist *sg;
	u32 n = 0;
	int i;

	for_each_sg(r->sgl, sg, r->nents, i) {
		if (n == per) {
			w->wr.next = &w[1].wr;
			w++;
			n = 0;
		}
		if (!n) {
			memset(w, 0, sizeof(*w));
			w->wr.opcode = write ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ;
			w->wr.wr_cqe = &r->data_cqe;
			w->wr.sg_list = sge;
			w->remote_addr = raddr;
			w->rkey = r->rkey;
		}
		sge->addr = sg_dma_address(sg);
		sge->length = sg_dma_len(sg);
		sge->lkey = q->lkey;
		raddr += sge->length;
		sge++;
		w->wr.num_sge = ++n;
	}
	w->wr.next = NULL;
	w->wr.wr_cqe = &r->inv_cqe;
	w->wr.send_flags = IB_SEND_SIGNALED;
	return &r->rwr[0].wr;
}

/*
 * Post a server request's transfer: without an MR (krt_sreq_build_direct())
 * or the REG_MR built by krt_srv_data(), the RDMA READ/WRITE and a fenced
 * LOCAL_INV.  Return: 0, or ib_post_send()'s error (nothing posted: the
 * caller resets the connection).
 */
static int krt_sreq_post_data_locked(struct krt_queue *q, struct krt_sreq *r)
{
	struct ib_rdma_wr rdma = {};
	struct ib_send_wr inv, *first;
	struct ib_sge sge;
	int ret;

	if (!r->mr) {
		first = krt_sreq_build_direct(q, r);
		q->stats.srv_direct++;
	} else {
		r->reg.wr.wr_cqe = &r->data_cqe;
		r->reg.wr.next = &rdma.wr;
		sge.addr = r->mr->iova;
		sge.length = r->pub.data_len;
		sge.lkey = r->mr->lkey;
		rdma.wr.opcode = r->pub.dir == KRT_DATA_READ ?
				 IB_WR_RDMA_WRITE : IB_WR_RDMA_READ;
		rdma.wr.wr_cqe = &r->data_cqe;
		rdma.wr.sg_list = &sge;
		rdma.wr.num_sge = 1;
		rdma.wr.next = &inv;
		rdma.remote_addr = r->raddr;
		rdma.rkey = r->rkey;
		krt_frwr_inv(&inv, r->mr, &r->inv_cqe);
		/* ORDER: the fence makes the LOCAL_INV wait for the READ's data */
		inv.send_flags = IB_SEND_SIGNALED | IB_SEND_FENCE;
		first = &r->reg.wr;
		q->stats.srv_mr++;
	}
	q->sq_avail -= KRT_WR_DATA;
	r->state = KRT_SREQ_DATA;
	r->data_status = 0;
	ret = krt_q_post_send(q, first);
	if (!ret)
		krt_stat_add(q->conn, r->pub.dir == KRT_DATA_READ ?
			     KRT_A_STAT_SRV_DATA_BYTES_READ :
			     KRT_A_STAT_SRV_DATA_BYTES_WRITTEN, r->pub.data_len);
	return ret;
}

/*
 * Start what waits, in order: server work first (it frees the client
 * side's slots), then requests.  Caller holds q->lock; requests that
 * cannot be posted are put on @done with their status.
 */
static void krt_q_kick_locked(struct krt_queue *q, struct list_head *done)
{
	struct krt_sreq *r, *rt;
	struct krt_req *req;
	int ret;

	if (q->dead)
		return;
	list_for_each_entry_safe(r, rt, &q->swait, entry) {
		u8 state = r->state;

		if (state == KRT_SREQ_DATA_WAIT) {
			if (q->sq_avail < KRT_WR_DATA)
				break;
			list_del_init(&r->entry);
			ret = krt_sreq_post_data_locked(q, r);
		} else {
			if (!q->credits || q->sq_avail < KRT_WR_REP)
				break;
			list_del_init(&r->entry);
			ret = krt_sreq_post_reply_locked(q, r);
		}
		if (ret) {
			/* krt_queue_destroy() hands it back */
			r->state = state;
			list_add(&r->entry, &q->swait);
			krt_q_reset_locked(q, "cannot post a work request");
			return;
		}
	}
	while (!list_empty(&q->waiting) && q->ready) {
		req = list_first_entry(&q->waiting, struct krt_req, krt_entry);
		if (!krt_q_room_for_req(q, req))
			break;
		list_del_init(&req->krt_entry);
		q->nr_waiting--;
		ret = krt_q_post_req_locked(q, req);
		if (ret == -ECONNRESET) {
			krt_q_reset_locked(q, "cannot post a work request");
			return;
		}
		if (ret) {
			req->status = ret;
			list_add_tail(&req->krt_entry, done);
		}
	}
}

/* ---- receive path ---- */

static int krt_q_post_recv(struct krt_queue *q, struct krt_rbuf *rb)
{
	struct ib_recv_wr wr = {};
	struct ib_sge sge;

	sge.addr = rb->dma;
	sge.length = KRT_MSG_BUF;
	sge.lkey = q->lkey;
	wr.wr_cqe = &rb->cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	ib_dma_sync_single_for_device(q->ibdev, rb->dma, KRT_MSG_BUF, DMA_FROM_DEVICE);
	return ib_post_recv(q->qp, &wr, NULL);
}

/* Return: NULL if the header is well formed, else what is wrong. */
static const char *krt_q_check_hdr(struct krt_queue *q, const struct krt_msg_hdr *h,
				   u32 bytes)
{
	u16 flags;

	if (bytes < sizeof(*h))
		return "shorter than a header";
	if (be32_to_cpu(h->magic) != KRT_MSG_MAGIC)
		return "bad magic";
	if (h->version != KRT_MSG_VERSION)
		return "unknown version";
	if (be32_to_cpu(h->len) != bytes)
		return "length differs from the bytes received";
	if (h->opcode != (q->server ? KRT_OP_REQ : KRT_OP_REP))
		return "unexpected opcode";
	flags = be16_to_cpu(h->flags);
	if (flags & ~KRT_MF_ALL)
		return "unknown flags";
	if (q->server) {
		u32 dlen = be32_to_cpu(h->data_len);
		u16 dir = flags & (KRT_MF_READ | KRT_MF_WRITE);

		if (dir == (KRT_MF_READ | KRT_MF_WRITE))
			return "both read and write";
		if (dir && (!dlen || dlen > q->max_io))
			return "data length over the max IO size";
		if (!dir && (dlen || (flags & KRT_MF_INV)))
			return "data fields without data";
		if (be16_to_cpu(h->service) == KRT_SERVICE_HB && (dir || bytes != sizeof(*h)))
			return "heartbeat with data";
	} else if (flags) {
		return "flags in a reply";
	}
	return NULL;
}

/*
 * A request arrived.  A server request is free unless replies whose SEND
 * completion is not yet polled still hold theirs (the client may already
 * have reused its slot): then the buffer waits, not re-posted, so its
 * credit stays taken, until krt_sreq_release() frees one.
 */
static void krt_q_recv_req(struct krt_queue *q, struct krt_rbuf *rb,
			   const struct krt_msg_hdr *h, u32 bytes)
{
	struct krt_sreq *r = NULL;

	rb->t_recv = local_clock();	/* service time includes waiting here */
	spin_lock_bh(&q->lock);
	if (list_empty(&q->deferred))
		r = list_first_entry_or_null(&q->sfree, struct krt_sreq, entry);
	if (r) {
		list_del_init(&r->entry);
	} else {
		rb->bytes = bytes;
		list_add_tail(&rb->entry, &q->deferred);
		q->stats.deferred++;
		krt_stat_inc(q->conn, KRT_A_STAT_SRV_DEFERRED);
	}
	spin_unlock_bh(&q->lock);
	if (r)
		krt_q_serve(q, r, rb, h, bytes);
}

/* Copy a request into @r, re-post its buffer, hand it to its service. */
static void krt_q_serve(struct krt_queue *q, struct krt_sreq *r,
			struct krt_rbuf *rb, const struct krt_msg_hdr *h, u32 bytes)
{
	u16 flags = be16_to_cpu(h->flags);
	struct krt_service *svc;

	r->tag = be32_to_cpu(h->tag);
	r->pub.service = be16_to_cpu(h->service);
	r->pub.node_id = q->conn->peer->node_id;
	r->pub.req_id = be64_to_cpu(h->req_id);
	r->pub.resent = flags & KRT_MF_RESENT;
	r->pub.msg_len = bytes - sizeof(*h);
	memcpy(r->msg, (const void *)(h + 1), r->pub.msg_len);
	r->pub.msg = r->msg;
	r->pub.dir = flags & KRT_MF_READ ? KRT_DATA_READ :
		     flags & KRT_MF_WRITE ? KRT_DATA_WRITE : KRT_DATA_NONE;
	r->pub.data_len = be32_to_cpu(h->data_len);
	r->pub.priv = NULL;
	r->raddr = be64_to_cpu(h->addr);
	r->rkey = be32_to_cpu(h->rkey);
	r->inv = flags & KRT_MF_INV;
	r->state = KRT_SREQ_SERVICE;
	r->mr = NULL;
	r->sgl = NULL;
	r->t_recv = rb->t_recv;
	kref_get(&q->conn->ref);	/* the server request's */
	if (r->pub.service != KRT_SERVICE_HB) {
		krt_stat_inc(q->conn, r->pub.dir == KRT_DATA_READ ? KRT_A_STAT_SRV_REQS_READ :
			     r->pub.dir == KRT_DATA_WRITE ? KRT_A_STAT_SRV_REQS_WRITE :
			     KRT_A_STAT_SRV_REQS_SEND);
		krt_stat_add(q->conn, KRT_A_STAT_SRV_MSG_BYTES_IN, r->pub.msg_len);
	}

	/* ORDER: copied out, so the buffer may take the next message */
	if (krt_q_post_recv(q, rb)) {
		krt_q_reset(q, "cannot post a receive");
	} else {
		spin_lock_bh(&q->lock);
		q->grant++;
		if (r->pub.service != KRT_SERVICE_HB)
			q->stats.srv_reqs++;
		spin_unlock_bh(&q->lock);
	}

	if (r->pub.service == KRT_SERVICE_HB) {
		krt_srv_reply(&r->pub, 0, NULL, 0);
		return;
	}
	svc = krt_service_get(r->pub.service);
	if (!svc) {
		krt_srv_reply(&r->pub, -EPROTONOSUPPORT, NULL, 0);
		return;
	}
	r->svc = svc;
	svc->request(svc, &r->pub);
}

static void krt_q_recv_rep(struct krt_queue *q, struct krt_rbuf *rb,
			   const struct krt_msg_hdr *h, u32 bytes, struct ib_wc *wc)
{
	u32 tag = be32_to_cpu(h->tag), plen = bytes - sizeof(*h);
	u16 idx = tag & 0xffff, gen = tag >> 16;
	s32 status = (s32)be32_to_cpu(h->status);
	struct ib_send_wr inv;
	struct krt_slot *s;
	struct krt_req *req;
	LIST_HEAD(done);
	bool late = false;
	int ret;

	if (idx >= q->nr_slots + !!q->hb_slot) {
		krt_q_malformed(q, "reply tag out of range");
		return;
	}
	s = &q->slots[idx];
	spin_lock_bh(&q->lock);
	if (s->gen != gen || !(s->pending & KRT_P_REPLY) ||
	    s->state == KRT_SLOT_FREE) {
		spin_unlock_bh(&q->lock);
		krt_q_malformed(q, "reply for no request");
		return;
	}
	if ((wc->wc_flags & IB_WC_WITH_INVALIDATE) &&
	    (!s->mr || wc->ex.invalidate_rkey != s->mr->rkey)) {
		spin_unlock_bh(&q->lock);
		krt_q_malformed(q, "reply invalidated a key it was not given");
		return;
	}
	s->pending &= ~KRT_P_REPLY;
	q->stats.reps_recv++;
	req = s->req;
	if (req != &q->hb_req)
		krt_stat_add(q->conn, KRT_A_STAT_MSG_BYTES_IN, plen);
	if (s->state == KRT_SLOT_ZOMBIE) {
		late = true;
		q->stats.late_replies++;
		krt_stat_inc(q->conn, KRT_A_STAT_LATE_REPLIES);
	} else if (req == &q->hb_req) {
		req->status = 0;
	} else {
		req->rsp_len = plen;
		if (req->rsp)
			memcpy(req->rsp, (const void *)(h + 1), min(plen, req->rsp_max));
		req->rsp_status = status > 0 || status < -MAX_ERRNO ? -EIO : status;
		req->status = 0;
	}
	if (s->mr && (wc->wc_flags & IB_WC_WITH_INVALIDATE)) {
		q->stats.remote_inv++;
		krt_stat_inc(q->conn, KRT_A_STAT_REMOTE_INV);
		if (s->inv_left) {
			q->sq_avail++;
			s->inv_left = false;
		}
	} else if (s->mr) {
		/* ORDER: pages go back only once the MR is invalid */
		krt_frwr_inv(&inv, s->mr, &s->inv_cqe);
		inv.send_flags = IB_SEND_SIGNALED;
		s->pending |= KRT_P_INV;
		s->inv_left = false;	/* its entry is used now */
		ret = krt_q_post_send(q, &inv);
		if (ret) {
			spin_unlock_bh(&q->lock);
			krt_q_reset(q, "cannot post a work request");
			return;
		}
	}
	spin_unlock_bh(&q->lock);
	if (late)
		atomic64_inc(&krt_dp_stats.late_replies);

	/*
	 * ORDER: re-post and count the buffer before the slot is freed, so
	 * the request that takes the slot next carries its credit; else the
	 * server can end up a credit short for the last reply of a burst.
	 */
	if (krt_q_post_recv(q, rb)) {
		krt_q_reset(q, "cannot post a receive");
		return;
	}
	spin_lock_bh(&q->lock);
	q->grant++;
	if (!s->pending)
		krt_slot_finish_locked(q, s, &done);
	spin_unlock_bh(&q->lock);
	krt_q_complete(q, &done);
}

/* A heartbeat or its reply?  @h is well formed. */
static bool krt_q_is_hb(struct krt_queue *q, const struct krt_msg_hdr *h)
{
	if (q->server)
		return be16_to_cpu(h->service) == KRT_SERVICE_HB;
	return q->hb_slot && (be32_to_cpu(h->tag) & 0xffff) == q->hb_slot->idx;
}

/*
 * Fault injection: forget a received message.  Its buffer is posted again
 * and granted back, so that the sender does not run out of credits
 * because of the fault itself.
 */
static void krt_q_drop_rx(struct krt_queue *q, struct krt_rbuf *rb)
{
	atomic64_inc(&krt_dp_stats.dropped);
	if (krt_q_post_recv(q, rb)) {
		krt_q_reset(q, "cannot post a receive");
		return;
	}
	spin_lock_bh(&q->lock);
	q->grant++;
	spin_unlock_bh(&q->lock);
}

static void krt_q_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krt_rbuf *rb = container_of(wc->wr_cqe, struct krt_rbuf, cqe);
	struct krt_queue *q = rb->q;
	const struct krt_msg_hdr *h = rb->va;
	const char *bad;
	LIST_HEAD(done);
	u16 credits;

	if (krt_q_wc_failed(q, wc, "receive"))
		return;
	/* fault/silent: the peer seems to send nothing at all */
	if (krt_fault_silent()) {
		krt_q_drop_rx(q, rb);
		return;
	}
	WRITE_ONCE(q->last_rx, jiffies);
	ib_dma_sync_single_for_cpu(q->ibdev, rb->dma, KRT_MSG_BUF, DMA_FROM_DEVICE);
	bad = krt_q_check_hdr(q, h, wc->byte_len);
	if (bad) {
		krt_q_malformed(q, bad);
		return;
	}
	credits = be16_to_cpu(h->credits);
	spin_lock_bh(&q->lock);
	if (q->credits + credits > q->max_credits) {
		spin_unlock_bh(&q->lock);
		krt_q_malformed(q, "more credits than receive buffers");
		return;
	}
	q->credits += credits;
	krt_q_kick_locked(q, &done);
	spin_unlock_bh(&q->lock);
	krt_q_complete(q, &done);

	/*
	 * fault/drop_rx: a lost request or reply (not a heartbeat);
	 * fault/drop_replies: a lost reply, its request served
	 */
	if (!krt_q_is_hb(q, h) &&
	    (krt_fault_drop() || (!q->server && krt_fault_drop_reply()))) {
		krt_q_drop_rx(q, rb);
		return;
	}
	if (q->server)
		krt_q_recv_req(q, rb, h, wc->byte_len);
	else
		krt_q_recv_rep(q, rb, h, wc->byte_len, wc);
}

/* ---- deadlines and heartbeats ---- */

/*
 * Heartbeats and the server's bounds.  Caller holds q->lock.  Return:
 * why the connection must be reset, or NULL.
 */
static const char *krt_q_liveness_locked(struct krt_queue *q)
{
	unsigned long idle = jiffies - READ_ONCE(q->last_rx);
	unsigned long hb = msecs_to_jiffies(q->hb_ms), bound;
	struct krt_sreq *r;

	if (q->dead)
		return NULL;
	/* accepted, but the client never completed the handshake */
	if (q->server && !q->ready)
		return idle > KRT_ESTABLISH_TIMEOUT ?
		       "client never completed the connection" : NULL;
	if (!q->ready || !hb)
		return NULL;
	if (q->server) {
		/* twice the client's detection time, at least a second */
		bound = max_t(unsigned long, 2 * hb * q->hb_misses, HZ);
		if (idle > bound) {
			q->stats.hb_timeouts++;
			krt_stat_inc(q->conn, KRT_A_STAT_HB_TIMEOUTS);
			trace_krt_hb_miss(q->conn, idle, bound);
			return "heartbeat: nothing from the client";
		}
		list_for_each_entry(r, &q->swait, entry)
			if (time_after(jiffies, r->wait_start + bound))
				return "client returns no credits";
		return NULL;
	}
	if (!q->hb_slot)
		return NULL;
	if (idle >= hb * q->hb_misses) {
		q->stats.hb_timeouts++;
		krt_stat_inc(q->conn, KRT_A_STAT_HB_TIMEOUTS);
		trace_krt_hb_miss(q->conn, idle, hb * q->hb_misses);
		return "heartbeat: no answer from the peer";
	}
	if (idle < hb || q->hb_busy || !q->credits || !q->sq_avail)
		return NULL;
	q->hb_busy = true;
	q->hb_req.krt_sends = 0;
	q->hb_req.status = -EINPROGRESS;
	kref_get(&q->conn->ref);	/* the heartbeat's */
	if (krt_q_post_req_locked(q, &q->hb_req))
		return "cannot post a work request";
	return NULL;
}

static void krt_q_timer(struct timer_list *t)
{
	struct krt_queue *q = from_timer(q, t, timer);
	struct krt_req *req, *tmp;
	const char *why = NULL;
	LIST_HEAD(done);
	u32 i, n = 0;

	spin_lock_bh(&q->lock);
	if (q->unmapped) {
		spin_unlock_bh(&q->lock);
		return;
	}
	list_for_each_entry_safe(req, tmp, &q->waiting, krt_entry) {
		if (time_before(jiffies, req->krt_deadline))
			continue;
		list_del_init(&req->krt_entry);
		q->nr_waiting--;
		req->status = -ETIMEDOUT;
		list_add_tail(&req->krt_entry, &done);
		n++;
	}
	for (i = 0; !q->server && i < q->nr_slots; i++) {
		struct krt_slot *s = &q->slots[i];

		/* answered, waiting only for its SEND or LOCAL_INV: not late */
		if (s->state != KRT_SLOT_BUSY || s->timed_out ||
		    !(s->pending & KRT_P_REPLY) ||
		    time_before(jiffies, s->req->krt_deadline))
			continue;
		s->timed_out = true;
		n++;
		if (s->mr) {
			/* the server may still touch the pages: reset */
			why = "request with data timed out";
			continue;
		}
		s->req->status = -ETIMEDOUT;
		list_add_tail(&s->req->krt_entry, &done);
		s->state = KRT_SLOT_ZOMBIE;
		q->zombies++;
		if (q->zombies > q->nr_slots / 2)
			why = "most requests unanswered";
	}
	q->stats.timeouts += n;
	if (n)
		krt_stat_add(q->conn, KRT_A_STAT_ERR_TIMEOUT, n);
	why = krt_q_liveness_locked(q) ?: why;
	spin_unlock_bh(&q->lock);
	if (n)
		atomic64_add(n, &krt_dp_stats.timeouts);
	if (why)
		krt_q_reset(q, why);
	krt_q_complete(q, &done);
	/* a dead queue is destroyed soon: krt_queue_destroy() ends requests */
	if (!READ_ONCE(q->dead))
		mod_timer(&q->timer, jiffies + KRT_TICK);
}

/* ---- setup and teardown ---- */

static void *krt_q_buf(struct krt_queue *q, u64 *dma, enum dma_data_direction dir)
{
	void *va = krt_fault_connect() ? NULL : kzalloc(KRT_MSG_BUF, GFP_KERNEL);

	if (!va)
		return NULL;
	*dma = ib_dma_map_single(q->ibdev, va, KRT_MSG_BUF, dir);
	if (ib_dma_mapping_error(q->ibdev, *dma)) {
		kfree(va);
		return NULL;
	}
	return va;
}

static void krt_q_unmap_bufs(struct krt_queue *q)
{
	u32 i;

	for (i = 0; q->rbufs && i < q->depth; i++)
		if (q->rbufs[i].va)
			ib_dma_unmap_single(q->ibdev, q->rbufs[i].dma, KRT_MSG_BUF,
					    DMA_FROM_DEVICE);
	for (i = 0; q->slots && i < q->depth; i++)
		if (q->slots[i].va)
			ib_dma_unmap_single(q->ibdev, q->slots[i].dma, KRT_MSG_BUF,
					    DMA_TO_DEVICE);
	for (i = 0; q->sreqs && i < q->depth; i++)
		if (q->sreqs[i].va)
			ib_dma_unmap_single(q->ibdev, q->sreqs[i].dma, KRT_MSG_BUF,
					    DMA_TO_DEVICE);
}

static int krt_q_alloc_bufs(struct krt_queue *q)
{
	u32 i;

	q->rbufs = kcalloc(q->depth, sizeof(*q->rbufs), GFP_KERNEL);
	if (!q->rbufs)
		return -ENOMEM;
	for (i = 0; i < q->depth; i++) {
		q->rbufs[i].q = q;
		q->rbufs[i].cqe.done = krt_q_recv_done;
		q->rbufs[i].va = krt_q_buf(q, &q->rbufs[i].dma, DMA_FROM_DEVICE);
		if (!q->rbufs[i].va)
			return -ENOMEM;
	}
	if (!q->server) {
		q->slots = kcalloc(q->depth, sizeof(*q->slots), GFP_KERNEL);
		if (!q->slots)
			return -ENOMEM;
		for (i = 0; i < q->depth; i++) {
			struct krt_slot *s = &q->slots[i];

			s->q = q;
			s->idx = i;
			s->send_cqe.done = krt_slot_send_done;
			s->inv_cqe.done = krt_slot_inv_done;
			s->reg_cqe.done = krt_slot_reg_done;
			list_add_tail(&s->entry, &q->free_slots);
			s->va = krt_q_buf(q, &s->dma, DMA_TO_DEVICE);
			s->sg = kcalloc(q->mr_pages, sizeof(*s->sg), GFP_KERNEL);
			if (!s->va || !s->sg)
				return -ENOMEM;
		}
		return 0;
	}
	q->sreqs = kcalloc(q->depth, sizeof(*q->sreqs), GFP_KERNEL);
	if (!q->sreqs)
		return -ENOMEM;
	if (q->srv_sge) {
		q->srv_wrs = kvcalloc(q->depth * KRT_WR_DATA, sizeof(*q->srv_wrs), GFP_KERNEL);
		q->srv_sges = kvcalloc(q->depth * KRT_WR_DATA * q->srv_sge,
				       sizeof(*q->srv_sges), GFP_KERNEL);
		if (!q->srv_wrs || !q->srv_sges)
			return -ENOMEM;
	}
	for (i = 0; i < q->depth; i++) {
		struct krt_sreq *r = &q->sreqs[i];

		r->q = q;
		if (q->srv_sge) {
			r->rwr = &q->srv_wrs[i * KRT_WR_DATA];
			r->sge = &q->srv_sges[i * KRT_WR_DATA * q->srv_sge];
		}
		r->data_cqe.done = krt_sreq_data_err;
		r->inv_cqe.done = krt_sreq_data_done;
		r->send_cqe.done = krt_sreq_send_done;
		list_add_tail(&r->entry, &q->sfree);
		r->msg = kmalloc(KRT_MSG_BUF, GFP_KERNEL);
		r->sg = kcalloc(q->mr_pages, sizeof(*r->sg), GFP_KERNEL);
		if (!r->msg || !r->sg)
			return -ENOMEM;
		r->va = krt_q_buf(q, &r->dma, DMA_TO_DEVICE);
		if (!r->va)
			return -ENOMEM;
	}
	return 0;
}

/**
 * krt_queue_create() - set up the data path of a connection
 * @conn: the connection, with its depth settled
 * @id: its cm id, with the QP created
 * @dev: the QP's device
 * @max_inline: inline data the QP was granted
 *
 * Allocates and maps buffers, creates the MR pool and posts every receive
 * buffer, before the connection is accepted or connects.  The caller
 * publishes the queue in @conn.
 *
 * Return: the queue, or ERR_PTR(-ENOMEM or the verbs error); nothing is
 * left on error.
 */
struct krt_queue *krt_queue_create(struct krt_conn *conn, struct rdma_cm_id *id,
				   struct krt_device *dev, u32 max_inline)
{
	struct krt_queue *q;
	u32 i, pages;
	int ret;

	q = krt_fault_connect() ? NULL : kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return ERR_PTR(-ENOMEM);
	q->conn = conn;
	q->qp = id->qp;
	q->ibdev = dev->ibdev;
	q->lkey = id->qp->pd->local_dma_lkey;	/* the connection's own PD */
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->waiting);
	INIT_LIST_HEAD(&q->free_slots);
	INIT_LIST_HEAD(&q->sfree);
	INIT_LIST_HEAD(&q->swait);
	INIT_LIST_HEAD(&q->deferred);
	INIT_WORK(&q->reset_work, krt_q_reset_work);
	timer_setup(&q->timer, krt_q_timer, 0);
	q->server = conn->inbound;
	q->depth = conn->depth;
	q->nr_slots = conn->depth;
	q->credits = conn->depth;
	q->max_credits = conn->depth;
	q->sq_avail = KRT_WR_REQ * conn->depth;
	q->max_inline = max_inline;
	q->send_inv = dev->caps.send_inv;
	q->hb_ms = conn->hb_ms;
	q->hb_misses = max_t(u32, conn->hb_misses, 1);
	q->last_rx = jiffies;
	q->hb_req.service = KRT_SERVICE_HB;
	q->hb_req.dir = KRT_DATA_NONE;
	INIT_LIST_HEAD(&q->hb_req.krt_entry);
	if (q->server) {
		/*
		 * Transfers without an MR: as many entries per WR as the QP
		 * takes; no RDMA READ into unregistered memory on iWARP, and
		 * none over the device's efficient READ entry count.
		 */
		q->srv_sge = min_t(u32, id->qp->max_write_sge, KRT_SRV_SGE);
		q->srv_sge_rd = min_t(u32, id->qp->max_read_sge, q->srv_sge);
		if (dev->ibdev->attrs.max_sgl_rd)
			q->srv_sge_rd = min_t(u32, q->srv_sge_rd,
					      dev->ibdev->attrs.max_sgl_rd / KRT_WR_DATA);
		if (rdma_protocol_iwarp(dev->ibdev, id->port_num))
			q->srv_sge_rd = 0;
	}
	pages = min_t(u32, dev->caps.max_fr_pages, DIV_ROUND_UP(krt_max_io, PAGE_SIZE) + 1);
	q->mr_pages = pages;
	q->max_io = min_t(u32, krt_max_io, (pages - 1) * PAGE_SIZE);

	ret = krt_q_alloc_bufs(q);
	if (ret)
		goto err_bufs;
	ret = krt_fault_connect() ? -ENOMEM :
		ib_mr_pool_init(id->qp, &id->qp->rdma_mrs, q->depth,
				IB_MR_TYPE_MEM_REG, pages, 0);
	if (ret)
		goto err_bufs;
	for (i = 0; i < q->depth; i++) {
		ret = krt_fault_connect() ? -ENOMEM : krt_q_post_recv(q, &q->rbufs[i]);
		if (ret)
			goto err_mrs;
	}
	mod_timer(&q->timer, jiffies + KRT_TICK);
	return q;

err_mrs:
	/* ORDER: flush the receives already posted before their buffers go */
	ib_drain_qp(id->qp);
	ib_mr_pool_destroy(id->qp, &id->qp->rdma_mrs);
err_bufs:
	krt_q_unmap_bufs(q);
	q->unmapped = true;
	krt_queue_free(q);
	return ERR_PTR(ret);
}

/**
 * krt_queue_set_remote() - what the remote told in its private data
 * @q: the queue
 * @credits: receive buffers the remote posted for us
 * @depth: depth the remote granted (limits our slots)
 * @max_io: the remote's max IO size
 *
 * Called from the cm handler before the connection takes requests.
 */
void krt_queue_set_remote(struct krt_queue *q, u32 credits, u32 depth, u32 max_io)
{
	struct krt_slot *s, *tmp;

	u32 slots;

	spin_lock_bh(&q->lock);
	q->credits = min_t(u32, credits, KRT_MAX_DEPTH);
	q->max_credits = q->credits;
	q->max_io = min(q->max_io, max_io);
	if (!q->server) {
		/* the last slot granted is the heartbeat's */
		slots = clamp_t(u32, depth, 1, q->nr_slots);
		q->hb_slot = slots >= 2 ? &q->slots[slots - 1] : NULL;
		q->nr_slots = slots - !!q->hb_slot;
		list_for_each_entry_safe(s, tmp, &q->free_slots, entry)
			if (s->idx >= q->nr_slots)
				list_del_init(&s->entry);
	}
	spin_unlock_bh(&q->lock);
}

/**
 * krt_queue_max_io() - negotiated largest data buffer
 * @q: the queue
 *
 * Return: bytes.
 */
u32 krt_queue_max_io(struct krt_queue *q)
{
	return READ_ONCE(q->max_io);
}

/**
 * krt_queue_start() - the connection is up: accept requests
 * @q: the queue of an outbound connection
 */
void krt_queue_start(struct krt_queue *q)
{
	spin_lock_bh(&q->lock);
	if (!q->dead)
		q->ready = true;
	q->last_rx = jiffies;
	spin_unlock_bh(&q->lock);
}

/**
 * krt_queue_stop() - the connection is failing or closing: no new requests
 * @q: the queue
 *
 * Requests already waiting or posted complete when the queue is destroyed.
 */
void krt_queue_stop(struct krt_queue *q)
{
	spin_lock_bh(&q->lock);
	q->ready = false;
	q->dead = true;
	spin_unlock_bh(&q->lock);
}

/**
 * krt_queue_submit() - post a request or queue it
 * @q: the queue of an active outbound connection
 * @req: checked by krt_submit(); holds a connection reference
 *
 * The buffer is DMA-mapped when a slot takes the request, into the
 * slot's preallocated scatterlist: nothing is allocated here.
 *
 * Return: 0 (the request completes through @req->done), -ESHUTDOWN when
 * the queue stopped taking requests, -EMSGSIZE when the buffer is over
 * the negotiated max IO size, -EAGAIN when (NOWAIT) it is full, -EBUSY
 * when too many requests wait, -EIO when the buffer cannot be DMA-mapped
 * or registered.  On error the request is not queued.
 */
int krt_queue_submit(struct krt_queue *q, struct krt_req *req)
{
	LIST_HEAD(done);
	int ret = 0;
	u32 n;

	spin_lock_bh(&q->lock);
	if (!q->ready) {
		ret = -ESHUTDOWN;
		goto out_unlock;
	}
	if (req->dir != KRT_DATA_NONE &&
	    (req->data_len > q->max_io || req->nr_bvec > q->mr_pages)) {
		ret = -EMSGSIZE;
		goto out_unlock;
	}
	n = atomic_inc_return(&q->inflight);
	krt_hwm_raise(&q->conn->st.inflight_hwm, n);
	krt_hwm_raise(&q->conn->peer->st.inflight_hwm, n);
	if (list_empty(&q->waiting) && krt_q_room_for_req(q, req)) {
		ret = krt_q_post_req_locked(q, req);
		if (ret == -ECONNRESET) {
			ret = 0;	/* krt_queue_destroy() completes it */
			krt_q_reset_locked(q, "cannot post a work request");
		}
		if (ret)
			goto out_undo;
		goto out_unlock;
	}
	if (req->flags & KRT_REQ_NOWAIT) {
		ret = -EAGAIN;
		goto out_undo;
	}
	if (q->nr_waiting >= READ_ONCE(krt_backlog)) {
		atomic64_inc(&krt_dp_stats.backlog_full);
		krt_stat_inc(q->conn, KRT_A_STAT_BACKLOG_FULL);
		ret = -EBUSY;
		goto out_undo;
	}
	q->stats.waits++;
	q->nr_waiting++;
	list_add_tail(&req->krt_entry, &q->waiting);
	goto out_unlock;

out_undo:
	atomic_dec(&q->inflight);
out_unlock:
	spin_unlock_bh(&q->lock);
	return ret;
}

/**
 * krt_queue_inflight() - requests submitted and not completed
 * @q: the queue, or NULL
 *
 * Return: the count.
 */
u32 krt_queue_inflight(struct krt_queue *q)
{
	return q ? atomic_read(&q->inflight) : 0;
}

/**
 * krt_queue_mrs() - MRs of a queue's pool, and how many are in use
 * @q: the queue, or NULL
 * @used: set to the MRs taken now
 *
 * Return: the pool's size.  Caller holds krt_pool_lock (the queue stays).
 */
u32 krt_queue_mrs(struct krt_queue *q, u32 *used)
{
	*used = q ? READ_ONCE(q->mrs_used) : 0;
	return q && !READ_ONCE(q->unmapped) ? q->depth : 0;
}

/*
 * The requests of a failed queue: the heartbeat ends, the others go back
 * to their peer to be re-sent or failed.  Without q->lock.
 */
static void krt_q_hand_back(struct krt_queue *q, struct list_head *done)
{
	struct krt_req *req, *tmp;

	list_for_each_entry_safe(req, tmp, done, krt_entry) {
		list_del_init(&req->krt_entry);
		req->krt_conn = NULL;
		if (req != &q->hb_req) {
			atomic_dec(&q->inflight);
			if (!req->status) {	/* answered: only its MR was left */
				krt_req_finish_on(req, 0, q->conn);
			} else {
				req->krt_from = q->conn->index;	/* krt_req_resend */
				krt_peer_resend(req->krt_peer, req, req->status);
			}
		}
		krt_conn_put(q->conn);		/* the request's */
	}
}

/**
 * krt_queue_destroy() - drain the QP and hand back everything outstanding
 * @conn: the connection, disconnected (QP in error or about to be)
 *
 * Called before the QP is destroyed, never from a completion handler.
 * ORDER: drain (every posted WR completes, flushed), give the MRs back
 * and destroy the pool (no rkey works any more), unmap the buffers, then
 * hand the requests back to their peer (krt_peer_resend(): re-sent on
 * another connection, or failed with -ECONNRESET, -ETIMEDOUT past their
 * deadline) and hand server requests that wait for room back to their
 * service.
 */
void krt_queue_destroy(struct krt_conn *conn)
{
	struct krt_queue *q = conn->q;
	struct krt_sreq *r, *rt;
	struct krt_req *req;
	LIST_HEAD(replies);
	LIST_HEAD(data);
	LIST_HEAD(done);
	u32 i;

	if (!q || q->unmapped)
		return;
	krt_queue_stop(q);
	/*
	 * ORDER: submitters that found the connection on its peer's RCU list
	 * before it left (krt_peer_dp_del()) are done with the queue; later
	 * ones find it stopped
	 */
	synchronize_rcu();
	del_timer_sync(&q->timer);
	ib_drain_qp(q->qp);

	spin_lock_bh(&q->lock);
	q->unmapped = true;
	list_splice_init(&q->waiting, &done);
	q->nr_waiting = 0;
	list_for_each_entry(req, &done, krt_entry)
		req->status = -ECONNRESET;
	for (i = 0; q->slots && i < q->depth; i++) {
		struct krt_slot *s = &q->slots[i];

		if (s->mr) {
			krt_q_mr_put(q, s->mr);
			s->mr = NULL;
		}
		if (s->req)
			krt_slot_unmap_locked(q, s);
		if (s->state == KRT_SLOT_BUSY) {
			/* a request answered already keeps its answer (status 0) */
			if (s->pending & KRT_P_REPLY)
				s->req->status = s->timed_out ? -ETIMEDOUT : -ECONNRESET;
			list_add_tail(&s->req->krt_entry, &done);
		}
		if (s->state != KRT_SLOT_FREE) {
			s->pending = 0;
			list_del_init(&s->entry);
			krt_slot_free_locked(q, s);
		}
	}
	q->hb_busy = false;
	list_for_each_entry_safe(r, rt, &q->swait, entry) {
		list_del_init(&r->entry);
		list_add_tail(&r->entry,
			      r->state == KRT_SREQ_DATA_WAIT ? &data : &replies);
	}
	for (i = 0; q->sreqs && i < q->depth; i++)
		if (q->sreqs[i].mr) {
			krt_q_mr_put(q, q->sreqs[i].mr);
			q->sreqs[i].mr = NULL;
		}
	spin_unlock_bh(&q->lock);

	ib_mr_pool_destroy(q->qp, &q->qp->rdma_mrs);
	krt_q_hand_back(q, &done);
	list_for_each_entry_safe(r, rt, &data, entry) {
		list_del_init(&r->entry);
		ib_dma_unmap_sg(q->ibdev, r->sgl, r->nr_bvec, krt_sreq_dma_dir(r->pub.dir));
		r->sgl = NULL;
		r->state = KRT_SREQ_SERVICE;
		r->data_done(&r->pub, -ECONNRESET);
	}
	list_for_each_entry_safe(r, rt, &replies, entry) {
		list_del_init(&r->entry);
		krt_sreq_release(r);
	}
	krt_q_unmap_bufs(q);
	if (cancel_work_sync(&q->reset_work))
		krt_conn_put(q->conn);		/* the reset's reference */
}

/**
 * krt_queue_free() - free a queue's memory
 * @q: the queue, destroyed (or never started), unpublished, and no server
 *	request with a service any more (each holds a connection
 *	reference); NULL is ignored
 */
void krt_queue_free(struct krt_queue *q)
{
	u32 i;

	if (!q)
		return;
	WARN_ON_ONCE(!q->unmapped);
	for (i = 0; q->rbufs && i < q->depth; i++)
		kfree(q->rbufs[i].va);
	for (i = 0; q->slots && i < q->depth; i++) {
		kfree(q->slots[i].va);
		kfree(q->slots[i].sg);
	}
	for (i = 0; q->sreqs && i < q->depth; i++) {
		kfree(q->sreqs[i].va);
		kfree(q->sreqs[i].msg);
		kfree(q->sreqs[i].sg);
	}
	kfree(q->rbufs);
	kfree(q->slots);
	kfree(q->sreqs);
	kvfree(q->srv_wrs);
	kvfree(q->srv_sges);
	kfree(q);
}

/*
 * Whether a server transfer of @nents mapped entries goes without an MR:
 * it fits in KRT_WR_DATA RDMA WRs and, for an RDMA READ (a client write),
 * the device can read into unregistered memory efficiently.
 */
static bool krt_sreq_direct(const struct krt_queue *q, enum krt_data_dir dir, int nents)
{
	u32 per = dir == KRT_DATA_READ ? q->srv_sge : q->srv_sge_rd;

	if (!per || !READ_ONCE(krt_srv_direct))
		return false;
	return nents <= per * KRT_WR_DATA;
}

/**
 * krt_srv_data() - move a request's data between the client and the server
 * @sreq: the request, with the service
 * @bvec: the server's buffer: exactly @sreq->data_len bytes
 * @nr_bvec: segments in @bvec
 * @done: called once when the transfer ended (status 0 or -errno), in
 *	softirq context or from a workqueue; the buffer is free again then
 *
 * For a client read (%KRT_DATA_READ) krt RDMA-WRITEs the buffer into the
 * client's pages; for a client write it RDMA-READs the client's pages into
 * the buffer.  At most one transfer per request, before krt_srv_reply().
 * May be called from any context but hardirq or with interrupts disabled.
 *
 * Return: 0 (@done will be called), -EINVAL (no data, wrong length,
 * buffer with gaps or over the MR size, transfer already made),
 * -ECONNRESET (connection gone), -EIO or -EBUSY (the buffer could not be
 * mapped or registered; the connection stays up).  Nothing is allocated:
 * the scatterlist and the work requests are the server request's own.
 */
int krt_srv_data(struct krt_srv_req *sreq, struct bio_vec *bvec,
		 unsigned int nr_bvec,
		 void (*done)(struct krt_srv_req *sreq, int status))
{
	struct krt_sreq *r = container_of(sreq, struct krt_sreq, pub);
	struct krt_queue *q = r->q;
	enum dma_data_direction dir;
	struct scatterlist *sgl = r->sg;
	u32 len, pages;
	int ret;

	if (sreq->dir == KRT_DATA_NONE)
		return -EINVAL;
	ret = krt_frwr_check(bvec, nr_bvec, &len, &pages);
	if (ret || len != sreq->data_len || pages > q->mr_pages)
		return -EINVAL;
	dir = krt_sreq_dma_dir(sreq->dir);
	if (krt_fault_register())
		return -ENOMEM;

	spin_lock_bh(&q->lock);
	/* under the lock: a racing krt_srv_reply() may have claimed it */
	if (r->state != KRT_SREQ_SERVICE || r->sgl) {
		spin_unlock_bh(&q->lock);
		return -EINVAL;
	}
	if (q->dead) {
		spin_unlock_bh(&q->lock);
		return -ECONNRESET;
	}
	/* ORDER: under the lock of a live queue: the device is there */
	krt_frwr_sg_fill(sgl, bvec, nr_bvec);
	ret = krt_frwr_map(q->ibdev, sgl, nr_bvec, dir);
	if (ret < 0) {
		krt_stat_inc(q->conn, KRT_A_STAT_ERR_REG);
		trace_krt_mr_error(q->conn, sreq->req_id, sreq->data_len, ret);
		spin_unlock_bh(&q->lock);
		return ret;
	}
	r->nents = ret;
	r->mr = NULL;
	if (!krt_sreq_direct(q, sreq->dir, r->nents)) {
		/*
		 * Register now, so that a registration failure is the
		 * caller's error, not a reason to reset the connection when
		 * it is posted later.  A server request holds at most one of
		 * depth MRs.
		 */
		r->mr = krt_q_mr_get(q);
		ret = r->mr ? krt_frwr_reg(r->mr, sgl, r->nents, &r->reg,
					   IB_ACCESS_LOCAL_WRITE) : -EBUSY;
		if (ret) {
			krt_stat_inc(q->conn, KRT_A_STAT_ERR_REG);
			trace_krt_mr_error(q->conn, sreq->req_id, sreq->data_len, ret);
			if (r->mr)
				krt_q_mr_put(q, r->mr);
			r->mr = NULL;
			ib_dma_unmap_sg(q->ibdev, sgl, nr_bvec, dir);
			spin_unlock_bh(&q->lock);
			return ret;
		}
	}
	r->sgl = sgl;
	r->nr_bvec = nr_bvec;
	r->data_done = done;
	ret = 0;
	if (q->sq_avail >= KRT_WR_DATA && list_empty(&q->swait)) {
		if (krt_sreq_post_data_locked(q, r)) {
			/* krt_queue_destroy() calls @done */
			r->state = KRT_SREQ_DATA_WAIT;
			list_add_tail(&r->entry, &q->swait);
			krt_q_reset_locked(q, "cannot post a work request");
		}
	} else {
		q->stats.sq_waits++;
		krt_stat_inc(q->conn, KRT_A_STAT_SQ_WAITS);
		trace_krt_sq_wait(q->conn, sreq->req_id, q->credits, q->sq_avail, 0);
		r->state = KRT_SREQ_DATA_WAIT;
		r->wait_start = jiffies;
		list_add_tail(&r->entry, &q->swait);
	}
	spin_unlock_bh(&q->lock);
	return 0;
}
EXPORT_SYMBOL_GPL(krt_srv_data);

/**
 * krt_srv_reply() - answer a request; the service is done with it
 * @sreq: the request
 * @status: 0 or -errno, delivered as the client's @rsp_status
 * @msg: reply message, or NULL
 * @len: its length; over %KRT_MAX_MSG answers -EMSGSIZE without message
 *
 * Exactly once per request, after any krt_srv_data() completed.  If the
 * connection is gone the answer is dropped.  May be called from any
 * context but hard interrupts or with interrupts disabled (it takes a
 * bottom-half lock).  A second reply while krt still holds the request is
 * refused (WARN once, counted as ``api_misuse``); once a reply went, @sreq
 * may serve another request at once, so a reply through a stale pointer
 * is a use after free that krt cannot tell from a first reply.
 */
void krt_srv_reply(struct krt_srv_req *sreq, int status, const void *msg, u32 len)
{
	struct krt_sreq *r = container_of(sreq, struct krt_sreq, pub);
	struct krt_queue *q = r->q;

	if (len > KRT_MAX_MSG) {
		status = -EMSGSIZE;
		len = 0;
	}
	spin_lock_bh(&q->lock);
	/*
	 * A second reply, or one during a transfer: refused, not sent.  Checked
	 * and left under q->lock, so that of two racing replies one goes.
	 */
	if (r->state != KRT_SREQ_SERVICE || r->sgl) {
		spin_unlock_bh(&q->lock);
		WARN_ONCE(1, "krt: reply to a request not with its service\n");
		atomic64_inc(&krt_dp_stats.api_misuse);
		return;
	}
	if (msg && len)
		memcpy(r->va + sizeof(struct krt_msg_hdr), msg, len);
	r->rep_len = msg ? len : 0;
	r->status = status;
	if (q->dead) {
		/* no longer with the service: a racing second reply is refused */
		r->state = KRT_SREQ_REPLY_WAIT;
		spin_unlock_bh(&q->lock);
		krt_sreq_release(r);
		return;
	}
	if (q->credits && q->sq_avail >= KRT_WR_REP && list_empty(&q->swait)) {
		if (krt_sreq_post_reply_locked(q, r)) {
			/* krt_queue_destroy() releases it */
			r->state = KRT_SREQ_REPLY_WAIT;
			list_add_tail(&r->entry, &q->swait);
			krt_q_reset_locked(q, "cannot post a work request");
		}
	} else {
		q->stats.credit_waits += !q->credits;
		if (!q->credits) {
			krt_stat_inc(q->conn, KRT_A_STAT_CREDIT_WAITS);
			trace_krt_credit_wait(q->conn, sreq->req_id, 0, q->sq_avail, 0);
		}
		r->state = KRT_SREQ_REPLY_WAIT;
		r->wait_start = jiffies;
		list_add_tail(&r->entry, &q->swait);
	}
	spin_unlock_bh(&q->lock);
}
EXPORT_SYMBOL_GPL(krt_srv_reply);

/* the counters of struct krt_qstats, in the order debugfs shows them */
#define KRT_QSTAT(f) { #f, offsetof(struct krt_qstats, f) }
static const struct {
	const char *name;
	size_t off;
} krt_qstat_fields[] = {
	KRT_QSTAT(reqs_sent), KRT_QSTAT(reqs_done), KRT_QSTAT(reps_recv),
	KRT_QSTAT(srv_reqs), KRT_QSTAT(srv_reps), KRT_QSTAT(deferred),
	KRT_QSTAT(bytes_read), KRT_QSTAT(bytes_written),
	KRT_QSTAT(late_replies), KRT_QSTAT(timeouts), KRT_QSTAT(malformed),
	KRT_QSTAT(waits), KRT_QSTAT(credit_waits), KRT_QSTAT(sq_waits),
	KRT_QSTAT(wc_errors), KRT_QSTAT(local_inv), KRT_QSTAT(remote_inv),
	KRT_QSTAT(heartbeats), KRT_QSTAT(hb_timeouts),
	KRT_QSTAT(doorbells), KRT_QSTAT(wrs), KRT_QSTAT(srv_direct), KRT_QSTAT(srv_mr),
};

/**
 * krt_queue_show() - a queue's state and counters, for debugfs
 * @q: the queue
 * @m: the file
 */
void krt_queue_show(struct krt_queue *q, struct seq_file *m)
{
	const struct krt_qstats *st = &q->stats;
	size_t i;

	seq_printf(m, "  role: %s\n  depth: %u\n  slots: %u\n  credits: %u/%u\n",
		   q->server ? "server" : "client", q->depth, q->nr_slots,
		   READ_ONCE(q->credits), q->max_credits);
	seq_printf(m, "  sq_avail: %u\n  inflight: %d\n  waiting: %u\n  zombies: %u\n",
		   READ_ONCE(q->sq_avail), atomic_read(&q->inflight),
		   READ_ONCE(q->nr_waiting), READ_ONCE(q->zombies));
	seq_printf(m, "  max_io: %u\n  mr_pages: %u\n  max_inline: %u\n  send_inv: %d\n",
		   q->max_io, q->mr_pages, q->max_inline, q->send_inv);
	/* every counter is in the table */
	BUILD_BUG_ON(ARRAY_SIZE(krt_qstat_fields) != sizeof(*st) / sizeof(u64));
	for (i = 0; i < ARRAY_SIZE(krt_qstat_fields); i++)
		seq_printf(m, "  %s: %llu\n", krt_qstat_fields[i].name,
			   *(const u64 *)((const char *)st + krt_qstat_fields[i].off));
}
