public import Vips

/// Finds faces in an image, for a crop about them (a `cover` resize at `"position": "faces"`, a
/// `crop` window at `"gravity": "faces"`).
///
/// PipelineKit has no detector of its own: a build with one (the `Faces` trait's OpenCV
/// cascade) hands it to the registry (`ProcessorRegistry.findingFaces(with:)`), and the
/// steps that need it read it from their options (`ProcessorOptions.faceFinder`). Called on a
/// process lane, never on Swift's cooperative pool; it may be called from many lanes at once.
public protocol FaceFinding: Sendable {
    /// The long side, in pixels, of the copy the finder searches: a step cropping about faces
    /// lets the decoder shrink the image no further than this, or small faces would be lost
    /// before the search.
    var searchSize: Int { get }

    /// The faces in `image`, as boxes in its pixels; empty when there are none.
    func faces(in image: VipsImage) throws -> [PixelBox]

    /// Why the finder cannot search here (a data file it needs is missing or damaged), asked
    /// when a pipeline file that crops about faces is checked; nil when it can.
    var unavailableReason: String? { get }
}

extension FaceFinding {
    /// None: a finder that needs nothing beside itself can always search.
    public var unavailableReason: String? { nil }
}

/// The face detector a step holds: every one is the same as far as the step's equality and
/// identifier go, since the build has one.
public struct FaceFinderReference: Hashable, Sendable {
    /// The detector.
    public let finder: any FaceFinding

    /// A reference to `finder`.
    public init(_ finder: any FaceFinding) {
        self.finder = finder
    }

    /// Always true: a build has one detector.
    public static func == (lhs: Self, rhs: Self) -> Bool { true }
    /// Adds nothing: every reference is equal.
    public func hash(into hasher: inout Hasher) {}
}

/// Things a step says about one item's work, for the trace (`--trace`): a fallback taken, say.
///
/// Steps run on a process lane; the lane's operation in the trace carries what was said.
public final class ProcessingNotes: Sendable {
    private let notes = Locked<[String]>([])

    /// No notes yet.
    public init() {}

    /// Adds `note`.
    public func add(_ note: String) {
        notes.withLock { $0.append(note) }
    }

    /// Every note so far, in the order they were added.
    public var all: [String] { notes.withLock { $0 } }
}
