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

# krtctl says "fail-nth N not reached" when the request made fewer than N
# allocations: the sweep has then failed every one of them in turn
MAXN=200
reached_all() { grep -q "^krtctl: fail-nth [0-9]* not reached" <<< "$1"; }

# sweep CMD...: fail the 1st, 2nd, ... allocation of "krtctl listen add"
# until a run makes fewer allocations than N (its N in SWEEP_N).  Each run
# must succeed or fail with an error message; when krt itself refused
# ("Error: krt: ..."), no listener may stay.  A success that absorbed the
# failure, or an error of the netlink core after krt's work (the ack), is
# undone for the next run.
SWEEP_N=0
sweep_listen() {
	local n out
	for n in $(seq 1 $MAXN); do
		if out=$(KRTCTL_FAIL_NTH=$n "$KRTCTL" listen add "$A" 2>&1); then
			if reached_all "$out"; then
				SWEEP_N=$n
				return 0
			fi
		elif reached_all "$out"; then
			fail "fail-nth $n: listen add failed with no failure injected: $out"
			return 1
		elif grep -q "^Error: krt: " <<< "$out"; then
			check_eq "$("$KRTCTL" -j listen show | jq length)" 0 "fail-nth $n: listeners after a refused add"
		else
			grep -q "^Error: " <<< "$out" || fail "fail-nth $n: failed without an error message: $out"
		fi
		"$KRTCTL" listen del "$A" > /dev/null 2>&1
		[ -z "$_case_err" ] || return 1
	done
	fail "listen add still reaching fail-nth after $MAXN allocations"
}

listen_add() {
	capable || return $?
	sweep_listen
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
	for n in $(seq 1 $MAXN); do
		if out=$(KRTCTL_FAIL_NTH=$n "$KRTCTL" peer add fs addr "$A" conns 2 2>&1); then
			reached_all "$out" && SWEEP_N=$n
			busywait 30000 bash -c "[ \"\$($KRTCTL -j peer show fs | jq -r '.[0].state')\" != connecting ]" ||
				fail "fail-nth $n: pool stuck connecting"
			"$KRTCTL" peer del fs || fail "fail-nth $n: peer del"
		elif reached_all "$out"; then
			fail "fail-nth $n: peer add failed with no failure injected: $out"
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
		[ "$SWEEP_N" = "$n" ] && break
	done
	[ "$SWEEP_N" = "$n" ] || fail "peer add still reaching fail-nth after $MAXN allocations"
	diag "peer add: $((n - 1)) allocations failed in turn"
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
	for n in $(seq 1 $MAXN); do
		if ! out=$(KRTCTL_FAIL_NTH=$n "$KRTCTL" peer set ps conns 3 2>&1); then
			if reached_all "$out"; then
				fail "fail-nth $n: peer set failed with no failure injected: $out"
			else
				grep -q "^Error: " <<< "$out" || fail "fail-nth $n: no error message: $out"
			fi
		fi
		"$KRTCTL" peer set ps conns 1 > /dev/null 2>&1 || fail "fail-nth $n: shrink back"
		reached_all "$out" && break
	done
	reached_all "$out" || fail "peer set still reaching fail-nth after $MAXN allocations"
	diag "peer set: $((n - 1)) allocations failed in turn"
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
	for n in $(seq 1 $MAXN); do
		out=$(KRTCTL_FAIL_NTH=$n "$KRTCTL" -j xfer sb op write size 64k count 4 depth 2 2> "$TMPD/err")
		rc=$?
		if [ $rc -ne 0 ] && grep -q "^Error: " "$TMPD/err"; then
			: # refused before it ran (setup or the netlink core)
		else
			# it ran: every request completed once, ok or with an error
			check_eq "$(jq -r '"\(.ok + .errors)/\(.double_completions)/\(.mismatches)"' <<< "$out")" \
				"4/0/0" "fail-nth $n: every request accounted for"
		fi
		[ -z "$_case_err" ] || { diag "$(cat "$TMPD/err")"; return 1; }
		reached_all "$(cat "$TMPD/err")" && break
	done
	reached_all "$(cat "$TMPD/err")" || fail "xfer still reaching fail-nth after $MAXN allocations"
	diag "xfer: $((n - 1)) allocations failed in turn"
	out=$("$KRTCTL" -j xfer sb op read size 64k count 20 depth 4) || fail "xfer after the sweep: $out"
	check_eq "$("$KRTCTL" -j conn show peer sb | jq '[.[].inflight] | add')" 0 "in flight after the sweep"
	"$KRTCTL" peer del sb
	"$KRTCTL" listen del "$A"
	busywait 10000 bash -c "[ \$(rdma resource show qp | grep -c 'comm \[rdma_cm\]') = 0 ]" ||
		fail "QPs left: $(qps)"
}

# The connect and accept paths run in rdma_cm's workers, out of fail-nth's
# reach: krt's own fault attribute (debugfs fault/connect, the kernel's
# fault_attr files) fails its N-th connect-path step (allocations, CQ, QP,
# MR pool, receives, cm calls) on either side.  Each fired failure must
# end the attempt with a reason (kept as the connection's last error) and
# the connection must come back by itself, never stuck connecting;
# deleting the peer must free everything on both sides.
FC=/sys/kernel/debug/krt/fault/connect
connect() {
	capable || return $?
	local n st fired=0
	[ -d "$FC" ] || { fail "no $FC on a fault-injection kernel"; return 1; }
	"$KRTCTL" listen del "$A" > /dev/null 2>&1
	"$KRTCTL" listen add "$A" || { fail "listen add"; return 1; }
	echo 0 > "$FC/verbose"
	echo 100 > "$FC/probability"
	for n in $(seq 1 $MAXN); do
		echo "$n" > "$FC/space"
		echo 1 > "$FC/times"
		if "$KRTCTL" peer add fc addr "$A" conns 1 depth 4 > "$TMPD/out" 2>&1; then
			# a failed attempt is retried after a backoff of at most
			# reconnect_ms (100 ms): wait for the connection to be
			# active again, and read what it remembers of the failure
			busywait $((30000 * KRT_TS)) bash -c "[ \"\$($KRTCTL -j conn show peer fc | jq -r '.[0].state')\" = active ]" ||
				fail "fault at step $n: connection not active again by itself: $($KRTCTL conn show peer fc)"
			st=$("$KRTCTL" -j conn show peer fc | jq -r '.[0] | "\(.state) \(.reason // "")"')
		else
			grep -q "^Error: " "$TMPD/out" || fail "fault at step $n: peer add failed without a message"
			st="refused"
		fi
		if [ "$(cat "$FC/times")" = 1 ]; then
			# no step failed: the sweep is past the last one
			check_eq "$st" "active " "connection with no fault injected"
		else
			fired=$((fired + 1))
			# refused by peer add, or failed with a reason (kept as
			# the last error) and then recovered by itself
			case "$st" in
			refused|"active "?*) ;;
			*) fail "fault at step $n: connection '$st': no reason for the failure recorded" ;;
			esac
		fi
		"$KRTCTL" peer del fc > /dev/null 2>&1
		busywait 20000 bash -c "[ -z \"\$($KRTCTL -j peer show | jq -r '.[].name')\" ]" ||
			fail "fault at step $n ($st): peers left: $(peers)"
		busywait 20000 bash -c "[ \$(rdma resource show qp | grep -c 'comm \[rdma_cm\]') = 0 ]" ||
			fail "fault at step $n ($st): QPs left: $(qps)"
		[ -z "$_case_err" ] || break
		[ "$(cat "$FC/times")" = 1 ] && break
	done
	echo 0 > "$FC/probability"
	echo 0 > "$FC/space"
	[ "$(cat "$FC/times")" = 1 ] || fail "still failing after $MAXN connect-path steps"
	diag "connect: $fired connect-path steps failed in turn"
	"$KRTCTL" listen del "$A"
}

# Registration failures (debugfs fault/register: scatterlist allocation,
# DMA mapping, ib_map_mr_sg, on the client and in the server's softirq):
# every fifth step fails during transfers both ways; each request must
# complete exactly once, ok or with an error, with its data intact when
# ok, and the connections must stay up (a failed registration is the
# request's error, not the connection's).
register() {
	capable || return $?
	local FR=/sys/kernel/debug/krt/fault/register SD=/sys/module/krt/parameters/srv_direct op sd out resets
	[ -d "$FR" ] || { fail "no $FR on a fault-injection kernel"; return 1; }
	"$KRTCTL" listen del "$A" > /dev/null 2>&1
	"$KRTCTL" listen add "$A" || { fail "listen add"; return 1; }
	"$KRTCTL" peer add rg addr "$A" conns 2 depth 8 || { fail "peer add"; return 1; }
	busywait 30000 bash -c "[ \"\$($KRTCTL -j peer show rg | jq -r '.[0].conns_up')\" = 2 ]" ||
		{ fail "pool not up"; return 1; }
	resets=$(awk '$1 == "resets:" { print $2 }' /sys/kernel/debug/krt/dp)
	echo 0 > "$FR/verbose"
	echo 5 > "$FR/interval"
	echo -1 > "$FR/times"
	echo 100 > "$FR/probability"
	# the server's transfers without an MR (srv_direct, the default) and
	# through one (its ib_map_mr_sg)
	for sd in Y N; do
		echo $sd > "$SD"
		for op in read write; do
			out=$("$KRTCTL" -j xfer rg op $op size 64k count 40 threads 2 depth 4 2> "$TMPD/err")
			check_eq "$(jq -r '"\(.ok + .errors)/\(.double_completions)/\(.mismatches)"' <<< "$out")" \
				"40/0/0" "$op, srv_direct=$sd: every request completed once"
			[ "$(jq -r '.errors' <<< "$out")" -gt 0 ] ||
				fail "$op, srv_direct=$sd: no request saw a registration failure: $out"
			[ "$(jq -r '.ok' <<< "$out")" -gt 0 ] || fail "$op, srv_direct=$sd: no request went through: $out"
			diag "$op, srv_direct=$sd, under fault/register: $(jq -c '{ok, errors}' <<< "$out")"
		done
	done
	echo Y > "$SD"
	echo 0 > "$FR/probability"
	echo 1 > "$FR/interval"
	out=$("$KRTCTL" -j xfer rg op read size 64k count 20 depth 4) || fail "xfer after: $out"
	check_eq "$("$KRTCTL" -j peer show rg | jq -r '.[0].conns_up')" 2 "connections up after"
	check_eq "$(awk '$1 == "resets:" { print $2 }' /sys/kernel/debug/krt/dp)" "$resets" "connection resets"
	check_eq "$("$KRTCTL" -j conn show peer rg | jq '[.[].inflight] | add')" 0 "in flight after"
	"$KRTCTL" peer del rg
	"$KRTCTL" listen del "$A"
	busywait 10000 bash -c "[ \$(rdma resource show qp | grep -c 'comm \[rdma_cm\]') = 0 ]" ||
		fail "QPs left: $(qps)"
}

ktap_plan 7
run_case setup setup
run_case listen_add_under_failslab listen_add
run_case peer_add_under_failslab peer_add
run_case peer_set_under_failslab peer_set
run_case submit_under_failslab submit
run_case connect_accept_under_fault_connect connect
run_case register_under_fault_register register
ktap_finish
