#if Server
import Foundation
import PipelineKit

/// A request for one file of one output of one input, checked against the catalog: which
/// output, which input, which format and which width.
struct OutputRequest: Sendable, Equatable {
    let output: String
    let input: String
    let format: EncoderSettings.Format
    /// The width asked for with `?width=`, or nil for the widest made.
    let width: Int?
    /// Whether the answer depends on `Accept` (the output lists several formats).
    let variesByAccept: Bool

    /// Why a request gets no file: the status and the reason its JSON body gives.
    struct Refusal: Error, Equatable {
        let status: Int
        let reason: String
    }

    /// Reads `/{output}/{input}` (`path` as sent, percent-encoded) and the query's `width` and
    /// `format`; `accept` is the request's `Accept` header, if any. Each part is decoded once
    /// and looked up as it is, so an encoded `..` or a NUL is a name no input has.
    init(path: String, query: [(name: String, value: String)], accept: String?, catalog: OutputCatalog) throws(Refusal) {
        let raw = path.hasPrefix("/") ? path.dropFirst() : path[...]
        guard let slash = raw.firstIndex(of: "/") else {
            throw Refusal(status: 404, reason: "no such path: expected /{output}/{input}")
        }
        guard let outputName = String(raw[..<slash]).removingPercentEncoding, let output = catalog.outputs[outputName] else {
            throw Refusal(status: 404, reason: "no output of that name in the pipeline file")
        }
        guard let inputName = String(raw[raw.index(after: slash)...]).removingPercentEncoding, catalog.inputs[inputName] != nil else {
            throw Refusal(status: 404, reason: "no input of that name for output \(output.name)")
        }
        self.output = output.name
        self.input = inputName
        variesByAccept = output.formats.count > 1
        width = try Self.width(query.first { $0.name == "width" }?.value, of: output)
        format = try Self.format(query.first { $0.name == "format" }?.value, accept: accept, of: output)
    }

    /// The width `?width=` asks for, which must be one the output lists.
    private static func width(_ value: String?, of output: OutputCatalog.Output) throws(Refusal) -> Int? {
        guard let value else { return nil }
        guard let width = Int(value), output.widths.contains(width) else {
            let listed =
                output.widths.isEmpty ? "it lists no widths" : "its widths are " + output.widths.map(String.init).joined(separator: ", ")
            throw Refusal(status: 400, reason: "width \(value.prefix(20)) is not one of output \(output.name)'s: \(listed)")
        }
        return width
    }

    /// The format `?format=` forces, else the first of the output's formats, in its order, that
    /// `Accept` takes; when it takes none, the last (the one an `<img>` falls back to).
    private static func format(_ value: String?, accept: String?, of output: OutputCatalog.Output) throws(Refusal)
        -> EncoderSettings.Format
    {
        if let value {
            let wanted = value.lowercased()
            guard let format = output.formats.first(where: { $0.rawValue == wanted || $0.fileExtension == wanted }) else {
                let listed = output.formats.map(\.rawValue).joined(separator: ", ")
                throw Refusal(status: 400, reason: "format \(value.prefix(20)) is not one of output \(output.name)'s: \(listed)")
            }
            return format
        }
        guard output.formats.count > 1, let accept else { return output.formats[0] }
        let ranges = AcceptHeader(accept)
        return output.formats.first { ranges.accepts($0.mimeType) } ?? output.formats[output.formats.count - 1]
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
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                weight = Double(parameter.dropFirst(2)).map { min(max($0, 0), 1) } ?? 1
            }
            return (String(type[0]), String(type[1]), weight)
        }
    }

    /// Whether `mediaType` is acceptable: the most specific range matching it has a weight above 0.
    func accepts(_ mediaType: String) -> Bool {
        let parts = mediaType.split(separator: "/").map(String.init)
        guard parts.count == 2 else { return false }
        let matching = ranges.compactMap { range -> (specificity: Int, weight: Double)? in
            if range.type == parts[0], range.subtype == parts[1] { return (2, range.weight) }
            if range.type == parts[0], range.subtype == "*" { return (1, range.weight) }
            if range.type == "*", range.subtype == "*" { return (0, range.weight) }
            return nil
        }
        guard let best = matching.max(by: { $0.specificity < $1.specificity }) else { return false }
        return best.weight > 0
    }
}
#endif
