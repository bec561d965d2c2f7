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
