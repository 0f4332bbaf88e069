#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# krt.ko loads and unloads cleanly, with and without RDMA devices present,
# and leaves nothing behind: module, debugfs, netlink family, ib objects.
. "$(dirname "$0")/lib.sh"

gone_after_unload() {
	krt_loaded && { fail "module still loaded"; return 1; }
	[ -e "$KRT_DBG" ] && fail "debugfs $KRT_DBG still there"
	"$KRTCTL" dev show > "$TMPD/out" 2>&1 && fail "netlink family still answers"
	grep -q "krt is not loaded" "$TMPD/out" || fail "krtctl: $(cat "$TMPD/out")"
	check_eq "$(rdma_res_count pd)" 0 "PDs owned by krt after unload"
}

cycles_no_device() {
	local i
	for i in $(seq "${KRT_LOAD_CYCLES:-20}"); do
		load_krt || return 1
		[ -f "$KRT_DBG/version" ] || fail "cycle $i: no $KRT_DBG/version"
		"$KRTCTL" dev show > /dev/null || fail "cycle $i: dev show failed"
		unload_krt || return 1
	done
	gone_after_unload
}

cycles_with_device() {
	local i
	rxe_add krt_ml0 || { fail "rxe_add"; return 1; }
	for i in $(seq "${KRT_LOAD_CYCLES:-20}"); do
		load_krt || return 1
		[ -d "$KRT_DBG/devices/krt_ml0" ] || fail "cycle $i: no debugfs folder for krt_ml0"
		check_eq "$(rdma_res_count pd)" 1 "cycle $i: krt PDs with one device"
		check_eq "$(rdma_res_count qp)" 0 "cycle $i: krt QPs left by the inline probe"
		check_eq "$(rdma_res_count cq)" 0 "cycle $i: krt CQs left by the inline probe"
		unload_krt || return 1
	done
	gone_after_unload
	rxe_del krt_ml0
}

version_matches() {
	load_krt || return 1
	check_eq "$(cat "$KRT_DBG/version")" "$(cat /sys/module/krt/version)" \
		"debugfs version vs module version"
	unload_krt
}

# module parameters refuse what they cannot honour and keep their value
bad_params() {
	local p=/sys/module/krt/parameters v
	# the default, also where load_krt scales it (KRT_TIME_SCALE)
	load_krt req_timeout_ms=30000 || return 1
	for v in 0 86400001 -1 abc; do
		echo "$v" > $p/req_timeout_ms 2> /dev/null && fail "req_timeout_ms=$v accepted"
	done
	check_eq "$(cat $p/req_timeout_ms)" 30000 "req_timeout_ms after refused writes"
	unload_krt || return 1
	insmod "$KRT_KO" req_timeout_ms=0 2> /dev/null && fail "insmod req_timeout_ms=0 succeeded"
	! krt_loaded || { rmmod krt; fail "krt loaded with req_timeout_ms=0"; }
}

ktap_plan 4
run_case "load_unload_${KRT_LOAD_CYCLES:-20}_no_device" cycles_no_device
run_case "load_unload_${KRT_LOAD_CYCLES:-20}_with_rxe" cycles_with_device
run_case version version_matches
run_case bad_params_refused bad_params
ktap_finish
