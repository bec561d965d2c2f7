/// An output path with `{placeholders}` filled in per input, for example `out/{dir}/{stem}-small.webp`.
///
/// The folder the author wrote before the first placeholder is the output's root: whatever an
/// input fills in (its name, its subfolder) can never move the path outside that root.
public struct PathTemplate: Sendable, Hashable, CustomStringConvertible {
    /// The values a template can use.
    public enum Placeholder: String, CaseIterable, Sendable {
        /// The input's file name without its extension.
        case stem
        /// The input's extension, without the dot.
        case ext
        /// The input's file name with its extension.
        case name
        /// The input's subfolder below the folder its glob started from ("" for none).
        case dir
        /// The output's name from the pipeline file.
        case output
        /// The encoder's usual extension (`EncoderSettings.Format.fileExtension`): `jpg`, `webp`, ….
        case format
        /// The encoded image's width and height, known only after processing.
        case width, height
        /// An art direction entry's aspect ratio (`-1x1`), empty for the output's own files.
        case art
        /// The start of the SHA-256 of the written file's bytes, in lowercase hex: 10 characters,
        /// or N for `{hash:N}`. Known only after encoding; it must be in the file name.
        case hash

        var help: String {
            switch self {
            case .stem: "input file name without extension"
            case .ext: "input extension without the dot"
            case .name: "input file name"
            case .dir: "input subfolder below its glob's folder"
            case .output: "output name"
            case .format:
                "encoder extension (\(EncoderSettings.Format.allCases.map(\.fileExtension).joined(separator: ", ")))"
            case .width: "output width in pixels"
            case .height: "output height in pixels"
            case .art: "an art direction entry's aspect ratio, as -1x1 (empty for the output's own widths)"
            case .hash:
                "first \(PathTemplate.defaultHashLength) hex digits of the SHA-256 of the written file "
                    + "(`{hash:N}` for N digits, \(PathTemplate.hashLengths.lowerBound)-\(PathTemplate.hashLengths.upperBound)); "
                    + "in the file name only"
            }
        }
    }

    /// Why a template or a filled-in value is not acceptable.
    public struct Failure: Error, Sendable, Equatable {
        /// What is wrong with the template, or with a path made from it.
        public let message: String
    }

    enum Piece: Hashable, Sendable {
        case literal(String)
        case placeholder(Placeholder)
        /// `{hash}` or `{hash:N}`, with its number of hex digits.
        case hash(length: Int)
    }

    /// The template as written.
    public let text: String
    let pieces: [Piece]

    /// Parses `text`, refusing unknown placeholders and unbalanced braces.
    public init(_ text: String) throws(Failure) {
        self.text = text
        var pieces: [Piece] = []
        var literal = ""
        var rest = Substring(text)
        while let character = rest.first {
            rest = rest.dropFirst()
            switch character {
            case "{":
                guard let close = rest.firstIndex(of: "}") else {
                    throw Failure(message: "\"{\" without a closing \"}\" in path template")
                }
                let name = String(rest[..<close])
                rest = rest[rest.index(after: close)...]
                if let length = try Self.hashLength(name) {
                    if !literal.isEmpty { pieces.append(.literal(literal)); literal = "" }
                    pieces.append(.hash(length: length))
                    continue
                }
                guard let placeholder = Placeholder(rawValue: name) else {
                    let known = Placeholder.allCases.map(\.rawValue)
                    let hint = NearestName.suggestion(for: name, among: known).map { "; did you mean {\($0)}?" } ?? ""
                    throw Failure(
                        message: "unknown placeholder {\(name)}\(hint) (known: \(known.map { "{\($0)}" }.joined(separator: ", ")))")
                }
                if !literal.isEmpty { pieces.append(.literal(literal)); literal = "" }
                pieces.append(.placeholder(placeholder))
            case "}":
                throw Failure(message: "\"}\" without an opening \"{\" in path template")
            case "\0":
                throw Failure(message: "path template contains a NUL character")
            default:
                literal.append(character)
            }
        }
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        guard !pieces.isEmpty else { throw Failure(message: "path template is empty") }
        guard !text.hasSuffix("/") else { throw Failure(message: "path template names a folder, not a file") }
        try Self.checkHashInFileName(pieces)
        self.pieces = pieces
    }

    /// The template as written.
    public var description: String { text }

    /// The placeholders the template uses.
    public var placeholders: Set<Placeholder> {
        Set(
            pieces.compactMap {
                switch $0 {
                case .placeholder(let p): p
                case .hash: .hash
                case .literal: nil
                }
            })
    }

    /// The file name's extension when the template writes it after its last placeholder
    /// (`{stem}-{format}.png`), lowercased; nil when it has none there.
    var literalExtension: String? {
        guard case .literal(let text)? = pieces.last, let dot = text.lastIndex(of: "."), !text[dot...].contains("/") else {
            return nil
        }
        return text[text.index(after: dot)...].lowercased()
    }

    /// Whether the file name's extension, if any, is what a placeholder is filled with: the
    /// template ends in one other than `{format}` (`{stem}`, `{output}`), or in text with no dot.
    var extensionComesFromValues: Bool {
        switch pieces.last {
        case .literal(let text)?: !text.contains(".") && !text.contains("/") && pieces.count > 1
        case .placeholder(let placeholder)?: placeholder != .format
        case .hash?: true
        case nil: false
        }
    }

    /// The folder the author wrote: everything up to the last `/` before the first placeholder.
    /// Empty when the template starts with a placeholder in the pipeline file's own folder.
    public var authoredFolder: String {
        var prefix = ""
        for piece in pieces {
            guard case .literal(let text) = piece else { break }
            prefix += text
        }
        guard let slash = prefix.lastIndex(of: "/") else { return "" }
        return String(prefix[..<slash]).isEmpty ? "/" : String(prefix[..<slash])
    }

    /// Fills the placeholders in. Values filled in from an input may not contain `..`, NUL or
    /// (except `{dir}`) `/`, so they can never climb out of `authoredFolder`.
    public func resolve(_ values: [Placeholder: String]) throws(Failure) -> String {
        var result = ""
        for piece in pieces {
            switch piece {
            case .literal(let text):
                result += text
            case .placeholder(let placeholder):
                guard let value = values[placeholder] else {
                    throw Failure(message: "no value for {\(placeholder.rawValue)}")
                }
                try Self.checkFilledValue(value, for: placeholder)
                result += value
            case .hash(let length):
                guard let value = values[.hash] else { throw Failure(message: "no value for {hash}") }
                result += try Self.filledHash(value, length: length)
            }
        }
        return result
    }

    private static func checkFilledValue(_ value: String, for placeholder: Placeholder) throws(Failure) {
        // Checked byte by byte, as the kernel reads paths: compared as Characters, "/" followed
        // by a combining accent is one grapheme that is not "/", yet the file system splits it.
        let bytes = Array(value.utf8)
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
        if bytes.contains(0) {
            throw Failure(message: "{\(placeholder.rawValue)} would contain a NUL character")
        }
        if placeholder != .dir, bytes.contains(slash) {
            throw Failure(message: "{\(placeholder.rawValue)} \(value.quotedValue) would contain a \"/\"")
        }
        if placeholder == .dir, bytes.first == slash {
            throw Failure(message: "{dir} \(value.quotedValue) would be an absolute path")
        }
        let components = bytes.split(separator: slash, omittingEmptySubsequences: false)
        if components.contains(where: { $0.elementsEqual([dot, dot]) }) || (placeholder != .dir && bytes == [dot]) {
            throw Failure(message: "{\(placeholder.rawValue)} \(value.quotedValue) would leave the output folder")
        }
    }
}
