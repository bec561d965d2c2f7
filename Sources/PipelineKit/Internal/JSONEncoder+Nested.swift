import Foundation

/// Writing a large JSON document a piece at a time, in the bytes encoding it whole gives: the
/// items of its one long list (a manifest's inputs, a report's items) come from a `SpillFile`,
/// between the text around that list.
extension JSONEncoder {
    /// `value` as this pretty-printing encoder prints it as an element of a list that is a value
    /// of the top object: each line indented two levels deeper, except the empty line inside an
    /// empty list, and no line break after the last. Such items, joined by `,\n`, go between
    /// the two parts of `encodedAround(list:of:)`.
    func encodedTwoLevelsDeep(_ value: some Encodable) throws -> Data {
        let text = try encode(value)
        let newline = UInt8(ascii: "\n")
        let indent = [UInt8](repeating: UInt8(ascii: " "), count: 4)
        var indented: [UInt8] = []
        indented.reserveCapacity(text.count + text.count / 8)
        // Every line that is not empty, the first included, starts four spaces further in.
        var atLineStart = true
        for byte in text {
            if atLineStart && byte != newline { indented += indent }
            indented.append(byte)
            atLineStart = byte == newline
        }
        return Data(indented)
    }

    /// The text of `document`, whose top-level list `key` is empty, before and after that
    /// list's items: with none between them, the two are `document` as this pretty-printing
    /// encoder prints it.
    func encodedAround(list key: String, of document: some Encodable) throws -> (head: Data, tail: Data) {
        let text = String(decoding: try encode(document), as: UTF8.self)
        let opening = "\n  \"\(key)\" : [\n"
        guard let empty = text.range(of: opening + "\n  ]") else {
            throw EncodingError.invalidValue(
                key, .init(codingPath: [], debugDescription: "no empty list \"\(key)\" at the top of the document as printed"))
        }
        return (Data((text[..<empty.lowerBound] + opening).utf8), Data(("\n  ]" + text[empty.upperBound...]).utf8))
    }
}
