import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// An object's `Cache-Control` is for those its bucket publishes to: a run asks the bucket each
/// time, so a replaced object is never taken from the cache as it was.
@Suite(.enabled(if: MotoServer.isAvailable, "moto's server is not installed (.ci/setup installs moto[server])"))
struct S3InputFreshnessTests {
    @Test func aReplacedObjectWithALongMaxAgeIsMadeAgainFromItsNewBytes() async throws {
        // Given an object stored for a year's caching, as the run's own S3 outputs are, made once
        let server = try MotoServer()
        try server.createBucket("photos")
        let year = "public, max-age=31536000, immutable"
        let wide = try Fixtures.jpeg(try Fixtures.gradient(width: 200, height: 100))
        try server.put(wide, bucket: "photos", key: "in/a.jpg", contentType: "image/jpeg", cacheControl: year)
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(
            inputs: ["s3://photos/in/*.jpg", "s3://photos/single.jpg"],
            outputs: [#"{"name": "small", "steps": [{"resize": {"width": 50}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#],
            extra: #""cache": {"directory": "cache"}"#)
        try server.put(wide, bucket: "photos", key: "single.jpg", contentType: "image/jpeg", cacheControl: year)
        var pipeline = try PipelineHarness.pipeline(json, in: directory)
        pipeline.environment = server.environment(home: directory.path)
        let first = try #require(try await pipeline.run().collect().summary)
        #expect(first.outputsWritten == 2)

        // When both objects are replaced by a square photo
        let square = try Fixtures.jpeg(try Fixtures.gradient(width: 100, height: 100))
        try server.put(square, bucket: "photos", key: "in/a.jpg", contentType: "image/jpeg", cacheControl: year)
        try server.put(square, bucket: "photos", key: "single.jpg", contentType: "image/jpeg", cacheControl: year)
        let second = try #require(try await pipeline.run().collect().summary)

        // Then both outputs are made again, square
        #expect(second.outputsWritten == 2)
        for name in ["a", "single"] {
            #expect(try VipsImage.open(file: directory.path + "/out/\(name).png").size == ImageSize(width: 50, height: 50), "\(name)")
        }
    }
}
