import Foundation
import TestSupport
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

    /// SIGTERM while a bucket is listed, or an output's bucket is asked for, before the run
    /// begins, stops the question: the command exits as after any SIGTERM, having made nothing,
    /// rather than wait out the timeouts and retries (and then begin the run).
    @Test(arguments: [false, true])
    func sigtermWhileTheBucketsAreAskedEndsTheCommandAt143(outputBucket: Bool) async throws {
        // Given an S3 endpoint that holds every request for two minutes, with the inputs or
        // the outputs there
        let silent = try SilentOrigin(seconds: 120)
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 32, height: 24)), to: "in/a.jpg")
        let json = PipelineHarness.json(
            inputs: [outputBucket ? "in/*.jpg" : "s3://photos/in/*.jpg"],
            outputs: [#"{"name": "t", "encode": {"format": "png"}, "path": "\#(outputBucket ? "s3://site/" : "")out/{stem}.png"}"#])
        try directory.write(Data(json.utf8), to: "p.json")
        let command = try BackgroundCommand(
            ["run", "p.json"], in: directory.url,
            environment: [
                "AWS_ACCESS_KEY_ID": "AKIASTOPSTOPSTOP0001", "AWS_SECRET_ACCESS_KEY": "stopSecret", "AWS_REGION": "us-east-1",
                "AWS_ENDPOINT_URL_S3": silent.server.url(""), "HOME": directory.path,
            ])
        defer { command.kill() }
        try await waitUntil("the bucket is listed:\n\(command.transcript)") { !silent.server.requests.isEmpty }

        // When SIGTERM comes
        command.signal(SIGTERM)

        // Then the command ends with SIGTERM's status, saying nothing was made
        #expect(command.waitForExit(timeout: 60) == 143, "\(command.transcript)")
        #expect(command.transcript.contains("stopped before the run began: nothing was made"), "\(command.transcript)")
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }
}
