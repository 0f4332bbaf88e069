#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# In-guest runner: run each test program, print KTAP (test programs at the
# top level, their cases indented), fail a program whose run left a kernel
# bug report in dmesg, and write "pass fail skip" case counts to
# $KRT_OUT/counts for scripts/check.
#
# usage: selftests/run_tests.sh TEST...
cd "$(dirname "$0")" || exit 1
timeout_s=$(sed -n 's/^timeout=//p' settings 2>/dev/null)
timeout_s=${KRT_TEST_TIMEOUT:-${timeout_s:-600}}	# slow kernels raise it
bad='BUG:|WARNING:|Oops|general protection fault|refcount_t|list_add corruption|list_del corruption|UBSAN|KASAN|blocked for more than|kmemleak:.*new suspected'
out=${KRT_OUT:-/tmp}
pass=0 fail=0 skip=0 n=0

kml=/sys/kernel/debug/kmemleak
[ -w "$kml" ] && echo clear > "$kml"	# boot-time reports are not ours

# What a test killed at its timeout leaves (its rxe links and dummy
# interfaces, krt loaded) would fail the tests after it: clear it.
scrub() {
	local l
	rdma link show 2> /dev/null | awk '$NF ~ /^krtd/ { sub("/.*", "", $2); print $2 }' |
		while read -r l; do rdma link del "$l"; done
	ip -o link show 2> /dev/null | awk -F': ' '$2 ~ /^krtd/ { sub("@.*", "", $2); print $2 }' |
		while read -r l; do ip link del "$l"; done
	[ -d /sys/module/krt_bench ] && rmmod krt_bench 2> /dev/null
	[ -d /sys/module/krt ] && rmmod krt 2> /dev/null
	return 0
}

echo "TAP version 13"
echo "1..$#"
for t in "$@"; do
	n=$((n + 1))
	log=$out/$t.log
	before=$(dmesg | wc -l)
	echo "# selftests: krt: $t"
	t0=$SECONDS
	# settings may give a program its own timeout: timeout_NAME=S
	t_s=$(sed -n "s/^timeout_${t%.sh}=//p" settings 2>/dev/null)
	if [ -n "${KRT_TEST_TIMEOUT:-}" ] || [ -z "$t_s" ]; then
		t_s=$timeout_s	# KRT_TEST_TIMEOUT overrides them all
	fi
	timeout "$t_s" bash "./$t" > "$log" 2>&1
	rc=$?
	echo "# $t: $((SECONDS - t0)) s" >> "$log"
	sed 's/^/    /' "$log"
	p=$(grep -cE '^ok [0-9]+ [^#]*$' "$log")
	s=$(grep -cE '^ok [0-9]+ .*# SKIP' "$log")
	f=$(grep -cE '^not ok [0-9]+' "$log")
	if dmesg | tail -n +$((before + 1)) | grep -E "$bad" > "$out/$t.dmesg-bad"; then
		echo "# $t: kernel reported a problem:"
		sed 's/^/# dmesg: /' "$out/$t.dmesg-bad" | head -20
		f=$((f + 1))
		rc=1
	fi
	# debug kernel: leaks attributed to krt fail the test that left them
	if [ -w "$kml" ]; then
		sleep 6		# kmemleak reports objects older than 5 s
		echo scan > "$kml"
		if grep -q krt "$kml"; then
			echo "# $t: kmemleak reports leaks in krt:"
			sed 's/^/# kmemleak: /' "$kml" | head -40
			f=$((f + 1))
			rc=1
		else
			echo "# $t: kmemleak scan: nothing attributed to krt"
		fi
		echo clear > "$kml"
	fi
	if [ $rc -eq 124 ]; then
		echo "# $t: timed out after ${t_s}s"
		f=$((f + 1))
		scrub
	elif [ $rc -ne 0 ] && [ $rc -ne 4 ] && [ "$f" -eq 0 ]; then
		echo "# $t: exited $rc without a failing case"
		f=$((f + 1))
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	if [ $rc -eq 0 ]; then
		echo "ok $n selftests: krt: $t"
	elif [ $rc -eq 4 ]; then
		echo "ok $n selftests: krt: $t # SKIP"
	else
		echo "not ok $n selftests: krt: $t # exit=$rc"
	fi
done
echo "$pass $fail $skip" > "$out/counts"
echo "# guest node${KRT_NODE:-0}: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
