// SPDX-License-Identifier: GPL-2.0
/* libFuzzer: xdpreplay report's page of any JSON document (a result's, or a hostile one). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "report/report.h"

#define MAX_DOCS 4

/* An array is several results on one page (a sender and its count: "Both ends"); else one */
static int docs_of(struct json_object *j, struct report_doc *d)
{
	int n = 0;

	if (!json_object_is_type(j, json_type_array)) {
		d[0] = (struct report_doc){ .name = "fuzz", .j = j };
		return 1;
	}
	for (size_t i = 0; i < json_object_array_length(j) && n < MAX_DOCS; i++)
		d[n++] =
			(struct report_doc){ .name = "fuzz", .j = json_object_array_get_idx(j, i) };
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_tokener *tok = json_tokener_new();
	struct report_doc d[MAX_DOCS];
	struct json_object *j;
	char *page = NULL;
	size_t len = 0;
	FILE *f;
	int n;

	if (!tok)
		return 0;
	j = json_tokener_parse_ex(tok, (const char *)data, size);
	f = open_memstream(&page, &len);
	n = j ? docs_of(j, d) : 0;
	if (n && f)
		report_html(f, "fuzz", d, n);
	if (f)
		fclose(f);
	free(page);
	json_object_put(j);
	json_tokener_free(tok);
	return 0;
}
