import Foundation
import StandardProcessors
import Testing

@testable import PipelineKit

/// A secret stays out of the pipeline file: a whole value `"${NAME}"` in `fetch.headers`,
/// `serve.key` or `serve.salt` is read from the environment, and an unset one is a problem
/// naming the variable and the JSON path, never saying a value.
@Suite struct EnvironmentReferenceTests {
    func file(fetch: String = "{}", serve: String = "{}") -> String {
        """
        {"version": 1, "inputs": ["in/*.jpg"], "fetch": \(fetch), "serve": \(serve),
         "outputs": [{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}]}
        """
    }

    func definition(_ json: String, _ environment: [String: String]) throws(PipelineFileError) -> PipelineDefinition {
        try PipelineDefinition(json: json, baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard, environment: environment)
    }

    func problems(_ json: String, _ environment: [String: String]) -> [PipelineFileError.Problem] {
        do {
            _ = try definition(json, environment)
            return []
        } catch {
            return error.problems
        }
    }

    @Test func onlyAWholeReferenceIsRead() {
        #expect(EnvironmentReference("${API_KEY}") == .variable("API_KEY"))
        #expect(EnvironmentReference("${_a1}") == .variable("_a1"))
        for text in ["Bearer ${TOKEN}", "${TOKEN} ", "${1ABC}", "${A-B}", "${}", "$TOKEN", "{TOKEN}", "${TOKEN", "${A}${B}"] {
            #expect(EnvironmentReference(text) == .text(text), "\(text)")
        }
        // A "$" more writes the reference as text.
        #expect(EnvironmentReference("$${TOKEN}") == .text("${TOKEN}"))
        #expect(EnvironmentReference("$$${TOKEN}") == .text("$${TOKEN}"))
    }

    @Test func aHeaderValueIsReadFromTheEnvironment() throws {
        let json = file(fetch: #"{"headers": {"X-Api-Key": "${PIPELINE_TEST_KEY}", "Accept": "image/*", "X-Literal": "$${HOME}"}}"#)
        let read = try definition(json, ["PIPELINE_TEST_KEY": "s3cr3t-value"])
        #expect(read.fetch.headers == ["X-Api-Key": "s3cr3t-value", "Accept": "image/*", "X-Literal": "${HOME}"])
        #expect(read.warnings.isEmpty, "\(read.warnings)")
    }

    @Test func anUnsetOrEmptyVariableIsAProblemNamingItAndThePath() {
        let json = file(fetch: #"{"headers": {"X-Api-Key": "${PIPELINE_TEST_MISSING}"}}"#)
        let unset = problems(json, [:])
        #expect(unset.count == 1)
        #expect(unset.first?.path == "fetch.headers.X-Api-Key")
        #expect(unset.first?.message.contains("PIPELINE_TEST_MISSING is not set") == true, "\(unset)")
        #expect(unset.first?.location?.line == 1)
        let empty = problems(json, ["PIPELINE_TEST_MISSING": ""])
        #expect(empty.first?.message.contains("PIPELINE_TEST_MISSING is empty") == true, "\(empty)")
    }

    @Test func aValueThatWouldStartAnotherHeaderIsAProblemThatDoesNotSayIt() {
        let json = file(fetch: #"{"headers": {"X-Api-Key": "${PIPELINE_TEST_KEY}"}}"#)
        let found = problems(json, ["PIPELINE_TEST_KEY": "abc\r\nX-Evil: s3cr3t"])
        #expect(found.count == 1 && found.first?.path == "fetch.headers.X-Api-Key", "\(found)")
        #expect(found.first?.message.contains("environment variable PIPELINE_TEST_KEY holds a line break") == true, "\(found)")
        #expect(!found.description.contains("s3cr3t"))
    }

    /// libcurl sends any text as a header's name, and `userAgent` as its value: a space, a colon
    /// or a line break there would make another header.
    @Test func aHeaderNameThatIsNotATokenOrAUserAgentOverLinesIsAProblem() {
        let names = problems(file(fetch: #"{"headers": {"Bad Name": "v", "X-B:": "v", "": "v", "X-C\u0000": "v", "X-Ok_1.~": "v"}}"#), [:])
        #expect(
            Set(names.map(\.path)) == ["fetch.headers.Bad Name", "fetch.headers.X-B:", "fetch.headers.", "fetch.headers.X-C\\u0000"],
            "\(names)")
        #expect(names.allSatisfy { $0.message.contains("is not a header name") }, "\(names)")
        let agent = problems(file(fetch: #"{"userAgent": "ua\r\nInjected: yes"}"#), [:])
        #expect(agent.count == 1 && agent.first?.path == "fetch.userAgent", "\(agent)")
    }

    @Test func headersOfTheWrongTypeAreAProblemThatDoesNotQuoteThem() {
        let found = problems(file(fetch: #"{"headers": "Bearer s3cr3t"}"#), [:])
        #expect(found.count == 1 && found.first?.path == "fetch.headers", "\(found)")
        #expect(found.first?.message == "expected an object of strings, found a string", "\(found)")
        #expect(found.first?.location?.line == 1)
        #expect(!found.description.contains("s3cr3t"))
    }

    @Test func aReferenceInsideLongerTextIsSentAsWrittenWithAWarning() throws {
        let read = try definition(file(fetch: #"{"headers": {"Authorization": "Bearer ${TOKEN}"}}"#), ["TOKEN": "t"])
        #expect(read.fetch.headers["Authorization"] == "Bearer ${TOKEN}")
        #expect(read.warnings.contains { $0.hasPrefix("fetch.headers.Authorization: only a whole value") }, "\(read.warnings)")
    }

    @Test func theKeyAndSaltOfSignedURLsAreReadFromTheEnvironment() throws {
        let serve = #"{"key": "${PIPELINE_TEST_SERVE_KEY}", "salt": "${PIPELINE_TEST_SERVE_SALT}"}"#
        let read = try definition(file(serve: serve), ["PIPELINE_TEST_SERVE_KEY": "943b421c", "PIPELINE_TEST_SERVE_SALT": "520f986b"])
        #expect(read.serve.signing == ServeSettings.Signing(key: [0x94, 0x3b, 0x42, 0x1c], salt: [0x52, 0x0f, 0x98, 0x6b]))

        // Unset: named, and not taken for a missing key or salt.
        let unset = problems(file(serve: serve), ["PIPELINE_TEST_SERVE_KEY": "943b421c"])
        #expect(unset.map(\.path) == ["serve.salt"], "\(unset)")
        #expect(unset.first?.message.contains("PIPELINE_TEST_SERVE_SALT is not set") == true, "\(unset)")

        // Not hex: said to come from the variable, without saying the value.
        let notHex = problems(file(serve: serve), ["PIPELINE_TEST_SERVE_KEY": "zz-s3cr3t", "PIPELINE_TEST_SERVE_SALT": "520f986b"])
        #expect(notHex.map(\.path) == ["serve.key"], "\(notHex)")
        #expect(notHex.first?.message.contains("environment variable PIPELINE_TEST_SERVE_KEY") == true, "\(notHex)")
        #expect(!notHex.description.contains("s3cr3t"))
    }
}
