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
	# the static rewrites' values
	run_bad 2 "--map-ip: '10.0.0.0/8' is not FROM=TO" "$XR" replay -i lo --map-ip 10.0.0.0/8 x.pcap
	run_bad 2 "--map-ip: '10.0.0.0/33=1.2.3.4' is not FROM=TO" "$XR" replay -i lo --map-ip 10.0.0.0/33=1.2.3.4 x.pcap
	run_bad 2 "--map-port: '80=70000' is not FROM=TO" "$XR" replay -i lo --map-port 80=70000 x.pcap
	run_bad 2 "--ttl: '0' is not N \(1-255\), \+N or -N" "$XR" replay -i lo --ttl 0 x.pcap
	run_bad 2 "--ttl: '\+300' is not N" "$XR" replay -i lo --ttl +300 x.pcap
	run_bad 2 "--vlan-push: '4096' is not VID\[:PRI\]" "$XR" replay -i lo --vlan-push 4096 x.pcap
	run_bad 2 "--vlan-push: '5:8' is not VID\[:PRI\]" "$XR" replay -i lo --vlan-push 5:8 x.pcap
	run_bad 2 "--dst-mac: 'router' is not a MAC address or auto" "$XR" replay -i lo --dst-mac router x.pcap
	run_bad 2 "--misfit: 'drop' is not send or skip" "$XR" replay -i lo --misfit drop x.pcap
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

# The man pages are made from --help (scripts/mkman.py): one per command, subcommand and mode, and every
# option a --help lists is in its page as man renders it; the README's and docs/'s command lines use only
# options their command's --help lists.
test_man_pages_cover_help() {
	command -v man >/dev/null || skip "man (man-db) not installed"
	python3 "$TOP/scripts/mkman.py" "$XR" "$WORK/man" || fail "mkman.py exited $?"
	local pages=0 cmd page sub
	for cmd in $("$XR" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z]*\) .*/\1/p'); do
		# subcommands (lorawan send), and modes (replay --sessions)
		for sub in "" $("$XR" "$cmd" --help | grep -oE "'xdpreplay $cmd (--)?[a-z]+ --help'" | awk '{print $3}'); do
			page="$WORK/man/xdpreplay-$cmd${sub:+-${sub#--}}.8"
			[ -s "$page" ] || fail "no man page for $cmd $sub"
			"$XR" "$cmd" $sub --help >"$WORK/help" 2>&1 || fail "$cmd $sub --help exited $?"
			MANWIDTH=250 man -l "$page" 2>/dev/null | col -b >"$WORK/page"
			grep -q "^SYNOPSIS" "$WORK/page" || fail "$page does not render: $(head -c 300 "$WORK/page")"
			for o in $(grep -oE -- '(^|[ ,[(|])--?[A-Za-z][A-Za-z0-9-]*' "$WORK/help" | sed 's/^[ ,[(|]//' | sort -u); do
				grep -qe "$o" "$WORK/page" || fail "$cmd $sub: '$o' in --help but not in its man page"
			done
			pages=$((pages + 1))
		done
	done
	[ "$pages" -ge 8 ] || fail "only $pages man pages"
	MANWIDTH=250 man -l "$WORK/man/xdpreplay.8" | col -b | grep -q "xdpreplay-search(8)" ||
		fail "xdpreplay(8) does not name the commands' pages"
	python3 "$TOP/tests/readme_options.py" "$XR" "$TOP/README.md" "$TOP"/docs/*.md ||
		fail "the README or a guide uses options its commands' --help does not list"
}

# The figures' schema is documented as the binary holds it: docs/results.md's table between its
# markers is `report --figures`, and every label the report's tables show comes from it
test_figures_documented() {
	"$XR" report --figures >"$WORK/figures.md" || fail "report --figures exited $?"
	sed -n '/<!-- figures: begin -->/,/<!-- figures: end -->/p' "$TOP/docs/results.md" | sed '1d;$d' \
		>"$WORK/doc.md"
	diff -u "$WORK/doc.md" "$WORK/figures.md" >"$WORK/diff" ||
		fail "docs/results.md's figures differ from report --figures: $(head -n 20 "$WORK/diff")"
	[ "$(grep -c '^| `' "$WORK/figures.md")" -ge 50 ] || fail "fewer than 50 figures: $(wc -l <"$WORK/figures.md")"
}
