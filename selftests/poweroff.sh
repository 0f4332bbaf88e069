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
	local pid t0 t1 t2 t3 t4 gone out r st
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
	# kernel time, in the trace buffer, free of this script's polling
	# under TCG: vm-poweroff's stamps of its request, the connections'
	# and the peer's state changes, and the heartbeat's own record
	# (krt_hb_miss: nothing received for idle_ms)
	trace_on krt_hb_miss krt_conn_state krt_peer_state || return 1
	"$KRT_ROOT/scripts/vm-poweroff" 1 || fail "vm-poweroff 1"
	# the first reset: a heartbeat, or a request's retries exhausted
	gone='krt_conn_state: peer=n1 conn=[0-9]* outbound active -> '
	busywait 10000 grep -q -e "$gone" "$TRACEFS/trace" ||
		fail "silence not detected: $("$KRTCTL" conn show peer n1)"
	busywait $(((LOSS + 30) * 1000)) bash -c "[ \"\$($KRTCTL -j peer show n1 | jq -r '.[0].state')\" = down ]" ||
		fail "n1 not down: $("$KRTCTL" peer show n1)"
	trace_off krt_hb_miss krt_conn_state krt_peer_state
	grep -e 'tracing_mark_write: vm-poweroff' -e 'krt_hb_miss:' -e "$gone" \
		-e 'krt_peer_state:' "$TRACEFS/trace" > "$TMPD/trace"
	sed 's/^ *//; s/^/trace: /' "$TMPD/trace" | head -16 | while read -r l; do diag "$l"; done
	t0=$(trace_ms "$TMPD/trace" "vm-poweroff: asking the runner")
	t1=$(trace_ms "$TMPD/trace" "vm-poweroff: the runner was asked")
	t2=$(trace_ms "$TMPD/trace" "$gone")
	t3=$(trace_ms "$TMPD/trace" "$gone" last)
	t4=$(trace_ms "$TMPD/trace" 'krt_peer_state: peer=n1 [a-z]* -> down')
	if [ -z "$t0" ] || [ -z "$t1" ] || [ -z "$t2" ] || [ -z "$t4" ]; then
		fail "not traced: request '$t0'/'$t1', first reset '$t2', down '$t4'"
	else
		diag "first reset $((t2 - t1)) ms after the runner was asked to cut the power" \
		     "($((t1 - t0)) ms to ask), the last $((t3 - t1)) ms after; peer down" \
		     "$((t4 - t3)) ms after the last (loss_timeout $LOSS s)"
		# the runner kills node1's QEMU within its 0.2 s poll, the
		# heartbeat bound is 600 ms plus a 100 ms tick
		[ "$t2" -gt "$t0" ] || fail "a connection reset before the power cut was asked for"
		[ $((t2 - t1)) -le $((2500 * KRT_TS)) ] || fail "detection took $((t2 - t1)) ms"
		# down loss_timeout after the last connection went, checked by
		# a delayed work at that time
		[ $((t4 - t3)) -ge $((LOSS * 1000 - 10)) ] || fail "down after only $((t4 - t3)) ms"
		[ $((t4 - t3)) -le $((LOSS * 1000 + 1000 * KRT_TS)) ] || fail "down after $((t4 - t3)) ms"
	fi
	# every heartbeat reset 600 to 700 ms after its connection's last
	# message (a timer run late under TCG aside)
	sed -n 's/.*krt_hb_miss: peer=n1 conn=[0-9]* client idle_ms=\([0-9]*\).*/\1/p' "$TMPD/trace" |
		sort -n > "$TMPD/idle"
	diag "heartbeat resets: $(wc -l < "$TMPD/idle") of 4 connections, silent for" \
	     "$(head -1 "$TMPD/idle") to $(tail -1 "$TMPD/idle") ms"
	if [ -s "$TMPD/idle" ]; then
		[ "$(tail -1 "$TMPD/idle")" -le $((1000 * KRT_TS)) ] ||
			fail "a heartbeat reset after $(tail -1 "$TMPD/idle") ms of silence (bound 600 + ticks)"
	else
		fail "no heartbeat reset recorded"
	fi
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
