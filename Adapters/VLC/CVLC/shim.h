#ifndef PK_VLC_SHIM_H
#define PK_VLC_SHIM_H

#include <stdarg.h>
#include <stdio.h>
#include <vlc/vlc.h>
#include <X11/Xlib.h>

/// Formats one libVLC log message (printf format and va_list) into `buffer`.
static inline int pk_vlc_format_log(char *buffer, size_t size, const char *format, va_list args) {
    if (buffer == NULL || size == 0) return 0;
    if (format == NULL) { buffer[0] = 0; return 0; }
    return vsnprintf(buffer, size, format, args);
}

/// The size of the X11 window `window` on the default display; 0 on success, -1 without a
/// display or window.
static inline int pk_vlc_x11_window_size(unsigned long window, int *width, int *height) {
    Display *display = XOpenDisplay(NULL);
    if (display == NULL) return -1;
    XWindowAttributes attributes;
    int ok = XGetWindowAttributes(display, (Window)window, &attributes);
    XCloseDisplay(display);
    if (!ok) return -1;
    *width = attributes.width;
    *height = attributes.height;
    return 0;
}

#endif
