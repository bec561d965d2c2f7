import Foundation
import PipelineKit
import TestSupport
import Testing
import Vips

/// A run that knows its memory limit shapes itself to it: inputs wait rather than start decoding
/// past the budget, and an input that could never fit is that item's failure, named as such.
@Suite struct MemoryBudgetRunTests {
    /// A small photo and one that declares 8000×6000 (48 MP, a few KB as a flat PNG), with a
    /// full-size output: the large one needs about 400 MB while made.
    private func smallAndLarge() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 800, height: 600)), to: "in/small.jpg")
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 8000, height: 6000)), to: "in/large.png")
        try directory.write(
            Data(
                """
                {"version": 1, "inputs": ["in/*"], "outputs": [
                  {"name": "full", "steps": [{"rotate": {"angle": 90}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-full.jpg"},
                  {"name": "half", "steps": [{"resize": {"width": 400}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-half.jpg"}]}
                """.utf8), to: "p.json")
        return directory
    }

    @Test func anInputThatCouldNeverFitFailsAsSuchAndTheOthersAreMade() throws {
        let directory = try smallAndLarge()
        let file = directory.url.appendingPathComponent("p.json").path
        let result = try CommandRunner.run(["run", "--json", "--max-memory", "400MB", file])
        #expect(result.status == 1, "\(result.standardError)")
        let events = result.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let failures = events.filter { $0["event"] as? String == "itemFailed" }
        #expect(failures.count == 1)
        let failed = try #require(failures.first)
        #expect(failed["input"] as? String == "in/large.png")
        #expect(failed["kind"] as? String == "overMemoryBudget")
        #expect(failed["stage"] as? String == "decompress")
        let reason = failed["reason"] as? String ?? ""
        #expect(
            reason.contains("more than the run's whole memory budget") && reason.contains("of a 400 MB limit from --max-memory"),
            "\(reason)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.sorted() == ["out/small-full.jpg", "out/small-half.jpg"])

        let finished = try #require(events.last { $0["event"] as? String == "runFinished" })
        let memory = try #require(finished["memory"] as? [String: Any])
        #expect(memory["source"] as? String == "--max-memory")
        #expect(memory["limitBytes"] as? Int == 400_000_000)
        #expect((memory["peakAdmittedBytes"] as? Int ?? 0) > 0)
        #expect((memory["peakAdmittedBytes"] as? Int ?? .max) <= memory["budgetBytes"] as? Int ?? 0)
    }

    @Test func explainSaysWhichInputsCouldNeverFit() throws {
        let directory = try smallAndLarge()
        let file = directory.url.appendingPathComponent("p.json").path
        let limited = try CommandRunner.run(["explain", "--max-memory", "400MB", file])
        #expect(limited.status == 0)
        #expect(
            limited.standardOutput.contains("memory budget: ") && limited.standardOutput.contains("of a 400 MB limit from --max-memory"))
        #expect(limited.standardOutput.contains("1 input can never fit and will fail"), "\(limited.standardOutput)")
        let roomy = try CommandRunner.run(["explain", "--max-memory", "4GB", file])
        #expect(!roomy.standardOutput.contains("can never fit"), "\(roomy.standardOutput)")
    }

    /// A tile pyramid of the whole image (no steps) is made from the decoded image itself, so
    /// the input's estimate counts that image once: counted twice, a 7000×7000 PNG needs more
    /// than the budget of a 500 MB limit and could never be made under it.
    @Test func anOutputWithoutStepsIsCountedAsTheDecodedImageItIs() throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 7000, height: 7000)), to: "in/large.png")
        try directory.write(
            Data(
                #"{"version": 1, "inputs": ["in/*"], "outputs": [{"name": "zoom", "tiles": {"layout": "dz"}, "path": "out/{stem}.dzi"}]}"#
                    .utf8), to: "p.json")
        let file = directory.url.appendingPathComponent("p.json").path
        let explained = try CommandRunner.run(["explain", "--max-memory", "500MB", file])
        #expect(explained.status == 0)
        #expect(!explained.standardOutput.contains("can never fit"), "\(explained.standardOutput)")
        let run = try CommandRunner.run(["run", "--quiet", "--max-memory", "500MB", file])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/large.dzi"))
    }

    @Test func maxMemoryMustBeASize() throws {
        for value in ["lots", "-1", "600Mb"] {
            let result = try CommandRunner.run(["run", "--max-memory", value, "p.json"])
            #expect(result.status == 2)
            #expect(
                result.standardError.contains("--max-memory: expected a size such as 600MB or 2GiB, not \"\(value)\""),
                "\(result.standardError)")
        }
        let zero = try CommandRunner.run(["run", "--max-memory", "0", "p.json"])
        #expect(zero.status == 2)
        #expect(zero.standardError.contains("--max-memory: must be more than 0"), "\(zero.standardError)")
    }

    @Test func aLimitThatLeavesNothingForImagesIsRefusedBeforeTheRun() throws {
        // Given a limit below what the process needs of its own
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 40, height: 30)), to: "in/a.jpg")
        let outputs = [#"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#]
        let file = try directory.write(Data(PipelineHarness.json(inputs: ["in/*.jpg"], outputs: outputs).utf8), to: "p.json")
        // When a run is started under it
        let result = try CommandRunner.run(["run", "--max-memory", "50MB", file])
        // Then it is refused as the command line's mistake, saying what the process needs, and nothing runs
        #expect(result.status == 2, "\(result.standardError)")
        #expect(result.standardError.contains("--max-memory: 50MB leaves nothing for images beside the"), "\(result.standardError)")
        #expect(result.standardError.contains("Usage: pipeline run <file>"), "\(result.standardError)")
        #expect(!directory.allFiles().contains { $0.hasPrefix("out/") })
        // while explain shows the budget
        let explained = try CommandRunner.run(["explain", "--max-memory", "50MB", file])
        #expect(explained.status == 0, "\(explained.standardError)")
        #expect(explained.standardOutput.contains("0 MB for images of a 50 MB limit"), "\(explained.standardOutput)")
    }

    @Test func explainPointsOutDecodesThatCannotStream() throws {
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.gradient(width: 2000, height: 1500)
        try directory.write(try photo.encoded(suffix: ".jpg[Q=85]"), to: "in/baseline.jpg")
        try directory.write(try photo.encoded(suffix: ".jpg[Q=85,interlace]"), to: "in/progressive.jpg")
        try directory.write(try photo.encoded(suffix: ".png[interlace,compression=1]"), to: "in/interlaced.png")
        let plain = try photo.encoded(suffix: ".png[compression=1]")
        try directory.write(plain, to: "in/plain.png")
        // libvips' header shows a 1-bit grey PNG as 8-bit; the reader declines it on opening.
        try directory.write(try photo.extractingBands(0).encoded(suffix: ".png[bitdepth=1]"), to: "in/onebit.png")
        try directory.write(
            Data(
                PipelineHarness.json(
                    inputs: ["in/*"],
                    outputs: [
                        #"{"name": "t", "steps": [{"resize": {"width": 200}}], "encode": {"format": "jpeg"}, "path": "out/{name}.jpg"}"#
                    ]
                ).utf8), to: "p.json")
        let explain = try CommandRunner.run(["explain", directory.url.appendingPathComponent("p.json").path])
        let lines = explain.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("in/baseline.jpg") && !$0.contains("cannot stream") })
        // 3 MP: 4:2:0 coefficients at 2 bytes (9 MB); RGB at a byte a sample (9 MB).
        #expect(
            lines.contains { $0.contains("in/progressive.jpg") && $0.contains("cannot stream: it holds about 9 MB at full size") },
            "\(lines)")
        #expect(
            lines.contains { $0.contains("in/interlaced.png") && $0.contains("cannot stream: it holds about 9 MB at full size") },
            "\(lines)")
        #expect(
            lines.contains(
                "2 inputs cannot stream the decode (interlaced PNG or progressive JPEG): each is held at full size while decoded, whatever the outputs' sizes"
            ))
        // A plain PNG is read whole when memory allows: its rows, a filter byte each, and its file.
        let whole = String(format: "%.0f MB", Double((2000 * 3 + 1) * 1500 + plain.count) / 1_000_000)
        #expect(lines.contains { $0.contains("in/plain.png") && $0.contains("read whole when memory allows (about \(whole))") }, "\(lines)")
        #expect(lines.contains { $0.contains("in/onebit.png") && !$0.contains("read whole") }, "\(lines)")
        #expect(
            lines.contains(
                "1 PNG input is read whole with libdeflate (faster than row by row) while those being read hold under 128 MB together; others stream"
            ))
    }

    /// A large LZW TIFF is named as read with strips decoded ahead, with what they hold, and
    /// under a memory budget the figures are the run's: the PNG allowance an eighth of the
    /// budget, the TIFF's read-ahead at least two groups of strips.
    @Test func explainNamesTIFFsReadAheadAndTheBudgetsAllowances() throws {
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.gradient(width: 2400, height: 1300)
        // libvips writes 128-row strips: 2400 × 3 × 128 bytes a group; 48 MB hold eight of them.
        try directory.write(try photo.encoded(suffix: ".tif[compression=lzw]"), to: "in/large.tif")
        try directory.write(try photo.encoded(suffix: ".png[compression=1]"), to: "in/plain.png")
        try directory.write(
            Data(
                PipelineHarness.json(
                    inputs: ["in/*"],
                    outputs: [
                        #"{"name": "t", "steps": [{"resize": {"width": 200}}], "encode": {"format": "jpeg"}, "path": "out/{name}.jpg"}"#
                    ]
                ).utf8), to: "p.json")
        let pipelineFile = directory.url.appendingPathComponent("p.json").path

        let roomy = try CommandRunner.run(["explain", pipelineFile]).standardOutput.split(separator: "\n").map(String.init)
        // Eight groups, and the stored (compressed) strip each of the two workers reads whole.
        let tiffPath = directory.url.appendingPathComponent("in/large.tif").path
        let held = try #require(VipsImage.stripReadAhead(file: tiffPath, header: VipsImage.open(file: tiffPath))).heldBytes
        let storedPerWorker = Double(held - 8 * 2400 * 3 * 128) / 2
        let fileBytes = try #require(try FileManager.default.attributesOfItem(atPath: tiffPath)[.size] as? Int)
        #expect(storedPerWorker > 0 && storedPerWorker < Double(fileBytes), "\(held) bytes held")
        let eight = String(format: "%.0f MB", Double(held) / 1_000_000)
        #expect(
            roomy.contains { $0.contains("in/large.tif") && $0.contains("strips decoded ahead on worker threads (about \(eight))") },
            "\(roomy)")
        #expect(roomy.contains("1 TIFF input has its strips decoded ahead on worker threads (libtiff) while the rows are resized"))
        // A PNG read whole when the allowance has room has its rows decoded ahead otherwise.
        #expect(
            roomy.contains { $0.contains("in/plain.png") && $0.contains("otherwise rows decoded ahead on a worker thread") }, "\(roomy)")
        #expect(roomy.contains { $0.contains("hold under 128 MB together") })

        // Under a limit the budget is what is left after the process and libvips' reserve: the
        // PNGs get an eighth of it, a TIFF a sixteenth, in whole groups of strips (2 to 8).
        // A limit that leaves a budget above the allowances' floors even in a sanitizer's build,
        // whose process holds far more before it reads an image.
        let tight = try CommandRunner.run(["explain", pipelineFile, "--max-memory", "400MB"]).standardOutput.split(separator: "\n").map(
            String.init)
        let budgetLine = try #require(tight.first { $0.hasPrefix("memory budget: ") }, "\(tight)")
        let budgetMB = try #require(Double(String(budgetLine.dropFirst("memory budget: ".count).prefix { $0.isNumber })), "\(budgetLine)")
        #expect(budgetMB > 16 && budgetMB < 8 * 128, "a budget that leaves PNGs less than their 128 MB: \(budgetLine)")
        // The budget is printed rounded to a megabyte: either side of it may be the figure.
        let candidates: [(png: String, tiff: String)] = [budgetMB - 0.5, budgetMB + 0.5].map { (megabytes: Double) in
            let group = Double(2400 * 3 * 128)
            let groups: Double = max(2, min(8, (megabytes * 1_000_000 / 16 / group).rounded(.down)))
            let workers = min(2, groups - 1)
            return (
                String(format: "%.0f MB", megabytes / 8),
                String(format: "%.0f MB", (groups * group + workers * storedPerWorker) / 1_000_000)
            )
        }
        #expect(candidates.contains { figures in tight.contains { $0.contains("hold under \(figures.png) together") } }, "\(tight)")
        #expect(
            candidates.contains { figures in tight.contains { $0.contains("in/large.tif") && $0.contains("(about \(figures.tiff))") } },
            "\(tight)")
    }

    /// A TIFF stored as one strip (as some writers store it) is read row by row, and `explain`
    /// says so: whole strips would be one group, decoded before any row could be resized.
    @Test func explainSaysWhichTIFFsAreReadRowByRow() throws {
        let directory = try TemporaryDirectory()
        let photo = try Fixtures.gradient(width: 2400, height: 1300)
        try directory.write(try photo.encoded(suffix: ".tif[compression=lzw,tile_height=1300]"), to: "in/one-strip.tif")
        try directory.write(
            Data(
                PipelineHarness.json(
                    inputs: ["in/*"],
                    outputs: [
                        #"{"name": "t", "steps": [{"resize": {"width": 200}}], "encode": {"format": "jpeg"}, "path": "out/{name}.jpg"}"#
                    ]
                ).utf8), to: "p.json")
        let lines = try CommandRunner.run(["explain", directory.url.appendingPathComponent("p.json").path]).standardOutput
            .split(separator: "\n").map(String.init)
        #expect(
            lines.contains {
                $0.contains("in/one-strip.tif") && $0.contains("strips too large to hold whole: rows decoded ahead on a worker thread")
            },
            "\(lines)")
        #expect(lines.contains("1 TIFF input has its strips decoded ahead on worker threads (libtiff) while the rows are resized"))
    }

    /// A very wide image streamed down for a cover crop keeps rows of its full width in libvips'
    /// resize: `explain` says so with the figure, and the input's estimate counts it.
    @Test func explainSaysWhichImagesAreVeryWide() throws {
        let directory = try TemporaryDirectory()
        // 40000×500 to 320 high: decoded at 25600×320, reduced from rows 40000 wide (all 500
        // of them, at 4 bytes a pixel: 80 MB).
        try directory.write(try Fixtures.png(try Fixtures.solid(width: 40000, height: 500)), to: "in/wide.png")
        try directory.write(try Fixtures.jpeg(try Fixtures.gradient(width: 2000, height: 1500)), to: "in/photo.jpg")
        try directory.write(
            Data(
                PipelineHarness.json(
                    inputs: ["in/*"],
                    outputs: [
                        #"{"name": "t", "steps": [{"resize": {"width": 320, "height": 320, "fit": "cover"}}], "encode": {"format": "jpeg"}, "path": "out/{name}.jpg"}"#
                    ]
                ).utf8),
            to: "p.json")
        let lines = try CommandRunner.run(["explain", directory.url.appendingPathComponent("p.json").path, "--max-memory", "4GB"])
            .standardOutput
            .split(separator: "\n").map(String.init)
        #expect(
            lines.contains {
                $0.contains("in/wide.png") && $0.contains("decoded at 25600×320")
                    && $0.contains("very wide: libvips' resize keeps rows of full width, about 80 MB (grows with the width)")
            }, "\(lines)")
        #expect(lines.contains { $0.contains("in/photo.jpg") && !$0.contains("very wide") }, "\(lines)")
        let budget = try #require(lines.first { $0.hasPrefix("memory budget: ") }, "\(lines)")
        let figure = try #require(budget.range(of: "largest input: "), "\(budget)")
        let largest = try #require(Double(String(budget[figure.upperBound...].prefix { $0.isNumber })), "\(budget)")
        let rowsAndImage: Double = 80 + 25_600 * 320 * 4 / 1_000_000
        #expect(largest >= rowsAndImage, "the estimate counts the rows: \(budget)")
    }

    /// An image too wide to decode once for every output within the budget: its cover output
    /// decodes the window it keeps alone. `explain` says so, and the run makes what a run with
    /// room to decode it once makes.
    @Test func aCoverOfAVeryWideImageDecodesItsWindowAlone() throws {
        let directory = try TemporaryDirectory()
        // 40000×500, decoded once at 25600×320 for the cover, from rows 40000 wide: about 113 MB
        // estimated, over the 100 MB from which a 200 MB budget windows, under the 150 MB without one.
        try directory.write(try Fixtures.png(try Fixtures.panorama(width: 40000, height: 500)), to: "in/wide.png")
        for (file, folder) in [("p.json", "out"), ("q.json", "once")] {
            try directory.write(
                Data(
                    PipelineHarness.json(
                        inputs: ["in/*"],
                        outputs: [
                            #"{"name": "t", "steps": [{"resize": {"width": 320, "height": 320, "fit": "cover"}}], "encode": {"format": "png"}, "path": "\#(folder)/{stem}-t.png"}"#,
                            #"{"name": "f", "steps": [{"resize": {"width": 640, "height": 640, "fit": "inside"}}], "encode": {"format": "png"}, "path": "\#(folder)/{stem}-f.png"}"#,
                        ]
                    ).utf8), to: file)
        }
        let pipelineFile = directory.url.appendingPathComponent("p.json").path
        let explained = { (budget: String) throws -> [String] in
            try CommandRunner.run(["explain", pipelineFile, "--max-memory", budget]).standardOutput.split(separator: "\n").map(String.init)
        }

        // explain names the output that decodes its window, and the fit output alone sizes the decode
        let lines = try explained("200MB")
        #expect(
            lines.contains {
                $0.contains("in/wide.png") && $0.contains("decoded at 640×8")
                    && $0.contains(
                        #"too wide or tall to decode once for every output: "t" decodes the window it keeps alone, in a pass over the file of its own"#
                    )
            },
            "\(lines)")
        // and with room for one pass, nothing is windowed
        let roomy = try explained("4GB")
        #expect(roomy.contains { $0.contains("in/wide.png") && $0.contains("decoded at 25600×320") && !$0.contains("window") }, "\(roomy)")
        // With the cover output alone, no whole image is decoded at all
        try directory.write(
            Data(
                PipelineHarness.json(
                    inputs: ["in/*"],
                    outputs: [
                        #"{"name": "t", "steps": [{"resize": {"width": 320, "height": 320, "fit": "cover"}}], "encode": {"format": "png"}, "path": "alone/{stem}-t.png"}"#
                    ]
                ).utf8), to: "alone.json")
        let alone = try CommandRunner.run(["explain", directory.url.appendingPathComponent("alone.json").path, "--max-memory", "200MB"])
            .standardOutput.split(separator: "\n").map(String.init)
        #expect(alone.contains { $0.contains("in/wide.png") && $0.contains("decoded only in windows") }, "\(alone)")

        // A sanitized process holds more than the 200 MB limit before it reads an image: the runs
        // under it are an unsanitized binary's (a sanitized one would have no budget at all).
        guard let unsanitized = CommandRunner.memoryLimitExecutable() else { return }
        // When the same outputs are made under the budget, and without one (decoded once)
        let windowed = try CommandRunner.run(["run", "--quiet", "--max-memory", "200MB", pipelineFile], executable: unsanitized)
        #expect(windowed.status == 0, "\(windowed.standardError)")
        let once = try CommandRunner.run(["run", "--quiet", directory.url.appendingPathComponent("q.json").path])
        #expect(once.status == 0, "\(once.standardError)")

        // Then both runs made the same images, within resampling
        for name in ["wide-t.png", "wide-f.png"] {
            let a = try VipsImage.open(file: directory.url.appendingPathComponent("out/\(name)").path)
            let b = try VipsImage.open(file: directory.url.appendingPathComponent("once/\(name)").path)
            #expect(a.size == b.size, "\(name)")
            let (mean, largest) = try Fixtures.difference(a, b)
            #expect(mean < 1 && largest <= 6, "\(name): mean \(mean), largest \(largest)")
        }
        #expect(
            try VipsImage.open(file: directory.url.appendingPathComponent("out/wide-t.png").path).size == ImageSize(width: 320, height: 320)
        )

        // And an output made again alone (its file gone, the other up to date) is the same file
        let fit = directory.url.appendingPathComponent("out/wide-f.png")
        let first = try Data(contentsOf: fit)
        try FileManager.default.removeItem(at: fit)
        let again = try CommandRunner.run(["run", "--quiet", "--max-memory", "200MB", pipelineFile], executable: unsanitized)
        #expect(again.status == 0, "\(again.standardError)")
        #expect(try Data(contentsOf: fit) == first)
    }
}
