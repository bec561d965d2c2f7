/// A strict JSON parser (RFC 8259) that records the line and column of every value and key.
///
/// Foundation's `JSONDecoder` cannot say where a value stood, and pipeline-file errors must.
struct JSONParser {
    /// A syntax error at a place in the text.
    struct SyntaxError: Error, Equatable {
        let message: String
        let location: SourceLocation
    }

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    /// The column of `columnIndex` on the current line: columns are counted onward from the
    /// last position asked for, not from the line's start each time, so a file on one long
    /// line parses in linear time (it was quadratic).
    private var columnIndex = 0
    private var column = 1
    /// How many bytes column counting has looked at, for the test that it stays linear.
    private(set) var bytesCountedForColumns = 0
    /// Deep nesting is no pipeline file; the limit keeps hostile input from exhausting the stack.
    private let maximumDepth = 200

    init(_ text: String) {
        bytes = Array(text.utf8)
    }

    /// A key given again in one object: the key, the JSON path of the object, and where each
    /// stands.
    struct Duplicate: Equatable {
        let key: String
        let objectPath: String
        let first: SourceLocation
        let again: SourceLocation
    }

    /// The keys given again so far, each where it stands; the first of each is the one kept.
    private(set) var duplicates: [Duplicate] = []
    /// The JSON path of the value being read: keys, and indexes in arrays. Written out only for
    /// a duplicate, so that reading a large file formats no index.
    private var pathParts: [PathPart] = []

    private enum PathPart {
        case key(String)
        case index(Int)
    }

    /// The document in `text`; a key given twice in an object is an error at the second.
    static func parse(_ text: String) throws(SyntaxError) -> JSONNode {
        var parser = JSONParser(text)
        let node = try parser.parseDocument()
        if let duplicate = parser.duplicates.first {
            throw SyntaxError(message: "duplicate key \(duplicate.key.quotedValue)", location: duplicate.again)
        }
        return node
    }

    /// The document in `text`, and every key given twice in an object, so that each is said.
    static func parseNotingDuplicates(_ text: String) throws(SyntaxError) -> (JSONNode, [Duplicate]) {
        var parser = JSONParser(text)
        let node = try parser.parseDocument()
        return (node, parser.duplicates)
    }

    /// `pathParts` as the pipeline file's messages write a JSON path.
    private var path: String {
        pathParts.reduce("") { path, part in
            switch part {
            case .key(let key): path.isEmpty ? key : path + "." + key
            case .index(let index): path + "[\(index)]"
            }
        }
    }

    mutating func parseDocument() throws(SyntaxError) -> JSONNode {
        // A UTF-8 byte-order mark, which Windows editors write: RFC 8259 lets a parser ignore it.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { (index, lineStart) = (3, 3) }
        skipWhitespace()
        let node = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected text after the JSON value") }
        return node
    }

    /// Where `index` is. Columns count Unicode scalars, not bytes (every byte that does not
    /// continue a UTF-8 sequence), so that editors land on the right spot.
    private var location: SourceLocation {
        mutating get {
            if columnIndex < lineStart {
                columnIndex = lineStart
                column = 1
            }
            let end = min(index, bytes.count)
            bytesCountedForColumns += max(0, end - columnIndex)
            while columnIndex < end {
                if bytes[columnIndex] & 0xC0 != 0x80 { column += 1 }
                columnIndex += 1
            }
            return SourceLocation(line: line, column: column)
        }
    }

    /// Said without a backslash, which messages on a terminal print doubled (escaped as names are).
    static let unpairedSurrogate = "an unpaired UTF-16 surrogate: an escape of D800 to DFFF needs the other half of its pair"

    /// The error `message` at `index`; a comment there (JSONC's habit, from editors' settings
    /// files) is said as such, whatever was expected.
    private mutating func error(_ message: String) -> SyntaxError {
        let slash = UInt8(ascii: "/")
        if index + 1 < bytes.count, bytes[index] == slash, bytes[index + 1] == slash || bytes[index + 1] == UInt8(ascii: "*") {
            return SyntaxError(message: "a comment: JSON allows none; take it out", location: location)
        }
        return SyntaxError(message: message, location: location)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): index += 1
            case UInt8(ascii: "\n"):
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(SyntaxError) -> JSONNode {
        guard depth < maximumDepth else { throw error("JSON nested more than \(maximumDepth) levels deep") }
        guard index < bytes.count else { throw error("unexpected end of file, expected a value") }
        let start = location
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth, start: start)
        case UInt8(ascii: "["): return try parseArray(depth: depth, start: start)
        case UInt8(ascii: "\""): return JSONNode(.string(try parseString()), at: start)
        case UInt8(ascii: "t"): try expectWord("true"); return JSONNode(.bool(true), at: start)
        case UInt8(ascii: "f"): try expectWord("false"); return JSONNode(.bool(false), at: start)
        case UInt8(ascii: "n"): try expectWord("null"); return JSONNode(.null, at: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber(start: start)
        default: throw error("unexpected character \(describe(bytes[index])), expected a value")
        }
    }

    private func describe(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7f ? "'\(Character(UnicodeScalar(byte)))'" : "byte 0x" + String(byte, radix: 16)
    }

    private mutating func expectWord(_ word: String) throws(SyntaxError) {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw error("unexpected text, expected '\(word)'")
        }
        index += expected.count
    }

    private mutating func parseObject(depth: Int, start: SourceLocation) throws(SyntaxError) -> JSONNode {
        index += 1
        var members: [JSONNode.Member] = []
        // Each key's member, so that finding a repeat costs the same however many there are.
        var memberOfKey: [String: Int] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return JSONNode(.object(members), at: start)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a key in double quotes")
            }
            let keyLocation = location
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after the key") }
            index += 1
            skipWhitespace()
            pathParts.append(.key(key))
            let value = try parseValue(depth: depth + 1)
            pathParts.removeLast()
            if let first = memberOfKey[key] {
                duplicates.append(Duplicate(key: key, objectPath: path, first: members[first].keyLocation, again: keyLocation))
            } else {
                memberOfKey[key] = members.count
                members.append(JSONNode.Member(key: key, keyLocation: keyLocation, value: value))
            }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of file, expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") {
                try skipComma(before: "}")
                continue
            }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return JSONNode(.object(members), at: start) }
            throw error("expected ',' or '}' after an object member")
        }
    }

    /// Passes the comma at `index`; one with nothing but `closing` after it is an error at the
    /// comma itself, where the mistake is, rather than at the bracket.
    private mutating func skipComma(before closing: Unicode.Scalar) throws(SyntaxError) {
        let comma = location
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: closing) {
            throw SyntaxError(message: "a trailing comma: JSON allows no ',' before '\(closing)'", location: comma)
        }
    }

    private mutating func parseArray(depth: Int, start: SourceLocation) throws(SyntaxError) -> JSONNode {
        index += 1
        var items: [JSONNode] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return JSONNode(.array(items), at: start)
        }
        while true {
            skipWhitespace()
            pathParts.append(.index(items.count))
            items.append(try parseValue(depth: depth + 1))
            pathParts.removeLast()
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of file, expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") {
                try skipComma(before: "]")
                continue
            }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return JSONNode(.array(items), at: start) }
            throw error("expected ',' or ']' after an array item")
        }
    }

    private mutating func parseString() throws(SyntaxError) -> String {
        index += 1
        var runStart = index
        func flushRun(_ parser: JSONParser, upTo end: Int) -> String {
            String(decoding: parser.bytes[runStart..<end], as: UTF8.self)
        }
        var result = ""
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                result += flushRun(self, upTo: index)
                index += 1
                return result
            case UInt8(ascii: "\\"):
                result += flushRun(self, upTo: index)
                index += 1
                guard index < bytes.count else { throw error("unterminated string") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""): result += "\""
                case UInt8(ascii: "\\"): result += "\\"
                case UInt8(ascii: "/"): result += "/"
                case UInt8(ascii: "b"): result += "\u{08}"
                case UInt8(ascii: "f"): result += "\u{0C}"
                case UInt8(ascii: "n"): result += "\n"
                case UInt8(ascii: "r"): result += "\r"
                case UInt8(ascii: "t"): result += "\t"
                case UInt8(ascii: "u"):
                    var code = try parseHex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error(Self.unpairedSurrogate)
                        }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error(Self.unpairedSurrogate) }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                    result.unicodeScalars.append(scalar)
                default: throw error("invalid escape '\\\(Character(UnicodeScalar(escaped)))'")
                }
                runStart = index
            case 0..<0x20:
                throw error("control character in a string (write it as an escape)")
            default:
                index += 1
            }
        }
        throw error("unterminated string")
    }

    private mutating func parseHex4() throws(SyntaxError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw error("invalid \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    private mutating func parseNumber(start: SourceLocation) throws(SyntaxError) -> JSONNode {
        let begin = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw error("numbers may not have leading zeros") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number: digits expected after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number: digits expected in the exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = String(decoding: bytes[begin..<index], as: UTF8.self)
        guard let number = Double(text), number.isFinite else { throw SyntaxError(message: "number out of range", location: start) }
        // An integer by its value, as JSON Schema counts one: `100.0` and `1e2` are 100.
        return JSONNode(.number(number, isInteger: number.rounded() == number), at: start)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
