#if Server
import Dispatch
import Foundation
import Hummingbird
import PipelineKit
import Vips

/// The bytes of the small files the server answers with, kept in memory, each with the version
/// (`FileStamp`) of the descriptor it was read from: a request whose file is still at that version
/// is answered from here, without opening the file and without a hop to a thread that may block.
/// A file replaced or written again has another version, and is read again; nothing is answered
/// from memory that is not what the path holds now.
///
/// At most `capacity` bytes are kept, counting the storage each file's bytes were allocated (a
/// power of two at least their size); a file larger than `largestFile` is never kept, and is read
/// as before (in chunks, from the disk).
final class WarmBodies: Sendable {
    /// The largest file kept: a thumbnail's size, far below a full-size image's.
    static let largestFile = 256 * 1024
    /// The most bytes kept in all.
    let capacity: Int

    private struct Entry {
        let stamp: FileStamp
        let bytes: ByteBuffer
    }

    private struct State {
        /// By path, spelled byte for byte.
        var entries: [DiskPath: Entry] = [:]
        var bytes = 0
        /// The SHA-256 of larger files answered by their hash (`{hash}`), with the version it
        /// was read at, by path.
        var hashes: [DiskPath: (stamp: FileStamp, hash: String)] = [:]
        /// Files hashed, for tests to tell a hash kept from one read again.
        var hashReads = 0
        /// Files read from the disk, for tests to tell an answer from memory from one read.
        var reads = 0
    }

    private let state = Locked(State())

    /// An empty store of at most `capacity` bytes.
    init(capacity: Int = 32 * 1024 * 1024) {
        self.capacity = capacity
    }

    /// Files read from the disk so far.
    var reads: Int { state.withLock { $0.reads } }
    /// Files hashed (`sha256(of:)`) so far.
    var hashReads: Int { state.withLock { $0.hashReads } }

    /// The bytes of the file at `path`, with their version, when the path is still at the
    /// version they were read at: `current`, when the caller has just taken it, else the path's
    /// now. Nil when they are not kept, or the file is another now (or gone).
    func kept(at path: String, current: FileStamp? = nil) -> (stamp: FileStamp, bytes: ByteBuffer)? {
        guard let entry = state.withLock({ $0.entries[DiskPath(path)] }) else { return nil }
        // The version is taken after the entry: the bytes answered are those of the file the path holds now.
        guard (current ?? FileStamp(path: path)) == entry.stamp else { return nil }
        return (entry.stamp, entry.bytes)
    }

    /// The bytes of the file at `path`, read whole through one descriptor, with that
    /// descriptor's version, under which they are kept. Nil when it cannot be read, or is larger
    /// than `largestFile`.
    ///
    /// Blocks on the disk: not on the cooperative pool.
    func read(at path: String) -> (stamp: FileStamp, bytes: ByteBuffer)? {
        guard let found = Self.wholeFile(at: path, largest: Int64(Self.largestFile)) else { return nil }
        keep(found.bytes, stamp: found.stamp, at: path)
        return found
    }

    /// The bytes of the file at `path`, read whole through one descriptor, with that
    /// descriptor's version; nil when it cannot be read, is larger than `largest` bytes, or was
    /// written to while it was read.
    ///
    /// Blocks on the disk: not on the cooperative pool.
    static func wholeFile(at path: String, largest: Int64) -> (stamp: FileStamp, bytes: ByteBuffer)? {
        guard let file = OpenedFile(path: path), file.stamp.size <= largest,
            let bytes = file.piece(at: 0, count: Int(file.stamp.size)),
            // Written to while it was read: its bytes are not the version measured.
            file.isUnchanged
        else { return nil }
        return (file.stamp, bytes)
    }

    /// The most hashes kept: a site's large files, while what they hold stays small beside the bodies.
    static let hashCapacity = 4096

    /// The SHA-256 of `file`'s bytes, read a piece at a time: from memory when the path was
    /// hashed at the file's version, so that the HEADs, 304s and GETs of a large file named by
    /// its hash read it once a version, not once a request. Nil when it cannot be read whole.
    ///
    /// Blocks on the disk: not on the cooperative pool.
    func sha256(of file: OpenedFile) -> String? {
        let path = DiskPath(file.path)
        if let kept = state.withLock({ $0.hashes[path] }), kept.stamp == file.stamp { return kept.hash }
        guard let hash = file.sha256() else { return nil }
        state.withLock { state in
            state.hashReads += 1
            // Full: any may go, as bodies do; the next request for it hashes it again.
            if state.hashes.count >= Self.hashCapacity, state.hashes[path] == nil, let other = state.hashes.first {
                state.hashes.removeValue(forKey: other.key)
            }
            state.hashes[path] = (file.stamp, hash)
        }
        return hash
    }

    private func keep(_ bytes: ByteBuffer, stamp: FileStamp, at path: String) {
        let capacity = self.capacity
        state.withLock { state in
            state.reads += 1
            if let old = state.entries.removeValue(forKey: DiskPath(path)) { state.bytes -= old.bytes.capacity }
            guard bytes.capacity <= capacity else { return }
            // Full: make room by letting any go, so that the store stays within its bytes.
            while state.bytes + bytes.capacity > capacity, let other = state.entries.first {
                state.entries.removeValue(forKey: other.key)
                state.bytes -= other.value.bytes.capacity
            }
            state.entries[DiskPath(path)] = Entry(stamp: stamp, bytes: bytes)
            state.bytes += bytes.capacity
        }
    }
}

#endif
