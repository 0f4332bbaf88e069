// SPDX-License-Identifier: GPL-2.0
/*
 * krt_api_test: the exported API's contract, checked from a ULP's side.
 *
 * Loaded in a guest by selftests/datapath.sh with a connected peer (its
 * "peer" parameter), it registers a service of its own and runs each case
 * once, at load, through include/krt/krt.h only: buffers that krt must
 * refuse before anything is mapped (a segment whose offset and length
 * wrap a u32, segments over a page, empty or with gaps, a length that
 * disagrees with the segments, oversized messages, bad service ids, no
 * callback), a valid two-page write and read checked byte for byte, and
 * a service that answers one request twice (the second answer refused:
 * the client sees one completion, with the first answer), and replies
 * by &struct krt_srv_ref: refused once answered, once the server request
 * serves a later request (which keeps its own answer), during a data
 * transfer (-EBUSY), and once the connection was reset and freed; and
 * krt_srv_data_reply(): a read's data and answer together.  Each case
 * prints a KTAP line to the kernel log; the load fails if one failed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/completion.h>
#include <linux/gfp.h>
#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <krt/krt.h>

#define KRT_AT_SERVICE	(KRT_MAX_SERVICES - 1)
#define KRT_AT_PAGES	2
#define KRT_AT_WAIT	(10 * HZ)

/* message ops of the service */
enum {
	KRT_AT_ECHO_DATA = 1,	/* transfer the data, compare or fill, reply 0 */
	KRT_AT_TWICE,		/* reply -ENOSPC, then again with -EXDEV */
	KRT_AT_KEEP,		/* reply 0 and keep the handle (a ULP bug) */
	KRT_AT_STALE,		/* reply -EXDEV through the kept handle, then 0 */
	KRT_AT_REF_KEEP,	/* reply 0 by ref, again by ref; keep the ref */
	KRT_AT_REF_PROBE,	/* in the kept one's place: stale ref, then 0 */
	KRT_AT_REF_HOLD,	/* keep the ref, no reply (the client times out) */
	KRT_AT_REF_BUSY,	/* reply by ref during the transfer, then after */
	KRT_AT_DATA_REPLY,	/* krt_srv_data_reply(): data and answer at once */
};

static char *krt_at_peer = "self";
module_param_named(peer, krt_at_peer, charp, 0444);
MODULE_PARM_DESC(peer, "Connected peer whose krt serves the test service (default: self)");

/* the server side's buffer: one request at a time (the client waits) */
static struct page *krt_at_srv_pages[KRT_AT_PAGES];
static struct bio_vec krt_at_srv_bv[KRT_AT_PAGES];
static int krt_at_srv_result;
static int krt_at_second_reply;
/* the handle KRT_AT_KEEP kept after its reply; one request at a time */
static struct krt_srv_req *krt_at_kept;
/* KRT_AT_REF_*: the ref kept, where its request was, what replies gave */
static struct krt_srv_ref krt_at_ref;
static const struct krt_srv_req *krt_at_ref_req;
static int krt_at_ref_first;
static int krt_at_ref_again;
static int krt_at_ref_probe;
static bool krt_at_ref_held;
static bool krt_at_ref_answered_zero;
static int krt_at_ref_busy;
static int krt_at_ref_after;
/* KRT_AT_DATA_REPLY: what its done callback saw, and a reply tried there */
static int krt_at_dr_status;
static bool krt_at_dr_ref_zero;

struct krt_at_req {
	struct krt_req		req;
	struct completion	done;
	atomic_t		ncalls;
	u32			op;
};

static u8 krt_at_byte(u32 i, bool srv)
{
	return (u8)(i * 7 + (srv ? 0x5a : 0x11));
}

static void krt_at_fill(struct bio_vec *bv, bool srv)
{
	u32 i, n = 0;

	for (i = 0; i < KRT_AT_PAGES; i++) {
		u8 *p = page_address(bv[i].bv_page);
		u32 j;

		for (j = 0; j < PAGE_SIZE; j++)
			p[j] = krt_at_byte(n++, srv);
	}
}

static bool krt_at_same(struct bio_vec *bv, bool srv)
{
	u32 i, n = 0;

	for (i = 0; i < KRT_AT_PAGES; i++) {
		const u8 *p = page_address(bv[i].bv_page);
		u32 j;

		for (j = 0; j < PAGE_SIZE; j++)
			if (p[j] != krt_at_byte(n++, srv))
				return false;
	}
	return true;
}

static void krt_at_srv_data_done(struct krt_srv_req *sreq, int status)
{
	/* a client write: the pages must now hold the client's pattern */
	if (!status && sreq->dir == KRT_DATA_WRITE && !krt_at_same(krt_at_srv_bv, false))
		status = -EILSEQ;
	krt_at_srv_result = status;
	krt_srv_reply(sreq, status, NULL, 0);
}

/* KRT_AT_DATA_REPLY went: the request is answered, no ref to it */
static void krt_at_dr_done(struct krt_srv_req *sreq, int status)
{
	struct krt_srv_ref ref = krt_srv_req_ref(sreq);

	krt_at_dr_ref_zero = !ref.krt_queue && !ref.krt_index && !ref.krt_gen;
	WRITE_ONCE(krt_at_dr_status, status);
}

/* KRT_AT_REF_BUSY's transfer ended: answer by the ref now */
static void krt_at_ref_data_done(struct krt_srv_req *sreq, int status)
{
	krt_at_ref_after = krt_srv_reply_ref(&krt_at_ref, status, NULL, 0);
	if (krt_at_ref_after)
		krt_srv_reply(sreq, status ?: -EPROTO, NULL, 0);
}

static void krt_at_request(struct krt_service *svc, struct krt_srv_req *sreq)
{
	u32 op = 0;
	int ret;

	if (sreq->msg_len >= sizeof(op))
		memcpy(&op, sreq->msg, sizeof(op));
	switch (op) {
	case KRT_AT_ECHO_DATA:
		if (sreq->dir == KRT_DATA_READ)
			krt_at_fill(krt_at_srv_bv, true);
		ret = krt_srv_data(sreq, krt_at_srv_bv, KRT_AT_PAGES, krt_at_srv_data_done);
		if (ret)
			krt_srv_reply(sreq, ret, NULL, 0);
		return;
	case KRT_AT_TWICE:
		krt_srv_reply(sreq, -ENOSPC, NULL, 0);
		/* a ULP bug: krt must refuse this, not send it */
		krt_srv_reply(sreq, -EXDEV, NULL, 0);
		WRITE_ONCE(krt_at_second_reply, 1);
		return;
	case KRT_AT_KEEP:
		WRITE_ONCE(krt_at_kept, sreq);
		krt_srv_reply(sreq, 0, NULL, 0);
		return;
	case KRT_AT_STALE:
		/*
		 * A reply through a handle whose request was answered.  The
		 * handle is the queue's: it stays memory only while that
		 * queue lives (no reset between the two requests; none is
		 * armed in datapath.sh when this runs).
		 */
		if (READ_ONCE(krt_at_kept))
			krt_srv_reply(READ_ONCE(krt_at_kept), -EXDEV, NULL, 0);
		WRITE_ONCE(krt_at_kept, NULL);
		krt_srv_reply(sreq, 0, NULL, 0);
		return;
	case KRT_AT_REF_KEEP:
		krt_at_ref = krt_srv_req_ref(sreq);
		krt_at_ref_req = sreq;
		krt_at_ref_first = krt_srv_reply_ref(&krt_at_ref, 0, NULL, 0);
		krt_at_ref_again = krt_srv_reply_ref(&krt_at_ref, -EXDEV, NULL, 0);
		/*
		 * Answered, its reply's SEND completion not yet polled (it
		 * comes on the CQ this callback runs from): no ref any more.
		 */
		{
			struct krt_srv_ref late = krt_srv_req_ref(sreq);

			krt_at_ref_answered_zero = !late.krt_queue && !late.krt_index &&
						   !late.krt_gen;
		}
		return;
	case KRT_AT_REF_PROBE:
		/* the server request of the kept ref serves this one */
		if (sreq == krt_at_ref_req) {
			struct krt_srv_ref mine = krt_srv_req_ref(sreq);

			krt_at_ref_probe = krt_srv_reply_ref(&krt_at_ref, -EXDEV, NULL, 0);
			if (krt_srv_reply_ref(&mine, 0, &op, sizeof(op)))
				krt_srv_reply(sreq, -EPROTO, NULL, 0);
			return;
		}
		krt_srv_reply(sreq, -EAGAIN, NULL, 0);
		return;
	case KRT_AT_REF_HOLD:
		krt_at_ref = krt_srv_req_ref(sreq);
		WRITE_ONCE(krt_at_ref_held, true);
		return;
	case KRT_AT_DATA_REPLY:
		if (sreq->dir == KRT_DATA_READ)
			krt_at_fill(krt_at_srv_bv, true);
		/* the answer: the op back, status -ENOKEY to tell it apart */
		ret = krt_srv_data_reply(sreq, krt_at_srv_bv, KRT_AT_PAGES, -ENOKEY,
					 &op, sizeof(op), krt_at_dr_done);
		if (ret)
			krt_srv_reply(sreq, ret, NULL, 0);
		return;
	case KRT_AT_REF_BUSY:
		/* the transfer's completion comes on this callback's CQ: later */
		krt_at_ref = krt_srv_req_ref(sreq);
		krt_at_fill(krt_at_srv_bv, true);
		ret = krt_srv_data(sreq, krt_at_srv_bv, KRT_AT_PAGES, krt_at_ref_data_done);
		if (ret) {
			krt_at_ref_busy = ret;
			krt_srv_reply(sreq, ret, NULL, 0);
			return;
		}
		krt_at_ref_busy = krt_srv_reply_ref(&krt_at_ref, -EXDEV, NULL, 0);
		return;
	}
	krt_srv_reply(sreq, -EOPNOTSUPP, NULL, 0);
}

static struct krt_service krt_at_svc = {
	.id		= KRT_AT_SERVICE,
	.name		= "krt_api_test",
	.request	= krt_at_request,
};

static void krt_at_done(struct krt_req *req)
{
	struct krt_at_req *r = container_of(req, struct krt_at_req, req);

	if (atomic_inc_return(&r->ncalls) == 1)
		complete(&r->done);
}

/*
 * Wait for the one completion krt promises for an accepted request: never
 * give up (the request, its pages and this module's callback must outlive
 * it), but say so if it takes long.
 */
static void krt_at_wait(const char *name, struct krt_at_req *r)
{
	if (wait_for_completion_timeout(&r->done, KRT_AT_WAIT))
		return;
	pr_info("# %s: no completion after %d s, still waiting\n", name, KRT_AT_WAIT / HZ);
	wait_for_completion(&r->done);
}

static void krt_at_init_req(struct krt_at_req *r, u32 op)
{
	memset(r, 0, sizeof(*r));
	init_completion(&r->done);
	r->op = op;
	r->req.service = KRT_AT_SERVICE;
	r->req.msg = &r->op;
	r->req.msg_len = sizeof(r->op);
	r->req.done = krt_at_done;
	r->req.timeout_ms = 5000;
}

/*
 * A request with a two-page buffer of @pages in @bv, holding the client's
 * pattern (a read must overwrite it).
 */
static void krt_at_init_pages_req(struct krt_at_req *r, u32 op, enum krt_data_dir dir,
				  struct bio_vec *bv, struct page **pages)
{
	int i;

	for (i = 0; i < KRT_AT_PAGES; i++)
		bvec_set_page(&bv[i], pages[i], PAGE_SIZE, 0);
	krt_at_init_req(r, op);
	krt_at_fill(bv, false);
	r->req.dir = dir;
	r->req.bvec = bv;
	r->req.nr_bvec = KRT_AT_PAGES;
	r->req.data_len = KRT_AT_PAGES * PAGE_SIZE;
}

static int krt_at_num;
static int krt_at_failed;

static void krt_at_report(const char *name, bool ok, const char *fmt, int a, int b)
{
	krt_at_num++;
	if (!ok)
		krt_at_failed++;
	pr_info("%sok %d %s\n", ok ? "" : "not ", krt_at_num, name);
	if (!ok)
		pr_info("# %s: got %d, want %d (%s)\n", name, a, b, fmt);
}

/*
 * A request krt must refuse at submission: the return value, and no
 * completion ever (the caller keeps the request).
 */
static void krt_at_refused(struct krt_peer *peer, const char *name,
			   struct krt_at_req *r, int want)
{
	int ret = krt_submit(peer, &r->req);

	if (!ret)	/* accepted after all: wait, so that nothing is left behind */
		krt_at_wait(name, r);
	krt_at_report(name, ret == want && !atomic_read(&r->ncalls),
		      "krt_submit() return", ret, want);
}

static void krt_at_buffer_cases(struct krt_peer *peer, struct page **pages)
{
	struct bio_vec bv[KRT_AT_PAGES];
	struct krt_at_req r;

	/* offset + length wraps a u32 to less than a page */
	krt_at_init_req(&r, KRT_AT_ECHO_DATA);
	bvec_set_page(&bv[0], pages[0], PAGE_SIZE, U32_MAX - PAGE_SIZE + 2);
	r.req.dir = KRT_DATA_WRITE;
	r.req.bvec = bv;
	r.req.nr_bvec = 1;
	r.req.data_len = PAGE_SIZE;
	krt_at_refused(peer, "bvec_offset_length_wrap", &r, -EINVAL);

	krt_at_init_req(&r, KRT_AT_ECHO_DATA);
	bvec_set_page(&bv[0], pages[0], PAGE_SIZE + 1, 0);
	r.req.dir = KRT_DATA_READ;
	r.req.bvec = bv;
	r.req.nr_bvec = 1;
	r.req.data_len = PAGE_SIZE + 1;
	krt_at_refused(peer, "bvec_segment_over_a_page", &r, -EINVAL);

	krt_at_init_req(&r, KRT_AT_ECHO_DATA);
	bvec_set_page(&bv[0], pages[0], PAGE_SIZE, 0);
	bvec_set_page(&bv[1], pages[1], 0, 0);
	r.req.dir = KRT_DATA_WRITE;
	r.req.bvec = bv;
	r.req.nr_bvec = 2;
	r.req.data_len = PAGE_SIZE;
	krt_at_refused(peer, "bvec_empty_segment", &r, -EINVAL);

	/* the first segment ends inside its page: a gap an MR cannot map */
	krt_at_init_req(&r, KRT_AT_ECHO_DATA);
	bvec_set_page(&bv[0], pages[0], PAGE_SIZE / 2, 0);
	bvec_set_page(&bv[1], pages[1], PAGE_SIZE, 0);
	r.req.dir = KRT_DATA_WRITE;
	r.req.bvec = bv;
	r.req.nr_bvec = 2;
	r.req.data_len = PAGE_SIZE / 2 + PAGE_SIZE;
	krt_at_refused(peer, "bvec_gap", &r, -EINVAL);

	krt_at_init_req(&r, KRT_AT_ECHO_DATA);
	bvec_set_page(&bv[0], pages[0], PAGE_SIZE, 0);
	r.req.dir = KRT_DATA_READ;
	r.req.bvec = bv;
	r.req.nr_bvec = 1;
	r.req.data_len = PAGE_SIZE - 1;
	krt_at_refused(peer, "data_len_disagrees_with_segments", &r, -EINVAL);

	krt_at_init_req(&r, KRT_AT_ECHO_DATA);
	r.req.dir = KRT_DATA_READ;
	krt_at_refused(peer, "data_dir_without_buffer", &r, -EINVAL);
}

static void krt_at_message_cases(struct krt_peer *peer)
{
	static u8 big[KRT_MAX_MSG + 1];
	struct krt_at_req r;

	krt_at_init_req(&r, 0);
	r.req.msg = big;
	r.req.msg_len = sizeof(big);
	krt_at_refused(peer, "message_over_max", &r, -EMSGSIZE);

	krt_at_init_req(&r, 0);
	r.req.service = 0;
	krt_at_refused(peer, "service_zero", &r, -EINVAL);

	krt_at_init_req(&r, 0);
	r.req.service = KRT_MAX_SERVICES;
	krt_at_refused(peer, "service_out_of_range", &r, -EINVAL);

	krt_at_init_req(&r, 0);
	r.req.done = NULL;
	krt_at_refused(peer, "no_done_callback", &r, -EINVAL);
}

/* Submit and wait for the one completion; Return: 0, or why not. */
static int krt_at_run(struct krt_peer *peer, struct krt_at_req *r)
{
	int ret = krt_submit(peer, &r->req);

	if (ret)
		return ret;
	krt_at_wait("request", r);
	/* a second completion would come soon after the first */
	msleep(100);
	return atomic_read(&r->ncalls) == 1 ? 0 : -EEXIST;
}

static void krt_at_data_cases(struct krt_peer *peer, struct page **pages)
{
	struct bio_vec bv[KRT_AT_PAGES];
	struct krt_at_req r;
	int ret;

	krt_at_init_pages_req(&r, KRT_AT_ECHO_DATA, KRT_DATA_WRITE, bv, pages);
	krt_at_srv_result = -EINPROGRESS;
	ret = krt_at_run(peer, &r) ?: r.req.status ?: r.req.rsp_status ?: krt_at_srv_result;
	krt_at_report("write_two_pages_arrive_intact", !ret, "status", ret, 0);

	/* the client's pattern: not what the server sends */
	krt_at_init_pages_req(&r, KRT_AT_ECHO_DATA, KRT_DATA_READ, bv, pages);
	ret = krt_at_run(peer, &r) ?: r.req.status ?: r.req.rsp_status;
	if (!ret && !krt_at_same(bv, true))
		ret = -EILSEQ;
	krt_at_report("read_two_pages_arrive_intact", !ret, "status", ret, 0);
}

static void krt_at_twice_case(struct krt_peer *peer)
{
	struct krt_at_req r;
	int ret;

	krt_at_init_req(&r, KRT_AT_TWICE);
	WRITE_ONCE(krt_at_second_reply, 0);
	ret = krt_at_run(peer, &r) ?: r.req.status;
	krt_at_report("second_reply_refused_one_completion", !ret, "status", ret, 0);
	krt_at_report("second_reply_refused_first_answer_kept",
		      r.req.rsp_status == -ENOSPC, "rsp_status", r.req.rsp_status, -ENOSPC);
	krt_at_report("second_reply_was_tried", READ_ONCE(krt_at_second_reply) == 1,
		      "service reached its second reply", READ_ONCE(krt_at_second_reply), 1);
}

/*
 * A reply through a stale handle: krt reuses server requests least
 * recently freed first, so right after its request the handle is free
 * (or its reply still under way) and the reply is refused.
 */
static void krt_at_stale_case(struct krt_peer *peer)
{
	struct krt_at_req r;
	int ret;

	krt_at_init_req(&r, KRT_AT_KEEP);
	ret = krt_at_run(peer, &r) ?: r.req.status ?: r.req.rsp_status;
	krt_at_report("handle_kept_after_reply", !ret, "status", ret, 0);
	krt_at_init_req(&r, KRT_AT_STALE);
	ret = krt_at_run(peer, &r) ?: r.req.status ?: r.req.rsp_status;
	krt_at_report("stale_handle_reply_refused", !ret, "status of the next request", ret, 0);
}

/*
 * Replies by ref: the second refused; a ref whose server request serves a
 * later request refused, and that request keeps its own answer; a zero
 * ref refused.
 */
static void krt_at_ref_cases(struct krt_peer *peer)
{
	struct krt_srv_ref zero = {};
	struct krt_at_req r;
	int ret, n;

	krt_at_ref_first = -EINPROGRESS;
	krt_at_ref_again = -EINPROGRESS;
	krt_at_init_req(&r, KRT_AT_REF_KEEP);
	ret = krt_at_run(peer, &r) ?: r.req.status ?: r.req.rsp_status;
	krt_at_report("ref_reply_answers", !ret && !krt_at_ref_first, "status, reply_ref",
		      ret, krt_at_ref_first);
	krt_at_report("ref_second_reply_estale", krt_at_ref_again == -ESTALE,
		      "krt_srv_reply_ref() again", krt_at_ref_again, -ESTALE);
	krt_at_report("ref_of_answered_request_is_zero", krt_at_ref_answered_zero,
		      "zero ref", krt_at_ref_answered_zero, 1);

	/* requests go round the pool and its server requests: find the kept one */
	krt_at_ref_probe = -EINPROGRESS;
	for (n = 1; n <= 2000; n++) {
		krt_at_init_req(&r, KRT_AT_REF_PROBE);
		r.req.rsp = &r.op;
		r.req.rsp_max = sizeof(r.op);
		ret = krt_at_run(peer, &r) ?: r.req.status;
		if (ret || r.req.rsp_status != -EAGAIN)
			break;
	}
	pr_info("# ref_reused: the kept server request served request %d\n", n);
	krt_at_report("ref_reused_estale", krt_at_ref_probe == -ESTALE,
		      "reply through the kept ref", krt_at_ref_probe, -ESTALE);
	ret = ret ?: r.req.rsp_status ?: r.req.rsp_len != sizeof(r.op) ? -EMSGSIZE :
	      r.op != KRT_AT_REF_PROBE ? -EILSEQ : 0;
	krt_at_report("ref_reused_request_keeps_its_answer", !ret, "status", ret, 0);

	ret = krt_srv_reply_ref(&zero, 0, NULL, 0);
	krt_at_report("ref_zero_estale", ret == -ESTALE, "krt_srv_reply_ref()", ret, -ESTALE);
}

/*
 * krt_srv_data_reply(): a client read gets the data and the answer (its
 * status and message), the service's callback runs once with 0 and finds
 * the request answered; a client write is refused (-EINVAL) and answered
 * by the service itself.
 */
static void krt_at_data_reply_cases(struct krt_peer *peer, struct page **pages)
{
	struct bio_vec bv[KRT_AT_PAGES];
	struct krt_at_req r;
	u32 rsp = 0;
	int ret;

	krt_at_init_pages_req(&r, KRT_AT_DATA_REPLY, KRT_DATA_READ, bv, pages);
	r.req.rsp = &rsp;
	r.req.rsp_max = sizeof(rsp);
	krt_at_dr_status = -EINPROGRESS;
	krt_at_dr_ref_zero = false;
	ret = krt_at_run(peer, &r) ?: r.req.status;
	if (!ret && !krt_at_same(bv, true))
		ret = -EILSEQ;
	krt_at_report("data_reply_read_intact", !ret, "status", ret, 0);
	ret = r.req.rsp_status == -ENOKEY && r.req.rsp_len == sizeof(rsp) &&
	      rsp == KRT_AT_DATA_REPLY;
	krt_at_report("data_reply_answer_status_and_message", ret, "rsp_status",
		      r.req.rsp_status, -ENOKEY);
	krt_at_report("data_reply_done_once_answered",
		      !READ_ONCE(krt_at_dr_status) && krt_at_dr_ref_zero,
		      "done status", READ_ONCE(krt_at_dr_status), 0);

	krt_at_init_pages_req(&r, KRT_AT_DATA_REPLY, KRT_DATA_WRITE, bv, pages);
	ret = krt_at_run(peer, &r) ?: r.req.status;
	krt_at_report("data_reply_refused_for_a_write", !ret && r.req.rsp_status == -EINVAL,
		      "rsp_status", r.req.rsp_status, -EINVAL);
}

/*
 * A reply by ref while the request's transfer is under way: -EBUSY (a
 * service's bug, counted as api_misuse), nothing sent; the reply by the
 * same ref from the transfer's callback answers, the data intact.
 */
static void krt_at_ref_busy_case(struct krt_peer *peer, struct page **pages)
{
	struct bio_vec bv[KRT_AT_PAGES];
	struct krt_at_req r;
	int ret;

	krt_at_init_pages_req(&r, KRT_AT_REF_BUSY, KRT_DATA_READ, bv, pages);
	krt_at_ref_busy = -EINPROGRESS;
	krt_at_ref_after = -EINPROGRESS;
	ret = krt_at_run(peer, &r) ?: r.req.status ?: r.req.rsp_status;
	if (!ret && !krt_at_same(bv, true))
		ret = -EILSEQ;
	krt_at_report("ref_reply_during_transfer_ebusy", krt_at_ref_busy == -EBUSY,
		      "krt_srv_reply_ref() during the transfer", krt_at_ref_busy, -EBUSY);
	krt_at_report("ref_reply_after_transfer_answers", !ret && !krt_at_ref_after,
		      "status, reply_ref after", ret, krt_at_ref_after);
}

/*
 * A ref kept across a reset: the client's request with a buffer times out
 * (its connection is reset for it), the late reply is dropped, and once
 * the connection was freed the ref finds nothing.  Last: the pool comes
 * back by itself afterwards.
 */
static void krt_at_ref_reset_case(struct krt_peer *peer, struct page **pages)
{
	struct bio_vec bv;
	struct krt_at_req r;
	int ret;

	krt_at_init_req(&r, KRT_AT_REF_HOLD);
	bvec_set_page(&bv, pages[0], PAGE_SIZE, 0);
	r.req.dir = KRT_DATA_READ;
	r.req.bvec = &bv;
	r.req.nr_bvec = 1;
	r.req.data_len = PAGE_SIZE;
	r.req.timeout_ms = 1000;
	r.req.flags = KRT_REQ_NORETRY;
	WRITE_ONCE(krt_at_ref_held, false);
	ret = krt_at_run(peer, &r) ?: r.req.status;
	krt_at_report("ref_held_request_times_out", ret == -ETIMEDOUT && READ_ONCE(krt_at_ref_held),
		      "status", ret, -ETIMEDOUT);
	if (!READ_ONCE(krt_at_ref_held)) {
		krt_at_report("ref_late_reply_dropped", false, "service never held it", 0, 0);
		krt_at_report("ref_after_reset_estale", false, "service never held it", 0, 0);
		return;
	}
	/* the connection reset for the deadline: let its queue die first */
	msleep(500);
	ret = krt_srv_reply_ref(&krt_at_ref, 0, NULL, 0);
	krt_at_report("ref_late_reply_dropped", !ret, "krt_srv_reply_ref()", ret, 0);
	/* its connection's memory goes from a work after the last reference */
	msleep(3000);
	ret = krt_srv_reply_ref(&krt_at_ref, 0, NULL, 0);
	krt_at_report("ref_after_reset_estale", ret == -ESTALE, "krt_srv_reply_ref()",
		      ret, -ESTALE);
}

static int __init krt_at_init(void)
{
	struct page *pages[KRT_AT_PAGES] = {};
	struct krt_peer *peer;
	int ret, i;

	for (i = 0; i < KRT_AT_PAGES; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		krt_at_srv_pages[i] = alloc_page(GFP_KERNEL);
		if (!pages[i] || !krt_at_srv_pages[i]) {
			ret = -ENOMEM;
			goto out_pages;
		}
		bvec_set_page(&krt_at_srv_bv[i], krt_at_srv_pages[i], PAGE_SIZE, 0);
	}
	ret = krt_service_register(&krt_at_svc);
	if (ret)
		goto out_pages;
	peer = krt_peer_get(krt_at_peer);
	if (IS_ERR_OR_NULL(peer)) {
		ret = peer ? PTR_ERR(peer) : -ENOENT;
		pr_err("peer %s: %d\n", krt_at_peer, ret);
		goto out_svc;
	}
	pr_info("TAP version 13\n");
	pr_info("1..32\n");
	krt_at_buffer_cases(peer, pages);
	krt_at_message_cases(peer);
	krt_at_data_cases(peer, pages);
	krt_at_twice_case(peer);
	krt_at_stale_case(peer);
	krt_at_ref_cases(peer);
	krt_at_ref_busy_case(peer, pages);
	krt_at_data_reply_cases(peer, pages);
	krt_at_ref_reset_case(peer, pages);
	pr_info("# totals: pass:%d fail:%d\n", krt_at_num - krt_at_failed, krt_at_failed);
	ret = krt_at_failed ? -EINVAL : 0;
	krt_peer_put(peer);
out_svc:
	krt_service_unregister(&krt_at_svc);
out_pages:
	for (i = 0; i < KRT_AT_PAGES; i++) {
		if (pages[i])
			__free_page(pages[i]);
		if (krt_at_srv_pages[i])
			__free_page(krt_at_srv_pages[i]);
	}
	return ret;
}

static void __exit krt_at_exit(void)
{
}

module_init(krt_at_init);
module_exit(krt_at_exit);
MODULE_DESCRIPTION("krt: the exported API's contract, from a ULP's side (selftest)");
MODULE_LICENSE("GPL");
