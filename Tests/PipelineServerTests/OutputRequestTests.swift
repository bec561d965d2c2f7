#if Server
import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit
@testable import PipelineServer

/// What a request names, in process: the output catalog a plan gives, `Accept` and the query.
@Suite struct OutputRequestTests {
    static let photo =
        #"{"name": "photo", "widths": [16, 24], "formats": [{"format": "avif"}, {"format": "webp"}, {"format": "jpeg"}], "art": [{"media": "(max-width: 600px)", "aspectRatio": "1:1", "widths": [10, 12]}, {"media": "(max-width: 900px)", "aspectRatio": "4:5", "widths": [20]}], "path": "out/{stem}{art}-{width}.{format}"}"#
    static let jxl =
        #"{"name": "jxl", "formats": [{"format": "jxl"}, {"format": "png"}], "path": "out/{stem}.{format}"}"#
    static let s3 = #"{"name": "remote", "encode": {"format": "webp"}, "path": "s3://bucket/{stem}.webp"}"#
    static let tiles = #"{"name": "zoom", "tiles": {"layout": "dz"}, "path": "out/{stem}.dzi"}"#

    static func catalog() throws -> OutputCatalog {
        let directory = try TemporaryDirectory()
        let image = try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32))
        try directory.write(image, to: "in/a.jpg")
        try directory.write(image, to: "in/sub/b.jpg")
        let json = PipelineHarness.json(inputs: ["in/**/*.jpg"], outputs: [photo, jxl, s3, tiles])
        var pipeline = try PipelineHarness.pipeline(json, in: directory)
        pipeline.environment = PipelineHarness.offlineS3Environment(home: directory.path)
        return OutputCatalog(plan: try pipeline.plan())
    }

    static func format(_ accept: String?, output: String = "photo") throws -> EncoderSettings.Format {
        try OutputRequest(path: "/\(output)/a.jpg", query: [], accept: accept, catalog: try catalog()).format
    }

    @Test func theCatalogHasEveryOutputAndEveryInputByItsURLName() throws {
        let catalog = try Self.catalog()
        #expect(catalog.outputs["photo"]?.formats == [.avif, .webp, .jpeg])
        #expect(catalog.outputs["photo"]?.widths == [16, 24])
        #expect(catalog.outputs["jxl"]?.formats == [.jxl, .png])
        #expect(catalog.outputs["remote"]?.formats == [.webp])
        #expect(catalog.input(named: "a.jpg") != nil && catalog.input(named: "sub/b.jpg") != nil)
        #expect(catalog.input(named: "b.jpg") == nil)
        // A tile pyramid is not served, and the answer says why
        #expect(catalog.outputs["zoom"] == nil)
        #expect {
            try OutputRequest(path: "/zoom/a.jpg", query: [], accept: nil, catalog: catalog)
        } throws: { error in
            (error as? ServeError)?.reason == "output zoom is a tile pyramid, a folder of tiles, which is not served"
        }
        let request = try OutputRequest(path: "/photo/sub%2Fb.jpg", query: [("width", "16")], accept: nil, catalog: catalog)
        #expect(request.input == "sub/b.jpg")
        #expect(request.width == 16)
        #expect(request.variesByAccept)
        // A format the query forces does not depend on Accept
        let forced = try OutputRequest(path: "/photo/a.jpg", query: [("format", "webp")], accept: "image/avif", catalog: catalog)
        #expect(forced.format == .webp && !forced.variesByAccept)
    }

    @Test func aFormatIsChosenOnlyWhenAcceptNamesIt() throws {
        // Named: the one named, whatever wildcard follows
        #expect(try Self.format("image/webp,*/*") == .webp)
        #expect(try Self.format("image/avif,image/webp,image/apng,image/*,*/*;q=0.8") == .avif)
        #expect(try Self.format("IMAGE/WEBP") == .webp)
        #expect(try Self.format("image/jxl,image/*", output: "jxl") == .jxl)
        // The higher weight among named ones; the file's order among equals
        #expect(try Self.format("image/avif;q=0.5, image/webp") == .webp)
        #expect(try Self.format("image/webp, image/avif") == .avif)
        // Wildcards alone, no Accept, or nothing listed: the last format, the fallback
        #expect(try Self.format("*/*") == .jpeg)
        #expect(try Self.format("image/*") == .jpeg)
        #expect(try Self.format(nil) == .jpeg)
        #expect(try Self.format("text/html") == .jpeg)
        #expect(try Self.format("*/*", output: "jxl") == .png)
        // q=0 excludes a type, named or as the fallback
        #expect(try Self.format("image/avif;q=0, image/webp;q=0, */*") == .jpeg)
        #expect(try Self.format("image/webp;q=0,image/*;q=0.8") == .jpeg)
        #expect(try Self.format("image/jpeg;q=0, image/*") == .webp)
        #expect(try Self.format("image/webp;q=0.0") == .jpeg)
        // Every format refused: still the fallback, not 406
        #expect(try Self.format("image/avif;q=0, image/webp;q=0, image/jpeg;q=0") == .jpeg)
        // A range whose weight the grammar does not allow says nothing
        #expect(try Self.format("image/webp;q=abc") == .jpeg)
        #expect(try Self.format("image/webp;q =0") == .jpeg && Self.format("image/webp;q") == .jpeg)
        #expect(try Self.format("image/webp;q=1.5, image/avif;q=0.0001") == .jpeg)
        #expect(try Self.format("image/webp;q=1.000") == .webp)
        #expect(AcceptHeader.weight("0.125") == 0.125 && AcceptHeader.weight("1") == 1 && AcceptHeader.weight("1.5") == nil)
    }

    @Test func theQueryPicksAmongWhatTheOutputLists() throws {
        let catalog = try Self.catalog()
        let forced = try OutputRequest(path: "/photo/a.jpg", query: [("format", "jpg")], accept: "image/avif", catalog: catalog)
        #expect(forced.format == .jpeg)
        #expect(forced.width == nil)
        for (path, query, status) in [
            ("/photo/a.jpg", [("width", "17")], 400), ("/photo/a.jpg", [("format", "gif")], 400), ("/photo/c.jpg", [], 404),
            ("/photo/a.jpg", [("art", "3:2")], 400), ("/photo/a.jpg", [("art", "1:1"), ("width", "16")], 400),
            ("/photo/a.jpg", [("width", "10")], 400), ("/jxl/a.jpg", [("art", "1:1")], 400),
            // a width of the list written otherwise: one URL a file
            ("/photo/a.jpg", [("width", "+16")], 400), ("/photo/a.jpg", [("width", "016")], 400),
            ("/photo/a.jpg", [("format", "WEBP")], 400), ("/photo/a.jpg", [("format", "Jpg")], 400),
            ("/nothing/a.jpg", [], 404), ("/remote/a.jpg", [("width", "16")], 400), ("/photo", [], 404), ("/photo/%2e%2e/a.jpg", [], 404),
        ] {
            let error = #expect(throws: ServeError.self) { try OutputRequest(path: path, query: query, accept: nil, catalog: catalog) }
            #expect(error?.status.code == status, "\(path)")
            #expect(error?.reason.isEmpty == false)
        }
        // A parameter given twice is refused, even with the same value twice
        for name in ["width", "format", "art", "hash"] {
            let value = ["width": "16", "format": "webp", "art": "1:1", "hash": "ab"][name] ?? ""
            let error = #expect(throws: ServeError.self) {
                try OutputRequest(path: "/photo/a.jpg", query: [(name, value), (name, value)], accept: nil, catalog: catalog)
            }
            #expect(error?.status.code == 400)
            #expect(error?.reason == "\(name) is given 2 times: a URL asks for one")
        }
        // An empty value is shown as one
        let empty = #expect(throws: ServeError.self) {
            try OutputRequest(path: "/photo/a.jpg", query: [("width", "")], accept: nil, catalog: catalog)
        }
        #expect(empty?.reason == #"width "" is not one of output photo's: its widths are 16, 24"#)
    }

    @Test func artNamesACropWhoseWidthsTheWidthIsOneOf() throws {
        let catalog = try Self.catalog()
        #expect(catalog.outputs["photo"]?.widths == [16, 24])
        #expect(catalog.outputs["photo"]?.art.map(\.aspectRatio) == ["1:1", "4:5"])
        // Named as the file writes the ratio, or as the files' names do
        let square = try OutputRequest(path: "/photo/a.jpg", query: [("art", "1:1"), ("width", "12")], accept: nil, catalog: catalog)
        #expect(square.art == 0)
        #expect(square.width == 12)
        let portrait = try OutputRequest(path: "/photo/a.jpg", query: [("art", "4x5")], accept: nil, catalog: catalog)
        #expect(portrait.art == 1)
        #expect(portrait.width == nil)
        // Without art, the output's own widths
        #expect(try OutputRequest(path: "/photo/a.jpg", query: [("width", "16")], accept: nil, catalog: catalog).art == nil)
        // A width hint picks among the crop's widths
        let hinted = try OutputRequest(
            path: "/photo/a.jpg", query: [("art", "1:1")], accept: nil, catalog: catalog, hints: [("Sec-CH-Width", "11")])
        #expect(hinted.width == 12)
        #expect(hinted.varyingHints == ["Sec-CH-Width"])
        let error = #expect(throws: ServeError.self) {
            try OutputRequest(path: "/photo/a.jpg", query: [("art", "1:1"), ("width", "16")], accept: nil, catalog: catalog)
        }
        #expect(error?.reason == #"width "16" is not one of output photo's 1:1 crop: its widths are 10, 12"#)
        // A ratio not listed is shown whole, to be told from those listed; a longer one is cut
        let long = "1:" + String(repeating: "9", count: 30)
        let unlisted = #expect(throws: ServeError.self) {
            try OutputRequest(path: "/photo/a.jpg", query: [("art", long)], accept: nil, catalog: catalog)
        }
        #expect(unlisted?.reason == "art \"\(long)\" is not one of output photo's: its crops are 1:1, 4:5")
        let huge = String(repeating: "x", count: 5000)
        let cut = #expect(throws: ServeError.self) {
            try OutputRequest(path: "/photo/a.jpg", query: [("art", huge)], accept: nil, catalog: catalog)
        }
        #expect(cut?.reason.hasPrefix("art \"\(huge.prefix(70))…\" is not one of") == true, "\(cut?.reason ?? "")")
    }
}
#endif
