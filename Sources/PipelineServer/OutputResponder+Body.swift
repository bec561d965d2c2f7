#if Server
import Dispatch
import Foundation
import Hummingbird
import PipelineKit

/// The bytes an answer sends: those of the file the run reported, read through the one
/// descriptor whose size and version were checked, so `Content-Length`, `ETag` and body always
/// describe one file, even when a run replaces it at that moment.
extension OutputResponder {
    /// The largest file read whole: far above any image a pipeline writes.
    static let largestFile: Int64 = 1 << 30

    /// What an answer with `written` sends: a large file a piece at a time, on the disk from the
    /// descriptor it was measured on, in a store by ranged reads, so that clients taking it at
    /// once do not each hold it whole; anything else read whole (`body(of:stamp:deadline:context:)`).
    func responseBody(
        of written: WrittenOutput, stamp: FileStamp?, deadline: AnswerDeadline, context: some RequestContext
    ) async throws(ServeError) -> ResponseBody {
        if ObjectStores.isObject(written.path), written.byteCount > Self.storedPieceBytes {
            return try await storedInPieces(written, deadline: deadline, context: context)
        }
        guard written.byteCount > WarmBodies.largestFile, !ObjectStores.isObject(written.path) else {
            return .inPieces(try await body(of: written, stamp: stamp, deadline: deadline, context: context))
        }
        return .streamed(try await Self.opened(written, stamp: stamp))
    }

    /// The file of `written`, on the disk, opened, when it still has the size the run reported
    /// and the version `stamp` (when known).
    static func opened(_ written: WrittenOutput, stamp: FileStamp?) async throws(ServeError) -> OpenedFile {
        let path = written.path
        let opened = await runBlocking(on: .global(qos: .userInitiated)) { OpenedFile(path: path) }
        guard let opened, opened.stamp.size == Int64(written.byteCount), stamp.map({ $0 == opened.stamp }) ?? true else {
            throw ServeError.tryAgain("the file changed while it was being answered; try again")
        }
        return opened
    }

    /// The bytes of `written`, read whole: from the object store it is in, or from its file,
    /// when that file still has the size the run reported and the version `stamp` (when known).
    /// A small file's bytes are kept (`WarmBodies`) and answered again while the file is the
    /// version they were read at.
    func body(
        of written: WrittenOutput, stamp: FileStamp?, deadline: AnswerDeadline, context: some RequestContext
    ) async throws(ServeError) -> ByteBuffer {
        if ObjectStores.isObject(written.path) { return try await storedBytes(of: written, deadline: deadline, context: context) }
        guard written.byteCount <= WarmBodies.largestFile else {
            return try await Self.measuredBytes(at: written.path, byteCount: written.byteCount, stamp: stamp)
        }
        let (path, bodies) = (written.path, self.bodies)
        if let kept = bodies.kept(at: path, current: stamp) { return try Self.checked(kept, byteCount: written.byteCount, stamp: stamp) }
        let read = await runBlocking(on: .global(qos: .userInitiated)) { bodies.read(at: path) }
        return try Self.checked(read, byteCount: written.byteCount, stamp: stamp)
    }

    /// The bytes of the file at `path`, opened once, read on a thread of their own (the read
    /// blocks): the descriptor's own status must show `byteCount` bytes (and be `stamp`, when
    /// given), and exactly those bytes are read from it.
    static func measuredBytes(at path: String, byteCount: Int, stamp: FileStamp?) async throws(ServeError) -> ByteBuffer {
        let read = await runBlocking(on: .global(qos: .userInitiated)) { WarmBodies.wholeFile(at: path, largest: largestFile) }
        return try checked(read, byteCount: byteCount, stamp: stamp)
    }

    /// The bytes `read`, when they are of the file the run reported: `byteCount` long, and at
    /// version `stamp` when given. A file replaced or removed since is a passing state, as
    /// another request finds the new one.
    private static func checked(_ read: (stamp: FileStamp, bytes: ByteBuffer)?, byteCount: Int, stamp: FileStamp?) throws(ServeError)
        -> ByteBuffer
    {
        guard let read, read.stamp.size == Int64(byteCount), stamp.map({ $0 == read.stamp }) ?? true else {
            throw ServeError.tryAgain("the file changed while it was being answered; try again")
        }
        return read.bytes
    }
}

extension ResponseBody {
    /// `bytes` written a piece at a time: the connection's idle handler
    /// (`IdleConnectionCloser`) sees the client take each piece, where one write of a whole
    /// large body would be taken only once its last byte was. A body of one piece is written
    /// with its head and end at once, as Hummingbird writes a buffer (most answers are small).
    static func inPieces(_ bytes: ByteBuffer) -> ResponseBody {
        guard bytes.readableBytes > pieceBytes else { return ResponseBody(byteBuffer: bytes) }
        return ResponseBody(contentLength: bytes.readableBytes) { writer in
            try await writer.writeInPieces(bytes)
            try await writer.finish(nil)
        }
    }

    /// The bytes of one piece: far more than a write's overhead, far less than a slow client
    /// takes within the idle timeout.
    static let pieceBytes = 256 << 10

    /// The bytes of `file`, a piece at a time, each read on a thread of its own (a read
    /// blocks). A file written to in place while it is sent, which a run never does (it
    /// renames a whole file over it), ends the answer short, so the client cannot take the
    /// bytes for whole: each piece is checked after it is read and before it is sent, so every
    /// piece sent was read before the file changed, and the last one too.
    static func streamed(_ file: OpenedFile) -> ResponseBody {
        let size = Int(file.stamp.size)
        return ResponseBody(contentLength: size) { writer in
            var offset = 0
            while offset < size {
                let start = offset
                let piece = await runBlocking(on: .global(qos: .userInitiated)) {
                    file.piece(at: start, count: min(pieceBytes, size - start)).flatMap { file.isUnchanged ? $0 : nil }
                }
                guard let piece else { throw OpenedFile.Changed(path: file.path) }
                try await writer.write(piece)
                offset += piece.readableBytes
            }
            try await writer.finish(nil)
        }
    }
}
extension ResponseBodyWriter {
    /// Writes `bytes` a piece of `ResponseBody.pieceBytes` at a time (see `ResponseBody.inPieces`).
    mutating func writeInPieces(_ bytes: ByteBuffer) async throws {
        var rest = bytes
        while rest.readableBytes > 0, let piece = rest.readSlice(length: min(ResponseBody.pieceBytes, rest.readableBytes)) {
            try await write(piece)
        }
    }
}
#endif
