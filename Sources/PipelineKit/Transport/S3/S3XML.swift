/// The few parts of S3's XML answers the client reads (ListObjectsV2 results, error bodies),
/// found by their tags: S3 sends flat, namespace-free elements for these, so a full XML parser
/// (and the libxml2 FoundationXML would bring) is not needed.
enum S3XML {
    /// The text of every `<tag>…</tag>` in `xml`, entities decoded, in order.
    static func values(of tag: String, in xml: Substring) -> [String] {
        elements(tag, in: xml).map { decode($0) }
    }

    /// The text of the first `<tag>…</tag>`, decoded.
    static func value(of tag: String, in xml: Substring) -> String? {
        elements(tag, in: xml).first.map { decode($0) }
    }

    /// The raw insides of every `<tag>…</tag>` (for nested blocks such as `<Contents>`).
    static func elements(_ tag: String, in xml: Substring) -> [Substring] {
        let open = "<\(tag)>", close = "</\(tag)>"
        var found: [Substring] = []
        var rest = xml
        while let start = rest.range(of: open), let end = rest[start.upperBound...].range(of: close) {
            found.append(rest[start.upperBound..<end.lowerBound])
            rest = rest[end.upperBound...]
        }
        return found
    }

    /// Decodes the five named entities and numeric character references.
    static func decode(_ text: Substring) -> String {
        guard text.contains("&") else { return String(text) }
        var result = ""
        var rest = text
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            guard let semicolon = rest[amp...].firstIndex(of: ";") else { break }
            let entity = rest[rest.index(after: amp)..<semicolon]
            switch entity {
            case "amp": result += "&"
            case "lt": result += "<"
            case "gt": result += ">"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                let number =
                    entity.hasPrefix("#x")
                    ? UInt32(entity.dropFirst(2), radix: 16)
                    : entity.hasPrefix("#") ? UInt32(entity.dropFirst()) : nil
                if let number, let scalar = Unicode.Scalar(number) {
                    result.unicodeScalars.append(scalar)
                } else {
                    result += rest[amp...semicolon]
                }
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }
}
