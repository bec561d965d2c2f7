import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// A file named by `{hash}` is written under a temporary name, hashed from what is on disk, and
/// committed under its hashed name.
@Suite struct HashedFileCommitTests {
    @Test func aWrittenFileIsHashedAndCommittedUnderItsHashedName() async throws {
        let directory = try TemporaryDirectory()
        let bytes = [UInt8]((0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let file = try ImageWriter.writeUncommitted(to: directory.path + "/x-{hash}.bin", root: directory.path) {
            descriptor throws(ItemError) in
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }
        let hash = try file.contentHash()
        #expect(hash == SHA256.hex(Data(bytes)) && hash.count == 64)
        let template = try PathTemplate(directory.path + "/x-{hash:12}.bin")
        let path = try template.resolve([.hash: hash])
        let output = WrittenOutput(output: "o", path: path, size: ImageSize(width: 1, height: 1), byteCount: file.byteCount)
        let written = try await FileCommitter().commit(OutputWriter.Pending(output: output, file: file.renamed(to: path)))
        #expect(written.path == directory.path + "/x-\(hash.prefix(12)).bin")
        #expect(directory.allFiles() == ["x-\(hash.prefix(12)).bin"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: written.path)) == Data(bytes))
    }
}
