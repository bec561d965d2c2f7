#if Server
import Foundation
import TestSupport
import Testing

/// SIGHUP makes `pipeline serve` read its pipeline file and inputs again, as nginx reloads, where
/// the signal's default action would end it.
@Suite(.serialized) struct ServeReloadCommandTests {
    @Test func sigHUPReloadsAndTheServerGoesOn() throws {
        // Given a server of one input, logging at info
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [ServeCommandTests.thumb], inputPattern: "in/*.jpg")
        let (command, port) = try ServeCommandTests().serve(directory, options: ["--log-level", "info"])
        defer { command.kill() }
        #expect(try LoopbackHTTPClient.send(port: port, target: "/thumb/p0.jpg").status == 200)

        // When it gets SIGHUP
        command.signal(SIGHUP)

        // Then it reloads the file, and answers as before
        let reloaded = command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("reloaded") }
        #expect(reloaded != nil, "no reload after SIGHUP:\n\(command.transcript)")
        #expect(try LoopbackHTTPClient.send(port: port, target: "/thumb/p0.jpg").status == 200)
        // and stops on SIGTERM as ever
        command.signal(SIGTERM)
        #expect(command.waitForExit(timeout: 120) == 0, "\(command.transcript)")
    }
}
#endif
