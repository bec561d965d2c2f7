import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// What a run makes again with S3 inputs and outputs: a replaced input object, however long its
/// own `max-age` (that is for those its bucket publishes to), and nothing that is in the bucket
/// already, under whatever name its size gave it.
@Suite(.enabled(if: MotoServer.isAvailable, "moto's server is not installed (.ci/setup installs moto[server])"))
struct S3IncrementalTests {
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

    @Test func aWidthAboveTheImagesOwnIsFoundInTheBucketUnderTheNameItWasMadeWith() async throws {
        // Given a 400×200 photo in a 20 px white border, and in a bucket a set of 160 and 640 px
        // files named by width, files named by the width a resize by height gives, and trimmed
        // files named by their size
        let server = try MotoServer()
        try server.createBucket("site")
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.image(width: 400, height: 200, bands: 3) { x, y in
            x < 20 || x >= 380 || y < 20 || y >= 180 ? [255, 255, 255] : [UInt8(x % 200), UInt8(y), 90]
        }
        try directory.write(try Fixtures.png(photo), to: "in/photo.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"],
            outputs: [
                #"{"name": "set", "widths": [160, 640], "formats": [{"format": "jpeg"}], "path": "s3://site/{stem}-{width}.jpg"}"#,
                #"{"name": "tall", "steps": [{"resize": {"height": 50}}], "encode": {"format": "png"}, "path": "s3://site/{stem}-{width}.png"}"#,
                #"{"name": "box", "steps": [{"trim": {}}], "encode": {"format": "png"}, "path": "s3://site/{stem}-{width}x{height}.png"}"#,
            ])
        var pipeline = try PipelineHarness.pipeline(json, in: directory)
        pipeline.environment = server.environment(home: directory.path)
        let first = try #require(try await pipeline.run().collect().summary)
        #expect(first.outputsWritten == 4)

        // When it runs again, nothing having changed
        let again = try await pipeline.run().collect()
        let summary = try #require(again.summary)

        // Then every file is found in the bucket under the name its size gave it
        #expect(summary.outputsWritten == 0 && summary.outputsUpToDate == 4, "\(again.reports.flatMap(\.written).map(\.path))")
        #expect(
            again.reports.flatMap(\.written).map { ($0.path as NSString).lastPathComponent }.sorted() == [
                "photo-100.png", "photo-160.jpg", "photo-360x160.png", "photo-400.jpg",
            ])
    }

    @Test func twoWidthsStandingInForATrimmedImageAreUploadedOnceAndFoundByBoth() async throws {
        // Given a trimmed set whose two wider widths stand in for the image's own, made once
        let server = try MotoServer()
        try server.createBucket("site")
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.boxedPNG(), to: "in/box.png")
        var pipeline = try PipelineHarness.pipeline(Fixtures.trimmedSetJSON(path: "s3://site/t/{stem}-{width}.png"), in: directory)
        pipeline.environment = server.environment(home: directory.path)
        let first = try await pipeline.run().collect()
        #expect(first.reports.allSatisfy { $0.failures.isEmpty }, "\(first.reports.flatMap(\.failures))")
        #expect(first.reports.flatMap(\.written).filter { $0.path.hasSuffix("box-80.png") }.count == 1)
        let made = try #require(try server.get(bucket: "site", key: "t/box-80.png")).headers

        // When it runs twice more
        for _ in 0..<2 {
            let again = try await pipeline.run().collect()

            // Then every file is found in the bucket, the one both widths name left as it was made
            #expect(again.reports.flatMap(\.written).allSatisfy { $0.upToDate }, "\(again.reports.flatMap(\.written))")
            let kept = try #require(try server.get(bucket: "site", key: "t/box-80.png")).headers
            let fingerprint = "x-amz-meta-" + OutputWriter.MetadataName.fingerprint
            #expect(kept[fingerprint] != nil)
            #expect(kept[fingerprint] == made[fingerprint])
        }
    }

    @Test func anObjectFoundUpToDateReportsTheQualityItsSearchChose() async throws {
        // Given an object a quality target's search made
        let server = try MotoServer()
        try server.createBucket("site")
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 160, height: 120)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"],
            outputs: [#"{"name": "web", "encode": {"format": "webp", "quality": {"ssimulacra2": 70}}, "path": "s3://site/{stem}.webp"}"#])
        var pipeline = try PipelineHarness.pipeline(json, in: directory)
        pipeline.environment = server.environment(home: directory.path)
        let made = try #require(try await pipeline.run().collect().reports.first?.written.first?.searchedQuality)

        // When a run finds it up to date in the bucket
        let again = try #require(try await pipeline.run().collect().reports.first?.written.first)

        // Then it reports the quality chosen and the score, as a local file's journal does,
        // for the report and the manifest
        #expect(again.upToDate)
        #expect(again.searchedQuality == made)
    }
}
