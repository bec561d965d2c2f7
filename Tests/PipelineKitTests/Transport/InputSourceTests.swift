import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// The registry of input sources: each address goes to the one source that reads it, a planned
/// input to the source it was listed from, and each source says whether it is cached and what
/// `watch` listens to.
@Suite struct InputSourceTests {
    private static func name(_ source: any InputSource.Type) -> String { String(describing: source) }

    @Test(arguments: [
        ("http://example.com/a.jpg", "WebInputs"), ("HTTPS://Example.com/a.jpg", "WebInputs"),
        ("s3://bucket/photos/*.jpg", "S3Store"), ("S3://Bucket/a.png", "S3Store"),
        ("photos/**/*.jpg", "LocalFiles"), ("/srv/http://a.jpg", "LocalFiles"), ("ftp://host/a.jpg", "LocalFiles"),
    ])
    func anAddressGoesToTheSourceItsSchemeNames(address: String, source: String) {
        #expect(Self.name(InputSources.source(of: address)) == source)
    }

    @Test func aSchemeNoSourceReadsIsNamedAndTheOthersAreNot() {
        #expect(InputSources.unsupportedScheme("ftp://host/a.jpg") == "ftp")
        #expect(InputSources.unsupportedScheme("file:///srv/a.jpg") == "file")
        for address in ["https://example.com/a.jpg", "s3://bucket/a.jpg", "photos/*.jpg", "/srv/a.jpg"] {
            #expect(InputSources.unsupportedScheme(address) == nil, "\(address)")
        }
    }

    @Test func eachSourceIsRegisteredOnceAndLocalFilesLastSinceTheyTakeTheRest() {
        let names = InputSources.registered.map(Self.name)
        #expect(Set(names).count == names.count)
        #expect(names.last == "LocalFiles")
        #expect(Set(names) == ["WebInputs", "S3Store", "LocalFiles"])
    }

    @Test func aPlannedInputIsReadByTheSourceItWasListedFrom() throws {
        let web = InputFile(url: "https://example.com/photos/a.jpg")
        let object = InputFile(s3: try #require(S3Location("s3://bucket/photos/a.jpg")))
        let file = InputFile(path: "/srv/photos/a.jpg", displayName: "photos/a.jpg", subfolder: "photos")
        #expect(Self.name(InputSources.source(of: web)) == "WebInputs")
        #expect(Self.name(InputSources.source(of: object)) == "S3Store")
        #expect(Self.name(InputSources.source(of: file)) == "LocalFiles")
        // Remote bytes go through the cache; a file is read where it lies.
        let cached = [web, object, file].map { InputSources.source(of: $0).isCached }
        #expect(cached == [true, true, false])
    }

    @Test func watchListensToLocalFilesOnly() {
        #expect(WebInputs.watchTargets("https://example.com/a.jpg", base: "/srv") == [])
        #expect(S3Store.watchTargets("s3://bucket/**/*.jpg", base: "/srv") == [])
        #expect(LocalFiles.watchTargets("ftp://host/a.jpg", base: "/srv") == [])
        #expect(LocalFiles.watchTargets("in/a.jpg", base: "/srv") == [.file("/srv/in/a.jpg")])
        #expect(
            LocalFiles.watchTargets("in/{a,b}/*.jpg", base: "/srv") == [
                .glob(root: "/srv/in/a", components: ["*.jpg"]), .glob(root: "/srv/in/b", components: ["*.jpg"]),
            ])
    }

    @Test func eachSourceListsWhatItsAddressNames() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data([0xFF, 0xD8]), to: "in/a.jpg")
        try directory.write(Data([0xFF, 0xD8]), to: "in/b.jpg")
        let enumerator = InputEnumerator(baseDirectory: directory.url)
        var result = InputEnumerator.Result(sink: [InputFile]())
        _ = LocalFiles.list("in/*.jpg", at: "inputs[0]", by: enumerator, into: &result)
        _ = WebInputs.list("https://example.com/c.jpg", at: "inputs[1]", by: enumerator, into: &result)
        // Without the run's stores, an object store's glob is a problem naming its entry, not a crash.
        _ = S3Store.list("s3://bucket/*.jpg", at: "inputs[2]", by: enumerator, into: &result)
        #expect(result.sink.map(\.fileName) == ["a.jpg", "b.jpg", "c.jpg"])
        #expect(result.problems.map(\.path) == ["inputs[2]"])
    }
}
