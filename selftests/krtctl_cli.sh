#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# krtctl's command line: help, version, argument checks, reply parsing and
# output (text and JSON, from crafted answers through the KRTCTL_REPLY test
# hook: no kernel needed), prefix matching and ambiguous prefixes, per-object
# help, connection names, save (its output, then a round trip through
# rmmod/insmod), bash completion, JSON, batch mode, monitor.
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

# same_keys WHAT TEXT JSON SKIP: the keys of a text object (the words after
# its "NAME:", in "key value" pairs, quoted values kept whole) are those of
# its JSON object (scalar members, less the SKIP keys its "NAME:" stands for)
same_keys() {
	local t j
	t=$(python3 -c 'import shlex, sys
w = shlex.split(sys.stdin.read())[1:]
print(" ".join(sorted(w[0::2])))' <<< "$2")
	j=$(jq -r --arg skip "$4" '[to_entries[] | select((.value | type) != "object" and
		(.value | type) != "array" and ((.key | IN($skip | split(" ")[])) | not)) | .key] |
		sort | join(" ")' <<< "$3")
	check_eq "$t" "$j" "$1: text and JSON keys"
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
	want="rc: direction outbound addr 192.0.2.2 port 7471 state reconnecting conns_up 0 conns 4 depth 32 policy rr node_id 1122334455667788 attempt 3 next_attempt_ms 120 loss_left_ms 28480 reason \"disconnected\" error_age_ms 1520"
	check_eq "$(sed -n 1p "$TMPD/out")" "$want" "peer show, line 1"
	want="    reconnect_ms 50 reconnect_max_ms 500 loss_timeout_s 30 hb_ms 200 hb_misses 3 mem 1048576 queued 2 resent 7 reconnects 5"
	check_eq "$(sed -n 2p "$TMPD/out")" "$want" "peer show, line 2"
	check_eq "$(sed -n 3p "$TMPD/out")" "old: direction inbound state down conns_up 0 conns 1 depth 0 policy unknown node_id 0000000000000000" \
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
	same_keys "peer show" "$(sed -n 1,2p "$TMPD/out")" "$(jq -c '.[0]' "$TMPD/json")" name
	same_keys "peer show (older kernel)" "$(sed -n 3p "$TMPD/out")" "$(jq -c '.[1]' "$TMPD/json")" name
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
		'rc/1: state reconnecting dev rxe0 laddr 192.0.2.1 lport 40000 raddr 192.0.2.2 rport 7471 qpn 17 depth 32 inflight 0 reconnects 4 attempt 2 state_age_ms 250 mem 262144 reason "heartbeat: no answer from the peer"' \
		"conn show"
	check_eq "$(rk "$f" -j conn show | jq -c '.[0] | [.state, .reconnects, .attempt, .state_age_ms, .mem, .reason]')" \
		'["reconnecting",4,2,250,262144,"heartbeat: no answer from the peer"]' "-j conn show"
	same_keys "conn show" "$(rk "$f" conn show)" "$(rk "$f" -j conn show | jq -c '.[0]')" "peer index"
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
	same_keys "dev show" "$(rk "$f" dev show | sed -n 1,2p)" "$(rk "$f" -j dev show | jq -c '.[0]')" name
	same_keys "dev show (older kernel)" "$(rk "$f" dev show | sed -n 3,4p)" \
		"$(rk "$f" -j dev show | jq -c '.[1]')" name
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
	rk "$f" -j peer show > "$TMPD/json"
	check_eq "$?/$(wc -c < "$TMPD/json")" "1/0" "message without a genetlink header: exit status, JSON bytes"
	grep -qx "Error: peer show: Bad message." "$TMPD/err" || fail "no error: $(cat "$TMPD/err")"
	# a good peer, then a bad message: text output prints nothing either,
	# not the lines before the error
	reply "$f" "$(genl KRT_CMD_PEER_GET "$(str KRT_A_PEER_NAME good)" "$(u32 KRT_A_PEER_CONNS 4)")" \
		"$(le 4 18)$(le 2 32)$(le 2 2)$(le 4 0)$(le 4 0)0100" "$(nl_done)"
	rk "$f" peer show > "$TMPD/text"
	check_eq "$?/$(wc -c < "$TMPD/text")" "1/0" "good peer then a bad message: exit status, text bytes"
	grep -qx "Error: peer show: Bad message." "$TMPD/err" || fail "no error: $(cat "$TMPD/err")"
	# the good peer alone is printed
	reply "$f" "$(genl KRT_CMD_PEER_GET "$(str KRT_A_PEER_NAME good)" "$(u32 KRT_A_PEER_CONNS 4)")" "$(nl_done)"
	rk "$f" peer show > "$TMPD/text" || fail "good peer: exit status: $(cat "$TMPD/err")"
	grep -q "^good" "$TMPD/text" || fail "good peer not printed: $(cat "$TMPD/text")"
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
	grep -q '^\[peer-state\] rc: direction outbound state reconnecting .* attempt 1$' "$TMPD/mon" ||
		fail "peer-state: $(cat "$TMPD/mon")"
	grep -q '^\[conn-state\] rc/2: state reconnecting ' "$TMPD/mon" || fail "conn-state: $(cat "$TMPD/mon")"
	grep -q '^\[peer-state\] rc: direction outbound state down ' "$TMPD/mon" || fail "peer down: $(cat "$TMPD/mon")"
	check_eq "$(rk "$f" -j monitor | jq -r -s 'map(.peer.state // .conn.state) | join(",")')" \
		"reconnecting,reconnecting,down" "-j monitor states"
	check_eq "$(rk "$f" -j monitor count 1 | wc -l)" 1 "monitor count 1"
}

# help OBJECT and OBJECT help print that object's lines of the whole usage,
# and together every command line of it (one source)
help_objects() {
	local all objs o out cmds
	all=$("$KRTCTL" help)
	objs=$(sed -n 's/^where  OBJECT := { \(.*\) }$/\1/p' <<< "$all" | tr -d '|')
	check_eq "$objs" "dev  listen  peer  conn  stats  top  monitor  ping  xfer  bench  save  help" "objects of the usage"
	out=$("$KRTCTL" help peer)
	check_eq "$(head -1 <<< "$out")" "Usage: krtctl [OPTIONS] peer ..." "help peer, first line"
	grep -q "^  peer add NAME addr IP \[port P\]" <<< "$out" || fail "help peer lacks peer add: $out"
	grep -q "hb_ms MS | hb_misses N }" <<< "$out" || fail "help peer lacks RECOVERY: $out"
	check_eq "$(grep -c '^  peer ' <<< "$out")" 5 "peer commands in help peer"
	grep -qE "^  (dev|conn|listen|ping|xfer|monitor|save) " <<< "$out" && fail "help peer shows other objects: $out"
	cmds=""
	for o in $objs; do
		out=$("$KRTCTL" help "$o") || fail "help $o: exit $?"
		[ "$o" = help ] && { check_eq "$out" "$all" "help help"; continue; }
		check_eq "$(head -1 <<< "$out")" "Usage: krtctl [OPTIONS] $o ..." "help $o, first line"
		check_eq "$("$KRTCTL" "$o" help)" "$out" "'$o help' and 'help $o'"
		cmds+=$(tail -n +2 <<< "$out")$'\n'
	done
	check_eq "$cmds" "$(sed -n '/^$/,/^$/p' <<< "$all" | sed '/^$/d; /^  help /d')"$'\n' \
		"the objects' help together is the command block of help"
	bad_arg 'help: unknown object "bogus"' help bogus
	bad_arg 'help: unexpected argument "x"' help peer x
}

# a prefix of several objects or commands is an error naming them (exit
# 2), except that show, each object's default, wins; unique prefixes work
ambiguous_prefixes() {
	local f=$TMPD/amb out
	bad_arg "krtctl: 'p' is ambiguous: peer, ping" p
	check_eq "$("$KRTCTL" p 2>&1)" "krtctl: 'p' is ambiguous: peer, ping (try 'krtctl help')" "the whole message"
	bad_arg "krtctl: 'p' is ambiguous: peer, ping" p show
	bad_arg "krtctl: 'p' is ambiguous: peer, ping" help p
	bad_arg "krtctl: 'p' is ambiguous: peer, ping" -j p s
	check_eq "$("$KRTCTL" pe help)" "$("$KRTCTL" help peer)" "pe is peer"
	check_eq "$("$KRTCTL" pi help)" "$("$KRTCTL" help ping)" "pi is ping"
	bad_arg "krtctl: 's' is ambiguous: stats, save" s
	check_eq "$("$KRTCTL" sa help)" "$("$KRTCTL" help save)" "sa is save"
	check_eq "$("$KRTCTL" st help)" "$("$KRTCTL" help stats)" "st is stats"
	check_eq "$("$KRTCTL" t help)" "$("$KRTCTL" help top)" "t is top"
	check_eq "$("$KRTCTL" h)" "$("$KRTCTL" help)" "h is help"
	check_eq "$("$KRTCTL" help x)" "$("$KRTCTL" help xfer)" "help x is help xfer"
	check_eq "$("$KRTCTL" c h)" "$("$KRTCTL" help conn)" "c h is conn help"
	check_eq "$("$KRTCTL" l h)" "$("$KRTCTL" help listen)" "l h is listen help"
	check_eq "$("$KRTCTL" m h)" "$("$KRTCTL" help monitor)" "m h is monitor help"
	bad_arg 'unknown object "pz"' pz
	bad_arg 'peer: unknown command "frob"' peer frob
	# "s" is set and show: show wins (krtctl d s is documented); "se" is set
	reply "$f" "$(genl KRT_CMD_PEER_GET "$(str KRT_A_PEER_NAME rc)" "$(u32 KRT_A_PEER_CONNS 2)")" "$(nl_done)"
	out=$(rk "$f" peer s) || fail "peer s: $(cat "$TMPD/err")"
	grep -q "^rc: direction outbound state unknown conns_up 0 conns 2 " <<< "$out" || fail "peer s is not peer show: $out"
	reply "$f" "$(nl_done)"
	out=$(rk "$f" d s; echo "rc=$?")
	check_eq "$out" "rc=0" "d s"
	reply "$f" "$(nl_err 0)"
	rk "$f" peer se rc hb_ms 100 > /dev/null || fail "peer se is not peer set: $(cat "$TMPD/err")"
	rk "$f" peer rec rc > /dev/null || fail "peer rec is not peer reconnect: $(cat "$TMPD/err")"
	# keywords keep the first match, in the order of the usage
	rk "$f" peer se rc recon 10 > /dev/null || fail "recon is not reconnect_ms: $(cat "$TMPD/err")"
}

# conn show takes a connection as conn show prints it, or peer NAME index N
conn_names() {
	local f=$TMPD/cn out i
	reply "$f" \
		"$(genl KRT_CMD_CONN_GET "$(str KRT_A_CONN_PEER st2)" "$(u32 KRT_A_CONN_INDEX 0)" \
			"$(u32 KRT_A_CONN_STATE "${U[KRT_CONN_ACTIVE]}")" "$(u32 KRT_A_CONN_QPN 17)")" \
		"$(genl KRT_CMD_CONN_GET "$(str KRT_A_CONN_PEER st2)" "$(u32 KRT_A_CONN_INDEX 1)" \
			"$(u32 KRT_A_CONN_STATE "${U[KRT_CONN_ACTIVE]}")" "$(u32 KRT_A_CONN_QPN 18)")" \
		"$(nl_done)"
	for i in "st2/1" "st2/1:" "peer st2 index 1" "p st2 i 1"; do
		# shellcheck disable=SC2086 # the words, split
		out=$(rk "$f" conn show $i) || fail "conn show $i: $(cat "$TMPD/err")"
		check_eq "$(cut -d' ' -f1,14,15 <<< "$out")" "st2/1: qpn 18" "conn show $i"
	done
	check_eq "$(rk "$f" -j conn show st2/0 | jq -c '[.[] | [.peer, .index, .qpn]]')" '[["st2",0,17]]' "-j conn show st2/0"
	check_eq "$(rk "$f" conn show peer st2 | wc -l)" 2 "conn show peer st2"
	out=$(rk "$f" conn show st2/5; echo "rc=$?")
	check_eq "$out" "rc=1" "conn show of a missing connection"
	check_eq "$(cat "$TMPD/err")" "Error: no such connection." "its message"
	out=$(rk "$f" -j conn show st2/5; echo "rc=$?")
	check_eq "$out" "rc=1" "-j conn show of a missing connection: no JSON, exit 1"
	bad_arg 'conn show: "index" needs "peer NAME"' conn show index 1
	bad_arg 'conn show: bad index "x"' conn show st2/x
	bad_arg 'conn show: bad index "-1"' conn show peer st2 index -1
	bad_arg 'conn show: bad peer name in "/1"' conn show /1
	bad_arg 'conn show: missing value after "peer"' conn show peer
	bad_arg 'conn show: expected "peer NAME" or NAME/INDEX, got "st2"' conn show st2
}

# save of crafted answers: the batch lines, every field, in order
save_output() {
	local f=$TMPD/sv want out
	reply "$f" \
		"$(genl KRT_CMD_DEV_GET "$(str KRT_A_DEV_NAME rxa)" "$(u32 KRT_A_DEV_STATE "${U[KRT_DEV_STATE_DISABLED]}")")" \
		"$(genl KRT_CMD_DEV_GET "$(str KRT_A_DEV_NAME rxb)" "$(u32 KRT_A_DEV_STATE "${U[KRT_DEV_STATE_USABLE]}")")" \
		"$(genl KRT_CMD_DEV_GET "$(str KRT_A_DEV_NAME rxc)" "$(u32 KRT_A_DEV_STATE "${U[KRT_DEV_STATE_UNUSABLE]}")")" \
		"$(genl KRT_CMD_LISTEN_GET "$(ip4 KRT_A_LISTEN_ADDR 192.0.2.1)" "$(u16 KRT_A_LISTEN_PORT 7471)")" \
		"$(genl KRT_CMD_LISTEN_GET "$(nla KRT_A_LISTEN_ADDR 20010db8000000000000000000000001)" \
			"$(u16 KRT_A_LISTEN_PORT 7999)")" \
		"$(genl KRT_CMD_PEER_GET "$(str KRT_A_PEER_NAME st2)" "$(ip4 KRT_A_PEER_ADDR 192.0.2.2)" \
			"$(u16 KRT_A_PEER_PORT 7471)" "$(u32 KRT_A_PEER_CONNS 4)" "$(u32 KRT_A_PEER_DEPTH 32)" \
			"$(u32 KRT_A_PEER_POLICY "${U[KRT_POLICY_MIN_INFLIGHT]}")" "$(u32 KRT_A_PEER_STATE 2)" \
			"$(u8 KRT_A_PEER_INBOUND 0)" "$(u32 KRT_A_PEER_RECONNECT_MS 50)" \
			"$(u32 KRT_A_PEER_RECONNECT_MAX_MS 500)" "$(u32 KRT_A_PEER_LOSS_TIMEOUT_S 20)" \
			"$(u32 KRT_A_PEER_HB_MS 200)" "$(u32 KRT_A_PEER_HB_MISSES 3)" "$(u32 KRT_A_PEER_ATTEMPT 2)")" \
		"$(genl KRT_CMD_PEER_GET "$(str KRT_A_PEER_NAME in-1122-1)" "$(u32 KRT_A_PEER_CONNS 4)" \
			"$(u8 KRT_A_PEER_INBOUND 1)")" \
		"$(genl KRT_CMD_PEER_GET "$(str KRT_A_PEER_NAME old)" "$(ip4 KRT_A_PEER_ADDR 192.0.2.3)" \
			"$(u16 KRT_A_PEER_PORT 7500)" "$(u32 KRT_A_PEER_CONNS 1)" "$(u32 KRT_A_PEER_DEPTH 128)" \
			"$(u32 KRT_A_PEER_POLICY "${U[KRT_POLICY_RR]}")")" \
		"$(nl_done)"
	want="dev set rxa enabled off
listen add 192.0.2.1 port 7471
listen add 2001:db8::1 port 7999
peer add st2 addr 192.0.2.2 port 7471 conns 4 depth 32 policy min-inflight reconnect_ms 50 reconnect_max_ms 500 loss_timeout 20 hb_ms 200 hb_misses 3
peer add old addr 192.0.2.3 port 7500 conns 1 depth 128 policy rr"
	out=$(rk "$f" save) || fail "save: $(cat "$TMPD/err")"
	check_eq "$(grep -v '^#' <<< "$out")" "$want" "save"
	grep -q "^# krt configuration, written by 'krtctl save' (krtctl [0-9]" <<< "$out" || fail "save header: $out"
	check_eq "$(cat "$TMPD/err")" "" "save stderr"
	check_eq "$(rk "$f" save -)" "$out" "save -"
	rm -f "$TMPD/saved"
	rk "$f" save "$TMPD/saved" > "$TMPD/out" || fail "save FILE: $(cat "$TMPD/err")"
	check_eq "$(cat "$TMPD/saved")" "$out" "save FILE"
	check_eq "$(wc -c < "$TMPD/out")" 0 "save FILE prints nothing"
	check_eq "$(stat -c %a "$TMPD/saved")" "$(printf '%o' $((0666 & ~$(umask))))" "a new file's mode"
	chmod 600 "$TMPD/saved"
	rk "$f" save "$TMPD/saved" || fail "save over FILE"
	check_eq "$(stat -c %a "$TMPD/saved")" 600 "the mode of the file replaced"
	# the lines read back: every one parses (answered by an ack)
	reply "$TMPD/ack" "$(nl_err 0)"
	KRTCTL_REPLY=$TMPD/ack "$KRTCTL" -b "$TMPD/saved" > "$TMPD/out" 2>&1 ||
		fail "the saved file does not parse: $(cat "$TMPD/out")"
	# a refused dump writes nothing, and leaves FILE as it was
	cp "$TMPD/saved" "$TMPD/saved.0"
	reply "$f" "$(nl_err 1)"
	out=$(rk "$f" save "$TMPD/saved"; echo "rc=$?")
	check_eq "$out" "rc=1" "save refused"
	cmp -s "$TMPD/saved" "$TMPD/saved.0" || fail "a failed save changed FILE"
	check_eq "$(find "$TMPD" -name 'saved.??????' | wc -l)" 0 "temporary files left"
	# a name the batch syntax cannot carry: a comment, exit 1
	reply "$f" "$(genl KRT_CMD_PEER_GET "$(str KRT_A_PEER_NAME "a b")" "$(ip4 KRT_A_PEER_ADDR 192.0.2.4)" \
		"$(u16 KRT_A_PEER_PORT 7471)")" "$(nl_done)"
	out=$(rk "$f" save; echo "rc=$?")
	check_eq "$(grep -v '^#' <<< "$out")" "rc=1" "save of an unwritable name"
	grep -qx '# peer add (unwritable name) addr 192.0.2.4' <<< "$out" || fail "no comment for it: $out"
	grep -q 'peer name "a b" cannot be written' "$TMPD/err" || fail "its message: $(cat "$TMPD/err")"
	bad_arg 'save: unexpected argument "b"' save a b
}

# comp WORD...: the candidates bash completion offers for the last WORD
# (sorted, on one line), as bash calls the completion function
comp() {
	(
		# shellcheck disable=SC1091
		. "$KRT_ROOT/packaging/bash-completion/krtctl" || exit 1
		COMP_WORDS=("$KRTCTL" "$@")
		COMP_CWORD=$#
		COMP_LINE="${COMP_WORDS[*]}"
		COMP_POINT=${#COMP_LINE}
		_krtctl
		printf '%s\n' "${COMPREPLY[@]}"
	) | sort | grep . | tr '\n' ' ' | sed 's/ $//'
}

completion() {
	bash -n "$KRT_ROOT/packaging/bash-completion/krtctl" || fail "syntax"
	check_eq "$(bash -c ". '$KRT_ROOT/packaging/bash-completion/krtctl'; complete -p krtctl")" \
		"complete -F _krtctl krtctl" "complete -p"
	check_eq "$(comp "")" "bench conn dev help listen monitor peer ping save stats top xfer" "krtctl "
	check_eq "$(comp p)" "peer ping" "krtctl p"
	check_eq "$(comp -j pe)" "peer" "krtctl -j pe"
	check_eq "$(comp peer "")" "add del help reconnect set show" "krtctl peer "
	check_eq "$(comp peer add x addr 1.2.3.4 "")" \
		"conns depth hb_misses hb_ms loss_timeout policy port reconnect_max_ms reconnect_ms" \
		"krtctl peer add x addr 1.2.3.4 "
	check_eq "$(comp peer add x addr 1.2.3.4 conns 2 policy "")" "min-inflight rr" "policy values"
	check_eq "$(comp peer set x hb "")" "" "a value: nothing"
	check_eq "$(comp peer set x recon 5 "")" \
		"conns depth hb_misses hb_ms loss_timeout policy reconnect_max_ms" "peer set, recon used"
	check_eq "$(comp dev "")" "help set show" "krtctl dev "
	check_eq "$(comp dev set x "")" "enabled" "dev set NAME "
	check_eq "$(comp dev set x enabled "")" "off on" "dev set NAME enabled "
	check_eq "$(comp conn "")" "help reset show" "krtctl conn "
	check_eq "$(comp listen add 1.2.3.4 "")" "port" "listen add ADDR "
	check_eq "$(comp xfer x op "")" "read write" "xfer op "
	check_eq "$(comp xfer x nowait op read "")" "count depth noretry size threads timeout" "xfer after a flag"
	check_eq "$(comp ping x "")" "count noretry size timeout" "ping NAME "
	check_eq "$(comp bench x op "")" "read send write" "bench op "
	check_eq "$(comp bench x verify op send "")" "count depth size threads time" "bench after a flag"
	check_eq "$(comp monitor "")" "count" "monitor "
	check_eq "$(comp help "")" "bench conn dev help listen monitor peer ping save stats top xfer" "help "
	check_eq "$(comp -j "")" "bench conn dev help listen monitor peer ping save stats top xfer" "krtctl -j "
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

# monitor count 1 prints one event and exits.  Nothing says when it has
# joined the group, so the device is switched (off, then on) until it
# saw an event: it must print exactly one, a switch of that device.
monitor_count() {
	local i pid
	"$KRTCTL" monitor count 1 > "$TMPD/mon" 2>/dev/null &
	pid=$!
	for ((i = 1; i <= 10; i++)); do
		"$KRTCTL" dev set krt_cl0 enabled off
		busywait 2000 bash -c "! kill -0 $pid 2>/dev/null" && break
		"$KRTCTL" dev set krt_cl0 enabled on
		busywait 2000 bash -c "! kill -0 $pid 2>/dev/null" && break
	done
	kill -0 $pid 2>/dev/null && { kill $pid; fail "monitor count 1 did not exit after $i rounds"; }
	# one event: its first line, then indented continuation lines
	check_eq "$(grep -c '^\[' "$TMPD/mon")" 1 "events printed by monitor count 1"
	grep -Eq '^\[dev-change\] krt_cl0: .*state (disabled|usable) ' "$TMPD/mon" ||
		fail "plain event: '$(cat "$TMPD/mon")'"
	"$KRTCTL" dev set krt_cl0 enabled on
}

# peer, connection and device names from the running system
completion_names() {
	local a in c
	a=$(ip -4 -o addr show dev "$(awk '$1 == "krt_cl0" { print $2 }' "$TMPD/rxe")" |
	    awk '{ sub("/.*", "", $4); print $4 }')
	"$KRTCTL" listen add "$a" || { fail "listen add $a"; return 1; }
	"$KRTCTL" peer add cpa addr "$a" conns 2 || { fail "peer add"; return 1; }
	"$KRTCTL" peer add cpb addr 169.254.250.1 conns 1 || fail "peer add cpb"
	wait_peer cpa active 2 || fail "cpa not active: $("$KRTCTL" peer show)"
	in=$("$KRTCTL" -j peer show | jq -r '[.[] | select(.direction == "inbound")][0].name // ""')
	[ -n "$in" ] || fail "no inbound peer"
	check_eq "$(comp peer del "")" "$(printf '%s\n' cpa cpb "$in" | sort | tr '\n' ' ' | sed 's/ $//')" \
		"peer del "
	check_eq "$(comp peer show c)" "cpa cpb" "peer show c"
	check_eq "$(comp ping "")" "cpa cpb" "ping: outbound peers only"
	check_eq "$(comp peer set "")" "cpa cpb" "peer set: outbound peers only"
	check_eq "$(comp conn show peer cp)" "cpa cpb" "conn show peer cp"
	check_eq "$(comp conn reset cpa)" "cpa/0 cpa/1" "conn reset cpa"
	for c in peer cpa/0 cpa/1 cpb/0 "$in/0" "$in/1"; do
		comp conn show "" | grep -qw -- "$c" || fail "conn show: no $c in $(comp conn show "")"
	done
	comp dev show "" | grep -qw krt_cl0 || fail "dev show: $(comp dev show "")"
	check_eq "$(comp dev set krt_c)" "krt_cl0" "dev set krt_c"
	"$KRTCTL" peer del cpa
	"$KRTCTL" peer del cpb
	"$KRTCTL" listen del "$a"
}

# cfg: the configuration save is for: outbound peers and their settings,
# listeners, devices switched off
cfg() {
	"$KRTCTL" -j peer show | jq -c '[.[] | select(.direction == "outbound") |
		{name, addr, port, conns, depth, policy, reconnect_ms, reconnect_max_ms,
		 loss_timeout_s, hb_ms, hb_misses}] | sort_by(.name)'
	"$KRTCTL" -j listen show | jq -c 'sort_by(.addr, .port)'
	"$KRTCTL" -j dev show | jq -c '[.[] | select(.state == "disabled") | .name] | sort'
}

# save, rmmod, insmod, -b: the same configuration; save again: the same file
save_round_trip() {
	local a conf=$TMPD/krt.conf before after
	rxe_add krt_cl1 || { fail "rxe_add krt_cl1"; return 1; }
	a=$(ip -4 -o addr show dev "$(awk '$1 == "krt_cl0" { print $2 }' "$TMPD/rxe")" |
	    awk '{ sub("/.*", "", $4); print $4 }')
	"$KRTCTL" listen add "$a" || fail "listen add $a"
	"$KRTCTL" listen add "$a" port 7999 || fail "listen add $a port 7999"
	"$KRTCTL" dev set krt_cl1 enabled off || fail "dev set krt_cl1 enabled off"
	"$KRTCTL" peer add rt1 addr "$a" conns 2 depth 32 policy min-inflight reconnect_ms 150 \
		reconnect_max_ms 3000 loss_timeout 20 hb_ms 300 hb_misses 5 || fail "peer add rt1"
	"$KRTCTL" peer add rt2 addr 169.254.250.1 port 7500 conns 1 || fail "peer add rt2"
	"$KRTCTL" peer add rt3 addr "$a" port 7999 conns 1 || fail "peer add rt3"
	"$KRTCTL" peer set rt3 hb_misses 7 depth 16 || fail "peer set rt3"
	wait_peer rt1 active 2 || fail "rt1 not active: $("$KRTCTL" peer show)"
	# a live connection by the name conn show prints
	"$KRTCTL" conn show rt1/1 | grep -q "^rt1/1: state active " || fail "conn show rt1/1: $("$KRTCTL" conn show rt1/1)"
	check_eq "$("$KRTCTL" -j conn show peer rt1 index 0 | jq -r '.[] | "\(.peer)/\(.index)"')" "rt1/0" \
		"conn show peer rt1 index 0"
	"$KRTCTL" conn show rt1/9 > /dev/null 2>&1
	check_eq $? 1 "conn show of a missing index"
	"$KRTCTL" save "$conf" || { fail "save"; return 1; }
	diag "saved: $(grep -v '^#' "$conf" | tr '\n' ';')"
	grep -q "^peer add in-" "$conf" && fail "an inbound peer was saved"
	check_eq "$(grep -c '^peer add rt' "$conf")" 3 "peer lines"
	before=$(cfg)
	check_eq "$(sed -n 1p <<< "$before" | jq length)" 3 "outbound peers before"
	check_eq "$(sed -n 3p <<< "$before")" '["krt_cl1"]' "disabled devices before"
	unload_krt || return 1
	cp "$conf" "$conf.0"
	"$KRTCTL" save "$conf" > /dev/null 2>&1 && fail "save without krt succeeded"
	cmp -s "$conf" "$conf.0" || fail "save without krt changed the file"
	load_krt || return 1
	check_eq "$(cfg | tr '\n' ' ')" '[] [] [] ' "a fresh module has no configuration"
	"$KRTCTL" -b "$conf" || fail "krtctl -b of the saved file"
	after=$(cfg)
	check_eq "$after" "$before" "configuration after save, reload, -b"
	"$KRTCTL" save "$conf.2" || fail "second save"
	cmp -s "$conf" "$conf.2" || fail "second save differs: $(diff "$conf" "$conf.2")"
	wait_peer rt1 active 2 || fail "rt1 not active after the reload: $("$KRTCTL" peer show rt1)"
	"$KRTCTL" peer del rt1
	"$KRTCTL" peer del rt2
	"$KRTCTL" peer del rt3
	"$KRTCTL" listen del "$a"
	"$KRTCTL" listen del "$a" port 7999
	rxe_del krt_cl1
}

ktap_plan 19
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
run_case help_object_one_source help_objects
run_case ambiguous_prefix_error ambiguous_prefixes
run_case conn_show_by_name conn_names
run_case save_batch_lines save_output
run_case bash_completion completion
run_case bash_completion_names completion_names
run_case save_reload_batch_round_trip save_round_trip
ktap_finish
