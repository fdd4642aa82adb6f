/* SPDX-License-Identifier: GPL-2.0 */
/*
 * count --webhook: what a server's application said it received, whatever
 * the protocol. The server POSTs one event per message it delivered; a
 * protocol (proto/lorawan/webhook.c: LoRaWAN uplinks per device and FCnt)
 * reads them and reports; count serves the endpoint and puts the report
 * beside its own.
 */
#ifndef __XR_MEASURE_APPWITNESS_H
#define __XR_MEASURE_APPWITNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "util/json.h"

struct app_witness_ops {
	/* one POSTed body (the HTTP server's thread, under its lock) */
	void (*event)(void *ctx, const char *body, size_t len);
	/* events so far */
	uint64_t (*events)(const void *ctx);
	/* the report: lines on f, members of j */
	void (*text)(void *ctx, FILE *f);
	void (*json)(void *ctx, struct json *j);
	void (*free)(void *ctx);
};

struct app_witness {
	const struct app_witness_ops *ops;
	void *ctx; /* NULL: none */
};

#endif
