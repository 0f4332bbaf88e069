// SPDX-License-Identifier: GPL-2.0
/*
 * The smallest out-of-tree ULP: built by scripts/check-ops against the
 * headers and Module.symvers that 'make install' puts in $(PREFIX)/src/krt,
 * to show a ULP links to krt's exports from an installed tree.  Loading
 * it looks up the peer named by its parameter and logs its largest I/O.
 */
#include <linux/module.h>
#include <krt/krt.h>

static char *ulp_min_peer = "store2";
module_param_named(peer, ulp_min_peer, charp, 0444);
MODULE_PARM_DESC(peer, "Peer to look up at load (default: store2)");

static int __init ulp_min_init(void)
{
	struct krt_peer *peer = krt_peer_get(ulp_min_peer);

	if (IS_ERR_OR_NULL(peer))
		return peer ? PTR_ERR(peer) : -ENOENT;
	pr_info("ulp_min: peer %s: max_io %u\n", ulp_min_peer, krt_peer_max_io(peer));
	krt_peer_put(peer);
	return 0;
}

static void __exit ulp_min_exit(void)
{
}

module_init(ulp_min_init);
module_exit(ulp_min_exit);
MODULE_DESCRIPTION("krt: minimal out-of-tree ULP (build check)");
MODULE_LICENSE("GPL");
