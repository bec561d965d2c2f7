import Foundation
import Vips

extension PlanExplanation {
    /// The explanation as lines of text: the inputs and a few of them read, how inputs are
    /// read, the outputs, the stages, and memory.
    public var text: String {
        (inputLines + readerLines + outputLines + memoryLines).joined(separator: "\n")
    }

    /// The shard, the inputs' counts and formats, and the sampled inputs one a line.
    private var inputLines: [String] {
        var lines: [String] = []
        if let shard {
            lines.append("shard: \(shard.shard) (\(shard.source)): \(inputs) of \(shard.totalInputs) inputs")
        }
        lines.append("inputs: \(inputs) (\(sources) distinct source\(sources == 1 ? "" : "s"), \(remoteInputs) remote)")
        if !formats.isEmpty {
            lines.append(
                "formats (from headers): " + formats.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        lines += samples.map { "  " + $0.line(maxPixels: maxPixels, animatedSearches: animatedSearches) }
        // The sources beyond the few shown, so the list is not read as every input.
        if !samples.isEmpty, sources > samples.count {
            lines.append("  … and \(sources - samples.count) more")
        }
        return lines
    }

    /// How many inputs each way of reading takes, and the untrusted formats.
    private var readerLines: [String] {
        var lines: [String] = []
        if !allowedUntrusted.isEmpty {
            lines.append("untrusted formats read (decompress.allowUntrusted): \(allowedUntrusted.joined(separator: ", "))")
        }
        if untrustedRefused > 0 {
            lines.append(
                "\(untrustedRefused) input\(untrustedRefused == 1 ? " is" : "s are") SVG or PDF, which the run refuses: "
                    + "add the format to decompress.allowUntrusted to read \(untrustedRefused == 1 ? "it" : "them")")
        }
        if unstreamedInputs > 0 {
            lines.append(
                "\(unstreamedInputs) input\(unstreamedInputs == 1 ? "" : "s") cannot stream the decode (interlaced PNG or progressive JPEG): "
                    + "each is held at full size while decoded, whatever the outputs' sizes")
        }
        if wholePNGInputs > 0 {
            lines.append(
                "\(wholePNGInputs) PNG input\(wholePNGInputs == 1 ? " is" : "s are") read whole with libdeflate (faster than row by row) while "
                    + "those being read hold under \(MemoryBudget.megabytes(wholePNGCapacity)) together; others stream")
        }
        if stripReadAheadInputs > 0 {
            lines.append(
                "\(stripReadAheadInputs) TIFF input\(stripReadAheadInputs == 1 ? " has its" : "s have their") strips decoded ahead "
                    + "on worker threads (libtiff) while the rows are resized")
        }
        return lines
    }

    /// The outputs one a line, the stages' widths and the in-flight bound.
    private var outputLines: [String] {
        ["outputs per input: \(outputs.count)"] + outputs.map { "  \($0.escapingControlCharacters)" } + [
            "stage widths: " + stageWidths.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ")
                + " (\(AvailableCores.count) core\(AvailableCores.count == 1 ? "" : "s") this process may use; unless the file sets them, "
                + "decompress and encode get one lane per core, process one per two)",
            "in flight: at most \(inFlight) inputs",
        ]
    }

    /// The bound on image memory, the budget, and the memory account's table.
    private var memoryLines: [String] {
        var lines: [String] = []
        let megabytes = { (bytes: Int64) in String(format: "%.0f MB", Double(bytes) / 1_000_000) }
        // Said as a bound: a run's measured peak is usually well below it, and a figure called
        // the peak reads as a forecast.
        // Remote inputs' headers are not fetched, so a bound from the local ones alone would pass
        // for one over all of them.
        let unknown =
            "explain fetches none, so their sizes are unknown until the run (decompress.maxPixels, \(maxPixels), bounds each decode)"
        var memory: String
        if remoteInputs == inputs, remoteInputs > 0 {
            memory = "image memory, upper bound: not known: the inputs are remote, and " + unknown
        } else {
            memory = "image memory, upper bound: \(megabytes(imageMemoryBound)) ("
            if imageMemoryBound < estimatedPeakImageBytes {
                memory += "the memory budget; without it \(megabytes(estimatedPeakImageBytes)): "
            }
            memory +=
                "in flight × the largest input's decode, outputs and largest encode, as if every input in flight were "
                + "that large and wholly decoded at once; streamed decodes usually peak well below it)"
        }
        if estimatedPeakDownloadBytes > 0 { memory += ", plus up to \(megabytes(estimatedPeakDownloadBytes)) of downloads" }
        lines.append(memory)
        if remoteInputs > 0, remoteInputs < inputs {
            lines.append("  not counting the \(remoteInputs) remote input\(remoteInputs == 1 ? "" : "s"): " + unknown)
        }
        if let memoryBudget {
            lines.append(
                "memory budget: \(memoryBudget): an input starts decoding only while the estimates of those "
                    + "being made fit in it (largest input: \(megabytes(largestInputEstimate)))")
            if inputsOverBudget > 0 {
                lines.append(
                    "  \(inputsOverBudget) input\(inputsOverBudget == 1 ? "" : "s") can never fit and will fail: "
                        + "raise the limit, or lower decompress.maxPixels or the outputs' sizes")
            }
        } else {
            lines.append(
                "memory budget: none set (no --max-memory, cgroup memory limit or RLIMIT_AS): the in-flight bound alone limits memory")
        }
        return lines + MemoryAccountant.table(memoryAccount)
    }
}

extension PlanExplanation.Sample {
    /// What reading this input takes: its format and size, the shrink on load, the decode, and
    /// how it is read when that is not plain streaming.
    /// - Parameter animatedSearches: the outputs that keep an animation's frames and search
    ///   for a quality, which fail for an animated input.
    func line(maxPixels: Int, animatedSearches: [String]) -> String {
        guard let size, let decodeSize else {
            return "\(input.escapingControlCharacters): " + (refusal?.escapingControlCharacters ?? "header unreadable")
        }
        guard size.pixelCount <= maxPixels else {
            return "\(input.escapingControlCharacters): \(format ?? "?") \(size): refused, more than decompress.maxPixels (\(maxPixels))"
        }
        let shrink = loadShrink > 1 ? "shrink-on-load \(loadShrink), " : ""
        let decode = decoded(at: decodeSize, animatedSearches: animatedSearches)
        return "\(input.escapingControlCharacters): \(format ?? "?") \(size), \(shrink)\(decode)" + readingNote + wideNote
    }

    /// The decode: at what size, or in windows; an animation's frames.
    private func decoded(at decodeSize: ImageSize, animatedSearches: [String]) -> String {
        let decoded = decodesWhole ? "decoded at \(decodeSize)" : "decoded only in windows"
        guard let frames = keptFrames else { return decoded }
        let count = frameText ?? "\(frames)"
        if let frameRefusal { return "animated, \(count) frames: refused, \(frameRefusal)" }
        let failing =
            animatedSearches.isEmpty
            ? ""
            : "; fails for \(animatedSearches.map(\.quotedValue).joined(separator: ", ")): a quality target scores still images "
                + "(give a quality, or \"decompress\": {\"animation\": \"first\"})"
        return "animated, \(count) frames: " + decoded + " each, every frame for the gif, webp and avif outputs, the first for others"
            + failing
    }

    /// How the file is read when it is not simply streamed, with what that holds.
    private var readingNote: String {
        if unstreamedBytes > 0 {
            return "; interlaced, so the decode cannot stream: it holds about \(MemoryBudget.megabytes(unstreamedBytes)) at full size"
        }
        if wholeImageBytes > 0 {
            return "; its loader decodes the whole image, whatever the outputs need: about \(MemoryBudget.megabytes(wholeImageBytes))"
        }
        if wholePNGBytes > 0 {
            let whole = "; read whole when memory allows (about \(MemoryBudget.megabytes(wholePNGBytes)))"
            guard pngRowsAheadBytes > 0 else { return whole }
            return whole + ", otherwise rows decoded ahead on a worker thread (about \(MemoryBudget.megabytes(pngRowsAheadBytes)))"
        }
        if pngRowsAheadBytes > 0 {
            return "; rows decoded ahead on a worker thread (about \(MemoryBudget.megabytes(pngRowsAheadBytes)))"
        }
        if stripsReadRowByRow {
            return "; strips too large to hold whole: rows decoded ahead on a worker thread, "
                + "part of a strip at a time (about \(MemoryBudget.megabytes(stripReadAheadBytes)))"
        }
        if stripReadAheadBytes > 0 {
            return "; strips decoded ahead on worker threads (about \(MemoryBudget.megabytes(stripReadAheadBytes)))"
        }
        return ""
    }

    /// What a very wide or tall image costs: outputs decoded in windows, rows of full width.
    private var wideNote: String {
        var wide =
            wideRowsBytes > 0
            ? "; very wide: libvips' resize keeps rows of full width, about \(MemoryBudget.megabytes(wideRowsBytes)) (grows with the width)"
            : ""
        if !windowedOutputs.isEmpty {
            let names = windowedOutputs.map { "\"\($0)\"" }.joined(separator: ", ")
            let one = windowedOutputs.count == 1
            wide =
                "; too wide or tall to decode once for every output: \(names) decode\(one ? "s the window it keeps" : " the windows they keep") "
                + "alone, in \(one ? "a pass over the file of its own" : "passes over the file of their own")" + wide
        }
        return wide
    }
}
