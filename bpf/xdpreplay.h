/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything bpf/ and user/ share, one header per subsystem under
 * bpf/shared/: the engine and its plan, replies, the server counter, and
 * one per protocol. Only __u* types there, so that both vmlinux.h and
 * <linux/types.h> users can include them.
 */
#ifndef __XDPREPLAY_H
#define __XDPREPLAY_H

#include "shared/engine.h"
#include "shared/count.h"
#include "shared/syn.h"
#include "shared/lorawan.h"
#include "shared/dns.h"
#include "shared/tcp.h"
#include "shared/mqtt.h"
#include "shared/drops.h"
#include "shared/selftest.h"

#endif /* __XDPREPLAY_H */
