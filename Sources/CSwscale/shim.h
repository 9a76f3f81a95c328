#ifndef PLAYBACKKIT_CSWSCALE_SHIM_H
#define PLAYBACKKIT_CSWSCALE_SHIM_H
// libswscale and the parts of libavutil that describe pixel formats, for the one picture
// converter every adapter that converts pictures shares (PictureConversion).
#include <libswscale/swscale.h>
#include <libavutil/pixdesc.h>
#include <libavutil/pixfmt.h>

/** The flag that marks a planar pixel format in AVPixFmtDescriptor.flags. */
static inline unsigned long long pk_pix_fmt_flag_planar(void) { return AV_PIX_FMT_FLAG_PLANAR; }

#endif
