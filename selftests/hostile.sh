#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A hostile remote, in one guest: krt_fuzz speaks krt's protocol from user
# space over rdma_cm and verbs (rxe loopback, a second address on the same
# interface for a second "host") and sends what a correct peer never would.
# krt must reject and count malformed connect data with the right reason,
# bound what a remote asks for (depth, max IO, connections per address and
# in all), refuse an impersonation of a live connection, reset a
# connection on each malformed message header (counted once, resources
# back to their baseline), catch crafted replies on its client side, and
# reset a client that keeps the server's replies waiting for credits,
# keep one peer from using another peer's rkey, and treat an unprivileged
# user's connections the same way.
#
# KRT_FUZZ_PROTO=1 makes krt_fuzz speak protocol version 1 (to exercise
# the mechanics against a version-1 module); the expectations are version
# 2's.
. "$(dirname "$0")/lib.sh"

FZ=$KRT_ROOT/selftests/krt_fuzz
P=${KRT_FUZZ_PROTO:-2}
PORT=7471		# krt's listener
SPORT=7472		# krt_fuzz server
SPORT2=7473		# a second krt_fuzz server: another peer
A=""			# the rxe interface's address
B=""			# a second address on it: another "host"
IFN=""
PARAMS=/sys/module/krt/parameters

# names of krt's reject reasons in debugfs cm, by number
REJ_NAME=([1]="protocol version mismatch" [2]="malformed private data"
	  [3]="connection limit reached" [7]="node, pool and index in use from another address")

# what each crafted message must be refused for (krt's log, queue.c)
declare -A WHY=([bad_magic]="bad magic" [bad_version]="unknown version"
	[short]="shorter than a header" [len_mismatch]="length differs from the bytes received"
	[bad_opcode]="unexpected opcode" [unknown_flags]="unknown flags"
	[inv_without_data]="data fields without data" [read_and_write]="both read and write"
	[data_len_over]="data length over the max IO size"
	[data_len_zero]="data length over the max IO size"
	[data_fields_without_data]="data fields without data"
	[credits_overflow]="more credits than receive buffers"
	[heartbeat_with_data]="heartbeat with data"
	[inline_no_write]="inline data of no write" [inline_with_rkey]="inline data of no write"
	[inline_over_message]="inline data over the message"
	[inline_over_offer]="inline data over the offer")
declare -A RWHY=([tag_out_of_range]="reply tag out of range"
	[wrong_generation]="reply for no request" [duplicate_reply]="reply for no request"
	[reply_with_flags]="flags in a reply" [credits_overflow]="more credits than receive buffers"
	[foreign_inv]="reply invalidated a key it was not given"
	[request_to_client]="unexpected opcode" [reply_short]="shorter than a header")

cm_malformed() { awk -F': ' '$1 == "malformed_private_data" { print $2 }' "$KRT_DBG/cm"; }
cm_rej() {
	local v
	v=$(awk -F': ' -v k="rejects_sent{${REJ_NAME[$1]}}" '$1 == k { print $2 }' "$KRT_DBG/cm")
	echo "${v:-0}"
}
dp() { awk -v f="$1:" '$1 == f { print $2 }' "$KRT_DBG/dp"; }
krt_mrs() { rdma resource show mr 2>/dev/null | grep -c 'comm \[krt\]'; }
inbound_peers() { "$KRTCTL" -j peer show | jq '[.[] | select(.direction == "inbound")] | length'; }
no_inbound() { [ "$(inbound_peers)" = 0 ]; }
# inbound connections of krt from address $1
conns_from() { "$KRTCTL" -j conn show | jq --arg a "$1" '[.[] | select(.raddr == $a)] | length'; }
param() { cat "$PARAMS/$1" 2>/dev/null; }
# set_param NAME VALUE: a runtime limit; fails the case if krt lacks it
set_param() {
	[ -w "$PARAMS/$1" ] || { fail "no writable module parameter $1"; return 1; }
	echo "$2" > "$PARAMS/$1"
}

# fz OUT ARGS...: run krt_fuzz, its output in $TMPD/OUT, shown as diag
fz() {
	local out=$TMPD/$1
	shift
	diag "try: krt_fuzz $*"
	timeout 120 "$FZ" "$@" proto="$P" > "$out" 2>&1
	fz_show "$out"
}
# fz_show FILE: what krt_fuzz saw (a flood's first lines and its summary)
fz_show() {
	if [ "$(wc -l < "$1")" -le 12 ]; then
		sed 's/^/#   saw: /' "$1"
	else
		head -4 "$1" | sed 's/^/#   saw: /'
		echo "#   saw: ... $(grep -c '^accepted' "$1") accepted, $(grep -c '^rejected' "$1") rejected, $(grep -c '^error' "$1") errors"
		tail -2 "$1" | sed 's/^/#   saw: /'
	fi
}
# fz_bg OUT ARGS...: krt_fuzz in the background; its pid in FZ_PID
fz_bg() {
	local out=$TMPD/$1
	shift
	diag "try (background): krt_fuzz $*"
	"$FZ" "$@" proto="$P" > "$out" 2>&1 &
	FZ_PID=$!
	KRT_BG_PIDS="${KRT_BG_PIDS:-} $FZ_PID"
}
# fz_stop: end the background krt_fuzz (SIGTERM: it disconnects and sums up)
fz_stop() {
	[ -n "${FZ_PID:-}" ] || return 0
	kill "$FZ_PID" 2>/dev/null
	wait "$FZ_PID" 2>/dev/null
	FZ_PID=""
}
# results FILE: connection result lines (accepted, rejected, error)
results() { grep -cE '^(accepted|rejected|error)' "$1"; }
# first_result FILE
first_result() { grep -m1 -E '^(accepted|rejected|error)' "$1"; }
# field FILE KEY: KEY=value of the first result line
field() { first_result "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
dmesg_mark() { DMESG0=$(dmesg | wc -l); }
# krt_why: the first "malformed message" reason krt logged since dmesg_mark
krt_why() { dmesg | tail -n +$((DMESG0 + 1)) | sed -n 's/.*malformed message from the peer: //p' | head -1; }
wait_inbound_gone() {
	busywait 20000 no_inbound || fail "inbound peers left: $("$KRTCTL" peer show)"
}

setup() {
	local hex
	[ -x "$FZ" ] || { fail "$FZ not built (make)"; return 1; }
	modprobe -q rdma_ucm || { fail "modprobe rdma_ucm"; return 1; }
	modprobe -q ib_uverbs || { fail "modprobe ib_uverbs"; return 1; }
	load_krt || return 1
	rxe_add krt_ho0 || { fail "rxe_add"; return 1; }
	IFN=$(awk '$1 == "krt_ho0" { print $2 }' "$TMPD/rxe")
	A=$(ip -4 -o addr show dev "$IFN" | awk '{ sub("/.*", "", $4); print $4 }')
	[ -n "$A" ] || { fail "no address on $IFN"; return 1; }
	B=${A%.*}.2
	ip addr add "$B/24" dev "$IFN" || { fail "second address $B"; return 1; }
	# rxe's GID table learns the address asynchronously
	hex=$(printf '%02x%02x:%02x%02x' ${B//./ })
	busywait 10000 bash -c "cat /sys/class/infiniband/krt_ho0/ports/1/gids/* | grep -q ':ffff:$hex\$'" ||
		fail "no GID for $B"
	"$KRTCTL" listen add "$A" || fail "listen add $A"
	diag "krt $(cat "$KRT_DBG/version" 2>/dev/null) listens on $A:$PORT; second address $B;" \
	     "krt_fuzz speaks protocol $P"
	diag "limits: max_inbound_depth=$(param max_inbound_depth) max_inbound_conns=$(param max_inbound_conns)" \
	     "max_inbound_per_addr=$(param max_inbound_per_addr) max_peer_conns=$(param max_peer_conns) max_io=$(param max_io)"
}

# connect_rejected WANT_REASON FIELDS...: one connection with FIELDS is
# rejected with WANT_REASON, counted by reason (and as malformed), and
# leaves no inbound peer
connect_rejected() {
	local want=$1 m0 r0 got
	shift
	m0=$(cm_malformed)
	r0=$(cm_rej "$want")
	fz out connect "$A" $PORT "$@"
	got=$(first_result "$TMPD/out")
	check_eq "$(echo "$got" | awk '{ print $1, $2 }')" "rejected reason=$want" "$*: outcome"
	check_eq "$(cm_rej "$want")" $((r0 + 1)) "$*: rejects_sent{${REJ_NAME[$want]}}"
	if [ "$want" = 2 ]; then
		check_eq "$(cm_malformed)" $((m0 + 1)) "$*: malformed_private_data"
	else
		check_eq "$(cm_malformed)" "$m0" "$*: not counted as malformed"
	fi
	check_eq "$(inbound_peers)" 0 "$*: inbound peers after the reject"
}

# connect_accepted FIELDS...: one connection with FIELDS is accepted
connect_accepted() {
	fz out connect "$A" $PORT "$@"
	check_eq "$(first_result "$TMPD/out" | awk '{ print $1 }')" accepted "$*: outcome" || return 1
	wait_inbound_gone
}

malformed_private_data() {
	connect_rejected 2 magic=0xdeadbeef
	connect_rejected 2 magic=0
	connect_rejected 1 version=$((P + 1))
	connect_rejected 1 version=$((P - 1))
	connect_rejected 2 len=0
	connect_rejected 2 len=8
	connect_rejected 2 index=1 conn_count=1
	connect_rejected 2 index=5 conn_count=2
	connect_rejected 2 conn_count=0
	connect_rejected 2 node=0
	connect_rejected 2 depth=0
	connect_rejected 2 depth=1
	connect_rejected 2 depth=4097
	connect_rejected 2 depth=0xffffffff
	connect_rejected 2 credits=0
	connect_rejected 2 credits=1
	connect_rejected 2 credits=4097
	connect_rejected 2 max_io=0
	connect_rejected 2 max_io=4095
	connect_rejected 2 reserved=1
}

private_data_edges() {
	local cap mio
	cap=$(param max_inbound_depth)
	mio=$(param max_io)
	connect_accepted depth=2 credits=2 && check_eq "$(field "$TMPD/out" depth)" 2 "depth 2 granted"
	if connect_accepted depth=4096 credits=4096 max_io=65536; then
		[ -n "$cap" ] || fail "no max_inbound_depth parameter"
		[ "$(field "$TMPD/out" depth)" -le "${cap:-128}" ] ||
			fail "depth 4096 granted $(field "$TMPD/out" depth), over max_inbound_depth ${cap:-128}"
	fi
	if connect_accepted max_io=0xffffffff; then
		[ "$(field "$TMPD/out" max_io)" -le "$mio" ] ||
			fail "max_io 0xffffffff: granted $(field "$TMPD/out" max_io), local max_io $mio"
	fi
	connect_accepted max_io=4096 && check_eq "$(field "$TMPD/out" max_io)" 4096 "max_io one page"
	connect_accepted hb_ms=0 hb_misses=0
	connect_accepted hb_ms=0xffffffff hb_misses=0xffff
	# a pool claimed larger than max_peer_conns: its index bounds it
	connect_accepted conn_count=$(($(param max_peer_conns) + 1)) index=0
	connect_rejected 3 conn_count=$(($(param max_peer_conns) + 1)) index="$(param max_peer_conns)"
	connect_accepted conn_count=0xffff index=0
	# version 1's 32 bytes with version 2: the CM pads private data with
	# zeros, so krt sees hb_ms 0 and hb_misses 0 (clamped): not detectable
	fz out connect "$A" $PORT len=32
	diag "len=32 at version $P: $(first_result "$TMPD/out") (the CM pads to 56 bytes)"
	wait_inbound_gone
}

depth_capped() {
	local in d
	set_param max_inbound_depth 16 || return 1
	fz_bg hold connect "$A" $PORT depth=64 credits=64 max_io=65536 node=0x4b52540000000dd1 hold=60
	busywait 20000 bash -c "[ \$(grep -cE '^(accepted|rejected|error)' $TMPD/hold) -ge 1 ]"
	fz_show "$TMPD/hold"
	check_eq "$(field "$TMPD/hold" depth)" 16 "depth 64 granted with max_inbound_depth 16"
	in="in-4b52540000000dd1-0"
	d=$("$KRTCTL" -j conn show peer "$in" | jq -r '.[0].depth')
	check_eq "$d" 16 "conn show depth of $in"
	diag "conn show: $("$KRTCTL" conn show peer "$in")"
	fz_stop
	set_param max_inbound_depth 128
	wait_inbound_gone
}

# A client's queue on the server is sized for the client's max_io, not
# the local one: 128 KiB gets 33-page large sets, 64 KiB none (its own
# 17-page sets cover it), and is charged less.
inbound_sized_for_max_io() {
	local m want in=in-4b52540000000dd2-0 mem="" prev=0
	set_param max_inbound_depth 32 || return 1
	# max_io: MR pages/own pages/large sets (a quarter of depth 32, at least 4)
	for m in 65536:17/17/0 131072:33/17/8 1048576:257/17/8; do
		want=${m#*:} m=${m%%:*}
		fz_bg hold connect "$A" $PORT depth=32 credits=32 max_io=$m node=0x4b52540000000dd2 hold=60
		busywait 20000 bash -c "[ \$(grep -cE '^(accepted|rejected|error)' $TMPD/hold) -ge 1 ]"
		if check_eq "$(field "$TMPD/hold" max_io)" $m "max_io $m granted"; then
			check_eq "$(sum_q "$in" mr_pages)/$(sum_q "$in" own_pages)/$(sum_q "$in" large_sets)" \
				"$want" "max_io $m: MR pages/own pages/large sets"
			mem=$("$KRTCTL" -j peer show "$in" | jq -r '.[0].mem')
			[ "$mem" -gt "$prev" ] 2> /dev/null || fail "max_io $m charged ${mem:-?} B, not more than $prev B"
			diag "max_io $m at depth 32: charged $mem B"
			prev=${mem:-0}
		fi
		fz_stop
		wait_inbound_gone
	done
	set_param max_inbound_depth 128
}

# 70 connections from B with a new pool id each: 64 (max_inbound_per_addr)
# accepted, the rest rejected "connection limit"; meanwhile an
# administrator's pool (from A) comes up.
flood_per_addr() {
	local lim n l0 f=$TMPD/flood
	lim=$(param max_inbound_per_addr)
	[ -n "$lim" ] || fail "no max_inbound_per_addr parameter"
	lim=${lim:-64}
	n=$((lim + 6))
	l0=$(cm_rej 3)
	fz_bg flood connect "$A" $PORT src="$B" count=$n pool=1000 pool_step=1 depth=2 credits=2 \
		max_io=4096 hold=600 timeout=20
	busywait 300000 bash -c "[ \$(grep -cE '^(accepted|rejected|error)' $f) -ge $n ]" ||
		fail "flood: $(results "$f") of $n connections tried"
	fz_show "$f"
	check_eq "$(grep -c '^accepted' "$f")" "$lim" "flood from $B: accepted"
	check_eq "$(grep -c '^rejected reason=3 ' "$f")" $((n - lim)) "flood from $B: rejected as limit"
	check_eq "$(awk '/^rejected/ { print n + 1; exit } /^accepted/ { n++ }' "$f")" $((lim + 1)) \
		"the first reject is connection $((lim + 1))"
	check_eq "$(($(cm_rej 3) - l0))" $((n - lim)) "rejects_sent{connection limit reached}"
	check_eq "$(conns_from "$B")" "$lim" "krt's inbound connections from $B"
	"$KRTCTL" peer add adm addr "$A" conns 2 depth 16 || fail "peer add during the flood"
	wait_peer adm active 2 || fail "administrator's pool not up during the flood: $("$KRTCTL" peer show adm)"
	diag "during the flood: $("$KRTCTL" peer show adm)"
	"$KRTCTL" peer del adm
	fz_stop
	fz_show "$f"
	wait_inbound_gone
	"$KRTCTL" peer add adm addr "$A" conns 2 || fail "peer add after the flood"
	wait_peer adm active 2 || fail "administrator's pool not up after the flood"
	"$KRTCTL" peer del adm
	wait_inbound_gone
}

# max_inbound_conns in all, whatever the address: 10 allowed, 6 + 6 tried
flood_total() {
	local lim0 l0 fa=$TMPD/flood_a fb=$TMPD/flood_b pa pb acc
	lim0=$(param max_inbound_conns)
	set_param max_inbound_conns 10 || return 1
	l0=$(cm_rej 3)
	fz_bg flood_a connect "$A" $PORT count=6 pool=2000 pool_step=1 depth=2 credits=2 max_io=4096 hold=600
	pa=$FZ_PID
	busywait 60000 bash -c "[ \$(grep -cE '^(accepted|rejected|error)' $fa) -ge 6 ]" || fail "flood from $A"
	fz_bg flood_b connect "$A" $PORT src="$B" count=6 pool=3000 pool_step=1 depth=2 credits=2 \
		max_io=4096 hold=600
	pb=$FZ_PID
	busywait 60000 bash -c "[ \$(grep -cE '^(accepted|rejected|error)' $fb) -ge 6 ]" || fail "flood from $B"
	fz_show "$fa"
	fz_show "$fb"
	acc=$(($(grep -c '^accepted' "$fa") + $(grep -c '^accepted' "$fb")))
	check_eq "$acc" 10 "accepted from $A and $B with max_inbound_conns 10"
	check_eq "$(grep -c '^rejected reason=3 ' "$fb")" 2 "the last two from $B rejected as limit"
	check_eq "$(($(cm_rej 3) - l0))" 2 "rejects_sent{connection limit reached}"
	kill "$pa" "$pb" 2>/dev/null
	wait "$pa" "$pb" 2>/dev/null
	FZ_PID=""
	set_param max_inbound_conns "${lim0:-256}"
	wait_inbound_gone
}

# The node, pool and index of a live connection claimed from another
# address: refused (KRT_REJ_IDENTITY), the live one stays; the same claim
# from the live one's own address replaces it (a reconnect).
impersonation() {
	local in="in-4b52540000000abc-7" i0 f=$TMPD/live
	fz_bg live connect "$A" $PORT node=0x4b52540000000abc pool=7 index=0 conn_count=2 hold=300
	busywait 20000 bash -c "[ \$(grep -cE '^(accepted|rejected|error)' $f) -ge 1 ]"
	check_eq "$(first_result "$f" | awk '{ print $1 }')" accepted "live connection from $A" || return 1
	wait_peer "$in" active 1 || fail "$in not active"
	i0=$(cm_rej 7)
	fz out connect "$A" $PORT src="$B" node=0x4b52540000000abc pool=7 index=0 conn_count=2
	check_eq "$(first_result "$TMPD/out" | awk '{ print $1, $2 }')" "rejected reason=7" "same node/pool/index from $B"
	check_eq "$(cm_rej 7)" $((i0 + 1)) "rejects_sent{${REJ_NAME[7]}}"
	sleep 1
	check_eq "$("$KRTCTL" -j conn show peer "$in" | jq -r '[.[] | select(.state == "active")] | length')" 1 \
		"live connection still active"
	check_eq "$("$KRTCTL" -j conn show peer "$in" | jq -r '.[0].raddr')" "$A" "still the one from $A"
	grep -q '^disconnected' "$f" && fail "the live connection was dropped: $(grep '^disconnected' "$f")"
	diag "after the impersonation: $("$KRTCTL" conn show peer "$in")"
	# another index of that pool from B is a new connection, not an impersonation
	fz out connect "$A" $PORT src="$B" node=0x4b52540000000abc pool=7 index=1 conn_count=2
	check_eq "$(first_result "$TMPD/out" | awk '{ print $1 }')" accepted "index 1 of the pool from $B"
	# a reconnect from A replaces the live one
	fz out connect "$A" $PORT node=0x4b52540000000abc pool=7 index=0 conn_count=2
	check_eq "$(first_result "$TMPD/out" | awk '{ print $1 }')" accepted "same claim from $A (reconnect)"
	busywait 10000 grep -q '^disconnected' "$f" || fail "the replaced connection was not closed"
	fz_stop
	fz_show "$f"
	wait_inbound_gone
}

# header_case CASE: a crafted request on an accepted connection: one reset,
# counted once as malformed, krt's MRs back to their baseline
header_case() {
	local k=$1 m0 r0 mr0 old
	m0=$(dp malformed)
	r0=$(dp resets)
	mr0=$(krt_mrs)
	dmesg_mark
	# 8 bytes of inline data offered, 16 sent
	old=$(cat $PARAMS/inline_data)
	[ "$k" = inline_over_offer ] && echo 8 > $PARAMS/inline_data
	fz out send "$A" $PORT "$k" wait=5
	echo "$old" > $PARAMS/inline_data
	[ "$k" = inline_over_offer ] && check_eq "$(field "$TMPD/out" inline_data)" 8 "$k: krt's offer"
	check_eq "$(grep '^result' "$TMPD/out" | awk '{ print $3 }')" reset "$k: krt resets the connection"
	check_eq "$(($(dp malformed) - m0))" 1 "$k: dp malformed"
	check_eq "$(($(dp resets) - r0))" 1 "$k: dp resets"
	check_eq "$(krt_why)" "${WHY[$k]}" "$k: krt's reason"
	busywait 10000 bash -c "[ \$(rdma resource show mr 2>/dev/null | grep -c 'comm \[krt\]') -le $mr0 ]" ||
		fail "$k: krt MRs $(krt_mrs), baseline $mr0"
	wait_inbound_gone
}

# A well-formed request to an unregistered service: answered
# -EPROTONOSUPPORT, the connection stays
header_valid() {
	local k=${1:-valid} want=${2:--93} m0 r0
	m0=$(dp malformed)
	r0=$(dp resets)
	fz out send "$A" $PORT "$k" n=8 wait=5
	check_eq "$(grep -c "^reply .* status=$want " "$TMPD/out")" 8 "$k: replies with status $want"
	grep -q '^reply .*malformed' "$TMPD/out" && fail "$k: krt sent a malformed reply"
	check_eq "$(grep '^replies' "$TMPD/out")" "replies 8 of 8, 8 as expected (status $want)" "$k: replies"
	check_eq "$(grep '^result' "$TMPD/out" | awk '{ print $3 }')" alive "$k: connection alive"
	check_eq "$(dp malformed)/$(dp resets)" "$m0/$r0" "$k: malformed/resets"
	wait_inbound_gone
}

# server_case CASE: krt connects to krt_fuzz's server, which answers its
# request with the crafted reply: krt (the client) resets, counts once
server_case() {
	local k=$1 f=$TMPD/srv m0 r0 w0 mr0 inv
	mr0=$(krt_mrs)
	fz_bg srv server $SPORT "$k" addr="$A" wait=5 timeout=90
	busywait 20000 grep -q '^listening' "$f" || { fail "$k: server not listening"; fz_stop; return 1; }
	"$KRTCTL" peer add fz addr "$A" port $SPORT conns 1 depth 4 || fail "$k: peer add"
	wait_peer fz active 1 || { fail "$k: fz not up: $("$KRTCTL" peer show fz)"; fz_stop; return 1; }
	m0=$(dp malformed)
	r0=$(dp resets)
	w0=$(dp wc_errors)
	dmesg_mark
	if [ "$k" = foreign_inv ]; then
		"$KRTCTL" -j xfer fz op read size 4k count 4 depth 2 timeout 5000 > "$TMPD/x" 2>&1
	else
		"$KRTCTL" -j ping fz count 1 timeout 5000 > "$TMPD/x" 2>&1
	fi
	diag "krtctl: $(jq -c '{ok, errors, first_error_name}' "$TMPD/x" 2>/dev/null || cat "$TMPD/x")"
	busywait 30000 grep -q '^result' "$f" || fail "$k: no result from the server"
	fz_stop
	fz_show "$f"
	check_eq "$(grep '^result' "$f" | awk '{ print $3 }')" reset "$k: krt resets the connection"
	if [ "$k" = foreign_inv ] && grep -q 'own rkey + 1' "$f"; then
		# rxe fails an invalidation of an unknown rkey: a work completion error
		diag "$k: no second request was in flight; rxe fails the receive instead"
		check_eq "$(($(dp wc_errors) - w0 > 0))" 1 "$k: counted as a work completion error"
	else
		check_eq "$(($(dp malformed) - m0))" 1 "$k: dp malformed"
		check_eq "$(krt_why)" "${RWHY[$k]}" "$k: krt's reason"
	fi
	check_eq "$(($(dp resets) - r0 > 0))" 1 "$k: dp resets"
	"$KRTCTL" peer del fz
	busywait 10000 bash -c "[ \$(rdma resource show mr 2>/dev/null | grep -c 'comm \[krt\]') -le $mr0 ]" ||
		fail "$k: krt MRs $(krt_mrs), baseline $mr0"
	inv=$(grep -c '^sent' "$f")
	[ "$inv" -ge 1 ] || fail "$k: the server sent no crafted reply"
}

# krt_fuzz's server answering correctly: krt's pings and FRWR reads and
# writes through it succeed (so a crafted reply differs in one field only)
server_valid() {
	local f=$TMPD/srv m0 r0
	m0=$(dp malformed)
	r0=$(dp resets)
	fz_bg srv server $SPORT valid addr="$A" timeout=300
	busywait 20000 grep -q '^listening' "$f" || { fail "server not listening"; fz_stop; return 1; }
	"$KRTCTL" peer add fz addr "$A" port $SPORT conns 1 depth 4 || fail "peer add"
	wait_peer fz active 1 || { fail "fz not up: $("$KRTCTL" peer show fz)"; fz_stop; return 1; }
	"$KRTCTL" -j ping fz count 20 size 100 > "$TMPD/x" 2>&1
	check_eq "$(jq -r '"\(.ok)/\(.errors)/\(.mismatches)"' "$TMPD/x")" 20/0/0 "pings through krt_fuzz"
	"$KRTCTL" -j xfer fz op read size 64k count 8 depth 2 > "$TMPD/x" 2>&1
	check_eq "$(jq -r '"\(.ok)/\(.errors)/\(.mismatches)"' "$TMPD/x")" 8/0/0 "reads through krt_fuzz"
	"$KRTCTL" -j xfer fz op write size 8193 count 8 depth 2 > "$TMPD/x" 2>&1
	check_eq "$(jq -r '"\(.ok)/\(.errors)/\(.mismatches)"' "$TMPD/x")" 8/0/0 "writes through krt_fuzz"
	fz_stop
	fz_show "$f"
	check_eq "$(grep '^result' "$f" | awk '{ print $3 }')" alive "connection alive"
	grep -q 'krt-sent-malformed' "$f" && fail "krt sent a malformed request: $(grep -m1 krt-sent-malformed "$f")"
	check_eq "$(dp malformed)/$(dp resets)" "$m0/$r0" "malformed/resets"
	"$KRTCTL" peer del fz
}

# xfer_counts FILE: "ok/errors/mismatches" of a krtctl -j xfer
xfer_counts() { jq -r '"\(.ok)/\(.errors)/\(.mismatches)"' "$1" 2>/dev/null || cat "$1"; }

# cross_peer_rkey TRIES: krt is the client of two krt_fuzz servers, peers
# fa and fb (a connection each, so a PD each).  fa's server (lend_rkey)
# records the rkey, address and length of krt's buffer for fa's write
# request and holds the request; fb's server (steal_rkey) answers fb's
# read requests with TRIES against fa's rkey through fb's QP: r an RDMA
# READ, w an RDMA WRITE of 0xa5 bytes, i a SEND_WITH_INV of it.  Then
# fa's request is served: fa's server reads krt's buffer and checks its
# pattern, so a stolen write would show as a mismatch.
cross_peer_rkey() {
	local tries=$1 fa=$TMPD/lend fb=$TMPD/steal key=$TMPD/rkey pa pb xa r0 m0 mr0 t
	rm -f "$key" "$key.go"
	mr0=$(krt_mrs)
	fz_bg lend server $SPORT lend_rkey addr="$A" file="$key" hold_s=90 timeout=150
	pa=$FZ_PID
	fz_bg steal server $SPORT2 steal_rkey addr="$A" file="$key" steal="$tries" timeout=150
	pb=$FZ_PID
	FZ_PID=""
	busywait 20000 grep -q '^listening' "$fa" && busywait 20000 grep -q '^listening' "$fb" ||
		fail "servers not listening"
	"$KRTCTL" peer add fa addr "$A" port $SPORT conns 1 depth 4 || fail "peer add fa"
	"$KRTCTL" peer add fb addr "$A" port $SPORT2 conns 1 depth 4 || fail "peer add fb"
	wait_peer fa active 1 && wait_peer fb active 1 ||
		fail "peers not up: $("$KRTCTL" peer show)"
	r0=$(dp resets)
	m0=$(dp malformed)
	dmesg_mark
	"$KRTCTL" -j xfer fa op write size 8k count 1 depth 1 timeout 90000 > "$TMPD/xa" 2>&1 &
	xa=$!
	busywait 20000 test -s "$key" || fail "fa's server recorded no rkey"
	diag "fa's request, held: $(cat "$key" 2>/dev/null)"
	"$KRTCTL" -j xfer fb op read size 4k count 1 depth 1 timeout 60000 > "$TMPD/xb" 2>&1
	touch "$key.go"
	wait "$xa"
	grep -E '^(steal|stolen|completion-error)' "$fb" | sed 's/^/#   fb saw: /'
	check_eq "$(xfer_counts "$TMPD/xb")" 1/0/0 "fb's read, once its server stopped stealing"
	for t in $(echo "$tries" | grep -o .); do
		case $t in
		r) check_eq "$(sed -n 's/^stolen read: status=\([A-Z_]*\).*/\1/p' "$fb")" REM_ACCESS_ERR \
			"RDMA READ of fa's rkey through fb's QP" ;;
		w) check_eq "$(sed -n 's/^stolen write: status=\([A-Z_]*\).*/\1/p' "$fb")" REM_ACCESS_ERR \
			"RDMA WRITE into fa's rkey through fb's QP" ;;
		i) diag "SEND_WITH_INV of fa's rkey through fb's QP:" \
			"$(sed -n 's/^stolen inv: //p' "$fb")" ;;
		esac
	done
	diag "krt: $(dmesg | tail -n +$((DMESG0 + 1)) | grep -o 'f[ab]/[0-9]*: resetting the connection: .*' | sort | uniq -c | tr -s ' \n' ' ')"
	grep -E '^(lent|released|completion-error)' "$fa" | sed 's/^/#   fa saw: /'
	# fa's buffer still holds its pattern and fa's request completes
	check_eq "$(xfer_counts "$TMPD/xa")" 1/0/0 "fa's write after fb's tries"
	grep -q '^lent request data .*status=SUCCESS mismatches=0' "$fa" ||
		fail "fa's server did not read fa's buffer intact: $(grep '^lent request' "$fa")"
	if [ "$tries" = "${tries%i*}" ]; then
		# READ and WRITE refused: fa's connection never saw them
		grep -q '^completion-error' "$fa" && fail "fa's connection failed: $(grep -m1 '^completion-error' "$fa")"
		dmesg | tail -n +$((DMESG0 + 1)) | grep -q 'fa/[0-9]*: resetting' &&
			fail "fa's connection was reset"
		# one reset of fb's connection per try: the access error puts
		# the requester's QP (krt_fuzz's) in the error state, and krt
		# resets the connection when it stops answering (on rxe its own
		# QP, the responder, stays up: "heartbeat: no answer")
		check_eq "$(($(dp resets) - r0))" ${#tries} "dp resets (fb's, one per try)"
		check_eq "$(($(dp malformed) - m0))" 0 "dp malformed"
	else
		# krt, fb's client, refuses a reply that invalidated a key it was
		# not given (malformed); whether the device refused to invalidate
		# an MR of another PD shows on fa's side
		check_eq "$(($(dp malformed) - m0))" 1 "dp malformed (fb's reply with a foreign key)"
		check_eq "$(dmesg | tail -n +$((DMESG0 + 1)) | sed -n 's/.*fb\/[0-9]*: malformed message from the peer: //p' | head -1)" \
			"reply invalidated a key it was not given" "krt's reason on fb"
		if grep -q '^lent request data .*status=REM_ACCESS_ERR' "$fa"; then
			diag "the device invalidated fa's MR for fb's SEND_WITH_INV (no PD check):" \
			     "fa's transfer failed, krt reset fa's connection and re-sent the request"
		else
			diag "the device refused to invalidate fa's MR from fb's QP"
		fi
	fi
	"$KRTCTL" peer del fa
	"$KRTCTL" peer del fb
	kill "$pa" "$pb" 2>/dev/null
	wait "$pa" "$pb" 2>/dev/null
	busywait 10000 bash -c "[ \$(rdma resource show mr 2>/dev/null | grep -c 'comm \[krt\]') -le $mr0 ]" ||
		fail "krt MRs $(krt_mrs), baseline $mr0"
	rm -f "$key" "$key.go"
}

# A client that goes silent (claiming hb_ms 50 x 2) is reset by the server
# after 2 x hb_ms x hb_misses, at least a second
silent_client() {
	local r0 t f=$TMPD/silent
	r0=$(dp resets)
	dmesg_mark
	fz_bg silent connect "$A" $PORT hb_ms=50 hb_misses=2 hold=20
	busywait 20000 grep -q '^disconnected' "$f" || fail "a silent client was not reset"
	fz_stop
	fz_show "$f"
	t=$(sed -n 's/^disconnected .* after=\([0-9]*\).*/\1/p' "$f")
	[ -n "$t" ] && [ "$t" -le 5 ] || fail "reset after ${t:-?} s, want 1 to 5"
	check_eq "$(($(dp resets) - r0))" 1 "dp resets"
	dmesg | tail -n +$((DMESG0 + 1)) | grep -q 'nothing from the client' ||
		fail "no 'nothing from the client' in krt's log: $(dmesg | tail -n +$((DMESG0 + 1)) | grep krt: | head -3)"
	wait_inbound_gone
}

# A client that keeps sending (one request every 300 ms, never idle) but
# returns no credit: claiming hb_ms 500 x 2 and 2 receive buffers, the
# server's replies wait for a credit from the third request on, and the
# server resets the connection 2 x 500 x 2 ms = 2 s after that one's
# reply began to wait ("client returns no credits"), before its
# heartbeat bound could fire (the client is never idle that long)
withhold_credits() {
	local r0 w f=$TMPD/out bound=2 mr0
	r0=$(dp resets)
	mr0=$(krt_mrs)
	dmesg_mark
	fz out send "$A" $PORT withhold_credits depth=16 credits=2 hb_ms=500 hb_misses=2 n=16 \
		gap_ms=300 wait=$((10 * KRT_TS))
	check_eq "$(grep '^result' "$f" | awk '{ print $3 }')" reset "krt resets the connection"
	check_eq "$(grep '^replies' "$f")" "replies 2 to 16 requests" "replies: the 2 credits of the connect data"
	w=$(sed -n 's/^result .* waited=\([0-9.]*\)s.*/\1/p' "$f")
	diag "reset ${w:-?} s after the first reply without a credit (bound $bound s)"
	awk -v w="${w:-0}" -v lo=$bound -v hi=$((bound + 3 * KRT_TS)) 'BEGIN { exit !(w >= lo && w <= hi) }' ||
		fail "reset after ${w:-?} s, want $bound to $((bound + 3 * KRT_TS))"
	check_eq "$(($(dp resets) - r0))" 1 "dp resets"
	dmesg | tail -n +$((DMESG0 + 1)) | grep -q 'resetting the connection: client returns no credits' ||
		fail "no 'client returns no credits' in krt's log: $(dmesg | tail -n +$((DMESG0 + 1)) | grep krt: | head -3)"
	dmesg | tail -n +$((DMESG0 + 1)) | grep -q 'nothing from the client' &&
		fail "the heartbeat bound fired, not the credit bound"
	busywait 10000 bash -c "[ \$(rdma resource show mr 2>/dev/null | grep -c 'comm \[krt\]') -le $mr0 ]" ||
		fail "krt MRs $(krt_mrs), baseline $mr0"
	wait_inbound_gone
}

# The control: the same traffic with credits returned lives past the
# bound (then 1 s of quiet, within the 2 s heartbeat bound, and a close)
return_credits() {
	local r0 m0 f=$TMPD/out
	r0=$(dp resets)
	m0=$(dp malformed)
	fz out send "$A" $PORT return_credits depth=16 credits=2 hb_ms=500 hb_misses=2 n=16 \
		gap_ms=300 wait=1
	check_eq "$(grep '^replies' "$f")" "replies 16 to 16 requests" "replies"
	grep -q '^reply .*malformed' "$f" && fail "krt sent a malformed reply"
	check_eq "$(grep -c '^reply .* status=-93 ' "$f")" 16 "replies with status -93"
	check_eq "$(grep '^result' "$f" | awk '{ print $3 }')" alive "connection alive"
	check_eq "$(dp malformed)/$(dp resets)" "$m0/$r0" "malformed/resets"
	wait_inbound_gone
}

# The same bounds for a user without privileges
unprivileged() {
	local nb=(setpriv --reuid 65534 --regid 65534 --clear-groups)
	local m0 l0 lim0 r0
	diag "as $("${nb[@]}" id)"
	diag "try: krt_fuzz connect $A $PORT count=3 pool=300 pool_step=1 (as nobody)"
	"${nb[@]}" "$FZ" connect "$A" $PORT count=3 pool=300 pool_step=1 proto="$P" > "$TMPD/u" 2>&1
	fz_show "$TMPD/u"
	check_eq "$(grep -c '^accepted' "$TMPD/u")" 3 "nobody: 3 connections accepted"
	wait_inbound_gone
	m0=$(cm_malformed)
	"${nb[@]}" "$FZ" connect "$A" $PORT magic=1 proto="$P" > "$TMPD/u" 2>&1
	fz_show "$TMPD/u"
	check_eq "$(first_result "$TMPD/u" | awk '{ print $1, $2 }')" "rejected reason=2" "nobody: bad magic"
	check_eq "$(cm_malformed)" $((m0 + 1)) "nobody: malformed counted"
	lim0=$(param max_inbound_per_addr)
	if set_param max_inbound_per_addr 4; then
		l0=$(cm_rej 3)
		"${nb[@]}" "$FZ" connect "$A" $PORT count=6 pool=400 pool_step=1 depth=2 credits=2 \
			max_io=4096 proto="$P" > "$TMPD/u" 2>&1
		fz_show "$TMPD/u"
		check_eq "$(grep -c '^accepted' "$TMPD/u")/$(grep -c '^rejected reason=3 ' "$TMPD/u")" 4/2 \
			"nobody: 6 connections with max_inbound_per_addr 4: accepted/limit"
		check_eq "$(($(cm_rej 3) - l0))" 2 "nobody: limit rejects counted"
		set_param max_inbound_per_addr "${lim0:-64}"
	fi
	wait_inbound_gone
	r0=$(dp resets)
	m0=$(dp malformed)
	"${nb[@]}" "$FZ" send "$A" $PORT bad_magic proto="$P" > "$TMPD/u" 2>&1
	fz_show "$TMPD/u"
	check_eq "$(grep '^result' "$TMPD/u" | awk '{ print $3 }')" reset "nobody: bad magic message resets"
	check_eq "$(($(dp malformed) - m0))/$(($(dp resets) - r0))" 1/1 "nobody: malformed/resets"
	wait_inbound_gone
}

leftovers() {
	check_eq "$(inbound_peers)" 0 "inbound peers"
	check_eq "$(rdma resource show qp 2>/dev/null | grep -c 'comm \[krt_fuzz\]')" 0 "krt_fuzz QPs"
	check_eq "$(krt_mrs)" 0 "krt MRs with no connection"
	diag "cm: $(tr '\n' ' ' < "$KRT_DBG/cm")"
	diag "dp: $(tr '\n' ' ' < "$KRT_DBG/dp")"
}

HEADER_CASES="bad_magic bad_version short len_mismatch bad_opcode unknown_flags inv_without_data
	read_and_write data_len_over data_len_zero data_fields_without_data credits_overflow
	heartbeat_with_data inline_no_write inline_with_rkey inline_over_message inline_over_offer"
SERVER_CASES="tag_out_of_range wrong_generation duplicate_reply reply_with_flags credits_overflow
	foreign_inv request_to_client reply_short"

ktap_plan $((19 + $(echo $HEADER_CASES | wc -w) + $(echo $SERVER_CASES | wc -w)))
run_case setup setup
run_case malformed_private_data_rejected_counted malformed_private_data
run_case private_data_edges_accepted_bounded private_data_edges
run_case depth_capped_by_max_inbound_depth depth_capped
run_case inbound_buffers_sized_for_client_max_io inbound_sized_for_max_io
run_case flood_limited_per_address_admin_pool_works flood_per_addr
run_case flood_limited_in_all flood_total
run_case impersonation_rejected_live_conn_stays impersonation
run_case silent_client_reset silent_client
run_case credits_withheld_reset withhold_credits
run_case credits_returned_alive return_credits
for k in $HEADER_CASES; do
	run_case "header_$k" header_case "$k"
done
run_case header_valid_unknown_service_answered header_valid valid -93
run_case header_heartbeat_answered header_valid heartbeat 0
run_case header_inline_write_answered header_valid inline_valid -93
run_case server_valid_replies_work server_valid
for k in $SERVER_CASES; do
	run_case "reply_$k" server_case "$k"
done
run_case cross_peer_rkey_read_write_refused cross_peer_rkey rw
run_case cross_peer_rkey_inv_refused_or_recovered cross_peer_rkey i
run_case unprivileged_user_bounded_the_same unprivileged
run_case nothing_left leftovers
ktap_finish
