/* A library test_interpose loads with dlopen after interposition started: its munmap goes through its own PLT. */
#include <sys/mman.h>

int unmapper_munmap(void *p, size_t len)
{
	return munmap(p, len);
}
