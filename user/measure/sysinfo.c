// SPDX-License-Identifier: GPL-2.0
/* The "system" object of every JSON document (measure/sysinfo.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "util/prom.h"
#include "measure/sysinfo.h"

/* The first line of a file, without its newline; empty when it cannot be read. */
static void first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (f && fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = 0;
	if (f)
		fclose(f);
}

/* /proc/cpuinfo's model name (x86), or empty. */
static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	buf[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (v && !strncmp(line, "model name", 10)) {
			v += 1 + (v[1] == ' ');
			v[strcspn(v, "\n")] = 0;
			snprintf(buf, len, "%s", v);
			break;
		}
	}
	if (f)
		fclose(f);
}

void sysinfo_json(struct json *j, const struct iface *ifc, const char *engine)
{
	char host[256] = "", buf[256];
	struct utsname uts;

	json_open(j, "system", '{');
	json_str(j, "version", XR_VERSION);
	json_str(j, "run_id", prom_run_id());
	gethostname(host, sizeof(host) - 1);
	json_str(j, "hostname", host);
	if (!uname(&uts)) {
		json_str(j, "kernel", uts.release);
		json_str(j, "kernel_build", uts.version);
		json_str(j, "machine", uts.machine);
	}
	cpu_model(buf, sizeof(buf));
	json_str(j, "cpu_model", buf);
	json_u64(j, "cpus", sysconf(_SC_NPROCESSORS_ONLN));
	first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", buf,
		   sizeof(buf));
	json_str(j, "clocksource", buf);
	if (ifc) {
		json_open(j, "interface", '{');
		json_str(j, "name", ifc->name);
		json_str(j, "driver", ifc->driver);
		json_str(j, "driver_version", ifc->driver_version);
		json_str(j, "firmware", ifc->firmware);
		json_u64(j, "rx_queues", ifc->nrxq);
		json_u64(j, "tx_queues", ifc->ntxq);
		json_u64(j, "mtu", ifc->mtu);
		json_close(j, '}');
	}
	if (engine)
		json_str(j, "engine", engine);
	json_close(j, '}');
}
