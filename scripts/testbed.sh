#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The test bed: a generator namespace and a server namespace joined by a veth pair,
# addressed from 198.18.0.0/15 (RFC 2544's benchmarking range), with static neighbour
# entries. Names carry a unique prefix so that parallel runs never collide.
#
#   scripts/testbed.sh up [--threaded [--napi-cpu same|next]] [--no-gro] [--queues N] [--ipv6] [--senders N]
#                                                                 prints the bed's variables
#   scripts/testbed.sh down NAME                                  removes it (idempotent)
#   scripts/testbed.sh exec NAME gen|srv CMD...                   runs CMD in a namespace
#   scripts/testbed.sh status [NAME]                              lists beds, or one bed
#
# Sourced, it defines tb_up / tb_down / tb_gen / tb_srv for tests and benchmarks:
#   source scripts/testbed.sh; tb_up; trap tb_down EXIT; tb_gen xdpreplay replay -i "$TB_GEN_IF" ...
#
# Each bed: namespaces NAME-gen and NAME-srv; interfaces gen0 (198.18.0.1) and
# srv0 (198.18.0.2) in them; the server routes 198.18.64.0/18 (source pools for
# xdpreplay gen --src) through the generator; /run/xdpreplay-testbed/NAME.env holds the variables.
# With --senders N (N > 1): N generator namespaces NAME-gen, NAME-gen1, ... each with its gen0
# (198.18.0.1, then 198.18.0.11, .12, ...), and srv0 is a bridge in the server's namespace whose
# ports srvp0... are their peers (many senders, one server: xdpreplay --shard); tb_geni I CMD
# runs CMD in sender I's namespace. With --ipv6 (one sender): IPv6 on both ends too, gen0
# 2001:2::1 and srv0 2001:2::2 (RFC 5180's benchmarking prefix 2001:2::/48, IPv6's 198.18/15),
# and the server routes 2001:2:0:1::/64 (TB_POOL6) through the generator.

TB_STATE_DIR=/run/xdpreplay-testbed
TB_GEN_IP=198.18.0.1
TB_SRV_IP=198.18.0.2
TB_GEN_IF=gen0
TB_SRV_IF=srv0
# fixed MACs (c6:12 = 198.18), so that the sample captures in pcaps/ reach the server's stack
TB_POOL=198.18.64.0/18
TB_GEN_MAC=02:00:c6:12:00:01
TB_SRV_MAC=02:00:c6:12:00:02
TB_GEN_IP6=2001:2::1
TB_SRV_IP6=2001:2::2
TB_POOL6=2001:2:0:1::/64

# tb_up [--threaded [--napi-cpu same|next]] [--no-gro] [--queues N] [--ipv6] [--senders N]: sets TB_NAME, TB_NS_GEN,
# TB_NS_SRV, TB_GEN_MAC, TB_SRV_MAC, TB_SENDERS
tb_up() {
	local threaded=0 gro=1 queues=1 ipv6=0 napi_cpu=same
	TB_SENDERS=1
	while [ $# -gt 0 ]; do
		case "$1" in
		--threaded) threaded=1 ;;
		--napi-cpu) napi_cpu="$2"; shift ;;
		--ipv6) ipv6=1 ;;
		--no-gro) gro=0 ;;
		--queues) queues="$2"; shift ;;
		--senders) TB_SENDERS="$2"; shift ;;
		*) echo "testbed: unknown option $1" >&2; return 2 ;;
		esac
		shift
	done
	[ "$(id -u)" -eq 0 ] || { echo "testbed: must run as root" >&2; return 1; }
	case "$napi_cpu" in same | next) ;; *) echo "testbed: --napi-cpu takes same or next, not $napi_cpu" >&2; return 2 ;; esac
	mkdir -p "$TB_STATE_DIR"
	TB_NAME="xr$$$(printf '%04x' $((RANDOM)))"
	TB_NS_GEN="$TB_NAME-gen"
	TB_NS_SRV="$TB_NAME-srv"
	# record first, so that a failure half-way is still torn down by tb_down
	tb_save
	if [ "$TB_SENDERS" -gt 1 ]; then
		tb_create_senders "$gro" || { echo "testbed: set-up of $TB_NAME failed" >&2; tb_down; return 1; }
		return 0
	fi
	if ! tb_create "$threaded" "$gro" "$queues" "$ipv6" "$napi_cpu"; then
		echo "testbed: set-up of $TB_NAME failed" >&2
		tb_down
		return 1
	fi
	tb_save
}

tb_create() {
	local threaded=$1 gro=$2 queues=$3 ipv6=$4 napi_cpu=$5 ns
	ip netns add "$TB_NS_GEN" || return 1
	ip netns add "$TB_NS_SRV" || return 1
	# no IPv6 chatter (router solicitations, MLD): counters then see only the test's frames
	if [ "$ipv6" = 0 ]; then
		for ns in "$TB_NS_GEN" "$TB_NS_SRV"; do
			ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 \
				net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
		done
	fi
	ip -n "$TB_NS_GEN" link add "$TB_GEN_IF" address "$TB_GEN_MAC" numtxqueues "$queues" \
		numrxqueues "$queues" type veth peer name "$TB_SRV_IF" netns "$TB_NS_SRV" \
		address "$TB_SRV_MAC" numtxqueues "$queues" numrxqueues "$queues" || return 1
	ip -n "$TB_NS_GEN" addr add "$TB_GEN_IP/24" dev "$TB_GEN_IF" || return 1
	ip -n "$TB_NS_SRV" addr add "$TB_SRV_IP/24" dev "$TB_SRV_IF" || return 1
	ip -n "$TB_NS_GEN" link set lo up && ip -n "$TB_NS_SRV" link set lo up || return 1
	ip -n "$TB_NS_GEN" link set "$TB_GEN_IF" up && ip -n "$TB_NS_SRV" link set "$TB_SRV_IF" up || return 1
	ip -n "$TB_NS_GEN" neigh replace "$TB_SRV_IP" lladdr "$TB_SRV_MAC" dev "$TB_GEN_IF" nud permanent || return 1
	ip -n "$TB_NS_SRV" neigh replace "$TB_GEN_IP" lladdr "$TB_GEN_MAC" dev "$TB_SRV_IF" nud permanent || return 1
	# the generator's source pools (xdpreplay gen --src 198.18.64.0/23 ...) are reached through it
	ip -n "$TB_NS_SRV" route add "$TB_POOL" via "$TB_GEN_IP" || return 1
	if [ "$ipv6" = 1 ]; then
		# nodad: usable at once; static neighbours as for IPv4, so no solicitation is needed
		ip -n "$TB_NS_GEN" addr add "$TB_GEN_IP6/64" dev "$TB_GEN_IF" nodad || return 1
		ip -n "$TB_NS_SRV" addr add "$TB_SRV_IP6/64" dev "$TB_SRV_IF" nodad || return 1
		ip -n "$TB_NS_GEN" neigh replace "$TB_SRV_IP6" lladdr "$TB_SRV_MAC" dev "$TB_GEN_IF" nud permanent || return 1
		ip -n "$TB_NS_SRV" neigh replace "$TB_GEN_IP6" lladdr "$TB_GEN_MAC" dev "$TB_SRV_IF" nud permanent || return 1
		ip -n "$TB_NS_SRV" route add "$TB_POOL6" via "$TB_GEN_IP6" || return 1
	fi
	# GRO gives the veth receiver NAPI, without which live frames vanish (PLATFORM.md)
	if [ "$gro" = 1 ]; then
		ip netns exec "$TB_NS_SRV" ethtool -K "$TB_SRV_IF" gro on >/dev/null || return 1
		ip netns exec "$TB_NS_GEN" ethtool -K "$TB_GEN_IF" gro on >/dev/null || return 1
	fi
	# threaded NAPI: each side's receive work on a kernel thread of its own (another core), at
	# SCHED_FIFO 50 as a tuned server has it: as SCHED_OTHER it got ~9% of a core beside two
	# busy sender threads on this 2-core host, and two sender threads then delivered 0.3-1 M
	# against 3.7-7 M for one (with FIFO: ~7 M either way).
	# Each thread is pinned: left to the scheduler, a thread stayed on whichever CPU it first
	# woke on, and runs of the same tools came out 10.4 or 2.8 Mpps by that placement alone
	# (tb_pin_napi)
	if [ "$threaded" = 1 ]; then
		local before after p
		before=$(pgrep '^napi/' | sort)
		ip netns exec "$TB_NS_SRV" sh -c "echo 1 > /sys/class/net/$TB_SRV_IF/threaded" || return 1
		ip netns exec "$TB_NS_GEN" sh -c "echo 1 > /sys/class/net/$TB_GEN_IF/threaded" || return 1
		after=$(pgrep '^napi/' | sort)
		# the threads this bed's interfaces just got
		TB_NAPI_PIDS=$(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')
		for p in $TB_NAPI_PIDS; do
			chrt -f -p 50 "$p" || return 1
		done
		tb_pin_napi "$napi_cpu" || return 1
	fi
	mountpoint -q /sys/fs/bpf 2>/dev/null || mount -t bpf bpf /sys/fs/bpf 2>/dev/null || true
	return 0
}

# tb_pin_napi same|next: a veth hands what CPU c sends to its peer's receive queue c % queues, and
# its NAPI threads are made queue by queue, so in the order of their NAPI ids. "same" puts queue q's
# thread on CPU q, the CPU whose sender feeds it (as a NIC's IRQ affinity keeps a queue on one core);
# "next" on CPU q + 1, the receiver on a core of its own, where every frame and every page the
# receiver gives back cross between the cores
tb_pin_napi() {
	local where=$1 ncpu p dev q shift_by=0
	ncpu=$(nproc)
	[ "$where" = next ] && shift_by=1
	for dev in "$TB_SRV_IF" "$TB_GEN_IF"; do
		q=0
		for p in $(tb_napi_threads "$dev"); do
			taskset -pc $(((q + shift_by) % ncpu)) "$p" >/dev/null || return 1
			q=$((q + 1))
		done
	done
}

# tb_napi_threads DEV: the PIDs of this bed's NAPI threads of DEV, in queue order
tb_napi_threads() {
	local p comm
	for p in $TB_NAPI_PIDS; do
		comm=$(cat "/proc/$p/comm" 2>/dev/null) || continue
		case "$comm" in "napi/$1-"*) echo "${comm##*-} $p" ;; esac
	done | sort -n | cut -d' ' -f2
}

# sender I's namespace, address and MAC (sender 0 is the one-sender bed's generator)
tb_gen_ns() { if [ "$1" = 0 ]; then echo "$TB_NAME-gen"; else echo "$TB_NAME-gen$1"; fi; }
tb_gen_ip() { if [ "$1" = 0 ]; then echo "$TB_GEN_IP"; else echo "198.18.0.$((10 + $1))"; fi; }
tb_gen_mac() { if [ "$1" = 0 ]; then echo "$TB_GEN_MAC"; else printf '02:00:c6:12:00:%02x' $((16 + $1)); fi; }
tb_geni() { local ns; ns=$(tb_gen_ns "$1"); shift; ip netns exec "$ns" "$@"; }

# N senders on a bridge: the server's srv0 is the bridge (its XDP runs in generic mode)
tb_create_senders() {
	local gro=$1 i ns
	ip netns add "$TB_NS_SRV" || return 1
	ip netns exec "$TB_NS_SRV" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 \
		net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
	ip -n "$TB_NS_SRV" link add "$TB_SRV_IF" address "$TB_SRV_MAC" type bridge || return 1
	# no STP, no learning delay: frames pass from the first one
	ip -n "$TB_NS_SRV" link set "$TB_SRV_IF" type bridge stp_state 0 forward_delay 0 || return 1
	ip -n "$TB_NS_SRV" addr add "$TB_SRV_IP/24" dev "$TB_SRV_IF" || return 1
	ip -n "$TB_NS_SRV" link set lo up && ip -n "$TB_NS_SRV" link set "$TB_SRV_IF" up || return 1
	for i in $(seq 0 $((TB_SENDERS - 1))); do
		ns=$(tb_gen_ns "$i")
		ip netns add "$ns" || return 1
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 \
			net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
		ip -n "$ns" link add "$TB_GEN_IF" address "$(tb_gen_mac "$i")" type veth peer \
			name "srvp$i" netns "$TB_NS_SRV" || return 1
		ip -n "$ns" addr add "$(tb_gen_ip "$i")/24" dev "$TB_GEN_IF" || return 1
		ip -n "$ns" link set lo up && ip -n "$ns" link set "$TB_GEN_IF" up || return 1
		ip -n "$TB_NS_SRV" link set "srvp$i" master "$TB_SRV_IF" up || return 1
		ip -n "$ns" neigh replace "$TB_SRV_IP" lladdr "$TB_SRV_MAC" dev "$TB_GEN_IF" nud permanent || return 1
		ip -n "$TB_NS_SRV" neigh replace "$(tb_gen_ip "$i")" lladdr "$(tb_gen_mac "$i")" \
			dev "$TB_SRV_IF" nud permanent || return 1
		if [ "$gro" = 1 ]; then
			ip netns exec "$TB_NS_SRV" ethtool -K "srvp$i" gro on >/dev/null || return 1
			ip netns exec "$ns" ethtool -K "$TB_GEN_IF" gro on >/dev/null || return 1
		fi
	done
	ip -n "$TB_NS_SRV" route add "$TB_POOL" via "$TB_GEN_IP" || return 1
	return 0
}

tb_save() {
	cat > "$TB_STATE_DIR/$TB_NAME.env" <<-EOF
	TB_NAME=$TB_NAME
	TB_NS_GEN=$TB_NS_GEN
	TB_NS_SRV=$TB_NS_SRV
	TB_GEN_IF=$TB_GEN_IF
	TB_SRV_IF=$TB_SRV_IF
	TB_GEN_IP=$TB_GEN_IP
	TB_SRV_IP=$TB_SRV_IP
	TB_POOL=$TB_POOL
	TB_GEN_IP6=$TB_GEN_IP6
	TB_SRV_IP6=$TB_SRV_IP6
	TB_POOL6=$TB_POOL6
	TB_GEN_MAC=$TB_GEN_MAC
	TB_SRV_MAC=$TB_SRV_MAC
	TB_SENDERS=${TB_SENDERS:-1}
	EOF
}

# tb_down [NAME]: kills what runs in the namespaces and removes them; safe to call twice
tb_down() {
	local name=${1:-${TB_NAME:-}} ns pids
	[ -n "$name" ] || return 0
	# the generators (NAME-gen, NAME-gen1, ...) and the server
	for ns in $(ip netns list 2>/dev/null | awk -v p="$name-" 'index($1, p) == 1 { print $1 }'); do
		case "$ns" in "$name-gen" | "$name-gen"[0-9]* | "$name-srv") ;; *) continue ;; esac
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill $pids 2>/dev/null && sleep 0.2
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill -9 $pids 2>/dev/null
		# deleting a namespace removes its veth end, and with it the peer and any XDP
		ip netns del "$ns" 2>/dev/null
	done
	rm -f "$TB_STATE_DIR/$name.env"
	return 0
}

tb_gen() { ip netns exec "$TB_NS_GEN" "$@"; }
tb_srv() { ip netns exec "$TB_NS_SRV" "$@"; }

tb_load() {
	[ -f "$TB_STATE_DIR/$1.env" ] || { echo "testbed: no bed named $1" >&2; return 1; }
	# shellcheck disable=SC1090
	. "$TB_STATE_DIR/$1.env"
}

tb_main() {
	local cmd=${1:-}
	shift || true
	case "$cmd" in
	up)
		tb_up "$@" || return 1
		cat "$TB_STATE_DIR/$TB_NAME.env"
		;;
	down)
		[ -n "${1:-}" ] || { echo "usage: testbed.sh down NAME" >&2; return 2; }
		tb_down "$1"
		;;
	exec)
		[ $# -ge 3 ] || { echo "usage: testbed.sh exec NAME gen|srv CMD..." >&2; return 2; }
		tb_load "$1" || return 1
		case "$2" in
		gen) shift 2; tb_gen "$@" ;;
		srv) shift 2; tb_srv "$@" ;;
		*) echo "testbed: exec takes gen or srv" >&2; return 2 ;;
		esac
		;;
	status)
		if [ -n "${1:-}" ]; then
			tb_load "$1" || return 1
			cat "$TB_STATE_DIR/$1.env"
			tb_gen ip -br addr show "$TB_GEN_IF"
			tb_srv ip -br addr show "$TB_SRV_IF"
		else
			ls "$TB_STATE_DIR" 2>/dev/null | sed -n 's/\.env$//p'
		fi
		;;
	*)
		sed -n '3,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
		[ "$cmd" = "-h" ] || [ "$cmd" = "--help" ]
		;;
	esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	tb_main "$@"
fi

# tb_wait_listen NS tcp|udp ADDR:PORT PID: until a socket listens on ADDR:PORT in namespace NS
# (5 s at most); 1 if it never does or PID (the server) exits first
tb_wait_listen() {
	for _ in $(seq 100); do
		ip netns exec "$1" ss -"${2:0:1}"ln 2>/dev/null | grep -qF "$3 " && return 0
		kill -0 "$4" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
