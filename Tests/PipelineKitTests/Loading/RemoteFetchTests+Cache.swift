import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// What the cache keeps of an answer, and for how long: only a whole file, fresh for what is
/// left of its `max-age`, and given only to a file asking with the same headers.
extension RemoteFetchTests {
    @Test func theAgeAnAnswerBringsIsTakenOffItsMaxAge() async throws {
        // Given two answers fresh for an hour, one of which spent it all in a CDN on its way
        let server = try TestHTTPServer { request, _ in
            let age = request.path == "/old.jpg" ? "3600" : "10"
            return .init(status: 200, headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=3600", "Age": age], body: Self.photo)
        }
        let directory = try TemporaryDirectory()
        let text = json([server.url("/old.jpg"), server.url("/new.jpg")])
        _ = try await PipelineHarness.run(text, in: directory)
        // When the pipeline runs again
        #expect(try await PipelineHarness.run(text, in: directory).summary.succeeded == 2)
        // Then the one with no freshness left is asked again, and the other is not
        #expect(server.requests(for: "/old.jpg").count == 2)
        #expect(server.requests(for: "/new.jpg").count == 1)
    }

    @Test func partOfTheFileToARequestForAllOfItIsRefusedAndNotCached() async throws {
        // Given a server that answers part of the file, fresh for an hour, to a request without a range
        let whole = Locked(false)
        let server = try TestHTTPServer { _, _ in
            if whole.withLock({ $0 }) { return .init(status: 200, headers: ["ETag": "\"v1\""], body: Self.photo) }
            let half = Self.photo.prefix(Self.photo.count / 2)
            return .init(
                status: 206,
                headers: [
                    "ETag": "\"v1\"", "Cache-Control": "max-age=3600", "Content-Range": "bytes 0-\(half.count - 1)/\(Self.photo.count)",
                ],
                body: Data(half))
        }
        let directory = try TemporaryDirectory()
        let text = json([server.url("/half.jpg")])
        // When it is fetched
        let (reports, summary) = try await PipelineHarness.run(text, in: directory)
        // Then the fetch fails saying so, and nothing is cached
        let failure = try #require(reports.flatMap(\.failures).first)
        #expect(summary.failed == 1 && failure.stage == .fetch)
        #expect(failure.reason.hasPrefix("HTTP 206: the server sent part of the file (Content-Range: bytes 0-"), "\(failure.reason)")
        #expect(DiskCache(directory: directory.url.appendingPathComponent("cache"), maxSize: 1 << 30).statistics().entries == 0)
        // And once the server answers whole, the next run asks it and makes the file
        whole.withLock { $0 = true }
        #expect(try await PipelineHarness.run(text, in: directory).summary.succeeded == 1)
        #expect(server.requests(for: "/half.jpg").count == 2)
    }

    @Test func anAnswerGotWithTheFilesHeadersIsNotGivenToAFileWithout() async throws {
        // Given an origin that gives the photo, fresh for an hour, only to a request with a key
        let server = try TestHTTPServer { request, _ in
            guard request.headers["x-key"] == "good" else { return .init(status: 403) }
            return .init(status: 200, headers: ["ETag": "\"v1\"", "Cache-Control": "private, max-age=3600"], body: Self.photo)
        }
        let directory = try TemporaryDirectory()
        let url = server.url("/private.jpg")
        // When a pipeline file with the key fetches it, then one with another key and one with
        // none, all three caching in one folder
        let keyed = try await PipelineHarness.run(json([url], fetch: #"{"headers": {"X-Key": "good"}}"#), in: directory)
        #expect(keyed.summary.succeeded == 1)
        let other = try await PipelineHarness.run(json([url], fetch: #"{"headers": {"X-Key": "bad"}}"#), in: directory)
        let none = try await PipelineHarness.run(json([url]), in: directory)
        // Then neither is given the first one's answer: the origin is asked, and refuses them
        #expect(other.summary.failed == 1 && none.summary.failed == 1)
        #expect(server.requests(for: "/private.jpg").count == 3)
        // And the first one's next run is, from the cache
        #expect(try await PipelineHarness.run(json([url], fetch: #"{"headers": {"X-Key": "good"}}"#), in: directory).summary.succeeded == 1)
        #expect(server.requests(for: "/private.jpg").count == 3)
    }

    @Test func aValidatorTooLongToSendBackIsNotKept() async throws {
        // Given a server whose ETag is 90 KB long, and which refuses a request carrying it
        let etag = "\"" + String(repeating: "e", count: 90_000) + "\""
        let server = try TestHTTPServer { request, _ in
            guard request.headers["if-none-match"] == nil else { return .init(status: 431) }
            return .init(status: 200, headers: ["ETag": etag], body: Self.photo)
        }
        let directory = try TemporaryDirectory()
        let text = json([server.url("/long.jpg")])
        #expect(try await PipelineHarness.run(text, in: directory).summary.succeeded == 1)
        // When the pipeline runs again
        let (reports, summary) = try await PipelineHarness.run(text, in: directory)
        // Then it is fetched whole, without the validator
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        #expect(server.requests(for: "/long.jpg").allSatisfy { $0.headers["if-none-match"] == nil })
    }
}
