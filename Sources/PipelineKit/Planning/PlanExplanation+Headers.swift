import Vips

extension PlanExplanation {
    /// What the headers of the local inputs tell, counted as each is read: the samples, the
    /// formats, and each input's memory estimate against the budget.
    struct HeaderSurvey {
        let definition: PipelineDefinition
        let decoder: ImageDecoder
        let memoryBudget: MemoryBudget?
        let sampleCount: Int
        var formats: [String: Int] = [:]
        var samples: [Sample] = []
        var largestEstimate: Int64 = 0
        var inputsOverBudget = 0
        var unstreamedInputs = 0
        var wholePNGInputs = 0
        var stripReadAheadInputs = 0
        var untrustedRefused = 0

        init(definition: PipelineDefinition, decoder: ImageDecoder, memoryBudget: MemoryBudget?, sampleCount: Int) {
            self.definition = definition
            self.decoder = decoder
            self.memoryBudget = memoryBudget
            self.sampleCount = sampleCount
        }

        /// Reads `input`'s header, unless the run would refuse the file, and counts what it tells,
        /// for the outputs at `applicable` (nil: all), which the run makes of it.
        mutating func read(_ input: InputFile, applicable: Set<Int>? = nil) {
            // Also unblocks, before the header is read, the untrusted loaders the file allows.
            let source = EncodedSource.file(path: input.path, byteCount: input.byteCount ?? 0)
            // A FIFO, device or socket (a link to /dev/zero) is not read, as the run refuses it:
            // a loader sniffing /dev/zero for its format would read for ever. Nor is an empty
            // file. Each refusal is told as the run tells it: its stage, then why.
            let unopened: String?
            do {
                _ = try RegularFile(opening: input.path)
                unopened = input.byteCount == 0 ? ItemError.emptyFile : nil
            } catch {
                unopened = error.reason
            }
            if let unopened {
                if samples.count < sampleCount {
                    samples.append(
                        Sample(
                            input: input.displayName, format: nil, size: nil, loadShrink: 1, decodeSize: nil,
                            refusal: "\(Stage.fetch.rawValue): \(unopened)"))
                }
                return
            }
            let untrusted = decoder.untrustedLoaderRefusal(source)
            if untrusted != nil { untrustedRefused += 1 }
            // A refused file's header is not read either: its loader is not made for hostile files.
            // libjxl's lines for a damaged JPEG XL's header are kept off stderr, as a run keeps them.
            var refusal = decoder.unreadableReason(source).map(Self.told)
            let header =
                refusal == nil
                ? LibjxlOutput.capturingLines(source) { () -> VipsImage? in
                    do {
                        return try decoder.openHeader(source, options: "")
                    } catch {
                        refusal = (error as? ItemError).map(Self.told) ?? "\(Stage.decompress.rawValue): \(error)"
                        return nil
                    }
                }.0 : nil
            // Named as outputs and `/info` name formats; the loader decides how the file is read.
            let format = header.map(ImageDecoder.formatName(of:))
            if let format { formats[format, default: 0] += 1 }
            var sample = Sample(input: input.displayName, format: format, size: nil, loadShrink: 1, decodeSize: nil, refusal: refusal)
            if let header, let format {
                sample = measure(input, header: header, format: format, decoder: decoder.applying(to: applicable))
            }
            if samples.count < sampleCount { samples.append(sample) }
        }

        /// A refusal as the run tells it after the input's name: its stage, then why.
        private static func told(_ error: ItemError) -> String { "\(error.stage.rawValue): \(error.reason)" }

        /// The sample of an input whose header was read: how it would be decoded and what that
        /// holds, its estimate counted against the budget.
        private mutating func measure(_ input: InputFile, header: VipsImage, format: String, decoder: ImageDecoder) -> Sample {
            let loader = header.loader ?? ""
            let decompress = definition.decompress
            let upright = decompress.autorotate ? header.orientedSize : (width: header.width, height: header.height)
            let size = ImageSize(width: upright.width, height: upright.height)
            // The run refuses it from its header: it holds nothing, and counts for no estimate.
            guard size.pixelCount <= decompress.maxPixels else {
                return Sample(input: input.displayName, format: format, size: size, loadShrink: 1, decodeSize: size)
            }
            let unstreamed = DecodeMemoryEstimate.unstreamedDecodeBytes(header)
            if unstreamed > 0 { unstreamedInputs += 1 }
            let whole = DecodeMemoryEstimate.wholeImageDecodeBytes(header)
            let decodePlan = decoder.decodePlan(for: size, loader: loader, streams: DecodeMemoryEstimate.streams(header))
            let allowed = decodePlan.allowedShrink
            let decodeSize = decodePlan.decodeSize
            let shrink = DecodePlan.loadShrink(
                allowed: allowed, loader: loader, fast: decompress.fastShrinkOnLoad,
                stored: ImageSize(width: header.width, height: header.height))
            let wholePNG = WholePNGReader.heldBytes(file: input.path, header: header, fileBytes: Int(input.byteCount ?? 0))
            if wholePNG > 0 { wholePNGInputs += 1 }
            let file = EncodedSource.file(path: input.path, byteCount: input.byteCount ?? 0)
            let stripsAhead = decoder.tiffStripsReader.plan(file, header: header)
            if stripsAhead != nil { stripReadAheadInputs += 1 }
            var sample = Sample(
                input: input.displayName, format: format, size: size, loadShrink: shrink, decodeSize: decodeSize,
                unstreamedBytes: unstreamed, wholePNGBytes: wholePNG,
                stripReadAheadBytes: Int64(stripsAhead?.heldBytes ?? 0), stripsReadRowByRow: stripsAhead?.rowByRow ?? false,
                pngRowsAheadBytes: decoder.pngRowsReader.heldBytes(file, header: header))
            sample.wideRowsBytes = decodePlan.wideRowsBytes
            // Said where the outputs need less than the whole image, which the loader holds anyway.
            sample.wholeImageBytes = decodeSize == size ? 0 : whole
            sample.windowedOutputs = decodePlan.windows.keys.sorted().map { definition.outputs[$0].name }
            sample.decodesWhole = decodePlan.decodesWhole
            // The decoder's own estimate, as admission weighs it: an animation's every frame, a
            // loader that decodes the whole image, the readers and the largest encode.
            let estimate = decoder.memoryNeeds(of: file, header: header, only: nil).estimate
            let declared = decoder.keptFrames(header, loader: loader)
            let counted = declared.map { ImageDecoder.frameCount($0, loader: loader, source: file) }
            if let declared, let counted,
                let refusal = ImageDecoder.frameRefusal(counted, declared: declared, loader: loader, maxFrames: decompress.maxFrames)
            {
                sample.keptFrames = counted.count ?? declared
                sample.frameText = counted.text
                sample.frameRefusal = refusal
            } else if decoder.keepsAnimation(header, loader: loader) {
                sample.keptFrames = header.pageCount
            }
            largestEstimate = max(largestEstimate, estimate)
            if let memoryBudget, estimate > memoryBudget.bytes { inputsOverBudget += 1 }
            return sample
        }
    }
}
