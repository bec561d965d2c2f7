import Vips

/// The orientation an XMP packet states (`tiff:Orientation`), set to 1 when the decoder turns an
/// image upright by its EXIF orientation: the packet is the input's, and a viewer that reads it
/// where there is no EXIF block would turn the image again. An image not turned keeps what its
/// packet said, which a viewer needs as much as before.
///
/// One pass over the bytes, copying only when a value changes: a hostile packet may repeat the
/// name a million times, and a packet is kept whole in memory beside the image already. The
/// packet is read as UTF-8 (or any encoding that writes ASCII as ASCII); a UTF-16 one is left
/// as it is.
enum XMPOrientation {
    /// `image`, just turned upright, with its XMP packet (if any) saying so.
    static func upright(_ image: VipsImage) throws(VipsError) -> VipsImage {
        guard let packet = image.blobCopy("xmp-data"), let upright = setting(1, in: packet) else { return image }
        return try image.settingBlobField("xmp-data", to: upright)
    }

    /// `packet` with every `Orientation` of the TIFF namespace (as an attribute or an element,
    /// under `tiff:` or a prefix the packet binds to it) set to `orientation`, or nil when it
    /// states none, or already states that one everywhere.
    static func setting(_ orientation: Int, in packet: [UInt8]) -> [UInt8]? {
        let value = Array(String(orientation).utf8)
        let prefixes = Set([Array("tiff".utf8)] + prefixes(boundTo: namespace, in: packet))
        var result: [UInt8] = []
        var copiedUpTo = 0
        var scan = Scan()
        while let name = nextOrientation(under: prefixes, in: packet, scan: &scan) {
            guard let replaced = valueSpan(in: packet, after: name) else { continue }
            if replaced.lowerBound > name.upperBound, packet[replaced.lowerBound - 1] == UInt8(ascii: ">") {
                // An element's text: the scan goes on from it, outside the tag.
                scan = Scan(index: replaced.upperBound, inTag: false)
            } else {
                // An attribute's value: past its closing quote, in the tag still.
                scan.index = replaced.upperBound + 1
            }
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

    private static let namespace = Array("http://ns.adobe.com/tiff/1.0/".utf8)
    private static let localName = Array(":Orientation".utf8)
    private static let declaration = Array("xmlns:".utf8)

    /// Where a scan of the packet is, and whether it is inside a tag, where names are: the text
    /// between tags, comments and CDATA sections are content, whatever they say.
    private struct Scan {
        var index = 0
        var inTag = false
    }

    /// The next whole name `P:Orientation` in a tag, from where `scan` is, whose prefix `P` is
    /// one of `prefixes`: not part of a longer name (`mytiff:Orientation`, `x:tiff:Orientation`).
    /// Each byte is read once, so a packet of many names costs in proportion to its length.
    private static func nextOrientation(under prefixes: Set<[UInt8]>, in bytes: [UInt8], scan: inout Scan) -> Range<Int>? {
        while scan.index < bytes.count {
            let byte = bytes[scan.index]
            if byte == UInt8(ascii: "<") {
                if let end = end(of: commentOpen, closedBy: commentClose, in: bytes, at: scan.index)
                    ?? end(of: cdataOpen, closedBy: cdataClose, in: bytes, at: scan.index)
                {
                    scan.index = end
                } else {
                    scan = Scan(index: scan.index + 1, inTag: true)
                }
                continue
            }
            guard scan.inTag else {
                scan.index += 1
                continue
            }
            switch byte {
            case UInt8(ascii: ">"):
                scan = Scan(index: scan.index + 1, inTag: false)
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                // A value: text too, which may hold `>`.
                scan.index = (bytes[(scan.index + 1)...].firstIndex(of: byte) ?? bytes.count - 1) + 1
            case _ where isNameCharacter(byte):
                let start = scan.index
                let colon = prefixEnd(in: bytes, from: start)
                scan.index = colon
                while scan.index < bytes.count, isNameCharacter(bytes[scan.index]) { scan.index += 1 }
                if bytes[colon...].starts(with: localName), scan.index == colon + localName.count,
                    prefixes.contains(Array(bytes[start..<colon]))
                {
                    return start..<scan.index
                }
            default:
                scan.index += 1
            }
        }
        return nil
    }

    private static let commentOpen = Array("<!--".utf8)
    private static let commentClose = Array("-->".utf8)
    private static let cdataOpen = Array("<![CDATA[".utf8)
    private static let cdataClose = Array("]]>".utf8)

    /// Past the end of a section that `open` begins at `index` and `close` ends (or of the
    /// packet, when it is not closed); nil when no such section begins there.
    private static func end(of open: [UInt8], closedBy close: [UInt8], in bytes: [UInt8], at index: Int) -> Int? {
        guard bytes[index...].starts(with: open) else { return nil }
        return bytes[(index + open.count)...].firstRange(of: close)?.upperBound ?? bytes.count
    }

    /// The prefixes `packet` binds to `uri` (`xmlns:t="…"`).
    private static func prefixes(boundTo uri: [UInt8], in packet: [UInt8]) -> [[UInt8]] {
        var found: [[UInt8]] = []
        var index = 0
        while let start = packet[index...].firstRange(of: declaration)?.lowerBound {
            index = start + declaration.count
            guard start == 0 || !isNameCharacter(packet[start - 1]) else { continue }
            let end = prefixEnd(in: packet, from: index)
            guard end > index, let value = quotedValue(in: packet, afterEquals: end), packet[value].elementsEqual(uri) else { continue }
            found.append(Array(packet[index..<end]))
        }
        return found
    }

    /// Where the name's prefix that begins at `start` ends: at its colon, or at the end of the name.
    private static func prefixEnd(in bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count, isNameCharacter(bytes[index]), bytes[index] != UInt8(ascii: ":") { index += 1 }
        return index
    }

    /// The span between the quotes of `= "…"` (or `'…'`) from `start`, blanks allowed about `=`.
    private static func quotedValue(in bytes: [UInt8], afterEquals start: Int) -> Range<Int>? {
        var index = skippingBlanks(in: bytes, from: start)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { return nil }
        index = skippingBlanks(in: bytes, from: index + 1)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else { return nil }
        let quote = bytes[index]
        guard let end = bytes[(index + 1)...].firstIndex(of: quote) else { return nil }
        return (index + 1)..<end
    }

    /// The span to replace after a name: in `="…"` or `='…'` the quoted value, when it is a
    /// number with blanks about it; in `<P:Orientation …>…</P:Orientation>` the text between
    /// the tags. Nil when the name is neither, such as a closing tag or a namespace declaration.
    private static func valueSpan(in bytes: [UInt8], after name: Range<Int>) -> Range<Int>? {
        if name.lowerBound > 0, bytes[name.lowerBound - 1] == UInt8(ascii: "<") {
            // An element, perhaps with attributes (`rdf:datatype`) or blanks before its `>`.
            guard let close = bytes[name.upperBound...].firstIndex(where: { $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "<") }),
                bytes[close] == UInt8(ascii: ">"), bytes[close - 1] != UInt8(ascii: "/"),
                close == name.upperBound || skippingBlanks(in: bytes, from: name.upperBound) > name.upperBound
            else { return nil }
            let start = close + 1
            guard let end = blankDigitsBlank(in: bytes, from: start),
                bytes[end...].starts(with: Array("</".utf8) + bytes[name] + [UInt8(ascii: ">")])
            else { return nil }
            return start..<end
        }
        guard let value = quotedValue(in: bytes, afterEquals: name.upperBound),
            blankDigitsBlank(in: bytes, from: value.lowerBound) == value.upperBound
        else { return nil }
        return value
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
}
