import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// The registry of object stores: an address is an object by its scheme alone, the neutral
/// location reads any registered store's address, and what planning says of one names the store.
@Suite struct ObjectStoreTests {
    @Test(arguments: [
        ("s3://bucket/key.jpg", true), ("S3://Bucket/a/b.png", true), ("s3://", true),
        ("https://example.com/a.jpg", false), ("ftp://host/a.jpg", false), ("photos/s3://a.jpg", false),
        ("/srv/s3/a.jpg", false), ("s3:/bucket/a.jpg", false),
    ])
    func anAddressIsAnObjectByItsSchemeAlone(address: String, isObject: Bool) {
        #expect(ObjectStores.isObject(address) == isObject)
        #expect((ObjectStores.displayName(of: address) == "S3") == isObject)
    }

    @Test func theNeutralLocationReadsAnS3AddressAndGivesItBack() throws {
        let location = try #require(ObjectLocation("S3://photos/2024/a b.jpg"))
        #expect(location.scheme == "s3")
        #expect(location.container == "photos")
        #expect(location.key == "2024/a b.jpg")
        #expect(location.description == "s3://photos/2024/a b.jpg")
        let s3 = try #require(S3Location(location))
        #expect(s3 == S3Location(bucket: "photos", key: "2024/a b.jpg"))
        #expect(s3.objectLocation == location)
        #expect(ObjectLocation("s3://photos")?.key == "")
        #expect(ObjectLocation("s3:///key") == nil)
        #expect(ObjectLocation("https://photos/a.jpg") == nil)
        #expect(S3Location(ObjectLocation(scheme: "gs", container: "photos", key: "a.jpg")) == nil)
    }

    func problems(_ output: String) -> [PipelineFileError.Problem] {
        PipelineHarness.problems(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output]))
    }

    @Test(arguments: [
        (
            #"{"name": "z", "tiles": {"layout": "iiif"}, "path": "S3://site/tiles/{stem}"}"#,
            "tile pyramids are written to local folders, not to S3"
        ),
        (
            #"{"name": "z", "encode": {"format": "jpeg"}, "path": "s3://{stem}/x.jpg"}"#,
            "an S3 output path must name its bucket in full, as s3://BUCKET/KEY"
        ),
    ])
    func whatPlanningSaysOfAnObjectPathNamesItsStore(output: String, message: String) {
        let problems = problems(output)
        #expect(problems.map(\.message) == [message])
        #expect(problems.first?.path == "outputs[0].path")
    }

    @Test func aKeyLongerThanTheStoreTakesIsRefusedNamingTheStoreAndItsLimit() throws {
        // Given an output key of 1,100 bytes and more, where a name may be of any length
        let directory = try TemporaryDirectory()
        let folder = String(repeating: "k", count: 1100)
        var pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(
                inputs: ["s3://b/a.jpg"],
                outputs: [#"{"name": "small", "encode": {"format": "jpeg"}, "path": "s3://site/\#(folder)/{stem}.jpg"}"#]),
            in: directory)
        pipeline.environment = PipelineHarness.offlineS3Environment(home: directory.path)
        // When it is planned, Then the input is refused with the store's limit
        let refusal = try pipeline.plan().items.first?.listings.first?.refusal
        #expect(refusal?.contains("would be 1106 bytes long: more than the 1024 S3 allows") == true, "\(refusal ?? "no refusal")")
    }

    @Test(arguments: [(503, true), (500, true), (404, false), (403, false)])
    func aStoresServerErrorMeansItsOriginIsUnavailable(status: Int, unavailable: Bool) {
        // A server error lets a cached copy stand in (fetch.staleIfError); an answer about the object does not.
        let failure = S3Error(
            operation: "GetObject", bucket: "b", key: "a.jpg", response: DataResponse(status: status, body: Data(), headers: [:]))
        let error = ItemError(.other, stage: .fetch, reason: "\(failure)", underlying: failure)
        #expect(error.meansOriginUnavailable == unavailable)
    }
}
