/// The orientation an XMP packet states (`tiff:Orientation`), set to the image's own: the decoder
/// turns an image upright and sets its EXIF orientation to 1, but the packet is the input's, and
/// a viewer that reads it where there is no EXIF block would turn the image again.
///
/// One pass over the bytes, copying only when a value changes: a hostile packet may repeat the
/// name a million times, and a packet is kept whole in memory beside the image already.
enum XMPOrientation {
    /// `packet` with every `tiff:Orientation` (as an attribute or an element) set to
    /// `orientation`, or nil when it states none, or already states that one everywhere.
    static func setting(_ orientation: Int, in packet: [UInt8]) -> [UInt8]? {
        let value = Array(String(orientation).utf8)
        var result: [UInt8] = []
        var copiedUpTo = 0
        var searchFrom = 0
        while let nameEnd = endOfName(in: packet, from: searchFrom) {
            searchFrom = nameEnd
            guard let replaced = valueSpan(in: packet, afterNameEndingAt: nameEnd) else { continue }
            searchFrom = replaced.upperBound
            if packet[replaced].elementsEqual(value) { continue }
            if result.isEmpty { result.reserveCapacity(packet.count) }
            result += packet[copiedUpTo..<replaced.lowerBound]
            result += value
            copiedUpTo = replaced.upperBound
        }
        guard copiedUpTo > 0 else { return nil }
        result += packet[copiedUpTo...]
        return result
    }

    private static let name = Array("tiff:Orientation".utf8)
    private static let closingTag = Array("</tiff:Orientation>".utf8)

    /// The index just past the next `tiff:Orientation` at or after `start` that is a whole
    /// name: not the end of another (`mytiff:Orientation`, `x:tiff:Orientation`).
    private static func endOfName(in bytes: [UInt8], from start: Int) -> Int? {
        guard let first = name.first, bytes.count >= name.count else { return nil }
        var index = start
        while index <= bytes.count - name.count {
            if bytes[index] == first, index == 0 || !isNameCharacter(bytes[index - 1]),
                bytes[index..<index + name.count].elementsEqual(name)
            {
                return index + name.count
            }
            index += 1
        }
        return nil
    }

    /// Whether `byte` may be part of an XML name written in ASCII, or is a byte of a longer
    /// UTF-8 character, which a name may hold too.
    private static func isNameCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), 0x80...:
            true
        default: false
        }
    }

    /// The span to replace after a name: in `="…"` or `='…'` the quoted value with the blanks
    /// around it; in `<tiff:Orientation>…</tiff:Orientation>` the text between the tags. Nil
    /// when the name is neither, such as a closing tag or a namespace declaration.
    private static func valueSpan(in bytes: [UInt8], afterNameEndingAt nameEnd: Int) -> Range<Int>? {
        let nameStart = nameEnd - name.count
        if nameStart > 0, bytes[nameStart - 1] == UInt8(ascii: "<") {
            guard nameEnd < bytes.count, bytes[nameEnd] == UInt8(ascii: ">") else { return nil }
            let start = nameEnd + 1
            guard let end = blankDigitsBlank(in: bytes, from: start),
                bytes[end...].starts(with: closingTag)
            else { return nil }
            return start..<end
        }
        var index = skippingBlanks(in: bytes, from: nameEnd)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { return nil }
        index = skippingBlanks(in: bytes, from: index + 1)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else { return nil }
        let start = index + 1
        guard let end = blankDigitsBlank(in: bytes, from: start), end < bytes.count,
            bytes[end] == UInt8(ascii: "\"") || bytes[end] == UInt8(ascii: "'")
        else { return nil }
        return start..<end
    }

    /// The end of blanks, at least one ASCII digit, and blanks from `start`; nil without a digit.
    private static func blankDigitsBlank(in bytes: [UInt8], from start: Int) -> Int? {
        var index = skippingBlanks(in: bytes, from: start)
        let digitsStart = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        guard index > digitsStart else { return nil }
        return skippingBlanks(in: bytes, from: index)
    }

    private static func skippingBlanks(in bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return index
            }
        }
        return index
    }
}
