#ifndef PLAYBACKKIT_COPENSSL_SHIM_H
#define PLAYBACKKIT_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>

/// The text of the oldest OpenSSL error queued on this thread (cleared from the queue), or an
/// empty string when there is none.
static inline void pk_ssl_take_error(char *buffer, size_t size) {
    unsigned long code = ERR_get_error();
    if (code != 0) {
        ERR_error_string_n(code, buffer, size);
    } else if (size > 0) {
        buffer[0] = 0;
    }
    ERR_clear_error();
}
#endif
