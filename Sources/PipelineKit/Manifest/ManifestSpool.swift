import Foundation

/// A manifest's entries kept on disk as a run makes them, and written out at its end sorted by
/// source, in the very bytes `ImageManifest.jsonData()` gives: a run of many inputs holds a few
/// bytes for each entry, not the entry.
///
/// The entries go to a `SpillFile` beside the manifest (the disk the manifest is written to),
/// or, when that disk takes nothing (read-only, full), to the system's folder for temporary
/// files: the manifest there may hold these very entries already (everything up to date), and
/// the write finds whether it needs changing.
/// Not for several threads at once: `ManifestWriter` holds it behind its lock.
final class ManifestSpool {
    /// Where each entry lies in the file: its source, then its text.
    private struct Place {
        let offset: Int64
        let sourceLength: Int32
        let entryLength: Int32
    }

    private var file: SpillFile
    private var places: [Place] = []
    /// Whether the file is the system's temporary one already.
    private var movedAside = false
    private static let purpose = "the manifest's entries"

    /// A spool in `folder`, else in the system's folder for temporary files.
    init(folder: String) throws(ReportWriterError) {
        do {
            file = try SpillFile(folder: folder, for: Self.purpose)
        } catch {
            guard let aside = try? SpillFile(for: Self.purpose) else { throw error }
            file = aside
            movedAside = true
        }
    }

    /// Keeps the entry for `source`, as `entryText(_:)` made it.
    func append(source: String, text: Data) throws(ReportWriterError) {
        let source = Data(source.utf8)
        let offset: Int64
        do {
            offset = try file.append(source + text)
        } catch {
            // A disk that filled up: the entries so far go aside, at the same offsets.
            guard !movedAside, let aside = try? SpillFile(for: Self.purpose), try file.copyAll(to: { (try? aside.append($0)) != nil })
            else { throw error }
            file = aside
            movedAside = true
            offset = try file.append(source + text)
        }
        places.append(Place(offset: offset, sourceLength: Int32(source.count), entryLength: Int32(text.count)))
    }

    /// Hands each entry kept to `body`, in the order kept: its source and its text.
    func forEachEntry(_ body: (_ source: String, _ text: Data) throws(ReportWriterError) -> Void) throws(ReportWriterError) {
        for place in places {
            let source = try file.read(Int(place.sourceLength), at: place.offset)
            try body(
                String(decoding: source, as: UTF8.self),
                try file.read(Int(place.entryLength), at: place.offset + Int64(place.sourceLength)))
        }
    }

    /// Writes the manifest of `pipeline` with every entry kept, sorted by source, and a shard's
    /// record of its run (`shard`), to `path` through a temporary file renamed over it; a
    /// manifest that already says so is left as it is.
    func writeManifest(pipeline: String, shard: ImageManifest.ShardRun? = nil, to path: String) throws(ReportWriterError) {
        // The sources are read back for the sort only: the entries stay on disk.
        var sorted: [(source: String, place: Place)] = []
        sorted.reserveCapacity(places.count)
        for place in places {
            sorted.append((String(decoding: try file.read(Int(place.sourceLength), at: place.offset), as: UTF8.self), place))
        }
        sorted.sort { ImageManifest.sortsBefore($0.source, $1.source) }
        let around = try Self.encoded {
            try ImageManifest.makeEncoder().encodedAround(list: "inputs", of: ImageManifest(pipeline: pipeline, inputs: [], shard: shard))
        }
        try ReportWriter.writeAtomically(to: path, unlessUnchanged: true) { write throws(ReportWriterError) in
            guard write(around.head) else { return false }
            for (index, entry) in sorted.enumerated() {
                let place = entry.place
                let text = try file.read(Int(place.entryLength), at: place.offset + Int64(place.sourceLength))
                guard write(index == 0 ? text : Data(",\n".utf8) + text) else { return false }
            }
            // `jsonData()` ends the text with a line break.
            return write(around.tail + Data("\n".utf8))
        }
    }

    /// `entry` as `jsonData()` prints it inside the manifest's list of inputs.
    static func entryText(_ entry: ImageManifest.Input) throws(ReportWriterError) -> Data {
        try encoded { try ImageManifest.makeEncoder().encodedTwoLevelsDeep(entry) }
    }

    private static func encoded<Value>(_ body: () throws -> Value) throws(ReportWriterError) -> Value {
        do {
            return try body()
        } catch {
            throw ReportWriterError(path: "its entries", reason: "\(error)")
        }
    }
}

/// The entries of a manifest written before, found on disk by source when asked for: a run
/// keeps placeholders of files that did not change, and holds a few bytes an entry to find them.
///
/// It reads the layout `ImageManifest.jsonData()` writes (each entry of the list of inputs
/// between lines `    {` and `    }`); a manifest laid out otherwise (edited by hand) yields no
/// entries, and its placeholders are made again.
final class PreviousManifest: Sendable {
    private struct Place: Sendable {
        let offset: Int64
        let length: Int32
        /// Where the entry's line `"source" : …` starts in its text, or -1 when it has none.
        let sourceLine: Int32
    }

    private let descriptor: Int32
    /// The version of the file read.
    let stamp: FileStamp?
    /// By the FNV-1a hash of the source: an entry found is checked to be that source's.
    private let places: [UInt64: Place]
    /// Every entry, in the order written.
    private let everyPlace: [Place]

    /// The manifest at `path`, or nil when there is none to read.
    init?(path: String) {
        // A FIFO at the manifest's path would hold the open for ever: it is no manifest to keep.
        guard let regular = try? RegularFile(opening: path) else { return nil }
        let copy = dup(regular.descriptor)
        guard copy >= 0 else { return nil }
        guard let file = fdopen(copy, "r") else {
            close(copy)
            return nil
        }
        defer { fclose(file) }
        descriptor = dup(fileno(file))
        guard descriptor >= 0 else { return nil }
        stamp = FileStamp(descriptor: descriptor)
        var places: [UInt64: Place] = [:]
        var order: [Place] = []
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        var offset: Int64 = 0
        var entryStart: Int64?
        var source: UInt64?
        var sourceLine: Int64 = -1
        while true {
            let length = getline(&line, &capacity, file)
            guard length > 0, let line else { break }
            // Lines are compared as bytes: most are neither an entry's braces nor its source.
            if strcmp(line, "    {\n") == 0 {
                entryStart = offset
                source = nil
                sourceLine = -1
            } else if let start = entryStart, strcmp(line, "    }\n") == 0 || strcmp(line, "    },\n") == 0 {
                // The entry's text ends with its brace.
                let place = Place(offset: start, length: Int32(offset + 5 - start), sourceLine: Int32(sourceLine))
                order.append(place)
                if let source { places[source] = places[source] ?? place }
                entryStart = nil
            } else if let start = entryStart, strncmp(line, Self.sourcePrefix, Self.sourcePrefix.utf8.count) == 0,
                let name = Self.source(inLine: String(cString: line))
            {
                source = FNV1a.hash(Data(name.utf8))
                sourceLine = offset - start
            }
            offset += Int64(length)
        }
        self.places = places
        everyPlace = order
    }

    deinit { close(descriptor) }

    /// Every entry it has, in the order written, as its source and its text as the file has it
    /// (`ManifestSpool.entryText(_:)`'s layout), without decoding it: a run of part of a plan
    /// keeps the other entries as they are, and decoding and encoding each again would cost
    /// more than the run's own work on a large manifest. An entry without a source it can read
    /// is left out.
    func forEachEntryText(_ body: (_ source: String, _ text: Data) throws(ReportWriterError) -> Void) throws(ReportWriterError) {
        for place in everyPlace where place.sourceLine >= 0 {
            guard let data = SpillFile.read(descriptor, Int(place.length), at: place.offset) else { continue }
            let line = data.dropFirst(Int(place.sourceLine)).prefix { $0 != UInt8(ascii: "\n") }
            guard let source = Self.source(inLine: String(decoding: line, as: UTF8.self)) else { continue }
            try body(source, data)
        }
    }

    private static let sourcePrefix = "      \"source\" : "

    /// The source an entry's line `"source" : "…"` names (its key two levels deep, as
    /// `jsonData()` indents it), or nil when the line is not one.
    static func source(inLine line: String) -> String? {
        var value = line.utf8[...]
        guard value.starts(with: sourcePrefix.utf8) else { return nil }
        value = value.dropFirst(sourcePrefix.utf8.count)
        if value.last == UInt8(ascii: "\n") { value = value.dropLast() }
        if value.last == UInt8(ascii: ",") { value = value.dropLast() }
        // Most names need no escapes: their text is between the quotes.
        let quote = UInt8(ascii: "\"")
        if value.count >= 2, value.first == quote, value.last == quote {
            let inner = value.dropFirst().dropLast()
            if !inner.contains(where: { $0 == quote || $0 == UInt8(ascii: "\\") }) { return String(decoding: inner, as: UTF8.self) }
        }
        return try? JSONDecoder().decode(String.self, from: Data(value))
    }

    /// The entry for `source`, or nil.
    func entry(for source: String) -> ImageManifest.Input? {
        guard let place = places[FNV1a.hash(Data(source.utf8))],
            let data = SpillFile.read(descriptor, Int(place.length), at: place.offset),
            let entry = try? JSONDecoder().decode(ImageManifest.Input.self, from: data), entry.source == source
        else { return nil }
        return entry
    }
}
