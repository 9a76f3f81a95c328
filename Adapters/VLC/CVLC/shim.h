#ifndef PK_VLC_SHIM_H
#define PK_VLC_SHIM_H

#include <stdarg.h>
#include <stdio.h>
#include <vlc/vlc.h>

/// Formats one libVLC log message (printf format and va_list) into `buffer`.
static inline int pk_vlc_format_log(char *buffer, size_t size, const char *format, va_list args) {
    if (buffer == NULL || size == 0) return 0;
    if (format == NULL) { buffer[0] = 0; return 0; }
    return vsnprintf(buffer, size, format, args);
}

#endif
