#define _GNU_SOURCE
#include "CSandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int csandbox_socketpair(int fds[2]) { return socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds); }

pid_t csandbox_spawn(const char *path, char *const argv[], char *const envp[], int child_fd) {
    posix_spawn_file_actions_t actions;
    if (posix_spawn_file_actions_init(&actions) != 0) return -1;
    posix_spawnattr_t attributes;
    if (posix_spawnattr_init(&attributes) != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return -1;
    }
    // dup2 clears close-on-exec on the copy: descriptor 3 is the only one the child keeps.
    int r = posix_spawn_file_actions_adddup2(&actions, child_fd, 3);
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
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int got;
            memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (*fd < 0) *fd = got;
            else close(got);
        }
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

int csandbox_limit_address_space(unsigned long long bytes) {
    if (bytes == 0) return 0;
    struct rlimit l = {.rlim_cur = bytes, .rlim_max = bytes};
    return setrlimit(RLIMIT_AS, &l);
}

int csandbox_lock(void) {
    // No core file (it would hold decoded pixels), and nobody of this user may read its memory.
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -errno;
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return -errno;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx) return -ENOMEM;
    // Every thread of the process, those libvips and GLib started already too.
    if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1) != 0) {
        seccomp_release(ctx);
        return -EINVAL;
    }
    static const int killed[] = {
        SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(connect), SCMP_SYS(bind), SCMP_SYS(listen),
        SCMP_SYS(accept), SCMP_SYS(accept4), SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(fork),
        SCMP_SYS(vfork), SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev),
        SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(chroot), SCMP_SYS(pivot_root), SCMP_SYS(kexec_load),
        SCMP_SYS(init_module), SCMP_SYS(finit_module), SCMP_SYS(delete_module), SCMP_SYS(setuid),
        SCMP_SYS(setgid), SCMP_SYS(setreuid), SCMP_SYS(setregid), SCMP_SYS(setresuid), SCMP_SYS(setresgid),
        SCMP_SYS(unshare), SCMP_SYS(setns), SCMP_SYS(keyctl), SCMP_SYS(bpf), SCMP_SYS(perf_event_open),
        // io_uring would open and connect sockets past the filter; signals to others.
        SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register), SCMP_SYS(tkill),
        SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_send_signal), SCMP_SYS(pidfd_getfd),
    };
    int r = 0;
    for (size_t i = 0; i < sizeof killed / sizeof killed[0] && r == 0; i++)
        r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, killed[i], 0);
    // A new process by clone (no CLONE_THREAD) is killed; a thread is allowed.
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    // Signals only to itself (kill(0) would reach the service, in the same process group),
    // and limits only its own (glibc names itself 0 to prlimit64).
    pid_t self = getpid();
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)self));
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)self));
    if (r == 0)
        r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(prlimit64), 1, SCMP_A0(SCMP_CMP_NE, 0));
    // clone3's flags are in memory seccomp cannot read: ENOSYS, so glibc falls back to clone.
    if (r == 0) r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    if (r == 0) r = seccomp_load(ctx);
    seccomp_release(ctx);
    return r;
}

void csandbox_status(int status, int *signal, int *code) {
    *signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
