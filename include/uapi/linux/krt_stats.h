/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * krt: the table of counters of KRT_CMD_STATS_GET, included by
 * <linux/krt.h> with KRT_STAT(SUFFIX, key) defined.  No include guard:
 * each user expands it its own way (uapi enum, the module's debugfs keys,
 * krtctl's text and JSON keys).  Append only: the attribute numbers follow
 * the order.
 */
KRT_STAT(REQS_SEND, reqs_send)		/* requests without data buffer */
KRT_STAT(REQS_READ, reqs_read)		/* requests reading into our pages */
KRT_STAT(REQS_WRITE, reqs_write)	/* requests writing from our pages */
KRT_STAT(MSG_BYTES_OUT, msg_bytes_out)	/* request message bytes sent */
KRT_STAT(MSG_BYTES_IN, msg_bytes_in)	/* reply message bytes received */
KRT_STAT(DATA_BYTES_READ, data_bytes_read)	/* read into our pages */
KRT_STAT(DATA_BYTES_WRITTEN, data_bytes_written)	/* written from our pages */
KRT_STAT(DONE_OK, done_ok)		/* completed to the caller, status 0 */
KRT_STAT(DONE_ERROR, done_error)	/* completed with a transport error */
KRT_STAT(SRV_REQS_SEND, srv_reqs_send)	/* served: without data */
KRT_STAT(SRV_REQS_READ, srv_reqs_read)	/* served: client reads */
KRT_STAT(SRV_REQS_WRITE, srv_reqs_write)	/* served: client writes */
KRT_STAT(SRV_MSG_BYTES_IN, srv_msg_bytes_in)	/* request bytes received */
KRT_STAT(SRV_MSG_BYTES_OUT, srv_msg_bytes_out)	/* reply bytes sent */
KRT_STAT(SRV_DATA_BYTES_READ, srv_data_bytes_read)	/* RDMA-written to client */
KRT_STAT(SRV_DATA_BYTES_WRITTEN, srv_data_bytes_written)	/* RDMA-read from it */
KRT_STAT(SRV_DEFERRED, srv_deferred)	/* waited for a free server request */
KRT_STAT(ERR_WC, err_wc)		/* failed work completions (no flushes) */
KRT_STAT(ERR_RNR, err_rnr)		/* of them: receiver not ready */
KRT_STAT(ERR_TIMEOUT, err_timeout)	/* requests past their deadline */
KRT_STAT(ERR_MALFORMED, err_malformed)	/* malformed messages received */
KRT_STAT(ERR_REG, err_reg)		/* memory registration failures */
KRT_STAT(ERR_REJECT, err_reject)	/* connection attempts rejected */
KRT_STAT(RESENT, resent)		/* re-sent after a connection failed */
KRT_STAT(RECONNECTS, reconnects)	/* connections that came up again */
KRT_STAT(CREDIT_WAITS, credit_waits)	/* waited for a send credit */
KRT_STAT(SQ_WAITS, sq_waits)		/* waited for send queue room */
KRT_STAT(BACKLOG_FULL, backlog_full)	/* refused: too many waiting */
KRT_STAT(LATE_REPLIES, late_replies)	/* replies after the deadline */
KRT_STAT(HEARTBEATS, heartbeats)	/* heartbeats sent */
KRT_STAT(HB_TIMEOUTS, hb_timeouts)	/* heartbeats unanswered in time */
KRT_STAT(LOCAL_INV, local_inv)		/* MRs invalidated locally */
KRT_STAT(REMOTE_INV, remote_inv)	/* MRs the server invalidated */
