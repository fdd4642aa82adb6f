# SPDX-License-Identifier: GPL-2.0
# make install / uninstall: the binary (its BPF objects inside), a man page per command and the bash
# completion, under DESTDIR; what is installed runs from there, and uninstall leaves nothing.

test_install_runs_from_installed_files() {
	command -v man >/dev/null || skip "man (man-db) not installed"
	local root="$WORK/root" bin
	make -s -C "$TOP" install DESTDIR="$root" PREFIX=/usr >"$WORK/make.out" 2>&1 ||
		fail "make install exited $?: $(tail -n 5 "$WORK/make.out")"
	bin="$root/usr/sbin/xdpreplay"
	[ -x "$bin" ] || fail "no $bin"
	# the installed binary, not the build folder's: nothing read from the source tree
	(cd / && "$bin" probe >"$WORK/probe.out" 2>&1) || fail "installed probe exited $?: $(cat "$WORK/probe.out")"
	bed
	count_start --udp --dport 9 --duration 30s --idle 1s --json "$WORK/c.json"
	(cd / && ip netns exec "$TB_NS_GEN" "$bin" replay -i "$TB_GEN_IF" --pps 10k --count 1000 -q \
		--json "$WORK/r.json" "$TOP/pcaps/udp-64.pcap") || fail "installed replay exited $?"
	count_wait
	expect_eq "$(jget "$WORK/r.json" sent)" 1000 "frames the installed replay sent"
	expect_eq "$(jget "$WORK/c.json" matched)" 1000 "frames the server counted"
	# man finds the pages by name in the installed tree
	MANWIDTH=200 man -M "$root/usr/share/man" xdpreplay-replay 2>/dev/null | col -b >"$WORK/page"
	grep -q -- "--pps" "$WORK/page" || fail "man xdpreplay-replay: $(head -c 200 "$WORK/page")"
	[ "$(ls "$root/usr/share/man/man8" | wc -l)" -ge 9 ] || fail "man pages: $(ls "$root/usr/share/man/man8")"
	# the completion offers the command's options, read from its --help
	(
		. "$root/usr/share/bash-completion/completions/xdpreplay"
		COMP_WORDS=("$bin" replay --pp)
		COMP_CWORD=2
		_xdpreplay
		[ "${COMPREPLY[*]}" = "--pps" ] || { echo "completion of --pp: '${COMPREPLY[*]}'"; exit 1; }
		COMP_WORDS=("$bin" se)
		COMP_CWORD=1
		_xdpreplay
		[ "${COMPREPLY[*]}" = "search selftest" ] || { echo "completion of se: '${COMPREPLY[*]}'"; exit 1; }
	) >"$WORK/comp.out" 2>&1 || fail "$(cat "$WORK/comp.out")"
	make -s -C "$TOP" uninstall DESTDIR="$root" PREFIX=/usr >"$WORK/make.out" 2>&1 || fail "make uninstall exited $?"
	left=$(find "$root" -type f)
	[ -z "$left" ] || fail "left after uninstall: $left"
}
