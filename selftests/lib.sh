#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for krt selftests: KTAP output, module and rxe handling, waits.
# Tests run inside a guest (scripts/vm), as root, from the checkout root.

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

KRT_ROOT=${KRT_WORK:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
KRT_KO=$KRT_ROOT/src/krt/krt.ko
KRTCTL=$KRT_ROOT/src/krtctl/krtctl
KRT_BENCH_KO=$KRT_ROOT/src/krt-bench/krt_bench.ko
KRT_DBG=/sys/kernel/debug/krt
# How much slower than Debian's kernel this one runs: bounds on elapsed
# time (detection within N ms) are multiplied by it.  check-debug sets it
# for the KASAN/lockdep kernel, where everything takes several times longer.
KRT_TS=${KRT_TIME_SCALE:-1}
TMPD=$(mktemp -d /tmp/krt-test.XXXXXX)

_ktap_num=0
_ktap_fail=0
_ktap_pass=0
_ktap_skip=0
_ktap_plan=0
_case_err=""

ktap_plan() {
	_ktap_plan=$1
	echo "TAP version 13"
	echo "1..$1"
}

# diag MSG: a diagnostic line
diag() { echo "# $*"; }

# fail MSG: mark the running case failed (the case goes on, like kselftest)
fail() {
	_case_err="${_case_err:+$_case_err; }$*"
	echo "# FAIL: $*"
}

# run_case NAME FUNC [ARGS...]: run FUNC as one KTAP test case.  FUNC fails
# the case by calling fail or by returning non-zero; returning 4 skips it
# (only for a capability the kernel lacks: say which with diag).
run_case() {
	local name=$1 rc t0=$SECONDS k0
	shift
	_case_err=""
	_ktap_num=$((_ktap_num + 1))
	k0=$(dmesg 2> /dev/null | wc -l)
	"$@"
	rc=$?
	diag "$name: $((SECONDS - t0)) s"
	if [ $rc -eq $KSFT_SKIP ] && [ -z "$_case_err" ]; then
		echo "ok $_ktap_num $name # SKIP"
		_ktap_skip=$((_ktap_skip + 1))
	elif [ $rc -eq 0 ] && [ -z "$_case_err" ]; then
		echo "ok $_ktap_num $name"
		_ktap_pass=$((_ktap_pass + 1))
	else
		[ -z "$_case_err" ] && echo "# FAIL: returned $rc"
		# what krt logged during the case (pr_info does not reach the console)
		dmesg 2> /dev/null | tail -n +$((k0 + 1)) | grep -e 'krt' | tail -20 | sed 's/^/# dmesg: /'
		echo "not ok $_ktap_num $name"
		_ktap_fail=$((_ktap_fail + 1))
	fi
}

ktap_finish() {
	local n
	for ((n = _ktap_num + 1; n <= _ktap_plan; n++)); do
		echo "not ok $n missing # test ended early"
		_ktap_fail=$((_ktap_fail + 1))
	done
	echo "# totals: pass:$_ktap_pass fail:$_ktap_fail skip:$_ktap_skip"
	cleanup_all
	rm -rf "$TMPD"
	[ $_ktap_fail -gt 0 ] && exit $KSFT_FAIL
	[ $_ktap_pass -eq 0 ] && [ $_ktap_skip -gt 0 ] && exit $KSFT_SKIP
	exit $KSFT_PASS
}

# run_ok OUT ARGS...: krtctl -j ARGS succeeds, its JSON in $TMPD/OUT
run_ok() {
	local out=$TMPD/$1
	shift
	"$KRTCTL" -j "$@" > "$out" 2> "$out.err" || {
		fail "'krtctl $*' failed: $(cat "$out" "$out.err")"
		return 1
	}
}

# j OUT FIELD: a field of the JSON a run_ok saved in $TMPD/OUT
j() { jq -r ".$2" "$TMPD/$1"; }

# load NAME ARGS...: verified xfer in the background, JSON in
# $TMPD/NAME, its pid in $LOAD_PID
load() {
	local name=$1
	shift
	"$KRTCTL" -j xfer "$@" > "$TMPD/$name" 2> "$TMPD/$name.err" &
	LOAD_PID=$!
}

# settle NAME PID OK_WANT ERRORS_WANT: wait for a load, check its counts
settle() {
	local name=$1 pid=$2 want=$3 err=$4 r
	[ -z "$pid" ] || wait "$pid"
	r=$(jq -r '"\(.ok)/\(.errors)/\(.mismatches)/\(.double_completions)"' "$TMPD/$name" 2>/dev/null)
	diag "$name: ok/errors/mismatches/double = $r, resent $(j "$name" resent)," \
		"first error '$(j "$name" first_error_name)'"
	if [ -n "$want" ]; then
		check_eq "$r" "$want/$err/0/0" "$name: ok/errors/mismatches/double"
	else
		check_eq "${r#*/*/}" "0/0" "$name: mismatches/double completions"
	fi
}

# back_up PEER N WHAT [MS]: wait (60 s) for the pool to be N/N again,
# say how long
back_up() {
	local t0=$SECONDS
	wait_peer "$1" active "$2" "${4:-60000}" ||
		{ fail "$3: pool not back: $("$KRTCTL" conn show peer "$1")"; return 1; }
	diag "$3: pool $1 back to $2/$2 in $((SECONDS - t0)) s"
}

# dmesg_mark: remember the kernel log's length; then $DMESG0 lines came before
dmesg_mark() { DMESG0=$(dmesg | wc -l); }

# during PID MAX PAUSE CMD...: CMD up to MAX times, PAUSE s apart, while
# PID lives; prints how many times it ran, fails if one run of CMD failed
during() {
	local pid=$1 max=$2 pause=$3 n=0 rc=0
	shift 3
	while [ "$n" -lt "$max" ] && kill -0 "$pid" 2> /dev/null; do
		"$@" > /dev/null 2>&1 || rc=1
		n=$((n + 1))
		sleep "$pause"
	done
	echo "$n"
	return $rc
}

# check_eq GOT WANT WHAT
check_eq() {
	if [ "$1" != "$2" ]; then
		fail "$3: got '$1', want '$2'"
		return 1
	fi
}

# busywait TIMEOUT_MS CMD...: retry CMD until it succeeds or time runs out
# barrier NAME [S]: in a multi-guest run, wait (S, default 180 s, at most)
# for every node
barrier() { "$KRT_ROOT/scripts/vm-barrier" "$1" "${2:-180}" || { fail "barrier $1"; return 1; }; }

busywait() {
	local limit=$1 start
	shift
	start=$(date +%s%N)
	while :; do
		"$@" && return 0
		if [ $((($(date +%s%N) - start) / 1000000)) -ge "$limit" ]; then
			return 1
		fi
		sleep 0.05
	done
}

krt_loaded() { [ -d /sys/module/krt ]; }

# Kernel time, in one clock: the trace buffer's.  trace_on EVENT...: clear
# the trace buffer and record krt's tracepoints EVENT...; trace_off
# EVENT...: stop.  stamp TEXT: a line in the trace buffer (trace_marker)
# and in dmesg.  trace_ms FILE RE [last]: the time in ms of the first (or
# last) line of saved trace output matching RE.  Timing read from the
# kernel's own stamps leaves out the test's polling, which takes seconds
# under TCG; the trace buffer, unlike dmesg, neither rate-limits krt's
# lines nor loses them when the log ring wraps, and printk's clock may
# differ from the trace clock.
TRACEFS=/sys/kernel/tracing
trace_on() {
	local e
	[ -d $TRACEFS/events ] || mount -t tracefs nodev $TRACEFS 2> /dev/null ||
		{ fail "cannot mount tracefs"; return 1; }
	echo > $TRACEFS/trace
	echo 1 > $TRACEFS/tracing_on
	for e; do
		echo 1 > "$TRACEFS/events/krt/$e/enable" || { fail "trace event $e"; return 1; }
	done
}
trace_off() {
	local e
	for e; do echo 0 > "$TRACEFS/events/krt/$e/enable"; done
}
stamp() {
	echo "$*" > $TRACEFS/trace_marker
	echo "krt-selftest: $*" > /dev/kmsg
}
trace_ms() {
	grep -e "$2" "$1" | if [ "${3:-}" = last ]; then tail -1; else head -1; fi | sed -n 's/.* \([0-9]*\)\.\([0-9]\{3\}\)[0-9]*: [a-z_]*: .*/\1\2/p' | sed 's/^0*\(.\)/\1/'
}

# sum_all FIELD: a queue counter summed over every connection (both ends)
sum_all() { awk -v f="$1:" '$1 == f { s += $2 } END { print s + 0 }' "$KRT_DBG/conns"; }
# cfield PEER INDEX FIELD: a field of one connection's debugfs state;
# qfield the same of its queue
cfield() { awk -v f="$3:" '$1 == f { $1 = ""; sub(/^ /, ""); print }' "$KRT_DBG/peers/$1/conns/$2/state"; }
qfield() { awk -v f="$3:" '$1 == f { print $2 }' "$KRT_DBG/peers/$1/conns/$2/queue"; }
# sum_q PEER FIELD: a queue field summed over the peer's connections (of
# a peer of one connection: its value)
sum_q() {
	awk -v p="$1/" -v f="$2:" 'index($0, p) == 1 { q = 1; next } /^[^ ]/ { q = 0 }
		q && $1 == f { s += $2 } END { print s + 0 }' "$KRT_DBG/conns"
}

# wait_peer NAME STATE UP [MS]: until the peer is in STATE with UP
# connections up (default 30 s)
wait_peer() {
	busywait "${4:-30000}" bash -c "[ \"\$($KRTCTL -j peer show $1 | jq -r '.[0].state + \" \" + (.[0].conns_up|tostring)')\" = '$2 $3' ]"
}

# load_krt [PARAM=VALUE...]: insmod krt.ko unless loaded.  On a slow
# kernel (KRT_TIME_SCALE > 1) the default heartbeat interval and request
# deadline scale too, unless given: on the KASAN kernel under TCG rdma_rxe
# moves under a MiB a second, a burst of 1 MiB transfers holds a CPU in
# softirq for seconds (heartbeat answers on every connection of the node
# wait longer than 500 ms x 4) and queues requests for more than 30 s
# (Documentation/testing.rst).
load_krt() {
	local a=() p
	modprobe -q rdma_cm || { fail "modprobe rdma_cm"; return 1; }
	krt_loaded && return 0
	if [ "$KRT_TS" -gt 1 ]; then
		for p in hb_ms=500 req_timeout_ms=30000; do
			[[ " $* " == *" ${p%=*}="* ]] || a+=("${p%=*}=$((${p#*=} * KRT_TS))")
		done
	fi
	insmod "$KRT_KO" "$@" "${a[@]}" || { fail "insmod krt.ko $* ${a[*]}"; return 1; }
}

unload_krt() {
	if [ -d /sys/module/krt_bench ]; then
		rmmod krt_bench || { fail "rmmod krt_bench"; return 1; }
	fi
	krt_loaded || return 0
	rmmod krt || { fail "rmmod krt"; return 1; }
}

# rxe_add NAME: an rxe device on a fresh dummy interface of its own
_rxe_n=0
rxe_add() {
	local name=$1 ifn
	_rxe_n=$((_rxe_n + 1))
	ifn=krtd$_rxe_n
	modprobe -q dummy
	modprobe -q rdma_rxe
	ip link add "$ifn" type dummy || return 1
	ip addr add "169.254.$((200 + _rxe_n)).1/24" dev "$ifn"
	ip link set "$ifn" up
	rdma link add "$name" type rxe netdev "$ifn" || return 1
	echo "$name $ifn" >> "$TMPD/rxe"
}

rxe_del() {
	local name=$1 ifn
	ifn=$(awk -v n="$name" '$1 == n { print $2 }' "$TMPD/rxe" 2>/dev/null)
	rdma link del "$name" || return 1
	[ -n "$ifn" ] && ip link del "$ifn"
	sed -i "/^$name /d" "$TMPD/rxe"
}

cleanup_all() {
	local name ifn
	[ -n "${KRT_BG_PIDS:-}" ] && kill $KRT_BG_PIDS 2>/dev/null
	if [ -f "$TMPD/rxe" ]; then
		while read -r name ifn; do
			rdma link del "$name" 2>/dev/null
			ip link del "$ifn" 2>/dev/null
		done < "$TMPD/rxe"
	fi
	# krt_bench uses krt's symbols: it goes first
	[ -d /sys/module/krt_bench ] && rmmod krt_bench 2>/dev/null
	krt_loaded && rmmod krt 2>/dev/null
}

# dev_field NAME FIELD: one field of 'krtctl -j dev show NAME'
dev_field() {
	"$KRTCTL" -j dev show "$1" | jq -r ".[0].$2"
}

# rdma_res_count TYPE [FILTER]: kernel objects of a type owned by krt
rdma_res_count() {
	rdma resource show "$1" 2>/dev/null | grep -c "comm \[krt\]"
}
