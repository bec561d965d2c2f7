import Foundation

/// Where one output of one input goes.
public struct OutputTarget: Sendable {
    /// What the targets of one output share, made once for all the inputs: a plan holds a
    /// target for every output of every input, so each keeps only its own path.
    final class Output: Sendable {
        let name: String
        /// The folder the author wrote in the template, absolute.
        let root: String
        let template: PathTemplate
        let baseDirectory: URL
        let formatExtension: String
        /// Whether the input's name gives the path's extension (`{name}`, `{ext}`): an input
        /// without one would leave the path ending in a bare dot.
        let extensionFromInput: Bool
        /// The format of its files, when the input's name gives their extension, to be checked
        /// against it for each input; nil otherwise, and for a tile pyramid's folder.
        let formatToMatchInputExtension: EncoderSettings.Format?
        /// What `{art}` gives: the art direction entry's tag, empty for the output's own files.
        let artTag: String
        /// The width and height the output's steps (or its width of `widths`) fix, if any.
        let fixedWidth: Int?
        let fixedHeight: Int?
        /// Which of the output's files it is, for a failure line (`variantDescription`).
        let fileDescription: String?
        /// Whether the template has a `{width}`, `{height}` or `{hash}`.
        let namesSizes: Bool
        /// The inputs the output is made for, when the file chooses them.
        let inputSubset: InputSubset?
        let caseInsensitive: Bool

        init(
            _ output: OutputDefinition, baseDirectory: URL, caseInsensitive: Bool = false,
            fixedSize: (width: Int?, height: Int?) = (nil, nil)
        ) {
            inputSubset = output.inputSubset
            self.caseInsensitive = caseInsensitive
            name = output.name
            root = OutputTarget.root(of: output, baseDirectory: baseDirectory)
            template = output.path
            self.baseDirectory = baseDirectory
            formatExtension = output.encoder.format.fileExtension
            extensionFromInput =
                !output.path.placeholders.isDisjoint(with: [.name, .ext]) || output.path.extensionComesFromValues
            formatToMatchInputExtension = output.tiles == nil && extensionFromInput ? output.encoder.format : nil
            artTag = output.variant?.art.map { output.art[$0].fileTag } ?? ""
            fixedWidth = fixedSize.width
            fixedHeight = fixedSize.height
            fileDescription = output.variantDescription
            namesSizes = !output.path.placeholders.isDisjoint(with: [.width, .height, .hash])
        }
    }

    /// What a path whose template has `{width}` or `{height}` keeps to be filled once the image
    /// is made; the other paths are final when planned and keep nothing more.
    private final class Sizes: Sendable {
        /// The values the template was filled with.
        let values: [PathTemplate.Placeholder: String]
        /// The planned path with its unknown sizes as unknown numbers, when some are unknown.
        let unknownPattern: PathPattern?

        init(values: [PathTemplate.Placeholder: String], unknownPattern: PathPattern?) {
            self.values = values
            self.unknownPattern = unknownPattern
        }
    }

    private let output: Output
    /// The absolute path; `{width}` and `{height}` are left as written when the template has
    /// them and the output's steps do not fix them.
    public let plannedPath: String
    private let sizes: Sizes?

    /// The output's name.
    public var outputName: String { output.name }
    /// Which of the output's files the target is (a width and format of a responsive set), or nil.
    var fileDescription: String? { output.fileDescription }
    /// The output as a failure line names it: its name, and which of its files this is when it
    /// makes several (`hero (320 px, webp)`).
    public var outputDescription: String { output.name + (output.fileDescription.map { " (\($0))" } ?? "") }
    /// The folder the author wrote in the template, absolute: the path may not leave it.
    public var root: String { output.root }
    /// Whether the planned path still holds a `{width}` or `{height}` that only the made image fills.
    var hasUnknownSizes: Bool { sizes?.unknownPattern != nil }

    /// The values an input gives every output's template (`{stem}`, `{ext}`, `{name}`, `{dir}`):
    /// made once per input, not once per output.
    static func values(of input: InputFile) -> [PathTemplate.Placeholder: String] {
        [.stem: input.stem, .ext: input.fileExtension, .name: input.fileName, .dir: input.subfolder]
    }

    /// Whether the output is made for `input`: every input, unless its `"inputs"` choose some.
    static func applies(_ output: Output, to input: InputFile) -> Bool {
        output.inputSubset?.contains(input, baseDirectory: output.baseDirectory, caseInsensitive: output.caseInsensitive) ?? true
    }

    /// The place of an output that is not made for an input (its `"inputs"` leave the input
    /// out): it has no path, and the plan keeps it so that a listing's targets stay in the
    /// order of the outputs.
    static func notMade(_ output: Output) -> OutputTarget {
        OutputTarget(output: output, plannedPath: "", sizes: nil)
    }

    /// Whether the output is made for the target's input (see `notMade(_:)`).
    public var isMade: Bool { !plannedPath.isEmpty }

    /// The target of `output` for the input whose values (`values(of:)`) are `inputValues`.
    init(_ output: Output, inputValues: [PathTemplate.Placeholder: String]) throws(PathTemplate.Failure) {
        self.output = output
        let template = output.template
        let placeholders = template.placeholders
        var values = inputValues
        values[.output] = output.name
        values[.format] = output.formatExtension
        values[.art] = output.artTag
        values[.width] = output.fixedWidth.map(String.init) ?? "{width}"
        values[.height] = output.fixedHeight.map(String.init) ?? "{height}"
        values[.hash] = PathTemplate.unknownHash
        plannedPath = try Self.place(template.resolve(values), root: output.root, base: output.baseDirectory)
        try Self.checkLengths(of: plannedPath, root: output.root)
        if output.extensionFromInput {
            try Self.checkExtension(of: plannedPath, format: output.formatToMatchInputExtension)
        }
        guard !placeholders.isDisjoint(with: [.width, .height, .hash]) else {
            sizes = nil
            return
        }
        var unknown = values
        if output.fixedWidth == nil, placeholders.contains(.width) { unknown[.width] = String(PathPattern.number) }
        if output.fixedHeight == nil, placeholders.contains(.height) { unknown[.height] = String(PathPattern.number) }
        if placeholders.contains(.hash) { unknown[.hash] = String(PathPattern.hexDigit) }
        sizes = Sizes(
            values: values,
            unknownPattern: unknown == values
                ? nil : PathPattern(try Self.place(template.resolve(unknown), root: output.root, base: output.baseDirectory)))
    }

    /// The target of `output` for `input` whose path was planned as `plannedPath`: made again
    /// only when the template waits for sizes, whose values it keeps.
    init(_ output: Output, plannedPath: String, input: InputFile) throws(PathTemplate.Failure) {
        if plannedPath.isEmpty {
            self = Self.notMade(output)
        } else if output.namesSizes {
            try self.init(output, inputValues: Self.values(of: input))
        } else {
            self.init(output: output, plannedPath: plannedPath, sizes: nil)
        }
    }

    private init(output: Output, plannedPath: String, sizes: Sizes?) {
        self.output = output
        self.plannedPath = plannedPath
        self.sizes = sizes
    }

    /// The folder `output`'s template names, absolute: its paths may not leave it.
    static func root(of output: OutputDefinition, baseDirectory: URL) -> String {
        absolute(output.path.authoredFolder, base: baseDirectory)
    }

    /// The planned path with its unknown sizes as unknown numbers, to find clashes.
    var pattern: PathPattern { sizes?.unknownPattern ?? PathPattern(plannedPath) }

    /// Whether the output is an object in a store (`s3://bucket/key`), not a file.
    public var isInStore: Bool { ObjectStores.isObject(root) }

    /// Whether the path names the file by the hash of its bytes (`{hash}`).
    var namesHash: Bool { output.template.namesHash }

    /// The final path once the encoded image's size is known, and, for a template with
    /// `{hash}`, the SHA-256 of the file's bytes in lowercase hex (nil keeps `{hash}` unfilled).
    func path(width: Int, height: Int, hash: String? = nil) throws(PathTemplate.Failure) -> String {
        guard var filled = sizes?.values else { return plannedPath }
        filled[.width] = String(width)
        filled[.height] = String(height)
        if let hash { filled[.hash] = hash }
        return try Self.place(output.template.resolve(filled), root: root, base: output.baseDirectory)
    }

    /// Whether an image of `width`×`height` fills the path as it was planned: a `{width}` or
    /// `{height}` the steps' declared sizes fixed (`outputSize(for:)`) is the size made. When it
    /// is not, the path was not compared with the other outputs' paths.
    func fillsPlannedSizes(width: Int, height: Int) -> Bool {
        guard sizes != nil else { return true }
        let placeholders = output.template.placeholders
        if placeholders.contains(.width), let fixed = output.fixedWidth, fixed != width { return false }
        if placeholders.contains(.height), let fixed = output.fixedHeight, fixed != height { return false }
        return true
    }

    /// The size the steps declare, as the plan filled the path with it (`?` for a side left to
    /// the image).
    var plannedSizeDescription: String {
        "\(output.fixedWidth.map(String.init) ?? "?")×\(output.fixedHeight.map(String.init) ?? "?")"
    }

    /// The longest name a folder or file may have, and the longest path, in bytes (Linux's
    /// NAME_MAX and PATH_MAX; most file systems take no more).
    static let maxNameBytes = 255
    static let maxPathBytes = 4095

    /// Refuses a path the file system would refuse at the rename, after the decode and encode:
    /// a name below the output folder longer than 255 bytes, or a path longer than 4095. An
    /// unknown `{width}` or `{height}` counts as one digit.
    private static func checkLengths(of path: String, root: String) throws(PathTemplate.Failure) {
        // Most paths hold no unknown size: searching each for one would cost every output of every input.
        let shortest =
            path.utf8.contains(UInt8(ascii: "{"))
            ? path.replacingOccurrences(of: "{width}", with: "0").replacingOccurrences(of: "{height}", with: "0") : path
        if let object = ObjectLocation(shortest), let store = ObjectStores.kind(of: shortest) {
            // The store's own limit on a key; names within it are not limited.
            guard object.key.utf8.count <= store.maxKeyBytes else {
                throw PathTemplate.Failure(
                    message: "the key of \(path) would be \(object.key.utf8.count) bytes long: "
                        + "more than the \(store.maxKeyBytes) \(store.displayName) allows")
            }
            return
        }
        if shortest.utf8.count > maxPathBytes {
            throw PathTemplate.Failure(
                message: "the path \(path) would be \(shortest.utf8.count) bytes long: "
                    + "more than the \(maxPathBytes) a path may have")
        }
        // The file is written first under a longer temporary name beside it, which must fit too.
        let nameBytes = (shortest as NSString).lastPathComponent.utf8.count
        let temporaryBytes = shortest.utf8.count - nameBytes + min(maxNameBytes, nameBytes + ImageWriter.temporaryNameOverhead)
        if temporaryBytes > maxPathBytes {
            throw PathTemplate.Failure(
                message: "the path \(path) would be \(shortest.utf8.count) bytes long, and the temporary file it is first "
                    + "written as \(temporaryBytes): more than the \(maxPathBytes) a path may have")
        }
        for name in shortest.dropFirst(root.count).split(separator: "/") where name.utf8.count > maxNameBytes {
            throw PathTemplate.Failure(
                message: "the name \"\(name)\" in \(path) would be \(name.utf8.count) bytes long: "
                    + "more than the \(maxNameBytes) a file or folder name may have")
        }
    }

    /// Refuses a path whose extension, taken from the input's name, is empty, or names another
    /// image format than `format`: `{name}` of `dune.jpg` for a WebP would write a WebP named
    /// `dune.jpg`.
    private static func checkExtension(of path: String, format: EncoderSettings.Format?) throws(PathTemplate.Failure) {
        let name = path.split(separator: "/").last ?? ""
        guard let dot = name.lastIndex(of: ".") else { return }
        let pathExtension = name[name.index(after: dot)...]
        if pathExtension.isEmpty {
            let advice =
                format.map { "end the path's template in .\($0.fileExtension) or .{format}" }
                ?? "end the path's template in a name of its own"
            throw PathTemplate.Failure(
                message: "the path \(path) ends in a dot: the input has no extension to give it (\(advice))")
        }
        guard let format, let named = EncoderSettings.Format(fileExtension: pathExtension), named != format else { return }
        throw PathTemplate.Failure(
            message: "the path \(path) ends in .\(pathExtension) but the output is encoded as \(format.rawValue) "
                + "(end the path's template in .\(format.fileExtension) or .{format})")
    }

    /// `resolved`, absolute, below `root` (an object's address in a store); refused when it
    /// would leave it.
    static func place(_ resolved: String, root: String, base: URL) throws(PathTemplate.Failure) -> String {
        if ObjectStores.isObject(root) { return try placeObject(resolved, root: root) }
        let path = absolute(resolved, base: base)
        let prefix = root == "/" ? "/" : root + "/"
        guard path.hasPrefix(prefix), path.count > prefix.count else {
            throw PathTemplate.Failure(message: "the path \(path) would leave the output folder \(root)")
        }
        return path
    }

    /// An S3 key is not a path: nothing resolves `..` in it, so a key with a `.` or `..` part is
    /// refused (whoever later copies the objects to a disk would resolve them), as is one outside
    /// the template's bucket and literal folders. Empty parts (an empty `{dir}`) fold, as `//`
    /// does in a file path.
    private static func placeObject(_ resolved: String, root: String) throws(PathTemplate.Failure) -> String {
        guard let written = ObjectLocation(resolved), let rootObject = ObjectLocation(root), written.scheme == rootObject.scheme,
            written.container == rootObject.container, !rootObject.container.contains("{")
        else {
            let store = ObjectStores.displayName(of: root) ?? "object store"
            throw PathTemplate.Failure(
                message: "\(resolved) would leave the output prefix \(root): an \(store) output's bucket must be written in full")
        }
        let object = ObjectLocation(
            scheme: written.scheme, container: written.container, key: written.key.split(separator: "/").joined(separator: "/"))
        let parts = object.key.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        // The template's own folders fold as the key's do (`s3://site/fold//{stem}.webp`).
        let rootKey = rootObject.key.split(separator: "/").joined(separator: "/")
        let prefix = rootKey.isEmpty ? "" : rootKey + "/"
        guard !parts.contains(where: { $0.isEmpty || $0.elementsEqual([0x2E]) || $0.elementsEqual([0x2E, 0x2E]) }),
            !object.key.utf8.contains(0), object.key.hasPrefix(prefix), object.key.count > prefix.count
        else {
            throw PathTemplate.Failure(
                message: "the key of \(resolved) has a \".\" or \"..\" part or lies outside \(root): "
                    + "it would leave the output prefix \(root)")
        }
        return object.description
    }

    private static func absolute(_ path: String, base: URL) -> String {
        if ObjectStores.isObject(path) { return path }
        if path.hasPrefix("/") { return InputEnumerator.normalize(path) }
        return InputEnumerator.normalize(base.path + "/" + path)
    }
}
