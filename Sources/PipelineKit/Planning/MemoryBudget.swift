import Foundation

/// How much memory a run may use for images, and where that figure comes from: the user's
/// `--max-memory`, the container's cgroup limit (v2 `memory.max`, v1 `memory.limit_in_bytes`),
/// or the process's address-space limit (`RLIMIT_AS`, as `ulimit -v` sets it). Nil when none
/// is set: then the in-flight window alone bounds memory.
///
/// The runner admits an input only while the estimates of the inputs in flight fit in the
/// budget, and fails an input that could never fit; `pipeline explain` shows the budget.
public struct MemoryBudget: Sendable, Equatable, CustomStringConvertible {
    /// Bytes available for images (decoded pixels, their outputs and libvips' buffers), after
    /// what the process already uses and a reserve for threads and libraries.
    public let bytes: Int64
    /// The limit as found, before the process's own use and the reserve are taken off.
    public let limit: Int64
    /// `--max-memory`, `cgroup v2 memory.max (/sys/fs/cgroup/…)`, `RLIMIT_AS`, …
    public let source: String

    /// A budget of `bytes` for images, from a `limit` found in `source`.
    public init(bytes: Int64, limit: Int64, source: String) {
        self.bytes = bytes
        self.limit = limit
        self.source = source
    }

    /// The budget as `explain` and the run's errors say it: what is left for images, of what
    /// limit, from where.
    public var description: String {
        "\(Self.megabytes(bytes)) for images of a \(Self.megabytes(limit)) limit from \(source)"
    }

    /// What libvips, the Swift runtime, the stage queues' threads and the encoders need beside
    /// the images: measured as the resident size of a run of small images, rounded up.
    public static let reserve: Int64 = 96 << 20

    /// What an address-space limit must leave beside `reserve`: mappings that cost address space
    /// but little memory, made during a run: the second malloc arena's heap and the threads'
    /// stacks (larger under such a limit).
    public static let addressSpaceReserve: Int64 = 96 << 20

    /// The process's own use when the baseline was taken (see `recordBaseline()`). Address space
    /// reserved but not usable (a malloc arena's heap beyond what it uses, `PROT_NONE`) is left
    /// out: whether the second arena exists yet when the baseline is taken depends on timing,
    /// and `addressSpaceReserve` counts it either way.
    private static let baseline: (resident: Int64, virtual: Int64) = (residentBytes(), virtualBytes() - reservedAnonymousBytes())

    /// Takes the process's own memory use as the baseline that budgets are measured from, if it
    /// was not taken yet. Call it first thing in `main`, before threads and arenas appear, so
    /// the budget does not depend on how far they got by the time a run starts (the `pipeline`
    /// command does); otherwise it is taken when the first budget is.
    public static func recordBaseline() {
        _ = baseline
    }

    /// The budget the environment sets, the strictest when several do; `explicit` (bytes) wins,
    /// named by `source` where messages say where the budget came from.
    public static func detect(explicit: Int64? = nil, source: String = "--max-memory") -> MemoryBudget? {
        let base = baseline
        if let explicit {
            return MemoryBudget(bytes: max(0, explicit - base.resident - reserve), limit: explicit, source: source)
        }
        var found: [MemoryBudget] = []
        if let (limit, path) = cgroupLimit() {
            found.append(MemoryBudget(bytes: max(0, limit - base.resident - reserve), limit: limit, source: path))
        }
        var limits = rlimit()
        if getrlimit(Int32(RLIMIT_AS.rawValue), &limits) == 0, limits.rlim_cur != rlim_t.max {
            // Address space, not resident memory: what is mapped (libraries, thread stacks,
            // malloc arenas) counts, at the start and later.
            let limit = Int64(clamping: limits.rlim_cur)
            found.append(
                MemoryBudget(
                    bytes: max(0, limit - base.virtual - reserve - addressSpaceReserve), limit: limit,
                    source: "RLIMIT_AS (ulimit -v)"))
        }
        return found.min { $0.bytes < $1.bytes }
    }

    /// The cgroup memory limit of this process, and the file it was read from: the strictest
    /// from this process's group up to the root of the hierarchy (`ControlGroups`); v1's
    /// `memory.limit_in_bytes` first, else v2's `memory.max`.
    static func cgroupLimit(root: String = "/sys/fs/cgroup", selfCgroup: String = "/proc/self/cgroup") -> (Int64, String)? {
        let groups = ControlGroups(root: root, selfCgroup: selfCgroup)
        if let found = strictest(ControlGroups.read("memory.limit_in_bytes", in: groups.v1Folders("memory"))) {
            return (found.0, "cgroup v1 memory.limit_in_bytes (\(found.1))")
        }
        return strictest(ControlGroups.read("memory.max", in: groups.v2Folders())).map { ($0, "cgroup v2 memory.max (\($1))") }
    }

    /// The lowest limit among `files` and its path; "max", and v1's "no limit" (a number near
    /// Int64.max), are none.
    private static func strictest(_ files: [(text: String, path: String)]) -> (Int64, String)? {
        var strictest: (Int64, String)?
        for file in files {
            if let limit = Int64(file.text), limit < Int64(1) << 60, limit < strictest?.0 ?? .max {
                strictest = (limit, file.path)
            }
        }
        return strictest
    }

    /// Resident and virtual size of this process now, from /proc/self/statm.
    static func residentBytes() -> Int64 { statm(field: 1) }
    static func virtualBytes() -> Int64 { statm(field: 0) }

    private static func statm(field: Int) -> Int64 {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > field, let pages = Int64(fields[field]) else { return 0 }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Anonymous mappings of this process with no access (`---p` in /proc/self/maps).
    static func reservedAnonymousBytes() -> Int64 {
        guard let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) else { return 0 }
        var total: Int64 = 0
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 5, fields[1] == "---p" else { continue }  // no path: anonymous
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16), end > start else {
                continue
            }
            total += Int64(end - start)
        }
        return total
    }

    /// What a run needs beside its images: the process's own memory at the baseline, and
    /// `reserve`. A limit no larger leaves nothing for images.
    public static var overhead: Int64 { baseline.resident + reserve }

    /// `bytes` in megabytes, rounded, as every memory figure the pipeline prints is.
    public static func megabytes(_ bytes: Int64) -> String {
        String(format: "%.0f MB", Double(bytes) / 1_000_000)
    }
}
