/*
 * Rule: userfaultfd's register and unregister ioctls set and clear
 * VM_UFFD_* flags on the VMAs of the range, which splits and merges them
 * (userfaultfd_register_range, vma_modify_flags_uffd), with no record but
 * the VMA tree's writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <string.h>
#include <sys/ioctl.h>

#include "../snapshot.h"

static void uffd(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffdio_range range;
	char *a = map_or_die(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, 0);
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);

	if (fd < 0 || ioctl(fd, UFFDIO_API, &api)) {
		printf("note: userfaultfd: %s\n", strerror(errno));
		return;
	}
	reg.range.start = (unsigned long)a + 2 * PAGE;
	reg.range.len = 4 * PAGE;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	must(ioctl(fd, UFFDIO_REGISTER, &reg), "UFFDIO_REGISTER");
	snapshot("uffd-register");
	range.start = (unsigned long)a + 3 * PAGE;
	range.len = PAGE;
	must(ioctl(fd, UFFDIO_UNREGISTER, &range), "UFFDIO_UNREGISTER");
	snapshot("uffd-unregister-middle");
	range.start = (unsigned long)a;
	range.len = 8 * PAGE;
	must(ioctl(fd, UFFDIO_UNREGISTER, &range), "UFFDIO_UNREGISTER");
	snapshot("uffd-unregister-all");
	close(fd);
}

int main(void)
{
	snapshot_init();
	uffd();
	return 0;
}
