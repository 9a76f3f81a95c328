#ifndef PLAYBACKKIT_CSWSCALE_SHIM_H
#define PLAYBACKKIT_CSWSCALE_SHIM_H
// libswscale and the parts of libavutil that describe pixel formats, for the one picture
// converter every adapter that converts pictures shares (PictureConversion).
#include <libswscale/swscale.h>
#include <libavutil/pixdesc.h>
#include <libavutil/pixfmt.h>

/** The flag that marks a planar pixel format in AVPixFmtDescriptor.flags. */
static inline unsigned long long pk_pix_fmt_flag_planar(void) { return AV_PIX_FMT_FLAG_PLANAR; }

/** True when `format` is a packed RGB format (AV_PIX_FMT_FLAG_RGB). */
static inline int pk_pix_fmt_is_rgb(enum AVPixelFormat format) {
    const AVPixFmtDescriptor *descriptor = av_pix_fmt_desc_get(format);
    return descriptor != NULL && (descriptor->flags & AV_PIX_FMT_FLAG_RGB) != 0;
}

#endif
