#define _GNU_SOURCE
#include "CLinux.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <malloc.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/inotify.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

int clinux_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int clinux_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &ev);
}

int clinux_epoll_wait(int epfd, clinux_event *events, int max, int timeout_ms) {
    struct epoll_event raw[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, raw, max, timeout_ms);
    for (int i = 0; i < n; i++) {
        events[i].events = raw[i].events;
        events[i].data = raw[i].data.u64;
    }
    return n;
}

int clinux_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

void clinux_name_thread(const char *name) {
    char short_name[16];
    strncpy(short_name, name, sizeof short_name - 1);
    short_name[sizeof short_name - 1] = 0;
    pthread_setname_np(pthread_self(), short_name);
}

int clinux_memfd(const char *name) { return memfd_create(name, MFD_CLOEXEC); }

int clinux_accept(int fd) { return accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }

ssize_t clinux_sendfile(int out_fd, int in_fd, off_t *offset, size_t count) {
    return sendfile(out_fd, in_fd, offset, count);
}

static int shutdown_fd = -1;

static void on_shutdown_signal(int sig) {
    int saved = errno;
    (void)sig;
    uint64_t one = 1;
    if (shutdown_fd >= 0) {
        ssize_t ignored = write(shutdown_fd, &one, sizeof one);
        (void)ignored;
    }
    errno = saved;
}

int clinux_install_shutdown_signals(int fd) {
    shutdown_fd = fd;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    if (sigaction(SIGPIPE, &sa, NULL) != 0) return -1;
    sa.sa_handler = on_shutdown_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGTERM, &sa, NULL) != 0) return -1;
    if (sigaction(SIGINT, &sa, NULL) != 0) return -1;
    // A parent may have left them blocked (the mask survives exec): unblock them here,
    // before the server starts its other threads, which inherit this thread's mask.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    return pthread_sigmask(SIG_UNBLOCK, &set, NULL) == 0 ? 0 : -1;
}


int clinux_open_beneath(int dirfd, const char *path) {
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_RDONLY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS)
        return (int)fd;
    return openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
}

void clinux_limit_malloc_arenas(int n) {
    if (!getenv("MALLOC_ARENA_MAX"))
        mallopt(M_ARENA_MAX, n);
}

int clinux_inotify(void) { return inotify_init1(IN_NONBLOCK | IN_CLOEXEC); }

int clinux_inotify_watch_folder(int fd, const char *path) {
    uint32_t mask = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
                    | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
    return inotify_add_watch(fd, path, mask);
}

int clinux_inotify_unwatch(int fd, int wd) { return inotify_rm_watch(fd, wd); }

clinux_inotify_summary clinux_inotify_summarise(const void *buffer, size_t length) {
    clinux_inotify_summary s = {0, 0};
    const char *p = buffer;
    const uint32_t structural = IN_IGNORED | IN_MOVE_SELF | IN_DELETE_SELF | IN_UNMOUNT | IN_Q_OVERFLOW;
    while (length >= sizeof(struct inotify_event)) {
        struct inotify_event e;
        memcpy(&e, p, sizeof e);
        size_t size = sizeof(struct inotify_event) + e.len;
        if (size > length) break;
        s.events += 1;
        if (e.mask & structural) s.structural = 1;
        p += size;
        length -= size;
    }
    return s;
}
