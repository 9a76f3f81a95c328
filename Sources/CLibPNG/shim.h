#ifndef PLAYBACKKIT_CLIBPNG_SHIM_H
#define PLAYBACKKIT_CLIBPNG_SHIM_H
#include <png.h>

/// PNG_IMAGE_VERSION is a macro; the importer cannot see it.
static inline unsigned int pk_png_image_version(void) { return PNG_IMAGE_VERSION; }
/// PNG_FORMAT_RGBA is a macro; the importer cannot see it.
static inline unsigned int pk_png_format_rgba(void) { return PNG_FORMAT_RGBA; }
/// PNG_FORMAT_RGB is a macro; the importer cannot see it.
static inline unsigned int pk_png_format_rgb(void) { return PNG_FORMAT_RGB; }
/// PNG_IMAGE_FLAG_FAST (no row filters, zlib level 3) is a macro; the importer cannot see it.
static inline unsigned int pk_png_image_flag_fast(void) { return PNG_IMAGE_FLAG_FAST; }
#endif
