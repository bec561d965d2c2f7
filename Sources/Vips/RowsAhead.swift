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
        public var readers = 0
        public var workersRunning = 0
        public var groupsDecodedAgain = 0
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
        guard let image = pl_image_from_rows(Int32(geometry.width), Int32(geometry.height), Int32(geometry.samples), fill, release,
                                             Unmanaged.passRetained(reader).toOpaque()) else { return nil }
        withExtendedLifetime(header) { pl_take_metadata(image, header.pointer) }
        // As libvips' loaders mark a sequential read: sinks then ask for whole rows, top to
        // bottom, rather than tiles that would go back up the image for every column of them.
        vips_image_set_int(image, "vips-sequential", 1)
        reader.start()
        return VipsImage(taking: image)
    }

    /// Decodes groups ahead of the rows libvips asks for, on `geometry.workers` threads, into
    /// `geometry.slots` buffers. libvips asks through `fill`; the image's closing calls `stop`.
    final class Reader: @unchecked Sendable {
        let source: any Source
        /// The file's path, or what stands for it: in errors, and the key of `activity`.
        let name: String
        let geometry: Geometry

        /// From here to `stopped`, guarded by `condition`.
        private let condition = NSCondition()
        private var buffers: [UnsafeMutableRawPointer?]
        private var freeSlots: [Int]
        /// Groups decoded, by slot. Those below `lowestWanted` stay until a worker needs their
        /// slot, so rows asked for again soon after (another libvips thread a little behind)
        /// are still there.
        private var ready: [Int: Int] = [:]
        /// Groups that failed, with what went wrong.
        private var failed: [Int: String] = [:]
        /// The next group a worker takes, and the group the caller has reached: groups below
        /// it may be overwritten, and groups between it and `nextGroup` are decoded in order.
        private var nextGroup = 0
        private var lowestWanted = 0
        /// The group the caller is copying from, whose slot no worker may take.
        private var pinned: Int?
        private var runningWorkers = 0
        private var stopped = false

        /// One caller at a time copies rows out (libvips may ask from several threads).
        private let filling = NSLock()
        /// The caller's own handle and buffer, for a group asked for again after it was overwritten.
        private var ownHandle: OpaquePointer?
        private var ownBuffer: UnsafeMutableRawPointer?

        init(source: any Source, name: String) {
            self.source = source
            self.name = name
            geometry = source.geometry
            buffers = Array(repeating: nil, count: geometry.slots)
            freeSlots = Array((0..<geometry.slots).reversed())
        }

        deinit {
            for case let buffer? in buffers { pl_unmap_buffer(buffer, geometry.groupBytes) }
            if let ownBuffer { pl_unmap_buffer(ownBuffer, geometry.groupBytes) }
            if let ownHandle { source.close(ownHandle) }
        }

        /// libvips hands the image to its worker threads through GLib, whose futex-based locks
        /// ThreadSanitizer does not see; passing through this pthread lock after setting up and
        /// before every fill shows it that the reader was made before it is read.
        private static let handOff = NSLock()

        func start() {
            Self.handOff.lock()
            Self.handOff.unlock()
            condition.withLock { runningWorkers = geometry.workers }
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
            condition.withLock {
                stopped = true
                condition.broadcast()
            }
        }

        /// A slot for the next group: a free one, or that of the lowest group the caller has
        /// passed and is not copying from. Under `condition`.
        private func takeSlot() -> Int? {
            if let slot = freeSlots.popLast() { return slot }
            guard let passed = ready.keys.filter({ $0 < lowestWanted && $0 != pinned }).min(),
                  let slot = ready.removeValue(forKey: passed) else { return nil }
            return slot
        }

        private func work() {
            let handle = source.open()
            defer {
                if let handle { source.close(handle) }
                condition.withLock {
                    runningWorkers -= 1
                    condition.broadcast()
                }
                RowsAhead.record(name) { $0.workersRunning -= 1 }
            }
            guard let handle else { return }
            while true {
                condition.lock()
                var slot: Int?
                while !stopped, nextGroup < geometry.groups {
                    slot = takeSlot()
                    if slot != nil { break }
                    condition.wait()
                }
                guard let slot, !stopped, nextGroup < geometry.groups else {
                    if let slot { freeSlots.append(slot) }
                    condition.unlock()
                    return
                }
                let group = nextGroup
                nextGroup += 1
                if buffers[slot] == nil { buffers[slot] = pl_map_buffer(geometry.groupBytes) }
                let buffer = buffers[slot]
                condition.unlock()

                let failure = buffer.map { source.decode(group: group, with: handle, into: $0) }
                    ?? "no memory for \(geometry.groupBytes) bytes of rows"
                condition.withLock {
                    if let failure {
                        freeSlots.append(slot)
                        failed[group] = failure
                    } else {
                        ready[group] = slot
                    }
                    condition.broadcast()
                }
            }
        }

        /// Copies rows `top..<top+height`, columns `left..<left+width`, to `first` (rows
        /// `lineSkip` apart): libvips' request for a region. 0, or -1 with libvips' error set.
        func fill(_ first: UnsafeMutablePointer<UInt8>, lineSkip: Int, left: Int, top: Int, width: Int, height: Int) -> Int32 {
            Self.handOff.lock()
            Self.handOff.unlock()
            filling.lock()
            defer {
                condition.withLock { pinned = nil }
                filling.unlock()
            }
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
                switch rowsOf(group, passedBelow: passedBelow) {
                case .success(let buffer): groupBuffer = buffer
                case .failure(let failure):
                    pl_set_error(source.loader, "\(name): \(failure.message)")
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

        private struct Failure: Error {
            let message: String
        }

        /// The buffer holding `group`'s rows, pinned until the next call or the end of `fill`:
        /// waits for a worker to decode them, or decodes them here when they were overwritten.
        /// Groups below `passedBelow` may be overwritten from now on.
        private func rowsOf(_ group: Int, passedBelow: Int) -> Result<UnsafeMutableRawPointer, Failure> {
            condition.lock()
            pinned = nil
            if passedBelow > lowestWanted {
                // Moving on: the groups before may be overwritten, and none between need
                // decoding if the caller skipped them.
                lowestWanted = passedBelow
                nextGroup = max(nextGroup, passedBelow)
                failed = failed.filter { $0.key >= passedBelow }
                condition.broadcast()
            }
            // From lowestWanted up every group is decoded in order, so this one comes, unless
            // no worker could start.
            while group >= lowestWanted, ready[group] == nil, failed[group] == nil, runningWorkers > 0, !stopped {
                condition.wait()
            }
            if let slot = ready[group], let buffer = buffers[slot] {
                pinned = group
                condition.unlock()
                return .success(buffer)
            }
            if let message = failed[group] {
                condition.unlock()
                return .failure(Failure(message: message))
            }
            condition.unlock()
            return decodeHere(group)
        }

        /// Decodes `group` on the caller's thread, into the caller's own buffer: a group asked
        /// for again after it was overwritten, or when no worker could open the file.
        private func decodeHere(_ group: Int) -> Result<UnsafeMutableRawPointer, Failure> {
            RowsAhead.record(name) { $0.groupsDecodedAgain += 1 }
            if ownHandle == nil { ownHandle = source.open() }
            if ownBuffer == nil { ownBuffer = pl_map_buffer(geometry.groupBytes) }
            guard let ownHandle, let ownBuffer else { return .failure(Failure(message: "the file could not be opened again")) }
            if let message = source.decode(group: group, with: ownHandle, into: ownBuffer) {
                return .failure(Failure(message: message))
            }
            return .success(ownBuffer)
        }
    }
}
