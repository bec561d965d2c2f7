import Foundation

extension RunPlan {
    /// What the run needs to know of a source without reading its listings back: where they are
    /// kept, and what orders and picks the sources.
    struct SourceRef: Sendable {
        /// Where the record of the source's first listing starts in the plan's file.
        let offset: Int64
        /// The size of the source's file when found, or -1 when it was not known.
        let byteCount: Int64
        /// Whether the source is fetched over HTTP(S) or from S3.
        let isRemote: Bool
        /// Whether the run's shard makes it (every source when the run is not sharded).
        let inShard: Bool
    }

    /// The sources a run makes, in the order first found, kept in a file rather than in memory:
    /// a plan of a million inputs holds a few bytes for each, and each source is read back (its
    /// listings with their output paths) when it is asked for.
    public struct SourceList: RandomAccessCollection, Sendable {
        let store: SourceStore
        let refs: [SourceRef]

        /// The first source's position.
        public var startIndex: Int { refs.startIndex }
        /// The position after the last source.
        public var endIndex: Int { refs.endIndex }

        /// The source at `position`, read back from the plan's file.
        public subscript(position: Int) -> Item { store.item(refs[position]) }

        /// The listings of these sources together: what a user counts as inputs.
        var listingCount: Int { refs.reduce(0) { $0 + 1 + store.laterListingCount(of: $1) } }

        /// Whether some source is fetched over HTTP(S) or from S3.
        var containsRemote: Bool { refs.contains(where: \.isRemote) }

        /// The sources whose references `isIncluded` keeps, in the same order.
        func filter(refs isIncluded: (SourceRef) -> Bool) -> SourceList {
            SourceList(store: store, refs: refs.filter(isIncluded))
        }

        /// The sources at `positions`, in that order.
        func picking(_ positions: some Sequence<Int>) -> SourceList {
            SourceList(store: store, refs: positions.map { refs[$0] })
        }
    }
}

/// The file a plan keeps its listings in: each listing as a record (`RunPlan.Listing.record()`:
/// its input and output paths) after its length.
final class SourceStore: Sendable {
    let reader: SpillFile.Reader
    /// Each output's part of its targets, made once for all the inputs.
    let outputs: [OutputTarget.Output]
    /// The records of the listings after the first of each source listed more than once, by the
    /// offset of the source's first: a plan keeps nothing more for a source listed once.
    private let laterListings: [Int64: [Int64]]
    /// A digest of the names of every listing, made as they were planned (`RunBatch`).
    let inputNames: String

    init(reader: SpillFile.Reader, outputs: [OutputTarget.Output], laterListings: [Int64: [Int64]], inputNames: String) {
        self.reader = reader
        self.outputs = outputs
        self.laterListings = laterListings
        self.inputNames = inputNames
    }

    /// The input of the listing whose record starts at `offset` in `reader`'s file.
    static func input(at offset: Int64, in reader: SpillFile.Reader) -> InputFile? {
        record(at: offset, in: reader).flatMap(RunPlan.Listing.input(inRecord:))
    }

    /// The listing whose record starts at `offset`, or nil when it cannot be read back.
    func listing(at offset: Int64) -> RunPlan.Listing? {
        Self.listing(at: offset, in: reader, outputs: outputs)
    }

    /// The listing whose record starts at `offset` in `reader`'s file, with the targets of `outputs`.
    static func listing(at offset: Int64, in reader: SpillFile.Reader, outputs: [OutputTarget.Output]) -> RunPlan.Listing? {
        record(at: offset, in: reader).flatMap { RunPlan.Listing(record: $0, outputs: outputs) }
    }

    /// The bytes of the record at `offset`, without its length.
    private static func record(at offset: Int64, in reader: SpillFile.Reader) -> [UInt8]? {
        guard let length = reader.read(4, at: offset)?.withUnsafeBytes({ $0.loadUnaligned(as: UInt32.self) }),
            let bytes = reader.read(Int(length), at: offset + 4)
        else { return nil }
        return [UInt8](bytes)
    }

    /// How many listings of the source follow its first.
    func laterListingCount(of ref: RunPlan.SourceRef) -> Int { laterListings[ref.offset]?.count ?? 0 }

    /// The offsets of the source's listings' records, first to last.
    func listingOffsets(of ref: RunPlan.SourceRef) -> [Int64] { [ref.offset] + (laterListings[ref.offset] ?? []) }

    /// The source with every listing of it, or one refused listing that says the plan's file
    /// could not be read back (the system's temporary folder failing under the run).
    func item(_ ref: RunPlan.SourceRef) -> RunPlan.Item {
        var listings: [RunPlan.Listing] = []
        for offset in listingOffsets(of: ref) {
            guard let listing = listing(at: offset) else {
                let unread = InputFile(path: "(input \(offset) of the plan)", displayName: "(an input of the plan)", subfolder: "")
                return RunPlan.Item(listings: [
                    RunPlan.Listing(
                        input: unread, targets: [],
                        refusal: "the plan's record of this input could not be read back from the temporary folder",
                        sameAs: nil)
                ])
            }
            listings.append(listing)
        }
        return RunPlan.Item(listings: listings)
    }

    /// The problem of a plan whose file cannot be made or written.
    /// Nothing in the file is at fault: the problem has no JSON path. A write that failed names
    /// the folder and the plan itself; a file that could not be made, the folder alone.
    static func unkeptProblem(_ error: ReportWriterError) -> PipelineFileError.Problem {
        var problem = PipelineFileError.Problem(path: "", location: nil, message: error.reason)
        if !error.path.isEmpty {
            problem = .init(
                path: "", location: nil,
                message: "the plan of the inputs cannot be kept in the folder for temporary files "
                    + "(\(FileManager.default.temporaryDirectory.path); TMPDIR sets it): \(error.reason)")
        }
        problem.isTheMachines = true
        return problem
    }

    /// Appends listings' records to a plan's file while it is planned, and reads them back.
    struct Builder {
        private let file: SpillFile
        let reader: SpillFile.Reader
        private var laterListings: [Int64: [Int64]] = [:]
        /// The names of the listings appended, in a digest: made here, as each is planned, so
        /// that a sharded run need not read every listing back for it.
        private var inputNames = ImageManifest.ShardRun.InputsDigest()

        /// A file in the system's folder for temporary files.
        init() throws(ReportWriterError) {
            file = try SpillFile(for: "the plan of the inputs")
            guard let reader = file.reader() else {
                throw ReportWriterError(path: "the plan of the inputs", reason: "no file descriptor is left to read it back")
            }
            self.reader = reader
        }

        /// Appends the record of `listing`, the first of its source or a later listing of the
        /// source whose first is at `first`; returns where it starts.
        mutating func append(_ listing: RunPlan.Listing, after first: Int64? = nil) throws(ReportWriterError) -> Int64 {
            let record = listing.record()
            var length = UInt32(record.count)
            let offset = try file.append(Data(bytes: &length, count: 4) + record)
            if let first { laterListings[first, default: []].append(offset) }
            inputNames.add(listing.input.displayName)
            return offset
        }

        /// The listing whose record starts at `offset`, with the targets of `outputs`, or nil
        /// when it cannot be read back.
        func listing(at offset: Int64, outputs: [OutputTarget.Output]) -> RunPlan.Listing? {
            SourceStore.listing(at: offset, in: reader, outputs: outputs)
        }

        /// The offsets of the records of the listings after the first of the source at `first`.
        func laterListings(of first: Int64) -> [Int64] { laterListings[first] ?? [] }

        /// The store, for reading only.
        consuming func finish(outputs: [OutputTarget.Output]) -> SourceStore {
            SourceStore(reader: reader, outputs: outputs, laterListings: laterListings, inputNames: inputNames.text)
        }
    }
}
