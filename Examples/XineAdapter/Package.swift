// swift-tools-version: 6.1
import PackageDescription

/// A fifth engine written outside PlaybackKit: a `PlaybackBackend` over xine-lib 1.2, proved
/// by the conformance suite. It uses only PlaybackKit's public products (PlaybackKit and
/// PlaybackConformance) and none of its engines (`traits: []`).
let package = Package(
    name: "XineAdapter",
    products: [
        .library(name: "XinePlayback", targets: ["XinePlayback"]),
        .executable(name: "xine-conformance", targets: ["xine-conformance"]),
    ],
    dependencies: [
        // A package of your own depends on PlaybackKit by URL instead:
        // .package(url: "https://example.org/PlaybackKit.git", from: "1.0.0", traits: []),
        .package(name: "PlaybackKit", path: "../..", traits: []),
    ],
    targets: [
        .systemLibrary(
            name: "CXine", path: "Sources/CXine", pkgConfig: "libxine",
            providers: [.apt(["libxine2-dev", "libxine2-ffmpeg", "libxine2-misc-plugins"])]),
        .target(
            name: "XinePlayback",
            dependencies: ["CXine", .product(name: "PlaybackKit", package: "PlaybackKit")]),
        .executableTarget(
            name: "xine-conformance",
            dependencies: ["XinePlayback", .product(name: "PlaybackConformance", package: "PlaybackKit")]),
    ],
    swiftLanguageModes: [.v6]
)
