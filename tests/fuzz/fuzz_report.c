// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: xdpreplay report's page of any JSON document (a result's, or a hostile one). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok = json_tokener_new();
	struct report_doc d = { .name = "fuzz" };
	char *page = NULL;
	size_t len = 0;
	FILE *f;

	if (!tok)
		return 0;
	d.j = json_tokener_parse_ex(tok, (const char *)data, size);
	f = open_memstream(&page, &len);
	if (d.j && f)
		report_html(f, "fuzz", &d, 1);
	if (f)
		fclose(f);
	free(page);
	json_object_put(d.j);
	json_tokener_free(tok);
	return 0;
}
