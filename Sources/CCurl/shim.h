#ifndef PK_CURL_SHIM_H
#define PK_CURL_SHIM_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

// curl_easy_setopt and curl_easy_getinfo take their value through C varargs, which Swift
// cannot call: one typed helper per kind of value.

/// Sets an option whose value is a long.
static inline CURLcode pk_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// Sets an option whose value is a string (copied by libcurl) or a pointer (kept).
static inline CURLcode pk_curl_set_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// Sets the body and header callbacks (both have the write callback's type).
static inline CURLcode pk_curl_set_data_function(CURL *handle, CURLoption option, curl_write_callback function) {
    return curl_easy_setopt(handle, option, function);
}

/// Sets the progress callback, called often while data moves and about once a second while
/// nothing does.
static inline CURLcode pk_curl_set_progress_function(CURL *handle, curl_xferinfo_callback function) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, function);
}

/// The receive buffer of every socket libcurl opens: what it takes from the server ahead of
/// what the relay passed on stays within it.
static int pk_curl_small_receive_buffer(void *context, curl_socket_t socket, curlsocktype purpose) {
    (void)purpose;
    int size = (int)(long)context;
    setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    return CURL_SOCKOPT_OK;
}

/// Caps the receive buffer of the transfer's sockets at `bytes`.
static inline CURLcode pk_curl_cap_receive_buffer(CURL *handle, long bytes) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_SOCKOPTFUNCTION, pk_curl_small_receive_buffer);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(handle, CURLOPT_SOCKOPTDATA, (void *)bytes);
}

/// A libcurl share of connections, TLS sessions and DNS answers among the transfers of one
/// relay, with the mutexes its lock callbacks take.
typedef struct {
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
} pk_curl_share;

static void pk_curl_share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *context) {
    (void)handle; (void)access;
    pthread_mutex_lock(&((pk_curl_share *)context)->locks[data]);
}

static void pk_curl_share_unlock(CURL *handle, curl_lock_data data, void *context) {
    (void)handle;
    pthread_mutex_unlock(&((pk_curl_share *)context)->locks[data]);
}

/// A new share, or NULL; freed by `pk_curl_share_free` once no transfer uses it.
static inline pk_curl_share *pk_curl_share_new(void) {
    pk_curl_share *made = calloc(1, sizeof *made);
    if (made == NULL) return NULL;
    made->share = curl_share_init();
    if (made->share == NULL) { free(made); return NULL; }
    for (int index = 0; index < CURL_LOCK_DATA_LAST; index++) pthread_mutex_init(&made->locks[index], NULL);
    curl_share_setopt(made->share, CURLSHOPT_LOCKFUNC, pk_curl_share_lock);
    curl_share_setopt(made->share, CURLSHOPT_UNLOCKFUNC, pk_curl_share_unlock);
    curl_share_setopt(made->share, CURLSHOPT_USERDATA, made);
    curl_share_setopt(made->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt(made->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt(made->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    return made;
}

/// Frees a share no transfer uses any more (closing the connections it kept).
static inline void pk_curl_share_free(pk_curl_share *share) {
    if (share == NULL) return;
    curl_share_cleanup(share->share);
    for (int index = 0; index < CURL_LOCK_DATA_LAST; index++) pthread_mutex_destroy(&share->locks[index]);
    free(share);
}

/// Makes `handle` use `share`.
static inline CURLcode pk_curl_use_share(CURL *handle, pk_curl_share *share) {
    return curl_easy_setopt(handle, CURLOPT_SHARE, share->share);
}

/// The last HTTP status received, 0 when none.
static inline long pk_curl_response_code(CURL *handle) {
    long code = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

#endif
