// SPDX-License-Identifier: GPL-2.0
/*
 * krt: the data path of one connection - receive ring, send slots,
 * credits, request tags, deadlines, message validation.  This file holds
 * what both sides share (receive path, validation, deadlines, setup and
 * teardown); queue_clt.c the client side (slots, replies, submission),
 * queue_srv.c the server side (server requests, transfers, replies), as
 * nvme-rdma and nvmet-rdma, or rtrs-clt and rtrs-srv, keep initiator and
 * target apart.
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
 * drained and its MRs are deregistered.  A write whose data went inline
 * exposed no pages (no MR): it times out as a request without data does.
 *
 * Validation: every received message is checked (magic, version, length
 * against the bytes received, opcode for this side, flags, data length
 * against the max IO size, tag, credits) before anything else; a
 * malformed one is counted, its buffer is not re-posted, and the
 * connection is reset.
 *
 * Locking: q->lock (a spinlock, taken with bottom halves off) protects
 * the slots, server requests, credits, SQ accounting, the waiting lists
 * and the counters.  Completion handlers run in softirq context (server
 * ends accepted under ``srv_poll_wq``: an unbound workqueue), one at a
 * time per connection (one CQ); callbacks of users are called without
 * the lock.  The one exception, in KRT_FAULT=y builds only: messages
 * held by fault/delay_rx are handled from a timer of the queue, beside
 * the CQ's handlers (see krt_q_hold_rx()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <rdma/mr_pool.h>
#include "queue.h"
#include "trace.h"

unsigned int krt_max_io = SZ_1M;
module_param_named(max_io, krt_max_io, uint, 0444);
MODULE_PARM_DESC(max_io, "Largest data buffer of a request, in bytes (default: 1 MiB)");

static unsigned int krt_inline_data = KRT_MAX_MSG;
module_param_named(inline_data, krt_inline_data, uint, 0644);
MODULE_PARM_DESC(inline_data, "Largest client write sent with its data in the request, message included, as nvme-rdma's inline data (bytes, at most 4048; 0: none); a server offers it to connections it accepts from then on (default: 4048)");

static unsigned int krt_large_ios;
module_param_named(large_ios, krt_large_ios, uint, 0444);
MODULE_PARM_DESC(large_ios, "Buffers over 64 KiB one connection carries at once, at most its depth; 0 for a quarter of the depth, at least 4, but no more than 8 MiB of them (default: 0)");

static unsigned int krt_mr_ios;
module_param_named(mr_ios, krt_mr_ios, uint, 0444);
MODULE_PARM_DESC(mr_ios, "Buffers of up to 64 KiB not sent inline that one client connection has registered at once (an MR each), at most its depth; 0 for half the depth, at least 32 (default: 0)");

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

struct krt_dp_stats krt_dp_stats;

unsigned int krt_rnr_retry;
module_param_named(rnr_retry, krt_rnr_retry, uint, 0644);
MODULE_PARM_DESC(rnr_retry, "RNR retries of connections (0..7, 7 = forever); with credits an RNR is a bug, so 0 makes it visible (default: 0)");

static bool krt_check_inline = IS_ENABLED(CONFIG_DEBUG_VIRTUAL);
module_param_named(check_inline, krt_check_inline, bool, 0644);
MODULE_PARM_DESC(check_inline, "Check that inline SENDs carry a kernel virtual address of a krt buffer (default: on with CONFIG_DEBUG_VIRTUAL)");

/*
 * Reset the connection: the work calls krt_conn_fail(), which releases it
 * (disconnect, drain, krt_queue_destroy()).  Caller holds q->lock.
 */
void krt_q_reset_locked(struct krt_queue *q, const char *why)
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
void krt_q_reset(struct krt_queue *q, const char *why)
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

void krt_q_malformed(struct krt_queue *q, const char *why)
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
bool krt_q_wc_failed(struct krt_queue *q, struct ib_wc *wc, const char *what)
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

/* Fill a message header in @buf.  Caller holds q->lock. */
void krt_q_fill_hdr(struct krt_queue *q, void *buf, u8 opcode,
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
	case 7:
		h->flags = cpu_to_be16(KRT_MF_INLINE);
		break;
	case 8:
		h->flags = cpu_to_be16(KRT_MF_WRITE | KRT_MF_INLINE);
		h->data_len = cpu_to_be32(len - sizeof(*h) + 1);
		break;
	}
}

/*
 * Inline data (%KRT_MF_INLINE): copy @len bytes between @buf and the pages
 * of @bvec, into the pages if @to_pages.  The segments were checked
 * (krt_frwr_check()); one may span pages, which are copied one by one.
 */
void krt_q_bvec_copy(void *buf, const struct bio_vec *bvec, unsigned int nr,
		     u32 len, bool to_pages)
{
	unsigned int i;

	for (i = 0; i < nr && len; i++) {
		u32 off = bvec[i].bv_offset, left = min(bvec[i].bv_len, len);

		while (left) {
			struct page *pg = nth_page(bvec[i].bv_page, off >> PAGE_SHIFT);
			u32 po = offset_in_page(off);
			u32 n = min_t(u32, left, PAGE_SIZE - po);

			if (to_pages)
				memcpy_to_page(pg, po, buf, n);
			else
				memcpy_from_page(buf, pg, po, n);
			buf += n;
			off += n;
			left -= n;
			len -= n;
		}
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
void krt_send_wr(struct ib_send_wr *wr, struct ib_sge *sge, struct ib_cqe *cqe,
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
	if (READ_ONCE(krt_check_inline) && inline_ok) {
		atomic64_inc(&krt_dp_stats.inline_checked);
		/*
		 * @va's type keeps a DMA address out at compile time; this
		 * catches a pointer outside the linear map (vmalloc, a
		 * stray DMA address cast back)
		 */
		if (WARN_ONCE(!virt_addr_valid(va),
			      "krt: inline SEND without the buffer's virtual address\n")) {
			/* a krt bug: send it the device's way, by DMA address */
			atomic64_inc(&krt_dp_stats.inline_bad);
			sge->addr = dma;
			wr->send_flags &= ~IB_SEND_INLINE;
		}
	}
}

/*
 * ib_post_send() of a chain, counted: one doorbell and its WRs.  Caller
 * holds q->lock.
 */
int krt_q_post_send(struct krt_queue *q, const struct ib_send_wr *first)
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

/* One more MR in use, for the statistics.  q->lock held. */
static void krt_q_mrs_take(struct krt_queue *q)
{
	krt_hwm_raise(&q->conn->st.mrs_hwm, ++q->mrs_used);
	krt_hwm_raise(&q->conn->peer->st.mrs_hwm, q->mrs_used);
}

/* MRs from the QP's pool, counted for the statistics.  q->lock held. */
struct ib_mr *krt_q_mr_get(struct krt_queue *q)
{
	struct ib_mr *mr = ib_mr_pool_get(q->qp, &q->qp->rdma_mrs);

	if (mr) {
		krt_q_mrs_take(q);
		q->pool_used++;
	}
	return mr;
}

void krt_q_mr_put(struct krt_queue *q, struct ib_mr *mr)
{
	q->mrs_used--;
	q->pool_used--;
	ib_mr_pool_put(q->qp, &q->qp->rdma_mrs, mr);
}

/*
 * A large set for a buffer over q->own_pages pages, or NULL when all are
 * taken (the caller waits for one).  q->lock held.
 */
struct krt_large *krt_q_large_get(struct krt_queue *q)
{
	struct krt_large *l = list_first_entry_or_null(&q->large_free,
						       struct krt_large, entry);

	if (l) {
		list_del_init(&l->entry);
		krt_q_mrs_take(q);
	}
	return l;
}

/* Give a large set back, its MR invalid and its pages unmapped.  q->lock held. */
void krt_q_large_put(struct krt_queue *q, struct krt_large *l)
{
	q->mrs_used--;
	list_add(&l->entry, &q->large_free);
}

/**
 * krt_q_nr_large() - large sets of a queue
 * @depth: its depth
 * @pages: pages of its largest buffer (its max_io's, plus one)
 *
 * Buffers of up to KRT_SG_OWN pages use a slot's or server request's own
 * scatterlist and MR; larger ones one of these few sets, so that a deep
 * queue does not hold a max_io scatterlist and MR per request.  By
 * default they are a quarter of @depth, at least 4, but no more than
 * KRT_LARGE_BYTES of buffers (at least 2): a deep queue of 1 MiB
 * buffers holds 8 sets, not depth / 4.  8 MiB in flight is far more
 * than a link's bandwidth-delay product (100 Gb/s for 100 us is 1.25
 * MB): a set comes back long before a queue could need more.
 *
 * Return: 0 when KRT_SG_OWN pages cover @pages, else ``large_ios``, or
 * the default when it is 0; at most @depth.
 */
u32 krt_q_nr_large(u32 depth, u32 pages)
{
	u32 n = READ_ONCE(krt_large_ios);

	if (pages <= KRT_SG_OWN)
		return 0;
	if (!n) {
		u32 by_bytes = KRT_LARGE_BYTES / ((pages - 1) * PAGE_SIZE);

		n = min(max(depth / 4, 4U), max(by_bytes, 2U));
	}
	return min(n, depth);
}

/**
 * krt_q_clt_nr_mrs() - MRs of a client queue's pool
 * @depth: its depth
 *
 * A data request of up to KRT_SG_OWN pages not sent inline registers
 * its buffer with one of them (a larger one with its large set's); a
 * request finding none free waits, as for a large set.  An MR costs the
 * device a page list (rxe and mlx5: 4 KiB each), so a deep queue keeps
 * half its depth: 64 registered buffers in flight on one connection are
 * far over a link's bandwidth-delay product, and sends, inline writes and
 * large buffers still use the whole depth.
 *
 * Return: ``mr_ios``, or when it is 0 half of @depth but at least 32; at
 * most @depth.
 */
u32 krt_q_clt_nr_mrs(u32 depth)
{
	u32 n = READ_ONCE(krt_mr_ios);

	return min(n ? n : max(depth / 2, 32U), depth);
}

/**
 * krt_q_nr_mbufs() - full-size send buffers of a client queue
 * @depth: its depth
 *
 * A slot's own send buffer holds a header and a message of up to
 * %KRT_SLOT_BUF bytes (inline write data goes by its pages); a longer
 * message takes one of these, or waits for one.
 *
 * Return: an eighth of @depth, at least 4, at most @depth.
 */
u32 krt_q_nr_mbufs(u32 depth)
{
	return min(max(depth / 8, 4U), depth);
}

/*
 * Start what waits, in order: server work first (it frees the client
 * side's slots), then requests.  Caller holds q->lock; requests that
 * cannot be posted are put on @done with their status.
 */
void krt_q_kick_locked(struct krt_queue *q, struct list_head *done)
{
	if (q->dead)
		return;
	if (!krt_q_kick_srv_locked(q))
		return;
	krt_q_kick_clt_locked(q, done);
}

/* ---- receive path ---- */

int krt_q_post_recv(struct krt_queue *q, struct krt_rbuf *rb)
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
		if (flags & KRT_MF_INLINE) {
			if (dir != KRT_MF_WRITE || (flags & KRT_MF_INV) || h->addr || h->rkey)
				return "inline data of no write";
			if (dlen > bytes - sizeof(*h))
				return "inline data over the message";
			if (bytes - sizeof(*h) > q->inline_data)
				return "inline data over the offer";
		}
		if (!dir && (dlen || (flags & KRT_MF_INV)))
			return "data fields without data";
		if (be16_to_cpu(h->service) == KRT_SERVICE_HB && (dir || bytes != sizeof(*h)))
			return "heartbeat with data";
	} else if (flags) {
		return "flags in a reply";
	}
	return NULL;
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

/* A received message, checked and its credits taken: to its side. */
static void krt_q_handle_rx(struct krt_queue *q, struct krt_rbuf *rb,
			    const struct krt_msg_hdr *h, struct ib_wc *wc)
{
	if (q->server)
		krt_q_recv_req(q, rb, h, wc->byte_len);
	else
		krt_q_recv_rep(q, rb, h, wc->byte_len, wc);
}

#ifdef KRT_FAULT_INJECTION
/*
 * fault/delay_rx: hold a received message, checked and its credits
 * taken, and handle it from @held_timer when due, as a slow receiver
 * would: its buffer stays taken (its credit is not granted back) until
 * then.  Held messages are handled in the order they came (one delay
 * for all makes their due times ascend); the others are not held and
 * may overtake them, as replies to different requests may come in any
 * order.  Nothing is held once the queue is dead: krt_queue_destroy()
 * stops the timer and forgets what is held (the buffers are the queue's;
 * the requests whose replies were held complete as every outstanding
 * request does).
 *
 * Return: true when the message was held.
 */
static bool krt_q_hold_rx(struct krt_queue *q, struct krt_rbuf *rb,
			  const struct krt_msg_hdr *h, struct ib_wc *wc)
{
	u32 ms;

	if (READ_ONCE(q->dead) || krt_q_is_hb(q, h))
		return false;
	ms = krt_fault_conn_delay(q->conn);
	if (!ms)
		return false;
	spin_lock_bh(&q->lock);
	if (q->dead) {
		spin_unlock_bh(&q->lock);
		return false;
	}
	rb->due = jiffies + msecs_to_jiffies(ms);
	rb->bytes = wc->byte_len;
	rb->wc_flags = wc->wc_flags;
	rb->inv_rkey = wc->ex.invalidate_rkey;
	/* else the timer is armed for the head, or runs and sees this one */
	if (list_empty(&q->held))
		mod_timer(&q->held_timer, rb->due);
	list_add_tail(&rb->entry, &q->held);
	spin_unlock_bh(&q->lock);
	return true;
}

/* Handle the held messages that are due, in order; re-arm for the next. */
static void krt_q_held_timer(struct timer_list *t)
{
	struct krt_queue *q = from_timer(q, t, held_timer);
	struct krt_rbuf *rb;
	struct ib_wc wc;

	spin_lock_bh(&q->lock);
	while (!q->dead &&
	       (rb = list_first_entry_or_null(&q->held, struct krt_rbuf, entry))) {
		if (time_before(jiffies, rb->due)) {
			mod_timer(&q->held_timer, rb->due);
			break;
		}
		list_del_init(&rb->entry);
		spin_unlock_bh(&q->lock);
		memset(&wc, 0, sizeof(wc));
		wc.byte_len = rb->bytes;
		wc.wc_flags = rb->wc_flags;
		wc.ex.invalidate_rkey = rb->inv_rkey;
		krt_q_handle_rx(q, rb, rb->va, &wc);
		spin_lock_bh(&q->lock);
	}
	spin_unlock_bh(&q->lock);
}

/*
 * The queue is dead: stop handling held messages and forget them.  Their
 * buffers are neither posted nor handled again; krt_queue_destroy()
 * unmaps them with the others.
 */
static void krt_q_held_stop(struct krt_queue *q)
{
	struct krt_rbuf *rb, *tmp;

	del_timer_sync(&q->held_timer);
	spin_lock_bh(&q->lock);
	list_for_each_entry_safe(rb, tmp, &q->held, entry)
		list_del_init(&rb->entry);
	spin_unlock_bh(&q->lock);
}
#else
static bool krt_q_hold_rx(struct krt_queue *q, struct krt_rbuf *rb,
			  const struct krt_msg_hdr *h, struct ib_wc *wc)
{
	return false;
}

static void krt_q_held_timer(struct timer_list *t)
{
}

static void krt_q_held_stop(struct krt_queue *q)
{
}
#endif

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
	 * fault/drop_rx, drop_rx_conn: a lost request or reply (not a
	 * heartbeat); fault/drop_replies: a lost reply, its request served
	 */
	if (!krt_q_is_hb(q, h) &&
	    (krt_fault_drop() || krt_fault_conn_drop(q->conn) ||
	     (!q->server && krt_fault_drop_reply()))) {
		krt_q_drop_rx(q, rb);
		return;
	}
	/* fault/delay_rx: handled late, from the held timer */
	if (krt_q_hold_rx(q, rb, h, wc))
		return;
	krt_q_handle_rx(q, rb, h, wc);
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
		/*
		 * A reply waits for a credit that the client does not return.
		 * Waits for SQ room alone do not count: a slow device, not
		 * the client (the QP's own timeouts bound those).
		 */
		if (q->credits)
			return NULL;
		list_for_each_entry(r, &q->swait, entry) {
			unsigned long since;

			/* a heartbeat's answer waits first, but is the newest */
			if ((r->state != KRT_SREQ_REPLY_WAIT && r->state != KRT_SREQ_CHAIN_WAIT) ||
			    r->pub.service == KRT_SERVICE_HB)
				continue;
			since = time_after(r->wait_start, q->nocredit_since) ?
				r->wait_start : q->nocredit_since;
			if (time_after(jiffies, since + bound))
				return "client returns no credits";
			break;
		}
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
	/*
	 * A heartbeat goes when nothing came for an interval, and also when
	 * nothing went: the server bounds the time it hears nothing from
	 * the client, which a client only taking in a long stream of
	 * replies would otherwise pass.
	 */
	if ((idle < hb && time_before(jiffies, q->last_tx + hb)) ||
	    q->hb_busy || !q->credits || !q->sq_avail)
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
	u32 i, n = 0, expired;

	spin_lock_bh(&q->lock);
	if (q->unmapped) {
		spin_unlock_bh(&q->lock);
		return;
	}
	list_for_each_entry_safe(req, tmp, &q->waiting, krt_entry) {
		if (time_before(jiffies, req->krt_deadline))
			continue;
		list_del_init(&req->krt_entry);
		krt_q_wait_count(q, req, false);
		req->status = -ETIMEDOUT;
		list_add_tail(&req->krt_entry, &done);
		n++;
	}
	expired = n;
	for (i = 0; !q->server && i < q->nr_slots; i++) {
		struct krt_slot *s = &q->slots[i];

		/* a SEND completion held by fault/hold_sends, once it ended */
		if (s->send_held && !krt_fault_hold_sends()) {
			s->send_held = false;
			krt_slot_send_end_locked(q, s, &done);
		}
		/* answered, waiting only for its SEND or LOCAL_INV: not late */
		if (s->state != KRT_SLOT_BUSY || s->timed_out ||
		    !(s->pending & KRT_P_REPLY) ||
		    time_before(jiffies, s->req->krt_deadline))
			continue;
		s->timed_out = true;
		/*
		 * the device still reads an inline write's pages: it ends,
		 * and is counted, when its SEND does (krt_slot_send_end_locked())
		 */
		if (!s->mr && s->nr_sg)
			continue;
		n++;
		if (s->mr) {
			/* the server may still touch the pages: reset */
			why = "request with data timed out";
			continue;
		}
		if (krt_slot_zombie_locked(q, s, &done))
			why = "most requests unanswered";
	}
	q->stats.timeouts += n;
	if (n)
		krt_stat_add(q->conn, KRT_A_STAT_ERR_TIMEOUT, n);
	/*
	 * Completions post what waits for room; this only catches a wait
	 * that no completion ends (fault/stall_data ending)
	 */
	if (q->server && !q->dead && !list_empty(&q->swait))
		krt_q_kick_srv_locked(q);
	/*
	 * a request gone from the waiting list may have held up later ones
	 * needing what is free (a kind it also needed, or its order)
	 */
	if (!q->server && !q->dead && expired)
		krt_q_kick_clt_locked(q, &done);
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

/* Deregister the large sets' MRs (before the QP and its PD go). */
static void krt_q_large_mrs_free(struct krt_queue *q)
{
	u32 i;

	for (i = 0; q->large && i < q->nr_large; i++) {
		if (q->large[i].mr)
			ib_dereg_mr(q->large[i].mr);
		q->large[i].mr = NULL;
	}
}

static void *krt_q_buf(struct krt_queue *q, u64 *dma, u32 size, enum dma_data_direction dir)
{
	void *va = krt_fault_connect() ? NULL : kzalloc(size, GFP_KERNEL);

	if (!va)
		return NULL;
	*dma = ib_dma_map_single(q->ibdev, va, size, dir);
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
			ib_dma_unmap_single(q->ibdev, q->slots[i].dma, KRT_SLOT_BUF,
					    DMA_TO_DEVICE);
	for (i = 0; q->mbufs && i < q->nr_mbufs; i++)
		if (q->mbufs[i].va)
			ib_dma_unmap_single(q->ibdev, q->mbufs[i].dma, KRT_MSG_BUF,
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
		q->rbufs[i].va = krt_q_buf(q, &q->rbufs[i].dma, KRT_MSG_BUF, DMA_FROM_DEVICE);
		if (!q->rbufs[i].va)
			return -ENOMEM;
	}
	/*
	 * One array for every slot's or server request's own scatterlist,
	 * one for the large sets': kmallocs would each round up to a power
	 * of two (the large sets' 8 KiB and a little to 16 KiB)
	 */
	q->sgs = vzalloc(array3_size(q->depth, q->own_pages, sizeof(*q->sgs)));
	if (!q->sgs)
		return -ENOMEM;
	if (q->nr_large) {
		q->large = kcalloc(q->nr_large, sizeof(*q->large), GFP_KERNEL);
		q->large_sgs = vzalloc(array3_size(q->nr_large, q->mr_pages,
						   sizeof(*q->large_sgs)));
		if (!q->large || !q->large_sgs)
			return -ENOMEM;
		for (i = 0; i < q->nr_large; i++) {
			q->large[i].sg = &q->large_sgs[i * q->mr_pages];
			list_add_tail(&q->large[i].entry, &q->large_free);
		}
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
			s->va = krt_q_buf(q, &s->dma, KRT_SLOT_BUF, DMA_TO_DEVICE);
			s->sg_own = &q->sgs[i * q->own_pages];
			if (!s->va)
				return -ENOMEM;
		}
		q->nr_mbufs = krt_q_nr_mbufs(q->depth);
		q->mbufs = kcalloc(q->nr_mbufs, sizeof(*q->mbufs), GFP_KERNEL);
		if (!q->mbufs)
			return -ENOMEM;
		for (i = 0; i < q->nr_mbufs; i++) {
			struct krt_mbuf *b = &q->mbufs[i];

			list_add_tail(&b->entry, &q->mbuf_free);
			b->va = krt_q_buf(q, &b->dma, KRT_MSG_BUF, DMA_TO_DEVICE);
			if (!b->va)
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
		r->idx = i;
		if (q->srv_sge) {
			r->rwr = &q->srv_wrs[i * KRT_WR_DATA];
			r->sge = &q->srv_sges[i * KRT_WR_DATA * q->srv_sge];
		}
		r->data_cqe.done = krt_sreq_data_err;
		r->inv_cqe.done = krt_sreq_data_done;
		r->send_cqe.done = krt_sreq_send_done;
		list_add_tail(&r->entry, &q->sfree);
		r->sg_own = &q->sgs[i * q->own_pages];
		r->va = krt_q_buf(q, &r->dma, KRT_MSG_BUF, DMA_TO_DEVICE);
		if (!r->va)
			return -ENOMEM;
		/* the request's copy sits where its reply's message will */
		r->msg = r->va + sizeof(struct krt_msg_hdr);
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
	u32 i, pages, max_io;
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
	INIT_LIST_HEAD(&q->large_free);
	INIT_LIST_HEAD(&q->mbuf_free);
	INIT_LIST_HEAD(&q->sfree);
	INIT_LIST_HEAD(&q->swait);
	INIT_LIST_HEAD(&q->deferred);
	INIT_LIST_HEAD(&q->deferred_large);
	INIT_WORK(&q->reset_work, krt_q_reset_work);
	timer_setup(&q->timer, krt_q_timer, 0);
	INIT_LIST_HEAD(&q->held);
	timer_setup(&q->held_timer, krt_q_held_timer, 0);
	q->server = conn->inbound;
	q->depth = conn->depth;
	q->nr_slots = conn->depth;
	q->credits = conn->depth;
	q->nocredit_since = jiffies;
	q->max_credits = conn->depth;
	q->sq_avail = KRT_WR_REQ * conn->depth;
	q->max_inline = max_inline;
	q->send_inv = dev->caps.send_inv;
	q->hb_ms = conn->hb_ms;
	q->hb_misses = max_t(u32, conn->hb_misses, 1);
	q->last_rx = jiffies;
	q->last_tx = jiffies;
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
		q->max_sgl_rd = dev->ibdev->attrs.max_sgl_rd;
		q->iwarp = rdma_protocol_iwarp(dev->ibdev, id->port_num);
		if (q->iwarp)
			q->srv_sge_rd = 0;
	} else {
		q->clt_sge = min_t(u32, id->qp->max_write_sge, KRT_CLT_SGE);
	}
	max_io = krt_q_max_io(conn->max_io);
	pages = min_t(u32, dev->caps.max_fr_pages, DIV_ROUND_UP(max_io, PAGE_SIZE) + 1);
	q->mr_pages = pages;
	q->max_io = min_t(u32, max_io, (pages - 1) * PAGE_SIZE);
	q->own_pages = min_t(u32, pages, KRT_SG_OWN);
	q->nr_large = krt_q_nr_large(q->depth, pages);
	q->nr_mrs = q->server ? krt_q_srv_nr_mrs(q) : krt_q_clt_nr_mrs(q->depth);
	/*
	 * more than charged only for a server QP that takes fewer SGEs than
	 * its device said (one MR per request): charge the difference.  A
	 * client's never (mr_ios is read-only, its depth only shrinks).
	 */
	if (q->server)
		krt_mem_charge_mrs(conn, q->nr_mrs, q->own_pages);

	ret = krt_q_alloc_bufs(q);
	if (!ret && q->server)
		ret = krt_q_srv_publish(q);
	if (ret)
		goto err_bufs;
	ret = krt_fault_connect() ? -ENOMEM :
		ib_mr_pool_init(id->qp, &id->qp->rdma_mrs, q->nr_mrs,
				IB_MR_TYPE_MEM_REG, q->own_pages, 0);
	if (ret)
		goto err_bufs;
	for (i = 0; i < q->nr_large; i++) {
		struct ib_mr *mr = krt_fault_connect() ? ERR_PTR(-ENOMEM) :
			ib_alloc_mr(id->qp->pd, IB_MR_TYPE_MEM_REG, pages);

		if (IS_ERR(mr)) {
			ret = PTR_ERR(mr);
			goto err_large;
		}
		q->large[i].mr = mr;
	}
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
err_large:
	krt_q_large_mrs_free(q);
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
 * @inline_data: bytes of message and write data one request may carry:
 *	a server's offer (krt_q_inline_offer()), or what a client's server
 *	offered
 *
 * Called from the cm handler before the connection takes requests; may
 * sleep.  A client keeps the slots and MRs of the depth granted.
 */
void krt_queue_set_remote(struct krt_queue *q, u32 credits, u32 depth, u32 max_io,
			  u32 inline_data)
{
	struct krt_slot *s, *tmp;
	struct ib_mr *mr;
	LIST_HEAD(extra);
	u32 slots;

	spin_lock_bh(&q->lock);
	q->credits = min_t(u32, credits, KRT_MAX_DEPTH);
	q->nocredit_since = jiffies;
	q->max_credits = q->credits;
	q->max_io = min(q->max_io, max_io);
	q->inline_data = min_t(u32, inline_data, KRT_MAX_MSG);
	if (!q->server) {
		/* the last slot granted is the heartbeat's */
		slots = clamp_t(u32, depth, 1, q->nr_slots);
		q->hb_slot = slots >= 2 ? &q->slots[slots - 1] : NULL;
		q->nr_slots = slots - !!q->hb_slot;
		list_for_each_entry_safe(s, tmp, &q->free_slots, entry)
			if (s->idx >= q->nr_slots)
				list_del_init(&s->entry);
		/*
		 * MRs for the depth granted, not the one asked for: no request
		 * holds one yet, so the others are all in the pool
		 */
		while (q->nr_mrs > krt_q_clt_nr_mrs(slots) &&
		       (mr = ib_mr_pool_get(q->qp, &q->qp->rdma_mrs))) {
			ib_mr_pool_put(q->qp, &extra, mr);
			WRITE_ONCE(q->nr_mrs, q->nr_mrs - 1);
		}
	}
	spin_unlock_bh(&q->lock);
	/* ORDER: deregistered outside q->lock: ib_dereg_mr() may sleep */
	ib_mr_pool_destroy(q->qp, &extra);
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
 * krt_queue_inline_data() - negotiated bytes of message and inline write data
 * @q: the queue
 *
 * Return: bytes, 0 when writes never carry their data in the request.
 */
u32 krt_queue_inline_data(struct krt_queue *q)
{
	return READ_ONCE(q->inline_data);
}

/**
 * krt_q_inline_offer() - what a server offers for inline write data now
 *
 * Return: ``inline_data``, at most %KRT_MAX_MSG (what a receive buffer
 * holds after the header).
 */
u32 krt_q_inline_offer(void)
{
	return min_t(u32, READ_ONCE(krt_inline_data), KRT_MAX_MSG);
}

/**
 * krt_q_max_io() - what a connection's buffers are sized for
 * @remote: the remote's max IO size, or 0 for the local one only
 *
 * A server needs no larger scatterlists and MRs than its client may send
 * requests for: a client of 128 KiB holds no 1 MiB large sets there.
 *
 * Return: the smaller of @remote and the local ``max_io``.
 */
u32 krt_q_max_io(u32 remote)
{
	return remote ? min(remote, krt_max_io) : krt_max_io;
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
 * krt_queue_mrs() - MRs of a queue (pool and large sets), and how many are in use
 * @q: the queue, or NULL
 * @used: set to the MRs taken now
 *
 * Return: their number.  Caller holds krt_pool_lock (the queue stays).
 */
u32 krt_queue_mrs(struct krt_queue *q, u32 *used)
{
	*used = q ? READ_ONCE(q->mrs_used) : 0;
	return q && !READ_ONCE(q->unmapped) ? READ_ONCE(q->nr_mrs) + q->nr_large : 0;
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
	 * ones find it stopped.  A server queue is never on that list.
	 */
	if (!q->server)
		synchronize_rcu();
	del_timer_sync(&q->timer);
	/* ORDER: dead, so nothing is held any more; then stop the held timer */
	krt_q_held_stop(q);
	ib_drain_qp(q->qp);

	spin_lock_bh(&q->lock);
	q->unmapped = true;
	list_splice_init(&q->waiting, &done);
	q->nr_waiting = 0;
	q->nr_wait_extra = 0;
	memset(q->nr_wait_x, 0, sizeof(q->nr_wait_x));
	list_for_each_entry(req, &done, krt_entry)
		req->status = -ECONNRESET;
	for (i = 0; q->slots && i < q->depth; i++) {
		struct krt_slot *s = &q->slots[i];

		if (s->req)
			krt_slot_unmap_locked(q, s);
		krt_slot_mr_put_locked(q, s);
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
			      r->state == KRT_SREQ_REPLY_WAIT ? &replies : &data);
	}
	for (i = 0; q->sreqs && i < q->depth; i++) {
		struct krt_sreq *r = &q->sreqs[i];

		/* a large set is the queue's: it goes below, whoever holds it */
		if (r->mr && !r->large)
			krt_q_mr_put(q, r->mr);
		r->mr = NULL;
	}
	spin_unlock_bh(&q->lock);

	ib_mr_pool_destroy(q->qp, &q->qp->rdma_mrs);
	krt_q_large_mrs_free(q);
	krt_q_hand_back(q, &done);
	list_for_each_entry_safe(r, rt, &data, entry) {
		list_del_init(&r->entry);
		krt_sreq_xfer_abort(r);
	}
	list_for_each_entry_safe(r, rt, &replies, entry) {
		list_del_init(&r->entry);
		krt_sreq_release(r);
	}
	krt_q_unmap_bufs(q);
	if (cancel_work_sync(&q->reset_work))
		krt_conn_put(q->conn);		/* the reset's reference */
}

/* krt_queue_free()'s work: everything a queue allocated, and itself */
static void krt_q_free_work(struct work_struct *work)
{
	struct krt_queue *q = container_of(work, struct krt_queue, free_work);
	u32 i;

	krt_q_srv_unpublish(q);
	for (i = 0; q->rbufs && i < q->depth; i++)
		kfree(q->rbufs[i].va);
	for (i = 0; q->slots && i < q->depth; i++)
		kfree(q->slots[i].va);
	for (i = 0; q->mbufs && i < q->nr_mbufs; i++)
		kfree(q->mbufs[i].va);
	kfree(q->mbufs);
	for (i = 0; q->sreqs && i < q->depth; i++)
		kfree(q->sreqs[i].va);
	kfree(q->rbufs);
	kfree(q->slots);
	kfree(q->sreqs);
	kvfree(q->sgs);
	kfree(q->large);
	kvfree(q->large_sgs);
	kvfree(q->srv_wrs);
	kvfree(q->srv_sges);
	/* a ref lookup may have found @q just before it left */
	kfree_rcu(q, rcu);
}

/**
 * krt_queue_free() - free a queue's memory
 * @q: the queue, destroyed (or never started), unpublished, and no server
 *	request with a service any more (each holds a connection
 *	reference); NULL is ignored
 */
void krt_queue_free(struct krt_queue *q)
{
	if (!q)
		return;
	WARN_ON_ONCE(!q->unmapped);
	/*
	 * ORDER: a connection's last reference may go in any context (a
	 * service's krt_srv_reply() under its spinlock, a submitter under
	 * rcu_read_lock()), and vfree() may sleep: free in krt_wq, which the
	 * module destroys (and so flushes) after every connection is gone
	 */
	INIT_WORK(&q->free_work, krt_q_free_work);
	queue_work(krt_wq, &q->free_work);
}

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
	KRT_QSTAT(large_waits), KRT_QSTAT(large_deferred),
	KRT_QSTAT(inline_writes), KRT_QSTAT(srv_inline), KRT_QSTAT(msg_buf_waits),
	KRT_QSTAT(mr_waits),
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
	seq_printf(m, "  max_io: %u\n  mr_pages: %u\n  own_pages: %u\n  large_sets: %u\n",
		   q->max_io, q->mr_pages, q->own_pages, q->nr_large);
	seq_printf(m, "  pool_mrs: %u\n  pool_mrs_used: %u\n  msg_bufs: %u\n  send_sge: %u\n",
		   READ_ONCE(q->nr_mrs), READ_ONCE(q->pool_used), q->nr_mbufs,
		   q->server ? q->srv_sge : q->clt_sge);
	seq_printf(m, "  max_inline: %u\n  send_inv: %d\n  inline_data: %u\n", q->max_inline,
		   q->send_inv, q->inline_data);
	/* every counter is in the table */
	BUILD_BUG_ON(ARRAY_SIZE(krt_qstat_fields) != sizeof(*st) / sizeof(u64));
	for (i = 0; i < ARRAY_SIZE(krt_qstat_fields); i++)
		seq_printf(m, "  %s: %llu\n", krt_qstat_fields[i].name,
			   *(const u64 *)((const char *)st + krt_qstat_fields[i].off));
}
