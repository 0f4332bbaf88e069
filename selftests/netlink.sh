#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Netlink control plane: privileges and malformed requests.
. "$(dirname "$0")/lib.sh"

setup() {
	load_krt || return 1
	rxe_add krt_nl0 || { fail "rxe_add"; return 1; }
}

# The C helper prints its own KTAP; fold its cases into one case here and
# show them as diagnostics.
malformed() {
	"$KRT_ROOT/selftests/nl_malformed" krt_nl0 > "$TMPD/nlm" 2>&1
	local rc=$?
	sed 's/^/# /' "$TMPD/nlm"
	grep -q '^not ok' "$TMPD/nlm" && fail "$(grep '^not ok' "$TMPD/nlm" | tr '\n' ' ')"
	[ "$(grep -c '^ok' "$TMPD/nlm")" -eq 11 ] || fail "expected 11 passing checks"
	[ $rc -eq 0 ] || fail "nl_malformed exited $rc"
}

no_cap_net_admin() {
	local out=$TMPD/perm
	setpriv --bounding-set -net_admin --inh-caps -net_admin \
		"$KRTCTL" dev set krt_nl0 enabled off > "$out" 2>&1 &&
		fail "dev set without CAP_NET_ADMIN succeeded"
	grep -q "Operation not permitted" "$out" || fail "want EPERM, got: $(cat "$out")"
	check_eq "$(dev_field krt_nl0 enabled)" true "enabled after refused request"
	# reading needs no privilege
	setpriv --bounding-set -net_admin --inh-caps -net_admin \
		"$KRTCTL" dev show krt_nl0 > /dev/null || fail "dev show without CAP_NET_ADMIN failed"
}

unprivileged_user() {
	local out=$TMPD/perm2
	setpriv --reuid 65534 --regid 65534 --clear-groups \
		"$KRTCTL" dev set krt_nl0 enabled off > "$out" 2>&1 &&
		fail "dev set as nobody succeeded"
	grep -q "Operation not permitted" "$out" || fail "want EPERM, got: $(cat "$out")"
	setpriv --reuid 65534 --regid 65534 --clear-groups \
		"$KRTCTL" -j dev show > /dev/null || fail "dev show as nobody failed"
	check_eq "$(dev_field krt_nl0 enabled)" true "enabled after refused request"
	# the events group carries more than show gives: joining it needs
	# CAP_NET_ADMIN (GENL_MCAST_CAP_NET_ADMIN)
	timeout 10 setpriv --reuid 65534 --regid 65534 --clear-groups \
		"$KRTCTL" monitor count 1 > "$out" 2>&1
	check_eq $? 1 "exit status of monitor as nobody"
	grep -q "Operation not permitted" "$out" || fail "monitor as nobody: $(cat "$out")"
}

krtctl_errors() {
	local out=$TMPD/err rc
	"$KRTCTL" dev show krt_nope > "$out" 2>&1
	rc=$?
	check_eq $rc 1 "exit status for an unknown device"
	grep -qx "Error: no such RDMA device." "$out" || fail "message: $(cat "$out")"
	"$KRTCTL" dev set krt_nl0 enabled maybe > "$out" 2>&1
	check_eq $? 2 "exit status for a bad value"
	grep -q 'expected on or off' "$out" || fail "message: $(cat "$out")"
	"$KRTCTL" dev set krt_nl0 > "$out" 2>&1
	check_eq $? 2 "exit status with nothing to set"
	"$KRTCTL" frobnicate > "$out" 2>&1
	check_eq $? 2 "exit status for an unknown object"
	grep -q 'unknown object "frobnicate"' "$out" || fail "message: $(cat "$out")"
	check_eq "$(dev_field krt_nl0 enabled)" true "enabled after bad commands"
	# a dump refused by its callback: the error rides in NLMSG_DONE
	"$KRTCTL" conn show peer nosuch > "$out" 2>&1
	check_eq $? 1 "exit status of a dump of an unknown peer"
	grep -qx "Error: no such peer." "$out" || fail "dump of an unknown peer: $(cat "$out")"
	# with -j: no JSON at all on standard output (not "[]": nothing there)
	"$KRTCTL" -j conn show peer nosuch > "$out" 2> "$out.err"
	check_eq $? 1 "exit status of a JSON dump of an unknown peer"
	check_eq "$(wc -c < "$out")" 0 "bytes on standard output of a failed JSON dump"
	grep -qx "Error: no such peer." "$out.err" || fail "JSON dump of an unknown peer: $(cat "$out.err")"
	"$KRTCTL" -j peer show nosuch > "$out" 2> "$out.err"
	check_eq "$?/$(wc -c < "$out")" 1/0 "exit status/bytes of a JSON get of an unknown peer"
}

# Dumps across list changes: krt flags a dump part that follows a change
# NLM_F_DUMP_INTR; krtctl drops such a pass and dumps again, so what it
# prints is one consistent list.  4 peers x 8 connections (no listener;
# one attempt each, the next a minute away).  fault/dump_intr N makes the
# next N dump parts after a first one find the lists changed.
# d_conns FILE: in a conn show -j dump, connections of peers d1..d9, "/",
# entries listed more than once
d_conns() {
	jq -r '([.[] | select(.peer | test("^d[0-9]$"))] | length | tostring) + "/" +
		([.[] | "\(.peer)/\(.index)"] | (length - (unique | length)) | tostring)' "$1"
}

dump_churn() {
	local a i n cpid good=0 out=$TMPD/dump fi=$KRT_DBG/fault/dump_intr
	local slow=(reconnect_ms 60000 reconnect_max_ms 60000)
	a=$(ip -4 -o addr show dev "$(awk '$1 == "krt_nl0" { print $2 }' "$TMPD/rxe")" |
	    awk '{ sub("/.*", "", $4); print $4 }')
	for i in $(seq 4); do
		"$KRTCTL" peer add "d$i" addr "$a" port 4799 conns 8 depth 2 "${slow[@]}" ||
			{ fail "peer add d$i"; return 1; }
	done
	# every pass flagged: one try fails, so do five, each saying why
	echo 1 > "$fi"
	KRTCTL_DUMP_TRIES=1 "$KRTCTL" -j conn show > "$out" 2> "$out.err"
	check_eq $? 1 "exit status of a single flagged pass"
	grep -q "lists changed during each of 1 dumps" "$out.err" || fail "message: $(cat "$out.err")"
	check_eq "$(cat "$fi")" 0 "flagged parts left"
	# a failed show prints no JSON at all, not even an empty array
	check_eq "$(wc -c < "$out")" 0 "bytes printed of a flagged pass"
	echo 100 > "$fi"
	"$KRTCTL" -j peer show > "$out" 2> "$out.err"
	check_eq $? 1 "exit status with every pass flagged"
	grep -q "lists changed during each of 5 dumps" "$out.err" || fail "message: $(cat "$out.err")"
	echo 0 > "$fi"
	# one pass flagged, the next clean: printed once, whole
	echo 1 > "$fi"
	"$KRTCTL" -j conn show > "$out" 2> "$out.err" || fail "conn show after one flagged pass: $(cat "$out.err")"
	check_eq "$(d_conns "$out")" 32/0 "connections/entries twice after a flagged pass"
	check_eq "$(cat "$fi")" 0 "flagged parts left"
	# real churn: a ninth peer added and deleted in a loop while dumping
	( while [ ! -e "$TMPD/churn.stop" ]; do
		"$KRTCTL" peer add churn addr "$a" port 4799 conns 4 depth 2 "${slow[@]}" \
			2> /dev/null && echo >> "$TMPD/churn.adds"
		"$KRTCTL" peer del churn 2> /dev/null
	done ) &
	cpid=$!
	KRT_BG_PIDS="${KRT_BG_PIDS:-} $cpid"
	for ((n = 0; n < 10; n++)); do
		"$KRTCTL" -j conn show > "$out" 2> "$out.err" ||
			{ fail "conn show: $(cat "$out.err")"; continue; }
		check_eq "$(d_conns "$out")" 32/0 "d1..d4 connections/entries twice in dump $n" || break
		good=$((good + 1))
	done
	touch "$TMPD/churn.stop"
	wait "$cpid"
	KRT_BG_PIDS=${KRT_BG_PIDS/ $cpid/}
	n=$(wc -l < "$TMPD/churn.adds" 2> /dev/null || echo 0)
	diag "$good of 10 dumps complete during $n adds and deletes of a ninth peer"
	[ "${n:-0}" -ge 1 ] || fail "the churn loop added no peer"
	"$KRTCTL" peer del churn 2> /dev/null
	for i in $(seq 4); do
		"$KRTCTL" peer del "d$i" || fail "peer del d$i"
	done
}

ktap_plan 6
run_case setup setup
run_case malformed_requests_rejected malformed
run_case eperm_without_cap_net_admin no_cap_net_admin
run_case eperm_as_unprivileged_user unprivileged_user
run_case krtctl_reports_errors krtctl_errors
run_case dump_during_churn_consistent dump_churn
ktap_finish
