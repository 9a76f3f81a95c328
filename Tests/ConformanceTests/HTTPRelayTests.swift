#if Curl
import Foundation
import HTTPRelay
import PlaybackBackends
import PlaybackConformance
import PlaybackKit
import Testing
#if GStreamer
import GStreamerPlayback
#endif
#if VLC
import VLCPlayback
#endif

// MARK: - Relayed URLs and playlists

@Suite struct RelayAddressTests {
    let addresses = RelayAddresses(port: 40123, token: "0123456789abcdef0123456789abcdef")

    /// The request target libVLC sends for a relayed URL (the part after the authority).
    private func target(of relayed: String) -> String {
        String(relayed.dropFirst("http://127.0.0.1:40123".count))
    }

    @Test("a remote URL relayed and read back is the same URL, its query kept and its fragment dropped", arguments: [
        ("http://example.com/a.m3u8", "http://example.com/a.m3u8"),
        ("https://cdn.example.com:8443/v/1/index.m3u8?token=a%2Fb&x=1", "https://cdn.example.com:8443/v/1/index.m3u8?token=a%2Fb&x=1"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com?q=1", "http://example.com/?q=1"),
        ("http://user:secret@[::1]:8080/media.mp4#t=10", "http://user:secret@[::1]:8080/media.mp4"),
        ("HTTPS://Example.com/Seg%20One.ts", "https://Example.com/Seg%20One.ts"),
    ])
    func remoteRoundTrip(original: String, expected: String) throws {
        let relayed = try #require(addresses.relayed(absolute: original))
        #expect(relayed.hasPrefix("http://127.0.0.1:40123/\(addresses.token)/"))
        #expect(addresses.destination(ofTarget: target(of: relayed)) == .remote(expected))
    }

    @Test("a relative reference libVLC resolves against a relayed URL lands on the relay with its meaning")
    func relativeResolution() throws {
        let relayed = try #require(addresses.relayed(absolute: "https://example.com/live/hi/index.m3u8?k=1"))
        let base = try #require(URL(string: relayed))
        for (reference, meaning) in [("seg1.ts", "https://example.com/live/hi/seg1.ts"),
                                     ("../lo/seg1.ts?k=2", "https://example.com/live/lo/seg1.ts?k=2")] {
            let resolved = try #require(URL(string: reference, relativeTo: base)?.absoluteString)
            #expect(addresses.destination(ofTarget: target(of: resolved)) == .remote(meaning))
        }
    }

    @Test("a local file relayed and read back is the same path, spaces and any byte included")
    func fileRoundTrip() throws {
        let path = "/tmp/a folder/séance #1?.ts"
        let relayed = try #require(addresses.relayed(URL(fileURLWithPath: path)))
        #expect(!relayed.contains(" ") && !relayed.contains("#"))
        #expect(addresses.destination(ofTarget: target(of: relayed)) == .file(path))
    }

    @Test("targets that are not the relay's are not served", arguments: [
        "/", "/index.m3u8", "/ffffffffffffffffffffffffffffffff/http/example.com/a", "/0123456789abcdef0123456789abcdef/ftp/example.com/a",
        "/0123456789abcdef0123456789abcdef/http/", "/0123456789abcdef0123456789abcdef/file",
    ])
    func foreignTargets(target: String) {
        #expect(addresses.destination(ofTarget: target) == nil)
    }

    @Test("other schemes are not relayed")
    func otherSchemes() {
        #expect(addresses.relayed(absolute: "rtsp://example.com/live") == nil)
        #expect(addresses.relayed(absolute: "data:text/plain,hello") == nil)
    }

    @Test("a playlist is told by its type, or by its name when the server gives no useful type")
    func playlistDetection() {
        #expect(RelayPlaylist.isPlaylist(contentType: "application/vnd.apple.mpegurl", url: "http://e.com/x"))
        #expect(RelayPlaylist.isPlaylist(contentType: "audio/x-mpegURL; charset=utf-8", url: "http://e.com/x"))
        #expect(RelayPlaylist.isPlaylist(contentType: nil, url: "http://e.com/a/index.M3U8?token=1"))
        #expect(RelayPlaylist.isPlaylist(contentType: "application/octet-stream", url: "http://e.com/list.m3u"))
        #expect(!RelayPlaylist.isPlaylist(contentType: "video/mp2t", url: "http://e.com/index.m3u8"))
        #expect(!RelayPlaylist.isPlaylist(contentType: nil, url: "http://e.com/seg.ts"))
    }

    /// `playlist` rewritten as the relay would for `base`, and the refusals it reported.
    private func rewrite(_ playlist: String, base: String, trusted: Bool) throws -> (String, [PlaybackError]) {
        var options = PlaybackOptions()
        options.remoteMayReferenceLocalFiles = trusted
        let policy = ReferencePolicy(source: MediaSource(try #require(URL(string: base))), options: options)
        let baseURL = try #require(URL(string: base))
        var refusals: [PlaybackError] = []
        let text = RelayPlaylist.rewrite(playlist) {
            RelayPlaylist.relayed($0, base: baseURL, addresses: addresses, policy: policy) { refusals.append($0) }
        }
        return (text, refusals)
    }

    @Test("every URL of an HLS playlist is relayed: segments, keys, maps, renditions; tags and blank lines stay")
    func playlistRewrite() throws {
        let playlist = [
            "#EXTM3U", "#EXT-X-VERSION:7", "",
            "#EXT-X-KEY:METHOD=AES-128,URI=\"keys/k1.bin\",IV=0x1",
            "#EXT-X-MAP:URI=\"/init.mp4\"",
            "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"en\",URI=\"https://other.example.org/audio/en.m3u8\"",
            "#EXTINF:2.0,", "seg0.ts", "#EXTINF:2.0,", "  ../up/seg1.ts?sig=abc  ", "#EXT-X-ENDLIST",
        ].joined(separator: "\r\n")
        let (text, refusals) = try rewrite(playlist, base: "http://media.example.com:8080/v/index.m3u8", trusted: false)
        #expect(refusals.isEmpty)
        let lines = text.components(separatedBy: "\r\n")
        #expect(lines.count == 11)
        let prefix = addresses.prefix
        #expect(lines[0] == "#EXTM3U" && lines[1] == "#EXT-X-VERSION:7" && lines[2] == "" && lines[10] == "#EXT-X-ENDLIST")
        #expect(lines[3] == "#EXT-X-KEY:METHOD=AES-128,URI=\"\(prefix)/http/media.example.com:8080/v/keys/k1.bin\",IV=0x1")
        #expect(lines[4] == "#EXT-X-MAP:URI=\"\(prefix)/http/media.example.com:8080/init.mp4\"")
        #expect(lines[5] == "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"en\",URI=\"\(prefix)/https/other.example.org/audio/en.m3u8\"")
        #expect(lines[7] == "\(prefix)/http/media.example.com:8080/v/seg0.ts")
        #expect(lines[9] == "\(prefix)/http/media.example.com:8080/up/seg1.ts?sig=abc")
    }

    @Test("a local file a remote playlist names: refused and reported unless trusted, then relayed; a plain path is the server's")
    func playlistLocalReferences() throws {
        let playlist = "#EXTM3U\n#EXTINF:2.0,\nfile:///srv/media/seg0.ts\n#EXTINF:2.0,\n/srv/media/seg1.ts\n"
        let base = "http://media.example.com/v/index.m3u8"
        let (confined, refusals) = try rewrite(playlist, base: base, trusted: false)
        let confinedLines = confined.components(separatedBy: "\n")
        #expect(confinedLines[2] == addresses.refusedLocation)
        #expect(confinedLines[4] == "\(addresses.prefix)/http/media.example.com/srv/media/seg1.ts")
        #expect(refusals.map(\.code) == [.forbiddenURL])
        #expect(refusals.first?.message.contains("file:///srv/media/seg0.ts") == true)

        let (trusted, none) = try rewrite(playlist, base: base, trusted: true)
        #expect(none.isEmpty)
        #expect(trusted.components(separatedBy: "\n")[2] == "\(addresses.prefix)/file/srv/media/seg0.ts")
        #expect(addresses.destination(ofTarget: "/\(addresses.token)/file/srv/media/seg0.ts") == .file("/srv/media/seg0.ts"))
    }
}

// MARK: - The network checks through the relay

extension ConformanceRuns {
    /// libVLC and GStreamer read a source through the relay only when they must (headers
    /// their own clients cannot send, a trusted playlist); with every remote source relayed,
    /// the whole network family must hold as it does without.
    @Suite struct RelayedNetworkTests {
        /// The backends that can relay every remote source, by name.
        static var relayingBackends: [(String, any PlaybackBackend)] {
            var list: [(String, any PlaybackBackend)] = []
            #if GStreamer
            list.append(("gstreamer", GStreamerBackend(relaysEveryRemoteSource: true)))
            #endif
            #if VLC
            list.append(("vlc", VLCBackend(relaysEveryRemoteSource: true)))
            #endif
            return list
        }

        @Test("the http family passes with every remote source relayed", arguments: relayingBackends.map(\.0))
        func httpFamilyRelayed(backend name: String) async throws {
            let fixtures = try TestFixtures.ensure()
            let backend = try #require(Self.relayingBackends.first { $0.0 == name }?.1)
            let suite = ConformanceSuite(backend: backend, fixtures: fixtures)
            let report = await suite.run(only: ["http"], attempts: ConformanceRuns.attempts,
                                         expectations: ConformanceExpectation.builtInEngines) { progress in
                guard case .finished(let result) = progress else { return }
                let reason = result.outcome.reason.map { " — \($0)" } ?? ""
                FileHandle.standardError.write(Data("[\(name) relayed] \(result.name): \(result.verdict.rawValue)\(reason)\n".utf8))
            }
            #expect(report.results.count == ConformanceSuite.checkNames.filter { $0.hasPrefix("http.") }.count)
            #expect(report.skips.isEmpty)
            ConformanceRuns.recordFailures(of: report)
        }
    }
}
#endif
