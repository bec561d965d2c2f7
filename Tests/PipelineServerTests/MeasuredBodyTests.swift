#if Server
import Foundation
import Hummingbird
import NIOCore
import PipelineKit
import TestSupport
import Testing
import Vips

@testable import PipelineServer

/// An answer's body is read through the one descriptor whose size and version were checked:
/// a file replaced (renamed over, as a run writes) or removed after the run reported it is never
/// sent with the reported size and `ETag`, but refused, to be asked again.
struct MeasuredBodyTests {
    /// Puts `bytes` at `path` as a run does: written beside it, then renamed over it.
    static func replace(_ path: String, with bytes: Data) throws {
        try bytes.write(to: URL(fileURLWithPath: path + ".new"))
        _ = rename(path + ".new", path)
    }

    @Test func theFileReportedIsSentWhole() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/a.webp"
        try Self.replace(path, with: Data("first version".utf8))
        let stamp = try #require(FileStamp(path: path))
        let read = try await OutputResponder.measuredBytes(at: path, byteCount: 13, stamp: stamp)
        #expect(Data(read.readableBytesView) == Data("first version".utf8))
        #expect(try await OutputResponder.measuredBytes(at: path, byteCount: 13, stamp: nil).readableBytes == 13)
    }

    @Test func aLargeFileIsSentFromTheVersionItWasOpenedAtWhateverReplacesItMeanwhile() throws {
        // Given a file opened for an answer sent a piece at a time
        let directory = try TemporaryDirectory()
        let path = directory.path + "/a.tif"
        let first = Data((0..<600_000).map { UInt8(truncatingIfNeeded: $0) })
        try Self.replace(path, with: first)
        let opened = try #require(OpenedFile(path: path))
        #expect(opened.stamp.size == Int64(first.count))
        // When a run renames another version over it, or it is removed, while it is sent
        try Self.replace(path, with: Data(repeating: 7, count: first.count))
        try FileManager.default.removeItem(atPath: path)
        // Then the pieces are still the version opened, and it counts as unchanged
        var sent = Data()
        while sent.count < first.count, let piece = opened.piece(at: sent.count, count: min(256 << 10, first.count - sent.count)) {
            sent.append(contentsOf: piece.readableBytesView)
        }
        #expect(sent == first)
        #expect(opened.isUnchanged)
        #expect(opened.piece(at: first.count - 10, count: 20) == nil)

        // But a file written to in place (no run does) counts as changed: its answer is cut short
        try Self.replace(path, with: first)
        let inPlace = try #require(OpenedFile(path: path))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: Data([1, 2, 3]))
        try handle.close()
        #expect(!inPlace.isUnchanged)
    }

    /// A body writer that keeps what it is given, and writes `change` over the file in place
    /// once the first piece is sent.
    private struct InPlaceWriter: ResponseBodyWriter {
        let sent: Locked<Data>
        let path: String

        mutating func write(_ buffer: ByteBuffer) async throws {
            let first = sent.withLock { sent in
                defer { sent.append(contentsOf: buffer.readableBytesView) }
                return sent.isEmpty
            }
            guard first, let handle = FileHandle(forWritingAtPath: path) else { return }
            try handle.write(contentsOf: Data(repeating: 9, count: 4096))
            try handle.close()
        }

        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    @Test func aLargeFileWrittenToInPlaceWhileItIsSentIsCutShortBeforeAChangedPiece() async throws {
        // Given a file of three pieces, opened for an answer
        let directory = try TemporaryDirectory()
        let path = directory.path + "/a.tif"
        let first = Data((0..<(2 * ResponseBody.pieceBytes + 1000)).map { UInt8(truncatingIfNeeded: $0) })
        try Self.replace(path, with: first)
        let opened = try #require(OpenedFile(path: path))

        // When it is written to in place once its first piece is sent
        let sent = Locked(Data())
        await #expect(throws: OpenedFile.Changed.self) {
            try await ResponseBody.streamed(opened).write(InPlaceWriter(sent: sent, path: path))
        }

        // Then no piece read after the change is sent: the client has the first piece alone,
        // short of the length it was told, never the whole length with new bytes in it
        #expect(sent.withLock { $0 } == first.prefix(ResponseBody.pieceBytes))
    }

    @Test func aFileReplacedOrRemovedSinceTheReportIsRefusedToBeAskedAgain() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/a.webp"
        try Self.replace(path, with: Data("first version".utf8))
        let stamp = try #require(FileStamp(path: path))

        // Replaced by one of the same size: its version differs
        try Self.replace(path, with: Data("other version".utf8))
        let sameSize = await #expect(throws: ServeError.self) {
            try await OutputResponder.measuredBytes(at: path, byteCount: 13, stamp: stamp)
        }
        #expect(sameSize?.status.code == 503)
        #expect(sameSize?.headers[.retryAfter] == "1")
        // Replaced by a longer one, where only the size is known
        try Self.replace(path, with: Data("a longer, third version".utf8))
        await #expect(throws: ServeError.self) { try await OutputResponder.measuredBytes(at: path, byteCount: 13, stamp: nil) }
        // Removed
        try FileManager.default.removeItem(atPath: path)
        await #expect(throws: ServeError.self) { try await OutputResponder.measuredBytes(at: path, byteCount: 13, stamp: nil) }
    }
}
#endif
