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
