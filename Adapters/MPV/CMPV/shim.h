#ifndef PK_MPV_SHIM_H
#define PK_MPV_SHIM_H

#include <mpv/client.h>
#include <mpv/render.h>
#include <stdint.h>
#include <stdlib.h>

/// The major part of a packed client API version (MPV_MAKE_VERSION is a function-like macro
/// the Swift importer cannot see).
static inline unsigned long pk_mpv_api_major(unsigned long version) { return version >> 16; }

/// The minor part of a packed client API version.
static inline unsigned long pk_mpv_api_minor(unsigned long version) { return version & 0xffff; }

/// The software render API name for MPV_RENDER_PARAM_API_TYPE.
static inline const char *pk_mpv_render_api_type_sw(void) { return MPV_RENDER_API_TYPE_SW; }

/// Allocates `size` bytes aligned to 64 (the software renderer's preferred alignment).
static inline void *pk_mpv_aligned_alloc(size_t size) {
    void *memory = NULL;
    if (posix_memalign(&memory, 64, size) != 0) return NULL;
    return memory;
}

#endif
