/// A JSON value that remembers where it stood in its source text, so that every error about a
/// pipeline file can name a line and column.
public struct JSONNode: Sendable, Equatable {
    /// The JSON value itself.
    public enum Value: Sendable, Equatable {
        /// `null`.
        case null
        /// `true` or `false`.
        case bool(Bool)
        /// The number and whether its source text was an integer (no fraction, no exponent).
        case number(Double, isInteger: Bool)
        /// A string, its escapes resolved.
        case string(String)
        /// Elements in source order.
        case array([JSONNode])
        /// Members in source order.
        case object([Member])
    }

    /// One `"key": value` pair of an object.
    public struct Member: Sendable, Equatable {
        /// The member's name.
        public let key: String
        /// Where the name stands in the source text.
        public let keyLocation: SourceLocation
        /// The member's value.
        public let value: JSONNode
    }

    /// The value itself.
    public let value: Value
    /// Where the value starts in the source text.
    public let location: SourceLocation

    /// A node holding `value`, said to stand at `location` (line 0 for values made in code).
    public init(_ value: Value, at location: SourceLocation = SourceLocation(line: 0, column: 0)) {
        self.value = value
        self.location = location
    }

    /// The member named `key`, when this is an object that has it.
    public subscript(key: String) -> JSONNode? {
        guard case .object(let members) = value else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// A string as the one-key object it is short for, `key` holding it (`"avif"` in `formats`
    /// is `{"format": "avif"}`); any other node as it is.
    func expandingShorthand(to key: String) -> JSONNode {
        guard case .string = value else { return self }
        return JSONNode(.object([Member(key: key, keyLocation: location, value: self)]), at: location)
    }

    /// The name of the value's JSON type, for messages ("expected a number, found a string").
    public var typeName: String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .number(_, let isInteger): isInteger ? "an integer" : "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A 1-based line and column in a source text.
public struct SourceLocation: Sendable, Equatable, CustomStringConvertible {
    /// The line, from 1.
    public let line: Int
    /// The column, from 1, in characters.
    public let column: Int

    /// A place in a pipeline file's text.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// `line:column`, as messages quote it.
    public var description: String { "\(line):\(column)" }
}

extension JSONNode {
    /// Turns plain Swift values into a node (for defaults and tests); location is unknown.
    public init(plain: any Sendable) {
        switch plain {
        case let node as JSONNode: self = node
        case let bool as Bool: self.init(.bool(bool))
        case let int as Int: self.init(.number(Double(int), isInteger: true))
        case let double as Double: self.init(.number(double, isInteger: double.rounded() == double))
        case let string as String: self.init(.string(string))
        case let array as [any Sendable]: self.init(.array(array.map { JSONNode(plain: $0) }))
        case let object as [String: any Sendable]:
            let members = object.sorted { $0.key < $1.key }.map {
                Member(key: $0.key, keyLocation: SourceLocation(line: 0, column: 0), value: JSONNode(plain: $0.value))
            }
            self.init(.object(members))
        default: self.init(.null)
        }
    }

    /// The value as compact JSON text.
    public var jsonText: String {
        switch value {
        case .null: return "null"
        case .bool(let bool): return bool ? "true" : "false"
        case .number(let number, let isInteger):
            if isInteger, abs(number) < 1e15 { return String(Int(number)) }
            return String(number)
        case .string(let string): return JSONNode.quoted(string)
        case .array(let items): return "[" + items.map(\.jsonText).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.map { JSONNode.quoted($0.key) + ":" + $0.value.jsonText }.joined(separator: ",") + "}"
        }
    }

    /// `text` as a JSON string literal.
    public static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                result +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
