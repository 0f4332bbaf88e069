// SPDX-License-Identifier: GPL-2.0
/*
 * krt: the built-in test service, and the ping/xfer clients behind
 * ``krtctl ping`` and ``krtctl xfer``.
 *
 * DOC: Test service
 *
 * Loaded with ``test_service=1`` a node answers service id
 * %KRT_SERVICE_TEST: ``ping`` requests are echoed; ``read`` requests get
 * freshly allocated pages filled with a pattern RDMA-WRITTEN into the
 * client's buffer; ``write`` requests are RDMA-READ into fresh pages and
 * checked against the pattern (a mismatch answers -EILSEQ).  The pattern
 * depends on a per-request seed and on the byte's offset, so misplaced
 * data is caught too.  Both sides use separately allocated pages with odd
 * first offsets.
 *
 * The debugfs knob ``fault/hold_replies`` makes the service keep requests
 * unanswered until it is cleared, to drive deadlines.
 *
 * The clients run in the caller of KRT_CMD_TEST: ``threads`` kernel
 * threads each keep ``depth`` requests in flight until ``count`` requests
 * were submitted in all, check every completion (exactly once, status,
 * payload or data) and record latencies.  With ``noretry`` requests carry
 * %KRT_REQ_NORETRY; the outcome includes how many requests krt re-sent
 * to the peer during the run (its ``resent`` counter's delta).
 *
 * Memory is bounded by the module parameter ``test_mem_mb`` (default 64),
 * separately for each side: the buffers of all client runs together (a
 * run that would pass it is refused before it starts), and the pages the
 * service allocates for remote data requests (a request that would pass
 * it is answered -EBUSY without a transfer), so a remote cannot make the
 * service allocate without bound.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include "krt.h"

bool krt_test_service;
module_param_named(test_service, krt_test_service, bool, 0444);
MODULE_PARM_DESC(test_service, "Answer krtctl ping/xfer from other nodes (default: off)");

/* The test message, in front of a ping's payload. */
struct krt_tmsg {
	__be32	op;		/* enum krt_test_op */
	__be32	seed;
	__be32	size;
} __packed;

static unsigned int krt_test_mem_mb = 64;
module_param_named(test_mem_mb, krt_test_mem_mb, uint, 0644);
MODULE_PARM_DESC(test_mem_mb,
		 "Test service memory in MiB, for the buffers of all ping/xfer runs and again for the pages of served data requests (default: 64)");

/* bytes in use: by client runs, by the service's data requests */
static atomic64_t krt_test_mem_runs = ATOMIC64_INIT(0);
static atomic64_t krt_test_mem_srv = ATOMIC64_INIT(0);

static u64 krt_test_mem_cap(void)
{
	return (u64)READ_ONCE(krt_test_mem_mb) << 20;
}

/* Take @bytes of @used if it stays within test_mem_mb; Return: true if so. */
static bool krt_test_mem_charge(atomic64_t *used, u64 bytes)
{
	u64 cap = krt_test_mem_cap();
	s64 old = atomic64_read(used);

	do {
		if (bytes > cap || (u64)old + bytes > cap)
			return false;
	} while (!atomic64_try_cmpxchg(used, &old, old + bytes));
	return true;
}

static void krt_test_mem_uncharge(atomic64_t *used, u64 bytes)
{
	atomic64_sub(bytes, used);
}

/* Pages of a buffer of @size bytes at an offset below a page. */
static u32 krt_buf_pages(u32 size)
{
	return DIV_ROUND_UP(size, PAGE_SIZE) + 1;
}

/* What krt_buf_alloc() takes for @size bytes at most. */
static u64 krt_buf_bytes(u32 size)
{
	return (u64)krt_buf_pages(size) * (PAGE_SIZE + sizeof(struct bio_vec));
}

static u8 krt_pat(u32 seed, u32 i)
{
	return (u8)(seed ^ (i * 131) ^ (i >> 9));
}

/* Fill or check @len bytes of a buffer; Return: bytes that differ. */
static u32 krt_pat_buf(struct bio_vec *bv, unsigned int nr, u32 seed, bool fill)
{
	u32 off = 0, bad = 0, j;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		u8 *p = kmap_local_page(bv[i].bv_page) + bv[i].bv_offset;

		for (j = 0; j < bv[i].bv_len; j++, off++) {
			if (fill)
				p[j] = krt_pat(seed, off);
			else
				bad += p[j] != krt_pat(seed, off);
		}
		kunmap_local(p);
	}
	return bad;
}

static void krt_buf_free(struct bio_vec *bv, unsigned int nr)
{
	unsigned int i;

	if (!bv)
		return;
	for (i = 0; i < nr; i++)
		if (bv[i].bv_page)
			__free_page(bv[i].bv_page);
	kfree(bv);
}

/* A buffer of @size bytes from @offset on, one separate page per segment. */
static struct bio_vec *krt_buf_alloc(u32 size, u32 offset, unsigned int *nr, gfp_t gfp)
{
	unsigned int n = DIV_ROUND_UP(offset + size, PAGE_SIZE), i;
	struct bio_vec *bv;
	u32 left = size;

	bv = kcalloc(n, sizeof(*bv), gfp);
	if (!bv)
		return NULL;
	for (i = 0; i < n; i++) {
		bv[i].bv_page = alloc_page(gfp);
		if (!bv[i].bv_page) {
			krt_buf_free(bv, n);
			return NULL;
		}
		bv[i].bv_offset = i ? 0 : offset;
		bv[i].bv_len = min_t(u32, left, PAGE_SIZE - bv[i].bv_offset);
		left -= bv[i].bv_len;
	}
	*nr = n;
	return bv;
}

/* ---- the service ---- */

struct krt_tsvc_io {
	struct krt_srv_req	*sreq;
	struct list_head	held;
	struct work_struct	work;
	struct bio_vec		*bv;
	unsigned int		nr;
	u32			seed;
	u64			charged;	/* of krt_test_mem_srv */
};

static DEFINE_SPINLOCK(krt_tsvc_lock);	/* krt_tsvc_held, krt_tsvc_holding */
static LIST_HEAD(krt_tsvc_held);
static bool krt_tsvc_holding;
static bool krt_tsvc_registered;

/* what an io holds: its pages and their charge, and itself */
static void krt_tsvc_io_free(struct krt_tsvc_io *io)
{
	krt_buf_free(io->bv, io->nr);
	if (io->charged)
		krt_test_mem_uncharge(&krt_test_mem_srv, io->charged);
	kfree(io);
}

static void krt_tsvc_answer(struct krt_tsvc_io *io, int status, const void *msg, u32 len)
{
	struct krt_srv_req *sreq = io->sreq;

	krt_tsvc_io_free(io);
	krt_srv_reply(sreq, status, msg, len);
}

static void krt_tsvc_data_done(struct krt_srv_req *sreq, int status)
{
	struct krt_tsvc_io *io = sreq->priv;

	if (!status && sreq->dir == KRT_DATA_WRITE &&
	    krt_pat_buf(io->bv, io->nr, io->seed, false))
		status = -EILSEQ;
	krt_tsvc_answer(io, status, NULL, 0);
}

/* a read's data and answer went together (krt_srv_data_reply()) */
static void krt_tsvc_read_done(struct krt_srv_req *sreq, int status)
{
	krt_tsvc_io_free(sreq->priv);
}

static void krt_tsvc_data_work(struct work_struct *work)
{
	struct krt_tsvc_io *io = container_of(work, struct krt_tsvc_io, work);
	struct krt_srv_req *sreq = io->sreq;
	u64 bytes = krt_buf_bytes(sreq->data_len);
	int ret;

	/* a remote's requests may not take more than test_mem_mb */
	if (!krt_test_mem_charge(&krt_test_mem_srv, bytes)) {
		pr_warn_ratelimited("test service: data request of %u bytes refused (-EBUSY): test_mem_mb (%u MiB) in use\n",
				    sreq->data_len, READ_ONCE(krt_test_mem_mb));
		krt_tsvc_answer(io, -EBUSY, NULL, 0);
		return;
	}
	io->charged = bytes;
	/* an odd first offset of our own */
	io->bv = krt_buf_alloc(sreq->data_len, (io->seed * 2 + 7) % 1024, &io->nr,
			       GFP_KERNEL);
	if (!io->bv) {
		krt_tsvc_answer(io, -ENOMEM, NULL, 0);
		return;
	}
	if (sreq->dir == KRT_DATA_READ) {
		krt_pat_buf(io->bv, io->nr, io->seed, true);
		ret = krt_srv_data_reply(sreq, io->bv, io->nr, 0, NULL, 0, krt_tsvc_read_done);
	} else {
		ret = krt_srv_data(sreq, io->bv, io->nr, krt_tsvc_data_done);
	}
	if (ret)
		krt_tsvc_answer(io, ret, NULL, 0);
}

static void krt_tsvc_process(struct krt_tsvc_io *io)
{
	struct krt_srv_req *sreq = io->sreq;
	const struct krt_tmsg *m = sreq->msg;
	u32 op;

	if (sreq->msg_len < sizeof(*m)) {
		krt_tsvc_answer(io, -EINVAL, NULL, 0);
		return;
	}
	op = be32_to_cpu(m->op);
	io->seed = be32_to_cpu(m->seed);
	if (op == KRT_TEST_PING && sreq->dir == KRT_DATA_NONE) {
		krt_tsvc_answer(io, 0, sreq->msg, sreq->msg_len);
		return;
	}
	if ((op == KRT_TEST_READ && sreq->dir == KRT_DATA_READ) ||
	    (op == KRT_TEST_WRITE && sreq->dir == KRT_DATA_WRITE)) {
		INIT_WORK(&io->work, krt_tsvc_data_work);
		queue_work(krt_wq, &io->work);
		return;
	}
	krt_tsvc_answer(io, -EINVAL, NULL, 0);
}

static void krt_tsvc_request(struct krt_service *svc, struct krt_srv_req *sreq)
{
	struct krt_tsvc_io *io;

	io = kzalloc(sizeof(*io), GFP_ATOMIC);
	if (!io) {
		krt_srv_reply(sreq, -ENOMEM, NULL, 0);
		return;
	}
	io->sreq = sreq;
	sreq->priv = io;
	spin_lock_bh(&krt_tsvc_lock);
	if (krt_tsvc_holding) {
		list_add_tail(&io->held, &krt_tsvc_held);
		spin_unlock_bh(&krt_tsvc_lock);
		return;
	}
	spin_unlock_bh(&krt_tsvc_lock);
	krt_tsvc_process(io);
}

static struct krt_service krt_tsvc = {
	.id		= KRT_SERVICE_TEST,
	.name		= "test",
	.request	= krt_tsvc_request,
};

/**
 * krt_test_hold() - hold the test service's answers, or release them
 * @hold: true to hold from now on; false answers every held request
 */
void krt_test_hold(bool hold)
{
	struct krt_tsvc_io *io, *tmp;
	LIST_HEAD(held);

	spin_lock_bh(&krt_tsvc_lock);
	krt_tsvc_holding = hold;
	if (!hold)
		list_splice_init(&krt_tsvc_held, &held);
	spin_unlock_bh(&krt_tsvc_lock);
	list_for_each_entry_safe(io, tmp, &held, held) {
		list_del(&io->held);
		krt_tsvc_process(io);
	}
}

/**
 * krt_test_holding() - does the test service hold answers?
 *
 * Return: the knob's value.
 */
bool krt_test_holding(void)
{
	return READ_ONCE(krt_tsvc_holding);
}

/**
 * krt_test_init() - register the test service when test_service=1
 *
 * Return: 0 or the error of krt_service_register().
 */
int krt_test_init(void)
{
	int ret;

	if (!krt_test_service)
		return 0;
	ret = krt_service_register(&krt_tsvc);
	if (!ret)
		krt_tsvc_registered = true;
	return ret;
}

/**
 * krt_test_exit() - answer held requests and unregister the test service
 */
void krt_test_exit(void)
{
	if (!krt_tsvc_registered)
		return;
	krt_test_hold(false);
	krt_service_unregister(&krt_tsvc);
	krt_tsvc_registered = false;
}

/* ---- the clients ---- */

struct krt_trun {
	const struct krt_test_args	*a;
	struct krt_peer			*peer;
	spinlock_t			lock;	/* everything below */
	struct krt_test_result		*res;
	u64				*lat;
	u32				nlat;
	u32				lat_cap;
	u32				seq;
};

struct krt_tthr {
	struct krt_trun		*run;
	u32			count;
	u32			idx;
	spinlock_t		lock;		/* @done */
	struct list_head	done;
	wait_queue_head_t	wq;
	struct completion	exited;
	struct list_head	free;		/* the thread's own */
	u32			inflight;	/* the thread's own */
	struct krt_tio		*ios;
	u32			nios;
};

struct krt_tio {
	struct krt_req		req;
	struct krt_tthr		*t;
	struct list_head	entry;
	atomic_t		ndone;
	struct bio_vec		*bv;
	unsigned int		nr;
	u32			seed;
	u64			t0;
	u8			*msg;
	u8			*rsp;
};

static void krt_tio_done(struct krt_req *req)
{
	struct krt_tio *io = container_of(req, struct krt_tio, req);
	struct krt_tthr *t = io->t;
	unsigned long flags;

	if (atomic_inc_return(&io->ndone) != 1) {
		spin_lock_irqsave(&t->run->lock, flags);
		t->run->res->double_done++;
		spin_unlock_irqrestore(&t->run->lock, flags);
		return;
	}
	spin_lock_irqsave(&t->lock, flags);
	list_add_tail(&io->entry, &t->done);
	spin_unlock_irqrestore(&t->lock, flags);
	wake_up(&t->wq);
}

static void krt_trun_error(struct krt_trun *run, int err)
{
	spin_lock_bh(&run->lock);
	run->res->errors++;
	if (!run->res->first_error)
		run->res->first_error = err;
	spin_unlock_bh(&run->lock);
}

/* Check a completed request and account for it. */
static void krt_tio_check(struct krt_tio *io)
{
	struct krt_trun *run = io->t->run;
	const struct krt_test_args *a = run->a;
	struct krt_req *req = &io->req;
	u64 lat = local_clock() - io->t0;
	bool bad = false;

	if (req->status || req->rsp_status) {
		krt_trun_error(run, req->status ?: req->rsp_status);
		return;
	}
	if (a->op == KRT_TEST_PING)
		bad = req->rsp_len != req->msg_len ||
		      memcmp(io->rsp, io->msg, req->msg_len);
	else if (a->op == KRT_TEST_READ)
		bad = krt_pat_buf(io->bv, io->nr, io->seed, false) != 0;
	spin_lock_bh(&run->lock);
	if (bad) {
		run->res->mismatches++;
	} else {
		run->res->ok++;
		run->res->bytes += a->size;
	}
	if (run->nlat < run->lat_cap)
		run->lat[run->nlat++] = lat;
	spin_unlock_bh(&run->lock);
}

static int krt_tio_submit(struct krt_tio *io)
{
	struct krt_trun *run = io->t->run;
	const struct krt_test_args *a = run->a;
	struct krt_tmsg *m = (struct krt_tmsg *)io->msg;
	struct krt_req *req = &io->req;
	int ret;

	spin_lock_bh(&run->lock);
	io->seed = ++run->seq * 2654435761U;
	spin_unlock_bh(&run->lock);
	m->op = cpu_to_be32(a->op);
	m->seed = cpu_to_be32(io->seed);
	m->size = cpu_to_be32(a->size);
	memset(req, 0, sizeof(*req));
	req->service = KRT_SERVICE_TEST;
	req->flags = (a->nowait ? KRT_REQ_NOWAIT : 0) |
		     (a->noretry ? KRT_REQ_NORETRY : 0);
	req->timeout_ms = a->timeout_ms;
	req->msg = io->msg;
	req->rsp = io->rsp;
	req->rsp_max = KRT_MAX_MSG;
	req->done = krt_tio_done;
	if (a->op == KRT_TEST_PING) {
		u32 i;

		req->msg_len = sizeof(*m) + a->size;
		for (i = 0; i < a->size && sizeof(*m) + i < KRT_MAX_MSG + 64; i++)
			io->msg[sizeof(*m) + i] = krt_pat(io->seed, i);
		memset(io->rsp, 0, KRT_MAX_MSG);
	} else {
		req->msg_len = sizeof(*m);
		req->dir = a->op == KRT_TEST_READ ? KRT_DATA_READ : KRT_DATA_WRITE;
		req->bvec = io->bv;
		req->nr_bvec = io->nr;
		req->data_len = a->size;
		if (a->op == KRT_TEST_WRITE)
			krt_pat_buf(io->bv, io->nr, io->seed, true);
		else
			krt_pat_buf(io->bv, io->nr, ~io->seed, true);	/* not the answer */
	}
	atomic_set(&io->ndone, 0);
	io->t0 = local_clock();
	/*
	 * The API allows any context but hardirq: submit in atomic context
	 * (bottom halves off, RCU read side) so that the debug kernel's
	 * might_sleep checks catch any sleep on this path.
	 */
	local_bh_disable();
	rcu_read_lock();
	ret = krt_submit(run->peer, req);
	rcu_read_unlock();
	local_bh_enable();
	return ret;
}

/* One client thread's requests, until they all completed. */
static void krt_tthr_loop(struct krt_tthr *t)
{
	struct krt_trun *run = t->run;
	struct krt_tio *io, *tmp;
	u32 submitted = 0;
	LIST_HEAD(done);
	int ret;

	while (submitted < t->count || t->inflight) {
		/* idle, not uninterruptible: a long run is no hung task */
		wait_event_idle(t->wq, !list_empty_careful(&t->done) ||
				(submitted < t->count && !list_empty(&t->free)));
		spin_lock_bh(&t->lock);
		list_splice_init(&t->done, &done);
		spin_unlock_bh(&t->lock);
		list_for_each_entry_safe(io, tmp, &done, entry) {
			list_del(&io->entry);
			krt_tio_check(io);
			t->inflight--;
			list_add_tail(&io->entry, &t->free);
		}
		while (submitted < t->count && !list_empty(&t->free)) {
			io = list_first_entry(&t->free, struct krt_tio, entry);
			list_del(&io->entry);
			submitted++;
			t->inflight++;
			ret = krt_tio_submit(io);
			if (!ret)
				continue;
			t->inflight--;
			list_add_tail(&io->entry, &t->free);
			if (ret == -EAGAIN && run->a->nowait) {
				spin_lock_bh(&run->lock);
				run->res->eagain++;
				spin_unlock_bh(&run->lock);
			} else {
				krt_trun_error(run, ret);
			}
		}
	}
}

/*
 * A client kthread.  The caller frees @t, and may return to a module
 * unload, once @t->exited completes: kthread_complete_and_exit() does not
 * come back into module text after complete().
 */
static int krt_tthr_fn(void *data)
{
	struct krt_tthr *t = data;

	krt_tthr_loop(t);
	kthread_complete_and_exit(&t->exited, 0);
}

/* Requests thread @i of a run submits. */
static u32 krt_trun_count(const struct krt_test_args *a, u32 i)
{
	return a->count / a->threads + (i < a->count % a->threads);
}

/* Buffers thread @i of a run keeps (one per request in flight). */
static u32 krt_trun_nios(const struct krt_test_args *a, u32 i)
{
	return min(a->depth, max(krt_trun_count(a, i), 1U));
}

/* Memory a run allocates, at most: what it is charged. */
static u64 krt_trun_bytes(const struct krt_test_args *a)
{
	u64 per_io = sizeof(struct krt_tio) + kmalloc_size_roundup(KRT_MAX_MSG + 64) +
		     kmalloc_size_roundup(KRT_MAX_MSG);
	u64 nios = 0;
	u32 i;

	if (a->op != KRT_TEST_PING)
		per_io += krt_buf_bytes(a->size);
	for (i = 0; i < a->threads; i++)
		nios += krt_trun_nios(a, i);
	return nios * per_io + (u64)a->count * sizeof(u64) +
	       (u64)a->threads * sizeof(struct krt_tthr);
}

static void krt_tthr_free(struct krt_tthr *t)
{
	u32 i;

	for (i = 0; t->ios && i < t->nios; i++) {
		krt_buf_free(t->ios[i].bv, t->ios[i].nr);
		kfree(t->ios[i].msg);
		kfree(t->ios[i].rsp);
	}
	kfree(t->ios);
}

static int krt_tthr_init(struct krt_tthr *t, struct krt_trun *run, u32 idx, u32 count)
{
	const struct krt_test_args *a = run->a;
	u32 i;

	t->run = run;
	t->idx = idx;
	t->count = count;
	spin_lock_init(&t->lock);
	INIT_LIST_HEAD(&t->done);
	INIT_LIST_HEAD(&t->free);
	init_waitqueue_head(&t->wq);
	init_completion(&t->exited);
	t->nios = krt_trun_nios(a, idx);
	t->ios = kcalloc(t->nios, sizeof(*t->ios), GFP_KERNEL);
	if (!t->ios)
		return -ENOMEM;
	for (i = 0; i < t->nios; i++) {
		struct krt_tio *io = &t->ios[i];

		io->t = t;
		io->msg = kzalloc(KRT_MAX_MSG + 64, GFP_KERNEL);
		io->rsp = kzalloc(KRT_MAX_MSG, GFP_KERNEL);
		if (!io->msg || !io->rsp)
			return -ENOMEM;
		if (a->op != KRT_TEST_PING) {
			/*
			 * odd offsets, different per buffer; every other
			 * one in the second half of its page, so that small
			 * buffers span two pages too
			 */
			io->bv = krt_buf_alloc(a->size, (idx * 64 + i * 2 + 1 +
							 (i & 1) * (PAGE_SIZE / 2)) % PAGE_SIZE,
					       &io->nr, GFP_KERNEL);
			if (!io->bv)
				return -ENOMEM;
		}
		list_add_tail(&io->entry, &t->free);
	}
	return 0;
}

static int krt_u64_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static void krt_trun_latency(struct krt_trun *run)
{
	struct krt_test_result *res = run->res;
	u64 sum = 0;
	u32 i, n = run->nlat;

	if (!n)
		return;
	sort(run->lat, n, sizeof(u64), krt_u64_cmp, NULL);
	for (i = 0; i < n; i++)
		sum += run->lat[i];
	res->lat_min = run->lat[0];
	res->lat_max = run->lat[n - 1];
	res->lat_avg = div_u64(sum, n);
	res->lat_p99 = run->lat[min(n - 1, (u32)div_u64((u64)n * 99, 100))];
}

/**
 * krt_test_run() - run ping or xfer requests against a peer
 * @args: what to run
 * @res: filled with the outcome
 * @extack: for error messages
 *
 * Its buffers are charged to test_mem_mb for the run's duration.
 *
 * Return: 0 when the run took place (its errors are in @res), or an
 * error before any request: -ENOENT (no such peer), -EINVAL (xfer of 0
 * bytes, or buffers over test_mem_mb by themselves), -EBUSY (over
 * test_mem_mb with the other runs' buffers), -ENOMEM.
 */
int krt_test_run(const struct krt_test_args *args, struct krt_test_result *res,
		 struct netlink_ext_ack *extack)
{
	struct task_struct *task;
	struct krt_tthr *thr;
	struct krt_trun run = { .a = args, .res = res };
	u64 t0, bytes, resent0;
	u32 i;
	int ret = 0;

	if (args->op != KRT_TEST_PING && !args->size) {
		NL_SET_ERR_MSG_MOD(extack, "xfer needs a size of at least 1 byte");
		return -EINVAL;
	}
	if (!args->threads || !args->depth) {
		NL_SET_ERR_MSG_MOD(extack, "threads and depth must be at least 1");
		return -EINVAL;
	}
	bytes = krt_trun_bytes(args);
	if (bytes > krt_test_mem_cap()) {
		NL_SET_ERR_MSG_MOD(extack,
				   "threads x depth x size: buffers over the test service's limit (module parameter test_mem_mb)");
		return -EINVAL;
	}
	if (!krt_test_mem_charge(&krt_test_mem_runs, bytes)) {
		NL_SET_ERR_MSG_MOD(extack,
				   "buffers over the test service's limit (module parameter test_mem_mb) with the runs in progress");
		return -EBUSY;
	}
	run.peer = krt_peer_get(args->peer);
	if (!run.peer) {
		NL_SET_ERR_MSG_MOD(extack, "no such peer");
		krt_test_mem_uncharge(&krt_test_mem_runs, bytes);
		return -ENOENT;
	}
	spin_lock_init(&run.lock);
	run.lat_cap = args->count;
	run.lat = kvcalloc(run.lat_cap, sizeof(u64), GFP_KERNEL);
	thr = kcalloc(args->threads, sizeof(*thr), GFP_KERNEL);
	if (!run.lat || !thr) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < args->threads; i++) {
		ret = krt_tthr_init(&thr[i], &run, i, krt_trun_count(args, i));
		if (ret)
			goto out_threads;
	}
	resent0 = atomic64_read(&run.peer->resent);
	t0 = local_clock();
	/*
	 * One thread runs in the caller, so fault injection aimed at the
	 * caller (fail-nth) reaches the submit path too.
	 */
	for (i = 0; i < args->threads; i++) {
		task = args->threads > 1 ?
		       kthread_run(krt_tthr_fn, &thr[i], "krt-test/%u", i) :
		       ERR_PTR(-EAGAIN);
		if (IS_ERR(task)) {
			/* run it here instead: every request still runs */
			krt_tthr_loop(&thr[i]);
			complete(&thr[i].exited);
		}
	}
	/* bounded by count and deadlines; idle so long runs are no hung task */
	for (i = 0; i < args->threads; i++)
		wait_for_completion_state(&thr[i].exited, TASK_IDLE);
	res->elapsed_ns = local_clock() - t0;
	/* every request of the peer re-sent meanwhile, ours or not */
	res->resent = atomic64_read(&run.peer->resent) - resent0;
	krt_trun_latency(&run);
	ret = 0;
out_threads:
	for (i = 0; i < args->threads; i++)
		krt_tthr_free(&thr[i]);
out:
	kfree(thr);
	kvfree(run.lat);
	krt_peer_put(run.peer);
	krt_test_mem_uncharge(&krt_test_mem_runs, bytes);
	if (ret == -ENOMEM)
		NL_SET_ERR_MSG_MOD(extack, "out of memory for the test buffers");
	return ret;
}
