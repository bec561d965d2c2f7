import Foundation
import TestSupport
import Testing
import Vips

/// Under an address-space limit (`ulimit -v`, RLIMIT_AS) a run shapes itself instead of dying:
/// glibc's arenas are limited to two and new threads get 2 MiB stacks, so libvips' workers
/// still start. Before, 10 of 13 runs died between 0.7 and 1.35 GB, and at 600 MB every input
/// failed with "Error creating thread".
@Suite struct AddressSpaceLimitTests {
    @Test func everyInputIsMadeUnderA600MBAddressSpaceLimit() throws {
        // Before the fixtures are made: a sanitized build cannot show anything under a memory limit.
        guard !CommandRunner.skipsMemoryLimitTests() else { return }
        let directory = try TemporaryDirectory()
        // Eight distinct photos of up to 7 megapixels, JPEG and PNG.
        for index in 0..<8 {
            let image = try Fixtures.gradient(width: 1600 + 200 * index, height: 1200 + 150 * index)
            let data = index % 3 == 0 ? try Fixtures.png(image) : try Fixtures.jpeg(image)
            try directory.write(data + Data("\(index)".utf8), to: "in/p\(index).\(index % 3 == 0 ? "png" : "jpg")")
        }
        try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["in/*.jpg", "in/*.png"], "outputs": [
                  {"name": "small", "steps": [{"resize": {"width": 320, "height": 320, "fit": "cover"}}], "encode": {"format": "webp"}, "path": "out/{stem}-small.webp"},
                  {"name": "large", "steps": [{"resize": {"width": 1280, "height": 1280, "fit": "inside"}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-large.jpg"},
                  {"name": "placeholder", "steps": [{"resize": {"width": 32}}, {"blur": {"sigma": 2}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-placeholder.jpg"}]}
                """.utf8), to: "p.json")

        guard
            let run = try CommandRunner.runUnderAddressSpaceLimit(
                kilobytes: 600_000, ["run", "--quiet", directory.url.appendingPathComponent("p.json").path])
        else {
            return
        }
        #expect(run.status == 0, "\(run.output)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.count == 24)
    }

    @Test func anAddressSpaceLimitThatLeavesNothingForImagesIsRefusedBeforeTheRun() throws {
        guard !CommandRunner.skipsMemoryLimitTests() else { return }
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/a.jpg")
        let outputs = [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#]
        let file = try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs).utf8), to: "p.json")
        // When a run starts under a limit that leaves the process room to start, and none for images
        guard let run = try CommandRunner.runUnderAddressSpaceLimit(kilobytes: 330_000, ["run", file]) else { return }
        // Then it is refused as --max-memory's would be, naming the limit, and nothing runs
        #expect(run.status == 2, "\(run.output)")
        #expect(run.output.contains("from RLIMIT_AS (ulimit -v) leaves nothing for images"), "\(run.output)")
        #expect(!directory.allFiles().contains { $0.hasPrefix("out/") })
    }

    /// A server answering one large file to many clients at once sends it from the disk a piece
    /// at a time: before, each answer held the whole file, 16 of 54 MB outgrew a 1 GB limit, and
    /// the process died of it (SIGILL), every answer cut off.
    @Test func aServerSendsALargeFileToManyClientsAtOnceUnderItsLimit() async throws {
        // Before the fixtures are made: a sanitized build cannot show anything under a memory limit.
        guard let binary = CommandRunner.memoryLimitExecutable() else { return }
        // Given a server, under a 1 GB address-space limit, of an output of 54 MB (an
        // uncompressed TIFF of 18 megapixels), made by a first request
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 6000, height: 3000), quality: 80), to: "in/wide.jpg")
        try directory.write(
            Data(
                PipelineHarness.json(
                    inputs: ["in/*.jpg"], outputs: [#"{"name": "tif", "encode": {"format": "tiff"}, "path": "out/{stem}.tif"}"#]
                ).utf8), to: "p.json")
        let command = try BackgroundCommand(
            ["serve", "p.json", "--port", "0"], in: directory.url, addressSpaceLimit: 1_000_000, executable: binary)
        defer { command.kill() }
        let line = command.waitForLine(timeout: 180) { !$0.isError && $0.text.hasPrefix("Serving ") }
        let port = try #require(line?.text.split(separator: ":").last.flatMap { Int($0) }, "\(command.transcript)")
        let made = try LoopbackHTTPClient.send(port: port, target: "/tif/wide.jpg")
        #expect(made.status == 200)
        let size = made.body.count
        #expect(size > 50_000_000, "the file is too small to show anything: the test proves nothing")

        // When 16 clients take it at once, each slowly enough that all 16 answers are under way together
        let answers = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for _ in 0..<16 {
                group.addTask {
                    let answer = try await LoopbackHTTPClient.onThread {
                        try LoopbackHTTPClient.send(port: port, target: "/tif/wide.jpg", reading: .init(bytes: 1 << 20, pause: 0.05))
                    }
                    return (answer.status, answer.body == made.body)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }

        // Then every client has the whole file, and the server goes on
        #expect(answers.count == 16 && answers.allSatisfy { $0 == (200, true) }, "\(answers)\n\(command.transcript)")
        #expect(try LoopbackHTTPClient.send(port: port, target: "/healthz").status == 200, "\(command.transcript)")
    }

    /// Eight 12-megapixel photos with a full-size output, all eight in flight: together they
    /// need far more than the limit allows. Before admission by memory, under 700 MB 5 of 16
    /// outputs failed ("out of memory", "Error creating thread"); now inputs wait for room.
    /// Eight distinct 12-megapixel photos, each made into a full-size rotated PNG and a 2000 px
    /// JPEG, all eight in flight: together they need far more memory than the limits below.
    private func eightLargePhotos() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        // One photo made once (a 12 MP fixture is slow to draw), a different trailing byte per
        // copy so the files differ.
        let photo = try Fixtures.jpeg(try Fixtures.gradient(width: 4000, height: 3000), quality: 80)
        for index in 0..<8 {
            try directory.write(photo + Data("\(index)".utf8), to: "in/p\(index).jpg")
        }
        // The full-size PNG at zlib's fastest level: a PNG encoder's memory is the same at any
        // level, and its compression would be most of the processor time this takes.
        try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["in/*.jpg"], "inFlight": 8,
                 "decompress": {"concurrency": 8}, "process": {"concurrency": 8}, "encode": {"concurrency": 8}, "outputs": [
                  {"name": "full", "steps": [{"rotate": {"angle": 90}}], "encode": {"format": "png", "compression": 1}, "path": "out/{stem}-full.png"},
                  {"name": "half", "steps": [{"resize": {"width": 2000}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-half.jpg"}]}
                """.utf8), to: "p.json")
        return directory
    }

    /// The `memory` object of the `runFinished` event in `--json` output.
    private func finishedMemory(_ output: String) throws -> [String: Any] {
        let finished = output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.last { $0["event"] as? String == "runFinished" }
        return try #require(finished?["memory"] as? [String: Any])
    }

    /// Before admission by memory, under 600 MB 6 of 16 outputs were made ("out of memory",
    /// "Error creating thread"); now inputs wait for room.
    @Test func inputsThatTogetherExceedTheLimitWaitInsteadOfFailing() throws {
        // Before the fixtures are made: a sanitized build cannot show anything under a memory limit.
        guard !CommandRunner.skipsMemoryLimitTests() else { return }
        let directory = try eightLargePhotos()
        guard
            let run = try CommandRunner.runUnderAddressSpaceLimit(
                kilobytes: 600_000, ["run", "--json", directory.url.appendingPathComponent("p.json").path])
        else {
            return
        }
        #expect(run.status == 0, "\(run.output)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.count == 16)
        let memory = try finishedMemory(run.output)
        #expect(memory["source"] as? String == "RLIMIT_AS (ulimit -v)")
        let peak = memory["peakAdmittedBytes"] as? Int ?? .max, budget = memory["budgetBytes"] as? Int ?? 0
        #expect(peak > 0 && peak <= budget, "estimates admitted at once stay within the budget: \(peak) of \(budget)")
    }

    /// In a container: a memory cgroup of 500 MB, whose limit the kernel enforces by killing.
    /// Before, the run was killed (exit 137) with nothing made; now the budget comes from the
    /// cgroup and every output is made.
    @Test func everyOutputIsMadeInAMemoryCgroupThatKillsPastItsLimit() throws {
        // Before the fixtures are made: a sanitized build cannot show anything under a memory limit.
        guard !CommandRunner.skipsMemoryLimitTests() else { return }
        let directory = try eightLargePhotos()
        guard
            let run = try CommandRunner.runInMemoryCgroup(
                limitBytes: 500_000_000, ["run", "--json", directory.url.appendingPathComponent("p.json").path])
        else {
            return
        }
        #expect(run.status == 0, "\(run.output)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.count == 16)
        let memory = try finishedMemory(run.output)
        #expect((memory["source"] as? String)?.hasPrefix("cgroup v") == true, "\(memory)")
        #expect(memory["limitBytes"] as? Int ?? 0 <= 500_000_000)
    }

    /// AV1 encoders running side by side (an encode lane per core): libaom holds several times
    /// the image while it encodes (see Benchmarks/RESULTS.md, "Memory of the encoders"). Two
    /// 2-megapixel photos encoded at once outgrow a memory cgroup of 460 MB, and the kernel
    /// kills the run (exit 137, nothing made) when admission counts only the images; it counts
    /// each input's encoder, so one waits and both are made. Two inputs are enough to put two
    /// encoders side by side, and at this size the encodes are quick.
    @Test func encodersThatHoldHundredsOfMegabytesWaitForRoomInAMemoryCgroup() throws {
        // Before the fixtures are made: a sanitized build cannot show anything under a memory limit.
        guard !CommandRunner.skipsMemoryLimitTests() else { return }
        let directory = try TemporaryDirectory()
        let storm = try VipsImage.open(file: CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/samples/storm.jpg").path)
        for (width, height) in [(1920, 1080), (1900, 1060)] {
            let enlarged = try storm.resized(
                horizontalScale: Double(width) / Double(storm.width),
                verticalScale: Double(height) / Double(storm.height), kernel: .lanczos3)
            try directory.write(try Fixtures.jpeg(enlarged, quality: 75), to: "in/storm-\(width).jpg")
        }
        try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["in/*.jpg"], "decompress": {"concurrency": 2}, "encode": {"concurrency": 2},
                 "outputs": [{"name": "full", "steps": [], "encode": {"format": "avif"}, "path": "out/{stem}.avif"}]}
                """.utf8), to: "p.json")
        guard
            let run = try CommandRunner.runInMemoryCgroup(
                limitBytes: 460_000_000, ["run", "--json", directory.url.appendingPathComponent("p.json").path])
        else {
            return
        }
        #expect(run.status == 0, "\(run.output)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.count == 2)
        let memory = try finishedMemory(run.output)
        let peak = memory["peakAdmittedBytes"] as? Int ?? .max, budget = memory["budgetBytes"] as? Int ?? 0
        #expect(peak <= budget && peak >= 94 * 1900 * 1060, "one AV1 encoder's share was admitted at a time: \(peak) of \(budget)")
    }
}
