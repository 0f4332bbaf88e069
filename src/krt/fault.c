// SPDX-License-Identifier: GPL-2.0
/*
 * krt: fault injection (debugfs ``fault/``), for the selftests.
 *
 * DOC: Fault injection
 *
 * Built only when krt is built with ``KRT_FAULT=y`` (``make check``, the
 * debug tier, the demo and the benchmark do; ``make``, ``make install`` and
 * DKMS do not), as nvme's fault_inject.c is built only with fault
 * injection: krt.h has inline stubs otherwise, so a normal build carries
 * no test switch on its data path.  ``KRT_FAULT`` rather than
 * ``CONFIG_FAULT_INJECTION_DEBUG_FS`` alone: Debian's kernel, on which
 * ``make check`` runs, lacks the latter, and the knobs below need no more
 * than debugfs.  ``fault/connect`` and ``fault/register`` are the kernel's
 * fault attributes and need CONFIG_FAULT_INJECTION_DEBUG_FS as well.
 *
 * ``mask_frwr`` (devices added from now on lack FRWR), ``cm_req`` (corrupt
 * outbound connect private data), ``corrupt_msg`` (the next data-path
 * message sent), ``drop_rx`` (drop the next N received), ``drop_replies``
 * (drop the next N replies a client receives: the request was served, its
 * answer lost), ``silent`` (drop
 * every received message), ``reconnect`` (fail the next N reconnect
 * attempts), ``hold_replies`` (the test service holds its replies),
 * ``qp_fatal`` (a fatal QP event on one connection), ``stall_data`` (MS:
 * for MS milliseconds from the write no server posts a data transfer, as
 * if every server SQ were full behind a slow device; replies and
 * heartbeats are not held, and the transfers go once it ends),
 * ``hold_sends`` (MS: for MS milliseconds from the write a client handles
 * the SEND completion of an inline write named by its pages, or of a
 * message in a full-size buffer, only once it ends, as if the SEND were
 * slow to be acknowledged), ``dump_intr`` (the
 * next N parts of peer, connection and statistics dumps after a first one
 * find krt's lists changed, as a ``peer add`` between them would).
 *
 * Per connection, written as ``PEER INDEX ...`` and kept in the
 * connection (struct krt_conn_fi), so that they outlive a reconnect:
 * ``drop_rx_conn`` (``PEER INDEX N``: drop the next N messages that
 * connection receives, as ``drop_rx`` does module-wide) and ``delay_rx``
 * (``PEER INDEX MS N``: handle the next N messages it receives MS
 * milliseconds late; see krt_q_hold_rx() in queue.c).  Neither takes a
 * heartbeat; ``N`` 0 disarms.  What each took is shown as
 * ``fault_dropped`` and ``fault_delayed`` in ``conns/<index>/state``.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/fs.h>
#include "krt.h"

/* Fault knob: treat devices added from now on as lacking FRWR. */
bool krt_fi_mask_frwr;
/* Fault knob: corrupt outbound CONNECT_REQUEST private data (see cm.c). */
u32 krt_fi_cm_req;
/* Fault knob: corrupt the next data-path message sent (see queue.c). */
u32 krt_fi_corrupt_msg;
/* Fault knob: drop the next N data-path messages received (see queue.c). */
u32 krt_fi_drop_rx;
/* Fault knob: drop the next N replies a client receives (see queue.c). */
u32 krt_fi_drop_rep;
/* Fault knob: ignore every data-path message received (see queue.c). */
bool krt_fi_silent;
/* Fault knob: server transfers wait for SQ room until these jiffies. */
unsigned long krt_fi_stall_until;
/* Fault knob: some SEND completions are held until these jiffies (queue_clt.c). */
unsigned long krt_fi_hold_sends_until;
/* Fault knob: fail the next N reconnect attempts (see conn.c). */
static u32 krt_fi_reconnect;
/* Fault knob: the next N dump parts see krt's lists changed (netlink.c). */
static u32 krt_fi_dump_intr;

/* Take one from a "next N" fault counter. */
static bool krt_fault_take(u32 *n)
{
	u32 v = READ_ONCE(*n);

	while (v) {
		u32 old = cmpxchg(n, v, v - 1);

		if (old == v)
			return true;
		v = old;
	}
	return false;
}

/**
 * krt_fault_reconnect() - whether to fail this reconnect attempt
 *
 * Return: true while fault/reconnect counts down.
 */
bool krt_fault_reconnect(void)
{
	return krt_fault_take(&krt_fi_reconnect);
}

/**
 * krt_fault_dump_intr() - whether this dump part finds the lists changed
 *
 * Return: true while fault/dump_intr counts down.
 */
bool krt_fault_dump_intr(void)
{
	return READ_ONCE(krt_fi_dump_intr) && krt_fault_take(&krt_fi_dump_intr);
}

/**
 * krt_fault_drop_take() - whether to drop this received message
 *
 * Return: true while fault/drop_rx counts down.
 */
bool krt_fault_drop_take(void)
{
	return krt_fault_take(&krt_fi_drop_rx);
}

/**
 * krt_fault_drop_rep_take() - whether to drop this received reply
 *
 * Return: true while fault/drop_replies counts down.
 */
bool krt_fault_drop_rep_take(void)
{
	return krt_fault_take(&krt_fi_drop_rep);
}

/**
 * krt_fault_corrupt_take() - how to corrupt the next message sent
 *
 * Return: the fault/corrupt_msg mode (once), or 0.
 */
u32 krt_fault_corrupt_take(void)
{
	return xchg(&krt_fi_corrupt_msg, 0);
}

/**
 * krt_fault_conn_drop_take() - whether to drop this message @conn received
 * @conn: the connection
 *
 * Return: true while its fault/drop_rx_conn counts down (counted).
 */
bool krt_fault_conn_drop_take(struct krt_conn *conn)
{
	if (!krt_fault_take(&conn->fi.drop_rx))
		return false;
	atomic64_inc(&conn->fi.dropped);
	return true;
}

/**
 * krt_fault_conn_delay_take() - how late to handle this message @conn received
 * @conn: the connection
 *
 * Return: milliseconds while its fault/delay_rx counts down (counted), or 0.
 */
u32 krt_fault_conn_delay_take(struct krt_conn *conn)
{
	u32 ms;

	if (!krt_fault_take(&conn->fi.delay_n))
		return 0;
	/* ORDER: the count (cmpxchg(), a full barrier), then its delay */
	ms = READ_ONCE(conn->fi.delay_ms);
	if (!ms)
		return 0;
	atomic64_inc(&conn->fi.delayed);
	return ms;
}

/**
 * krt_fault_conn_show() - a connection's fault knobs, for debugfs
 * @conn: the connection
 * @m: its state file
 */
void krt_fault_conn_show(struct krt_conn *conn, struct seq_file *m)
{
	seq_printf(m, "fault_drop_rx: %u\nfault_delay_rx: %u %u\n",
		   READ_ONCE(conn->fi.drop_rx), READ_ONCE(conn->fi.delay_ms),
		   READ_ONCE(conn->fi.delay_n));
	seq_printf(m, "fault_dropped: %lld\nfault_delayed: %lld\n",
		   atomic64_read(&conn->fi.dropped),
		   atomic64_read(&conn->fi.delayed));
}

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * Fault knob fault/connect/ (the kernel's fault_attr files: probability,
 * space, times, ...): fail the allocations and verbs of the connect and
 * accept paths, which run in rdma_cm's workers where failslab's
 * per-task fail-nth cannot reach.  space=N fails the N-th point.
 */
static DECLARE_FAULT_ATTR(krt_fault_connect_attr);

/**
 * krt_fault_connect() - whether to fail this connect-path step
 *
 * Return: true when the step is to fail as if out of memory.
 */
bool krt_fault_connect(void)
{
	return should_fail(&krt_fault_connect_attr, 1);
}

/*
 * Fault knob fault/register/: fail memory registration steps of either
 * side (scatterlist allocation, DMA mapping, ib_map_mr_sg) from any
 * context, the server's softirq included.
 */
static DECLARE_FAULT_ATTR(krt_fault_register_attr);

/**
 * krt_fault_register() - whether to fail this registration step
 *
 * Return: true when the step is to fail.
 */
bool krt_fault_register(void)
{
	return should_fail(&krt_fault_register_attr, 1);
}
#endif

static ssize_t krt_fault_hold_read(struct file *f, char __user *buf, size_t len,
				   loff_t *ppos)
{
	char s[3] = { krt_test_holding() ? 'Y' : 'N', '\n', 0 };

	return simple_read_from_buffer(buf, len, ppos, s, 2);
}

static ssize_t krt_fault_hold_write(struct file *f, const char __user *buf,
				    size_t len, loff_t *ppos)
{
	bool v;
	int ret;

	ret = kstrtobool_from_user(buf, len, &v);
	if (ret)
		return ret;
	krt_test_hold(v);
	return len;
}

static const struct file_operations krt_fault_hold_fops = {
	.owner	= THIS_MODULE,
	.read	= krt_fault_hold_read,
	.write	= krt_fault_hold_write,
	.llseek	= default_llseek,
};

/* the longest fault/delay_rx delay and fault/stall_data stall, in ms */
#define KRT_FAULT_DELAY_MAX	60000

/*
 * fault/stall_data and fault/hold_sends: "MS" (0..KRT_FAULT_DELAY_MAX)
 * sets the jiffies (the file's data) until which the fault lasts; a read
 * tells the milliseconds left by the kernel's clock (a test times what
 * waits by it, not by its own clock)
 */
static ssize_t krt_fault_stall_read(struct file *f, char __user *buf, size_t len,
				    loff_t *ppos)
{
	unsigned long until = READ_ONCE(*(unsigned long *)file_inode(f)->i_private);
	unsigned long now = jiffies;
	char s[16];
	int n;

	n = scnprintf(s, sizeof(s), "%u\n", until && time_before(now, until) ?
		      jiffies_to_msecs(until - now) : 0);
	return simple_read_from_buffer(buf, len, ppos, s, n);
}

static ssize_t krt_fault_stall_write(struct file *f, const char __user *buf,
				     size_t len, loff_t *ppos)
{
	unsigned long *until = file_inode(f)->i_private;
	u32 ms;
	int ret;

	ret = kstrtou32_from_user(buf, len, 0, &ms);
	if (ret)
		return ret;
	if (ms > KRT_FAULT_DELAY_MAX)
		return -EINVAL;
	/* 0 ends a stall (and no stall ends at 0) */
	WRITE_ONCE(*until, ms ? (jiffies + msecs_to_jiffies(ms)) | 1 : 0);
	return len;
}

static const struct file_operations krt_fault_stall_fops = {
	.owner	= THIS_MODULE,
	.read	= krt_fault_stall_read,
	.write	= krt_fault_stall_write,
	.llseek	= default_llseek,
};

/*
 * Parse "PEER INDEX V1 .. Vn" of a per-connection knob: exactly 2 + @nr
 * words, numbers in decimal (or 0x), nothing else.  Return: 0 or -EINVAL.
 */
static int krt_fault_parse_conn(char *line, char *name, u32 *index, u32 *v,
				u32 nr)
{
	char *word, *cur = strim(line);
	u32 n = 0;

	while ((word = strsep(&cur, " \t")) != NULL) {
		if (!*word)
			continue;	/* runs of blanks */
		if (n == 0) {
			if (strscpy(name, word, KRT_PEER_NAME_MAX) < 0)
				return -EINVAL;
		} else if (n > nr + 1 ||
			   kstrtou32(word, 0, n == 1 ? index : &v[n - 2])) {
			return -EINVAL;
		}
		n++;
	}
	return n == nr + 2 ? 0 : -EINVAL;
}

/*
 * Read a per-connection knob's write, "PEER INDEX V1 .. Vn" (@nr values).
 * Return: 0, -EFAULT, or -EINVAL for a malformed line.
 */
static int krt_fault_read_conn(const char __user *buf, size_t len, char *name,
			       u32 *index, u32 *v, u32 nr)
{
	char line[KRT_PEER_NAME_MAX + 48];

	if (len >= sizeof(line))
		return -EINVAL;
	if (copy_from_user(line, buf, len))
		return -EFAULT;
	line[len] = 0;
	return krt_fault_parse_conn(line, name, index, v, nr);
}

/*
 * Read and parse a per-connection knob's write, look the connection up.
 * Return: the connection with a reference, or an ERR_PTR (-EINVAL for a
 * malformed line, -ENOENT for no such peer or index).
 */
static struct krt_conn *krt_fault_conn_write(const char __user *buf, size_t len,
					     u32 *v, u32 nr)
{
	char name[KRT_PEER_NAME_MAX];
	struct krt_conn *conn;
	u32 index;
	int ret;

	ret = krt_fault_read_conn(buf, len, name, &index, v, nr);
	if (ret)
		return ERR_PTR(ret);
	conn = krt_conn_get_by_name(name, index);
	return conn ?: ERR_PTR(-ENOENT);
}

/*
 * fault/qp_fatal: writing "PEER INDEX" reports a fatal QP error on that
 * connection through its QP's event handler, as a driver would.
 */
static ssize_t krt_fault_qp_fatal_write(struct file *f, const char __user *buf,
					size_t len, loff_t *ppos)
{
	char name[KRT_PEER_NAME_MAX];
	u32 index;
	int ret;

	ret = krt_fault_read_conn(buf, len, name, &index, NULL, 0) ?:
	      krt_conn_inject_fatal(name, index);
	return ret ? ret : len;
}

static const struct file_operations krt_fault_qp_fatal_fops = {
	.owner	= THIS_MODULE,
	.write	= krt_fault_qp_fatal_write,
	.llseek	= noop_llseek,
};

/* fault/drop_rx_conn: "PEER INDEX N" drops the next N messages it receives */
static ssize_t krt_fault_drop_conn_write(struct file *f, const char __user *buf,
					 size_t len, loff_t *ppos)
{
	struct krt_conn *conn;
	u32 n;

	conn = krt_fault_conn_write(buf, len, &n, 1);
	if (IS_ERR(conn))
		return PTR_ERR(conn);
	WRITE_ONCE(conn->fi.drop_rx, n);
	krt_conn_put(conn);
	return len;
}

static const struct file_operations krt_fault_drop_conn_fops = {
	.owner	= THIS_MODULE,
	.write	= krt_fault_drop_conn_write,
	.llseek	= noop_llseek,
};

/*
 * fault/delay_rx: "PEER INDEX MS N" holds the next N messages it receives
 * for MS (1..KRT_FAULT_DELAY_MAX) ms each; N 0 disarms (MS is then any)
 */
static ssize_t krt_fault_delay_write(struct file *f, const char __user *buf,
				     size_t len, loff_t *ppos)
{
	struct krt_conn *conn;
	u32 v[2];

	conn = krt_fault_conn_write(buf, len, v, 2);
	if (IS_ERR(conn))
		return PTR_ERR(conn);
	if (v[1] && (!v[0] || v[0] > KRT_FAULT_DELAY_MAX)) {
		krt_conn_put(conn);
		return -EINVAL;
	}
	/* ORDER: no message takes the old count with the new delay */
	WRITE_ONCE(conn->fi.delay_n, 0);
	WRITE_ONCE(conn->fi.delay_ms, v[0]);
	smp_wmb();	/* the delay before the count: see krt_fault_conn_delay_take() */
	WRITE_ONCE(conn->fi.delay_n, v[1]);
	krt_conn_put(conn);
	return len;
}

static const struct file_operations krt_fault_delay_fops = {
	.owner	= THIS_MODULE,
	.write	= krt_fault_delay_write,
	.llseek	= noop_llseek,
};

/**
 * krt_fault_init() - create the fault/ folder
 * @root: krt's debugfs folder
 */
void krt_fault_init(struct dentry *root)
{
	struct dentry *fault = debugfs_create_dir("fault", root);

	debugfs_create_bool("mask_frwr", 0600, fault, &krt_fi_mask_frwr);
	debugfs_create_u32("cm_req", 0600, fault, &krt_fi_cm_req);
	debugfs_create_u32("corrupt_msg", 0600, fault, &krt_fi_corrupt_msg);
	debugfs_create_u32("drop_rx", 0600, fault, &krt_fi_drop_rx);
	debugfs_create_u32("dump_intr", 0600, fault, &krt_fi_dump_intr);
	debugfs_create_u32("drop_replies", 0600, fault, &krt_fi_drop_rep);
	debugfs_create_bool("silent", 0600, fault, &krt_fi_silent);
	debugfs_create_u32("reconnect", 0600, fault, &krt_fi_reconnect);
	debugfs_create_file("hold_replies", 0600, fault, NULL, &krt_fault_hold_fops);
	debugfs_create_file("qp_fatal", 0200, fault, NULL, &krt_fault_qp_fatal_fops);
	debugfs_create_file("drop_rx_conn", 0200, fault, NULL, &krt_fault_drop_conn_fops);
	debugfs_create_file("delay_rx", 0200, fault, NULL, &krt_fault_delay_fops);
	debugfs_create_file("stall_data", 0600, fault, &krt_fi_stall_until, &krt_fault_stall_fops);
	debugfs_create_file("hold_sends", 0600, fault, &krt_fi_hold_sends_until,
			    &krt_fault_stall_fops);
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	/* quiet by default: fail-nth sweeps pass through these points too */
	krt_fault_connect_attr.verbose = 0;
	krt_fault_register_attr.verbose = 0;
	fault_create_debugfs_attr("connect", fault, &krt_fault_connect_attr);
	fault_create_debugfs_attr("register", fault, &krt_fault_register_attr);
#endif
}
