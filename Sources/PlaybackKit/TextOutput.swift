import Glibc

// MARK: - printf-style formatting

extension String {
    /// Text formatted by C's `printf` rules: `String(cFormat: "%.3f s", seconds)`.
    /// Arguments are numbers (`Double`, `Int`, `Int32`, ...), which `%f`, `%g`, `%d` and the
    /// like print as C does; strings go in by interpolation (there is no `%@`).
    package init(cFormat format: String, _ arguments: CVarArg...) {
        // A va_list is used up by one vsnprintf, so each attempt builds its own.
        var capacity = 256
        while true {
            var buffer = [CChar](repeating: 0, count: capacity)
            let needed = withVaList(arguments) { list in
                buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, capacity, format, list) }
            }
            guard needed >= 0 else {
                self = ""
                return
            }
            if Int(needed) < capacity {
                self = String(decoding: buffer.prefix(Int(needed)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return
            }
            capacity = Int(needed) + 1
        }
    }
}

// MARK: - Trimming

extension StringProtocol {
    /// The text without the spaces and tabs at its start and end (line breaks stay).
    package func trimmingBlanks() -> String { trimming { $0.isWhitespace && !$0.isNewline } }

    /// The text without the white space and line breaks at its start and end.
    package func trimmingWhitespace() -> String { trimming { $0.isWhitespace } }

    /// The text without the characters at its start and end for which `isTrimmed` is true.
    package func trimming(_ isTrimmed: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }),
              let last = lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(self[first...last])
    }
}

// MARK: - Standard streams

/// The process's standard output and error, written straight to their file descriptors.
package enum StandardStreams {
    /// Writes `text` to standard error at once.
    package static func writeError(_ text: String) {
        write(Array(text.utf8), to: STDERR_FILENO)
    }

    /// Writes `text` to standard output at once, also without a line break (after what
    /// `print` has buffered, so the order stays).
    package static func writeOutput(_ text: String) {
        writeOutput(Array(text.utf8))
    }

    /// Writes `bytes` to standard output at once, after what `print` has buffered.
    package static func writeOutput(_ bytes: [UInt8]) {
        fflush(nil)
        write(bytes, to: STDOUT_FILENO)
    }

    /// Writes all of `bytes` to the file `descriptor`, going on after partial writes and
    /// interruptions (a closed or failing descriptor ends it).
    public static func write(_ bytes: [UInt8], to descriptor: Int32) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
