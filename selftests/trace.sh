#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tracepoints in one guest (rxe loopback, the test service on): the krt
# event folder lists every event of src/krt/trace.h; the connection set
# up, known traffic (a submit and a done event per request, the same ids,
# counts equal to what was sent), refusals, connection resets under load
# (error with its reason, the reconnect with attempt and delay, active
# again, each re-send with its old and new connection), the backoff of
# failed attempts, a refused connect request, a missed heartbeat and a
# malformed message are traced; turning the events off stops the output;
# rmmod with the events on is clean.
. "$(dirname "$0")/lib.sh"

T=/sys/kernel/tracing
A=""		# the rxe device's address
# every event of src/krt/trace.h (Documentation/tracing.rst lists them)
EVENTS="krt_cm_event krt_cm_listen_event krt_cm_reject krt_conn_state
	krt_credit_wait krt_hb_miss krt_mr_error krt_msg_malformed
	krt_peer_state krt_qp_event krt_reconnect krt_req_done
	krt_req_refused krt_req_resend krt_req_send krt_req_submit
	krt_sq_wait krt_wc_error"
BUF_KB0=""	# buffer_size_kb before the test

# snap NAME: the trace buffer now, in $TMPD/NAME, and each event's lines
# (what follows "EVENT: ") in $TMPD/NAME.d/EVENT; fails when events were
# lost (the ring buffer overran)
snap() {
	cat "$T/trace" > "$TMPD/$1" || { fail "cannot read $T/trace"; return 1; }
	local e
	e=$(sed -n 's/^# entries-in-buffer\/entries-written: \([0-9]*\)\/\([0-9]*\).*/\1 \2/p' "$TMPD/$1")
	[ -n "$e" ] && [ "${e% *}" = "${e#* }" ] || fail "$1: events lost (in buffer/written: $e)"
	rm -rf "$TMPD/$1.d" && mkdir "$TMPD/$1.d"
	awk -v d="$TMPD/$1.d" 'match($0, / krt_[a-z_]+: /) {
		print substr($0, RSTART + RLENGTH) > (d "/" substr($0, RSTART + 1, RLENGTH - 3)) }' "$TMPD/$1"
}
# ev NAME EVENT: the fields of EVENT's lines in snapshot NAME
ev() { [ ! -f "$TMPD/$1.d/$2" ] || cat "$TMPD/$1.d/$2"; }
# is FILE WANT WHAT: FILE (one line) reads WANT, without a subshell
is() {
	local v
	read -r v < "$1"
	check_eq "$v" "$2" "$3"
}
# evp FILE EVENT PEER: the same, for one peer
evp() { ev "$1" "$2" | grep "^peer=$3 "; }
# fld KEY: the value of KEY=value on each line of stdin
fld() { sed -n "s/.* $1=\([^ ]*\).*/\1/p; s/^$1=\([^ ]*\).*/\1/p"; }
dbg() { awk -v k="$2:" '$1 == k { print $2 }' "$KRT_DBG/peers/$1/stats"; }
clear_trace() { : > "$T/trace"; }
# no_kernel_addresses FILE: no kernel pointer in the recorded events
no_kernel_addresses() {
	grep ' krt_' "$TMPD/$1" | grep -iE '0xffff[0-9a-f]{8}|ffff[89a-f][0-9a-f]{11}' &&
		fail "$1: an event shows a kernel address"
	return 0
}

setup() {
	if [ ! -d "$T/events" ]; then
		mount -t tracefs nodev "$T" 2> /dev/null ||
			{ diag "no tracefs at $T (CONFIG_TRACING off?)"; return $KSFT_SKIP; }
	fi
	[ -w "$T/trace" ] || { diag "$T/trace not writable"; return $KSFT_SKIP; }
	# "7 (expanded: 1408)" before the buffer was first used
	BUF_KB0=$(sed 's/.*expanded: \([0-9]*\).*/\1/' "$T/buffer_size_kb")
	# a few hundred bytes per request: room for every event of a case
	echo 16384 > "$T/buffer_size_kb" || fail "buffer_size_kb"
	echo 1 > "$T/tracing_on"
	clear_trace
	load_krt test_service=1 || return 1
	[ -d "$T/events/krt" ] || { fail "no $T/events/krt after insmod"; return 1; }
	echo 1 > "$T/events/krt/enable" || fail "enable events/krt"
	rxe_add krt_tr0 || { fail "rxe_add"; return 1; }
	A=$(ip -4 -o addr show dev "$(awk '$1 == "krt_tr0" { print $2 }' "$TMPD/rxe")" |
	    awk '{ sub("/.*", "", $4); print $4 }')
	"$KRTCTL" listen add "$A" || fail "listen add"
	"$KRTCTL" peer add tr addr "$A" conns 2 depth 32 reconnect_ms 50 reconnect_max_ms 400 ||
		fail "peer add"
	wait_peer tr active 2 || fail "tr not 2/2: $("$KRTCTL" peer show)"
}

# the folder lists every event, each with its format, all enabled
events_listed() {
	local e have want
	have=$(find "$T/events/krt" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | xargs)
	want=$(echo $EVENTS | tr ' ' '\n' | sort | xargs)
	check_eq "$have" "$want" "events in $T/events/krt"
	for e in $EVENTS; do
		[ -r "$T/events/krt/$e/format" ] || fail "$e: no format"
		is "$T/events/krt/$e/enable" 1 "$e enabled"
	done
	is "$T/events/krt/enable" 1 "events/krt/enable"
	# the fields the documentation names
	for e in krt_conn_state:reason krt_conn_state:old krt_conn_state:state \
		 krt_req_done:latency_us krt_req_done:status krt_req_done:id \
		 krt_req_resend:from_conn krt_req_resend:to_conn krt_reconnect:attempt \
		 krt_reconnect:delay_ms krt_cm_event:event krt_cm_event:status \
		 krt_msg_malformed:reason krt_hb_miss:idle_ms krt_mr_error:err; do
		grep -q "field:.* ${e#*:};" "$T/events/krt/${e%%:*}/format" ||
			fail "${e%%:*} has no field ${e#*:}"
	done
	# enums resolved to numbers for user-space tools (TRACE_DEFINE_ENUM)
	grep -q 'KRT_CONN_\|RDMA_CM_EVENT_\|KRT_DATA_' "$T"/events/krt/*/format &&
		fail "unresolved enum names in a format: $(grep -l 'KRT_CONN_\|RDMA_CM_EVENT_\|KRT_DATA_' "$T"/events/krt/*/format)"
	return 0
}

# the pool came up: each connection idle -> connecting -> active on its
# first attempt, the cm events of both sides, the peer active 2/2
connect_traced() {
	local c n
	snap up || return 1
	for c in 0 1; do
		for n in "idle -> connecting attempt=1" "connecting -> active attempt=1"; do
			evp up krt_conn_state tr | grep -q "^peer=tr conn=$c outbound $n " ||
				fail "conn $c: no '$n': $(evp up krt_conn_state tr)"
		done
		for n in ADDR_RESOLVED ROUTE_RESOLVED ESTABLISHED; do
			evp up krt_cm_event tr | grep -q "^peer=tr conn=$c outbound event=$n status=0" ||
				fail "conn $c: no cm event $n"
		done
	done
	check_eq "$(ev up krt_cm_listen_event | grep -c "listener=$A:7471 from=$A:[0-9]* event=CONNECT_REQUEST status=0")" 2 \
		"connect requests at the listener"
	check_eq "$(ev up krt_conn_state | grep -c '^peer=in-[0-9a-f]*-[0-9]* conn=[01] inbound connecting -> active')" 2 \
		"inbound connections active"
	evp up krt_peer_state tr | grep -q -e '-> active up=2/2' ||
		fail "peer state: $(evp up krt_peer_state tr)"
	no_kernel_addresses up
}

# 1000 pings, 100 reads, 50 writes: one submit, one send and one done
# event each, the same ids, with their kind and length; refusals of
# nowait requests traced as such; waits as many as counted
requests_traced() {
	local ids_s ids_d n
	clear_trace
	run_ok p ping tr count 1000 size 512 || return 1
	run_ok xr xfer tr op read size 65536 count 100 depth 8 || return 1
	run_ok xw xfer tr op write size 8192 count 50 depth 4 || return 1
	check_eq "$(j p ok)/$(j xr ok)/$(j xw ok)" "1000/100/50" "traffic"
	snap rq || return 1
	check_eq "$(evp rq krt_req_submit tr | wc -l)" 1150 "submit events"
	check_eq "$(evp rq krt_req_send tr | wc -l)" 1150 "send events"
	check_eq "$(evp rq krt_req_done tr | wc -l)" 1150 "done events"
	check_eq "$(evp rq krt_req_submit tr | grep -c ' send msg_len=524 data_len=0 ')" 1000 \
		"pings submitted (12-byte test header + 512)"
	check_eq "$(evp rq krt_req_submit tr | grep -c ' read msg_len=[0-9]* data_len=65536 ')" 100 \
		"reads submitted"
	check_eq "$(evp rq krt_req_submit tr | grep -c ' write msg_len=[0-9]* data_len=8192 ')" 50 \
		"writes submitted"
	ids_s=$(evp rq krt_req_submit tr | fld id | sort -n | md5sum)
	ids_d=$(evp rq krt_req_done tr | fld id | sort -n | md5sum)
	check_eq "$ids_d" "$ids_s" "ids of done events = ids of submit events"
	check_eq "$(evp rq krt_req_done tr | fld id | sort -u | wc -l)" 1150 "distinct ids"
	check_eq "$(evp rq krt_req_send tr | fld id | sort -n | md5sum)" "$ids_s" "ids of send events"
	check_eq "$(evp rq krt_req_done tr | grep -c ' status=0 rsp_status=0 sends=1 latency_us=[0-9]*$')" 1150 \
		"done events with status 0, one send and a latency"
	check_eq "$(evp rq krt_req_send tr | grep -c '^peer=tr conn=[01] ')" 1150 "send events name a connection"
	n=$(evp rq krt_req_done tr | fld latency_us | sort -n | tail -1)
	[ "${n:-0}" -gt 0 ] || fail "largest latency_us: '$n'"
	check_eq "$(ev rq krt_req_resend | wc -l)/$(ev rq krt_req_refused | wc -l)" "0/0" \
		"re-sends and refusals"
	no_kernel_addresses rq
	# nowait on a small queue: refused requests have a refused event and
	# no done event; waits are traced as often as they are counted
	"$KRTCTL" peer add tw addr "$A" conns 1 depth 4 || fail "peer add tw"
	wait_peer tw active 1 || { fail "tw not up"; return 1; }
	clear_trace
	run_ok x xfer tw op write size 4k count 1000 threads 8 depth 16 nowait || return 1
	run_ok y xfer tw op write size 4k count 1000 threads 8 depth 16 || return 1
	snap nw || return 1
	[ "$(j x eagain)" -gt 0 ] || fail "nowait: nothing refused"
	check_eq "$(evp nw krt_req_refused tw | grep -c ' status=-11$')" "$(j x eagain)" \
		"refused events (EAGAIN) = xfer's eagain"
	check_eq "$(evp nw krt_req_submit tw | wc -l)" 2000 "tw submit events"
	check_eq "$(evp nw krt_req_done tw | wc -l)" "$(($(j x ok) + $(j y ok)))" "tw done events = ok"
	check_eq "$(evp nw krt_credit_wait tw | wc -l)" "$(dbg tw credit_waits)" "credit_wait events = credit_waits"
	check_eq "$(evp nw krt_sq_wait tw | wc -l)" "$(dbg tw sq_waits)" "sq_wait events = sq_waits"
	diag "tw: $(j x eagain) refused, $(dbg tw credit_waits) credit waits, $(dbg tw sq_waits) SQ waits"
	"$KRTCTL" peer del tw || fail "peer del tw"
}

# connections reset under verified load: each goes active -> error with
# the reason, a reconnect is scheduled (attempt 1, a delay within
# reconnect_ms), it is active again; each request re-sent is traced with
# the connection it left and the one it went to, and completes once
reset_reconnect_traced() {
	local pid n line c d w0
	clear_trace
	w0=$(dbg tr reqs_write)
	"$KRTCTL" -j xfer tr op write size 4k count 12000 threads 4 depth 8 timeout 30000 \
		> "$TMPD/ld" 2> "$TMPD/ld.err" &
	pid=$!
	# the resets must meet requests in flight: wait for the load to run
	busywait 20000 bash -c "[ \$(awk '\$1 == \"reqs_write:\" { print \$2 }' $KRT_DBG/peers/tr/stats) -gt $((w0 + 100)) ]" ||
		fail "the load did not start"
	n=$(during "$pid" 10 0.3 bash -c "$KRTCTL conn reset tr 0; sleep 0.15; $KRTCTL conn reset tr 1")
	wait "$pid" || fail "load: $(cat "$TMPD/ld" "$TMPD/ld.err")"
	diag "$n reset pairs while the load ran ($(j ld elapsed_ns) ns); resent $(j ld resent)"
	check_eq "$(j ld ok)/$(j ld errors)/$(j ld mismatches)/$(j ld double_completions)" \
		"12000/0/0/0" "load ok/errors/mismatches/double"
	wait_peer tr active 2 || fail "tr not back: $("$KRTCTL" conn show peer tr)"
	snap rs || return 1
	for c in 0 1; do
		line=$(evp rs krt_conn_state tr | grep -n "^peer=tr conn=$c outbound active -> error .* reason=reset by administrator$" |
		       head -1 | cut -d: -f1)
		[ -n "$line" ] || { fail "conn $c: no active -> error with the reason: $(evp rs krt_conn_state tr | head)"; continue; }
		evp rs krt_conn_state tr | tail -n +"$line" | grep -q "^peer=tr conn=$c outbound error -> reconnecting " ||
			fail "conn $c: not reconnecting after the error"
		evp rs krt_conn_state tr | tail -n +"$line" | grep -q "^peer=tr conn=$c outbound connecting -> active attempt=1 reason=$" ||
			fail "conn $c: not active again after the error"
	done
	# reconnect_ms 50: attempt 1 waits 1..50 ms (jiffy rounding: a few ms more)
	evp rs krt_reconnect tr | grep -q '^peer=tr conn=[01] attempt=1 delay_ms=[0-9]* reconnect_ms=50 reconnect_max_ms=400$' ||
		fail "reconnect events: $(evp rs krt_reconnect tr | head -3)"
	d=$(evp rs krt_reconnect tr | fld delay_ms | sort -n | tail -1)
	[ "${d:-999}" -le 60 ] || fail "attempt 1 delay_ms $d over reconnect_ms 50"
	check_eq "$(evp rs krt_reconnect tr | wc -l)" "$(evp rs krt_conn_state tr | grep -c ' error -> reconnecting ')" \
		"a reconnect event per reconnect"
	evp rs krt_peer_state tr | grep -q 'active -> degraded up=1/2 last_reason=reset by administrator' ||
		fail "peer state: $(evp rs krt_peer_state tr | head -3)"
	# every re-send traced, with its connections, and completed once
	check_eq "$(evp rs krt_req_resend tr | wc -l)" "$(j ld resent)" "re-send events = xfer's resent"
	[ "$(j ld resent)" -gt 0 ] || fail "nothing was re-sent: the resets missed the load"
	check_eq "$(evp rs krt_req_resend tr | grep -vc '^peer=tr id=[0-9]* from_conn=[01] to_conn=[01] sends=[2-9]$')" 0 \
		"re-send events name both connections"
	for id in $(evp rs krt_req_resend tr | fld id | sort -u | head -20); do
		check_eq "$(evp rs krt_req_done tr | grep -c " id=$id .* status=0 ")" 1 "re-sent request $id done once"
	done
	check_eq "$(evp rs krt_req_done tr | wc -l)" 12000 "done events"
	no_kernel_addresses rs
}

# the listener gone: attempts fail, each reconnect event has the next
# attempt and a delay within the doubling window, capped by
# reconnect_max_ms; back once the listener is
backoff_traced() {
	local a d max ok=0
	clear_trace
	"$KRTCTL" listen del "$A" || fail "listen del"
	"$KRTCTL" conn reset tr 0 || fail "conn reset"
	busywait 20000 bash -c "grep -q 'krt_reconnect: peer=tr conn=0 attempt=5 ' $T/trace" ||
		fail "no fifth attempt: $(grep krt_reconnect "$T/trace" | tail -3)"
	"$KRTCTL" listen add "$A" || fail "listen add"
	wait_peer tr active 2 || fail "tr not back"
	snap bo || return 1
	while read -r a d; do
		max=$((50 << (a - 1)))
		[ "$max" -gt 400 ] && max=400
		if [ "$d" -lt 1 ] || [ "$d" -gt $((max + 10)) ]; then
			fail "attempt $a: delay_ms $d outside 1..$max"
		fi
		ok=$((ok + 1))
	done < <(evp bo krt_reconnect tr | grep '^peer=tr conn=0 ' | sed 's/.* attempt=\([0-9]*\) delay_ms=\([0-9]*\) .*/\1 \2/')
	[ "$ok" -ge 5 ] || fail "reconnect events of conn 0: $ok"
	check_eq "$(evp bo krt_reconnect tr | grep '^peer=tr conn=0 ' | fld attempt | head -5 | xargs)" \
		"1 2 3 4 5" "attempts counted up"
	evp bo krt_conn_state tr | grep -q '^peer=tr conn=0 outbound connecting -> error attempt=[0-9]* reason=rejected' ||
		fail "failed attempts' reason: $(evp bo krt_conn_state tr | grep ' -> error' | head -3)"
	ev bo krt_cm_event | grep -q '^peer=tr conn=0 outbound event=REJECTED status=' ||
		fail "no REJECTED cm event: $(ev bo krt_cm_event | head -3)"
	diag "conn 0: $ok reconnects, last $(evp bo krt_reconnect tr | grep '^peer=tr conn=0 ' | tail -1)"
}

# a connect request refused by this node (our own, with a bad version):
# the reject with its reason at the passive side, REJECTED and the
# error with the same reason at the active side, then accepted
reject_traced() {
	clear_trace
	echo 2 > "$KRT_DBG/fault/cm_req"
	"$KRTCTL" peer add rj addr "$A" conns 1 reconnect_ms 100 reconnect_max_ms 200 ||
		{ fail "peer add rj"; echo 0 > "$KRT_DBG/fault/cm_req"; return 1; }
	busywait 10000 grep -q ' krt_cm_reject: ' "$T/trace" || fail "no reject traced"
	echo 0 > "$KRT_DBG/fault/cm_req"
	wait_peer rj active 1 || fail "rj not up after the rejects"
	snap rj || return 1
	ev rj krt_cm_reject | grep -q "^from=$A:[0-9]* reason=1 protocol version mismatch$" ||
		fail "reject: $(ev rj krt_cm_reject | head -3)"
	evp rj krt_cm_event rj | grep -q '^peer=rj conn=0 outbound event=REJECTED status=[0-9]*$' ||
		fail "no REJECTED: $(evp rj krt_cm_event rj | head -5)"
	evp rj krt_conn_state rj | grep -q '^peer=rj conn=0 outbound connecting -> error attempt=1 reason=rejected: protocol version mismatch$' ||
		fail "rj error: $(evp rj krt_conn_state rj | head -5)"
	evp rj krt_conn_state rj | grep -q '^peer=rj conn=0 outbound connecting -> active attempt=[0-9]* reason=$' ||
		fail "rj not traced active"
	"$KRTCTL" peer del rj || fail "peer del rj"
}

# a silent peer (every message dropped): a heartbeat miss with its idle
# time and bound, then the reset with the reason
heartbeat_traced() {
	"$KRTCTL" peer add hb addr "$A" conns 1 depth 8 hb_ms 200 hb_misses 3 reconnect_ms 50 ||
		{ fail "peer add hb"; return 1; }
	wait_peer hb active 1 || { fail "hb not up"; return 1; }
	clear_trace
	echo 1 > "$KRT_DBG/fault/silent"
	busywait 10000 bash -c "grep -q 'krt_hb_miss: peer=hb ' $T/trace"
	echo 0 > "$KRT_DBG/fault/silent"
	wait_peer hb active 1 || fail "hb not back"
	wait_peer tr active 2 || fail "tr not back after the silence"
	snap hb || return 1
	evp hb krt_hb_miss hb | grep -q '^peer=hb conn=0 client idle_ms=[0-9]* bound_ms=600$' ||
		fail "hb_miss: $(ev hb krt_hb_miss)"
	evp hb krt_conn_state hb | grep -q '^peer=hb conn=0 outbound active -> error .* reason=heartbeat: no answer from the peer$' ||
		fail "hb state: $(evp hb krt_conn_state hb)"
	"$KRTCTL" peer del hb
}

# a corrupted request: the server traces the malformed message with its
# reason, the client the re-send, and the request completes
malformed_traced() {
	local id
	clear_trace
	echo 1 > "$KRT_DBG/fault/corrupt_msg"
	run_ok m ping tr count 1 timeout 60000 || return 1
	check_eq "$(j m ok)/$(j m resent)" "1/1" "corrupted ping re-sent and answered"
	wait_peer tr active 2 || fail "tr not back"
	snap mf || return 1
	ev mf krt_msg_malformed | grep -q '^peer=in-[0-9a-f]*-[0-9]* conn=[01] server reason=bad magic$' ||
		fail "malformed: $(ev mf krt_msg_malformed)"
	id=$(evp mf krt_req_submit tr | fld id)
	evp mf krt_req_resend tr | grep -q "^peer=tr id=$id from_conn=[01] to_conn=[01] sends=2$" ||
		fail "re-send of $id: $(ev mf krt_req_resend)"
	evp mf krt_req_done tr | grep -q " id=$id .* status=0 rsp_status=0 sends=2 " ||
		fail "done of $id: $(ev mf krt_req_done)"
	ev mf krt_conn_state | grep -q '^peer=in-.* inbound active -> error .* reason=malformed message from the peer$' ||
		fail "server connection reset reason: $(ev mf krt_conn_state | head -3)"
}

# events off: nothing more is recorded
disable_stops_output() {
	local e
	echo 0 > "$T/events/krt/enable" || fail "disable"
	for e in $EVENTS; do
		is "$T/events/krt/$e/enable" 0 "$e off"
	done
	clear_trace
	run_ok p ping tr count 100 || return 1
	"$KRTCTL" conn reset tr 1 || fail "conn reset"
	wait_peer tr active 2 || fail "tr not back"
	snap off || return 1
	check_eq "$(grep -c ' krt_' "$TMPD/off")" 0 "krt events with the events off"
	# one event on: only it
	echo 1 > "$T/events/krt/krt_req_done/enable"
	run_ok p ping tr count 10 || return 1
	snap one || return 1
	check_eq "$(grep -c ' krt_req_done: ' "$TMPD/one")/$(grep -c ' krt_' "$TMPD/one")" "10/10" \
		"only krt_req_done on"
}

# rmmod with every event on and events in the buffer: clean, the folder
# goes, reading the buffer works; a new load has the events off
rmmod_enabled() {
	echo 1 > "$T/events/krt/enable"
	run_ok p ping tr count 20 || return 1
	grep -q ' krt_req_done: ' "$T/trace" || fail "no events before rmmod"
	"$KRTCTL" peer del tr || fail "peer del"
	unload_krt || return 1
	[ -e "$T/events/krt" ] && fail "events/krt left after rmmod"
	cat "$T/trace" > "$TMPD/gone" || fail "reading the buffer after rmmod"
	# the kernel clears the buffer of a module's events when it goes
	check_eq "$(grep -c ' krt_' "$TMPD/gone")" 0 "krt events left in the buffer after rmmod"
	load_krt || return 1
	is "$T/events/krt/enable" 0 "events off after a new load"
	check_eq "$(find "$T/events/krt" -mindepth 1 -maxdepth 1 -type d | wc -l)" \
		"$(echo $EVENTS | wc -w)" "events listed again"
	unload_krt || return 1
	[ -e "$KRT_DBG" ] && fail "debugfs left after rmmod"
	clear_trace
	[ -n "$BUF_KB0" ] && echo "$BUF_KB0" > "$T/buffer_size_kb"
	return 0
}

ktap_plan 11
run_case setup setup
run_case events_listed events_listed
run_case connect_traced connect_traced
run_case requests_traced_submit_done_ids requests_traced
run_case reset_reconnect_resend_traced reset_reconnect_traced
run_case backoff_attempts_traced backoff_traced
run_case reject_traced reject_traced
run_case heartbeat_miss_traced heartbeat_traced
run_case malformed_message_traced malformed_traced
run_case disable_stops_output disable_stops_output
run_case rmmod_with_events_enabled rmmod_enabled
ktap_finish
