// The Linux calls Swift's Glibc module does not import, or imports awkwardly (epoll's
// packed event struct, accept4, eventfd, sendfile, memfd_create, pthread_setname_np), and
// the signal handlers, which must
// be C: a handler may only make async-signal-safe calls.
#ifndef CLINUX_H
#define CLINUX_H

#include <stdint.h>
#include <sys/types.h>

/// An epoll event, unpacked (struct epoll_event is packed on x86_64).
typedef struct {
    uint32_t events;
    uint64_t data;
} clinux_event;

enum {
    CLINUX_EPOLLIN = 0x001,
    CLINUX_EPOLLOUT = 0x004,
    CLINUX_EPOLLERR = 0x008,
    CLINUX_EPOLLHUP = 0x010,
    CLINUX_EPOLLRDHUP = 0x2000,
    CLINUX_EPOLLEXCLUSIVE = 1u << 28,
};

int clinux_epoll_create(void);
/// op: 1 add, 2 delete, 3 modify (EPOLL_CTL_*).
int clinux_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data);
int clinux_epoll_wait(int epfd, clinux_event *events, int max, int timeout_ms);

/// A non-blocking, close-on-exec eventfd.
int clinux_eventfd(void);

/// Names the calling thread as `ps` and /proc show it (the kernel keeps 15 bytes).
void clinux_name_thread(const char *name);

/// An anonymous file in memory (memfd_create), close-on-exec: for a download that cannot
/// be kept on disk.
int clinux_memfd(const char *name);
/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC; the peer address is not asked for.
int clinux_accept(int fd);
ssize_t clinux_sendfile(int out_fd, int in_fd, off_t *offset, size_t count);

/// Opens `path` read-only below the folder `dirfd`, refusing (ELOOP, EXDEV) any symlink
/// and any `..` on the way: openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
/// RESOLVE_NO_MAGICLINKS. Where the kernel has no openat2 (before Linux 5.6), openat(2)
/// with O_NOFOLLOW, which refuses a symlink in the last component only. EINTR and EAGAIN
/// (a rename raced the lookup) come back to the caller, which retries.
int clinux_open_beneath(int dirfd, const char *path);

/// A non-blocking, close-on-exec inotify instance.
int clinux_inotify(void);
/// Watches the folder `path` for any change to its entries or to itself; the watch
/// descriptor, or -1 with errno.
int clinux_inotify_watch_folder(int fd, const char *path);
int clinux_inotify_unwatch(int fd, int wd);

/// What one read(2) of an inotify instance held: `events` is how many events there were,
/// `structural` whether any says a watch ended or moved, or that events were lost
/// (IN_IGNORED, IN_MOVE_SELF, IN_DELETE_SELF, IN_UNMOUNT, IN_Q_OVERFLOW).
typedef struct {
    int events;
    int structural;
} clinux_inotify_summary;
clinux_inotify_summary clinux_inotify_summarise(const void *buffer, size_t length);

/// Caps glibc's malloc arenas at `n` (mallopt M_ARENA_MAX), unless MALLOC_ARENA_MAX is set
/// in the environment, which then decides. Call before any thread starts.
void clinux_limit_malloc_arenas(int n);

/// SIGPIPE ignored; SIGTERM and SIGINT write to `fd` (an eventfd).
int clinux_install_shutdown_signals(int fd);

#endif
