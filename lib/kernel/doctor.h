/*
 * Internal: what this process may record here, and the fix for each piece
 * it lacks, for `mapscope doctor` and for every permission message (which
 * must name the fix that works on this machine, never one that would not).
 */
#ifndef MS_KERNEL_DOCTOR_H
#define MS_KERNEL_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ms_check_state {
	MS_CHECK_OK,     /* there, works */
	MS_CHECK_LESS,   /* works, with less than root gets (said in detail) */
	MS_CHECK_NO,     /* missing: fix says what would give it */
	MS_CHECK_INFO,   /* a fact that changes nothing recording needs */
};

struct ms_check {
	const char *what;
	enum ms_check_state state;
	char detail[256];
	char fix[256];       /* "" where there is nothing to fix */
};

/* How mapscope record and watch can run for this process. */
enum ms_record_mode {
	MS_MODE_FULL,        /* every event: syscalls, the VMA tree, faults in kernel mode too */
	MS_MODE_USER,        /* per-task events excluding the kernel: syscalls and user-mode faults */
	MS_MODE_PERF,        /* no tracefs: what perf can do (maps and faults, no unmaps) */
	MS_MODE_NONE,        /* nothing */
};

#define MS_DOCTOR_MAX_CHECKS 12

struct ms_doctor {
	bool root, cap_perfmon, cap_sys_admin, cap_sys_ptrace;
	int paranoid;
	const char *tracefs;         /* its mount point, or NULL */
	int tracefs_err;             /* reading a syscall tracepoint's id: 0 or a negative errno */
	uint64_t munmap_id;          /* syscalls:sys_exit_munmap's id, where tracefs_err is 0 */
	int syscalls_err;            /* opening one for this task, as the mode would: 0 or a negative errno */
	int faults_err;              /* a page-fault event for this task, user mode */
	enum ms_record_mode mode;
	struct ms_check checks[MS_DOCTOR_MAX_CHECKS];
	size_t n;
};

/* Probes this process's rights and the machine (opening and closing events on itself). */
void ms_doctor_probe(struct ms_doctor *d);

/* Whether this process may open every event (root, CAP_PERFMON or CAP_SYS_ADMIN, or paranoid -1). */
bool ms_doctor_privileged(void);

/*
 * Whether tracefs at dir refuses this user the syscall tracepoints'
 * ids (so record falls back to perf's events); says so, with the fix.
 */
bool ms_doctor_tracefs_refused(const char *dir);
/* Says, once, that events are opened in user mode and what that loses. */
void ms_doctor_warn_user_mode(void);

/* The mode's name and what it loses, one line each. */
const char *ms_record_mode_name(enum ms_record_mode m);
const char *ms_record_mode_loses(enum ms_record_mode m);

#endif
