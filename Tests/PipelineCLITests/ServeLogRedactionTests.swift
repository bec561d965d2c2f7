#if Server
import Foundation
import PipelineKit
import TestSupport
import Testing

/// `pipeline serve --log-level trace` logs everything but secrets: not the signing key or salt
/// (in any spelling), not a URL's signature, not a signed query's values, not a request's header
/// values.
@Suite struct ServeLogRedactionTests {
    static let key = "943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"
    static let salt = "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"

    /// `pipeline serve` of a file signed with `key` and `salt`, logging at `logLevel`; its folder
    /// (kept while it runs), and its port once it says where it listens.
    static func signedServer(logLevel: String) throws -> (folder: TemporaryDirectory, command: BackgroundCommand, port: Int?) {
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [ServeCommandTests.thumb], inputPattern: "in/*.jpg")
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [ServeCommandTests.thumb], extra: #""serve": {"key": "\#(Self.key)", "salt": "\#(Self.salt)"}"#)
        try directory.write(Data(json.utf8), to: "p.json")
        let command = try BackgroundCommand(["serve", "p.json", "--port", "0", "--log-level", logLevel], in: directory.url)
        let line = command.waitForLine(timeout: 180) { !$0.isError && $0.text.hasPrefix("Serving ") }
        return (directory, command, line?.text.split(separator: ":").last.flatMap { Int($0) })
    }

    @Test func traceLogsNoSecret() throws {
        let (folder, command, listening) = try Self.signedServer(logLevel: "trace")
        // The folder is kept until the server is stopped.
        defer { withExtendedLifetime(folder) { command.kill() } }
        let port = try #require(listening, "\(command.transcript)")
        // A signed URL (signature computed apart, with Python's hmac) that expires in 2100, with a secret header
        let target = "/ycnbevbThOVYmG5Zib2HI0EJKZ1YVCLtX5-KeeLaN1s/thumb/p0.jpg?expires=4102444800"
        let response = try LoopbackHTTPClient.send(port: port, target: target, headers: ["Authorization": "Bearer hunter2-token"])
        #expect(response.status == 200 || response.status == 403, "\(response.status)")
        let mark = command.lineCount
        _ = try LoopbackHTTPClient.send(port: port, target: "/healthz")
        _ = command.waitForLine(after: mark, timeout: 60) { $0.isError && $0.text.contains("path=/healthz") }
        command.signal(SIGTERM)
        #expect(command.waitForExit(timeout: 120) == 0, "\(command.transcript)")

        let transcript = command.transcript
        #expect(transcript.contains("trace"), "nothing logged at trace:\n\(transcript)")
        let keyBytes = stride(from: 0, to: Self.key.count, by: 2).map { offset -> String in
            let start = Self.key.index(Self.key.startIndex, offsetBy: offset)
            return String(UInt8(Self.key[start..<Self.key.index(start, offsetBy: 2)], radix: 16) ?? 0)
        }
        for secret in [
            Self.key, Self.salt, "943B421C", keyBytes.prefix(6).joined(separator: ", "), "hunter2-token", "expires=4102444800",
        ] {
            #expect(!transcript.contains(secret), "\(secret) is in:\n\(transcript)")
        }
    }

    /// The signature of `path` under the test's key and salt, as imgproxy signs: computed here
    /// from the HMAC, not by the server's code.
    static func signature(of path: String) -> String {
        func bytes(_ hex: String) -> [UInt8] {
            stride(from: 0, to: hex.count, by: 2).map { offset in
                let start = hex.index(hex.startIndex, offsetBy: offset)
                return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16) ?? 0
            }
        }
        let mac = SHA256.hmac(key: bytes(key), message: bytes(salt) + Array(path.utf8))
        return Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test func debugLogsNoSignature() throws {
        let (folder, command, listening) = try Self.signedServer(logLevel: "debug")
        // The folder is kept until the server is stopped.
        defer { withExtendedLifetime(folder) { command.kill() } }
        let port = try #require(listening, "\(command.transcript)")
        // Signed paths answered, one refused (a signature for another path), and a path the
        // signature does not start with
        let output = Self.signature(of: "/thumb/p0.jpg")
        let info = Self.signature(of: "/info/p0.jpg")
        // and a query value with a line end, which a refusal's reason quotes
        let forged = "/\(output)/thumb/p0.jpg?width=1%0A2026-12-03T16:16:00Z%20critical%20pipeline:%20forged"
        // and one with fields of its own, which the reason quotes too
        let fields = "/\(output)/thumb/p0.jpg?width=x%22%20status=200%20bytes=0%20method=DELETE"
        let targets = ["/\(output)/thumb/p0.jpg", "/\(info)/info/p0.jpg", "/\(output)/info/p0.jpg", forged, fields, "/\(info)/nothing"]
        var statuses: [Int] = []
        for target in targets { statuses.append(try LoopbackHTTPClient.send(port: port, target: target).status) }
        #expect(statuses == [200, 200, 403, 400, 400, 403], "\(command.transcript)")
        _ = command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("path=/_/nothing") }
        command.signal(SIGTERM)
        #expect(command.waitForExit(timeout: 120) == 0, "\(command.transcript)")

        let transcript = command.transcript
        // Every request was logged, by its path below the signature
        for path in ["/_/thumb/p0.jpg", "/_/info/p0.jpg", "/_/nothing"] {
            #expect(transcript.contains("path=\(path)"), "\(path) is not in:\n\(transcript)")
        }
        for secret in [output, info] {
            #expect(!transcript.contains(secret), "\(secret) is in:\n\(transcript)")
        }
        // The line end is written as an escape: no line of the log is the forged one
        #expect(transcript.contains("1\\n2026-12-03T16:16:00Z critical pipeline: forged"), "\(transcript)")
        #expect(!transcript.split(separator: "\n").contains { $0.hasPrefix("2026-12-03T16:16:00Z critical") }, "\(transcript)")
        // Outside its quotes, the line of the request with fields in its query has one status, its own
        let line = try #require(transcript.split(separator: "\n").first { $0.contains("method=DELETE") }, "\(transcript)")
        var unquoted = ""
        var quoted = false
        var escaped = false
        for character in line {
            if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { quoted.toggle() }
            if !quoted { unquoted.append(character) }
        }
        #expect(unquoted.components(separatedBy: " status=").count == 2 && unquoted.contains("status=400"), "\(line)")
        #expect(!unquoted.contains("method=DELETE"), "\(line)")
    }
}
#endif
