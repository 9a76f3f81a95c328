#if MPV
import CMPV
import FoundationEssentials

/// A Swift copy of an `mpv_node` (property values such as `demuxer-cache-state`, command
/// results such as `screenshot-raw`), so it can outlive the node libmpv owns.
enum MPVValue: Sendable, Equatable {
    case none
    case string(String)
    case flag(Bool)
    case int(Int64)
    case double(Double)
    case array([MPVValue])
    case map([String: MPVValue])
    case bytes([UInt8])

    /// Copies `node` recursively.
    init(_ node: mpv_node) {
        switch node.format {
        case MPV_FORMAT_STRING:
            self = node.u.string.map { .string(String(cString: $0)) } ?? .none
        case MPV_FORMAT_FLAG:
            self = .flag(node.u.flag != 0)
        case MPV_FORMAT_INT64:
            self = .int(node.u.int64)
        case MPV_FORMAT_DOUBLE:
            self = .double(node.u.double_)
        case MPV_FORMAT_NODE_ARRAY:
            guard let list = node.u.list?.pointee else { self = .array([]); return }
            self = .array((0..<Int(list.num)).map { MPVValue(list.values[$0]) })
        case MPV_FORMAT_NODE_MAP:
            guard let list = node.u.list?.pointee else { self = .map([:]); return }
            var entries: [String: MPVValue] = [:]
            for index in 0..<Int(list.num) {
                guard let key = list.keys?[index] else { continue }
                entries[String(cString: key)] = MPVValue(list.values[index])
            }
            self = .map(entries)
        case MPV_FORMAT_BYTE_ARRAY:
            guard let array = node.u.ba?.pointee, let data = array.data else { self = .bytes([]); return }
            self = .bytes([UInt8](UnsafeRawBufferPointer(start: data, count: array.size)))
        default:
            self = .none
        }
    }

    /// The member `key` of a map, or nil.
    subscript(key: String) -> MPVValue? {
        if case .map(let entries) = self { return entries[key] }
        return nil
    }

    /// A number as Double (integers converted), or nil.
    var double: Double? {
        switch self {
        case .double(let value): value
        case .int(let value): Double(value)
        default: nil
        }
    }

    /// A number as Int (doubles truncated), or nil.
    var int: Int? {
        switch self {
        case .int(let value): Int(value)
        case .double(let value) where value.isFinite: Int(value)
        default: nil
        }
    }

    /// Text, or nil.
    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}
#endif
