// SPDX-License-Identifier: GPL-2.0
/*
 * krt: the client side of a connection's data path - request slots, the
 * registration of request buffers, replies, submission and the requests
 * handed back when a connection fails.  See queue.c for the whole.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/mr_pool.h>
#include "queue.h"
#include "trace.h"

static unsigned int krt_backlog = 4096;
module_param_named(backlog, krt_backlog, uint, 0644);
MODULE_PARM_DESC(backlog, "Requests that may wait per connection (default: 4096)");

static bool krt_remote_inv = true;
module_param_named(remote_invalidate, krt_remote_inv, bool, 0644);
MODULE_PARM_DESC(remote_invalidate, "Ask servers for SEND_WITH_INV where the device has it (default: on)");

static enum dma_data_direction krt_req_dma_dir(enum krt_data_dir dir)
{
	return dir == KRT_DATA_READ ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
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

/* ---- client side ---- */

/* A slot's message buffer is free again (its SEND ended).  q->lock held. */
static void krt_slot_mbuf_put_locked(struct krt_queue *q, struct krt_slot *s)
{
	if (s->mbuf) {
		list_add(&s->mbuf->entry, &q->mbuf_free);
		s->mbuf = NULL;
	}
}

void krt_slot_free_locked(struct krt_queue *q, struct krt_slot *s)
{
	if (s->inv_left) {
		q->sq_avail++;
		s->inv_left = false;
	}
	if (s->state == KRT_SLOT_ZOMBIE)
		q->zombies--;
	krt_slot_mbuf_put_locked(q, s);
	s->send_held = false;
	s->state = KRT_SLOT_FREE;
	s->req = NULL;
	s->gen++;
	s->timed_out = false;
	if (s != q->hb_slot)
		list_add_tail(&s->entry, &q->free_slots);
}

/* Unmap a slot's buffer (the MR is invalid or destroyed).  q->lock held. */
void krt_slot_unmap_locked(struct krt_queue *q, struct krt_slot *s)
{
	if (!s->nr_sg)
		return;
	ib_dma_unmap_sg(q->ibdev, s->sg, s->nr_sg, krt_req_dma_dir(s->req->dir));
	s->nr_sg = 0;
}

/*
 * Give a slot's MR back, and its large set if it has one (its pages
 * unmapped first).  q->lock held.
 */
void krt_slot_mr_put_locked(struct krt_queue *q, struct krt_slot *s)
{
	if (s->large)
		krt_q_large_put(q, s->large);
	else if (s->mr)
		krt_q_mr_put(q, s->mr);
	s->large = NULL;
	s->mr = NULL;
}

/*
 * A slot has nothing pending: give its MR back, free it and queue its
 * request for completion (not for a zombie: its request completed on
 * timeout).  Caller holds q->lock.
 */
static void krt_slot_finish_locked(struct krt_queue *q, struct krt_slot *s,
				   struct list_head *done)
{
	struct krt_req *req = s->req;

	if (req)
		krt_slot_unmap_locked(q, s);
	krt_slot_mr_put_locked(q, s);
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
void krt_q_complete(struct krt_queue *q, struct list_head *done)
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

void krt_slot_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krt_slot *s = container_of(wc->wr_cqe, struct krt_slot, reg_cqe);

	krt_q_wc_failed(s->q, wc, "REG_MR");	/* unsignalled: errors only */
}

/**
 * krt_slot_zombie_locked() - a timed-out request without an MR ends now
 * @q: its queue; q->lock held
 * @s: its slot, busy, its pages unmapped: it waits for the late reply
 * @done: where the request goes for completion
 *
 * Return: most of the queue's slots are zombies (the caller resets it).
 */
bool krt_slot_zombie_locked(struct krt_queue *q, struct krt_slot *s,
			    struct list_head *done)
{
	s->req->status = -ETIMEDOUT;
	list_add_tail(&s->req->krt_entry, done);
	s->state = KRT_SLOT_ZOMBIE;
	return ++q->zombies > q->nr_slots / 2;
}

/*
 * A request's SEND completed: from its completion, or late from the
 * queue's timer (fault/hold_sends, s->send_held).  q->lock held.
 */
void krt_slot_send_end_locked(struct krt_queue *q, struct krt_slot *s,
			      struct list_head *done)
{
	q->sq_avail += s->mr ? 2 : 1;
	s->pending &= ~KRT_P_SEND;
	/*
	 * the device is done reading the message buffer (a timed-out
	 * request waiting for its reply does not keep it) and an inline
	 * write's pages
	 */
	krt_slot_mbuf_put_locked(q, s);
	if (!s->mr && s->nr_sg) {
		krt_slot_unmap_locked(q, s);
		/* it timed out before this: it ends now, as in krt_q_timer() */
		if (s->timed_out && s->state == KRT_SLOT_BUSY &&
		    (s->pending & KRT_P_REPLY)) {
			q->stats.timeouts++;
			krt_stat_inc(q->conn, KRT_A_STAT_ERR_TIMEOUT);
			atomic64_inc(&krt_dp_stats.timeouts);
			if (krt_slot_zombie_locked(q, s, done))
				krt_q_reset_locked(q, "most requests unanswered");
		}
	}
	if (!s->pending)
		krt_slot_finish_locked(q, s, done);
	else
		krt_q_kick_locked(q, done);
}

void krt_slot_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krt_slot *s = container_of(wc->wr_cqe, struct krt_slot, send_cqe);
	struct krt_queue *q = s->q;
	LIST_HEAD(done);

	krt_q_wc_failed(q, wc, "request SEND");
	spin_lock_bh(&q->lock);
	if (wc->status == IB_WC_SUCCESS && ((!s->mr && s->nr_sg) || s->mbuf) &&
	    krt_fault_hold_sends()) {
		s->send_held = true;	/* krt_q_timer() ends it */
		spin_unlock_bh(&q->lock);
		return;
	}
	krt_slot_send_end_locked(q, s, &done);
	spin_unlock_bh(&q->lock);
	krt_q_complete(q, &done);
}

void krt_slot_inv_done(struct ib_cq *cq, struct ib_wc *wc)
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

/*
 * Post a request in a free slot.  Caller holds q->lock and checked that a
 * slot, a credit, KRT_WR_REQ SQ entries and what the request needs
 * besides (&krt_req.krt_extra, set at submit; none for the heartbeat)
 * are there.
 */
int krt_q_post_req_locked(struct krt_queue *q, struct krt_req *req)
{
	bool hb = req == &q->hb_req, inl = !hb && req->krt_inline;
	bool data = req->dir != KRT_DATA_NONE && !inl, copy = inl && krt_q_inline_copy(req);
	struct krt_slot *s = hb ? q->hb_slot :
		list_first_entry(&q->free_slots, struct krt_slot, entry);
	struct ib_send_wr wr, *first = &wr;
	struct ib_sge sge[1 + KRT_CLT_SGE];
	struct scatterlist *sg;
	struct ib_reg_wr reg;
	u32 hlen = sizeof(struct krt_msg_hdr) + req->msg_len;
	u32 len = hlen + (inl ? req->data_len : 0);
	u16 flags = 0;
	void *va;
	u64 dma;
	int ret, i;

	if (!hb)
		list_del_init(&s->entry);
	s->state = KRT_SLOT_BUSY;
	s->req = req;
	s->pending = KRT_P_SEND | KRT_P_REPLY;
	s->inv_left = false;
	/* the caller saw a message buffer free where one is needed */
	if (req->krt_extra & KRT_X_MBUF) {
		s->mbuf = list_first_entry(&q->mbuf_free, struct krt_mbuf, entry);
		list_del_init(&s->mbuf->entry);
	}
	va = s->mbuf ? s->mbuf->va : s->va;
	dma = s->mbuf ? s->mbuf->dma : s->dma;
	q->sq_avail -= data ? KRT_WR_REQ : 1;
	q->credits--;
	if (data) {
		/* the caller saw a large set free where one is needed */
		if (req->krt_extra & KRT_X_LARGE) {
			s->large = krt_q_large_get(q);
			s->sg = s->large ? s->large->sg : NULL;
			s->mr = s->large ? s->large->mr : NULL;
		} else {
			s->sg = s->sg_own;
			s->mr = krt_q_mr_get(q);
		}
		ret = !s->mr ? -EBUSY : krt_slot_map_locked(q, s, req);
		if (!ret)
			ret = krt_frwr_reg(s->mr, s->sg, req->krt_nents, &reg,
					   req->dir == KRT_DATA_READ ?
					   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE :
					   IB_ACCESS_REMOTE_READ);
		if (ret)
			goto err_unwind;
		reg.wr.wr_cqe = &s->reg_cqe;
		reg.wr.next = &wr;
		first = &reg.wr;
		s->inv_left = true;
		flags = req->dir == KRT_DATA_READ ? KRT_MF_READ : KRT_MF_WRITE;
		if (q->send_inv && READ_ONCE(krt_remote_inv))
			flags |= KRT_MF_INV;
	} else if (copy) {
		/* the data goes in the message, copied: no MR, nothing mapped */
		s->mr = NULL;
		s->large = NULL;
		flags = KRT_MF_WRITE | KRT_MF_INLINE;
	} else if (inl) {
		/*
		 * the data goes in the message, named by its pages (mapped
		 * until the SEND completes), as nvme-rdma's inline data: no
		 * MR, no copy
		 */
		s->mr = NULL;
		s->large = NULL;
		s->sg = s->sg_own;
		ret = krt_slot_map_locked(q, s, req);
		if (ret)
			goto err_unwind;
		flags = KRT_MF_WRITE | KRT_MF_INLINE;
	}
	if (req->krt_sends++)
		flags |= KRT_MF_RESENT;
	krt_q_fill_hdr(q, va, KRT_OP_REQ, flags, len, req->service,
		       (u32)s->gen << 16 | s->idx, 0, req->id);
	if (s->mr || inl) {
		struct krt_msg_hdr *h = va;

		if (s->mr) {
			h->addr = cpu_to_be64(s->mr->iova);
			h->rkey = cpu_to_be32(s->mr->rkey);
		}
		h->data_len = cpu_to_be32(req->data_len);
	}
	if (req->msg_len)
		memcpy(va + sizeof(struct krt_msg_hdr), req->msg, req->msg_len);
	if (copy) {
		krt_q_bvec_copy(va + hlen, req->bvec, req->nr_bvec, req->data_len, false);
		hlen = len;
		q->stats.inline_writes++;
	}
	ib_dma_sync_single_for_device(q->ibdev, dma, hlen, DMA_TO_DEVICE);
	krt_send_wr(&wr, &sge[0], &s->send_cqe, va, dma, hlen, q->lkey,
		    hlen == len && len <= q->max_inline);
	if (inl && !copy) {
		for_each_sg(s->sg, sg, req->krt_nents, i) {
			sge[1 + i].addr = sg_dma_address(sg);
			sge[1 + i].length = sg_dma_len(sg);
			sge[1 + i].lkey = q->lkey;
		}
		wr.num_sge = 1 + req->krt_nents;
		q->stats.inline_writes++;
	}
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
	q->last_tx = jiffies;
	krt_q_count_req(q, req, hb);
	trace_krt_req_send(q->conn, req, hb, q->credits);
	trace_krt_req_resend(q->conn, req);
	return 0;

err_unwind:
	/* the buffer could not be mapped or registered: nothing was posted */
	krt_stat_inc(q->conn, KRT_A_STAT_ERR_REG);
	trace_krt_mr_error(q->conn, req->id, req->data_len, ret);
	krt_slot_unmap_locked(q, s);
	krt_slot_mr_put_locked(q, s);
	q->sq_avail += data ? KRT_WR_REQ : 1;
	q->credits++;
	krt_slot_free_locked(q, s);
	return ret;
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

/*
 * A reply, from the receive completion or late from the queue's held
 * timer (fault/delay_rx).  The held timer and the queue's timer (a SEND
 * completion held by fault/hold_sends) run beside the CQ's handlers:
 * KRT_P_HELD keeps the slot's SEND or LOCAL_INV completion from freeing
 * it while the reply is still handled here.
 */
void krt_q_recv_rep(struct krt_queue *q, struct krt_rbuf *rb,
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
	/*
	 * KRT_P_HELD until the end below, across the unlocked re-post
	 */
	s->pending &= ~KRT_P_REPLY;
	s->pending |= KRT_P_HELD;
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
	s->pending &= ~KRT_P_HELD;
	if (!s->pending)
		krt_slot_finish_locked(q, s, &done);
	spin_unlock_bh(&q->lock);
	krt_q_complete(q, &done);
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
	u8 need;
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
	/* decided once: the parameter may change before it is posted */
	req->krt_inline = krt_q_req_inline(q, req);
	need = krt_q_req_needs(q, req);
	req->krt_extra = need;
	/*
	 * requests that wait only for a large set, a message buffer or an
	 * MR do not hold up others, nor those needing another kind
	 */
	if ((list_empty(&q->waiting) ||
	     (!q->wait_room && q->nr_waiting == q->nr_wait_extra &&
	      !(need & krt_q_kinds(q->nr_wait_x)))) &&
	    !(need & krt_q_missing(q)) && krt_q_room_for_req(q, req)) {
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
	/* it counts for what it needs until it leaves the list */
	krt_q_wait_count(q, req, true);
	need &= krt_q_missing(q);
	/* not for a missing kind: for its order or room, which others keep */
	if (!need)
		q->wait_room = true;
	q->stats.large_waits += !!(need & KRT_X_LARGE);
	q->stats.msg_buf_waits += !!(need & KRT_X_MBUF);
	q->stats.mr_waits += !!(need & KRT_X_MR);
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

/*
 * The requests of a failed queue: the heartbeat ends, the others go back
 * to their peer to be re-sent or failed.  Without q->lock.
 */
void krt_q_hand_back(struct krt_queue *q, struct list_head *done)
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

/*
 * Post the requests that wait for room, in order, while the queue takes
 * requests.  Caller holds q->lock; requests that cannot be posted are put
 * on @done with their status.
 */
void krt_q_kick_clt_locked(struct krt_queue *q, struct list_head *done)
{
	struct krt_req *req, *tmp;
	/* behind the cursor: requests needing nothing extra, and each kind */
	u32 plain = q->nr_waiting - q->nr_wait_extra, left[KRT_X_KINDS];
	u8 skip = 0, need, miss;
	int ret, b;

	memcpy(left, q->nr_wait_x, sizeof(left));
	q->wait_room = false;
	/*
	 * In order, but past requests that wait for a large set, a message
	 * buffer or an MR: once one does, every later one needing any of
	 * what it needs waits too (no overtaking among them, and none takes
	 * what an earlier one still needs).  Stops once nothing behind the
	 * cursor could go, so that a long list of requests waiting for MRs
	 * costs a completion one step.
	 */
	list_for_each_entry_safe(req, tmp, &q->waiting, krt_entry) {
		if (!q->ready)
			break;
		need = req->krt_extra;
		for (b = 0; b < KRT_X_KINDS; b++)
			left[b] -= !!(need & BIT(b));
		miss = krt_q_missing(q);
		if (need & (skip | miss)) {
			skip |= need;
			/* no post after it: what is missing stays so */
			if (!plain && !(krt_q_kinds(left) & ~(skip | miss)))
				break;
			continue;
		}
		if (!krt_q_room_for_req(q, req)) {
			q->wait_room = true;
			break;
		}
		plain -= !need;
		list_del_init(&req->krt_entry);
		krt_q_wait_count(q, req, false);
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
