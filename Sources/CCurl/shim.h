#ifndef PK_CURL_SHIM_H
#define PK_CURL_SHIM_H

#include <curl/curl.h>
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

/// The last HTTP status received, 0 when none.
static inline long pk_curl_response_code(CURL *handle) {
    long code = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code);
    return code;
}

#endif
