import Foundation

/// The focal points of a pipeline's `focusPoints` file: `{"in/photo.jpg": [0.8, 0.4]}`, each
/// input's point as fractions of its width and height as decoded (upright, unless
/// `decompress.autorotate` is false), for `"position": "focus"`.
///
/// A key is an input's path relative to the pipeline file's folder (or absolute), or its URL
/// as the inputs give it. An input the file has no point for is cropped about its centre.
public struct FocusPoints: Sendable, Equatable {
    /// The file the points were read from.
    public let file: URL
    /// The points by input: a local input's absolute, normalised path, or a URL as written.
    private let points: [String: FocusPoint]
    /// Each key as the file writes it, by the key as kept, for messages.
    private let writtenKeys: [String: String]

    /// The points in `file`, whose relative keys name inputs relative to `baseDirectory`.
    public init(contentsOf file: URL, baseDirectory: URL) throws(FocusPointsError) {
        let data: Data
        do throws(RegularFile.Failure) {
            data = try RegularFile.contents(of: file.path)
        } catch {
            throw FocusPointsError(file: file.path, key: nil, reason: "cannot be read (\(error.reason))")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw FocusPointsError(file: file.path, key: nil, reason: "cannot be read (it is not UTF-8 text)")
        }
        let root: JSONNode
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw FocusPointsError(
                file: file.path, key: nil,
                reason: "is not JSON: \(error.message) (line \(error.location.line), column \(error.location.column))")
        }
        guard case .object(let members) = root.value else {
            throw FocusPointsError(file: file.path, key: nil, reason: "must be an object of input → [x, y], not \(root.typeName)")
        }
        var points: [String: FocusPoint] = [:]
        var writtenKeys: [String: String] = [:]
        // Every key at fault is named at once, as a pipeline file's problems are.
        var faults: [FocusPointsError] = []
        for member in members {
            let fault = { (reason: String) in
                FocusPointsError(file: file.path, key: member.key, line: member.value.location.line, reason: reason)
            }
            guard case .array(let items) = member.value.value, items.count == 2,
                case .number(let x, _) = items[0].value, case .number(let y, _) = items[1].value
            else {
                faults.append(fault("expected [x, y], two numbers from 0 to 1, not \(member.value.jsonText)"))
                continue
            }
            guard let point = FocusPoint(x: x, y: y) else {
                faults.append(fault("x and y are fractions of the image's width and height, from 0 to 1, not \(member.value.jsonText)"))
                continue
            }
            let key = Self.key(member.key, baseDirectory: baseDirectory)
            guard points.updateValue(point, forKey: key) == nil else {
                faults.append(fault("names an input another key names too"))
                continue
            }
            writtenKeys[key] = member.key
        }
        if var first = faults.first {
            first.more = Array(faults.dropFirst())
            throw first
        }
        self.file = file
        self.points = points
        self.writtenKeys = writtenKeys
    }

    /// The point for `input`, nil when the file has none for it.
    public func point(for input: InputFile) -> FocusPoint? {
        points[input.path]
    }

    /// How many inputs have a point.
    public var count: Int { points.count }

    /// The keys as kept (an input's path or URL, as `point(for:)` looks them up).
    var keys: Set<String> { Set(points.keys) }

    /// A warning naming the keys of `unmatched` (as kept) as the file writes them, nil when it
    /// is empty: a key with a typo, or for an input since renamed, leaves its input cropped
    /// about its centre, which looks like the point was ignored.
    func unmatchedWarning(_ unmatched: Set<String>) -> String? {
        guard !unmatched.isEmpty else { return nil }
        let named = unmatched.compactMap { writtenKeys[$0] }.sorted()
        let shown = named.prefix(5).map(\.quotedValue).joined(separator: ", ")
        let more = named.count > 5 ? " and \(named.count - 5) more" : ""
        return "focusPoints \(file.path): \(named.count == 1 ? "a key names" : "\(named.count) keys name") no input, "
            + "so \(named.count == 1 ? "its point is" : "their points are") not used: \(shown)\(more)"
    }

    /// A key as the points are kept: a URL as it is, a path made absolute and normalised, as
    /// the planner makes an input's path.
    private static func key(_ key: String, baseDirectory: URL) -> String {
        if key.contains("://") { return key }
        let path = key.hasPrefix("/") ? key : baseDirectory.path + "/" + key
        return InputEnumerator.normalize(path)
    }

}

/// A `focusPoints` file that cannot be used: it names the file, and the key at fault.
public struct FocusPointsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file's path.
    public let file: String
    /// The key (input) whose value is wrong, nil when the file as a whole is.
    public let key: String?
    /// The line of the value at fault, when there is one.
    public let line: Int?
    /// What is wrong.
    public let reason: String
    /// The other keys at fault in the same file, after this one.
    public var more: [FocusPointsError] = []

    /// A problem with `file`, at `key` (on `line`) when given.
    public init(file: String, key: String?, line: Int? = nil, reason: String) {
        self.file = file
        self.key = key
        self.line = line
        self.reason = reason
    }

    /// `the focus file FILE: key "K" (line L): reason`.
    public var description: String {
        let place = key.map { " key \($0.quotedValue)" + (line.map { " (line \($0))" } ?? "") + ":" } ?? ""
        return "the focus file \(file)\(place) \(reason)"
    }
}
