/*
 * libFuzzer: any string as a command-line value, through the parsers every
 * subcommand uses for numbers, PID lists and times. Each must accept only
 * what it documents and never read past the string. Run as fuzz_reader.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "cli.h"
#include "launch.h"
#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	pid_t pids[MAX_PIDS];
	uint64_t v, ns;
	bool rel;
	int n = 0, i;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	/* A number in range, or nothing: never a value outside [min, max]. */
	if (!cli_parse_u64(s, 5, 4194304, &v) && (v < 5 || v > 4194304))
		abort();
	if (!launch_parse_pids(s, pids, &n)) {
		if (n < 1 || n > MAX_PIDS)
			abort();
		for (i = 0; i < n; i++)
			if (pids[i] < 1 || pids[i] > 4194304)
				abort();
		if (strstr(s, ",,") || s[0] == ',' || s[strlen(s) - 1] == ',')
			abort();             /* an empty item was taken */
	}
	if (!parse_time(s, &ns, &rel) && rel && s[0] != '+')
		abort();
	free(s);
	return 0;
}
