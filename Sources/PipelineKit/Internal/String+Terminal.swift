extension String {
    /// The text with control characters written as escapes, as JSON writes them (`\n`, `\t`,
    /// `\r`, `\u001b`), so that a name holding them prints on one line and cannot move the
    /// cursor, recolour the terminal or pass for a line of its own (`x\nfailed: fake.jpg`).
    /// C0 and C1 controls, DEL, and the Unicode line and paragraph separators are escaped, and
    /// so is the backslash itself (`\\`): otherwise a name holding a newline and one holding a
    /// backslash and an `n` would print alike.
    package var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: { $0 == "\\" || Self.isControl($0) }) else { return self }
        var escaped = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\t": escaped += "\\t"
            case "\r": escaped += "\\r"
            case _ where Self.isControl(scalar):
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
