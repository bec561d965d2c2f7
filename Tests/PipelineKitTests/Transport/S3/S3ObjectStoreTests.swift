import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// S3 behind the store protocol, against a real S3-compatible server (moto) that checks every
/// signature: what `put` wrote is what `head` reads back.
@Suite(.enabled(if: MotoServer.isAvailable, "moto's server is not installed (.ci/setup installs moto[server])"))
struct S3ObjectStoreTests {
    func stores(_ server: MotoServer, in directory: TemporaryDirectory) throws -> ObjectStoreAccess {
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [#"{"name": "small", "encode": {"format": "jpeg"}, "path": "s3://site/{stem}.jpg"}"#])
        let definition = try PipelineDefinition(
            json: json, baseDirectory: URL(fileURLWithPath: directory.path), processors: .standard)
        return ObjectStoreAccess(definition: definition, environment: server.environment(home: directory.path), loader: nil)
    }

    @Test func anObjectPutThroughTheStoreIsReadBackByItsHead() throws {
        // Given a bucket, and the run's stores
        let server = try MotoServer()
        try server.createBucket("site")
        let directory = try TemporaryDirectory()
        let stores = try stores(server, in: directory)
        // Then a local path has no store, and an object not yet written has no head
        #expect(stores.store(for: "out/a.jpg") == nil)
        let store = try #require(stores.store(for: "S3://site/a/b.jpg"))
        #expect(try store.head("s3://site/a/b.jpg", isCancelled: { false }) == nil)
        // When an object is put with its metadata
        let version = try stores.store(forWriting: "s3://site/a/b.jpg").put(
            "s3://site/a/b.jpg", body: Data("abcde".utf8), contentType: "image/jpeg", cacheControl: "max-age=60",
            metadata: ["pipeline-fingerprint": "f1", "pipeline-width": "5"], isCancelled: { false })
        // Then its head gives back that metadata, without the store's prefix, its size, and the
        // version the put named
        let object = try #require(try store.head("s3://site/a/b.jpg", isCancelled: { false }))
        #expect(object == StoredObject(metadata: ["pipeline-fingerprint": "f1", "pipeline-width": "5"], byteCount: 5, version: version))
        #expect(!version.isEmpty)
    }

    @Test func anAddressWithoutABucketIsTheEncodeStagesFailure() throws {
        let server = try MotoServer()
        let directory = try TemporaryDirectory()
        #expect {
            _ = try stores(server, in: directory).store(forWriting: "s3:///a.jpg")
        } throws: { error in
            let error = error as? ItemError
            return error?.stage == .encode && error?.reason == "s3:///a.jpg is not an s3://bucket/key address"
        }
    }
}
