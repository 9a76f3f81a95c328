#ifndef PK_X11_SHIM_H
#define PK_X11_SHIM_H

#include <stdatomic.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/keysym.h>

/* Macros the Swift importer cannot see, as prefixed helpers. */

/** ZPixmap. */
static inline int pk_x11_zpixmap(void) { return ZPixmap; }
/** AllPlanes. */
static inline unsigned long pk_x11_all_planes(void) { return AllPlanes; }
/** XDestroyImage (a macro): frees the image and its pixels. */
static inline void pk_x11_destroy_image(XImage *image) { XDestroyImage(image); }
/** XDestroyImage of an image whose pixels belong to the caller: frees the image alone. */
static inline void pk_x11_destroy_image_keep_data(XImage *image) { image->data = NULL; XDestroyImage(image); }
/** ConnectionNumber (a macro): the file descriptor of the display's connection. */
static inline int pk_x11_connection_number(Display *display) { return ConnectionNumber(display); }

/* X errors: Xlib's default handler ends the process. This one counts them instead, so a
 * request on a window that went away is a failed call, not an exit. */

static _Atomic int pk_x11_error_count = 0;
static _Atomic int pk_x11_last_error = 0;

static inline int pk_x11_count_error(Display *display, XErrorEvent *event) {
    (void)display;
    atomic_store(&pk_x11_last_error, (int)event->error_code);
    atomic_fetch_add(&pk_x11_error_count, 1);
    return 0;
}
/** Installs the counting handler (process-wide, as Xlib's handler is). */
static inline void pk_x11_install_error_handler(void) { XSetErrorHandler(pk_x11_count_error); }
/** How many X errors the counting handler has seen. */
static inline int pk_x11_errors_seen(void) { return atomic_load(&pk_x11_error_count); }
/** The code of the last X error the counting handler saw. */
static inline int pk_x11_last_error_code(void) { return atomic_load(&pk_x11_last_error); }

#endif
