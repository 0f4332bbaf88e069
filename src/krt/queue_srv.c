// SPDX-License-Identifier: GPL-2.0
/*
 * krt: the server side of a connection's data path - server requests,
 * their services, data transfers with and without an MR, replies.  See
 * queue.c for the whole.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <rdma/mr_pool.h>
#include "queue.h"
#include "trace.h"

/* Server transfers without an MR where they fit: krt_sreq_direct(). */
static bool krt_srv_direct = true;
module_param_named(srv_direct, krt_srv_direct, bool, 0644);
MODULE_PARM_DESC(srv_direct, "Server transfers of up to 3 WRs of 16 entries by DMA address, without an MR (default: Y; N: REG_MR and LOCAL_INV for each, while one of the 8 MRs of a connection accepted under Y is free, and always on connections accepted under N)");

/*
 * Server queues by id, for &struct krt_srv_ref: looked up under RCU (a
 * queue is freed a grace period after it left), ids allocated cyclically
 * so that a ref outlives its queue's id for a long time.
 */
static DEFINE_XARRAY_ALLOC1(krt_srv_queues);
static u32 krt_srv_next_id;	/* krt_srv_queues' lock */

/* The server's buffer moves the other way from the client's. */
enum dma_data_direction krt_sreq_dma_dir(enum krt_data_dir dir)
{
	return dir == KRT_DATA_READ ? DMA_TO_DEVICE : DMA_FROM_DEVICE;
}

/* ---- server side ---- */

static void krt_sreq_put_locked(struct krt_queue *q, struct krt_sreq *r)
{
	r->state = KRT_SREQ_FREE;
	list_add_tail(&r->entry, &q->sfree);
}

/*
 * @r takes a new request: a ref to its previous one is stale from here.
 * Caller holds q->lock.
 */
static void krt_sreq_take_locked(struct krt_sreq *r)
{
	list_del_init(&r->entry);
	WRITE_ONCE(r->gen, r->gen + 1 ?: 1);
}

/**
 * krt_q_srv_publish() - give a server queue an id for refs
 * @q: the queue, its server requests allocated
 *
 * Return: 0 or -ENOMEM, -EBUSY (ids exhausted).
 */
int krt_q_srv_publish(struct krt_queue *q)
{
	u32 id;
	int ret;

	/* the id is set on failure too: only a stored one is the queue's */
	ret = xa_alloc_cyclic(&krt_srv_queues, &id, q, xa_limit_32b,
			      &krt_srv_next_id, GFP_KERNEL);
	if (ret < 0)
		return ret;
	q->srv_id = id;
	return 0;
}

/**
 * krt_q_srv_unpublish() - refs find @q no more
 * @q: the queue, about to be freed: no server request with a service
 *
 * ORDER: @q's memory goes a grace period later (kfree_rcu()): a lookup
 * that found it takes q->lock and sees @gone before its arrays went.
 */
void krt_q_srv_unpublish(struct krt_queue *q)
{
	if (!q->srv_id)
		return;
	spin_lock_bh(&q->lock);
	q->gone = true;
	spin_unlock_bh(&q->lock);
	xa_erase(&krt_srv_queues, q->srv_id);
}

static void krt_q_serve(struct krt_queue *q, struct krt_sreq *r,
			struct krt_rbuf *rb, const struct krt_msg_hdr *h, u32 bytes);

/*
 * Whether a request's data, at any offset in its first page, is over
 * q->own_pages pages: its server request takes a large set for it.  @h
 * was checked (data_len at most max_io).
 */
static bool krt_q_req_needs_large(const struct krt_queue *q, const struct krt_msg_hdr *h)
{
	u16 flags = be16_to_cpu(h->flags);

	if (!(flags & (KRT_MF_READ | KRT_MF_WRITE)) || (flags & KRT_MF_INLINE))
		return false;
	return krt_q_len_needs_large(q, be32_to_cpu(h->data_len));
}

/*
 * The received request that @r, just released, serves next: the older of
 * the first one waiting for a server request and the first one waiting
 * for a large set, if one is free; it takes @r (and the set).  Caller
 * holds q->lock.  Return: the request's buffer, or NULL (@r stays free).
 */
static struct krt_rbuf *krt_sreq_next_locked(struct krt_queue *q, struct krt_sreq *r)
{
	struct krt_rbuf *rb = list_first_entry_or_null(&q->deferred, struct krt_rbuf, entry);
	struct krt_rbuf *lrb = list_first_entry_or_null(&q->deferred_large,
							struct krt_rbuf, entry);

	if (q->dead)
		return NULL;
	if (lrb && !list_empty(&q->large_free) && (!rb || lrb->t_recv < rb->t_recv))
		rb = lrb;
	if (!rb)
		return NULL;
	list_del_init(&rb->entry);
	r->large = rb == lrb ? krt_q_large_get(q) : NULL;
	krt_sreq_take_locked(r);
	return rb;
}

/*
 * The service is done with @r: let it go, and give it to a request that
 * waits for one.  Outside q->lock.
 */
void krt_sreq_release(struct krt_sreq *r)
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
	/* a large set whose MR a failed transfer left stays for teardown */
	if (r->large && !r->mr) {
		krt_q_large_put(q, r->large);
		r->large = NULL;
	}
	rb = krt_sreq_next_locked(q, r);
	if (!rb)
		krt_sreq_put_locked(q, r);
	spin_unlock_bh(&q->lock);
	if (svc)
		krt_service_put(svc);
	if (rb)
		krt_q_serve(q, r, rb, rb->va, rb->bytes);
	krt_conn_put(conn);		/* the server request's */
}

/*
 * Build @r's reply SEND (with invalidate where the client asked for it)
 * and take its credit and SQ entry.  Caller holds q->lock.
 */
static void krt_sreq_build_reply_locked(struct krt_queue *q, struct krt_sreq *r,
					struct ib_send_wr *wr, struct ib_sge *sge)
{
	u32 len = sizeof(struct krt_msg_hdr) + r->rep_len;

	krt_q_fill_hdr(q, r->va, KRT_OP_REP, 0, len, r->pub.service, r->tag,
		       r->status, r->pub.req_id);
	ib_dma_sync_single_for_device(q->ibdev, r->dma, len, DMA_TO_DEVICE);
	krt_send_wr(wr, sge, &r->send_cqe, r->va, r->dma, len, q->lkey,
		    len <= q->max_inline);
	if (r->inv && q->send_inv) {
		wr->opcode = IB_WR_SEND_WITH_INV;
		wr->ex.invalidate_rkey = r->rkey;
	}
	if (!--q->credits)
		q->nocredit_since = jiffies;
	q->sq_avail -= KRT_WR_REP;
	if (r->pub.service != KRT_SERVICE_HB)
		q->stats.srv_reps++;
}

/* A reply went to the device: what it carried, how long the service took. */
static void krt_sreq_reply_posted(struct krt_queue *q, struct krt_sreq *r)
{
	if (r->pub.service == KRT_SERVICE_HB)
		return;
	krt_stat_add(q->conn, KRT_A_STAT_SRV_MSG_BYTES_OUT, r->rep_len);
	krt_stats_lat(q->conn, q->conn->peer, KRT_HIST_SVC, krt_ns_since(r->t_recv));
}

static int krt_sreq_post_reply_locked(struct krt_queue *q, struct krt_sreq *r)
{
	struct ib_send_wr wr;
	struct ib_sge sge;
	int ret;

	krt_sreq_build_reply_locked(q, r, &wr, &sge);
	r->state = KRT_SREQ_REPLY;
	ret = krt_q_post_send(q, &wr);
	if (!ret)
		krt_sreq_reply_posted(q, r);
	return ret;
}

/* A transfer's status: its own WRs' error, else its last WR's. */
static int krt_sreq_wc_status(struct krt_queue *q, struct krt_sreq *r, struct ib_wc *wc,
			      const char *what)
{
	int status = r->data_status;

	if (krt_q_wc_failed(q, wc, what) && !status)
		status = wc->status == IB_WC_WR_FLUSH_ERR ? -ECONNRESET : -EIO;
	return status;
}

/*
 * A transfer's last WR completed, its pages unmapped: its @wrs SQ entries
 * and its MR back, its buffer no longer @r's.  A failed one leaves the MR
 * to krt_queue_destroy() and marks the queue dead first (@why), before
 * @r can be released: else a deferred request would take @r and drop the
 * MR it keeps, and a flush can come before the QP's fatal event marks the
 * queue.  Caller holds q->lock.
 */
static void krt_sreq_xfer_end_locked(struct krt_queue *q, struct krt_sreq *r,
				     struct ib_wc *wc, u32 wrs, const char *why)
{
	q->sq_avail += wrs;
	if (wc->status != IB_WC_SUCCESS) {
		krt_q_reset_locked(q, why);
	} else if (r->mr) {
		/* a large set's MR stays with it until krt_sreq_release() */
		if (!r->large)
			krt_q_mr_put(q, r->mr);
		r->mr = NULL;
	}
	r->sgl = NULL;
}

/*
 * The last WR of a transfer and reply posted together
 * (krt_srv_data_reply()) completed, the reply SEND or the LOCAL_INV
 * behind it, and with it every WR in front of it: unmap, give the MR
 * back, tell the service its buffer is free and release @r.
 */
static void krt_sreq_chain_done(struct krt_sreq *r, struct ib_wc *wc)
{
	struct krt_queue *q = r->q;
	int status = krt_sreq_wc_status(q, r, wc, "RDMA transfer and reply");
	LIST_HEAD(done);

	ib_dma_unmap_sg(q->ibdev, r->sgl, r->nr_bvec, krt_sreq_dma_dir(r->pub.dir));
	spin_lock_bh(&q->lock);
	krt_sreq_xfer_end_locked(q, r, wc, KRT_WR_DATA + KRT_WR_REP,
				 "a transfer and reply failed");
	krt_q_kick_locked(q, &done);
	spin_unlock_bh(&q->lock);
	krt_q_complete(q, &done);
	r->data_done(&r->pub, status);
	krt_sreq_release(r);
}

/**
 * krt_sreq_xfer_abort() - end a transfer that never went, its queue gone
 * @r: waiting for room (DATA_WAIT or CHAIN_WAIT) when its queue was
 *	destroyed; its pages still mapped
 *
 * The service's done() gets -ECONNRESET; a transfer that carried the
 * answer (krt_srv_data_reply()) is then released, its answer dropped.
 */
void krt_sreq_xfer_abort(struct krt_sreq *r)
{
	struct krt_queue *q = r->q;
	bool chain = r->state == KRT_SREQ_CHAIN_WAIT;

	ib_dma_unmap_sg(q->ibdev, r->sgl, r->nr_bvec, krt_sreq_dma_dir(r->pub.dir));
	/* a reply (by ref) checks both under the lock */
	spin_lock_bh(&q->lock);
	r->sgl = NULL;
	if (!chain)
		r->state = KRT_SREQ_SERVICE;
	spin_unlock_bh(&q->lock);
	r->data_done(&r->pub, -ECONNRESET);
	if (chain) {
		atomic64_inc(&krt_dp_stats.replies_dropped);
		krt_sreq_release(r);
	}
}

void krt_sreq_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krt_sreq *r = container_of(wc->wr_cqe, struct krt_sreq, send_cqe);
	struct krt_queue *q = r->q;
	LIST_HEAD(done);

	if (r->chain) {
		krt_sreq_chain_done(r, wc);
		return;
	}
	krt_q_wc_failed(q, wc, "reply SEND");
	spin_lock_bh(&q->lock);
	q->sq_avail += KRT_WR_REP;
	krt_q_kick_locked(q, &done);
	spin_unlock_bh(&q->lock);
	krt_q_complete(q, &done);
	krt_sreq_release(r);
}

void krt_sreq_data_err(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krt_sreq *r = container_of(wc->wr_cqe, struct krt_sreq, data_cqe);

	/* REG_MR or RDMA READ/WRITE: unsignalled, so errors only */
	if (krt_q_wc_failed(r->q, wc, "RDMA transfer"))
		r->data_status = wc->status == IB_WC_WR_FLUSH_ERR ? -ECONNRESET : -EIO;
}

void krt_sreq_data_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krt_sreq *r = container_of(wc->wr_cqe, struct krt_sreq, inv_cqe);
	struct krt_queue *q = r->q;
	LIST_HEAD(done);
	int status = krt_sreq_wc_status(q, r, wc, r->mr ? "LOCAL_INV" : "RDMA transfer");

	/*
	 * ORDER: the transfer is over (or the QP in error): unmap, then give
	 * @r back to its service under the lock, which a reply checks.
	 */
	ib_dma_unmap_sg(q->ibdev, r->sgl, r->nr_bvec, krt_sreq_dma_dir(r->pub.dir));
	spin_lock_bh(&q->lock);
	krt_sreq_xfer_end_locked(q, r, wc, KRT_WR_DATA, "a transfer failed");
	r->state = KRT_SREQ_SERVICE;
	krt_q_kick_locked(q, &done);
	spin_unlock_bh(&q->lock);
	krt_q_complete(q, &done);
	r->data_done(&r->pub, status);
}

/*
 * Build a server request's transfer without an MR: RDMA READ/WRITE WRs
 * of the mapped entries, naming them by DMA address and the local DMA
 * lkey, the last one signalled.  krt_srv_data() checked that they fit in
 * KRT_WR_DATA WRs.  Return: the first WR.
 */
static struct ib_send_wr *krt_sreq_build_direct(struct krt_queue *q, struct krt_sreq *r,
						struct ib_send_wr **last)
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
	*last = &w->wr;
	return &r->rwr[0].wr;
}

/*
 * Post a server request's transfer: without an MR (krt_sreq_build_direct())
 * or the REG_MR built by krt_srv_data(), the RDMA READ/WRITE and a fenced
 * LOCAL_INV; for krt_srv_data_reply() (@r->chain) the reply SEND right
 * behind the transfer in the same post, the last WR the only one
 * signalled.  Return: 0, or
 * ib_post_send()'s error (some WRs may have been taken: the caller resets
 * the connection, whose teardown drains before it unmaps).
 */
static int krt_sreq_post_data_locked(struct krt_queue *q, struct krt_sreq *r)
{
	struct ib_rdma_wr rdma = {};
	struct ib_send_wr inv, rep, *first, *last = &inv;
	struct ib_sge sge, rsge;
	int ret;

	if (!r->mr) {
		first = krt_sreq_build_direct(q, r, &last);
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
	}
	if (r->chain) {
		/*
		 * ORDER: the reply goes right behind the data on the same QP,
		 * so the client sees it after the data landed.  With an MR
		 * the fenced LOCAL_INV comes after the reply (the fence would
		 * hold the reply until the WRITE is acknowledged) and its
		 * completion is the chain's; without, the reply's is
		 * (completions come in order).
		 */
		struct ib_send_wr *quiet = r->mr ? &rep : last, *end = r->mr ? &inv : &rep;

		krt_sreq_build_reply_locked(q, r, &rep, &rsge);
		if (r->mr) {
			rdma.wr.next = &rep;
			rep.next = &inv;
		} else {
			last->next = &rep;
		}
		quiet->wr_cqe = &r->data_cqe;
		quiet->send_flags &= ~IB_SEND_SIGNALED;
		end->wr_cqe = &r->send_cqe;
		end->send_flags |= IB_SEND_SIGNALED;
	}
	q->sq_avail -= KRT_WR_DATA;
	r->state = r->chain ? KRT_SREQ_CHAIN : KRT_SREQ_DATA;
	r->data_status = 0;
	ret = krt_q_post_send(q, first);
	if (ret)
		return ret;
	if (r->chain)
		krt_sreq_reply_posted(q, r);
	if (r->mr)
		q->stats.srv_mr++;
	else
		q->stats.srv_direct++;
	krt_stat_add(q->conn, r->pub.dir == KRT_DATA_READ ?
		     KRT_A_STAT_SRV_DATA_BYTES_READ :
		     KRT_A_STAT_SRV_DATA_BYTES_WRITTEN, r->pub.data_len);
	return 0;
}

/*
 * A request arrived.  A server request is free unless replies whose SEND
 * completion is not yet polled still hold theirs (the client may already
 * have reused its slot): then the buffer waits, not re-posted, so its
 * credit stays taken, until krt_sreq_release() frees one.  A request
 * with a large buffer needs a large set too, and waits apart for one
 * (q->deferred_large): requests that need none, heartbeats among them,
 * do not wait behind it.
 */
void krt_q_recv_req(struct krt_queue *q, struct krt_rbuf *rb,
		    const struct krt_msg_hdr *h, u32 bytes)
{
	struct list_head *wait = &q->deferred;
	struct krt_large *l = NULL;
	struct krt_sreq *r = NULL;

	rb->t_recv = local_clock();	/* service time includes waiting here */
	spin_lock_bh(&q->lock);
	if (krt_q_req_needs_large(q, h)) {
		wait = &q->deferred_large;
		if (list_empty(wait))
			l = krt_q_large_get(q);
		if (!l)
			q->stats.large_deferred++;
	}
	/* a set is taken only with none waiting for one before */
	if (wait == &q->deferred ? list_empty(wait) : !!l)
		r = list_first_entry_or_null(&q->sfree, struct krt_sreq, entry);
	if (r) {
		r->large = l;
		krt_sreq_take_locked(r);
	} else {
		if (l)
			krt_q_large_put(q, l);
		rb->bytes = bytes;
		list_add_tail(&rb->entry, wait);
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
	/* inline data follows the message; both are copied (checked: it fits) */
	r->inl = flags & KRT_MF_INLINE;
	r->inl_taken = false;
	r->pub.msg_len = bytes - sizeof(*h) - (r->inl ? be32_to_cpu(h->data_len) : 0);
	memcpy(r->msg, (const void *)(h + 1), bytes - sizeof(*h));
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
	r->chain = false;
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

/*
 * Access of a server MR: local write, and remote write for the sink of an
 * RDMA READ on iWARP (a client write), as the RDMA core's R/W API does.
 */
static int krt_sreq_mr_access(const struct krt_queue *q, enum krt_data_dir dir)
{
	if (q->iwarp && dir == KRT_DATA_WRITE)
		return IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	return IB_ACCESS_LOCAL_WRITE;
}

/*
 * Whether a server transfer of @nents mapped entries goes without an MR:
 * it fits in KRT_WR_DATA RDMA WRs and, for an RDMA READ (a client write),
 * the device can read into unregistered memory efficiently.
 */
static bool krt_srv_fits_direct(u32 sge, u32 sge_rd, u32 max_sgl_rd,
				enum krt_data_dir dir, u32 nents)
{
	u32 per = dir == KRT_DATA_READ ? sge : sge_rd;

	if (!per)
		return false;
	/* as rdma_rw_io_needs_mr(): a READ of more than max_sgl_rd entries */
	if (dir == KRT_DATA_WRITE && max_sgl_rd && nents > max_sgl_rd)
		return false;
	return nents <= per * KRT_WR_DATA;
}

static bool krt_sreq_can_direct(const struct krt_queue *q, enum krt_data_dir dir, int nents)
{
	return krt_srv_fits_direct(q->srv_sge, q->srv_sge_rd, q->max_sgl_rd, dir, nents);
}

static bool krt_sreq_direct(const struct krt_queue *q, enum krt_data_dir dir, int nents)
{
	return READ_ONCE(krt_srv_direct) && krt_sreq_can_direct(q, dir, nents);
}

/**
 * krt_q_srv_charge_mrs() - MRs a server connection is charged for
 * @ibdev: its device
 * @depth: its depth
 * @max_io: its max IO size (krt_q_max_io())
 *
 * What krt_q_srv_nr_mrs() will keep, from the device's attributes, before
 * the QP exists: %KRT_SRV_MRS while ``srv_direct`` is on and the device
 * can move every buffer of up to %KRT_SG_OWN pages without an MR, else
 * one per request.  Reads ``srv_direct`` once: the queue follows what was
 * charged.
 *
 * Return: MRs.
 */
u32 krt_q_srv_charge_mrs(struct ib_device *ibdev, u32 depth, u32 max_io)
{
	u32 pages = min_t(u32, DIV_ROUND_UP(max_io, PAGE_SIZE) + 1, KRT_SG_OWN);
	u32 sge = min_t(u32, ibdev->attrs.max_send_sge, KRT_SRV_SGE);
	u32 sge_rd = rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev)) ? 0 :
		     min_t(u32, ibdev->attrs.max_sge_rd, sge);

	if (READ_ONCE(krt_srv_direct) &&
	    krt_srv_fits_direct(sge, sge_rd, ibdev->attrs.max_sgl_rd, KRT_DATA_READ, pages) &&
	    krt_srv_fits_direct(sge, sge_rd, ibdev->attrs.max_sgl_rd, KRT_DATA_WRITE, pages))
		return min_t(u32, depth, KRT_SRV_MRS);
	return depth;
}

/**
 * krt_q_srv_nr_mrs() - MRs of a server queue's pool
 * @q: the queue, its depth and server limits set
 *
 * Charged for few MRs (krt_q_srv_charge_mrs(): ``srv_direct`` on at the
 * connect request, the device able), a queue that can move every buffer
 * of up to @q->own_pages pages without an MR (krt_sreq_can_direct())
 * keeps %KRT_SRV_MRS of them, for ``srv_direct=0`` set later: a transfer
 * finding none free then moves without.  Otherwise (accepted while off,
 * iWARP, few entries per WR) every server request may hold one.
 *
 * Return: MRs to allocate for the pool.
 */
u32 krt_q_srv_nr_mrs(const struct krt_queue *q)
{
	u32 charged = q->conn->nr_mrs;

	if (charged < q->depth &&
	    krt_sreq_can_direct(q, KRT_DATA_READ, q->own_pages) &&
	    krt_sreq_can_direct(q, KRT_DATA_WRITE, q->own_pages))
		return min_t(u32, q->depth, KRT_SRV_MRS);
	return q->depth;
}

/*
 * @r's answer, from here on: over %KRT_MAX_MSG it is -EMSGSIZE without
 * message.  The request's copy gives way to it (@msg may point into it).
 */
static void krt_sreq_set_answer(struct krt_sreq *r, int status, const void *msg, u32 len)
{
	if (len > KRT_MAX_MSG) {
		status = -EMSGSIZE;
		len = 0;
	}
	if (msg && len)
		memmove(r->msg, msg, len);
	r->rep_len = msg ? len : 0;
	r->status = status;
}

/*
 * Room to post what waits in @state: SQ entries, and a credit for a reply.
 * Caller holds q->lock.
 */
static bool krt_sreq_room_locked(const struct krt_queue *q, u8 state)
{
	switch (state) {
	case KRT_SREQ_DATA_WAIT:
		return q->sq_avail >= KRT_WR_DATA && !krt_fault_stall_data();
	case KRT_SREQ_CHAIN_WAIT:
		return q->credits && q->sq_avail >= KRT_WR_DATA + KRT_WR_REP &&
		       !krt_fault_stall_data();
	default:
		return q->credits && q->sq_avail >= KRT_WR_REP;
	}
}

/*
 * May @r move its data now: with its service, no transfer made yet (a
 * racing krt_srv_reply() may have claimed it), its connection alive?
 * Caller holds q->lock.  Return: 0, -EINVAL or -ECONNRESET.
 */
static int krt_sreq_may_move_locked(const struct krt_queue *q, const struct krt_sreq *r)
{
	if (r->state != KRT_SREQ_SERVICE || r->sgl || r->inl_taken)
		return -EINVAL;
	return q->dead ? -ECONNRESET : 0;
}

/*
 * krt_srv_data() of a write whose data came in its request: copied into
 * @bvec here, under q->lock (a racing krt_srv_reply() cannot reuse the
 * copy meanwhile), and @done called before the return: there is no
 * transfer to wait for.
 */
static int krt_sreq_data_inline(struct krt_sreq *r, struct bio_vec *bvec,
				unsigned int nr_bvec,
				void (*done)(struct krt_srv_req *sreq, int status))
{
	struct krt_queue *q = r->q;
	int ret;

	spin_lock_bh(&q->lock);
	ret = krt_sreq_may_move_locked(q, r);
	if (ret) {
		spin_unlock_bh(&q->lock);
		return ret;
	}
	r->inl_taken = true;
	krt_q_bvec_copy(r->msg + r->pub.msg_len, bvec, nr_bvec, r->pub.data_len, true);
	q->stats.srv_inline++;
	krt_stat_add(q->conn, KRT_A_STAT_SRV_DATA_BYTES_WRITTEN, r->pub.data_len);
	spin_unlock_bh(&q->lock);
	done(&r->pub, 0);
	return 0;
}

/*
 * krt_srv_data(), and with @ans krt_srv_data_reply(): map and register
 * the buffer, then post the transfer (and the reply) or queue it.
 */
struct krt_srv_answer {
	int		status;
	const void	*msg;
	u32		len;
};

static int krt_sreq_data(struct krt_srv_req *sreq, struct bio_vec *bvec,
			 unsigned int nr_bvec,
			 void (*done)(struct krt_srv_req *sreq, int status),
			 const struct krt_srv_answer *ans)
{
	struct krt_sreq *r = container_of(sreq, struct krt_sreq, pub);
	struct krt_queue *q = r->q;
	enum dma_data_direction dir;
	struct scatterlist *sgl;
	u32 len, pages;
	u8 wait;
	int ret;

	if (sreq->dir == KRT_DATA_NONE || (ans && sreq->dir != KRT_DATA_READ))
		return -EINVAL;
	ret = krt_frwr_check(bvec, nr_bvec, &len, &pages);
	if (ret || len != sreq->data_len || pages > q->mr_pages)
		return -EINVAL;
	if (r->inl)
		return krt_sreq_data_inline(r, bvec, nr_bvec, done);
	dir = krt_sreq_dma_dir(sreq->dir);
	if (krt_fault_register())
		return -ENOMEM;

	spin_lock_bh(&q->lock);
	ret = krt_sreq_may_move_locked(q, r);
	if (ret) {
		spin_unlock_bh(&q->lock);
		return ret;
	}
	/* a large set was taken for data_len at any offset: it holds @pages */
	sgl = r->large ? r->large->sg : r->sg_own;
	if (pages > (r->large ? q->mr_pages : q->own_pages)) {
		spin_unlock_bh(&q->lock);
		return -EINVAL;
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
		 * it is posted later.  A server request holds at most one MR;
		 * the pool has one per request unless every transfer can go
		 * without (krt_q_srv_nr_mrs()).
		 */
		r->mr = r->large ? r->large->mr : krt_q_mr_get(q);
		/*
		 * srv_direct=0 since the queue was accepted, its few MRs
		 * taken: move without
		 */
		if (!r->mr && krt_sreq_can_direct(q, sreq->dir, r->nents))
			goto direct;
		ret = r->mr ? krt_frwr_reg(r->mr, sgl, r->nents, &r->reg,
					   krt_sreq_mr_access(q, sreq->dir)) : -EBUSY;
		if (ret) {
			krt_stat_inc(q->conn, KRT_A_STAT_ERR_REG);
			trace_krt_mr_error(q->conn, sreq->req_id, sreq->data_len, ret);
			if (r->mr && !r->large)
				krt_q_mr_put(q, r->mr);
			r->mr = NULL;
			ib_dma_unmap_sg(q->ibdev, sgl, nr_bvec, dir);
			spin_unlock_bh(&q->lock);
			return ret;
		}
	}
direct:
	r->sgl = sgl;
	r->nr_bvec = nr_bvec;
	r->data_done = done;
	if (ans) {
		r->chain = true;
		krt_sreq_set_answer(r, ans->status, ans->msg, ans->len);
	}
	wait = r->chain ? KRT_SREQ_CHAIN_WAIT : KRT_SREQ_DATA_WAIT;
	if (krt_sreq_room_locked(q, wait) && list_empty(&q->swait)) {
		if (krt_sreq_post_data_locked(q, r)) {
			/* krt_queue_destroy() calls @done */
			r->state = wait;
			list_add_tail(&r->entry, &q->swait);
			krt_q_reset_locked(q, "cannot post a work request");
		}
	} else {
		if (!r->chain || q->credits) {
			q->stats.sq_waits++;
			krt_stat_inc(q->conn, KRT_A_STAT_SQ_WAITS);
			trace_krt_sq_wait(q->conn, sreq->req_id, q->credits, q->sq_avail, 0);
		} else {
			q->stats.credit_waits++;
			krt_stat_inc(q->conn, KRT_A_STAT_CREDIT_WAITS);
			trace_krt_credit_wait(q->conn, sreq->req_id, 0, q->sq_avail, 0);
		}
		r->state = wait;
		r->wait_start = jiffies;
		list_add_tail(&r->entry, &q->swait);
	}
	spin_unlock_bh(&q->lock);
	return 0;
}

/**
 * krt_srv_data() - move a request's data between the client and the server
 * @sreq: the request, with the service
 * @bvec: the server's buffer: exactly @sreq->data_len bytes
 * @nr_bvec: segments in @bvec
 * @done: called once when the transfer ended (status 0 or -errno), in
 *	softirq context or from a workqueue; the buffer is free again then.
 *	For a write whose data came with its request (inline data, see
 *	``inline_data``), @done is called before krt_srv_data() returns, in
 *	the caller's context: hold no lock across the call that @done takes.
 *
 * For a client read (%KRT_DATA_READ) krt RDMA-WRITEs the buffer into the
 * client's pages; for a client write it RDMA-READs the client's pages into
 * the buffer, or copies the data that came inline.  At most one transfer
 * per request, before krt_srv_reply().  May be called from any context but
 * hardirq or with interrupts disabled.
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
	return krt_sreq_data(sreq, bvec, nr_bvec, done, NULL);
}
EXPORT_SYMBOL_GPL(krt_srv_data);

/**
 * krt_srv_data_reply() - send a client read's data and the answer together
 * @sreq: a client read (%KRT_DATA_READ), with the service
 * @bvec: the server's buffer: exactly @sreq->data_len bytes
 * @nr_bvec: segments in @bvec
 * @status: 0 or -errno, delivered as the client's @rsp_status
 * @msg: reply message, or NULL
 * @len: its length; over %KRT_MAX_MSG answers -EMSGSIZE without message
 * @done: called once when the data and the reply went (0) or the
 *	connection failed under them (-ECONNRESET, -EIO), in softirq context
 *	or from a workqueue: the buffer is free again; @sreq is krt's again
 *	once @done returns (no krt_srv_reply(): it is answered; and
 *	@sreq->msg holds the reply's message from the call on, not the
 *	request's)
 *
 * krt_srv_data() and krt_srv_reply() in one, as a storage target answers a
 * read: the RDMA WRITE of the buffer into the client's pages and the reply
 * SEND are posted together, the reply behind the data on the same queue
 * pair, so that the client sees it only after the data landed; one post
 * and one completion instead of two each.  Context as krt_srv_data().
 *
 * Return: 0 (answered; @done will be called), or as krt_srv_data(), and
 * -EINVAL for a request that is not a client read: then nothing was sent
 * and the request is still the service's to answer.
 */
int krt_srv_data_reply(struct krt_srv_req *sreq, struct bio_vec *bvec,
		       unsigned int nr_bvec, int status, const void *msg, u32 len,
		       void (*done)(struct krt_srv_req *sreq, int status))
{
	struct krt_srv_answer ans = { .status = status, .msg = msg, .len = len };

	return krt_sreq_data(sreq, bvec, nr_bvec, done, &ans);
}
EXPORT_SYMBOL_GPL(krt_srv_data_reply);

/*
 * Answer @r, which is with its service and moves no data.  Called with
 * q->lock held; releases it.
 */
static void krt_sreq_answer(struct krt_queue *q, struct krt_sreq *r, int status,
			    const void *msg, u32 len)
	__releases(&q->lock)
{
	bool hb;

	krt_sreq_set_answer(r, status, msg, len);
	if (q->dead) {
		/* no longer with the service: a racing second reply is refused */
		r->state = KRT_SREQ_REPLY_WAIT;
		spin_unlock_bh(&q->lock);
		if (r->pub.service != KRT_SERVICE_HB)
			atomic64_inc(&krt_dp_stats.replies_dropped);
		krt_sreq_release(r);
		return;
	}
	/*
	 * A heartbeat's answer goes before the transfers that wait: behind
	 * them a loaded server would miss the client's heartbeat bound
	 */
	hb = r->pub.service == KRT_SERVICE_HB;
	if (krt_sreq_room_locked(q, KRT_SREQ_REPLY_WAIT) && (hb || list_empty(&q->swait))) {
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
			trace_krt_credit_wait(q->conn, r->pub.req_id, 0, q->sq_avail, 0);
		}
		r->state = KRT_SREQ_REPLY_WAIT;
		r->wait_start = jiffies;
		if (hb)
			list_add(&r->entry, &q->swait);
		else
			list_add_tail(&r->entry, &q->swait);
	}
	spin_unlock_bh(&q->lock);
}

/* @r's krt_srv_data() transfer waits or is posted: not answered yet. */
static bool krt_sreq_in_transfer(const struct krt_sreq *r)
{
	return r->state == KRT_SREQ_DATA_WAIT || r->state == KRT_SREQ_DATA;
}

/* A reply krt refuses: a service's bug, logged with its caller. */
static void krt_sreq_misuse(const char *what, void *caller)
{
	/* not a WARN: a ULP's bug must not panic a panic_on_warn node */
	pr_err_ratelimited("reply to a request %s, from %pS\n", what, caller);
	atomic64_inc(&krt_dp_stats.api_misuse);
}

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
 * refused (logged with the caller, counted as ``api_misuse``), and so is a
 * reply through a handle whose request was answered while the handle is
 * free or its reply under way.  Once @sreq serves a later request a stale
 * reply cannot be told from that request's own, and once its connection
 * reset @sreq is freed memory: a service must not keep @sreq after its
 * reply, or keeps a &struct krt_srv_ref (krt_srv_req_ref()) and answers
 * with krt_srv_reply_ref(), which tells.
 */
void krt_srv_reply(struct krt_srv_req *sreq, int status, const void *msg, u32 len)
{
	struct krt_sreq *r = container_of(sreq, struct krt_sreq, pub);
	struct krt_queue *q = r->q;

	spin_lock_bh(&q->lock);
	/*
	 * A second reply, or one during a transfer: refused, not sent.  Checked
	 * and left under q->lock, so that of two racing replies one goes.
	 */
	if (r->state != KRT_SREQ_SERVICE || r->sgl) {
		spin_unlock_bh(&q->lock);
		krt_sreq_misuse("not with its service", __builtin_return_address(0));
		return;
	}
	krt_sreq_answer(q, r, status, msg, len);
}
EXPORT_SYMBOL_GPL(krt_srv_reply);

/**
 * krt_srv_req_ref() - name a request by value
 * @sreq: a request with the service (before its reply)
 *
 * Context as krt_srv_reply().
 *
 * Return: a ref that krt_srv_reply_ref() answers @sreq through for as long
 * as @sreq waits for its reply, and refuses ever after; the zero ref
 * (always refused) if @sreq was answered already.
 */
struct krt_srv_ref krt_srv_req_ref(const struct krt_srv_req *sreq)
{
	struct krt_sreq *r = container_of(sreq, struct krt_sreq, pub);
	struct krt_queue *q = r->q;
	struct krt_srv_ref ref = {};

	/* not for an answered request: @r may serve another one already */
	spin_lock_bh(&q->lock);
	if (r->state == KRT_SREQ_SERVICE || krt_sreq_in_transfer(r)) {
		ref.krt_queue = q->srv_id;
		ref.krt_index = r->idx;
		ref.krt_gen = r->gen;
	}
	spin_unlock_bh(&q->lock);
	return ref;
}
EXPORT_SYMBOL_GPL(krt_srv_req_ref);

/**
 * krt_srv_reply_ref() - answer a request named by a ref
 * @ref: from krt_srv_req_ref()
 * @status: as krt_srv_reply()
 * @msg: as krt_srv_reply()
 * @len: as krt_srv_reply()
 *
 * krt_srv_reply() for the request @ref names, if it still waits for its
 * reply; otherwise nothing is sent, whatever request its server request
 * serves now is left alone, and the stale ref is counted
 * (``stale_refs``; ``stale_refs_gone`` too if its connection was freed).
 * Context as krt_srv_reply().
 *
 * Return: 0 (answered, or dropped if its connection went away), -ESTALE
 * (answered before, its connection freed, or never a request's),
 * -EBUSY (its data transfer is under way: a service's bug, refused as
 * krt_srv_reply() refuses it).
 */
int krt_srv_reply_ref(const struct krt_srv_ref *ref, int status,
		      const void *msg, u32 len)
{
	/* the caller's: read once */
	u32 qid = READ_ONCE(ref->krt_queue);
	u32 idx = READ_ONCE(ref->krt_index);
	u32 gen = READ_ONCE(ref->krt_gen);
	struct krt_queue *q;
	struct krt_sreq *r;

	rcu_read_lock();
	q = qid ? xa_load(&krt_srv_queues, qid) : NULL;
	if (!q)
		goto gone;
	spin_lock_bh(&q->lock);
	if (q->gone) {
		spin_unlock_bh(&q->lock);
		goto gone;
	}
	if (idx >= q->depth)
		goto stale_locked;
	r = &q->sreqs[array_index_nospec(idx, q->depth)];
	if (r->gen != gen)
		goto stale_locked;
	if (krt_sreq_in_transfer(r) || (r->state == KRT_SREQ_SERVICE && r->sgl)) {
		spin_unlock_bh(&q->lock);
		rcu_read_unlock();
		krt_sreq_misuse("during its data transfer", __builtin_return_address(0));
		return -EBUSY;
	}
	if (r->state != KRT_SREQ_SERVICE)
		goto stale_locked;
	/* ORDER: @r holds a connection reference until its release: q stays */
	krt_sreq_answer(q, r, status, msg, len);
	rcu_read_unlock();
	return 0;

gone:
	atomic64_inc(&krt_dp_stats.stale_refs_gone);
	goto stale;
stale_locked:
	spin_unlock_bh(&q->lock);
stale:
	rcu_read_unlock();
	atomic64_inc(&krt_dp_stats.stale_refs);
	return -ESTALE;
}
EXPORT_SYMBOL_GPL(krt_srv_reply_ref);
/*
 * Post the server requests that wait for SQ room or a credit, in order.
 * Caller holds q->lock.  Return: false when the connection was reset.
 */
bool krt_q_kick_srv_locked(struct krt_queue *q)
{
	struct krt_sreq *r, *rt;
	int ret;

	list_for_each_entry_safe(r, rt, &q->swait, entry) {
		u8 state = r->state;

		if (!krt_sreq_room_locked(q, state))
			break;
		list_del_init(&r->entry);
		if (state == KRT_SREQ_REPLY_WAIT)
			ret = krt_sreq_post_reply_locked(q, r);
		else
			ret = krt_sreq_post_data_locked(q, r);
		if (ret) {
			/* krt_queue_destroy() hands it back */
			r->state = state;
			list_add(&r->entry, &q->swait);
			krt_q_reset_locked(q, "cannot post a work request");
			return false;
		}
	}
	return true;
}
