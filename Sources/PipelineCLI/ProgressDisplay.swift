import Foundation
import PipelineKit
import Vips

/// Live progress on standard error: on a terminal, a bar for the run (done / total, images/s,
/// ETA) and a line per stage (queued, running, done) redrawn in place five times a second, so
/// the bottleneck stage shows; elsewhere (a log file, CI), one plain line every five seconds.
final class ProgressDisplay: Sendable {
    private struct State {
        var total = 0, done = 0, failed = 0, linesDrawn = 0
        var started = Date(), lastPlain = Date()
        /// Drawing on a timer; set by `start`, cancelled by `stop`.
        var timer: (any DispatchSourceTimer)?
    }

    // The timer and the run's own loop both draw: everything they share is in `state`.
    private let state = Locked(State())
    private let run: PipelineRun
    private let isTerminal = isatty(STDERR_FILENO) == 1

    init(run: PipelineRun) {
        self.run = run
    }

    func start(total: Int) {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + 0.2, repeating: isTerminal ? 0.2 : 1)
        timer.setEventHandler { [weak self] in self?.draw() }
        state.withLock {
            $0.total = total
            $0.started = Date()
            $0.lastPlain = Date()
            $0.timer = timer
        }
        timer.resume()
    }

    func completed(succeeded: Bool) {
        state.withLock {
            $0.done += 1
            if !succeeded { $0.failed += 1 }
        }
    }

    /// Erases the drawn lines, so that other output starts on a clean line.
    func clear() {
        state.withLock { erase(&$0) }
    }

    func stop() {
        state.withLock { state in
            state.timer?.cancel()
            state.timer = nil
            erase(&state)
        }
    }

    private func draw() {
        let counts = run.stageCounts()
        state.withLock { state in
            let elapsed = Date().timeIntervalSince(state.started)
            let rate = elapsed > 0 ? Double(state.done) / elapsed : 0
            let eta = DurationFormat.string(seconds: rate > 0 ? Double(state.total - state.done) / rate : .infinity)
            if isTerminal {
                erase(&state)
                let width = 30
                let filled = state.total > 0 ? width * state.done / state.total : 0
                let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
                var lines = [
                    "[\(bar)] \(state.done)/\(state.total)  " + String(format: "%.1f", rate) + " images/s  ETA "
                        + eta + (state.failed > 0 ? "  \(state.failed) failed" : "")
                ]
                for stage in Stage.allCases {
                    let count = counts[stage] ?? StageCounts()
                    let name = stage.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                    lines.append(
                        "  \(name) " + String(format: "queued %4d  running %2d  done %5d", count.queued, count.running, count.done))
                }
                try? FileHandle.standardError.write(contentsOf: Data((lines.joined(separator: "\n") + "\n").utf8))
                state.linesDrawn = lines.count
            } else if Date().timeIntervalSince(state.lastPlain) >= 5 {
                state.lastPlain = Date()
                let line =
                    "progress: \(state.done)/\(state.total), " + String(format: "%.1f", rate) + " images/s, ETA "
                    + eta + ", " + Self.busiest(counts) + "\n"
                try? FileHandle.standardError.write(contentsOf: Data(line.utf8))
            }
        }
    }

    /// Where the run's work is, for the plain line: the stage with the most operations queued,
    /// or, with none queued, the stage with the most running; ties go to the earlier stage, so
    /// that the line does not change between two stages that hold as many.
    static func busiest(_ counts: [Stage: StageCounts]) -> String {
        let stages = Stage.allCases.map { ($0, counts[$0] ?? StageCounts()) }
        if let queued = stages.filter({ $0.1.queued > 0 }).max(by: { $0.1.queued < $1.1.queued }) {
            return "most queued: \(queued.0.rawValue)"
        }
        if let running = stages.filter({ $0.1.running > 0 }).max(by: { $0.1.running < $1.1.running }) {
            return "none queued, running: \(running.0.rawValue)"
        }
        return "none queued"
    }

    /// Moves up over the lines drawn last and clears them (called under the lock).
    private func erase(_ state: inout State) {
        guard isTerminal, state.linesDrawn > 0 else { return }
        try? FileHandle.standardError.write(contentsOf: Data(("\u{1B}[\(state.linesDrawn)A\u{1B}[J").utf8))
        state.linesDrawn = 0
    }
}
