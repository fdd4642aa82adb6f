# SPDX-License-Identifier: GPL-2.0
# Bad captures: a clear one-line error naming the file, exit status 2, never a crash.
# Readable captures with odd parts: skipped frames are counted and said.

test_hostile_files() {
	bed
	for f in empty badmagic truncated-header truncated-record huge-caplen garbage; do
		tb_gen "$XR" replay -i "$TB_GEN_IF" "$WORK/hostile/$f.pcap" >"$WORK/out" 2>"$WORK/err"
		expect_eq $? 2 "exit status for $f.pcap"
		expect_eq "$(wc -l <"$WORK/err")" 1 "error lines for $f.pcap: $(cat "$WORK/err")"
		grep -q "$f.pcap: " "$WORK/err" || fail "error does not name $f.pcap: $(cat "$WORK/err")"
	done
	for f in truncated.pcap.gz bad-block.pcapng; do
		tb_gen "$XR" replay -i "$TB_GEN_IF" "$WORK/hostile/$f" >"$WORK/out" 2>"$WORK/err"
		expect_eq $? 2 "exit status for $f"
		grep -q "$f: " "$WORK/err" || fail "error does not name $f: $(cat "$WORK/err")"
	done
	tb_gen "$XR" replay -i "$TB_GEN_IF" "$WORK/nonexistent.pcap" 2>"$WORK/err"
	expect_eq $? 2 "exit status for a missing file"
	grep -q "No such file" "$WORK/err" || fail "missing file: $(cat "$WORK/err")"
}

test_non_ethernet_skipped() {
	bed
	tb_gen "$XR" replay -i "$TB_GEN_IF" "$WORK/hostile/non-ethernet.pcap" 2>"$WORK/err"
	expect_eq $? 2 "exit status when no frame is left"
	grep -q "skipped 1 frames of non-Ethernet" "$WORK/err" || fail "warning: $(cat "$WORK/err")"
	count_start --udp --dport 9 --drop --idle 1s --duration 20s --json "$WORK/c.json"
	tb_gen "$XR" replay -i "$TB_GEN_IF" --json "$WORK/r.json" "$WORK/hostile/mixed-linktypes.pcapng" ||
		fail "replay of mixed link types exited $?"
	count_wait
	expect_eq "$(jget "$WORK/r.json" skipped.non_ethernet)" 1 "non-Ethernet frames skipped"
	expect_eq "$(jget "$WORK/r.json" sent)" 2 "Ethernet frames sent"
	expect_eq "$(jget "$WORK/c.json" matched)" 2 "counted"
}

test_truncated_frames() {
	bed
	tb_gen "$XR" replay -i "$TB_GEN_IF" --json "$WORK/r.json" "$WORK/hostile/snapped.pcap" 2>"$WORK/err" ||
		fail "replay exited $?: $(tr '\n' ' ' <"$WORK/err")"
	expect_eq "$(jget "$WORK/r.json" skipped.truncated)" 1 "truncated frames skipped"
	expect_eq "$(jget "$WORK/r.json" sent)" 1 "whole frames sent"
	tb_gen "$XR" replay -i "$TB_GEN_IF" --allow-truncated --json "$WORK/r.json" "$WORK/hostile/snapped.pcap" ||
		fail "replay --allow-truncated exited $?"
	expect_eq "$(jget "$WORK/r.json" sent)" 2 "sent with --allow-truncated"
}

test_formats_agree() {
	bed
	# the same 50 frames as pcap (us), pcap (ns), pcap (swapped), pcapng (ns) and gzip
	for fmt in pcap pcap-ns pcap-swapped pcapng; do
		python3 "$TOP/pcaps/mkpcap.py" udp "$WORK/f.$fmt" --count 50 --size 100 --gap-us 1000 --format $fmt
	done
	gzip -c "$WORK/f.pcapng" >"$WORK/f.pcapng.gz"
	for f in f.pcap f.pcap-ns f.pcap-swapped f.pcapng f.pcapng.gz; do
		count_start --udp --dport 9 --drop --idle 1s --duration 20s --json "$WORK/c.json"
		tb_gen "$XR" replay -i "$TB_GEN_IF" --json "$WORK/r.json" "$WORK/$f" || fail "replay of $f exited $?"
		count_wait
		expect_eq "$(jget "$WORK/c.json" matched)" 50 "frames of $f at the server"
		expect_eq "$(jget "$WORK/c.json" matched_bytes)" 5000 "bytes of $f at the server"
	done
}
