#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The data path in one guest: the node connects to its own rxe address
# (rxe loops it back) with the test service on, and drives requests
# through krtctl ping/xfer: integrity of FRWR READ/WRITE at odd sizes and
# offsets, both invalidation paths, concurrency, backpressure, limits,
# deadlines, malformed messages, teardown with requests in flight.
. "$(dirname "$0")/lib.sh"

A=""	# the rxe device's address

dp() { awk -v f="$1:" '$1 == f { print $2 }' "$KRT_DBG/dp"; }
# run_ok OUT ARGS...: krtctl -j ARGS succeeds, JSON in $TMPD/OUT
# run_fail OUT ARGS...: krtctl -j ARGS exits 1 (requests failed)
run_fail() {
	local out=$TMPD/$1 rc
	shift
	"$KRTCTL" -j "$@" > "$out" 2> "$out.err"
	rc=$?
	[ $rc -eq 1 ] || { fail "'krtctl $*' exited $rc: $(cat "$out" "$out.err")"; return 1; }
}

setup() {
	load_krt test_service=1 || return 1
	rxe_add krt_dp0 || { fail "rxe_add"; return 1; }
	A=$(ip -4 -o addr show dev "$(awk '$1 == "krt_dp0" { print $2 }' "$TMPD/rxe")" |
	    awk '{ sub("/.*", "", $4); print $4 }')
	"$KRTCTL" listen add "$A" || fail "listen add"
	"$KRTCTL" monitor > "$TMPD/events" 2>&1 &
	KRT_BG_PIDS="${KRT_BG_PIDS:-} $!"
	"$KRTCTL" peer add dp addr "$A" conns 4 depth 32 || fail "peer add"
	wait_peer dp active 4 || fail "dp not 4/4: $("$KRTCTL" peer show)"
}

ping_verified() {
	local s
	for s in 0 1 511 4000 4036; do
		run_ok ping ping dp count 20 size $s || continue
		check_eq "$(j ping ok)/$(j ping errors)/$(j ping mismatches)" "20/0/0" "ping size $s"
	done
	[ "$(j ping lat_p99_ns)" -gt 0 ] || fail "no latency measured"
	[ "$(j ping lat_min_ns)" -le "$(j ping lat_p99_ns)" ] || fail "min > p99"
	"$KRTCTL" ping dp count 3 | grep -q "3 ok, 0 errors, 0 mismatches" || fail "plain output"
}

# every size, both directions, separate pages with odd first offsets
integrity() {
	local op s c
	for op in read write; do
		for s in 1 511 4096 65537 1048576; do
			c=6
			run_ok x xfer dp op $op size $s count $c depth 2 || continue
			check_eq "$(j x ok)/$(j x mismatches)/$(j x errors)" "$c/0/0" "$op $s"
			check_eq "$(j x bytes)" $((s * c)) "$op $s bytes"
		done
	done
	[ "$(sum_q dp remote_inv)" -gt 0 ] || fail "no remote invalidation (SEND_WITH_INV) seen"
}

local_invalidate() {
	local p=/sys/module/krt/parameters/remote_invalidate li0 ri0
	li0=$(sum_q dp local_inv)
	ri0=$(sum_q dp remote_inv)
	echo 0 > $p
	run_ok x xfer dp op read size 64k count 20 depth 4
	check_eq "$(j x ok)/$(j x mismatches)" "20/0" "read with LOCAL_INV"
	run_ok x xfer dp op write size 8193 count 20 depth 4
	check_eq "$(j x ok)/$(j x mismatches)" "20/0" "write with LOCAL_INV"
	echo 1 > $p
	check_eq "$(($(sum_q dp local_inv) - li0))" 40 "LOCAL_INVs posted"
	check_eq "$(sum_q dp remote_inv)" "$ri0" "remote invalidations while off"
}

# With srv_direct=1 (the default), a server transfer of up to 3 x 16
# entries names its pages without an MR (one to three RDMA WRs); a larger
# one, or any with srv_direct=0, goes through REG_MR, the transfer and
# LOCAL_INV.  Data is checked either way.
# xfer_rw SIZE COUNT DEPTH WHAT: a verified read, then write, of COUNT
# requests each, all answered without a mismatch
xfer_rw() {
	local op
	for op in read write; do
		run_ok x xfer dp op $op size "$1" count "$2" depth "$3"
		check_eq "$(j x ok)/$(j x mismatches)" "$2/0" "$op $1 $4"
	done
}

srv_paths() {
	local p=/sys/module/krt/parameters/srv_direct d0 m0 w0 b0 r0 q
	check_eq "$(cat $p)" Y "srv_direct default"
	# the counters are per queue: a reset would lose some (dmesg says why)
	r0=$(dp resets)
	d0=$(sum_all srv_direct)
	m0=$(sum_all srv_mr)
	# 65537 bytes at an odd offset: 18 entries, two WRs
	xfer_rw 65537 10 4 "without MR"
	check_eq "$(($(sum_all srv_direct) - d0))/$(($(sum_all srv_mr) - m0))" "20/0" \
		"server transfers without/with MR (64K+1)"
	xfer_rw 1048576 3 2 "through an MR"
	check_eq "$(($(sum_all srv_mr) - m0))" 6 "server transfers with MR (1M: 257 entries)"
	d0=$(sum_all srv_direct)
	m0=$(sum_all srv_mr)
	echo 0 > $p
	xfer_rw 4096 10 4 "with srv_direct=0"
	check_eq "$(($(sum_all srv_direct) - d0))/$(($(sum_all srv_mr) - m0))" "0/20" \
		"server transfers without/with MR while srv_direct=0"
	# a server queue accepted with srv_direct=1 that can move every
	# buffer of up to 17 pages without an MR keeps 8 in its pool
	# (pool_mrs), a client queue half the depth granted (its slots and
	# the heartbeat's), at least 32 (mr_ios); with srv_direct=0 set
	# later, transfers beyond those 8 go without
	check_eq "$(awk '$1 == "role:" { r = $2 } $1 == "depth:" { d = $2 } $1 == "slots:" { g = $2 + 1 }
		$1 == "pool_mrs:" { n++; w = d; if (r == "server" && d > 8) w = 8
			if (r == "client") { w = int(g / 2); if (w < 32) w = 32; if (w > g) w = g }
			if ($2 != w) bad++ }
		END { print n + 0 " " bad + 0 }' "$KRT_DBG/conns" | sed 's/^[1-9][0-9]* /n /')" "n 0" \
		"queues whose pool MRs are not min(granted, max(granted/2, 32)) (client) or min(depth, 8) (server)"
	d0=$(sum_all srv_direct)
	m0=$(sum_all srv_mr)
	run_ok x xfer dp op write size 64k count 256 depth 128
	check_eq "$(j x ok)/$(j x mismatches)" "256/0" "64 KiB writes, 32 per connection, srv_direct=0"
	check_eq "$(($(sum_all srv_direct) - d0 + $(sum_all srv_mr) - m0))" 256 "server transfers"
	[ "$(($(sum_all srv_mr) - m0))" -gt 0 ] || fail "no server transfer took an MR with srv_direct=0"
	diag "srv_direct=0, 32 at once per connection: $(($(sum_all srv_mr) - m0)) with an MR, $(($(sum_all srv_direct) - d0)) without"
	# transfers held (fault/stall_data) keep the server's 8 MRs: the
	# others, 16 per connection, go without.  The stall ends once all 64
	# wait for room (sq_waits), each with its MR or without.
	d0=$(sum_all srv_direct)
	m0=$(sum_all srv_mr)
	w0=$(sum_all sq_waits)
	echo $((20000 * KRT_TS > 60000 ? 60000 : 20000 * KRT_TS)) > "$KRT_DBG/fault/stall_data"
	"$KRTCTL" -j xfer dp op write size 4096 count 64 depth 64 > "$TMPD/st" 2>&1 &
	q=$!
	busywait $((15000 * KRT_TS)) bash -c "[ \$((\$(awk '\$1 == \"sq_waits:\" { s += \$2 } END { print s + 0 }' $KRT_DBG/conns) - $w0)) -ge 64 ]" ||
		fail "64 transfers not all waiting behind the stall: $(($(sum_all sq_waits) - w0))"
	echo 0 > "$KRT_DBG/fault/stall_data"
	wait $q || fail "xfer behind the stall: $(cat "$TMPD/st")"
	check_eq "$(j st ok)/$(j st mismatches)" "64/0" "4 KiB writes behind a stall, srv_direct=0"
	check_eq "$(($(sum_all srv_direct) - d0 + $(sum_all srv_mr) - m0))" 64 "server transfers behind the stall"
	[ "$(($(sum_all srv_mr) - m0))" -le 32 ] && [ "$(($(sum_all srv_direct) - d0))" -gt 0 ] ||
		fail "behind the stall, want at most 4 x 8 with an MR, the others without: $(($(sum_all srv_mr) - m0)) with, $(($(sum_all srv_direct) - d0)) without"
	diag "behind the stall: $(($(sum_all srv_mr) - m0)) with an MR, $(($(sum_all srv_direct) - d0)) without"
	# a server end accepted while srv_direct=0 keeps an MR per request
	"$KRTCTL" peer add nd addr "$A" conns 1 depth 16 || fail "peer add nd"
	wait_peer nd active 1 || fail "nd not up"
	check_eq "$(awk '$1 == "role:" { r = $2 } $1 == "depth:" { d = $2 }
		$1 == "pool_mrs:" && r == "server" && d == 16 { printf "%s%s", s, $2; s = "/" }' "$KRT_DBG/conns")" 16 \
		"pool MRs of a server end of depth 16 accepted with srv_direct=0"
	"$KRTCTL" peer del nd
	busywait $((20000 * KRT_TS)) bash -c "! awk '\$1 == \"depth:\" && \$2 == 16 { f = 1 } END { exit !f }' $KRT_DBG/conns" ||
		fail "nd's ends still there"
	w0=$(sum_all wrs)
	b0=$(sum_all doorbells)
	[ "$w0" -gt 0 ] && [ "$w0" -ge "$b0" ] || fail "wrs $w0 < doorbells $b0"
	echo 1 > $p
	check_eq "$(($(dp resets) - r0))" 0 "connections reset during the case"
}

# With srv_poll_wq=1, connections accepted afterwards handle their
# completions on an unbound workqueue (debugfs "poll: workqueue"), the
# outbound ends and the connections accepted before keep softirq.  Every
# path is served from there: pings, inline and MR writes, direct and MR
# server transfers, all verified.
# poll_sum POLL INBOUND FIELD: FIELD of the queues of connections whose
# "poll:" is POLL and "inbound:" INBOUND, summed ("n" counts them)
poll_sum() {
	local d s=0
	for d in "$KRT_DBG"/peers/*/conns/*; do
		grep -qsx "poll: $1" "$d/state" && grep -qsx "inbound: $2" "$d/state" || continue
		if [ "$3" = n ]; then
			s=$((s + 1))
		else
			s=$((s + $(awk -v f="$3:" '$1 == f { print $2 }' "$d/queue")))
		fi
	done
	echo $s
}
srv_poll_wq() {
	local p=/sys/module/krt/parameters/srv_poll_wq r0 q0 s op
	check_eq "$(cat $p)" N "srv_poll_wq default"
	check_eq "$(poll_sum workqueue 1 n)/$(poll_sum workqueue 0 n)" 0/0 "workqueue connections before"
	r0=$(dp resets)
	echo 1 > $p
	"$KRTCTL" peer add wq addr "$A" conns 2 depth 16 || { fail "peer add wq"; echo 0 > $p; return 1; }
	# connections are accepted as they come: both, before it is cleared
	wait_peer wq active 2 || fail "wq not 2/2: $("$KRTCTL" peer show wq)"
	echo 0 > $p
	busywait $((10000 * KRT_TS)) bash -c "[ \$(grep -lsx 'poll: workqueue' $KRT_DBG/peers/*/conns/*/state | wc -l) -eq 2 ]"
	check_eq "$(poll_sum workqueue 1 n)/$(poll_sum workqueue 0 n)" 2/0 \
		"server ends on the workqueue, client ends not"
	check_eq "$(cfield wq 0 poll)/$(cfield dp 0 poll)" softirq/softirq "client ends' poll"
	# dp's 4 server ends, accepted before: still softirq
	[ "$(poll_sum softirq 1 n)" -ge 4 ] || fail "server ends in softirq: $(poll_sum softirq 1 n), want >= 4"
	q0=$(poll_sum workqueue 1 srv_reqs)
	run_ok ping ping wq count 50 size 4000
	check_eq "$(j ping ok)/$(j ping mismatches)" 50/0 "pings served on the workqueue"
	for s in 1 4096 65537 1048576; do
		for op in read write; do
			run_ok x xfer wq op $op size $s count 8 depth 4 || continue
			check_eq "$(j x ok)/$(j x mismatches)/$(j x errors)" 8/0/0 "$op $s served on the workqueue"
		done
	done
	check_eq "$(($(poll_sum workqueue 1 srv_reqs) - q0))" $((50 + 64)) "requests the workqueue ends served"
	# 1-byte writes inline; 1 MiB both ways (257 entries) through an MR
	check_eq "$(poll_sum workqueue 1 srv_inline)/$(poll_sum workqueue 1 srv_mr)" 8/16 \
		"inline writes and MR transfers served on the workqueue"
	check_eq "$(($(dp resets) - r0))" 0 "connections reset during the case"
	"$KRTCTL" peer del wq || fail "peer del wq"
	# its server ends go too, before later cases sum counters
	busywait $((30000 * KRT_TS)) bash -c "! grep -qsx 'poll: workqueue' $KRT_DBG/peers/*/conns/*/state" ||
		fail "server ends of wq still there"
}

# A write whose message and data fit in what the server offered
# (inline_data, 4048 bytes by default; xfer's message is 12 bytes) goes
# with its data in the request: no MR on the client, no RDMA READ by the
# server, which copies the data out of the request (and the test service
# checks its pattern).  A larger one, every one while inline_data is 0 on
# the client, and every one on a connection whose server offered 0, take
# the MR path.
inline_counts() {
	echo "$(($(sum_all inline_writes) - i0))/$(($(sum_all srv_inline) - s0))/$(($(sum_all srv_direct) + $(sum_all srv_mr) - d0))"
}
inline_writes() {
	local p=/sys/module/krt/parameters/inline_data i0 s0 d0 r0 sz
	check_eq "$(cat $p)" 4048 "inline_data default"
	check_eq "$(qfield dp 0 inline_data)" 4048 "the server's offer, as the client has it"
	r0=$(dp resets)
	i0=$(sum_all inline_writes)
	s0=$(sum_all srv_inline)
	d0=$(($(sum_all srv_direct) + $(sum_all srv_mr)))
	# odd first offsets, every other one past the middle of its page: 3000
	# and 4036 bytes span two pages on the client, 4036 often on the server
	for sz in 1 511 3000 4036; do
		run_ok x xfer dp op write size $sz count 10 depth 4
		check_eq "$(j x ok)/$(j x mismatches)/$(j x errors)" "10/0/0" "inline write $sz"
	done
	check_eq "$(inline_counts)" "40/40/0" "writes sent/served inline, server transfers"
	run_ok x xfer dp op write size 4037 count 10 depth 4
	check_eq "$(j x ok)/$(j x mismatches)" "10/0" "write 4037 (over the offer with its message)"
	check_eq "$(inline_counts)" "40/40/10" "4037: sent/served inline, server transfers"
	echo 0 > $p
	run_ok x xfer dp op write size 511 count 10 depth 4
	check_eq "$(j x ok)/$(j x mismatches)" "10/0" "write 511 with inline_data=0"
	check_eq "$(inline_counts)" "40/40/20" "inline_data=0: sent/served inline, server transfers"
	# a server offers what inline_data was when it accepted
	"$KRTCTL" peer add ni addr "$A" conns 1 depth 8 || fail "peer add ni"
	wait_peer ni active 1 || fail "ni not up"
	echo 4048 > $p
	check_eq "$(qfield ni 0 inline_data)" 0 "offer of a server with inline_data=0"
	run_ok x xfer ni op write size 511 count 10 depth 4
	check_eq "$(j x ok)/$(j x mismatches)" "10/0" "write 511 to a server that offered 0"
	check_eq "$(qfield ni 0 inline_writes)/$(inline_counts)" "0/40/40/30" \
		"offer 0: ni's inline, all sent/served inline, server transfers"
	# and inline again where it was offered (ni's counters still count)
	run_ok x xfer dp op write size 511 count 10 depth 4
	check_eq "$(inline_counts)" "50/50/30" "inline_data back: sent/served inline, server transfers"
	"$KRTCTL" peer del ni
	check_eq "$(($(dp resets) - r0))" 0 "connections reset during the case"
}

# A buffer of up to 17 pages (64 KiB at any offset) uses its slot's or
# server request's own scatterlist and MR; a larger one one of the queue's
# few large sets (a quarter of the depth, at least 4, at most 8 MiB of
# them).  A client with more large buffers than sets waits for one, a
# server defers the request; the data arrives intact either way.
large_sets() {
	local old
	old=$(cat /sys/module/krt/parameters/max_inbound_depth)
	# the server grants depth 16 (4 sets) to a client of depth 64 (8 sets)
	echo 16 > /sys/module/krt/parameters/max_inbound_depth
	"$KRTCTL" peer add lg addr "$A" conns 1 depth 64 || fail "peer add lg"
	wait_peer lg active 1 || fail "lg not up"
	echo "$old" > /sys/module/krt/parameters/max_inbound_depth
	large_sets_run
	"$KRTCTL" peer del lg
}
large_sets_run() {
	# 1 MiB buffers; 256 KiB (65 pages: large sets all the same) on a slow
	# kernel, where rxe moves under a MiB a second (KRT_TIME_SCALE)
	local w0 d0 s0 lg=1M
	[ "$KRT_TS" -gt 1 ] && lg=256k
	check_eq "$(awk '/^lg\// { q = 1; next } /^[^ ]/ { q = 0 }
		q && ($1 == "own_pages:" || $1 == "large_sets:") { printf "%s%s", s, $2; s = "/" }' "$KRT_DBG/conns")" \
		"17/8" "client: own pages/large sets"
	# MRs for the depth granted: 16, not the 32 of the depth 64 asked
	check_eq "$(awk '/^lg\// { q = 1; next } /^[^ ]/ { q = 0 }
		q && ($1 == "depth:" || $1 == "slots:" || $1 == "pool_mrs:") { printf "%s%s", s, $2; s = "/" }' "$KRT_DBG/conns")" \
		"64/15/16" "client: depth asked/slots granted (the heartbeat's apart)/pool MRs"
	# every queue, both ends: a quarter of its depth, at least 4, but no
	# more than 8 MiB of max_io buffers (at least 2), at most the depth
	check_eq "$(awk '$1 == "depth:" { d = $2 } $1 == "mr_pages:" { p = $2 } $1 == "large_sets:" { n++
			w = int(d / 4); if (w < 4) w = 4; b = int(8388608 / ((p - 1) * 4096)); if (b < 2) b = 2
			if (w > b) w = b; if (w > d) w = d; if ($2 != w) bad++ }
		END { print n + 0 " " bad + 0 }' "$KRT_DBG/conns" | sed 's/^[1-9][0-9]* /n /')" "n 0" \
		"queues whose large sets are not min(max(depth/4, 4), 8 MiB/max_io)"
	w0=$(sum_q lg large_waits)
	d0=$(sum_all large_deferred)
	s0=$(sum_q lg reqs_sent)
	# 65536 bytes fit a slot's own set: no wait for a large one
	run_ok x xfer lg op write size 64k count 64 depth 32 || return 1
	check_eq "$(j x ok)/$(j x mismatches)/$(j x errors)" "64/0/0" "64 KiB writes"
	check_eq "$(($(sum_q lg large_waits) - w0))" 0 "64 KiB: waits for a large set"
	run_ok x xfer lg op write size $lg count 48 depth 32 || return 1
	check_eq "$(j x ok)/$(j x mismatches)/$(j x errors)" "48/0/0" "$lg writes, 32 at once"
	run_ok x xfer lg op read size 300k count 48 depth 32 || return 1
	check_eq "$(j x ok)/$(j x mismatches)/$(j x errors)" "48/0/0" "300 KiB reads, 32 at once"
	# small requests go past large ones waiting for a set, at both ends
	"$KRTCTL" -j xfer lg op write size $lg count 64 depth 32 > "$TMPD/big" 2>&1 &
	run_ok x xfer lg op read size 4k count 400 depth 16 || return 1
	wait $!
	check_eq "$(j x ok)/$(j x mismatches)/$(j x errors)" "400/0/0" "4 KiB reads beside $lg writes"
	check_eq "$(j big ok)/$(j big mismatches)/$(j big errors)" "64/0/0" "$lg writes beside 4 KiB reads"
	check_eq "$(($(sum_q lg reqs_sent) - s0))" 624 "requests sent"
	check_eq "$(sum_q lg waiting)/$(sum_q lg inflight)" "0/0" "waiting/in flight after"
	[ "$(($(sum_q lg large_waits) - w0))" -gt 0 ] || fail "the client never waited for a large set"
	[ "$(($(sum_all large_deferred) - d0))" -gt 0 ] || fail "the server never deferred for a large set"
	diag "large sets: client waits $(($(sum_q lg large_waits) - w0)), server deferrals $(($(sum_all large_deferred) - d0))"
}

# A client keeps fewer MRs than slots (mr_ios, by default half its depth
# but at least 32): a data request of up to 17 pages not sent inline
# finding none free waits for one (mr_waits), and requests that need no
# MR (pings, inline writes) are sent past those waiting.  The server
# holds its transfers (fault/stall_data, and the replies queued behind
# them), so 32 reads keep the 32 MRs meanwhile.
# mw's 32 pool MRs all used, 32 reads waiting; at least N sent since s0
mw_holding() { [ "$(qfield mw 0 pool_mrs_used)/$(qfield mw 0 waiting)" = 32/32 ]; }
mw_sent() { [ "$(($(sum_q mw reqs_sent) - s0))" -ge "$1" ]; }
mr_pool() {
	local w0 s0 i0 q1 q2 q3
	check_eq "$(cat /sys/module/krt/parameters/mr_ios)" 0 "mr_ios default"
	"$KRTCTL" peer add mw addr "$A" conns 1 depth 64 || fail "peer add mw"
	wait_peer mw active 1 || { fail "mw not up"; return 1; }
	check_eq "$(qfield mw 0 pool_mrs)" 32 "client pool MRs at depth 64"
	w0=$(sum_q mw mr_waits)
	s0=$(sum_q mw reqs_sent)
	i0=$(sum_q mw inline_writes)
	echo $((20000 * KRT_TS > 60000 ? 60000 : 20000 * KRT_TS)) > "$KRT_DBG/fault/stall_data"
	"$KRTCTL" -j xfer mw op read size 4k count 64 depth 64 timeout 300000 > "$TMPD/rd" 2>&1 &
	q1=$!
	busywait $((15000 * KRT_TS)) mw_holding
	check_eq "$(qfield mw 0 pool_mrs_used)/$(qfield mw 0 waiting)" "32/32" \
		"MRs used/reads waiting behind the stall"
	check_eq "$(($(sum_q mw mr_waits) - w0))" 32 "reads that waited for an MR"
	# 16 inline writes at once and a ping: sent while the reads wait
	"$KRTCTL" -j xfer mw op write size 511 count 16 depth 16 timeout 300000 > "$TMPD/wr" 2>&1 &
	q2=$!
	"$KRTCTL" -j ping mw count 4 timeout 300000 > "$TMPD/pg" 2>&1 &
	q3=$!
	busywait $((15000 * KRT_TS)) mw_sent 49
	check_eq "$(($(sum_q mw reqs_sent) - s0))/$(qfield mw 0 waiting)/$(qfield mw 0 pool_mrs_used)" "49/32/32" \
		"sent (32 reads, 16 writes, a ping)/reads still waiting/MRs used"
	check_eq "$(($(sum_q mw inline_writes) - i0))" 16 "the writes sent inline (no MR)"
	kill -0 $q1 2> /dev/null || fail "the reads ended before the stall did"
	echo 0 > "$KRT_DBG/fault/stall_data"
	wait $q1 $q2 $q3
	check_eq "$(j rd ok)/$(j rd mismatches)/$(j rd errors)" "64/0/0" "4 KiB reads, 64 at once on 32 MRs"
	check_eq "$(j wr ok)/$(j wr mismatches)/$(j wr errors)" "16/0/0" "inline writes past them"
	check_eq "$(j pg ok)/$(j pg errors)" "4/0" "pings past them"
	check_eq "$(($(sum_q mw reqs_sent) - s0))" 84 "requests sent"
	check_eq "$(qfield mw 0 pool_mrs_used)/$(sum_q mw waiting)/$(sum_q mw inflight)" "0/0/0" \
		"pool MRs used/waiting/in flight after"
	"$KRTCTL" peer del mw
}

concurrency() {
	local d0 s0
	d0=$(sum_q dp reqs_done)
	s0=$(sum_q dp reqs_sent)
	run_ok x xfer dp op write size 4k count 3000 threads 8 depth 32 || return 1
	check_eq "$(j x ok)/$(j x errors)/$(j x mismatches)/$(j x double_completions)" "3000/0/0/0" "8 threads"
	run_ok x xfer dp op read size 2000 count 2000 threads 8 depth 32 || return 1
	check_eq "$(j x ok)/$(j x errors)/$(j x mismatches)/$(j x double_completions)" "2000/0/0/0" "8 threads read"
	check_eq "$(($(sum_q dp reqs_sent) - s0))" 5000 "requests sent (debugfs)"
	check_eq "$(($(sum_q dp reqs_done) - d0))" 5000 "requests completed (debugfs)"
	check_eq "$("$KRTCTL" -j conn show peer dp | jq '[.[].inflight] | add')" 0 "in flight after"
	# every connection was used (round-robin)
	check_eq "$("$KRTCTL" -j conn show peer dp | jq length)" 4 "conns"
	awk '/^dp\// { q = 1; next } /^[^ ]/ { q = 0 } q && $1 == "reqs_sent:" && $2 == 0 { bad = 1 }
		END { exit bad }' "$KRT_DBG/conns" || fail "a connection took no request"
	# the fewest-in-flight policy spreads a burst over every connection too
	"$KRTCTL" peer set dp policy min-inflight || fail "policy min-inflight"
	s0=$(awk '/^dp\// { q = 1; n++; next } /^[^ ]/ { q = 0 } q && $1 == "reqs_sent:" { print n, $2 }' "$KRT_DBG/conns")
	run_ok x xfer dp op read size 4k count 800 threads 4 depth 16
	check_eq "$(j x ok)/$(j x double_completions)" "800/0" "min-inflight"
	awk -v before="$s0" 'BEGIN { n = split(before, b, "\n"); for (i = 1; i <= n; i++) { split(b[i], f, " "); was[f[1]] = f[2] } }
		/^dp\// { q = 1; c++; next } /^[^ ]/ { q = 0 } q && $1 == "reqs_sent:" && $2 == was[c] { bad = 1 }
		END { exit bad }' "$KRT_DBG/conns" || fail "min-inflight left a connection idle"
	"$KRTCTL" peer set dp policy rr
}

backpressure() {
	local w0 rnr0 wc0 rs0
	# this case's own: earlier cases reset connections on purpose
	rnr0=$(dp rnr_errors) wc0=$(dp wc_errors) rs0=$(dp resets)
	"$KRTCTL" peer add bp addr "$A" conns 1 depth 4 || { fail "peer add bp"; return 1; }
	wait_peer bp active 1 || { fail "bp not up"; return 1; }
	run_ok x xfer bp op write size 4k count 1500 threads 8 depth 16 || return 1
	check_eq "$(j x ok)/$(j x errors)/$(j x double_completions)" "1500/0/0" "depth 4, 8 x 16 submitters"
	[ "$(sum_q bp waits)" -gt 0 ] || fail "nothing waited: $(cat "$KRT_DBG/conns")"
	run_ok x ping bp count 200 size 3000
	check_eq "$(($(dp rnr_errors) - rnr0))/$(($(dp wc_errors) - wc0))/$(($(dp resets) - rs0))" "0/0/0" \
		"RNR, work completion errors, resets"
	if rdma statistic show link krt_dp0/1 > "$TMPD/hw" 2>/dev/null; then
		for c in rcvd_rnr_err send_rnr_err; do
			v=$(tr ' ' '\n' < "$TMPD/hw" | grep -A1 -x "$c" | tail -1)
			[ -z "$v" ] || check_eq "$v" 0 "rxe $c"
		done
	fi
	# non-blocking: refused at once with EAGAIN, the rest completes
	w0=$(sum_q bp waits)
	run_ok x xfer bp op write size 4k count 1000 threads 8 depth 16 nowait
	[ "$(j x eagain)" -gt 0 ] || fail "nowait: nothing refused"
	check_eq "$(( $(j x ok) + $(j x eagain) ))/$(j x errors)" "1000/0" "nowait: ok + EAGAIN"
	check_eq "$(sum_q bp waits)" "$w0" "nowait requests never wait"
	"$KRTCTL" peer del bp
}

limits() {
	run_fail x xfer dp op read size 2M count 2
	check_eq "$(j x first_error_name)/$(j x errors)" "Message too long/2" "2 MiB over max_io"
	"$KRTCTL" ping dp count 1 size 5000 > "$TMPD/o" 2>&1
	check_eq "$?" 2 "ping over the message size: refused by krtctl"
	grep -q "size over 4036 bytes" "$TMPD/o" || fail "ping over the message size: $(cat "$TMPD/o")"
	"$KRTCTL" xfer dp op read size 17M > "$TMPD/o" 2>&1 && fail "17M accepted"
	grep -q "Error:" "$TMPD/o" || fail "17M: $(cat "$TMPD/o")"
	"$KRTCTL" xfer dp op write size 0 > "$TMPD/o" 2>&1 && fail "size 0 accepted"
	grep -q "xfer needs a size" "$TMPD/o" || fail "size 0: $(cat "$TMPD/o")"
	"$KRTCTL" xfer nosuch op read > "$TMPD/o" 2>&1 && fail "unknown peer accepted"
	grep -q "no such peer" "$TMPD/o" || fail "unknown peer: $(cat "$TMPD/o")"
	run_fail x ping "$("$KRTCTL" -j peer show | jq -r '[.[] | select(.direction == "inbound")][0].name')" count 1
	check_eq "$(j x first_error_name)" "Transport endpoint is not connected" "requests to an inbound peer"
	check_eq "$(dp malformed)" 0 "nothing malformed so far"
}

deadline_no_data() {
	local l0 t0
	l0=$(dp late_replies)
	t0=$(dp timeouts)
	echo 1 > "$KRT_DBG/fault/hold_replies"
	run_fail x ping dp count 3 timeout 300
	echo 0 > "$KRT_DBG/fault/hold_replies"
	check_eq "$(j x errors)/$(j x first_error_name)" "3/Connection timed out" "held pings"
	check_eq "$(($(dp timeouts) - t0))" 3 "timeouts counted"
	busywait 5000 bash -c "[ \$(awk '\$1 == \"late_replies:\" { print \$2 }' $KRT_DBG/dp) = $((l0 + 3)) ]" ||
		fail "late replies: $(dp late_replies), want $((l0 + 3))"
	check_eq "$("$KRTCTL" -j peer show dp | jq -r '.[0].conns_up')" 4 "connections stay up" ||
		diag "$(cat "$KRT_DBG/dp"; grep -i -e error -e disconn "$TMPD/events" | head; dmesg | grep krt: | tail -5)"
	run_ok x ping dp count 20
	check_eq "$(j x ok)" 20 "pings after the late replies"
}

# An inline write named by its pages (3000 bytes: over a slot's 512-byte
# buffer) that times out before its SEND completed (fault/hold_sends
# holds the completion 3 s) ends with -ETIMEDOUT once the SEND does, its
# pages unmapped first, and resets nothing; its reply, held by the test
# service, comes late.
deadline_inline_send() {
	local r0 t0 l0 w0 ts dt
	r0=$(dp resets)
	t0=$(dp timeouts)
	l0=$(dp late_replies)
	w0=$(sum_q dp inline_writes)
	echo 1 > "$KRT_DBG/fault/hold_replies"
	echo $((3000 * KRT_TS)) > "$KRT_DBG/fault/hold_sends"
	ts=$(date +%s%N)
	run_fail x xfer dp op write size 3000 count 1 timeout 300
	dt=$((($(date +%s%N) - ts) / 1000000))
	echo 0 > "$KRT_DBG/fault/hold_sends"
	echo 0 > "$KRT_DBG/fault/hold_replies"
	check_eq "$(j x errors)/$(j x first_error_name)" "1/Connection timed out" "inline write behind its held SEND"
	check_eq "$(($(sum_q dp inline_writes) - w0))" 1 "sent inline"
	[ "$dt" -ge $((2500 * KRT_TS)) ] || fail "it ended after $dt ms: before its SEND completed"
	check_eq "$(($(dp timeouts) - t0))" 1 "timeouts counted"
	busywait 5000 bash -c "[ \$(awk '\$1 == \"late_replies:\" { print \$2 }' $KRT_DBG/dp) = $((l0 + 1)) ]" ||
		fail "late replies: $(dp late_replies), want $((l0 + 1))"
	check_eq "$(($(dp resets) - r0))" 0 "connections reset"
	check_eq "$("$KRTCTL" -j peer show dp | jq -r '.[0].conns_up')" 4 "connections stay up"
	run_ok x xfer dp op write size 3000 count 20 depth 4
	check_eq "$(j x ok)/$(j x mismatches)" "20/0" "inline writes after"
	diag "ended after $dt ms, the SEND held $((3000 * KRT_TS)) ms"
}

deadline_data() {
	local r0
	r0=$(dp resets)
	echo 1 > "$KRT_DBG/fault/hold_replies"
	run_fail x xfer dp op read size 64k count 1 timeout 300
	echo 0 > "$KRT_DBG/fault/hold_replies"
	check_eq "$(j x errors)/$(j x first_error_name)" "1/Connection timed out" "held read"
	check_eq "$(($(dp resets) - r0 > 0))" 1 "the connection of a timed-out data request is reset"
	dmesg | grep -q "resetting the connection: request with data timed out" || fail "reset not logged"
	# the reset connection comes back by itself
	wait_peer dp active 4 || fail "want 4 of 4 up again: $("$KRTCTL" peer show dp)"
	[ "$("$KRTCTL" -j conn show peer dp | jq '[.[].reconnects] | add')" -ge 1 ] ||
		fail "no reconnect counted: $("$KRTCTL" conn show peer dp)"
	run_ok x xfer dp op read size 64k count 20 depth 4
	check_eq "$(j x ok)" 20 "reads after the reconnect"
}

malformed() {
	local k m0 up pid
	"$KRTCTL" peer add mf addr "$A" conns 8 depth 8 || { fail "peer add mf"; return 1; }
	wait_peer mf active 8 || { fail "mf not up"; return 1; }
	up=8
	# requests corrupted: magic, version, length, opcode, data length,
	# credits, inline data of no write, inline data over the message; with
	# noretry the request fails, else it is re-sent on another connection;
	# the reset connection comes back either way
	for k in 1 2 3 4 5 6 7 8; do
		m0=$(dp malformed)
		echo $k > "$KRT_DBG/fault/corrupt_msg"
		run_fail x ping mf count 1 timeout 60000 noretry
		check_eq "$(j x first_error_name)" "Connection reset by peer" "kind $k: noretry request fails"
		check_eq "$(($(dp malformed) - m0))" 1 "kind $k: counted once"
		run_ok x ping mf count 10
		check_eq "$(j x ok)" 10 "kind $k: other connections unaffected"
		wait_peer mf active $up || fail "kind $k: not back to $up up: $("$KRTCTL" peer show mf)"
		m0=$(dp malformed)
		echo $k > "$KRT_DBG/fault/corrupt_msg"
		run_ok x ping mf count 1 timeout 60000
		check_eq "$(j x ok)/$(j x resent)" "1/1" "kind $k: request re-sent and answered"
		check_eq "$(($(dp malformed) - m0))" 1 "kind $k: re-send counted once"
		wait_peer mf active $up || fail "kind $k: not back after the re-send: $("$KRTCTL" peer show mf)"
	done
	# a corrupted reply is caught by the client
	m0=$(dp malformed)
	echo 1 > "$KRT_DBG/fault/hold_replies"
	"$KRTCTL" -j ping mf count 1 timeout 60000 > "$TMPD/bg" 2>&1 &
	pid=$!
	busywait 5000 bash -c "[ \$($KRTCTL -j conn show peer mf | jq '[.[].inflight] | add') = 1 ]" ||
		fail "request not in flight"
	echo 3 > "$KRT_DBG/fault/corrupt_msg"
	echo 0 > "$KRT_DBG/fault/hold_replies"
	wait $pid
	check_eq "$(jq -r '"\(.ok)/\(.resent)"' "$TMPD/bg")" "1/1" "corrupted reply: the request is re-sent"
	check_eq "$(($(dp malformed) - m0))" 1 "corrupted reply counted"
	check_eq "$(jq -r .double_completions "$TMPD/bg")" 0 "completed once"
	"$KRTCTL" peer del mf
}

teardown_in_flight() {
	local pid
	echo 1 > "$KRT_DBG/fault/hold_replies"
	"$KRTCTL" -j xfer dp op write size 4k count 48 threads 4 depth 16 timeout 60000 > "$TMPD/bg" 2>&1 &
	pid=$!
	busywait 10000 bash -c "[ \$($KRTCTL -j conn show peer dp | jq '[.[].inflight] | add') -gt 0 ]" ||
		fail "nothing in flight"
	"$KRTCTL" peer del dp || fail "peer del with requests in flight"
	wait $pid
	echo 0 > "$KRT_DBG/fault/hold_replies"
	check_eq "$(jq -r '"\(.ok)/\(.errors)/\(.double_completions)"' "$TMPD/bg")" "0/48/0" "every request failed once"
	check_eq "$(jq -r .first_error_name "$TMPD/bg")" "Cannot send after transport endpoint shutdown" \
		"error of a deleted peer (ESHUTDOWN)"
	busywait 10000 bash -c "[ \$(rdma resource show qp | grep -c 'comm \[rdma_cm\]') = 0 ]" ||
		fail "QPs left"
	check_eq "$(rdma resource show mr 2>/dev/null | grep -c 'comm \[krt\]')" 0 "MRs left"
}

rmmod_in_flight() {
	local pid
	"$KRTCTL" peer add rm addr "$A" conns 2 depth 16 || { fail "peer add"; return 1; }
	wait_peer rm active 2 || { fail "rm not up"; return 1; }
	echo 1 > "$KRT_DBG/fault/hold_replies"
	"$KRTCTL" -j xfer rm op read size 16k count 16 depth 8 timeout 60000 > "$TMPD/bg" 2>&1 &
	pid=$!
	busywait 10000 bash -c "[ \$($KRTCTL -j conn show peer rm | jq '[.[].inflight] | add') -gt 0 ]" ||
		fail "nothing in flight"
	unload_krt || return 1
	wait $pid
	check_eq "$(jq -r '"\(.ok)/\(.errors)/\(.double_completions)"' "$TMPD/bg")" "0/16/0" "requests at rmmod"
	check_eq "$(jq -r .first_error_name "$TMPD/bg")" "Cannot send after transport endpoint shutdown" \
		"error at unload (ESHUTDOWN)"
	check_eq "$(rdma resource show qp | grep -c 'comm \[rdma_cm\]')" 0 "QPs after rmmod"
}

# The exported API's contract from a ULP's side (selftests/krt_api): what
# krt_submit() must refuse (a segment whose offset + length wraps a u32,
# oversized or empty segments, gaps, ...), intact two-page transfers, and
# a service's second reply, and one through a handle already answered,
# refused, with one completion for the client
api_contract() {
	local ko=$KRT_ROOT/selftests/krt_api/krt_api_test.ko m0 s0 g0 d0 n0 out
	[ -f "$ko" ] || { fail "$ko not built"; return 1; }
	m0=$(dp api_misuse)
	s0=$(dp stale_refs) g0=$(dp stale_refs_gone) d0=$(dp replies_dropped)
	n0=$("$KRTCTL" -j conn show | jq length)
	dmesg_mark
	insmod "$ko" peer=dp || fail "krt_api_test failed its load (a case failed)"
	out=$(dmesg | tail -n +$((DMESG0 + 1)) | sed -n 's/.*krt_api_test: //p')
	echo "$out" | grep -E '^(not )?ok |^# ' | sed 's/^/# api: /'
	check_eq "$(echo "$out" | grep -c '^ok ')/$(echo "$out" | grep -c '^not ok ')" 32/0 "API cases passed/failed"
	check_eq "$(($(dp api_misuse) - m0))" 3 \
		"api_misuse: the second reply, the stale pointer, the ref during a transfer"
	check_eq "$(($(dp stale_refs) - s0))" 4 "stale refs refused: answered, reused, zero, connection freed"
	check_eq "$(($(dp stale_refs_gone) - g0))" 2 "of which with no queue: zero, connection freed"
	check_eq "$(($(dp replies_dropped) - d0))" 1 "the late reply by ref dropped"
	dmesg | tail -n +$((DMESG0 + 1)) | grep -q 'reply to a request not with its service, from krt_at_request' ||
		fail "krt's log does not name the service that replied twice"
	rmmod krt_api_test 2> /dev/null
	check_eq "$(sum_q dp malformed)" 0 "nothing malformed on the wire"
	# the held request's deadline reset one connection: back up, and its
	# old server end gone (later cases sum counters over all connections)
	back_up dp 4 "after the ref reset case"
	busywait $((20000 * KRT_TS)) bash -c "[ \$($KRTCTL -j conn show | jq length) = $n0 ]" ||
		fail "connections: $("$KRTCTL" -j conn show | jq length), want $n0 as before"
}

# check_inline on: every inline SEND is checked (rxe uses virtual addresses
# as DMA addresses, so this shows the check runs, not that they differ)
inline_checked() {
	local p=/sys/module/krt/parameters/check_inline c0 b0 inl
	inl=$(awk '$1 == "max_inline:" { print $2; exit }' "$KRT_DBG/conns")
	[ "${inl:-0}" -gt 0 ] || { fail "no inline data on these connections (max_inline ${inl:-?})"; return 1; }
	echo 1 > "$p" || { fail "cannot set check_inline"; return 1; }
	c0=$(dp inline_checked)
	b0=$(dp inline_bad)
	# a read's reply is a bare header (its request carries xfer's message)
	run_ok x xfer dp op read size 4k count 50
	check_eq "$(j x ok)/$(j x errors)/$(j x mismatches)" "50/0/0" "reads with check_inline"
	echo 0 > "$p"
	diag "max_inline $inl, inline SENDs checked: $(($(dp inline_checked) - c0))"
	[ $(($(dp inline_checked) - c0)) -ge 50 ] ||
		fail "$(($(dp inline_checked) - c0)) inline SENDs checked for 50 reads, want >= 50 (the replies)"
	check_eq "$(($(dp inline_bad) - b0))" 0 "inline SENDs failing the check"
	c0=$(dp inline_checked)
	run_ok x xfer dp op read size 4k count 5
	check_eq "$(($(dp inline_checked) - c0))" 0 "no checks with check_inline off"
}

no_service() {
	load_krt || return 1
	"$KRTCTL" listen add "$A" || fail "listen add"
	"$KRTCTL" peer add ns addr "$A" conns 1 || fail "peer add"
	wait_peer ns active 1 || { fail "ns not up"; return 1; }
	run_fail x ping ns count 2
	check_eq "$(j x errors)/$(j x first_error_name)" "2/Protocol not supported" "no test service loaded"
	"$KRTCTL" peer del ns
	unload_krt
}

ktap_plan 21
run_case setup setup
run_case ping_payload_verified ping_verified
run_case integrity_1B_511B_4K_64K+1_1M_read_write integrity
run_case api_contract_from_a_ulp api_contract
run_case check_inline_checks_every_inline_send inline_checked
run_case local_invalidate_path local_invalidate
run_case server_transfers_with_and_without_mr srv_paths
run_case small_writes_inline_data inline_writes
run_case server_completions_on_workqueue srv_poll_wq
run_case large_buffers_share_few_large_sets large_sets
run_case client_mr_pool_smaller_than_depth mr_pool
run_case concurrency_8_threads_exactly_once concurrency
run_case backpressure_depth_4_no_rnr backpressure
run_case limits_emsgsize_enotconn limits
run_case deadline_late_reply_discarded deadline_no_data
run_case deadline_inline_write_ends_with_its_send deadline_inline_send
run_case deadline_with_data_resets_conn deadline_data
run_case malformed_counted_conn_reset malformed
run_case peer_del_with_requests_in_flight teardown_in_flight
run_case rmmod_with_requests_in_flight rmmod_in_flight
run_case unknown_service_answered no_service
ktap_finish
