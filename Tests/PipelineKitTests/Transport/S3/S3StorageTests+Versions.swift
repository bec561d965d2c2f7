import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// What tells the version of an object a run reported from another put at its key since.
extension S3StorageTests {
    /// A server answers with an object read back as the version its run reported: another
    /// machine (a replica of another pipeline file, in a rolling update) may put its own between.
    @Test func anObjectIsReadBackOnlyWhileItIsTheVersionTheRunReported() async throws {
        // Given an output a run put in the bucket
        let (server, directory, environment) = try photoServer(key: "in/a.jpg")
        let pipeline = try pipeline(
            ["s3://photos/in/*.jpg"], outputPath: "s3://site/small/{stem}.webp", in: directory, environment: environment)
        let (reports, _) = try await run(pipeline)
        let written = try #require(reports.first?.written.first)
        let stored = StoredOutputs(pipeline: pipeline)
        let put = try #require(try server.get(bucket: "site", key: "small/a.webp")).body
        #expect(try stored.read(written, maxBytes: 1 << 20) == put)
        // and in ranged pieces, which are the object's bytes in turn; a range past its end is refused
        let middle = put.count / 2
        #expect(try stored.read(written, bytes: 0..<middle) + stored.read(written, bytes: middle..<put.count) == put)
        #expect(throws: StoredOutputs.Failure.self) { try stored.read(written, bytes: middle..<(put.count + 10)) }
        // When another version is put there: the same bytes without the run's fingerprint, other
        // bytes, or other bytes of the same length with the run's metadata (another machine's
        // encoder, in a rolling update)
        let metadata = try #require(try server.get(bucket: "site", key: "small/a.webp")).headers.filter { $0.key.hasPrefix("x-amz-meta-") }
        var sameLength = put
        sameLength[sameLength.startIndex + middle] ^= 0xFF
        for (other, headers) in [(put, [:]), (put + Data([0]), [:]), (sameLength, metadata)] {
            try server.put(other, bucket: "site", key: "small/a.webp", contentType: "image/webp", headers: headers)
            // Then it is not taken for the version reported, whole or in part
            #expect(throws: StoredOutputs.Failure.self) { try stored.read(written, maxBytes: 1 << 20) }
            #expect(throws: StoredOutputs.Failure.self) { try stored.read(written, bytes: 0..<middle) }
        }
    }

    /// An object cut short by hand (or by a tool) that kept the metadata the run put with it is
    /// not taken for up to date: the length it was put with is kept too.
    @Test func anObjectCutShortKeepingItsMetadataIsMadeAgain() async throws {
        // Given an output a run put in the bucket
        let (server, directory, environment) = try photoServer(key: "in/a.jpg")
        let pipeline = try pipeline(
            ["s3://photos/in/*.jpg"], outputPath: "s3://site/small/{stem}.webp", in: directory, environment: environment)
        #expect(try await run(pipeline).summary.outputsWritten == 1)
        let put = try #require(try server.get(bucket: "site", key: "small/a.webp"))
        let metadata = put.headers.filter { $0.key.hasPrefix("x-amz-meta-") }
        #expect(metadata["x-amz-meta-pipeline-bytes"] == String(put.body.count))
        // When it is replaced by its first bytes, with the same metadata
        try server.put(put.body.prefix(100), bucket: "site", key: "small/a.webp", contentType: "image/webp", headers: metadata)
        // Then the next run makes it again, and the bucket holds the whole file
        let again = try await run(pipeline).summary
        #expect(again.outputsWritten == 1 && again.outputsUpToDate == 0)
        #expect(try server.get(bucket: "site", key: "small/a.webp")?.body == put.body)
        // And the run after finds it up to date
        #expect(try await run(pipeline).summary.outputsUpToDate == 1)
    }
}
