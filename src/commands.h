#ifndef MS_COMMANDS_H
#define MS_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_maps(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_hugepages(int argc, char **argv);
int cmd_unmapped(int argc, char **argv);

/* Shared by the commands that print: --format parsing (0 text, 1 json, 2 csv). */
int parse_format(const char *cmd, const char *s, int *fmt, bool allow_csv);
/* "rw-p" from PROT_* and MAP_SHARED. */
void format_perms(uint32_t prot, uint32_t flags, char out[5]);

#endif
