/*
 * Rule: clone(CLONE_VM) without CLONE_THREAD, and vfork, give two
 * processes one address space (copy_mm): what either maps or unmaps is in
 * both processes' maps, until one of them execs or exits.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "../snapshot.h"

static volatile int turn;       /* shared: the two processes take turns */
static char *shared_map;

static void wait_turn(int t)
{
	struct timespec nap = { 0, 100000 };

	while (turn != t)
		nanosleep(&nap, NULL);
}

static int child(void *arg)
{
	(void)arg;
	wait_turn(1);
	snapshot("clone-child-sees-parent");
	shared_map = map_or_die(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, 0);
	shared_map[0] = 1;
	snapshot("clone-child-mapped");
	turn = 2;
	wait_turn(3);
	snapshot("clone-child-after-parent-unmap");
	turn = 4;
	return 0;
}

static void clone_vm(void)
{
	char *stack = map_or_die(NULL, 64 * PAGE, PROT_READ | PROT_WRITE, 0), *p;
	pid_t pid = clone(child, stack + 64 * PAGE, CLONE_VM | SIGCHLD, NULL);

	if (pid < 0) {
		perror("clone");
		exit(1);
	}
	p = map_or_die(NULL, 2 * PAGE, PROT_READ, 0);
	snapshot("clone-parent-mapped");
	turn = 1;
	wait_turn(2);
	snapshot("clone-parent-sees-child");
	must(munmap(p, 2 * PAGE), "munmap");
	must(munmap(shared_map + PAGE, PAGE), "munmap");
	snapshot("clone-parent-unmapped");
	turn = 3;
	wait_turn(4);
	waitpid(pid, NULL, 0);
	snapshot("clone-child-gone");
	must(munmap(stack, 64 * PAGE), "munmap");
}

/* vfork: the parent waits while the child runs in its mm; then the child's exec gives it one of its own. */
static void vfork_exec(const char *self)
{
	char *argv[] = { (char *)self, "vforked", NULL };
	pid_t pid = vfork();

	if (pid == 0) {
		/* In the vfork child only raw calls: the parent's stack and stdio are its. */
		syscall(SYS_mmap, NULL, 5 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	snapshot("vfork-parent-sees-child-map");
	waitpid(pid, NULL, 0);
	snapshot("vfork-child-gone");
}

int main(int argc, char **argv)
{
	snapshot_init();
	if (argc > 1 && !strcmp(argv[1], "vforked")) {
		snapshot("vforked-exec");
		map_or_die(NULL, PAGE, PROT_READ, 0);
		snapshot("vforked-mapped");
		return 0;
	}
	snapshot("start");
	clone_vm();
	vfork_exec(argv[0]);
	return 0;
}
