// swift-tools-version: 6.1
import PackageDescription

/// Every engine is a package trait; all are on by default. An app that wants one engine alone
/// depends on this package with `traits: ["MPV"]` (for example), and only that adapter, its C
/// module and the shared parts it needs are compiled and linked.
let engineTraits: Set<String> = ["GStreamer", "FFmpeg", "MPV", "VLC"]

/// The shared parts, each compiled by a capability trait of its own, which the engine traits
/// that use it enable: a new engine names the capabilities it needs in its trait, and the
/// shared modules never name an engine.
let capabilityTraits: Set<Trait> = [
    .trait(name: "Swscale", description: "The picture converter over libswscale (PictureConversion)"),
    .trait(name: "Libass", description: "Text subtitles drawn onto pictures with libass (SubtitleOverlay)"),
    .trait(name: "X11", description: "Pictures drawn into an app's X11 window (WindowPresentation)", enabledTraits: ["Swscale"]),
    .trait(name: "StreamProbe", description: "What libavformat reads of a file: streams, tags, cues (MediaProbe)"),
    .trait(name: "Curl", description: "The loopback relay over libcurl (HTTPRelay)"),
]

/// The engine traits, each enabling the capabilities its adapter uses.
let engineTraitDeclarations: Set<Trait> = [
    .trait(name: "GStreamer", description: "The GStreamer playbin adapter",
           enabledTraits: ["Swscale", "X11", "StreamProbe", "Curl"]),
    .trait(name: "FFmpeg", description: "The player engine over libavformat and libavcodec",
           enabledTraits: ["Swscale", "Libass", "X11"]),
    .trait(name: "MPV", description: "The libmpv adapter",
           enabledTraits: ["Swscale", "X11", "StreamProbe"]),
    .trait(name: "VLC", description: "The libVLC 3 adapter",
           enabledTraits: ["Swscale", "Libass", "X11", "StreamProbe", "Curl"]),
    .default(enabledTraits: engineTraits),
]

let package = Package(
    name: "PlaybackKit",
    products: [
        .library(name: "PlaybackKit", targets: ["PlaybackKit"]),
        .library(name: "GStreamerPlayback", targets: ["GStreamerPlayback"]),
        .library(name: "FFmpegPlayback", targets: ["FFmpegPlayback"]),
        .library(name: "MPVPlayback", targets: ["MPVPlayback"]),
        .library(name: "VLCPlayback", targets: ["VLCPlayback"]),
        .library(name: "PlaybackBackends", targets: ["PlaybackBackends"]),
        .library(name: "PlaybackConformance", targets: ["PlaybackConformance"]),
        .library(name: "X11Windows", targets: ["X11Windows"]),
        .executable(name: "mediaplay", targets: ["mediaplay"]),
    ],
    traits: engineTraitDeclarations.union(capabilityTraits),
    targets: [
        // MARK: - Core
        .systemLibrary(
            name: "CLibPNG", path: "Sources/CLibPNG", pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]),
        .target(name: "PlaybackKit", dependencies: ["CLibPNG"]),

        // MARK: - The picture converter every adapter shares (RGBA for .frames and thumbnails,
        // YUVFrame's conversions)
        .systemLibrary(
            name: "CSwscale", path: "Sources/CSwscale", pkgConfig: "libswscale libavutil",
            providers: [.apt(["libswscale-dev", "libavutil-dev"])]),
        .target(
            name: "PictureConversion",
            dependencies: ["PlaybackKit", .target(name: "CSwscale", condition: .when(traits: ["Swscale"]))]),

        // MARK: - libass drawing text subtitles onto pictures (the FFmpeg engine, and libVLC's
        // .frames output, whose own drawing would reach its thumbnails)
        .systemLibrary(
            name: "CLibass", path: "Sources/CLibass", pkgConfig: "libass",
            providers: [.apt(["libass-dev"])]),
        .target(
            name: "SubtitleOverlay",
            dependencies: ["PlaybackKit", .target(name: "CLibass", condition: .when(traits: ["Libass"]))]),

        // MARK: - Pictures drawn into an app's X11 window (the FFmpeg engine's window output,
        // and playbin's and libVLC's, whose pictures reach the adapter)
        .target(
            name: "WindowPresentation",
            dependencies: ["PlaybackKit",
                           .target(name: "PictureConversion", condition: .when(traits: ["X11"])),
                           .target(name: "CX11", condition: .when(traits: ["X11"]))]),

        // MARK: - What libavformat reads of a file (streams' flags, tags, subtitle cues), for
        // engines whose own model does not say
        .systemLibrary(
            name: "CMediaProbe", path: "Sources/CMediaProbe", pkgConfig: "libavformat libavcodec libavutil",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]),
        .target(
            name: "MediaProbe",
            dependencies: ["PlaybackKit", .target(name: "CMediaProbe", condition: .when(traits: ["StreamProbe"]))]),

        // MARK: - The loopback relay: libcurl fetches for an engine what its own http client
        // cannot (any request header, the app's authorities, a trusted playlist's local files)
        .systemLibrary(
            name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        // What a loopback HTTP server reads and measures: request heads, the kernel's socket
        // queues (the relay and the conformance suite's test server).
        .target(name: "LoopbackHTTP", dependencies: ["PlaybackKit"]),
        .target(
            name: "HTTPRelay",
            dependencies: ["PlaybackKit", "LoopbackHTTP", .target(name: "CCurl", condition: .when(traits: ["Curl"]))]),

        // MARK: - Adapters (each compiled only when its trait is on)
        .systemLibrary(
            name: "CGStreamer", path: "Adapters/GStreamer/CGStreamer",
            // Written by scripts/setup.sh from gstreamer-1.0, -app, -video and -audio and gio-2.0
            // (for the https authorities; without GLib's -pthread, which SwiftPM refuses with a
            // warning on every build).
            pkgConfig: "playbackkit-gstreamer",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]),
        .target(
            name: "GStreamerPlayback",
            dependencies: ["PlaybackKit", .target(name: "CGStreamer", condition: .when(traits: ["GStreamer"])),
                           .target(name: "HTTPRelay", condition: .when(traits: ["GStreamer"])),
                           .target(name: "PictureConversion", condition: .when(traits: ["GStreamer"])),
                           .target(name: "MediaProbe", condition: .when(traits: ["GStreamer"])),
                           .target(name: "WindowPresentation", condition: .when(traits: ["GStreamer"]))],
            path: "Adapters/GStreamer/GStreamerPlayback"),
        .systemLibrary(
            name: "CFFmpeg", path: "Adapters/FFmpeg/CFFmpeg",
            // Written by scripts/setup.sh from libavformat, libavcodec, libavfilter, libswscale,
            // libswresample, libavutil, and the headers of sdl2 (without SDL2's -D_REENTRANT;
            // SDL2 is loaded when a system audio device is first opened).
            pkgConfig: "playbackkit-ffmpeg",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavfilter-dev", "libswscale-dev",
                              "libswresample-dev", "libavutil-dev", "libsdl2-dev"])]),
        .target(
            name: "FFmpegPlayback",
            dependencies: ["PlaybackKit", .target(name: "CFFmpeg", condition: .when(traits: ["FFmpeg"])),
                           .target(name: "PictureConversion", condition: .when(traits: ["FFmpeg"])),
                           .target(name: "SubtitleOverlay", condition: .when(traits: ["FFmpeg"])),
                           .target(name: "WindowPresentation", condition: .when(traits: ["FFmpeg"]))],
            path: "Adapters/FFmpeg/FFmpegPlayback"),
        .systemLibrary(
            name: "CMPV", path: "Adapters/MPV/CMPV",
            providers: [.apt(["libmpv-dev"])]),
        .target(
            name: "MPVPlayback",
            dependencies: ["PlaybackKit", .target(name: "CMPV", condition: .when(traits: ["MPV"])),
                           .target(name: "PictureConversion", condition: .when(traits: ["MPV"])),
                           .target(name: "MediaProbe", condition: .when(traits: ["MPV"])),
                           .target(name: "WindowPresentation", condition: .when(traits: ["MPV"]))],
            path: "Adapters/MPV/MPVPlayback"),
        .systemLibrary(
            name: "CVLC", path: "Adapters/VLC/CVLC", pkgConfig: "libvlc",
            providers: [.apt(["libvlc-dev", "vlc-plugin-base"])]),
        .target(
            name: "VLCPlayback",
            dependencies: ["PlaybackKit", .target(name: "CVLC", condition: .when(traits: ["VLC"])),
                           .target(name: "HTTPRelay", condition: .when(traits: ["VLC"])),
                           .target(name: "PictureConversion", condition: .when(traits: ["VLC"])),
                           .target(name: "MediaProbe", condition: .when(traits: ["VLC"])),
                           .target(name: "SubtitleOverlay", condition: .when(traits: ["VLC"])),
                           .target(name: "WindowPresentation", condition: .when(traits: ["VLC"]))],
            path: "Adapters/VLC/VLCPlayback"),

        // MARK: - X11 windows: made, resized, grabbed and read for the window checks and the
        // desktop player, and the Xvfb server started when there is no $DISPLAY
        .systemLibrary(
            name: "CX11", path: "Sources/CX11", pkgConfig: "x11",
            providers: [.apt(["libx11-dev"])]),
        .target(name: "X11Windows", dependencies: ["PlaybackKit", "CX11"]),

        // MARK: - Registry, conformance suite, command line
        .target(
            name: "PlaybackBackends",
            dependencies: [
                "PlaybackKit",
                .target(name: "GStreamerPlayback", condition: .when(traits: ["GStreamer"])),
                .target(name: "FFmpegPlayback", condition: .when(traits: ["FFmpeg"])),
                .target(name: "MPVPlayback", condition: .when(traits: ["MPV"])),
                .target(name: "VLCPlayback", condition: .when(traits: ["VLC"])),
            ]),
        // OpenSSL for the conformance suite's local https server.
        .systemLibrary(
            name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]),
        .target(name: "PlaybackConformance", dependencies: ["PlaybackKit", "LoopbackHTTP", "COpenSSL", "X11Windows"], path: "Conformance"),
        .target(name: "CommandLineSupport", dependencies: ["PlaybackKit"]),
        .executableTarget(
            name: "mediaplay",
            dependencies: ["PlaybackKit", "PlaybackBackends", "PlaybackConformance", "CommandLineSupport", "X11Windows"],
            // The release tool carries the Swift runtime inside (as `--static-swift-stdlib`
            // does): 2-4 MiB less resident memory and a faster start than loading the
            // runtime's shared libraries. The static FoundationEssentials needs its two
            // support libraries and Synchronization named. Only this executable has the
            // flags, so the library products stay usable by other packages.
            linkerSettings: [
                .unsafeFlags(
                    ["-static-stdlib", "-Xlinker", "-l_FoundationCollections", "-Xlinker", "-l_FoundationCShims",
                     "-Xlinker", "-lswiftSynchronization"],
                    .when(configuration: .release)),
            ]),

        // MARK: - The benchmark (a tool of the repository, not a product)
        .executableTarget(
            name: "mediaplay-bench",
            dependencies: ["PlaybackKit", "PlaybackBackends", "PlaybackConformance", "CommandLineSupport"],
            path: "Benchmarks/mediaplay-bench"),

        // MARK: - Tests
        .testTarget(name: "PlaybackKitTests", dependencies: ["PlaybackKit"]),
        .testTarget(name: "PictureConversionTests", dependencies: ["PlaybackKit", "PictureConversion", "SubtitleOverlay", "MediaProbe"]),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["PlaybackKit", "PlaybackBackends", "PlaybackConformance", "X11Windows", "HTTPRelay"]),
        .testTarget(name: "MediaplayTests", dependencies: ["PlaybackKit", "PlaybackConformance", "X11Windows"]),
        // What is particular to each adapter, beside the conformance suite every engine runs.
        .testTarget(
            name: "GStreamerPlaybackTests",
            dependencies: ["PlaybackKit", "PlaybackConformance",
                           .target(name: "GStreamerPlayback", condition: .when(traits: ["GStreamer"]))],
            path: "Adapters/GStreamer/GStreamerPlaybackTests"),
        .testTarget(
            name: "FFmpegPlaybackTests",
            dependencies: ["PlaybackKit", "PlaybackConformance",
                           .target(name: "FFmpegPlayback", condition: .when(traits: ["FFmpeg"]))],
            path: "Adapters/FFmpeg/FFmpegPlaybackTests"),
        .testTarget(
            name: "MPVPlaybackTests",
            dependencies: ["PlaybackKit", "PlaybackConformance",
                           .target(name: "MPVPlayback", condition: .when(traits: ["MPV"]))],
            path: "Adapters/MPV/MPVPlaybackTests"),
        .testTarget(
            name: "VLCPlaybackTests",
            dependencies: ["PlaybackKit", "PlaybackConformance",
                           .target(name: "VLCPlayback", condition: .when(traits: ["VLC"]))],
            path: "Adapters/VLC/VLCPlaybackTests"),
    ],
    swiftLanguageModes: [.v6]
)
