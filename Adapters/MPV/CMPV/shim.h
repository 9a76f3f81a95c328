#ifndef PK_MPV_SHIM_H
#define PK_MPV_SHIM_H

// libmpv is not linked: its headers give the types, and the functions are looked up with
// dlopen/dlsym the first time a player is made (libmpv pulls in a large tree of libraries that
// processes playing with another engine should not load). Call `pk_mpv_load()` and check for
// NULL before any other `pk_mpv_` function that calls into libmpv.

#include <mpv/client.h>
#include <mpv/render.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// MARK: - Loader

/// The soname looked up at run time (libmpv's client API 2.x).
#define PK_MPV_SONAME "libmpv.so.2"

/// Every libmpv function the adapter calls, as X(name) with name the part after `mpv_`.
#define PK_MPV_FUNCTIONS(X) \
    X(client_api_version) X(error_string) X(free) X(free_node_contents) \
    X(create) X(initialize) X(terminate_destroy) \
    X(set_option) X(set_option_string) X(set_property_async) \
    X(get_property) X(get_property_string) X(observe_property) \
    X(command_async) X(command_ret) X(request_log_messages) \
    X(wait_event) X(wakeup) X(get_time_us) \
    X(render_context_create) X(render_context_free) X(render_context_get_info) \
    X(render_context_render) X(render_context_set_update_callback) X(render_context_update)

#define PK_MPV_POINTER_FIELD(name) __typeof__(mpv_##name) *name;

/// The looked-up libmpv entry points; all set once `error` is empty.
typedef struct pk_mpv_functions {
    PK_MPV_FUNCTIONS(PK_MPV_POINTER_FIELD)
} pk_mpv_functions;

#undef PK_MPV_POINTER_FIELD

/// The table, its once-guard and the load error text. A function-local static: `static` data
/// in a header would be a separate copy per translation unit anyway, and each copy is filled by
/// its own once-guard (repeat loads are harmless: dlopen counts references and dlsym returns
/// the same addresses).
typedef struct pk_mpv_library {
    pthread_once_t once;
    pk_mpv_functions functions;
    char error[512];
} pk_mpv_library;

/// This translation unit's library record (see `pk_mpv_library`).
static inline pk_mpv_library *pk_mpv_library_storage(void) {
    static pk_mpv_library library = { PTHREAD_ONCE_INIT };
    return &library;
}

/// Opens libmpv and looks up every function; on failure leaves the reason in `error`.
static inline void pk_mpv_library_fill(void) {
    pk_mpv_library *library = pk_mpv_library_storage();
    void *handle = dlopen(PK_MPV_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(library->error, sizeof library->error, "%s", reason ? reason : "dlopen(" PK_MPV_SONAME ") failed");
        return;
    }
    pk_mpv_functions functions;
#define PK_MPV_LOOK_UP(name) \
    functions.name = (__typeof__(mpv_##name) *)dlsym(handle, "mpv_" #name); \
    if (functions.name == NULL) { \
        snprintf(library->error, sizeof library->error, "%s: missing symbol mpv_%s", PK_MPV_SONAME, #name); \
        dlclose(handle); \
        return; \
    }
    PK_MPV_FUNCTIONS(PK_MPV_LOOK_UP)
#undef PK_MPV_LOOK_UP
    library->functions = functions;
    library->error[0] = '\0';
}

/// Loads libmpv once (thread-safe). Returns NULL when every function is available, otherwise
/// the reason (dlerror()'s text or the missing symbol); the text stays valid for the process.
static inline const char *pk_mpv_load(void) {
    pk_mpv_library *library = pk_mpv_library_storage();
    pthread_once(&library->once, pk_mpv_library_fill);
    return library->error[0] == '\0' ? NULL : library->error;
}

/// The loaded functions; only valid after `pk_mpv_load()` returned NULL.
static inline const pk_mpv_functions *pk_mpv_fn(void) {
    (void)pk_mpv_load();
    return &pk_mpv_library_storage()->functions;
}

// MARK: - libmpv calls (client API)

/// mpv_client_api_version.
static inline unsigned long pk_mpv_client_api_version(void) { return pk_mpv_fn()->client_api_version(); }

/// mpv_error_string.
static inline const char *pk_mpv_error_string(int error) { return pk_mpv_fn()->error_string(error); }

/// mpv_free.
static inline void pk_mpv_free(void *data) { pk_mpv_fn()->free(data); }

/// mpv_free_node_contents.
static inline void pk_mpv_free_node_contents(mpv_node *node) { pk_mpv_fn()->free_node_contents(node); }

/// mpv_create.
static inline mpv_handle *pk_mpv_create(void) { return pk_mpv_fn()->create(); }

/// mpv_initialize.
static inline int pk_mpv_initialize(mpv_handle *ctx) { return pk_mpv_fn()->initialize(ctx); }

/// mpv_terminate_destroy.
static inline void pk_mpv_terminate_destroy(mpv_handle *ctx) { pk_mpv_fn()->terminate_destroy(ctx); }

/// mpv_set_option.
static inline int pk_mpv_set_option(mpv_handle *ctx, const char *name, mpv_format format, void *data) {
    return pk_mpv_fn()->set_option(ctx, name, format, data);
}

/// mpv_set_option_string.
static inline int pk_mpv_set_option_string(mpv_handle *ctx, const char *name, const char *data) {
    return pk_mpv_fn()->set_option_string(ctx, name, data);
}

/// mpv_set_property_async.
static inline int pk_mpv_set_property_async(mpv_handle *ctx, uint64_t reply_userdata, const char *name,
                                            mpv_format format, void *data) {
    return pk_mpv_fn()->set_property_async(ctx, reply_userdata, name, format, data);
}

/// mpv_get_property.
static inline int pk_mpv_get_property(mpv_handle *ctx, const char *name, mpv_format format, void *data) {
    return pk_mpv_fn()->get_property(ctx, name, format, data);
}

/// mpv_get_property_string.
static inline char *pk_mpv_get_property_string(mpv_handle *ctx, const char *name) {
    return pk_mpv_fn()->get_property_string(ctx, name);
}

/// mpv_observe_property.
static inline int pk_mpv_observe_property(mpv_handle *mpv, uint64_t reply_userdata, const char *name,
                                          mpv_format format) {
    return pk_mpv_fn()->observe_property(mpv, reply_userdata, name, format);
}

/// mpv_command_async.
static inline int pk_mpv_command_async(mpv_handle *ctx, uint64_t reply_userdata, const char **args) {
    return pk_mpv_fn()->command_async(ctx, reply_userdata, args);
}

/// mpv_command_ret.
static inline int pk_mpv_command_ret(mpv_handle *ctx, const char **args, mpv_node *result) {
    return pk_mpv_fn()->command_ret(ctx, args, result);
}

/// mpv_request_log_messages.
static inline int pk_mpv_request_log_messages(mpv_handle *ctx, const char *min_level) {
    return pk_mpv_fn()->request_log_messages(ctx, min_level);
}

/// mpv_wait_event.
static inline mpv_event *pk_mpv_wait_event(mpv_handle *ctx, double timeout) {
    return pk_mpv_fn()->wait_event(ctx, timeout);
}

/// mpv_wakeup.
static inline void pk_mpv_wakeup(mpv_handle *ctx) { pk_mpv_fn()->wakeup(ctx); }

// MARK: - libmpv calls (render API)

/// mpv_render_context_create.
static inline int pk_mpv_render_context_create(mpv_render_context **res, mpv_handle *mpv, mpv_render_param *params) {
    return pk_mpv_fn()->render_context_create(res, mpv, params);
}

/// mpv_render_context_free.
static inline void pk_mpv_render_context_free(mpv_render_context *ctx) { pk_mpv_fn()->render_context_free(ctx); }

/// mpv_get_time_us.
static inline int64_t pk_mpv_get_time_us(mpv_handle *ctx) { return pk_mpv_fn()->get_time_us(ctx); }

/// mpv_render_context_get_info.
static inline int pk_mpv_render_context_get_info(mpv_render_context *ctx, mpv_render_param param) {
    return pk_mpv_fn()->render_context_get_info(ctx, param);
}

/// mpv_render_context_render.
static inline int pk_mpv_render_context_render(mpv_render_context *ctx, mpv_render_param *params) {
    return pk_mpv_fn()->render_context_render(ctx, params);
}

/// mpv_render_context_set_update_callback.
static inline void pk_mpv_render_context_set_update_callback(mpv_render_context *ctx,
                                                             mpv_render_update_fn callback, void *callback_ctx) {
    pk_mpv_fn()->render_context_set_update_callback(ctx, callback, callback_ctx);
}

/// mpv_render_context_update.
static inline uint64_t pk_mpv_render_context_update(mpv_render_context *ctx) {
    return pk_mpv_fn()->render_context_update(ctx);
}

// MARK: - Helpers for macros

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
