// SPDX-License-Identifier: GPL-2.0
/*
 * krt_fuzz: an adversarial krt peer in user space, over rdma_cm and verbs.
 *
 * It speaks krt's protocol (Documentation/connections.rst and datapath.rst)
 * with every field under the caller's control, so that tests can show that
 * krt rejects and counts malformed input and bounds what a remote asks for.
 * Protocol version 2 by default; proto=1 speaks version 1 (32 bytes of
 * connect data, a 40-byte message header).
 *
 * usage:
 *   krt_fuzz connect ADDR PORT [field=value ...] [count=N] [hold=S]
 *	N connections, one after the other, each with CONNECT_REQUEST private
 *	data built from the fields; one line per connection:
 *	  accepted depth=D credits=C max_io=M node=0x... conn=I pool=P index=X
 *	  rejected reason=R (NAME) version=V conn=I pool=P index=X
 *	  rejected reason=- status=S conn=I ...	(no krt reject data)
 *	  error EVENT conn=I ...
 *	then holds the accepted ones for S seconds (or until SIGINT/SIGTERM),
 *	printing "disconnected conn=I" when krt drops one, and ends with
 *	"held U of A accepted, R rejected, E errors".
 *   krt_fuzz send ADDR PORT CASE [field=value ...] [wait=S] [n=N]
 *	connects as a valid client, sends the crafted request of CASE and
 *	prints "result CASE reset" if krt disconnected within S seconds
 *	(default 5), else "result CASE alive".  withhold_credits and
 *	return_credits send N valid requests one every gap_ms (default 300)
 *	without waiting for replies, the first returning no credit ever (so
 *	the server's replies wait once it spent the credits of the connect
 *	data: "withheld: request K ..." names the first such), the second
 *	returning them; they print "replies R to N requests" and "result CASE
 *	reset after=..s waited=..s" (waited: from request K to the reset).
 *   krt_fuzz server PORT CASE [addr=ADDR] [wait=S] [timeout=S] [target=N]
 *	listens until a krt node connects (krtctl peer add NAME addr ADDR port
 *	PORT), accepts it, answers its requests like krt's test service (and
 *	heartbeats), and the N-th request that qualifies (default 1; for
 *	foreign_inv the N-th data request) with the crafted reply of CASE;
 *	prints what it sent and "result CASE reset|alive|untriggered".
 *	Two cases play one peer against another, two instances meeting in a
 *	file (file=PATH): lend_rkey holds the first data request and writes
 *	its rkey, address and length to PATH, until PATH.go exists (or
 *	hold_s=S, default 60), then serves it ("lent request data ...:
 *	status=S mismatches=M" for its transfer, on a re-send too);
 *	steal_rkey, on the first data request of each connection, makes the
 *	next try of steal=TRIES (default rwi) with that rkey through its own
 *	QP: r an RDMA READ, w an RDMA WRITE of 0xa5 bytes, i a reply by
 *	SEND_WITH_INV of it; it prints "stolen read|write|inv: status=WC"
 *	(IBV_WC_ name without the prefix), serves the request on a success
 *	and leaves it unanswered otherwise; with no tries left it serves all.
 *
 * Fields of the connect data (numbers as in C: 0x.. hex): magic, version,
 * index, conn_count, pool, depth, node, credits, max_io, hb_ms, hb_misses,
 * reserved, len (bytes of private data sent); pool_step and index_step
 * make connection i use pool + i * pool_step and index + i * index_step.
 * conn_count defaults to the highest index + 1 and credits to depth;
 * hb_ms and hb_misses to 60000 and 100, the longest a v2 server lets a
 * silent client live (2 x hb_ms x hb_misses), since we send no heartbeats.
 * Also: src=ADDR (source address to bind), proto=1|2, timeout=S.
 * server only: depth (cap of the granted depth), max_io (cap), and the
 * accept's rep_magic, rep_version, rep_depth, rep_credits, rep_max_io,
 * rep_len, to exercise krt's checks of the accept.
 *
 * Exit status: 0 when the outcome was printed, 1 when the tool itself
 * could not run (no valid connection in send or server mode), 2 on usage.
 */
#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/types.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- krt's wire format, as the lead specified it (our own copy) ---- */

#define KRT_CM_MAGIC		0x4b525431	/* "KRT1" */
#define KRT_MSG_MAGIC		0x4b52544d	/* "KRTM" */
#define KRT_MSG_BUF		4096		/* receive buffers on both sides */
#define KRT_MAX_DEPTH		4096

/* CONNECT_REQUEST private data, version 2 (version 1: the first 32 bytes) */
struct krt_cm_req {
	__be32	magic;
	__be16	version;
	__be16	conn_index;
	__be16	conn_count;
	__be16	pool_id;
	__be32	depth;
	__be64	node_id;
	__be32	credits;	/* receive buffers the client posted */
	__be32	max_io;
	__be32	hb_ms;
	__be16	hb_misses;
	__be16	reserved;
};

static_assert(sizeof(struct krt_cm_req) == 40, "connect data v2 is 40 bytes");
#define KRT_CM_REQ_LEN_V1	32

/* accept (ESTABLISHED) private data: 28 bytes on the wire */
struct krt_cm_rep {
	__be32	magic;
	__be16	version;
	__be16	inline_data;	/* v2: message + write data one request may carry */
	__be64	node_id;
	__be32	depth;		/* granted */
	__be32	credits;	/* the server's posted receives */
	__be32	max_io;
};

#define KRT_CM_REP_LEN		28

/* reject private data (IB_CM_REJ_CONSUMER_DEFINED) */
struct krt_cm_rej {
	__be32	magic;
	__be16	version;
	__be16	reason;
};

static_assert(sizeof(struct krt_cm_rej) == 8, "reject data is 8 bytes");

static const char * const krt_rej_names[] = {
	"none", "version", "malformed", "limit", "unknown-node", "no-device",
	"no-resources", "identity",
};

enum {
	KRT_OP_REQ = 1,		/* client to server */
	KRT_OP_REP = 2,		/* server to client */
};

#define KRT_MF_READ	0x1	/* server RDMA-WRITEs into addr/rkey */
#define KRT_MF_WRITE	0x2	/* server RDMA-READs from addr/rkey */
#define KRT_MF_INV	0x4	/* reply with SEND_WITH_INV of rkey */
#define KRT_MF_RESENT	0x8	/* v2: sent before on a failed connection */
#define KRT_MF_INLINE	0x10	/* v2: write data follows the message */
#define FZ_MF_UNKNOWN	0x20	/* the lowest flag no version defines */

#define KRT_SERVICE_HB		0	/* heartbeat, answered by krt itself */
#define KRT_SERVICE_TEST	1	/* krt's test service */
#define FZ_SERVICE_UNUSED	15

/* message header, version 2 (version 1: the first 40 bytes, no req_id) */
struct krt_msg_hdr {
	__be32	magic;
	__u8	version;
	__u8	opcode;
	__be16	flags;
	__be32	len;		/* header + payload = bytes sent */
	__be16	credits;	/* receive buffers re-posted since the last message */
	__be16	service;
	__be32	tag;		/* slot index (low 16 bits), generation (high 16) */
	__be32	status;		/* replies: s32, 0 or -errno */
	__be64	addr;
	__be32	rkey;
	__be32	data_len;
	__be64	req_id;
};

static_assert(sizeof(struct krt_msg_hdr) == 48, "message header v2 is 48 bytes");
#define KRT_MSG_HDR_V1		40

/* krt's test service: this message leads a request's payload */
struct krt_tmsg {
	__be32	op;		/* 1 ping, 2 read, 3 write */
	__be32	seed;
	__be32	size;
};

enum { KRT_TEST_PING = 1, KRT_TEST_READ, KRT_TEST_WRITE };

/* the byte at offset @i of a test buffer (krt's testsvc.c) */
static __u8 krt_pat(__u32 seed, __u32 i)
{
	return (__u8)(seed ^ (i * 131) ^ (i >> 9));
}

/* ---- options ---- */

enum fz_opt_id {
	O_MAGIC, O_VERSION, O_INDEX, O_CONN_COUNT, O_POOL, O_DEPTH, O_NODE,
	O_CREDITS, O_MAX_IO, O_HB_MS, O_HB_MISSES, O_RESERVED, O_LEN,
	O_POOL_STEP, O_INDEX_STEP, O_COUNT, O_HOLD, O_WAIT, O_TIMEOUT,
	O_PROTO, O_N, O_TARGET, O_REP_MAGIC, O_REP_VERSION, O_REP_DEPTH,
	O_REP_CREDITS, O_REP_MAX_IO, O_REP_LEN, O_GAP_MS, O_HOLD_S,
	NR_OPTS
};

struct fz_opt {
	const char		*name;
	const char		*alias;
	unsigned long long	val;
	unsigned long long	max;
	bool			set;
};

static struct fz_opt opts[NR_OPTS] = {
	[O_MAGIC]	= { "magic", NULL, KRT_CM_MAGIC, 0xffffffff },
	[O_VERSION]	= { "version", NULL, 2, 0xffff },
	[O_INDEX]	= { "index", "conn_index", 0, 0xffff },
	[O_CONN_COUNT]	= { "conn_count", NULL, 1, 0xffff },
	[O_POOL]	= { "pool", "pool_id", 0, 0xffff },
	[O_DEPTH]	= { "depth", NULL, 4, 0xffffffff },
	[O_NODE]	= { "node", "node_id", 0, ~0ULL },
	[O_CREDITS]	= { "credits", NULL, 4, 0xffffffff },
	[O_MAX_IO]	= { "max_io", NULL, 1 << 20, 0xffffffff },
	[O_HB_MS]	= { "hb_ms", NULL, 60000, 0xffffffff },
	[O_HB_MISSES]	= { "hb_misses", NULL, 100, 0xffff },
	[O_RESERVED]	= { "reserved", NULL, 0, 0xffff },
	[O_LEN]		= { "len", NULL, 40, 255 },
	[O_POOL_STEP]	= { "pool_step", NULL, 0, 0xffff },
	[O_INDEX_STEP]	= { "index_step", NULL, 0, 0xffff },
	[O_COUNT]	= { "count", NULL, 1, 100000 },
	[O_HOLD]	= { "hold", NULL, 0, 86400 },
	[O_WAIT]	= { "wait", NULL, 5, 3600 },
	[O_TIMEOUT]	= { "timeout", NULL, 10, 86400 },
	[O_PROTO]	= { "proto", NULL, 2, 2 },
	[O_N]		= { "n", NULL, 8, 100000 },
	[O_TARGET]	= { "target", NULL, 1, 100000 },
	[O_REP_MAGIC]	= { "rep_magic", NULL, KRT_CM_MAGIC, 0xffffffff },
	[O_REP_VERSION]	= { "rep_version", NULL, 2, 0xffff },
	[O_REP_DEPTH]	= { "rep_depth", NULL, 0, 0xffffffff },
	[O_REP_CREDITS]	= { "rep_credits", NULL, 0, 0xffffffff },
	[O_REP_MAX_IO]	= { "rep_max_io", NULL, 0, 0xffffffff },
	[O_REP_LEN]	= { "rep_len", NULL, KRT_CM_REP_LEN, 196 },
	[O_GAP_MS]	= { "gap_ms", NULL, 300, 60000 },
	[O_HOLD_S]	= { "hold_s", NULL, 60, 3600 },
};

static const char *opt_src;	/* src=: source address of connections */
static const char *opt_addr;	/* addr=: the server's bind address */
static const char *opt_file;	/* file=: where lend_rkey/steal_rkey meet */
static const char *opt_steal = "rwi";	/* steal=: steal_rkey's tries, in order */

static unsigned long long ov(enum fz_opt_id id)
{
	return opts[id].val;
}

/* protocol version of what we send: messages and connect data */
static unsigned int pv_ver = 2, pv_req_len = 40, pv_hdr_len = 48;

static void fz_usage(void)
{
	fprintf(stderr,
		"usage: krt_fuzz connect ADDR PORT [field=value ...] [count=N] [hold=S]\n"
		"       krt_fuzz send ADDR PORT CASE [field=value ...] [wait=S] [n=N] [gap_ms=MS]\n"
		"       krt_fuzz server PORT CASE [addr=ADDR] [wait=S] [timeout=S] [target=N]\n"
		"                [file=PATH] [hold_s=S] [steal=TRIES]\n"
		"fields: magic version index conn_count pool depth node credits max_io\n"
		"        hb_ms hb_misses reserved len pool_step index_step src proto\n"
		"send cases: bad_magic bad_version short len_mismatch bad_opcode unknown_flags\n"
		"        inv_without_data read_and_write data_len_over data_len_zero\n"
		"        data_fields_without_data credits_overflow heartbeat_with_data\n"
		"        valid heartbeat withhold_credits return_credits inline_no_write\n"
		"        inline_with_rkey inline_over_message inline_over_offer inline_valid\n"
		"server cases: tag_out_of_range wrong_generation duplicate_reply\n"
		"        reply_with_flags credits_overflow foreign_inv request_to_client\n"
		"        reply_short valid lend_rkey steal_rkey\n");
	exit(2);
}

static void parse_opt(const char *arg)
{
	const char *eq = strchr(arg, '=');
	unsigned long long v;
	size_t klen;
	char *end;
	int i;

	if (!eq)
		fz_usage();
	klen = eq - arg;
	if (klen == 3 && !strncmp(arg, "src", 3)) {
		opt_src = eq + 1;
		return;
	}
	if (klen == 4 && !strncmp(arg, "addr", 4)) {
		opt_addr = eq + 1;
		return;
	}
	if (klen == 4 && !strncmp(arg, "file", 4)) {
		opt_file = eq + 1;
		return;
	}
	if (klen == 5 && !strncmp(arg, "steal", 5)) {
		opt_steal = eq + 1;
		if (strspn(opt_steal, "rwi") != strlen(opt_steal)) {
			fprintf(stderr, "krt_fuzz: steal is a string of r, w and i\n");
			fz_usage();
		}
		return;
	}
	for (i = 0; i < NR_OPTS; i++) {
		if ((strlen(opts[i].name) == klen && !strncmp(arg, opts[i].name, klen)) ||
		    (opts[i].alias && strlen(opts[i].alias) == klen &&
		     !strncmp(arg, opts[i].alias, klen)))
			break;
	}
	if (i == NR_OPTS) {
		fprintf(stderr, "krt_fuzz: unknown field '%.*s'\n", (int)klen, arg);
		fz_usage();
	}
	errno = 0;
	v = strtoull(eq + 1, &end, 0);
	if (errno || end == eq + 1 || *end || v > opts[i].max) {
		fprintf(stderr, "krt_fuzz: %s: '%s' is not a number up to %llu\n",
			opts[i].name, eq + 1, opts[i].max);
		fz_usage();
	}
	opts[i].val = v;
	opts[i].set = true;
}

/* the version's defaults for what was not given */
static void settle_opts(void)
{
	if (ov(O_PROTO) == 1) {
		pv_ver = 1;
		pv_req_len = KRT_CM_REQ_LEN_V1;
		pv_hdr_len = KRT_MSG_HDR_V1;
	} else if (ov(O_PROTO) != 2) {
		fprintf(stderr, "krt_fuzz: proto is 1 or 2\n");
		fz_usage();
	}
	if (!opts[O_VERSION].set)
		opts[O_VERSION].val = pv_ver;
	if (!opts[O_REP_VERSION].set)
		opts[O_REP_VERSION].val = pv_ver;
	if (!opts[O_LEN].set)
		opts[O_LEN].val = pv_req_len;
	if (!opts[O_CREDITS].set)
		opts[O_CREDITS].val = ov(O_DEPTH);
	if (!opts[O_NODE].set)
		opts[O_NODE].val = 0x66757a7a00000000ULL | (unsigned int)getpid();
	if (!opts[O_CONN_COUNT].set) {
		unsigned long long top = ov(O_INDEX) + (ov(O_COUNT) - 1) * ov(O_INDEX_STEP);

		opts[O_CONN_COUNT].val = top >= 0xffff ? 0xffff : top + 1;
	}
}

/* ---- connections ---- */

enum fz_state {
	FZ_NEW,
	FZ_CONNECTING,
	FZ_UP,		/* established */
	FZ_REJECTED,
	FZ_FAILED,
	FZ_GONE,	/* was up, disconnected */
};

#define FZ_WR_RECV	0x100000000ULL
#define FZ_WR_SEND	0x200000000ULL
#define FZ_WR_RDMA	0x300000000ULL
#define FZ_WR_STEAL	0x400000000ULL	/* steal_rkey's RDMA READ/WRITE */
#define FZ_WR_KIND(id)	((id) & ~0xffffffffULL)
#define FZ_WR_IDX(id)	((unsigned int)((id) & 0xffffffffULL))

/* a request krt sent to our server, until we answer it */
struct fz_sreq {
	bool			used;
	bool			data_posted;	/* RDMA READ/WRITE in flight */
	bool			held;		/* kept back by the case */
	unsigned int		n;		/* its number on the connection */
	struct krt_msg_hdr	h;
	unsigned int		msg_len;
	__u8			msg[KRT_MSG_BUF];
	int			status;
};

struct fz_conn {
	unsigned int		nr;
	unsigned int		pool, index;
	struct rdma_cm_id	*id;
	enum fz_state		state;
	double			t_start, t_up, t_gone;
	struct ibv_pd		*pd;
	struct ibv_comp_channel	*cc;
	struct ibv_cq		*cq;
	struct ibv_mr		*mr;		/* receive and send buffers */
	__u8			*buf;
	unsigned int		nr_recv, nr_send, send_next, sends_out;
	struct ibv_mr		*dmr;		/* data buffer */
	__u8			*data;
	size_t			data_size;
	/* from the accept (client) or what we granted (server) */
	__u32			depth, rcredits, max_io, inline_data;
	unsigned long long	node;
	/* the remote's connect data (server) */
	struct krt_cm_req	req;
	/* credits: messages we may send, buffers re-posted not yet told */
	unsigned int		credits, max_credits, grant;
	bool			qp_error;
	/* server */
	struct fz_sreq		*sreqs;
	unsigned int		nr_sreqs, nr_reqs, nr_eligible, served;
	bool			crafted;
	double			t_crafted;
	/* client (send) */
	__u32			tag_sent;
	__u64			req_id_sent;
	bool			got_reply;
	unsigned int		nr_replies;
	struct krt_msg_hdr	reply;
	unsigned int		reply_bytes;
};

#define FZ_MAX_CONNS	4096

static struct rdma_event_channel *fz_ch;
static struct fz_conn *fz_conns[FZ_MAX_CONNS];
static unsigned int fz_nconns;
static int fz_stop;

static void on_signal(int sig)
{
	fz_stop = sig;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse_addr(const char *host, unsigned int port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST, .ai_family = AF_UNSPEC };
	struct addrinfo *res;
	int ret;

	ret = getaddrinfo(host, NULL, &hints, &res);
	if (ret) {
		fprintf(stderr, "krt_fuzz: address '%s': %s\n", host, gai_strerror(ret));
		return -1;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	return 0;
}

static struct fz_conn *conn_new(void)
{
	struct fz_conn *c;

	if (fz_nconns == FZ_MAX_CONNS) {
		fprintf(stderr, "krt_fuzz: more than %d connections\n", FZ_MAX_CONNS);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->nr = fz_nconns;
	c->t_start = now_s();
	fz_conns[fz_nconns++] = c;
	return c;
}

/* Free the verbs resources and the id of @c (it stays listed, as a record). */
static void conn_release(struct fz_conn *c)
{
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->dmr)
		ibv_dereg_mr(c->dmr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->cc)
		ibv_destroy_comp_channel(c->cc);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	free(c->buf);
	free(c->data);
	free(c->sreqs);
	c->id = NULL;
	c->mr = NULL;
	c->dmr = NULL;
	c->cq = NULL;
	c->cc = NULL;
	c->pd = NULL;
	c->buf = NULL;
	c->data = NULL;
	c->sreqs = NULL;
}

static void *recv_buf(struct fz_conn *c, unsigned int i)
{
	return c->buf + (size_t)i * KRT_MSG_BUF;
}

static int post_recv(struct fz_conn *c, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)recv_buf(c, i),
		.length = KRT_MSG_BUF,
		.lkey = c->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = FZ_WR_RECV | i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad);
}

/*
 * PD, CQ (with a completion channel unless @quiet), QP, @nr_recv posted
 * receive buffers, @nr_send send buffers, @data_size bytes of data buffer
 * open to remote reads and writes.
 */
static int setup_qp(struct fz_conn *c, struct rdma_cm_id *id, unsigned int nr_recv,
		    unsigned int nr_send, size_t data_size, bool quiet)
{
	struct ibv_qp_init_attr qa = {};
	size_t bytes = (size_t)(nr_recv + nr_send) * KRT_MSG_BUF;
	unsigned int i;

	c->pd = ibv_alloc_pd(id->verbs);
	if (!c->pd)
		return -1;
	if (!quiet) {
		c->cc = ibv_create_comp_channel(id->verbs);
		if (!c->cc)
			return -1;
		fcntl(c->cc->fd, F_SETFL, fcntl(c->cc->fd, F_GETFL) | O_NONBLOCK);
	}
	c->cq = ibv_create_cq(id->verbs, nr_recv + 2 * nr_send + 8, c, c->cc, 0);
	if (!c->cq)
		return -1;
	if (c->cc && ibv_req_notify_cq(c->cq, 0))
		return -1;
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 2 * nr_send + 2;
	qa.cap.max_recv_wr = nr_recv ? nr_recv : 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, c->pd, &qa))
		return -1;
	c->nr_recv = nr_recv;
	c->nr_send = nr_send;
	if (bytes) {
		c->buf = aligned_alloc(4096, bytes);
		if (!c->buf)
			return -1;
		memset(c->buf, 0, bytes);
		c->mr = ibv_reg_mr(c->pd, c->buf, bytes, IBV_ACCESS_LOCAL_WRITE);
		if (!c->mr)
			return -1;
	}
	if (data_size) {
		data_size = (data_size + 4095) & ~(size_t)4095;
		c->data = aligned_alloc(4096, data_size);
		if (!c->data)
			return -1;
		memset(c->data, 0, data_size);
		c->data_size = data_size;
		c->dmr = ibv_reg_mr(c->pd, c->data, data_size, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
		if (!c->dmr)
			return -1;
	}
	for (i = 0; i < nr_recv; i++)
		if (post_recv(c, i))
			return -1;
	return 0;
}

/* RDMA READs we take (responder) and issue (initiator), from the device */
static void rd_atoms(struct rdma_cm_id *id, unsigned int *resp, unsigned int *init)
{
	struct ibv_device_attr da;

	*resp = 1;
	*init = 1;
	if (ibv_query_device(id->verbs, &da))
		return;
	*resp = da.max_qp_rd_atom < 16 ? da.max_qp_rd_atom : 16;
	*init = da.max_qp_init_rd_atom < 16 ? da.max_qp_init_rd_atom : 16;
}

/* Post a message from a send buffer; Return: 0 or -1 (printed). */
static int post_msg(struct fz_conn *c, const void *msg, unsigned int bytes, bool inv,
		    __u32 inv_rkey)
{
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge;
	unsigned int slot;
	void *p;
	int ret;

	if (c->sends_out >= c->nr_send) {
		printf("note conn=%u: no free send buffer\n", c->nr);
		return -1;
	}
	slot = c->send_next++ % c->nr_send;
	p = recv_buf(c, c->nr_recv + slot);
	memcpy(p, msg, bytes);
	sge.addr = (uintptr_t)p;
	sge.length = bytes;
	sge.lkey = c->mr->lkey;
	wr.wr_id = FZ_WR_SEND | slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND;
	wr.invalidate_rkey = inv_rkey;
	wr.send_flags = IBV_SEND_SIGNALED;
	ret = ibv_post_send(c->id->qp, &wr, &bad);
	if (ret) {
		printf("note conn=%u: ibv_post_send: %s\n", c->nr, strerror(ret));
		return -1;
	}
	c->sends_out++;
	if (c->credits)
		c->credits--;
	return 0;
}

/* A header in @h (all of it; pv_hdr_len bytes of it go on the wire). */
static void fill_hdr(struct krt_msg_hdr *h, __u8 opcode, __u16 flags, unsigned int plen,
		     __u16 credits, __u16 service, __u32 tag, __s32 status)
{
	memset(h, 0, sizeof(*h));
	h->magic = htobe32(KRT_MSG_MAGIC);
	h->version = pv_ver;
	h->opcode = opcode;
	h->flags = htobe16(flags);
	h->len = htobe32(pv_hdr_len + plen);
	h->credits = htobe16(credits);
	h->service = htobe16(service);
	h->tag = htobe32(tag);
	h->status = htobe32((__u32)status);
}

/* what is wrong with a message krt sent us, or NULL */
static const char *check_msg(struct fz_conn *c, const struct krt_msg_hdr *h,
			     unsigned int bytes, __u8 want_op)
{
	__u16 known = pv_ver >= 2 ? 0x1f : 0x7;

	if (bytes < pv_hdr_len)
		return "shorter than a header";
	if (be32toh(h->magic) != KRT_MSG_MAGIC)
		return "bad magic";
	if (h->version != pv_ver)
		return "unknown version";
	if (be32toh(h->len) != bytes)
		return "length differs from the bytes received";
	if (h->opcode != want_op)
		return "unexpected opcode";
	if (be16toh(h->flags) & ~known)
		return "unknown flags";
	if (want_op == KRT_OP_REP && h->flags)
		return "flags in a reply";
	if (c->credits + be16toh(h->credits) > c->max_credits)
		return "more credits than receive buffers";
	return NULL;
}

static void print_event_error(struct fz_conn *c, const char *what, int status)
{
	printf("error %s status=%d conn=%u pool=%u index=%u\n", what, status, c->nr,
	       c->pool, c->index);
}

/* ---- cm events ---- */

struct fz_event {
	enum rdma_cm_event_type	type;
	int			status;
	struct rdma_cm_id	*id;
	struct rdma_cm_id	*listen_id;
	__u8			pdata[256];
	unsigned int		pdata_len;
	unsigned int		resp_res, init_depth;
};

/* Next cm event without waiting; Return: 1 with @ev filled (and acked), else 0. */
static int get_event(struct fz_event *ev)
{
	struct rdma_cm_event *e;

	if (rdma_get_cm_event(fz_ch, &e))
		return 0;
	memset(ev, 0, sizeof(*ev));
	ev->type = e->event;
	ev->status = e->status;
	ev->id = e->id;
	ev->listen_id = e->listen_id;
	if (e->param.conn.private_data && e->param.conn.private_data_len) {
		ev->pdata_len = e->param.conn.private_data_len;
		if (ev->pdata_len > sizeof(ev->pdata))
			ev->pdata_len = sizeof(ev->pdata);
		memcpy(ev->pdata, e->param.conn.private_data, ev->pdata_len);
	}
	ev->resp_res = e->param.conn.responder_resources;
	ev->init_depth = e->param.conn.initiator_depth;
	rdma_ack_cm_event(e);
	return 1;
}

static void (*mode_event)(struct fz_event *ev);
static void (*mode_wc)(struct fz_conn *c, struct ibv_wc *wc);

static void drain_cq(struct fz_conn *c)
{
	struct ibv_wc wc[16];
	int n, i;

	if (!c->cq)
		return;
	if (c->cc) {
		struct ibv_cq *cq;
		void *ctx;

		while (!ibv_get_cq_event(c->cc, &cq, &ctx)) {
			ibv_ack_cq_events(cq, 1);
			ibv_req_notify_cq(cq, 0);
		}
	}
	do {
		n = ibv_poll_cq(c->cq, 16, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				if (!c->t_gone)
					c->t_gone = now_s();
				if (!c->qp_error)
					printf("completion-error conn=%u %s (%s)\n", c->nr,
					       ibv_wc_status_str(wc[i].status),
					       FZ_WR_KIND(wc[i].wr_id) == FZ_WR_RECV ? "receive" :
					       FZ_WR_KIND(wc[i].wr_id) == FZ_WR_SEND ? "send" :
					       "rdma");
				c->qp_error = true;
			}
			if (FZ_WR_KIND(wc[i].wr_id) == FZ_WR_SEND && c->sends_out)
				c->sends_out--;
			if (mode_wc)
				mode_wc(c, &wc[i]);
		}
	} while (n > 0);
}

/* One round: wait up to @ms for cm events or completions, handle them. */
static void pump(int ms)
{
	struct pollfd pfd[1 + 64];
	struct fz_event ev;
	unsigned int i, n = 1;

	pfd[0].fd = fz_ch->fd;
	pfd[0].events = POLLIN;
	for (i = 0; i < fz_nconns && n < 65; i++) {
		if (fz_conns[i]->cc) {
			pfd[n].fd = fz_conns[i]->cc->fd;
			pfd[n].events = POLLIN;
			n++;
		}
	}
	if (poll(pfd, n, ms) < 0 && errno != EINTR)
		return;
	while (get_event(&ev))
		mode_event(&ev);
	for (i = 0; i < fz_nconns; i++)
		drain_cq(fz_conns[i]);
}

/* ---- active side: connect and send ---- */

static struct sockaddr_storage fz_dst, fz_srcaddr;

static unsigned int build_req(struct fz_conn *c, __u8 *buf, size_t size)
{
	struct krt_cm_req req;
	size_t len = ov(O_LEN);

	memset(&req, 0, sizeof(req));
	req.magic = htobe32(ov(O_MAGIC));
	req.version = htobe16(ov(O_VERSION));
	req.conn_index = htobe16(c->index);
	req.conn_count = htobe16(ov(O_CONN_COUNT));
	req.pool_id = htobe16(c->pool);
	req.depth = htobe32(ov(O_DEPTH));
	req.node_id = htobe64(ov(O_NODE));
	req.credits = htobe32(ov(O_CREDITS));
	req.max_io = htobe32(ov(O_MAX_IO));
	req.hb_ms = htobe32(ov(O_HB_MS));
	req.hb_misses = htobe16(ov(O_HB_MISSES));
	req.reserved = htobe16(ov(O_RESERVED));
	memset(buf, 0, size);
	memcpy(buf, &req, len < sizeof(req) ? len : sizeof(req));
	return len;
}

static bool fz_is_send;		/* send mode: buffers and a data region */

static void client_route_resolved(struct fz_conn *c)
{
	struct rdma_conn_param param = {};
	unsigned int nr_recv = 0, nr_send = 0, resp, init;
	size_t data = 0;
	__u8 pdata[256];

	if (fz_is_send) {
		nr_recv = ov(O_CREDITS) < 1 ? 1 : ov(O_CREDITS) > 1024 ? 1024 : ov(O_CREDITS);
		if (nr_recv != ov(O_CREDITS))
			printf("note: posting %u receive buffers, claiming %llu\n", nr_recv,
			       ov(O_CREDITS));
		nr_send = 16;
		data = ov(O_MAX_IO) > (16 << 20) ? (16 << 20) : ov(O_MAX_IO);
		data += 4096;
	}
	if (setup_qp(c, c->id, nr_recv, nr_send, data, !fz_is_send)) {
		print_event_error(c, "setup", -errno);
		c->state = FZ_FAILED;
		return;
	}
	rd_atoms(c->id, &resp, &init);
	param.private_data = pdata;
	param.private_data_len = build_req(c, pdata, sizeof(pdata));
	param.responder_resources = resp;
	param.initiator_depth = init;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	if (rdma_connect(c->id, &param)) {
		print_event_error(c, "rdma_connect", -errno);
		c->state = FZ_FAILED;
	}
}

static void client_established(struct fz_conn *c, struct fz_event *ev)
{
	struct krt_cm_rep rep;
	const char *bad = NULL;

	memset(&rep, 0, sizeof(rep));
	memcpy(&rep, ev->pdata, ev->pdata_len < KRT_CM_REP_LEN ? ev->pdata_len : KRT_CM_REP_LEN);
	c->depth = be32toh(rep.depth);
	c->rcredits = be32toh(rep.credits);
	c->max_io = be32toh(rep.max_io);
	c->inline_data = be16toh(rep.inline_data);
	c->node = be64toh(rep.node_id);
	if (be32toh(rep.magic) != KRT_CM_MAGIC)
		bad = "magic";
	else if (be16toh(rep.version) != pv_ver)
		bad = "version";
	c->state = FZ_UP;
	c->t_up = now_s();
	c->credits = c->rcredits;
	c->max_credits = c->rcredits;
	printf("accepted depth=%u credits=%u max_io=%u node=0x%016llx conn=%u pool=%u index=%u",
	       c->depth, c->rcredits, c->max_io, c->node, c->nr, c->pool, c->index);
	printf(" inline_data=%u", c->inline_data);
	if (bad)
		printf(" bad_accept=%s(version=%u)", bad, be16toh(rep.version));
	printf("\n");
}

static void client_rejected(struct fz_conn *c, struct fz_event *ev)
{
	struct krt_cm_rej rej;

	c->state = FZ_REJECTED;
	memset(&rej, 0, sizeof(rej));
	memcpy(&rej, ev->pdata, ev->pdata_len < sizeof(rej) ? ev->pdata_len : sizeof(rej));
	if (ev->pdata_len >= sizeof(rej) && be32toh(rej.magic) == KRT_CM_MAGIC) {
		unsigned int r = be16toh(rej.reason);

		printf("rejected reason=%u (%s) version=%u conn=%u pool=%u index=%u\n", r,
		       r < ARRAY_SIZE(krt_rej_names) ?
		       krt_rej_names[r] : "?", be16toh(rej.version), c->nr, c->pool, c->index);
	} else {
		printf("rejected reason=- status=%d conn=%u pool=%u index=%u\n", ev->status,
		       c->nr, c->pool, c->index);
	}
}

static void client_event(struct fz_event *ev)
{
	struct fz_conn *c = ev->id ? ev->id->context : NULL;

	if (!c)
		return;
	switch (ev->type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(c->id, 2000)) {
			print_event_error(c, "rdma_resolve_route", -errno);
			c->state = FZ_FAILED;
		}
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		client_route_resolved(c);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		client_established(c, ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		client_rejected(c, ev);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (!c->t_gone)
			c->t_gone = now_s();
		if (c->state == FZ_UP) {
			printf("disconnected conn=%u pool=%u index=%u after=%.1fs\n", c->nr,
			       c->pool, c->index, now_s() - c->t_up);
			c->state = FZ_GONE;
		}
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		if (c->state == FZ_CONNECTING || c->state == FZ_NEW) {
			print_event_error(c, rdma_event_str(ev->type), ev->status);
			c->state = FZ_FAILED;
		}
		break;
	}
}

/* Start connection @i; Return: the connection, or NULL (printed). */
static struct fz_conn *client_start(unsigned int i)
{
	struct fz_conn *c = conn_new();

	if (!c)
		return NULL;
	c->pool = (ov(O_POOL) + i * ov(O_POOL_STEP)) & 0xffff;
	c->index = (ov(O_INDEX) + i * ov(O_INDEX_STEP)) & 0xffff;
	c->state = FZ_CONNECTING;
	if (rdma_create_id(fz_ch, &c->id, c, RDMA_PS_TCP)) {
		print_event_error(c, "rdma_create_id", -errno);
		c->state = FZ_FAILED;
		return c;
	}
	if (rdma_resolve_addr(c->id, opt_src ? (struct sockaddr *)&fz_srcaddr : NULL,
			      (struct sockaddr *)&fz_dst, 2000)) {
		print_event_error(c, "rdma_resolve_addr", -errno);
		c->state = FZ_FAILED;
	}
	return c;
}

/* Wait until @c is up or done; Return: its state. */
static enum fz_state client_wait(struct fz_conn *c)
{
	double end = now_s() + ov(O_TIMEOUT);

	while (c->state == FZ_CONNECTING && !fz_stop) {
		if (now_s() > end) {
			print_event_error(c, "timeout", -ETIMEDOUT);
			c->state = FZ_FAILED;
			break;
		}
		pump(100);
	}
	if (c->state == FZ_FAILED || c->state == FZ_REJECTED)
		conn_release(c);
	return c->state;
}

static int client_init(char **argv, int first_opt, int argc)
{
	int i;

	for (i = first_opt; i < argc; i++)
		parse_opt(argv[i]);
	settle_opts();
	if (parse_addr(argv[2], atoi(argv[3]), &fz_dst))
		return -1;
	if (opt_src && parse_addr(opt_src, 0, &fz_srcaddr))
		return -1;
	fz_ch = rdma_create_event_channel();
	if (!fz_ch) {
		perror("krt_fuzz: rdma_create_event_channel");
		return -1;
	}
	fcntl(fz_ch->fd, F_SETFL, fcntl(fz_ch->fd, F_GETFL) | O_NONBLOCK);
	mode_event = client_event;
	return 0;
}

static int do_connect(int argc, char **argv)
{
	unsigned int i, up = 0, acc = 0, rej = 0, err = 0;
	double end;

	if (argc < 4)
		fz_usage();
	if (client_init(argv, 4, argc))
		return 1;
	for (i = 0; i < ov(O_COUNT) && !fz_stop; i++) {
		struct fz_conn *c = client_start(i);

		if (!c)
			break;
		switch (client_wait(c)) {
		case FZ_UP:
		case FZ_GONE:
			acc++;
			break;
		case FZ_REJECTED:
			rej++;
			break;
		default:
			err++;
			break;
		}
	}
	end = now_s() + ov(O_HOLD);
	while (now_s() < end && !fz_stop)
		pump(200);
	for (i = 0; i < fz_nconns; i++)
		up += fz_conns[i]->state == FZ_UP;
	printf("held %u of %u accepted, %u rejected, %u errors\n", up, acc, rej, err);
	for (i = 0; i < fz_nconns; i++) {
		if (fz_conns[i]->state == FZ_UP)
			rdma_disconnect(fz_conns[i]->id);
		conn_release(fz_conns[i]);
	}
	rdma_destroy_event_channel(fz_ch);
	return 0;
}

/* ---- send: crafted requests to a krt server ---- */

enum fz_send_case {
	S_BAD_MAGIC, S_BAD_VERSION, S_SHORT, S_LEN_MISMATCH, S_BAD_OPCODE,
	S_UNKNOWN_FLAGS, S_INV_WITHOUT_DATA, S_READ_AND_WRITE, S_DATA_LEN_OVER,
	S_DATA_LEN_ZERO, S_DATA_FIELDS_WITHOUT_DATA, S_CREDITS_OVERFLOW,
	S_HEARTBEAT_WITH_DATA, S_VALID, S_HEARTBEAT, S_WITHHOLD_CREDITS,
	S_RETURN_CREDITS, S_INLINE_NO_WRITE, S_INLINE_WITH_RKEY, S_INLINE_OVER_MESSAGE,
	S_INLINE_OVER_OFFER, S_INLINE_VALID, NR_SEND_CASES
};

static const char * const send_case_names[NR_SEND_CASES] = {
	"bad_magic", "bad_version", "short", "len_mismatch", "bad_opcode",
	"unknown_flags", "inv_without_data", "read_and_write", "data_len_over",
	"data_len_zero", "data_fields_without_data", "credits_overflow",
	"heartbeat_with_data", "valid", "heartbeat", "withhold_credits",
	"return_credits", "inline_no_write", "inline_with_rkey", "inline_over_message",
	"inline_over_offer", "inline_valid",
};

static void send_wc(struct fz_conn *c, struct ibv_wc *wc)
{
	const struct krt_msg_hdr *h;
	unsigned int i = FZ_WR_IDX(wc->wr_id);
	const char *bad;

	if (FZ_WR_KIND(wc->wr_id) != FZ_WR_RECV || wc->status != IBV_WC_SUCCESS)
		return;
	h = recv_buf(c, i);
	memset(&c->reply, 0, sizeof(c->reply));
	memcpy(&c->reply, h, wc->byte_len < sizeof(c->reply) ? wc->byte_len : sizeof(c->reply));
	c->reply_bytes = wc->byte_len;
	c->got_reply = true;
	c->nr_replies++;
	bad = check_msg(c, &c->reply, wc->byte_len, KRT_OP_REP);
	printf("reply tag=0x%08x status=%d credits=%u len=%u bytes=%u",
	       be32toh(c->reply.tag), (int)be32toh(c->reply.status), be16toh(c->reply.credits),
	       be32toh(c->reply.len), wc->byte_len);
	printf(" service=%u req_id=0x%llx%s%s\n", be16toh(c->reply.service),
	       pv_ver >= 2 ? (unsigned long long)be64toh(c->reply.req_id) : 0ULL,
	       bad ? " malformed: " : "", bad ? bad : "");
	c->credits += be16toh(c->reply.credits);
	if (c->credits > c->max_credits)
		c->credits = c->max_credits;
	if (post_recv(c, i))
		printf("note: cannot re-post a receive buffer\n");
	else
		c->grant++;
}

/* Build the request of @k into @buf; Return: bytes to send; @what: text. */
static unsigned int craft_req(struct fz_conn *c, enum fz_send_case k, __u8 *buf,
			      unsigned int seq, char *what, size_t wlen)
{
	struct krt_msg_hdr h;
	const char *pl = "krt_fuzz payload";	/* 16 bytes */
	unsigned int plen = 16, bytes;
	__u16 service = k == S_HEARTBEAT || k == S_HEARTBEAT_WITH_DATA ?
			KRT_SERVICE_HB : FZ_SERVICE_UNUSED;

	if (k == S_HEARTBEAT)
		plen = 0;
	c->tag_sent = (seq & 0xffff) << 16 | (seq % (c->depth ? c->depth : 1));
	c->req_id_sent = 0x66757a7a00000000ULL | seq;
	fill_hdr(&h, KRT_OP_REQ, 0, plen, c->grant, service, c->tag_sent, 0);
	h.req_id = htobe64(c->req_id_sent);
	c->grant = 0;
	bytes = pv_hdr_len + plen;
	snprintf(what, wlen, "a well-formed request to service %u", service);
	switch (k) {
	case S_BAD_MAGIC:
		h.magic = htobe32(0xdeadbeef);
		snprintf(what, wlen, "magic 0xdeadbeef");
		break;
	case S_BAD_VERSION:
		h.version = pv_ver + 1;
		snprintf(what, wlen, "version %u", pv_ver + 1);
		break;
	case S_SHORT:
		bytes = 16;
		h.len = htobe32(16);
		snprintf(what, wlen, "16 bytes (header %u), len 16", pv_hdr_len);
		break;
	case S_LEN_MISMATCH:
		h.len = htobe32(bytes + 1);
		snprintf(what, wlen, "len %u for %u bytes", bytes + 1, bytes);
		break;
	case S_BAD_OPCODE:
		h.opcode = KRT_OP_REP;
		snprintf(what, wlen, "opcode %u (a reply) to the server", KRT_OP_REP);
		break;
	case S_UNKNOWN_FLAGS:
		h.flags = htobe16(FZ_MF_UNKNOWN);
		snprintf(what, wlen, "flags 0x%x", FZ_MF_UNKNOWN);
		break;
	case S_INV_WITHOUT_DATA:
		h.flags = htobe16(KRT_MF_INV);
		snprintf(what, wlen, "flags INV without data");
		break;
	case S_READ_AND_WRITE:
		h.flags = htobe16(KRT_MF_READ | KRT_MF_WRITE);
		h.data_len = htobe32(4096);
		snprintf(what, wlen, "flags READ|WRITE, data_len 4096 of a real MR");
		break;
	case S_DATA_LEN_OVER:
		h.flags = htobe16(KRT_MF_READ | KRT_MF_INV);
		h.data_len = htobe32(c->max_io + 1);
		snprintf(what, wlen, "READ of data_len %u, negotiated max_io %u, MR of %zu bytes",
			 c->max_io + 1, c->max_io, c->data_size);
		break;
	case S_DATA_LEN_ZERO:
		h.flags = htobe16(KRT_MF_WRITE);
		h.data_len = 0;
		snprintf(what, wlen, "WRITE of data_len 0");
		break;
	case S_DATA_FIELDS_WITHOUT_DATA:
		h.data_len = htobe32(4096);
		snprintf(what, wlen, "no READ/WRITE flag, data_len 4096, addr and rkey set");
		break;
	case S_CREDITS_OVERFLOW:
		h.credits = htobe16(1);
		snprintf(what, wlen, "credits 1 while the server holds all %u of ours",
			 c->nr_recv);
		break;
	case S_HEARTBEAT_WITH_DATA:
		snprintf(what, wlen, "a heartbeat (service 0) with %u bytes of payload", plen);
		break;
	case S_INLINE_NO_WRITE:
		h.flags = htobe16(KRT_MF_INLINE);
		snprintf(what, wlen, "flags INLINE without WRITE, no data_len");
		break;
	case S_INLINE_WITH_RKEY:
		h.flags = htobe16(KRT_MF_WRITE | KRT_MF_INLINE);
		h.data_len = htobe32(8);
		snprintf(what, wlen, "WRITE|INLINE of the last 8 payload bytes, addr and rkey set");
		break;
	case S_INLINE_OVER_MESSAGE:
		h.flags = htobe16(KRT_MF_WRITE | KRT_MF_INLINE);
		h.data_len = htobe32(plen + 1);
		snprintf(what, wlen, "WRITE|INLINE of data_len %u, %u bytes after the header",
			 plen + 1, plen);
		break;
	case S_INLINE_OVER_OFFER:
	case S_INLINE_VALID:
		h.flags = htobe16(KRT_MF_WRITE | KRT_MF_INLINE);
		h.data_len = htobe32(8);
		snprintf(what, wlen, "WRITE|INLINE of the last 8 of %u bytes (offer %u)",
			 plen, c->inline_data);
		break;
	default:
		break;
	}
	if ((be16toh(h.flags) & (KRT_MF_READ | KRT_MF_WRITE) || h.data_len) &&
	    (k == S_INLINE_WITH_RKEY || !(be16toh(h.flags) & KRT_MF_INLINE))) {
		h.addr = htobe64((uintptr_t)c->data);
		h.rkey = htobe32(c->dmr->rkey);
	}
	memset(buf, 0, KRT_MSG_BUF);
	memcpy(buf, &h, pv_hdr_len);
	memcpy(buf + pv_hdr_len, pl, plen);
	return bytes;
}

static bool send_gone(struct fz_conn *c)
{
	return c->state != FZ_UP || c->qp_error;
}

/* Wait up to @s seconds for a reply or the end of @c; Return: true on a reply. */
static bool send_wait_reply(struct fz_conn *c, double s)
{
	double end = now_s() + s;

	while (!c->got_reply && !send_gone(c) && now_s() < end && !fz_stop)
		pump(100);
	return c->got_reply;
}

/*
 * withhold_credits and return_credits: n well-formed requests to the
 * unused service, one every gap_ms without waiting for replies (as long as
 * we hold a credit), so the server is never idle for long.  withhold_credits
 * returns no credit (header credits always 0): once the server spent the
 * credits of our connect data, its replies wait; return_credits is the
 * same traffic with credits returned.  Return: the replies received.
 */
static unsigned int send_paced(struct fz_conn *c, enum fz_send_case k, double *t_wait)
{
	unsigned int i, bytes, n = ov(O_N);
	struct krt_msg_hdr *h;
	__u8 msg[KRT_MSG_BUF];
	char what[160];
	double next;

	*t_wait = 0;
	for (i = 0; i < n && !send_gone(c) && !fz_stop; i++) {
		if (!c->credits) {
			printf("note: no credit left after %u requests\n", i);
			break;
		}
		bytes = craft_req(c, S_VALID, msg, i + 1, what, sizeof(what));
		h = (struct krt_msg_hdr *)msg;
		if (k == S_WITHHOLD_CREDITS)
			h->credits = 0;
		c->got_reply = false;
		if (post_msg(c, msg, bytes, false, 0))
			break;
		if (i == 0)
			printf("sent %s: %u x %s, every %llu ms, credits %s\n", send_case_names[k],
			       n, what, ov(O_GAP_MS),
			       k == S_WITHHOLD_CREDITS ? "never returned" : "returned");
		/* the server spent the credits of our connect data: this reply waits */
		if (k == S_WITHHOLD_CREDITS && i == ov(O_CREDITS)) {
			*t_wait = now_s();
			printf("withheld: request %u is the first whose reply has no credit\n",
			       i + 1);
		}
		next = now_s() + ov(O_GAP_MS) / 1000.0;
		while (!send_gone(c) && !fz_stop && now_s() < next)
			pump(50);
	}
	return c->nr_replies;
}

static int do_send(int argc, char **argv)
{
	unsigned int i, n, replies = 0, ok = 0, bytes;
	enum fz_send_case k;
	char what[160];
	__u8 msg[KRT_MSG_BUF];
	struct fz_conn *c;
	double t, end, t_wait = 0;
	int want;

	if (argc < 5)
		fz_usage();
	for (k = 0; k < NR_SEND_CASES; k++)
		if (!strcmp(argv[4], send_case_names[k]))
			break;
	if (k == NR_SEND_CASES) {
		fprintf(stderr, "krt_fuzz: unknown send case '%s'\n", argv[4]);
		fz_usage();
	}
	fz_is_send = true;
	if (client_init(argv, 5, argc))
		return 1;
	mode_wc = send_wc;
	c = client_start(0);
	if (!c || client_wait(c) != FZ_UP) {
		printf("result %s no-connection\n", send_case_names[k]);
		return 1;
	}
	n = (k == S_VALID || k == S_HEARTBEAT || k == S_INLINE_VALID) ? ov(O_N) : 1;
	want = k == S_HEARTBEAT ? 0 : -EPROTONOSUPPORT;
	if (k == S_WITHHOLD_CREDITS || k == S_RETURN_CREDITS) {
		replies = send_paced(c, k, &t_wait);
		n = 0;
	}
	for (i = 0; i < n && !send_gone(c); i++) {
		if (!c->credits) {
			printf("note: no credit left after %u requests\n", i);
			break;
		}
		bytes = craft_req(c, k, msg, i + 1, what, sizeof(what));
		c->got_reply = false;
		if (post_msg(c, msg, bytes, false, 0))
			break;
		if (i == 0)
			printf("sent %s: %s, %u bytes\n", send_case_names[k], what, bytes);
		if (k != S_VALID && k != S_HEARTBEAT && k != S_INLINE_VALID)
			break;
		if (!send_wait_reply(c, ov(O_WAIT))) {
			printf("note: no reply to request %u\n", i + 1);
			break;
		}
		replies++;
		if ((int)be32toh(c->reply.status) == want && be32toh(c->reply.tag) == c->tag_sent &&
		    c->reply.opcode == KRT_OP_REP &&
		    (pv_ver < 2 || be64toh(c->reply.req_id) == c->req_id_sent))
			ok++;
		else
			printf("note: reply %u differs: want status %d tag 0x%08x req_id 0x%llx\n",
			       i + 1, want, c->tag_sent, (unsigned long long)c->req_id_sent);
	}
	if (k == S_VALID || k == S_HEARTBEAT || k == S_INLINE_VALID)
		printf("replies %u of %u, %u as expected (status %d)\n", replies, n, ok, want);
	if (k == S_WITHHOLD_CREDITS || k == S_RETURN_CREDITS)
		printf("replies %u to %llu requests\n", replies, ov(O_N));
	t = now_s();
	end = t + ov(O_WAIT);
	while (!send_gone(c) && now_s() < end && !fz_stop)
		pump(100);
	if (send_gone(c) && t_wait)
		printf("result %s reset after=%.1fs waited=%.1fs\n", send_case_names[k],
		       now_s() - t, c->t_gone - t_wait);
	else if (send_gone(c))
		printf("result %s reset after=%.1fs\n", send_case_names[k], now_s() - t);
	else
		printf("result %s alive for=%.0fs\n", send_case_names[k], ov(O_WAIT) * 1.0);
	if (c->state == FZ_UP)
		rdma_disconnect(c->id);
	conn_release(c);
	rdma_destroy_event_channel(fz_ch);
	return 0;
}

/* ---- server: crafted replies to a krt client ---- */

enum fz_srv_case {
	V_TAG_OUT_OF_RANGE, V_WRONG_GENERATION, V_DUPLICATE_REPLY,
	V_REPLY_WITH_FLAGS, V_CREDITS_OVERFLOW, V_FOREIGN_INV,
	V_REQUEST_TO_CLIENT, V_REPLY_SHORT, V_VALID, V_LEND_RKEY, V_STEAL_RKEY,
	NR_SRV_CASES
};

static const char * const srv_case_names[NR_SRV_CASES] = {
	"tag_out_of_range", "wrong_generation", "duplicate_reply",
	"reply_with_flags", "credits_overflow", "foreign_inv",
	"request_to_client", "reply_short", "valid", "lend_rkey", "steal_rkey",
};

static enum fz_srv_case srv_case;
static struct rdma_cm_id *srv_lid;
static struct fz_conn *srv_target_conn;	/* where the case was played */
static double srv_hold_until;		/* foreign_inv: waiting for a second request */
static struct fz_sreq *srv_held;

/* a case that answers every request validly, but for what it plays */
static bool srv_no_craft(void)
{
	return srv_case == V_VALID || srv_case == V_LEND_RKEY || srv_case == V_STEAL_RKEY;
}

/* ---- lend_rkey and steal_rkey: one peer's rkey used by another ---- */

static const char * const wc_status_names[] = {
	[IBV_WC_SUCCESS] = "SUCCESS",
	[IBV_WC_LOC_LEN_ERR] = "LOC_LEN_ERR",
	[IBV_WC_LOC_QP_OP_ERR] = "LOC_QP_OP_ERR",
	[IBV_WC_LOC_PROT_ERR] = "LOC_PROT_ERR",
	[IBV_WC_WR_FLUSH_ERR] = "WR_FLUSH_ERR",
	[IBV_WC_BAD_RESP_ERR] = "BAD_RESP_ERR",
	[IBV_WC_LOC_ACCESS_ERR] = "LOC_ACCESS_ERR",
	[IBV_WC_REM_INV_REQ_ERR] = "REM_INV_REQ_ERR",
	[IBV_WC_REM_ACCESS_ERR] = "REM_ACCESS_ERR",
	[IBV_WC_REM_OP_ERR] = "REM_OP_ERR",
	[IBV_WC_RETRY_EXC_ERR] = "RETRY_EXC_ERR",
	[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR_RETRY_EXC_ERR",
	[IBV_WC_REM_ABORT_ERR] = "REM_ABORT_ERR",
	[IBV_WC_FATAL_ERR] = "FATAL_ERR",
	[IBV_WC_RESP_TIMEOUT_ERR] = "RESP_TIMEOUT_ERR",
	[IBV_WC_GENERAL_ERR] = "GENERAL_ERR",
};

static const char *wc_name(enum ibv_wc_status st)
{
	if ((unsigned int)st < ARRAY_SIZE(wc_status_names) && wc_status_names[st])
		return wc_status_names[st];
	return ibv_wc_status_str(st);
}

static bool srv_is_data(const struct fz_sreq *r)
{
	return be16toh(r->h.flags) & (KRT_MF_READ | KRT_MF_WRITE);
}

/* lend_rkey: the request held, its connection, until when, its id */
static struct fz_sreq *srv_lent;
static struct fz_conn *srv_lent_conn;
static double srv_lent_until;
static bool srv_lent_done;
static __be64 srv_lent_id;
/* steal_rkey: tries made, the last one's connection, request, WR and kind */
static unsigned int srv_steals;
static struct fz_conn *srv_steal_conn;
static struct fz_sreq *srv_steal_req;
static __u64 srv_steal_wr;
static char srv_steal_what;

static __u32 min_u32(__u32 a, __u32 b)
{
	return a < b ? a : b;
}

static void srv_connect_request(struct fz_event *ev)
{
	struct rdma_conn_param param = {};
	struct krt_cm_rep rep;
	unsigned int resp, init;
	__u32 depth, cap, max_io;
	struct fz_conn *c;
	__u8 pdata[256];
	size_t size;

	c = conn_new();
	if (!c) {
		rdma_reject(ev->id, NULL, 0);
		return;
	}
	c->id = ev->id;
	c->id->context = c;
	memset(&c->req, 0, sizeof(c->req));
	memcpy(&c->req, ev->pdata, ev->pdata_len < sizeof(c->req) ? ev->pdata_len : sizeof(c->req));
	c->index = be16toh(c->req.conn_index);
	c->pool = be16toh(c->req.pool_id);
	printf("connect-request conn=%u magic=0x%08x version=%u index=%u count=%u pool=%u",
	       c->nr, be32toh(c->req.magic), be16toh(c->req.version), c->index,
	       be16toh(c->req.conn_count), c->pool);
	printf(" depth=%u node=0x%016llx credits=%u max_io=%u hb_ms=%u hb_misses=%u len=%u\n",
	       be32toh(c->req.depth), (unsigned long long)be64toh(c->req.node_id),
	       be32toh(c->req.credits), be32toh(c->req.max_io), be32toh(c->req.hb_ms),
	       be16toh(c->req.hb_misses), ev->pdata_len);
	cap = opts[O_DEPTH].set ? ov(O_DEPTH) : 64;
	depth = min_u32(be32toh(c->req.depth), cap);
	if (depth < 1)
		depth = 1;
	max_io = min_u32(be32toh(c->req.max_io), opts[O_MAX_IO].set ? ov(O_MAX_IO) : 1 << 20);
	while ((size_t)depth * max_io > (64 << 20) && max_io > 4096)
		max_io /= 2;
	size = (size_t)depth * max_io;
	c->depth = depth;
	c->max_io = max_io;
	c->credits = min_u32(be32toh(c->req.credits), KRT_MAX_DEPTH);
	c->max_credits = c->credits;
	c->nr_sreqs = 2 * depth;
	c->sreqs = calloc(c->nr_sreqs, sizeof(*c->sreqs));
	if (!c->sreqs || setup_qp(c, c->id, depth, 2 * depth + 4, size ? size : 4096, false)) {
		printf("error setup conn=%u: %s\n", c->nr, strerror(errno));
		rdma_reject(c->id, NULL, 0);
		c->state = FZ_FAILED;
		conn_release(c);
		return;
	}
	memset(&rep, 0, sizeof(rep));
	rep.magic = htobe32(ov(O_REP_MAGIC));
	rep.version = htobe16(ov(O_REP_VERSION));
	rep.node_id = htobe64(ov(O_NODE));
	rep.depth = htobe32(opts[O_REP_DEPTH].set ? ov(O_REP_DEPTH) : depth);
	rep.credits = htobe32(opts[O_REP_CREDITS].set ? ov(O_REP_CREDITS) : depth);
	rep.max_io = htobe32(opts[O_REP_MAX_IO].set ? ov(O_REP_MAX_IO) : max_io);
	memset(pdata, 0, sizeof(pdata));
	memcpy(pdata, &rep, KRT_CM_REP_LEN);
	rd_atoms(c->id, &resp, &init);
	param.private_data = pdata;
	param.private_data_len = ov(O_REP_LEN);
	param.responder_resources = min_u32(ev->init_depth, resp);
	param.initiator_depth = min_u32(ev->resp_res, init);
	param.rnr_retry_count = 7;
	if (rdma_accept(c->id, &param)) {
		printf("error rdma_accept conn=%u: %s\n", c->nr, strerror(errno));
		c->state = FZ_FAILED;
		return;
	}
	c->state = FZ_CONNECTING;
	printf("accepting conn=%u depth=%u credits=%u max_io=%u version=%u\n", c->nr,
	       be32toh(rep.depth), be32toh(rep.credits), be32toh(rep.max_io),
	       be16toh(rep.version));
}

static void srv_event(struct fz_event *ev)
{
	struct fz_conn *c;

	if (ev->type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		srv_connect_request(ev);
		return;
	}
	c = ev->id ? ev->id->context : NULL;
	if (!c)
		return;
	switch (ev->type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		c->state = FZ_UP;
		c->t_up = now_s();
		printf("established conn=%u\n", c->nr);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (c->state == FZ_UP || c->state == FZ_CONNECTING) {
			printf("disconnected conn=%u after=%.1fs served=%u\n", c->nr,
			       now_s() - c->t_up, c->served);
			c->state = FZ_GONE;
		}
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		if (c->state == FZ_CONNECTING) {
			printf("error %s status=%d conn=%u\n", rdma_event_str(ev->type),
			       ev->status, c->nr);
			c->state = FZ_FAILED;
		}
		break;
	}
}

static unsigned int srv_build_rep(struct fz_conn *c, struct fz_sreq *r, int status,
				  const void *pl, unsigned int plen, __u8 *out)
{
	struct krt_msg_hdr h;

	fill_hdr(&h, KRT_OP_REP, 0, plen, c->grant, be16toh(r->h.service),
		 be32toh(r->h.tag), status);
	h.req_id = r->h.req_id;
	c->grant = 0;
	memset(out, 0, KRT_MSG_BUF);
	memcpy(out, &h, pv_hdr_len);
	if (plen)
		memcpy(out + pv_hdr_len, pl, plen);
	return pv_hdr_len + plen;
}

/* a data request with an rkey other than @r's, still unanswered */
static struct fz_sreq *srv_other_data(struct fz_conn *c, struct fz_sreq *r)
{
	unsigned int i;

	for (i = 0; i < c->nr_sreqs; i++) {
		struct fz_sreq *o = &c->sreqs[i];

		if (o != r && o->used && (be16toh(o->h.flags) & (KRT_MF_READ | KRT_MF_WRITE)) &&
		    o->h.rkey != r->h.rkey)
			return o;
	}
	return NULL;
}

/* Answer @r with the crafted reply of the case. */
static void srv_craft(struct fz_conn *c, struct fz_sreq *r)
{
	__u8 out[KRT_MSG_BUF];
	struct krt_msg_hdr *h = (struct krt_msg_hdr *)out;
	unsigned int bytes, idx;
	const char *what = "";
	char buf[160];
	__u32 tag = be32toh(r->h.tag), rkey = be32toh(r->h.rkey);
	bool inv = false;

	bytes = srv_build_rep(c, r, 0, NULL, 0, out);
	switch (srv_case) {
	case V_TAG_OUT_OF_RANGE:
		idx = min_u32(be32toh(c->req.depth), c->depth);
		h->tag = htobe32((tag & 0xffff0000) | idx);
		snprintf(buf, sizeof(buf), "tag 0x%08x (slot %u of %u) for 0x%08x",
			 be32toh(h->tag), idx, idx, tag);
		what = buf;
		break;
	case V_WRONG_GENERATION:
		h->tag = htobe32(tag + 0x10000);
		snprintf(buf, sizeof(buf), "tag 0x%08x for 0x%08x", tag + 0x10000, tag);
		what = buf;
		break;
	case V_DUPLICATE_REPLY:
		what = "the same reply twice";
		break;
	case V_REPLY_WITH_FLAGS:
		h->flags = htobe16(KRT_MF_READ);
		what = "flags READ in a reply";
		break;
	case V_CREDITS_OVERFLOW:
		h->credits = htobe16(be16toh(h->credits) + 1);
		snprintf(buf, sizeof(buf), "credits %u, re-posted %u", be16toh(h->credits),
			 be16toh(h->credits) - 1);
		what = buf;
		break;
	case V_FOREIGN_INV: {
		struct fz_sreq *o = srv_other_data(c, r);

		inv = true;
		if (o) {
			snprintf(buf, sizeof(buf),
				 "SEND_WITH_INV of rkey 0x%08x of request %u (own rkey 0x%08x)",
				 be32toh(o->h.rkey), o->n, rkey);
			rkey = be32toh(o->h.rkey);
		} else {
			snprintf(buf, sizeof(buf),
				 "SEND_WITH_INV of rkey 0x%08x (own rkey + 1, no other request)",
				 rkey + 1);
			rkey++;
		}
		what = buf;
		break;
	}
	case V_REQUEST_TO_CLIENT:
		h->opcode = KRT_OP_REQ;
		what = "a request (opcode 1) to the client";
		break;
	case V_REPLY_SHORT:
		bytes = 16;
		h->len = htobe32(16);
		what = "16 bytes, len 16";
		break;
	default:
		break;
	}
	printf("sent %s conn=%u request=%u: %s\n", srv_case_names[srv_case], c->nr, r->n, what);
	post_msg(c, out, bytes, inv, rkey);
	if (srv_case == V_DUPLICATE_REPLY) {
		h->credits = 0;
		post_msg(c, out, bytes, false, 0);
	}
	c->crafted = true;
	c->t_crafted = now_s();
	srv_target_conn = c;
	r->used = false;
}

/* Reply to @r as krt's test service would. */
static void srv_reply(struct fz_conn *c, struct fz_sreq *r, int status, bool echo)
{
	__u8 out[KRT_MSG_BUF];
	unsigned int bytes;
	bool inv = be16toh(r->h.flags) & KRT_MF_INV;

	if (!c->credits)
		printf("note conn=%u: replying without a credit\n", c->nr);
	bytes = srv_build_rep(c, r, status, echo ? r->msg : NULL, echo ? r->msg_len : 0, out);
	if (!post_msg(c, out, bytes, inv, be32toh(r->h.rkey)))
		c->served++;
	r->used = false;
}

static void srv_post_data(struct fz_conn *c, struct fz_sreq *r, bool read)
{
	unsigned int slot = r - c->sreqs;
	__u8 *p = c->data + (size_t)(slot % c->depth) * c->max_io;
	__u32 len = be32toh(r->h.data_len), i, seed = 0;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge;
	int ret;

	if (r->msg_len >= sizeof(struct krt_tmsg))
		seed = be32toh(((struct krt_tmsg *)r->msg)->seed);
	if (read)	/* the client reads: we write the pattern into its buffer */
		for (i = 0; i < len; i++)
			p[i] = krt_pat(seed, i);
	sge.addr = (uintptr_t)p;
	sge.length = len;
	sge.lkey = c->dmr->lkey;
	wr.wr_id = FZ_WR_RDMA | slot;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = read ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = be64toh(r->h.addr);
	wr.wr.rdma.rkey = be32toh(r->h.rkey);
	ret = ibv_post_send(c->id->qp, &wr, &bad);
	if (ret) {
		printf("note conn=%u: RDMA post failed: %s\n", c->nr, strerror(ret));
		srv_reply(c, r, -EIO, false);
		return;
	}
	r->data_posted = true;
}

/* An RDMA READ/WRITE of ours completed: check the data, answer. */
static void srv_data_done(struct fz_conn *c, struct ibv_wc *wc)
{
	struct fz_sreq *r = &c->sreqs[FZ_WR_IDX(wc->wr_id)];
	__u32 len = be32toh(r->h.data_len), i, seed = 0, bad = 0;
	__u8 *p;

	if (!r->used || !r->data_posted)
		return;
	r->data_posted = false;
	if (wc->status != IBV_WC_SUCCESS) {
		if (srv_lent_done && r->h.req_id == srv_lent_id)
			printf("lent request data conn=%u request=%u: status=%s\n", c->nr, r->n,
			       wc_name(wc->status));
		srv_reply(c, r, -EIO, false);
		return;
	}
	if (be16toh(r->h.flags) & KRT_MF_WRITE) {
		p = c->data + (size_t)(FZ_WR_IDX(wc->wr_id) % c->depth) * c->max_io;
		if (r->msg_len >= sizeof(struct krt_tmsg))
			seed = be32toh(((struct krt_tmsg *)r->msg)->seed);
		for (i = 0; i < len; i++)
			bad += p[i] != krt_pat(seed, i);
	}
	if (srv_lent_done && r->h.req_id == srv_lent_id)
		printf("lent request data conn=%u request=%u%s: status=SUCCESS mismatches=%u\n",
		       c->nr, r->n, be16toh(r->h.flags) & KRT_MF_RESENT ? " (re-sent)" : "", bad);
	srv_reply(c, r, bad ? -EILSEQ : 0, false);
}

/* Serve @r validly: heartbeat, test service, or no such service. */
static void srv_serve(struct fz_conn *c, struct fz_sreq *r)
{
	__u16 service = be16toh(r->h.service), flags = be16toh(r->h.flags);
	__u32 dir = flags & (KRT_MF_READ | KRT_MF_WRITE);
	const struct krt_tmsg *m = (const struct krt_tmsg *)r->msg;
	__u32 op;

	if (service == KRT_SERVICE_HB) {
		srv_reply(c, r, 0, false);
		return;
	}
	if (service != KRT_SERVICE_TEST) {
		srv_reply(c, r, -EPROTONOSUPPORT, false);
		return;
	}
	if (r->msg_len < sizeof(*m)) {
		srv_reply(c, r, -EINVAL, false);
		return;
	}
	op = be32toh(m->op);
	if (op == KRT_TEST_PING && !dir) {
		srv_reply(c, r, 0, true);
	} else if (((op == KRT_TEST_READ && dir == KRT_MF_READ) ||
		    (op == KRT_TEST_WRITE && dir == KRT_MF_WRITE)) &&
		   be32toh(r->h.data_len) <= c->max_io) {
		srv_post_data(c, r, dir == KRT_MF_READ);
	} else {
		srv_reply(c, r, -EINVAL, false);
	}
}

/*
 * lend_rkey: write the rkey, address and length of the first data request
 * to file= (whole, by a rename) and hold it unanswered, until FILE.go
 * exists or hold_s seconds passed.  Return: true if @r is held.
 */
static bool srv_lend(struct fz_conn *c, struct fz_sreq *r)
{
	char tmp[1024];
	FILE *f;
	int ret;

	if (srv_lent_done)
		return false;
	srv_lent_done = true;
	srv_lent_id = r->h.req_id;
	snprintf(tmp, sizeof(tmp), "%s.tmp", opt_file);
	f = fopen(tmp, "w");
	if (!f) {
		printf("note: cannot write %s: %s\n", tmp, strerror(errno));
		return false;
	}
	ret = fprintf(f, "rkey=0x%08x addr=0x%llx len=%u flags=0x%x\n", be32toh(r->h.rkey),
		      (unsigned long long)be64toh(r->h.addr), be32toh(r->h.data_len),
		      be16toh(r->h.flags));
	if (fclose(f) || ret < 0 || rename(tmp, opt_file)) {
		printf("note: cannot write %s: %s\n", opt_file, strerror(errno));
		return false;
	}
	r->held = true;
	srv_lent = r;
	srv_lent_conn = c;
	srv_lent_until = now_s() + ov(O_HOLD_S);
	printf("lent conn=%u request=%u rkey=0x%08x addr=0x%llx len=%u: held until %s.go\n",
	       c->nr, r->n, be32toh(r->h.rkey), (unsigned long long)be64toh(r->h.addr),
	       be32toh(r->h.data_len), opt_file);
	return true;
}

/* lend_rkey: serve the held request once FILE.go exists (or hold_s ends) */
static void srv_lend_release(void)
{
	struct fz_sreq *r = srv_lent;
	struct fz_conn *c = srv_lent_conn;
	char go[1024];

	snprintf(go, sizeof(go), "%s.go", opt_file);
	if (access(go, F_OK) && now_s() < srv_lent_until)
		return;
	srv_lent = NULL;
	if (c->state != FZ_UP || c->qp_error) {
		printf("released request=%u: its connection conn=%u is gone\n", r->n, c->nr);
		return;
	}
	printf("released conn=%u request=%u: served now\n", c->nr, r->n);
	r->held = false;
	srv_serve(c, r);
}

/*
 * steal_rkey: on the first data request of a connection, the next try of
 * steal= with the rkey, address and length lend_rkey recorded in file=:
 * r an RDMA READ of it, w an RDMA WRITE of 0xa5 bytes into it, i a reply
 * to our own request by SEND_WITH_INV of that rkey.  Our own request is
 * left unanswered (a failed try takes the connection down).  Return:
 * true if @r was used for a try.
 */
static bool srv_steal(struct fz_conn *c, struct fz_sreq *r)
{
	struct ibv_send_wr wr = {}, *bad;
	__u8 out[KRT_MSG_BUF];
	unsigned long long addr;
	unsigned int rkey, len;
	struct ibv_sge sge;
	FILE *f;
	int ret;

	if (!opt_steal[srv_steals] || c == srv_steal_conn)
		return false;
	f = fopen(opt_file, "r");
	if (!f) {
		printf("note conn=%u: nothing to steal yet (%s)\n", c->nr, opt_file);
		return false;
	}
	ret = fscanf(f, "rkey=%x addr=%llx len=%u", &rkey, &addr, &len);
	fclose(f);
	if (ret != 3) {
		printf("note conn=%u: %s unreadable\n", c->nr, opt_file);
		return false;
	}
	srv_steal_what = opt_steal[srv_steals++];
	srv_steal_conn = c;
	srv_steal_req = r;
	r->held = true;
	if (srv_steal_what == 'i') {
		printf("steal conn=%u request=%u: SEND_WITH_INV of the lent rkey 0x%08x",
		       c->nr, r->n, rkey);
		printf(" (own rkey 0x%08x)\n", be32toh(r->h.rkey));
		ret = srv_build_rep(c, r, 0, NULL, 0, out);
		if (!post_msg(c, out, ret, true, rkey))
			srv_steal_wr = FZ_WR_SEND | ((c->send_next - 1) % c->nr_send);
		r->used = false;
		return true;
	}
	if (len > c->data_size)
		len = c->data_size;
	memset(c->data, srv_steal_what == 'w' ? 0xa5 : 0, len);
	sge.addr = (uintptr_t)c->data;
	sge.length = len;
	sge.lkey = c->dmr->lkey;
	wr.wr_id = FZ_WR_STEAL;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = srv_steal_what == 'r' ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	printf("steal conn=%u request=%u: RDMA %s of %u bytes at 0x%llx with the lent rkey 0x%08x",
	       c->nr, r->n, srv_steal_what == 'r' ? "READ" : "WRITE", len, addr, rkey);
	printf(" (own rkey 0x%08x)\n", be32toh(r->h.rkey));
	ret = ibv_post_send(c->id->qp, &wr, &bad);
	if (ret) {
		printf("stolen %s: post failed: %s\n", srv_steal_what == 'r' ? "read" : "write",
		       strerror(ret));
		return true;
	}
	srv_steal_wr = FZ_WR_STEAL;
	return true;
}

/* steal_rkey: what the device said of a try; a success is served on */
static void srv_steal_done(struct fz_conn *c, struct ibv_wc *wc)
{
	char what = srv_steal_what;
	struct fz_sreq *r = srv_steal_req;

	srv_steal_wr = 0;
	printf("stolen %s: status=%s conn=%u\n",
	       what == 'r' ? "read" : what == 'w' ? "write" : "inv", wc_name(wc->status), c->nr);
	if (wc->status == IBV_WC_SUCCESS && what == 'r')
		printf("stolen read: first bytes %02x %02x %02x %02x\n", c->data[0], c->data[1],
		       c->data[2], c->data[3]);
	if (wc->status == IBV_WC_SUCCESS && what != 'i' && r->used) {
		r->held = false;
		srv_serve(c, r);
	}
}

static bool srv_eligible(struct fz_sreq *r)
{
	__u16 flags = be16toh(r->h.flags);

	if (srv_case == V_FOREIGN_INV)
		return (flags & (KRT_MF_READ | KRT_MF_WRITE)) && (flags & KRT_MF_INV);
	return be16toh(r->h.service) != KRT_SERVICE_HB;
}

static void srv_request(struct fz_conn *c, struct ibv_wc *wc)
{
	unsigned int i = FZ_WR_IDX(wc->wr_id), j;
	const struct krt_msg_hdr *h = recv_buf(c, i);
	struct fz_sreq *r = NULL;
	const char *bad;

	bad = check_msg(c, h, wc->byte_len, KRT_OP_REQ);
	for (j = 0; j < c->nr_sreqs && !r; j++)
		if (!c->sreqs[j].used)
			r = &c->sreqs[j];
	c->nr_reqs++;
	printf("request conn=%u n=%u tag=0x%08x service=%u flags=0x%x len=%u bytes=%u",
	       c->nr, c->nr_reqs, be32toh(h->tag), be16toh(h->service), be16toh(h->flags),
	       be32toh(h->len), wc->byte_len);
	printf(" data_len=%u rkey=0x%08x credits=%u req_id=0x%llx%s%s\n", be32toh(h->data_len),
	       be32toh(h->rkey), be16toh(h->credits),
	       pv_ver >= 2 ? (unsigned long long)be64toh(h->req_id) : 0ULL,
	       bad ? " krt-sent-malformed: " : "", bad ? bad : "");
	c->credits += be16toh(h->credits);
	if (c->credits > c->max_credits)
		c->credits = c->max_credits;
	if (!r) {
		printf("note conn=%u: more requests than buffers, dropped\n", c->nr);
		return;
	}
	memset(r, 0, sizeof(*r));
	r->used = true;
	r->n = c->nr_reqs;
	memcpy(&r->h, h, wc->byte_len < pv_hdr_len ? wc->byte_len : pv_hdr_len);
	r->msg_len = wc->byte_len > pv_hdr_len ? wc->byte_len - pv_hdr_len : 0;
	memcpy(r->msg, (const __u8 *)h + pv_hdr_len, r->msg_len);
	/* copied out: the buffer takes the next message, as krt does */
	if (post_recv(c, i))
		printf("note conn=%u: cannot re-post a receive\n", c->nr);
	else
		c->grant++;
	if (srv_case == V_FOREIGN_INV && srv_held && srv_held != r &&
	    srv_held >= c->sreqs && srv_held < c->sreqs + c->nr_sreqs &&
	    (be16toh(r->h.flags) & (KRT_MF_READ | KRT_MF_WRITE))) {
		/* the second data request in flight: its rkey is the foreign one */
		r->held = true;
		srv_craft(c, srv_held);
		srv_held = NULL;
		return;
	}
	if (srv_case == V_LEND_RKEY && srv_is_data(r) && srv_lend(c, r))
		return;
	if (srv_case == V_STEAL_RKEY && srv_is_data(r) && srv_steal(c, r))
		return;
	if (!c->crafted && !srv_no_craft() && srv_eligible(r) &&
	    ++c->nr_eligible == ov(O_TARGET)) {
		if (srv_case == V_FOREIGN_INV && !srv_other_data(c, r)) {
			srv_held = r;
			r->held = true;
			srv_hold_until = now_s() + 2;
			return;
		}
		srv_craft(c, r);
		return;
	}
	if (c->crafted && srv_case == V_FOREIGN_INV &&
	    (be16toh(r->h.flags) & (KRT_MF_READ | KRT_MF_WRITE)))
		return;		/* the connection is going: leave it unanswered */
	srv_serve(c, r);
}

static void srv_wc(struct fz_conn *c, struct ibv_wc *wc)
{
	if (srv_steal_wr && c == srv_steal_conn && wc->wr_id == srv_steal_wr) {
		srv_steal_done(c, wc);
		return;
	}
	if (FZ_WR_KIND(wc->wr_id) == FZ_WR_RDMA) {
		srv_data_done(c, wc);
		return;
	}
	if (FZ_WR_KIND(wc->wr_id) != FZ_WR_RECV || wc->status != IBV_WC_SUCCESS)
		return;
	srv_request(c, wc);
}

static int do_server(int argc, char **argv)
{
	struct sockaddr_storage ss;
	enum fz_srv_case k;
	double end, t_end = 0;
	bool done = false;
	unsigned int i;
	int j;

	if (argc < 4)
		fz_usage();
	for (k = 0; k < NR_SRV_CASES; k++)
		if (!strcmp(argv[3], srv_case_names[k]))
			break;
	if (k == NR_SRV_CASES) {
		fprintf(stderr, "krt_fuzz: unknown server case '%s'\n", argv[3]);
		fz_usage();
	}
	srv_case = k;
	opts[O_TIMEOUT].val = 120;
	for (j = 4; j < argc; j++)
		parse_opt(argv[j]);
	if ((k == V_LEND_RKEY || k == V_STEAL_RKEY) && !opt_file) {
		fprintf(stderr, "krt_fuzz: %s needs file=PATH\n", srv_case_names[k]);
		fz_usage();
	}
	settle_opts();
	if (parse_addr(opt_addr ? opt_addr : "0.0.0.0", atoi(argv[2]), &ss))
		return 1;
	fz_ch = rdma_create_event_channel();
	if (!fz_ch || rdma_create_id(fz_ch, &srv_lid, NULL, RDMA_PS_TCP)) {
		perror("krt_fuzz: rdma_cm");
		return 1;
	}
	fcntl(fz_ch->fd, F_SETFL, fcntl(fz_ch->fd, F_GETFL) | O_NONBLOCK);
	if (rdma_bind_addr(srv_lid, (struct sockaddr *)&ss) || rdma_listen(srv_lid, 16)) {
		perror("krt_fuzz: listen");
		return 1;
	}
	mode_event = srv_event;
	mode_wc = srv_wc;
	printf("listening addr=%s port=%s case=%s\n", opt_addr ? opt_addr : "any", argv[2],
	       srv_case_names[srv_case]);
	end = now_s() + ov(O_TIMEOUT);
	while (!fz_stop && now_s() < end && !done) {
		pump(100);
		if (srv_lent)
			srv_lend_release();
		if (srv_held && now_s() > srv_hold_until) {
			struct fz_conn *c = NULL;

			for (i = 0; i < fz_nconns; i++)
				if (srv_held >= fz_conns[i]->sreqs &&
				    srv_held < fz_conns[i]->sreqs + fz_conns[i]->nr_sreqs)
					c = fz_conns[i];
			if (c)
				srv_craft(c, srv_held);
			srv_held = NULL;
		}
		if (srv_target_conn && !t_end)
			t_end = srv_target_conn->t_crafted + ov(O_WAIT);
		if (srv_target_conn && (srv_target_conn->state != FZ_UP ||
					srv_target_conn->qp_error || now_s() > t_end))
			done = true;
	}
	if (!srv_target_conn) {
		unsigned int served = 0, up = 0;

		for (i = 0; i < fz_nconns; i++) {
			served += fz_conns[i]->served;
			up += fz_conns[i]->state == FZ_UP && !fz_conns[i]->qp_error;
		}
		printf("result %s %s served=%u connections=%u up=%u\n", srv_case_names[srv_case],
		       !srv_no_craft() ? "untriggered" : up ? "alive" : "reset", served,
		       fz_nconns, up);
	} else if (srv_target_conn->state != FZ_UP || srv_target_conn->qp_error) {
		printf("result %s reset after=%.1fs\n", srv_case_names[srv_case],
		       now_s() - srv_target_conn->t_crafted);
	} else {
		printf("result %s alive for=%.0fs\n", srv_case_names[srv_case], ov(O_WAIT) * 1.0);
	}
	for (i = 0; i < fz_nconns; i++) {
		if (fz_conns[i]->state == FZ_UP)
			rdma_disconnect(fz_conns[i]->id);
		conn_release(fz_conns[i]);
	}
	rdma_destroy_id(srv_lid);
	rdma_destroy_event_channel(fz_ch);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (argc < 2)
		fz_usage();
	if (!strcmp(argv[1], "connect"))
		return do_connect(argc, argv);
	if (!strcmp(argv[1], "send"))
		return do_send(argc, argv);
	if (!strcmp(argv[1], "server"))
		return do_server(argc, argv);
	fz_usage();
	return 2;
}
