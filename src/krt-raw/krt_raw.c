// SPDX-License-Identifier: GPL-2.0
/*
 * krt_raw: the raw-verbs baseline of the benchmark (scripts/bench).
 *
 * DOC: Raw verbs baseline
 *
 * One RC QP through rdma_cm, buffers registered once, no pooling, credits,
 * tags or per-request registration: what the device does with the fewest
 * verbs krt's operations can be reduced to.  Figures of krt_bench.ko are
 * set against this module's in the same guest boot.
 *
 * - ``read``: the client RDMA-READs S bytes of the server's buffer into
 *   its own (the data moves server to client, as krt's read).
 * - ``write``: the client RDMA-WRITEs S bytes into the server's buffer.
 * - ``send``: the client SENDs S bytes, the server answers each with an
 *   8-byte SEND (as krt_bench answers a send request).
 *
 * Each side has one buffer of KRT_RAW_MAX_IO bytes, physically contiguous,
 * DMA-mapped once and shared by every request in flight (no data is
 * checked, as in an unverified krt_bench run).  The server registers its
 * buffer once with IB_WR_REG_MR and tells the client the address and rkey
 * in its first message.  Nothing is registered per request.
 *
 * Control: debugfs ``krt_raw/ctl`` takes ``listen ADDR PORT`` and ``run
 * ADDR PORT OP SIZE DEPTH TIME_MS``; a run happens in the write() and its
 * result is read from ``krt_raw/result`` as ``key: value`` lines.
 * Needs CAP_NET_ADMIN.  A test and measuring tool, not part of krt.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/inet.h>
#include <linux/kernel_stat.h>
#include <linux/cpu.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#define KRT_RAW_MAX_IO		(1024 * 1024)
#define KRT_RAW_MAX_MSG		4096
#define KRT_RAW_MAX_DEPTH	128
#define KRT_RAW_RECVS		(KRT_RAW_MAX_DEPTH + 2)
#define KRT_RAW_REPLY		8
#define KRT_RAW_MAX_TIME_MS	60000
#define KRT_RAW_TIMEOUT_MS	5000
/* latency histogram: 4 buckets per power of two of nanoseconds */
#define KRT_RAW_HBITS		2
#define KRT_RAW_HBUCKETS	(64 << KRT_RAW_HBITS)

enum krt_raw_op { KRT_RAW_READ, KRT_RAW_WRITE, KRT_RAW_SEND };
static const char * const krt_raw_op_names[] = { "read", "write", "send" };

/* what the server tells the client in its first message */
struct krt_raw_info {
	__be64	addr;
	__be32	rkey;
	__be32	len;
};

/**
 * struct krt_raw_conn - one side of one RC connection
 * @id: its rdma_cm id
 * @pd: protection domain of this connection only
 * @cq: completions of both queues
 * @buf: the data buffer (KRT_RAW_MAX_IO bytes)
 * @buf_dma: its DMA address
 * @rbuf: receive buffers, KRT_RAW_RECVS x KRT_RAW_MAX_MSG
 * @rbuf_dma: their DMA address
 * @sbuf: the info message and the replies
 * @sbuf_dma: its DMA address
 * @mr: the server's registration of @buf
 * @rcqe: one cqe per receive buffer
 * @scqe: sends (not counted: a send request completes with its reply)
 * @rdcqe: RDMA READ and WRITE requests
 * @free_work: server side: tears the connection down
 * @node: in krt_raw_srv_conns (krt_raw_conns_lock)
 * @dead: teardown queued (set once)
 * @established: client: the next cm event arrived
 * @cm_event: client: that event
 * @cm_status: client: its status
 * @info_done: client: the server's info arrived
 * @raddr: client: the server buffer's address; server: 1 once the hello came
 * @rkey: client: its rkey
 * @run: client: the run this connection serves
 */
struct krt_raw_conn {
	struct rdma_cm_id	*id;
	struct ib_pd		*pd;
	struct ib_cq		*cq;
	void			*buf;
	u64			buf_dma;
	void			*rbuf;
	u64			rbuf_dma;
	void			*sbuf;
	u64			sbuf_dma;
	struct ib_mr		*mr;
	struct ib_cqe		rcqe[KRT_RAW_RECVS];
	struct ib_cqe		scqe;
	struct ib_cqe		rdcqe;
	struct work_struct	free_work;
	struct list_head	node;
	unsigned long		dead;
	struct completion	established;
	enum rdma_cm_event_type	cm_event;
	int			cm_status;
	struct completion	info_done;
	u64			raddr;
	u32			rkey;
	struct krt_raw_run	*run;
};

/**
 * struct krt_raw_run - one client run
 * @op: what is measured
 * @size: bytes per request
 * @depth: requests kept in flight
 * @stop: no more submissions (set by the run thread)
 * @inflight: requests posted and not yet complete
 * @done: requests complete
 * @errors: requests failed
 * @seq: requests posted
 * @cseq: requests complete or failed
 * @ts: the submission times, by sequence number % @depth
 * @wait: the run thread waits here for @inflight to reach 0
 * @hist: latency histogram
 * @lat_min: shortest latency
 * @lat_max: longest latency
 * @lat_sum: sum of the latencies
 * Completions on one RC QP come in order, so a ring of submission times
 * indexed by sequence number gives each completion its latency.  Every
 * field but @wait is touched by the CQ's softirq alone once the run
 * started (@stop is read there, written by the run thread).
 */
struct krt_raw_run {
	enum krt_raw_op		op;
	u32			size;
	u32			depth;
	bool			stop;
	atomic_t		inflight;
	u64			done;
	u64			errors;
	u64			seq;
	u64			cseq;
	u64			*ts;
	wait_queue_head_t	wait;
	u64			hist[KRT_RAW_HBUCKETS];
	u64			lat_min;
	u64			lat_max;
	u64			lat_sum;
};

static DEFINE_MUTEX(krt_raw_lock);		/* runs, listen, the result */
/*
 * Server connections.  A spinlock of their own: the cm handler of a new
 * connection must not wait for a run, which holds krt_raw_lock and may be
 * waiting for that very connection (one node connecting to itself).
 */
static DEFINE_SPINLOCK(krt_raw_conns_lock);
/* set under krt_raw_lock; taken (xchg) by device removal or unload */
static struct rdma_cm_id *krt_raw_listen_id;
static LIST_HEAD(krt_raw_srv_conns);		/* krt_raw_conns_lock */
static struct workqueue_struct *krt_raw_wq;
static struct dentry *krt_raw_dir;
static char krt_raw_result[1024];		/* krt_raw_lock */

static void krt_raw_conn_free(struct krt_raw_conn *c)
{
	struct ib_device *dev = c->id->device;

	if (!dev)		/* never resolved: nothing allocated but memory */
		goto out;
	if (c->id->qp) {
		ib_drain_qp(c->id->qp);
		rdma_destroy_qp(c->id);
	}
	if (c->mr)
		ib_dereg_mr(c->mr);
	if (c->cq)
		ib_free_cq(c->cq);
	if (c->sbuf_dma)
		ib_dma_unmap_single(dev, c->sbuf_dma, PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (c->rbuf_dma)
		ib_dma_unmap_single(dev, c->rbuf_dma,
				    KRT_RAW_RECVS * KRT_RAW_MAX_MSG, DMA_FROM_DEVICE);
	if (c->buf_dma)
		ib_dma_unmap_single(dev, c->buf_dma, KRT_RAW_MAX_IO,
				    DMA_BIDIRECTIONAL);
	if (c->pd)
		ib_dealloc_pd(c->pd);
out:
	if (c->buf)
		free_pages_exact(c->buf, KRT_RAW_MAX_IO);
	if (c->rbuf)
		free_pages_exact(c->rbuf, KRT_RAW_RECVS * KRT_RAW_MAX_MSG);
	kfree(c->sbuf);
}

static void krt_raw_recv_done(struct ib_cq *cq, struct ib_wc *wc);

static int krt_raw_post_recv(struct krt_raw_conn *c, int i)
{
	struct ib_sge sge = {
		.addr = c->rbuf_dma + (u64)i * KRT_RAW_MAX_MSG,
		.length = KRT_RAW_MAX_MSG,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_cqe = &c->rcqe[i], .sg_list = &sge, .num_sge = 1 };

	c->rcqe[i].done = krt_raw_recv_done;
	ib_dma_sync_single_for_device(c->id->device, sge.addr, KRT_RAW_MAX_MSG,
				      DMA_FROM_DEVICE);
	return ib_post_recv(c->id->qp, &wr, NULL);
}

static void krt_raw_noop_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("krt_raw: send failed: %s\n",
				    ib_wc_status_msg(wc->status));
}

/* a receive before ESTABLISHED stands in for the RTU */
static void krt_raw_qp_event(struct ib_event *ev, void *ctx)
{
	struct krt_raw_conn *c = ctx;

	if (ev->event == IB_EVENT_COMM_EST)
		rdma_notify(c->id, IB_EVENT_COMM_EST);
	else
		pr_warn("krt_raw: QP event %s\n", ib_event_msg(ev->event));
}

/* the connection's PD, CQ, QP and buffers; the receives posted */
static int krt_raw_conn_setup(struct krt_raw_conn *c, struct rdma_cm_id *id)
{
	struct ib_device *dev = id->device;
	struct ib_qp_init_attr qa = {};
	int i, ret;

	c->id = id;
	c->buf = alloc_pages_exact(KRT_RAW_MAX_IO, GFP_KERNEL | __GFP_ZERO);
	c->rbuf = alloc_pages_exact(KRT_RAW_RECVS * KRT_RAW_MAX_MSG,
				    GFP_KERNEL | __GFP_ZERO);
	c->sbuf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!c->buf || !c->rbuf || !c->sbuf)
		return -ENOMEM;
	c->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(c->pd)) {
		ret = PTR_ERR(c->pd);
		c->pd = NULL;
		return ret;
	}
	c->buf_dma = ib_dma_map_single(dev, c->buf, KRT_RAW_MAX_IO, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, c->buf_dma))
		goto err_map;
	c->rbuf_dma = ib_dma_map_single(dev, c->rbuf, KRT_RAW_RECVS * KRT_RAW_MAX_MSG,
					DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, c->rbuf_dma))
		goto err_map;
	c->sbuf_dma = ib_dma_map_single(dev, c->sbuf, PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, c->sbuf_dma))
		goto err_map;
	c->cq = ib_alloc_cq(dev, c, 4 * KRT_RAW_MAX_DEPTH + 2 * KRT_RAW_RECVS + 16, 0,
			    IB_POLL_SOFTIRQ);
	if (IS_ERR(c->cq)) {
		ret = PTR_ERR(c->cq);
		c->cq = NULL;
		return ret;
	}
	qa.event_handler = krt_raw_qp_event;
	qa.qp_context = c;
	qa.qp_type = IB_QPT_RC;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	/* a send request and its reply may both hold an SQ slot: 2 x depth */
	qa.cap.max_send_wr = 2 * KRT_RAW_MAX_DEPTH + 8;
	qa.cap.max_recv_wr = KRT_RAW_RECVS;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	ret = rdma_create_qp(id, c->pd, &qa);
	if (ret)
		return ret;
	for (i = 0; i < KRT_RAW_RECVS; i++) {
		ret = krt_raw_post_recv(c, i);
		if (ret)
			return ret;
	}
	c->scqe.done = krt_raw_noop_done;
	return 0;
err_map:
	/* an error mapping left its address set: clear it before the unmap */
	if (c->buf_dma && ib_dma_mapping_error(dev, c->buf_dma))
		c->buf_dma = 0;
	if (c->rbuf_dma && ib_dma_mapping_error(dev, c->rbuf_dma))
		c->rbuf_dma = 0;
	if (c->sbuf_dma && ib_dma_mapping_error(dev, c->sbuf_dma))
		c->sbuf_dma = 0;
	return -ENOMEM;
}

/*
 * A signalled SEND of @len bytes of the send buffer from @off (the info,
 * a reply, the hello), posted after @first when given (the REG_MR).
 */
static int krt_raw_post_send(struct krt_raw_conn *c, struct ib_send_wr *first,
			     u32 off, u32 len)
{
	struct ib_sge sge = {
		.addr = c->sbuf_dma + off, .length = len,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &c->scqe, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
	};

	if (!first)
		return ib_post_send(c->id->qp, &wr, NULL);
	first->next = &wr;
	return ib_post_send(c->id->qp, first, NULL);
}

static void krt_raw_conn_param(struct rdma_cm_id *id, struct rdma_conn_param *p)
{
	u32 rd = min_t(u32, id->device->attrs.max_qp_rd_atom, 16);

	memset(p, 0, sizeof(*p));
	p->responder_resources = rd;
	p->initiator_depth = min_t(u32, id->device->attrs.max_qp_init_rd_atom, 16);
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

/* ---- server ---- */

static void krt_raw_srv_free_work(struct work_struct *w)
{
	struct krt_raw_conn *c = container_of(w, struct krt_raw_conn, free_work);

	spin_lock(&krt_raw_conns_lock);
	list_del_init(&c->node);
	spin_unlock(&krt_raw_conns_lock);
	rdma_disconnect(c->id);
	krt_raw_conn_free(c);
	rdma_destroy_id(c->id);
	kfree(c);
}

static void krt_raw_srv_kill(struct krt_raw_conn *c)
{
	if (!test_and_set_bit(0, &c->dead))
		queue_work(krt_raw_wq, &c->free_work);
}

static void krt_raw_srv_advertise(struct krt_raw_conn *c);

static void krt_raw_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc, int i)
{
	struct krt_raw_conn *c = cq->cq_context;

	if (!c->raddr) {		/* the hello */
		c->raddr = 1;
		if (krt_raw_post_recv(c, i))
			krt_raw_srv_kill(c);
		else
			krt_raw_srv_advertise(c);
		return;
	}
	if (krt_raw_post_recv(c, i) ||
	    krt_raw_post_send(c, NULL, sizeof(struct krt_raw_info), KRT_RAW_REPLY))
		krt_raw_srv_kill(c);
}

/*
 * On the client's first message (its hello): register the buffer once,
 * then tell the client where it is.  Sending before the client spoke could
 * reach its QP before the REP moved it to RTR (dropped, left to the
 * retransmit timer), so the client speaks first.
 */
static void krt_raw_srv_advertise(struct krt_raw_conn *c)
{
	struct krt_raw_info *info = c->sbuf;
	struct scatterlist sg;
	struct ib_reg_wr reg = {};
	int n;

	sg_init_table(&sg, 1);
	sg_dma_address(&sg) = c->buf_dma;
	sg_dma_len(&sg) = KRT_RAW_MAX_IO;
	n = ib_map_mr_sg(c->mr, &sg, 1, NULL, PAGE_SIZE);
	if (n != 1)
		goto kill;
	reg.wr.opcode = IB_WR_REG_MR;
	reg.wr.wr_cqe = &c->scqe;
	reg.mr = c->mr;
	reg.key = c->mr->rkey;
	reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		     IB_ACCESS_REMOTE_WRITE;
	info->addr = cpu_to_be64(c->mr->iova);
	info->rkey = cpu_to_be32(c->mr->rkey);
	info->len = cpu_to_be32(KRT_RAW_MAX_IO);
	ib_dma_sync_single_for_device(c->id->device, c->sbuf_dma, PAGE_SIZE,
				      DMA_BIDIRECTIONAL);
	if (!krt_raw_post_send(c, &reg.wr, 0, sizeof(*info)))
		return;
kill:
	krt_raw_srv_kill(c);
}

static int krt_raw_srv_connect(struct rdma_cm_id *id)
{
	struct rdma_conn_param p;
	struct krt_raw_conn *c;
	int ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	INIT_WORK(&c->free_work, krt_raw_srv_free_work);
	INIT_LIST_HEAD(&c->node);
	ret = krt_raw_conn_setup(c, id);
	if (ret)
		goto err;
	c->mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, KRT_RAW_MAX_IO / PAGE_SIZE);
	if (IS_ERR(c->mr)) {
		ret = PTR_ERR(c->mr);
		c->mr = NULL;
		goto err;
	}
	id->context = c;
	/* listed before the accept: from then on a completion may kill it */
	spin_lock(&krt_raw_conns_lock);
	list_add(&c->node, &krt_raw_srv_conns);
	spin_unlock(&krt_raw_conns_lock);
	krt_raw_conn_param(id, &p);
	ret = rdma_accept(id, &p);
	if (ret) {
		spin_lock(&krt_raw_conns_lock);
		list_del_init(&c->node);
		spin_unlock(&krt_raw_conns_lock);
		goto err;
	}
	return 0;
err:
	/* rdma_cm destroys the id when the handler returns non-zero */
	krt_raw_conn_free(c);
	kfree(c);
	return ret;
}

static int krt_raw_srv_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct krt_raw_conn *c = id->context;

	if (!c) {		/* the listener */
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			return krt_raw_srv_connect(id);
		/* its device goes: rdma_cm destroys it unless unload did */
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL &&
		    cmpxchg(&krt_raw_listen_id, id, NULL) == id)
			return 1;
		return 0;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		krt_raw_srv_kill(c);
		break;
	default:
		break;
	}
	return 0;
}

static int krt_raw_listen(struct sockaddr *sa)
{
	struct rdma_cm_id *id;
	int ret;

	if (READ_ONCE(krt_raw_listen_id))
		return -EBUSY;
	id = rdma_create_id(&init_net, krt_raw_srv_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, sa);
	if (!ret)
		ret = rdma_listen(id, 16);
	if (ret) {
		rdma_destroy_id(id);
		return ret;
	}
	WRITE_ONCE(krt_raw_listen_id, id);
	return 0;
}

/* ---- client ---- */

static void krt_raw_lat(struct krt_raw_run *r, u64 ns)
{
	unsigned int b = 0;

	if (ns >= 4) {
		unsigned int l = ilog2(ns);

		b = (l << KRT_RAW_HBITS) |
		    ((ns >> (l - KRT_RAW_HBITS)) & ((1 << KRT_RAW_HBITS) - 1));
	}
	r->hist[min_t(unsigned int, b, KRT_RAW_HBUCKETS - 1)]++;
	r->lat_sum += ns;
	r->lat_min = min(r->lat_min, ns);
	r->lat_max = max(r->lat_max, ns);
}

/* the top of bucket b: a percentile is at most 25% above the truth */
static u64 krt_raw_bucket_top(unsigned int b)
{
	unsigned int l = b >> KRT_RAW_HBITS, s = b & ((1 << KRT_RAW_HBITS) - 1);

	if (l < KRT_RAW_HBITS)
		return 4;
	return (1ULL << l) + ((u64)(s + 1) << (l - KRT_RAW_HBITS)) - 1;
}

static u64 krt_raw_pct(struct krt_raw_run *r, u64 n, unsigned int permille)
{
	u64 want = div_u64(n * permille + 999, 1000), sum = 0;
	unsigned int b;

	for (b = 0; b < KRT_RAW_HBUCKETS; b++) {
		sum += r->hist[b];
		if (sum >= want && want)
			return clamp(krt_raw_bucket_top(b), r->lat_min, r->lat_max);
	}
	return r->lat_max;
}

static int krt_raw_post(struct krt_raw_conn *c);

/* one request complete (its RDMA, or a send's reply) */
static void krt_raw_complete(struct krt_raw_conn *c, bool ok)
{
	struct krt_raw_run *r = c->run;

	if (ok) {
		r->done++;
		krt_raw_lat(r, ktime_get_ns() - r->ts[r->cseq % r->depth]);
	} else {
		r->errors++;
	}
	r->cseq++;
	if (ok && !READ_ONCE(r->stop) && !krt_raw_post(c))
		return;
	if (atomic_dec_and_test(&r->inflight))
		wake_up(&r->wait);
}

static void krt_raw_rdma_done(struct ib_cq *cq, struct ib_wc *wc)
{
	krt_raw_complete(cq->cq_context, wc->status == IB_WC_SUCCESS);
}

static void krt_raw_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krt_raw_conn *c = cq->cq_context;
	int i = wc->wr_cqe - c->rcqe;

	if (wc->status != IB_WC_SUCCESS) {
		/* a send request's reply lost: that request failed */
		if (c->run && c->run->op == KRT_RAW_SEND && c->raddr &&
		    wc->status != IB_WC_WR_FLUSH_ERR)
			krt_raw_complete(c, false);
		return;
	}
	if (!c->run) {		/* server side */
		krt_raw_srv_recv_done(cq, wc, i);
		return;
	}
	if (!c->raddr) {	/* the server's info */
		struct krt_raw_info *info = c->rbuf + (size_t)i * KRT_RAW_MAX_MSG;

		ib_dma_sync_single_for_cpu(c->id->device,
					   c->rbuf_dma + (u64)i * KRT_RAW_MAX_MSG,
					   sizeof(*info), DMA_FROM_DEVICE);
		if (wc->byte_len == sizeof(*info) &&
		    be32_to_cpu(info->len) >= KRT_RAW_MAX_IO && info->addr) {
			c->rkey = be32_to_cpu(info->rkey);
			c->raddr = be64_to_cpu(info->addr);
		}
		krt_raw_post_recv(c, i);
		complete(&c->info_done);
		return;
	}
	krt_raw_post_recv(c, i);
	/* only a send run's requests are answered; anything else is ignored */
	if (c->run->op == KRT_RAW_SEND)
		krt_raw_complete(c, true);
}

/* the next request of the run, stamped with its submission time */
static void krt_raw_fill(struct krt_raw_conn *c, struct ib_rdma_wr *wr,
			 struct ib_sge *sge)
{
	struct krt_raw_run *r = c->run;

	sge->addr = c->buf_dma;
	sge->length = r->size;
	sge->lkey = c->pd->local_dma_lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr.sg_list = sge;
	wr->wr.num_sge = 1;
	wr->wr.send_flags = IB_SEND_SIGNALED;
	if (r->op == KRT_RAW_SEND) {
		wr->wr.opcode = IB_WR_SEND;
		wr->wr.wr_cqe = &c->scqe;
	} else {
		wr->wr.opcode = r->op == KRT_RAW_READ ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
		wr->wr.wr_cqe = &c->rdcqe;
		wr->remote_addr = c->raddr;
		wr->rkey = c->rkey;
	}
	r->ts[r->seq % r->depth] = ktime_get_ns();
	r->seq++;
}

/* post the next request of the run (from a completion); 0 or an error */
static int krt_raw_post(struct krt_raw_conn *c)
{
	struct ib_rdma_wr wr;
	struct ib_sge sge;

	krt_raw_fill(c, &wr, &sge);
	return ib_post_send(c->id->qp, &wr.wr, NULL);
}

/*
 * The run's first @depth requests in one chain, one post: until it
 * returns no completion can repost, so r->seq and r->ts have one writer
 * at a time.  Return: how many were posted.
 */
static u32 krt_raw_post_first(struct krt_raw_conn *c, u32 depth)
{
	const struct ib_send_wr *bad = NULL;
	struct ib_rdma_wr *wrs;
	struct ib_sge *sges;
	u32 i, n = depth;

	wrs = kcalloc(depth, sizeof(*wrs), GFP_KERNEL);
	sges = kcalloc(depth, sizeof(*sges), GFP_KERNEL);
	if (!wrs || !sges) {
		n = 0;
		goto out;
	}
	for (i = 0; i < depth; i++) {
		krt_raw_fill(c, &wrs[i], &sges[i]);
		if (i)
			wrs[i - 1].wr.next = &wrs[i].wr;
	}
	if (ib_post_send(c->id->qp, &wrs[0].wr, &bad))
		n = bad ? container_of(bad, struct ib_rdma_wr, wr) - wrs : 0;
out:
	kfree(wrs);
	kfree(sges);
	return n;
}

/* the client's cm events: recorded for the run thread, which waits for each */
static int krt_raw_clt_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct krt_raw_conn *c = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * rdma_cm waits for this id to go: end the run now (its work
		 * requests flush), and a connect waiting for its next event.
		 */
		WRITE_ONCE(c->run->stop, true);
		wake_up(&c->run->wait);
		fallthrough;
	default:
		c->cm_event = ev->event;
		c->cm_status = ev->status;
		complete(&c->established);
		return 0;
	}
}

/* wait for the next cm event of the connect, which must be @want */
static int krt_raw_clt_wait(struct krt_raw_conn *c, enum rdma_cm_event_type want)
{
	if (!wait_for_completion_timeout(&c->established,
					 msecs_to_jiffies(3 * KRT_RAW_TIMEOUT_MS)))
		return -ETIMEDOUT;
	reinit_completion(&c->established);
	if (c->cm_event == want)
		return 0;
	pr_info("krt_raw: connect: %s (%d)\n", rdma_event_msg(c->cm_event),
		c->cm_status);
	return c->cm_status < 0 ? c->cm_status : -ECONNREFUSED;
}

/* the client speaks first: an empty message the server answers with its info */
static int krt_raw_hello(struct krt_raw_conn *c)
{
	return krt_raw_post_send(c, NULL, 0, KRT_RAW_REPLY);
}

/* resolve, set up and connect: in the run thread, not in the cm handler */
static int krt_raw_clt_connect(struct krt_raw_conn *c, struct sockaddr *sa)
{
	struct rdma_conn_param p;
	int ret;

	ret = rdma_resolve_addr(c->id, NULL, sa, KRT_RAW_TIMEOUT_MS);
	if (!ret)
		ret = krt_raw_clt_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (!ret)
		ret = rdma_resolve_route(c->id, KRT_RAW_TIMEOUT_MS);
	if (!ret)
		ret = krt_raw_clt_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (!ret)
		ret = krt_raw_conn_setup(c, c->id);
	if (ret)
		return ret;
	krt_raw_conn_param(c->id, &p);
	ret = rdma_connect(c->id, &p);
	if (!ret)
		ret = krt_raw_clt_wait(c, RDMA_CM_EVENT_ESTABLISHED);
	if (!ret)
		ret = krt_raw_hello(c);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&c->info_done,
					 msecs_to_jiffies(KRT_RAW_TIMEOUT_MS)) || !c->raddr)
		return -EPROTO;
	return 0;
}

static u64 krt_raw_cpu_ns(void)
{
	struct kernel_cpustat kcs;
	u64 sum = 0;
	int cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		kcpustat_cpu_fetch(&kcs, cpu);
		sum += kcs.cpustat[CPUTIME_USER] + kcs.cpustat[CPUTIME_SYSTEM] +
		       kcs.cpustat[CPUTIME_SOFTIRQ] + kcs.cpustat[CPUTIME_IRQ];
	}
	cpus_read_unlock();
	return sum;
}

static void krt_raw_report(struct krt_raw_run *r, struct krt_raw_conn *c,
			   u64 elapsed, u64 cpu)
{
	u64 n = r->done;

	scnprintf(krt_raw_result, sizeof(krt_raw_result),
		  "op: %s\nsize: %u\ndepth: %u\nrequests: %llu\nerrors: %llu\n"
		  "bytes: %llu\nelapsed_ns: %llu\ncpu_ns: %llu\ncpu_ns_per_req: %llu\n"
		  "lat_min_ns: %llu\nlat_avg_ns: %llu\nlat_p50_ns: %llu\n"
		  "lat_p99_ns: %llu\nlat_p999_ns: %llu\nlat_max_ns: %llu\n",
		  krt_raw_op_names[r->op], r->size, r->depth, n, r->errors,
		  n * r->size, elapsed, cpu, n ? div64_u64(cpu, n) : 0,
		  n ? r->lat_min : 0, n ? div64_u64(r->lat_sum, n) : 0,
		  n ? krt_raw_pct(r, n, 500) : 0, n ? krt_raw_pct(r, n, 990) : 0,
		  n ? krt_raw_pct(r, n, 999) : 0, r->lat_max);
}

static int krt_raw_do_run(struct sockaddr *sa, enum krt_raw_op op, u32 size,
			  u32 depth, u32 time_ms)
{
	struct krt_raw_conn *c;
	struct krt_raw_run *r;
	struct rdma_cm_id *id;
	u64 t0, cpu0;
	u32 posted;
	int ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!c || !r) {
		ret = -ENOMEM;
		goto out_free;
	}
	r->ts = kcalloc(depth, sizeof(*r->ts), GFP_KERNEL);
	if (!r->ts) {
		ret = -ENOMEM;
		goto out_free;
	}
	r->op = op;
	r->size = size;
	r->depth = depth;
	r->lat_min = U64_MAX;
	init_waitqueue_head(&r->wait);
	init_completion(&c->established);
	init_completion(&c->info_done);
	c->rdcqe.done = krt_raw_rdma_done;
	c->run = r;

	id = rdma_create_id(&init_net, krt_raw_clt_handler, c, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		ret = PTR_ERR(id);
		goto out_free;
	}
	c->id = id;
	ret = krt_raw_clt_connect(c, sa);
	if (ret)
		goto out_conn;

	cpu0 = krt_raw_cpu_ns();
	t0 = ktime_get_ns();
	atomic_set(&r->inflight, depth);
	posted = krt_raw_post_first(c, depth);
	/* never posted: not in flight */
	if (posted < depth && atomic_sub_and_test(depth - posted, &r->inflight))
		WRITE_ONCE(r->stop, true);
	/* a signal or the device's removal ends the run early */
	wait_event_interruptible_timeout(r->wait, READ_ONCE(r->stop),
					 msecs_to_jiffies(time_ms));
	WRITE_ONCE(r->stop, true);
	if (!wait_event_timeout(r->wait, !atomic_read(&r->inflight),
				msecs_to_jiffies(KRT_RAW_TIMEOUT_MS)))
		pr_warn("krt_raw: %d requests still in flight after the run\n",
			atomic_read(&r->inflight));
	krt_raw_report(r, c, ktime_get_ns() - t0, krt_raw_cpu_ns() - cpu0);
	ret = atomic_read(&r->inflight) ? -ETIMEDOUT : 0;
out_conn:
	rdma_disconnect(id);
	krt_raw_conn_free(c);
	rdma_destroy_id(id);
out_free:
	if (r)
		kfree(r->ts);
	kfree(r);
	kfree(c);
	return ret;
}

/* ---- control ---- */

static int krt_raw_addr(const char *a, const char *port, struct sockaddr_storage *ss)
{
	return inet_pton_with_scope(&init_net, AF_UNSPEC, a, port, ss);
}

static int krt_raw_cmd(char *buf)
{
	char a[64], p[8], o[8];
	struct sockaddr_storage ss;
	u32 size, depth, time_ms;
	int op, ret;

	if (sscanf(buf, "listen %63s %7s", a, p) == 2) {
		ret = krt_raw_addr(a, p, &ss);
		return ret ? ret : krt_raw_listen((struct sockaddr *)&ss);
	}
	if (sscanf(buf, "run %63s %7s %7s %u %u %u", a, p, o, &size, &depth,
		   &time_ms) != 6)
		return -EINVAL;
	op = match_string(krt_raw_op_names, ARRAY_SIZE(krt_raw_op_names), o);
	if (op < 0 || !size || !depth || depth > KRT_RAW_MAX_DEPTH ||
	    !time_ms || time_ms > KRT_RAW_MAX_TIME_MS)
		return -EINVAL;
	if (size > (op == KRT_RAW_SEND ? KRT_RAW_MAX_MSG : KRT_RAW_MAX_IO))
		return -EMSGSIZE;
	ret = krt_raw_addr(a, p, &ss);
	if (ret)
		return ret;
	return krt_raw_do_run((struct sockaddr *)&ss, op, size, depth, time_ms);
}

static ssize_t krt_raw_ctl_write(struct file *f, const char __user *ubuf,
				 size_t len, loff_t *pos)
{
	char buf[160];
	int ret;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	mutex_lock(&krt_raw_lock);
	krt_raw_result[0] = '\0';
	ret = krt_raw_cmd(buf);
	mutex_unlock(&krt_raw_lock);
	return ret ? ret : len;
}

static const struct file_operations krt_raw_ctl_fops = {
	.owner = THIS_MODULE,
	.write = krt_raw_ctl_write,
	.llseek = noop_llseek,
};

static int krt_raw_result_show(struct seq_file *m, void *v)
{
	mutex_lock(&krt_raw_lock);
	seq_puts(m, krt_raw_result);
	mutex_unlock(&krt_raw_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(krt_raw_result);

static int __init krt_raw_init(void)
{
	krt_raw_wq = alloc_workqueue("krt_raw", WQ_UNBOUND, 0);
	if (!krt_raw_wq)
		return -ENOMEM;
	krt_raw_dir = debugfs_create_dir("krt_raw", NULL);
	debugfs_create_file("ctl", 0200, krt_raw_dir, NULL, &krt_raw_ctl_fops);
	debugfs_create_file("result", 0444, krt_raw_dir, NULL, &krt_raw_result_fops);
	return 0;
}

static void __exit krt_raw_exit(void)
{
	struct rdma_cm_id *id;
	struct krt_raw_conn *c;

	/* waits for a run in progress (a writer of ctl) */
	debugfs_remove_recursive(krt_raw_dir);
	/* no new connection, then every server connection torn down */
	id = xchg(&krt_raw_listen_id, NULL);
	if (id)
		rdma_destroy_id(id);
	spin_lock(&krt_raw_conns_lock);
	list_for_each_entry(c, &krt_raw_srv_conns, node)
		krt_raw_srv_kill(c);
	spin_unlock(&krt_raw_conns_lock);
	destroy_workqueue(krt_raw_wq);
}

module_init(krt_raw_init);
module_exit(krt_raw_exit);
MODULE_DESCRIPTION("krt benchmark baseline: one RC QP, raw verbs");
MODULE_LICENSE("GPL");
MODULE_INFO(test, "Y");
