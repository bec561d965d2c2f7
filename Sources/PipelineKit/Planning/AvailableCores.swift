import Foundation

/// How many cores this process may keep busy: those its CPU affinity lets it run on (`taskset`,
/// a container's cpuset), or fewer when a cgroup CPU quota allows less time (`docker --cpus`,
/// a Kubernetes CPU limit, a Slurm job's share), at least one. The default stage widths are
/// made from it (`StageDefaults`).
///
/// Foundation's `activeProcessorCount` counts the machine's online cores whatever the affinity
/// or quota, so a run confined to one core of sixteen would start sixteen decodes.
package enum AvailableCores {
    /// The count for this process, read once.
    package static let count: Int = detect()

    /// The count from the affinity in `status` (`/proc/self/status`) and the quotas of `groups`.
    static func detect(status: String = "/proc/self/status", groups: ControlGroups = ControlGroups()) -> Int {
        let text = (try? String(contentsOfFile: status, encoding: .utf8)) ?? ""
        let allowed = affinity(inStatus: text) ?? ProcessInfo.processInfo.activeProcessorCount
        return max(1, min(allowed, quota(in: groups) ?? .max))
    }

    /// The cores `Cpus_allowed_list` names in a `/proc/PID/status` text ("0-3,8,10-11" is 7),
    /// or nil when it names none.
    static func affinity(inStatus status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else { return nil }
        var count = 0
        for part in line.dropFirst("Cpus_allowed_list:".count).split(separator: ",") {
            let bounds = part.trimmingCharacters(in: .whitespaces).split(separator: "-")
            guard let first = bounds.first.flatMap({ Int($0) }), let last = bounds.last.flatMap({ Int($0) }),
                bounds.count <= 2, last >= first
            else { return nil }
            count += last - first + 1
        }
        return count > 0 ? count : nil
    }

    /// The strictest CPU quota from the process's group up, in whole cores (rounded up: a quota
    /// of 1.5 cores keeps two busy part of the time); nil when there is none. cgroup v2 says
    /// `cpu.max` "QUOTA PERIOD" (or "max PERIOD"); v1 `cpu.cfs_quota_us` (-1 for none) over
    /// `cpu.cfs_period_us`.
    static func quota(in groups: ControlGroups) -> Int? {
        var cores: [Int] = []
        func add(quota: String, period: String) {
            if let quota = Double(quota), let period = Double(period), quota > 0, period > 0 {
                cores.append(Int((quota / period).rounded(.up)))
            }
        }
        for file in ControlGroups.read("cpu.max", in: groups.v2Folders()) {
            let fields = file.text.split(separator: " ")
            if fields.count == 2 { add(quota: String(fields[0]), period: String(fields[1])) }
        }
        for folder in groups.v1Folders("cpu") {
            let files = ControlGroups.read("cpu.cfs_quota_us", in: [folder]) + ControlGroups.read("cpu.cfs_period_us", in: [folder])
            if files.count == 2 { add(quota: files[0].text, period: files[1].text) }
        }
        return cores.min()
    }
}
