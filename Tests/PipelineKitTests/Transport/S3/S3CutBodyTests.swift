import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// An object whose body came cut, by a gateway that cut its Content-Length too, is a failed
/// fetch, not a file kept: cached, it would be answered "not modified" on every later run.
struct S3CutBodyTests {
    @Test func anObjectShorterThanItsListingIsFetchedAgainByTheNextRun() async throws {
        // Given a listed object whose first GET comes cut to half, and an endpoint that answers
        // "not modified" to a request for the version it has
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 48))
        let etag = "\"0123456789abcdef0123456789abcdef\""
        let gets = Locked(0)
        let server = try TestHTTPServer { request, _ in
            if request.path.contains("list-type=2") {
                let listing =
                    "<?xml version=\"1.0\"?><ListBucketResult><Name>photos</Name><IsTruncated>false</IsTruncated><Contents>"
                    + "<Key>in/a.jpg</Key><ETag>\(etag)</ETag><Size>\(photo.count)</Size></Contents></ListBucketResult>"
                return TestHTTPServer.Response(headers: ["content-type": "application/xml"], body: Data(listing.utf8))
            }
            if request.headers["if-none-match"] == etag { return TestHTTPServer.Response(status: 304, headers: ["ETag": etag]) }
            let first = gets.withLock { count in
                count += 1
                return count == 1
            }
            return TestHTTPServer.Response(headers: ["ETag": etag], body: first ? photo.prefix(photo.count / 2) : photo)
        }
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        var pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(
                inputs: ["s3://photos/in/*.jpg"], outputs: [#"{"name": "small", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#],
                extra: #""fetch": {"retries": 0}"#),
            in: directory)
        pipeline.environment = [
            "AWS_ACCESS_KEY_ID": "AKIACUTCUTCUTCUT0001", "AWS_SECRET_ACCESS_KEY": "cutSecret",
            "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:\(server.port)", "AWS_REGION": "us-east-1", "HOME": directory.path,
        ]

        // When it runs, the cut body fails the fetch, saying so
        let first = try await pipeline.run().collect()
        let failure = try #require(first.reports.flatMap(\.failures).first)
        #expect(failure.stage == .fetch, "\(failure)")
        #expect(
            failure.reason.hasSuffix("\(photo.count / 2) bytes came of the \(photo.count) its listing gives: the answer was cut on its way")
        )

        // And the next run fetches the whole object and makes its output
        let second = try await pipeline.run().collect()
        #expect(second.summary?.succeeded == 1, "\(second.reports.flatMap(\.failures))")
        #expect(gets.withLock { $0 } == 2)
    }
}
