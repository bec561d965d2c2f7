import Foundation

/// The fetch stage for URLs: one `DataLoading` attempt after another, politely. Connection
/// errors, timeouts, 429 and 5xx are retried with exponential backoff and jitter (or after the
/// server's `Retry-After`, unless it asks for longer than a retry waits: then the status is
/// final at once, as the server will not answer sooner); other 4xx are final. With a cached response it asks conditionally,
/// so an unchanged image costs a `304` and no body.
struct RemoteFetcher: Sendable {
    /// What the server said, once it said something final.
    enum Outcome: Sendable {
        case fetched(DataResponse)
        case notModified(DataResponse)
    }

    let loader: any DataLoading
    let settings: FetchSettings
    /// The first retry waits about this long; each further one twice as long.
    var backoffBase: Double = 0.25
    /// No single wait is longer; a `Retry-After` that asks for longer ends the retries.
    var longestWait: Double = 60
    /// Whether the requests of `fetch(_:revalidating:isCancelled:)` take the file's
    /// `fetch.headers` (`DataRequest.sendsFileHeaders`): an input's do, an overlay's do not.
    var sendsFileHeaders = true

    func fetch(_ url: String, revalidating cached: CachedResponse?, isCancelled: @escaping @Sendable () -> Bool) throws -> Outcome {
        var request = DataRequest(url: url, maxBytes: settings.maxBytes)
        request.sendsFileHeaders = sendsFileHeaders
        return try fetch(request, revalidating: cached, isCancelled: isCancelled)
    }

    /// Explains a final status that is not a success (S3 reads its error body), with the
    /// underlying error to keep.
    typealias StatusExplanation = @Sendable (DataResponse) -> (reason: String, underlying: any Error)

    /// Makes `request` (its headers plus the cached copy's validators) until a final answer.
    ///
    /// - Parameters:
    ///   - label: put before every failure's reason (S3 names the operation, bucket and key).
    ///   - accepting: statuses returned as answers, not thrown (a `HEAD` that finds nothing).
    ///   - explain: the reason for a failing status; by default "HTTP 404".
    func fetch(
        _ request: DataRequest, revalidating cached: CachedResponse?, label: String? = nil, accepting: Set<Int> = [],
        explain: StatusExplanation? = nil, isCancelled: @escaping @Sendable () -> Bool
    ) throws -> Outcome {
        var request = request
        request.headers.merge(cached?.validatingHeaders ?? [:]) { $1 }
        let prefix = label.map { $0 + ": " } ?? ""
        let explain = explain ?? { response in ("HTTP \(response.status)", HTTPStatusError(status: response.status)) }
        var attempt = 0
        while true {
            if isCancelled() { throw CancellationError() }
            let attempts = attempt == 0 ? "" : " (after \(attempt + 1) attempts)"
            let response: DataResponse
            do {
                response = try loader.load(request, isCancelled: isCancelled)
            } catch {
                if error.kind == .cancelled { throw CancellationError() }
                if error.isRetryable, attempt < settings.retries {
                    try wait(backoff(attempt), isCancelled: isCancelled)
                    attempt += 1
                    continue
                }
                // A loader's message may quote a URL (a redirect's target): shown as every URL is.
                throw ItemError(
                    error.kind == .tooLarge ? .tooLarge : .network, stage: .fetch,
                    reason: prefix + settings.redaction.redactURLs(in: error.message) + attempts, underlying: error)
            }
            switch response.status {
            case 304 where cached != nil:
                return .notModified(response)
            case _ where accepting.contains(response.status):
                return .fetched(response)
            case 206 where !request.headers.keys.contains(where: { $0.lowercased() == "range" }):
                // Part of the file, to a request for all of it: never taken (nor cached) for the file.
                let range = response.headers["content-range"].map { " (Content-Range: \($0.prefix(100)))" } ?? ""
                throw ItemError(
                    .httpStatus, stage: .fetch,
                    reason: prefix + "HTTP 206: the server sent part of the file\(range), which was not asked for",
                    underlying: HTTPStatusError(status: 206))
            case 200..<300 where response.status != 204 || request.method != "GET":
                return .fetched(response)
            case 429, 500..<600:
                var why = ""
                if attempt < settings.retries {
                    let asked = retryAfter(response)
                    if let asked, asked > longestWait {
                        why = " (Retry-After: \(Int(asked.rounded(.up))) s, past the \(Int(longestWait)) s a retry waits at most)"
                    } else {
                        try wait(asked ?? backoff(attempt), isCancelled: isCancelled)
                        attempt += 1
                        continue
                    }
                }
                let (reason, underlying) = explain(response)
                throw ItemError(.httpStatus, stage: .fetch, reason: prefix + reason + attempts + why, underlying: underlying)
            default:
                let (reason, underlying) = explain(response)
                throw ItemError(.httpStatus, stage: .fetch, reason: prefix + reason, underlying: underlying)
            }
        }
    }

    /// Exponential backoff with jitter: between half and all of base × 2^attempt, so that many
    /// clients failing together do not retry together.
    func backoff(_ attempt: Int) -> Double {
        let ceiling = min(longestWait, backoffBase * pow(2, Double(attempt)))
        return Double.random(in: (ceiling / 2)...ceiling)
    }

    /// The wait in seconds a `Retry-After` header asks for: seconds, or an HTTP date.
    func retryAfter(_ response: DataResponse, now: Date = Date()) -> Double? {
        guard let value = response.headers["retry-after"]?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Double(value) { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// Sleeps on the fetch queue's thread, waking early when the run is cancelled.
    private func wait(_ seconds: Double, isCancelled: @Sendable () -> Bool) throws {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if isCancelled() { throw CancellationError() }
            Thread.sleep(forTimeInterval: min(0.02, max(0, end.timeIntervalSinceNow)))
        }
    }
}
