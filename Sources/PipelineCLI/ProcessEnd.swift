import CVips
import Foundation
import Synchronization

/// The one way the command ends its process. glibc's `exit` runs the exit handlers, which must
/// not run on two threads at once: a reader of standard output going away while the command
/// ended on its own crashed in them. The first caller ends the process; a later one waits for
/// it to, touching nothing the exit handlers tear down.
enum ProcessEnd {
    private static let ending = Atomic<Bool>(false)

    /// Ends the process with `status`, or 1 in place of 0 when what was printed on standard
    /// output could not all be written.
    static func exit(_ status: Int32) -> Never {
        if ending.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
            Foundation.exit(standardOutputIsWhole() || status != 0 ? status : 1)
        }
        while true { pause() }
    }

    /// Writes out what `print` holds for standard output; false, saying why on standard error,
    /// when it or an earlier write of it failed: `pipeline schema > schema.json` on a full disk
    /// must not leave the file cut short with exit status 0. A reader gone away is no failure
    /// here (the command ends on SIGPIPE, or stops as `Interruption` has it), nor one already said.
    private static func standardOutputIsWhole() -> Bool {
        let code = pl_flush_standard_output()
        guard code != 0, code != EPIPE, !StandardOutput.failed else { return true }
        let reason = code == -1 ? "a write failed (a full disk, or a file past its size limit)" : String(cString: strerror(code))
        printError("error: cannot write to standard output: \(reason); what was printed is incomplete")
        return false
    }

    /// Ends the process as ArgumentParser's `exit(withError:)` does, through `exit(_:)`: the
    /// error's message (on standard output for help, else standard error) and its status.
    static func exit(withError error: any Error, of command: PipelineCommand.Type) -> Never {
        let code = command.exitCode(for: error)
        let message = command.fullMessage(for: error)
        if !message.isEmpty {
            if code == .success { print(message) } else { printError(message) }
        }
        exit(code.rawValue)
    }
}
