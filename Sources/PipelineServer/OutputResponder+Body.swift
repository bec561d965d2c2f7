#if Server
import Dispatch
import Hummingbird
import PipelineKit
import _NIOFileSystem

/// The bytes an answer sends: those of the file the run reported, read through the one
/// descriptor whose size and version were checked, so `Content-Length`, `ETag` and body always
/// describe one file, even when a run replaces it at that moment.
extension OutputResponder {
    /// The largest file read whole: far above any image a pipeline writes.
    static let largestFile: Int64 = 1 << 30

    /// The bytes of `written`, read whole: from the object store it is in, or from its file,
    /// when that file still has the size the run reported and the version `stamp` (when known).
    /// A small file's bytes are kept (`WarmBodies`) and answered again while the file is the
    /// version they were read at.
    func body(of written: WrittenOutput, stamp: FileStamp?, context: some RequestContext) async throws(ServeError) -> ByteBuffer {
        if ObjectStores.isObject(written.path) { return try await storedBytes(of: written, context: context) }
        guard written.byteCount <= WarmBodies.largestFile else {
            return try await Self.measuredBytes(at: written.path, byteCount: written.byteCount, stamp: stamp)
        }
        let (path, bodies) = (written.path, self.bodies)
        var found = bodies.kept(at: path, current: stamp)
        if found == nil { found = await runBlocking(on: .global(qos: .userInitiated)) { bodies.read(at: path) } }
        guard let found, found.stamp.size == Int64(written.byteCount), stamp.map({ $0 == found.stamp }) ?? true else {
            throw Self.changed
        }
        return found.bytes
    }

    /// The refusal of a file replaced or removed since the run reported it: a passing state,
    /// as another request finds the new one.
    static let changed = ServeError.tryAgain("the file changed while it was being answered; try again")

    /// The bytes of the file at `path`, opened once: the descriptor's own status must show
    /// `byteCount` bytes (and be `stamp`, when given), and exactly those bytes are read from it.
    /// A file replaced or removed since the run is a passing state: another request finds the
    /// new one.
    static func measuredBytes(at path: String, byteCount: Int, stamp: FileStamp?) async throws(ServeError) -> ByteBuffer {
        let read: ByteBuffer?
        do {
            read = try await FileSystem.shared.withFileHandle(forReadingAt: .init(path)) { file in
                let info = try await file.info()
                guard let status = info.platformSpecificStatus, let opened = FileStamp(status: status),
                    opened.size == Int64(byteCount), stamp.map({ $0 == opened }) ?? true
                else { return nil }
                return try await file.readToEnd(maximumSizeAllowed: .bytes(min(opened.size, largestFile)))
            }
        } catch {
            read = nil
        }
        guard let read, read.readableBytes == byteCount else { throw changed }
        return read
    }
}
#endif
