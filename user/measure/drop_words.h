/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a frame died, in words: the kernel's drop reasons (their BTF names,
 * as count's JSON has them under drops.inbound, or "drop:NAME" as a search
 * trial's server_drops) and count's attribution counters.
 */
#ifndef __XR_MEASURE_DROP_WORDS_H
#define __XR_MEASURE_DROP_WORDS_H

/* The words for key (e.g. "no socket on the port (NO_SOCKET)"), into buf; buf returned */
const char *drop_words(const char *key, char *buf, unsigned int len);
/* Whether key is a counter of frames lost (a reason, or an attribution counter that drops) */
int drop_key_is_loss(const char *key);

#endif
