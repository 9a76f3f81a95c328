import FoundationEssentials

/// WebVTT's STYLE and REGION blocks, which libavformat 5.1 (what the FFmpeg engine, mpv and the
/// shared cue reader read WebVTT with) does not read: it gives no cue at all for a file with
/// one. Those read a copy without them; the cues, their ids and settings, and NOTE blocks are
/// kept as they are (the styling those blocks carry is lost).
package enum WebVTTHeaderBlocks {
    /// `data` without its STYLE and REGION blocks, with LF line ends, when it is WebVTT (UTF-8,
    /// with or without a byte order mark) with one or more; nil for any other data.
    package static func removed(from data: Data) -> Data? {
        // The signature first: any other file is left without being read on.
        let byteOrderMark = data.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        guard isWebVTT([UInt8](data.dropFirst(byteOrderMark).prefix(7))),
              let text = String(validating: [UInt8](data.dropFirst(byteOrderMark)), as: UTF8.self) else { return nil }
        var kept: [Substring] = []
        var removedAny = false
        for block in blocks(of: text) {
            if isHeaderBlock(block) {
                removedAny = true
            } else {
                kept.append(contentsOf: block)
                kept.append("")
            }
        }
        guard removedAny else { return nil }
        return Data(kept.joined(separator: "\n").utf8)
    }

    /// For a local WebVTT file with STYLE or REGION blocks: a copy without them, under the
    /// same file name in a new temporary folder (removed with `removeCopy`); nil for any other
    /// file, or when the copy cannot be written (the file is then read as it is).
    package static func readableCopy(of url: URL) -> URL? {
        // Mapped, not read: a media file handed as subtitles is not read whole to tell.
        guard url.isFileURL, let data = try? Data(contentsOf: url, options: .alwaysMapped), let cleaned = removed(from: data) else {
            return nil
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("playbackkit-webvtt-\(UUID().uuidString)")
        let copy = folder.appendingPathComponent(url.lastPathComponent.isEmpty ? "subtitles.vtt" : url.lastPathComponent)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try cleaned.write(to: copy)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            PlaybackLog.log(.warning, "playback", "subtitles: cannot write a readable copy of \(url.lastPathComponent): \(error)")
            return nil
        }
        PlaybackLog.log(.debug, "playback", "subtitles: \(url.lastPathComponent) is read without its STYLE and REGION blocks")
        return copy
    }

    /// Removes a copy `readableCopy(of:)` made, with its folder.
    package static func removeCopy(_ copy: URL) {
        try? FileManager.default.removeItem(at: copy.deletingLastPathComponent())
    }

    /// Runs `body` with the URL to read `url` from: a readable copy (removed once `body`
    /// returns) when it is a local WebVTT file with STYLE or REGION blocks, else `url`.
    package static func withReadableFile<Result, Failure: Error>(_ url: URL, _ body: (URL) throws(Failure) -> Result) throws(Failure) -> Result {
        guard let copy = readableCopy(of: url) else { return try body(url) }
        defer { removeCopy(copy) }
        return try body(copy)
    }

    // MARK: - Reading the blocks

    /// "WEBVTT" alone on its first line or followed by a space or tab.
    private static func isWebVTT(_ bytes: [UInt8]) -> Bool {
        let signature = Array("WEBVTT".utf8)
        guard bytes.starts(with: signature) else { return false }
        guard bytes.count > signature.count else { return true }
        return [0x20, 0x09, 0x0A, 0x0D].contains(bytes[signature.count])
    }

    /// The lines of `text` (CR LF, LF or CR ends), in blocks parted by blank lines.
    private static func blocks(of text: String) -> [[Substring]] {
        var blocks: [[Substring]] = []
        var current: [Substring] = []
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) {
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) {
                if !current.isEmpty { blocks.append(current) }
                current = []
            } else {
                current.append(line)
            }
        }
        if !current.isEmpty { blocks.append(current) }
        return blocks
    }

    /// A STYLE or REGION block: its first line is the word alone or followed by a space or
    /// tab, and no line holds a cue timing ("-->": a cue whose id is that word).
    private static func isHeaderBlock(_ block: [Substring]) -> Bool {
        guard let first = block.first, !block.contains(where: { $0.contains("-->") }) else { return false }
        return ["STYLE", "REGION"].contains { word in
            first.hasPrefix(word) && (first.count == word.count || [" ", "\t"].contains(first[first.index(first.startIndex, offsetBy: word.count)]))
        }
    }
}

/// The readable copies (`WebVTTHeaderBlocks.readableCopy(of:)`) an engine reads for as long as
/// it plays, removed together once it is done.
package final class WebVTTReadableCopies: Sendable {
    private let state = Locked<(copies: [URL], done: Bool)>(([], false))

    /// No copies yet.
    package init() {}

    /// The file to hand the engine for `url`: a readable copy kept until `removeAll()`, or
    /// `url` itself (any other file, or once `removeAll()` ran).
    package func file(for url: URL) -> URL {
        guard !state.get().done, let copy = WebVTTHeaderBlocks.readableCopy(of: url) else { return url }
        let kept = state.withLock { state -> Bool in
            guard !state.done else { return false }
            state.copies.append(copy)
            return true
        }
        guard kept else {
            WebVTTHeaderBlocks.removeCopy(copy)
            return url
        }
        return copy
    }

    /// Removes every copy; files asked for later are handed on as they are.
    package func removeAll() {
        let copies = state.withLock { state -> [URL] in
            state.done = true
            defer { state.copies = [] }
            return state.copies
        }
        for copy in copies { WebVTTHeaderBlocks.removeCopy(copy) }
    }

    deinit { for copy in state.get().copies { WebVTTHeaderBlocks.removeCopy(copy) } }
}
