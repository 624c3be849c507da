#ifndef ASPECT_CSANDBOX_H
#define ASPECT_CSANDBOX_H

// The render workers' process and sandbox calls (SPEC: Isolation): spawning one from the
// service's own binary with its socket, the socket's messages with a descriptor beside
// them, and the lock-down (no new privileges, an address-space limit, a seccomp filter).

#include <stddef.h>
#include <sys/types.h>

/// A SOCK_SEQPACKET socket pair (message boundaries kept), close-on-exec: 0 or -1.
int csandbox_socketpair(int fds[2]);

/// posix_spawn of `path` with `argv` and `envp` (NULL-terminated), and `child_fd` given to
/// the child as descriptor 3 (every other descriptor closes on exec). The child's pid, or -1.
pid_t csandbox_spawn(const char *path, char *const argv[], char *const envp[], int child_fd);

/// One message of `length` bytes, and `fd` beside it when it is >= 0 (SCM_RIGHTS).
/// The bytes sent, or -1 (errno).
ssize_t csandbox_send(int sock, const void *bytes, size_t length, int fd);

/// One message into `buffer` (at most `capacity` bytes), a descriptor sent beside it in
/// `*fd` (-1 when none). The bytes received (0: the other end closed), or -1 (errno).
ssize_t csandbox_recv(int sock, void *buffer, size_t capacity, int *fd);

/// Waits up to `timeout_ms` for `fd` to be readable: 1 readable (or closed), 0 timed out,
/// -1 (errno).
int csandbox_wait_readable(int fd, int timeout_ms);

/// The child's end when its parent dies: SIGKILL (PR_SET_PDEATHSIG). 0 or -1.
int csandbox_die_with_parent(void);

/// RLIMIT_AS: the most address space the process may map (0: leave it). 0 or -1.
int csandbox_limit_address_space(unsigned long long bytes);

/// No core files, not dumpable, no new privileges, then a seccomp filter on every thread
/// (TSYNC) that kills the process on socket, socketpair, connect, bind, listen, accept,
/// execve, execveat, fork, vfork, clone of a process (clone of a thread is allowed), ptrace,
/// process_vm_readv/writev, mount, chroot, pivot_root, kexec, init/finit/delete_module,
/// setuid/setgid and their kin, unshare, setns, keyctl, bpf, perf_event_open, io_uring,
/// tkill and the pidfd calls, a signal to another process (kill, tgkill) and a limit of
/// another (prlimit64); clone3 answers ENOSYS (glibc then creates threads with clone).
/// Everything else is allowed. 0, or a negative errno.
int csandbox_lock(void);

/// How a child ended, from waitpid's status: the signal that killed it (0: it exited) and
/// its exit code.
void csandbox_status(int status, int *signal, int *code);
#endif
