#if Server
import Foundation
import PipelineKit
import TestSupport
import Testing

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
