import Foundation
import Vips

/// What a client has learnt of whether its endpoint answers. After `silentAfter` requests in a
/// row got no answer at all (refused, reset, timed out, each after its retries), the requests
/// that follow fail at once for `holdOff` instead of each waiting out the timeouts and retries
/// again: with a dead endpoint, a thousand outputs would otherwise take hours to fail. After the
/// hold-off the endpoint is asked again, and any answer, an error status too, clears what was
/// learnt, so a server goes on once its endpoint is back.
final class EndpointReach: Sendable {
    /// How many requests in a row must go unanswered: one slow upload past `fetch.timeout` says
    /// little of the endpoint; several in a row, with nothing answered between, say it is gone.
    static let silentAfter = 3
    /// How long requests fail without being sent once the endpoint is found silent.
    let holdOff: Duration

    private struct Silence {
        /// Requests in a row that got no answer.
        var unanswered = 0
        /// When the last of them failed, and why.
        var last: (at: ContinuousClock.Instant, reason: String)?
    }
    private let silence = Locked(Silence())

    init(holdOff: Duration = .seconds(30)) {
        self.holdOff = holdOff
    }

    /// Why a request now is not to be sent, naming `endpoint`; nil to send it.
    func refusal(naming endpoint: String) -> String? {
        silence.withLock { silence in
            guard silence.unanswered >= Self.silentAfter, let last = silence.last else { return nil }
            let age = ContinuousClock.now - last.at
            guard age < holdOff else { return nil }
            return "not sent: \(endpoint) gave no answer to \(silence.unanswered) requests in a row, the last "
                + "\(Self.text(age)) ago (\(last.reason)); it is asked again \(Self.text(holdOff)) after that"
        }
    }

    /// Notes that a request was answered, whatever its status.
    func noteAnswered() {
        silence.withLock { $0 = Silence() }
    }

    /// Notes that a request got no answer, for `reason`.
    func noteUnanswered(_ reason: String) {
        silence.withLock { silence in
            silence.unanswered += 1
            silence.last = (.now, reason)
        }
    }

    /// `duration` as the pipeline file writes one, in whole seconds from one on.
    private static func text(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return Units.text(seconds: seconds >= 1 ? seconds.rounded() : seconds)
    }
}
