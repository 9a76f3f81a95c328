#ifndef PK_FFMPEG_SHIM_H
#define PK_FFMPEG_SHIM_H

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <pthread.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersrc.h>
#include <libavfilter/buffersink.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/error.h>
#include <libavutil/samplefmt.h>
#include <SDL2/SDL.h>

/* Macros and function-like macros the Swift importer cannot see, as prefixed helpers. */

/** AVERROR(e): the negative error code for a POSIX errno value. */
static inline int pk_av_error(int e) { return AVERROR(e); }
/** AVERROR_EOF. */
static inline int pk_av_error_eof(void) { return AVERROR_EOF; }
/** AVERROR(EAGAIN). */
static inline int pk_av_error_eagain(void) { return AVERROR(EAGAIN); }
/** AVERROR_EXIT (an interrupt callback asked to stop). */
static inline int pk_av_error_exit(void) { return AVERROR_EXIT; }
/** AVERROR_INVALIDDATA. */
static inline int pk_av_error_invaliddata(void) { return AVERROR_INVALIDDATA; }
/** AVERROR_DECODER_NOT_FOUND. */
static inline int pk_av_error_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
/** AVERROR_DEMUXER_NOT_FOUND. */
static inline int pk_av_error_demuxer_not_found(void) { return AVERROR_DEMUXER_NOT_FOUND; }
/** AVERROR_STREAM_NOT_FOUND. */
static inline int pk_av_error_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }
/** AVERROR_PATCHWELCOME. */
static inline int pk_av_error_patchwelcome(void) { return AVERROR_PATCHWELCOME; }
/** AVERROR_PROTOCOL_NOT_FOUND. */
static inline int pk_av_error_protocol_not_found(void) { return AVERROR_PROTOCOL_NOT_FOUND; }
/** True for the AVERROR_HTTP_* codes (4xx and 5xx replies). */
static inline int pk_av_error_is_http(int e) {
    return e == AVERROR_HTTP_BAD_REQUEST || e == AVERROR_HTTP_UNAUTHORIZED || e == AVERROR_HTTP_FORBIDDEN
        || e == AVERROR_HTTP_NOT_FOUND || e == AVERROR_HTTP_OTHER_4XX || e == AVERROR_HTTP_SERVER_ERROR;
}
/** AV_NOPTS_VALUE. */
static inline int64_t pk_av_nopts_value(void) { return AV_NOPTS_VALUE; }
/** AV_TIME_BASE. */
static inline int64_t pk_av_time_base(void) { return AV_TIME_BASE; }
/** av_q2d without relying on the importer's handling of inline functions on structs. */
static inline double pk_av_q2d(AVRational q) { return q.den ? (double)q.num / (double)q.den : 0.0; }
/** The version string of libavutil's FFmpeg release. */
static inline const char *pk_av_version_info(void) { return av_version_info(); }
/** AV_VERSION_MAJOR/MINOR/MICRO of a packed library version. */
static inline unsigned pk_av_version_major(unsigned v) { return AV_VERSION_MAJOR(v); }
static inline unsigned pk_av_version_minor(unsigned v) { return AV_VERSION_MINOR(v); }
static inline unsigned pk_av_version_micro(unsigned v) { return AV_VERSION_MICRO(v); }
/* SDL2 is not linked: its header gives the types, and the few functions the system audio
 * output calls are looked up with dlopen/dlsym the first time a device is opened (SDL2 and
 * what it pulls in cost every process about 2 MiB of memory, also those that play with
 * another engine or without sound). Call `pk_sdl_load()` and check for NULL before any other
 * `pk_sdl_` function that calls into SDL. */

/** The soname looked up at run time. */
#define PK_SDL_SONAME "libSDL2-2.0.so.0"

/** Every SDL function the adapter calls, as X(name) with name the part after `SDL_`. */
#define PK_SDL_FUNCTIONS(X) \
    X(InitSubSystem) X(QuitSubSystem) X(GetError) X(OpenAudioDevice) X(CloseAudioDevice) \
    X(PauseAudioDevice) X(MixAudioFormat)

#define PK_SDL_POINTER_FIELD(name) __typeof__(SDL_##name) *name;
/** The looked-up SDL entry points; all set once `error` is empty. */
typedef struct pk_sdl_functions {
    PK_SDL_FUNCTIONS(PK_SDL_POINTER_FIELD)
} pk_sdl_functions;
#undef PK_SDL_POINTER_FIELD

/** The table, its once-guard and the load error text (one per translation unit that loads it;
 *  repeat loads are harmless: dlopen counts references and dlsym returns the same addresses). */
typedef struct pk_sdl_library {
    pthread_once_t once;
    pk_sdl_functions functions;
    char error[512];
} pk_sdl_library;

/** This translation unit's library record. */
static inline pk_sdl_library *pk_sdl_library_storage(void) {
    static pk_sdl_library library = { PTHREAD_ONCE_INIT };
    return &library;
}

/** Opens SDL2 and looks up every function; on failure leaves the reason in `error`. */
static inline void pk_sdl_library_fill(void) {
    pk_sdl_library *library = pk_sdl_library_storage();
    void *handle = dlopen(PK_SDL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(library->error, sizeof library->error, "%s", reason ? reason : "dlopen(" PK_SDL_SONAME ") failed");
        return;
    }
    pk_sdl_functions functions;
#define PK_SDL_LOOK_UP(name) \
    functions.name = (__typeof__(SDL_##name) *)dlsym(handle, "SDL_" #name); \
    if (functions.name == NULL) { \
        snprintf(library->error, sizeof library->error, "%s: missing symbol SDL_%s", PK_SDL_SONAME, #name); \
        dlclose(handle); \
        return; \
    }
    PK_SDL_FUNCTIONS(PK_SDL_LOOK_UP)
#undef PK_SDL_LOOK_UP
    library->functions = functions;
    library->error[0] = '\0';
}

/** Loads SDL2 once (thread-safe). Returns NULL when every function is available, otherwise the
 *  reason (dlerror()'s text or the missing symbol); the text stays valid for the process. */
static inline const char *pk_sdl_load(void) {
    pk_sdl_library *library = pk_sdl_library_storage();
    pthread_once(&library->once, pk_sdl_library_fill);
    return library->error[0] == '\0' ? NULL : library->error;
}

/** The loaded functions; only valid after `pk_sdl_load()` returned NULL. */
static inline const pk_sdl_functions *pk_sdl_fn(void) {
    (void)pk_sdl_load();
    return &pk_sdl_library_storage()->functions;
}

/** SDL_InitSubSystem. */
static inline int pk_sdl_init_subsystem(Uint32 flags) { return pk_sdl_fn()->InitSubSystem(flags); }
/** SDL_QuitSubSystem. */
static inline void pk_sdl_quit_subsystem(Uint32 flags) { pk_sdl_fn()->QuitSubSystem(flags); }
/** SDL_GetError. */
static inline const char *pk_sdl_get_error(void) { return pk_sdl_fn()->GetError(); }
/** SDL_OpenAudioDevice. */
static inline SDL_AudioDeviceID pk_sdl_open_audio_device(const char *device, int iscapture, const SDL_AudioSpec *desired,
                                                         SDL_AudioSpec *obtained, int allowed_changes) {
    return pk_sdl_fn()->OpenAudioDevice(device, iscapture, desired, obtained, allowed_changes);
}
/** SDL_CloseAudioDevice. */
static inline void pk_sdl_close_audio_device(SDL_AudioDeviceID device) { pk_sdl_fn()->CloseAudioDevice(device); }
/** SDL_PauseAudioDevice. */
static inline void pk_sdl_pause_audio_device(SDL_AudioDeviceID device, int pause_on) { pk_sdl_fn()->PauseAudioDevice(device, pause_on); }
/** SDL_MixAudioFormat. */
static inline void pk_sdl_mix_audio_format(Uint8 *dst, const Uint8 *src, SDL_AudioFormat format, Uint32 len, int volume) {
    pk_sdl_fn()->MixAudioFormat(dst, src, format, len, volume);
}

/** AUDIO_S16SYS. */
static inline SDL_AudioFormat pk_sdl_audio_s16sys(void) { return AUDIO_S16SYS; }
/** SDL_MIX_MAXVOLUME. */
static inline int pk_sdl_mix_maxvolume(void) { return SDL_MIX_MAXVOLUME; }
/** SDL_AUDIO_ALLOW_FREQUENCY_CHANGE | SDL_AUDIO_ALLOW_CHANNELS_CHANGE. */
static inline int pk_sdl_audio_allow_changes(void) { return SDL_AUDIO_ALLOW_FREQUENCY_CHANGE | SDL_AUDIO_ALLOW_CHANNELS_CHANGE; }

/* The interrupt flag: an int read by FFmpeg's blocking I/O through AVIOInterruptCB. */

static inline int pk_interrupt_check(void *flag) { return __atomic_load_n((int *)flag, __ATOMIC_ACQUIRE); }
/** Installs the interrupt callback reading `flag` (owned by the caller, alive until the
 *  context is closed). */
static inline void pk_install_interrupt(AVFormatContext *context, int *flag) {
    context->interrupt_callback.callback = pk_interrupt_check;
    context->interrupt_callback.opaque = flag;
}
/** Sets the interrupt flag. */
static inline void pk_interrupt_set(int *flag, int value) { __atomic_store_n(flag, value, __ATOMIC_RELEASE); }

#endif
