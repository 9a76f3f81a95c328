#if FFmpeg
import CFFmpeg

// What moves between the FFmpeg engine's threads: the recycled AVPackets (PacketPool) and
// their queues from the read thread to each decoder (Ring, PacketQueue), and the decoded
// frames from a decoder to its output (FrameQueue).

// MARK: - Packets

/// Owns every AVPacket the session uses and recycles them: the read thread takes an empty
/// packet, `av_read_frame` fills it, a decoder sends it and gives it back unreferenced. In
/// steady state no packet structure is allocated. Guarded by the session lock.
final class PacketPool {
    private var all: [UnsafeMutablePointer<AVPacket>] = []
    private var free: [UnsafeMutablePointer<AVPacket>] = []

    init() {
        all.reserveCapacity(256)
        free.reserveCapacity(256)
    }

    deinit {
        for packet in all {
            var p: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&p)
        }
    }

    /// An empty packet (allocated only when none is free).
    func take() -> UnsafeMutablePointer<AVPacket> {
        if let packet = free.popLast() { return packet }
        guard let packet = av_packet_alloc() else { fatalError("av_packet_alloc: out of memory") }
        all.append(packet)
        return packet
    }

    /// Takes a packet back, dropping its data.
    func give(_ packet: UnsafeMutablePointer<AVPacket>) {
        av_packet_unref(packet)
        free.append(packet)
    }
}

/// A FIFO of fixed capacity that grows by doubling: no allocation in steady state.
struct Ring<Element> {
    private var storage: [Element?] = Array(repeating: nil, count: 64)
    private var head = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: Element) {
        if count == storage.count {
            var grown = [Element?](repeating: nil, count: storage.count * 2)
            for i in 0..<count { grown[i] = storage[(head + i) % storage.count] }
            storage = grown
            head = 0
        }
        storage[(head + count) % storage.count] = element
        count += 1
    }

    var first: Element? { count > 0 ? storage[head] : nil }

    mutating func removeFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        return element
    }
}

/// The demuxed packets of one stream waiting for its decoder, stamped with the serial they
/// were read under (ffplay's scheme: a seek raises the session's serial, and a decoder that
/// meets a new serial flushes itself). A nil-data entry marks the end of the stream (drain the
/// decoder), unless it carries a decoder: then the packets after it are another stream's, to
/// be decoded with that decoder (a track switch).
/// Guarded by the session lock.
struct PacketQueue {
    struct Entry {
        /// The packet, or nil for the end-of-stream marker.
        var packet: UnsafeMutablePointer<AVPacket>?
        var serial: Int
        /// Media seconds the packet covers.
        var seconds: Double
        /// Zero-based media time the packet ends, when it has a timestamp.
        var endTime: Double? = nil
        /// On a marker (no packet): the decoder of the packets that follow.
        var switchTo: CodecDecoder? = nil
    }

    private var entries = Ring<Entry>()
    /// Bytes of packet data queued.
    private(set) var bytes = 0
    /// Seconds of media queued (sum of packet durations).
    private(set) var duration: Double = 0
    /// Media time of the end of the last queued packet, seconds (zero-based).
    var lastQueuedTime: Double = 0

    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    mutating func put(_ packet: UnsafeMutablePointer<AVPacket>?, serial: Int, packetDuration: Double,
                      endTime: Double? = nil) {
        if let packet { bytes += Int(packet.pointee.size) }
        duration += packetDuration
        entries.append(Entry(packet: packet, serial: serial, seconds: packetDuration, endTime: endTime))
    }

    /// Queues the switch to `decoder`: the packets queued after it are decoded with it.
    mutating func putSwitch(to decoder: CodecDecoder, serial: Int) {
        entries.append(Entry(packet: nil, serial: serial, seconds: 0, switchTo: decoder))
    }

    /// Drops, into `pool`, the packets at the front that end before `time` (media seconds).
    mutating func dropPackets(endingBefore time: Double, into pool: PacketPool) {
        while let first = entries.first, let packet = first.packet, let end = first.endTime, end < time {
            _ = get()
            pool.give(packet)
        }
    }

    /// Moves every packet of `other` to the end of this queue, restamped with `serial` (its
    /// markers are dropped).
    mutating func append(contentsOf other: inout PacketQueue, serial: Int) {
        while var entry = other.get() {
            guard entry.packet != nil else { continue }
            entry.serial = serial
            if let packet = entry.packet { bytes += Int(packet.pointee.size) }
            duration += entry.seconds
            entries.append(entry)
        }
        other.lastQueuedTime = 0
    }

    mutating func get() -> Entry? {
        guard let entry = entries.removeFirst() else { return nil }
        if let packet = entry.packet { bytes -= Int(packet.pointee.size) }
        duration = max(0, duration - entry.seconds)
        if entries.isEmpty { duration = 0 }
        return entry
    }

    /// Drops every packet into `pool` (the caller starts a new serial).
    mutating func flush(into pool: PacketPool) {
        while let entry = entries.removeFirst() {
            if let packet = entry.packet { pool.give(packet) }
        }
        bytes = 0
        duration = 0
    }
}

// MARK: - Decoded frames

/// A small ring of preallocated AVFrames between a decoder and its consumer. The decoder
/// moves a finished frame into a free slot; the consumer moves it out. Guarded by the session
/// lock; the frames themselves are only touched by the side that owns the slot.
final class FrameQueue {
    struct Slot {
        let frame: UnsafeMutablePointer<AVFrame>
        var serial = 0
        /// Zero-based media time, seconds.
        var time: Double = 0
        /// Media seconds the frame covers.
        var duration: Double = 0
        /// Playback rate the samples were stretched for (audio).
        var rate: Double = 1
    }

    private var slots: [Slot]
    private var readIndex = 0
    private(set) var count = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        slots = (0..<capacity).map { _ in
            guard let frame = av_frame_alloc() else { fatalError("av_frame_alloc: out of memory") }
            return Slot(frame: frame)
        }
    }

    deinit {
        for slot in slots {
            var f: UnsafeMutablePointer<AVFrame>? = slot.frame
            av_frame_free(&f)
        }
    }

    var isFull: Bool { count == capacity }
    var isEmpty: Bool { count == 0 }

    /// Moves `frame`'s content into the next free slot (the caller checked `isFull`).
    func push(_ frame: UnsafeMutablePointer<AVFrame>, serial: Int, time: Double, duration: Double, rate: Double = 1) {
        let index = (readIndex + count) % capacity
        av_frame_unref(slots[index].frame)
        av_frame_move_ref(slots[index].frame, frame)
        slots[index].serial = serial
        slots[index].time = time
        slots[index].duration = duration
        slots[index].rate = rate
        count += 1
    }

    /// The oldest slot, if any.
    func peek(_ offset: Int = 0) -> Slot? {
        guard offset < count else { return nil }
        return slots[(readIndex + offset) % capacity]
    }

    /// Moves the oldest frame into `destination` (its old content dropped) and frees the slot.
    func pop(into destination: UnsafeMutablePointer<AVFrame>?) {
        guard count > 0 else { return }
        if let destination {
            av_frame_unref(destination)
            av_frame_move_ref(destination, slots[readIndex].frame)
        } else {
            av_frame_unref(slots[readIndex].frame)
        }
        readIndex = (readIndex + 1) % capacity
        count -= 1
    }

    /// Drops every queued frame.
    func flush() {
        while count > 0 { pop(into: nil) }
    }
}
#endif
