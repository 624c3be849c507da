#include "CCurl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ccurl_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1; }

CURL *ccurl_new(void) { return curl_easy_init(); }

void ccurl_free(CURL *handle) { curl_easy_cleanup(handle); }

typedef struct {
    CURL *handle;
    int fd;
    long long max;
    ccurl_result *out;
    char *error_body;
    int error_body_size;
    int error_body_used;
    int write_failed;
} sink;

/// Whether nothing of the answer has come into a sink yet, body or error body.
static int sink_empty(const void *state) {
    const sink *s = state;
    return s->out->bytes == 0 && s->error_body_used == 0;
}

static size_t on_body(char *data, size_t size, size_t count, void *context) {
    sink *s = context;
    size_t n = size * count;
    long status = 0;
    curl_easy_getinfo(s->handle, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status > 299) {
        // Kept for the log (an S3 error document), dropped past the buffer.
        int room = s->error_body_size - 1 - s->error_body_used;
        int take = (long long)n < room ? (int)n : room;
        if (take > 0) {
            memcpy(s->error_body + s->error_body_used, data, take);
            s->error_body_used += take;
            s->error_body[s->error_body_used] = 0;
        }
        return n;
    }
    if (s->out->bytes + (long long)n > s->max) {
        s->out->too_large = 1;
        return 0;  // CURLE_WRITE_ERROR: libcurl stops the transfer.
    }
    size_t done = 0;
    while (done < n) {
        // It runs inside libcurl's transfer, so EINTR is retried here, as libvips' read
        // callback does in CVips (Syscalls names both).
        ssize_t w = write(s->fd, data + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            s->write_failed = 1;
            return 0;
        }
        done += (size_t)w;
    }
    s->out->bytes += (long long)n;
    return n;
}

static int reused_connection_failed(CURLcode code) {
    return code == CURLE_UNSUPPORTED_PROTOCOL || code == CURLE_WEIRD_SERVER_REPLY || code == CURLE_GOT_NOTHING ||
           code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR;
}

/// curl_easy_perform, and once more on a new connection when a kept-alive one failed before
/// any of the answer arrived (`nothing_received` is asked after the first try): closed by
/// the origin meanwhile, or holding bytes an earlier answer sent past its Content-Length
/// (read as the start of this answer).
static void perform(CURL *handle, ccurl_result *out, int (*nothing_received)(const void *), const void *state) {
    out->code = curl_easy_perform(handle);
    long connects = 0;
    curl_easy_getinfo(handle, CURLINFO_NUM_CONNECTS, &connects);
    if (connects == 0 && nothing_received(state) && reused_connection_failed(out->code)) {
        out->error[0] = 0;
        curl_easy_setopt(handle, CURLOPT_FRESH_CONNECT, 1L);
        out->code = curl_easy_perform(handle);
    }
}

static void copy_header(CURL *handle, const char *name, char *into, size_t size) {
    struct curl_header *h = NULL;
    into[0] = 0;
    if (curl_easy_header(handle, name, 0, CURLH_HEADER, -1, &h) == CURLHE_OK && h && h->value) {
        strncpy(into, h->value, size - 1);
        into[size - 1] = 0;
    }
}

/* What every transfer sets: the URL and headers, HTTP(S) only, no redirects followed, no
   signals, the timeouts, TLS verified (with `ca_file` added to the system's), the agent,
   and libcurl's words for a failure in `out->error`. */
static void set_common(CURL *handle, const char *url, struct curl_slist *list, long connect_timeout_ms,
                       long timeout_ms, const char *ca_file, ccurl_result *out) {
    curl_easy_setopt(handle, CURLOPT_URL, url);
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms);
    curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(handle, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(handle, CURLOPT_SSL_VERIFYHOST, 2L);
    if (ca_file && ca_file[0]) {
        // Added to the system's: the bundle named, and the system's hashed folder.
        curl_easy_setopt(handle, CURLOPT_CAINFO, ca_file);
        curl_easy_setopt(handle, CURLOPT_CAPATH, "/etc/ssl/certs");
    }
    curl_easy_setopt(handle, CURLOPT_USERAGENT, "aspect");
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, out->error);
}

void ccurl_get(CURL *handle, const char *url, const char *const *headers, int header_count, int out_fd,
               long long max_bytes, long connect_timeout_ms, long timeout_ms, const char *ca_file,
               char *error_body, int error_body_size, ccurl_result *out) {
    memset(out, 0, sizeof *out);
    out->content_length = -1;
    if (error_body_size > 0) error_body[0] = 0;
    curl_easy_reset(handle);  // Options go; the connection cache stays.

    struct curl_slist *list = NULL;
    for (int i = 0; i < header_count; i++) list = curl_slist_append(list, headers[i]);

    sink s = {handle, out_fd, max_bytes, out, error_body, error_body_size, 0, 0};
    set_common(handle, url, list, connect_timeout_ms, timeout_ms, ca_file, out);
    curl_easy_setopt(handle, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_bytes);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &s);

    perform(handle, out, sink_empty, &s);
    if (out->code == CURLE_FILESIZE_EXCEEDED) out->too_large = 1;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &out->status);
    curl_off_t length = -1;
    if (curl_easy_getinfo(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK) out->content_length = length;
    if (out->status > 0) {
        copy_header(handle, "ETag", out->etag, sizeof out->etag);
        copy_header(handle, "Last-Modified", out->last_modified, sizeof out->last_modified);
        copy_header(handle, "Content-Type", out->content_type, sizeof out->content_type);
        copy_header(handle, "Retry-After", out->retry_after, sizeof out->retry_after);
        copy_header(handle, "X-Cache", out->x_cache, sizeof out->x_cache);
        char *location = NULL;
        if (curl_easy_getinfo(handle, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location) {
            strncpy(out->redirect, location, sizeof out->redirect - 1);
        }
    }
    if (s.write_failed && out->error[0] == 0) strncpy(out->error, "writing the source cache file failed", CURL_ERROR_SIZE - 1);
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, NULL);
    curl_slist_free_all(list);
}

/* A whole request in memory: any method, a body sent from memory, the answer's body
   kept in a buffer that grows (up to max_bytes) for the caller to free with free(). */
typedef struct {
    unsigned char *data;
    size_t length, capacity;
    long long max_bytes;
    int too_large;
} membuf;

static int membuf_empty(const void *state) { return ((const membuf *)state)->length == 0; }

static size_t on_memory(char *ptr, size_t size, size_t n, void *userdata) {
    membuf *b = userdata;
    size_t len = size * n;
    if ((long long)(b->length + len) > b->max_bytes) {
        b->too_large = 1;
        return 0;
    }
    if (b->length + len > b->capacity) {
        size_t cap = b->capacity ? b->capacity : 4096;
        while (cap < b->length + len) cap *= 2;
        unsigned char *grown = realloc(b->data, cap);
        if (!grown) return 0;
        b->data = grown;
        b->capacity = cap;
    }
    memcpy(b->data + b->length, ptr, len);
    b->length += len;
    return len;
}

void ccurl_request(CURL *handle, const char *method, const char *url, const char *const *headers, int header_count,
                   const void *body, size_t body_length, long long max_bytes, long connect_timeout_ms,
                   long timeout_ms, const char *ca_file, unsigned char **response, size_t *response_length,
                   ccurl_result *out) {
    memset(out, 0, sizeof *out);
    out->content_length = -1;
    *response = NULL;
    *response_length = 0;
    curl_easy_reset(handle);
    struct curl_slist *list = NULL;
    for (int i = 0; i < header_count; i++) list = curl_slist_append(list, headers[i]);
    membuf b = {NULL, 0, 0, max_bytes, 0};
    set_common(handle, url, list, connect_timeout_ms, timeout_ms, ca_file, out);
    curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, method);
    if (strcmp(method, "HEAD") == 0) curl_easy_setopt(handle, CURLOPT_NOBODY, 1L);
    if (body) {
        curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
    }
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, on_memory);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &b);
    perform(handle, out, membuf_empty, &b);
    out->too_large = b.too_large;
    out->bytes = (long long)b.length;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &out->status);
    if (out->status > 0) {
        copy_header(handle, "ETag", out->etag, sizeof out->etag);
        copy_header(handle, "Content-Type", out->content_type, sizeof out->content_type);
    }
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, NULL);
    curl_slist_free_all(list);
    *response = b.data;
    *response_length = b.length;
}
