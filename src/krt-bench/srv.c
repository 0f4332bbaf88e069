// SPDX-License-Identifier: GPL-2.0
/*
 * krt_bench: the server - service KRT_BENCH_SERVICE.
 *
 * DOC: Server
 *
 * Everything runs in the service's request callback (softirq, or a
 * workqueue under krt's ``srv_poll_wq``) and in
 * the transfers' completions; nothing is allocated per request:
 *
 * - a send-only request is answered at once, status 0 and no message
 *   (with %KRT_BENCH_F_VERIFY its bytes after the header are checked
 *   against the pattern first: -EILSEQ if they differ);
 * - a read or write request takes one of ``srv_slots`` contexts made at
 *   load (each with a segment array for ``srv_max_io`` bytes) and moves
 *   its data with krt_srv_data(), a read with krt_srv_data_reply() (data
 *   and answer in one post).  Unverified, every request uses the
 *   same ``srv_max_io`` bytes of shared pages: their content is never
 *   looked at, and concurrent transfers into or out of them are harmless.
 *   Verified, the request takes private pages from a stack filled at load
 *   (``srv_verify_mb``): a read's are filled with the pattern, a write's
 *   are checked after the RDMA READ (-EILSEQ if they differ).
 *
 * Memory is therefore fixed at load.  A request over ``srv_max_io`` is
 * answered -EMSGSIZE; one that finds no free context, or too few free
 * verify pages, is answered -EBUSY (counted, and logged rate-limited).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>
#include "krt_bench.h"

static unsigned int krt_bench_srv_slots = 256;
module_param_named(srv_slots, krt_bench_srv_slots, uint, 0444);
MODULE_PARM_DESC(srv_slots, "Server: data requests served at once; more are answered -EBUSY (default: 256)");

static unsigned int krt_bench_srv_max_io = SZ_1M;
module_param_named(srv_max_io, krt_bench_srv_max_io, uint, 0444);
MODULE_PARM_DESC(srv_max_io, "Server: largest data request in bytes, 4096 to 16777216 (default: 1048576, krt's max_io)");

static unsigned int krt_bench_srv_verify_mb = 16;
module_param_named(srv_verify_mb, krt_bench_srv_verify_mb, uint, 0444);
MODULE_PARM_DESC(srv_verify_mb, "Server: MiB of private pages for verified data requests in flight, 0 to 1024 (default: 16)");

static bool krt_bench_srv_chain = true;
module_param_named(srv_chain, krt_bench_srv_chain, bool, 0644);
MODULE_PARM_DESC(srv_chain, "Server: answer reads with krt_srv_data_reply() (default: Y); N: krt_srv_data(), then krt_srv_reply() from its callback, to compare");

/* one data request being served */
struct krt_bench_sctx {
	struct krt_srv_req	*sreq;
	struct bio_vec		*bv;		/* srv_pages entries */
	unsigned int		nr;
	u32			seed;
	u32			vpages;		/* private pages taken, verify */
	struct list_head	entry;		/* on krt_bench_srv.free */
};

static struct {
	spinlock_t		lock;		/* free, vtop */
	struct list_head	free;
	struct krt_bench_sctx	*ctx;
	u32			nr_ctx;
	struct page		**shared;	/* pages: shared, unverified data */
	u32			pages;		/* of a request at most */
	struct page		**vstack;	/* free verify pages, [0, vtop) */
	u32			vtop;
	u32			nr_vpages;
	atomic64_t		busy;		/* requests answered -EBUSY */
	bool			registered;
} krt_bench_srv;

static void krt_bench_srv_put(struct krt_bench_sctx *c)
{
	unsigned int i;

	spin_lock_bh(&krt_bench_srv.lock);
	for (i = 0; i < c->vpages; i++)
		krt_bench_srv.vstack[krt_bench_srv.vtop++] = c->bv[i].bv_page;
	c->vpages = 0;
	list_add(&c->entry, &krt_bench_srv.free);
	spin_unlock_bh(&krt_bench_srv.lock);
}

/* A context with @nr pages of segments, private ones if @verify; or NULL. */
static struct krt_bench_sctx *krt_bench_srv_get(u32 nr, bool verify)
{
	struct krt_bench_sctx *c = NULL;
	u32 i;

	spin_lock_bh(&krt_bench_srv.lock);
	if (list_empty(&krt_bench_srv.free) ||
	    (verify && krt_bench_srv.vtop < nr))
		goto out;
	c = list_first_entry(&krt_bench_srv.free, struct krt_bench_sctx, entry);
	list_del(&c->entry);
	for (i = 0; i < nr; i++)
		c->bv[i].bv_page = verify ? krt_bench_srv.vstack[--krt_bench_srv.vtop] :
				   krt_bench_srv.shared[i];
	c->vpages = verify ? nr : 0;
out:
	spin_unlock_bh(&krt_bench_srv.lock);
	return c;
}

static void krt_bench_srv_busy(struct krt_srv_req *sreq)
{
	atomic64_inc(&krt_bench_srv.busy);
	pr_warn_ratelimited("data request of %u bytes answered -EBUSY: no free context (srv_slots) or verify pages (srv_verify_mb)\n",
			    sreq->data_len);
	krt_srv_reply(sreq, -EBUSY, NULL, 0);
}

static void krt_bench_srv_data_done(struct krt_srv_req *sreq, int status)
{
	struct krt_bench_sctx *c = sreq->priv;

	if (!status && c->vpages && sreq->dir == KRT_DATA_WRITE &&
	    krt_bench_pat_buf(c->bv, c->nr, c->seed, false))
		status = -EILSEQ;
	krt_bench_srv_put(c);
	krt_srv_reply(sreq, status, NULL, 0);
}

/* a read's data and answer went together: only the context is left */
static void krt_bench_srv_read_done(struct krt_srv_req *sreq, int status)
{
	krt_bench_srv_put(sreq->priv);
}

static void krt_bench_srv_data(struct krt_srv_req *sreq, u32 seed, bool verify)
{
	u32 nr = DIV_ROUND_UP(sreq->data_len, PAGE_SIZE), left = sreq->data_len, i;
	struct krt_bench_sctx *c;
	int ret;

	if (!sreq->data_len || nr > krt_bench_srv.pages) {
		krt_srv_reply(sreq, sreq->data_len ? -EMSGSIZE : -EINVAL, NULL, 0);
		return;
	}
	c = krt_bench_srv_get(nr, verify);
	if (!c) {
		krt_bench_srv_busy(sreq);
		return;
	}
	for (i = 0; i < nr; i++) {
		c->bv[i].bv_offset = 0;
		c->bv[i].bv_len = min_t(u32, left, PAGE_SIZE);
		left -= c->bv[i].bv_len;
	}
	c->nr = nr;
	c->seed = seed;
	c->sreq = sreq;
	sreq->priv = c;
	if (verify && sreq->dir == KRT_DATA_READ)
		krt_bench_pat_buf(c->bv, nr, seed, true);
	/* a read is answered with its data, as a storage target does */
	if (sreq->dir == KRT_DATA_READ && READ_ONCE(krt_bench_srv_chain))
		ret = krt_srv_data_reply(sreq, c->bv, nr, 0, NULL, 0, krt_bench_srv_read_done);
	else
		ret = krt_srv_data(sreq, c->bv, nr, krt_bench_srv_data_done);
	if (ret) {
		krt_bench_srv_put(c);
		krt_srv_reply(sreq, ret, NULL, 0);
	}
}

static void krt_bench_srv_request(struct krt_service *svc, struct krt_srv_req *sreq)
{
	const struct krt_bench_msg *m = sreq->msg;
	bool verify;
	u32 seed;

	if (sreq->msg_len < sizeof(*m) || be32_to_cpu(m->magic) != KRT_BENCH_MAGIC) {
		krt_srv_reply(sreq, -EINVAL, NULL, 0);
		return;
	}
	verify = be32_to_cpu(m->flags) & KRT_BENCH_F_VERIFY;
	seed = be32_to_cpu(m->seed);
	if (sreq->dir != KRT_DATA_NONE) {
		krt_bench_srv_data(sreq, seed, verify);
		return;
	}
	if (verify && krt_bench_pat_mem((u8 *)sreq->msg + sizeof(*m),
					sreq->msg_len - sizeof(*m), sizeof(*m), seed, false)) {
		krt_srv_reply(sreq, -EILSEQ, NULL, 0);
		return;
	}
	krt_srv_reply(sreq, 0, NULL, 0);
}

static struct krt_service krt_bench_svc = {
	.id		= KRT_BENCH_SERVICE,
	.name		= "bench",
	.request	= krt_bench_srv_request,
};

static void krt_bench_pages_free(struct page **pages, u32 n)
{
	u32 i;

	if (!pages)
		return;
	for (i = 0; i < n; i++)
		if (pages[i])
			__free_page(pages[i]);
	kvfree(pages);
}

static struct page **krt_bench_pages_alloc(u32 n)
{
	struct page **pages = kvcalloc(max(n, 1U), sizeof(*pages), GFP_KERNEL);
	u32 i;

	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);	/* never send stale memory */
		if (!pages[i]) {
			krt_bench_pages_free(pages, n);
			return NULL;
		}
	}
	return pages;
}

static void krt_bench_srv_free(void)
{
	u32 i;

	for (i = 0; krt_bench_srv.ctx && i < krt_bench_srv.nr_ctx; i++)
		kvfree(krt_bench_srv.ctx[i].bv);
	kvfree(krt_bench_srv.ctx);
	krt_bench_srv.ctx = NULL;
	krt_bench_pages_free(krt_bench_srv.shared, krt_bench_srv.pages);
	krt_bench_srv.shared = NULL;
	krt_bench_pages_free(krt_bench_srv.vstack, krt_bench_srv.nr_vpages);
	krt_bench_srv.vstack = NULL;
}

/**
 * krt_bench_srv_init() - allocate the server's memory, register the service
 *
 * Return: 0, -EINVAL for a module parameter out of range, -ENOMEM, or
 * the error of krt_service_register() (-EBUSY: the id is taken).
 */
int krt_bench_srv_init(void)
{
	u32 i;
	int ret;

	if (krt_bench_srv_max_io < PAGE_SIZE || krt_bench_srv_max_io > SZ_16M ||
	    !krt_bench_srv_slots || krt_bench_srv_slots > 65536 ||
	    krt_bench_srv_verify_mb > 1024) {
		pr_err("srv_max_io, srv_slots or srv_verify_mb out of range\n");
		return -EINVAL;
	}
	spin_lock_init(&krt_bench_srv.lock);
	INIT_LIST_HEAD(&krt_bench_srv.free);
	atomic64_set(&krt_bench_srv.busy, 0);
	krt_bench_srv.pages = DIV_ROUND_UP(krt_bench_srv_max_io, PAGE_SIZE);
	krt_bench_srv.nr_vpages = krt_bench_srv_verify_mb * (SZ_1M / PAGE_SIZE);
	krt_bench_srv.nr_ctx = krt_bench_srv_slots;
	ret = -ENOMEM;
	krt_bench_srv.shared = krt_bench_pages_alloc(krt_bench_srv.pages);
	krt_bench_srv.vstack = krt_bench_pages_alloc(krt_bench_srv.nr_vpages);
	krt_bench_srv.ctx = kvcalloc(krt_bench_srv.nr_ctx, sizeof(*krt_bench_srv.ctx),
				     GFP_KERNEL);
	if (!krt_bench_srv.shared || !krt_bench_srv.vstack || !krt_bench_srv.ctx)
		goto err;
	krt_bench_srv.vtop = krt_bench_srv.nr_vpages;
	for (i = 0; i < krt_bench_srv.nr_ctx; i++) {
		struct krt_bench_sctx *c = &krt_bench_srv.ctx[i];

		c->bv = kvcalloc(krt_bench_srv.pages, sizeof(*c->bv), GFP_KERNEL);
		if (!c->bv)
			goto err;
		list_add_tail(&c->entry, &krt_bench_srv.free);
	}
	ret = krt_service_register(&krt_bench_svc);
	if (ret) {
		pr_err("cannot register service %u: %d\n", KRT_BENCH_SERVICE, ret);
		goto err;
	}
	krt_bench_srv.registered = true;
	return 0;

err:
	krt_bench_srv_free();
	return ret;
}

/**
 * krt_bench_srv_exit() - unregister the service, free its memory
 *
 * krt_service_unregister() waits until every request given to the
 * service was answered, so no transfer uses the pages any more.
 */
void krt_bench_srv_exit(void)
{
	if (krt_bench_srv.registered)
		krt_service_unregister(&krt_bench_svc);
	krt_bench_srv.registered = false;
	krt_bench_srv_free();
}
