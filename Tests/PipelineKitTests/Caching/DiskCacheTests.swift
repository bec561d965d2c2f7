import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// The disk cache: whole entries or none, damage detected, LRU eviction, shared by processes.
@Suite struct DiskCacheTests {
    func response(_ url: String, bytes: Int = 1000, fill: UInt8 = 7) -> CachedResponse {
        CachedResponse(
            url: url, body: Data(repeating: fill, count: bytes), etag: "\"e\"", lastModified: nil,
            storedAt: Date(timeIntervalSince1970: 1_700_000_000), maxAge: 60)
    }

    @Test func storesAndReturnsAnEntry() throws {
        let directory = try TemporaryDirectory()
        let cache = DiskCache(directory: directory.url, maxSize: 1 << 20)
        cache.store(response("https://a/1.jpg"))
        #expect(cache.cachedResponse(for: "https://a/1.jpg") == response("https://a/1.jpg"))
        #expect(cache.cachedResponse(for: "https://a/2.jpg") == nil)
        #expect(cache.statistics().entries == 1)
    }

    @Test func aDamagedOrTruncatedEntryIsNeverServedAndIsRemoved() throws {
        let directory = try TemporaryDirectory()
        let cache = DiskCache(directory: directory.url, maxSize: 1 << 20)
        for damage in ["flip", "truncate", "empty"] {
            let url = "https://a/\(damage).jpg"
            cache.store(response(url))
            let path = cache.entryPath(for: url)
            var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            switch damage {
            case "flip": bytes[bytes.count - 10] ^= 0xff
            case "truncate": bytes = bytes.prefix(bytes.count - 100)
            default: bytes = Data()
            }
            try bytes.write(to: URL(fileURLWithPath: path))
            #expect(cache.cachedResponse(for: url) == nil, "\(damage)")
            #expect(!FileManager.default.fileExists(atPath: path), "\(damage)")
        }
    }

    @Test func leastRecentlyUsedEntriesAreEvictedFirst() throws {
        let directory = try TemporaryDirectory()
        // Room for three entries of a 1000-byte body and their metadata, not four.
        let cache = DiskCache(directory: directory.url, maxSize: 3800)
        for index in 0..<3 {
            cache.store(response("https://a/\(index)"))
            // Modification times are the LRU clock: make the order unambiguous.
            let past = Date().addingTimeInterval(Double(index - 10))
            try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: cache.entryPath(for: "https://a/\(index)"))
        }
        _ = cache.cachedResponse(for: "https://a/0")  // used again: now the most recent
        cache.store(response("https://a/3"))
        #expect(cache.cachedResponse(for: "https://a/1") == nil)
        #expect(cache.cachedResponse(for: "https://a/0") != nil)
        #expect(cache.cachedResponse(for: "https://a/3") != nil)
        #expect(cache.statistics().bytes <= 3800)
    }

    @Test func concurrentWritersOfOneKeyLeaveAWholeEntry() async throws {
        let directory = try TemporaryDirectory()
        let first = DiskCache(directory: directory.url, maxSize: 1 << 30)
        let second = DiskCache(directory: directory.url, maxSize: 1 << 30)
        await withTaskGroup(of: Void.self) { group in
            for round in 0..<40 {
                let cache = round.isMultiple(of: 2) ? first : second
                group.addTask { cache.store(self.response("https://a/shared", bytes: 200_000, fill: UInt8(round))) }
            }
        }
        let entry = try #require(first.cachedResponse(for: "https://a/shared"))
        #expect(entry.body.count == 200_000)
        #expect(Set(entry.body).count == 1)
        #expect(!directory.allFiles().contains { $0.contains(ImageWriter.temporaryMarker) })
    }

    /// A process killed while it wrote an entry leaves its temporary file: the next process to
    /// use the cache removes it once it is an hour old, though the cache is within its size.
    @Test func aKilledWritersTemporaryFileIsRemovedByTheNextProcess() throws {
        let directory = try TemporaryDirectory()
        let old = directory.url.appendingPathComponent("ab/.tmp-killed").path
        let fresh = directory.url.appendingPathComponent("ab/.tmp-writing").path
        try directory.write(Data(repeating: 1, count: 5000), to: "ab/.tmp-killed")
        try directory.write(Data(repeating: 1, count: 5000), to: "ab/.tmp-writing")
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3 * 86400)], ofItemAtPath: old)
        let cache = DiskCache(directory: directory.url, maxSize: 1 << 20)
        #expect(cache.cachedResponse(for: "https://a/1.jpg") == nil)
        #expect(!FileManager.default.fileExists(atPath: old))
        // A temporary file written now may be another process's entry on its way
        #expect(FileManager.default.fileExists(atPath: fresh))
    }

    /// A temporary file named with its writer (as this version names them) is removed as soon
    /// as the writer is gone, however new; a live writer's is kept.
    @Test func aGoneWritersTemporaryFileIsRemovedAtOnce() throws {
        let directory = try TemporaryDirectory()
        let dead = try TemporaryFileSweeperTests.deadProcessID()
        let killed = "ab/.0123.entry.pipeline-tmp-\(dead)-\(ImageWriter.machineTag)-1A2B3C4D"
        let writing = "ab/.4567.entry.pipeline-tmp-\(getpid())-\(ImageWriter.machineTag)-1A2B3C4D"
        try directory.write(Data(repeating: 1, count: 5000), to: killed)
        try directory.write(Data(repeating: 1, count: 5000), to: writing)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-5)], ofItemAtPath: directory.path + "/" + killed)
        let cache = DiskCache(directory: directory.url, maxSize: 1 << 20)
        #expect(cache.cachedResponse(for: "https://a/1.jpg") == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/" + killed))
        #expect(FileManager.default.fileExists(atPath: directory.path + "/" + writing))
    }

    @Test func clearRemovesEverything() throws {
        let directory = try TemporaryDirectory()
        let cache = DiskCache(directory: directory.url, maxSize: 1 << 20)
        for index in 0..<5 { cache.store(response("https://a/\(index)")) }
        let before = cache.statistics()
        let cleared = cache.clear()
        #expect(cleared.removed == before && before.entries == 5 && cleared.left == 0 && cleared.reason == nil)
        #expect(cache.statistics() == DiskCache.Statistics(entries: 0, bytes: 0))
        // An entry that cannot be removed (here a folder by an entry's name) is counted as left
        try directory.write(Data("x".utf8), to: "ab/stuck.entry/inside")
        let stuck = cache.clear()
        #expect(stuck.removed.entries == 0 && stuck.left == 1, "\(stuck)")
        #expect(stuck.reason?.contains("stuck.entry") == true, "\(String(describing: stuck.reason))")
    }

    @Test func cacheControlIsParsed() {
        #expect(CacheControl("public, max-age=300").freshness == 300)
        #expect(CacheControl("no-cache, max-age=300").freshness == nil)
        #expect(CacheControl("no-store").noStore)
        #expect(CacheControl(nil) == CacheControl(nil))
    }
}
