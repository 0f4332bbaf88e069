/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krt: wire format of data-path messages (SEND/RECV).
 *
 * DOC: Message header
 *
 * Every message starts with &struct krt_msg_hdr (48 bytes, big endian),
 * followed by up to %KRT_MAX_MSG bytes of payload; a message never exceeds
 * one receive buffer (%KRT_MSG_BUF).  Requests (client to server) carry
 * the service id, a tag the reply echoes, and for data the address, rkey
 * and length of the client's registered buffer; replies carry the tag and
 * the service's status.  Both carry the receive credits their sender
 * granted since its previous message.  A request's id stays the same when
 * it is re-sent on another connection (%KRT_MF_RESENT).  Service 0 is the
 * heartbeat: a request without data that the server's krt answers at once.
 *
 * Inline data: a client write whose message and data together fit in
 * what the server offered when it accepted (``inline_data`` of
 * &struct krt_cm_rep, at most %KRT_MAX_MSG) may carry its data in the
 * request itself, after the message (%KRT_MF_INLINE with %KRT_MF_WRITE;
 * ``data_len`` counts the data bytes, ``addr`` and ``rkey`` are 0), as nvme-rdma
 * sends small writes: no MR on the client, no RDMA READ by the server.
 */
#ifndef _KRT_WIRE_H
#define _KRT_WIRE_H

#include <linux/build_bug.h>
#include <linux/types.h>

#define KRT_MSG_MAGIC	0x4b52544d	/* "KRTM" */
#define KRT_MSG_VERSION	2
#define KRT_MSG_BUF	4096

enum krt_msg_op {
	KRT_OP_REQ = 1,		/* request, client to server */
	KRT_OP_REP = 2,		/* reply, server to client */
};

/* header flags (requests only) */
#define KRT_MF_READ	0x1	/* server RDMA-WRITEs into addr/rkey */
#define KRT_MF_WRITE	0x2	/* server RDMA-READs from addr/rkey */
#define KRT_MF_INV	0x4	/* reply with SEND_WITH_INV of rkey */
#define KRT_MF_RESENT	0x8	/* sent before on a connection that failed */
#define KRT_MF_INLINE	0x10	/* write data follows the message (KRT_MF_WRITE) */
#define KRT_MF_ALL	(KRT_MF_READ | KRT_MF_WRITE | KRT_MF_INV | KRT_MF_RESENT | \
			 KRT_MF_INLINE)

/* Service 0 is krt's own heartbeat: answered by krt, status 0, no data. */
#define KRT_SERVICE_HB	0

/**
 * struct krt_msg_hdr - header of every data-path message
 * @magic: %KRT_MSG_MAGIC
 * @version: %KRT_MSG_VERSION
 * @opcode: enum krt_msg_op
 * @flags: KRT_MF_* (requests), 0 in replies
 * @len: bytes of the message, header included: equals the bytes received
 * @credits: receive buffers the sender re-posted since its last message
 * @service: service id (requests; echoed in replies)
 * @tag: request tag: slot index (low 16 bits), generation (high 16 bits)
 * @status: reply: the service's status, 0 or -errno (s32)
 * @addr: data requests: address of the client's MR (0 for inline data)
 * @rkey: data requests: its rkey (0 for inline data)
 * @data_len: data requests: bytes, at most the negotiated max IO size;
 *	with %KRT_MF_INLINE the bytes of data at the end of the message
 * @req_id: requests: the client's request id, echoed in replies
 */
struct krt_msg_hdr {
	__be32	magic;
	u8	version;
	u8	opcode;
	__be16	flags;
	__be32	len;
	__be16	credits;
	__be16	service;
	__be32	tag;
	__be32	status;
	__be64	addr;
	__be32	rkey;
	__be32	data_len;
	__be64	req_id;
};

static_assert(sizeof(struct krt_msg_hdr) == 48);
static_assert(KRT_MSG_BUF - sizeof(struct krt_msg_hdr) == KRT_MAX_MSG);

#endif /* _KRT_WIRE_H */
