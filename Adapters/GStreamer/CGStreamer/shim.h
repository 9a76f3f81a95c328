#ifndef PK_GSTREAMER_SHIM_H
#define PK_GSTREAMER_SHIM_H

// GStreamer as GStreamerPlayback sees it. The importer can't see GStreamer's and GLib's
// function-like macros (casts, type checks, g_signal_connect, variadic property setters):
// each one used becomes a `pk_gst_` helper below.

#include <string.h>
#include <gst/gst.h>
#include <gio/gio.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>
#include <gst/audio/audio.h>

// MARK: - Constants

/// GST_SECOND.
static inline GstClockTime pk_gst_second(void) { return GST_SECOND; }
/// G_SOURCE_CONTINUE / G_SOURCE_REMOVE.
static inline gboolean pk_g_source_continue(void) { return G_SOURCE_CONTINUE; }
static inline gboolean pk_g_source_remove(void) { return G_SOURCE_REMOVE; }
/// GST_FORMAT_PERCENT_MAX.
static inline gint64 pk_gst_format_percent_max(void) { return GST_FORMAT_PERCENT_MAX; }

// MARK: - Casts and type checks

static inline GstObject *pk_gst_object(gpointer object) { return GST_OBJECT(object); }
static inline GstElement *pk_gst_element(gpointer object) { return GST_ELEMENT(object); }
static inline GstBin *pk_gst_bin(gpointer object) { return GST_BIN(object); }
static inline GstAppSink *pk_gst_app_sink(gpointer object) { return GST_APP_SINK(object); }
static inline gboolean pk_gst_is_element(gpointer object) { return GST_IS_ELEMENT(object); }
/// Whether `object` is an element that produces data of its own (filesrc, souphttpsrc, ...).
static inline gboolean pk_gst_is_source_element(gpointer object) {
    return GST_IS_ELEMENT(object) && GST_OBJECT_FLAG_IS_SET(object, GST_ELEMENT_FLAG_SOURCE);
}

// MARK: - Messages and buffers

static inline GstMessageType pk_gst_message_type(GstMessage *message) { return GST_MESSAGE_TYPE(message); }
static inline GstObject *pk_gst_message_src(GstMessage *message) { return GST_MESSAGE_SRC(message); }
static inline GstClockTime pk_gst_buffer_pts(GstBuffer *buffer) { return GST_BUFFER_PTS(buffer); }
static inline gboolean pk_gst_clock_time_is_valid(GstClockTime time) { return GST_CLOCK_TIME_IS_VALID(time); }

/// The name of the factory that made `element` ("souphttpsrc", "qtdemux", ...), or NULL.
static inline const gchar *pk_gst_element_factory_name(GstElement *element) {
    GstElementFactory *factory = gst_element_get_factory(element);
    return factory ? GST_OBJECT_NAME(factory) : NULL;
}

/// The factory's class string ("Codec/Demuxer", ...), or NULL.
static inline const gchar *pk_gst_element_klass(GstElement *element) {
    GstElementFactory *factory = gst_element_get_factory(element);
    return factory ? gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS) : NULL;
}

/// The bytes a buffer (or buffer list) probe sees; 0 for anything else.
/// The buffer a buffer probe sees (not a reference), or NULL.
static inline GstBuffer *pk_gst_probe_info_buffer(GstPadProbeInfo *info) {
    return (info->type & GST_PAD_PROBE_TYPE_BUFFER) ? GST_PAD_PROBE_INFO_BUFFER(info) : NULL;
}
static inline gsize pk_gst_probe_info_byte_count(GstPadProbeInfo *info) {
    if ((info->type & GST_PAD_PROBE_TYPE_BUFFER) && GST_PAD_PROBE_INFO_BUFFER(info)) {
        return gst_buffer_get_size(GST_PAD_PROBE_INFO_BUFFER(info));
    }
    if ((info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) && GST_PAD_PROBE_INFO_BUFFER_LIST(info)) {
        return gst_buffer_list_calculate_size(GST_PAD_PROBE_INFO_BUFFER_LIST(info));
    }
    return 0;
}

// MARK: - Properties (g_object_get / g_object_set are variadic)

static inline gboolean pk_gst_has_property(gpointer object, const gchar *name) {
    return g_object_class_find_property(G_OBJECT_GET_CLASS(object), name) != NULL;
}
static inline void pk_gst_set_bool(gpointer object, const gchar *name, gboolean value) { g_object_set(object, name, value, NULL); }
static inline void pk_gst_set_int(gpointer object, const gchar *name, gint value) { g_object_set(object, name, value, NULL); }
static inline void pk_gst_set_uint(gpointer object, const gchar *name, guint value) { g_object_set(object, name, value, NULL); }
static inline void pk_gst_set_double(gpointer object, const gchar *name, gdouble value) { g_object_set(object, name, value, NULL); }
static inline void pk_gst_set_string(gpointer object, const gchar *name, const gchar *value) { g_object_set(object, name, value, NULL); }
static inline void pk_gst_set_object(gpointer object, const gchar *name, gpointer value) { g_object_set(object, name, value, NULL); }
/** The clockwise quarter turn (0, 90, 180, 270) the image-orientation tag on `pad` asks for
 *  (flipped variants included: "flip-rotate-90" turns the axes as "rotate-90" does); 0 when
 *  no tag event there carries one. */
static inline int pk_gst_pad_orientation_turn(GstPad *pad) {
    int turn = 0;
    for (guint index = 0; ; index++) {
        GstEvent *event = gst_pad_get_sticky_event(pad, GST_EVENT_TAG, index);
        if (!event) break;
        GstTagList *tags = NULL;
        gst_event_parse_tag(event, &tags);
        gchar *orientation = NULL;
        if (tags && gst_tag_list_get_string(tags, GST_TAG_IMAGE_ORIENTATION, &orientation) && orientation) {
            const gchar *rotate = g_strrstr(orientation, "rotate-");
            if (rotate) turn = (int)g_ascii_strtoll(rotate + 7, NULL, 10);
            g_free(orientation);
        }
        gst_event_unref(event);
    }
    return (turn == 90 || turn == 180 || turn == 270) ? turn : 0;
}

/** Sets an enum property by its nick (e.g. "auto"). */
static inline void pk_gst_set_enum_nick(gpointer object, const gchar *name, const gchar *nick) { gst_util_set_object_arg(G_OBJECT(object), name, nick); }
static inline void pk_gst_set_caps(gpointer object, const gchar *name, GstCaps *value) { g_object_set(object, name, value, NULL); }
static inline void pk_gst_set_structure(gpointer object, const gchar *name, GstStructure *value) { g_object_set(object, name, value, NULL); }

static inline void pk_gst_set_int64(gpointer object, const gchar *name, gint64 value) { g_object_set(object, name, value, NULL); }

static inline gint pk_gst_get_int(gpointer object, const gchar *name) {
    gint value = 0;
    g_object_get(object, name, &value, NULL);
    return value;
}
/// A guint- or flags-valued property (flags are collected as guint).
static inline guint pk_gst_get_uint(gpointer object, const gchar *name) {
    guint value = 0;
    g_object_get(object, name, &value, NULL);
    return value;
}
static inline gdouble pk_gst_get_double(gpointer object, const gchar *name) {
    gdouble value = 0;
    g_object_get(object, name, &value, NULL);
    return value;
}
/// A GstSample-valued property (playbin's "sample"), owned by the caller (or NULL).
static inline GstSample *pk_gst_get_sample(gpointer object, const gchar *name) {
    GstSample *value = NULL;
    g_object_get(object, name, &value, NULL);
    return value;
}

/// A string field on a structure (gst_structure_set is variadic).
static inline void pk_gst_structure_set_string(GstStructure *structure, const gchar *field, const gchar *value) {
    gst_structure_set(structure, field, G_TYPE_STRING, value, NULL);
}

// MARK: - Caps

/// video/x-raw,format=RGBA,pixel-aspect-ratio=1/1 (and width/height when both are > 0).
static inline GstCaps *pk_gst_caps_rgba(gint width, gint height) {
    GstCaps *caps = gst_caps_new_simple("video/x-raw",
        "format", G_TYPE_STRING, "RGBA",
        "pixel-aspect-ratio", GST_TYPE_FRACTION, 1, 1, NULL);
    if (width > 0 && height > 0) {
        gst_caps_set_simple(caps, "width", G_TYPE_INT, width, "height", G_TYPE_INT, height, NULL);
    }
    return caps;
}

// MARK: - Signals (g_signal_connect is a macro; each helper casts its typed callback)

typedef void (*pk_gst_source_setup_callback)(GstElement *playbin, GstElement *source, gpointer data);
typedef void (*pk_gst_notify_callback)(GObject *object, GParamSpec *spec, gpointer data);
typedef void (*pk_gst_element_setup_callback)(GstElement *playbin, GstElement *element, gpointer data);

static inline gulong pk_gst_connect_source_setup(GstElement *playbin, pk_gst_source_setup_callback callback, gpointer data) {
    return g_signal_connect(playbin, "source-setup", G_CALLBACK(callback), data);
}
static inline gulong pk_gst_connect_element_setup(GstElement *playbin, pk_gst_element_setup_callback callback, gpointer data) {
    return g_signal_connect(playbin, "element-setup", G_CALLBACK(callback), data);
}
typedef void (*pk_gst_plain_callback)(GstElement *element, gpointer data);

/// A signal without arguments of its own ("video-changed", ...).
static inline gulong pk_gst_connect_plain(GstElement *element, const gchar *signal, pk_gst_plain_callback callback, gpointer data) {
    return g_signal_connect(element, signal, G_CALLBACK(callback), data);
}
/// "notify::<property>" on any object.
static inline gulong pk_gst_connect_notify(gpointer object, const gchar *detailed_signal, pk_gst_notify_callback callback, gpointer data) {
    return g_signal_connect(object, detailed_signal, G_CALLBACK(callback), data);
}

// MARK: - Network sources

/// The string property `name` of `object` (g_free it), or NULL.
static inline gchar *pk_gst_get_string(gpointer object, const gchar *name) {
    gchar *value = NULL;
    g_object_get(object, name, &value, NULL);
    return value;
}
/// A copy of the GstStructure property `name` of `object` (gst_structure_free it), or NULL.
static inline GstStructure *pk_gst_get_structure(gpointer object, const gchar *name) {
    GstStructure *value = NULL;
    g_object_get(object, name, &value, NULL);
    return value;
}

/// A TLS database trusting the authorities in the PEM file at `path` (g_object_unref it), or
/// NULL when the file cannot be read.
static inline gpointer pk_g_tls_file_database(const gchar *path) {
    GError *error = NULL;
    GTlsDatabase *database = g_tls_file_database_new(path, &error);
    if (error) g_error_free(error);
    return database;
}

/// The URI a source element reads (g_free it), or NULL when it reads none.
static inline gchar *pk_gst_source_uri(GstElement *element) {
    if (!GST_IS_URI_HANDLER(element) || gst_uri_handler_get_uri_type(GST_URI_HANDLER(element)) != GST_URI_SRC) return NULL;
    return gst_uri_handler_get_uri(GST_URI_HANDLER(element));
}
/// Posts a resource error (could not open for reading) from `element`, saying `text`.
static inline void pk_gst_post_resource_error(GstElement *element, const gchar *text) {
    GError *error = g_error_new_literal(GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ, text);
    gst_element_post_message(element, gst_message_new_error(GST_OBJECT(element), error, text));
    g_error_free(error);
}

typedef void (*pk_gst_element_visitor)(GstElement *element, gpointer data);
/// Calls `visit` for every element inside `bin`, at any depth (nothing when it is no bin).
static inline void pk_gst_bin_visit(GstElement *bin, pk_gst_element_visitor visit, gpointer data) {
    if (!GST_IS_BIN(bin)) return;
    GstIterator *iterator = gst_bin_iterate_recurse(GST_BIN(bin));
    GValue item = G_VALUE_INIT;
    gboolean done = FALSE;
    while (!done) {
        switch (gst_iterator_next(iterator, &item)) {
        case GST_ITERATOR_OK:
            visit(GST_ELEMENT(g_value_get_object(&item)), data);
            g_value_reset(&item);
            break;
        case GST_ITERATOR_RESYNC:
            gst_iterator_resync(iterator);
            break;
        default:
            done = TRUE;
            break;
        }
    }
    g_value_unset(&item);
    gst_iterator_free(iterator);
}

static inline gint pk_gst_autoplug_skip(GstElement *bin, GstPad *pad, GstCaps *caps, GstElementFactory *factory, gpointer name) {
    (void)bin; (void)pad; (void)caps;
    const gchar *candidate = gst_plugin_feature_get_name(GST_PLUGIN_FEATURE(factory));
    const gchar *pattern = (const gchar *)name;
    gsize length = strlen(pattern);
    gboolean matches = FALSE;
    if (candidate && length > 0 && pattern[length - 1] == '*') {
        matches = strncmp(candidate, pattern, length - 1) == 0;
    } else if (candidate) {
        matches = g_strcmp0(candidate, pattern) == 0;
    }
    return matches ? 2 /* GST_AUTOPLUG_SELECT_SKIP */ : 0 /* TRY */;
}
/// Makes `decodebin` pass over the element factory `name` when it autoplugs (its
/// "autoplug-select" answers SKIP for it, TRY for the others); a name ending in `*` passes
/// over every factory whose name starts with what comes before it.
static inline gulong pk_gst_decodebin_skip_factory(GstElement *decodebin, const gchar *name) {
    return g_signal_connect_data(decodebin, "autoplug-select", G_CALLBACK(pk_gst_autoplug_skip), g_strdup(name),
                                 (GClosureNotify)g_free, (GConnectFlags)0);
}

// MARK: - Playbin actions (g_signal_emit_by_name is variadic)

/// The pad of video stream `stream` before playbin's sink chain (decoded caps), owned by the
/// caller, or NULL.
static inline GstPad *pk_gst_playbin_video_pad(GstElement *playbin, gint stream) {
    GstPad *pad = NULL;
    g_signal_emit_by_name(playbin, "get-video-pad", stream, &pad);
    return pad;
}

/// The tags of stream `stream` through one of playbin's get-video-tags, get-audio-tags or
/// get-text-tags actions, owned by the caller, or NULL.
static inline GstTagList *pk_gst_playbin_stream_tags(GstElement *playbin, const gchar *action, gint stream) {
    GstTagList *tags = NULL;
    g_signal_emit_by_name(playbin, action, stream, &tags);
    return tags;
}
/// A string tag of `tags` as a new string (g_free it), or NULL.
static inline gchar *pk_gst_tag_string(const GstTagList *tags, const gchar *tag) {
    gchar *value = NULL;
    return gst_tag_list_get_string(tags, tag, &value) ? value : NULL;
}

// MARK: - App sink

typedef GstFlowReturn (*pk_gst_app_sink_callback)(GstAppSink *sink, gpointer data);

/// Sets the preroll and sample callbacks of an appsink (NULL callbacks clear them).
static inline void pk_gst_app_sink_set_callbacks(GstAppSink *sink, pk_gst_app_sink_callback preroll, pk_gst_app_sink_callback sample, gpointer data) {
    GstAppSinkCallbacks callbacks;
    memset(&callbacks, 0, sizeof callbacks);
    callbacks.new_preroll = preroll;
    callbacks.new_sample = sample;
    if (preroll == NULL && sample == NULL) {
        gst_app_sink_set_callbacks(sink, &callbacks, NULL, NULL);
    } else {
        gst_app_sink_set_callbacks(sink, &callbacks, data, NULL);
    }
}

// MARK: - Bus

typedef gboolean (*pk_gst_bus_callback)(GstBus *bus, GstMessage *message, gpointer data);

/// A bus watch attached to `context` (not the global default one); the caller owns the source.
static inline GSource *pk_gst_bus_attach_watch(GstBus *bus, GMainContext *context, pk_gst_bus_callback callback, gpointer data) {
    GSource *source = gst_bus_create_watch(bus);
    g_source_set_callback(source, (GSourceFunc)(void (*)(void))callback, data, NULL);
    g_source_attach(source, context);
    return source;
}

#endif
