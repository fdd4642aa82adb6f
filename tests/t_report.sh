# SPDX-License-Identifier: GPL-2.0
# xdpreplay report: one HTML page from a sender's, count's and a search's JSON, checked in a real
# browser (Debian's chromium, headless).

chromium_run() { # ARGS...: headless, no GPU, as root (no sandbox); its chatter on D-Bus dropped
	timeout 60 chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars \
		--virtual-time-budget=2000 "$@" 2>/dev/null
}

# The page renders; its plots are drawn (the series' colours in a screenshot); nothing is wider than
# a wide window or a phone's; and every figure it shows is the one at its JSON path
test_report_renders_in_a_browser() {
	command -v chromium >/dev/null || fail "chromium is not installed (scripts/deps.sh installs it)"
	bed
	tb_srv sysctl -qw net.ipv4.tcp_syncookies=2 || fail "sysctl"
	tcp_server_start --timeout 10 --backlog 4096
	count_start --tcp --dport 80 --duration 60s --idle 1s -q --json "$WORK/c.json" --fail-if 'matched<3000'
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --pps 1000 --count 3000 -q \
		--fail-if 'p99>10s' --json "$WORK/g.json" || fail "gen syn exited $?"
	count_wait
	tb_gen "$XR" search --witness replies --min 1k --max 4k --trial 300ms --max-trials 2 --json "$WORK/s.json" \
		--html "$WORK/s.html" -- \
		gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --first-seq 10000 \
		>"$WORK/s.out" 2>&1
	expect_range $? 0 1 "search's exit ($(tail -n 3 "$WORK/s.out"))"
	(cd "$WORK" && "$XR" report g.json c.json s.json -o r.html --title 'a <test> & its page') ||
		fail "report exited $?"
	grep -q "<title>a &lt;test&gt; &amp; its page</title>" "$WORK/r.html" || fail "the title, escaped"
	grep -qiE "(src|href)=['\"]?https?:" "$WORK/r.html" && fail "the page fetches something"
	chromium_run --window-size=1200,4000 --screenshot="$WORK/r.png" "file://$WORK/r.html" >/dev/null
	[ -s "$WORK/r.png" ] || fail "no screenshot"
	for w in 1200 420; do
		chromium_run --window-size=$w,900 --dump-dom "file://$WORK/r.html" >"$WORK/r.$w.dom"
		grep -q 'data-overflow="false"' "$WORK/r.$w.dom" ||
			fail "at $w px the page overflows: $(grep -o 'data-overflow="[a-z]*"' "$WORK/r.$w.dom")"
	done
	/usr/bin/python3 - "$WORK" <<-'PY' || fail "the page against its JSON"
	import json, os, sys
	from html.parser import HTMLParser
	from PIL import Image
	work = sys.argv[1]
	docs = {n: json.load(open(os.path.join(work, n))) for n in ("g.json", "c.json", "s.json")}
	def at(d, path):
	    # a key may hold dots itself (rtt_us's "p99.9"): the longest that exists first
	    parts = path.split(".")
	    while parts:
	        if isinstance(d, list):
	            d, parts = d[int(parts[0])], parts[1:]
	            continue
	        n = next(n for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in d)
	        d, parts = d[".".join(parts[:n])], parts[n:]
	    return d
	class Cells(HTMLParser):
	    def __init__(self):
	        super().__init__(); self.doc = None; self.key = None; self.cells = []; self.text = ""
	    def handle_starttag(self, tag, attrs):
	        a = dict(attrs)
	        if tag == "section": self.doc = a["data-doc"]
	        if tag == "td" and "data-k" in a: self.key, self.text = a["data-k"], ""
	    def handle_data(self, data):
	        if self.key is not None: self.text += data
	    def handle_endtag(self, tag):
	        if tag == "td" and self.key is not None:
	            self.cells.append((self.doc, self.key, self.text)); self.key = None
	p = Cells(); p.feed(open(os.path.join(work, "r.1200.dom")).read())
	# search --html: the same page of its own JSON
	docs["search"] = docs["s.json"]
	q = Cells(); q.feed(open(os.path.join(work, "s.html")).read())
	assert q.cells and all(d == "search" for d, _, _ in q.cells), q.cells[:3]
	seen = set()
	for doc, key, text in p.cells + q.cells:
	    if doc is None:  # the verdict's table: its paths are in the sender's and count's
	        continue
	    v = at(docs[doc], key)
	    if isinstance(v, bool): ok = text == ("yes" if v else "no")
	    elif isinstance(v, int): ok = text == str(v)
	    elif isinstance(v, float): ok = abs(float(text) - v) <= 1e-5 * max(1, abs(v))
	    else: ok = text == str(v)
	    assert ok, (doc, key, text, v)
	    seen.add(doc)
	assert seen == set(docs) and len(p.cells) >= 100, (seen, len(p.cells))
	for must in ('id="verdict"', "PASSED", "Every trial", "percentile spectrum"):
	    assert must in open(os.path.join(work, "r.1200.dom")).read(), must
	# the plots are drawn: their series' colours cover pixels of the screenshot
	img = Image.open(os.path.join(work, "r.png")).convert("RGB")
	hist = {}
	for px in img.getdata():
	    hist[px] = hist.get(px, 0) + 1
	blue, orange = hist.get((0, 114, 178), 0), hist.get((213, 94, 0), 0)
	assert blue > 500 and orange > 20, (blue, orange)
	PY
	# what is not a result is refused in one line
	echo '{"a": 1}' >"$WORK/x.json"
	run_bad 2 "x.json is not the JSON of a sender, count or search" "$XR" report "$WORK/x.json"
	echo 'garbage{' >"$WORK/y.json"
	run_bad 2 "y.json: not a result's JSON" "$XR" report "$WORK/y.json"
	run_bad 2 "give one or more RESULT.json" "$XR" report -o "$WORK/z.html"
}

# One sentence says what happened, the same in the terminal, the JSON's summary and the report: a
# sender's, its server's count and a search's, each held against the figures of its own JSON
test_headline_the_same_everywhere() {
	bed
	tb_srv sysctl -qw net.ipv4.tcp_syncookies=2 || fail "sysctl"
	tcp_server_start --timeout 10 --backlog 4096
	rm -f "$WORK/ready.$$"
	ip netns exec "$TB_NS_SRV" "$XR" count -i "$TB_SRV_IF" --tcp --dport 80 --duration 60s --idle 1s \
		--ready-file "$WORK/ready.$$" --json "$WORK/c.json" 2>"$WORK/c.err" &
	COUNT_PID=$!
	wait_ready "$WORK/ready.$$" "$COUNT_PID" "the counter" 100
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --pps 1000 --count 2000 \
		--fail-if 'p99>10s' --json "$WORK/g.json" 2>"$WORK/g.err" || fail "gen syn exited $?"
	count_wait
	tb_gen "$XR" search --witness replies --min 1k --max 4k --trial 300ms --max-trials 2 --json "$WORK/s.json" \
		-- gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --first-seq 10000 \
		2>"$WORK/s.err" >/dev/null
	expect_range $? 0 1 "search's exit ($(tail -n 3 "$WORK/s.err"))"
	(cd "$WORK" && "$XR" report g.json c.json s.json -o r.html) || fail "report exited $?"
	/usr/bin/python3 - "$WORK" <<-'PY' || fail "the headlines"
	import json, os, re, sys
	from html.parser import HTMLParser
	work = sys.argv[1]
	class Headlines(HTMLParser):
	    def __init__(self):
	        super().__init__(); self.doc = None; self.inside = False; self.found = {}
	    def handle_starttag(self, tag, attrs):
	        a = dict(attrs)
	        if tag == "section": self.doc = a["data-doc"]
	        self.inside = tag == "p" and a.get("class") == "headline"
	        if self.inside: self.found[self.doc] = ""
	    def handle_data(self, data):
	        if self.inside: self.found[self.doc] += data
	    def handle_endtag(self, tag):
	        self.inside = False
	page = Headlines(); page.feed(open(os.path.join(work, "r.html")).read())
	def count(n):  # as the headline writes a count below 100,000
	    return "{:,}".format(n)
	for doc, err, prefix in (("g.json", "g.err", "gen syn: "), ("c.json", "c.err", "count: "),
	                         ("s.json", "s.err", "search: ")):
	    j = json.load(open(os.path.join(work, doc)))
	    said = [l[len(prefix):].rstrip("\n") for l in open(os.path.join(work, err)) if l.startswith(prefix)]
	    assert j["summary"] in said, (doc, j["summary"], said[:3])
	    assert page.found.get(doc) == j["summary"], (doc, page.found.get(doc), j["summary"])
	    s = j["summary"]
	    if doc == "g.json":
	        assert s.startswith("%s SYNs asked at 1,000/s, all sent" % count(j["asked"])), s
	        assert "the server answered %s" % count(j["replies"]["syn_acks"]) in s, s
	        assert s.endswith("the threshold held"), s
	    elif doc == "c.json":
	        assert s.startswith("%s arrived" % count(j["matched"])), s
	    else:
	        for g in j["goals"]:
	            assert g["name"] + " " in s, (g["name"], s)
	PY
}

# Two runs side by side: a server answering every SYN against one dropping a share of them (an nft
# rule); the change and its direction from the JSONs' figures; rounds (the same runs' JSON, four a
# side) judged beyond the noise; results that cannot be compared refused in one line
test_report_compare_two_runs() {
	command -v nft >/dev/null || skip "nft not installed"
	bed
	tcp_server_start --timeout 20 --backlog 4096
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --pps 1000 --count 1000 -q \
		--json "$WORK/a.json" || fail "gen syn (A) exited $?"
	tb_srv nft add table inet xrcmp || fail "nft"
	tb_srv nft 'add chain inet xrcmp in { type filter hook input priority 0; }'
	tb_srv nft add rule inet xrcmp in tcp dport 80 numgen inc mod 4 == 0 drop
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --pps 1000 --count 1000 -q \
		--first-seq 5000 --wait 2s --json "$WORK/b.json"
	expect_range $? 0 1 "gen syn (B)'s exit"
	"$XR" report --compare "$WORK/a.json" "$WORK/b.json" -o "$WORK/cmp.html" 2>"$WORK/cmp.txt" ||
		fail "report --compare exited $?"
	for i in 1 2 3 4; do
		cp "$WORK/a.json" "$WORK/a$i.json"
		cp "$WORK/b.json" "$WORK/b$i.json"
	done
	"$XR" report --compare "$WORK"/a[1-4].json vs "$WORK"/b[1-4].json -o "$WORK/rounds.html" 2>/dev/null ||
		fail "report --compare with rounds exited $?"
	/usr/bin/python3 - "$WORK" <<-'PY' || fail "the comparison against the JSONs"
	import json, os, re, sys
	w = sys.argv[1]
	a, b = (json.load(open(os.path.join(w, n))) for n in ("a.json", "b.json"))
	ra, rb = a["replies"]["syn_acks"], b["replies"]["syn_acks"]
	assert ra == 1000 and rb < 900, (ra, rb)
	row = [l for l in open(os.path.join(w, "cmp.txt")) if l.strip().startswith("SYN-ACKs")]
	assert row and "{:,}".format(rb) in row[0] and "worse" in row[0], row
	assert "%+.1f%%" % (100.0 * (rb - ra) / ra) in row[0], row
	page = open(os.path.join(w, "cmp.html")).read()
	m = re.search(r"data-k='replies.syn_acks' data-a='([^']*)'.*?data-b='([^']*)'", page)
	assert m and float(m.group(1)) == ra and float(m.group(2)) == rb, m and m.groups()
	rounds = open(os.path.join(w, "rounds.html")).read()
	m = re.search(r"<th>SYN-ACKs</th>.*?</tr>", rounds)
	assert m and "worse (p=0.029)" in m.group(0), m and m.group(0)
	PY
	tb_srv nft delete table inet xrcmp
	echo '{"matched": 1, "attribution": {}}' >"$WORK/count.json"
	run_bad 2 "cannot be compared" "$XR" report --compare "$WORK/a.json" "$WORK/count.json" -o "$WORK/x.html"
	run_bad 2 "two results, or A's rounds vs B's" "$XR" report --compare "$WORK/a.json" -o "$WORK/x.html"
	run_bad 2 "results on both sides of vs" "$XR" report --compare "$WORK/a.json" vs -o "$WORK/x.html"
	run_bad 2 "not a result's JSON" "$XR" report --compare "$WORK/a.json" "$WORK/none.json" -o "$WORK/x.html"
}

# report_layout NAME: the page $WORK/NAME.html in a wide window, a phone's and A4's printable width
# (186 mm, 703 px): nothing wider than the window, no box its content overflows (a table scrolls in
# its own), no number broken across lines; printed to PDF, A4 pages with nothing drawn in the margin
report_layout() {
	local w dom
	for w in 1200 703 420; do
		dom="$WORK/$1.$w.dom"
		chromium_run --window-size=$w,900 --dump-dom "file://$WORK/$1.html" >"$dom"
		grep -q 'data-overflow="false"' "$dom" || fail "$1 at $w px: wider than the window"
		grep -q 'data-boxes-over="0"' "$dom" ||
			fail "$1 at $w px: boxes overflowed: $(grep -o 'data-boxes-over-what="[^"]*"' "$dom")"
		grep -q 'data-split-numbers="0"' "$dom" || fail "$1 at $w px: a number broken across lines"
	done
	chromium_run --no-pdf-header-footer --print-to-pdf="$WORK/$1.pdf" "file://$WORK/$1.html" >/dev/null
	pdfinfo "$WORK/$1.pdf" | grep -q "Page size:.*(A4)" || fail "$1: the PDF's pages are not A4"
	pdftoppm -r 40 -png "$WORK/$1.pdf" "$WORK/$1.page" || fail "$1: pdftoppm"
	/usr/bin/python3 - "$WORK" "$1" <<-'PY' || fail "$1: drawn into the PDF's margin"
	import glob, os, sys
	from PIL import Image
	pages = sorted(glob.glob(os.path.join(sys.argv[1], sys.argv[2] + ".page-*.png")))
	assert pages, "no page"
	for p in pages:
	    img = Image.open(p).convert("L")
	    w, h = img.size
	    # the right margin: 12 mm of 210, less a pixel
	    band = img.crop((w - int(w * 11 / 210), 0, w, h))
	    assert band.getextrema()[0] > 240, (p, band.getextrema())
	PY
}

# report_headlines NAME DOC...: each section's headline in the page is its JSON's summary
report_headlines() {
	local page=$1
	shift
	/usr/bin/python3 - "$WORK/$page.1200.dom" "$@" <<-'PY' || fail "$page: the headlines against the JSON"
	import json, re, sys, html
	dom = open(sys.argv[1]).read()
	found = [html.unescape(h) for h in re.findall(r'<p class="headline"[^>]*>([^<]*)</p>', dom)]
	for doc in sys.argv[2:]:
	    s = json.load(open(doc))["summary"]
	    assert s in found, (doc, s, found)
	PY
}

# Each kind of report in a real browser: a sender's, count's, a search's, a comparison, LoRaWAN's
# and MQTT's; each laid out within its window, a phone's and A4, and its headlines its JSON's
test_report_six_kinds_in_a_browser() {
	command -v chromium >/dev/null || fail "chromium is not installed (scripts/deps.sh installs it)"
	command -v pdftoppm >/dev/null || fail "pdftoppm is not installed (scripts/deps.sh installs it)"
	. "$TOP/tests/t_lorawan.sh"
	. "$TOP/tests/t_mqtt.sh"
	bed
	tcp_server_start --timeout 30 --backlog 4096
	count_start --tcp --dport 80 --duration 60s --idle 1s -q --json "$WORK/c.json"
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --pps 1000 --count 2000 -q \
		--json "$WORK/g.json" || fail "gen syn exited $?"
	count_wait
	tb_gen "$XR" gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --pps 2000 --count 2000 -q \
		--first-seq 5000 --json "$WORK/g2.json" || fail "gen syn (2) exited $?"
	tb_gen "$XR" search --witness replies --min 1k --max 4k --trial 300ms --max-trials 2 --json "$WORK/s.json" \
		-- gen syn -i "$TB_GEN_IF" --dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --first-seq 10000 >/dev/null 2>&1
	expect_range $? 0 1 "search's exit"
	"$XR" lorawan fleet --devices 100 --gateways 4 --out "$WORK/f" -q || fail "fleet"
	lw_server_start --fleet "$WORK/f" --idle 3
	tb_gen "$XR" lorawan send -i "$TB_GEN_IF" --fleet "$WORK/f" --server "$TB_SRV_IP" --pps 1k --count 1000 \
		--wait 2s -q --json "$WORK/l.json" || fail "lorawan send exited $?"
	wait "$LW_PID"
	mosquitto_start
	peer_xdp
	tb_gen "$XR" gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --username "$MQ_USER" \
		--password "$MQ_PASS" --qos 1 --messages 10 --pps 100 --count 50 --wait 10s -q \
		--json "$WORK/m.json" || fail "gen mqtt exited $?"
	cd "$WORK" || fail "cd"
	"$XR" report g.json -o sender.html && "$XR" report c.json -o count.html &&
		"$XR" report s.json -o search.html && "$XR" report l.json -o lorawan.html &&
		"$XR" report m.json -o mqtt.html || fail "report exited $?"
	"$XR" report --compare g.json g2.json -o compare.html 2>/dev/null || fail "report --compare exited $?"
	for k in sender count search lorawan mqtt compare; do
		report_layout "$k"
	done
	report_headlines sender g.json
	report_headlines count c.json
	report_headlines search s.json
	report_headlines lorawan l.json
	report_headlines mqtt m.json
	report_headlines compare g.json g2.json
	grep -q "uplinks of 100 devices through 4 gateways" lorawan.html || fail "LoRaWAN's headline: $(grep -o "class='headline'[^<]*" lorawan.html)"
	grep -q "Round trips per second" sender.html || fail "the sender's page has no round trips per second"
	grep -q "What arrived and where it went, per second" count.html || fail "count's page has no timeline"
	grep -q "messages acknowledged by the broker" mqtt.html || fail "MQTT's headline: $(grep -o "class='headline'[^<]*" mqtt.html)"
	grep -q "Sessions per second" mqtt.html || fail "MQTT's page has no sessions per second"
	grep -q "Messages per second" mqtt.html || fail "MQTT's page has no messages per second"
	grep -q "messages the broker took" mqtt.html || fail "MQTT's messages per second: not the broker's PUBACKs"
}

# A search's report: where each trial's loss went, by the server's drop counters, against the load
# (a search of a firewall that drops above 20k/s, its trials as count's witness gives them)
test_search_report_shows_where_loss_went() {
	/usr/bin/python3 - "$WORK/s.json" <<-'PY' || fail "python"
	import json, sys
	trials = []
	for load in (1000, 5000, 10000, 20000, 25000, 40000, 80000):
	    fw = max(0, load - 20000)
	    trials.append({"offered_pps": load, "asked": load, "sent": load, "received": load - fw,
	                   "loss": fw / load, "sender_short": False,
	                   "server_drops": {"drop:NO_SOCKET": load - fw, "firewall_dropped": fw,
	                                    "udp_delivered": 0}})
	json.dump({"goals": [{"name": "NDR", "loss": 0, "lower": 20000, "upper": 25000,
	                      "never_saturated": False}], "trials": trials, "stopped": "done"},
	          open(sys.argv[1], "w"))
	PY
	"$XR" report "$WORK/s.json" -o "$WORK/s.html" || fail "report exited $?"
	grep -q "Where the loss went" "$WORK/s.html" || fail "no chart of where the loss went"
	grep -q ">firewall_dropped<" "$WORK/s.html" || fail "no firewall series"
	grep -q ">udp_delivered<" "$WORK/s.html" && fail "a counter of deliveries drawn as loss"
	grep -q "NDR 20.0k/s; above it the server dropped: the firewall (nftables)" "$WORK/s.html" ||
		fail "the headline: $(grep -o "class='headline'[^<]*" "$WORK/s.html")"
}
