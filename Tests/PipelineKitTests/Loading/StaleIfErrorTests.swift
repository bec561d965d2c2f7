import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// `fetch.staleIfError`: a run whose origin is down, or failing, is carried by the cache.
@Suite struct StaleIfErrorTests {
    static let photo: Data = (try? Fixtures.jpeg(try Fixtures.gradient(width: 120, height: 80))) ?? Data()

    /// One 40 px JPEG per input, cached in the test's folder; `fetch` adds to the fetch section.
    func json(_ inputs: [String], fetch: String = "") -> String {
        PipelineHarness.json(
            inputs: inputs,
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 40}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ], extra: #""fetch": {"retries": 1\#(fetch)}, "cache": {"directory": "cache"}"#)
    }

    /// Serves the photo with an ETag (a conditional request gets a 304) until `failing` is set,
    /// then answers `failure` to everything.
    func origin(failing: Locked<Bool>, failure: Int = 503) throws -> TestHTTPServer {
        try TestHTTPServer { request, _ in
            if failing.withLock({ $0 }) { return .init(status: failure, headers: ["Retry-After": "0"]) }
            if request.headers["if-none-match"] == "\"v1\"" { return .init(status: 304, headers: ["ETag": "\"v1\""]) }
            return .init(status: 200, headers: ["ETag": "\"v1\""], body: Self.photo)
        }
    }

    @Test func aStoppedOriginLeavesAnUnchangedPipelineUpToDate() async throws {
        let server = try origin(failing: Locked(false))
        let directory = try TemporaryDirectory()
        let text = json([server.url("/a.jpg"), server.url("/b.jpg")])
        let first = try await PipelineHarness.run(text, in: directory)
        #expect(first.summary.succeeded == 2 && first.summary.outputsWritten == 2)
        let written = try FileManager.default.attributesOfItem(atPath: directory.path + "/out/a.jpg")[.modificationDate] as? Date

        server.stop()
        let (reports, summary) = try await PipelineHarness.run(text, in: directory)
        #expect(summary.succeeded == 2, "\(reports.flatMap(\.failures))")
        #expect(summary.failed == 0)
        #expect(summary.outputsWritten == 0)
        #expect(summary.outputsUpToDate == 2)
        #expect(summary.inputsServedStale == 2)
        let after = try FileManager.default.attributesOfItem(atPath: directory.path + "/out/a.jpg")[.modificationDate] as? Date
        #expect(written != nil && after == written)
    }

    @Test func anOriginAnswering503ServesTheCachedBytesAfterTheRetries() async throws {
        let failing = Locked(false)
        let server = try origin(failing: failing)
        let directory = try TemporaryDirectory()
        let text = json([server.url("/c.jpg")])
        _ = try await PipelineHarness.run(text, in: directory)
        let made = FileManager.default.contents(atPath: directory.path + "/out/c.jpg")
        // The output is removed, so the cached bytes themselves must be decoded and made again.
        try FileManager.default.removeItem(atPath: directory.path + "/out")

        failing.withLock { $0 = true }
        let (reports, summary) = try await PipelineHarness.run(text, in: directory)
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        #expect(summary.outputsWritten == 1)
        #expect(summary.inputsServedStale == 1)
        #expect(made != nil && FileManager.default.contents(atPath: directory.path + "/out/c.jpg") == made)
        // The first run's request, then the first attempt and one retry of the second run.
        #expect(server.requests(for: "/c.jpg").count == 3)
    }

    @Test func anOriginThatTimesOutIsAskedOnceNotOncePerInput() async throws {
        // Given three cached inputs whose origin then stops answering (it takes requests and stalls)
        let stalling = Locked(false)
        let server = try TestHTTPServer { _, _ in
            stalling.withLock { $0 } ? .init(behaviour: .stall) : .init(status: 200, headers: ["ETag": "\"v1\""], body: Self.photo)
        }
        let directory = try TemporaryDirectory()
        let inputs = ["/f.jpg", "/g.jpg", "/h.jpg"].map(server.url)
        // The short timeout only once the origin stalls: a sanitized process busy beside other
        // tests can take longer than that to be answered by a healthy one.
        func text(timeout: String) -> String {
            PipelineHarness.json(
                inputs: inputs,
                outputs: [
                    #"{"name": "t", "steps": [{"resize": {"width": 40}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
                ], extra: #""fetch": {"retries": 0, "timeout": "\#(timeout)", "concurrency": 1}, "cache": {"directory": "cache"}"#)
        }
        #expect(try await PipelineHarness.run(text(timeout: "60s"), in: directory).summary.succeeded == 3)

        stalling.withLock { $0 = true }
        let (reports, summary) = try await PipelineHarness.run(text(timeout: "1s"), in: directory)

        // Then the first input's timeout marks the origin down, and the others are served from
        // the cache without a request
        #expect(summary.succeeded == 3, "\(reports.flatMap(\.failures))")
        #expect(summary.inputsServedStale == 3)
        #expect(server.requests.count == 3 + 1)
    }

    @Test func aBodyCutShortOrARedirectToADeadServerLeavesTheOriginAsked() async throws {
        // Given a cached input whose origin then has a new version of it, beside an input whose
        // body it cuts short and one it redirects to a port where nothing listens
        let changed = Locked(false)
        let other = try Fixtures.jpeg(try Fixtures.noise(width: 90, height: 90))
        let server = try TestHTTPServer { request, _ in
            switch request.path {
            case "/cut.jpg": return .init(body: Self.photo, behaviour: .truncate(100))
            case "/to.jpg": return .init(status: 302, headers: ["Location": "http://127.0.0.1:9/gone.jpg"])
            default:
                let version = changed.withLock { $0 } ? "\"v2\"" : "\"v1\""
                if request.headers["if-none-match"] == version { return .init(status: 304, headers: ["ETag": version]) }
                return .init(status: 200, headers: ["ETag": version], body: version == "\"v1\"" ? Self.photo : other)
            }
        }
        let directory = try TemporaryDirectory()
        let text = json([server.url("/cut.jpg"), server.url("/to.jpg"), server.url("/a.jpg")], fetch: #", "concurrency": 1"#)
        #expect(try await PipelineHarness.run(text, in: directory).summary.succeeded == 1)
        changed.withLock { $0 = true }
        // When the next run fails the first two
        let (reports, summary) = try await PipelineHarness.run(text, in: directory)
        // Then the third is asked for all the same, and made from its new version
        #expect(summary.inputsServedStale == 0 && summary.outputsWritten == 1, "\(reports.flatMap(\.failures))")
        #expect(server.requests(for: "/a.jpg").count == 2)
        #expect(try VipsImage.open(file: directory.path + "/out/a.jpg").size == ImageSize(width: 40, height: 40))
        // And the redirect's failure names where it was sent
        let redirected = reports.flatMap(\.failures).first { $0.input.hasSuffix("/to.jpg") }
        #expect(redirected?.reason.hasPrefix("redirected to http://127.0.0.1:9/gone.jpg: ") == true, "\(String(describing: redirected))")
    }

    @Test func staleIfErrorFalseFailsAsBefore() async throws {
        let failing = Locked(false)
        let server = try origin(failing: failing)
        let directory = try TemporaryDirectory()
        let text = json([server.url("/d.jpg")], fetch: #", "staleIfError": false"#)
        #expect(try await PipelineHarness.run(text, in: directory).summary.succeeded == 1)

        failing.withLock { $0 = true }
        let (reports, summary) = try await PipelineHarness.run(text, in: directory)
        #expect(summary.failed == 1)
        #expect(summary.inputsServedStale == 0)
        #expect(reports[0].failures.first?.stage == .fetch)
        #expect(reports[0].failures.first?.reason == "HTTP 503 (after 2 attempts)")

        server.stop()
        let (stopped, stoppedSummary) = try await PipelineHarness.run(text, in: directory)
        #expect(stoppedSummary.failed == 1)
        #expect(stopped[0].failures.first?.error.kind == .network)
    }

    @Test func withoutACachedCopyTheInputFails() async throws {
        let server = try origin(failing: Locked(true))
        let directory = try TemporaryDirectory()
        let (reports, summary) = try await PipelineHarness.run(json([server.url("/e.jpg")]), in: directory)
        #expect(summary.failed == 1)
        #expect(summary.inputsServedStale == 0)
        #expect(reports[0].failures.first?.reason == "HTTP 503 (after 2 attempts)")
    }

    @Test func anAnswerAboutTheInputIsNotCoveredByTheCache() async throws {
        let failing = Locked(false)
        let server = try origin(failing: failing, failure: 404)
        let directory = try TemporaryDirectory()
        let text = json([server.url("/gone.jpg")])
        _ = try await PipelineHarness.run(text, in: directory)

        failing.withLock { $0 = true }
        let (reports, summary) = try await PipelineHarness.run(text, in: directory)
        #expect(summary.failed == 1)
        #expect(summary.inputsServedStale == 0)
        #expect(reports[0].failures.first?.reason == "HTTP 404")
    }

    @Test func theOptionIsDeclaredWithTheOtherFetchOptions() throws {
        let directory = try TemporaryDirectory()
        let on = try PipelineHarness.pipeline(json(["http://127.0.0.1:9/x.jpg"]), in: directory)
        #expect(on.definition.fetch.staleIfError)
        let off = try PipelineHarness.pipeline(json(["http://127.0.0.1:9/x.jpg"], fetch: #", "staleIfError": false"#), in: directory)
        #expect(!off.definition.fetch.staleIfError)
        #expect(throws: (any Error).self) {
            try PipelineHarness.pipeline(json(["http://127.0.0.1:9/x.jpg"], fetch: #", "staleIfError": "yes""#), in: directory)
        }
    }
}
