import Foundation
import Vips

/// The disk cache of fetched bytes: one file an entry, written to a temporary file and renamed,
/// with a checksum over its body, so a crash or `kill -9` at any moment leaves either the old
/// entry, the new one, or nothing, and a damaged entry is detected, removed and fetched again.
/// Several processes may share a directory: each write is a rename, each read takes one file.
/// Least recently used entries (by modification time, touched on every hit) go first when the
/// cache grows past `maxSize`.
public final class DiskCache: DataCaching {
    /// The folder the entries are kept in, one file each.
    public let directory: URL
    /// The most bytes the entries may take before the least recently used go.
    public let maxSize: Int64
    /// Bytes this process believes the cache holds; nil until first counted.
    private let estimatedSize = Locked<Int64?>(nil)
    /// The first store that failed, for `writeProblem`, and whether the run has said already
    /// that its folder cannot be written.
    private let storeProblem = Locked<(first: String?, folderTold: Bool)>((nil, false))
    /// Whether this cache has removed the temporary files a killed process left.
    private let leftoversSwept = Locked(false)

    /// The first store that failed, naming the file and the system's reason; nil when none did,
    /// or when the run said before it started that the folder cannot be written.
    public var writeProblem: String? { storeProblem.withLock { $0.folderTold ? nil : $0.first } }

    /// Keeps back the warning of failed stores: the run has said its folder cannot be written,
    /// and that fetched inputs are not cached.
    func holdWarningOfItsFolder() {
        storeProblem.withLock { $0.folderTold = true }
    }

    private static let magic = Data("PIPELINE-CACHE-1\n".utf8)

    /// A cache in `directory`, made when first written, kept below `maxSize` bytes.
    public init(directory: URL, maxSize: Int64) {
        self.directory = directory
        self.maxSize = maxSize
    }

    // MARK: DataCaching

    /// The entry for `url`, marked as recently used; nil when there is none or it is damaged (then removed).
    public func cachedResponse(for url: String) -> CachedResponse? {
        sweepLeftoversOnce()
        let file = entryPath(for: url)
        guard let data = FileManager.default.contents(atPath: file) else { return nil }
        guard var response = Self.decode(data), response.url == Self.digest(of: url) else {
            // A damaged entry (or, very rarely, another URL with the same hash) is not served.
            unlink(file)
            return nil
        }
        response.url = url
        // Mark as recently used, for eviction.
        utimes(file, nil)
        return response
    }

    /// Writes the entry under a temporary name and renames it, so a reader never sees half an entry.
    public func store(_ response: CachedResponse) {
        sweepLeftoversOnce()
        guard let encoded = Self.encode(response) else { return }
        let file = entryPath(for: response.url)
        let folder = (file as NSString).deletingLastPathComponent
        // A failure is kept to be said once, as a warning: the input was fetched, and only the
        // next run's copy of it is lost.
        func failed(_ path: String, _ reason: String) {
            storeProblem.withLock { $0.first = $0.first ?? "cannot write the cache entry \(path): \(reason)" }
        }
        func failed(_ path: String, _ code: Int32) { failed(path, String(cString: strerror(code))) }
        // The cache folder itself may be missing: made with its parents, which say why not.
        if mkdir(folder, 0o777) != 0, errno != EEXIST, let reason = CacheSettings.makeFolder(folder) {
            return failed(folder, reason)
        }
        // Named with the writing process, as outputs are: a killed run's file is swept by the
        // next run, where an unnamed one waited an hour.
        let temporary = folder + "/" + ImageWriter.temporaryName(for: (file as NSString).lastPathComponent)
        let descriptor = ImageWriter.createTemporary(temporary, flags: O_WRONLY)
        guard descriptor >= 0 else { return failed(temporary, errno) }
        var code = encoded.withUnsafeBytes { DescriptorWrite.all($0, to: descriptor) }
        if code == 0, fsync(descriptor) != 0 { code = errno }
        if close(descriptor) != 0, code == 0 { code = errno }
        guard code == 0 else {
            unlink(temporary)
            return failed(file, code)
        }
        guard rename(temporary, file) == 0 else {
            code = errno
            unlink(temporary)
            return failed(file, code)
        }
        let total = estimatedSize.withLock { size -> Int64 in
            let current = size ?? countBytes()
            size = current + Int64(encoded.count)
            return size ?? 0
        }
        if total > maxSize { evict() }
    }

    // MARK: Maintenance

    /// What the cache holds.
    public struct Statistics: Sendable, Equatable {
        /// How many entries.
        public let entries: Int
        /// Their size on disk, in bytes.
        public let bytes: Int64
    }

    /// Counts the entries in the folder and their size.
    public func statistics() -> Statistics {
        let entries = allEntries()
        return Statistics(entries: entries.count, bytes: entries.reduce(0) { $0 + $1.size })
    }

    /// Removes every entry (and leftovers of interrupted writes).
    /// - Returns: the entries removed, and those left with why the first could not be removed.
    @discardableResult
    public func clear() -> (removed: Statistics, left: Int, reason: String?) {
        var (removed, bytes, left) = (0, Int64(0), 0)
        var reason: String?
        for entry in allEntries(includingTemporary: true) {
            if unlink(entry.path) == 0 || errno == ENOENT {
                if !entry.isTemporary { (removed, bytes) = (removed + 1, bytes + entry.size) }
            } else {
                left += 1
                reason = reason ?? "\(entry.path): \(String(cString: strerror(errno)))"
            }
        }
        estimatedSize.withLock { $0 = 0 }
        return (Statistics(entries: removed, bytes: bytes), left, reason)
    }

    /// Removes the least recently used entries until the cache is within `maxSize`, and
    /// temporary files left by a killed process.
    public func evict() {
        let entries = allEntries(includingTemporary: true)
        let now = Date()
        var total: Int64 = 0
        var live: [(path: String, size: Int64, used: Date)] = []
        for entry in entries {
            if entry.isTemporary {
                if Self.isLeftover(entry, now: now) { unlink(entry.path) }
            } else {
                live.append((entry.path, entry.size, entry.used))
                total += entry.size
            }
        }
        for entry in live.sorted(by: { $0.used < $1.used }) where total > maxSize {
            unlink(entry.path)
            total -= entry.size
        }
        estimatedSize.withLock { $0 = total }
    }

    /// Removes, the first time the cache is used, the temporary files a killed process left
    /// (eviction does too, but a cache within its size is never evicted), and counts the
    /// entries' bytes on the same walk of the folder.
    private func sweepLeftoversOnce() {
        let first = leftoversSwept.withLock { swept in
            defer { swept = true }
            return !swept
        }
        guard first else { return }
        let now = Date()
        var total: Int64 = 0
        for entry in allEntries(includingTemporary: true) {
            if !entry.isTemporary {
                total += entry.size
            } else if Self.isLeftover(entry, now: now) {
                unlink(entry.path)
            }
        }
        estimatedSize.withLock { $0 = $0 ?? total }
    }

    /// Whether a temporary file was left by a killed process: its writer is gone
    /// (`TemporaryFileSweeper.isLeftover`), or, named before writers were (`.tmp-…`), untouched for
    /// an hour, far longer than a live writer takes between two writes to it.
    private static func isLeftover(_ entry: (path: String, size: Int64, used: Date, isTemporary: Bool), now: Date) -> Bool {
        let name = (entry.path as NSString).lastPathComponent
        guard name.hasPrefix(".tmp-") else {
            var info = stat()
            return lstat(entry.path, &info) == 0 && TemporaryFileSweeper.isLeftover(name: name, modified: info.st_mtim, before: now)
        }
        return entry.used < now.addingTimeInterval(-3600)
    }

    // MARK: Files

    func entryPath(for url: String) -> String {
        let hash = FNV1a.hex(url)
        return directory.path + "/" + hash.prefix(2) + "/" + hash + ".entry"
    }

    private func countBytes() -> Int64 {
        allEntries().reduce(0) { $0 + $1.size }
    }

    private func allEntries(includingTemporary: Bool = false) -> [(path: String, size: Int64, used: Date, isTemporary: Bool)] {
        let manager = FileManager.default
        guard let folders = try? manager.contentsOfDirectory(atPath: directory.path) else { return [] }
        var entries: [(String, Int64, Date, Bool)] = []
        for folder in folders where folder.count == 2 {
            let folderPath = directory.path + "/" + folder
            for name in (try? manager.contentsOfDirectory(atPath: folderPath)) ?? [] {
                let isTemporary = name.hasPrefix(".tmp-") || name.contains(ImageWriter.temporaryMarker)
                guard name.hasSuffix(".entry") || (includingTemporary && isTemporary) else { continue }
                let path = folderPath + "/" + name
                var info = stat()
                guard stat(path, &info) == 0 else { continue }
                let used = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
                entries.append((path, Int64(info.st_size), used, isTemporary))
            }
        }
        return entries
    }

    // MARK: Format: magic line, metadata length, metadata JSON, body; the metadata holds the
    // body's length and checksum.

    private struct Metadata: Codable {
        /// The URL's `digest(of:)`, not the URL: a URL may carry credentials (a presigned
        /// signature, a password), and nothing in the cache folder holds them in the clear.
        var url: String
        var etag: String?
        var lastModified: String?
        var storedAt: Date
        var maxAge: Double?
        var bodyLength: Int
        var bodyChecksum: UInt64
    }

    static func encode(_ response: CachedResponse) -> Data? {
        let metadata = Metadata(
            url: digest(of: response.url), etag: response.etag, lastModified: response.lastModified,
            storedAt: response.storedAt, maxAge: response.maxAge,
            bodyLength: response.body.count, bodyChecksum: FNV1a.hash(response.body))
        guard let json = try? JSONEncoder().encode(metadata) else { return nil }
        var data = magic
        data.append(Data("\(json.count)\n".utf8))
        data.append(json)
        data.append(response.body)
        return data
    }

    /// What an entry records of the URL it holds: its SHA-256, enough to tell it from another
    /// URL whose entry has the same file name.
    static func digest(of url: String) -> String {
        "sha256:" + SHA256.hex(Data(url.utf8))
    }

    /// The response an entry holds, its `url` the digest of the URL (see `Metadata.url`).
    static func decode(_ data: Data) -> CachedResponse? {
        guard data.starts(with: magic) else { return nil }
        var rest = data.dropFirst(magic.count)
        guard let newline = rest.firstIndex(of: UInt8(ascii: "\n")),
            let length = Int(String(decoding: rest[rest.startIndex..<newline], as: UTF8.self)),
            length > 0, rest.distance(from: newline, to: rest.endIndex) > length
        else { return nil }
        rest = rest[rest.index(after: newline)...]
        let jsonEnd = rest.index(rest.startIndex, offsetBy: length)
        guard let metadata = try? JSONDecoder().decode(Metadata.self, from: rest[rest.startIndex..<jsonEnd]) else { return nil }
        let body = Data(rest[jsonEnd...])
        guard body.count == metadata.bodyLength, FNV1a.hash(body) == metadata.bodyChecksum else { return nil }
        return CachedResponse(
            url: metadata.url, body: body, etag: metadata.etag, lastModified: metadata.lastModified,
            storedAt: metadata.storedAt, maxAge: metadata.maxAge)
    }
}
