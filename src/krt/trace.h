/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krt: tracepoints (TRACE_SYSTEM krt, /sys/kernel/tracing/events/krt/).
 *
 * DOC: Tracepoints
 *
 * What an operator or a developer follows to see why a request was slow
 * or failed: connection and peer state changes with their reason, the
 * rdma_cm events krt handles, scheduled reconnects, each request from
 * submission through its sends to its completion (by id, with its
 * latency), re-sends after a failover, waits for a credit or send queue
 * room, missed heartbeats, malformed messages, failed work completions and
 * registrations.  Documentation/tracing.rst lists the fields.
 *
 * When an event is off its call site costs a static branch: every value
 * an event derives (a latency, a delay in ms, a name) is computed in its
 * TP_fast_assign(), which runs only when the event is on.  Peers are
 * named, connections are (peer, index); no kernel address is recorded.
 * The events are defined in trace.c (CREATE_TRACE_POINTS).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM krt

#if !defined(_KRT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KRT_TRACE_H

#include <linux/tracepoint.h>
#include <linux/in6.h>
#include "krt.h"

TRACE_DEFINE_ENUM(KRT_CONN_IDLE);
TRACE_DEFINE_ENUM(KRT_CONN_CONNECTING);
TRACE_DEFINE_ENUM(KRT_CONN_ACTIVE);
TRACE_DEFINE_ENUM(KRT_CONN_CLOSING);
TRACE_DEFINE_ENUM(KRT_CONN_ERROR);
TRACE_DEFINE_ENUM(KRT_CONN_RECONNECTING);

#define krt_show_conn_state(x)						\
	__print_symbolic(x,						\
			 { KRT_CONN_IDLE,		"idle" },		\
			 { KRT_CONN_CONNECTING,		"connecting" },		\
			 { KRT_CONN_ACTIVE,		"active" },		\
			 { KRT_CONN_CLOSING,		"closing" },		\
			 { KRT_CONN_ERROR,		"error" },		\
			 { KRT_CONN_RECONNECTING,	"reconnecting" })

TRACE_DEFINE_ENUM(KRT_PEER_CONNECTING);
TRACE_DEFINE_ENUM(KRT_PEER_ACTIVE);
TRACE_DEFINE_ENUM(KRT_PEER_DEGRADED);
TRACE_DEFINE_ENUM(KRT_PEER_DOWN);
TRACE_DEFINE_ENUM(KRT_PEER_RECONNECTING);

#define krt_show_peer_state(x)						\
	__print_symbolic(x,						\
			 { 0,				"none" },		\
			 { KRT_PEER_CONNECTING,		"connecting" },		\
			 { KRT_PEER_ACTIVE,		"active" },		\
			 { KRT_PEER_DEGRADED,		"degraded" },		\
			 { KRT_PEER_DOWN,		"down" },		\
			 { KRT_PEER_RECONNECTING,	"reconnecting" })

TRACE_DEFINE_ENUM(KRT_DATA_NONE);
TRACE_DEFINE_ENUM(KRT_DATA_READ);
TRACE_DEFINE_ENUM(KRT_DATA_WRITE);

#define krt_show_kind(x)						\
	__print_symbolic(x,						\
			 { KRT_DATA_NONE,		"send" },		\
			 { KRT_DATA_READ,		"read" },		\
			 { KRT_DATA_WRITE,		"write" })

TRACE_DEFINE_ENUM(RDMA_CM_EVENT_ADDR_RESOLVED);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_ADDR_ERROR);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_ROUTE_RESOLVED);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_ROUTE_ERROR);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_CONNECT_REQUEST);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_CONNECT_RESPONSE);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_CONNECT_ERROR);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_UNREACHABLE);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_REJECTED);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_ESTABLISHED);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_DISCONNECTED);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_DEVICE_REMOVAL);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_MULTICAST_JOIN);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_MULTICAST_ERROR);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_ADDR_CHANGE);
TRACE_DEFINE_ENUM(RDMA_CM_EVENT_TIMEWAIT_EXIT);

#define krt_show_cm_event(x)						\
	__print_symbolic(x,						\
			 { RDMA_CM_EVENT_ADDR_RESOLVED,	"ADDR_RESOLVED" },	\
			 { RDMA_CM_EVENT_ADDR_ERROR,	"ADDR_ERROR" },		\
			 { RDMA_CM_EVENT_ROUTE_RESOLVED, "ROUTE_RESOLVED" },	\
			 { RDMA_CM_EVENT_ROUTE_ERROR,	"ROUTE_ERROR" },	\
			 { RDMA_CM_EVENT_CONNECT_REQUEST, "CONNECT_REQUEST" },	\
			 { RDMA_CM_EVENT_CONNECT_RESPONSE, "CONNECT_RESPONSE" }, \
			 { RDMA_CM_EVENT_CONNECT_ERROR,	"CONNECT_ERROR" },	\
			 { RDMA_CM_EVENT_UNREACHABLE,	"UNREACHABLE" },	\
			 { RDMA_CM_EVENT_REJECTED,	"REJECTED" },		\
			 { RDMA_CM_EVENT_ESTABLISHED,	"ESTABLISHED" },	\
			 { RDMA_CM_EVENT_DISCONNECTED,	"DISCONNECTED" },	\
			 { RDMA_CM_EVENT_DEVICE_REMOVAL, "DEVICE_REMOVAL" },	\
			 { RDMA_CM_EVENT_MULTICAST_JOIN, "MULTICAST_JOIN" },	\
			 { RDMA_CM_EVENT_MULTICAST_ERROR, "MULTICAST_ERROR" },	\
			 { RDMA_CM_EVENT_ADDR_CHANGE,	"ADDR_CHANGE" },	\
			 { RDMA_CM_EVENT_TIMEWAIT_EXIT,	"TIMEWAIT_EXIT" })

/* ---- connections and peers ---- */

TRACE_EVENT(krt_conn_state,
	    TP_PROTO(const struct krt_conn *conn, u32 old, u32 state,
		     const char *reason),
	    TP_ARGS(conn, old, state, reason),
	    TP_STRUCT__entry(__string(peer, conn->peer->name)
			     __field(u32, conn)
			     __field(bool, inbound)
			     __field(u32, old)
			     __field(u32, state)
			     __field(u32, attempt)
			     __string(reason, reason ?: "")),
	    TP_fast_assign(__assign_str(peer, conn->peer->name);
			   __entry->conn = conn->index;
			   __entry->inbound = conn->inbound;
			   __entry->old = old;
			   __entry->state = state;
			   __entry->attempt = conn->attempt;
			   __assign_str(reason, reason ?: "");),
	    TP_printk("peer=%s conn=%u %s %s -> %s attempt=%u reason=%s",
		      __get_str(peer), __entry->conn,
		      __entry->inbound ? "inbound" : "outbound",
		      krt_show_conn_state(__entry->old),
		      krt_show_conn_state(__entry->state), __entry->attempt,
		      __get_str(reason))
);

TRACE_EVENT(krt_peer_state,
	    TP_PROTO(const struct krt_peer *peer, u32 old, u32 state, u32 up),
	    TP_ARGS(peer, old, state, up),
	    TP_STRUCT__entry(__string(peer, peer->name)
			     __field(u32, old)
			     __field(u32, state)
			     __field(u32, up)
			     __field(u32, conns)
			     __string(last_reason, peer->reason)),
	    TP_fast_assign(__assign_str(peer, peer->name);
			   __entry->old = old;
			   __entry->state = state;
			   __entry->up = up;
			   __entry->conns = peer->nr_conns;
			   __assign_str(last_reason, peer->reason);),
	    TP_printk("peer=%s %s -> %s up=%u/%u last_reason=%s",
		      __get_str(peer), krt_show_peer_state(__entry->old),
		      krt_show_peer_state(__entry->state), __entry->up,
		      __entry->conns, __get_str(last_reason))
);

/* An outbound connection's next attempt: @delay in jiffies; krt_pool_lock held. */
TRACE_EVENT(krt_reconnect,
	    TP_PROTO(const struct krt_conn *conn, unsigned long delay),
	    TP_ARGS(conn, delay),
	    TP_STRUCT__entry(__string(peer, conn->peer->name)
			     __field(u32, conn)
			     __field(u32, attempt)
			     __field(u32, delay_ms)
			     __field(u32, reconnect_ms)
			     __field(u32, reconnect_max_ms)),
	    TP_fast_assign(__assign_str(peer, conn->peer->name);
			   __entry->conn = conn->index;
			   __entry->attempt = conn->attempt + 1;
			   __entry->delay_ms = jiffies_to_msecs(delay);
			   __entry->reconnect_ms = conn->peer->prm.reconnect_ms;
			   __entry->reconnect_max_ms = conn->peer->prm.reconnect_max_ms;),
	    TP_printk("peer=%s conn=%u attempt=%u delay_ms=%u reconnect_ms=%u reconnect_max_ms=%u",
		      __get_str(peer), __entry->conn, __entry->attempt,
		      __entry->delay_ms, __entry->reconnect_ms, __entry->reconnect_max_ms)
);

TRACE_EVENT(krt_qp_event,
	    TP_PROTO(const struct krt_conn *conn, enum ib_event_type event),
	    TP_ARGS(conn, event),
	    TP_STRUCT__entry(__string(peer, conn->peer->name)
			     __field(u32, conn)
			     __field(u32, event)
			     __string(name, ib_event_msg(event))),
	    TP_fast_assign(__assign_str(peer, conn->peer->name);
			   __entry->conn = conn->index;
			   __entry->event = event;
			   __assign_str(name, ib_event_msg(event));),
	    TP_printk("peer=%s conn=%u event=%s (%u)", __get_str(peer),
		      __entry->conn, __get_str(name), __entry->event)
);

/* ---- rdma_cm ---- */

TRACE_EVENT(krt_cm_event,
	    TP_PROTO(const struct krt_conn *conn, const struct rdma_cm_event *ev),
	    TP_ARGS(conn, ev),
	    TP_STRUCT__entry(__string(peer, conn->peer->name)
			     __field(u32, conn)
			     __field(bool, inbound)
			     __field(u32, event)
			     __field(int, status)),
	    TP_fast_assign(__assign_str(peer, conn->peer->name);
			   __entry->conn = conn->index;
			   __entry->inbound = conn->inbound;
			   __entry->event = ev->event;
			   __entry->status = ev->status;),
	    TP_printk("peer=%s conn=%u %s event=%s status=%d",
		      __get_str(peer), __entry->conn,
		      __entry->inbound ? "inbound" : "outbound",
		      krt_show_cm_event(__entry->event), __entry->status)
);

/* An event of a listener's id: @id is the listener's, or the new one's. */
TRACE_EVENT(krt_cm_listen_event,
	    TP_PROTO(const struct rdma_cm_id *id, const struct rdma_cm_event *ev),
	    TP_ARGS(id, ev),
	    TP_STRUCT__entry(__array(u8, laddr, sizeof(struct sockaddr_in6))
			     __array(u8, raddr, sizeof(struct sockaddr_in6))
			     __field(u32, event)
			     __field(int, status)),
	    TP_fast_assign(memcpy(__entry->laddr, &id->route.addr.src_addr,
				  sizeof(struct sockaddr_in6));
			   memcpy(__entry->raddr, &id->route.addr.dst_addr,
				  sizeof(struct sockaddr_in6));
			   __entry->event = ev->event;
			   __entry->status = ev->status;),
	    TP_printk("listener=%pISpc from=%pISpc event=%s status=%d",
		      __entry->laddr, __entry->raddr,
		      krt_show_cm_event(__entry->event), __entry->status)
);

/* The passive side refused a connect request. */
TRACE_EVENT(krt_cm_reject,
	    TP_PROTO(const struct rdma_cm_id *id, u32 reason),
	    TP_ARGS(id, reason),
	    TP_STRUCT__entry(__array(u8, raddr, sizeof(struct sockaddr_in6))
			     __field(u32, reason)
			     __string(name, krt_reject_name(reason))),
	    TP_fast_assign(memcpy(__entry->raddr, &id->route.addr.dst_addr,
				  sizeof(struct sockaddr_in6));
			   __entry->reason = reason;
			   __assign_str(name, krt_reject_name(reason));),
	    TP_printk("from=%pISpc reason=%u %s", __entry->raddr,
		      __entry->reason, __get_str(name))
);

/* ---- requests (client side) ---- */

TRACE_EVENT(krt_req_submit,
	    TP_PROTO(const struct krt_peer *peer, const struct krt_req *req),
	    TP_ARGS(peer, req),
	    TP_STRUCT__entry(__string(peer, peer->name)
			     __field(u64, id)
			     __field(u16, service)
			     __field(u16, flags)
			     __field(u32, kind)
			     __field(u32, msg_len)
			     __field(u32, data_len)
			     __field(u32, timeout_ms)),
	    TP_fast_assign(__assign_str(peer, peer->name);
			   __entry->id = req->id;
			   __entry->service = req->service;
			   __entry->flags = req->flags;
			   __entry->kind = req->dir;
			   __entry->msg_len = req->msg_len;
			   __entry->data_len = req->data_len;
			   __entry->timeout_ms = req->timeout_ms;),
	    TP_printk("peer=%s id=%llu service=%u %s msg_len=%u data_len=%u flags=%#x timeout_ms=%u",
		      __get_str(peer), __entry->id, __entry->service,
		      krt_show_kind(__entry->kind), __entry->msg_len,
		      __entry->data_len, __entry->flags, __entry->timeout_ms)
);

/* krt_submit() refused it: no done event follows. */
TRACE_EVENT(krt_req_refused,
	    TP_PROTO(const struct krt_peer *peer, const struct krt_req *req,
		     int status),
	    TP_ARGS(peer, req, status),
	    TP_STRUCT__entry(__string(peer, peer->name)
			     __field(u64, id)
			     __field(int, status)),
	    TP_fast_assign(__assign_str(peer, peer->name);
			   __entry->id = req->id;
			   __entry->status = status;),
	    TP_printk("peer=%s id=%llu status=%d", __get_str(peer), __entry->id,
		      __entry->status)
);

/*
 * Posted on a connection (heartbeats, @hb, are not traced).  Called under
 * the queue's lock, so @req cannot complete meanwhile.
 */
TRACE_EVENT_CONDITION(krt_req_send,
		      TP_PROTO(const struct krt_conn *conn, const struct krt_req *req,
			       bool hb, u32 credits),
		      TP_ARGS(conn, req, hb, credits),
		      TP_CONDITION(!hb),
		      TP_STRUCT__entry(__string(peer, conn->peer->name)
				       __field(u32, conn)
				       __field(u64, id)
				       __field(u32, kind)
				       __field(u32, msg_len)
				       __field(u32, data_len)
				       __field(u32, sends)
				       __field(u32, credits_left)),
		      TP_fast_assign(__assign_str(peer, conn->peer->name);
				     __entry->conn = conn->index;
				     __entry->id = req->id;
				     __entry->kind = req->dir;
				     __entry->msg_len = req->msg_len;
				     __entry->data_len = req->data_len;
				     __entry->sends = req->krt_sends;
				     __entry->credits_left = credits;),
		      TP_printk("peer=%s conn=%u id=%llu %s msg_len=%u data_len=%u sends=%u credits_left=%u",
				__get_str(peer), __entry->conn, __entry->id,
				krt_show_kind(__entry->kind), __entry->msg_len,
				__entry->data_len, __entry->sends, __entry->credits_left)
);

/*
 * Sent again after its connection (@req->krt_from) failed; traced where
 * krt_req_send is, for every send but the first.
 */
TRACE_EVENT_CONDITION(krt_req_resend,
		      TP_PROTO(const struct krt_conn *conn, const struct krt_req *req),
		      TP_ARGS(conn, req),
		      TP_CONDITION(req->krt_sends > 1),
		      TP_STRUCT__entry(__string(peer, conn->peer->name)
				       __field(u64, id)
				       __field(u32, from_conn)
				       __field(u32, to_conn)
				       __field(u32, sends)),
		      TP_fast_assign(__assign_str(peer, conn->peer->name);
				     __entry->id = req->id;
				     __entry->from_conn = req->krt_from;
				     __entry->to_conn = conn->index;
				     __entry->sends = req->krt_sends;),
		      TP_printk("peer=%s id=%llu from_conn=%u to_conn=%u sends=%u",
				__get_str(peer), __entry->id, __entry->from_conn, __entry->to_conn,
				__entry->sends)
);

/*
 * The request completes: @conn is the connection that answered, or NULL
 * (failed while waiting for one, or refused a re-send).  Its latency is
 * taken here, only when the event is on.
 */
TRACE_EVENT(krt_req_done,
	    TP_PROTO(const struct krt_peer *peer, const struct krt_conn *conn,
		     const struct krt_req *req, int status),
	    TP_ARGS(peer, conn, req, status),
	    TP_STRUCT__entry(__string(peer, peer->name)
			     __field(int, conn)
			     __field(u64, id)
			     __field(u32, kind)
			     __field(u32, data_len)
			     __field(int, status)
			     __field(int, rsp_status)
			     __field(u32, sends)
			     __field(u64, latency_us)),
	    TP_fast_assign(__assign_str(peer, peer->name);
			   __entry->conn = conn ? (int)conn->index : -1;
			   __entry->id = req->id;
			   __entry->kind = req->dir;
			   __entry->data_len = req->data_len;
			   __entry->status = status;
			   __entry->rsp_status = status ? 0 : req->rsp_status;
			   __entry->sends = req->krt_sends;
			   __entry->latency_us = div_u64(krt_ns_since(req->krt_start), 1000);),
	    TP_printk("peer=%s conn=%d id=%llu %s data_len=%u status=%d rsp_status=%d sends=%u latency_us=%llu",
		      __get_str(peer), __entry->conn, __entry->id,
		      krt_show_kind(__entry->kind), __entry->data_len,
		      __entry->status, __entry->rsp_status, __entry->sends,
		      __entry->latency_us)
);

/* ---- queue: waits and errors ---- */

/* @id: the waiting request's id (a server's: the client's request id). */
DECLARE_EVENT_CLASS(krt_wait_class,
		    TP_PROTO(const struct krt_conn *conn, u64 id, u32 credits,
			     u32 sq_avail, u32 waiting),
		    TP_ARGS(conn, id, credits, sq_avail, waiting),
		    TP_STRUCT__entry(__string(peer, conn->peer->name)
				     __field(u32, conn)
				     __field(bool, server)
				     __field(u64, id)
				     __field(u32, credits)
				     __field(u32, sq_avail)
				     __field(u32, waiting)),
		    TP_fast_assign(__assign_str(peer, conn->peer->name);
				   __entry->conn = conn->index;
				   __entry->server = conn->inbound;
				   __entry->id = id;
				   __entry->credits = credits;
				   __entry->sq_avail = sq_avail;
				   __entry->waiting = waiting;),
		    TP_printk("peer=%s conn=%u %s id=%llu credits=%u sq_avail=%u waiting=%u",
			      __get_str(peer), __entry->conn,
			      __entry->server ? "server" : "client", __entry->id,
			      __entry->credits, __entry->sq_avail, __entry->waiting)
);

DEFINE_EVENT(krt_wait_class, krt_credit_wait,
	     TP_PROTO(const struct krt_conn *conn, u64 id, u32 credits,
		      u32 sq_avail, u32 waiting),
	     TP_ARGS(conn, id, credits, sq_avail, waiting));

DEFINE_EVENT(krt_wait_class, krt_sq_wait,
	     TP_PROTO(const struct krt_conn *conn, u64 id, u32 credits,
		      u32 sq_avail, u32 waiting),
	     TP_ARGS(conn, id, credits, sq_avail, waiting));

/* Nothing received for @idle jiffies, @bound allowed: the reset follows. */
TRACE_EVENT(krt_hb_miss,
	    TP_PROTO(const struct krt_conn *conn, unsigned long idle,
		     unsigned long bound),
	    TP_ARGS(conn, idle, bound),
	    TP_STRUCT__entry(__string(peer, conn->peer->name)
			     __field(u32, conn)
			     __field(bool, server)
			     __field(u32, idle_ms)
			     __field(u32, bound_ms)),
	    TP_fast_assign(__assign_str(peer, conn->peer->name);
			   __entry->conn = conn->index;
			   __entry->server = conn->inbound;
			   __entry->idle_ms = jiffies_to_msecs(idle);
			   __entry->bound_ms = jiffies_to_msecs(bound);),
	    TP_printk("peer=%s conn=%u %s idle_ms=%u bound_ms=%u",
		      __get_str(peer), __entry->conn,
		      __entry->server ? "server" : "client", __entry->idle_ms,
		      __entry->bound_ms)
);

TRACE_EVENT(krt_msg_malformed,
	    TP_PROTO(const struct krt_conn *conn, const char *reason),
	    TP_ARGS(conn, reason),
	    TP_STRUCT__entry(__string(peer, conn->peer->name)
			     __field(u32, conn)
			     __field(bool, server)
			     __string(reason, reason)),
	    TP_fast_assign(__assign_str(peer, conn->peer->name);
			   __entry->conn = conn->index;
			   __entry->server = conn->inbound;
			   __assign_str(reason, reason);),
	    TP_printk("peer=%s conn=%u %s reason=%s", __get_str(peer),
		      __entry->conn, __entry->server ? "server" : "client",
		      __get_str(reason))
);

/* A work request failed (flushes are not traced): @what was posted. */
TRACE_EVENT(krt_wc_error,
	    TP_PROTO(const struct krt_conn *conn, const char *what,
		     enum ib_wc_status status),
	    TP_ARGS(conn, what, status),
	    TP_STRUCT__entry(__string(peer, conn->peer->name)
			     __field(u32, conn)
			     __string(wr, what)
			     __field(u32, status)
			     __string(name, ib_wc_status_msg(status))),
	    TP_fast_assign(__assign_str(peer, conn->peer->name);
			   __entry->conn = conn->index;
			   __assign_str(wr, what);
			   __entry->status = status;
			   __assign_str(name, ib_wc_status_msg(status));),
	    TP_printk("peer=%s conn=%u wr=%s status=%s (%u)", __get_str(peer),
		      __entry->conn, __get_str(wr), __get_str(name),
		      __entry->status)
);

/* A buffer could not be mapped or registered: the request's error. */
TRACE_EVENT(krt_mr_error,
	    TP_PROTO(const struct krt_conn *conn, u64 id, u32 data_len, int err),
	    TP_ARGS(conn, id, data_len, err),
	    TP_STRUCT__entry(__string(peer, conn->peer->name)
			     __field(u32, conn)
			     __field(bool, server)
			     __field(u64, id)
			     __field(u32, data_len)
			     __field(int, err)),
	    TP_fast_assign(__assign_str(peer, conn->peer->name);
			   __entry->conn = conn->index;
			   __entry->server = conn->inbound;
			   __entry->id = id;
			   __entry->data_len = data_len;
			   __entry->err = err;),
	    TP_printk("peer=%s conn=%u %s id=%llu data_len=%u err=%d",
		      __get_str(peer), __entry->conn,
		      __entry->server ? "server" : "client", __entry->id,
		      __entry->data_len, __entry->err)
);

#endif /* _KRT_TRACE_H */

/* out of tree: trace.c is built with -I$(src), where this file is */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace

#include <trace/define_trace.h>
