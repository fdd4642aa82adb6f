// SPDX-License-Identifier: GPL-2.0
/* xdpreplay report: one self-contained HTML page from results' JSON (report/report.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/cli.h"
#include "report/compare.h"
#include "report/figures.h"
#include "report/report.h"
#include "util/json.h"
#include "util/log.h"

#define MAX_DOCS 32

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdpreplay report RESULT.json... [-o FILE] [--title T]\n"
		"       xdpreplay report --compare A.json... [vs] B.json... [-o FILE]\n"
		"       xdpreplay report --figures\n"
		"\n"
		"One self-contained HTML page (nothing fetched when it opens) from the JSON of\n"
		"senders (--json), count and search: the verdict of their --fail-if thresholds,\n"
		"settings and system, the figures, frames and answers per second, the round\n"
		"trips' percentile spectrum, a search's bounds and trials. Every figure carries\n"
		"its JSON path (data-k) for scripts that hold the page against the results.\n"
		"\n"
		"--compare puts two runs side by side: each figure's median on each side, the\n"
		"change, and where both sides have rounds (several files each, A's before the\n"
		"word vs), whether the change is beyond their run-to-run noise (benchstat's\n"
		"convention: a Mann-Whitney U test at alpha 0.05; '~' when it is not). The\n"
		"table goes to standard error too; two searches also overlay their curves.\n"
		"\n"
		"Options:\n"
		"  -o, --output FILE   the page (default -: standard output)\n"
		"      --compare       compare A against B (two files, or rounds split by vs)\n"
		"      --figures       the results' figures: JSON path, label, unit, meaning (the\n"
		"                      table docs/results.md carries), as Markdown\n"
		"      --title T       its title (default: xdpreplay report)\n"
		"\n"
		"Exit status: 0 written, 2 bad usage or a file that is not such a result, 3 the\n"
		"page cannot be written.\n"
		"\n"
		"Examples:\n"
		"  xdpreplay gen syn -i eth1 --dst 198.18.0.2:80 --pps 20k --count 100k --json syn.json\n"
		"  xdpreplay report syn.json count.json -o report.html\n"
		"  xdpreplay search --witness replies --json s.json -- gen syn -i eth1 --dst 198.18.0.2:80\n"
		"  xdpreplay report s.json -o search.html --title 'SYN flood, nginx 1.22'\n"
		"  xdpreplay report --compare before.json after.json -o change.html\n"
		"  xdpreplay report --compare a1.json a2.json a3.json a4.json vs b1.json b2.json \\\n"
		"      b3.json b4.json -o rounds.html\n");
}

/* The documents named from argv[first] on, read into d: how many, or -1 after a message */
static int read_docs(char **names, int n, struct report_doc *d)
{
	for (int i = 0; i < n; i++) {
		d[i].name = names[i];
		d[i].j = json_object_from_file(names[i]);
		if (!d[i].j || !json_object_is_type(d[i].j, json_type_object)) {
			const char *why = d[i].j ? "not an object" : json_util_get_last_err();

			/* json-c's reason ends with its own newline */
			pr_warn("%s: not a result's JSON: %.*s\n", names[i],
				why ? (int)strcspn(why, "\n") : 5, why ?: "empty");
			return -1;
		}
	}
	return n;
}

/*
 * --compare's two sides: two files, or A's rounds, the word vs, B's (taken
 * out of names, *n then the files'). Where B begins, or -1 after a message.
 */
static int compare_split(char **names, int *n)
{
	int vs = -1;

	for (int i = 0; i < *n; i++)
		if (!strcmp(names[i], "vs")) {
			if (vs >= 0) {
				cli_usage_error("report", "--compare: vs once, between A and B");
				return -1;
			}
			vs = i;
		}
	if (vs < 0 && *n == 2)
		return 1;
	if (vs < 0) {
		cli_usage_error("report", "--compare: two results, or A's rounds vs B's");
		return -1;
	}
	if (vs == 0 || vs == *n - 1) {
		cli_usage_error("report", "--compare: results on both sides of vs");
		return -1;
	}
	memmove(&names[vs], &names[vs + 1], (*n - vs - 1) * sizeof(*names));
	(*n)--;
	return vs;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "compare", no_argument, NULL, 'c' },
		{ "figures", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *out = "-", *title = "xdpreplay report";
	struct report_doc docs[MAX_DOCS] = {};
	int opt, n, ret = XR_EXIT_USAGE, split = -1;
	bool compare = false;
	FILE *f;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 't': title = optarg; break;
		case 'c': compare = true; break;
		case 'f': figures_markdown(stdout); return XR_EXIT_OK;
		case 'h': usage(stdout); return XR_EXIT_OK;
		default: return cli_bad_option("report", argv, opt);
		}
	}
	n = argc - optind;
	if (n < 1)
		return cli_usage_error("report", "give one or more RESULT.json");
	if (n > MAX_DOCS)
		return cli_usage_error("report", "at most %d results on one page", MAX_DOCS);
	if (compare) {
		split = compare_split(argv + optind, &n);
		if (split < 0)
			return XR_EXIT_USAGE;
	}
	if (read_docs(argv + optind, n, docs) < 0)
		goto out;
	f = json_fopen(out);
	if (!f) {
		pr_warn("cannot write %s: %s\n", out, strerror(errno));
		ret = XR_EXIT_ENV;
		goto out;
	}
	if (compare ? report_compare(f, stderr, title, &(struct compare_side){ docs, split },
				     &(struct compare_side){ docs + split, n - split }) :
		      report_html(f, title, docs, n)) {
		json_fclose(f);
		goto out;
	}
	ret = json_fclose(f) ? XR_EXIT_ENV : XR_EXIT_OK;
	if (ret)
		pr_warn("cannot write %s\n", out);
out:
	for (int i = 0; i < n && i < MAX_DOCS; i++)
		json_object_put(docs[i].j);
	return ret;
}
