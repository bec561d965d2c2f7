import Vips

/// A source's journey, in the steps docs/architecture.md numbers: each step either finishes the
/// source (its reports) or hands the next step what it found.
extension RunExecution {
    /// What a step leaves: the source's reports when it goes no further, or what the next needs.
    enum Leg<Next> {
        case finished([ItemReport])
        case next(Next)
    }

    /// One source through every stage, fanned out to every output of every listing.
    func journey(
        of input: InputFile, for listings: [RunPlan.Listing], slot: InFlightWindow.Slot,
        incremental: IncrementalRuns
    ) async throws(CancellationError) -> [ItemReport] {
        // 1–2. Fetch, and the journal.
        let fetched: FetchedSource
        let judged: [OutputJob]
        switch try await fetch(input, for: listings, incremental: incremental) {
        case .finished(let reports): return reports
        case .next(let found): (fetched, judged) = found
        }
        // 3. The header.
        let header: HeaderFacts
        switch try await readHeader(input, fetched, jobs: judged, for: listings) {
        case .finished(let reports): return reports
        case .next(let facts): header = facts
        }
        // 4. Admission.
        let admitted: Admitted
        switch try await admit(header, slot: slot, for: listings) {
        case .finished(let reports): return reports
        case .next(let granted): admitted = granted
        }
        defer { memory.admission?.release(admitted.bytes) }
        // 5. Decompress.
        let decoded: DecodedImage
        let deadline: ItemDeadline
        switch try await decompress(input, fetched, header: header, admitted: admitted, for: listings) {
        case .finished(let reports): return reports
        case .next(let result): (decoded, deadline) = result
        }
        defer { deadline.cancel() }
        // Steps and encoders read the decoded image: a kill on it stops them when time runs out.
        deadline.vips.watch(decoded.image)
        for window in decoded.windows.values { deadline.vips.watch(window) }
        // 6. Fan-out (and 7, the manifest entry, when the last output is made).
        let (jobs, results) = try await fanOut(
            header.jobs, from: decoded, deadline: deadline, incremental: incremental, sized: header.sized)
        return Self.reports(listings, jobs, results, originalSize: decoded.originalSize, makingOriginal: header.widths.makingOriginal)
    }

    /// The source fetched and its outputs judged by the journal. A version known from a listing
    /// (an S3 object's ETag) decides before any fetch: a run whose outputs are all up to date
    /// downloads nothing.
    private func fetch(
        _ input: InputFile, for listings: [RunPlan.Listing], incremental: IncrementalRuns
    ) async throws(CancellationError) -> Leg<(FetchedSource, [OutputJob])> {
        var listedJobs: [OutputJob]?
        if let version = input.listedVersion {
            let jobs = asked(try await incremental.jobs(for: listings, version: version))
            if jobs.allSatisfy({ $0.upToDate != nil }), !lacksSourceSize(input, jobs) { return .finished(Self.upToDate(listings, jobs)) }
            listedJobs = jobs
        }
        let fetched: FetchedSource
        do {
            fetched = try await sources.load(input)
        } catch {
            return .finished(Self.failed(listings, try ItemError.wrapping(error, stage: .fetch)))
        }
        let jobs: [OutputJob]
        if let listedJobs, fetched.version == input.listedVersion {
            jobs = listedJobs
        } else {
            // The object may have been replaced since it was listed (a server lists once): its
            // outputs are judged, and fingerprinted, by the bytes fetched, never by the listing's.
            jobs = asked(try await incremental.jobs(for: listings, version: fetched.version))
        }
        // Leaving out jobs cannot make one out of date: nothing to read when all are up to date.
        if jobs.allSatisfy({ $0.upToDate != nil }) {
            guard lacksSourceSize(input, jobs) else { return .finished(Self.upToDate(listings, jobs)) }
            let look = try await lookAtHeader(of: input, fetched, for: listings, estimatingFor: nil)
            return .finished(Self.upToDate(listings, jobs, originalSize: look?.size))
        }
        return .next((fetched, jobs))
    }

    /// Whether the manifest needs the size of a remote input whose files are all up to date,
    /// which neither the journal nor an object kept (files made before they kept it) and the
    /// manifest has no entry to take it from: the input is then fetched for its header.
    private func lacksSourceSize(_ input: InputFile, _ jobs: [OutputJob]) -> Bool {
        guard input.isRemote, let manifest, !jobs.contains(where: { $0.upToDate?.sourceSize != nil }) else { return false }
        return !manifest.hasEarlierEntry(for: input.displayName)
    }

    /// `fetched`'s header, read on the fetch lane: its upright size and, with `outputsMade`, the
    /// memory its decode needs. Nil when it cannot be read (decoding then says why).
    private func lookAtHeader(
        of input: InputFile, _ fetched: FetchedSource, for listings: [RunPlan.Listing],
        estimatingFor outputsMade: (@Sendable (ImageSize) -> [Int]?)?
    ) async throws(CancellationError) -> ImageDecoder.HeaderLook? {
        do {
            return try await queues.fetch.run(for: input.displayName) { [decoder = decoder(for: listings), source = fetched.source] in
                decoder.look(at: source, estimatingFor: outputsMade)
            }
        } catch {
            throw CancellationError()
        }
    }

    /// What the header tells before the decode.
    struct HeaderFacts {
        /// The jobs left once widths the image is too narrow for are left out.
        let jobs: [OutputJob]
        /// The jobs the image's size leaves, before a request's choice of one file: the job a
        /// width's file turns out to be another width's is found here (`RunExecution.make`).
        let sized: [OutputJob]
        /// The outputs the decode is for: the jobs' that are not up to date.
        let made: [Int]
        /// What the image's size tells of the sets that enlarge (`PipelineDefinition.widths(at:)`).
        let widths: WidthsAtSize
        /// The memory the decode needs, when the run asked.
        let needs: DecodeMemoryEstimate?
        /// Whether the decode may need a share of the full-size decodes' target (a local file
        /// large enough to ask, `MemoryAccountant.checksUnstreamed`).
        let checksUnstreamed: Bool
    }

    /// The header, read once on the fetch lane for both of what it tells: the widths the image
    /// is too narrow for (left out of the jobs here, so that a re-run finds the same jobs up to
    /// date without decoding), and the memory the decode of the rest needs.
    private func readHeader(
        _ input: InputFile, _ fetched: FetchedSource, jobs judged: [OutputJob], for listings: [RunPlan.Listing]
    ) async throws(CancellationError) -> Leg<HeaderFacts> {
        var checksUnstreamed = false
        if case .file = fetched.source, MemoryAccountant.checksUnstreamed(fileBytes: input.byteCount) { checksUnstreamed = true }
        let estimates = memory.admission != nil || checksUnstreamed
        var jobs = judged
        var look: ImageDecoder.HeaderLook?
        var widths = WidthsAtSize()
        if plan.definition.choosesWidthsBySize || estimates {
            let outputsMade: (@Sendable (ImageSize) -> [Int]?)? =
                estimates
                ? { @Sendable [self] size in
                    Self.outputsToMake(
                        chosen(jobsMade(from: judged, size: size), widths: plan.definition.widths(at: size)))
                } : nil
            look = try await lookAtHeader(of: input, fetched, for: listings, estimatingFor: outputsMade)
            // Unreadable: the decode finds and reports why.
            if let look {
                jobs = jobsMade(from: judged, size: look.size)
                widths = plan.definition.widths(at: look.size)
                // A width the image is too narrow for now: its earlier `{hash}` file is of older bytes.
                let kept = Set(jobs.map { [$0.listing, $0.outputIndex] })
                for job in judged where !kept.contains([job.listing, job.outputIndex]) {
                    journal?.noteNoLongerMade(planned: job.target.plannedPath)
                }
            }
        }
        let sized = jobs
        jobs = chosen(jobs, widths: widths)
        if jobs.allSatisfy({ $0.upToDate != nil }) {
            return .finished(Self.upToDate(listings, jobs, originalSize: look?.size, makingOriginal: widths.makingOriginal))
        }
        return .next(
            HeaderFacts(
                jobs: jobs, sized: sized, made: Self.outputsToMake(jobs), widths: widths, needs: look?.needs,
                checksUnstreamed: checksUnstreamed))
    }

    /// What admission granted: bytes of the memory budget, and of the full-size decodes' target.
    struct Admitted {
        let bytes: Int64
        let unstreamed: Int64
    }

    /// Waits until the decode may start: a local decode that cannot stream waits, aside, for its
    /// share of the full-size decodes' target (`MemoryAccountant.unstreamedDecodes`; one fetched
    /// into memory has its bytes held already), then for its estimate to fit in the memory
    /// budget beside those being made. Aside first: an input waiting aside holds none of the
    /// budget, so those in the window, which may wait for the budget, never wait on it.
    private func admit(
        _ header: HeaderFacts, slot: InFlightWindow.Slot, for listings: [RunPlan.Listing]
    ) async throws(CancellationError) -> Leg<Admitted> {
        if let budget = memory.budget, let admission = memory.admission, let estimate = header.needs?.estimate,
            !admission.fits(estimate)
        {
            return .finished(
                Self.failed(
                    listings,
                    ItemError(
                        .overMemoryBudget, stage: .decompress,
                        reason:
                            "decoding it and making its outputs needs about \(MemoryBudget.megabytes(estimate)), more than the "
                            + "run's whole memory budget: \(budget)")))
        }
        let unstreamed = header.checksUnstreamed ? header.needs?.unstreamed ?? 0 : 0
        let unstreamedDecodes = memory.unstreamedDecodes
        if unstreamed > 0, !unstreamedDecodes.admitNow(unstreamed) {
            guard await slot.stepAside(while: { await unstreamedDecodes.admit(unstreamed) }) else { throw CancellationError() }
        }
        guard let admission = memory.admission, let estimate = header.needs?.estimate else {
            return .next(Admitted(bytes: 0, unstreamed: unstreamed))
        }
        guard await admission.admit(estimate) else {
            unstreamedDecodes.release(unstreamed)
            throw CancellationError()
        }
        return .next(Admitted(bytes: estimate, unstreamed: unstreamed))
    }

    /// The one decode, on a decompress lane; the input's clock (`limits.itemTimeout`) starts
    /// with it. Its share of the full-size decodes' target is given back when it ends.
    private func decompress(
        _ input: InputFile, _ fetched: FetchedSource, header: HeaderFacts, admitted: Admitted, for listings: [RunPlan.Listing]
    ) async throws(CancellationError) -> Leg<(DecodedImage, ItemDeadline)> {
        let unstreamedDecodes = memory.unstreamedDecodes
        defer { unstreamedDecodes.release(admitted.unstreamed) }
        let alone = MemoryAccountant.decodesAlone(unstreamed: admitted.unstreamed)
        do {
            return .next(
                try await queues.decompress.run(for: input.displayName, exclusive: alone) {
                    [self, decoder = decoder(for: listings), made = header.made] in
                    // The run's peak is this decode: what the decodes before it freed goes back first.
                    if alone { Vips.releaseFreeMemory() }
                    let deadline = startClock(of: input.displayName)
                    do {
                        return (try decoder.decode(fetched.source, only: made, within: deadline), deadline)
                    } catch {
                        deadline.cancel()
                        throw error
                    }
                })
        } catch {
            return .finished(Self.failed(listings, try failure(error, stage: .decompress)))
        }
    }

    /// The decoder for a source of `listings`: of the outputs made for it alone.
    private func decoder(for listings: [RunPlan.Listing]) -> ImageDecoder {
        decoder.applying(to: RunPlan.outputsMade(for: listings, outputCount: plan.definition.outputs.count))
    }

    /// The jobs of `jobs` an image of `size` gets: widths it is too narrow for are not made.
    private func jobsMade(from jobs: [OutputJob], size: ImageSize) -> [OutputJob] {
        guard plan.definition.choosesWidthsBySize else { return jobs }
        let made = plan.definition.outputsMade(for: size)
        return jobs.filter { made.contains($0.outputIndex) }
    }

    /// Of `jobs` before the image's size is known, those a run limited to one file
    /// (`RunPlan.wantedFile`) keeps: the ones up to date and the ones that may make that file.
    private func asked(_ jobs: [OutputJob]) -> [OutputJob] {
        plan.wantedFile.map { $0.candidates(jobs) } ?? jobs
    }

    /// Of `jobs` once widths the image is too narrow for are left out, those a run limited to
    /// one file keeps: the ones up to date and the one that makes that file (`widths`: what
    /// the image's size tells of the sets that enlarge).
    private func chosen(_ jobs: [OutputJob], widths: WidthsAtSize) -> [OutputJob] {
        plan.wantedFile.map { $0.chosen(jobs, widths: widths) } ?? jobs
    }

    /// The outputs a decode is for: those of `jobs` not up to date, which take no part (the
    /// decode is sized, and windowed, for the others).
    private static func outputsToMake(_ jobs: [OutputJob]) -> [Int] {
        Array(Set(jobs.filter { $0.upToDate == nil }.map(\.outputIndex))).sorted()
    }

    /// Reports of a source whose every output is up to date: of the input's size, what the
    /// journal or an object kept of a remote one, which was not fetched.
    private static func upToDate(
        _ listings: [RunPlan.Listing], _ jobs: [OutputJob], originalSize: ImageSize? = nil, makingOriginal: Set<Int> = []
    ) -> [ItemReport] {
        reports(
            listings, jobs, jobs.compactMap { $0.upToDate.map { .success($0) } },
            originalSize: originalSize ?? jobs.lazy.compactMap { $0.upToDate?.sourceSize }.first, makingOriginal: makingOriginal)
    }
}
