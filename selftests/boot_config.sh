#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A storage node's boot: krt as DKMS installed it on the host for this
# kernel (scripts/check-ops runs 'make dkms-install' first), loaded by
# 'modprobe krt' the way krt.service's krt-boot does, configured from a
# krtctl -b file, then stopped: peers and listeners removed, module gone.
. "$(dirname "$0")/lib.sh"

BOOT=$TMPD/krt-boot
sed "s|@SBINDIR@|$KRT_ROOT/src/krtctl|g; s|@SYSCONFDIR@|$TMPD/etc|g" \
	"$KRT_ROOT/packaging/krt-boot.in" > "$BOOT"
chmod +x "$BOOT"
# krt-boot runs krtctl through this wrapper, which logs each call
CALLS=$TMPD/krtctl.calls
cat > "$TMPD/krtctl" <<WRAP
#!/bin/sh
echo "\$*" >> "$CALLS"
exec "$KRTCTL" "\$@"
WRAP
chmod +x "$TMPD/krtctl"
export KRTCTL_WRAP=$TMPD/krtctl

dkms_modprobe() {
	local f
	f=$(modinfo -F filename krt 2>&1)
	case $f in
	*/updates/dkms/krt.ko*) diag "modinfo: $f" ;;
	*) fail "krt resolves to '$f', not the DKMS tree (updates/dkms)"; return 1 ;;
	esac
	modprobe krt || { fail "modprobe krt"; return 1; }
	krt_loaded || fail "krt not loaded after modprobe"
	check_eq "$(cat /sys/module/krt/version)" "$(sed -n 's/^#define KRT_VERSION[ \t]*"\(.*\)"/\1/p' "$KRT_ROOT/src/krt/krt.h")" "version"
	# a normal build (DKMS, no KRT_FAULT=y) has no fault injection knob
	[ -d "$KRT_DBG" ] || fail "no $KRT_DBG"
	[ ! -e "$KRT_DBG/fault" ] || fail "the DKMS build has fault knobs: $(ls "$KRT_DBG/fault")"
	modprobe -r krt || fail "modprobe -r krt"
	! krt_loaded || fail "krt still loaded"
}

boot_start_stop() {
	local conf=$TMPD/etc/krt/krt.conf addr
	modprobe -q rdma_cm
	rxe_add krt_boot0 || { fail "rxe_add"; return 1; }
	addr=$(ip -4 -o addr show dev "$(awk '{ print $2 }' "$TMPD/rxe")" | awk '{ sub("/.*", "", $4); print $4 }')
	mkdir -p "$TMPD/etc/krt"
	# the example file as shipped, with its commented lines made real
	sed -e "s/^#listen add 192.0.2.1/listen add $addr/" \
		-e "s/^#peer add store2 addr 192.0.2.2/peer add store2 addr $addr/" \
		-e "s/^#peer add store3 addr 192.0.2.3/peer add store3 addr $addr/" \
		"$KRT_ROOT/packaging/krt.conf.example" > "$conf"
	diag "config: $(grep -v '^#' "$conf" | grep . | tr '\n' ';')"
	KRTCTL=$KRTCTL_WRAP "$BOOT" start || { fail "krt-boot start"; return 1; }
	krt_loaded || { fail "krt-boot start did not load krt"; return 1; }
	wait_peer store2 active 4 || fail "store2 not active 4/4: $("$KRTCTL" peer show store2)"
	wait_peer store3 active 4 || fail "store3 not active 4/4: $("$KRTCTL" peer show store3)"
	check_eq "$("$KRTCTL" -j peer show store2 | jq -r '.[0].policy')" min-inflight "store2 policy"
	check_eq "$("$KRTCTL" -j peer show store3 | jq -r '.[0].loss_timeout_s')" 30 "store3 loss_timeout"
	"$KRTCTL" -j listen show | jq -e --arg a "$addr" 'map(select(.addr == $a)) | length == 1' \
		> /dev/null || fail "listener $addr missing: $("$KRTCTL" listen show)"
	: > "$CALLS"
	KRTCTL=$KRTCTL_WRAP "$BOOT" stop || fail "krt-boot stop"
	! krt_loaded || fail "krt still loaded after krt-boot stop"
	# stop deleted what the file made, one by one (not just rmmod)
	for c in "peer del store2" "peer del store3" "listen del $addr port 7471"; do
		grep -qxF "$c" "$CALLS" || fail "krt-boot stop did not run '$c': $(tr '\n' ';' < "$CALLS")"
	done
	# a file failing half-way is undone: start fails, krt is clean after it
	printf 'listen add %s\npeer add half addr %s conns 1\npeer add half addr %s\n' \
		"$addr" "$addr" "$addr" > "$conf"
	if KRTCTL=$KRTCTL_WRAP "$BOOT" start > "$TMPD/half.out" 2>&1; then
		fail "krt-boot start succeeded with a failing file"
	fi
	grep -q "undoing it" "$TMPD/half.out" || fail "no undo said: $(cat "$TMPD/half.out")"
	! krt_loaded || fail "krt left loaded after a failed start"
	KRTCTL=$KRTCTL_WRAP "$BOOT" start > "$TMPD/half.out" 2>&1 && fail "second failing start succeeded"
	grep -qF "$conf:3: command failed" "$TMPD/half.out" ||
		fail "second start did not fail where the first did (line 3): $(cat "$TMPD/half.out")"
	# a missing file is no error: the module runs unconfigured
	rm -f "$conf"
	KRTCTL=$KRTCTL_WRAP "$BOOT" start > "$TMPD/start.out" 2>&1 || fail "krt-boot start without a file: $(cat "$TMPD/start.out")"
	grep -q "missing" "$TMPD/start.out" || fail "start without a file said: $(cat "$TMPD/start.out")"
	check_eq "$("$KRTCTL" -j peer show | jq length)" 0 "peers without a file"
	KRTCTL=$KRTCTL_WRAP "$BOOT" stop || fail "second krt-boot stop"
	KRTCTL=$KRTCTL_WRAP "$BOOT" stop || fail "krt-boot stop with krt not loaded"
	rxe_del krt_boot0
}

ktap_plan 2
run_case modprobe_from_dkms_tree dkms_modprobe
run_case boot_start_stop boot_start_stop
ktap_finish
