/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * krt: in-kernel RDMA transport - generic netlink interface.
 *
 * Source of truth: Documentation/netlink/specs/krt.yaml.  Shared by the
 * kernel module and the krtctl tool.
 */
#ifndef _UAPI_LINUX_KRT_H
#define _UAPI_LINUX_KRT_H

#define KRT_GENL_NAME		"krt"
#define KRT_GENL_VERSION	1
#define KRT_MCGRP_EVENTS	"events"

/* Longest RDMA device name, including the terminating NUL. */
#define KRT_DEV_NAME_MAX	64

/**
 * enum krt_dev_state - whether krt can use an RDMA device
 * @KRT_DEV_STATE_USABLE: has everything krt needs and is enabled
 * @KRT_DEV_STATE_DISABLED: usable, but disabled by the administrator
 * @KRT_DEV_STATE_UNUSABLE: lacks a capability; see %KRT_A_DEV_REASON
 */
enum krt_dev_state {
	KRT_DEV_STATE_USABLE = 1,
	KRT_DEV_STATE_DISABLED,
	KRT_DEV_STATE_UNUSABLE,
};

/* Attributes of an RDMA device as krt sees it. */
enum krt_a_dev {
	KRT_A_DEV_UNSPEC,
	KRT_A_DEV_NAME,			/* string, ib device name */
	KRT_A_DEV_INDEX,		/* u32, ib device index */
	KRT_A_DEV_STATE,		/* u32, enum krt_dev_state */
	KRT_A_DEV_REASON,		/* string, why it is unusable */
	KRT_A_DEV_ENABLED,		/* u8, 0 or 1; settable */
	KRT_A_DEV_FRWR,			/* u8, FRWR (MEM_MGT_EXTENSIONS) */
	KRT_A_DEV_MAX_FR_PAGES,		/* u32, max_fast_reg_page_list_len */
	KRT_A_DEV_MAX_QP_WR,		/* u32 */
	KRT_A_DEV_MAX_SEND_SGE,		/* u32 */
	KRT_A_DEV_MAX_RECV_SGE,		/* u32 */
	KRT_A_DEV_MAX_INLINE,		/* u32, probed inline data size */
	KRT_A_DEV_MAX_CQE,		/* u32 */
	KRT_A_DEV_COMP_VECTORS,		/* u32, completion vectors */
	KRT_A_DEV_PORTS,		/* u32, physical ports */
	KRT_A_DEV_NODE_GUID,		/* u64, network byte order as ib */
	KRT_A_DEV_SEND_INV,		/* u8, SEND_WITH_INV supported */
	KRT_A_DEV_SG_GAPS,		/* u8, IB_MR_TYPE_SG_GAPS supported */

	__KRT_A_DEV_MAX,
	KRT_A_DEV_MAX = __KRT_A_DEV_MAX - 1
};

enum krt_cmd {
	KRT_CMD_UNSPEC,
	KRT_CMD_DEV_GET,		/* do (by name) and dump */
	KRT_CMD_DEV_SET,		/* admin: change KRT_A_DEV_ENABLED */
	KRT_CMD_DEV_ADD_NTF,		/* event: device appeared */
	KRT_CMD_DEV_DEL_NTF,		/* event: device went away */
	KRT_CMD_DEV_CHANGE_NTF,		/* event: renamed or (en|dis)abled */

	__KRT_CMD_MAX,
	KRT_CMD_MAX = __KRT_CMD_MAX - 1
};

#endif /* _UAPI_LINUX_KRT_H */
