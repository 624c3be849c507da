#ifndef ASPECT_CCURL_H
#define ASPECT_CCURL_H

// Fixed-arity calls over libcurl's varargs `curl_easy_setopt` and `curl_easy_getinfo`,
// which Swift cannot call, for one thing: a GET whose body streams into a file.

#include <curl/curl.h>

/// What one transfer ended with.
typedef struct {
    /// CURLE_OK, or why the transfer failed.
    int code;
    /// The origin's status, 0 when no response head arrived.
    long status;
    /// The body went over `max_bytes` and the transfer was stopped there.
    int too_large;
    /// Body bytes written to the file (only for a 2xx answer; others are dropped).
    long long bytes;
    /// The response's Content-Length, -1 when absent.
    long long content_length;
    /// libcurl's words for a failure.
    char error[CURL_ERROR_SIZE];
    /// Response headers kept for the cache and redirects; empty when absent.
    char etag[512];
    char last_modified[128];
    /// An absolute URL for a 3xx with Location.
    char redirect[4096];
    /// The S3 error code of an XML error body is not read here; the content type is.
    char content_type[128];
    /// What `aspect warm` reads of a service's answer: when to ask again, and whether it
    /// was a cache hit.
    char retry_after[32];
    char x_cache[16];
} ccurl_result;

/// Once per process, before any thread uses libcurl.
int ccurl_global_init(void);

/// A handle for one thread at a time; reusing it reuses its connections.
CURL *ccurl_new(void);
void ccurl_free(CURL *handle);

/// GET `url` with `headers` ("Name: value", `header_count` of them). A 2xx body is
/// written to `out_fd` as it arrives; past `max_bytes` the transfer stops (too_large).
/// Other statuses' bodies (up to 4 KB) go to `error_body`, NUL-terminated. Redirects
/// are not followed: the caller decides. `ca_file` may be NULL.
void ccurl_get(CURL *handle, const char *url, const char *const *headers, int header_count, int out_fd,
               long long max_bytes, long connect_timeout_ms, long timeout_ms, const char *ca_file,
               char *error_body, int error_body_size, ccurl_result *out);

/// Any `method` with `body` (NULL: none) from memory; the answer's body (any status, up to
/// `max_bytes`) in `*response`, for the caller to free(). Redirects are not followed.
void ccurl_request(CURL *handle, const char *method, const char *url, const char *const *headers, int header_count,
                   const void *body, size_t body_length, long long max_bytes, long connect_timeout_ms,
                   long timeout_ms, const char *ca_file, unsigned char **response, size_t *response_length,
                   ccurl_result *out);
#endif
