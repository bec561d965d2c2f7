#if Server
import ArgumentParser
import Foundation
import ServiceLifecycle
import UnixSignals
import Vips

/// SIGTERM and Ctrl-C for `serve`, trapped before the inputs are listed and planned (seconds,
/// for a large folder or a bucket): one that comes then stops the command before it serves, with
/// a line that says so, where the signal's default action ended it without a word. Once the
/// server runs, the first drains it, and Ctrl-C pressed again cuts the drain short, with the
/// rules `Interruption` gives a run.
final class ServeStopSignals: Sendable {
    private struct State {
        var first: (signal: Int32, at: ContinuousClock.Instant)?
        var group: ServiceGroup?
        var serving: Task<Void, any Error>?
        var cutShort = false
    }
    private let state = Locked(State())
    private let watching: Task<Void, Never>

    init() async {
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        Interruption.waitUntilHandled([SIGTERM, SIGINT])
        let state = self.state
        watching = Task {
            for await signal in signals {
                await Self.handle(signal.rawValue, state: state)
            }
        }
    }

    private enum Action {
        case drain(ServiceGroup?)
        case cutShort(Task<Void, any Error>?)
        case nothing
    }

    /// What signal `number` does now: the first drains the server, or stops the command once
    /// the planning ends; a second Ctrl-C cuts the drain short, or ends the command at once.
    private static func handle(_ number: Int32, state: Locked<State>) async {
        let now = ContinuousClock.now
        let action = state.withLock { state -> Action in
            guard let earlier = state.first else {
                state.first = (number, now)
                return .drain(state.group)
            }
            // The same Ctrl-C sent twice (`timeout -s INT`, a kill of the process group) and a
            // repeated SIGTERM are no request to cut the drain short.
            guard Interruption.isCtrlCAgain(number, after: earlier, at: now) else { return .nothing }
            state.cutShort = true
            return .cutShort(state.serving)
        }
        switch action {
        case .drain(let group?):
            await group.triggerGracefulShutdown()
        case .drain(nil):
            printError("\(Interruption.describe(number)): stopping before serving, once the inputs are planned…")
        case .cutShort(let serving?):
            printError(
                "second Ctrl-C: cutting the requests in flight off and stopping their runs "
                    + "(a codec's call already under way, such as an AVIF encode, ends first)…")
            serving.cancel()
        case .cutShort(nil):
            // Nothing was served, and nothing is half-made: the planning writes no file.
            ProcessEnd.exit(ExitCode.afterSignal(number).rawValue)
        case .nothing:
            break
        }
    }

    /// The first signal received, if any.
    var received: Int32? { state.withLock { $0.first?.signal } }

    /// Whether Ctrl-C was pressed again while the server drained.
    var cutShort: Bool { state.withLock { $0.cutShort } }

    /// Runs `group`, to be drained by the first signal; nil, and the group left unrun, when a
    /// signal came before.
    func serve(_ group: ServiceGroup) -> Task<Void, any Error>? {
        state.withLock { state in
            guard state.first == nil else { return nil }
            let serving = Task { try await group.run() }
            state.group = group
            state.serving = serving
            return serving
        }
    }

    /// Stops watching for the signals, as the command ends.
    func stop() { watching.cancel() }
}
#endif
