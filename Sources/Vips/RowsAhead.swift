import CVips
import Foundation

/// Rows of a large image decoded ahead of the rows libvips asks for, on worker threads of their
/// own, into a few buffers: the image libvips sees is generated from them. Used for large TIFFs
/// (strips decoded by libtiff) and large PNGs (rows inflated by ISA-L), whose libvips loaders
/// decode on the thread that asks for rows.
public enum RowsAhead {
    /// What a reader decodes rows from: a handle per thread, and a group of rows through it.
    protocol Source: Sendable {
        /// How the rows are grouped and held.
        var geometry: Geometry { get }
        /// The libvips loader the reader stands in for, which names its failures.
        var loader: String { get }
        /// A handle of its own (each thread needs one), or nil when the file cannot be read.
        func open() -> OpaquePointer?
        func close(_ handle: OpaquePointer)
        /// Decodes the rows of group `group` into `buffer` (`geometry.groupBytes` long); nil on
        /// success, or what went wrong.
        func decode(group: Int, with handle: OpaquePointer, into buffer: UnsafeMutableRawPointer) -> String?
    }

    /// An 8-bit image's rows, in groups decoded and held together.
    struct Geometry: Sendable {
        let width: Int
        let height: Int
        let samples: Int
        /// Rows decoded together, as one group.
        let groupRows: Int
        /// Groups decoded or held at once.
        let slots: Int
        /// Threads decoding groups.
        let workers: Int

        var rowBytes: Int { width * samples }
        var groupBytes: Int { groupRows * rowBytes }
        var groups: Int { (height + groupRows - 1) / groupRows }
    }

    /// See `VipsImage.readingAhead(file:)`.
    public struct Activity: Sendable, Equatable {
        /// Readers reading ahead at this moment.
        public var readers = 0
        /// Worker threads decoding row groups at this moment.
        public var workersRunning = 0
        /// Row groups decoded a second time because a reader went back.
        public var groupsDecodedAgain = 0
        /// What the last failed read said, naming the row or strip. A failed render also puts it
        /// in libvips' error buffer, but that buffer is one for the whole process: a failure in
        /// another thread may read and clear it first.
        public var lastFailure: String?
    }

    /// By path (or name). Past `mostRecorded` of them, those whose workers have left are forgotten, so a
    /// long run does not keep an entry for every file it read.
    static let activity = Locked<[String: Activity]>([:])
    static let mostRecorded = 256

    static func record(_ path: String, _ change: (inout Activity) -> Void) {
        activity.withLock { all in
            change(&all[path, default: Activity()])
            if all.count > mostRecorded { all = all.filter { $0.value.workersRunning > 0 } }
        }
    }

    /// The image whose rows `reader` fills, carrying `header`'s metadata; its workers start now.
    static func image(_ reader: Reader, header: VipsImage) -> VipsImage? {
        let fill: PlFillRows = { state, first, lineSkip, left, top, width, height in
            guard let state, let first else { return -1 }
            let reader = Unmanaged<RowsAhead.Reader>.fromOpaque(state).takeUnretainedValue()
            return reader.fill(first, lineSkip: Int(lineSkip), left: Int(left), top: Int(top), width: Int(width), height: Int(height))
        }
        let release: PlReleaseState = { state in
            guard let state else { return }
            let reader = Unmanaged<RowsAhead.Reader>.fromOpaque(state).takeRetainedValue()
            reader.stop()
        }
        let geometry = reader.geometry
        guard
            let image = pl_image_from_rows(
                Int32(geometry.width), Int32(geometry.height), Int32(geometry.samples), fill, release,
                Unmanaged.passRetained(reader).toOpaque())
        else { return nil }
        withExtendedLifetime(header) { pl_take_metadata(image, header.pointer) }
        // As libvips' loaders mark a sequential read: sinks then ask for whole rows, top to
        // bottom, rather than tiles that would go back up the image for every column of them.
        vips_image_set_int(image, "vips-sequential", 1)
        reader.start()
        return VipsImage(taking: image)
    }

    /// Decodes groups ahead of the rows libvips asks for, on `geometry.workers` threads, into
    /// `geometry.slots` buffers. libvips asks through `fill`; the image's closing calls `stop`.
    ///
    /// Threads of their own: a worker blocks in the decoder for a group at a time, and the caller
    /// (a libvips thread) blocks until the group it needs is there (`Locked.withLock(waitingUntil:_:)`),
    /// so the workers must not queue behind callers on a shared pool.
    final class Reader: @unchecked Sendable {
        let source: any Source
        /// The file's path, or what stands for it: in errors, and the key of `activity`.
        let name: String
        let geometry: Geometry

        /// What the workers and the caller share.
        private struct Shared {
            var buffers: [UnsafeMutableRawPointer?]
            var freeSlots: [Int]
            /// Groups decoded, by slot. Those below `lowestWanted` stay until a worker needs their
            /// slot, so rows asked for again soon after (another libvips thread a little behind)
            /// are still there.
            var ready: [Int: Int] = [:]
            /// Groups that failed, with what went wrong.
            var failed: [Int: String] = [:]
            /// The next group a worker takes, and the group the caller has reached: groups below
            /// it may be overwritten, and groups between it and `nextGroup` are decoded in order.
            var nextGroup = 0
            var lowestWanted = 0
            /// The group the caller is copying from, whose slot no worker may take.
            var pinned: Int?
            var runningWorkers = 0
            var stopped = false

            /// The lowest group the caller has passed and is not copying from, whose slot may be reused.
            private var passedGroup: Int? {
                ready.keys.filter { $0 < lowestWanted && $0 != pinned }.min()
            }

            /// Whether `takeSlot()` would find one.
            var hasSlot: Bool { !freeSlots.isEmpty || passedGroup != nil }

            /// A slot for the next group: a free one, or that of the lowest group the caller has
            /// passed and is not copying from.
            mutating func takeSlot() -> Int? {
                if let slot = freeSlots.popLast() { return slot }
                guard let passed = passedGroup else { return nil }
                return ready.removeValue(forKey: passed)
            }
        }

        private let shared: Locked<Shared>

        /// The caller's own handle and buffer, for a group asked for again after it was overwritten.
        private struct Own {
            var handle: OpaquePointer?
            var buffer: UnsafeMutableRawPointer?
        }

        /// Held through each `fill`: one caller at a time copies rows out (libvips may ask from
        /// several threads).
        private let own = Locked(Own())

        init(source: any Source, name: String) {
            self.source = source
            self.name = name
            geometry = source.geometry
            shared = Locked(
                Shared(
                    buffers: Array(repeating: nil, count: geometry.slots),
                    freeSlots: Array((0..<geometry.slots).reversed())))
        }

        deinit {
            let groupBytes = geometry.groupBytes
            shared.withLock { shared in
                for case let buffer? in shared.buffers { pl_unmap_buffer(buffer, groupBytes) }
            }
            own.withLock { own in
                if let buffer = own.buffer { pl_unmap_buffer(buffer, groupBytes) }
                if let handle = own.handle { source.close(handle) }
            }
        }

        /// libvips hands the image to its worker threads through GLib, whose futex-based locks
        /// ThreadSanitizer does not see; passing through this pthread lock after setting up and
        /// before every fill shows it that the reader was made before it is read. It holds a
        /// count of passes rather than nothing: a value of no size would share its address with
        /// the lock itself, and ThreadSanitizer would take the lock's own reads for a race.
        private static let handOff = Locked(0)

        func start() {
            Self.handOff.withLock { $0 &+= 1 }
            shared.withLock { $0.runningWorkers = geometry.workers }
            RowsAhead.record(name) {
                $0.readers += 1
                $0.workersRunning += geometry.workers
            }
            for index in 0..<geometry.workers {
                let thread = Thread { [self] in work() }
                thread.name = "pipeline.rows-ahead.\(index)"
                thread.start()
            }
        }

        /// The image closed: workers finish the group in hand and leave.
        func stop() {
            shared.withLock { $0.stopped = true }
            shared.wakeWaiters()
        }

        private func work() {
            let handle = source.open()
            defer {
                if let handle { source.close(handle) }
                shared.withLock { $0.runningWorkers -= 1 }
                shared.wakeWaiters()
                RowsAhead.record(name) { $0.workersRunning -= 1 }
            }
            guard let handle else { return }
            let groups = geometry.groups, groupBytes = geometry.groupBytes
            while true {
                let waited = { (shared: Shared) in shared.stopped || shared.nextGroup >= groups || shared.hasSlot }
                let taken: (slot: Int, group: Int, buffer: UnsafeMutableRawPointer?)? = shared.withLock(waitingUntil: waited) { shared in
                    guard !shared.stopped, shared.nextGroup < groups, let slot = shared.takeSlot() else { return nil }
                    let group = shared.nextGroup
                    shared.nextGroup += 1
                    if shared.buffers[slot] == nil { shared.buffers[slot] = pl_map_buffer(groupBytes) }
                    return (slot, group, shared.buffers[slot])
                }
                guard let (slot, group, buffer) = taken else { return }

                let failure =
                    buffer.map { source.decode(group: group, with: handle, into: $0) }
                    ?? "no memory for \(groupBytes) bytes of rows"
                shared.withLock { shared in
                    if let failure {
                        shared.freeSlots.append(slot)
                        shared.failed[group] = failure
                    } else {
                        shared.ready[group] = slot
                    }
                }
                shared.wakeWaiters()
            }
        }

        /// Copies rows `top..<top+height`, columns `left..<left+width`, to `first` (rows
        /// `lineSkip` apart): libvips' request for a region. 0, or -1 with libvips' error set.
        func fill(_ first: UnsafeMutablePointer<UInt8>, lineSkip: Int, left: Int, top: Int, width: Int, height: Int) -> Int32 {
            Self.handOff.withLock { $0 &+= 1 }
            return own.withLock { own in
                defer { shared.withLock { $0.pinned = nil } }
                let columnOffset = left * geometry.samples
                let columnBytes = width * geometry.samples
                var row = top
                while row < top + height {
                    let group = row / geometry.groupRows
                    let groupTop = group * geometry.groupRows
                    let rows = min(top + height, groupTop + geometry.groupRows) - row
                    // Groups before the caller's may be overwritten, except, at a request's start,
                    // those within two request heights above it: another libvips thread's request
                    // may be that far behind (as many as the slots allow, so they never fill up).
                    let passedBelow = row > top ? group : max(group - (geometry.slots - 1), max(0, top - 2 * height) / geometry.groupRows)
                    let groupBuffer: UnsafeMutableRawPointer
                    switch rowsOf(group, passedBelow: passedBelow, own: &own) {
                    case .success(let buffer): groupBuffer = buffer
                    case .failure(let failure):
                        let message = "\(name): \(failure.message)"
                        RowsAhead.record(name) { $0.lastFailure = "\(source.loader): \(message)" }
                        pl_set_error(source.loader, message)
                        return -1
                    }
                    for index in 0..<rows {
                        let from = groupBuffer + (row + index - groupTop) * geometry.rowBytes + columnOffset
                        (first + (row + index - top) * lineSkip).update(from: from.assumingMemoryBound(to: UInt8.self), count: columnBytes)
                    }
                    row += rows
                }
                return 0
            }
        }

        private struct Failure: Error {
            let message: String
        }

        /// The buffer holding `group`'s rows, pinned until the next call or the end of `fill`:
        /// waits for a worker to decode them, or decodes them here when they were overwritten.
        /// Groups below `passedBelow` may be overwritten from now on.
        private func rowsOf(_ group: Int, passedBelow: Int, own: inout Own) -> Result<UnsafeMutableRawPointer, Failure> {
            let movedOn = shared.withLock { shared in
                shared.pinned = nil
                guard passedBelow > shared.lowestWanted else { return false }
                // Moving on: the groups before may be overwritten, and none between need
                // decoding if the caller skipped them.
                shared.lowestWanted = passedBelow
                shared.nextGroup = max(shared.nextGroup, passedBelow)
                shared.failed = shared.failed.filter { $0.key >= passedBelow }
                return true
            }
            if movedOn { shared.wakeWaiters() }
            // From lowestWanted up every group is decoded in order, so this one comes, unless
            // no worker could start.
            let settled = { (shared: Shared) in
                group < shared.lowestWanted || shared.ready[group] != nil || shared.failed[group] != nil
                    || shared.runningWorkers == 0 || shared.stopped
            }
            let found: Result<UnsafeMutableRawPointer, Failure>? = shared.withLock(waitingUntil: settled) { shared in
                if let slot = shared.ready[group], let buffer = shared.buffers[slot] {
                    shared.pinned = group
                    return .success(buffer)
                }
                if let message = shared.failed[group] { return .failure(Failure(message: message)) }
                return nil
            }
            return found ?? decodeHere(group, own: &own)
        }

        /// Decodes `group` on the caller's thread, into the caller's own buffer: a group asked
        /// for again after it was overwritten, or when no worker could open the file.
        private func decodeHere(_ group: Int, own: inout Own) -> Result<UnsafeMutableRawPointer, Failure> {
            RowsAhead.record(name) { $0.groupsDecodedAgain += 1 }
            if own.handle == nil { own.handle = source.open() }
            if own.buffer == nil { own.buffer = pl_map_buffer(geometry.groupBytes) }
            guard let handle = own.handle, let buffer = own.buffer else {
                return .failure(Failure(message: "the file could not be opened again"))
            }
            if let message = source.decode(group: group, with: handle, into: buffer) {
                return .failure(Failure(message: message))
            }
            return .success(buffer)
        }
    }
}
