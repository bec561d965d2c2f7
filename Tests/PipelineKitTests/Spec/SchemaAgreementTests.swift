import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// `pipeline schema` describes exactly what the pipeline file's own check takes: a value an
/// editor's schema check passes is one `validate` passes, and the reverse. Checked with an
/// independent validator, Python's `jsonschema`.
@Suite struct SchemaAgreementTests {
    /// A pipeline file with `timeout` as `fetch.timeout`, `maxBytes` as `fetch.maxBytes` and
    /// `colour` as a rotation's background.
    static func file(timeout: String = #""30s""#, maxBytes: String = #""50MB""#, colour: String = #""white""#) -> String {
        #"{"version": 1, "inputs": ["in/*.jpg"], "fetch": {"timeout": \#(timeout), "maxBytes": \#(maxBytes)}, "#
            + #""outputs": [{"name": "o", "steps": [{"rotate": {"angle": 10, "background": \#(colour)}}], "#
            + #""encode": {"format": "png"}, "path": "out/{stem}.png"}]}"#
    }

    static let files: [String] = [
        file(timeout: #""30s""#), file(timeout: #""30 s""#), file(timeout: #"" 30s""#), file(timeout: #""30s ""#),
        file(timeout: #""1.5m""#), file(timeout: #""30""#), file(timeout: "30"), file(timeout: #""-1s""#),
        file(maxBytes: #""5MB""#), file(maxBytes: #""5 MB""#), file(maxBytes: #"" 5MB""#), file(maxBytes: #""5MB ""#),
        file(maxBytes: #""5 ""#), file(maxBytes: #""5Mb""#),
        file(colour: #""WHITE""#), file(colour: #""Transparent""#), file(colour: ##""#FFF""##), file(colour: #"" white""#),
        file(colour: #""whit""#),
    ]

    @Test func theSchemaTakesWhatTheFilesOwnCheckTakes() throws {
        let directory = try TemporaryDirectory()
        let schema = try directory.write(Data(JSONSchemaGenerator.schema(processors: .standard).utf8), to: "schema.json")
        let documents = try Self.files.enumerated().map { index, json in try directory.write(Data(json.utf8), to: "p\(index).json") }
        let schemaErrors = try SchemaValidator.errorCounts(schema: schema, documents: documents)
        try #require(schemaErrors.count == Self.files.count)
        for (json, errors) in zip(Self.files, schemaErrors) {
            let checked = Result { try PipelineDefinition(json: json, baseDirectory: directory.url, processors: .standard) }
            let accepted = (try? checked.get()) != nil
            #expect(
                accepted == (errors == 0),
                "validate \(accepted ? "takes" : "refuses") and the schema \(errors == 0 ? "takes" : "refuses") \(json)")
        }
    }

    @Test func aDurationPastAYearIsSaidToBeOutOfRangeNotNoDuration() {
        do {
            _ = try PipelineDefinition(
                json: Self.file(timeout: #""1000000h""#), baseDirectory: URL(fileURLWithPath: "/site"), processors: .standard)
            Issue.record("a million hours was taken")
        } catch {
            #expect("\(error)".contains(#"fetch.timeout: "1000000h" is out of range: expected a duration of 0 to a year"#), "\(error)")
        }
    }
}
