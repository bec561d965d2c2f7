#if Server
import Foundation
import PipelineKit
import TestSupport
import Testing

/// Signals to `pipeline serve` past the plain SIGTERM of `ServeCommandTests`: SIGHUP reads the
/// pipeline file and inputs again, as nginx reloads, where its default action would end the
/// server; SIGTERM with a request still in flight past `serve.drainTimeout` cancels its run, as
/// it does a run no request waits for any more (answered 503 at `serve.timeout`).
@Suite(.serialized) struct ServeSignalCommandTests {
    /// A server of one input on `silent`, with `serve.drainTimeout`, and a request for it in
    /// flight, once the server has asked the origin for the input.
    static func requestWaitingOn(_ silent: SilentOrigin, drainTimeout: Int, options: [String] = []) async throws -> (
        command: BackgroundCommand, directory: TemporaryDirectory, inFlight: Task<LoopbackHTTPClient.Response, any Error>
    ) {
        let origin = silent.server
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(
            inputs: [origin.url("/photo.jpg")], outputs: [ServeCommandTests.thumb], extra: #""serve": {"drainTimeout": \#(drainTimeout)}"#)
        try directory.write(Data(json.utf8), to: "p.json")
        let (command, port) = try ServeCommandTests().serve(directory, options: options)
        let inFlight = Task.detached {
            try await LoopbackHTTPClient.request(port: port, target: "/thumb/127.0.0.1_\(origin.port)/photo.jpg")
        }
        do {
            try await waitUntil("the server fetches the input:\n\(command.transcript)") { !origin.requests(for: "/photo.jpg").isEmpty }
        } catch {
            command.kill()
            throw error
        }
        return (command, directory, inFlight)
    }

    @Test func aBodyStillBeingSentPastTheDrainTimeoutIsCountedAsCutOff() async throws {
        // Given a server of a large PNG (9 MB of noise), made, and a client stalled in it
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.noise(width: 2000, height: 1500), quality: 95), to: "in/a.jpg")
        let big = #"{"name": "big", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [big], extra: #""serve": {"drainTimeout": 1}"#)
        try directory.write(Data(json.utf8), to: "p.json")
        let (command, port) = try ServeCommandTests().serve(directory, options: ["--log-level", "info"])
        defer { command.kill() }
        #expect(try LoopbackHTTPClient.send(port: port, target: "/big/a.jpg").status == 200)
        // (a client that has its answer's first bytes and takes no more: the body stays in flight
        // however slowly the test runs)
        let stalled = try LoopbackHTTPClient.stalledInAnswer(port: port, target: "/big/a.jpg")
        defer { close(stalled) }

        // When SIGTERM comes while the body is being taken
        command.signal(SIGTERM)

        // Then the server cuts it off past the drain timeout and says so, where it said no
        // request was in flight
        #expect(command.waitForExit(timeout: 120) == 1, "\(command.transcript)")
        #expect(
            command.transcript.contains("after serve.drainTimeout (1s): 1 request still in flight was cut off"), "\(command.transcript)")
        // and its access log line says the server cut it off, not that the client left
        let cut = command.transcript.split(separator: "\n").filter { $0.contains("path=/big/a.jpg") && $0.contains("cut off after") }
        #expect(cut.count == 1 && cut[0].contains("the server stopped and closed the connection"), "\(command.transcript)")
    }

    @Test func sigHUPReloadsAndTheServerGoesOn() throws {
        // Given a server of one input, logging at info
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [ServeCommandTests.thumb], inputPattern: "in/*.jpg")
        let (command, port) = try ServeCommandTests().serve(directory, options: ["--log-level", "info"])
        defer { command.kill() }
        #expect(try LoopbackHTTPClient.send(port: port, target: "/thumb/p0.jpg").status == 200)

        // When it gets SIGHUP
        command.signal(SIGHUP)

        // Then it reloads the file, and answers as before
        let reloaded = command.waitForLine(timeout: 60) { $0.isError && $0.text.hasSuffix("reloaded") }
        #expect(reloaded != nil, "no reload after SIGHUP:\n\(command.transcript)")
        #expect(try LoopbackHTTPClient.send(port: port, target: "/thumb/p0.jpg").status == 200)

        // and at SIGHUP with a file that no longer loads, it reads the inputs again with the
        // last valid file, and says so rather than that it reloaded
        try directory.write(Data(#"{"version": 1, "inputs": ["#.utf8), to: "p.json")
        command.signal(SIGHUP)
        let kept = command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("reloaded the inputs, with the last valid pipeline") }
        #expect(kept != nil, "\(command.transcript)")
        #expect(command.transcript.contains("p.json: keeping the last valid pipeline"), "\(command.transcript)")
        #expect(try LoopbackHTTPClient.send(port: port, target: "/thumb/p0.jpg").status == 200)
        // and stops on SIGTERM as ever
        command.signal(SIGTERM)
        #expect(command.waitForExit(timeout: 120) == 0, "\(command.transcript)")
    }

    @Test func theEntriesAFolderSkipsAreLoggedAtTheStartAndWhenAReloadAddsOne() throws {
        // Given a folder of inputs that holds a FIFO among its photos
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [ServeCommandTests.thumb], inputPattern: "in/*.jpg")
        #expect(mkfifo(directory.path + "/in/pipe.jpg", 0o644) == 0)
        let (command, port) = try ServeCommandTests().serve(directory, options: ["--log-level", "info"])
        defer { command.kill() }
        func told(_ what: String) -> Int {
            command.transcript.split(separator: "\n").filter { $0.contains("warning") && $0.contains(what) }.count
        }
        // Then the server says at its start why that name is not served
        #expect(told("in/pipe.jpg (a FIFO)") == 1, "\(command.transcript)")
        #expect(try LoopbackHTTPClient.send(port: port, target: "/thumb/pipe.jpg").status == 404)

        // When a link to nothing is added and the server reloads
        try FileManager.default.createSymbolicLink(atPath: directory.path + "/in/gone.jpg", withDestinationPath: "nowhere.jpg")
        var mark = command.lineCount
        command.signal(SIGHUP)
        #expect(
            command.waitForLine(after: mark, timeout: 60) { $0.isError && $0.text.hasSuffix("reloaded") } != nil, "\(command.transcript)")
        // Then it is told too
        #expect(told("in/gone.jpg (a symbolic link to nothing)") == 1, "\(command.transcript)")

        // and a reload that skips nothing new tells nothing again
        mark = command.lineCount
        command.signal(SIGHUP)
        #expect(
            command.waitForLine(after: mark, timeout: 60) { $0.isError && $0.text.hasSuffix("reloaded") } != nil, "\(command.transcript)")
        #expect(told("in/gone.jpg (a symbolic link to nothing)") == 1, "\(command.transcript)")
        command.signal(SIGTERM)
        #expect(command.waitForExit(timeout: 120) == 0, "\(command.transcript)")
    }

    /// A server starting on outputs in a bucket that does not answer whether it is there until
    /// the test makes the file `released` in `directory`: the start waits on it, as it waits on a
    /// slow bucket or on listing a large folder. Returned once the server has asked. With
    /// `fromTheStart` false, the bucket answers until the test makes the file `held`, and the
    /// server is returned once it serves.
    static func serverOnAHeldBucket(fromTheStart: Bool = true, serve: String = "") async throws -> (
        command: BackgroundCommand, directory: TemporaryDirectory, bucket: TestHTTPServer
    ) {
        let directory = try TemporaryDirectory()
        let (released, held) = (directory.path + "/released", directory.path + "/held")
        let bucket = try TestHTTPServer { request, _ in
            let deadline = Date().addingTimeInterval(120)
            while request.method == "HEAD", !FileManager.default.fileExists(atPath: released),
                fromTheStart || FileManager.default.fileExists(atPath: held), Date() < deadline
            {
                Thread.sleep(forTimeInterval: 0.02)
            }
            return request.path == "/site/" ? .init() : .init(status: 404)
        }
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        let output = #"{"name": "thumb", "encode": {"format": "webp"}, "path": "s3://site/thumb/{stem}.webp"}"#
        try directory.write(
            Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [output], extra: serve.isEmpty ? "" : #""serve": \#(serve)"#).utf8),
            to: "p.json")
        let command = try BackgroundCommand(
            ["serve", "p.json", "--port", "0", "--log-level", "info"], in: directory.url,
            environment: [
                "AWS_ACCESS_KEY_ID": "AKIATESTTESTTESTTEST", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "us-east-1",
                "AWS_ENDPOINT_URL_S3": bucket.url(""), "HOME": directory.path,
            ])
        do {
            try await waitUntil("the server asks about the bucket:\n\(command.transcript)", within: .seconds(60)) {
                fromTheStart ? bucket.requests.contains { $0.method == "HEAD" } : command.transcript.contains("Serving ")
            }
        } catch {
            command.kill()
            bucket.stop()
            throw error
        }
        return (command, directory, bucket)
    }

    @Test func aSIGTERMWhileAReloadAsksABucketStopsTheReloadAndDrains() async throws {
        // Given a server on a bucket that stops answering, with a short drain timeout
        let (command, directory, bucket) = try await Self.serverOnAHeldBucket(fromTheStart: false, serve: #"{"drainTimeout": "2s"}"#)
        defer { bucket.stop() }
        defer { command.kill() }
        try directory.write(Data(), to: "held")

        // When SIGTERM comes while a reload waits on the bucket
        command.signal(SIGHUP)
        try await waitUntil("the reload asks about the bucket:\n\(command.transcript)", within: .seconds(60)) {
            bucket.requests.filter { $0.method == "HEAD" }.count >= 2
        }
        command.signal(SIGTERM)

        // Then the reload stops unsaid, and the server drains and exits 0 as ever
        #expect(command.waitForExit(timeout: 120) == 0, "\(command.transcript)")
        #expect(!command.transcript.contains("serving as before"), "\(command.transcript)")
        #expect(!command.transcript.contains("keeping the last valid pipeline"), "\(command.transcript)")
    }

    @Test func aSIGHUPWhileTheServerStartsReloadsOnceItIsUp() async throws {
        // Given a server whose start waits on a bucket
        let (command, directory, bucket) = try await Self.serverOnAHeldBucket()
        defer { bucket.stop() }
        defer { command.kill() }

        // When SIGHUP comes then
        #expect(try SignalDispositions.catches(SIGHUP, pid: command.processIdentifier), "SIGHUP would end the server as it starts")
        command.signal(SIGHUP)
        try await Task.sleep(for: .milliseconds(200))
        try directory.write(Data(), to: "released")

        // Then the server starts, reloads once it is up, and stops on SIGTERM as ever
        let serving = command.waitForLine(timeout: 120) { !$0.isError && $0.text.hasPrefix("Serving ") }
        #expect(serving != nil, "no address came:\n\(command.transcript)")
        let reloaded = command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("SIGHUP: reloading") }
        #expect(reloaded != nil, "\(command.transcript)")
        command.signal(SIGTERM)
        #expect(command.waitForExit(timeout: 120) == 0, "\(command.transcript)")
    }

    @Test func aSIGTERMWhileTheServerStartsStopsItBeforeServingSayingSo() async throws {
        // Given a server whose start waits on a bucket
        let (command, directory, bucket) = try await Self.serverOnAHeldBucket()
        defer { bucket.stop() }
        defer { command.kill() }

        // When SIGTERM comes then
        #expect(try SignalDispositions.catches(SIGTERM, pid: command.processIdentifier), "SIGTERM would end the server as it starts")
        command.signal(SIGTERM)
        try await Task.sleep(for: .milliseconds(200))
        try directory.write(Data(), to: "released")

        // Then it never listens, says why it stopped, and its status is the signal's
        #expect(command.waitForExit(timeout: 120) == 128 + SIGTERM, "\(command.transcript)")
        #expect(command.transcript.contains("stopped before serving p.json: no request was taken"), "\(command.transcript)")
        #expect(!command.transcript.contains("Serving "), "\(command.transcript)")
    }

    @Test func aRequestInFlightPastTheDrainTimeoutIsCutOffAndItsRunCancelled() async throws {
        // Given an input on an origin that never answers while the test runs, and a drain
        // timeout of one second
        let silent = try SilentOrigin(seconds: 120)
        let (command, directory, inFlight) = try await Self.requestWaitingOn(silent, drainTimeout: 1, options: ["--log-level", "info"])
        defer { command.kill() }

        // When SIGTERM comes
        command.signal(SIGTERM)

        // Then, the origin still silent, the server cuts the request off, cancels its run and
        // exits 1, saying why, with nothing written
        #expect(command.waitForExit(timeout: 120) == 1, "\(command.transcript)")
        #expect(
            command.transcript.contains("after serve.drainTimeout (1s): 1 request still in flight was cut off"), "\(command.transcript)")
        // (having said, as it cut the request off, that it waits for any codec call under way)
        let lines = command.transcript.split(separator: "\n")
        let cutting = lines.firstIndex { $0.contains("cutting off the requests in flight and cancelling their runs") }
        let stopped = lines.firstIndex { $0.contains("stopped serving") }
        #expect(cutting != nil && stopped != nil && cutting! < stopped!, "\(command.transcript)")
        let answer = try? await inFlight.value
        #expect(answer?.status != 200)
        let written = (try? FileManager.default.contentsOfDirectory(atPath: directory.path + "/out")) ?? []
        #expect(written.isEmpty, "\(written)")
        // and the access log says that no answer was sent, not one it never sent
        let logged = command.transcript.split(separator: "\n").filter { $0.contains("path=/thumb/") }
        #expect(logged.count == 1, "\(command.transcript)")
        #expect(logged.allSatisfy { $0.contains("status=-") && $0.contains("bytes=0") && $0.contains("not sent") }, "\(logged)")
    }

    @Test func ctrlCPressedAgainCutsTheDrainShort() async throws {
        // Given a request in flight whose input's origin does not answer while the test runs,
        // and a drain timeout far longer than the test waits
        let silent = try SilentOrigin(seconds: 120)
        let (command, directory, inFlight) = try await Self.requestWaitingOn(silent, drainTimeout: 600)
        defer { command.kill() }

        // When Ctrl-C comes, and again once the server says it is stopping
        command.signal(SIGINT)
        let stopping = command.waitForLine(timeout: 60) { $0.isError && $0.text.hasPrefix("stopping:") }
        #expect(stopping != nil, "\(command.transcript)")
        try await Task.sleep(for: .seconds(1))
        command.signal(SIGINT)

        // Then the drain is cut short: the request cut off, its run cancelled, exit 1, saying why
        #expect(command.waitForExit(timeout: 120) == 1, "\(command.transcript)")
        #expect(command.transcript.contains("at a second Ctrl-C: 1 request still in flight was cut off"), "\(command.transcript)")
        #expect((try? await inFlight.value)?.status != 200)
        let written = (try? FileManager.default.contentsOfDirectory(atPath: directory.path + "/out")) ?? []
        #expect(written.isEmpty, "\(written)")
    }

    @Test func aBucketThatTakesNoUploadIs503AtTheTimeoutAndTheUploadIsStoppedAtSIGTERM() async throws {
        // Given outputs in a bucket that is there and holds no object yet, but never answers an
        // upload, each store request allowed ten minutes, and requests one second
        let bucket = try TestHTTPServer { request, _ in
            switch (request.method, request.path) {
            case ("HEAD", "/site/"): .init()
            case ("HEAD", _): .init(status: 404)
            default: .init(behaviour: .stall)
            }
        }
        defer { bucket.stop() }
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "in/a.jpg")
        let json = """
            {"version": 1, "inputs": ["in/*.jpg"],
             "outputs": [{"name": "thumb", "steps": [{"resize": {"width": 16}}], "encode": {"format": "webp"},
                          "path": "s3://site/thumb/{stem}.webp"}],
             "fetch": {"timeout": "600s", "retries": 0}, "serve": {"timeout": 1, "drainTimeout": 1}}
            """
        try directory.write(Data(json.utf8), to: "p.json")
        let (command, port) = try ServeCommandTests().serve(
            directory,
            environment: [
                "AWS_ACCESS_KEY_ID": "AKIATESTTESTTESTTEST", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "us-east-1",
                "AWS_ENDPOINT_URL_S3": bucket.url(""), "HOME": directory.path,
            ])
        defer { command.kill() }

        // When the file is asked for
        let refused = try await LoopbackHTTPClient.request(port: port, target: "/thumb/a.jpg")

        // Then the answer is 503 at the timeout, to be tried again, while the run waits for its upload
        #expect(refused.status == 503, "\(String(decoding: refused.body, as: UTF8.self))\n\(command.transcript)")
        #expect(refused.header("Retry-After") == "1")
        #expect(String(decoding: refused.body, as: UTF8.self).contains("serve.timeout (1s)"))
        try await waitUntil("the run uploads the file:\n\(command.transcript)") { bucket.requests.contains { $0.method == "PUT" } }
        // and SIGTERM, the upload still unanswered, stops it past the drain timeout: exit 1, saying why
        command.signal(SIGTERM)
        #expect(command.waitForExit(timeout: 120) == 1, "\(command.transcript)")
        #expect(
            command.transcript.contains("no request was in flight; any run still going was cancelled"),
            "\(command.transcript)")
    }
}
#endif
