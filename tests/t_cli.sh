# SPDX-License-Identifier: GPL-2.0
# Bad command lines: one line on stderr naming the problem, a usage exit status (2).

test_unknown_option() {
	run_bad 2 "unknown option '--bogus'" "$XR" replay --bogus -i lo x.pcap
	run_bad 2 "option '--pps' needs a value" "$XR" replay -i lo x.pcap --pps
	run_bad 2 "unknown option '-Z'" "$XR" count -Z -i lo
	run_bad 2 "unknown command 'frobnicate'" "$XR" frobnicate
}

test_bad_values() {
	run_bad 2 "--pps: 'banana' is not a number" "$XR" replay -i lo --pps banana x.pcap
	run_bad 2 "--duration: '10parsecs' is not a duration" "$XR" replay -i lo --duration 10parsecs x.pcap
	run_bad 2 "--rate: '-5': the value must be positive" "$XR" replay -i lo --rate -5 x.pcap
	run_bad 2 "--count: '1.5' is not a count" "$XR" replay -i lo --count 1.5 x.pcap
	run_bad 2 "--threads must be between" "$XR" replay -i lo --threads 999 x.pcap
	run_bad 2 "give one of" "$XR" replay -i lo --pps 10 --multiplier 2 x.pcap
	run_bad 2 "'70000' is not a port" "$XR" count -i lo --dport 70000
}

test_missing_interface() {
	run_bad 2 "missing -i IFACE" "$XR" replay x.pcap
	run_bad 3 "interface nosuch0: no such interface" "$XR" replay -i nosuch0 "$TOP/pcaps/udp-64.pcap"
	run_bad 3 "interface nosuch0: no such interface" "$XR" count -i nosuch0
	run_bad 3 "interface nosuch0: no such interface" "$XR" probe -i nosuch0
}

test_not_root() {
	command -v setpriv >/dev/null || skip "setpriv not available"
	run_bad 3 "must run as root" setpriv --reuid=65534 --regid=65534 --clear-groups "$XR" replay -i lo "$TOP/pcaps/udp-64.pcap"
	run_bad 3 "must run as root" setpriv --reuid=65534 --regid=65534 --clear-groups "$XR" count -i lo
}

test_help_has_examples() {
	for c in probe replay count; do
		"$XR" $c --help >"$WORK/help" || fail "$c --help exited non-zero"
		grep -q "^Examples:" "$WORK/help" || fail "$c --help has no examples"
	done
	"$XR" --version | grep -q "^xdpreplay " || fail "--version"
}
