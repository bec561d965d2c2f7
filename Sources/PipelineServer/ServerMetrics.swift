#if Server
import Metrics
import Prometheus
import Vips

/// What `/metrics` reports, through swift-metrics into a Prometheus registry of the server's
/// own: not the process-wide `MetricsSystem`, so that a program embedding the server keeps its
/// own metrics backend, and two servers in one process count apart.
final class ServerMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let inFlight: Meter
    /// The requests started and not yet answered, as the meter shows them.
    private let requestsStarted = Locked(0)
    private let runsGoing: Meter
    private let runsWaiting: Meter

    init() {
        factory = PrometheusMetricsFactory(registry: registry)
        inFlight = Meter(label: "pipeline_serve_requests_in_flight", factory: factory)
        runsGoing = Meter(label: "pipeline_serve_runs", dimensions: [("state", "going")], factory: factory)
        runsWaiting = Meter(label: "pipeline_serve_runs", dimensions: [("state", "waiting")], factory: factory)
    }

    /// Counts a request from its start to its answer: in flight meanwhile.
    func started() {
        requestsStarted.withLock {
            $0 += 1; inFlight.set($0)
        }
    }

    /// The requests started and not yet answered now.
    var requestsInFlight: Int { requestsStarted.withLock { $0 } }

    /// The answers whose bodies, of several pieces, are being sent: their requests are answered
    /// (not in flight, for the meter), but a client still takes the body.
    private let bodiesSending = Locked(0)

    /// Counts a body of several pieces from its first piece until `bodyEnded()`.
    func bodyStarted() { bodiesSending.withLock { $0 += 1 } }

    /// Counts a body taken whole, or cut off.
    func bodyEnded() { bodiesSending.withLock { $0 -= 1 } }

    /// The requests in flight when the server went past its drain timeout; nil before.
    private let cutOff = Locked<Int?>(nil)

    /// Notes that the server went past its drain timeout and closed its connections: the
    /// requests in flight now are cut off, and so are the bodies still being sent, and no
    /// answer from now on is sent.
    func cutOffRequestsInFlight() {
        let inFlight = requestsInFlight + bodiesSending.withLock { $0 }
        cutOff.withLock { $0 = inFlight }
    }

    /// The requests cut off by `cutOffRequestsInFlight()`, or nil when it was not called.
    var requestsCutOff: Int? { cutOff.withLock { $0 } }

    /// Counts an answered request. `output` is the name of an output of the file, or nil for
    /// any other path (so that made-up paths add no series); `source` whether the file came
    /// from disk, from the bucket or was made, for a file.
    func finished(output: String?, status: Int, duration: Duration, source: String?) {
        requestsStarted.withLock {
            $0 -= 1; inFlight.set($0)
        }
        let name = output ?? "none"
        countAnswer(output: name, status: status)
        Timer(label: "pipeline_serve_request_duration_seconds", dimensions: [("output", name)], factory: factory)
            .recordNanoseconds(duration.nanoseconds)
        if let source {
            Counter(label: "pipeline_serve_files_total", dimensions: [("output", name), ("source", source)], factory: factory)
                .increment()
        }
    }

    /// Counts a request the HTTP parser refused with 400, before any route saw it: never in
    /// flight, and no output's.
    func refusedUnread() {
        countAnswer(output: "none", status: 400)
    }

    /// One more answer of `status` for the output named `output`.
    private func countAnswer(output: String, status: Int) {
        Counter(label: "pipeline_serve_requests_total", dimensions: [("output", output), ("status", String(status))], factory: factory)
            .increment()
    }

    /// Counts the `bytes` of an answer's body its connection took, for `output` as `finished` names it.
    func sent(output: String?, bytes: Int) {
        guard bytes > 0 else { return }
        Counter(label: "pipeline_serve_bytes_served_total", dimensions: [("output", output ?? "none")], factory: factory)
            .increment(by: bytes)
    }

    /// The metrics in Prometheus' text format, with the runs going and waiting now, for the
    /// request that reads them: which is not counted in flight, so that an idle server reads 0
    /// and an autoscaler's average is of the requests it is to scale for.
    func text(runs: (going: Int, waiting: Int)) -> [UInt8] {
        runsGoing.set(runs.going)
        runsWaiting.set(runs.waiting)
        requestsStarted.withLock { inFlight.set(max(0, $0 - 1)) }
        return registry.emitToBuffer()
    }
}

extension Duration {
    /// The duration in whole nanoseconds, as swift-metrics' timers take it.
    fileprivate var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
#endif
