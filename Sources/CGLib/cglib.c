#include "CGLib.h"

#include <glib.h>

static void checksum(GChecksumType type, const void *data, size_t length, uint8_t *digest, gsize n) {
    GChecksum *c = g_checksum_new(type);
    g_checksum_update(c, data, (gssize)length);
    g_checksum_get_digest(c, digest, &n);
    g_checksum_free(c);
}

void cglib_sha256(const void *data, size_t length, uint8_t digest[32]) {
    checksum(G_CHECKSUM_SHA256, data, length, digest, 32);
}

static int hmac(GChecksumType type, const void *key, size_t key_length, const void *message, size_t message_length,
                uint8_t *digest, gsize n) {
    GHmac *h = g_hmac_new(type, key, key_length);
    if (!h)
        return -1;
    g_hmac_update(h, message, (gssize)message_length);
    g_hmac_get_digest(h, digest, &n);
    g_hmac_unref(h);
    return 0;
}

int cglib_hmac_sha256(const void *key, size_t key_length, const void *message, size_t message_length,
                      uint8_t digest[32]) {
    return hmac(G_CHECKSUM_SHA256, key, key_length, message, message_length, digest, 32);
}

int cglib_hmac_sha1(const void *key, size_t key_length, const void *message, size_t message_length,
                    uint8_t digest[20]) {
    return hmac(G_CHECKSUM_SHA1, key, key_length, message, message_length, digest, 20);
}

void cglib_md5(const void *data, size_t length, uint8_t digest[16]) { checksum(G_CHECKSUM_MD5, data, length, digest, 16); }
