// SPDX-License-Identifier: GPL-2.0
/* The protocols, by name: what gen NAME, replay, lorawan send and search find. */
#include <string.h>
#include "proto/proto.h"

extern const struct xr_proto proto_capture, proto_udp, proto_syn, proto_lorawan, proto_dns,
	proto_tcp, proto_mqtt, proto_icmp, proto_sessions, proto_redis;

const struct xr_proto *const xr_protos[] = {
	&proto_capture, &proto_udp,  &proto_syn,      &proto_lorawan, &proto_dns, &proto_tcp,
	&proto_mqtt,	&proto_icmp, &proto_sessions, &proto_redis,   NULL,
};

const struct xr_proto *proto_find(const char *name)
{
	for (const struct xr_proto *const *p = xr_protos; *p; p++)
		if (!strcmp((*p)->name, name))
			return *p;
	return NULL;
}
