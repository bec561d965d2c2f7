import Foundation

extension JSONEncoder {
    /// `value` as this pretty-printing encoder prints it as an element of a list that is a value
    /// of the top object (a manifest's input, a report's item): each line indented two levels
    /// deeper, except the empty line inside an empty list, and no line break after the last.
    /// Written between the rest of the document's text, it gives the bytes of encoding it all.
    func encodedTwoLevelsDeep(_ value: some Encodable) throws -> Data {
        let text = String(decoding: try encode(value), as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "    " + $0 }
        return Data(lines.joined(separator: "\n").utf8)
    }
}
