import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// The short forms sharp and eleventy-img users write: a format's name in `formats`, a path as
/// `manifest`. Each means its object form, the two forms mix, and a wrong value shows both.
@Suite struct ShorthandTests {
    func definition(_ json: String) throws -> PipelineDefinition {
        try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/site", isDirectory: true), processors: .standard)
    }

    func problems(_ json: String) -> String {
        do {
            _ = try definition(json)
            return ""
        } catch {
            return "\(error)"
        }
    }

    func output(formats: String) -> String {
        #"{"version": 1, "inputs": ["in/*.jpg"], "outputs": [{"name": "o", "widths": [320], "formats": \#(formats), "path": "out/{stem}.{format}"}]}"#
    }

    @Test func aFormatsNameIsTheFormatWithItsDefaultsAndMixesWithObjects() throws {
        let short = try definition(output(formats: #"["avif", "webp"]"#))
        let long = try definition(output(formats: #"[{"format": "avif"}, {"format": "webp"}]"#))
        #expect(short.outputs.map(\.encoder) == long.outputs.map(\.encoder))
        #expect(short.outputs.map(\.encoder.format) == [.avif, .webp])
        let mixed = try definition(output(formats: #"["avif", {"format": "webp", "quality": 70}]"#))
        #expect(mixed.outputs.map(\.encoder.quality) == [EncoderSettings(format: .avif).quality, 70])
    }

    @Test func aManifestPathIsTheManifestWithNoURLPrefix() throws {
        let json =
            #"{"version": 1, "inputs": ["in/*.jpg"], "manifest": "public/images.json", "#
            + #""outputs": [{"name": "o", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}]}"#
        let manifest = try #require(try definition(json).manifest)
        #expect(manifest.file.path == "/site/public/images.json")
        #expect(manifest.urlPrefix == "")
    }

    /// One file for the whole run: a folder's name or a placeholder in its path is a mistake
    /// that would write a file of another name.
    @Test func aManifestPathNamingAFolderOrHoldingAPlaceholderIsRefused() {
        for (path, said) in [
            ("public/", #"names a folder, not a file: name the manifest's file, such as "public/images.json""#),
            ("out/{output}-{stme}.json", "the manifest is one file for the whole run: its path takes no placeholder, such as {output}"),
        ] {
            let refused = problems(
                #"{"version": 1, "inputs": ["in/*.jpg"], "manifest": "\#(path)", "#
                    + #""outputs": [{"name": "o", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}]}"#)
            #expect(refused.contains("manifest.path: \(said)"), "\(refused)")
        }
    }

    @Test func aURLPrefixWithAQueryOrAFragmentIsRefused() {
        for (prefix, named) in [("https://cdn.example.com/img?v=1", "a query (?)"), ("/img#top", "a fragment (#)")] {
            let refused = problems(
                #"{"version": 1, "inputs": ["in/*.jpg"], "manifest": {"path": "m.json", "urlPrefix": "\#(prefix)"}, "#
                    + #""outputs": [{"name": "o", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}]}"#)
            #expect(refused.contains("manifest.urlPrefix: a folder's URL, before each file's path: it cannot have \(named)"), "\(refused)")
        }
    }

    @Test func aWrongValueShowsTheFormsExpected() {
        let misspelt = problems(output(formats: #"["avfi"]"#))
        #expect(misspelt.contains(#"outputs[0].formats[0]: unknown value "avfi""#), "\(misspelt)")
        #expect(misspelt.contains(#"did you mean "avif"?"#), "\(misspelt)")
        let number = problems(output(formats: "[3]"))
        #expect(number.contains(#"or an object with "format", found an integer"#), "\(number)")
        let manifest = problems(
            #"{"version": 1, "inputs": ["in/*.jpg"], "manifest": 5, "outputs": [{"name": "o", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}]}"#
        )
        #expect(
            manifest.contains(#"manifest: expected a string or an object with "path", "urlPrefix", "urlRoot", found an integer"#),
            "\(manifest)")
    }
}
