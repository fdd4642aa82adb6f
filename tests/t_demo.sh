# SPDX-License-Identifier: GPL-2.0
# `make demo`'s main job, as a new user runs it: every step runs, on whichever engine this host has.

# The demo's own test bed, search, replays, SYN test and LoRaWAN fleet: each step's exit status 0,
# its last line saying so, no Python traceback; the search found the firewall's limit
test_demo_runs_every_step() {
	bash "$TOP/scripts/demo.sh" >"$WORK/out" 2>&1
	expect_eq $? 0 "the demo's exit status: $(grep -E 'step failed|Traceback' "$WORK/out" | head -n 5)"
	expect_eq "$(tail -n 1 "$WORK/out")" "== demo: every step ran" "the demo's last line"
	grep -q Traceback "$WORK/out" && fail "a traceback: $(grep -A5 Traceback "$WORK/out")"
	grep -qE "^   result: NDR \(loss <= 0\): [0-9]+ frames/s" "$WORK/out" ||
		fail "no NDR: $(grep -E 'result|search' "$WORK/out" | head -n 5)"
}
