import Foundation

/// The shape of every path one output can write, whatever the input: its template in its
/// folder, with the input's values (`{stem}`, `{name}`, `{ext}`, `{dir}`) as any text and the
/// sizes as any number.
///
/// Planning keeps the shapes of outputs whose template names a size (`sized(_:narrowedBelow:)`):
/// a file made at another size than planned (a set's width narrowed to a narrower input, a size
/// only the image fixes) may land on any path of its shape, another input's planned file among
/// them, which planning could not compare: it knew neither size. The plan keeps the planned
/// paths of other outputs that have the shape (`SizedPathReach`), few in practice. A watcher
/// tells a run's own writes from changes by every output's shape (`WatchScope`).
struct OutputPathShape: Sendable {
    private enum Token: Hashable, Sendable {
        case literal([UInt8])
        /// A value without a `/`, possibly empty.
        case text
        /// `{dir}` and the `/` after it: nothing, or folders each ending in `/`.
        case folders
        /// A size: digits without a leading zero, below `largest` when it is known.
        case number
        /// One lowercase hex digit.
        case hex
    }

    private let tokens: [Token]
    /// The size a file narrowed from a set's width is below (its image is narrower), when the
    /// template names only `{width}`; nil for any size.
    private(set) var largest: Int?

    /// Markers the input's values are filled with: Unicode private use, which no file name
    /// holds by accident, beside `PathPattern`'s.
    private static let textMarker: Unicode.Scalar = "\u{E010}"
    private static let folderMarker: Unicode.Scalar = "\u{E011}"

    /// The shape of `output`'s paths, or nil when its template names no size. `narrowedBelow`
    /// is the width a file can only be narrower than when it differs (a set's, when its resize
    /// is the last step); nil when a step may make it any size.
    static func sized(_ output: OutputTarget.Output, narrowedBelow: Int? = nil) -> OutputPathShape? {
        let placeholders = output.template.placeholders
        guard !placeholders.isDisjoint(with: [.width, .height]) else { return nil }
        return OutputPathShape(output, largest: placeholders.contains(.height) ? nil : narrowedBelow)
    }

    /// The shape of every path `output` can write, its sizes below `largest` when given, or nil
    /// when its template cannot be placed. With `folderOf`, the shape of the folder a tile
    /// pyramid of that layout writes whole: its path's, or a DeepZoom pyramid's `NAME_files`
    /// beside its `.dzi`.
    init?(_ output: OutputTarget.Output, largest: Int? = nil, folderOf layout: TileSettings.Layout? = nil) {
        let values: [PathTemplate.Placeholder: String] = [
            .stem: String(Self.textMarker), .ext: String(Self.textMarker), .name: String(Self.textMarker),
            .dir: String(Self.folderMarker), .output: output.name, .format: output.formatExtension, .art: output.artTag,
            .width: String(PathPattern.number), .height: String(PathPattern.number), .hash: String(PathPattern.hexDigit),
        ]
        guard var placed = try? OutputTarget.place(output.template.resolve(values), root: output.root, base: output.baseDirectory)
        else { return nil }
        if layout == .dz { placed = (placed as NSString).deletingPathExtension + "_files" }
        var tokens: [Token] = []
        var literal: [UInt8] = []
        var scalars = placed.unicodeScalars.makeIterator()
        var pending = scalars.next()
        while let scalar = pending {
            pending = scalars.next()
            let token: Token?
            switch scalar {
            case Self.textMarker: token = .text
            case Self.folderMarker:
                // The `/` after `{dir}` goes with it: an empty `{dir}` leaves none.
                if pending == "/" { pending = scalars.next() }
                token = .folders
            case PathPattern.number.unicodeScalars.first!: token = .number
            case PathPattern.hexDigit.unicodeScalars.first!: token = .hex
            default:
                literal += Array(String(scalar).utf8)
                token = nil
            }
            guard let token else { continue }
            if !literal.isEmpty { tokens.append(.literal(literal)) }
            literal = []
            tokens.append(token)
        }
        if !literal.isEmpty { tokens.append(.literal(literal)) }
        self.tokens = tokens
        self.largest = largest
    }

    /// Whether `other` is the same shape, whatever sizes it is below.
    func hasTokens(of other: OutputPathShape) -> Bool { tokens == other.tokens }

    /// Whether every path of `other`'s shape has this one too, whatever its sizes: as one path
    /// of `other` tells, its values unlike any literal (a marker for each value, `1` for each
    /// size). An art crop's `{stem}-1x1-{width}` is of the shape of its output's own
    /// `{stem}-{width}`, whose `{stem}` takes in the `-1x1`, but not the other way round.
    func covers(_ other: OutputPathShape) -> Bool {
        var path = ""
        for token in other.tokens {
            switch token {
            case .literal(let text): path += String(decoding: text, as: UTF8.self)
            case .text: path.unicodeScalars.append(Self.textMarker)
            case .folders: break
            case .number: path += "1"
            case .hex: path += "a"
            }
        }
        return unbounded.matches(path)
    }

    /// This shape with its sizes not bounded.
    var unbounded: OutputPathShape {
        var shape = self
        shape.largest = nil
        return shape
    }

    /// The shape taking the sizes of both.
    func merged(with other: OutputPathShape) -> OutputPathShape {
        var merged = self
        merged.largest = largest.flatMap { mine in other.largest.map { max(mine, $0) } }
        return merged
    }

    /// Whether `path` has the shape, or, `inside`, lies below a folder that has it. Matched by
    /// bytes, as the file system compares names; a path that takes too many steps to decide
    /// counts as a match, which only keeps it.
    func matches(_ path: String, inside: Bool = false) -> Bool {
        var steps = 0
        let match = { (bytes: UnsafeBufferPointer<UInt8>) in
            Self.match(tokens[...], bytes, from: 0, below: largest, inside: inside, steps: &steps)
        }
        // A native string's bytes are read in place: planning asks this of every planned path.
        return path.utf8.withContiguousStorageIfAvailable(match) ?? Array(path.utf8).withUnsafeBufferPointer(match)
    }

    /// The most backtracking steps one path is given.
    private static let stepLimit = 10_000

    private static func match(
        _ tokens: ArraySlice<Token>, _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, below largest: Int?, inside: Bool,
        steps: inout Int
    ) -> Bool {
        steps += 1
        if steps > stepLimit { return true }
        guard let token = tokens.first else {
            return inside ? start < bytes.count && bytes[start] == UInt8(ascii: "/") : start == bytes.count
        }
        let rest = tokens.dropFirst()
        switch token {
        case .literal(let text):
            guard bytes.count - start >= text.count else { return false }
            for (offset, byte) in text.enumerated() where bytes[start + offset] != byte { return false }
            return match(rest, bytes, from: start + text.count, below: largest, inside: inside, steps: &steps)
        case .hex:
            guard start < bytes.count, isDigit(bytes[start]) || (0x61...0x66).contains(bytes[start]) else { return false }
            return match(rest, bytes, from: start + 1, below: largest, inside: inside, steps: &steps)
        case .number:
            // Written as a size is: no leading zero, and not past what a narrowed file can have.
            guard start < bytes.count, bytes[start] != UInt8(ascii: "0") else { return false }
            var end = start, value = 0
            while end < bytes.count, isDigit(bytes[end]) {
                // A run of digits longer than any size stays above them all, without overflowing.
                if value < Int.max / 10 { value = value * 10 + Int(bytes[end] - UInt8(ascii: "0")) }
                end += 1
                if let largest, value >= largest { return false }
                if match(rest, bytes, from: end, below: largest, inside: inside, steps: &steps) { return true }
            }
            return false
        case .text:
            var end = start
            while true {
                if match(rest, bytes, from: end, below: largest, inside: inside, steps: &steps) { return true }
                guard end < bytes.count, bytes[end] != UInt8(ascii: "/") else { return false }
                end += 1
            }
        case .folders:
            // Nothing, or up to and including any later `/`.
            if match(rest, bytes, from: start, below: largest, inside: inside, steps: &steps) { return true }
            var end = start
            while end < bytes.count {
                if bytes[end] == UInt8(ascii: "/"), match(rest, bytes, from: end + 1, below: largest, inside: inside, steps: &steps) {
                    return true
                }
                end += 1
            }
            return false
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
}

/// The planned paths that a file of another size than planned might land on: other outputs'
/// files that have the shape of a sized output's paths (`OutputPathShape`), each with whose it
/// is. Found as the listings are planned and kept with the plan, so that such a file fails
/// rather than write over another input's (`OutputWriter`). Most pipelines have none.
///
/// One output's files of one shape never meet (each width is a different number, as planning
/// checked, and inputs' values keep them apart), but its shapes may: an art crop's files
/// (`{stem}{art}-{width}`, `x-1x1-300`) are all of the shape of its own widths' (`{stem}-{width}`),
/// and those of an input whose stem ends as the crop's tag does (`x-1x1.png`'s `x-1x1-300`) of
/// the crop's. Only such an input makes the crop's files reachable: they are noted, in a second
/// look over the plan, only when planning met one (`needsSecondLook`), as few plans do.
struct SizedPathReach: Sendable {
    /// The distinct shapes of the sized outputs, each with the output in the file it belongs to.
    private let shapes: [(owner: Int, shape: OutputPathShape)]
    /// The index in the file of each of the plan's outputs.
    private let owners: [Int]
    /// For each of the plan's outputs, the other shapes of its output in the file, by index in
    /// `shapes`: `telling` those its paths have only by their inputs' values, `covering` those
    /// every path of its own shape has, whose match says nothing until such an input is met.
    private let telling: [[Int]]
    private let covering: [[Int]]
    /// Each planned path a sized file may reach, with whose file it is.
    private var reached: [DiskPath: String] = [:]
    /// Whether a planned path has one of its output's `telling` shapes, so that the paths of
    /// its `covering` shapes are reachable too (`lookAgain(at:)`).
    private(set) var needsSecondLook = false

    /// None: nothing is kept, nothing refused.
    init() {
        shapes = []
        owners = []
        telling = []
        covering = []
    }

    init(definitions: [OutputDefinition], outputs: [OutputTarget.Output]) {
        let owners = definitions.indices.map { definitions[$0].fileIndex ?? $0 }
        var shapes: [(owner: Int, shape: OutputPathShape)] = []
        var own: [Int?] = []
        for (index, output) in outputs.enumerated() {
            guard let shape = OutputPathShape.sized(output, narrowedBelow: Self.narrowedBelow(definitions[index])) else {
                own.append(nil)
                continue
            }
            // A set's widths of one format share a shape, below the widest.
            if let same = shapes.firstIndex(where: { $0.owner == owners[index] && $0.shape.hasTokens(of: shape) }) {
                shapes[same].shape = shapes[same].shape.merged(with: shape)
                own.append(same)
            } else {
                own.append(shapes.count)
                shapes.append((owners[index], shape))
            }
        }
        var telling: [[Int]] = []
        var covering: [[Int]] = []
        for index in outputs.indices {
            let others = shapes.indices.filter { shapes[$0].owner == owners[index] && $0 != own[index] }
            // Shapes that cover each other tell as little: both are noted at once.
            let covers = { (other: Int) in
                own[index].map { shapes[other].shape.covers(shapes[$0].shape) && !shapes[$0].shape.covers(shapes[other].shape) } ?? false
            }
            telling.append(others.filter { !covers($0) })
            covering.append(others.filter(covers))
        }
        self.owners = owners
        self.shapes = shapes
        self.telling = telling
        self.covering = covering
    }

    /// The width `definition`'s files can only be narrower than when their size differs from
    /// the plan's: a set's width whose resize is the last step and does not enlarge. A step
    /// after it may declare a size it does not make (a `vips` step that enlarges), so then
    /// none: any size.
    private static func narrowedBelow(_ definition: OutputDefinition) -> Int? {
        guard let variant = definition.variant, let width = variant.width, !variant.enlarges,
            definition.steps.count == variant.stepsBeforeResize + 1
        else { return nil }
        return width
    }

    /// Notes the planned paths of one listing's `targets` (in the order of the outputs) that a
    /// sized file of another output, or of another shape of the same output, may reach.
    mutating func note(_ targets: [OutputTarget], of input: InputFile) {
        guard !shapes.isEmpty else { return }
        for (index, target) in targets.enumerated() where target.isMade && !target.hasUnknownSizes {
            let path = target.plannedPath
            var reachable = shapes.contains { $0.owner != owners[index] && $0.shape.matches(path) }
            for other in telling[index] {
                // Whatever size the other shape's file is narrowed to, it may land here.
                guard shapes[other].shape.unbounded.matches(path) else { continue }
                needsSecondLook = true
                reachable = reachable || shapes[other].shape.matches(path)
            }
            if reachable { noteReached(target, of: input) }
        }
    }

    /// Notes the planned paths that have a `covering` shape of their output, reading every
    /// listing of `sources` again: done when planning found them reachable (`needsSecondLook`).
    mutating func lookAgain(at sources: RunPlan.SourceList) {
        guard needsSecondLook, covering.contains(where: { !$0.isEmpty }) else { return }
        for listing in sources.lazy.flatMap(\.listings) where listing.refusal == nil && listing.sameAs == nil {
            for (index, target) in listing.targets.enumerated() where target.isMade && !target.hasUnknownSizes {
                if covering[index].contains(where: { shapes[$0].shape.matches(target.plannedPath) }) {
                    noteReached(target, of: listing.input)
                }
            }
        }
    }

    private mutating func noteReached(_ target: OutputTarget, of input: InputFile) {
        reached[DiskPath(target.plannedPath)] = "output \"\(target.outputName)\"'s file of \(input.displayName)"
    }

    /// Whose planned file `path` is, when a sized file may reach it; nil for any other path.
    func owner(of path: String) -> String? {
        reached.isEmpty ? nil : reached[DiskPath(path)]
    }
}
