#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device tracking: rxe devices added, renamed and removed show up in
# 'krtctl dev show', in debugfs and as 'krtctl monitor' events; unusable
# devices are listed with a reason; autoenable=0 and 'dev set' work.
. "$(dirname "$0")/lib.sh"

MON=$TMPD/monitor.json

start_monitor() {
	"$KRTCTL" -j monitor > "$MON" 2> "$TMPD/monitor.err" &
	KRT_BG_PIDS="$KRT_BG_PIDS $!"
	busywait 5000 grep -q "monitoring krt events" "$TMPD/monitor.err" ||
		{ fail "monitor did not start: $(cat "$TMPD/monitor.err")"; return 1; }
}

# has_event EVENT NAME [FIELD VALUE]
has_event() {
	local sel='.event == $ev and .dev.name == $n'
	[ $# -ge 4 ] && sel="$sel and (.dev.$3 | tostring) == \$v"
	jq -e -s --arg ev "$1" --arg n "$2" --arg v "${4:-}" \
		"map(select($sel)) | length > 0" "$MON" > /dev/null
}

in_dev_show() { "$KRTCTL" dev show | grep -q "^$1: "; }

add_show_remove() {
	local guid
	load_krt || return 1
	start_monitor || return 1
	rxe_add krt_dt0 || { fail "rxe_add"; return 1; }

	in_dev_show krt_dt0 || fail "krt_dt0 not in dev show"
	check_eq "$(dev_field krt_dt0 state)" usable "state"
	check_eq "$(dev_field krt_dt0 frwr)" true "frwr"
	[ "$(dev_field krt_dt0 max_fr_pages)" -gt 0 ] || fail "max_fr_pages is 0"
	[ "$(dev_field krt_dt0 max_inline)" -gt 0 ] || fail "inline probe found nothing"
	guid=$(rdma dev show krt_dt0 | sed -n 's/.*node_guid \([0-9a-f:]*\).*/\1/p' | tr -d :)
	check_eq "$(dev_field krt_dt0 node_guid)" "$guid" "node_guid vs rdma dev show"
	[ "$(dev_field krt_dt0 comp_vectors)" -gt 0 ] || fail "no completion vectors"

	# debugfs mirrors netlink
	[ -d "$KRT_DBG/devices/krt_dt0" ] || fail "no debugfs folder"
	check_eq "$(cat "$KRT_DBG/devices/krt_dt0/state")" usable "debugfs state"
	check_eq "$(cat "$KRT_DBG/devices/krt_dt0/frwr")" 1 "debugfs frwr"
	check_eq "$(cat "$KRT_DBG/devices/krt_dt0/max_qp_wr")" "$(dev_field krt_dt0 max_qp_wr)" "debugfs max_qp_wr"
	check_eq "$(cat "$KRT_DBG/devices/krt_dt0/max_fast_reg_page_list_len")" \
		"$(dev_field krt_dt0 max_fr_pages)" "debugfs max_fast_reg_page_list_len"
	check_eq "$(cat "$KRT_DBG/devices/krt_dt0/max_inline_data")" "$(dev_field krt_dt0 max_inline)" "debugfs max_inline_data"
	grep -q "^name: krt_dt0$" "$KRT_DBG/devices/krt_dt0/info" || fail "debugfs info has no name line"
	busywait 3000 has_event dev-add krt_dt0 state usable || fail "no dev-add event"

	rxe_del krt_dt0 || { fail "rxe_del"; return 1; }
	in_dev_show krt_dt0 && fail "krt_dt0 still in dev show"
	[ -e "$KRT_DBG/devices/krt_dt0" ] && fail "debugfs folder left after removal"
	busywait 3000 has_event dev-del krt_dt0 || fail "no dev-del event"
	"$KRTCTL" dev show krt_dt0 > /dev/null 2>&1 && fail "dev show of a removed device succeeded"
	unload_krt
}

rename_device() {
	load_krt || return 1
	start_monitor || return 1
	rxe_add krt_rn0 || { fail "rxe_add"; return 1; }
	rdma dev set krt_rn0 name krt_rn1 || { fail "rdma dev set name"; return 1; }
	sed -i 's/^krt_rn0 /krt_rn1 /' "$TMPD/rxe"
	in_dev_show krt_rn1 || fail "new name not in dev show"
	in_dev_show krt_rn0 && fail "old name still in dev show"
	[ -d "$KRT_DBG/devices/krt_rn1" ] || fail "debugfs folder not renamed"
	[ -e "$KRT_DBG/devices/krt_rn0" ] && fail "old debugfs folder left"
	busywait 3000 has_event dev-change krt_rn1 || fail "no dev-change event"
	rxe_del krt_rn1
	unload_krt
}

several_devices() {
	local names
	rxe_add krt_sd0 || { fail "rxe_add"; return 1; }
	load_krt || return 1		# present before load: found by add()
	rxe_add krt_sd1 || { fail "rxe_add"; return 1; }
	rxe_add krt_sd2 || { fail "rxe_add"; return 1; }
	names=$("$KRTCTL" -j dev show |
		jq -r '[.[].name | select(startswith("krt_sd"))] | join(" ")')
	check_eq "$names" "krt_sd0 krt_sd1 krt_sd2" "dump lists every device in index order"
	check_eq "$(ls -d "$KRT_DBG"/devices/krt_sd* | wc -l)" 3 "debugfs folders"
	rxe_del krt_sd1
	names=$("$KRTCTL" dev show | grep -o '^krt_sd[0-9]' | tr '\n' ' ')
	check_eq "$names" "krt_sd0 krt_sd2 " "after removing the middle one"
	unload_krt			# remove() for the rest at unload
	rxe_del krt_sd0
	rxe_del krt_sd2
}

unusable_device() {
	load_krt || return 1
	echo 1 > "$KRT_DBG/fault/mask_frwr"
	rxe_add krt_un0 || { fail "rxe_add"; return 1; }
	echo 0 > "$KRT_DBG/fault/mask_frwr"
	check_eq "$(dev_field krt_un0 state)" unusable "state of a device without FRWR"
	dev_field krt_un0 reason | grep -q FRWR || fail "reason does not name FRWR: $(dev_field krt_un0 reason)"
	"$KRTCTL" dev show krt_un0 | grep -q 'state unusable reason "no FRWR' || fail "plain dev show lacks the reason"
	check_eq "$(cat "$KRT_DBG/devices/krt_un0/state")" unusable "debugfs state"
	check_eq "$(rdma_res_count pd)" 0 "an unusable device gets no PD"
	"$KRTCTL" dev set krt_un0 enabled on > "$TMPD/out" 2>&1 && fail "enabling an unusable device succeeded"
	grep -q "Error: device is unusable" "$TMPD/out" || fail "no extack: $(cat "$TMPD/out")"
	rxe_del krt_un0
	unload_krt
}

autoenable_off() {
	load_krt autoenable=0 || return 1
	rxe_add krt_ae0 || { fail "rxe_add"; return 1; }
	check_eq "$(dev_field krt_ae0 state)" disabled "state with autoenable=0"
	check_eq "$(dev_field krt_ae0 enabled)" false "enabled with autoenable=0"
	"$KRTCTL" dev set krt_ae0 enabled on || fail "dev set enabled on"
	check_eq "$(dev_field krt_ae0 state)" usable "state after enabling"
	"$KRTCTL" dev set krt_ae0 enabled off || fail "dev set enabled off"
	check_eq "$(cat "$KRT_DBG/devices/krt_ae0/state")" disabled "debugfs state after disabling"
	rxe_del krt_ae0
	unload_krt
}

ktap_plan 5
run_case add_show_remove add_show_remove
run_case rename_device rename_device
run_case several_devices several_devices
run_case unusable_device_listed_with_reason unusable_device
run_case autoenable_off_and_dev_set autoenable_off
ktap_finish
