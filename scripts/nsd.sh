# SPDX-License-Identifier: GPL-2.0
# nsd for the test bed (sourced by tests/t_dns.sh and scripts/bench-dns.sh): a zone bench.test.
# with names n0..n(N-1), served on one address, response rate limiting off (nsd 4.6 has no
# so-rcvbuf: a busy host can overflow its socket, which count's drop reasons then show).
#   nsd_conf DIR ADDR N    writes DIR/nsd.conf and the zone; start with: nsd -d -c DIR/nsd.conf
#   nsd_names N FILE       n0..n(N-1) as a names file (NAME TYPE per line, dnsperf's format)
nsd_conf() {
	local d=$1 addr=$2 n=$3
	mkdir -p "$d"
	{
		echo "\$ORIGIN bench.test."
		echo "\$TTL 300"
		echo "@ IN SOA ns.bench.test. root.bench.test. 1 3600 600 86400 300"
		echo "@ IN NS ns"
		# an IPv6 address (ADDR with a colon) is the name server's AAAA
		case "$addr" in *:*) echo "ns IN AAAA $addr" ;; *) echo "ns IN A $addr" ;; esac
		awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "n%d IN A 198.18.200.%d\n", i, i % 250 + 1 }'
	} >"$d/bench.test.zone"
	cat >"$d/nsd.conf" <<-CONF
	server:
		ip-address: $addr
		port: 53
		server-count: 1
		username: ""
		chroot: ""
		zonesdir: "$d"
		database: ""
		zonelistfile: "$d/zone.list"
		xfrdfile: "$d/xfrd.state"
		xfrdir: "$d"
		pidfile: "$d/nsd.pid"
		logfile: "$d/nsd.log"
		rrl-ratelimit: 0
		rrl-whitelist-ratelimit: 0
		verbosity: 1
	remote-control:
		control-enable: no
	zone:
		name: bench.test
		zonefile: bench.test.zone
	CONF
}

nsd_names() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "n%d.bench.test A\n", i }' >"$2"
}

# nsd_wait NS ADDR PID: until nsd answers on ADDR:53 in namespace NS (5 s at most); 1 if it never does
nsd_wait() {
	local listen=$2
	[[ $listen == *:* ]] && listen="[$listen]"
	tb_wait_listen "$1" udp "$listen:53" "$3"
}
