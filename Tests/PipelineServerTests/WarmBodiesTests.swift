#if Server
import Foundation
import TestSupport
import Testing

@testable import PipelineKit
@testable import PipelineServer

/// Small files answered from memory (`WarmBodies`): read once while they stay the version read,
/// read again as soon as the path holds another, never answered stale.
@Suite(.serialized) struct WarmBodiesTests {
    @Test func warmAnswersReadTheFileOnce() async throws {
        let directory = try ServeTests.folder()
        let path = directory.path + "/out/a.webp"
        try await withServer(ServeTests.json, in: directory) { server in
            // Given a file made by a request's run and answered warm after it
            let made = try await WarmPathTests.madeThenWarm(server)
            // When it is asked for again, and by HEAD
            for _ in 0..<3 { #expect(try await server.request("/thumb/a.jpg").body == made.body) }
            let head = try await server.request("/thumb/a.jpg", method: "HEAD")
            // Then every answer is the file's bytes, which were read from the disk once
            #expect(head.header("Content-Length") == String(made.body.count))
            #expect(made.body == (try Data(contentsOf: URL(fileURLWithPath: path))))
            #expect(server.server.responder.bodies.reads == 1)
            // And another file is read on its own first answer
            #expect(try await server.request("/thumb/sub/b.jpg").status == 200)
            #expect(server.server.responder.bodies.reads == 2)
        }
    }

    @Test func aFileWrittenAgainInPlaceIsReadAgain() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write(Data("first version".utf8), to: "a.webp")
        let bodies = WarmBodies()
        #expect(bodies.read(at: path).map { Data($0.bytes.readableBytesView) } == Data("first version".utf8))
        #expect(bodies.kept(at: path).map { Data($0.bytes.readableBytesView) } == Data("first version".utf8))
        // When the same inode gets other bytes of the same size, at another modification time
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: Data("other version".utf8))
        try handle.close()
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: path)
        // Then nothing is answered from memory, and a read finds the new bytes
        #expect(bodies.kept(at: path)?.bytes == nil)
        #expect(bodies.read(at: path).map { Data($0.bytes.readableBytesView) } == Data("other version".utf8))
        #expect(bodies.kept(at: path).map { Data($0.bytes.readableBytesView) } == Data("other version".utf8))
        #expect(bodies.reads == 2)
    }

    @Test func aFileReplacedOrRemovedIsNotAnsweredFromMemory() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write(Data("kept".utf8), to: "a.webp")
        let bodies = WarmBodies()
        #expect(bodies.read(at: path).map { Data($0.bytes.readableBytesView) } == Data("kept".utf8))
        // When another file of the same size is renamed over it
        let other = try directory.write(Data("next".utf8), to: "next.webp")
        #expect(rename(other, path) == 0)
        // Then it is another version
        #expect(bodies.kept(at: path)?.bytes == nil)
        #expect(bodies.read(at: path).map { Data($0.bytes.readableBytesView) } == Data("next".utf8))
        // And once removed, nothing is answered
        try FileManager.default.removeItem(atPath: path)
        #expect(bodies.kept(at: path)?.bytes == nil)
        #expect(bodies.read(at: path)?.bytes == nil)
    }

    @Test func largeFilesAreLeftToTheDiskAndTheStoreStaysWithinItsBytes() throws {
        let directory = try TemporaryDirectory()
        let large = try directory.write(Data(repeating: 7, count: WarmBodies.largestFile + 1), to: "large.webp")
        let paths = try (0..<3).map { try directory.write(Data(repeating: UInt8($0), count: 40), to: "\($0).webp") }
        // What one of the files takes in memory, with the storage its bytes were given
        let each = try #require(WarmBodies().read(at: paths[0])).bytes.capacity
        let bodies = WarmBodies(capacity: 2 * each + each / 2)
        // A file larger than any kept is not read whole
        #expect(bodies.read(at: large)?.bytes == nil)
        #expect(bodies.kept(at: large)?.bytes == nil)
        // Three files in a store with room for two and a half: each read is answered, two are kept
        for (index, path) in paths.enumerated() {
            #expect(bodies.read(at: path).map { Data($0.bytes.readableBytesView) } == Data(repeating: UInt8(index), count: 40))
        }
        #expect(bodies.kept(at: paths[2]).map { Data($0.bytes.readableBytesView) } == Data(repeating: 2, count: 40))
        #expect(paths.filter { bodies.kept(at: $0)?.bytes != nil }.count == 2)
    }
}
#endif
