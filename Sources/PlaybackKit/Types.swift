import FoundationEssentials

// MARK: - States

/// What the player is doing, as ijkplayer's `IJKMPMoviePlaybackState` names it.
public enum PlaybackState: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Nothing is playing: before prepare, after `stop()`, after the end or an error.
    case stopped
    /// The media is advancing.
    case playing
    /// Prepared and holding a frame.
    case paused
    /// Playback was interrupted by the system.
    case interrupted
    /// Seeking towards a later position.
    case seekingForward
    /// Seeking towards an earlier position.
    case seekingBackward

    /// The state's name, as printed by the command line.
    public var description: String {
        switch self {
        case .stopped: "stopped"
        case .playing: "playing"
        case .paused: "paused"
        case .interrupted: "interrupted"
        case .seekingForward: "seekingForward"
        case .seekingBackward: "seekingBackward"
        }
    }
}

/// How far the source is loaded; `[]` means unknown.
public struct LoadState: OptionSet, Sendable, Hashable, CustomStringConvertible {
    /// The raw bits.
    public let rawValue: Int
    /// Makes a load state from its bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Enough is loaded to start or go on playing.
    public static let playable = LoadState(rawValue: 1 << 0)
    /// Enough is buffered to play through without waiting.
    public static let playthroughOK = LoadState(rawValue: 1 << 1)
    /// Playback waits for data.
    public static let stalled = LoadState(rawValue: 1 << 2)

    /// The set members by name, e.g. `[playable, playthroughOK]`.
    public var description: String {
        var names: [String] = []
        if contains(.playable) { names.append("playable") }
        if contains(.playthroughOK) { names.append("playthroughOK") }
        if contains(.stalled) { names.append("stalled") }
        return "[" + names.joined(separator: ", ") + "]"
    }
}

/// How a picture is fitted into a viewport of another shape.
public enum ScalingMode: Sendable, Equatable, Hashable, CaseIterable {
    /// At natural size, centred; cropped where larger than the viewport, black around it where smaller.
    case none
    /// As large as fits whole, aspect kept; black bars on the two other sides.
    case aspectFit
    /// Fills the viewport, aspect kept; what overflows is cropped.
    case aspectFill
    /// Stretched to the viewport; aspect not kept.
    case fill
}

/// Why playback finished.
public enum FinishReason: Sendable, Equatable {
    /// The end of the media was reached.
    case playbackEnded
    /// The player failed; the error says at which step and why.
    case playbackError(PlaybackError)
    /// `stop()` was called.
    case userExited
}

// MARK: - Pictures

/// A picture size in pixels.
public struct VideoSize: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Makes a size.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    /// No picture.
    public static let zero = VideoSize(width: 0, height: 0)
    /// True when either side is zero or less.
    public var isEmpty: Bool { width <= 0 || height <= 0 }
    /// `WIDTHxHEIGHT`.
    public var description: String { "\(width)x\(height)" }

    /// The size turned by `degrees` (a multiple of 90): width and height swap for a quarter
    /// turn either way, and stay for a half turn or none.
    public func turned(by degrees: Int) -> VideoSize {
        (degrees / 90) % 2 == 0 ? self : VideoSize(width: height, height: width)
    }

    /// The display size of `storage` pixels of pixel aspect `num:den` once turned clockwise by
    /// `degrees`: a quarter turn swaps the stored size and inverts the pixel aspect, and the
    /// upright picture's width is then stretched as any picture's (its height kept).
    public static func display(storage: VideoSize, pixelAspect num: Int, _ den: Int, turnedBy degrees: Int) -> VideoSize {
        guard (degrees / 90) % 2 == 1 else { return display(storage: storage, pixelAspect: num, den) }
        return display(storage: storage.turned(by: degrees), pixelAspect: den, num)
    }

    /// The display size of `storage` pixels whose pixel aspect (one pixel's width over its
    /// height) is `pixelAspect`, once turned clockwise by `degrees`: the same rule as the
    /// rational form, for an engine that gives the aspect as a number.
    public static func display(storage: VideoSize, pixelAspect: Double, turnedBy degrees: Int) -> VideoSize {
        let quarterTurn = (degrees / 90) % 2 == 1
        let upright = quarterTurn ? storage.turned(by: degrees) : storage
        let aspect = quarterTurn ? 1 / pixelAspect : pixelAspect
        guard aspect.isFinite, aspect > 0, abs(aspect - 1) > 1e-9 else { return upright }
        return VideoSize(width: Int((Double(upright.width) * aspect).rounded()), height: upright.height)
    }

    /// The display size of `storage` pixels with the sample (pixel) aspect ratio `num:den`
    /// applied: the width is stretched or shrunk, the height kept, as players display it.
    public static func display(storage: VideoSize, pixelAspect num: Int, _ den: Int) -> VideoSize {
        guard num > 0, den > 0, num != den else { return storage }
        let width = (Double(storage.width) * Double(num) / Double(den)).rounded()
        return VideoSize(width: Int(width), height: storage.height)
    }
}

/// One picture: 8-bit RGBA, rows top to bottom.
public struct VideoFrame: Sendable, Equatable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Bytes from the start of one row to the next (at least `width * 4`).
    public var bytesPerRow: Int
    /// `bytesPerRow * height` bytes of RGBA.
    public var pixels: [UInt8]
    /// Media time of the picture, on the same timeline as `currentPlaybackTime`.
    public var presentationTime: TimeInterval

    /// Makes a frame from its pixels.
    public init(width: Int, height: Int, bytesPerRow: Int, pixels: [UInt8], presentationTime: TimeInterval) {
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.pixels = pixels
        self.presentationTime = presentationTime
    }

    /// The size of the picture.
    public var size: VideoSize { VideoSize(width: width, height: height) }

    /// A tightly packed copy (`bytesPerRow == width * 4`) of the `width` x `height` RGBA
    /// picture at `base`, whose rows are `bytesPerRow` apart.
    package init(copying base: UnsafeRawPointer, width: Int, height: Int, bytesPerRow: Int, presentationTime: TimeInterval) {
        let rowBytes = width * 4
        let pixels = [UInt8](unsafeUninitializedCapacity: rowBytes * height) { out, count in
            for row in 0..<height {
                UnsafeMutableRawPointer(out.baseAddress! + row * rowBytes).copyMemory(from: base + row * bytesPerRow, byteCount: rowBytes)
            }
            count = rowBytes * height
        }
        self.init(width: width, height: height, bytesPerRow: rowBytes, pixels: pixels, presentationTime: presentationTime)
    }

    /// The picture turned clockwise by `degrees` (90, 180 or 270; itself for another value),
    /// tightly packed: for a picture taken before an engine turned it upright.
    package func turned(by degrees: Int) -> VideoFrame {
        guard [90, 180, 270].contains(degrees), !size.isEmpty else { return self }
        let turnedSize = size.turned(by: degrees)
        let (w, h) = (width, height)
        var turnedPixels = [UInt8](repeating: 0, count: turnedSize.width * turnedSize.height * 4)
        pixels.withUnsafeBytes { source in
            turnedPixels.withUnsafeMutableBytes { target in
                for y in 0..<h {
                    for x in 0..<w {
                        let (tx, ty) = switch degrees {
                        case 90: (h - 1 - y, x)
                        case 180: (w - 1 - x, h - 1 - y)
                        default: (y, w - 1 - x)
                        }
                        let pixel = source.loadUnaligned(fromByteOffset: y * bytesPerRow + x * 4, as: UInt32.self)
                        target.storeBytes(of: pixel, toByteOffset: (ty * turnedSize.width + tx) * 4, as: UInt32.self)
                    }
                }
            }
        }
        return VideoFrame(width: turnedSize.width, height: turnedSize.height, bytesPerRow: turnedSize.width * 4,
                          pixels: turnedPixels, presentationTime: presentationTime)
    }

    /// The RGBA of the pixel at column `x`, row `y`.
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        let i = y * bytesPerRow + x * 4
        return (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
    }
}

// MARK: - Errors

/// Why a player failed: a code to act on, and the step and the engine's own message to read.
public struct PlaybackError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: String, Sendable, Equatable, Hashable, CaseIterable {
        /// Nothing at that path, or not a regular file.
        case sourceNotFound
        /// Not media, empty, or cut short.
        case unsupportedFormat
        /// Refused, unreachable, timed out, or an HTTP error.
        case network
        /// The media opened but nothing decodes.
        case decode
        /// A scheme or reference the URL policy forbids.
        case forbiddenURL
        /// No such backend, or the engine is not installed.
        case backendUnavailable
        /// The caller passed something that cannot be used.
        case invalidArgument
        /// The engine failed for another reason.
        case engine
    }

    /// The kind of failure.
    public var code: Code
    /// What failed, with the engine's own words.
    public var message: String

    /// Makes an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}

// MARK: - Events

/// What a player tells its listeners, in order.
public enum PlaybackEvent: Sendable, Equatable {
    /// Prepared: duration and size are known and the first frame is ready.
    case preparedToPlay
    /// The display size, at prepare and again whenever it changes.
    case naturalSizeAvailable(VideoSize)
    /// The playback state changed.
    case playbackStateChanged(PlaybackState)
    /// The load state changed.
    case loadStateChanged(LoadState)
    /// A seek finished; the position actually reached.
    case seekCompleted(TimeInterval)
    /// Playback finished: end of media, an error, or `stop()`.
    case finished(FinishReason)
    /// The tracks, at prepare (before `.preparedToPlay`) and after every selection or addition.
    case tracksChanged([MediaTrack])
    /// The media's tags, at prepare and whenever the stream's tags change (a radio title).
    case metadataChanged(MediaMetadata)
    /// A cue of the selected subtitle appears (nil: it clears), at its media time.
    case subtitleChanged(SubtitleCue?)
}

// MARK: - Options and outputs

/// Where the picture goes.
public enum VideoOutput: Sendable {
    /// Nowhere; video is still decoded and paced, so thumbnails work.
    case none
    /// Each presented frame, at natural size, or composed into `viewport` by the scaling mode
    /// (black where no picture falls).
    case frames(viewport: VideoSize?, handler: @Sendable (VideoFrame) -> Void)
    /// An X11 window id to draw into.
    case window(handle: UInt)
    /// Each presented picture as the decoder made it: 4:2:0 planes (I420 or NV12) with their
    /// strides, at the coded picture's visible size, its presentation time, without a
    /// conversion and, where the engine allows, without a copy. The planes are borrowed:
    /// valid only while the handler runs. `YUVFrame` has a method that copies it
    /// (`copy()`), or converts it to a `VideoFrame` (RGBA, `rgbaFrame(size:)`).
    case yuvFrames(handler: @Sendable (YUVFrame) -> Void)
}

/// Where the sound goes.
public enum AudioOutput: Sendable, Equatable {
    /// The system's default audio device.
    case system
    /// Discarded; the clock still runs at real time.
    case null
}

/// How a player is set up; fixed when it is made.
public struct PlaybackOptions: Sendable {
    /// Where the picture goes.
    public var videoOutput: VideoOutput
    /// Where the sound goes.
    public var audioOutput: AudioOutput
    /// Seeks land on the exact frame (true), or, faster, on a keyframe near it where the engine
    /// can (false); either way `.seekCompleted` reports where the seek landed.
    public var accurateSeek: Bool = true
    /// Cap on bytes read ahead of the playing position, also while paused; nil: the engine's default.
    public var maxBufferBytes: Int? = nil
    /// Extra HTTP request headers for http(s) sources.
    public var httpHeaders: [String: String] = [:]
    /// How long opening may take before it fails with a timeout (seconds).
    public var openTimeout: TimeInterval = 20
    /// URL schemes a player may open; anything else fails with `forbiddenURL`.
    public var allowedSchemes: Set<String> = ["file", "http", "https"]
    /// Audio languages in order of preference ("eng", "fr", ...): the first that a track has
    /// wins; with none, the track the container marks default.
    public var preferredAudioLanguages: [String] = []
    /// Subtitle languages in order of preference: a match is selected and shown; with none,
    /// no subtitle is shown unless `subtitleURLs` adds one or a track is marked forced.
    public var preferredSubtitleLanguages: [String] = []
    /// External subtitle files (SRT, ASS/SSA, WebVTT; local or http(s)) added at prepare, in
    /// this order; the first is selected unless `preferredSubtitleLanguages` picks another.
    public var subtitleURLs: [URL] = []
    /// How long playback may wait for data while playing (`loadState` `.stalled`) before it
    /// fails with `.network` (seconds). Paused, nothing waits and the limit does not run.
    public var stallTimeout: TimeInterval = 30
    /// Remote media (http, https) may lead the engine only to other remote resources. A
    /// playlist, manifest or reference inside it that names a local file (file:, a plain path,
    /// concat:, subfile:, ...) ends the play in `.finished(.playbackError(.forbiddenURL))` and
    /// the local file is never opened. true lifts this for sources the app trusts.
    public var remoteMayReferenceLocalFiles: Bool = false
    /// PEM file of extra certificate authorities trusted for https (besides the system's); a
    /// certificate that does not verify ends in `.finished(.playbackError(.network))`.
    public var tlsCertificateAuthorities: URL? = nil

    /// Options with the given outputs and defaults for the rest.
    public init(videoOutput: VideoOutput = .none, audioOutput: AudioOutput = .system) {
        self.videoOutput = videoOutput
        self.audioOutput = audioOutput
    }
}
