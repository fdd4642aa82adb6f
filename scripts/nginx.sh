# SPDX-License-Identifier: GPL-2.0
# nginx for the test bed (sourced by tests/t_tcp.sh): one worker serving a 600-byte index.html, a
# 100 KB big.html, the same chunked under /chunked/, /long-header (a 3 KB header field) and /post
# (reads any body up to 1 MiB whole, answers "ok"), http://127.0.0.1:8081/status its stub_status,
# every request in DIR/access.log as
# "ADDR STATUS REQUEST_LENGTH BODY_BYTES_SENT CONNECTION_REQUESTS URI" (request_length counts the request
# line, header and body: a request that arrived whole).
#   nginx_conf DIR ADDR [BACKLOG]   writes DIR/nginx.conf; start with: nginx -c DIR/nginx.conf -p DIR
#   nginx_wait NS ADDR PID          until nginx listens on ADDR:80 in namespace NS (5 s at most)
nginx_conf() {
	local d=$1 addr=$2 backlog=${3:-4096}
	mkdir -p "$d/www" "$d/tmp"
	head -c 600 /dev/zero | tr '\0' 'a' >"$d/www/index.html"
	# 100 KB of text lines, for responses of many segments
	seq -f 'line %06g of big.html' 1 4762 >"$d/www/big.html"
	cat >"$d/nginx.conf" <<-CONF
	worker_processes 1;
	daemon off;
	master_process on;
	user root root;
	pid $d/nginx.pid;
	error_log $d/error.log warn;
	worker_rlimit_nofile 20000;
	events { worker_connections 16384; }
	http {
		log_format bench '\$remote_addr \$status \$request_length \$body_bytes_sent \$connection_requests \$request_uri';
		access_log $d/access.log bench;
		client_body_temp_path $d/tmp;
		proxy_temp_path $d/tmp;
		fastcgi_temp_path $d/tmp;
		uwsgi_temp_path $d/tmp;
		scgi_temp_path $d/tmp;
		keepalive_requests 100000;
		server {
			listen $addr:80 backlog=$backlog;
			location / { root $d/www; }
			# the same files with their length unknown (a filter rewrites them): chunked
			location /chunked/ {
				alias $d/www/;
				sub_filter 'line' 'LINE';
				sub_filter_once off;
			}
			# a response header longer than a segment
			location = /long-header {
				add_header X-Long "$(head -c 3000 /dev/zero | tr '\0' 'x')";
				return 200 "ok\n";
			}
			# proxied, so that nginx reads each body whole before it answers (a bare return
			# answers at once and drops the body unread)
			location /post {
				client_max_body_size 1m;
				client_body_buffer_size 1m;
				proxy_pass http://127.0.0.1:8081;
			}
		}
		server {
			listen 127.0.0.1:8081;
			access_log off;
			# its connections at one moment (stub_status: Active counts this request's own)
			location = /status { stub_status; }
			location / { return 200 "ok\n"; }
		}
	}
	CONF
}

nginx_wait() { tb_wait_listen "$1" tcp "$2:80" "$3"; }
