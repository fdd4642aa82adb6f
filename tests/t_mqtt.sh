# SPDX-License-Identifier: GPL-2.0
# gen mqtt: MQTT publishers on socket-less sessions against Mosquitto (Debian's), configured as the
# published flood benchmark's broker (scripts/mosquitto.sh). Every message asked is taken by the
# broker, refused or not sent with its reason; mosquitto_sub, a real client, checks what arrived:
# each message once, in order per publisher, its stamp the publisher's own.

. "$TOP/scripts/mosquitto.sh"

MQ_USER=bench
MQ_PASS=flood-0

# mosquitto_start: the broker on the bed's server address, stopped with the bed
# mosquitto_start: the broker on MQ_HOST (default the server's IPv4 address; an IPv6 one bare)
mosquitto_start() {
	local host=${MQ_HOST:-$TB_SRV_IP} listen
	command -v mosquitto >/dev/null || skip "mosquitto not installed (scripts/deps.sh installs it)"
	MQ_DIR=$(mktemp -d "$WORK/mosquitto.XXXXXX")
	mosquitto_conf "$MQ_DIR" "$host" "$MQ_USER" "$MQ_PASS" || fail "mosquitto_conf"
	# a test's own settings, one per line
	[ -z "${MQ_CONF_EXTRA:-}" ] || printf '%s\n' "$MQ_CONF_EXTRA" >>"$MQ_DIR/mosquitto.conf"
	tb_srv mosquitto -c "$MQ_DIR/mosquitto.conf" 2>"$MQ_DIR/stderr" &
	MQ_PID=$!
	trap 'kill $SUB_PID $MQ_PID 2>/dev/null; wait $MQ_PID 2>/dev/null; tb_down' EXIT
	listen=$host
	[[ $host == *:* ]] && listen="[$host]"
	mosquitto_wait "$TB_NS_SRV" "$listen" "$MQ_PID" ||
		fail "mosquitto did not start: $(cat "$MQ_DIR/mosquitto.log" "$MQ_DIR/stderr" 2>/dev/null)"
}

# sub_start N TOPIC [ARGS]: mosquitto_sub until N messages came, topic and payload in hex to $WORK/sub.
# From the generator's namespace, as from another host: its segments cross the server's XDP hook and
# count's books hold them (the namespace's TCP counters would count a local client's, XDP would not)
SUB_PID=
sub_start() {
	local n=$1 topic=$2 before
	shift 2
	before=$(mq_subscribes "$topic")
	tb_gen mosquitto_sub -h "${MQ_HOST:-$TB_SRV_IP}" -u "$MQ_USER" -P "$MQ_PASS" -q "${SUB_QOS:-0}" -t "$topic" -C "$n" -W 60 \
		-F '%t %x' "$@" >"$WORK/sub" 2>"$WORK/sub.err" &
	SUB_PID=$!
	# subscribed once the broker has logged its SUBSCRIBE (scripts/mosquitto.sh: log_type subscribe)
	wait_until 10 "mosquitto_sub's SUBSCRIBE in the broker's log" mq_subscribed "$topic" $((before + 1))
}

# mq_subscribes TOPIC: the SUBSCRIBEs to TOPIC the broker has logged ("TIME: CLIENT QOS TOPIC")
mq_subscribes() {
	awk -v t="$1" 'NF == 4 && $1 ~ /^[0-9]+:$/ && $3 ~ /^[0-2]$/ && $4 == t { n++ } END { print n + 0 }' \
		"$MQ_DIR/mosquitto.log"
}
# mq_subscribed TOPIC N: at least N of them
mq_subscribed() { [ "$(mq_subscribes "$1")" -ge "$2" ]; }

# mqtt_gen ARGS...: gen mqtt from the bed's generator with the credentials, JSON to $WORK/g.json
mqtt_gen() {
	tb_gen "$XR" gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 \
		--json "$WORK/g.json" "$@" >"$WORK/out" 2>&1
}

# messages_add_up: every message asked taken, refused, unanswered or not sent; every session accounted
messages_add_up() {
	python3 - "$WORK/g.json" <<-'PY' || fail "messages do not add up: $(cat "$WORK/out")"
	import json, sys
	g = json.load(open(sys.argv[1]))
	s, m = g["sessions"], g["messages"]
	print("sessions:", s, "messages:", m, "connects:", g["connects"])
	assert s["unaccounted"] == 0, s
	assert s["completed"] + s["failed"] == s["asked"], s
	assert sum(s["failed_by"].values()) == s["failed"], s
	assert m["acked"] + m["refused"] + m["unanswered"] + m["not_sent"] == m["asked"], m
	assert m["sent"] == m["acked"] + m["refused"] + m["unanswered"], m
	PY
}

# sub_check PUBLISHERS PER: what mosquitto_sub read: each publisher's messages 0..PER-1 once, in order,
# on the publisher's own topic, stamped with its number
sub_check() {
	python3 - "$WORK/sub" "$1" "$2" <<-'PY' || fail "what the subscriber read: $(head -3 "$WORK/sub")"
	import sys
	pubs, per = int(sys.argv[2]), int(sys.argv[3])
	seen = {}
	for line in open(sys.argv[1]):
	    topic, hexp = line.split()
	    p = bytes.fromhex(hexp)
	    c, seq = int.from_bytes(p[0:4], "big"), int.from_bytes(p[4:8], "big")
	    assert topic == "msg/%010d" % c, (topic, c)
	    seen.setdefault(c, []).append(seq)
	assert len(seen) == pubs, (len(seen), pubs)
	for c, seqs in seen.items():
	    assert seqs == list(range(per)), (c, seqs[:10], len(seqs))
	print("subscriber: %d publishers x %d messages, each once and in order" % (pubs, per))
	PY
}

test_mqtt_qos1_every_message() {
	bed
	mosquitto_start
	count_start --tcp --dport 1883 --duration 120s --idle 5s --json "$WORK/c.json"
	sub_start 100000 'msg/#'
	# the issue's run: 1,000 clients x 100 QoS-1 messages, each PUBACKed before the next
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 64 --messages 100 \
		--pps 1000 --count 1000 --wait 30s || fail "gen mqtt exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	wait "$SUB_PID" || fail "mosquitto_sub exited $? after $(wc -l <"$WORK/sub") messages: $(cat "$WORK/sub.err")"
	count_wait
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 1000 "sessions completed"
	expect_eq "$(jget "$WORK/g.json" connects.accepted)" 1000 "CONNACKs"
	expect_eq "$(jget "$WORK/g.json" messages.acked)" 100000 "PUBACKs"
	expect_eq "$(python3 -c 'import json,sys; print(sum(r["messages_acked"] for r in json.load(open(sys.argv[1]))["sessions"]["per_second"]))' "$WORK/g.json")" \
		100000 "PUBACKs second by second (sessions.per_second)"
	expect_eq "$(wc -l <"$WORK/sub")" 100000 "messages the subscriber read"
	sub_check 1000 100
	# count's books: every segment delivered or dropped, but for count's known guess by peer outside
	# ESTABLISHED (one pending segment per peer; the exact fix needs the skb in
	# tcp_rcv_state_process, and this kernel has neither kprobes nor fentry): 3 of 13 runs were off
	# by 1 or 2 of ~160,000, with this binary and the one before it alike; 8 of 200,919 once in a
	# whole suite's run (2026-12-05), 0 in 3 runs alone; 45 of 190,788 in CI's (san/, beside two
	# other tests, 2026-12-07), 0 or 1 in 8 runs here alone or beside them. The guess grows with the
	# host's load, so its margin is a share: 0.1% of what passed (a broken attribution misses all)
	local u lim
	u=$(jget "$WORK/c.json" books.unattributed)
	lim=$(($(jget "$WORK/c.json" passed) / 1000))
	expect_range "$u" "-$lim" "$lim" "unattributed"
	expect_eq "$(($(jget "$WORK/c.json" delivered) + $(jget "$WORK/c.json" drops.inbound_total) + u))" \
		"$(jget "$WORK/c.json" passed)" "delivered + dropped + unattributed = passed"
	# each session ended with its DISCONNECT on the FIN, read by the broker as one
	expect_eq "$(grep -c 'Client xr-[0-9]* disconnected\.$' "$MQ_DIR/mosquitto.log")" 1000 "clean disconnects in the broker's log"
	expect_eq "$(grep -c 'protocol error' "$MQ_DIR/mosquitto.log")" 0 "protocol errors in the broker's log"
}

# IPv6 (the bed's 2001:2::/48, RFC 5180): 200 publishers from a pool of 64 sources x 50 QoS-1
# messages of 1 KB and 5 of 10 KB (several segments each, through the pump), every PUBACK counted, and
# a socket subscriber over IPv6 that reads every one once and in order
test_mqtt_ipv6() {
	bed --ipv6
	MQ_HOST=$TB_SRV_IP6
	mosquitto_start
	# the XDP program on the server's side that takes our XDP_TX segments at once (veth)
	count_start --any -q --duration 10m
	sub_start 10000 'msg/#'
	tb_gen "$XR" gen mqtt -i "$TB_GEN_IF" --dst "[$TB_SRV_IP6]:1883" --src 2001:2:0:1::/122 \
		--username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 1024 --messages 50 \
		--pps 1000 --count 200 --wait 30s --json "$WORK/g.json" >"$WORK/out" 2>&1 ||
		fail "gen mqtt exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	wait "$SUB_PID" || fail "mosquitto_sub exited $? after $(wc -l <"$WORK/sub") messages: $(cat "$WORK/sub.err")"
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 200 "sessions completed"
	expect_eq "$(jget "$WORK/g.json" connects.accepted)" 200 "CONNACKs"
	expect_eq "$(jget "$WORK/g.json" messages.acked)" 10000 "PUBACKs"
	expect_eq "$(wc -l <"$WORK/sub")" 10000 "messages the subscriber read"
	sub_check 200 50
	# from 64 sources of the pool, each a session of its own in the broker's log
	expect_eq "$(grep -c 'New client connected from 2001:2:0:1::[0-9a-f]*:[0-9]* as xr-' "$MQ_DIR/mosquitto.log")" 200 \
		"IPv6 connections in the broker's log"
	expect_eq "$(grep -c 'protocol error' "$MQ_DIR/mosquitto.log")" 0 "protocol errors in the broker's log"
	# 10 KB messages: several segments each, no larger than the server's IPv6 MSS (1440)
	tb_gen "$XR" gen mqtt -i "$TB_GEN_IF" --dst "[$TB_SRV_IP6]:1883" --src 2001:2:0:1::/122 \
		--username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 10240 --messages 5 \
		--pps 100 --count 20 --wait 30s --json "$WORK/g.json" >"$WORK/out" 2>&1 ||
		fail "gen mqtt (10 KB) exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" messages.acked)" 100 "PUBACKs (10 KB)"
	expect_eq "$(jget "$WORK/g.json" segments.pump.send_errors)" 0 "segments the pump could not send"
	kill -INT "$COUNT_PID"
	wait "$COUNT_PID"
	return 0
}

test_mqtt_wrong_password_refused() {
	bed
	mosquitto_start
	peer_xdp
	mqtt_gen --username "$MQ_USER" --password wrong --qos 1 --messages 10 --pps 100 --count 50 \
		--wait 3s && fail "gen mqtt exited 0 with every CONNECT refused: $(cat "$WORK/out")"
	messages_add_up
	cat "$WORK/out"
	expect_eq "$(jget "$WORK/g.json" connects.refused)" 50 "CONNECTs refused"
	# 3.1.1's return code 5: not authorised (Mosquitto's answer to a bad password)
	expect_eq "$(jget "$WORK/g.json" connects.refused_by_code.0x05)" 50 "return code 5"
	expect_eq "$(jget "$WORK/g.json" sessions.failed_by.refused_after_handshake)" 50 "sessions failed"
	expect_eq "$(jget "$WORK/g.json" messages.not_sent)" 500 "messages not sent"
	grep -q "refused (return codes: 0x05 (not authorised) 50)" "$WORK/out" || fail "no refusal line: $(cat "$WORK/out")"
	# subscribers too: every CONNECT refused is one line and exit 1
	mqtt_gen --username "$MQ_USER" --password wrong --subscribe 'msg/#' --publishers 1 --count 3 --wait 3s
	expect_eq $? 1 "exit of subscribers whose every CONNECT was refused: $(cat "$WORK/out")"
	grep -q "the broker refused every CONNECT (return code 0x05" "$WORK/out" ||
		fail "no verdict line for the subscribers: $(cat "$WORK/out")"
	expect_eq "$(jget "$WORK/g.json" subscribers.refused_by_code.0x05)" 3 "subscribers' return code 5"
}

# A closed loop (--concurrency): 16 publishers connected at once, 200 in all, each new one as
# another disconnects; every message once and in order at the subscriber. Then with a wrong
# password: sessions that fail end too, so the loop goes on to the last one instead of waiting.
test_mqtt_closed_loop() {
	bed
	mosquitto_start
	# its XDP program makes veth deliver our XDP_TX'd segments at once (t_tcp.sh)
	count_start --tcp --dport 1883 --duration 120s --idle 5s --json "$WORK/c.json"
	SUB_QOS=1 sub_start 4000 'msg/#'
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 32 --messages 20 \
		--concurrency 16 --count 200 --wait 20s || fail "gen mqtt exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	wait "$SUB_PID" || fail "mosquitto_sub exited $? after $(wc -l <"$WORK/sub") messages: $(cat "$WORK/sub.err")"
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 200 "sessions completed"
	expect_eq "$(jget "$WORK/g.json" messages.acked)" 4000 "PUBACKs"
	expect_eq "$(jget "$WORK/g.json" sessions.concurrency.open_peak)" 16 "publishers open at the most"
	sub_check 200 20
	mqtt_gen --username "$MQ_USER" --password wrong --qos 1 --messages 10 --concurrency 4 \
		--count 50 --first-seq 1000 --wait 20s && fail "gen mqtt exited 0 with every CONNECT refused"
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" connects.refused)" 50 "CONNECTs refused in a closed loop"
	expect_eq "$(jget "$WORK/g.json" sessions.asked)" 50 "sessions asked"
}

# QoS-1 bursts of 20 from one publisher and from ten: the PUBACKs that leave a burst unanswered
# are acknowledged late, by the pump (bpf/proto/tcp.bpf.h: tcp_ack_later), so that the broker's
# Nagle can gather the next ones into one segment, as it does for a socket client. Every message
# once and in order, and the delayed ACKs' books add up. How many PUBACKs a segment then carries
# depends on the broker's speed against the delay (0.40-0.51 broker segments a message in
# bench-mqtt.sh, Mosquitto alone on its CPU; about 1.0 here, where it also delivers each message
# to mosquitto_sub), so it is shown, not checked
test_mqtt_qos1_bursts_delayed_acks() {
	bed
	mosquitto_start
	count_start --tcp --dport 1883 --duration 120s --idle 5s --json "$WORK/c.json"
	SUB_QOS=1 sub_start 5500 'msg/#'
	local before after
	before=$(ip netns exec "$TB_NS_SRV" nstat -az TcpOutSegs | awk '/TcpOutSegs/ {print $2}')
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 16 --messages 500 \
		--burst 20 --count 1 --wait 20s || fail "gen mqtt exited $?: $(cat "$WORK/out")"
	after=$(ip netns exec "$TB_NS_SRV" nstat -az TcpOutSegs | awk '/TcpOutSegs/ {print $2}')
	cat "$WORK/out"
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" messages.acked)" 500 "PUBACKs"
	delayed_acks_add_up
	echo "broker segments: $((after - before)) for 500 messages"
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 16 --messages 500 \
		--burst 20 --count 10 --first-seq 1 --wait 20s || fail "gen mqtt exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	wait "$SUB_PID" || fail "mosquitto_sub exited $? after $(wc -l <"$WORK/sub") messages: $(cat "$WORK/sub.err")"
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" messages.acked)" 5000 "PUBACKs of ten publishers"
	delayed_acks_add_up
	sub_check 11 500
	expect_eq "$(grep -c 'protocol error' "$MQ_DIR/mosquitto.log")" 0 "protocol errors in the broker's log"
}

# delayed_acks_add_up: every delayed ACK asked of the pump sent, not needed or left at the end
delayed_acks_add_up() {
	python3 - "$WORK/g.json" <<-'PY' || fail "delayed ACKs do not add up: $(cat "$WORK/out")"
	import json, sys
	a = json.load(open(sys.argv[1]))["segments"]["pump"]["delayed_acks"]
	print("delayed ACKs:", a)
	assert a["asked"] > 0 and a["send_errors"] == 0, a
	assert a["asked"] == a["sent"] + a["not_needed"] + a["send_errors"] + a["left_at_end"], a
	PY
}

test_mqtt_selftest() {
	# the per-session bytes (client id, topic, stamps) in BPF against user/proto/mqtt/stream.c's
	"$XR" selftest --only mqtt --cases 100 --seed "$RANDOM" >"$WORK/out" 2>&1 || fail "$(cat "$WORK/out")"
	grep -q "^selftest mqtt: [1-9][0-9]* segments .* 0 mismatches" "$WORK/out" || fail "$(cat "$WORK/out")"
	# and the subscribers' reader against a whole-packet reading of random streams
	grep -q "^selftest mqtt deliveries: 100 subscriber streams .* in [1-9][0-9]* segments, 0 mismatches" \
		"$WORK/out" || fail "$(cat "$WORK/out")"
}

test_mqtt_qos0_large_to_three_subscribers() {
	bed
	mosquitto_start
	count_start --tcp --dport 1883 --duration 120s --idle 5s --json "$WORK/c.json"
	for i in 1 2 3; do
		sub_start 400 'msg/#'
		mv "$WORK/sub" "$WORK/sub.$i" 2>/dev/null
		eval "SUB$i=\$SUB_PID"
	done
	# 10 KB messages: 8 full segments each, sent by the pump (on veth, a bare ACK's frame leaves
	# XDP_TX room for ~192 bytes only), every burst read by the broker before the next
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 0 --payload 10k --messages 4 \
		--pps 1000 --count 100 --wait 60s || fail "gen mqtt exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	for i in 1 2 3; do
		eval "wait \$SUB$i" || fail "subscriber $i exited $?: $(cat "$WORK/sub.err")"
	done
	count_wait
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 100 "sessions completed"
	expect_eq "$(jget "$WORK/g.json" messages.acked)" 400 "messages the broker read"
	expect_eq "$(jget "$WORK/g.json" segments.pump.send_errors)" 0 "segments the pump could not send"
	expect_eq "$(jget "$WORK/g.json" segments.pump.ring_full)" 0 "segments the pump's ring had no room for"
	# each burst (a PUBLISH and the PINGREQ's 2 bytes) in full segments of 1460 bytes
	expect_eq "$(jget "$WORK/g.json" segments.pump.sent)" \
		$((400 * (($(jget "$WORK/g.json" messages.message_bytes) + 2 + 1459) / 1460))) "segments the pump sent"
	for i in 1 2 3; do
		cp "$WORK/sub.$i" "$WORK/sub" 2>/dev/null
		expect_eq "$(wc -l <"$WORK/sub")" 400 "messages subscriber $i read"
		sub_check 100 4
	done
	# count's books, within the QoS-1 test's margin: the segments coalesced in the broker's backlog
	# (6 or 33 unattributed in 2 of 7 runs while count read their TCP headers 4 bytes early; 0 in 3
	# of 3 since); what is left is the guess by peer outside ESTABLISHED that test describes
	local u
	u=$(jget "$WORK/c.json" books.unattributed)
	expect_range "$u" -3 3 "unattributed"
	expect_eq "$(($(jget "$WORK/c.json" delivered) + $(jget "$WORK/c.json" drops.inbound_total) + u))" \
		"$(jget "$WORK/c.json" passed)" "delivered + dropped + unattributed = passed"
}

# The issue's largest payload, 64 KiB at QoS 1 (a Remaining Length of three bytes; 45 full segments a
# message, at most 10 in flight, each burst through the pump as the broker's window opens), read by
# a subscriber in XDP (each delivery over ~45 of the broker's segments) and by mosquitto_sub
test_mqtt_largest_payloads() {
	bed --senders 2
	mosquitto_start
	for i in 0 1; do peer_xdp_start "$i"; done
	xsub_start 1 1 --subscribe 'msg/#' --mqtt-version 5 --client-id 'big-{c}' --publishers 10 \
		--messages 5 --wait 60s
	local xsub=$XSUB_PID
	sub_start 50 'msg/#'
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 65536 --messages 5 \
		--pps 100 --count 10 --wait 60s || fail "gen mqtt exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	wait "$xsub" || fail "the subscriber in XDP exited $?: $(cat "$WORK/xsub.1.out")"
	cat "$WORK/xsub.1.out"
	wait "$SUB_PID" || fail "mosquitto_sub exited $?: $(cat "$WORK/sub.err")"
	kill -INT "${PEER_XDP_PIDS[@]}" 2>/dev/null
	wait "${PEER_XDP_PIDS[@]}" 2>/dev/null
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 10 "sessions completed"
	expect_eq "$(jget "$WORK/g.json" messages.acked)" 50 "PUBACKs"
	expect_eq "$(jget "$WORK/g.json" messages.message_bytes)" $((1 + 3 + 2 + 14 + 2 + 65536)) "bytes of a PUBLISH"
	expect_eq "$(jget "$WORK/g.json" segments.pump.send_errors)" 0 "segments the pump could not send"
	expect_eq "$(jget "$WORK/g.json" segments.pump.ring_full)" 0 "segments the pump's ring had no room for"
	expect_range "$(jget "$WORK/g.json" segments.pump.sent)" $((50 * 45)) 1e9 "segments the pump sent"
	sub_check 10 5
	awk '{ if (length($2) != 2 * 65536) { print "a message of " length($2) / 2 " bytes"; exit 1 } }' \
		"$WORK/sub" || fail "what mosquitto_sub read"
	local x=$WORK/xsub.1.json
	expect_eq "$(jget "$x" sessions.completed)" 1 "subscriber sessions completed"
	expect_eq "$(jget "$x" deliveries.received)" 50 "deliveries received"
	deliveries_clean "$x"
	expect_eq "$(grep -c 'protocol error' "$MQ_DIR/mosquitto.log")" 0 "protocol errors in the broker's log"
}

# xsub_start I N ARGS...: N subscribers in XDP (gen mqtt --subscribe) from sender namespace I, JSON
# to $WORK/xsub.I.json; returns once the broker holds their N connections and has read their SUBSCRIBEs
xsub_start() {
	local i=$1 n=$2 topic before a prev=
	shift 2
	for a in "$@"; do [ "${prev:-}" = --subscribe ] && topic=$a; prev=$a; done
	before=$(mq_subscribes "$topic")
	tb_geni "$i" "$XR" gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --username "$MQ_USER" \
		--password "$MQ_PASS" --count "$n" --json "$WORK/xsub.$i.json" "$@" >"$WORK/xsub.$i.out" 2>&1 &
	XSUB_PID=$!
	# subscribed once the broker has logged each one's SUBSCRIBE (scripts/mosquitto.sh)
	wait_until 15 "$n subscribers' SUBSCRIBEs to $topic in the broker's log" mq_subscribed "$topic" $((before + n))
}

# deliveries_clean JSON [WHAT]: a subscribers' run lost, repeated, reordered and misread nothing
deliveries_clean() {
	for k in lost duplicated reordered unstamped foreign; do
		expect_eq "$(jget "$1" "deliveries.$k")" 0 "deliveries $k${2:-}"
	done
}

# live_delivered N: the subscribers' --listen :9311 ($WORK/live.json) says N deliveries came
live_delivered() {
	tb_geni 2 curl -sf http://127.0.0.1:9311/ >"$WORK/live.json" || fail "the subscribers' --listen"
	[ "$(jget "$WORK/live.json" replies.deliveries.delivered)" = "$1" ]
}

test_mqtt_subscribers_in_xdp() {
	bed --senders 3
	mosquitto_start
	for i in 0 1 2; do peer_xdp_start "$i"; done
	# three subscribers that wait for all of 100 publishers' 100 messages; two that wait for a 101st
	# publisher that never comes (its 2 x 100 deliveries lost, the sessions ended by --wait)
	[ -n "${XR_DEBUG_PCAP:-}" ] && { tb_srv tcpdump -i "$TB_SRV_IF" -w "$WORK/srv.pcap" -s 200 port 1883 2>/dev/null & sleep 0.3; }
	xsub_start 1 3 --subscribe 'msg/#' --publishers 100 --messages 100 --wait 30s
	local whole=$XSUB_PID
	xsub_start 2 2 --subscribe 'msg/#' --publishers 101 --messages 100 --wait 12s --client-id 'xr-short-{c}' \
		--listen :9311
	local short=$XSUB_PID
	# a real client beside them
	sub_start 10000 'msg/#'
	# idle longer than 1.5 x a keep-alive of 1 s: the subscribers' default is none (they send nothing)
	sleep 2
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 64 --messages 100 \
		--pps 1000 --count 100 --wait 30s || fail "gen mqtt exited $?: $(cat "$WORK/out")"
	wait "$whole" || fail "the subscribers exited $?: $(cat "$WORK/xsub.1.out")"
	cat "$WORK/xsub.1.out"
	# the others still wait: their live figures (--listen) say what came so far, once the last
	# deliveries, on their way when the first subscribers ended, are in (a loaded CI host read
	# 19,938 of 20,000 at once)
	wait_until 10 "the live figures' 20000 deliveries" live_delivered 20000
	tb_geni 2 curl -sf http://127.0.0.1:9311/metrics >"$WORK/live.prom" || fail "the subscribers' /metrics"
	expect_eq "$(jget "$WORK/live.json" replies.deliveries.delivered)" 20000 "deliveries so far (live)"
	expect_eq "$(jget "$WORK/live.json" replies.deliveries.expected)" 20200 "deliveries expected (live)"
	expect_eq "$(jget "$WORK/live.json" replies.deliveries.subacked)" 2 "SUBACKs (live)"
	expect_eq "$(jget "$WORK/live.json" replies.sessions.ended)" 0 "sessions ended (live)"
	expect_eq "$(prom_sample "$WORK/live.prom" xdpreplay_mqtt_delivered_total 'command="gen",iface="gen0"')" 20000 \
		"deliveries in /metrics"
	prom_valid "$WORK/live.prom"
	# neither had every delivery it waited for: a run where no session completed exits 1
	wait "$short"
	expect_eq "$?" 1 "exit of the subscribers that wait for a 101st publisher ($(cat "$WORK/xsub.2.out"))"
	grep -q "no session of 2 completed" "$WORK/xsub.2.out" || fail "no verdict line: $(cat "$WORK/xsub.2.out")"
	wait "$SUB_PID" || fail "mosquitto_sub exited $?: $(cat "$WORK/sub.err")"
	kill -INT "${PEER_XDP_PIDS[@]}" 2>/dev/null
	wait "${PEER_XDP_PIDS[@]}" 2>/dev/null
	sub_check 100 100
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" messages.acked)" 10000 "PUBACKs"
	local x=$WORK/xsub.1.json
	expect_eq "$(jget "$x" sessions.completed)" 3 "subscriber sessions completed"
	expect_eq "$(jget "$x" subscribers.subacked)" 3 "SUBACKs"
	expect_eq "$(jget "$x" deliveries.expected)" 30000 "deliveries expected"
	expect_eq "$(jget "$x" deliveries.delivered)" 30000 "deliveries read"
	expect_eq "$(jget "$x" deliveries.received)" 30000 "deliveries received"
	deliveries_clean "$x"
	expect_eq "$(jget "$x" deliveries.publishers_complete)" 100 "publishers that reached every subscriber"
	python3 - "$x" <<-'PY' || fail "per publisher and latency"
	import json, sys
	d = json.load(open(sys.argv[1]))["deliveries"]
	assert [p["received"] for p in d["per_publisher"]] == [300] * 100, d["per_publisher"][:3]
	lat = d["latency_us"]
	assert 0 < lat["p50"] <= lat["p99"] <= lat["max"] < 10e6, lat
	PY
	x=$WORK/xsub.2.json
	expect_eq "$(jget "$x" sessions.completed)" 0 "subscriber sessions completed (a publisher short)"
	expect_eq "$(jget "$x" sessions.failed_by.stalled_response)" 2 "sessions still waiting at the end"
	expect_eq "$(jget "$x" deliveries.received)" 20000 "deliveries received"
	expect_eq "$(jget "$x" deliveries.lost)" 200 "deliveries lost: publisher 100's, to each subscriber"
	expect_eq "$(jget "$x" deliveries.per_publisher.100.lost)" 200 "publisher 100's lost"
	expect_eq "$(jget "$x" deliveries.publishers_complete)" 100 "publishers complete"
	# the broker saw each subscriber subscribe and disconnect cleanly
	expect_eq "$(grep -c 'Client xr-sub-[0-9]* disconnected\.$' "$MQ_DIR/mosquitto.log")" 3 "clean disconnects of the subscribers that completed"
	expect_eq "$(grep -c 'protocol error' "$MQ_DIR/mosquitto.log")" 0 "protocol errors in the broker's log"
}

# --broker-stats: a subscriber in XDP whose deliveries a firewall holds back while 20 publishers send
# 20,000 QoS-0 messages. Mosquitto keeps at most max_queued_messages (10,000) packets for it beyond
# what its socket takes (4 KiB here) and drops the rest, each counted in its $SYS tree: every
# delivery the subscriber lost is one the broker says it dropped, none unattributed.
# count --server-pid: the broker's CPU while a flood of QoS-0 messages ran, its one thread the
# busiest; then a process that spins on a core is named at (or near) its CPU limit, one asleep not
test_mqtt_broker_cpu_watched() {
	bed
	mosquitto_start
	local pid spin nap
	pid=$(tb_srv ss -ltnpH "sport = :1883" | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2)
	[ -n "$pid" ] || fail "the broker's pid: $(tb_srv ss -ltnp)"
	ip netns exec "$TB_NS_SRV" "$XR" count -i "$TB_SRV_IF" --tcp --dport 1883 --duration 60s \
		--idle 3s --server-pid "$pid" --listen 127.0.0.1:9101 --json "$WORK/c.json" \
		--ready-file "$WORK/c.ready" 2>"$WORK/c.err" &
	COUNT_PID=$!
	wait_ready "$WORK/c.ready" "$COUNT_PID" "the counter" 100
	# a million messages: over a second of the broker's CPU however fast the host (200,000 took
	# 1.6 s of it in one run, 0.23 s in another, at 833k/s: too short for a busiest second)
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 0 --payload 16 --messages 100000 \
		--count 10 --pps 1000 --wait 60s || fail "gen mqtt exited $?: $(cat "$WORK/out")"
	# live, before --idle ends the count
	tb_srv python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9101/metrics", timeout=2).read().decode())' >"$WORK/metrics" ||
		fail "GET /metrics"
	grep -Eq "^xdpreplay_count_server_cpu_seconds_total\{run=\"[0-9a-f]{16}\",iface=\"srv0\",pid=\"$pid\",comm=\"mosquitto\"\} [0-9.]+$" "$WORK/metrics" ||
		fail "no server CPU in /metrics: $(grep server "$WORK/metrics")"
	count_wait
	cat "$WORK/c.err"
	expect_eq "$(jget "$WORK/c.json" server_process.pid)" "$pid" "the watched pid"
	expect_eq "$(jget "$WORK/c.json" server_process.comm)" mosquitto "its name"
	expect_eq "$(jget "$WORK/c.json" server_process.busiest_thread)" "$pid" "its busiest thread (its only one)"
	expect_eq "$(jget "$WORK/c.json" server_process.ended)" False "ended"
	expect_range "$(jget "$WORK/c.json" server_process.cpu_s)" 0.5 1e9 "the broker's CPU seconds"
	expect_range "$(jget "$WORK/c.json" server_process.busiest_thread_peak_share)" 0.3 1 \
		"its thread's busiest second"
	grep -q "^  server process $pid (mosquitto): [0-9.]* s of CPU in [0-9.]* s" "$WORK/c.err" ||
		fail "no line for the server process"
	# a shell that spins (for at most 20 s), watched for 2: a core's worth in its busiest second, bar a
	# VM's steal; then one asleep
	bash -c 'end=$((SECONDS + 20)); while [ $SECONDS -lt $end ]; do :; done' &
	spin=$!
	sleep 20 &
	nap=$!
	for p in "$spin" "$nap"; do
		ip netns exec "$TB_NS_SRV" "$XR" count -i "$TB_SRV_IF" --duration 2s --server-pid "$p" -q \
			--json "$WORK/p.$p.json" || fail "count --server-pid $p exited $?"
	done
	kill "$spin" "$nap"
	wait "$spin" "$nap" 2>/dev/null
	expect_range "$(jget "$WORK/p.$spin.json" server_process.busiest_thread_peak_share)" 0.8 1 \
		"a spinning thread's busiest second"
	expect_eq "$(jget "$WORK/p.$spin.json" server_process.comm)" bash "the spinning process's name"
	expect_range "$(jget "$WORK/p.$nap.json" server_process.busiest_thread_peak_share)" 0 0.05 \
		"a sleeping thread's busiest second"
	expect_eq "$(jget "$WORK/p.$nap.json" server_process.at_cpu_limit)" False "asleep: at its limit"
	expect_eq "$(jget "$WORK/p.$spin.json" server_process.ended)" False "the spinning process ended"
}

test_mqtt_broker_stats() {
	bed --senders 2
	mosquitto_start
	for i in 0 1; do peer_xdp_start "$i"; done
	tb_srv sysctl -qw net.ipv4.tcp_wmem="4096 4096 4096" || fail "tcp_wmem"
	# its client would connect from the bed's address, which is the default pool's
	tb_geni 1 "$XR" gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --username "$MQ_USER" --password "$MQ_PASS" \
		--count 1 --subscribe 'msg/#' --publishers 20 --messages 1000 --broker-stats >"$WORK/out" 2>&1
	expect_eq "$?" 2 "exit for --broker-stats from the pool's address ($(cat "$WORK/out"))"
	grep -q "one of the sessions' sources" "$WORK/out" || fail "no reason: $(cat "$WORK/out")"
	# so it takes a pool of its own, routed to sender 1
	tb_srv ip route add 198.18.127.0/24 via "$(tb_gen_ip 1)" || fail "route"
	xsub_start 1 1 --src 198.18.127.0/24 --subscribe 'msg/#' --publishers 20 --messages 1000 --wait 12s \
		--broker-stats
	local xsub=$XSUB_PID
	tb_srv nft -f - <<-NFT || fail "nft"
	table inet hold {
		chain out {
			type filter hook output priority 0;
			ip daddr 198.18.127.0/24 tcp sport 1883 counter drop
		}
	}
	NFT
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 0 --payload 16 --messages 1000 \
		--pps 1000 --count 20 --wait 10s || fail "gen mqtt exited $?: $(cat "$WORK/out")"
	tb_srv nft delete table inet hold || fail "nft delete"
	wait "$xsub"
	expect_eq "$?" 1 "exit of a subscriber that lost deliveries ($(cat "$WORK/xsub.1.out"))"
	cat "$WORK/xsub.1.out"
	kill -INT "${PEER_XDP_PIDS[@]}" 2>/dev/null
	wait "${PEER_XDP_PIDS[@]}" 2>/dev/null
	local x=$WORK/xsub.1.json lost
	lost=$(jget "$x" deliveries.lost)
	expect_range "$lost" 1000 19999 "deliveries lost"
	expect_eq "$(jget "$x" deliveries.received)" $((20000 - lost)) "deliveries received"
	expect_eq "$(jget "$x" deliveries.broker_dropped)" "$lost" "deliveries the broker dropped"
	expect_eq "$(jget "$x" deliveries.lost_unattributed)" 0 "lost deliveries not attributed"
	grep -q "^  lost: $lost; the broker dropped $lost (its inflight and queue limits" "$WORK/xsub.1.out" ||
		fail "no attribution line: $(cat "$WORK/xsub.1.out")"
	expect_eq "$(grep -c 'Outgoing messages are being dropped' "$MQ_DIR/mosquitto.log")" 1 "the broker's notice"
}

# QoS-1 subscriptions: each QoS-1 delivery PUBACKed from XDP. Mosquitto sends a client at most 20
# unacknowledged QoS-1 messages (max_inflight_messages), so every delivery past the 20th proves the
# PUBACKs before it right; the server's firewall drops one in 30 of the 3.1.1 subscribers' segments,
# so lost PUBACKs go again from their ids (mqtt_pubacks) after the timeout.
test_mqtt_qos1_subscribers() {
	bed --senders 3
	mosquitto_start
	for i in 0 1 2; do peer_xdp_start "$i"; done
	tb_srv nft -f - <<-NFT || fail "nft"
	table inet loss {
		chain in {
			type filter hook input priority 0;
			ip saddr $(tb_gen_ip 1) tcp dport 1883 numgen random mod 30 == 0 counter drop
		}
	}
	NFT
	xsub_start 1 2 --subscribe 'msg/#' --qos 1 --publishers 50 --messages 100 --wait 40s
	local v3=$XSUB_PID
	# client ids of their own: the broker closes a session whose id another one takes
	xsub_start 2 2 --subscribe 'msg/#' --qos 1 --mqtt-version 5 --client-id 'v5-{c}' \
		--publishers 50 --messages 100 --wait 40s
	local v5=$XSUB_PID
	# half the publishers at QoS 0, half at QoS 1: a QoS-1 subscription gets each at its own QoS.
	# QoS 0 first: Mosquitto drops a QoS-0 message for a subscriber whose inflight window is full
	# (its QoS-1 messages waiting for PUBACKs), which the lost PUBACKs make it here
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 0 --payload 32 --messages 100 \
		--pps 1000 --count 25 --first-seq 25 --wait 30s || fail "gen mqtt (QoS 0) exited $?: $(cat "$WORK/out")"
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 32 --messages 100 \
		--pps 1000 --count 25 --wait 30s || fail "gen mqtt (QoS 1) exited $?: $(cat "$WORK/out")"
	wait "$v3" || fail "the 3.1.1 subscribers exited $?: $(cat "$WORK/xsub.1.out")"
	wait "$v5" || fail "the 5.0 subscribers exited $?: $(cat "$WORK/xsub.2.out")"
	cat "$WORK/xsub.1.out" "$WORK/xsub.2.out"
	kill -INT "${PEER_XDP_PIDS[@]}" 2>/dev/null
	wait "${PEER_XDP_PIDS[@]}" 2>/dev/null
	local dropped
	dropped=$(tb_srv nft list table inet loss | grep -o 'packets [0-9]*' | grep -o '[0-9]*')
	echo "segments of the 3.1.1 subscribers dropped by the firewall: $dropped"
	[ "${dropped:-0}" -gt 0 ] || fail "the firewall dropped nothing"
	for i in 1 2; do
		local x=$WORK/xsub.$i.json
		expect_eq "$(jget "$x" sessions.completed)" 2 "subscriber sessions completed ($i)"
		expect_eq "$(jget "$x" subscribers.qos)" 1 "the subscription's QoS ($i)"
		expect_eq "$(jget "$x" deliveries.received)" 10000 "deliveries received ($i)"
		deliveries_clean "$x" " ($i)"
		# the QoS-1 publishers' 2 x 2,500 deliveries, not the QoS-0 ones'
		expect_eq "$(jget "$x" deliveries.pubacks_sent)" 5000 "PUBACKs sent ($i)"
	done
	# on duplicate ACKs or after a timeout: either may take them all
	expect_range "$(jget "$WORK/xsub.1.json" segments.again)" 1 1e9 "segments sent again (the firewall's drops)"
	expect_eq "$(grep -cE 'Client (xr-sub|v5)-[0-9]+ disconnected\.$' "$MQ_DIR/mosquitto.log")" 4 "clean disconnects"
	expect_eq "$(grep -c 'protocol error' "$MQ_DIR/mosquitto.log")" 0 "protocol errors in the broker's log"
}

# A responder in XDP answers 20 publishers' 2,000 stamped requests on req/{c} with their stamps on
# res/{c}; subscribers in XDP on res/# (the callers' side) book each answer as the request's publisher
# sent it: every request answered once, in order, timed from its send
test_mqtt_responder_answers() {
	bed --senders 3
	mosquitto_start
	for i in 0 1 2; do peer_xdp_start "$i"; done
	xsub_start 2 2 --subscribe 'res/#' --publishers 20 --messages 100 --wait 40s
	local subs=$XSUB_PID
	xsub_start 1 1 --subscribe 'req/+' --answer 'res/{c}' --client-id 'resp-{c}' \
		--publishers 20 --messages 100 --wait 40s
	local resp=$XSUB_PID
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --topic 'req/{c}' --payload 16 \
		--messages 100 --burst 10 --pps 1000 --count 20 --wait 30s ||
		fail "gen mqtt exited $?: $(cat "$WORK/out")"
	wait "$resp" || fail "the responder exited $?: $(cat "$WORK/xsub.1.out")"
	wait "$subs" || fail "the answers' subscribers exited $?: $(cat "$WORK/xsub.2.out")"
	cat "$WORK/xsub.1.out" "$WORK/xsub.2.out"
	local r=$WORK/xsub.1.json a=$WORK/xsub.2.json
	expect_eq "$(jget "$r" sessions.completed)" 1 "responder sessions completed"
	expect_eq "$(jget "$r" deliveries.received)" 2000 "requests the responder received"
	deliveries_clean "$r" " (requests)"
	expect_eq "$(jget "$r" deliveries.answers_sent)" 2000 "answers sent"
	expect_eq "$(jget "$r" deliveries.pubacks_sent)" 0 "PUBACKs sent by a QoS-0 responder"
	expect_eq "$(jget "$r" subscribers.answer_topic)" 'res/{c}' "the answer topic in the JSON"
	expect_eq "$(jget "$a" sessions.completed)" 2 "answers' subscribers completed"
	expect_eq "$(jget "$a" deliveries.received)" 4000 "answers received (2 x 2,000)"
	deliveries_clean "$a" " (answers)"
	expect_eq "$(jget "$a" deliveries.publishers_complete)" 20 "callers whose every request was answered"
	# publish to answer: the call's round trip through the broker twice
	expect_range "$(jget "$a" deliveries.latency_us.p50)" 1 10e6 "answers' median latency (us)"
	expect_eq "$(jget "$r" segments.again)" 0 "the responder's segments sent again (no loss here)"
	expect_eq "$(grep -c 'protocol error' "$MQ_DIR/mosquitto.log")" 0 "protocol errors in the broker's log"
}

# responder_start PUBLISHERS MESSAGES WAIT: a bed of 2 senders, Mosquitto, and a responder in XDP
# (sender 1) answering req/+ on res/{c}, waiting for MESSAGES from each of PUBLISHERS callers; its
# pid (the shell's that runs it) in XSUB_PID, its JSON in $WORK/xsub.1.json
responder_start() {
	bed --senders 2
	mosquitto_start
	for i in 0 1; do peer_xdp_start "$i"; done
	xsub_start 1 1 --subscribe 'req/+' --answer 'res/{c}' --client-id 'resp-{c}' \
		--publishers "$1" --messages "$2" --wait "$3"
}

# Sync and async calls through Mosquitto: callers in XDP publish stamped requests on req/{c} and wait
# for their answers on res/{c}, which the responder in XDP sends: every call answered once, in order
test_mqtt_calls() {
	responder_start 40 50 40s
	local resp=$XSUB_PID
	# sync: 20 callers x 50 calls, one at a time
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --topic 'req/{c}' --await 'res/{c}' \
		--payload 16 --messages 50 --pps 1000 --count 20 --wait 30s ||
		fail "gen mqtt (sync calls) exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	cp "$WORK/g.json" "$WORK/sync.json"
	# async: 20 more callers x 50 calls, 10 at a time
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --topic 'req/{c}' --await 'res/{c}' \
		--payload 64 --messages 50 --burst 10 --first-seq 20 --pps 1000 --count 20 --wait 30s ||
		fail "gen mqtt (async calls) exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	wait "$resp" || fail "the responder exited $?: $(cat "$WORK/xsub.1.out")"
	cat "$WORK/xsub.1.out"
	for x in sync async; do
		local g=$WORK/$x.json
		[ "$x" = async ] && g=$WORK/g.json
		expect_eq "$(jget "$g" calls.pattern)" "$x" "the pattern ($x)"
		expect_eq "$(jget "$g" sessions.completed)" 20 "callers completed ($x)"
		expect_eq "$(jget "$g" calls.asked)" 1000 "calls asked ($x)"
		expect_eq "$(jget "$g" calls.answered)" 1000 "calls answered ($x)"
		for k in unanswered not_sent lost duplicated reordered foreign unstamped; do
			expect_eq "$(jget "$g" "calls.$k")" 0 "calls $k ($x)"
		done
		expect_eq "$(jget "$g" calls.callers_complete)" 20 "callers whose every call was answered ($x)"
		expect_range "$(jget "$g" calls.ms_each)" 0.001 10000 "ms each ($x)"
	done
	expect_eq "$(jget "$WORK/g.json" calls.window)" 10 "the async window"
	expect_eq "$(jget "$WORK/xsub.1.json" deliveries.received)" 2000 "requests the responder received"
	expect_eq "$(jget "$WORK/xsub.1.json" deliveries.answers_sent)" 2000 "answers sent"
	deliveries_clean "$WORK/xsub.1.json" " (requests)"
	expect_eq "$(grep -c 'protocol error' "$MQ_DIR/mosquitto.log")" 0 "protocol errors in the broker's log"
}

# search drives callers: each trial's callers (rate x time, new numbers each trial) make 10 sync calls
# each through Mosquitto to the responder in XDP; below the broker's limit every session completes
test_mqtt_calls_search() {
	responder_start 100000 1000 90s
	local resp=$XSUB_PID
	tb_gen "$XR" search --witness replies --preset quick --min 50 --max 500 --max-trials 5 \
		--json "$WORK/s.json" -- gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 \
		--username "$MQ_USER" --password "$MQ_PASS" --topic 'req/{c}' --await 'res/{c}' \
		--payload 16 --messages 10 --wait 5s >"$WORK/out" 2>&1 ||
		fail "search exited $?: $(tail -n 5 "$WORK/out")"
	cat "$WORK/out"
	# the responder waits for more than a search sends: stopped (xsub_start's pid is the shell that
	# started it), it reports what it answered
	pkill -TERM -P "$resp"
	wait "$resp"
	cat "$WORK/xsub.1.out"
	search_all_completed 500
	expect_eq "$(jget "$WORK/xsub.1.json" deliveries.foreign)" 0 "requests from callers past the responder's books"
	expect_eq "$(jget "$WORK/xsub.1.json" deliveries.answers_sent)" \
		"$(jget "$WORK/xsub.1.json" deliveries.delivered)" "every request answered"
}

test_mqtt_acl_denied() {
	bed
	mosquitto_start
	peer_xdp
	# 5.0: the broker says so in each PUBACK (0x87, not authorized); every message refused: exit 1
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --mqtt-version 5 --qos 1 --topic 'deny/{c}' \
		--payload 16 --messages 10 --pps 100 --count 20 --wait 5s
	expect_eq "$?" 1 "exit when every message is refused ($(cat "$WORK/out"))"
	cat "$WORK/out"
	grep -q "the broker refused every message (PUBACK reason code 0x87, not authorized): does its ACL let --username publish to --topic?" \
		"$WORK/out" || fail "no verdict line"
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" messages.refused)" 200 "PUBACKs that refuse"
	expect_eq "$(jget "$WORK/g.json" messages.refused_by_code.0x87)" 200 "reason 0x87"
	grep -q "refused (reason codes: 0x87 (not authorized) 200)" "$WORK/out" || fail "no reason line"
	# 3.1.1: PUBACKs that accept, and nothing reaches a subscriber: its count is the only witness
	sub_start 1 'deny/#' -W 4
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 1 --topic 'deny/{c}' \
		--payload 16 --messages 10 --pps 100 --count 20 --wait 5s || fail "gen mqtt exited $?: $(cat "$WORK/out")"
	expect_eq "$(jget "$WORK/g.json" messages.acked)" 200 "3.1.1 PUBACKs"
	wait "$SUB_PID" && fail "the subscriber read a message the ACL denies"
	expect_eq "$(wc -l <"$WORK/sub")" 0 "messages the subscriber read"
}

# Payloads over the broker's limits: over message_size_limit, a 5.0 PUBACK refuses each (0x95,
# packet too large) and a 3.1.1 one takes it and drops it; over max_packet_size, the broker closes
# the connection
test_mqtt_payload_over_broker_limit() {
	bed
	MQ_CONF_EXTRA=$'message_size_limit 1000\nmax_packet_size 3000' mosquitto_start
	peer_xdp
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --mqtt-version 5 --qos 1 --payload 2000 \
		--messages 5 --pps 100 --count 4 --wait 5s
	expect_eq "$?" 1 "exit when every message is refused ($(cat "$WORK/out"))"
	cat "$WORK/out"
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" messages.refused_by_code.0x95)" 20 "PUBACKs that refuse (0x95)"
	grep -q "^xdpreplay gen mqtt: the broker refused every message (PUBACK reason code 0x95, packet too large): is --payload over its message_size_limit?" \
		"$WORK/out" || fail "no verdict line"
	# 3.1.1 has no reason code: PUBACKs that take them, and a subscriber's count is the witness
	sub_start 1 'msg/#' -W 4
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 2000 \
		--messages 5 --pps 100 --count 4 --wait 5s || fail "gen mqtt (3.1.1) exited $?: $(cat "$WORK/out")"
	expect_eq "$(jget "$WORK/g.json" messages.acked)" 20 "3.1.1 PUBACKs"
	wait "$SUB_PID" && fail "the subscriber read a message over the limit"
	# over max_packet_size: the broker closes each connection at its first PUBLISH
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 4000 \
		--messages 5 --pps 100 --count 4 --wait 5s
	expect_eq "$?" 1 "exit when the broker closes every session ($(cat "$WORK/out"))"
	cat "$WORK/out"
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.failed_by.reset)" 4 "sessions reset by the broker"
	# none taken: each not sent whole, or (when its last segment left before the broker's RST came
	# back, as on the xsk engine) sent and never answered
	expect_eq "$(jget "$WORK/g.json" messages.acked)" 0 "messages taken"
	expect_eq "$(($(jget "$WORK/g.json" messages.not_sent) + $(jget "$WORK/g.json" messages.unanswered)))" 20 \
		"messages not sent whole or unanswered"
	grep -q "no session of 4 completed: 4 failed as reset by the server" "$WORK/out" || fail "no verdict line"
	expect_eq "$(grep -c 'disconnected due to oversize packet' "$MQ_DIR/mosquitto.log")" 4 "the broker's oversize closes"
}

test_mqtt_bad_input() {
	for args in "--qos 2" "--client-id fixed" "--client-id {c}{c}" "--burst 0" "--burst 65" \
		"--messages 10 --burst 3" "--payload 65537" "--burst 2 --payload 65536" "--mqtt-version 4.0" "--topic msg/#" \
		"--keepalive 1d" "--messages 0" "--subscribe msg/#" "--publishers 3" \
		"--subscribe msg/# --publishers 2 --payload 16" "--subscribe msg/# --publishers 5000000" \
		"--subscribe msg/# --publishers 2 --duration 5s" "--subscribe msg/# --publishers 0" \
		"--answer res/{c}" "--subscribe req/+ --publishers 2 --answer res/#" \
		"--subscribe req/+ --publishers 2 --answer res/{c}{c}" \
		"--subscribe req/+ --publishers 2 --qos 1 --answer res/{c}" \
		"--subscribe req/+ --publishers 2 --answer res/{c}/$(printf '%048d' 0)" \
		"--await res/x --payload 16" "--await res/{c} --payload 8" \
		"--await res/{c} --payload 16 --qos 1" \
		"--await res/{c} --payload 16 --count 5000000" "--pattern ping" "--pattern notify" \
		"--peer veth9" "--subscribers 2" "--pattern fire --qos 1" "--pattern fire --peer veth9" \
		"--pattern sync --peer veth9 --burst 5" "--pattern notify --peer veth9 --payload 8" \
		"--pattern notify --peer veth9 --duration 5s" "--pattern sync --peer veth9 --subscribers 2" \
		"--pattern async --peer veth9 --subscribe msg/#" "--pattern sync --peer veth9 --qos 1" \
		"--pattern notify --peer lo --count 2" "--msg-rate 0" "--msg-rate fast" \
		"--msg-rate 1k --subscribe msg/# --publishers 2" "--msg-rate 1k --await res/{c} --payload 16" \
		"--msg-rate 1k --duration 5s" "--msg-rate 1k --concurrency 4" "--msg-rate 1k --shard 0/2" \
		"--subscribe msg/# --publishers 2 --keepalive 5s"; do
		# shellcheck disable=SC2086
		"$XR" gen mqtt -i lo --dst 198.18.0.2 --count 1 $args >"$WORK/out" 2>&1
		rc=$?
		expect_eq "$rc" 2 "exit for '$args' ($(cat "$WORK/out"))"
		expect_eq "$(wc -l <"$WORK/out")" 1 "lines for '$args' ($(cat "$WORK/out"))"
	done
	# search runs no other end: said before any trial
	"$XR" search --witness replies -- gen mqtt -i lo --dst 198.18.0.2 --pattern notify --peer lo \
		--count 1 >"$WORK/out" 2>&1
	expect_eq "$?" 2 "exit for --pattern under search ($(cat "$WORK/out"))"
	expect_eq "$(wc -l <"$WORK/out")" 1 "lines for --pattern under search ($(cat "$WORK/out"))"
	# search's own options | the trial's
	for args in "|--msg-rate 1k" "|--msg-rate search" "|--msg-rate search --count 2 --messages 4" \
		"|--msg-rate search --count 2 --wait 1s" "|--msg-rate search --count 2000" \
		"|--msg-rate search --count 2 --subscribe msg/# --publishers 2" \
		"|--msg-rate search --count 100"; do
		# shellcheck disable=SC2086
		"$XR" search --witness replies --min 500 --max 10M ${args%%|*} -- gen mqtt -i lo \
			--dst 198.18.0.2 ${args#*|} >"$WORK/out" 2>&1
		expect_eq "$?" 2 "exit for '$args' under search ($(cat "$WORK/out"))"
		expect_eq "$(wc -l <"$WORK/out")" 1 "lines for '$args' under search ($(cat "$WORK/out"))"
	done
	"$XR" gen mqtt -i lo --dst 198.18.0.2 --count 2 --msg-rate search >"$WORK/out" 2>&1
	expect_eq "$?" 2 "exit for --msg-rate search outside search ($(cat "$WORK/out"))"
	expect_eq "$(wc -l <"$WORK/out")" 1 "lines for --msg-rate search outside search ($(cat "$WORK/out"))"
	# a broker that is down: every SYN answered by a RST, counted as refused, messages not sent
	bed
	mqtt_gen --qos 1 --messages 5 --pps 100 --count 10 --wait 2s
	messages_add_up
	expect_eq "$(jget "$WORK/g.json" sessions.failed_by.refused)" 10 "sessions refused (RST to the SYN)"
	expect_eq "$(jget "$WORK/g.json" messages.not_sent)" 50 "messages not sent"
}

# paced: messages/s: is the fraction of the schedule's time the answers took (wide margins: a test bed)
paced_check() {
	python3 - "$WORK/g.json" "$1" "$2" <<-'PY' || fail "the paced run: $(cat "$WORK/out")"
	import json, sys
	g = json.load(open(sys.argv[1]))
	p, m = g["messages"]["pace"], g["messages"]
	bursts, rate = int(sys.argv[2]), float(sys.argv[3])
	print("pace:", p)
	assert p["departures"] == bursts and p["reached"] == bursts, p
	# every burst sent once, at its departure by the pacer or late by XDP: the gate's books
	assert p["at_departure"] + p["late"] == bursts, p
	assert p["gate_mismatched"] == 0, p
	assert m["acked"] == m["asked"], m
	assert abs(p["per_s"] - rate) < 1e-6 * rate, p
	PY
}

# --msg-rate: every publisher connected first, then a precise total rate over all of them. 20
# publishers x 100 QoS-0 messages at 2,000/s take 1 s, each burst sent at its departure; mosquitto_sub
# reads them once and in order. Two QoS-1 publishers asked for 50,000/s each, one message in flight,
# cannot keep up: their bursts go late, as each PUBACK comes, every one once. 3,000-byte messages
# (three segments each) paced too.
test_mqtt_msg_rate() {
	bed
	mosquitto_start
	count_start --tcp --dport 1883 --duration 120s --idle 5s --json "$WORK/c.json"
	sub_start 2000 'msg/#'
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 0 --payload 32 --messages 100 \
		--burst 1 --count 20 --msg-rate 2k --wait 5s || fail "gen mqtt exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	wait "$SUB_PID" || fail "mosquitto_sub exited $? after $(wc -l <"$WORK/sub") messages: $(cat "$WORK/sub.err")"
	messages_add_up
	paced_check 2000 2000
	sub_check 20 100
	grep -q "paced: 2000 bursts at 2.00k/s over 1.000 s, once each" "$WORK/out" || fail "no pace line: $(cat "$WORK/out")"
	# the schedule is 1 s: the answers span it (a test bed's margins), most bursts at their departure
	expect_range "$(jget "$WORK/g.json" messages.pace.seconds | cut -d. -f1)" 0 2 "seconds of the schedule"
	expect_range "$(jget "$WORK/g.json" messages.pace.answered_per_s | cut -d. -f1)" 1000 2100 "messages/s"
	expect_range "$(jget "$WORK/g.json" messages.pace.at_departure)" 1000 2000 "bursts at their departure"

	SUB_QOS=1 sub_start 1000 'msg/#'
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 32 --messages 500 \
		--burst 1 --count 2 --msg-rate 100k --first-seq 100 --wait 5s ||
		fail "gen mqtt exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	wait "$SUB_PID" || fail "mosquitto_sub exited $? after $(wc -l <"$WORK/sub") messages: $(cat "$WORK/sub.err")"
	messages_add_up
	paced_check 1000 100000
	expect_range "$(jget "$WORK/g.json" messages.pace.late)" 500 1000 "bursts sent late"
	sub_check 2 500

	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 3000 --messages 20 \
		--burst 1 --count 10 --msg-rate 1k --first-seq 200 --wait 5s ||
		fail "gen mqtt exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	messages_add_up
	paced_check 200 1000
	expect_eq "$(jget "$WORK/g.json" sessions.completed)" 10 "sessions completed"
	count_wait
	expect_eq "$(grep -c 'protocol error' "$MQ_DIR/mosquitto.log")" 0 "protocol errors in the broker's log"
}

# A paced run that outlasts the keep-alive: each publisher publishes every 2 s with a keep-alive of
# 1 s, which Mosquitto enforces at 1.5 s; the publishers' PINGREQs in between keep them connected
# (2 bytes each of the stream: the messages after them must still be whole, once and in order). At
# QoS 0 a burst's own PINGRESP follows the keep-alive's, told apart in XDP.
test_mqtt_msg_rate_keepalive() {
	bed
	mosquitto_start
	# the XDP program on the server's side that takes our XDP_TX segments at once (veth): without
	# it a segment waits for srv0's next frame, and one CI run (under ASan) lost a session to that
	count_start --any -q --duration 10m
	local qos
	for qos in 1 0; do
		SUB_QOS=$qos sub_start 6 'msg/#'
		mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos "$qos" --payload 32 --messages 3 \
			--burst 1 --count 2 --msg-rate 1 --keepalive 1s --first-seq $((qos * 10)) --wait 5s ||
			fail "gen mqtt (QoS $qos) exited $?: $(cat "$WORK/out")"
		cat "$WORK/out"
		wait "$SUB_PID" || fail "mosquitto_sub exited $? after $(wc -l <"$WORK/sub") messages: $(cat "$WORK/sub.err")"
		messages_add_up
		paced_check 6 1
		expect_eq "$(jget "$WORK/g.json" sessions.completed)" 2 "sessions completed (QoS $qos)"
		python3 - "$WORK/g.json" <<-'PY' || fail "keep-alive books: $(cat "$WORK/out")"
		import json, sys
		k = json.load(open(sys.argv[1]))["messages"]["pace"]["keepalive"]
		print("keep-alive:", k)
		# 2 publishers idle ~2 s between bursts (and ~1 s before their first), pinged after 0.5 s
		assert k["seconds"] == 1 and 4 <= k["pings"] <= 40, k
		assert k["answered"] == k["pings"], k
		PY
		sub_check 2 3
	done
	# every third PINGREQ lost on its way: it goes again, and what follows it waits for it
	tb_srv nft -f - <<-NFT || fail "nft"
	table inet loss {
		chain in {
			type filter hook input priority 0;
			tcp dport 1883 ip length 42 @th,160,16 0xc000 numgen inc mod 3 == 0 counter drop
		}
	}
	NFT
	SUB_QOS=1 sub_start 6 'msg/#'
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --qos 1 --payload 32 --messages 3 \
		--burst 1 --count 2 --msg-rate 1 --keepalive 1s --first-seq 20 --wait 5s ||
		fail "gen mqtt (PINGREQs lost) exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	wait "$SUB_PID" || fail "mosquitto_sub exited $? after $(wc -l <"$WORK/sub") messages: $(cat "$WORK/sub.err")"
	messages_add_up
	paced_check 6 1
	local dropped
	dropped=$(tb_srv nft list table inet loss | grep -o 'packets [0-9]*' | grep -o '[0-9]*')
	echo "PINGREQs dropped by the firewall: $dropped"
	expect_range "${dropped:-0}" 1 1000 "PINGREQs dropped"
	expect_range "$(jget "$WORK/g.json" messages.pace.keepalive.again)" "$dropped" 1000 "PINGREQs sent again"
	expect_eq "$(jget "$WORK/g.json" messages.pace.keepalive.answered)" \
		"$(jget "$WORK/g.json" messages.pace.keepalive.pings)" "PINGRESPs"
	sub_check 2 3
	expect_eq "$(grep -c 'exceeded timeout' "$MQ_DIR/mosquitto.log")" 0 "clients the broker timed out"
	expect_eq "$(grep -c 'protocol error' "$MQ_DIR/mosquitto.log")" 0 "protocol errors in the broker's log"
	kill -INT "$COUNT_PID"
	wait "$COUNT_PID"
}

# search over --msg-rate: the broker's limit in messages/s. Each trial paces its rate over its own
# 20 publishers (rate x 0.5 s / 20 messages each) and counts what was answered by the schedule's
# end and --settle. Below Mosquitto's limit every QoS-1 message of every trial is PUBACKed; far
# above it (400k/s, notifications at QoS 0 to two subscribers on the peer) the deliveries that
# have not come by then are lost to the trial, and the bound falls between
test_mqtt_msg_rate_search() {
	bed --senders 2
	mosquitto_start
	for i in 0 1; do peer_xdp_start "$i"; done
	tb_gen "$XR" search --witness replies --preset quick --min 1k --max 8k --max-trials 3 \
		--json "$WORK/s.json" -- gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 \
		--username "$MQ_USER" --password "$MQ_PASS" --qos 1 --count 20 --msg-rate search \
		>"$WORK/out" 2>&1 || fail "search exited $?: $(tail -n 5 "$WORK/out")"
	cat "$WORK/out"
	search_all_completed 8000
	grep -q "search: 1.00k to 8.00k messages/s" "$WORK/out" || fail "no load unit: $(head -n 2 "$WORK/out")"
	python3 - "$WORK/s.json" "$(grep -c ' as xr-[0-9]' "$MQ_DIR/mosquitto.log")" <<-'PY' ||
	import json, math, sys
	s = json.load(open(sys.argv[1]))
	assert s["settings"]["load_unit"] == "messages", s["settings"]
	for t in s["trials"]:
	    assert t["asked"] == 20 * math.ceil(t["offered_pps"] * 0.5 / 20), t
	    assert t["sent"] == t["asked"] and t["received_over_s"] >= 0.5, t
	# the same 20 publishers' numbers in each trial's own run: 20 connections a trial
	assert int(sys.argv[2]) == 20 * len(s["trials"]), sys.argv[2]
	PY
		fail "the paced trials: $(cat "$WORK/out")"

	tb_gen "$XR" search --witness replies --preset quick --min 2k --max 400k --max-trials 5 \
		--goal NDR=0 --json "$WORK/s2.json" -- gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" \
		--src 198.18.64.0/23 --username "$MQ_USER" --password "$MQ_PASS" --pattern notify \
		--peer "$TB_GEN_IF" --peer-netns "$(tb_gen_ns 1)" --subscribers 2 --count 20 \
		--msg-rate search --first-seq 1000000 >"$WORK/out" 2>&1
	x=$?
	cat "$WORK/out"
	expect_range "$x" 0 1 "search's exit (1: its trial limit)"
	python3 - "$WORK/s2.json" <<-'PY' || fail "the notifications' trials: $(cat "$WORK/out")"
	import json, math, sys
	s = json.load(open(sys.argv[1]))
	g, trials = s["goals"][0], s["trials"]
	print("NDR:", g["lower"], g["upper"])
	for t in trials:
	    # received: the deliveries over the two subscribers; never more than was sent
	    assert t["asked"] == 20 * math.ceil(t["offered_pps"] * 0.5 / 20), t
	    assert t["received"] <= t["sent"] <= t["asked"], t
	top = [t for t in trials if t["offered_pps"] == 400000]
	assert top and all(t["loss"] > 0 for t in top), top
	# where the bound lies is the broker's speed on this host (a busy one found every trial of
	# five lossy): scripts/bench-mqtt-notify-search.sh holds it to at least 2,000/s; here the bounds only
	# bracket the trials
	assert g["lower"] < 400000 and g["upper"] > g["lower"], g
	PY
	local lower
	lower=$(jget "$WORK/s2.json" goals.0.lower)
	[ -n "${XR_BENCH_OUT:-}" ] && echo "$lower" >>"$XR_BENCH_OUT"
	[ -n "${XR_BENCH:-}" ] && expect_range "$lower" 2000 400000 "the notifications' NDR (messages/s)"
	expect_eq "$(grep -c 'protocol error' "$MQ_DIR/mosquitto.log")" 0 "protocol errors in the broker's log"
}

# The published flood benchmark's four patterns, one command each: the other end (subscribers, a
# responder) runs in a child process on the second sender's interface, ready before the first
# message; its figures are in the run's report
test_mqtt_patterns() {
	bed --senders 2
	mosquitto_start
	for i in 0 1; do peer_xdp_start "$i"; done
	local peer=(--peer "$TB_GEN_IF" --peer-netns "$(tb_gen_ns 1)") x
	# fire & forget: QoS 0, nobody listens
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --pattern fire --payload 1024 --messages 100 \
		--count 10 --pps 1000 --wait 5s || fail "--pattern fire exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	expect_eq "$(jget "$WORK/g.json" pattern.name)" fire "pattern (fire)"
	expect_eq "$(jget "$WORK/g.json" pattern.count)" 1000 "messages the broker took (fire)"
	expect_eq "$(jget "$WORK/g.json" messages.qos)" 0 "fire & forget's QoS"
	# notifications: 10 publishers x 100 messages of 1 KB, each to 3 subscribers, QoS 1 both ways;
	# the broker's count of what it dropped read too (mqtt_broker_stats has it drop some)
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --pattern notify "${peer[@]}" --subscribers 3 \
		--qos 1 --payload 1024 --messages 100 --count 10 --pps 1000 --wait 10s --broker-stats ||
		fail "--pattern notify exited $?: $(cat "$WORK/out")"
	cat "$WORK/out"
	cp "$WORK/g.json" "$WORK/notify.json"
	expect_eq "$(jget "$WORK/g.json" pattern.count)" 1000 "messages the broker took (notify)"
	expect_eq "$(jget "$WORK/g.json" pattern.peer.sessions)" 3 "subscribers"
	expect_eq "$(jget "$WORK/g.json" pattern.peer.subacked)" 3 "subscriptions granted"
	expect_eq "$(jget "$WORK/g.json" pattern.peer.expected)" 3000 "deliveries expected"
	expect_eq "$(jget "$WORK/g.json" pattern.peer.received)" 3000 "deliveries received"
	for x in lost duplicated reordered; do
		expect_eq "$(jget "$WORK/g.json" "pattern.peer.$x")" 0 "deliveries $x"
	done
	expect_eq "$(jget "$WORK/g.json" pattern.peer.exit)" 0 "the subscribers' exit (they end by themselves)"
	grep -q "subscribers on $TB_GEN_IF: subscribed 3 of 3; 3000 of 3000 deliveries, 0 lost" "$WORK/out" ||
		fail "no subscribers' line"
	expect_eq "$(jget "$WORK/g.json" pattern.peer.broker_dropped)" 0 "deliveries the broker dropped"
	expect_eq "$(jget "$WORK/g.json" pattern.peer.lost_unattributed)" 0 "lost deliveries not attributed"
	grep -q "^  lost: 0; the broker dropped 0 " "$WORK/out" || fail "no attribution line: $(cat "$WORK/out")"
	# sync calls: 5 callers x 40 calls, one at a time; async: 5 x 50, 10 at a time (the default window)
	for x in sync async; do
		mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --pattern "$x" "${peer[@]}" --payload 64 \
			--messages "$([ $x = sync ] && echo 40 || echo 50)" --count 5 --pps 1000 --wait 10s ||
			fail "--pattern $x exited $?: $(cat "$WORK/out"); the broker's sockets then: $(tb_srv ss -tan)"
		cat "$WORK/out"
		local n=$([ $x = sync ] && echo 200 || echo 250)
		expect_eq "$(jget "$WORK/g.json" calls.pattern)" "$x" "calls' pattern ($x)"
		expect_eq "$(jget "$WORK/g.json" pattern.count)" "$n" "calls answered ($x)"
		expect_eq "$(jget "$WORK/g.json" calls.answered)" "$n" "calls answered, the callers' books ($x)"
		expect_eq "$(jget "$WORK/g.json" pattern.window)" "$([ $x = sync ] && echo 1 || echo 10)" "window ($x)"
		expect_eq "$(jget "$WORK/g.json" pattern.peer.received)" "$n" "requests the responder read ($x)"
		expect_eq "$(jget "$WORK/g.json" pattern.peer.answers)" "$n" "answers the responder sent ($x)"
		for k in lost duplicated reordered; do
			expect_eq "$(jget "$WORK/g.json" "calls.$k")" 0 "answers $k ($x)"
		done
		expect_range "$(jget "$WORK/g.json" pattern.ms_each)" 0.001 10000 "ms each ($x)"
	done
	expect_eq "$(grep -c 'protocol error' "$MQ_DIR/mosquitto.log")" 0 "protocol errors in the broker's log"
	# an other end that cannot start: its own line, then this run's, and nothing sent
	rm -f "$WORK/g.json"
	mqtt_gen --username "$MQ_USER" --password "$MQ_PASS" --pattern notify --peer nosuch0 \
		--messages 10 --count 2 --wait 2s
	x=$?
	cat "$WORK/out"
	expect_range "$x" 2 3 "exit with an other end that cannot start"
	grep -q "nosuch0" "$WORK/out" || fail "no line names the interface"
	grep -q "ended before it was ready" "$WORK/out" || fail "no line says the run did not start"
	[ -e "$WORK/g.json" ] && fail "the publishers ran without their subscribers"
	return 0
}

# search drives a pattern: each trial starts its own subscribers, numbered from the trial's first
# publisher; a trial's witness is its publishers whose every message reached both subscribers, its
# latency publish to delivery. Below the broker's limit every trial is whole
test_mqtt_pattern_search() {
	bed --senders 2
	mosquitto_start
	for i in 0 1; do peer_xdp_start "$i"; done
	tb_gen "$XR" search --witness replies --preset quick --min 20 --max 200 --max-trials 4 \
		--json "$WORK/s.json" -- gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 \
		--username "$MQ_USER" --password "$MQ_PASS" --pattern notify --peer "$TB_GEN_IF" \
		--peer-netns "$(tb_gen_ns 1)" --subscribers 2 --payload 64 --messages 10 --wait 2s \
		>"$WORK/out" 2>&1 || fail "search exited $?: $(tail -n 5 "$WORK/out")"
	cat "$WORK/out"
	search_all_completed 200
	# two subscribers of their own per trial
	expect_eq "$(grep -c ' as xr-sub-' "$MQ_DIR/mosquitto.log")" \
		"$(python3 -c 'import json,sys; print(2 * len(json.load(open(sys.argv[1]))["trials"]))' "$WORK/s.json")" \
		"the subscribers' connections in the broker's log"
}

test_mqtt_search() {
	bed
	mosquitto_start
	count_start --tcp --dport 1883 --duration 120s --idle 30s
	# below what Mosquitto takes here: never saturated, every session (10 QoS-1 messages) completed
	tb_gen "$XR" search --witness replies --preset quick --min 100 --max 1000 --max-trials 6 \
		--json "$WORK/s.json" -- gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 \
		--username "$MQ_USER" --password "$MQ_PASS" --qos 1 --messages 10 --wait 5s \
		>"$WORK/out" 2>&1 || fail "search exited $?: $(tail -n 5 "$WORK/out")"
	kill -INT "$COUNT_PID"
	count_wait
	# the witness is the sessions completed: each trial's sessions, all of them
	search_all_completed 1000
}
