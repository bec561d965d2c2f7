import Foundation

/// What a running process does with each signal, as `/proc/PID/status` says: for tests that a
/// command leaves no signal that would end it mid-write at its default action.
package enum SignalDispositions {
    /// The signals whose default action ends a process and that `pipeline` catches or ignores,
    /// so that each ends it in a known state: all but SIGQUIT (a core dump, on purpose),
    /// SIGPROF (profilers), SIGKILL and the signals of a fault (SIGSEGV, SIGBUS, …).
    package static let endingSignals: [Int32] =
        [SIGHUP, SIGINT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2, SIGSTKFLT, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGIO, SIGPWR]
        + Array(__libc_current_sigrtmin()...__libc_current_sigrtmax())

    /// Those of `endingSignals` that process `pid` neither catches nor ignores.
    package static func leftAtDefault(pid: Int32) throws -> [Int32] {
        let handled = try mask("SigCgt", of: pid) | mask("SigIgn", of: pid)
        return endingSignals.filter { handled & (1 << UInt64($0 - 1)) == 0 }
    }

    /// Whether process `pid` has a handler of its own for `signal`: neither its default action
    /// nor ignored (a signal sent while it is ignored is lost).
    package static func catches(_ signal: Int32, pid: Int32) throws -> Bool {
        try mask("SigCgt", of: pid) & (1 << UInt64(signal - 1)) != 0
    }

    /// The mask of `/proc/PID/status`'s line `name`, such as `SigCgt:\t0000000180014a07`: bit
    /// N-1 stands for signal N.
    private static func mask(_ name: String, of pid: Int32) throws -> UInt64 {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
        return line.flatMap { UInt64($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) } ?? 0
    }
}
