#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# krtctl's command line: help, version, prefix matching, JSON, batch mode.
. "$(dirname "$0")/lib.sh"

help_version() {
	"$KRTCTL" --help | grep -q "^Usage: krtctl" || fail "--help"
	"$KRTCTL" help | grep -q "dev show" || fail "help"
	"$KRTCTL" -V | grep -q "^krtctl [0-9]" || fail "-V: $("$KRTCTL" -V)"
	"$KRTCTL" --bogus > /dev/null 2>&1
	check_eq $? 2 "exit status for an unknown option"
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

ktap_plan 4
run_case help_and_version help_version
run_case prefix_matching_and_json prefix_and_json
run_case batch_mode batch_mode
run_case monitor_count monitor_count
ktap_finish
