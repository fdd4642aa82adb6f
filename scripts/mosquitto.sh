# SPDX-License-Identifier: GPL-2.0
# Mosquitto for the test bed and benchmarks (sourced), configured as the published "flood"
# benchmark's broker: per-listener settings, QoS up to 1, no persistence, 10,000 queued messages
# per client, no anonymous clients, a password file and an ACL (msg/#, req/#, res/# readwrite; $SYS/#
# read), $SYS updated every second.
#   mosquitto_conf DIR ADDR USER PASSWORD   writes DIR/mosquitto.conf (run: mosquitto -c DIR/mosquitto.conf)
#   mosquitto_wait NS ADDR PID              until it listens on ADDR:1883 in namespace NS (5 s at most)
mosquitto_conf() {
	local d=$1 addr=$2 user=$3 pass=$4
	mkdir -p "$d"
	mosquitto_passwd -b -c "$d/passwd" "$user" "$pass" || return 1
	# $SYS/# read: gen mqtt --broker-stats reads the broker's count of dropped deliveries there
	printf 'user %s\ntopic readwrite msg/#\ntopic readwrite req/#\ntopic readwrite res/#\ntopic read $SYS/#\n' \
		"$user" >"$d/acl"
	cat >"$d/mosquitto.conf" <<-CONF
	# as root, so that it reads its files in DIR and does not change user
	user root
	per_listener_settings true
	persistence false
	max_queued_messages 10000
	max_inflight_messages 20
	# the broker's SYS tree every second (10 by default): --broker-stats waits for two updates
	sys_interval 1
	log_dest file $d/mosquitto.log
	log_type error
	log_type warning
	log_type notice
	# each SUBSCRIBE, as "TIME: CLIENT QOS TOPIC": the tests know a subscriber ready from it
	log_type subscribe
	listener 1883 $addr
	max_qos 1
	max_connections -1
	allow_anonymous false
	password_file $d/passwd
	acl_file $d/acl
	CONF
}

mosquitto_wait() { tb_wait_listen "$1" tcp "$2:1883" "$3"; }
