/*
 * Life rule: io_setup maps the AIO ring ("/[aio] (deleted)", shared) and
 * its context id is the ring's address; io_destroy unmaps the ring
 * (fs/aio.c, kill_ioctx: vm_munmap of the whole ring) with no munmap of
 * its own. A second context and a map after the first show that only the
 * ring destroyed goes.
 */
#include <errno.h>
#include <linux/aio_abi.h>
#include <string.h>

#include "../snapshot.h"

int main(void)
{
	aio_context_t one = 0, two = 0;
	char *p;

	snapshot_init();
	if (syscall(SYS_io_setup, 128, &one) || syscall(SYS_io_setup, 1024, &two)) {
		printf("skip: io_setup: %s\n", strerror(errno));
		return 1;
	}
	p = map_or_die(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, 0);
	p[0] = 1;
	snapshot("two-rings");
	must((int)syscall(SYS_io_destroy, one), "io_destroy");
	snapshot("one-destroyed");
	must((int)syscall(SYS_io_destroy, two), "io_destroy");
	snapshot("both-destroyed");
	must(mprotect(p, PAGE, PROT_READ), "mprotect");
	snapshot("after");
	return 0;
}
