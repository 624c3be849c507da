#ifndef ASPECT_CSANDBOX_H
#define ASPECT_CSANDBOX_H

// The render workers' process and sandbox calls (SPEC: Isolation): spawning one from the
// service's own binary with its socket, the socket's messages with a descriptor beside
// them, and the lock-down (no new privileges, an address-space limit, a seccomp filter).

#include <stddef.h>
#include <sys/types.h>

/// A SOCK_SEQPACKET socket pair (message boundaries kept), close-on-exec: 0 or -1.
int csandbox_socketpair(int fds[2]);

/// Sends on `fd` that cannot be made within `ms` fail (SO_SNDTIMEO). 0 or -1.
int csandbox_send_timeout(int fd, int ms);

/// A pipe, both ends close-on-exec: 0 or -1.
int csandbox_pipe(int fds[2]);

/// posix_spawn of `path` with `argv` and `envp` (NULL-terminated). The child holds exactly
/// four descriptors: 0 and 1 `/dev/null`, 2 `log_fd` (or `/dev/null` when it is < 0) and 3
/// `child_fd`; every other is closed in it, close-on-exec or not. The child's pid, or -1.
pid_t csandbox_spawn(const char *path, char *const argv[], char *const envp[], int child_fd, int log_fd);

/// This process may not be dumped: no core file, and no other process of its uid may open
/// its `/proc` files (`mem`, `environ`, `maps`, `fd`) or attach to it. 0 or -1.
int csandbox_not_dumpable(void);

/// Restricts this thread, and every thread it starts from now on, with Landlock: the
/// directories in `read_paths` (those that exist) may be read, nothing anywhere may be
/// written, made, removed or executed; with ABI 4 no TCP bind or connect; with ABI 6 no
/// signal to a process outside the domain and no abstract unix socket outside it. Call it
/// before any other thread exists. The ABI enforced (> 0), 0 when the kernel has no
/// Landlock, or a negative errno.
int csandbox_landlock(const char *const read_paths[], int count);

/// The resource limits of a worker: `address_space` bytes mapped (RLIMIT_AS), files written
/// no larger than `file_size` (RLIMIT_FSIZE; a memfd counts), at most `files` descriptors
/// open (RLIMIT_NOFILE), no core file. A 0 leaves that limit. 0 or -1.
int csandbox_limits(unsigned long long address_space, unsigned long long file_size, unsigned long long files);

/// RLIMIT_CPU's soft limit set `seconds` past the CPU time this process has used: a render
/// that spins is stopped (SIGXCPU) even if nobody kills it. 0 or -1.
int csandbox_cpu_budget(unsigned long long seconds);

/// Every capability dropped (effective, permitted, inheritable, ambient, and the bounding
/// set where it may be): a worker started by root holds no privilege. 0, or a negative errno.
int csandbox_drop_capabilities(void);

/// A memfd (close-on-exec) that can be sealed. The descriptor, or -1.
int csandbox_sealable_memfd(const char *name);

/// Seals a memfd against any change: no write, no shrink, no growth, no more seals. 0 or -1.
int csandbox_seal(int fd);

/// Whether `fd` is sealed against writes, shrinking and growth: 1 yes, 0 no.
int csandbox_is_sealed(int fd);

/// One message of `length` bytes, and `fd` beside it when it is >= 0 (SCM_RIGHTS).
/// The bytes sent, or -1 (errno).
ssize_t csandbox_send(int sock, const void *bytes, size_t length, int fd);

/// One message into `buffer` (at most `capacity` bytes), a descriptor sent beside it in
/// `*fd` (-1 when none). The bytes received (0: the other end closed), or -1 (errno;
/// EPROTO: more than one descriptor came, all closed; EMSGSIZE: the message was cut).
ssize_t csandbox_recv(int sock, void *buffer, size_t capacity, int *fd);

/// Waits up to `timeout_ms` for `fd` to be readable: 1 readable (or closed), 0 timed out,
/// -1 (errno).
int csandbox_wait_readable(int fd, int timeout_ms);

/// The child's end when its parent dies: SIGKILL (PR_SET_PDEATHSIG). 0 or -1.
int csandbox_die_with_parent(void);

/// No core files, not dumpable, no new privileges, then a seccomp allowlist on every thread
/// (TSYNC), killing the process on any call not in it: reading and writing descriptors it
/// holds, memory, threads (clone with CLONE_THREAD; clone3 answers ENOSYS so glibc uses
/// clone), futexes, time, its own signals, limits and affinity, messages on its socket,
/// memfds. A call that names a path to open or change it (open, openat, unlink, mkdir,
/// rename, readlink, …) answers EACCES: what a render needs was opened before (asking
/// whether a path may be read, `access`, and `stat` by name are allowed: Landlock says
/// what there is).
/// Signals, limits, priorities and affinities only for itself. 0, or a negative errno.
int csandbox_lock(void);

/// For the sandbox's own tests (issue 51's attacks): calls a taken-over worker would make,
/// which Swift cannot spell. Each answers as the call did (-1 and errno when refused).
int csandbox_try_userfaultfd(void);
int csandbox_try_sigqueue(pid_t pid);
int csandbox_try_setaffinity(pid_t pid);

/// How a child ended, from waitpid's status: the signal that killed it (0: it exited) and
/// its exit code.
void csandbox_status(int status, int *signal, int *code);
#endif
