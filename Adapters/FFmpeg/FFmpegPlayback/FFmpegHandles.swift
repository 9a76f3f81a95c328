#if FFmpeg
import CFFmpeg
import FoundationEssentials
import PictureConversion
import PlaybackKit

// The FFmpeg engine's C handles, each in the one final class that owns it and frees it in its
// deinit, the one place it is released: the interrupt flag of blocking I/O, the demuxer
// (FormatInput), a decoder (CodecDecoder), a frame (OwnedFrame), the resampler; and how a
// decoded frame is read by the picture converter. Owners are created and used by one session.

// MARK: - Interrupt flag

/// The flag FFmpeg's blocking I/O polls through `AVIOInterruptCB`: set, every open, read or
/// seek in progress returns AVERROR_EXIT at once. Outlives the format context that reads it.
final class InterruptFlag: @unchecked Sendable {
    // @unchecked: the int is only read and written with atomic operations (see shim.h).
    let pointer: UnsafeMutablePointer<Int32>
    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: 0)
    }
    deinit { pointer.deallocate() }
    /// Asks every blocking FFmpeg call to return.
    func raise() { pk_interrupt_set(pointer, 1) }
    /// True once raised.
    var isRaised: Bool { pk_interrupt_check(pointer) != 0 }
}

// MARK: - Demuxer

/// An opened `AVFormatContext` (demuxer and its I/O).
final class FormatInput {
    let context: UnsafeMutablePointer<AVFormatContext>
    private let interrupt: InterruptFlag
    /// What every open of a network source goes through (its `opaque` points at it).
    let network: NetworkAccess?

    /// Opens `location` with the interrupt callback installed, and for a network source every
    /// open going through `network` (kept alive as long as the context); throws the mapped
    /// error, or the refusal of a forbidden reference.
    init(location: String, network: NetworkAccess?, interrupt: InterruptFlag) throws(PlaybackError) {
        self.interrupt = interrupt
        self.network = network
        guard let allocated = avformat_alloc_context() else {
            throw PlaybackError(code: .engine, message: "open: out of memory")
        }
        pk_install_interrupt(allocated, interrupt.pointer)
        var options: OpaquePointer?
        if let network {
            network.install(on: allocated)
            network.apply(to: &options)
        }
        var context: UnsafeMutablePointer<AVFormatContext>? = allocated
        let status = avformat_open_input(&context, location, nil, &options)
        av_dict_free(&options)
        guard status >= 0, let context else {
            // avformat_open_input frees the context on failure.
            if let refusal = network?.refusal { throw refusal }
            throw FFmpegErrors.map(status, step: "open", location: location, isNetwork: network != nil)
        }
        self.context = context
    }

    deinit {
        var context: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&context)
    }

    /// Reads the stream parameters; throws the mapped error.
    func findStreamInfo(location: String) throws(PlaybackError) {
        let status = avformat_find_stream_info(context, nil)
        if let refusal = network?.refusal { throw refusal }
        if status < 0 {
            throw FFmpegErrors.map(status, step: "find stream info", location: location, isNetwork: network != nil)
        }
    }

    /// The stream at `index`.
    func stream(_ index: Int32) -> UnsafeMutablePointer<AVStream> { context.pointee.streams[Int(index)]! }

    /// Bytes read from the source so far.
    var bytesRead: Int64 { context.pointee.pb.map { $0.pointee.bytes_read } ?? 0 }

    /// Clears a read error of the I/O context so that reading can be tried again (the
    /// demuxer seeks back to the packet it needs).
    func clearReadError() {
        guard let pb = context.pointee.pb else { return }
        pb.pointee.error = 0
        pb.pointee.eof_reached = 0
    }

    /// Total size of the source in bytes, or nil when unknown.
    var sourceSize: Int64? {
        guard let pb = context.pointee.pb else { return nil }
        let size = avio_size(pb)
        return size > 0 ? size : nil
    }
}

// MARK: - Decoder

/// An opened `AVCodecContext` for one stream, with decoder threads enabled, and the facts of
/// that stream its user needs (so a decoder thread never reads the demuxer's streams).
final class CodecDecoder {
    let context: UnsafeMutablePointer<AVCodecContext>
    /// The index of the stream it decodes.
    let streamIndex: Int32
    /// The stream's time base (of its packets and frames).
    let timeBase: AVRational
    /// Seconds a picture lasts when its timestamps do not say (video; 0 otherwise).
    let frameDuration: Double
    /// The clockwise quarter turn (0, 90, 180, 270) the stream's display matrix asks for to
    /// show its pictures upright.
    let rotation: Int

    /// Opens the decoder of `stream`; a text subtitle decoder converts from
    /// `characterEncoding` (an iconv name) to UTF-8 when one is given.
    init(stream: UnsafeMutablePointer<AVStream>, frameDuration: Double = 0,
         characterEncoding: String? = nil) throws(PlaybackError) {
        streamIndex = stream.pointee.index
        timeBase = stream.pointee.time_base
        self.frameDuration = frameDuration
        if let matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, nil) {
            let degrees = UnsafeRawPointer(matrix).withMemoryRebound(to: Int32.self, capacity: 9) { av_display_rotation_get($0) }
            rotation = PictureTurn.clockwise(fromCounterclockwise: degrees)
        } else {
            rotation = 0
        }
        let parameters = stream.pointee.codecpar!
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            let name = String(cString: avcodec_get_name(parameters.pointee.codec_id))
            throw PlaybackError(code: .unsupportedFormat, message: "open decoder: no decoder for \(name)")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw PlaybackError(code: .engine, message: "open decoder: out of memory")
        }
        self.context = context
        var status = avcodec_parameters_to_context(context, parameters)
        if status >= 0 {
            context.pointee.pkt_timebase = stream.pointee.time_base
            var options: OpaquePointer?
            av_dict_set(&options, "threads", "auto", 0)
            if let characterEncoding { av_dict_set(&options, "sub_charenc", characterEncoding, 0) }
            status = avcodec_open2(context, codec, &options)
            av_dict_free(&options)
        }
        if status < 0 {
            throw FFmpegErrors.map(status, step: "open decoder", location: String(cString: codec.pointee.name), isNetwork: false)
        }
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&context)
    }
}

// MARK: - Frames

/// One AVFrame owned by a thread (scratch frames, the picture on screen, the audio frame
/// being played).
final class OwnedFrame {
    let frame: UnsafeMutablePointer<AVFrame>
    init() {
        guard let frame = av_frame_alloc() else { fatalError("av_frame_alloc: out of memory") }
        self.frame = frame
    }
    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)
    }
    /// True when the frame holds a picture or samples.
    var hasData: Bool { frame.pointee.buf.0 != nil || frame.pointee.data.0 != nil }
}

// MARK: - Picture conversion

extension SourcePicture {
    /// The picture `frame` holds, for the shared converter (the planes are borrowed: the frame
    /// must not change while the conversion runs). The YUV matrix is the one the stream
    /// names, else BT.709 from 720 rows up and BT.601 below.
    init(frame: UnsafeMutablePointer<AVFrame>) {
        let source = frame.pointee
        var planes: [UnsafePointer<UInt8>?] = []
        var strides: [Int] = []
        withUnsafeBytes(of: source.data) { raw in
            for plane in raw.bindMemory(to: UnsafeMutablePointer<UInt8>?.self).prefix(4) { planes.append(plane.map { UnsafePointer($0) }) }
        }
        withUnsafeBytes(of: source.linesize) { raw in
            for size in raw.bindMemory(to: Int32.self).prefix(4) { strides.append(Int(size)) }
        }
        let matrix: ColorMatrix
        switch source.colorspace {
        case AVCOL_SPC_BT709: matrix = .bt709
        case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M: matrix = .bt601
        default: matrix = source.height >= 720 ? .bt709 : .bt601
        }
        let format = AVPixelFormat(source.format)
        let fullRange = source.color_range == AVCOL_RANGE_JPEG
            || [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P].contains(format)
        self.init(format: .libav(source.format), width: Int(source.width), height: Int(source.height),
                  planes: planes, strides: strides, matrix: matrix, fullRange: fullRange)
    }
}

// MARK: - Audio conversion

/// An `SwrContext` converting decoded (or tempo-filtered) samples to the output format, and
/// its reused output buffer. Rebuilt only when the input format changes.
final class Resampler {
    private var context: OpaquePointer?
    private var inputKey: (format: Int32, rate: Int32, layout: UInt64, channels: Int32) = (-1, 0, 0, 0)
    let outputRate: Int32
    let outputChannels: Int32
    private var outputLayout = AVChannelLayout()
    private(set) var buffer: UnsafeMutablePointer<UInt8>?
    private var bufferSize = 0

    init(outputRate: Int32, outputChannels: Int32) {
        self.outputRate = outputRate
        self.outputChannels = outputChannels
        av_channel_layout_default(&outputLayout, outputChannels)
    }

    deinit {
        var context = context
        swr_free(&context)
        buffer?.deallocate()
        av_channel_layout_uninit(&outputLayout)
    }

    /// Bytes per output sample frame (interleaved signed 16-bit).
    var bytesPerSampleFrame: Int { Int(outputChannels) * 2 }

    /// Converts `frame` to interleaved s16 at the output rate; returns the byte count in
    /// `buffer`, or nil on error.
    func convert(_ frame: UnsafeMutablePointer<AVFrame>) -> Int? {
        let f = frame.pointee
        let key = (f.format, f.sample_rate, f.ch_layout.u.mask, f.ch_layout.nb_channels)
        if context == nil || key != inputKey {
            var old = context
            swr_free(&old)
            context = nil
            var fresh: OpaquePointer?
            var inputLayout = f.ch_layout
            let status = swr_alloc_set_opts2(&fresh, &outputLayout, AV_SAMPLE_FMT_S16, outputRate,
                                             &inputLayout, AVSampleFormat(f.format), f.sample_rate, 0, nil)
            guard status >= 0, let fresh, swr_init(fresh) >= 0 else {
                var failed = fresh
                swr_free(&failed)
                return nil
            }
            context = fresh
            inputKey = key
        }
        let outCapacity = Int(swr_get_out_samples(context, f.nb_samples)) + 256
        let needed = outCapacity * bytesPerSampleFrame
        if bufferSize < needed {
            buffer?.deallocate()
            buffer = .allocate(capacity: needed)
            bufferSize = needed
        }
        var outPlanes: UnsafeMutablePointer<UInt8>? = buffer
        let converted = withUnsafePointer(to: f.extended_data) { _ in
            swr_convert(context, &outPlanes, Int32(outCapacity),
                        UnsafeMutableRawPointer(f.extended_data!).assumingMemoryBound(to: UnsafePointer<UInt8>?.self),
                        f.nb_samples)
        }
        guard converted >= 0 else { return nil }
        return Int(converted) * bytesPerSampleFrame
    }
}
#endif
