#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# krtctl's command line: help, version, argument checks, reply parsing and
# output (text and JSON, from crafted answers through the KRTCTL_REPLY test
# hook: no kernel needed), prefix matching, JSON, batch mode, monitor.
. "$(dirname "$0")/lib.sh"

UAPI=$KRT_ROOT/include/uapi/linux/krt.h

# every enumerator of the uapi header, by name: U[KRT_A_PEER_NAME]=1
declare -A U
while read -r name val; do
	U[$name]=$val
done < <(awk '/^enum/ { v = 0 }
	/^\t[A-Z_][A-Z0-9_]*[ \t,=]/ {
		s = $0; sub(/,.*/, "", s); sub(/^\t/, "", s)
		n = split(s, a, /[ \t]*=[ \t]*/)
		if (n > 1) v = a[2] + 0
		sub(/[ \t].*/, "", a[1])
		print a[1], v
		v++
	}' "$UAPI")

# Crafted netlink answers, as hex strings (the guest is little-endian).
# le BYTES VALUE: VALUE as BYTES little-endian bytes
le() {
	local i b out=""
	for ((i = 0; i < $1; i++)); do
		printf -v b '%02x' $((($2 >> (8 * i)) & 255))
		out+=$b
	done
	echo "$out"
}
# nla NAME HEX: an attribute (type by uapi name, or a number) padded to 4
nla() {
	local t=${U[$1]:-$1} pad=""
	while (((${#2} + ${#pad}) % 8)); do pad+=00; done
	echo "$(le 2 $((4 + ${#2} / 2)))$(le 2 "$t")$2$pad"
}
u8() { nla "$1" "$(le 1 "$2")"; }
u16() { nla "$1" "$(le 2 "$2")"; }
u32() { nla "$1" "$(le 4 "$2")"; }
u64() { nla "$1" "$(le 8 "$2")"; }
hexof() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
str() { nla "$1" "$(hexof "$2")00"; }
# shellcheck disable=SC2086 # the address's bytes, split
ip4() { nla "$1" "$(printf '%02x' ${2//./ })"; }
# genl CMD ATTR...: one krt message (part of a dump)
genl() {
	local cmd=${U[$1]:-$1} body
	shift
	body="$(le 1 "$cmd")010000$(printf '%s' "$@")"
	echo "$(le 4 $((16 + ${#body} / 2)))$(le 2 32)$(le 2 2)$(le 4 0)$(le 4 0)$body"
}
nl_done() { echo "$(le 4 20)$(le 2 3)$(le 2 2)$(le 4 0)$(le 4 0)00000000"; }
# nl_err ERRNO [MSG [MISS_TYPE]]: an error ack with extack attributes
nl_err() {
	local tlv="" body
	[ -n "${2:-}" ] && tlv+=$(str 1 "$2")
	[ -n "${3:-}" ] && tlv+=$(u32 5 "${U[$3]:-$3}")
	body="$(le 4 $((-$1 & 0xffffffff)))$(le 4 20)$(le 2 32)$(le 2 5)$(le 4 0)$(le 4 0)$tlv"
	echo "$(le 4 $((16 + ${#body} / 2)))$(le 2 2)$(le 2 $((0x300)))$(le 4 0)$(le 4 0)$body"
}
# reply FILE HEX...: write the messages to FILE
reply() {
	local f=$1
	shift
	# shellcheck disable=SC2059 # the format is the \xHH escapes
	printf "$(printf '%s' "$@" | sed 's/../\\x&/g')" > "$f"
}
# rk FILE ARGS...: krtctl ARGS answered from FILE; stdout, stderr in $TMPD/err
rk() {
	local f=$1
	shift
	KRTCTL_REPLY=$f "$KRTCTL" "$@" 2> "$TMPD/err"
}

help_version() {
	"$KRTCTL" --help | grep -q "^Usage: krtctl" || fail "--help"
	"$KRTCTL" help | grep -q "dev show" || fail "help"
	"$KRTCTL" help | grep -q "peer reconnect NAME" || fail "help lacks peer reconnect"
	"$KRTCTL" help | grep -q "conn reset { NAME INDEX | NAME/INDEX }" || fail "help lacks conn reset"
	"$KRTCTL" help | grep -q "reconnect_ms MS | reconnect_max_ms MS | loss_timeout S" ||
		fail "help lacks the recovery options"
	"$KRTCTL" peer help | grep -q "hb_ms MS | hb_misses N" || fail "peer help"
	"$KRTCTL" xfer help | grep -q "\[nowait\] \[noretry\]" || fail "xfer help"
	"$KRTCTL" -V | grep -q "^krtctl [0-9]" || fail "-V: $("$KRTCTL" -V)"
	"$KRTCTL" --bogus > /dev/null 2>&1
	check_eq $? 2 "exit status for an unknown option"
}

# bad_arg WANT_MSG ARGS...: krtctl ARGS is a usage error (2) saying WANT_MSG;
# these are checked before krtctl talks to the kernel
bad_arg() {
	local want=$1 out rc
	shift
	out=$("$KRTCTL" "$@" 2>&1)
	rc=$?
	check_eq $rc 2 "exit status of 'krtctl $*'" || return 1
	grep -qF -- "$want" <<< "$out" || fail "'krtctl $*': want '$want', got: $out"
}

# good_arg ARGS...: krtctl ARGS parses (an ack from KRTCTL_REPLY: exit 0)
good_arg() {
	"$KRTCTL" "$@" > "$TMPD/out" 2>&1 ||
		fail "'krtctl $*' refused: $(cat "$TMPD/out")"
}

argument_checks() {
	local max hdr
	bad_arg '"99999999999999g"' xfer x op read size 99999999999999g
	bad_arg 'size out of range (at most 4294967295 bytes): "4g"' xfer x op read size 4g
	bad_arg '"18446744073709551617"' xfer x op write size 18446744073709551617
	bad_arg 'bad size "1kk"' xfer x op read size 1kk
	bad_arg 'bad size "-1"' xfer x op read size -1
	bad_arg 'bad size " 1"' xfer x op read size " 1"
	# the largest ping payload: KRT_MAX_MSG less the test header
	max=$(awk '$2 == "KRT_MAX_MSG" { print $3 }' "$KRT_ROOT/include/krt/krt.h")
	hdr=$(awk '/^struct krt_tmsg/ { q = 1; next } q && /^}/ { exit } q && /__be32/ { n += 4 } END { print n }' \
		"$KRT_ROOT/src/krt/testsvc.c")
	bad_arg "ping: size over $((max - hdr)) bytes, the largest payload (KRT_MAX_MSG $max less the $hdr-byte test header): \"$((max - hdr + 1))\"" \
		ping x size $((max - hdr + 1))
	bad_arg '"5000"' ping x count 1 size 5000 noretry
	bad_arg 'nothing to set (conns, depth, reconnect_ms, reconnect_max_ms, loss_timeout, hb_ms, hb_misses, policy)' \
		peer set x
	bad_arg 'bad hb_ms "-5"' peer set x hb_ms -5
	bad_arg 'bad loss_timeout "abc"' peer add x addr 192.0.2.1 loss_timeout abc
	bad_arg 'bad reconnect_max_ms "4294967296"' peer add x addr 192.0.2.1 reconnect_max_ms 4294967296
	bad_arg 'peer: missing value after "hb_misses"' peer set x hb_misses
	bad_arg 'peer reconnect: unexpected argument "y"' peer reconnect x y
	bad_arg 'missing peer name after "reconnect"' peer reconnect
	bad_arg 'conn reset: missing NAME INDEX' conn reset
	bad_arg 'want NAME INDEX or NAME/INDEX, not "x"' conn reset x
	bad_arg 'bad index "abc"' conn reset x/abc
	bad_arg 'bad index "-1"' conn reset x -1
	bad_arg 'bad peer name in "/1"' conn reset /1
	bad_arg 'unexpected argument "3"' conn reset x 1 3
	# accepted: answered by a crafted ack
	reply "$TMPD/ack" "$(nl_err 0)"
	export KRTCTL_REPLY=$TMPD/ack
	good_arg peer set x reconnect_ms 50 reconnect_max_ms 500 loss_timeout 4 hb_ms 200 hb_misses 3
	good_arg peer add x addr 192.0.2.1 conns 2 recon 10 hb_misses 2
	good_arg peer set x hb_ms 100
	good_arg peer reconnect x
	good_arg conn reset x 1
	good_arg conn reset x/1
	good_arg conn reset x/1:
	unset KRTCTL_REPLY
}

# peer show of a reconnecting peer with every field, and of one from an
# older kernel without the recovery attributes
peer_fields() {
	local f=$TMPD/peers want
	reply "$f" \
		"$(genl KRT_CMD_PEER_GET "$(str KRT_A_PEER_NAME rc)" "$(ip4 KRT_A_PEER_ADDR 192.0.2.2)" \
			"$(u16 KRT_A_PEER_PORT 7471)" "$(u32 KRT_A_PEER_CONNS 4)" "$(u32 KRT_A_PEER_DEPTH 32)" \
			"$(u32 KRT_A_PEER_POLICY 1)" "$(u32 KRT_A_PEER_STATE "${U[KRT_PEER_RECONNECTING]}")" \
			"$(u32 KRT_A_PEER_CONNS_UP 0)" "$(u8 KRT_A_PEER_INBOUND 0)" \
			"$(u64 KRT_A_PEER_NODE_ID 0x1122334455667788)" "$(str KRT_A_PEER_REASON disconnected)" \
			"$(u32 KRT_A_PEER_RECONNECT_MS 50)" "$(u32 KRT_A_PEER_RECONNECT_MAX_MS 500)" \
			"$(u32 KRT_A_PEER_LOSS_TIMEOUT_S 30)" "$(u32 KRT_A_PEER_HB_MS 200)" \
			"$(u32 KRT_A_PEER_HB_MISSES 3)" "$(u32 KRT_A_PEER_ATTEMPT 3)" \
			"$(u32 KRT_A_PEER_NEXT_ATTEMPT_MS 120)" "$(u32 KRT_A_PEER_LOSS_LEFT_MS 28480)" \
			"$(u64 KRT_A_PEER_ERROR_AGE_MS 1520)" "$(u64 KRT_A_PEER_MEM 1048576)" \
			"$(u64 KRT_A_PEER_RESENT 7)" "$(u32 KRT_A_PEER_QUEUED 2)" "$(u64 KRT_A_PEER_RECONNECTS 5)")" \
		"$(genl KRT_CMD_PEER_GET "$(str KRT_A_PEER_NAME old)" "$(u32 KRT_A_PEER_CONNS 1)" \
			"$(u32 KRT_A_PEER_STATE "${U[KRT_PEER_DOWN]}")" "$(u8 KRT_A_PEER_INBOUND 1)")" \
		"$(nl_done)"
	rk "$f" peer show > "$TMPD/out" || fail "peer show: $(cat "$TMPD/err")"
	want="rc: outbound addr 192.0.2.2 port 7471 state reconnecting conns 0/4 depth 32 policy rr node 1122334455667788 attempt 3 next_attempt_ms 120 loss_left_ms 28480 last-error \"disconnected\" 1520 ms ago"
	check_eq "$(sed -n 1p "$TMPD/out")" "$want" "peer show, line 1"
	want="    reconnect_ms 50 reconnect_max_ms 500 loss_timeout_s 30 hb_ms 200 hb_misses 3 mem 1048576 queued 2 resent 7 reconnects 5"
	check_eq "$(sed -n 2p "$TMPD/out")" "$want" "peer show, line 2"
	check_eq "$(sed -n 3p "$TMPD/out")" "old: inbound state down conns 0/1 depth 0 policy unknown node 0000000000000000" \
		"peer show without the recovery attributes"
	check_eq "$(wc -l < "$TMPD/out")" 3 "peer show lines"
	rk "$f" -j peer show > "$TMPD/json" || fail "-j peer show: $(cat "$TMPD/err")"
	check_eq "$(jq -c '.[0]' "$TMPD/json")" \
		'{"name":"rc","direction":"outbound","addr":"192.0.2.2","port":7471,"state":"reconnecting","conns_up":0,"conns":4,"depth":32,"policy":"rr","node_id":"1122334455667788","attempt":3,"next_attempt_ms":120,"loss_left_ms":28480,"reason":"disconnected","error_age_ms":1520,"reconnect_ms":50,"reconnect_max_ms":500,"loss_timeout_s":30,"hb_ms":200,"hb_misses":3,"mem":1048576,"queued":2,"resent":7,"reconnects":5}' \
		"-j peer show"
	check_eq "$(jq -c '.[1] | keys' "$TMPD/json")" \
		'["conns","conns_up","depth","direction","name","node_id","policy","state"]' \
		"-j peer show without the recovery attributes"
	check_eq "$(cat "$TMPD/err")" "" "stderr"
}

conn_dev_fields() {
	local f=$TMPD/conns
	reply "$f" \
		"$(genl KRT_CMD_CONN_GET "$(str KRT_A_CONN_PEER rc)" "$(u32 KRT_A_CONN_INDEX 1)" \
			"$(u32 KRT_A_CONN_STATE "${U[KRT_CONN_RECONNECTING]}")" "$(str KRT_A_CONN_DEV rxe0)" \
			"$(ip4 KRT_A_CONN_LADDR 192.0.2.1)" "$(u16 KRT_A_CONN_LPORT 40000)" \
			"$(ip4 KRT_A_CONN_RADDR 192.0.2.2)" "$(u16 KRT_A_CONN_RPORT 7471)" \
			"$(u32 KRT_A_CONN_QPN 17)" "$(u32 KRT_A_CONN_DEPTH 32)" "$(u32 KRT_A_CONN_INFLIGHT 0)" \
			"$(str KRT_A_CONN_REASON "heartbeat: no answer from the peer")" \
			"$(u32 KRT_A_CONN_RECONNECTS 4)" "$(u64 KRT_A_CONN_STATE_AGE_MS 250)" \
			"$(u32 KRT_A_CONN_ATTEMPT 2)" "$(u64 KRT_A_CONN_MEM 262144)")" \
		"$(nl_done)"
	rk "$f" conn show > "$TMPD/out" || fail "conn show: $(cat "$TMPD/err")"
	check_eq "$(cat "$TMPD/out")" \
		'rc/1: state reconnecting dev rxe0 local 192.0.2.1:40000 remote 192.0.2.2:7471 qpn 17 depth 32 inflight 0 reconnects 4 attempt 2 state_age_ms 250 mem 262144 reason "heartbeat: no answer from the peer"' \
		"conn show"
	check_eq "$(rk "$f" -j conn show | jq -c '.[0] | [.state, .reconnects, .attempt, .state_age_ms, .mem, .reason]')" \
		'["reconnecting",4,2,250,262144,"heartbeat: no answer from the peer"]' "-j conn show"
	reply "$f" \
		"$(genl KRT_CMD_DEV_GET "$(str KRT_A_DEV_NAME rxe0)" "$(u32 KRT_A_DEV_STATE 1)" \
			"$(u64 KRT_A_DEV_MEM_USED 524288)" "$(u64 KRT_A_DEV_MEM_BUDGET 268435456)" \
			"$(u64 KRT_A_DEV_MEM_TOTAL 1048576)")" \
		"$(genl KRT_CMD_DEV_GET "$(str KRT_A_DEV_NAME old0)" "$(u32 KRT_A_DEV_STATE 1)")" \
		"$(nl_done)"
	rk "$f" dev show | grep -q " node_guid 0000000000000000 mem_used 524288 mem_total 1048576 mem_budget 268435456$" ||
		fail "dev show: $(rk "$f" dev show)"
	check_eq "$(rk "$f" -j dev show | jq -c '[.[0].mem_used, .[0].mem_total, .[0].mem_budget, (.[1] | has("mem_used"))]')" \
		'[524288,1048576,268435456,false]' "-j dev show"
}

test_output() {
	local f=$TMPD/test ok
	ok="$(u32 KRT_A_TEST_SIZE 64)$(u32 KRT_A_TEST_DEPTH 1)$(u32 KRT_A_TEST_THREADS 1)$(u64 KRT_A_TEST_OK 10)"
	reply "$f" "$(genl KRT_CMD_TEST "$ok" "$(u64 KRT_A_TEST_RESENT 2)")" "$(nl_err 0)"
	rk "$f" ping x noretry | grep -q "^  10 ok, 0 errors, 0 mismatches, 0 double completions, resent 2$" ||
		fail "ping: $(rk "$f" ping x)"
	check_eq "$(rk "$f" -j ping x | jq -c '[.ok, .resent, .size]')" '[10,2,64]' "-j ping"
	reply "$f" "$(genl KRT_CMD_TEST "$ok")" "$(nl_err 0)"
	check_eq "$(rk "$f" -j xfer x op read noretry nowait | jq 'has("resent")')" false "no resent from an older kernel"
	! rk "$f" xfer x op write | grep -q "resent" || fail "text resent from an older kernel"
}

# malformed answers: attributes of the wrong size, strings without their
# NUL, an attribute running past its message; ignored, reported, no crash
malformed_replies() {
	local f=$TMPD/bad
	reply "$f" \
		"$(genl KRT_CMD_PEER_GET "$(nla KRT_A_PEER_NAME "$(hexof abc)")" "$(u16 KRT_A_PEER_STATE 2)" \
			"$(u64 KRT_A_PEER_CONNS_UP 3)" "$(nla KRT_A_PEER_ADDR 00112233445566778899aabbccddeeff0011)" \
			"$(u8 KRT_A_PEER_ATTEMPT 1)" "$(u32 KRT_A_PEER_CONNS 4)" "$(u32 200 1)")" \
		"$(nl_done)"
	rk "$f" -j peer show > "$TMPD/json" || fail "exit status: $(cat "$TMPD/err")"
	check_eq "$(jq -c '.[0] | [.name, .state, .conns_up, .conns, has("addr"), has("attempt")]' "$TMPD/json")" \
		'["","unknown",0,4,false,false]' "malformed attributes left out"
	grep -q "ignoring a malformed peer attribute (type ${U[KRT_A_PEER_STATE]}, 2 bytes)" "$TMPD/err" ||
		fail "no warning: $(cat "$TMPD/err")"
	check_eq "$(grep -c "ignoring a malformed" "$TMPD/err")" 5 "warnings"
	# the last attribute claims 64 bytes, the message ends after 8
	reply "$f" "$(genl KRT_CMD_PEER_GET "$(u32 KRT_A_PEER_CONNS 4)" "$(le 2 68)$(le 2 "${U[KRT_A_PEER_NAME]}")41424344")" \
		"$(nl_done)"
	check_eq "$(rk "$f" -j peer show | jq -c '[.[0].name, .[0].conns]')" '["",4]' "attribute past the message"
	# the message itself shorter than its genetlink header
	reply "$f" "$(le 4 18)$(le 2 32)$(le 2 2)$(le 4 0)$(le 4 0)0100" "$(nl_done)"
	check_eq "$(rk "$f" -j peer show)" "[]" "message without a genetlink header"
}

# control characters escaped, invalid UTF-8 replaced by U+FFFD, valid
# UTF-8 kept: the output is valid JSON
json_strings() {
	local f=$TMPD/esc want
	reply "$f" "$(genl KRT_CMD_PEER_GET "$(str KRT_A_PEER_NAME n)" \
		"$(nla KRT_A_PEER_REASON "$(hexof 'a')01$(hexof 'b"c\d')7f0a09ffc0afeda080c3a9e282acf09f9880e28200")")" \
		"$(nl_done)"
	rk "$f" -j peer show > "$TMPD/json" || fail "exit status"
	jq -e . "$TMPD/json" > /dev/null || fail "not JSON: $(od -c "$TMPD/json" | head)"
	want='"reason":"a\u0001b\"c\\d\u007f\n\t\ufffd\ufffd\ufffd\ufffd\ufffd\ufffdé€😀\ufffd\ufffd"'
	grep -qF "$want" "$TMPD/json" || fail "escaping: $(cat "$TMPD/json")"
}

# errors the kernel explains, as the tool prints them
extack_errors() {
	local f=$TMPD/nak out
	reply "$f" "$(nl_err 2 "no such peer")"
	out=$(rk "$f" peer reconnect nosuch; echo "rc=$?")
	check_eq "$out" "rc=1" "peer reconnect of an unknown peer"
	check_eq "$(cat "$TMPD/err")" "Error: no such peer." "its message"
	reply "$f" "$(nl_err 22 "" KRT_A_CONN_INDEX)"
	rk "$f" conn reset rc/0
	check_eq $? 1 "conn reset refused"
	check_eq "$(cat "$TMPD/err")" 'Error: missing required attribute "index".' "missing attribute named"
	reply "$f" "$(nl_err 1)"
	rk "$f" conn reset rc 0
	check_eq "$(cat "$TMPD/err")" "Error: conn reset: Operation not permitted." "error without a message"
}

monitor_states() {
	local f=$TMPD/events
	reply "$f" \
		"$(genl KRT_CMD_PEER_STATE_NTF "$(str KRT_A_PEER_NAME rc)" \
			"$(u32 KRT_A_PEER_STATE "${U[KRT_PEER_RECONNECTING]}")" "$(u32 KRT_A_PEER_ATTEMPT 1)")" \
		"$(genl KRT_CMD_CONN_STATE_NTF "$(str KRT_A_CONN_PEER rc)" "$(u32 KRT_A_CONN_INDEX 2)" \
			"$(u32 KRT_A_CONN_STATE "${U[KRT_CONN_RECONNECTING]}")")" \
		"$(genl KRT_CMD_PEER_STATE_NTF "$(str KRT_A_PEER_NAME rc)" \
			"$(u32 KRT_A_PEER_STATE "${U[KRT_PEER_DOWN]}")")"
	rk "$f" monitor > "$TMPD/mon" || fail "monitor: $(cat "$TMPD/err")"
	grep -q '^\[peer-state\] rc: outbound state reconnecting .* attempt 1$' "$TMPD/mon" ||
		fail "peer-state: $(cat "$TMPD/mon")"
	grep -q '^\[conn-state\] rc/2: state reconnecting ' "$TMPD/mon" || fail "conn-state: $(cat "$TMPD/mon")"
	grep -q '^\[peer-state\] rc: outbound state down ' "$TMPD/mon" || fail "peer down: $(cat "$TMPD/mon")"
	check_eq "$(rk "$f" -j monitor | jq -r -s 'map(.peer.state // .conn.state) | join(",")')" \
		"reconnecting,reconnecting,down" "-j monitor states"
	check_eq "$(rk "$f" -j monitor count 1 | wc -l)" 1 "monitor count 1"
}

prefix_and_json() {
	load_krt || return 1
	rxe_add krt_cl0 || { fail "rxe_add"; return 1; }
	"$KRTCTL" d s | grep -q "^krt_cl0: " || fail "'krtctl d s' did not list krt_cl0"
	"$KRTCTL" dev list krt_cl0 | grep -q "^krt_cl0: " || fail "'dev list NAME'"
	"$KRTCTL" -j dev show | jq -e . > /dev/null || fail "-j dev show is not JSON"
	"$KRTCTL" -j -p dev show krt_cl0 | jq -e . > /dev/null ||
		fail "-j -p dev show NAME is not JSON"
	check_eq "$("$KRTCTL" -j dev show krt_cl0 | jq length)" \
		1 "one object for one device"
}

batch_mode() {
	printf '# comment\ndev set krt_cl0 enabled off\n\ndev show krt_cl0\n' > "$TMPD/batch"
	"$KRTCTL" -b "$TMPD/batch" | grep -q "state disabled" || fail "batch did not apply"
	printf 'dev set krt_nope enabled on\ndev set krt_cl0 enabled on\n' > "$TMPD/batch2"
	"$KRTCTL" -b "$TMPD/batch2" > /dev/null 2>&1 && fail "batch with a bad line succeeded"
	check_eq "$(dev_field krt_cl0 enabled)" false "batch stops at the first error"
	"$KRTCTL" -f -b "$TMPD/batch2" > /dev/null 2>&1
	check_eq "$(dev_field krt_cl0 enabled)" true "-f goes on after an error"
}

monitor_count() {
	"$KRTCTL" monitor count 1 > "$TMPD/mon" 2>/dev/null &
	local pid=$!
	sleep 0.3
	"$KRTCTL" dev set krt_cl0 enabled off
	busywait 5000 bash -c "! kill -0 $pid 2>/dev/null" || { kill $pid; fail "monitor count 1 did not exit"; }
	grep -q '^\[dev-change\] krt_cl0: .*state disabled' "$TMPD/mon" || fail "plain event: $(cat "$TMPD/mon")"
	"$KRTCTL" dev set krt_cl0 enabled on
}

ktap_plan 12
run_case help_and_version help_version
run_case argument_checks_before_the_kernel argument_checks
run_case peer_show_recovery_fields peer_fields
run_case conn_and_dev_show_fields conn_dev_fields
run_case ping_xfer_output test_output
run_case malformed_replies_ignored malformed_replies
run_case json_strings_escaped json_strings
run_case extack_errors extack_errors
run_case monitor_state_names monitor_states
run_case prefix_matching_and_json prefix_and_json
run_case batch_mode batch_mode
run_case monitor_count monitor_count
ktap_finish
