/*
 * Our uprobes in a fake tracefs (uprobe_events a plain file, which only
 * ever grows): each line fetches its site's registers and immediates; the
 * teardown removes our group's events and never another's, whether the
 * recorder stops cleanly or is killed (its watchdog does it); and
 * uprobe_events is appended to, never truncated.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "fake_tracefs.h"
#include "kernel/uprobe.h"

static char root[64];

static const struct ms_prefetch_site site0 = { .offset = 0x11ec, .base = "dx", .index = "ax", .scale = 1 };
static const struct ms_prefetch_site site1 = { .offset = 0x1210, .base = "ip", .disp = -24, .scale = 1 };

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/ms-uprobe.XXXXXX");
	assert_non_null(mkdtemp(root));
	fake_put(root, "uprobe_events", "p:other/keep /bin/true:0x0\np:mapscope_1/pf0 /bin/x:0x10\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return fake_remove(root);
}

/* The whole of uprobe_events. */
static char *events(void)
{
	static char text[8192];
	char path[128];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/uprobe_events", root);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = 0;
	fclose(f);
	return text;
}

static void lines(void **state)
{
	char line[512];

	(void)state;
	assert_int_equal(ms_uprobe_line("g", "pf0", "/bin/p", &site0, line, sizeof(line)), 0);
	assert_string_equal(line, "p:g/pf0 /bin/p:0x11ec base=%dx:x64 idx=%ax:x64 disp=\\0:s64 scale=\\1:u8\n");
	assert_int_equal(ms_uprobe_line("g", "pf1", "/bin/p", &site1, line, sizeof(line)), 0);
	assert_string_equal(line, "p:g/pf1 /bin/p:0x1210 base=%ip:x64 idx=\\0:x64 disp=\\-24:s64 scale=\\1:u8\n");
	assert_int_equal(ms_uprobe_line("g", "pf0", "/bin/a b", &site0, line, sizeof(line)), -EINVAL);
	assert_int_equal(ms_uprobe_line("g", "pf0", "/bin/p", &site0, line, 20), -EINVAL);
}

/*
 * Placed, then stopped cleanly: every site a probe of the one event, the
 * anchor first; the watchdog removes ours only, by appending.
 */
static void placed_and_removed(void **state)
{
	struct ms_uprobes *u = ms_uprobes_new(root);
	char want[256], *anchor;
	int pid = (int)getpid();

	(void)state;
	assert_non_null(u);
	snprintf(want, sizeof(want), "mapscope_%d", pid);
	assert_string_equal(ms_uprobes_group(u), want);
	assert_int_equal(ms_uprobes_anchor(u), 0);
	assert_int_equal(ms_uprobes_add(u, "/bin/p", &site0), 0);
	assert_int_equal(ms_uprobes_add(u, "/bin/p", &site1), 0);
	assert_int_equal(ms_uprobes_count(u), 2);
	assert_non_null(strstr(events(), "p:other/keep"));          /* appended, not truncated */
	/* The anchor: a file of this process's, immediates of the fields' types only. */
	snprintf(want, sizeof(want), "\np:mapscope_%d/pf /", pid);
	assert_non_null(anchor = strstr(events(), want));
	assert_non_null(strstr(anchor, " base=\\0:x64 idx=\\0:x64 disp=\\0:s64 scale=\\1:u8\n"));
	snprintf(want, sizeof(want), "p:mapscope_%d/pf /bin/p:0x11ec base=%%dx:x64 idx=%%ax:x64", pid);
	assert_non_null(strstr(events(), want));
	snprintf(want, sizeof(want), "p:mapscope_%d/pf /bin/p:0x1210 base=%%ip:x64", pid);
	assert_non_null(strstr(events(), want));
	assert_int_equal(ms_uprobes_free(u), 0);
	snprintf(want, sizeof(want), "\n-:mapscope_%d/pf\n", pid);
	assert_non_null(strstr(events(), want));
	assert_null(strstr(events(), "-:other"));
	assert_null(strstr(events(), "-:mapscope_1/"));
}

/* The recorder killed with SIGKILL: its watchdog still removes its group. */
static void removed_after_sigkill(void **state)
{
	char want[64], name[16];
	int status, i, p[2];
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ms_uprobes *u = ms_uprobes_new(root);

		if (!u || ms_uprobes_add(u, "/bin/k", &site0))
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], name, 1), 1);
	close(p[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	snprintf(want, sizeof(want), "-:mapscope_%d/pf\n", (int)pid);
	for (i = 0; i < 200 && !strstr(events(), want); i++)
		usleep(20000);
	assert_non_null(strstr(events(), want));
}

static void no_uprobe_events(void **state)
{
	(void)state;
	errno = 0;
	assert_null(ms_uprobes_new("/nonexistent-tracefs"));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(ms_uprobes_free(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines),
		cmocka_unit_test_setup_teardown(placed_and_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(removed_after_sigkill, setup, teardown),
		cmocka_unit_test(no_uprobe_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
