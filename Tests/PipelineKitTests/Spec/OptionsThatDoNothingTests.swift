import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// Output options that change nothing where they stand are accepted but named in a warning:
/// `cacheControl` and `metadata` on a local file, `placeholderOptions` without `placeholders`.
@Suite struct OptionsThatDoNothingTests {
    func warnings(_ output: String) throws -> [String] { try UnusedPositionTests().warnings(output) }

    @Test func objectSettingsOnALocalFileAndPlaceholderOptionsAloneAreNamed() throws {
        let local = try warnings(
            #"{"name": "o", "encode": {"format": "png"}, "path": "out/{stem}.png", "cacheControl": "max-age=60", "metadata": {"a": "b"}, "placeholderOptions": {"lqipWidth": 16}}"#
        )
        #expect(
            local == [
                "outputs[0].cacheControl does nothing: it is stored with S3 objects, and this output's path is a local file",
                "outputs[0].metadata does nothing: it is stored with S3 objects, and this output's path is a local file",
                "outputs[0].placeholderOptions does nothing: the output asks for no placeholders",
            ], "\(local)")
    }

    /// The last of several formats is the `<img>` a browser falls back on: one not every browser
    /// shows leaves some with no image at all.
    @Test func aLastFormatNotEveryBrowserShowsIsNamed() throws {
        let output = { (formats: String) in
            #"{"name": "o", "widths": [320], "formats": \#(formats), "path": "out/{stem}-{width}.{format}"}"#
        }
        let avifLast = try warnings(output(#"["webp", "avif"]"#))
        #expect(avifLast.count == 1, "\(avifLast)")
        #expect(avifLast.first?.hasPrefix("outputs[0].formats: the last format, avif, is the fallback") == true, "\(avifLast)")
        #expect(avifLast.first?.hasSuffix("list one of jpeg, png, webp, gif last") == true, "\(avifLast)")
        #expect(try warnings(output(#"["avif", "webp"]"#)).isEmpty)
        #expect(try warnings(output(#"["jxl", "avif", "jpeg"]"#)).isEmpty)
        // One format alone is no set of sources with a fallback
        #expect(try warnings(output(#"["avif"]"#)).isEmpty)
    }

    @Test func theSameOptionsWhereTheyApplyAreNoWarning() throws {
        #expect(
            try warnings(
                #"{"name": "o", "encode": {"format": "png"}, "path": "s3://site/{stem}.png", "cacheControl": "max-age=60", "metadata": {"a": "b"}}"#
            ).isEmpty)
        #expect(
            try warnings(
                #"{"name": "o", "encode": {"format": "png"}, "path": "out/{stem}.png", "placeholders": ["lqip"], "placeholderOptions": {"lqipWidth": 16}}"#
            ).isEmpty)
    }
}
