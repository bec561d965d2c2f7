import Foundation

extension CommandRunner {
    /// Whether this build of `pipeline` is sanitized, found as a memory-limit test meets it:
    /// AddressSanitizer and ThreadSanitizer reserve terabytes of address space for their shadow
    /// memory, so a sanitized binary cannot even start under a 1 GB `ulimit -v`, which an
    /// unsanitized one fits many times over. Asked of the binary itself, so it holds whatever
    /// the build folder is called and whatever the environment says.
    package static let isSanitizedBuild = isSanitized(executable)

    /// Whether a test may hold the process's lanes to a limit short enough to test: not in a
    /// sanitized build, whose other tests' work holds them for seconds, unless the test runs in
    /// a process of its own (`make test` sets `PIPELINE_TEST_ALONE` for that process).
    package static let lanesAreFree =
        !isSanitizedBuild || ProcessInfo.processInfo.environment["PIPELINE_TEST_ALONE"] != nil

    /// The `pipeline` binary the memory-limit tests run: this build's own, unless it is
    /// sanitized; then the unsanitized one `PIPELINE_UNSANITIZED_BINARY` names (`make test`
    /// names the release binary when `make` has built it from these sources), or none.
    private static let limitsExecutable: URL? = {
        guard isSanitizedBuild else { return executable }
        guard let path = ProcessInfo.processInfo.environment["PIPELINE_UNSANITIZED_BINARY"], !path.isEmpty else { return nil }
        return URL(fileURLWithPath: path)
    }()

    /// The binary a test of a race between the process's own threads runs: the unsanitized one
    /// when there is one, whose threads meet at full speed, else this build's.
    package static var raceExecutable: URL { limitsExecutable ?? executable }

    /// The binary a memory-limit test runs (`limitsExecutable`), or nil with the reason printed
    /// when there is none: a sanitizer's shadow memory does not start under `ulimit -v`, and in
    /// a memory cgroup the kernel kills it for memory the run itself never uses.
    package static func memoryLimitExecutable() -> URL? {
        if let limitsExecutable { return limitsExecutable }
        print(
            "skipped: this build of pipeline is sanitized, and a sanitizer's shadow memory (terabytes of address space, "
                + "hundreds of megabytes resident) does not fit under ulimit -v or in a memory cgroup, so a memory limit shows "
                + "nothing; `make test` runs these against the release binary once `make` has built it")
        return nil
    }

    /// The binary a test runs where a sanitizer's runtime ends the process: of SIGBUS, as the
    /// memory it maps is backed by a file that cannot grow (under a small `ulimit -f`, or with the
    /// folder for temporary files full), or for want of a descriptor (a tiny `ulimit -n`).
    /// `limitsExecutable`, or nil with the reason printed: what the runtime does, `condition`.
    package static func unsanitizedExecutable(for condition: String) -> URL? {
        if let limitsExecutable { return limitsExecutable }
        print(
            "skipped: this build of pipeline is sanitized, and a sanitizer's runtime \(condition); "
                + "`make test` runs this against the release binary once `make` has built it")
        return nil
    }

    /// True, with the reason printed, when memory-limit tests have no binary to run
    /// (`memoryLimitExecutable`). Every test that runs `pipeline` under a memory or
    /// address-space limit asks this first, before it makes its fixtures.
    package static func skipsMemoryLimitTests() -> Bool { memoryLimitExecutable() == nil }

    /// Whether `binary` fails to start under a 1 GB address-space limit, as only a sanitized
    /// build does.
    private static func isSanitized(_ binary: URL) -> Bool {
        let probe = try? bash("ulimit -v 1000000 && exec \"$@\" --version 2>&1", "bash", [binary.path])
        return probe?.status != 0
    }

    /// Runs `pipeline` from bash under `ulimit -v kilobytes` (RLIMIT_AS), output and errors
    /// together; nil (and a printed reason) when there is no unsanitized binary to run
    /// (`memoryLimitExecutable`).
    package static func runUnderAddressSpaceLimit(kilobytes: Int, _ arguments: [String]) throws -> (status: Int32, output: String)? {
        guard let binary = memoryLimitExecutable() else { return nil }
        return try bash("ulimit -v \(kilobytes) && exec \"$@\" 2>&1", "bash", [binary.path] + arguments)
    }

    /// Runs the `pipeline` binary in a new memory cgroup of its own, below this process's, with
    /// `limitBytes` as its limit (v1 `memory.limit_in_bytes`, or v2 `memory.max`), as a
    /// container runs it: the kernel kills what goes past. Nil (and a printed reason) where no
    /// child group can be made here (no writable cgroup hierarchy), or when there is no
    /// unsanitized binary to run (`memoryLimitExecutable`).
    package static func runInMemoryCgroup(limitBytes: Int64, _ arguments: [String]) throws -> (status: Int32, output: String)? {
        guard let binary = memoryLimitExecutable() else { return nil }
        guard let group = makeMemoryCgroup(limitBytes: limitBytes) else {
            print("skipped: no memory cgroup can be made here (needs a writable /sys/fs/cgroup)")
            return nil
        }
        defer { rmdir(group) }
        // The shell joins the group, then becomes the command: nothing else runs in the group.
        return try bash("echo $$ > \"$0/cgroup.procs\" && exec \"$@\" 2>&1", group, [binary.path] + arguments)
    }

    /// Runs `pipeline` in `directory` as the user nobody, output and errors together, so that
    /// folders only root may read are closed to it; nil (and a printed reason) unless this
    /// process is root, with `setpriv` to drop to nobody.
    package static func runAsNobody(in directory: String, _ arguments: [String]) throws -> (status: Int32, output: String)? {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            print("skipped: running as another user needs root and setpriv")
            return nil
        }
        return try bash(
            "cd \"$0\" && exec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups \"$@\" 2>&1", directory,
            [executable.path] + arguments)
    }

    /// Runs `script` in bash with `$0` and the positional arguments given; its output and status.
    private static func bash(_ script: String, _ zero: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script, zero] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// Runs the `pipeline` binary in a new CPU cgroup of its own, below this process's, with a
    /// quota of `quotaMicroseconds` each `periodMicroseconds` (v1 `cpu.cfs_quota_us` over
    /// `cpu.cfs_period_us`, or v2 `cpu.max`), as `docker --cpus` runs it. Nil (and a printed
    /// reason) where no child group can be made here.
    package static func runInCPUCgroup(quotaMicroseconds: Int, periodMicroseconds: Int, _ arguments: [String]) throws -> (
        status: Int32, output: String
    )? {
        guard
            let group = makeCgroup(
                controller: "cpu",
                settings: [
                    .v1: [("cpu.cfs_period_us", "\(periodMicroseconds)"), ("cpu.cfs_quota_us", "\(quotaMicroseconds)")],
                    .v2: [("cpu.max", "\(quotaMicroseconds) \(periodMicroseconds)")],
                ])
        else {
            print("skipped: no CPU cgroup can be made here (needs a writable /sys/fs/cgroup)")
            return nil
        }
        defer { rmdir(group) }
        return try bash("echo $$ > \"$0/cgroup.procs\" && exec \"$@\" 2>&1", group, [executable.path] + arguments)
    }

    /// A new child of this process's memory cgroup with the limit set, or nil.
    private static func makeMemoryCgroup(limitBytes: Int64) -> String? {
        makeCgroup(
            controller: "memory", settings: [.v1: [("memory.limit_in_bytes", "\(limitBytes)")], .v2: [("memory.max", "\(limitBytes)")]])
    }

    private enum CgroupVersion { case v1, v2 }

    /// A new child of this process's group for `controller` (its v1 hierarchy, else the v2 one)
    /// with `settings` of that version written in order, or nil.
    private static func makeCgroup(controller: String, settings: [CgroupVersion: [(file: String, value: String)]]) -> String? {
        guard let membership = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8) else { return nil }
        var candidates: [(folder: String, version: CgroupVersion)] = []
        for line in membership.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            if fields[1].split(separator: ",").contains(Substring(controller)) {
                candidates.append(("/sys/fs/cgroup/" + controller + fields[2], .v1))
            } else if fields[0] == "0", fields[1].isEmpty {
                candidates.append(("/sys/fs/cgroup" + fields[2], .v2))
            }
        }
        for (parent, version) in candidates {
            let group = (parent as NSString).appendingPathComponent("pipeline-test-\(UUID().uuidString.prefix(8))")
            guard (try? FileManager.default.createDirectory(atPath: group, withIntermediateDirectories: false)) != nil else { continue }
            let written = (settings[version] ?? []).allSatisfy { setting in
                (try? setting.value.write(toFile: group + "/" + setting.file, atomically: false, encoding: .utf8)) != nil
            }
            if written { return group }
            rmdir(group)
        }
        return nil
    }
}
