public import Vips

/// Finds faces in an image, for a `cover` crop at `"position": "faces"`.
///
/// PipelineKit has no detector of its own: a build with one (the `Faces` trait's OpenCV
/// cascade) hands it to the registry (`ProcessorRegistry.findingFaces(with:)`), and the
/// steps that need it read it from their options (`ProcessorOptions.faceFinder`). Called on a
/// process lane, never on Swift's cooperative pool; it may be called from many lanes at once.
public protocol FaceFinding: Sendable {
    /// The faces in `image`, as boxes in its pixels; empty when there are none.
    func faces(in image: VipsImage) throws -> [PixelBox]
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
