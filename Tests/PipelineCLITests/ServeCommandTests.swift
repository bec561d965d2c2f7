#if Server
import Foundation
import TestSupport
import Testing
import Vips

/// `pipeline serve`, the built command as a user runs it: it says where it listens, answers,
/// and on SIGTERM stops accepting, finishes what is in flight and exits 0.
@Suite(.serialized) struct ServeCommandTests {
    static let thumb =
        #"{"name": "thumb", "steps": [{"resize": {"width": 16}}], "encode": {"format": "webp"}, "path": "out/{stem}-small.webp"}"#

    /// Starts `pipeline serve p.json --port 0` in a folder of photos; returns it and its port.
    func serve(_ directory: TemporaryDirectory, options: [String] = [], environment: [String: String] = [:]) throws -> (
        BackgroundCommand, Int
    ) {
        let command = try BackgroundCommand(["serve", "p.json", "--port", "0"] + options, in: directory.url, environment: environment)
        let line = command.waitForLine(timeout: 180) { !$0.isError && $0.text.hasPrefix("Serving ") }
        let text = try #require(line?.text, "no address came:\n\(command.transcript)")
        #expect(text.hasPrefix("Serving p.json on http://127.0.0.1:"), "\(text)")
        let port = try #require(text.split(separator: ":").last.flatMap { Int($0) }, "\(text)")
        return (command, port)
    }

    @Test func answersThenStopsOnSIGTERMWithStatus0() throws {
        let directory = try Fixtures.watchedFolder(inputs: 2, outputs: [Self.thumb], inputPattern: "in/*.jpg")
        let (command, port) = try serve(directory)
        defer { command.kill() }
        #expect(try LoopbackHTTPClient.send(port: port, target: "/healthz").status == 200)
        let response = try LoopbackHTTPClient.send(port: port, target: "/thumb/p0.jpg")
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/p0-small.webp"))
        // No signal would end it mid-answer
        #expect(try SignalDispositions.leftAtDefault(pid: command.processIdentifier) == [])

        command.signal(SIGTERM)
        #expect(command.waitForExit(timeout: 120) == 0, "\(command.transcript)")
        // It no longer listens.
        #expect(throws: LoopbackHTTPClient.Failure.self) { try LoopbackHTTPClient.send(port: port, target: "/healthz", timeout: 5) }
    }

    /// SIGUSR2 stands for the other signals that would end the server: each drains it as SIGTERM does.
    @Test(arguments: [SIGTERM, SIGUSR2])
    func aRequestInFlightAtSIGTERMIsAnsweredBeforeTheExit(signal: Int32) async throws {
        // Given an input on an origin that holds its answer until the test releases it
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32))
        let release = DispatchSemaphore(value: 0)
        let origin = try TestHTTPServer { _, _ in
            _ = release.wait(timeout: .now() + 120)
            return .init(body: photo)
        }
        defer { origin.stop() }
        let directory = try TemporaryDirectory()
        try directory.write(Data(PipelineHarness.json(inputs: [origin.url("/photo.jpg")], outputs: [Self.thumb]).utf8), to: "p.json")
        let (command, port) = try serve(directory)
        defer { command.kill() }

        // When the signal comes while a request waits for that input
        let inFlight = Task.detached {
            try await LoopbackHTTPClient.request(port: port, target: "/thumb/127.0.0.1_\(origin.port)/photo.jpg")
        }
        try await waitUntil("the server fetches the input:\n\(command.transcript)") {
            !origin.requests(for: "/photo.jpg").isEmpty
        }
        let mark = command.lineCount
        command.signal(signal)
        // Released only once the server is stopping, so the answer comes after the signal.
        let stopping = command.waitForLine(after: mark, timeout: 120) { $0.isError && $0.text.hasPrefix("stopping:") }
        release.signal()
        #expect(stopping != nil, "\(command.transcript)")

        // Then the request is answered in full, and the server exits 0
        let response = try await inFlight.value
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        #expect(try VipsImage.open(data: response.body).width == 16)
        #expect(command.waitForExit(timeout: 120) == 0, "\(command.transcript)")
    }

    /// Asks for `target` until the answer has `status`, for up to a minute (the server reloads
    /// after the watcher's quiet period); the last answer's status.
    func status(of target: String, port: Int, becoming status: Int) async throws -> Int {
        var last = 0
        for _ in 0..<600 {
            last = try await LoopbackHTTPClient.request(port: port, target: target).status
            if last == status { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return last
    }

    @Test func anEditedFileAndNewInputsAreServedWithoutARestart() async throws {
        // Given a server started over one input
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [Self.thumb], inputPattern: "in/*.jpg")
        let (command, port) = try serve(directory)
        defer { command.kill() }
        #expect(try await LoopbackHTTPClient.request(port: port, target: "/thumb/p0.jpg").status == 200)
        #expect(try await LoopbackHTTPClient.request(port: port, target: "/thumb/added.jpg").status == 404)

        // When an input is added to the folder, it is served
        try FileManager.default.moveItem(atPath: directory.path + "/spare/photo.jpg", toPath: directory.path + "/in/added.jpg")
        #expect(try await status(of: "/thumb/added.jpg", port: port, becoming: 200) == 200, "\(command.transcript)")

        // When the file gains an output, it is served
        let big = #"{"name": "big", "steps": [{"resize": {"width": 24}}], "encode": {"format": "png"}, "path": "out/{stem}-big.png"}"#
        try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [Self.thumb, big]).utf8), to: "p.json")
        #expect(try await status(of: "/big/p0.jpg", port: port, becoming: 200) == 200, "\(command.transcript)")
        let made = try await LoopbackHTTPClient.request(port: port, target: "/big/added.jpg")
        #expect(made.status == 200)
        #expect(try VipsImage.open(data: made.body).width == 24)

        // When the file is broken, it is reported, and the last valid one goes on answering
        let mark = command.lineCount
        try directory.write(Data(#"{"version": 1, "inputs": ["in/*.jpg"], "outputs": [{"name": "big"}]}"#.utf8), to: "p.json")
        let kept = command.waitForLine(after: mark, timeout: 60) { $0.isError && $0.text.contains("keeping the last valid pipeline") }
        #expect(kept != nil, "\(command.transcript)")
        #expect(try await LoopbackHTTPClient.request(port: port, target: "/big/p0.jpg").status == 200)
        #expect(try await LoopbackHTTPClient.request(port: port, target: "/thumb/added.jpg").status == 200)

        // When every input is removed, each is 404 (not "try again" for ever), and the log says why
        let emptied = command.lineCount
        for name in ["p0.jpg", "added.jpg"] { try FileManager.default.removeItem(atPath: directory.path + "/in/" + name) }
        #expect(try await status(of: "/thumb/added.jpg", port: port, becoming: 404) == 404, "\(command.transcript)")
        #expect(try await LoopbackHTTPClient.request(port: port, target: "/big/p0.jpg").status == 404)
        #expect(command.waitForLine(after: emptied, timeout: 60) { $0.isError && $0.text.contains("no inputs now") } != nil)

        // When the file is edited while there is no input, to a width of its own, and a photo
        // is added after: the edit is what is served
        let narrow = Self.thumb.replacingOccurrences(of: #""width": 16"#, with: #""width": 12"#)
        try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [narrow]).utf8), to: "p.json")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 48, height: 32)), to: "spare/back.jpg")
        try await Task.sleep(for: .seconds(1))
        try FileManager.default.moveItem(atPath: directory.path + "/spare/back.jpg", toPath: directory.path + "/in/back.jpg")
        #expect(try await status(of: "/thumb/back.jpg", port: port, becoming: 200) == 200, "\(command.transcript)")
        let back = try await LoopbackHTTPClient.request(port: port, target: "/thumb/back.jpg")
        #expect(try VipsImage.open(data: back.body).width == 12, "\(command.transcript)")
    }

    @Test func anEditNamingAnOverlayNotInPlaceYetIsServedOnceTheOverlayIsThere() async throws {
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [Self.thumb], inputPattern: "in/*.jpg")
        let (command, port) = try serve(directory)
        defer { command.kill() }
        #expect(try await LoopbackHTTPClient.request(port: port, target: "/thumb/p0.jpg").status == 200)

        // When the file is edited to lay marks/logo.png, in a folder not made yet, over a wider thumb
        let mark = command.lineCount
        let marked =
            #"{"name": "thumb", "steps": [{"resize": {"width": 24}}, {"composite": {"image": "marks/logo.png"}}], "#
            + #""encode": {"format": "webp"}, "path": "out/{stem}-marked.webp"}"#
        try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [marked]).utf8), to: "p.json")
        let kept = command.waitForLine(after: mark, timeout: 60) { $0.isError && $0.text.contains("keeping the last valid pipeline") }
        #expect(kept != nil, "\(command.transcript)")
        // and the overlay is then put there
        try directory.write(try Fixtures.png(try Fixtures.gradient(width: 8, height: 8)), to: "marks/logo.png")

        // Then the edit is what is served
        var width = 0
        for _ in 0..<600 where width != 24 {
            let answer = try await LoopbackHTTPClient.request(port: port, target: "/thumb/p0.jpg")
            width = answer.status == 200 ? try VipsImage.open(data: answer.body).width : 0
            if width != 24 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(width == 24, "\(command.transcript)")
    }

    @Test func aProfileOverwrittenAfterAFileWasMadeIsNotAnsweredFromThatFile() async throws {
        // Given a server whose output embeds a profile, and a file made with it
        let output = #"{"name": "thumb", "encode": {"format": "jpeg", "iccProfile": "icc/brand.icc"}, "path": "out/{stem}.jpg"}"#
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [output], inputPattern: "in/*.jpg")
        let profile = ICCFixtures.profile(primaries: ICCFixtures.adobePrimaries, curve: ICCFixtures.gammaCurve(2.2))
        try directory.write(Data(profile), to: "icc/brand.icc")
        let (command, port) = try serve(directory)
        defer { command.kill() }
        #expect(try await LoopbackHTTPClient.request(port: port, target: "/thumb/p0.jpg").status == 200)

        // When the profile is overwritten with text
        try directory.write(Data("not a profile at all, but long enough to be read as one".utf8), to: "icc/brand.icc")

        // Then the file is made again, as a run would, and fails naming the profile
        #expect(try await status(of: "/thumb/p0.jpg", port: port, becoming: 422) == 422, "\(command.transcript)")
        let refused = try await LoopbackHTTPClient.request(port: port, target: "/thumb/p0.jpg")
        #expect(String(decoding: refused.body, as: UTF8.self).contains("encode.iccProfile"), "\(command.transcript)")
    }

    @Test func logLevelInfoLogsEachRequest() throws {
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [Self.thumb], inputPattern: "in/*.jpg")
        let (command, port) = try serve(directory, options: ["--log-level", "info"])
        defer { command.kill() }
        let response = try LoopbackHTTPClient.send(port: port, target: "/thumb/p0.jpg")
        #expect(response.status == 200)
        let line = command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("path=/thumb/p0.jpg") }
        let text = try #require(line?.text, "\(command.transcript)")
        for field in ["method=GET", "status=200", "bytes=\(response.body.count)", "source=made", "ms="] {
            #expect(text.contains(field), "\(text)")
        }
        // A refusal's body is counted as sent too
        let refused = try LoopbackHTTPClient.send(port: port, target: "/thumb/missing.jpg")
        #expect(refused.status == 404 && !refused.body.isEmpty)
        let refusal = command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("path=/thumb/missing.jpg") }
        #expect(refusal?.text.contains("bytes=\(refused.body.count) ") == true, "\(command.transcript)")
        // and its reason, as its body says it, for whoever reads why
        #expect(refusal?.text.contains(#"reason="no input of that name for output thumb"#) == true, "\(command.transcript)")
        // A request the HTTP parser refuses before any route sees it is logged too
        let unreadable = try LoopbackHTTPClient.exchange(port: port, bytes: Array("GET thumb/p0.jpg HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(String(decoding: unreadable, as: UTF8.self).hasPrefix("HTTP/1.1 400"))
        let parser = command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("reason=\"unreadable") }
        #expect(parser?.text.contains("its target is not a path") == true, "\(command.transcript)")
    }

    @Test func aLargeAnswersLoggedTimeLastsUntilItsBodyWasTaken() throws {
        // Given a PNG answer far larger than a connection's buffers, already made
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.noise(width: 3000, height: 3000)), to: "in/noise.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"], outputs: [#"{"name": "png", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#])
        try directory.write(Data(json.utf8), to: "p.json")
        let (command, port) = try serve(directory, options: ["--log-level", "info"])
        defer { command.kill() }
        let made = try LoopbackHTTPClient.send(port: port, target: "/png/noise.png")
        #expect(made.status == 200 && made.body.count > 20_000_000)
        let first = command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("path=/png/noise.png") }
        #expect(first != nil, "\(command.transcript)")
        // When a client stops taking it for 2 s after its first piece
        let mark = command.lineCount
        let slow = try LoopbackHTTPClient.send(port: port, target: "/png/noise.png", reading: .init(bytes: 64 << 10, pause: 2, pauses: 1))
        #expect(slow.body.count == made.body.count)
        // Then its line of the access log counts those 2 s: the server could not hand the body
        // over before the client took most of it
        let line = command.waitForLine(after: mark, timeout: 60) { $0.isError && $0.text.contains("path=/png/noise.png") }
        let text = try #require(line?.text, "\(command.transcript)")
        let ms = text.split(separator: " ").first { $0.hasPrefix("ms=") }.flatMap { Int($0.dropFirst(3)) }
        #expect((ms ?? 0) >= 2000, "\(text)")
    }

    @Test func aFailureOfTheServersOwnIsLoggedWithItsCause() throws {
        // Given a server whose output's path is taken by a folder
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [Self.thumb], inputPattern: "in/*.jpg")
        try FileManager.default.createDirectory(atPath: directory.path + "/out/p0-small.webp/taken", withIntermediateDirectories: true)
        let (command, port) = try serve(directory)
        defer { command.kill() }

        // When the output is asked for
        let response = try LoopbackHTTPClient.send(port: port, target: "/thumb/p0.jpg")

        // Then the body names the output and input alone, and the log, at the default level, why
        #expect(response.status == 500)
        let body = String(decoding: response.body, as: UTF8.self)
        #expect(body.contains("could not store output thumb of p0.jpg") && !body.contains(directory.path), "\(body)")
        let line = command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("request failed") }
        let text = try #require(line?.text, "\(command.transcript)")
        #expect(text.contains("path=/thumb/p0.jpg") && text.contains("out/p0-small.webp"), "\(text)")
    }

    @Test func explainPrintsTheServeSectionWithoutItsKey() throws {
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [Self.thumb], inputPattern: "in/*.jpg")
        let plain = try CommandRunner.run(["explain", "p.json"], in: directory.url)
        #expect(plain.status == 0, "\(plain.standardError)")
        #expect(!plain.standardOutput.contains("pipeline serve"))
        let json = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [Self.thumb],
            extra: #""serve": {"cacheControl": "public, max-age=60", "key": "0123abcd", "salt": "ff00"}"#)
        try directory.write(Data(json.utf8), to: "p.json")
        let result = try CommandRunner.run(["explain", "p.json"], in: directory.url)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardOutput.contains(
                #"pipeline serve: Cache-Control "public, max-age=60", at most 1024 connections at once, 64 inputs waiting to be made, URLs signed (serve.key), 60s for a file to be made, 30s to drain at SIGTERM"#
            ), "\(result.standardOutput)")
        #expect(!result.standardOutput.contains("0123abcd"))
        // And the settings a server may be given besides, each in its words
        try directory.write(Fixtures.jpeg(Fixtures.noise(width: 8, height: 8)), to: "broken.jpg")
        let more = PipelineHarness.json(
            inputs: ["in/*.jpg"], outputs: [Self.thumb],
            extra: #""serve": {"clientHints": true, "drainTimeout": 5, "timeout": 12, "fallback": "broken.jpg"}"#)
        try directory.write(Data(more.utf8), to: "p.json")
        let described = try CommandRunner.run(["explain", "p.json"], in: directory.url)
        #expect(described.status == 0, "\(described.standardError)")
        for words in [
            "client hints asked for", "broken.jpg answered for an input that cannot be decoded", "12s for a file to be made",
            " 5s to drain at SIGTERM",
        ] {
            #expect(described.standardOutput.contains(words), "\(described.standardOutput)")
        }
    }

    @Test func anInvalidFileExits2WithoutListening() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data(#"{"version": 1, "inputs": ["*.jpg"], "outputs": [{"name": "x"}]}"#.utf8), to: "p.json")
        let result = try CommandRunner.run(["serve", "p.json", "--port", "0"], in: directory.url)
        #expect(result.status == 2, "\(result.standardError)")
        #expect(!result.standardOutput.contains("Serving"))
    }

    @Test func aRunThatFailsAfterItsRequestGaveUpIsLoggedWithItsReason() throws {
        // Given an input whose origin answers 404 after six seconds, and requests allowed one
        // (the gap leaves the request time to give up, however slowly its threads run)
        let origin = try TestHTTPServer { _, _ in
            Thread.sleep(forTimeInterval: 6)
            return .init(status: 404)
        }
        defer { origin.stop() }
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(
            inputs: [origin.url("/photo.jpg")], outputs: [Self.thumb], extra: #""fetch": {"retries": 0}, "serve": {"timeout": 1}"#)
        try directory.write(Data(json.utf8), to: "p.json")
        let (command, port) = try serve(directory)
        defer { command.kill() }

        // When the file is asked for, and the request gives up at the timeout
        let refused = try LoopbackHTTPClient.send(port: port, target: "/thumb/127.0.0.1_\(origin.port)/photo.jpg")
        #expect(refused.status == 503)

        // Then the run's failure, which no request is left to answer with, is logged with its reason
        let logged = command.waitForLine(timeout: 120) { $0.isError && $0.text.contains("a run no request waited for any more failed") }
        #expect(logged?.text.contains("404") == true, "\(command.transcript)")
    }

    @Test func aPortInUseExits1SayingSoInTheSystemsWords() throws {
        // Given a port another server listens on
        let other = try TestHTTPServer { _, _ in .init(body: Data()) }
        defer { other.stop() }
        let directory = try Fixtures.watchedFolder(inputs: 1, outputs: [Self.thumb], inputPattern: "in/*.jpg")

        // When the server is asked to listen there
        let result = try CommandRunner.run(["serve", "p.json", "--port", "\(other.port)"], in: directory.url)

        // Then it exits 1, naming the address and the reason, not the socket call that failed
        #expect(result.status == 1, "\(result.standardError)")
        #expect(
            result.standardError.contains("error: p.json: cannot serve on 127.0.0.1:\(other.port): Address already in use\n"),
            "\(result.standardError)")
        // and a port that is none is refused as a port, however it is written
        for arguments in [["--port", "-1"], ["--port=-1"], ["--port", "70000"]] {
            let refused = try CommandRunner.run(["serve", "p.json"] + arguments, in: directory.url)
            #expect(refused.status == 2, "\(arguments): \(refused.standardError)")
            #expect(refused.standardError.contains("--port: expected 0 to 65535"), "\(arguments): \(refused.standardError)")
        }
    }
}
#endif
