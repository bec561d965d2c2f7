import Foundation

/// A manifest's entries kept on disk as a run makes them, and written out at its end sorted by
/// source, in the very bytes `ImageManifest.jsonData()` gives: a run of many inputs holds a few
/// bytes for each entry, not the entry.
///
/// The entries go to an unlinked temporary file beside the manifest (the disk the manifest is
/// written to), so nothing is left behind by a run that is killed. Not for several threads at
/// once: `ManifestWriter` holds it behind its lock.
final class ManifestSpool {
    /// Where each entry lies in the file: its source, then its text.
    private struct Place {
        let offset: Int64
        let sourceLength: Int32
        let entryLength: Int32
    }

    private let descriptor: Int32
    private var places: [Place] = []
    private var end: Int64 = 0

    /// A spool in `folder`.
    init(folder: String) throws(ReportWriterError) {
        var template = Array((folder + "/.manifest" + ImageWriter.temporaryMarker + "XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw ReportWriterError(path: folder, reason: Self.reason) }
        // Open, it stays readable; unlinked, it goes when the run does, however it ends.
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Keeps the entry for `source`, as `entryText(_:)` made it.
    func append(source: String, text: Data) throws(ReportWriterError) {
        let source = Data(source.utf8)
        guard write(source + text, at: end) else { throw ReportWriterError(path: "its entries", reason: Self.reason) }
        places.append(Place(offset: end, sourceLength: Int32(source.count), entryLength: Int32(text.count)))
        end += Int64(source.count + text.count)
    }

    /// Writes the manifest of `pipeline` with every entry kept, sorted by source, to `path`
    /// through a temporary file renamed over it.
    func writeManifest(pipeline: String, to path: String) throws(ReportWriterError) {
        guard !places.isEmpty else { return try Self.writeEmptyManifest(pipeline: pipeline, to: path) }
        // The sources are read back for the sort only: the entries stay on disk.
        var sorted: [(source: String, place: Place)] = []
        sorted.reserveCapacity(places.count)
        for place in places {
            guard let source = read(Int(place.sourceLength), at: place.offset) else { throw Self.unreadable(path) }
            sorted.append((String(decoding: source, as: UTF8.self), place))
        }
        sorted.sort { ImageManifest.sortsBefore($0.source, $1.source) }
        let name = try Self.encoded { try ImageManifest.makeEncoder().encode(pipeline) }
        try ReportWriter.writeAtomically(to: path) { write throws(ReportWriterError) in
            guard write(Data("{\n  \"inputs\" : [\n".utf8)) else { return false }
            for (index, entry) in sorted.enumerated() {
                let place = entry.place
                guard let text = read(Int(place.entryLength), at: place.offset + Int64(place.sourceLength)) else {
                    throw Self.unreadable(path)
                }
                guard write(text), write(Data((index == sorted.count - 1 ? "\n" : ",\n").utf8)) else { return false }
            }
            return write(Data("  ],\n  \"pipeline\" : ".utf8) + name + Data(",\n  \"version\" : 1\n}\n".utf8))
        }
    }

    /// Writes the manifest of `pipeline` with no entries to `path`.
    static func writeEmptyManifest(pipeline: String, to path: String) throws(ReportWriterError) {
        try ReportWriter.writeAtomically(encoded { try ImageManifest(pipeline: pipeline, inputs: []).jsonData() }, to: path)
    }

    /// `entry` as `jsonData()` prints it inside the manifest's list of inputs: each line indented
    /// two levels deeper (but the empty line of an empty list), no line break after the last.
    static func entryText(_ entry: ImageManifest.Input) throws(ReportWriterError) -> Data {
        let text = String(decoding: try encoded { try ImageManifest.makeEncoder().encode(entry) }, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "    " + $0 }
        return Data(lines.joined(separator: "\n").utf8)
    }

    private static func encoded(_ body: () throws -> Data) throws(ReportWriterError) -> Data {
        do {
            return try body()
        } catch {
            throw ReportWriterError(path: "its entries", reason: "\(error)")
        }
    }

    private static func unreadable(_ path: String) -> ReportWriterError {
        ReportWriterError(path: path, reason: "cannot read back its entries: " + reason)
    }

    private static var reason: String { String(cString: strerror(errno)) }

    private func write(_ data: Data, at offset: Int64) -> Bool {
        data.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let count = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
    }

    private func read(_ count: Int, at offset: Int64) -> Data? {
        ManifestFile.read(descriptor, count, at: offset)
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
    }

    private let descriptor: Int32
    /// By the FNV-1a hash of the source: an entry found is checked to be that source's.
    private let places: [UInt64: Place]

    /// The manifest at `path`, or nil when there is none to read.
    init?(path: String) {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        descriptor = dup(fileno(file))
        guard descriptor >= 0 else { return nil }
        var places: [UInt64: Place] = [:]
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        var offset: Int64 = 0
        var entryStart: Int64?
        var source: UInt64?
        while true {
            let length = getline(&line, &capacity, file)
            guard length > 0, let line else { break }
            let text = String(cString: line)
            if text == "    {\n" {
                entryStart = offset
                source = nil
            } else if let start = entryStart, text == "    }\n" || text == "    },\n" {
                // The entry's text ends with its brace.
                if let source { places[source] = places[source] ?? Place(offset: start, length: Int32(offset + 5 - start)) }
                entryStart = nil
            } else if entryStart != nil, text.hasPrefix("      \"source\" : ") {
                var value = text.dropFirst("      \"source\" : ".count).dropLast()
                if value.hasSuffix(",") { value = value.dropLast() }
                if let name = try? JSONDecoder().decode(String.self, from: Data(value.utf8)) { source = FNV1a.hash(Data(name.utf8)) }
            }
            offset += Int64(length)
        }
        self.places = places
    }

    deinit { close(descriptor) }

    /// The entry for `source`, or nil.
    func entry(for source: String) -> ImageManifest.Input? {
        guard let place = places[FNV1a.hash(Data(source.utf8))],
            let data = ManifestFile.read(descriptor, Int(place.length), at: place.offset),
            let entry = try? JSONDecoder().decode(ImageManifest.Input.self, from: data), entry.source == source
        else { return nil }
        return entry
    }
}

/// Reading part of a file by its offset, for the spool and the previous manifest.
private enum ManifestFile {
    static func read(_ descriptor: Int32, _ count: Int, at offset: Int64) -> Data? {
        var data = Data(count: count)
        let complete = data.withUnsafeMutableBytes { bytes -> Bool in
            var done = 0
            while done < count {
                let read = pread(descriptor, bytes.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if read < 0, errno == EINTR { continue }
                guard read > 0 else { return false }
                done += read
            }
            return true
        }
        return complete ? data : nil
    }
}
