import FoundationEssentials
import PlaybackKit

/// The request line and header lines of one HTTP/1.x request, as a server reads them: the
/// conformance suite's test server and libVLC's loopback relay parse requests with this.
package struct HTTPRequestHead: Sendable {
    /// `GET`, `HEAD`, ... (upper case).
    package var method: String
    /// The request target as sent: the path and, when there is one, `?` and the query.
    package var target: String
    /// Every header line, in order, as (name, value) with the blanks around each trimmed.
    package var headers: [(name: String, value: String)] = []
    /// The first byte of a `Range: bytes=a-b` or `bytes=a-` request, nil without one.
    package var rangeStart: Int?
    /// The last byte of a range request, nil when open-ended or without one.
    package var rangeEnd: Int?
    /// `Range: bytes=-N`: the last N bytes.
    package var suffixLength: Int?

    /// The target without the query.
    package var path: String {
        guard let query = target.firstIndex(of: "?") else { return target }
        return String(target[..<query])
    }

    /// The longest head a server reads; a longer one is refused.
    package static let maximumLength = 64 * 1024

    /// The offset just past the blank line that ends the head in `bytes`, or nil while it has
    /// not all arrived. `searchFrom` skips what an earlier call already looked at.
    package static func endOfHead(in bytes: [UInt8], searchFrom: Int = 0) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = max(0, searchFrom - 3)
        while index + 4 <= bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 { return index + 4 }
            index += 1
        }
        return nil
    }

    /// Reads a head with `receive` (which fills the buffer it is given and returns the byte
    /// count, 0 or less at the end or on an error) up to the blank line after the headers, at
    /// most `maximumLength` bytes; nil when the client closed, timed out or sent no request
    /// line.
    package static func read(with receive: (UnsafeMutableRawBufferPointer) -> Int) -> HTTPRequestHead? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < maximumLength {
            let count = chunk.withUnsafeMutableBytes { receive($0) }
            guard count > 0 else { return nil }
            let searchFrom = bytes.count
            bytes.append(contentsOf: chunk[0..<count])
            if endOfHead(in: bytes, searchFrom: searchFrom) != nil { return HTTPRequestHead(parsing: bytes) }
        }
        return nil
    }

    /// Parses `bytes` (the head, and possibly more after it); nil without a request line.
    package init?(parsing bytes: [UInt8]) {
        let end = Self.endOfHead(in: bytes) ?? bytes.count
        let text = String(decoding: bytes[0..<end], as: UTF8.self)
        let lines = text.components(separatedBy: "\r\n")
        let first = lines.first?.split(separator: " ") ?? []
        guard first.count >= 2 else { return nil }
        method = String(first[0]).uppercased()
        target = String(first[1])
        for line in lines.dropFirst() where !line.isEmpty {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = String(parts[0]).trimmingBlanks()
            let value = String(parts[1]).trimmingBlanks()
            headers.append((name, value))
            guard name.lowercased() == "range", value.hasPrefix("bytes=") else { continue }
            let bounds = value.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard bounds.count == 2 else { continue }
            if bounds[0].isEmpty, let suffix = Int(bounds[1]) {
                suffixLength = suffix
            } else {
                rangeStart = Int(bounds[0]) ?? 0
                rangeEnd = Int(bounds[1])
            }
        }
    }

    /// The value of the first header called `name` (any case), or nil.
    package func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}
