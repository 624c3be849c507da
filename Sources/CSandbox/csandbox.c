#define _GNU_SOURCE
#include "CSandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int csandbox_socketpair(int fds[2]) { return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds); }

int csandbox_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int csandbox_send_timeout(int fd, int ms) {
    struct timeval t = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof t);
}


pid_t csandbox_spawn(const char *path, char *const argv[], char *const envp[], int child_fd, int log_fd) {
    posix_spawn_file_actions_t actions;
    if (posix_spawn_file_actions_init(&actions) != 0) return -1;
    posix_spawnattr_t attributes;
    if (posix_spawnattr_init(&attributes) != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return -1;
    }
    // 2 and 3 first (their sources may be low numbers), then 0 and 1 from /dev/null, then
    // everything above 3 closed, whether or not it was marked close-on-exec (libcurl's
    // sockets are not): a worker holds what it was given and nothing else.
    int r = posix_spawn_file_actions_adddup2(&actions, child_fd, 3);
    if (r == 0)
        r = log_fd >= 0 ? posix_spawn_file_actions_adddup2(&actions, log_fd, 2)
                        : posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    if (r == 0) r = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (r == 0) r = posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    if (r == 0) r = posix_spawn_file_actions_addclosefrom_np(&actions, 4);
    // No signal blocked and every one at its default, whatever this process (or whoever
    // started it) did with them: a worker's crash must end it.
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (r == 0) r = posix_spawnattr_setsigmask(&attributes, &none);
    if (r == 0) r = posix_spawnattr_setsigdefault(&attributes, &all);
    if (r == 0) r = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = -1;
    if (r == 0) r = posix_spawn(&pid, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (r != 0) {
        errno = r;
        return -1;
    }
    return pid;
}

int csandbox_not_dumpable(void) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : -1;
}

// Landlock's interface (linux/landlock.h), written out: Debian 12's kernel headers stop at
// ABI 1, the kernels it runs on go further.
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_ABI1 ((1ULL << 13) - 1) /* EXECUTE … MAKE_SYM */
#define LL_FS_REFER (1ULL << 13)      /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)   /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)  /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)   /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

/// The Landlock ABI the kernel offers (1 …), 0 when it has none or it is off.
static int landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return abi > 0 ? (int)abi : 0;
}

int csandbox_landlock(const char *const read_paths[], int count) {
    int abi = landlock_abi();
    if (abi <= 0) return 0;
    struct ll_ruleset_attr attr = {.handled_access_fs = LL_FS_ABI1};
    size_t size = sizeof(uint64_t);
    if (abi >= 2) attr.handled_access_fs |= LL_FS_REFER;
    if (abi >= 3) attr.handled_access_fs |= LL_FS_TRUNCATE;
    if (abi >= 5) attr.handled_access_fs |= LL_FS_IOCTL_DEV;
    if (abi >= 4) {
        attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
        size = 2 * sizeof(uint64_t);
    }
    if (abi >= 6) {
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
        size = 3 * sizeof(uint64_t);
    }
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (ruleset < 0) return -errno;
    const uint64_t read = LL_FS_READ_FILE | LL_FS_READ_DIR;
    for (int i = 0; i < count; i++) {
        int dir = open(read_paths[i], O_PATH | O_CLOEXEC);
        if (dir < 0) continue; /* not on this system: nothing to allow */
        struct ll_path_beneath_attr rule = {.allowed_access = read, .parent_fd = dir};
        struct stat st;
        // A file (not a folder) takes only the rights a file has.
        if (fstat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) rule.allowed_access = LL_FS_READ_FILE;
        long added = syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
        int e = errno;
        close(dir);
        if (added != 0) {
            close(ruleset);
            return -e;
        }
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        int e = errno;
        close(ruleset);
        return -e;
    }
    close(ruleset);
    return abi;
}

int csandbox_limits(unsigned long long address_space, unsigned long long file_size, unsigned long long files) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    struct {
        int resource;
        unsigned long long value;
    } limits[] = {{RLIMIT_AS, address_space}, {RLIMIT_FSIZE, file_size}, {RLIMIT_NOFILE, files}};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        if (limits[i].value == 0) continue;
        struct rlimit l = {.rlim_cur = limits[i].value, .rlim_max = limits[i].value};
        if (setrlimit(limits[i].resource, &l) != 0) return -1;
    }
    return 0;
}

int csandbox_cpu_budget(unsigned long long seconds) {
    struct rusage used;
    if (getrusage(RUSAGE_SELF, &used) != 0) return -1;
    unsigned long long spent = (unsigned long long)used.ru_utime.tv_sec + (unsigned long long)used.ru_stime.tv_sec;
    struct rlimit l;
    if (getrlimit(RLIMIT_CPU, &l) != 0) return -1;
    l.rlim_cur = spent + seconds;
    if (l.rlim_max != RLIM_INFINITY && l.rlim_cur > l.rlim_max) l.rlim_cur = l.rlim_max;
    return setrlimit(RLIMIT_CPU, &l);
}

int csandbox_drop_capabilities(void) {
    // The bounding set needs CAP_SETPCAP to shrink: done first, while it may be held.
    for (int cap = 0; cap <= 63; cap++) {
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL && errno != EPERM) return -errno;
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return -errno;
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &header, data) != 0) return -errno;
    return 0;
}

int csandbox_sealable_memfd(const char *name) { return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING); }

int csandbox_seal(int fd) {
    return fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0 ? 0 : -1;
}

int csandbox_is_sealed(int fd) {
    int seals = fcntl(fd, F_GET_SEALS);
    int needed = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
    return seals >= 0 && (seals & needed) == needed ? 1 : 0;
}

ssize_t csandbox_send(int sock, const void *bytes, size_t length, int fd) {
    struct iovec iov = {.iov_base = (void *)bytes, .iov_len = length};
    union {
        struct cmsghdr align;
        char buffer[CMSG_SPACE(sizeof(int))];
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&control, 0, sizeof control);
        msg.msg_control = control.buffer;
        msg.msg_controllen = sizeof control.buffer;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ssize_t n;
    do n = sendmsg(sock, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
}

ssize_t csandbox_recv(int sock, void *buffer, size_t capacity, int *fd) {
    struct iovec iov = {.iov_base = buffer, .iov_len = capacity};
    // Room for more descriptors than a message should carry: any beyond the first are
    // closed, never left open in this process.
    union {
        struct cmsghdr align;
        char buffer[CMSG_SPACE(8 * sizeof(int))];
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buffer,
                         .msg_controllen = sizeof control.buffer};
    *fd = -1;
    ssize_t n;
    do n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0) return n;
    int extra = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int got;
            memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (*fd < 0) *fd = got;
            else {
                close(got);
                extra = 1;
            }
        }
    }
    if (extra) {
        // More than one descriptor: no honest sender does that. Not a message to act on.
        close(*fd);
        *fd = -1;
        errno = EPROTO;
        return -1;
    }
    if (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) {
        // Descriptors or bytes lost on the way: not a message to act on.
        if (*fd >= 0) close(*fd);
        *fd = -1;
        errno = EMSGSIZE;
        return -1;
    }
    return n;
}

int csandbox_wait_readable(int fd, int timeout_ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r;
    do r = poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    return r > 0 ? 1 : r;
}

int csandbox_die_with_parent(void) { return prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 ? 0 : -1; }

// The calls a locked-down worker makes (scripts/seccomp-audit.sh lists what the workers
// made after the lock while rendering every format, output and option; the rest are their
// close kin, so a libc that picks the other spelling still works). Any other call kills.
static const char *const allowed[] = {
    // Descriptors it holds: the source, its socket, the answers' memfds.
    "read", "readv", "pread64", "preadv", "preadv2", "write", "writev", "pwrite64", "pwritev", "lseek", "close",
    "fstat", "newfstatat", "fstatfs", "statx", "dup", "dup3", "ftruncate", "fallocate", "fadvise64",
    "getdents64", "memfd_create", "recvmsg", "sendmsg", "poll", "ppoll", "pipe2", "eventfd2",
    // What a held socket is (GLib asks whether stderr is journald's before it logs).
    "getpeername", "getsockname", "getsockopt",
    // Whether a path may be read (fontconfig asks before it uses a font it found in its
    // cache; the font itself was opened by the warm-up, and Landlock says what is there).
    "access", "faccessat", "faccessat2",
    // Memory.
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "mincore", "membarrier",
    // Threads and waiting.
    "futex", "futex_waitv", "set_robust_list", "get_robust_list", "rseq", "set_tid_address", "sched_yield",
    "nanosleep", "clock_nanosleep", "restart_syscall",
    // Time and facts of itself.
    "clock_gettime", "clock_getres", "gettimeofday", "time", "getpid", "gettid", "getppid", "getuid", "geteuid",
    "getgid", "getegid", "getrusage", "times", "sysinfo", "uname", "getrandom", "getcwd", "umask",
    "getrlimit", "setrlimit", "getcpu",
    // Reading a thread's scheduling (dav1d and libaom size their thread pools by the
    // affinity of the calling thread, which they name by its tid); setting it is not allowed.
    "sched_getaffinity", "sched_getparam", "sched_getscheduler", "sched_get_priority_max",
    "sched_get_priority_min",
    // Its own signals.
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "rt_sigtimedwait",
    // Ending.
    "exit", "exit_group",
};

// Calls that name a path: a render opens nothing past the lock (the source and its
// socket were handed over; loaders and fonts were opened by the warm-up). EACCES, which
// every library takes as "not there for me", not a kill.
static const char *const refused[] = {
    "open", "openat", "openat2", "creat", "readlink", "readlinkat",
    "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir", "rename", "renameat", "renameat2", "link", "linkat",
    "symlink", "symlinkat", "chmod", "fchmodat", "chown", "lchown", "fchownat", "truncate", "utimensat",
    "statfs", "chdir", "fchdir", "inotify_init1", "inotify_add_watch", "mknod", "mknodat",
};

static int add(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned count, struct scmp_arg_cmp arg) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return 0; /* not a call of this architecture */
    return count ? seccomp_rule_add(ctx, action, nr, 1, arg) : seccomp_rule_add(ctx, action, nr, 0);
}

int csandbox_lock(void) {
    // No core file (it would hold decoded pixels), and nobody of this user may read its memory.
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -errno;
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return -errno;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (!ctx) return -ENOMEM;
    // Every thread of the process, those libvips and GLib started already too.
    if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1) != 0) {
        seccomp_release(ctx);
        return -EINVAL;
    }
    struct scmp_arg_cmp any = {0};
    int r = 0;
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0] && r == 0; i++)
        r = add(ctx, SCMP_ACT_ALLOW, allowed[i], 0, any);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0] && r == 0; i++)
        r = add(ctx, SCMP_ACT_ERRNO(EACCES), refused[i], 0, any);
    // A thread (CLONE_THREAD) is allowed; a new process by clone is not (the default kills).
    if (r == 0) r = add(ctx, SCMP_ACT_ALLOW, "clone", 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    // clone3's flags are in memory seccomp cannot read: ENOSYS, so glibc falls back to clone.
    if (r == 0) r = add(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, any);
    // Signals and limits only for itself: its own pid (or 0, "myself").
    pid_t self = getpid();
    if (r == 0) r = add(ctx, SCMP_ACT_ALLOW, "kill", 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
    if (r == 0) r = add(ctx, SCMP_ACT_ALLOW, "tgkill", 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
    if (r == 0) r = add(ctx, SCMP_ACT_ALLOW, "prlimit64", 1, SCMP_A0(SCMP_CMP_EQ, 0));
    // prctl: a thread's name (GLib names its threads) and reading its own state; no other.
    if (r == 0) r = add(ctx, SCMP_ACT_ALLOW, "prctl", 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
    if (r == 0) r = add(ctx, SCMP_ACT_ALLOW, "prctl", 1, SCMP_A0(SCMP_CMP_EQ, PR_GET_NAME));
    if (r == 0) r = add(ctx, SCMP_ACT_ALLOW, "prctl", 1, SCMP_A0(SCMP_CMP_EQ, PR_GET_DUMPABLE));
    // fcntl and ioctl, but not to make the kernel signal another process for an event on a
    // descriptor (F_SETOWN, F_SETSIG, F_SETOWN_EX, a lease, a notify; FIOSETOWN, SIOCSPGRP,
    // FIOASYNC): that would reach the service where Landlock's signal scoping (ABI 6) is
    // missing. Those answer EPERM. libseccomp takes one comparison an argument a rule, so
    // what is allowed is spelled as values and open ranges around them.
    int fcntl_nr = seccomp_syscall_resolve_name("fcntl");
    static const scmp_datum_t fcntl_no[] = {F_SETOWN, F_SETSIG, F_SETOWN_EX, F_SETLEASE, F_NOTIFY};
    static const scmp_datum_t fcntl_ok[] = {9, 11, 12, 13, 14, 16, 36, 37, 38, 1025, 1030, 1031, 1032,
                                            1033, 1034, 1035, 1036, 1037, 1038};
    for (size_t k = 0; k < sizeof fcntl_no / sizeof fcntl_no[0] && r == 0; k++)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), fcntl_nr, 1, SCMP_A1(SCMP_CMP_EQ, fcntl_no[k]));
    for (size_t k = 0; k < sizeof fcntl_ok / sizeof fcntl_ok[0] && r == 0; k++)
        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, fcntl_nr, 1, SCMP_A1(SCMP_CMP_EQ, fcntl_ok[k]));
    if (r == 0) r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, fcntl_nr, 1, SCMP_A1(SCMP_CMP_LT, F_SETOWN));
    if (r == 0) r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, fcntl_nr, 1, SCMP_A1(SCMP_CMP_GT, 1038));
    int ioctl_nr = seccomp_syscall_resolve_name("ioctl");
    static const scmp_datum_t ioctl_no[] = {FIOASYNC, FIOSETOWN, SIOCSPGRP};
    for (size_t k = 0; k < sizeof ioctl_no / sizeof ioctl_no[0] && r == 0; k++)
        r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), ioctl_nr, 1, SCMP_A1(SCMP_CMP_EQ, ioctl_no[k]));
    // Terminal and file ioctls below FIOASYNC (TCGETS, FIONREAD, FIONBIO, FIOCLEX), and the
    // _IOC-encoded ones above the socket range.
    if (r == 0) r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, ioctl_nr, 1, SCMP_A1(SCMP_CMP_LT, FIOASYNC));
    if (r == 0) r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, ioctl_nr, 1, SCMP_A1(SCMP_CMP_GT, SIOCSPGRP));
    if (r == 0) r = seccomp_load(ctx);
    seccomp_release(ctx);
    return r;
}

int csandbox_try_userfaultfd(void) { return (int)syscall(SYS_userfaultfd, O_CLOEXEC); }

int csandbox_try_sigqueue(pid_t pid) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_code = SI_QUEUE;
    return (int)syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &info);
}

int csandbox_try_setaffinity(pid_t pid) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    return sched_setaffinity(pid, sizeof set, &set);
}

void csandbox_status(int status, int *signal, int *code) {
    *signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
