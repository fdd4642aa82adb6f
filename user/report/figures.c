// SPDX-License-Identifier: GPL-2.0
/* The figures of xdpreplay's results, held once (report/figures.h). */
#include <string.h>
#include "report/figures.h"

static const struct figure_doc figures[] = {
	/* a sender's (replay, gen, lorawan send) */
	{ "command_line", "command line", "text", "the command as it was given" },
	{ "interface", "interface", "text", "the interface it sent from" },
	{ "engine", "engine", "text",
	  "kernel (BPF_PROG_RUN live frames) or xsk (AF_XDP), and its mode" },
	{ "threads", "threads", "", "sender threads, one per CPU" },
	{ "target.pps", "rate asked", "/s", "the frames per second asked for (--pps, --rate)",
	  "xdpreplay_sender_target_pps" },
	{ "asked", "asked", "", "frames the run was asked to send" },
	{ "sent", "sent", "", "frames the driver took", "xdpreplay_sender_sent" },
	{ "failed", "not sent", "",
	  "frames asked for and not sent, each with its reason (failed_reasons)",
	  "xdpreplay_sender_failed" },
	{ "failed_reasons.driver_refused", "refused by the driver", "",
	  "the transmit ring was full (or the peer had no NAPI)" },
	{ "failed_reasons.redirect_error", "refused before the driver", "",
	  "the kernel refused the redirect (xdp_redirect_err)" },
	{ "failed_reasons.bad_frame", "could not be built", "",
	  "a frame its hook could not build" },
	{ "failed_reasons.interrupted", "interrupted", "", "due after SIGINT or SIGTERM" },
	{ "failed_reasons.duration_reached", "--duration reached", "", "due after --duration" },
	{ "failed_reasons.fell_behind", "fell behind", "",
	  "due before the end, but the sender fell behind its schedule" },
	{ "failed_reasons.device_error", "device failed", "", "the device failed first" },
	{ "failed_reasons.unaccounted", "no outcome", "", "no outcome reported: a bug" },
	{ "pps", "rate", "/s", "frames sent per second (count: matched, first to last)" },
	{ "bps", "bit rate", "bit/s", "on the wire, with preamble, gap and FCS" },
	{ "bytes", "bytes sent", "B", "frame bytes sent", "xdpreplay_sender_bytes" },
	{ "duration_s", "duration", "s",
	  "from the first frame to the last (count: the whole count)" },
	{ "replies.syn_acks", "SYN-ACKs", "", "SYN-ACKs matched to a SYN of this run" },
	{ "replies.unanswered", "unanswered", "", "frames sent no answer matched" },
	{ "replies.rsts", "RSTs", "", "RSTs the server answered with" },
	{ "replies.retransmits", "SYN-ACKs again", "", "SYN-ACKs the server sent again" },
	{ "replies.unmatched", "unmatched answers", "", "answers that matched nothing sent" },
	{ "replies.completed", "handshakes completed", "", "gen syn --complete's ACKs" },
	{ "replies.closed", "closed", "", "sessions the server closed (gen syn --complete)" },
	{ "replies.syn_acks_per_s", "SYN-ACK rate", "/s", "SYN-ACKs per second" },
	{ "replies.completed_per_s", "handshake rate", "/s", "handshakes completed per second" },
	{ "replies.answers", "DNS answers", "", "answers matched by id and port" },
	{ "replies.answers_per_s", "DNS answer rate", "/s", "answers per second" },
	{ "replies.push_acks", "PUSH_ACKs", "", "PUSH_ACKs matched to a PUSH_DATA" },
	{ "replies.push_ack_dups", "PUSH_ACKs again", "",
	  "a PUSH_DATA's PUSH_ACK after its first" },
	{ "replies.push_acks_per_s", "PUSH_ACK rate", "/s", "PUSH_ACKs per second" },
	{ "replies.rtt_us.p50", "round trip p50", "us", "half the answers came sooner" },
	{ "replies.rtt_us.p90", "round trip p90", "us", "90% of the answers came sooner" },
	{ "replies.rtt_us.p99", "round trip p99", "us", "99% of the answers came sooner" },
	{ "replies.rtt_us.p99.9", "round trip p99.9", "us", "99.9% of the answers came sooner" },
	{ "replies.rtt_us.p99.99", "round trip p99.99", "us", "99.99% of the answers came sooner" },
	{ "replies.rtt_us.max", "round trip max", "us", "the slowest answer" },
	{ "sessions.asked", "sessions asked", "", "TCP sessions asked for" },
	{ "sessions.completed", "sessions completed", "", "sessions answered in full and closed",
	  "xdpreplay_sessions_completed" },
	{ "sessions.failed", "sessions failed", "", "sessions that ended otherwise, by reason" },
	{ "sessions.completed_per_s", "session rate", "/s", "sessions completed per second" },
	{ "messages.acked", "messages acknowledged", "", "MQTT QoS 1 PUBACKs",
	  "xdpreplay_mqtt_acked" },
	/* count's */
	{ "iface", "interface", "text", "the interface counted" },
	{ "matched", "arrived", "", "frames that matched count's filter",
	  "xdpreplay_count_matched" },
	{ "seen", "seen by XDP", "", "every frame count's XDP program saw",
	  "xdpreplay_count_seen" },
	{ "passed", "passed to the stack", "", "matched frames XDP passed on" },
	{ "xdp_dropped", "dropped in XDP", "", "matched frames count --drop dropped",
	  "xdpreplay_count_xdp_dropped" },
	{ "first_to_last_s", "first to last", "s", "from the first matched frame to the last" },
	{ "delivered", "delivered to sockets", "", "UDP read or queued, TCP taken by sockets",
	  "xdpreplay_delivered" },
	{ "attribution.iface_rx_dropped", "interface drops", "", "the driver's rx_dropped" },
	{ "attribution.softnet_dropped", "backlog drops", "", "the CPUs' softnet backlog full" },
	{ "attribution.xdp_dropped", "dropped in XDP", "", "count --drop's" },
	{ "attribution.firewall_dropped", "firewall drops", "",
	  "nftables rules' counters (--nft)" },
	{ "attribution.ip_discarded", "IP discards", "", "IP's InDiscards" },
	{ "attribution.udp_delivered", "UDP delivered", "", "UDP's InDatagrams" },
	{ "attribution.udp_rcvbuf_errors", "UDP buffer full", "", "UDP's RcvbufErrors" },
	{ "attribution.udp_no_ports", "UDP no socket", "", "UDP's NoPorts" },
	{ "attribution.udp_other_errors", "UDP other errors", "", "UDP's InErrors less the above" },
	{ "attribution.tcp_listen_drops", "TCP listen drops", "", "TCP's ListenDrops" },
	{ "attribution.tcp_listen_overflows", "TCP listen overflows", "", "TCP's ListenOverflows" },
	{ "attribution.tcp_syncookies_sent", "SYN cookies", "", "TCP's SyncookiesSent" },
	{ "attribution.tcp_reqq_full_drops", "SYN queue full", "", "TCP's TCPReqQFullDrop" },
	{ "attribution.*", "where it went", "",
	  "where what arrived went, by stage (the rows above)", "xdpreplay_attribution" },
	{ "drops.inbound.*", "dropped by the kernel:", "", "skb:kfree_skb inbound, by reason" },
	{ "drops.inbound_total", "dropped by the kernel", "", "every inbound reason's, summed" },
	{ "books.unattributed", "unattributed", "",
	  "passed to the stack, neither delivered nor dropped (yet)", "xdpreplay_unattributed" },
	/* a search's */
	{ "offered_pps", "load offered", "/s", "the trial's rate" },
	{ "received", "received", "", "what the witness counted in the trial" },
	{ "loss", "loss", "", "the share of what was sent that was not received" },
	{ "p99_us", "p99", "us", "the trial's round trip p99" },
	{ "lower", "lower bound", "/s", "the highest load that met the goal" },
	{ "upper", "upper bound", "/s", "the lowest load that did not" },
	{ "conditional_throughput", "conditional throughput", "/s",
	  "what was received at the lower bound (RFC 9971)" },
};

const struct figure_doc *figure_find(const char *path)
{
	for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++) {
		const char *p = figures[i].path;
		size_t n = strlen(p);

		if (!strcmp(p, path))
			return &figures[i];
		/* a family: "drops.inbound.*" holds "drops.inbound.NO_SOCKET" */
		if (n > 2 && !strcmp(p + n - 2, ".*") && !strncmp(p, path, n - 1) && path[n - 1])
			return &figures[i];
	}
	return NULL;
}

const char *figure_label(const char *path, char *buf, size_t len)
{
	const struct figure_doc *f = figure_find(path);
	size_t n;

	if (!f) {
		snprintf(buf, len, "%s", path);
		return buf;
	}
	n = strlen(f->path);
	/* a family's member: its label, then the member's own name */
	if (!strcmp(f->path + n - 2, ".*"))
		snprintf(buf, len, "%s %s", f->label, path + n - 1);
	else if (f->unit[0] && strcmp(f->unit, "text"))
		snprintf(buf, len, "%s (%s)", f->label, f->unit);
	else
		snprintf(buf, len, "%s", f->label);
	return buf;
}

void figures_markdown(FILE *f)
{
	fputs("| JSON path | label | unit | meaning | Prometheus |\n|---|---|---|---|---|\n", f);
	for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++) {
		fprintf(f, "| `%s` | %s | %s | %s |", figures[i].path, figures[i].label,
			figures[i].unit[0] ? figures[i].unit : "count", figures[i].meaning);
		if (figures[i].metric)
			fprintf(f, " `%s` |\n", figures[i].metric);
		else
			fputs(" |\n", f);
	}
}

const struct figure_doc *figure_of_metric(const char *metric)
{
	for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++)
		if (figures[i].metric && !strcmp(figures[i].metric, metric))
			return &figures[i];
	return NULL;
}

void figure_prom_family(struct prom *p, const char *metric, enum prom_type type)
{
	const struct figure_doc *d = figure_of_metric(metric);
	char help[256];

	/* a family without a figure is a mistake here, but its scrape still lints */
	if (d)
		snprintf(help, sizeof(help), "%s: %s (JSON %s)", d->label, d->meaning, d->path);
	else
		snprintf(help, sizeof(help), "%s", metric);
	prom_family(p, metric, type, help);
}
