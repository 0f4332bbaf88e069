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

# timed_out_once NAME PID COUNT WHAT: a load of COUNT requests of which
# two met a fault past their deadline: each completed once, no mismatch,
# and 1 or 2 failed ETIMEDOUT (the second may be re-sent when the first
# one's reset comes before its deadline)
timed_out_once() {
	local name=$1 w
	wait "$2"
	w=$(jq -r '"\(.ok + .errors)/\(.mismatches)/\(.double_completions)"' "$TMPD/$name")
	diag "$4: $(jq -r '"\(.ok) ok, \(.errors) errors (\(.first_error_name)), \(.resent) re-sent"' "$TMPD/$name")"
	check_eq "$w" "$3/0/0" "$4: ok + errors/mismatches/double"
	case $(j "$name" errors) in
	1|2) check_eq "$(j "$name" first_error_name)" "Connection timed out" "$4";;
	*) fail "$4: $(j "$name" errors) errors, want 1 or 2";;
	esac
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
	local t0 t1 dt h0 idle
	"$KRTCTL" peer add hb addr "$A" conns 1 depth 8 hb_ms 200 hb_misses 3 reconnect_ms 50 ||
		{ fail "peer add hb"; return 1; }
	wait_peer hb active 1 || { fail "hb not up"; return 1; }
	sleep 2		# idle: heartbeats go and come back, nothing resets
	check_eq "$(conns_up hb)" 1 "idle connection with heartbeats"
	h0=$(sum_q hb heartbeats)
	[ "${h0:-0}" -gt 3 ] || fail "heartbeats sent while idle: ${h0:-0}"
	check_eq "$("$KRTCTL" -j conn show peer hb | jq -r '.[0].reason // ""')" "" "no failure before"
	# timed in the trace buffer, not by this script's polling (slow when
	# the host is loaded): the silence begins at the stamp, the reset's
	# tracepoint (krt_hb_miss) gives its time and how long nothing came
	trace_on krt_hb_miss || return 1
	stamp "fault/silent on"
	echo 1 > "$KRT_DBG/fault/silent"
	# the reason is set when the connection fails (it may be back at once)
	busywait 10000 bash -c "$KRTCTL -j conn show peer hb | jq -e '.[0].reason // \"\" | test(\"heartbeat\")' > /dev/null" ||
		fail "silence not detected: $("$KRTCTL" conn show peer hb)"
	echo 0 > "$KRT_DBG/fault/silent"
	trace_off krt_hb_miss
	grep -e 'tracing_mark_write: fault/silent on' -e 'krt_hb_miss: peer=hb conn=0 client' \
		"$TRACEFS/trace" > "$TMPD/trace"
	t0=$(trace_ms "$TMPD/trace" 'fault/silent on')
	t1=$(trace_ms "$TMPD/trace" krt_hb_miss)
	idle=$(sed -n 's/.*idle_ms=\([0-9]*\).*/\1/p' "$TMPD/trace" | head -1)
	if [ -z "$t0" ] || [ -z "$t1" ]; then
		fail "no stamp '$t0' or no heartbeat reset '$t1' traced"
	else
		dt=$((t1 - t0))
		diag "silent peer: reset $dt ms after the silence began, nothing received for $idle ms" \
		     "(hb_ms 200 x hb_misses 3 = 600 ms, 100 ms ticks)"
		[ "$dt" -le $((1000 * KRT_TS)) ] || fail "detection took $dt ms (bound $((1000 * KRT_TS)) ms)"
		# the peer's own bound, not the module's default (no reset while
		# idle before is checked above)
		check_eq "$(sed -n 's/.*bound_ms=\([0-9]*\).*/\1/p' "$TMPD/trace" | head -1)" 600 \
			"the heartbeat bound traced (hb_ms 200 x hb_misses 3)"
	fi
	"$KRTCTL" -j conn show peer hb | jq -r '.[0].reason' | grep -q heartbeat ||
		fail "reason: $("$KRTCTL" -j conn show peer hb | jq -r '.[0].reason')"
	back_up hb 1 heartbeat
	wait_peer rc active $N || fail "rc did not come back after the silence"
	"$KRTCTL" peer del hb
}

# a server whose transfers wait long for SQ room (a slow device, here
# fault/stall_data) still answers heartbeats at once, and a wait for SQ room
# is not taken for a client that returns no credits: nothing resets, the
# reads complete once the transfers go.  Twice: 64 KiB reads, then 1 MiB
# reads from a client with more large sets (8, depth 64) than the server
# grants (4, depth 16), so that 8 requests wait at the client for a set,
# 4 at the server, while the stall holds the other 4: the heartbeats must
# not wait with them.
stall_reads() {
	local name=$1 size=$2 n=$3 r0 h0 h1 w0 l0 t0 dt q left
	r0=$(dp resets)
	h0=$(sum_q "$name" heartbeats)
	w0=$(sum_all sq_waits)
	l0=$(sum_all large_deferred)
	# 3 s: five times the client's heartbeat bound (600 ms), twice the server's
	echo 3000 > "$KRT_DBG/fault/stall_data"
	t0=$(date +%s%N)
	"$KRTCTL" -j xfer "$name" op read size "$size" count "$n" depth "$n" timeout 20000 > "$TMPD/slow" &
	q=$!
	left=$(cat "$KRT_DBG/fault/stall_data")
	[ "$left" -gt 0 ] || fail "the stall was over before the $size reads were sent"
	wait $q
	# by the kernel's clock, which times the stall (a guest's own clock
	# may run at another pace under TCG): over once the reads are done
	left=$(cat "$KRT_DBG/fault/stall_data")
	[ "$left" -eq 0 ] || fail "the $size reads ended with $left ms of the stall left: the transfers did not wait"
	dt=$((($(date +%s%N) - t0) / 1000000))
	echo 0 > "$KRT_DBG/fault/stall_data"
	check_eq "$(j slow ok)/$(j slow errors)/$(j slow mismatches)" "$n/0/0" "$size reads behind the stall"
	check_eq "$(($(sum_all sq_waits) - w0 >= 4))" 1 \
		"$size: transfers waited for SQ room"
	check_eq "$(($(dp resets) - r0))" 0 "$size: connections reset during the stall"
	check_eq "$("$KRTCTL" -j conn show peer "$name" | jq -r '.[0].reason // ""')" "" "$name failure reason"
	h1=$(sum_q "$name" heartbeats)
	diag "$size: stall of 3000 ms, reads took $dt ms, heartbeats $h0 -> $h1, requests deferred for a large set $(($(sum_all large_deferred) - l0))"
	[ $((h1 - h0)) -ge 3 ] || fail "$size: heartbeats sent during the stall: $((h1 - h0))"
}
slow_server_transfers() {
	local old l0
	"$KRTCTL" peer add hbs addr "$A" conns 1 depth 8 hb_ms 200 hb_misses 3 reconnect_ms 50 ||
		{ fail "peer add hbs"; return 1; }
	wait_peer hbs active 1 || { fail "hbs not up"; return 1; }
	stall_reads hbs 64k 4
	"$KRTCTL" peer del hbs
	old=$(cat /sys/module/krt/parameters/max_inbound_depth)
	echo 16 > /sys/module/krt/parameters/max_inbound_depth
	"$KRTCTL" peer add hbl addr "$A" conns 1 depth 64 hb_ms 200 hb_misses 3 reconnect_ms 50 ||
		fail "peer add hbl"
	wait_peer hbl active 1 || fail "hbl not up"
	echo "$old" > /sys/module/krt/parameters/max_inbound_depth
	l0=$(sum_all large_deferred)
	stall_reads hbl 1M 16
	[ "$(sum_all large_deferred)" -gt "$l0" ] ||
		fail "1M: no request waited at the server for a large set"
	"$KRTCTL" peer del hbl
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

# dropped_by: fault_dropped of each connection of rc, as "a b c d"
dropped_by() {
	local i out=""
	for ((i = 0; i < N; i++)); do out="$out $(cfield rc $i fault_dropped)"; done
	echo "${out# }"
}

# fault/drop_rx_conn: messages lost on one connection of the pool only.
# Pings (no data) whose reply is lost fail ETIMEDOUT at their deadline,
# the others succeed, the connection stays; data requests whose reply is
# lost time out and reset that connection, as with fault/drop_rx, the
# rest is re-sent and the connection comes back.  Bad writes change nothing.
drop_rx_conn() {
	local d0 r0 p1 w
	d0=$(dp dropped)
	r0=$(dp resets)
	check_eq "$(dropped_by)" "0 0 0 0" "per-connection drops before"
	echo "rc 1 3" > "$KRT_DBG/fault/drop_rx_conn" || fail "drop_rx_conn rc 1 3 refused"
	check_eq "$(cfield rc 1 fault_drop_rx)" 3 "drop_rx_conn armed"
	"$KRTCTL" -j ping rc count 200 timeout 1000 > "$TMPD/dc1"
	settle dc1 "" 197 3
	check_eq "$(j dc1 first_error_name)" "Connection timed out" "lost ping replies"
	check_eq "$(dropped_by)" "0 3 0 0" "messages dropped per connection"
	check_eq "$(cfield rc 1 fault_drop_rx)" 0 "drop_rx_conn taken"
	check_eq "$(($(dp dropped) - d0))" 3 "messages dropped (module-wide count)"
	check_eq "$(dp resets)" "$r0" "resets after lost pings (no data: none)"
	check_eq "$(conns_up rc)" $N "pool after lost pings"
	# verified writes: lost replies of data requests reset the connection
	echo "rc 2 2" > "$KRT_DBG/fault/drop_rx_conn" || fail "drop_rx_conn rc 2 2 refused"
	load dc2 rc op write size 16k count 3000 threads 4 depth 8 timeout 3000; p1=$LOAD_PID
	# both lost replies time out (or the second is re-sent when the
	# first one's reset comes before its deadline)
	timed_out_once dc2 "$p1" 3000 "writes with a lost reply"
	check_eq "$(dropped_by)" "0 3 2 0" "messages dropped per connection"
	[ "$(dp resets)" -gt "$r0" ] || fail "the data requests' connection was not reset"
	check_eq "$(cfield rc 2 reason)" "request with data timed out" "reason of connection 2"
	back_up rc $N "drop_rx_conn"
	# refused: unknown peer, unknown index, missing or extra words, garbage
	for w in "nosuch 0 1" "rc 99 1" "rc 1" "rc" "rc 1 1 1" "rc x 1" "rc 1 -1" "rc 1 1x" "" \
		 "rc 1 99999999999"; do
		echo "$w" 2> /dev/null > "$KRT_DBG/fault/drop_rx_conn" && fail "drop_rx_conn '$w' taken"
	done
	for ((w = 0; w < N; w++)); do
		check_eq "$(cfield rc $w fault_drop_rx)" 0 "connection $w after refused writes"
	done
	"$KRTCTL" -j ping rc count 50 timeout 5000 > "$TMPD/dc3"
	check_eq "$(j dc3 ok)" 50 "pings afterwards"
	check_eq "$(dropped_by)" "0 3 2 0" "messages dropped per connection at the end"
}

# fault/delay_rx: messages handled late on one connection.  Below the
# deadline, replies (client side) or requests (server side) complete OK,
# late by the delay, with no reset.  Past a ping's deadline the ping fails
# ETIMEDOUT once, its late reply is counted and discarded, nothing resets
# and later pings succeed.  Past a data request's deadline its connection
# resets with replies still held: they are forgotten with the queue, the
# request fails ETIMEDOUT once, the others are re-sent.  Bad writes refused.
delay_rx() {
	local r0 l0 t0 e0 in lat p1 w
	r0=$(dp resets)
	l0=$(dp late_replies)
	t0=$(dp timeouts)
	# (a) below the deadline: pings, verified reads, a server's requests
	echo "rc 0 300 5" > "$KRT_DBG/fault/delay_rx" || fail "delay_rx rc 0 300 5 refused"
	check_eq "$(cfield rc 0 fault_delay_rx)" "300 5" "delay_rx armed"
	e0=$(cfield rc 0 fault_delayed)
	"$KRTCTL" -j ping rc count 40 timeout 5000 > "$TMPD/dl1"
	settle dl1 "" 40 0
	lat=$(j dl1 lat_max_ns)
	diag "delayed pings: max latency $((lat / 1000000)) ms (delay 300 ms)"
	[ "$lat" -ge 300000000 ] || fail "delayed pings: max latency $lat ns < 300 ms"
	check_eq "$(($(cfield rc 0 fault_delayed) - e0))" 5 "replies delayed on connection 0"
	check_eq "$(cfield rc 0 fault_delay_rx)" "300 0" "delay_rx taken"
	echo "rc 1 300 5" > "$KRT_DBG/fault/delay_rx" || fail "delay_rx rc 1 300 5 refused"
	load dl2 rc op read size 64k count 200 threads 2 depth 4 timeout 10000; p1=$LOAD_PID
	settle dl2 "$p1" 200 0
	lat=$(j dl2 lat_max_ns)
	diag "delayed reads: max latency $((lat / 1000000)) ms (delay 300 ms)"
	[ "$lat" -ge 300000000 ] || fail "delayed reads: max latency $lat ns < 300 ms"
	check_eq "$(cfield rc 1 fault_delay_rx)" "300 0" "delay_rx taken (reads)"
	in=$("$KRTCTL" -j peer show | jq -r '[.[] | select(.direction == "inbound")][0].name')
	echo "$in 0 300 3" > "$KRT_DBG/fault/delay_rx" || fail "delay_rx $in 0 300 3 refused"
	"$KRTCTL" -j ping rc count 40 timeout 5000 > "$TMPD/dl3"
	settle dl3 "" 40 0
	lat=$(j dl3 lat_max_ns)
	diag "pings with delayed requests (server side): max latency $((lat / 1000000)) ms"
	[ "$lat" -ge 300000000 ] || fail "delayed requests: max latency $lat ns < 300 ms"
	check_eq "$(dp resets)" "$r0" "resets with delays below the deadline"
	check_eq "$(dp late_replies)" "$l0" "late replies with delays below the deadline"
	check_eq "$(dp timeouts)" "$t0" "timeouts with delays below the deadline"
	# (b) past a ping's deadline: ETIMEDOUT once, the late reply discarded
	echo "rc 0 1500 3" > "$KRT_DBG/fault/delay_rx" || fail "delay_rx rc 0 1500 3 refused"
	"$KRTCTL" -j ping rc count 30 timeout 500 > "$TMPD/dl4"
	settle dl4 "" 27 3
	check_eq "$(j dl4 first_error_name)" "Connection timed out" "pings past their deadline"
	busywait 5000 bash -c "[ \$(awk '\$1 == \"late_replies:\" { print \$2 }' $KRT_DBG/dp) -ge $((l0 + 3)) ]" ||
		diag "late replies not all seen yet"
	check_eq "$(($(dp late_replies) - l0))" 3 "late replies counted"
	check_eq "$(($(dp timeouts) - t0))" 3 "timeouts counted"
	check_eq "$(dp resets)" "$r0" "resets after late pings (no data: none)"
	check_eq "$(cfield rc 0 state)" active "connection 0 after late replies"
	"$KRTCTL" -j ping rc count 50 timeout 5000 > "$TMPD/dl5"
	settle dl5 "" 50 0
	# (c) past a data request's deadline: reset with replies held
	echo "rc 3 2000 2" > "$KRT_DBG/fault/delay_rx" || fail "delay_rx rc 3 2000 2 refused"
	load dl6 rc op read size 64k count 300 threads 2 depth 4 timeout 800; p1=$LOAD_PID
	timed_out_once dl6 "$p1" 300 "reads held past their deadline"
	[ "$(dp resets)" -gt "$r0" ] || fail "the held reads' connection was not reset"
	check_eq "$(cfield rc 3 reason)" "request with data timed out" "reason of connection 3"
	back_up rc $N "delay_rx"
	echo "rc 3 0 0" > "$KRT_DBG/fault/delay_rx" || fail "delay_rx rc 3 0 0 (disarm) refused"
	# refused: no such peer or index, delay 0 or too long, missing words, garbage
	for w in "nosuch 0 100 1" "rc 99 100 1" "rc 0 0 1" "rc 0 60001 1" "rc 0 100" "rc 0" \
		 "rc 0 abc 1" "rc 0 100 1 1" "rc 0 100 -1" ""; do
		echo "$w" 2> /dev/null > "$KRT_DBG/fault/delay_rx" && fail "delay_rx '$w' taken"
	done
	for ((w = 0; w < N; w++)); do
		check_eq "$(cfield rc $w fault_delay_rx | awk '{ print $2 }')" 0 \
			"connection $w after refused writes"
	done
	"$KRTCTL" -j ping rc count 50 timeout 5000 > "$TMPD/dl7"
	check_eq "$(j dl7 ok)" 50 "pings afterwards"
}

# the listener goes and the pool is recycled: requests wait for the pool
# (shorter than loss_timeout: no error); past loss_timeout the peer is
# down and requests fail with ENOTCONN; with the listener back the pool
# returns by itself
loss_timeout() {
	local p1 t0
	# long enough for the steps below on a loaded machine (they took 6 s)
	"$KRTCTL" peer set rc loss_timeout $((20 * KRT_TS)) || fail "peer set loss_timeout"
	"$KRTCTL" listen del "$A" || fail "listen del"
	"$KRTCTL" peer reconnect rc
	busywait 10000 bash -c "[ \$($KRTCTL -j peer show rc | jq '.[0].conns_up') = 0 ]" ||
		fail "pool still up: $("$KRTCTL" peer show rc)"
	load lt rc op write size 4k count 200 threads 2 depth 4 timeout $((40000 * KRT_TS)); p1=$LOAD_PID
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

ktap_plan 15
run_case setup setup
run_case 50_resets_under_load_no_error resets_under_load
run_case noretry_fails_others_resent noretry
run_case peer_reconnect_under_load peer_reconnect
run_case fatal_qp_event_under_load qp_fatal
run_case heartbeat_detects_silent_peer heartbeat
run_case slow_server_heartbeats_answered_no_reset slow_server_transfers
run_case dropped_request_and_reply dropped_messages
run_case drop_rx_one_connection drop_rx_conn
run_case delay_rx_late_and_past_deadline delay_rx
run_case loss_timeout_wait_then_enotconn loss_timeout
run_case failed_attempts_counted failed_attempts
run_case rdma_link_del_add_10x_under_load device_cycles
run_case teardown_resources_back teardown
run_case churn_add_del_set_reset_linkdel_rmmod churn
ktap_finish
