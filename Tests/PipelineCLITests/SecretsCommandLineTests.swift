import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// Secrets through the real command: a token in a failing input's URL is shown as `…` on
/// stderr, in `--json` and in the report; a header's secret comes from the environment and is
/// printed nowhere, and an unset variable stops the run before it starts.
@Suite struct SecretsCommandLineTests {
    @Test func aFailingURLsTokenAndFragmentAreShownNowhere() throws {
        let server = try TestHTTPServer { _, _ in .init(status: 404) }
        let directory = try TemporaryDirectory()
        let url = server.url("/gone.jpg?access_token=SECRETTOKEN7&w=300#fragSECRET8")
        let json = """
            {"version": 1, "inputs": [\(JSONNode.quoted(url))], "fetch": {"retries": 0, "showQuery": ["w"]},
             "outputs": [{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}]}
            """
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")

        let plain = try CommandRunner.run([
            "run", "-v", "--report", directory.path + "/report", "--trace", directory.path + "/t.json", file,
        ])
        let machine = try CommandRunner.run(["run", "--json", "--force", file])
        #expect(plain.status == 1 && machine.status == 1, "\(plain.standardError)\n\(machine.standardError)")
        // The input was asked for as written.
        #expect(server.requests.first?.path == "/gone.jpg?access_token=SECRETTOKEN7&w=300")
        // It is named with its values hidden, but for the one showQuery lets show.
        let shown = "127.0.0.1:\(server.port)/gone.jpg?access_token=…&w=300#…"
        #expect(plain.standardError.contains(shown), "\(plain.standardError)")
        #expect(machine.standardOutput.contains(shown), "\(machine.standardOutput)")
        // JSON writes "/" as "\/": the report is read as JSON.
        let report = try Data(contentsOf: URL(fileURLWithPath: directory.path + "/report/report.json"))
        let items = (try JSONSerialization.jsonObject(with: report) as? [String: Any])?["items"] as? [[String: Any]]
        #expect((items?.first?["input"] as? String)?.hasSuffix(shown) == true, "\(String(decoding: report, as: UTF8.self))")
        let texts = [
            ("stderr", plain.standardError), ("stdout", plain.standardOutput), ("--json stdout", machine.standardOutput),
            ("--json stderr", machine.standardError),
        ]
        for (name, text) in texts {
            #expect(!text.contains("SECRETTOKEN7") && !text.contains("fragSECRET8"), "\(name): \(text)")
        }
        // Nor in any file the runs wrote: the report, its page, the trace, the journal.
        let walker = try #require(FileManager.default.enumerator(atPath: directory.path))
        var checked: [String] = []
        for case let relative as String in walker where relative != "pipeline.json" {
            guard let data = FileManager.default.contents(atPath: directory.path + "/" + relative) else { continue }
            checked.append(relative)
            for secret in ["SECRETTOKEN7", "fragSECRET8"] { #expect(data.range(of: Data(secret.utf8)) == nil, "\(secret) in \(relative)") }
        }
        #expect(checked.contains("report/report.json") && checked.contains("t.json"), "\(checked)")
    }

    @Test func aHeadersSecretComesFromTheEnvironmentAndIsPrintedNowhere() throws {
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 20))
        let server = try TestHTTPServer { request, _ in
            request.headers["x-api-key"] == "envSECRET9" ? .init(status: 200, body: photo) : .init(status: 401)
        }
        let directory = try TemporaryDirectory()
        let json = """
            {"version": 1, "inputs": [\(JSONNode.quoted(server.url("/a.jpg")))],
             "fetch": {"retries": 0, "headers": {"X-Api-Key": "${PIPELINE_TEST_API_KEY}"}},
             "outputs": [{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}]}
            """
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        let environment = ["PIPELINE_TEST_API_KEY": "envSECRET9"]
        var texts: [String] = []
        for arguments in [["validate", file], ["explain", file], ["run", "-v", "--json", file]] {
            let result = try CommandRunner.run(arguments, environment: environment)
            #expect(result.status == 0, "\(arguments[0]): \(result.standardError)")
            texts += [result.standardOutput, result.standardError]
        }
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/a.png"))
        #expect(server.requests.contains { $0.headers["x-api-key"] == "envSECRET9" })
        for text in texts { #expect(!text.contains("envSECRET9"), "\(text)") }
    }

    @Test func anUnsetVariableStopsRunAndValidateNamingItAndThePath() throws {
        let directory = try TemporaryDirectory()
        let json = """
            {"version": 1, "inputs": ["http://127.0.0.1:9/a.jpg"],
             "fetch": {"headers": {"X-Api-Key": "${PIPELINE_TEST_UNSET_3F7A}"}},
             "serve": {"key": "${PIPELINE_TEST_UNSET_KEY_3F7A}", "salt": "520f986b"},
             "outputs": [{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}]}
            """
        let file = try directory.write(Data(json.utf8), to: "pipeline.json")
        for command in ["run", "validate"] {
            let result = try CommandRunner.run([command, file])
            #expect(result.status == 2, "\(command): \(result.standardError)")
            #expect(
                result.standardError.contains("fetch.headers.X-Api-Key: the environment variable PIPELINE_TEST_UNSET_3F7A is not set"),
                "\(command): \(result.standardError)")
            #expect(
                result.standardError.contains("serve.key: the environment variable PIPELINE_TEST_UNSET_KEY_3F7A is not set"),
                "\(command): \(result.standardError)")
        }
    }
}
