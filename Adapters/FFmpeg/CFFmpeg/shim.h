#ifndef PK_FFMPEG_SHIM_H
#define PK_FFMPEG_SHIM_H

#include <errno.h>
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
