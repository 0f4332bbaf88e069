#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Allocation failures injected into krt's control and submit paths (failslab with
# fail-nth, so only the request's own system call fails): every failure is
# returned as an error, nothing half-created stays, nothing leaks (kmemleak
# is scanned by run_tests.sh after this test), nothing oopses.
# Runs on the debug kernel (make check-debug); Debian's kernel has no
# CONFIG_FAILSLAB.
. "$(dirname "$0")/lib.sh"

FS=/sys/kernel/debug/failslab
A=""

capable() {
	if [ ! -d "$FS" ] || [ ! -e /proc/self/fail-nth ]; then
		diag "kernel lacks CONFIG_FAILSLAB / CONFIG_FAULT_INJECTION_DEBUG_FS"
		return $KSFT_SKIP
	fi
}

setup() {
	capable || return $?
	load_krt test_service=1 || return 1
	rxe_add krt_fs0 || { fail "rxe_add"; return 1; }
	A=$(ip -4 -o addr show dev "$(awk '$1 == "krt_fs0" { print $2 }' "$TMPD/rxe")" |
	    awk '{ sub("/.*", "", $4); print $4 }')
	echo N > "$FS/ignore-gfp-wait"
	echo 0 > "$FS/verbose"
}

peers() { "$KRTCTL" -j peer show | jq -r '[.[].name] | sort | join(" ")'; }
qps() { rdma resource show qp | grep -c 'comm \[rdma_cm\]'; }

# sweep CMD...: fail the 1st, 2nd, ... allocation of the request until one
# run sees no failure (its N in SWEEP_N); each run must succeed or fail
# cleanly.
SWEEP_N=0
sweep() {
	local n out
	for n in $(seq 1 60); do
		if out=$(KRTCTL_FAIL_NTH=$n "$KRTCTL" "$@" 2>&1); then
			SWEEP_N=$n
			return 0
		fi
		grep -q "^Error: " <<< "$out" || fail "fail-nth $n: '$*' failed without an error message: $out"
	done
	fail "'$*' still failing after 60 injected failures"
}

listen_add() {
	capable || return $?
	sweep listen add "$A"
	diag "listen add: first success at fail-nth $SWEEP_N"
	check_eq "$("$KRTCTL" -j listen show | jq length)" 1 "listeners after the sweep"
	"$KRTCTL" listen del "$A"
	check_eq "$("$KRTCTL" -j listen show | jq length)" 0 "listeners after del"
}

peer_add() {
	capable || return $?
	local n out
	"$KRTCTL" listen del "$A" > /dev/null 2>&1
	"$KRTCTL" listen add "$A" || { fail "listen add"; return 1; }
	for n in $(seq 1 60); do
		if out=$(KRTCTL_FAIL_NTH=$n "$KRTCTL" peer add fs addr "$A" conns 2 2>&1); then
			busywait 30000 bash -c "[ \"\$($KRTCTL -j peer show fs | jq -r '.[0].state')\" != connecting ]" ||
				fail "fail-nth $n: pool stuck connecting"
			"$KRTCTL" peer del fs || fail "fail-nth $n: peer del"
		elif grep -q "^Error: krt: " <<< "$out"; then
			# krt refused it: nothing may stay
			check_eq "$(peers)" "" "fail-nth $n: peers after a failed add"
		else
			# the failure hit the netlink core (the ack) after krt
			# added the peer: it must work and go away cleanly
			grep -q "^Error: " <<< "$out" || fail "fail-nth $n: no error message: $out"
			"$KRTCTL" peer show fs > /dev/null 2>&1 && { "$KRTCTL" peer del fs ||
				fail "fail-nth $n: peer del after a lost ack"; }
		fi
		busywait 10000 bash -c "[ -z \"\$($KRTCTL -j peer show | jq -r '.[].name')\" ]" ||
			fail "fail-nth $n: peers left: $(peers)"
		[ -z "$_case_err" ] || return 1
	done
	busywait 10000 bash -c "[ \$(rdma resource show qp | grep -c 'comm \[rdma_cm\]') = 0 ]" ||
		fail "QPs left: $(qps)"
	"$KRTCTL" listen del "$A"
}

peer_set() {
	capable || return $?
	local n
	"$KRTCTL" listen del "$A" > /dev/null 2>&1
	"$KRTCTL" peer del ps > /dev/null 2>&1
	"$KRTCTL" listen add "$A" || { fail "listen add"; return 1; }
	"$KRTCTL" peer add ps addr "$A" conns 1 || { fail "peer add"; return 1; }
	for n in $(seq 1 30); do
		KRTCTL_FAIL_NTH=$n "$KRTCTL" peer set ps conns 3 > /dev/null 2>&1
		"$KRTCTL" peer set ps conns 1 > /dev/null 2>&1 || fail "fail-nth $n: shrink back"
	done
	check_eq "$("$KRTCTL" -j peer show ps | jq -r '.[0].conns')" 1 "pool size after the sweep"
	"$KRTCTL" peer del ps
	"$KRTCTL" listen del "$A"
	busywait 10000 bash -c "[ \$(rdma resource show qp | grep -c 'comm \[rdma_cm\]') = 0 ]" ||
		fail "QPs left: $(qps)"
}

# xfer with one thread runs its submissions in krtctl's own task, so
# fail-nth reaches the test run's setup and krt_submit() alike: each run
# succeeds, or fails cleanly with its errors counted.
submit() {
	capable || return $?
	local n out rc
	"$KRTCTL" listen del "$A" > /dev/null 2>&1
	"$KRTCTL" listen add "$A" || { fail "listen add"; return 1; }
	"$KRTCTL" peer add sb addr "$A" conns 2 depth 8 || { fail "peer add"; return 1; }
	busywait 30000 bash -c "[ \"\$($KRTCTL -j peer show sb | jq -r '.[0].conns_up')\" = 2 ]" ||
		{ fail "pool not up"; return 1; }
	for n in $(seq 1 60); do
		out=$(KRTCTL_FAIL_NTH=$n "$KRTCTL" -j xfer sb op write size 64k count 4 depth 2 2>&1)
		rc=$?
		if [ $rc -eq 0 ]; then
			diag "xfer: first run without a failure at fail-nth $n"
			break
		fi
		if ! grep -q "^Error: " <<< "$out"; then
			check_eq "$(jq -r '"\(.ok + .errors)/\(.double_completions)/\(.mismatches)"' <<< "$out")" \
				"4/0/0" "fail-nth $n: every request accounted for"
		fi
		[ -z "$_case_err" ] || return 1
	done
	out=$("$KRTCTL" -j xfer sb op read size 64k count 20 depth 4) || fail "xfer after the sweep: $out"
	check_eq "$("$KRTCTL" -j conn show peer sb | jq '[.[].inflight] | add')" 0 "in flight after the sweep"
	"$KRTCTL" peer del sb
	"$KRTCTL" listen del "$A"
	busywait 10000 bash -c "[ \$(rdma resource show qp | grep -c 'comm \[rdma_cm\]') = 0 ]" ||
		fail "QPs left: $(qps)"
}

ktap_plan 5
run_case setup setup
run_case listen_add_under_failslab listen_add
run_case peer_add_under_failslab peer_add
run_case peer_set_under_failslab peer_set
run_case submit_under_failslab submit
ktap_finish
