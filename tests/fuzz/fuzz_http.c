// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: where an HTTP/1.x response ends (user/proto/http/http.c, the XDP reader's reference). */
#include <stdint.h>
#include "proto/http/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int status;
	size_t end = 0;
	enum http_end e = http_response_end(data, size, &end, &status);

	/* an end inside what was read, past a status line and an empty line; a three-digit status */
	if (e == HTTP_END_AT && (end > size || end < 16))
		__builtin_trap();
	if ((e == HTTP_END_AT || e == HTTP_END_FIN) && status > 999)
		__builtin_trap();
	/* a reading of a prefix never ends later than the whole: the XDP reader sees prefixes */
	if (e == HTTP_END_AT && size > 1) {
		size_t end2 = 0;
		unsigned int status2;
		enum http_end e2 = http_response_end(data, end, &end2, &status2);

		if (e2 != HTTP_END_AT || end2 != end || status2 != status)
			__builtin_trap();
	}
	return 0;
}
