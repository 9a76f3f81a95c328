import FoundationEssentials
import PlaybackKit

/// What an app must be able to rely on with URLs from elsewhere: its request headers on
/// every request, no local file opened on behalf of remote media, and https that verifies.
enum NetworkSafetyChecks {
    static let all: [Check] = [headers, localReference, trustedLocalReference, tlsPlaySeek, tlsUntrusted]

    /// The headers the header check sends, as an app would.
    static let appHeaders: [String: String] = [
        "User-Agent": "PlaybackKit-Conformance/1.0",
        "Referer": "http://127.0.0.1/conformance/page.html",
        "Authorization": "Bearer conformance-token-42",
        "X-PlaybackKit-Check": "on every request",
    ]

    static let headers = Check("http.headers", "httpHeaders (User-Agent, Referer, Authorization, a custom header) reach the server on every request: an MP4 with its index at the end and a seek (Range requests), and HLS through a master playlist with a seek (both playlists and the segments)", timeout: 45) { context in
        _ = try context.fixture("hls/index.m3u8")
        let server = try context.httpServer()
        // HLS through a master playlist: the variant playlist is fetched on the engine's
        // behalf too.
        let master = "/hls/master.m3u8"
        server.route(master, .content(.init(Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=320x240\nindex.m3u8\n".utf8),
                                            contentType: "application/vnd.apple.mpegurl")))
        for path in [NetworkMedia.media, master] {
            let p = try context.player(url: server.url(path)) { $0.httpHeaders = appHeaders }
            try await p.prepare()
            try await p.play()
            try await p.waitForPosition(atLeast: 0.3, timeout: 5)
            try await p.seek(to: 6.5)
            try await p.waitForPosition(atLeast: 6.8, timeout: 5)
            p.player.shutdown()
        }
        let requests = server.requests
        let media = requests.filter { $0.path == NetworkMedia.media }
        let segments = Set(requests.filter { $0.path.hasPrefix("/hls/segment") }.map(\.path))
        try expect(requests.contains { $0.path == NetworkMedia.hls }, "HLS: the variant playlist \(NetworkMedia.hls) was never requested: \(NetworkChecks.describeRequests(server))")
        try expect(media.count >= 2, "the MP4 was read in \(media.count) request(s), expected Range requests too: \(NetworkChecks.describeRequests(server))")
        try expect(segments.count >= 2, "HLS: \(segments.count) segment(s) requested, expected the first ones and those after the seek: \(NetworkChecks.describeRequests(server))")
        var problems: [String] = []
        for request in requests {
            for (name, value) in appHeaders.sorted(by: { $0.key < $1.key }) {
                guard let sent = request.header(name) else {
                    problems.append("#\(request.number) \(request.method) \(request.path) lacks \(name)")
                    continue
                }
                if sent != value { problems.append("#\(request.number) \(request.path) sent \(name): \(sent)") }
            }
        }
        try expect(problems.isEmpty, "of \(requests.count) requests: \(problems.prefix(8).joined(separator: "; "))\(problems.count > 8 ? "; … (\(problems.count) in all)" : "")")
    }

    static let localReference = Check("http.local-reference", "an HLS playlist over http whose segment names a local file (a named pipe) as file:// and as a plain path: the pipe is never opened; file:// ends in .forbiddenURL, the plain path is refused so or read from the server", timeout: 40) { context in
        let segment = try context.fixture("hls/segment0.ts")
        let server = try context.httpServer()
        let folder = try context.temporaryFolder()
        let byURL = try NetworkMedia.WatchedPipe(in: folder, name: "named-by-url.ts")
        let byPath = try NetworkMedia.WatchedPipe(in: folder, name: "named-by-path.ts")
        defer {
            byURL.finish()
            byPath.finish()
        }
        server.route("/refs/file-url.m3u8", .content(.init(NetworkMedia.playlist(naming: "file://" + byURL.path), contentType: "application/vnd.apple.mpegurl")))
        server.route("/refs/plain-path.m3u8", .content(.init(NetworkMedia.playlist(naming: byPath.path), contentType: "application/vnd.apple.mpegurl")))
        // A plain path in a remote playlist is a path on that server: the server has it too.
        server.route(byPath.path, .content(try .file(segment)))

        let named = try context.player(url: server.url("/refs/file-url.m3u8"))
        var mark = named.mark
        named.player.prepareToPlay()
        try await NetworkMedia.expectError(named, .forbiddenURL, since: mark, timeout: 10, "a remote playlist naming a file:// segment")
        named.player.shutdown()
        try await observe(for: 0.2)
        try expect(!byURL.wasOpened, "a remote playlist naming file://\(byURL.path) made the player open that local file (it also ended in .forbiddenURL)")

        let plain = try context.player(url: server.url("/refs/plain-path.m3u8"))
        mark = plain.mark
        plain.player.prepareToPlay()
        let asked = await server.waitForRequest(timeout: 10) { $0.path == byPath.path }
        let finished = plain.recorder.events(since: mark).first(where: \.isFinished)
        if asked == nil {
            guard let error = finished?.error else {
                throw CheckFailure("a remote playlist naming the plain path \(byPath.path): neither asked the server for it nor ended in .forbiddenURL within 10 s (events: \(summary(plain.recorder.events(since: mark))))")
            }
            try expect(error.code == .forbiddenURL, "a remote playlist naming the plain path \(byPath.path) ended in \(error.code.rawValue) (\(error.message)) without asking the server for it, expected .forbiddenURL")
        }
        plain.player.shutdown()
        try await observe(for: 0.2)
        try expect(!byPath.wasOpened, "a remote playlist naming the plain path \(byPath.path) made the player open that local file")
    }

    static let trustedLocalReference = Check("http.local-reference-trusted", "with remoteMayReferenceLocalFiles an HLS playlist over http whose segment names a local file by file:// prepares and shows its first frame") { context in
        let segment = try context.fixture("hls/segment0.ts")
        let server = try context.httpServer()
        server.route("/refs/trusted.m3u8", .content(.init(NetworkMedia.playlist(naming: segment.absoluteString), contentType: "application/vnd.apple.mpegurl")))
        let trusted = try context.player(url: server.url("/refs/trusted.m3u8")) { $0.remoteMayReferenceLocalFiles = true }
        try await trusted.prepare()
        let shown = try trusted.thumbnailFrameNumber("a trusted remote playlist naming a local segment")
        try expect(shown <= 1, "a trusted remote playlist naming a local segment shows frame \(shown), expected 0")
    }

    static let tlsPlaySeek = Check("http.tls-play-seek", "https from the local server with a certificate of the suite's own authority, trusted through tlsCertificateAuthorities: an MP4 prepares, plays and seeks to the right frames; HLS (playlist and segments over https) prepares and seeks to the right frame", timeout: 45) { context in
        _ = try context.fixture("hls/index.m3u8")
        let certificates = try context.certificates()
        let identity: TLSServerIdentity
        do { identity = try certificates.identity(named: "server") } catch { throw CheckFailure("the suite could not make its server certificate: \(error)") }
        let server = try context.httpServer(tls: identity)
        for path in [NetworkMedia.media, NetworkMedia.hls] {
            let p = try context.player(url: server.url(path)) { $0.tlsCertificateAuthorities = certificates.authority }
            try await p.prepare()
            try expect(abs(p.player.duration - 10) <= 0.1, "over https \(path): the duration is \(format(p.player.duration)) s, expected 10")
            if path == NetworkMedia.media {
                // (Playing HLS is http.hls-play-seek's business.)
                try await p.play()
                try await p.waitForPosition(atLeast: 0.5, timeout: 5)
                let playing = try p.thumbnailFrameNumber("playing \(path) over https")
                try expect(abs(playing - FramePattern.frame(at: p.position)) <= 3, "playing \(path) over https at \(format(p.position)) s shows frame \(playing)")
                try await p.pause()
            }
            try await p.seek(to: 6.2, near: SeekChecks.landing + 0.02)
            let shown = try p.thumbnailFrameNumber("\(path) over https after a paused seek to 6.2 s")
            try expect(shown == FramePattern.frame(at: 6.2), "\(path) over https: a paused seek to 6.2 s shows frame \(shown), expected \(FramePattern.frame(at: 6.2))")
            p.player.shutdown()
        }
    }

    static let tlsUntrusted = Check("http.tls-untrusted", "https whose certificate does not verify ends in .finished(.playbackError(.network)) within 10 s and never plays: an authority the player was not given, none given (the system's alone), and a certificate for another host", timeout: 60) { context in
        let trusted = try context.certificates()
        let stranger = try context.certificates()
        let cases: [(String, TLSServerIdentity, URL?)]
        do {
            cases = [
                ("a certificate of an authority not given", try stranger.identity(named: "stranger"), trusted.authority),
                ("a certificate of the suite's authority with none given", try trusted.identity(named: "server"), nil),
                ("a certificate for another host", try trusted.identity(named: "wrong-host", hosts: ["wrong-host.invalid"]), trusted.authority),
            ]
        } catch {
            throw CheckFailure("the suite could not make its server certificates: \(error)")
        }
        for (what, identity, authorities) in cases {
            let server = try context.httpServer(tls: identity)
            let p = try context.player(url: server.url(NetworkMedia.media)) { $0.tlsCertificateAuthorities = authorities }
            let mark = p.mark
            p.player.prepareToPlay()
            try await NetworkMedia.expectError(p, .network, since: mark, timeout: 10, "https with \(what)")
            try expect(server.bodyBytesSent() == 0, "https with \(what): the player still took \(server.bodyBytesSent()) bytes of media")
            p.player.shutdown()
        }
    }
}
