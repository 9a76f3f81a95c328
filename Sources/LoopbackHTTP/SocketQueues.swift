import FoundationEssentials
import Glibc

/// The TCP sockets of this network namespace on 127.0.0.1 with their queues, from
/// /proc/net/tcp: how much of a loopback connection sits in the kernel, on both ends.
package enum SocketQueues {
    package struct Entry {
        package var local: Int
        package var remote: Int
        /// Bytes written and not yet acknowledged by the other end.
        package var sendQueue: Int
        /// Bytes received and not yet read by the program.
        package var receiveQueue: Int
    }

    /// Every IPv4 socket between two loopback addresses; empty when the file cannot be read.
    package static func read() -> [Entry] {
        // Read in a loop: /proc files report a size of 0.
        let fd = open("/proc/net/tcp", O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        var entries: [Entry] = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 4 else { continue }
            let local = fields[1].split(separator: ":"), remote = fields[2].split(separator: ":")
            let queues = fields[4].split(separator: ":")
            guard local.count == 2, remote.count == 2, queues.count == 2, local[0] == "0100007F", remote[0] == "0100007F",
                  let localPort = Int(local[1], radix: 16), let remotePort = Int(remote[1], radix: 16),
                  let send = Int(queues[0], radix: 16), let receive = Int(queues[1], radix: 16) else { continue }
            entries.append(Entry(local: localPort, remote: remotePort, sendQueue: send, receiveQueue: receive))
        }
        return entries
    }

    /// The bytes of the loopback connection between `localPort` (this end) and `peerPort`
    /// that the kernel holds: this end's send queue and the peer's receive queue; nil when
    /// neither socket is listed (/proc/net/tcp unreadable).
    package static func inFlight(localPort: Int, peerPort: Int) -> Int? {
        let entries = read()
        let ours = entries.first { $0.local == localPort && $0.remote == peerPort }
        let theirs = entries.first { $0.local == peerPort && $0.remote == localPort }
        guard ours != nil || theirs != nil else { return nil }
        return (ours?.sendQueue ?? 0) + (theirs?.receiveQueue ?? 0)
    }
}
