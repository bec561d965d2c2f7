import Testing

@testable import PipelineKit

/// `ImageManifest.candidates(for:)`, which `pipeline html` names an input by: as the manifest
/// names it, as the pipeline file writes it, or by the end of its path.
@Suite struct ManifestLookupTests {
    let manifest = ImageManifest(
        pipeline: "p",
        inputs: [
            "http://127.0.0.1:8080/photo.jpg?v=…", "https://example.com/shop/a.jpg;jsessionid=…", "s3://bucket/odd?name.jpg",
            "photos/dune.jpg",
        ].map { ImageManifest.Input(source: $0, width: 1, height: 1, outputs: [:]) })

    func found(_ name: String) -> [String] { manifest.candidates(for: name).map(\.source) }

    @Test func aWebURLIsFoundByTheEndOfItsPathOrAsThePipelineFileWritesIt() {
        #expect(found("photo.jpg") == ["http://127.0.0.1:8080/photo.jpg?v=…"])
        #expect(found("http://127.0.0.1:8080/photo.jpg?v=2") == ["http://127.0.0.1:8080/photo.jpg?v=…"])
        #expect(found("shop/a.jpg") == ["https://example.com/shop/a.jpg;jsessionid=…"])
        // and an S3 key and a file are matched as they are written
        #expect(found("odd?name.jpg") == ["s3://bucket/odd?name.jpg"])
        #expect(found("dune.jpg") == ["photos/dune.jpg"])
        #expect(found("v=2").isEmpty)
    }
}
