import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// Retry waits, by themselves: exponential backoff with jitter, capped, and `Retry-After` read.
struct RemoteFetcherTests {
    private struct NoLoader: DataLoading {
        func load(_ request: DataRequest, isCancelled: @escaping @Sendable () -> Bool) throws(FetchError) -> DataResponse {
            throw FetchError(.other, "not used")
        }
    }

    private let fetcher = RemoteFetcher(
        loader: NoLoader(),
        settings: FetchSettings(
            concurrency: 1, maxBytes: 1000, timeout: 1, connectTimeout: 1, retries: 2,
            headers: [:], userAgent: "test", maxRedirects: 0))

    @Test(arguments: 0..<6)
    func eachBackoffIsBetweenHalfAndAllOfTheDoubledBase(attempt: Int) {
        let ceiling = 0.25 * pow(2, Double(attempt))
        for _ in 0..<50 {
            let wait = fetcher.backoff(attempt)
            #expect(wait >= ceiling / 2 && wait <= ceiling, "attempt \(attempt) waited \(wait)")
        }
    }

    @Test func noBackoffIsLongerThanTheLongestWait() {
        #expect(fetcher.backoff(40) <= fetcher.longestWait)
        #expect(fetcher.backoff(40) >= fetcher.longestWait / 2)
    }

    @Test func retryAfterIsReadInSecondsOrAsAnHTTPDate() {
        func response(_ value: String) -> DataResponse { DataResponse(status: 503, body: Data(), headers: ["retry-after": value]) }
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(fetcher.retryAfter(response("3"), now: now) == 3)
        #expect(fetcher.retryAfter(response("-5"), now: now) == 0)
        #expect(fetcher.retryAfter(response("86400"), now: now) == 86400)
        #expect(fetcher.retryAfter(response("Tue, 14 Nov 2023 22:13:30 GMT"), now: now) == 10)
        #expect(fetcher.retryAfter(response("soon"), now: now) == nil)
        #expect(fetcher.retryAfter(DataResponse(status: 503, body: Data(), headers: [:]), now: now) == nil)
    }
}
