import Foundation
import PipelineKit

/// Live progress on standard error: on a terminal, a bar for the run (done / total, images/s,
/// ETA) and a line per stage (queued, running, done) redrawn in place five times a second, so
/// the bottleneck stage shows; elsewhere (a log file, CI), one plain line every five seconds.
final class ProgressDisplay: @unchecked Sendable {
    // `state` is only touched under `lock`; the timer and the run loop both draw.
    private let lock = NSLock()
    private var state = (total: 0, done: 0, failed: 0, linesDrawn: 0, started: Date(), lastPlain: Date())
    private let run: PipelineRun
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var timer: (any DispatchSourceTimer)?

    init(run: PipelineRun) {
        self.run = run
    }

    func start(total: Int) {
        lock.withLock {
            state.total = total
            state.started = Date()
            state.lastPlain = Date()
        }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + 0.2, repeating: isTerminal ? 0.2 : 1)
        timer.setEventHandler { [weak self] in self?.draw() }
        timer.resume()
        self.timer = timer
    }

    func completed(succeeded: Bool) {
        lock.withLock {
            state.done += 1
            if !succeeded { state.failed += 1 }
        }
    }

    /// Erases the drawn lines, so that other output starts on a clean line.
    func clear() {
        lock.withLock { erase() }
    }

    func stop() {
        timer?.cancel()
        timer = nil
        clear()
    }

    private func draw() {
        lock.withLock {
            let elapsed = Date().timeIntervalSince(state.started)
            let rate = elapsed > 0 ? Double(state.done) / elapsed : 0
            let remaining = rate > 0 ? Double(state.total - state.done) / rate : 0
            let counts = run.stageCounts()
            if isTerminal {
                erase()
                let width = 30
                let filled = state.total > 0 ? width * state.done / state.total : 0
                let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
                var lines = ["[\(bar)] \(state.done)/\(state.total)  " + String(format: "%.1f", rate) + " images/s  ETA "
                    + Self.duration(remaining) + (state.failed > 0 ? "  \(state.failed) failed" : "")]
                for stage in Stage.allCases {
                    let count = counts[stage] ?? StageCounts()
                    let name = stage.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                    lines.append("  \(name) " + String(format: "queued %4d  running %2d  done %5d", count.queued, count.running, count.done))
                }
                FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
                state.linesDrawn = lines.count
            } else if Date().timeIntervalSince(state.lastPlain) >= 5 {
                state.lastPlain = Date()
                let busiest = counts.max { $0.value.queued < $1.value.queued }
                let line = "progress: \(state.done)/\(state.total), " + String(format: "%.1f", rate) + " images/s, ETA "
                    + Self.duration(remaining) + ", most queued: " + (busiest?.key.rawValue ?? "-") + "\n"
                FileHandle.standardError.write(Data(line.utf8))
            }
        }
    }

    /// Moves up over the lines drawn last and clears them (called under the lock).
    private func erase() {
        guard isTerminal, state.linesDrawn > 0 else { return }
        FileHandle.standardError.write(Data(("\u{1B}[\(state.linesDrawn)A\u{1B}[J").utf8))
        state.linesDrawn = 0
    }

    private static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds > 0 else { return "-" }
        let whole = Int(seconds.rounded())
        return whole >= 60 ? "\(whole / 60)m\(whole % 60)s" : "\(whole)s"
    }
}
