import Foundation
import Synchronization

/// The one way the command ends its process. glibc's `exit` runs the exit handlers, which must
/// not run on two threads at once: a reader of standard output going away while the command
/// ended on its own crashed in them. The first caller ends the process; a later one waits for
/// it to, touching nothing the exit handlers tear down.
enum ProcessEnd {
    private static let ending = Atomic<Bool>(false)

    /// Ends the process with `status`.
    static func exit(_ status: Int32) -> Never {
        if ending.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
            Foundation.exit(status)
        }
        while true { pause() }
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
