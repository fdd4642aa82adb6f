# SPDX-License-Identifier: GPL-2.0
# The Debian package: built from the tracked files (dpkg-buildpackage checks debian/control's
# Build-Depends against what scripts/deps.sh installed), lintian clean, installed, and run from the
# installed paths: probe, a replay the server counts, its man page; removed again.

test_debian_package() {
	command -v dpkg-buildpackage >/dev/null && command -v lintian >/dev/null ||
		skip "dpkg-buildpackage or lintian not installed"
	command -v git >/dev/null && git -C "$TOP" rev-parse >/dev/null 2>&1 || skip "not a git tree"
	mkdir -p "$WORK/pkg/src"
	# the tracked files as they are now (uncommitted edits too), not the build folder's output
	(cd "$TOP" && git ls-files -z | tar --null -T - -cf -) | tar -C "$WORK/pkg/src" -xf - ||
		fail "cannot copy the sources"
	# a job per CPU: the test runs beside the others at nice 19 (run.sh's BACKGROUND), in what they leave idle
	(cd "$WORK/pkg/src" && dpkg-buildpackage -us -uc -b -j"$(nproc)") >"$WORK/build.log" 2>&1 ||
		fail "dpkg-buildpackage exited $?: $(tail -n 15 "$WORK/build.log")"
	local deb changes
	deb=$(ls "$WORK"/pkg/xdpreplay_*.deb)
	changes=$(ls "$WORK"/pkg/xdpreplay_*.changes)
	lintian --fail-on error,warning "$changes" >"$WORK/lintian.log" 2>&1 ||
		fail "lintian: $(grep -v 'root privileges' "$WORK/lintian.log" | head -n 10)"
	dpkg-deb -c "$deb" >"$WORK/contents"
	for f in ./usr/sbin/xdpreplay ./usr/share/man/man8/xdpreplay.8.gz ./usr/share/man/man8/xdpreplay-replay.8.gz \
		./usr/share/bash-completion/completions/xdpreplay ./usr/share/xdpreplay/grafana-dashboard.json; do
		grep -q " $f\$" "$WORK/contents" || fail "the package lacks $f"
	done
	if dpkg-query -W -f='${Status}' xdpreplay 2>/dev/null | grep -q "ok installed" || [ -e /usr/sbin/xdpreplay ]; then
		skip "xdpreplay is installed on this machine already: the package was built, not installed"
	fi
	bed
	trap 'tb_down; dpkg -r xdpreplay >/dev/null 2>&1' EXIT
	dpkg -i "$deb" >"$WORK/dpkg.log" 2>&1 || fail "dpkg -i: $(tail -n 5 "$WORK/dpkg.log")"
	(cd / && /usr/sbin/xdpreplay probe >"$WORK/probe.out" 2>&1) || fail "installed probe exited $?: $(cat "$WORK/probe.out")"
	count_start --udp --dport 9 --duration 30s --idle 1s --json "$WORK/c.json"
	(cd / && ip netns exec "$TB_NS_GEN" /usr/sbin/xdpreplay replay -i "$TB_GEN_IF" --pps 10k --count 1000 -q \
		--json "$WORK/r.json" "$TOP/pcaps/udp-64.pcap") || fail "installed replay exited $?"
	count_wait
	expect_eq "$(jget "$WORK/r.json" sent)" 1000 "frames the installed replay sent"
	expect_eq "$(jget "$WORK/c.json" matched)" 1000 "frames the server counted"
	MANWIDTH=200 man xdpreplay-replay 2>/dev/null | col -b | grep -q -- "--pps" || fail "man xdpreplay-replay"
	dpkg -r xdpreplay >"$WORK/dpkg.log" 2>&1 || fail "dpkg -r: $(tail -n 5 "$WORK/dpkg.log")"
	[ ! -e /usr/sbin/xdpreplay ] || fail "/usr/sbin/xdpreplay left after dpkg -r"
}
