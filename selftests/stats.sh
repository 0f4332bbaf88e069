#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Statistics in one guest (rxe loopback, the test service on): exact
# counts after known traffic in debugfs and in 'krtctl stats show -j'
# (client and server side), histograms that add up, bytes by kind, a
# reset of one peer that leaves the others, totals that survive resizes
# and reconnects, 'krtctl top' rates against xfer's, and readers racing
# peers coming and going.
. "$(dirname "$0")/lib.sh"

A=""		# the rxe device's address
# krt counts the bytes of the messages a ULP gives it: the test service
# sends its 12-byte struct krt_tmsg (op, seed, size) before a ping's
# payload, so 1000 pings of 4000 bytes are 1000 messages of 4012 bytes
M=$((1000 * (4000 + 12)))
IN=""		# the inbound peer the node's own connections create

# dbg PEER KEY [FILE]: one "key: value" of peers/PEER/FILE (stats)
dbg() { awk -v k="$2:" '$1 == k { print $2 }' "$KRT_DBG/peers/$1/${3:-stats}"; }
# dev_stat KEY: a counter of the test's device, from debugfs
dev_stat() { awk -v k="$1:" '$1 == k { print $2 }' "$KRT_DBG/devices/krt_st0/stats"; }
# js PEER EXPR: jq EXPR on 'krtctl -j stats show peer PEER'
js() {
	"$KRTCTL" -j stats show peer "$1" > "$TMPD/js" 2> "$TMPD/js.err" ||
		{ echo "krtctl failed: $(cat "$TMPD/js.err")"; return 1; }
	jq -r ".[0] | $2" "$TMPD/js"
}
bucket_sum() { awk -v k="$2_bucket" 'index($1, k) == 1 { s += $2 } END { print s + 0 }' \
	"$KRT_DBG/peers/$1/latency"; }
inbound_peer() { "$KRTCTL" -j peer show | jq -r '[.[] | select(.direction == "inbound")][0].name'; }

setup() {
	load_krt test_service=1 || return 1
	rxe_add krt_st0 || { fail "rxe_add"; return 1; }
	A=$(ip -4 -o addr show dev "$(awk '$1 == "krt_st0" { print $2 }' "$TMPD/rxe")" |
	    awk '{ sub("/.*", "", $4); print $4 }')
	"$KRTCTL" listen add "$A" || fail "listen add"
	"$KRTCTL" peer add st addr "$A" conns 2 depth 32 || fail "peer add"
	wait_peer st active 2 || fail "st not 2/2: $("$KRTCTL" peer show)"
	IN=$(inbound_peer)
	[ -n "$IN" ] && [ "$IN" != null ] || fail "no inbound peer"
	busywait 5000 test -f "$KRT_DBG/peers/st/conns/1/stats" ||
		fail "no debugfs peers/st tree: $(find "$KRT_DBG/peers")"
	busywait 5000 test -f "$KRT_DBG/peers/$IN/stats" || fail "no debugfs peers/$IN"
}

ping_exact() {
	local k v i
	run_ok p ping st count 1000 size 4000 || return 1
	check_eq "$(j p ok)/$(j p errors)" "1000/0" "pings"
	# the client's side, in debugfs and over netlink
	for k in reqs_send:1000 msg_bytes_out:$M msg_bytes_in:$M \
		 done_ok:1000 done_error:0 reqs_read:0 reqs_write:0 rtt_count:1000; do
		check_eq "$(dbg st "${k%%:*}")" "${k#*:}" "debugfs st ${k%%:*}"
	done
	check_eq "$(bucket_sum st rtt)" 1000 "debugfs rtt buckets sum"
	for k in reqs_send:1000 msg_bytes_out:$M msg_bytes_in:$M done_ok:1000; do
		check_eq "$(js st ".counters.${k%%:*}")" "${k#*:}" "netlink st ${k%%:*}"
	done
	check_eq "$(js st '.rtt.count')" 1000 "netlink rtt count"
	check_eq "$(js st '[.rtt.buckets[].count] | add')" 1000 "netlink rtt buckets sum"
	v=$(js st '.rtt | (.min_ns <= .p50_ns and .p50_ns <= .p99_ns and .p99_ns <= .max_ns)')
	check_eq "$v" true "rtt min <= p50 <= p99 <= max"
	# the connections add up to the peer
	v=$(cat "$KRT_DBG"/peers/st/conns/*/stats | awk '$1 == "reqs_send:" { s += $2 } END { print s }')
	check_eq "$v" 1000 "connections' reqs_send sum"
	# the server's side: the inbound peer
	for k in srv_reqs_send:1000 srv_msg_bytes_in:$M srv_msg_bytes_out:$M \
		 svc_count:1000 reqs_send:0; do
		check_eq "$(dbg "$IN" "${k%%:*}")" "${k#*:}" "debugfs $IN ${k%%:*}"
	done
	check_eq "$(bucket_sum "$IN" svc)" 1000 "debugfs svc buckets sum"
	check_eq "$(js "$IN" '.counters.srv_reqs_send')" 1000 "netlink $IN srv_reqs_send"
	check_eq "$(js "$IN" '.svc.count')" 1000 "netlink svc count"
	# the device carried both
	check_eq "$(dev_stat srv_reqs_send)" 1000 \
		"device srv_reqs_send"
	check_eq "$(dev_stat reqs_send)" 1000 \
		"device reqs_send"
	# one connection's statistics (stats show peer P conn I, and conn P/I):
	# they sum to the peer's
	v=0
	for i in $(ls "$KRT_DBG/peers/st/conns"); do
		k=$("$KRTCTL" -j stats show peer st conn "$i" | jq -r '.[0].counters.reqs_send') ||
			fail "stats show peer st conn $i"
		check_eq "$("$KRTCTL" -j stats show conn "st/$i" | jq -r '.[0].counters.reqs_send')" "$k" \
			"stats show conn st/$i"
		check_eq "$k" "$(awk '$1 == "reqs_send:" { print $2 }' "$KRT_DBG/peers/st/conns/$i/stats")" \
			"netlink and debugfs of st/$i"
		v=$((v + k))
	done
	check_eq "$v" 1000 "per-connection stats show sum"
	# krtctl -s peer show: the main counters beside the peer, as ip -s link
	check_eq "$("$KRTCTL" -j -s peer show st | jq -r '.[0].stats | "\(.reqs_send)/\(.done_ok)/\(.msg_bytes_out)"')" \
		"1000/1000/$M" "-s peer show -j"
	"$KRTCTL" -s peer show st | grep -qE "reqs_send 1000( |$)" ||
		fail "-s peer show text: $("$KRTCTL" -s peer show st)"
	# text output: the same keys
	"$KRTCTL" stats show peer st > "$TMPD/text" || fail "stats show text"
	grep -qw reqs_send "$TMPD/text" && grep -qw msg_bytes_out "$TMPD/text" ||
		fail "text output lacks the table's keys: $(head -5 "$TMPD/text")"
}

xfer_by_kind() {
	local r0 w0 sr0 sw0
	r0=$(dbg st data_bytes_read) w0=$(dbg st data_bytes_written)
	sr0=$(dbg "$IN" srv_data_bytes_read) sw0=$(dbg "$IN" srv_data_bytes_written)
	run_ok xr xfer st op read size 65536 count 100 depth 8 || return 1
	run_ok xw xfer st op write size 12288 count 50 depth 4 || return 1
	check_eq "$(j xr ok)/$(j xw ok)" "100/50" "xfers"
	check_eq "$(dbg st reqs_read)/$(dbg st reqs_write)" "100/50" "requests by kind"
	check_eq "$(($(dbg st data_bytes_read) - r0))" 6553600 "data_bytes_read"
	check_eq "$(($(dbg st data_bytes_written) - w0))" 614400 "data_bytes_written"
	check_eq "$(dbg "$IN" srv_reqs_read)/$(dbg "$IN" srv_reqs_write)" "100/50" "served by kind"
	check_eq "$(($(dbg "$IN" srv_data_bytes_read) - sr0))" 6553600 "srv_data_bytes_read"
	check_eq "$(($(dbg "$IN" srv_data_bytes_written) - sw0))" 614400 "srv_data_bytes_written"
	check_eq "$(js st '.counters.data_bytes_read')" "$(dbg st data_bytes_read)" \
		"netlink and debugfs agree"
	# per connection: 32 pool MRs (min(32, max(32 / 2, 32))), 8 large sets (max(32 / 4, 4))
	check_eq "$(js st '.mrs')" 80 "MRs of the pool (2 x (32 pool MRs + 8 large sets))"
	[ "$(js st '.mrs_hwm')" -ge 1 ] || fail "MR high-water mark not counted"
	[ "$(js st '.inflight_hwm')" -ge 2 ] || fail "in-flight high-water mark: $(js st '.inflight_hwm')"
	check_eq "$(js st '.inflight')/$(js st '.mrs_used')" "0/0" "idle gauges"
}

reset_one() {
	local dev_reqs np=(setpriv --reuid 65534 --regid 65534 --clear-groups)
	"$KRTCTL" peer add st2 addr "$A" conns 1 depth 8 || fail "peer add st2"
	wait_peer st2 active 1 || fail "st2 not up"
	run_ok p2 ping st2 count 10 size 100 || return 1
	# an unprivileged user reads, but cannot reset
	"${np[@]}" "$KRTCTL" -j stats show peer st > "$TMPD/np" 2>&1 ||
		fail "unprivileged stats show: $(cat "$TMPD/np")"
	if "${np[@]}" "$KRTCTL" stats reset peer st > "$TMPD/np" 2>&1; then
		fail "unprivileged stats reset succeeded"
	fi
	grep -qi "not permitted" "$TMPD/np" || fail "unprivileged reset: $(cat "$TMPD/np")"
	check_eq "$(dbg st reqs_send)" 1000 "st after a refused reset"
	"$KRTCTL" stats reset peer st || fail "stats reset peer st"
	check_eq "$(dbg st reqs_send)/$(dbg st msg_bytes_out)/$(dbg st done_ok)/$(dbg st rtt_count)" \
		"0/0/0/0" "st after reset"
	check_eq "$(js st '.counters.reqs_read')/$(js st '.rtt.count')" "0/0" "st after reset (netlink)"
	for c in 0 1; do
		check_eq "$(awk '$1 == "reqs_send:" { print $2 }' "$KRT_DBG/peers/st/conns/$c/stats")" 0 \
			"st/$c after reset"
	done
	check_eq "$(dbg st2 reqs_send)/$(dbg st2 rtt_count)" "10/10" "st2 kept its counts"
	[ "$(js st '.age_ms')" -lt "$(js st2 '.age_ms')" ] || fail "age_ms did not restart"
	"$KRTCTL" stats reset peer nosuch 2> "$TMPD/err" && fail "reset of an unknown peer succeeded"
	grep -q "no such peer" "$TMPD/err" || fail "unknown peer: $(cat "$TMPD/err")"
	dev_reqs=$(dev_stat reqs_send)
	[ "$dev_reqs" -gt 0 ] || fail "device reqs_send before the reset: $dev_reqs"
	"$KRTCTL" stats reset peer st2 || fail "stats reset peer st2"
	check_eq "$(dev_stat reqs_send)" "$dev_reqs" \
		"device counters kept by a peer's reset"
	"$KRTCTL" stats reset || fail "stats reset (all)"
	check_eq "$(dbg st2 reqs_send)" 0 "st2 after reset of all"
	check_eq "$(dev_stat reqs_send)" 0 \
		"device reqs_send after reset of all"
	"$KRTCTL" peer del st2 || fail "peer del st2"
}

survive_recycling() {
	local hwm
	"$KRTCTL" stats reset peer st || fail "reset"
	run_ok p ping st count 200 size 64 || return 1
	"$KRTCTL" peer set st conns 4 || fail "peer set conns 4"
	wait_peer st active 4 || fail "st not 4/4"
	busywait 5000 test -d "$KRT_DBG/peers/st/conns/3" || fail "no debugfs conns/3"
	run_ok p ping st count 100 size 64 || return 1
	# high-water marks set by connections that go away stay the peer's
	run_ok x xfer st op read size 4096 count 64 depth 16 || return 1
	hwm=$(js st '"\(.inflight_hwm)/\(.mrs_hwm)"')
	[ "${hwm%/*}" -ge 2 ] && [ "${hwm#*/}" -ge 1 ] || fail "marks after an xfer at depth 16: $hwm"
	"$KRTCTL" peer set st conns 1 || fail "peer set conns 1"
	wait_peer st active 1 || fail "st not 1/1"
	busywait 5000 bash -c "[ \$(ls $KRT_DBG/peers/st/conns | wc -l) = 1 ]" ||
		fail "debugfs conns after shrinking: $(ls "$KRT_DBG/peers/st/conns")"
	"$KRTCTL" peer reconnect st || fail "peer reconnect"
	wait_peer st active 1 || fail "st not back"
	# 300 pings (send-only) and the 64 reads of the xfer
	check_eq "$(dbg st reqs_send)/$(dbg st reqs_read)/$(dbg st done_ok)/$(dbg st rtt_count)" \
		"300/64/364/364" "totals after resizes and a reconnect"
	check_eq "$(js st '.counters.reqs_send')" 300 "netlink totals"
	check_eq "$(js st '"\(.inflight_hwm)/\(.mrs_hwm)"')" "$hwm" "peer marks after resizes and a reconnect"
	[ "$(dbg st reconnects)" -ge 1 ] || fail "reconnect not counted: $(dbg st reconnects)"
	run_ok p ping st count 50 size 64 || return 1
	check_eq "$(dbg st reqs_send)" 350 "counting goes on"
	"$KRTCTL" peer set st conns 2 || fail "peer set conns 2"
	wait_peer st active 2 || fail "st not 2/2"
}

top_rates() {
	local rate n pid top
	# calibrate: about 8 s of xfer at this guest's speed
	run_ok cal xfer st op read size 4096 count 400 depth 8 || return 1
	rate=$(jq -r '.ok * 1000000000 / .elapsed_ns | floor' "$TMPD/cal")
	n=$((rate * 8))
	[ "$n" -ge 400 ] || n=400
	"$KRTCTL" -j xfer st op read size 4096 count "$n" depth 8 > "$TMPD/long" 2>&1 &
	pid=$!
	sleep 1
	"$KRTCTL" -j top interval 1 count 4 > "$TMPD/top" 2> "$TMPD/top.err" ||
		fail "krtctl top: $(cat "$TMPD/top.err")"
	wait $pid || fail "long xfer: $(cat "$TMPD/long")"
	rate=$(jq -r '.ok * 1000000000 / .elapsed_ns' "$TMPD/long")
	check_eq "$(wc -l < "$TMPD/top")" 4 "top intervals printed"
	top=$(jq -s '[.[].peers[] | select(.peer == "st") | .reqs_per_s] | add / length' "$TMPD/top")
	diag "xfer $rate req/s, top $top req/s over $(wc -l < "$TMPD/top") intervals"
	jq -n --argjson a "$rate" --argjson b "$top" '($b - $a) | fabs <= 0.2 * $a' | grep -q true ||
		fail "top's rate $top is not within 20% of xfer's $rate"
	jq -e '[.[].peers[] | select(.peer == "st") | .mib_per_s_in] | min > 0' -s "$TMPD/top" \
		> /dev/null || fail "top shows no MiB/s in: $(cat "$TMPD/top")"
	"$KRTCTL" top interval 0.5 count 2 > "$TMPD/toptext" || fail "top text"
	grep -q '^st ' "$TMPD/toptext" || fail "top text has no line for st: $(cat "$TMPD/toptext")"
}

readers_race() {
	local i rpid tpid
	(while :; do
		cat "$KRT_DBG"/peers/*/stats "$KRT_DBG"/peers/*/latency \
		    "$KRT_DBG"/peers/*/conns/*/* "$KRT_DBG"/devices/*/stats > /dev/null 2>&1
		"$KRTCTL" -j stats show > /dev/null 2>&1
		"$KRTCTL" -j -s peer show > /dev/null 2>&1
	done) &
	rpid=$!
	(while :; do "$KRTCTL" xfer st op write size 8192 count 50 depth 4 > /dev/null 2>&1; done) &
	tpid=$!
	for i in 1 2 3 4 5 6; do
		"$KRTCTL" peer add "cx$i" addr "$A" conns 2 depth 8 || fail "peer add cx$i"
		wait_peer "cx$i" active 2 || fail "cx$i not up"
		"$KRTCTL" ping "cx$i" count 10 > /dev/null || fail "ping cx$i"
		"$KRTCTL" stats reset peer "cx$i" || fail "reset cx$i"
		"$KRTCTL" peer set "cx$i" conns 1 || fail "shrink cx$i"
		"$KRTCTL" peer del "cx$i" || fail "peer del cx$i"
	done
	kill $rpid $tpid
	wait $rpid $tpid 2> /dev/null
	busywait 5000 bash -c "! ls $KRT_DBG/peers | grep -q '^cx'" ||
		fail "debugfs folders of deleted peers left: $(ls "$KRT_DBG/peers")"
	dmesg | grep -E 'BUG|WARNING|Oops|general protection' && fail "kernel complained"
	run_ok js stats show || return 1
	[ "$(jq length "$TMPD/js")" -ge 2 ] || fail "stats dump: $(cat "$TMPD/js")"
}

teardown() {
	"$KRTCTL" peer del st || fail "peer del"
	busywait 10000 bash -c "[ \$(rdma resource show qp | grep -c 'comm \[rdma_cm\]') = 0 ]" ||
		fail "QPs left: $(rdma resource show qp)"
	busywait 5000 bash -c "[ -z \"\$(ls $KRT_DBG/peers)\" ]" ||
		fail "debugfs peers left: $(ls "$KRT_DBG/peers")"
	unload_krt || return 1
	[ -e "$KRT_DBG" ] && fail "debugfs left after rmmod"
	return 0
}

ktap_plan 8
run_case setup setup
run_case ping_1000x4000_exact_counts ping_exact
run_case xfer_bytes_by_kind_and_gauges xfer_by_kind
run_case reset_one_peer_others_keep_eperm reset_one
run_case totals_survive_resize_and_reconnect survive_recycling
run_case top_rates_within_20pct_of_xfer top_rates
run_case readers_race_peer_churn readers_race
run_case teardown teardown
ktap_finish
