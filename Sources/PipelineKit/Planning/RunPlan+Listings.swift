extension RunPlan.Item {
    /// The listings that need work of their own: neither refused nor a repeat of another.
    var listingsToMake: [RunPlan.Listing] {
        listings.filter { $0.refusal == nil && $0.sameAs == nil }
    }

    /// One report per listing, in listing order, from the reports of `listingsToMake` (in
    /// their order): a refused listing reports its refusal, a repeated one its twin's outcome
    /// under its own name.
    func reportForEveryListing(from made: [ItemReport]) -> [ItemReport] {
        var made = made.makeIterator()
        var reports: [ItemReport] = []
        for listing in listings {
            if let refusal = listing.refusal {
                let error = ItemError(.refused, stage: .fetch, reason: refusal)
                reports.append(
                    ItemReport(
                        input: listing.input, written: [],
                        failures: [ItemFailure(input: listing.input.displayName, output: nil, error: error)],
                        originalSize: nil))
            } else if let twin = listing.sameAs {
                let original = reports[twin]
                reports.append(
                    ItemReport(
                        input: listing.input, written: original.written, failures: original.failures,
                        originalSize: original.originalSize))
            } else if let report = made.next() {
                reports.append(listing.reportingRefusedOutputs(in: report))
            }
        }
        return reports
    }
}

extension RunPlan.Listing {
    /// `report` of the listing's work with a failure for each of its refused outputs.
    func reportingRefusedOutputs(in report: ItemReport) -> ItemReport {
        guard !refusedOutputs.isEmpty else { return report }
        let refusals = refusedOutputs.map { refused in
            let target = targets[refused.index]
            return ItemFailure(
                input: input.displayName, output: target.outputName,
                error: ItemError(.refused, stage: .fetch, reason: refused.failureReason), file: target.fileDescription)
        }
        return ItemReport(
            input: report.input, written: report.written, failures: report.failures + refusals, originalSize: report.originalSize)
    }

    /// The listing as bytes, for the plan's file: its input, then its targets' paths and its
    /// refused outputs, its refusal or its twin, so that reading it back plans nothing again.
    func record() -> [UInt8] {
        var writer = RecordWriter()
        writer.append(record: input.record())
        if let refusal {
            writer.append(UInt32(1))
            writer.append(refusal)
        } else if let sameAs {
            writer.append(UInt32(2))
            writer.append(UInt32(sameAs))
        } else {
            writer.append(UInt32(0))
            writer.append(UInt32(targets.count))
            for target in targets { writer.append(target.plannedPath) }
            writer.append(UInt32(refusedOutputs.count))
            for refused in refusedOutputs {
                writer.append(UInt32(refused.index))
                writer.append(refused.reason)
            }
        }
        return writer.bytes
    }

    /// The input of the listing whose `record()` `bytes` are, or nil when they are not one.
    static func input(inRecord bytes: [UInt8]) -> InputFile? {
        var reader = RecordReader(bytes)
        return reader.record().flatMap(InputFile.init(record:))
    }

    /// The listing whose `record()` `bytes` are, with the targets of `outputs`, or nil when
    /// they are not one.
    init?(record bytes: [UInt8], outputs: [OutputTarget.Output]) {
        var reader = RecordReader(bytes)
        guard let input = reader.record().flatMap(InputFile.init(record:)), let kind = reader.uint32() else { return nil }
        switch kind {
        case 1:
            guard let refusal = reader.string() else { return nil }
            self.init(input: input, targets: [], refusal: refusal, sameAs: nil)
        case 2:
            guard let twin = reader.uint32() else { return nil }
            self.init(input: input, targets: [], refusal: nil, sameAs: Int(twin))
        default:
            guard let count = reader.uint32(), count == outputs.count else { return nil }
            var targets: [OutputTarget] = []
            targets.reserveCapacity(outputs.count)
            for output in outputs {
                guard let path = reader.string(), let target = try? OutputTarget(output, plannedPath: path, input: input) else {
                    return nil
                }
                targets.append(target)
            }
            guard let refusedCount = reader.uint32(), refusedCount <= outputs.count else { return nil }
            var refused: [RunPlan.RefusedOutput] = []
            for _ in 0..<refusedCount {
                guard let index = reader.uint32(), Int(index) < outputs.count, let reason = reader.string() else { return nil }
                refused.append(RunPlan.RefusedOutput(index: Int(index), reason: reason))
            }
            self.init(input: input, targets: targets, refusal: nil, sameAs: nil, refusedOutputs: refused)
        }
        guard reader.isAtEnd else { return nil }
    }
}
