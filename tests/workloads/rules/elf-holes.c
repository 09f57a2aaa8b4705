/*
 * Rule: the kernel's ELF loader maps the first PT_LOAD with the whole
 * image's size and unmaps what lies past that segment itself (binfmt_elf,
 * elf_map), with no syscall and no record. Built with 64 KiB segment
 * alignment, this binary has holes between its segments.
 */
#include <string.h>

#include "../snapshot.h"

int main(int argc, char **argv)
{
	snapshot_init();
	snapshot(argc > 1 ? "after-exec" : "start");
	if (argc == 1)
		execl("/proc/self/exe", argv[0], "again", (char *)NULL);
	return 0;
}
