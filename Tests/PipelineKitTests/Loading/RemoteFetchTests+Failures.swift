import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// HTTP inputs that fail: statuses, retries, limits, refused and stalled connections, answers
/// that are not HTTP; each reported with the URL, the stage and the reason.
extension RemoteFetchTests {
    @Test func notFoundFailsAtOnceWithoutRetrying() async throws {
        let server = try TestHTTPServer { _, _ in .init(status: 404, body: Data("no".utf8)) }
        let directory = try TemporaryDirectory()
        let good = try servePhoto()
        let (reports, summary) = try await PipelineHarness.run(json([server.url("/missing.jpg"), good.url("/ok.jpg")]), in: directory)
        #expect(summary.failed == 1 && summary.succeeded == 1)
        let failure = reports.flatMap(\.failures).first
        #expect(failure?.input == server.url("/missing.jpg"))
        #expect(failure?.stage == .fetch)
        #expect(failure?.reason == "HTTP 404")
        #expect(server.requests.count == 1)
    }

    @Test func serviceUnavailableIsRetriedUntilItSucceeds() async throws {
        let server = try TestHTTPServer { _, number in
            number == 1
                ? .init(status: 503, headers: ["Retry-After": "0"]) : .init(status: 200, headers: ["ETag": "\"x\""], body: Self.photo)
        }
        let directory = try TemporaryDirectory()
        let (_, summary) = try await PipelineHarness.run(json([server.url("/flaky.jpg")]), in: directory)
        #expect(summary.succeeded == 1)
        #expect(server.requests.count == 2)
    }

    @Test func persistentServerErrorsFailAfterTheRetries() async throws {
        let server = try TestHTTPServer { _, _ in .init(status: 500) }
        let directory = try TemporaryDirectory()
        let (reports, _) = try await PipelineHarness.run(json([server.url("/down.jpg")], fetch: #"{"retries": 2}"#), in: directory)
        #expect(reports[0].failures.first?.reason == "HTTP 500 (after 3 attempts)")
        #expect(server.requests.count == 3)
    }

    @Test func aRetryAfterLongerThanARetryWaitsFailsAtOnceSayingSo() async throws {
        // Given an origin that asks to be asked again in an hour, as a date or in seconds
        let server = try TestHTTPServer { request, _ in
            request.path == "/date.jpg"
                ? .init(status: 503, headers: ["Retry-After": "Wed, 21 Oct 2099 07:28:00 GMT"])
                : .init(status: 429, headers: ["Retry-After": "3600"])
        }
        let directory = try TemporaryDirectory()

        // When a run with retries fetches both
        let text = json([server.url("/seconds.jpg"), server.url("/date.jpg")], fetch: #"{"retries": 2}"#)
        let (reports, summary) = try await PipelineHarness.run(text, in: directory)

        // Then each fails after one request, instead of waiting out its retries, saying why
        #expect(summary.failed == 2)
        #expect(server.requests.count == 2)
        let reasons = Dictionary(uniqueKeysWithValues: reports.flatMap(\.failures).map { ($0.input, $0.reason) })
        #expect(reasons[server.url("/seconds.jpg")] == "HTTP 429 (Retry-After: 3600 s, past the 60 s a retry waits at most)")
        #expect(reasons[server.url("/date.jpg")]?.hasPrefix("HTTP 503 (Retry-After: ") == true, "\(reasons)")
    }

    /// libcurl refuses a header line over 100 KB as "Out of memory": the reason says what does that.
    @Test func aHeaderLineLibcurlCannotTakeIsSaidAsSuch() async throws {
        let server = try TestHTTPServer { _, _ in
            .init(status: 200, headers: ["X-Huge": String(repeating: "a", count: 200_000)], body: Self.photo)
        }
        let directory = try TemporaryDirectory()
        let (reports, _) = try await PipelineHarness.run(json([server.url("/huge.jpg")], fetch: #"{"retries": 0}"#), in: directory)
        let reason = try #require(reports.first?.failures.first?.reason)
        #expect(reason.hasPrefix("libcurl could not take the answer: a header line larger than 100 KB does this"), "\(reason)")
    }

    @Test func aBodyOverMaxBytesIsStoppedEarly() async throws {
        let big = Data(repeating: 0x41, count: 16 << 20)
        let server = try TestHTTPServer { request, _ in
            request.path == "/declared.jpg"
                ? .init(status: 200, body: big)
                : .init(status: 200, body: big, behaviour: .stream(chunk: 64 << 10))
        }
        let directory = try TemporaryDirectory()
        let text = json([server.url("/streamed.jpg"), server.url("/declared.jpg")], fetch: #"{"maxBytes": "1MB", "retries": 0}"#)
        let (reports, summary) = try await PipelineHarness.run(text, in: directory)
        #expect(summary.failed == 2)
        for failure in reports.flatMap(\.failures) {
            #expect(failure.stage == .fetch)
            #expect(failure.reason.contains("larger than fetch.maxBytes"))
        }
        // The streamed body was cut off near the limit, not downloaded first (socket buffers
        // let the server get a few MB ahead, far from the 16 MB it would have sent).
        #expect(server.bytesSent(for: "/streamed.jpg") < 8 << 20)
    }

    @Test func aRefusedConnectionIsRetriedThenReported() async throws {
        // A port that was just listening and is closed now: connecting is refused at once.
        let server = try servePhoto()
        let url = server.url("/gone.jpg")
        server.stop()
        let directory = try TemporaryDirectory()
        let (reports, _) = try await PipelineHarness.run(json([url], fetch: #"{"retries": 1}"#), in: directory)
        let failure = reports[0].failures.first
        #expect(failure?.stage == .fetch)
        #expect(failure?.reason.contains("(after 2 attempts)") == true, "\(failure?.reason ?? "")")
    }

    @Test func aRedirectToAnotherSchemeIsRefused() async throws {
        let server = try TestHTTPServer { _, _ in .init(status: 302, headers: ["Location": "file:///etc/passwd"]) }
        let directory = try TemporaryDirectory()
        let (reports, _) = try await PipelineHarness.run(json([server.url("/sneaky.jpg")]), in: directory)
        let failure = reports[0].failures.first
        #expect(failure?.stage == .fetch)
        #expect(failure?.reason.contains("not http or https") == true)
    }

    /// An answer that is not HTTP (or an HTTP version libcurl does not speak) is said to be so,
    /// not taken for a refused redirect, and is retried as a connection's failure is.
    @Test func anAnswerThatIsNotHTTPIsNamedAndRetried() async throws {
        let server = try TestHTTPServer { request, number in
            if request.path == "/garbage.jpg" { return .init(behaviour: .raw(Data("garbage not http\r\n\r\n".utf8))) }
            return number == 1
                ? .init(behaviour: .raw(Data("HTTP/1.7 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)))
                : .init(status: 200, headers: ["ETag": "\"x\""], body: Self.photo)
        }
        let directory = try TemporaryDirectory()
        let (reports, summary) = try await PipelineHarness.run(
            json([server.url("/garbage.jpg"), server.url("/once.jpg")], fetch: #"{"retries": 1}"#), in: directory)
        #expect(summary.succeeded == 1 && server.requests(for: "/once.jpg").count == 2, "\(reports.flatMap(\.failures))")
        let failure = try #require(reports.flatMap(\.failures).first)
        #expect(failure.input == server.url("/garbage.jpg") && failure.stage == .fetch)
        #expect(
            failure.reason.hasPrefix("the server's answer is not HTTP libcurl can read") && failure.reason.hasSuffix("(after 2 attempts)"),
            "\(failure.reason)")
        #expect(server.requests(for: "/garbage.jpg").count == 2)
    }

    /// A URL libcurl would refuse at every fetch is refused when the file is planned, named with
    /// its credentials hidden.
    @Test func aURLLibcurlCannotFetchIsAnErrorInTheFile() throws {
        let directory = try TemporaryDirectory()
        let urls = ["http://127.0.0.1:9/e f.jpg", "http://127.0.0.1:99999/n.jpg", "http://user:secret@/o.jpg", "http://127.0.0.1:9/ok.jpg"]
        let error = #expect(throws: PipelineFileError.self) { try PipelineHarness.pipeline(json(urls), in: directory).plan() }
        let problems = error?.problems ?? []
        #expect(problems.map(\.path) == ["inputs[0]", "inputs[1]", "inputs[2]"], "\(problems)")
        #expect(problems.allSatisfy { $0.message.contains("is not a URL libcurl can fetch: ") }, "\(problems)")
        #expect(problems.first?.message.hasSuffix("(write a space as %20)") == true, "\(problems)")
        #expect(!"\(problems)".contains("secret"))
    }

    /// libcurl would time a transfer out at once; a decode's "0s" means no limit, which a
    /// transfer may not have.
    @Test func aFetchTimeoutOfNothingIsAnErrorInTheFile() {
        let error = #expect(throws: PipelineFileError.self) {
            try PipelineDefinition(
                json: json(["http://127.0.0.1:9/a.jpg"], fetch: #"{"timeout": "0s", "connectTimeout": 0}"#),
                baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
        }
        let problems = error?.problems ?? []
        #expect(Set(problems.map(\.path)) == ["fetch.timeout", "fetch.connectTimeout"], "\(problems)")
        #expect(problems.allSatisfy { $0.message.hasPrefix("must be more than 0") }, "\(problems)")
    }

    @Test func aStalledServerHitsTheTimeout() async throws {
        let server = try TestHTTPServer { _, _ in .init(behaviour: .stall) }
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let (reports, _) = try await PipelineHarness.run(
            json([server.url("/slow.jpg")], fetch: #"{"timeout": "300ms", "retries": 0}"#), in: directory)
        #expect(reports[0].failures.first?.reason.hasPrefix("timed out") == true)
    }

    @Test func aTruncatedResponseFailsAndIsNotCached() async throws {
        let server = try TestHTTPServer { _, _ in
            .init(status: 200, headers: ["ETag": "\"t\""], body: Self.photo, behaviour: .truncate(Self.photo.count / 2))
        }
        let directory = try TemporaryDirectory()
        let (reports, _) = try await PipelineHarness.run(json([server.url("/cut.jpg")], fetch: #"{"retries": 0}"#), in: directory)
        #expect(reports[0].failures.first?.stage == .fetch)
        #expect(DiskCache(directory: directory.url.appendingPathComponent("cache"), maxSize: 1 << 30).statistics().entries == 0)
    }
}
