// SPDX-License-Identifier: GPL-2.0
/*
 * krt_bench: the client load loop behind KRT_BENCH_CMD_RUN.
 *
 * DOC: Client
 *
 * A run looks its peer up by name (krt_peer_get()), checks the size
 * against %KRT_MAX_MSG (send) or krt_peer_max_io() (read, write), makes
 * every buffer it needs, then starts ``threads`` kernel threads.  Each
 * keeps ``depth`` requests in flight until ``count`` requests were
 * submitted in all, or ``time`` seconds passed, then waits for its
 * requests to complete.  Unverified, a request is submitted again from its
 * @done callback, as a block driver's completion starts the next I/O: no
 * thread wakes up per request.  Verified, the thread checks each answer
 * and submits the next.  A request's latency runs from just before
 * krt_submit() to its @done callback, into a per-thread log2 histogram
 * (4 buckets per power of two) merged at the end.  Times come from
 * ktime_get_ns(), one clock for every CPU (a request may complete on
 * another CPU than the one that submitted it).
 *
 * Unverified, nothing is touched per request: every request of a run
 * uses the same message (krt copies it at submission) and the same data
 * pages and segment array (krt only reads the array), so a run holds one
 * buffer whatever its depth.  Verified, each request has its own message
 * and pages, filled with a pattern of its seed (send, write) or checked
 * against it after the answer (read); the server checks what it receives
 * and answers -EILSEQ when it differs, counted as a mismatch.  Those
 * buffers are bounded by the module parameter ``mem_mb``.
 *
 * CPU time is the node's: user, system, softirq and irq time of every
 * online CPU (kcpustat_cpu_fetch()) before and after the run.  With both
 * ends on one node (loopback) it includes the server's work.
 *
 * A run stops early, ending with what completed, when its caller gets a
 * signal or the module is being unloaded (krt_bench_stop_all()).  A
 * submission krt refuses ends the submissions of its thread.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/kernel_stat.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/timekeeping.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/netlink.h>
#include "krt_bench.h"

unsigned int krt_bench_mem_mb = 64;
module_param_named(mem_mb, krt_bench_mem_mb, uint, 0644);
MODULE_PARM_DESC(mem_mb, "Client: MiB of buffers of a verified run, threads x depth x size (default: 64)");

static DEFINE_MUTEX(krt_bench_runs_lock);	/* krt_bench_runs, krt_bench_stopping */
static LIST_HEAD(krt_bench_runs);
static bool krt_bench_stopping;

struct krt_bench_io {
	struct krt_req		req;
	struct krt_bench_thr	*t;
	struct list_head	entry;		/* free or done list */
	u64			t0;		/* before submission, ktime_get_ns() */
	u64			t1;		/* at completion, ktime_get_ns() */
	u32			seed;
	struct bio_vec		*bv;		/* own (verify) or the run's */
	u8			*msg;		/* own (verify) or the run's */
};

struct krt_bench_thr {
	struct krt_bench_run	*run;
	u32			idx;
	u64			count;		/* to submit */
	/*
	 * Protects @done, @free, @submitted, @inflight, @refused and the
	 * counters and histogram while the thread runs: @done callbacks
	 * update them (unverified) as the thread does.
	 */
	spinlock_t		lock;
	struct list_head	done;		/* verified: answers to check */
	wait_queue_head_t	wq;
	struct completion	exited;
	struct list_head	free;
	u64			submitted;
	u32			inflight;
	u32			seq;		/* the thread's only (verified) */
	bool			refused;	/* krt_submit() failed: no more */
	struct krt_bench_io	*ios;
	u32			nios;
	u64			requests;
	u64			errors;
	u64			mismatches;
	u64			bytes;
	int			first_error;
	struct krt_bench_hist	hist;
};

struct krt_bench_run {
	const struct krt_bench_args	*a;
	struct krt_peer			*peer;
	struct list_head		entry;		/* on krt_bench_runs */
	bool				stop;		/* WRITE_ONCE/READ_ONCE */
	u64				end_ns;		/* time mode: ktime_get_ns() */
	struct krt_bench_thr		*thr;
	/* unverified: what every request uses */
	struct page			**pages;
	u32				nr_pages;
	struct bio_vec			*bv;
	u8				*msg;
};

static void krt_bench_thr_error(struct krt_bench_thr *t, int err)
{
	t->errors++;
	if (!t->first_error)
		t->first_error = err;
}

/* Account for a completed request. */
static void krt_bench_io_check(struct krt_bench_io *io)
{
	struct krt_bench_thr *t = io->t;
	const struct krt_bench_args *a = t->run->a;
	struct krt_req *req = &io->req;
	int err = req->status ?: req->rsp_status;

	if (err == -EILSEQ && !req->status && a->verify) {
		t->mismatches++;
		return;
	}
	if (err) {
		krt_bench_thr_error(t, err);
		return;
	}
	if (a->verify && a->op == KRT_BENCH_OP_READ &&
	    krt_bench_pat_buf(io->bv, req->nr_bvec, io->seed, false)) {
		t->mismatches++;
		return;
	}
	t->requests++;
	t->bytes += a->size;
	krt_bench_hist_add(&t->hist, io->t1 - io->t0);
}

static int krt_bench_io_submit(struct krt_bench_io *io)
{
	struct krt_bench_thr *t = io->t;
	const struct krt_bench_args *a = t->run->a;

	if (a->verify) {
		struct krt_bench_msg *m = (struct krt_bench_msg *)io->msg;

		io->seed = (t->idx + 1) * 0x9e3779b9U ^ (++t->seq * 2654435761U);
		m->seed = cpu_to_be32(io->seed);
		if (a->op == KRT_BENCH_OP_SEND)
			krt_bench_pat_mem(io->msg + sizeof(*m), a->size - sizeof(*m),
					  sizeof(*m), io->seed, true);
		else if (a->op == KRT_BENCH_OP_WRITE)
			krt_bench_pat_buf(io->bv, io->req.nr_bvec, io->seed, true);
		else	/* a read must bring the pattern: start from its opposite */
			krt_bench_pat_buf(io->bv, io->req.nr_bvec, ~io->seed, true);
	}
	io->t0 = ktime_get_ns();
	return krt_submit(t->run->peer, &io->req);
}

static bool krt_bench_can_submit(struct krt_bench_thr *t)
{
	struct krt_bench_run *run = t->run;

	return !t->refused && !READ_ONCE(run->stop) && t->submitted < t->count &&
	       (!run->end_ns || ktime_get_ns() < run->end_ns);
}

/* May one more be submitted?  Then it is counted.  Caller holds t->lock. */
static bool krt_bench_take(struct krt_bench_thr *t)
{
	lockdep_assert_held(&t->lock);
	if (!krt_bench_can_submit(t))
		return false;
	t->submitted++;
	t->inflight++;
	return true;
}

/* Submit @io, taken by krt_bench_take(); a refusal ends the thread's run. */
static void krt_bench_io_go(struct krt_bench_io *io)
{
	struct krt_bench_thr *t = io->t;
	unsigned long flags;
	int ret;

	ret = krt_bench_io_submit(io);
	if (!ret)
		return;
	spin_lock_irqsave(&t->lock, flags);
	t->inflight--;
	list_add_tail(&io->entry, &t->free);
	krt_bench_thr_error(t, ret);
	t->refused = true;
	wake_up(&t->wq);
	spin_unlock_irqrestore(&t->lock, flags);
}

/*
 * A request completed.  Verified, the thread checks it; else it is
 * counted here and submitted again while the run goes on.
 *
 * ORDER: wake under the lock: the thread takes it before it may finish
 * and free @t, so the wait queue is still there.
 */
static void krt_bench_io_done(struct krt_req *req)
{
	struct krt_bench_io *io = container_of(req, struct krt_bench_io, req);
	struct krt_bench_thr *t = io->t;
	unsigned long flags;
	bool again;

	io->t1 = ktime_get_ns();
	spin_lock_irqsave(&t->lock, flags);
	if (t->run->a->verify) {
		list_add_tail(&io->entry, &t->done);
		wake_up(&t->wq);
		spin_unlock_irqrestore(&t->lock, flags);
		return;
	}
	krt_bench_io_check(io);
	t->inflight--;
	again = krt_bench_take(t);
	if (!again) {
		list_add_tail(&io->entry, &t->free);
		if (!t->inflight)
			wake_up(&t->wq);
	}
	spin_unlock_irqrestore(&t->lock, flags);
	if (again)
		krt_bench_io_go(io);
}

static bool krt_bench_thr_woken(struct krt_bench_thr *t)
{
	bool woken;

	spin_lock_bh(&t->lock);
	woken = !list_empty(&t->done) ||
		(!list_empty(&t->free) && krt_bench_can_submit(t)) ||
		(!t->inflight && !krt_bench_can_submit(t));
	spin_unlock_bh(&t->lock);
	return woken;
}

/* One thread's requests, until it may submit no more and all completed. */
static void krt_bench_thr_loop(struct krt_bench_thr *t)
{
	struct krt_bench_io *io, *tmp;
	LIST_HEAD(done);
	bool end;

	for (;;) {
		/* idle, not uninterruptible: a long run is no hung task */
		wait_event_idle(t->wq, krt_bench_thr_woken(t));
		spin_lock_bh(&t->lock);
		list_splice_init(&t->done, &done);
		spin_unlock_bh(&t->lock);
		list_for_each_entry_safe(io, tmp, &done, entry) {
			list_del(&io->entry);
			/* verified: only this thread counts, outside the lock */
			krt_bench_io_check(io);
			spin_lock_bh(&t->lock);
			t->inflight--;
			list_add_tail(&io->entry, &t->free);
			spin_unlock_bh(&t->lock);
		}
		for (;;) {
			spin_lock_bh(&t->lock);
			io = list_first_entry_or_null(&t->free, struct krt_bench_io, entry);
			if (io && krt_bench_take(t))
				list_del(&io->entry);
			else
				io = NULL;
			end = !t->inflight && !krt_bench_can_submit(t);
			spin_unlock_bh(&t->lock);
			if (!io)
				break;
			krt_bench_io_go(io);
		}
		if (end)
			break;
	}
}

/*
 * A client kthread.  The run frees @t, and the module may be unloaded,
 * once @t->exited completed: kthread_complete_and_exit() does not come
 * back into module text after complete().
 */
static int krt_bench_thr_fn(void *data)
{
	struct krt_bench_thr *t = data;

	krt_bench_thr_loop(t);
	kthread_complete_and_exit(&t->exited, 0);
}

/* user, system, softirq and irq time of every online CPU, in ns */
static u64 krt_bench_cpu_ns(void)
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

static void krt_bench_pages_put(struct page **pages, u32 n)
{
	u32 i;

	if (!pages)
		return;
	for (i = 0; i < n; i++)
		if (pages[i])
			__free_page(pages[i]);
	kvfree(pages);
}

/* @size bytes of fresh pages and their segments; Return: 0 or -ENOMEM. */
static int krt_bench_buf_alloc(u32 size, struct page ***pagesp, struct bio_vec **bvp)
{
	u32 n = DIV_ROUND_UP(size, PAGE_SIZE), left = size, i;
	struct page **pages;
	struct bio_vec *bv;

	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL);
	bv = kvcalloc(n, sizeof(*bv), GFP_KERNEL);
	if (!pages || !bv)
		goto err;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);	/* never send stale memory */
		if (!pages[i])
			goto err;
		bv[i].bv_page = pages[i];
		bv[i].bv_offset = 0;
		bv[i].bv_len = min_t(u32, left, PAGE_SIZE);
		left -= bv[i].bv_len;
	}
	*pagesp = pages;
	*bvp = bv;
	return 0;

err:
	krt_bench_pages_put(pages, n);
	kvfree(bv);
	return -ENOMEM;
}

/* the message every request of a run starts with */
static void krt_bench_msg_init(u8 *buf, const struct krt_bench_args *a)
{
	struct krt_bench_msg *m = (struct krt_bench_msg *)buf;

	m->magic = cpu_to_be32(KRT_BENCH_MAGIC);
	m->flags = cpu_to_be32(a->verify ? KRT_BENCH_F_VERIFY : 0);
	m->seed = 0;
}

static u32 krt_bench_msg_len(const struct krt_bench_args *a)
{
	return a->op == KRT_BENCH_OP_SEND ? a->size : sizeof(struct krt_bench_msg);
}

/* Make the request @io: its fixed fields, and its buffers when verified. */
static int krt_bench_io_init(struct krt_bench_io *io, struct krt_bench_thr *t)
{
	struct krt_bench_run *run = t->run;
	const struct krt_bench_args *a = run->a;
	struct krt_req *req = &io->req;
	struct page **pages = NULL;

	io->t = t;
	io->bv = run->bv;
	io->msg = run->msg;
	if (a->verify) {
		io->msg = kzalloc(krt_bench_msg_len(a), GFP_KERNEL);
		if (!io->msg)
			return -ENOMEM;
		krt_bench_msg_init(io->msg, a);
		if (a->op != KRT_BENCH_OP_SEND) {
			if (krt_bench_buf_alloc(a->size, &pages, &io->bv))
				return -ENOMEM;
			kvfree(pages);	/* the segments keep the pages */
		}
	}
	req->service = KRT_BENCH_SERVICE;
	req->msg = io->msg;
	req->msg_len = krt_bench_msg_len(a);
	req->done = krt_bench_io_done;
	req->priv = io;
	if (a->op != KRT_BENCH_OP_SEND) {
		req->dir = a->op == KRT_BENCH_OP_READ ? KRT_DATA_READ : KRT_DATA_WRITE;
		req->bvec = io->bv;
		req->nr_bvec = DIV_ROUND_UP(a->size, PAGE_SIZE);
		req->data_len = a->size;
	}
	list_add_tail(&io->entry, &t->free);
	return 0;
}

static void krt_bench_io_free(struct krt_bench_io *io, const struct krt_bench_args *a)
{
	u32 i;

	if (!a->verify)
		return;
	kfree(io->msg);
	if (io->bv) {
		for (i = 0; i < io->req.nr_bvec; i++)
			if (io->bv[i].bv_page)
				__free_page(io->bv[i].bv_page);
		kvfree(io->bv);
	}
}

/* Requests thread @i submits at most, and the buffers it keeps. */
static u64 krt_bench_thr_count(const struct krt_bench_args *a, u32 i)
{
	if (a->time_s)
		return U64_MAX;
	return a->count / a->threads + (i < a->count % a->threads);
}

static int krt_bench_thr_init(struct krt_bench_thr *t, struct krt_bench_run *run, u32 idx)
{
	const struct krt_bench_args *a = run->a;
	u32 i;
	int ret;

	t->run = run;
	t->idx = idx;
	t->count = krt_bench_thr_count(a, idx);
	spin_lock_init(&t->lock);
	INIT_LIST_HEAD(&t->done);
	INIT_LIST_HEAD(&t->free);
	init_waitqueue_head(&t->wq);
	init_completion(&t->exited);
	t->nios = min_t(u64, a->depth, max_t(u64, t->count, 1));
	t->ios = kvcalloc(t->nios, sizeof(*t->ios), GFP_KERNEL);
	if (!t->ios)
		return -ENOMEM;
	for (i = 0; i < t->nios; i++) {
		ret = krt_bench_io_init(&t->ios[i], t);
		if (ret)
			return ret;
	}
	return 0;
}

static void krt_bench_thr_free(struct krt_bench_thr *t, const struct krt_bench_args *a)
{
	u32 i;

	for (i = 0; t->ios && i < t->nios; i++)
		krt_bench_io_free(&t->ios[i], a);
	kvfree(t->ios);
}

/* The run's shared buffers (unverified) and its threads' requests. */
static int krt_bench_run_init(struct krt_bench_run *run)
{
	const struct krt_bench_args *a = run->a;
	u32 i;
	int ret;

	if (!a->verify) {
		run->msg = kzalloc(krt_bench_msg_len(a), GFP_KERNEL);
		if (!run->msg)
			return -ENOMEM;
		krt_bench_msg_init(run->msg, a);
		if (a->op != KRT_BENCH_OP_SEND) {
			run->nr_pages = DIV_ROUND_UP(a->size, PAGE_SIZE);
			ret = krt_bench_buf_alloc(a->size, &run->pages, &run->bv);
			if (ret)
				return ret;
		}
	}
	run->thr = kvcalloc(a->threads, sizeof(*run->thr), GFP_KERNEL);
	if (!run->thr)
		return -ENOMEM;
	for (i = 0; i < a->threads; i++) {
		ret = krt_bench_thr_init(&run->thr[i], run, i);
		if (ret)
			return ret;
	}
	return 0;
}

static void krt_bench_run_free(struct krt_bench_run *run)
{
	u32 i;

	for (i = 0; run->thr && i < run->a->threads; i++)
		krt_bench_thr_free(&run->thr[i], run->a);
	kvfree(run->thr);
	krt_bench_pages_put(run->pages, run->nr_pages);
	kvfree(run->bv);
	kfree(run->msg);
}

/* The results of every thread, summed. */
static void krt_bench_run_result(struct krt_bench_run *run, struct krt_bench_result *res)
{
	struct krt_bench_hist *h;
	u32 i;

	h = kzalloc(sizeof(*h), GFP_KERNEL);
	for (i = 0; i < run->a->threads; i++) {
		struct krt_bench_thr *t = &run->thr[i];

		res->requests += t->requests;
		res->errors += t->errors;
		res->mismatches += t->mismatches;
		res->bytes += t->bytes;
		if (!res->first_error)
			res->first_error = t->first_error;
		if (h)
			krt_bench_hist_merge(h, &t->hist);
	}
	if (h && h->count) {
		res->lat_min = h->min;
		res->lat_max = h->max;
		res->lat_avg = div64_u64(h->sum, h->count);
		res->lat_p50 = krt_bench_hist_pct(h, 500);
		res->lat_p99 = krt_bench_hist_pct(h, 990);
		res->lat_p999 = krt_bench_hist_pct(h, 999);
	}
	kfree(h);
}

/* Bytes a verified run allocates for its buffers, about. */
static u64 krt_bench_verify_bytes(const struct krt_bench_args *a)
{
	u64 per_io = kmalloc_size_roundup(krt_bench_msg_len(a));

	if (a->op != KRT_BENCH_OP_SEND)
		per_io += (u64)DIV_ROUND_UP(a->size, PAGE_SIZE) *
			  (PAGE_SIZE + sizeof(struct bio_vec));
	return per_io * a->depth * a->threads;
}

/* Size checks that need the peer; Return: 0 or -errno with @extack set. */
static int krt_bench_check_size(const struct krt_bench_args *a, struct krt_peer *peer,
				struct netlink_ext_ack *extack)
{
	u32 max_io;

	if (a->op == KRT_BENCH_OP_SEND) {
		if (a->size > KRT_MAX_MSG) {
			NL_SET_ERR_MSG_MOD(extack,
					   "send size over KRT_MAX_MSG (4048 bytes), the largest message");
			return -EMSGSIZE;
		}
		if (a->size < sizeof(struct krt_bench_msg)) {
			NL_SET_ERR_MSG_MOD(extack,
					   "send size under 12 bytes, the bench message header");
			return -EINVAL;
		}
	} else {
		max_io = krt_peer_max_io(peer);
		if (!max_io) {
			NL_SET_ERR_MSG_MOD(extack,
					   "peer has no active outbound connection (an inbound peer, or down)");
			return -ENOTCONN;
		}
		if (a->size > max_io) {
			NL_SET_ERR_MSG_MOD(extack,
					   "size over the peer's max IO size (krt_peer_max_io())");
			return -EMSGSIZE;
		}
	}
	/* a verified send has a message of its own per request, too */
	if (a->verify && krt_bench_verify_bytes(a) > (u64)READ_ONCE(krt_bench_mem_mb) << 20) {
		NL_SET_ERR_MSG_MOD(extack,
				   "verify: threads x depth x size over the module parameter mem_mb");
		return -E2BIG;
	}
	return 0;
}

/* Join the runs krt_bench_stop_all() stops; Return: 0 or -ESHUTDOWN. */
static int krt_bench_run_add(struct krt_bench_run *run)
{
	int ret = 0;

	mutex_lock(&krt_bench_runs_lock);
	if (krt_bench_stopping)
		ret = -ESHUTDOWN;
	else
		list_add_tail(&run->entry, &krt_bench_runs);
	mutex_unlock(&krt_bench_runs_lock);
	return ret;
}

static void krt_bench_run_del(struct krt_bench_run *run)
{
	mutex_lock(&krt_bench_runs_lock);
	list_del(&run->entry);
	mutex_unlock(&krt_bench_runs_lock);
}

static void krt_bench_run_stop(struct krt_bench_run *run)
{
	u32 i;

	WRITE_ONCE(run->stop, true);
	for (i = 0; i < run->a->threads; i++)
		wake_up(&run->thr[i].wq);
}

/* Start the threads and wait for them; Return: threads started. */
static u32 krt_bench_run_threads(struct krt_bench_run *run)
{
	struct task_struct *task;
	u32 i, started;

	for (started = 0; started < run->a->threads; started++) {
		task = kthread_run(krt_bench_thr_fn, &run->thr[started], "krt-bench/%u",
				   started);
		if (IS_ERR(task))
			break;
	}
	if (started < run->a->threads)
		krt_bench_run_stop(run);
	for (i = 0; i < started; i++) {
		/*
		 * A signal stops the run; then wait, idle, for what is in
		 * flight.  Each completion is waited for (consumed) once.
		 */
		if (READ_ONCE(run->stop) ||
		    wait_for_completion_interruptible(&run->thr[i].exited)) {
			krt_bench_run_stop(run);
			wait_for_completion_state(&run->thr[i].exited, TASK_IDLE);
		}
	}
	return started;
}

/**
 * krt_bench_run() - run load against a peer
 * @a: what to run, checked against the netlink policy and limits
 * @res: filled with the outcome
 * @extack: for error messages
 *
 * Return: 0 when the run took place (its errors are in @res), or an
 * error before any request: -ENOENT (no such peer), -EMSGSIZE (size over
 * the message or the peer's max IO size), -EINVAL, -ENOTCONN (no active
 * outbound connection), -E2BIG (verified buffers over mem_mb),
 * -ESHUTDOWN (module unloading), -ENOMEM.
 */
int krt_bench_run(const struct krt_bench_args *a, struct krt_bench_result *res,
		  struct netlink_ext_ack *extack)
{
	struct krt_bench_run *run;
	u64 t0, cpu0;
	int ret;

	run = kzalloc(sizeof(*run), GFP_KERNEL);
	if (!run)
		return -ENOMEM;
	run->a = a;
	run->peer = krt_peer_get(a->peer);
	if (!run->peer) {
		NL_SET_ERR_MSG_MOD(extack, "no such peer");
		ret = -ENOENT;
		goto out_free;
	}
	ret = krt_bench_check_size(a, run->peer, extack);
	if (ret)
		goto out_peer;
	ret = krt_bench_run_init(run);
	if (ret) {
		NL_SET_ERR_MSG_MOD(extack, "out of memory for the run's buffers");
		goto out_run;
	}
	ret = krt_bench_run_add(run);
	if (ret) {
		NL_SET_ERR_MSG_MOD(extack, "module unloading");
		goto out_run;
	}
	cpu0 = krt_bench_cpu_ns();
	t0 = ktime_get_ns();
	/*
	 * The run holds generic netlink's cb_lock (read) as any doit does:
	 * a family registering meanwhile waits.  A count run is bounded by
	 * the longest time too, under the hung-task timeout.
	 */
	run->end_ns = t0 + (u64)(a->time_s ?: KRT_BENCH_MAX_TIME_S) * NSEC_PER_SEC;
	if (krt_bench_run_threads(run) < a->threads) {
		NL_SET_ERR_MSG_MOD(extack, "cannot start the run's threads");
		ret = -ENOMEM;
	}
	res->elapsed_ns = ktime_get_ns() - t0;
	res->cpu_ns = krt_bench_cpu_ns() - cpu0;
	krt_bench_run_del(run);
	res->stopped = READ_ONCE(run->stop);
	krt_bench_run_result(run, res);
	if (res->requests + res->errors + res->mismatches)
		res->cpu_ns_per_req = div64_u64(res->cpu_ns,
						res->requests + res->errors + res->mismatches);
out_run:
	krt_bench_run_free(run);
out_peer:
	krt_peer_put(run->peer);
out_free:
	kfree(run);
	return ret;
}

/**
 * krt_bench_stop_all() - stop every run, and refuse new ones (module unload)
 *
 * The runs end with what completed; their handlers return, which
 * genl_unregister_family() waits for.
 */
void krt_bench_stop_all(void)
{
	struct krt_bench_run *run;

	mutex_lock(&krt_bench_runs_lock);
	krt_bench_stopping = true;
	list_for_each_entry(run, &krt_bench_runs, entry)
		krt_bench_run_stop(run);
	mutex_unlock(&krt_bench_runs_lock);
}
