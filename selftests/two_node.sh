#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two guests joined by an rxe link (scripts/vm -n 2 --rxe): each node's krt
# tracks its rxe device, and RDMA traffic crosses the link.
. "$(dirname "$0")/lib.sh"

node_device() {
	load_krt || return 1
	check_eq "$(dev_field rxe0 state)" usable "rxe0 on node$KRT_NODE"
	[ -d "$KRT_DBG/rxe0" ] || fail "no debugfs folder for rxe0"
}

rdma_traffic() {
	local rc
	"$KRT_ROOT/scripts/vm-barrier" traffic 120 || { fail "barrier"; return 1; }
	if [ "$KRT_NODE" = 0 ]; then
		timeout 90 rping -s -a "$KRT_ADDR" -C 3 -V > "$TMPD/rping" 2>&1
		rc=$?
	else
		busywait 30000 timeout 20 rping -c -a "$KRT_PEER_ADDR" -C 3 -V -v > "$TMPD/rping" 2>&1
		rc=$?
		check_eq "$(grep -c 'ping data' "$TMPD/rping")" 3 "verified pings"
	fi
	[ $rc -eq 0 ] || fail "rping exited $rc: $(tail -3 "$TMPD/rping" | tr '\n' ' ')"
	"$KRT_ROOT/scripts/vm-barrier" traffic_done 120 || fail "barrier"
}

ktap_plan 2
run_case node_device node_device
run_case rdma_traffic_between_guests rdma_traffic
ktap_finish
