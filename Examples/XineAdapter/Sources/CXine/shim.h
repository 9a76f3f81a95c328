#ifndef XINE_ADAPTER_CXINE_SHIM_H
#define XINE_ADAPTER_CXINE_SHIM_H
// xine-lib 1.2 for the xine adapter: its frontend API (xine.h), and helpers for what Swift
// cannot reach (macros, structs with flexible members, the raw visual's callbacks).
//
// Two things come from the plugin API that libxine2-dev installs beside xine.h, because the
// frontend API does not give them:
// - the presentation time of each picture: xine's raw video output passes a picture without
//   it, so the adapter registers a static post plugin of its own (`pkx_timestamps`, through
//   xine_register_plugins, which xine offers frontends for plugins built into them) that
//   passes every picture on unchanged and notes its timestamp by its first plane;
// - how many bytes the stream's input has read (`pkx_bytes_read`).
#include <stdint.h>
#include <string.h>
#include <xine.h>
#include <xine/xine_internal.h>
#include <xine/input_plugin.h>
#include <xine/post.h>
#include <xine/xine_plugin.h>
#include <pthread.h>
#include <stdlib.h>

// MARK: - Outputs

/** What the raw video output calls for every picture it displays (xine's raw_output_cb). */
typedef void (*pkx_raw_frame_callback)(void *context, int format, int width, int height, double aspect,
                                       void *plane0, void *plane1, void *plane2);
/** What it calls for overlays (subtitles, OSD); the adapter draws none. */
typedef void (*pkx_raw_overlay_callback)(void *context, int count, raw_overlay_t *overlays);

/** Opens xine's raw video output ("raw", XINE_VISUAL_TYPE_RAW) for `context`, taking pictures
    as YV12 or YUY2 planes (xine converts to RGB itself only for pictures it does not crop, and
    every picture libavcodec decodes for it is cropped). NULL when xine has no raw output. */
static inline xine_video_port_t *pkx_open_raw_video(xine_t *xine, void *context, pkx_raw_frame_callback frame,
                                                    pkx_raw_overlay_callback overlay) {
    raw_visual_t visual;
    memset(&visual, 0, sizeof visual);
    visual.user_data = context;
    visual.supported_formats = XINE_VORAW_YV12 | XINE_VORAW_YUY2;
    visual.raw_output_cb = frame;
    visual.raw_overlay_cb = overlay;
    return xine_open_video_driver(xine, "raw", XINE_VISUAL_TYPE_RAW, &visual);
}

/** The format numbers the raw output passes to its callback. */
static inline int pkx_raw_yv12(void) { return XINE_VORAW_YV12; }
static inline int pkx_raw_yuy2(void) { return XINE_VORAW_YUY2; }

/** Bytes between rows of a raw output picture `width` pixels wide, by the raw output's own
    rule (video_out_raw.c allocates its planes so): the Y plane of YV12, its U and V planes,
    and the one plane of YUY2. The callback is given no pitches; the pictures are laid out so. */
static inline int pkx_yv12_luma_pitch(int width) { return 8 * ((width + 7) / 8); }
static inline int pkx_yv12_chroma_pitch(int width) { return 8 * ((width + 15) / 16); }
static inline int pkx_yuy2_pitch(int width) { return 8 * ((width + 3) / 4); }

// MARK: - Timestamps

/** How many pictures' timestamps the plugin keeps (more than xine's pictures in flight). */
#define PKX_TIMESTAMPS 64

/** The timestamp post plugin: the pictures drawn, by first plane, newest replacing oldest. */
typedef struct {
    post_plugin_t post;
    pthread_mutex_t lock;
    struct { const void *plane; int64_t pts; int64_t vpts; } drawn[PKX_TIMESTAMPS];
    int next;
    /* The last picture that carried a timestamp of its own, and the seek it belongs to. */
    int64_t last_pts, last_vpts;
    int last_seek, has_last;
} pkx_timestamps_t;

/** A picture the decoder hands on: passed to the output below, then noted with the
    timestamp it carries (pts, 1/90000 s, the stream's own) and the time xine's clock is to
    display it at (vpts, set by the output's metronom as the picture passes). A pts of 0 is
    xine's "none" (Theora has one only on keyframes) unless it is the first good picture
    after a seek: the picture then gets the last timestamp since that seek and the clock
    time between the two, as the metronom counts it. */
static inline int pkx_timestamps_draw(vo_frame_t *frame, xine_stream_t *stream) {
    post_video_port_t *port = (post_video_port_t *)frame->port;
    pkx_timestamps_t *this = (pkx_timestamps_t *)port->post;
    _x_post_frame_copy_down(frame, frame->next);
    int skip = frame->next->draw(frame->next, stream);
    _x_post_frame_copy_up(frame, frame->next);
    const void *plane = frame->next->base[0];
    int seek = frame->next->extra_info ? frame->next->extra_info->seek_count : 0;
    pthread_mutex_lock(&this->lock);
    int64_t pts = frame->pts;
    if (frame->bad_frame) {
        /* Not displayed (the decoder could not decode it): not a reference for others. */
    } else if (pts == 0 && this->has_last && this->last_seek == seek) {
        pts = this->last_pts + (frame->vpts - this->last_vpts);
    } else {
        this->last_pts = pts;
        this->last_vpts = frame->vpts;
        this->last_seek = seek;
        this->has_last = 1;
    }
    int slot = -1;
    for (int i = 0; i < PKX_TIMESTAMPS; i++) {
        if (this->drawn[i].plane == plane) { slot = i; break; }
    }
    if (slot < 0) {
        slot = this->next;
        this->next = (this->next + 1) % PKX_TIMESTAMPS;
    }
    this->drawn[slot].plane = plane;
    this->drawn[slot].pts = pts;

    this->drawn[slot].vpts = frame->vpts;
    pthread_mutex_unlock(&this->lock);
    return skip;
}

static inline void pkx_timestamps_dispose(post_plugin_t *post) {
    if (_x_post_dispose(post)) {
        pthread_mutex_destroy(&((pkx_timestamps_t *)post)->lock);
        free(post);
    }
}

static inline post_plugin_t *pkx_timestamps_open(post_class_t *class_gen, int inputs, xine_audio_port_t **audio_target,
                                                 xine_video_port_t **video_target) {
    (void)class_gen; (void)inputs; (void)audio_target;
    if (!video_target || !video_target[0]) return NULL;
    pkx_timestamps_t *this = calloc(1, sizeof *this);
    if (!this) return NULL;
    _x_post_init(&this->post, 0, 1);
    pthread_mutex_init(&this->lock, NULL);
    post_in_t *input;
    post_out_t *output;
    post_video_port_t *port = _x_post_intercept_video_port(&this->post, video_target[0], &input, &output);
    port->new_frame->draw = pkx_timestamps_draw;
    input->xine_in.name = "video";
    output->xine_out.name = "timed video";
    this->post.xine_post.video_input[0] = &port->new_port;
    this->post.dispose = pkx_timestamps_dispose;
    return &this->post;
}

static inline void *pkx_timestamps_class(xine_t *xine, const void *data) {
    (void)xine; (void)data;
    static const post_class_t class = {
        .open_plugin = pkx_timestamps_open,
        .identifier = "pkx_timestamps",
        .description = "notes the timestamp of every picture for the PlaybackKit adapter",
    };
    return (void *)&class;
}

/** Registers the timestamp plugin with `xine` (once per engine instance). */
static inline void pkx_register_timestamps(xine_t *xine) {
    static const post_info_t info = { XINE_POST_TYPE_VIDEO_FILTER };
    static const plugin_info_t plugins[] = {
        { PLUGIN_POST, POST_PLUGIN_IFACE_VERSION, "pkx_timestamps", XINE_VERSION_CODE, &info, pkx_timestamps_class },
        { PLUGIN_NONE, 0, NULL, 0, NULL, NULL },
    };
    xine_register_plugins(xine, plugins);
}

/** A timestamp plugin in front of `output`; its video input (`pkx_timestamps_input`) is the
    port the stream draws into. NULL when the plugin cannot be made. Free with xine_post_dispose. */
static inline xine_post_t *pkx_open_timestamps(xine_t *xine, xine_video_port_t *output) {
    xine_video_port_t *targets[1] = { output };
    return xine_post_init(xine, "pkx_timestamps", 0, NULL, targets);
}

static inline xine_video_port_t *pkx_timestamps_input(xine_post_t *post) { return post->video_input[0]; }

/** The timestamp and display time of the picture whose first plane is `plane` (what the raw
    output's callback is given); 0 when the plugin saw no such picture. */
static inline int pkx_timestamp_of(xine_post_t *post, const void *plane, int64_t *pts, int64_t *vpts) {
    pkx_timestamps_t *this = (pkx_timestamps_t *)post;
    int found = 0;
    pthread_mutex_lock(&this->lock);
    for (int i = 0; i < PKX_TIMESTAMPS; i++) {
        if (this->drawn[i].plane == plane) {
            *pts = this->drawn[i].pts;
            *vpts = this->drawn[i].vpts;
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&this->lock);
    return found;
}

// MARK: - Bytes

/** Bytes the input has read so far (its position), or 0 without an input. Only between
    xine_open and xine_close, on the thread that calls them. */
static inline int64_t pkx_bytes_read(xine_stream_t *stream) {
    input_plugin_t *input = stream->input_plugin;
    return input ? (int64_t)input->get_current_pos(input) : 0;
}

// MARK: - Events

/** The explanation of a XINE_EVENT_UI_MESSAGE (its messages start at offsets). */
static inline const char *pkx_message_explanation(const xine_ui_message_data_t *data) {
    return data->explanation ? (const char *)data + data->explanation : "";
}
/** Its first parameter (a file name, a host), or "". */
static inline const char *pkx_message_parameter(const xine_ui_message_data_t *data) {
    return data->num_parameters > 0 && data->parameters ? (const char *)data + data->parameters : "";
}

// MARK: - Pictures

/** One limited-range BT.601 YUV sample as RGBA. */
static inline void pkx_yuv_to_rgba(int y, int u, int v, uint8_t *out) {
    int c = 298 * (y - 16) + 128, d = u - 128, e = v - 128;
    int r = (c + 409 * e) >> 8, g = (c - 100 * d - 208 * e) >> 8, b = (c + 516 * d) >> 8;
    out[0] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
    out[1] = (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g);
    out[2] = (uint8_t)(b < 0 ? 0 : b > 255 ? 255 : b);
    out[3] = 255;
}

/** Converts the top-left `width` x `height` of a raw output picture (YV12 planes with their
    pitches, or one YUY2 plane) to RGBA at `out_width` x `out_height` (nearest sample: only
    a non-square pixel aspect scales), `out_pitch` bytes a row. */
static inline void pkx_convert_to_rgba(int format, const uint8_t *plane0, const uint8_t *plane1, const uint8_t *plane2,
                                       int pitch0, int pitch1, int width, int height,
                                       uint8_t *out, int out_pitch, int out_width, int out_height) {
    for (int row = 0; row < out_height; row++) {
        int y = out_height == height ? row : (int)((int64_t)row * height / out_height);
        uint8_t *target = out + (size_t)row * out_pitch;
        if (format == XINE_VORAW_YV12) {
            const uint8_t *luma = plane0 + (size_t)y * pitch0;
            const uint8_t *u = plane1 + (size_t)(y / 2) * pitch1, *v = plane2 + (size_t)(y / 2) * pitch1;
            for (int column = 0; column < out_width; column++) {
                int x = out_width == width ? column : (int)((int64_t)column * width / out_width);
                pkx_yuv_to_rgba(luma[x], u[x / 2], v[x / 2], target + 4 * column);
            }
        } else {
            const uint8_t *line = plane0 + (size_t)y * pitch0;
            for (int column = 0; column < out_width; column++) {
                int x = out_width == width ? column : (int)((int64_t)column * width / out_width);
                const uint8_t *pair = line + 4 * (x / 2);
                pkx_yuv_to_rgba(pair[2 * (x & 1)], pair[1], pair[3], target + 4 * column);
            }
        }
    }
}

#endif
