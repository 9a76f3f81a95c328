#ifndef PLAYBACKKIT_CMEDIAPROBE_SHIM_H
#define PLAYBACKKIT_CMEDIAPROBE_SHIM_H
// libavformat and libavcodec for what a file holds (MediaProbe: streams, tags, subtitle cues),
// for engines whose own model does not say.
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/display.h>

/** AV_NOPTS_VALUE is a macro the importer cannot see. */
static inline int64_t pk_sub_nopts(void) { return AV_NOPTS_VALUE; }
/** AVERROR_EOF is a macro the importer cannot see. */
static inline int pk_sub_error_eof(void) { return AVERROR_EOF; }
/** The rectangle `index` of a decoded subtitle. */
static inline AVSubtitleRect *pk_sub_rect(const AVSubtitle *subtitle, unsigned index) {
    return index < subtitle->num_rects ? subtitle->rects[index] : NULL;
}

#endif
