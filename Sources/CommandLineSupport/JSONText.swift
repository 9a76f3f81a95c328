import FoundationEssentials

/// A JSON value built from a loosely typed tree of dictionaries, arrays, strings, numbers and
/// booleans, written by `JSONEncoder` with sorted keys.
package enum JSONValue: Encodable {
    case null
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The JSON form of `value`: `[String: Any]` and `[Any]` at any depth; `Optional.none`,
    /// and numbers that are not finite, become null; anything else unknown becomes its text.
    package init(_ value: Any) {
        if let dictionary = value as? [String: Any] {
            self = .object(dictionary.mapValues { JSONValue($0) })
        } else if let array = value as? [Any] {
            self = .array(array.map { JSONValue($0) })
        } else if let bool = value as? Bool {
            self = .bool(bool)
        } else if let integer = value as? any BinaryInteger {
            self = .integer(Int(truncatingIfNeeded: integer))
        } else if let double = value as? Double {
            self = double.isFinite ? .number(double) : .null
        } else if let float = value as? Float {
            self = float.isFinite ? .number(Double(float)) : .null
        } else if let string = value as? String {
            self = .string(string)
        } else {
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                self = mirror.children.first.map { JSONValue($0.value) } ?? .null
            } else {
                self = .string(String(describing: value))
            }
        }
    }

    /// Writes the value itself (not wrapped in an object).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The JSON text, keys sorted; indented on several lines when `pretty`.
    package func text(pretty: Bool = false) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
