// GLib's SHA-256 and HMAC-SHA256 (GChecksum, GHmac) behind fixed-arity calls, for the
// targets that hash but do no image work: no home-made crypto, and no libvips shim.
#ifndef CGLIB_H
#define CGLIB_H

#include <stddef.h>
#include <stdint.h>

/// SHA-256 of `length` bytes into `digest` (32 bytes).
void cglib_sha256(const void *data, size_t length, uint8_t digest[32]);

/// HMAC-SHA256 of `message` under `key` into `digest` (32 bytes); -1 when GLib refuses.
int cglib_hmac_sha256(const void *key, size_t key_length, const void *message, size_t message_length,
                      uint8_t digest[32]);

/// MD5 of `length` bytes into `digest` (16 bytes): only where a protocol asks for it
/// (S3's Content-MD5 on DeleteObjects), never for security.
/// HMAC-SHA1: thumbor's URL signatures only (its scheme, not a choice of ours).
int cglib_hmac_sha1(const void *key, size_t key_length, const void *message, size_t message_length,
                    uint8_t digest[20]);

void cglib_md5(const void *data, size_t length, uint8_t digest[16]);
#endif
