#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connection pools in one guest: the node connects to its own rxe address
# (rxe loops it back), so each outbound pool has a matching inbound peer.
. "$(dirname "$0")/lib.sh"

A=""	# the rxe device's address

setup() {
	load_krt || return 1
	rxe_add krt_po0 || { fail "rxe_add"; return 1; }
	A=$(ip -4 -o addr show dev "$(awk '$1 == "krt_po0" { print $2 }' "$TMPD/rxe")" |
	    awk '{ sub("/.*", "", $4); print $4 }')
	[ -n "$A" ] || { fail "no address on the rxe interface"; return 1; }
	"$KRTCTL" listen add "$A" || fail "listen add $A"
}

peer_json() { "$KRTCTL" -j peer show "$1" | jq -r ".[0].$2"; }
# conn_failed PEER: the first connection failed and is retrying (error,
# waiting to reconnect, or on its next attempt), with a reason
conn_failed() {
	busywait "${2:-10000}" bash -c "$KRTCTL -j conn show peer $1 | jq -e '.[0] | (.state == \"error\" or .state == \"reconnecting\" or .state == \"connecting\") and (.reason // \"\") != \"\"' > /dev/null"
}
inbound() { "$KRTCTL" -j peer show | jq -r '[.[] | select(.direction == "inbound")][0].name // ""'; }
# QPs of krt's connections: rdma_cm creates them (comm [rdma_cm]) on
# krt's cm ids (comm [krt]); count the ids that have a QP, and check the QP
krt_qps() {
	local n=0 q
	for q in $(rdma resource show cm_id | grep 'comm \[krt\]' | sed -n 's/.* lqpn \([0-9]*\) .*/\1/p'); do
		rdma resource show qp lqpn "$q" 2>/dev/null | grep -q "lqpn $q " && n=$((n + 1))
	done
	echo $n
}

listeners() {
	"$KRTCTL" -j listen show | jq -e --arg a "$A" '.[] | select(.addr == $a and .port == 7471)' > /dev/null ||
		fail "listener on $A:7471 not shown"
	"$KRTCTL" listen add "$A" > "$TMPD/out" 2>&1 && fail "duplicate listener accepted"
	grep -q "already listening" "$TMPD/out" || fail "duplicate: $(cat "$TMPD/out")"
	"$KRTCTL" listen add "$A" port 7999 || fail "second listener on port 7999"
	check_eq "$("$KRTCTL" -j listen show | jq length)" 2 "listeners"
	"$KRTCTL" listen del "$A" port 7999 || fail "listen del"
	"$KRTCTL" listen del "$A" port 7999 > "$TMPD/out" 2>&1 && fail "deleting a missing listener succeeded"
	grep -q "no listener there" "$TMPD/out" || fail "missing: $(cat "$TMPD/out")"
	"$KRTCTL" listen add 169.254.250.9 > "$TMPD/out" 2>&1 && fail "listening on a non-local address succeeded"
	grep -q "Error: krt: cannot bind" "$TMPD/out" || fail "non-local: $(cat "$TMPD/out")"
	check_eq "$("$KRTCTL" -j listen show | jq length)" 1 "listeners after the errors"
}

pool_of_4() {
	local in qpns q
	"$KRTCTL" peer add p4 addr "$A" conns 4 depth 64 || { fail "peer add"; return 1; }
	wait_peer p4 active 4 || fail "p4 not active 4/4: $("$KRTCTL" peer show p4)"
	in=$(inbound)
	[ -n "$in" ] || { fail "no inbound peer"; return 1; }
	wait_peer "$in" active 4 || fail "inbound not active 4/4: $("$KRTCTL" peer show "$in")"
	check_eq "$(peer_json p4 conns)" 4 "p4 pool size"
	check_eq "$(peer_json p4 depth)" 64 "p4 depth"
	check_eq "$(peer_json p4 node_id)" "$(peer_json "$in" node_id)" "node id learnt from the accept"
	check_eq "$("$KRTCTL" -j conn show peer p4 | jq '[.[] | select(.state == "active" and .depth == 64 and .dev == "krt_po0")] | length')" 4 "active p4 connections"
	check_eq "$("$KRTCTL" -j conn show | jq length)" 8 "connections in all"
	check_eq "$(krt_qps)" 8 "krt QPs in rdma resource show"
	qpns=$("$KRTCTL" -j conn show | jq -r '.[].qpn')
	for q in $qpns; do
		rdma resource show qp lqpn "$q" 2>/dev/null | grep -q "lqpn $q .*state RTS" ||
			fail "qpn $q of conn show not in rdma resource show qp"
	done
	"$KRTCTL" conn show peer p4 | grep -q "^p4/3: state active dev krt_po0 laddr $A lport " ||
		fail "plain conn show: $("$KRTCTL" conn show peer p4)"
}

resize() {
	local in
	in=$(inbound)
	"$KRTCTL" peer set p4 conns 8 || fail "set conns 8"
	wait_peer p4 active 8 || fail "not 8/8: $("$KRTCTL" peer show p4)"
	wait_peer "$in" active 8 || fail "inbound not 8/8"
	check_eq "$(krt_qps)" 16 "QPs with 8 connections"
	"$KRTCTL" peer set p4 conns 2 || fail "set conns 2"
	wait_peer p4 active 2 || fail "not 2/2: $("$KRTCTL" peer show p4)"
	busywait 10000 bash -c "[ \$(rdma resource show qp | grep -c 'comm \[rdma_cm\]') = 4 ]" ||
		fail "QPs after shrinking to 2: $(krt_qps)"
	wait_peer "$in" active 2 || fail "inbound not 2/2: $("$KRTCTL" peer show "$in")"
	check_eq "$("$KRTCTL" -j conn show peer p4 | jq -r '[.[].index] | join(",")')" "0,1" "indices kept"
	"$KRTCTL" peer set p4 policy min-inflight depth 32 || fail "set policy, depth"
	check_eq "$(peer_json p4 policy)" min-inflight "policy"
	"$KRTCTL" peer del p4 || fail "peer del"
	busywait 10000 bash -c "[ \$(rdma resource show qp | grep -c 'comm \[rdma_cm\]') = 0 ]" || fail "QPs left: $(krt_qps)"
	busywait 10000 bash -c "[ -z \"\$($KRTCTL -j peer show | jq -r '.[].name')\" ]" ||
		fail "peers left: $("$KRTCTL" peer show)"
}

res_counts() {
	local t
	printf 'qp=%s ' "$(rdma resource show qp 2>/dev/null | grep -c 'comm \[rdma_cm\]')"
	for t in cq mr pd cm_id; do
		printf '%s=%s ' "$t" "$(rdma resource show "$t" 2>/dev/null | grep -c 'comm \[krt\]')"
	done
}

cycles() {
	local base i
	base=$(res_counts)
	for i in $(seq "${KRT_POOL_CYCLES:-100}"); do
		"$KRTCTL" peer add cy addr "$A" conns 4 || { fail "cycle $i: peer add"; return 1; }
		wait_peer cy active 4 || { fail "cycle $i: not active: $("$KRTCTL" conn show)"; return 1; }
		"$KRTCTL" peer del cy || { fail "cycle $i: peer del"; return 1; }
	done
	# and 20 that tear down while connecting
	for i in $(seq 20); do
		"$KRTCTL" peer add cz addr "$A" conns 4 || { fail "quick cycle $i: add"; return 1; }
		"$KRTCTL" peer del cz || { fail "quick cycle $i: del"; return 1; }
	done
	# a connection accepted for a pool deleted while connecting is dropped
	# by the server side's handshake bound (10 s)
	busywait 30000 bash -c "[ -z \"\$($KRTCTL -j peer show | jq -r '.[].name')\" ]" ||
		fail "peers left: $("$KRTCTL" peer show)"
	busywait 20000 bash -c "[ '$base' = \"\$(. $KRT_ROOT/selftests/lib.sh; $(declare -f res_counts); res_counts)\" ]" ||
		fail "resources: before '$base', after '$(res_counts)'"
}

# expect_err WANT_TEXT CMD...: the command fails and prints WANT_TEXT
expect_err() {
	local want=$1
	shift
	if "$KRTCTL" "$@" > "$TMPD/out" 2>&1; then
		fail "'$*' succeeded"
	elif ! grep -q -- "$want" "$TMPD/out"; then
		fail "'$*': want '$want', got '$(cat "$TMPD/out")'"
	fi
}

bad_input() {
	local before in
	"$KRTCTL" peer add bi addr "$A" conns 1 || fail "peer add bi"
	wait_peer bi active 1 || fail "bi not active"
	expect_err "Error: krt: a peer of that name exists." peer add bi addr "$A"
	expect_err "Error: krt: no such peer." peer del nope
	expect_err "Error: krt: no such peer." peer set nope conns 2
	expect_err "Error: no such peer." peer show nope
	expect_err "Error: conns: must be at least 1." peer add b1 addr "$A" conns 0
	expect_err "Error: depth: must be 2..4096." peer add b1 addr "$A" depth 1
	expect_err "Error: depth: must be 2..4096." peer add b1 addr "$A" depth 5000
	expect_err "Error: port: must not be 0." peer add b1 addr "$A" port 0
	expect_err "Error: addr: must be" peer add b1 addr 0.0.0.0
	expect_err "not an IPv4 or IPv6 address" peer add b1 addr 300.1.1.1
	expect_err "Error: name: must not be empty" peer add in-x addr "$A"
	expect_err 'peer add: missing "addr IP"' peer add b1 port 5
	expect_err "more connections than max_peer_conns" peer add b1 addr "$A" conns 65
	expect_err "nothing to set" peer set bi
	in=$(inbound)
	expect_err "inbound peer" peer set "$in" conns 3
	# max_conns bounds outbound connections (bi has 1)
	echo 3 > /sys/module/krt/parameters/max_conns
	expect_err "total connection limit (max_conns) reached" peer add b1 addr "$A" conns 3
	echo 1024 > /sys/module/krt/parameters/max_conns
	before=$("$KRTCTL" -j peer show | jq -r '[.[].name] | sort | join(" ")')
	check_eq "$before" "bi $in" "no half-created peer"
	check_eq "$(krt_qps)" 2 "QPs after the refused requests"
	"$KRTCTL" peer del bi
}

unreachable() {
	local t0=$SECONDS
	# loss_timeout past the 6 s the failure may take to show on a loaded
	# host, so that "reconnecting" comes before "down"
	"$KRTCTL" peer add un addr 169.254.250.1 conns 1 reconnect_ms 200 reconnect_max_ms 400 \
		loss_timeout 8 || { fail "peer add"; return 1; }
	conn_failed un || fail "not failed: $("$KRTCTL" conn show peer un)"
	[ $((SECONDS - t0)) -le 6 ] || fail "took $((SECONDS - t0)) s, resolve timeout is 2 s"
	"$KRTCTL" -j conn show peer un | jq -r '.[0].reason' | grep -q "address resolution failed" ||
		fail "reason: $("$KRTCTL" -j conn show peer un | jq -r '.[0].reason')"
	check_eq "$(peer_json un state)" reconnecting "peer state while reconnecting"
	"$KRTCTL" peer show un | grep -q "address resolution failed" || fail "peer show lacks the error"
	# it keeps trying, attempt after attempt; past loss_timeout it is down
	busywait 15000 bash -c "[ \$($KRTCTL -j peer show un | jq '.[0].attempt') -ge 2 ]" ||
		fail "no second attempt: $("$KRTCTL" -j peer show un)"
	busywait 15000 bash -c "[ \"\$($KRTCTL -j peer show un | jq -r '.[0].state')\" = down ]" ||
		fail "not down after loss_timeout: $("$KRTCTL" peer show un)"
	diag "unreachable peer: $("$KRTCTL" peer show un | tr '\n' ' ')"
	"$KRTCTL" peer del un
}

# fault/cm_req corrupts our own CONNECT_REQUEST: the passive side (us) must
# reject it with the right reason, count it, and the active side report it.
malformed_private_data() {
	local f want n0
	for f in "1 malformed private data" "2 protocol version mismatch" \
		 "3 malformed private data" "4 malformed private data"; do
		want=${f#* }
		n0=$(awk -F': ' '/^malformed_private_data/ { print $2 }' "$KRT_DBG/cm")
		echo "${f%% *}" > "$KRT_DBG/fault/cm_req"
		"$KRTCTL" peer add mf addr "$A" conns 1 reconnect_ms 1000 || fail "peer add"
		conn_failed mf || fail "fault $f: not rejected: $("$KRTCTL" conn show peer mf)"
		check_eq "$("$KRTCTL" -j conn show peer mf | jq -r '.[0].reason')" "rejected: $want" "fault $f: reason"
		[ -z "$(inbound)" ] || fail "fault $f: a rejected connection created an inbound peer"
		"$KRTCTL" peer del mf
		echo 0 > "$KRT_DBG/fault/cm_req"
		if [ "$want" = "malformed private data" ]; then
			[ "$(awk -F': ' '/^malformed_private_data/ { print $2 }' "$KRT_DBG/cm")" -gt "$n0" ] ||
				fail "fault $f: malformed counter did not move from $n0"
		fi
	done
	grep -q "rejects_sent{protocol version mismatch}: [1-9]" "$KRT_DBG/cm" || fail "version reject not counted"
	# without the fault, a rejected connection comes back by itself
	echo 2 > "$KRT_DBG/fault/cm_req"
	"$KRTCTL" peer add mf addr "$A" conns 1 reconnect_ms 100 reconnect_max_ms 200 || fail "peer add"
	conn_failed mf || fail "not rejected: $("$KRTCTL" conn show peer mf)"
	echo 0 > "$KRT_DBG/fault/cm_req"
	wait_peer mf active 1 || fail "did not recover after the rejects: $("$KRTCTL" peer show mf)"
	"$KRTCTL" peer del mf
}

# the passive side bounds inbound connections separately: with room for
# two more, the third inbound connection of a pool of 3 is rejected as
# "limit"; once there is room again it comes back by itself
passive_limit() {
	local p=/sys/module/krt/parameters/max_inbound_conns n
	n=$(krt_qps)	# our pools connect to ourselves: half of them inbound
	echo $((n / 2 + 2)) > $p
	"$KRTCTL" peer add pl addr "$A" conns 3 reconnect_ms 200 reconnect_max_ms 300 || fail "peer add"
	busywait 20000 bash -c "$KRTCTL -j conn show peer pl | jq -e '[.[] | select(.state == \"active\")] | length == 2' > /dev/null" ||
		fail "want 2 active: $("$KRTCTL" conn show peer pl)"
	busywait 5000 bash -c "$KRTCTL -j conn show peer pl | jq -e '[.[] | select(.reason == \"rejected: connection limit reached\")] | length == 1' > /dev/null" ||
		fail "want 1 refused as limit: $("$KRTCTL" -j conn show peer pl)"
	check_eq "$(peer_json pl state)" degraded "peer state with 2 of 3 up"
	grep -q "rejects_sent{connection limit reached}: [1-9]" "$KRT_DBG/cm" || fail "limit reject not counted"
	echo 256 > $p
	wait_peer pl active 3 || fail "third connection did not come back: $("$KRTCTL" conn show peer pl)"
	"$KRTCTL" peer del pl
}

# the memory budget (issue #10's out-of-memory panic): a connection is
# charged before anything is allocated.  The case that took two guests
# down (24 peers x 4 connections x depth 4096) is refused up front with
# the reason and leaves nothing; 'peer set' over the per-peer cap is
# refused and changes nothing; an inbound connection that does not fit is
# rejected as "out of resources" and comes back by itself once there is
# room; every charge is returned.
mem_total() { dev_field krt_po0 mem_total; }
memory_budget() {
	local b=/sys/module/krt/parameters/mem_budget_mb pc=/sys/module/krt/parameters/peer_mem_mb
	local base pair mib i n=0
	base=$(mem_total)
	"$KRTCTL" peer add mb addr "$A" conns 1 depth 128 || { fail "peer add mb"; return 1; }
	wait_peer mb active 1 || { fail "mb not up"; return 1; }
	pair=$(($(mem_total) - base))	# one connection's two ends, charged
	diag "a depth-128 connection is charged $pair bytes, both ends"
	[ "$pair" -gt $((128 * 12800)) ] || fail "charge $pair below the message buffers of both ends (4 KiB + 512 B client, 8 KiB server, per request)"
	# over the per-peer cap (16 MiB here; by default a quarter of the
	# budget): refused, the pool unchanged
	echo 16 > $pc
	expect_err "per-peer memory cap" peer set mb conns 64
	echo 0 > $pc
	check_eq "$(peer_json mb conns)" 1 "mb conns after a refused set"
	"$KRTCTL" peer del mb
	busywait 20000 bash -c "[ \$($KRTCTL -j dev show krt_po0 | jq '.[0].mem_total') -eq $base ]" ||
		fail "charge not returned: $(mem_total), want $base"
	# the budget of a 1.5 GiB node, whatever this guest has (a quarter of
	# its RAM by default): the per-peer cap, 96 MiB, refuses each peer
	echo 384 > $b
	for ((i = 0; i < 24; i++)); do
		"$KRTCTL" peer add "x$i" addr "$A" conns 4 depth 4096 > "$TMPD/out" 2>&1 && n=$((n + 1))
	done
	echo 0 > $b
	check_eq "$n" 0 "peers of 4 x depth 4096 accepted"
	grep -q "memory" "$TMPD/out" || fail "no memory reason: $(cat "$TMPD/out")"
	check_eq "$("$KRTCTL" -j peer show | jq '[.[] | select(.name | startswith("x"))] | length')" 0 \
		"refused peers left"
	check_eq "$(mem_total)" "$base" "charged after the refusals"
	# room for the outbound end but not the inbound one
	mib=$(((pair * 3 / 4 + 1048575) / 1048576))
	echo "$mib" > $b
	echo "$mib" > $pc
	"$KRTCTL" peer add mb addr "$A" conns 1 depth 128 reconnect_ms 200 reconnect_max_ms 400 ||
		fail "peer add mb within the budget"
	busywait 20000 bash -c "$KRTCTL -j conn show peer mb | jq -e '.[0].reason == \"rejected: out of resources\"' > /dev/null" ||
		fail "want the inbound end rejected as resources: $("$KRTCTL" -j conn show peer mb)"
	grep -q "rejects_sent{out of resources}: [1-9]" "$KRT_DBG/cm" || fail "resources reject not counted"
	[ "$(mem_total)" -le $((mib * 1048576)) ] || fail "charged $(mem_total) over the budget $mib MiB"
	echo 0 > $b
	echo 0 > $pc
	wait_peer mb active 1 || fail "mb did not come back with room: $("$KRTCTL" conn show peer mb)"
	"$KRTCTL" peer del mb
	busywait 20000 bash -c "[ \$($KRTCTL -j dev show krt_po0 | jq '.[0].mem_total') -eq $base ]" ||
		fail "charge not returned at the end: $(mem_total), want $base"
}

# the charge is an estimate from above of what a connection holds, the
# device driver's MRs and queues included (rxe: a 4 KiB page map per MR,
# queues rounded up to a power of two): 8 connections at depth 32, then
# at 128 (both ends here), are charged at least the unreclaimable slab
# (large kmallocs included), vmalloc and per-CPU memory they take, and
# less than twice that.  On a KASAN kernel, which pads every object,
# against half of what they take.  8 connections at depth 128 make the
# device's shared CQs (the device's, kept, not charged) before measuring.
kmem() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
	awk '$1 == "SUnreclaim:" || $1 == "VmallocUsed:" || $1 == "Percpu:" { s += $2 }
		END { print s * 1024 }' /proc/meminfo
}
# kmem once two readings a second apart differ by less than 64 KiB
kmem_settled() {
	local a b i
	a=$(kmem)
	for ((i = 0; i < 15; i++)); do
		sleep 1
		b=$(kmem)
		[ $((b > a ? b - a : a - b)) -lt 65536 ] && { echo "$b"; return 0; }
		a=$b
	done
	echo "# kernel memory still moving after 15 s: $a, then $b" >&2
	echo "$b"
}
# cm_del PEER BASE: delete PEER, wait for the charge to be back at BASE
cm_del() {
	"$KRTCTL" peer del "$1"
	busywait 20000 bash -c "[ \$(\"$KRTCTL\" -j dev show krt_po0 | jq '.[0].mem_total') -eq $2 ]" ||
		{ fail "$1: charge not returned: $(mem_total), want $2"; return 1; }
}
charge_covers() {
	local base k0 k1 used charged clt srv d lim=1
	grep -qw kasan_report /proc/kallsyms && lim=2
	base=$(mem_total)
	"$KRTCTL" peer add cw addr "$A" conns 8 depth 128 || { fail "peer add cw"; return 1; }
	wait_peer cw active 8 || { fail "cw not up"; cm_del cw "$base"; return 1; }
	cm_del cw "$base" || return 1
	for d in 32 128; do
		k0=$(kmem_settled)
		"$KRTCTL" peer add cm addr "$A" conns 8 depth $d || { fail "peer add cm depth $d"; return 1; }
		wait_peer cm active 8 || { fail "cm not up at depth $d"; cm_del cm "$base"; return 1; }
		k1=$(kmem_settled)
		used=$((k1 - k0))
		charged=$(($(mem_total) - base))
		clt=$("$KRTCTL" -j conn show peer cm | jq '.[0].mem')
		srv=$("$KRTCTL" -j conn show peer "$(inbound)" | jq '.[0].mem')
		diag "8 connections at depth $d, both ends: charged $((charged / 1024)) KiB, hold $((used / 1024)) KiB;" \
			"charged per client end $((clt / 1024)) KiB, per server end $((srv / 1024)) KiB"
		[ "$used" -gt $((8 * d * 12800)) ] || fail "depth $d: hold $used B, below their message buffers alone"
		[ "$charged" -ge $((used / lim)) ] || fail "depth $d: charged $charged B, below the $used B they hold"
		[ "$charged" -lt $((2 * used)) ] || fail "depth $d: charged $charged B, twice the $used B they hold or more"
		cm_del cm "$base" || return 1
	done
}

events() {
	local mon=$TMPD/mon.json
	"$KRTCTL" -j monitor > "$mon" 2> "$TMPD/mon.err" &
	KRT_BG_PIDS="$KRT_BG_PIDS $!"
	busywait 5000 grep -q monitoring "$TMPD/mon.err" || { fail "monitor"; return 1; }
	"$KRTCTL" peer add ev addr "$A" conns 2 || fail "peer add"
	wait_peer ev active 2 || fail "not active"
	"$KRTCTL" peer del ev
	busywait 5000 jq -e -s 'map(select(.event == "peer-del" and .peer.name == "ev")) | length == 1' "$mon" > /dev/null ||
		fail "no peer-del event"
	jq -e -s 'map(select(.event == "peer-state" and .peer.name == "ev" and .peer.state == "active")) | length >= 1' "$mon" > /dev/null ||
		fail "no peer-state active event"
	check_eq "$(jq -s '[.[] | select(.event == "conn-state" and .conn.peer == "ev" and .conn.state == "active")] | length' "$mon")" 2 "conn-state active events"
}

# rdma link del under a live pool: every connection fails with the reason,
# its QPs go, the listener on that device waits for it (state waiting),
# nothing oopses; with the device back the listener listens again and the
# pool comes back by itself, with no 'listen add' by hand
device_removal() {
	local ifn
	ifn=$(awk '$1 == "krt_po0" { print $2 }' "$TMPD/rxe")
	"$KRTCTL" peer add dr addr "$A" conns 3 reconnect_ms 3000 reconnect_max_ms 3000 || fail "peer add"
	wait_peer dr active 3 || { fail "not active"; return 1; }
	rdma link del krt_po0 || { fail "rdma link del"; return 1; }
	check_eq "$("$KRTCTL" -j conn show peer dr | jq -r '[.[].state | select(. == "active")] | length')" 0 "active after removal"
	"$KRTCTL" -j conn show peer dr | jq -e '[.[].reason] | index("RDMA device removed")' > /dev/null ||
		fail "reason: $("$KRTCTL" -j conn show peer dr)"
	check_eq "$(peer_json dr state)" reconnecting "peer state"
	check_eq "$(rdma resource show qp 2>/dev/null | grep -c 'comm \[rdma_cm\]')" 0 "QPs after removal"
	check_eq "$("$KRTCTL" -j listen show | jq -c '[.[] | {state, lost}]')" '[{"state":"waiting","lost":1}]' \
		"the listener waits for its device"
	[ -z "$(inbound)" ] || fail "inbound peer left: $("$KRTCTL" peer show)"
	rdma link add krt_po0 type rxe netdev "$ifn" || { fail "rdma link add again"; return 1; }
	# the listener listens again by itself on the new device
	busywait 10000 bash -c "[ \"\$($KRTCTL -j listen show | jq -r '.[0].state')\" = active ]" ||
		fail "listener not back: $("$KRTCTL" listen show)"
	# the pool comes back by itself on the new device
	wait_peer dr active 3 || fail "pool did not come back: $("$KRTCTL" conn show peer dr)"
	"$KRTCTL" peer del dr
	"$KRTCTL" peer add dr2 addr "$A" conns 2 || fail "peer add"
	wait_peer dr2 active 2 || fail "pool on the re-added device: $("$KRTCTL" conn show)"
	"$KRTCTL" peer del dr2
}

unload_with_pools() {
	"$KRTCTL" peer add ul addr "$A" conns 3 || fail "peer add"
	wait_peer ul active 3 || fail "not active"
	unload_krt || return 1
	check_eq "$(rdma resource show qp | grep -c 'comm \[rdma_cm\]')" 0 "QPs after rmmod"
	check_eq "$(rdma resource show cm_id | grep -c 'comm \[krt\]')" 0 "cm ids after rmmod"
}

ktap_plan 14
run_case setup setup
run_case listeners listeners
run_case pool_of_4_matches_rdma_resource pool_of_4
run_case live_resize_4_8_2 resize
run_case "add_del_${KRT_POOL_CYCLES:-100}_cycles_resources_return" cycles
run_case bad_input_clear_errors bad_input
run_case unreachable_reported unreachable
run_case malformed_private_data_rejected malformed_private_data
run_case passive_side_limit_reject passive_limit
run_case memory_budget_bounds_out_and_inbound memory_budget
run_case charge_covers_what_connections_hold charge_covers
run_case events events
run_case device_removal_with_live_pool device_removal
run_case rmmod_with_live_pools unload_with_pools
ktap_finish
