#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Links and addresses under load, in one guest: rxe on an active-backup
# bond of two dummy interfaces, the node client and server of itself.
# A bond failover with fail_over_mac=active changes the bond's MAC, and
# rdma_cm reports RDMA_CM_EVENT_ADDR_CHANGE to every id bound to it (as a
# NIC bond's failover does); the listener's address removed and added
# back.  Each case runs verified load and asserts: every request
# completed exactly once without error, the pool back to N/N by itself.
. "$(dirname "$0")/lib.sh"

A=169.254.230.1	# the bond's address, the listener's and the peer's
N=4		# pool size
BOND=krtbond0

dp() { awk -v f="$1:" '$1 == f { print $2 }' "$KRT_DBG/dp"; }
bond_active() { cat /sys/class/net/$BOND/bonding/active_slave; }
bond_mac() { cat /sys/class/net/$BOND/address; }

setup() {
	local s
	load_krt test_service=1 || return 1
	modprobe -q bonding || { fail "modprobe bonding"; return 1; }
	modprobe -q dummy
	modprobe -q rdma_rxe
	ip link add $BOND type bond mode active-backup miimon 100 fail_over_mac active ||
		{ fail "bond"; return 1; }
	for s in krtbs1 krtbs2; do
		ip link add $s type dummy || { fail "dummy $s"; return 1; }
		ip link set $s master $BOND || { fail "enslave $s"; return 1; }
	done
	ip link set $BOND up
	ip addr add $A/24 dev $BOND
	rdma link add krt_lk0 type rxe netdev $BOND || { fail "rxe on the bond"; return 1; }
	echo "krt_lk0 $BOND" >> "$TMPD/rxe"
	"$KRTCTL" listen add $A || fail "listen add"
	"$KRTCTL" peer add lk addr $A conns $N depth 32 reconnect_ms 50 reconnect_max_ms 500 ||
		fail "peer add"
	wait_peer lk active $N || fail "lk not $N/$N: $("$KRTCTL" peer show)"
}

# Bond failovers while verified read and write load runs (3 at least, 6
# at most): each changes
# the bond's MAC, rdma_cm reports ADDR_CHANGE, krt fails the connections
# bound there ("local address changed"), re-sends their requests and
# reconnects
reconnects() { "$KRTCTL" -j conn show peer lk | jq '[.[].reconnects] | add'; }

bond_failover() {
	local p1 p2 i mac0 other r0 ri why
	load fw lk op write size 16k count 20000 threads 3 depth 8 timeout 30000; p1=$LOAD_PID
	load fr lk op read size 128k count 2000 threads 2 depth 4 timeout 30000; p2=$LOAD_PID
	sleep 0.5
	r0=$(reconnects)
	for ((i = 0; i < 6; i++)); do
		kill -0 "$p1" 2> /dev/null || break
		ri=$(reconnects)
		mac0=$(bond_mac)
		other=krtbs1
		[ "$(bond_active)" = krtbs1 ] && other=krtbs2
		echo $other > /sys/class/net/$BOND/bonding/active_slave ||
			{ fail "failover to $other"; break; }
		busywait 5000 bash -c "[ \"\$(cat /sys/class/net/$BOND/address)\" != $mac0 ]" ||
			fail "failover $i: the bond's MAC stayed $mac0"
		diag "failover $i: active $(bond_active), MAC $mac0 -> $(bond_mac)"
		# each failover fails connections (ADDR_CHANGE), then they return
		busywait 10000 bash -c "[ \$($KRTCTL -j conn show peer lk | jq '[.[].reconnects] | add') -gt $ri ]" ||
			fail "failover $i: no connection reconnected"
		back_up lk $N "failover $i"
		why=$("$KRTCTL" -j conn show peer lk | jq -r '[.[].reason] | unique | join(",")')
		diag "failover $i: reasons: $why"
	done
	[ $i -ge 3 ] || fail "only $i failovers while the write load ran"
	settle fw "$p1" 20000 0
	settle fr "$p2" 2000 0
	diag "reconnects over the $i failovers: $(($(reconnects) - r0))"
	"$KRTCTL" -j conn show peer lk | jq -e '[.[] | select(.reason == "local address changed")] | length > 0' > /dev/null ||
		fail "no connection failed for the address change: $("$KRTCTL" -j conn show peer lk | jq -c '[.[].reason]')"
	check_eq "$(dp malformed)" 0 "malformed messages"
}

# The listener's address removed under load and added back 3 s later:
# the connections fail (the address is gone), reconnect attempts fail
# until it is back, then the pool comes back through the same listener,
# with no operator command, and every request completed once
listener_addr() {
	local p1 t
	load la lk op write size 4k count 8000 threads 2 depth 8 timeout 60000; p1=$LOAD_PID
	sleep 0.5
	ip addr del $A/24 dev $BOND || { fail "ip addr del"; return 1; }
	kill -0 "$p1" 2> /dev/null || fail "the load ended before the address went"
	t=$SECONDS
	busywait $((30000 * KRT_TS)) bash -c "[ \"\$($KRTCTL -j peer show lk | jq -r '.[0].conns_up')\" = 0 ]" ||
		fail "connections still up without the address: $("$KRTCTL" peer show lk)"
	diag "no connection up $((SECONDS - t)) s after the address went: $("$KRTCTL" -j peer show lk | jq -c '.[0] | {state, last_error}')"
	check_eq "$("$KRTCTL" -j listen show | jq -r --arg a $A '[.[] | select(.addr == $a)] | length')" 1 \
		"the listener stays configured"
	sleep 3
	ip addr add $A/24 dev $BOND || { fail "ip addr add"; return 1; }
	back_up lk $N "address back"
	settle la "$p1" 8000 0
	run_ok x ping lk count 20
	check_eq "$(j x ok)/$(j x errors)" 20/0 "pings after the address came back"
}

# The bond (the rxe device's netdev) down for 3 s under load and up
# again: the port goes down, connections fail and reconnect once it is up.
# Only with KRT_LINK_FLAP=1: rxe (6.1) fails the MADs rdma_cm sends while
# the netdev is down and its GSI QP then receives nothing for a minute or
# more, so connection attempts time out long after the link is back
# (measured: the pool back 74 s after the link went down).  The loss
# timeout is raised so that requests wait that long.
netdev_down_up() {
	local p1 t
	"$KRTCTL" peer set lk loss_timeout 600 || fail "peer set loss_timeout"
	load nd lk op write size 4k count 4000 threads 2 depth 8 timeout 600000; p1=$LOAD_PID
	sleep 0.5
	ip link set $BOND down || { fail "link down"; return 1; }
	t=$SECONDS
	sleep 3
	diag "after 3 s down: $("$KRTCTL" -j peer show lk | jq -c '.[0] | {state, conns_up}')"
	ip link set $BOND up || { fail "link up"; return 1; }
	busywait 10000 bash -c "[ \"\$(cat /sys/class/net/$BOND/operstate)\" = up ]" || fail "bond not up"
	back_up lk $N "link up" 300000
	diag "back $((SECONDS - t)) s after the link went down"
	settle nd "$p1" 4000 0
	run_ok x ping lk count 20
	check_eq "$(j x ok)/$(j x errors)" 20/0 "pings after the link came back"
}

teardown() {
	"$KRTCTL" peer del lk || fail "peer del"
	"$KRTCTL" listen del $A || fail "listen del"
	busywait 20000 bash -c "[ \$($KRTCTL -j conn show | jq length) = 0 ]" ||
		fail "connections left: $("$KRTCTL" conn show)"
	check_eq "$(rdma resource show qp 2>/dev/null | grep -c 'comm \[rdma_cm\]')" 0 "rdma_cm QPs left"
	unload_krt
}

# whatever setup left, even half-made
links_cleanup() {
	ip link del $BOND 2> /dev/null
	ip link del krtbs1 2> /dev/null
	ip link del krtbs2 2> /dev/null
}

flap=${KRT_LINK_FLAP:-}
if [ -n "$flap" ]; then ktap_plan 5; else ktap_plan 4; fi
run_case setup setup
run_case bond_failover_addr_change_under_load bond_failover
run_case listener_address_removed_and_back_under_load listener_addr
[ -n "$flap" ] && run_case netdev_down_up_under_load netdev_down_up
run_case teardown_nothing_left teardown
links_cleanup
ktap_finish
