#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The remote guest powered off mid-traffic (scripts/vm -n 2 --rxe; the
# runner kills node1's QEMU when node0 asks with scripts/vm-poweroff).
# node1 only serves.  node0, under verified reads: the heartbeats detect
# the silence within their bound, the requests wait for loss_timeout and
# then fail ENOTCONN, none completed twice or with wrong data, the peer
# goes down, and peer del and rmmod leave no RDMA resource behind.
. "$(dirname "$0")/lib.sh"

LOSS=5

setup() {
	load_krt test_service=1 || return 1
	"$KRTCTL" listen add "$KRT_ADDR" || fail "listen add"
	barrier listening || return 1
	[ "$KRT_NODE" = 0 ] || return 0
	"$KRTCTL" peer add n1 addr "$KRT_PEER_ADDR" conns 4 depth 16 hb_ms 200 hb_misses 3 \
		reconnect_ms 100 reconnect_max_ms 500 loss_timeout $LOSS || fail "peer add"
	wait_peer n1 active 4 60000 || fail "n1 not 4/4: $("$KRTCTL" peer show)"
}

power_off() {
	local pid t0 dt out r st d0
	if [ "$KRT_NODE" = 1 ]; then
		barrier load_running || return 1
		sleep 600	# until the power goes
		fail "node1 still running"
		return 1
	fi
	"$KRTCTL" -j xfer n1 op read size 64k count 5000 threads 2 depth 4 timeout 60000 \
		> "$TMPD/po" 2> "$TMPD/po.err" &
	pid=$!
	barrier load_running || return 1
	sleep 2
	kill -0 $pid 2> /dev/null || fail "the load ended before the power cut: $(cat "$TMPD/po")"
	d0=$(dmesg | wc -l)
	"$KRT_ROOT/scripts/vm-poweroff" 1 || { fail "vm-poweroff 1"; return 1; }
	t0=$(date +%s%N)
	# the first reset: a heartbeat, or an RDMA READ's retries exhausted
	busywait 10000 bash -c "dmesg | tail -n +$((d0 + 1)) | grep -q 'krt: n1/[0-9]*: resetting the connection'" ||
		fail "silence not detected: $("$KRTCTL" conn show peer n1)"
	dt=$((($(date +%s%N) - t0) / 1000000))
	diag "node1 powered off: first reset after $dt ms (hb_ms 200 x hb_misses 3, 100 ms ticks):" \
	     "$(dmesg | tail -n +$((d0 + 1)) | grep -m1 'resetting the connection' | sed 's/.*krt: //')"
	[ "$dt" -le 2500 ] || fail "detection took $dt ms"
	busywait $(((LOSS + 30) * 1000)) bash -c "[ \"\$($KRTCTL -j peer show n1 | jq -r '.[0].state')\" = down ]" ||
		fail "n1 not down: $("$KRTCTL" peer show n1)"
	dt=$((($(date +%s%N) - t0) / 1000000))
	diag "peer n1 down $dt ms after the power cut (loss_timeout $LOSS s)"
	# detection (under 2.5 s) + loss_timeout, polled under TCG
	[ "$dt" -le $(((LOSS + 4) * 1000)) ] || fail "down after $dt ms"
	diag "while down: $("$KRTCTL" peer show n1 | head -1)"
	busywait 120000 bash -c "! kill -0 $pid 2> /dev/null" || { fail "the load did not end"; kill $pid; }
	wait $pid
	out=$(cat "$TMPD/po")
	r=$(jq -r '"\(.ok)/\(.errors)/\(.mismatches)/\(.double_completions)"' <<< "$out")
	diag "reads across the power cut: ok/errors/mismatches/double = $r," \
	     "first error '$(jq -r .first_error_name <<< "$out")'"
	check_eq "$(jq -r '.ok + .errors' <<< "$out")" 5000 "ok + errors"
	check_eq "$(jq -r '"\(.mismatches)/\(.double_completions)"' <<< "$out")" 0/0 "mismatches/double completions"
	[ "$(jq -r .ok <<< "$out")" -gt 0 ] || fail "no read succeeded before the cut"
	check_eq "$(jq -r .first_error_name <<< "$out")" "Transport endpoint is not connected" "the error"
	st=$("$KRTCTL" -j peer show n1 | jq -r '.[0].state')
	check_eq "$st" down "peer state after the load"
	check_eq "$(awk '$1 == "malformed:" { print $2 }' "$KRT_DBG/dp")" 0 "malformed messages"
}

teardown() {
	[ "$KRT_NODE" = 0 ] || return 0
	"$KRTCTL" peer del n1 || fail "peer del"
	busywait 10000 bash -c "[ \$(rdma resource show qp | grep -c 'comm \[rdma_cm\]') -eq 0 ]" ||
		fail "QPs left: $(rdma resource show qp | grep -c 'comm \[rdma_cm\]')"
	check_eq "$(rdma resource show mr | grep -c 'comm \[krt\]')" 0 "krt MRs left"
	unload_krt || return 1
}

ktap_plan 3
run_case setup setup
run_case remote_powered_off_mid_traffic power_off
run_case teardown_and_rmmod teardown
ktap_finish
