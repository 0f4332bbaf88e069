#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# krt_bench in one guest (rxe loopback): krt.ko and krt_bench.ko loaded,
# the node benchmarking its own address.  'krtctl bench' send, read and
# write at depth 1 and 8 for a count: every request completed, no error,
# rates consistent with bytes and time, p50 <= p99 <= p99.9 <= max, CPU
# time counted, krt's own counters agreeing; verified runs; a timed run;
# every bad input refused with its message and nothing left behind; a
# signal and rmmod krt_bench stopping a running run cleanly.
. "$(dirname "$0")/lib.sh"

A=""		# the rxe device's address
IN=""		# the inbound peer the node's own connections create
N=200		# requests per counted run

# run_ok OUT ARGS...: krtctl -j ARGS succeeds, JSON in $TMPD/OUT
bench_threads() { ps -e -o comm= | grep -c '^krt-bench/'; }
bench_refcnt() { cat /sys/module/krt_bench/refcnt 2> /dev/null || echo gone; }

setup() {
	load_krt || return 1
	insmod "$KRT_BENCH_KO" || { fail "insmod krt_bench.ko"; return 1; }
	[ -d /sys/module/krt_bench ] || { fail "krt_bench not loaded"; return 1; }
	[ -e /sys/module/krt/holders/krt_bench ] || fail "krt_bench does not hold krt"
	rxe_add krt_bn0 || { fail "rxe_add"; return 1; }
	A=$(ip -4 -o addr show dev "$(awk '$1 == "krt_bn0" { print $2 }' "$TMPD/rxe")" |
	    awk '{ sub("/.*", "", $4); print $4 }')
	"$KRTCTL" listen add "$A" || fail "listen add"
	"$KRTCTL" peer add bn addr "$A" conns 2 depth 32 || fail "peer add"
	wait_peer bn active 2 || fail "bn not 2/2: $("$KRTCTL" peer show)"
	IN=$("$KRTCTL" -j peer show | jq -r '[.[] | select(.direction == "inbound")][0].name')
	[ -n "$IN" ] && [ "$IN" != null ] || fail "no inbound peer"
}

NCPU=$(nproc)

# check_result OUT OP SIZE COUNT: what a successful run of COUNT must say
# (one jq for all of it: every process costs under TCG)
check_result() {
	local o=$1 bad
	bad=$(jq -r --arg op "$2" --argjson size "$3" --argjson n "$4" --argjson c "$NCPU" '
		def chk(ok; msg): if ok then empty else msg end;
		(.elapsed_ns / 1e9) as $s |
		chk(.requests == $n and .errors == 0 and .mismatches == 0 and .stopped == false;
		    "requests/errors/mismatches/stopped \(.requests)/\(.errors)/\(.mismatches)/\(.stopped), want \($n)/0/0/false (first error \(.first_error_name))"),
		chk(.op == $op and .size == $size and .first_error == 0;
		    "echoed op \(.op) size \(.size) first_error \(.first_error)"),
		chk(.bytes == $n * $size; "bytes \(.bytes), want \($n * $size)"),
		chk(.elapsed_ns > 0; "elapsed_ns \(.elapsed_ns)"),
		# rates > 0 and what requests, bytes and elapsed_ns say (0.1% for rounding)
		chk(.requests_per_s > 0 and .mib_per_s > 0 and
		    ((.requests_per_s - .requests / $s) | fabs) <= 0.001 * .requests_per_s + 0.001 and
		    ((.mib_per_s - .bytes / $s / 1048576) | fabs) <= 0.001 * .mib_per_s + 0.001;
		    "rates \(.requests_per_s)/s \(.mib_per_s) MiB/s for \(.requests) requests, \(.bytes) bytes in \(.elapsed_ns) ns"),
		chk(.lat_min_ns > 0 and .lat_min_ns <= .lat_p50_ns and .lat_p50_ns <= .lat_p99_ns and
		    .lat_p99_ns <= .lat_p999_ns and .lat_p999_ns <= .lat_max_ns and
		    .lat_min_ns <= .lat_avg_ns and .lat_avg_ns <= .lat_max_ns;
		    "not min <= p50 <= p99 <= p99.9 <= max, min <= avg <= max: \([.lat_min_ns, .lat_p50_ns, .lat_p99_ns, .lat_p999_ns, .lat_max_ns, .lat_avg_ns])"),
		# CPU time: counted, per request its quotient, at most every CPU all
		# the time (plus 10 ms per CPU: accounting goes by ticks)
		chk(.cpu_ns > 0 and .cpu_ns_per_req == ((.cpu_ns / .requests) | floor) and
		    .cpu_ns <= $c * (.elapsed_ns + 10000000);
		    "cpu_ns \(.cpu_ns) cpu_ns_per_req \(.cpu_ns_per_req) for \(.requests) requests in \(.elapsed_ns) ns on \($c) CPUs")
	' "$TMPD/$o") || bad="jq failed on: $(cat "$TMPD/$o")"
	[ -z "$bad" ] || fail "$o: $bad"
}

# snap OUT: the peer's statistics, as one line "reqs_send reqs_read ..."
snap() {
	"$KRTCTL" -j stats show peer bn | jq -r '.[0] | .counters as $c |
		"\($c.reqs_send) \($c.reqs_read) \($c.reqs_write) \($c.data_bytes_read) \($c.data_bytes_written) \(.inflight) \(.mrs_used)"' > "$TMPD/$1"
}
# delta A B: B - A, field by field
delta() {
	paste -d ' ' "$TMPD/$1" "$TMPD/$2" | awk '{ n = NF / 2; for (i = 1; i <= n; i++) printf "%s%d", (i > 1 ? " " : ""), $(i + n) - $i; print "" }'
}

# counted runs: send 512, read 4096, write 65536 at depth 1 and 8
counted() {
	local op_size op size d
	snap s0
	for op_size in send:512 read:4096 write:65536; do
		op=${op_size%%:*} size=${op_size#*:}
		for d in 1 8; do
			run_ok "$op$d" bench bn op "$op" size "$size" depth $d count $N || continue
			check_result "$op$d" "$op" "$size" $N
			check_eq "$(jq -r '"\(.depth)/\(.count)/\(.verify)"' "$TMPD/$op$d")" "$d/$N/false" \
				"$op$d: depth/count/verify echoed"
			diag "$op $size depth $d: $(jq -c '{requests_per_s, mib_per_s, lat_p50_ns, lat_p99_ns, lat_max_ns, cpu_ns_per_req}' "$TMPD/$op$d")"
		done
	done
	snap s1
	# krt counted the same requests and data bytes for the peer, and is idle
	check_eq "$(delta s0 s1)" "$((2 * N)) $((2 * N)) $((2 * N)) $((2 * N * 4096)) $((2 * N * 65536)) 0 0" \
		"krt's reqs_send reqs_read reqs_write data_bytes_read data_bytes_written inflight mrs_used"
}

# text output: the same field names as JSON
text_output() {
	local k text
	"$KRTCTL" bench bn op send size 100 depth 2 count 20 > "$TMPD/text" 2>&1 ||
		{ fail "text run: $(cat "$TMPD/text")"; return 1; }
	run_ok tj bench bn op send size 100 depth 2 count 20 || return 1
	text=" $(tr '\n' ' ' < "$TMPD/text")"
	for k in $(jq -r 'keys[]' "$TMPD/tj"); do
		[[ $text == *" $k "* ]] || fail "text output lacks '$k': $(cat "$TMPD/text")"
	done
	head -1 "$TMPD/text" | grep -q "^peer bn op send size 100 depth 2 threads 1 " ||
		fail "text first line: $(head -1 "$TMPD/text")"
}

verified() {
	local op_size op size
	for op_size in send:512 read:4096 write:65536; do
		op=${op_size%%:*} size=${op_size#*:}
		run_ok "v$op" bench bn op "$op" size "$size" depth 8 threads 2 count 100 verify || continue
		check_result "v$op" "$op" "$size" 100
		check_eq "$(j "v$op" verify)/$(j "v$op" threads)" "true/2" "v$op: verify/threads echoed"
	done
	# the largest message verified
	run_ok vmax bench bn op send size 4048 depth 4 count 40 verify && check_result vmax send 4048 40
}

# A request's header and message of up to 512 bytes go from its slot's
# own buffer; a longer message takes one of the client queue's few
# full-size buffers (an eighth of its depth, at least 4) until its SEND
# completes, or waits for one, while short messages pass it.  With the
# SEND completions of long messages held (fault/hold_sends), 32 at once
# on 2 x 4 buffers must wait, and short sends complete meanwhile.  Every
# message arrives intact.
long_messages() {
	local w0 d0 q hold
	check_eq "$(awk '/^bn\// { q = 1; next } /^[^ ]/ { q = 0 }
		q && $1 == "msg_bufs:" { printf "%s%s", s, $2; s = "/" }' "$KRT_DBG/conns")" "4/4" \
		"bn's queues (depth 32): message buffers"
	hold=$((20000 * KRT_TS > 60000 ? 60000 : 20000 * KRT_TS))
	w0=$(sum_q bn msg_buf_waits)
	d0=$(sum_q bn reqs_done)
	echo "$hold" > "$KRT_DBG/fault/hold_sends"
	"$KRTCTL" -j bench bn op send size 4048 depth 32 count 200 verify > "$TMPD/lm" 2>&1 &
	q=$!
	busywait "$hold" bash -c "[ \$(awk -v p=bn/ -v f=msg_buf_waits: 'index(\$0, p) == 1 { q = 1; next } /^[^ ]/ { q = 0 } q && \$1 == f { s += \$2 } END { print s + 0 }' $KRT_DBG/conns) -gt $w0 ]" ||
		fail "32 messages of 4048 bytes at once on 2 x 4 held message buffers: none waited"
	# short ones pass them while the buffers are held: no long one ends
	# before the hold does, so every request done meanwhile is short
	run_ok sm2 bench bn op send size 100 depth 8 count 100 verify
	check_eq "$(($(sum_q bn reqs_done) - d0))" 100 "requests done while long ones hold every message buffer (the 100 short ones)"
	echo 0 > "$KRT_DBG/fault/hold_sends"
	check_result sm2 send 100 100
	wait $q || fail "long sends: $(cat "$TMPD/lm")"
	check_result lm send 4048 200
	diag "4048-byte sends at depth 32: $(($(sum_q bn msg_buf_waits) - w0)) waited for a message buffer"
	# 464 bytes and the 48-byte header fill a slot's own buffer: no wait
	w0=$(sum_q bn msg_buf_waits)
	run_ok sm bench bn op send size 464 depth 32 count 400 verify || return 1
	check_result sm send 464 400
	check_eq "$(($(sum_q bn msg_buf_waits) - w0))" 0 "464-byte sends: waits for a message buffer"
	check_eq "$(sum_q bn waiting)/$(sum_q bn inflight)" "0/0" "bn waiting/in flight after"
}

timed() {
	run_ok tm bench bn op read size 4096 depth 4 time 2 || return 1
	check_result tm read 4096 "$(j tm requests)"
	check_eq "$(jq -r '"\(.time_s)/\(.count)/\(.requests > 0)/\(.elapsed_ns >= 2000000000 and .elapsed_ns < 12000000000)"' "$TMPD/tm")" \
		"2/0/true/true" "timed run: time_s/count/requests > 0/2 s <= elapsed < 12 s ($(j tm elapsed_ns) ns)"
}

# bad ARGS... MSG: krtctl bench ARGS fails with "Error: ... MSG"
bad() {
	local msg=${*: -1} out
	if "$KRTCTL" bench "${@:1:$#-1}" > "$TMPD/bad" 2>&1; then
		fail "bench ${*:1:$#-1}: succeeded"
	fi
	out=$(< "$TMPD/bad")
	[[ $out == "Error: "*"$msg"* ]] || fail "bench ${*:1:$#-1}: want 'Error: ...$msg', got: $out"
}

bad_input() {
	local mio out np=(setpriv --reuid 65534 --regid 65534 --clear-groups)
	snap b0
	bad bn op send size 4049 depth 1 count 1 "krt_bench: send size over KRT_MAX_MSG (4048 bytes)"
	bad bn op send size 11 depth 1 count 1 "send size under 12 bytes"
	# krt's max_io (1 MiB) is what krt_peer_max_io() gives on rxe
	mio=$(cat /sys/module/krt/parameters/max_io)
	bad bn op read size "$((mio + 1))" depth 1 count 1 "size over the peer's max IO size"
	bad bn op write size 0 depth 1 count 1 "size must be at least 1 byte"
	bad bn op read size 4096 depth 0 count 1 "depth must be 1 to 1024"
	bad bn op read size 4096 depth 1025 count 1 "depth must be 1 to 1024"
	bad bn op read size 4096 depth 1 threads 0 count 1 "threads must be 1 to 16"
	bad bn op read size 4096 depth 1 threads 17 count 1 "threads must be 1 to 16"
	bad bn op read size 4096 depth 1 time 61 "time must be at most 60 seconds"
	bad bn op read size 4096 depth 1 "give a time (1 to 60 s) or a count"
	bad bn op read size 4096 depth 1 time 1 count 1 "time and count exclude each other"
	bad bn op read depth 1 count 1 'missing required attribute "size"'
	bad nosuch op send size 512 depth 1 count 1 "krt_bench: no such peer"
	bad "$IN" op read size 4096 depth 1 count 1 "no active outbound connection"
	# an unprivileged user (GENL_ADMIN_PERM)
	if "${np[@]}" "$KRTCTL" bench bn op send size 512 depth 1 count 1 > "$TMPD/np" 2>&1; then
		fail "unprivileged bench succeeded"
	fi
	out=$(< "$TMPD/np")
	[[ $out == "Error: "*"Operation not permitted"* ]] || fail "unprivileged: $out"
	# nothing submitted, nothing left
	snap b1
	check_eq "$(delta b0 b1)" "0 0 0 0 0 0 0" "krt's counters and gauges after refused runs"
	check_eq "$(cat "$TMPD/b1" | cut -d' ' -f6-)" "0 0" "in flight, MRs in use"
	check_eq "$(bench_threads)/$(bench_refcnt)" "0/0" "threads and krt_bench refcount"
	# usage errors of krtctl itself
	"$KRTCTL" bench bn size 4096 depth 1 count 1 2> "$TMPD/u"
	check_eq "$?" 2 "no op: exit status"
	out=$(< "$TMPD/u")
	[[ $out == *'missing "op send"'* ]] || fail "no op: $out"
	"$KRTCTL" bench bn op erase size 1 depth 1 count 1 2> "$TMPD/u"
	out=$(< "$TMPD/u")
	[[ $out == *'op must be send, read or write, not "erase"'* ]] || fail "bad op: $out"
	# a keyword given twice is refused (each goes into the request once),
	# however often: no write past krtctl's request buffer
	# shellcheck disable=SC2046
	"$KRTCTL" bench bn op send size 64 count 1 $(yes v | head -600) 2> "$TMPD/u"
	check_eq "$?" 2 "verify x600: exit status"
	out=$(< "$TMPD/u")
	[[ $out == *'given twice: "verify"'* ]] || fail "verify x600: $out"
	"$KRTCTL" bench bn op send size 64 depth 1 depth 2 count 1 2> "$TMPD/u"
	[[ $(< "$TMPD/u") == *'given twice: "depth"'* ]] || fail "depth twice: $(< "$TMPD/u")"
	# "t" is threads or time: ambiguous, not the first match
	"$KRTCTL" bench bn op send size 64 t 5 2> "$TMPD/u"
	check_eq "$?" 2 "ambiguous prefix: exit status"
	[[ $(< "$TMPD/u") == *"'t' is ambiguous: threads, time"* ]] || fail "t: $(< "$TMPD/u")"
}

# a run in the background until it has requests in flight; PID in BG
BG=""
bg_run() {
	"$KRTCTL" -j bench bn op read size 65536 depth 8 time 60 > "$TMPD/$1" 2> "$TMPD/$1.err" &
	BG=$!
	KRT_BG_PIDS="${KRT_BG_PIDS:-} $BG"
	busywait 20000 bash -c "[ \$($KRTCTL -j stats show peer bn | jq '.[0].inflight') -gt 0 ]" ||
		{ fail "nothing in flight: $(cat "$TMPD/$1.err")"; return 1; }
	check_eq "$(bench_threads)" 1 "the run's thread"
}

# after a stopped run: no thread, nothing in flight, krt's pool still up
nothing_left() {
	busywait 10000 bash -c "[ \$(ps -e -o comm= | grep -c '^krt-bench/') -eq 0 ]" ||
		fail "$1: krt-bench threads left: $(ps -e -o pid=,comm= | grep krt-bench)"
	busywait 10000 bash -c "[ \$($KRTCTL -j stats show peer bn | jq '.[0].inflight') -eq 0 ]" ||
		fail "$1: requests left in flight"
	snap nl
	check_eq "$(cut -d' ' -f6- "$TMPD/nl")" "0 0" "$1: in flight, MRs in use"
	check_eq "$("$KRTCTL" -j peer show bn | jq -r '.[0].state + " " + (.[0].conns_up|tostring)')" \
		"active 2" "$1: pool"
}

# a signal to krtctl stops its run (SIGTERM: a non-interactive shell
# starts background jobs with SIGINT ignored; Ctrl-C takes the same path)
signal_stops() {
	local t0 ms
	bg_run sig || return 1
	t0=$(date +%s%N)
	kill -TERM "$BG"
	wait "$BG"
	ms=$((($(date +%s%N) - t0) / 1000000))
	diag "krtctl ended $ms ms after SIGTERM"
	[ $ms -lt 10000 ] || fail "SIGTERM took $ms ms to end the run"
	nothing_left "after SIGTERM"
}

rmmod_stops() {
	local t0 rc
	bg_run rm || return 1
	t0=$(date +%s%N)
	rmmod krt_bench || fail "rmmod krt_bench during a run"
	diag "rmmod returned after $((($(date +%s%N) - t0) / 1000000)) ms"
	[ ! -d /sys/module/krt_bench ] || fail "krt_bench still loaded"
	wait "$BG"
	rc=$?
	# the run ended with what completed, flagged as stopped (exit 1)
	check_eq "$rc/$(jq -r '"\(.stopped)/\(.errors)/\(.mismatches)/\(.requests > 0)/\(.bytes == .requests * 65536)"' "$TMPD/rm")" \
		"1/true/0/0/true/true" \
		"stopped run: exit/stopped/errors/mismatches/requests > 0/bytes ($(cat "$TMPD/rm" "$TMPD/rm.err"))"
	nothing_left "after rmmod"
	# the tool says what is missing
	"$KRTCTL" bench bn op send size 512 depth 1 count 1 > "$TMPD/nomod" 2>&1 &&
		fail "bench without krt_bench succeeded"
	grep -qF 'Error: krt_bench is not loaded (no generic netlink family "krt_bench")' "$TMPD/nomod" ||
		fail "without the module: $(cat "$TMPD/nomod")"
	# loaded again, it runs again
	insmod "$KRT_BENCH_KO" || { fail "insmod krt_bench again"; return 1; }
	run_ok again bench bn op write size 4096 depth 8 count 100 && check_result again write 4096 100
}

teardown() {
	"$KRTCTL" peer del bn || fail "peer del"
	unload_krt || return 1
	[ ! -d /sys/module/krt_bench ] || fail "krt_bench left loaded"
	check_eq "$(rdma resource show qp | grep -c 'comm \[rdma_cm\]')" 0 "QPs after rmmod"
	check_eq "$(rdma resource show mr 2> /dev/null | grep -c 'comm \[krt\]')" 0 "MRs after rmmod"
}

ktap_plan 10
run_case setup setup
run_case counted_send_read_write_depth_1_8 counted
run_case text_output_same_names text_output
run_case verified_runs verified
run_case long_messages_wait_for_message_buffers long_messages
run_case timed_run timed
run_case bad_input_refused_nothing_left bad_input
run_case signal_stops_run signal_stops
run_case rmmod_krt_bench_stops_run rmmod_stops
run_case teardown teardown
ktap_finish
