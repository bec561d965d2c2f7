import Foundation
import Testing

@testable import PipelineCLI

/// The command's signal handling is in place once `Interruption` is made: libdispatch installs
/// a signal source's handler after `resume()` returns, and until it has, the signal is ignored
/// (`SIG_IGN`, set so that the default action does not end the process) and lost.
@Suite(.serialized) struct InterruptionTests {
    @Test func itsHandlersAreInPlaceOnceItIsMade() {
        // SIGPIPE is left ignored by the command, which this process's children would inherit.
        var pipeAction = sigaction()
        sigaction(SIGPIPE, nil, &pipeAction)
        defer { sigaction(SIGPIPE, &pipeAction, nil) }
        let ignored = unsafeBitCast(SIG_IGN, to: Int.self)
        // Once in a process, as the command makes it: libdispatch installs its handler for a
        // signal once, and `stop()` puts the default action back over it.
        let interruption = Interruption { _ in }
        defer { interruption.stop() }
        for number in Interruption.signals {
            var action = sigaction()
            #expect(sigaction(number, nil, &action) == 0)
            #expect(unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self) != ignored, "signal \(number) is ignored")
        }
    }
}
