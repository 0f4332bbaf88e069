// SPDX-License-Identifier: GPL-2.0
/*
 * krt: in-kernel RDMA transport for storage nodes - module entry.
 *
 * Order of bring-up: workqueue, debugfs root, netlink family, then the
 * ib_client, so
 * that the add callbacks for devices present at load time find both.
 * Teardown is the exact reverse.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <net/genetlink.h>
#include "krt.h"

static int __init krt_init(void)
{
	int ret;

	ret = krt_pool_init();
	if (ret)
		return ret;
	krt_debugfs_init();
	ret = krt_netlink_init();
	if (ret)
		goto err_debugfs;
	ret = krt_test_init();
	if (ret)
		goto err_netlink;
	ret = krt_device_init();
	if (ret)
		goto err_test;
	pr_info("version %s loaded\n", KRT_VERSION);
	return 0;

err_test:
	krt_test_exit();
err_netlink:
	/*
	 * ORDER: no request after the family goes; then what requests made
	 * meanwhile (listeners, peers) goes, and its works, before the
	 * workqueues do
	 */
	krt_netlink_exit();
	krt_pool_exit();
err_debugfs:
	krt_debugfs_exit();
	krt_pool_destroy_wq();
	return ret;
}

static void __exit krt_exit(void)
{
	/* ORDER: connections and listeners first, while devices are there */
	krt_pool_exit();
	krt_test_exit();
	krt_device_exit();
	krt_netlink_exit();
	krt_debugfs_exit();
	krt_pool_destroy_wq();
	pr_info("unloaded\n");
}

module_init(krt_init);
module_exit(krt_exit);

MODULE_DESCRIPTION("krt: in-kernel RDMA transport for storage nodes");
MODULE_LICENSE("GPL");
MODULE_VERSION(KRT_VERSION);
MODULE_ALIAS_GENL_FAMILY(KRT_GENL_NAME);
