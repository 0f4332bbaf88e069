#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Recovery in one guest (rxe loopback, the node is client and server):
# connections reset under load, QP errors, missed heartbeats, dropped
# messages, device removal, a listener gone past the loss timeout.  Each
# case runs verified load (krtctl xfer, several threads, read and write)
# while the fault happens and asserts: every request completed exactly
# once, no mismatch, no error where the default retry policy covers the
# fault, the pool back to N/N by itself within a bound it prints.
. "$(dirname "$0")/lib.sh"

A=""		# the rxe device's address
N=4		# pool size

dp() { awk -v f="$1:" '$1 == f { print $2 }' "$KRT_DBG/dp"; }
conns_up() { "$KRTCTL" -j peer show "$1" | jq -r '.[0].conns_up'; }

# load NAME ARGS...: verified xfer in the background, JSON in
# $TMPD/NAME, its pid in $LOAD_PID
load() {
	local name=$1
	shift
	"$KRTCTL" -j xfer "$@" > "$TMPD/$name" 2> "$TMPD/$name.err" &
	LOAD_PID=$!
}

# settle NAME PID OK_WANT ERRORS_WANT: wait for a load, check its counts
settle() {
	local name=$1 pid=$2 want=$3 err=$4 r
	wait "$pid"
	r=$(jq -r '"\(.ok)/\(.errors)/\(.mismatches)/\(.double_completions)"' "$TMPD/$name" 2>/dev/null)
	diag "$name: ok/errors/mismatches/double = $r, resent $(j "$name" resent)," \
		"first error '$(j "$name" first_error_name)'"
	if [ -n "$want" ]; then
		check_eq "$r" "$want/$err/0/0" "$name: ok/errors/mismatches/double"
	else
		check_eq "${r#*/*/}" "0/0" "$name: mismatches/double completions"
	fi
}

# back_up PEER N WHAT: wait for the pool to be N/N again, say how long
back_up() {
	local t0=$SECONDS
	wait_peer "$1" active "$2" 60000 ||
		{ fail "$3: pool not back: $("$KRTCTL" conn show peer "$1")"; return 1; }
	diag "$3: pool $1 back to $2/$2 in $((SECONDS - t0)) s"
}

setup() {
	load_krt test_service=1 || return 1
	rxe_add krt_rc0 || { fail "rxe_add"; return 1; }
	A=$(ip -4 -o addr show dev "$(awk '$1 == "krt_rc0" { print $2 }' "$TMPD/rxe")" |
	    awk '{ sub("/.*", "", $4); print $4 }')
	"$KRTCTL" listen add "$A" || fail "listen add"
	"$KRTCTL" peer add rc addr "$A" conns $N depth 32 reconnect_ms 50 reconnect_max_ms 500 ||
		fail "peer add"
	wait_peer rc active $N || fail "rc not $N/$N: $("$KRTCTL" peer show)"
}

# 50 forced connection resets in a row under verified read and write
# load: every request completes once, successfully, re-sent where its
# connection went
resets_under_load() {
	local p1 p2 i r0 n0
	r0=$(dp resets)
	n0=$("$KRTCTL" -j peer show rc | jq '.[0].resent')
	load w1 rc op write size 4k count 6000 threads 4 depth 8 timeout 30000; p1=$LOAD_PID
	load r1 rc op read size 256k count 400 threads 2 depth 4 timeout 30000; p2=$LOAD_PID
	sleep 0.3
	for ((i = 0; i < 50; i++)); do
		"$KRTCTL" conn reset rc $((i % N)) 2> /dev/null
		sleep 0.1
	done
	settle w1 "$p1" 6000 0
	settle r1 "$p2" 400 0
	diag "resets: $(($(dp resets) - r0)) queue resets, $(("$("$KRTCTL" -j peer show rc | jq '.[0].resent')" - n0)) requests re-sent"
	[ "$(( $(j w1 resent) + $(j r1 resent) ))" -gt 0 ] || fail "nothing was re-sent: the resets missed the load"
	back_up rc $N "50 resets"
	check_eq "$(dp malformed)" 0 "malformed messages"
	[ "$("$KRTCTL" -j conn show peer rc | jq '[.[].reconnects] | add')" -ge 10 ] ||
		fail "reconnects: $("$KRTCTL" -j conn show peer rc | jq -c '[.[].reconnects]')"
}

# KRT_REQ_NORETRY requests fail with ECONNRESET when their connection
# goes, the others are re-sent; each completes once
noretry() {
	local p1 i
	load nr rc op write size 64k count 3000 threads 4 depth 8 timeout 30000 noretry; p1=$LOAD_PID
	sleep 0.3
	for ((i = 0; i < 10; i++)); do
		kill -0 "$p1" 2> /dev/null || break
		"$KRTCTL" conn reset rc $((i % N)) 2> /dev/null
		sleep 0.2
	done
	diag "noretry: $i resets while the load ran"
	settle nr "$p1" "" ""
	check_eq "$(( $(j nr ok) + $(j nr errors) ))" 3000 "noretry: ok + errors"
	[ "$(j nr errors)" -gt 0 ] || fail "noretry: no request failed"
	check_eq "$(j nr first_error_name)" "Connection reset by peer" "noretry error"
	check_eq "$(j nr resent)" 0 "noretry requests re-sent"
	back_up rc $N noretry
}

# peer reconnect recycles the whole pool under load: nothing fails
peer_reconnect() {
	local p1 n
	load pr rc op read size 16k count 12000 threads 4 depth 8 timeout 30000; p1=$LOAD_PID
	sleep 0.3
	n=$(during "$p1" 4 0.7 "$KRTCTL" peer reconnect rc) || fail "peer reconnect"
	diag "peer reconnect: $n times while the load ran"
	[ "$n" -gt 0 ] || fail "the load ended before the first reconnect"
	settle pr "$p1" 12000 0
	[ "$(j pr resent)" -gt 0 ] || fail "nothing was re-sent: the reconnects missed the load"
	back_up rc $N "peer reconnect"
	"$KRTCTL" peer reconnect nosuch 2>&1 | grep -q "no such peer" || fail "reconnect of an unknown peer"
	"$KRTCTL" conn reset rc 99 2>&1 | grep -q "Error:" || fail "reset of an unknown index"
}

# a fatal QP event under load (fault/qp_fatal calls the QP's own event
# handler as a driver reports a catastrophic error): each connection hit
# fails with that reason, its requests are re-sent, nothing fails, and it
# reconnects by itself; bad writes to the knob are refused
qp_fatal() {
	local p1 r0 r1 i=0 idx hit=0 reasons
	local -a hits=()
	r0=$("$KRTCTL" -j conn show peer rc | jq '[.[].reconnects] | add')
	load qf rc op write size 16k count 12000 threads 4 depth 8 timeout 30000; p1=$LOAD_PID
	sleep 0.5
	# round the pool twice while the load runs; a connection still
	# coming back from the last hit refuses with ENOTCONN
	while [ $i -lt $((2 * N)) ] && kill -0 "$p1" 2> /dev/null; do
		idx=$((i % N))
		i=$((i + 1))
		if echo "rc $idx" 2> /dev/null > "$KRT_DBG/fault/qp_fatal"; then
			hit=$((hit + 1))
			hits[idx]=1
		elif [ "$("$KRTCTL" -j conn show peer rc | jq -r ".[] | select(.index == $idx) | .state")" = active ]; then
			fail "qp_fatal rc $idx refused while the connection was active"
		fi
		sleep 0.3
	done
	diag "qp_fatal: $hit fatal events ($i tried) while the load ran, on connections ${!hits[*]}"
	[ "$hit" -gt 0 ] || fail "the load ended before the first fatal event"
	settle qf "$p1" 12000 0
	[ "$(j qf resent)" -gt 0 ] || fail "nothing was re-sent: the fatal events missed the load"
	back_up rc $N "qp fatal"
	reasons=$("$KRTCTL" -j conn show peer rc | jq -r --arg hit " ${!hits[*]} " \
		'[.[] | select(. as $c | $hit | contains(" \($c.index) ")) | .reason] | unique | join(",")')
	check_eq "$reasons" "fatal QP error" "last error of the connections hit"
	r1=$("$KRTCTL" -j conn show peer rc | jq '[.[].reconnects] | add')
	[ $((r1 - r0)) -ge "$hit" ] || fail "reconnects: $r0 before, $r1 after $hit fatal events"
	check_eq "$(dmesg | grep -c 'rc/[0-9]*: QP event: QP fatal error')" \
		"$hit" "fatal QP events logged"
	echo "nosuch 0" > "$KRT_DBG/fault/qp_fatal" 2> /dev/null && fail "qp_fatal of an unknown peer taken"
	echo "rc 99" > "$KRT_DBG/fault/qp_fatal" 2> /dev/null && fail "qp_fatal of an unknown index taken"
	echo "rc" > "$KRT_DBG/fault/qp_fatal" 2> /dev/null && fail "qp_fatal without an index taken"
	check_eq "$(conns_up rc)" $N "pool after refused qp_fatal writes"
}

# a peer gone silent: every received message dropped; heartbeats detect it
# within hb_ms x hb_misses, the connection resets and comes back once the
# messages flow again
heartbeat() {
	local t0 dt h0
	"$KRTCTL" peer add hb addr "$A" conns 1 depth 8 hb_ms 200 hb_misses 3 reconnect_ms 50 ||
		{ fail "peer add hb"; return 1; }
	wait_peer hb active 1 || { fail "hb not up"; return 1; }
	sleep 2		# idle: heartbeats go and come back, nothing resets
	check_eq "$(conns_up hb)" 1 "idle connection with heartbeats"
	h0=$(awk '/^hb\// { q = 1; next } /^[^ ]/ { q = 0 } q && $1 == "heartbeats:" { print $2 }' "$KRT_DBG/conns")
	[ "${h0:-0}" -gt 3 ] || fail "heartbeats sent while idle: ${h0:-0}"
	check_eq "$("$KRTCTL" -j conn show peer hb | jq -r '.[0].reason // ""')" "" "no failure before"
	echo 1 > "$KRT_DBG/fault/silent"
	t0=$(date +%s%N)
	# the reason is set when the connection fails (it may be back at once)
	busywait 10000 bash -c "$KRTCTL -j conn show peer hb | jq -e '.[0].reason // \"\" | test(\"heartbeat\")' > /dev/null" ||
		fail "silence not detected: $("$KRTCTL" conn show peer hb)"
	dt=$((($(date +%s%N) - t0) / 1000000))
	echo 0 > "$KRT_DBG/fault/silent"
	diag "silent peer detected in $dt ms (hb_ms 200 x hb_misses 3 = 600 ms, 100 ms ticks)"
	[ "$dt" -le $((2500 * KRT_TS)) ] || fail "detection took $dt ms (bound $((2500 * KRT_TS)) ms)"
	"$KRTCTL" -j conn show peer hb | jq -r '.[0].reason' | grep -q heartbeat ||
		fail "reason: $("$KRTCTL" -j conn show peer hb | jq -r '.[0].reason')"
	back_up hb 1 heartbeat
	wait_peer rc active $N || fail "rc did not come back after the silence"
	"$KRTCTL" peer del hb
}

# dropped request and dropped reply: the request fails at its deadline
# (a data request resets its connection first), the pool comes back
dropped_messages() {
	local r0 d0 in s0
	d0=$(dp dropped)
	echo 1 > "$KRT_DBG/fault/drop_rx"
	"$KRTCTL" -j ping rc count 1 timeout 500 > "$TMPD/d1"
	check_eq "$(j d1 errors)/$(j d1 first_error_name)" "1/Connection timed out" "dropped message: ping"
	r0=$(dp resets)
	echo 1 > "$KRT_DBG/fault/drop_rx"
	"$KRTCTL" -j xfer rc op read size 64k count 1 timeout 500 > "$TMPD/d2"
	check_eq "$(j d2 errors)/$(j d2 first_error_name)" "1/Connection timed out" "dropped message: read"
	[ "$(dp resets)" -gt "$r0" ] || fail "the data request's connection was not reset"
	check_eq "$(($(dp dropped) - d0))" 2 "messages dropped by the fault"
	back_up rc $N "dropped messages"
	# a lost reply (fault/drop_replies): the server served the request,
	# the client's deadline fails it, the reply is never taken as another's
	in=$("$KRTCTL" -j peer show | jq -r '[.[] | select(.direction == "inbound")][0].name')
	s0=$(awk '$1 == "srv_reqs_send:" { print $2 }' "$KRT_DBG/peers/$in/stats")
	echo 1 > "$KRT_DBG/fault/drop_replies"
	"$KRTCTL" -j ping rc count 1 timeout 500 > "$TMPD/d4"
	check_eq "$(j d4 errors)/$(j d4 first_error_name)" "1/Connection timed out" "dropped reply: ping"
	check_eq "$(cat "$KRT_DBG/fault/drop_replies")" 0 "drop_replies taken"
	check_eq "$(($(awk '$1 == "srv_reqs_send:" { print $2 }' "$KRT_DBG/peers/$in/stats") - s0))" 1 \
		"the dropped reply's request was served"
	check_eq "$(($(dp dropped) - d0))" 3 "messages dropped by the faults"
	"$KRTCTL" -j ping rc count 50 > "$TMPD/d3"
	check_eq "$(j d3 ok)" 50 "pings afterwards"
}

# the listener goes and the pool is recycled: requests wait for the pool
# (shorter than loss_timeout: no error); past loss_timeout the peer is
# down and requests fail with ENOTCONN; with the listener back the pool
# returns by itself
loss_timeout() {
	local p1 t0
	"$KRTCTL" peer set rc loss_timeout $((10 * KRT_TS)) || fail "peer set loss_timeout"
	"$KRTCTL" listen del "$A" || fail "listen del"
	"$KRTCTL" peer reconnect rc
	busywait 10000 bash -c "[ \$($KRTCTL -j peer show rc | jq '.[0].conns_up') = 0 ]" ||
		fail "pool still up: $("$KRTCTL" peer show rc)"
	load lt rc op write size 4k count 200 threads 2 depth 4 timeout $((20000 * KRT_TS)); p1=$LOAD_PID
	sleep 1
	"$KRTCTL" -j peer show rc > "$TMPD/ps"
	diag "while down: $("$KRTCTL" peer show rc | tr '\n' ' ')"
	[ "$(j ps '[0].queued')" -gt 0 ] || fail "no request queued: $(cat "$TMPD/ps")"
	[ "$(j ps '[0].loss_left_ms')" -gt 0 ] || fail "no loss timeout countdown: $(cat "$TMPD/ps")"
	"$KRTCTL" listen add "$A" || fail "listen add"
	settle lt "$p1" 200 0
	back_up rc $N "listener back"
	# now longer than loss_timeout
	"$KRTCTL" peer set rc loss_timeout 4 || fail "peer set loss_timeout 4"
	"$KRTCTL" listen del "$A"
	"$KRTCTL" peer reconnect rc
	t0=$SECONDS
	busywait $((15000 * KRT_TS)) bash -c "[ \"\$($KRTCTL -j peer show rc | jq -r '.[0].state')\" = down ]" ||
		fail "not down: $("$KRTCTL" peer show rc)"
	diag "down after $((SECONDS - t0)) s (loss_timeout 4 s)"
	"$KRTCTL" -j ping rc count 3 > "$TMPD/lt2"
	check_eq "$(j lt2 errors)/$(j lt2 first_error_name)" "3/Transport endpoint is not connected" \
		"requests past loss_timeout"
	[ "$("$KRTCTL" -j peer show rc | jq '.[0].attempt')" -ge 2 ] || fail "no attempts counted"
	"$KRTCTL" listen add "$A"
	back_up rc $N "partition longer than loss_timeout healed"
	"$KRTCTL" peer set rc loss_timeout 30
}

# fault/reconnect fails the next attempts: they are counted, then it works
failed_attempts() {
	echo 5 > "$KRT_DBG/fault/reconnect"
	"$KRTCTL" conn reset rc 0
	busywait 20000 bash -c "[ \$(cat $KRT_DBG/fault/reconnect) = 0 ]" || fail "attempts not made"
	back_up rc $N "5 failed attempts"
	"$KRTCTL" -j peer show rc | jq -e '.[0].reconnects > 0' > /dev/null || fail "peer reconnects"
}

# rdma link del/add under load, 10 times: requests wait and are re-sent,
# the pool comes back on the new device each time
device_cycles() {
	local ifn p1 i t0
	ifn=$(awk '$1 == "krt_rc0" { print $2 }' "$TMPD/rxe")
	load dc rc op write size 64k count 20000 threads 2 depth 4 timeout 60000; p1=$LOAD_PID
	sleep 1
	for ((i = 0; i < 10; i++)); do
		rdma link del krt_rc0 || { fail "rdma link del"; break; }
		# the listener stays, waiting for its device, and comes back
		# by itself: no 'listen add' by hand
		check_eq "$("$KRTCTL" -j listen show | jq -r '.[0].state')" waiting \
			"cycle $i: listener state with its device gone"
		sleep 0.5
		rdma link add krt_rc0 type rxe netdev "$ifn" || { fail "rdma link add"; break; }
		t0=$SECONDS
		busywait 10000 bash -c "[ \"\$($KRTCTL -j listen show | jq -r '.[0].state')\" = active ]" ||
			fail "cycle $i: listener not back: $("$KRTCTL" listen show)"
		wait_peer rc active $N 60000 || { fail "cycle $i: pool not back"; break; }
		diag "cycle $i: listener and pool back in $((SECONDS - t0)) s"
	done
	check_eq "$("$KRTCTL" -j listen show | jq -r '.[0].lost')" 10 "listener's lost count"
	check_eq "$("$KRTCTL" -j listen show | jq -r 'length')" 1 "listeners" 
	settle dc "$p1" 20000 0
}

# parallel control-plane churn: peer add/del, peer set up/down, conn
# resets and a device removal, all at once and under load, then rmmod:
# nothing oopses (the runner fails on any kernel report), every request
# completes once, and no QP, cm_id or MR of krt is left
churn() {
	local ifn p1 pids="" i t_end r
	load_krt test_service=1 || return 1
	"$KRTCTL" listen add "$A" || fail "listen add"
	"$KRTCTL" peer add rc addr "$A" conns $N depth 32 reconnect_ms 50 reconnect_max_ms 500 ||
		fail "peer add"
	wait_peer rc active $N || { fail "rc not up"; return 1; }
	ifn=$(awk '$1 == "krt_rc0" { print $2 }' "$TMPD/rxe")
	load ch rc op write size 16k count 100000 threads 2 depth 8 timeout 60000; p1=$LOAD_PID
	t_end=$((SECONDS + 20))
	( while [ $SECONDS -lt $t_end ]; do
		"$KRTCTL" peer add c1 addr "$A" conns 3 depth 8 > /dev/null 2>&1
		sleep 0.$((RANDOM % 5))
		"$KRTCTL" peer del c1 > /dev/null 2>&1
	  done ) &
	pids="$pids $!"
	( while [ $SECONDS -lt $t_end ]; do
		"$KRTCTL" peer set rc conns 6 > /dev/null 2>&1
		sleep 0.$((RANDOM % 5))
		"$KRTCTL" peer set rc conns 2 > /dev/null 2>&1
	  done ) &
	pids="$pids $!"
	( while [ $SECONDS -lt $t_end ]; do
		"$KRTCTL" conn reset rc $((RANDOM % 6)) > /dev/null 2>&1
		"$KRTCTL" peer reconnect c1 > /dev/null 2>&1
		sleep 0.2
	  done ) &
	pids="$pids $!"
	sleep 8
	rdma link del krt_rc0 || fail "rdma link del"
	sleep 1
	rdma link add krt_rc0 type rxe netdev "$ifn" || fail "rdma link add"
	# the listener listens again by itself
	busywait 10000 bash -c "[ \"\$($KRTCTL -j listen show | jq -r '.[0].state')\" = active ]" ||
		fail "listener not back: $("$KRTCTL" listen show)"
	for i in $pids; do wait "$i"; done
	"$KRTCTL" peer del c1 > /dev/null 2>&1
	"$KRTCTL" peer set rc conns $N || fail "peer set back to $N"
	back_up rc $N churn
	# the load may still run: unload under it
	unload_krt || return 1
	wait "$p1"
	r=$(jq -r '"\(.ok + .errors)/\(.mismatches)/\(.double_completions)"' "$TMPD/ch")
	diag "churn: $(jq -r '"\(.ok) ok, \(.errors) errors (first: \(.first_error_name)), \(.resent) re-sent"' "$TMPD/ch")"
	check_eq "${r#*/}" "0/0" "churn: mismatches/double completions"
	[ "${r%%/*}" -gt 0 ] || fail "churn: nothing completed"
	check_eq "$(rdma resource show qp 2>/dev/null | grep -c 'comm \[rdma_cm\]')" 0 "QPs after rmmod"
	check_eq "$(rdma resource show cm_id 2>/dev/null | grep -c 'comm \[')" 0 "cm_ids after rmmod"
	check_eq "$(rdma resource show mr 2>/dev/null | grep -c 'comm \[krt\]')" 0 "MRs after rmmod"
}

teardown() {
	"$KRTCTL" peer del rc || fail "peer del"
	busywait 10000 bash -c "[ \$(rdma resource show qp | grep -c 'comm \[rdma_cm\]') = 0 ]" ||
		fail "QPs left: $(rdma resource show qp)"
	check_eq "$(rdma resource show mr 2>/dev/null | grep -c 'comm \[krt\]')" 0 "MRs left"
	check_eq "$(dp rnr_errors)" 0 "RNR errors (rnr_retry 0: any would show)"
	unload_krt
}

ktap_plan 12
run_case setup setup
run_case 50_resets_under_load_no_error resets_under_load
run_case noretry_fails_others_resent noretry
run_case peer_reconnect_under_load peer_reconnect
run_case fatal_qp_event_under_load qp_fatal
run_case heartbeat_detects_silent_peer heartbeat
run_case dropped_request_and_reply dropped_messages
run_case loss_timeout_wait_then_enotconn loss_timeout
run_case failed_attempts_counted failed_attempts
run_case rdma_link_del_add_10x_under_load device_cycles
run_case teardown_resources_back teardown
run_case churn_add_del_set_reset_linkdel_rmmod churn
ktap_finish
