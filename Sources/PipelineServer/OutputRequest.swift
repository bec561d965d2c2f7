#if Server
import Foundation
import PipelineKit

/// A request for one file of one output of one input, checked against the catalog: which
/// output, which input, which format and which width.
struct OutputRequest: Sendable, Equatable {
    let output: String
    let input: String
    let format: EncoderSettings.Format
    /// The width asked for with `?width=`, or nil for the widest made or for `"original"`.
    let width: Int?
    /// Whether `?width=original` asks for the image's own width, which in a set that enlarges
    /// is not the widest. Without a width, and for a hint wider than every width, the widest.
    let original: Bool
    /// The index in the output's `art` of the crop `?art=` asks for, or nil for the output's own
    /// widths.
    let art: Int?
    /// Whether the answer depends on `Accept`: the output lists several formats and the query
    /// forces none.
    let variesByAccept: Bool
    /// The client hints the width is chosen by, for `Vary`: every one the file asks for when the
    /// query names no width, whether sent or not, since a cache must keep apart the answers to
    /// requests that differ in any of them.
    let varyingHints: [String]
    /// The width of the output's list (or its art crop's) that names the file answered, as a URL
    /// writes it (`320`, `original`): the one asked for or hinted, else the widest; nil when the
    /// list is empty (a URL then names none).
    let listedWidth: String?
    /// The output's (or its art crop's) widest numbered width, which names the widest file
    /// where that is not the image's own (a set that enlarges).
    private let widestListed: Int?
    /// The hash `?hash=` names the file's bytes by, when the output's path has `{hash}`.
    let hash: String?
    /// How many hex digits name the output's files, when its path has `{hash}`.
    let hashLength: Int?

    /// Reads `/{output}/{input}` (`path` as sent, percent-encoded) and the query's `width` and
    /// `format`; `accept` is the request's `Accept` header, if any. Each part is decoded once
    /// and looked up as it is, so an encoded `..` or a NUL is a name no input has.
    ///
    /// `hints` are the request's width client hints, by name (`Sec-CH-Width`, `Width`), when the
    /// file's `serve.clientHints` asks for them: without `?width=`, the first that is a number
    /// picks the smallest of the output's widths at least that wide, else the widest file made.
    ///
    /// A URL with `?hash=` names one file: neither `Accept` nor a hint chooses another for it,
    /// so its answer does not vary (without `?format=` and `?width=`, the fallback format and
    /// the widest file, as a request without them gets).
    init(
        path: String, query: [(name: String, value: String)], accept: String?, catalog: OutputCatalog,
        hints: [(name: String, value: String?)] = []
    ) throws(ServeError) {
        let raw = path.hasPrefix("/") ? path.dropFirst() : path[...]
        guard let slash = raw.firstIndex(of: "/") else {
            throw ServeError(404, "no such path: expected /{output}/{input}")
        }
        guard let outputName = raw[..<slash].percentDecoded, let output = catalog.outputs[outputName] else {
            if let name = raw[..<slash].percentDecoded, catalog.tilePyramids.contains(name) {
                throw ServeError(404, "output \(name) is a tile pyramid, a folder of tiles, which is not served")
            }
            throw ServeError(404, "no output of that name in the pipeline file")
        }
        guard let inputName = raw[raw.index(after: slash)...].percentDecoded, let input = catalog.input(named: inputName, for: output)
        else {
            if let name = raw[raw.index(after: slash)...].percentDecoded, let refused = catalog.refusal(ofInputNamed: name) {
                throw OutputResponder.refusal(for: refused.error, output: output.name, of: refused.listing, as: name)
            }
            throw ServeError(404, "no input of that name for output \(output.name)")
        }
        guard catalog.makes(output, for: input) else {
            throw ServeError(404, "output \(output.name) is not made for that input (its \"inputs\" leave it out)")
        }
        self.output = output.name
        self.input = inputName
        hashLength = output.hashLength
        hash = try Self.hash(Self.single("hash", in: query), of: output)
        let negotiates = hash == nil
        art = try Self.art(Self.single("art", in: query), of: output)
        // An art crop has widths of its own, and no "original".
        let widths = art.map { output.art[$0].widths } ?? output.widths
        let listsOriginal = art == nil && output.listsOriginal
        let asked = try Self.width(Self.single("width", in: query), among: widths, original: listsOriginal, of: output, art: art)
        let hinted = asked == nil && !widths.isEmpty && negotiates
        // The width of the list a hint picks: the smallest at least as wide, else the widest.
        let fromHint = (hinted ? Self.hinted(hints) : nil).map { wanted -> ListedWidth in
            if let fitting = widths.filter({ $0 >= wanted }).min() { return .pixels(fitting) }
            return listsOriginal ? .original : .pixels(widths.max() ?? wanted)
        }
        let listed = asked ?? fromHint ?? (listsOriginal ? .original : widths.max().map(ListedWidth.pixels))
        width = if case .pixels(let pixels)? = asked ?? fromHint { pixels } else { nil }
        original = if case .original? = asked { true } else { false }
        varyingHints = hinted ? hints.map(\.name) : []
        listedWidth = listed.map { if case .pixels(let pixels) = $0 { String(pixels) } else { "original" } }
        widestListed = widths.max()
        let forced = try Self.single("format", in: query)
        format = try Self.format(forced, accept: negotiates ? accept : nil, of: output)
        variesByAccept = output.formats.count > 1 && forced == nil && negotiates
    }

    /// The width of the output's list that names `written`, the file answered, as a URL writes
    /// it: `listedWidth`, but where no width was asked for and the widest file is not the
    /// image's own (`"original"`), the widest numbered width, which made it.
    func listedWidth(naming written: WrittenOutput) -> String? {
        guard listedWidth == "original", !original, !written.isOriginal, let widestListed else { return listedWidth }
        return String(widestListed)
    }

    /// A width of an output's list: a number of pixels, or `"original"`.
    private enum ListedWidth {
        case pixels(Int)
        case original
    }

    /// The value of the query's parameter `name`, or nil without one. Given twice, it is
    /// refused rather than one of them picked: a cache in front might have picked the other.
    private static func single(_ name: String, in query: [(name: String, value: String)]) throws(ServeError) -> String? {
        let values = query.filter { $0.name == name }
        guard values.count <= 1 else { throw ServeError(400, "\(name) is given \(values.count) times: a URL asks for one") }
        return values.first?.value
    }

    /// The hash `?hash=` asks for: as many lowercase hex digits as the output's `{hash}` has.
    private static func hash(_ value: String?, of output: OutputCatalog.Output) throws(ServeError) -> String? {
        guard let value else { return nil }
        guard let length = output.hashLength else {
            throw ServeError(400, "output \(output.name) does not name its files by {hash}: a URL cannot ask for one")
        }
        guard value.utf8.count == length, value.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw ServeError(
                400, "hash \(Self.quoted(value)) is not \(length) lowercase hex digits, as output \(output.name)'s {hash} is")
        }
        return value
    }

    /// The width the first of `hints` that is one gives (a number of pixels, rounded up). A hint
    /// is digits, with a decimal part at most: `0x280` or `1e3` is no width a browser sends.
    private static func hinted(_ hints: [(name: String, value: String?)]) -> Int? {
        for hint in hints {
            guard let text = hint.value?.trimmingCharacters(in: .whitespaces), Self.isDecimal(text), let value = Double(text),
                value > 0, value < 1_000_000
            else { continue }
            return Int(value.rounded(.up))
        }
        return nil
    }

    /// Whether `text` is digits, then at most a point and more digits.
    private static func isDecimal(_ text: String) -> Bool {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        return parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }
    }

    /// A query value in quotes as a refusal shows it: whole up to 70 characters, so that what
    /// was sent can be told from what is listed, and cut after them, so that an answer never
    /// repeats a long URL.
    private static func quoted(_ value: String) -> String {
        "\"" + (value.count > 70 ? String(value.prefix(70)) + "…" : value) + "\""
    }

    /// The art crop `?art=` asks for, which must be one the output lists.
    private static func art(_ value: String?, of output: OutputCatalog.Output) throws(ServeError) -> Int? {
        guard let value else { return nil }
        guard let index = output.artIndex(named: value) else {
            let listed =
                output.art.isEmpty
                ? "it has no art direction crops" : "its crops are " + output.art.map(\.aspectRatio).joined(separator: ", ")
            throw ServeError(400, "art \(Self.quoted(value)) is not one of output \(output.name)'s: \(listed)")
        }
        return index
    }

    /// The width `?width=` asks for, which must be one of `widths`: the output's, or those of
    /// its art crop `art`.
    private static func width(
        _ value: String?, among widths: [Int], original: Bool, of output: OutputCatalog.Output, art: Int?
    ) throws(ServeError) -> ListedWidth? {
        guard let value else { return nil }
        if original, value == "original" { return .original }
        // Written as the catalog writes it (no sign, no leading zero): one width, one URL, so a
        // cache in front keeps one copy of each file.
        guard let width = Int(value), String(width) == value, widths.contains(width) else {
            let owner = art.map { "output \(output.name)'s \(output.art[$0].aspectRatio) crop" } ?? "output \(output.name)'s"
            let names = widths.map(String.init) + (original ? ["original"] : [])
            let listed = names.isEmpty ? "it lists no widths" : "its widths are " + names.joined(separator: ", ")
            throw ServeError(400, "width \(Self.quoted(value)) is not one of \(owner): \(listed)")
        }
        return .pixels(width)
    }

    /// The format `?format=` forces; else the one `Accept` names (by its own media type, not a
    /// wildcard) with the highest weight, the first the file lists among equals; else the last
    /// that `Accept` does not refuse with `q=0` (the one an `<img>` falls back to), as imgproxy
    /// and thumbor decide: `image/webp,*/*` gets WebP, `*/*` alone the fallback.
    private static func format(_ value: String?, accept: String?, of output: OutputCatalog.Output) throws(ServeError)
        -> EncoderSettings.Format
    {
        if let value {
            // Lower case only, as the catalog writes it: one spelling, one URL, so a cache in
            // front keeps one copy of each file.
            guard let format = output.formats.first(where: { $0.rawValue == value || $0.fileExtension == value }) else {
                let listed = output.formats.map(\.rawValue).joined(separator: ", ")
                throw ServeError(400, "format \(Self.quoted(value)) is not one of output \(output.name)'s: \(listed)")
            }
            return format
        }
        let fallback = output.formats[output.formats.count - 1]
        guard output.formats.count > 1, let accept else { return fallback }
        let ranges = AcceptHeader(accept)
        var best: (format: EncoderSettings.Format, weight: Double)?
        for format in output.formats {
            if let weight = ranges.weight(naming: format.mimeType), weight > 0, weight > best?.weight ?? 0 { best = (format, weight) }
        }
        return best?.format ?? output.formats.last { !ranges.refuses($0.mimeType) } ?? fallback
    }
}

/// An `Accept` header's media ranges and their weights (RFC 9110, section 12.5.1).
struct AcceptHeader: Sendable {
    private let ranges: [(type: String, subtype: String, weight: Double)]

    init(_ header: String) {
        ranges = header.split(separator: ",").prefix(64).compactMap { entry in
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let range = parts.first else { return nil }
            let type = range.split(separator: "/", omittingEmptySubsequences: false)
            guard type.count == 2 else { return nil }
            var weight = 1.0
            for parameter in parts.dropFirst() where parameter.prefix(while: { $0 != "=" }).trimmingCharacters(in: .whitespaces) == "q" {
                // A weight the grammar does not allow (`q=abc`, `q=1.5`, `q =0`, a bare `q`)
                // makes the range one that says nothing, rather than one taken at full weight.
                guard parameter.hasPrefix("q="), let valid = Self.weight(parameter.dropFirst(2)) else { return nil }
                weight = valid
            }
            return (String(type[0]), String(type[1]), weight)
        }
    }

    /// A `qvalue` as RFC 9110 writes it, 0 to 1 with at most three decimals; nil for any other text.
    static func weight(_ text: Substring) -> Double? {
        let digits = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = digits.first, whole == "0" || whole == "1",
            digits.count == 1 || (digits[1].count <= 3 && digits[1].allSatisfy { $0.isASCII && $0.isNumber }),
            let value = Double(text), value <= 1
        else { return nil }
        return value
    }

    /// The weight of the range that names `mediaType` itself (`image/webp`, not `image/*`), or
    /// nil when none does.
    func weight(naming mediaType: String) -> Double? {
        let parts = mediaType.lowercased().split(separator: "/").map(String.init)
        guard parts.count == 2 else { return nil }
        return ranges.last { $0.type == parts[0] && $0.subtype == parts[1] }?.weight
    }

    /// Whether `mediaType` is refused: the most specific range matching it has weight 0.
    func refuses(_ mediaType: String) -> Bool {
        let parts = mediaType.lowercased().split(separator: "/").map(String.init)
        guard parts.count == 2 else { return false }
        let matching = ranges.compactMap { range -> (specificity: Int, weight: Double)? in
            if range.type == parts[0], range.subtype == parts[1] { return (2, range.weight) }
            if range.type == parts[0], range.subtype == "*" { return (1, range.weight) }
            if range.type == "*", range.subtype == "*" { return (0, range.weight) }
            return nil
        }
        guard let best = matching.max(by: { $0.specificity < $1.specificity }) else { return false }
        return best.weight == 0
    }
}
#endif
