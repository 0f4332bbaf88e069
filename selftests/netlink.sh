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
}

ktap_plan 5
run_case setup setup
run_case malformed_requests_rejected malformed
run_case eperm_without_cap_net_admin no_cap_net_admin
run_case eperm_as_unprivileged_user unprivileged_user
run_case krtctl_reports_errors krtctl_errors
ktap_finish
