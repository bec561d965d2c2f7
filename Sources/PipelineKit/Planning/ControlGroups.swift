import Foundation

/// This process's control groups, as `/proc/self/cgroup` lists them, and the settings files of
/// a controller read from the process's group up to the root of the hierarchy: a parent's
/// limit binds its children, so the strictest of them is the one that applies.
///
/// Groups are `0::/path` under cgroup v2 and `N:memory:/path` (or `N:cpu,cpuacct:/path`) under
/// v1, where a container with its own cgroup namespace sees `/`.
struct ControlGroups {
    /// Where the hierarchies are mounted, normally `/sys/fs/cgroup`.
    let root: String
    /// The cgroup v2 group, if the process is in one.
    let unified: String?
    /// The cgroup v1 group of each controller the process is in.
    let byController: [String: String]

    init(root: String = "/sys/fs/cgroup", selfCgroup: String = "/proc/self/cgroup") {
        self.root = root
        var unified: String?
        var byController: [String: String] = [:]
        let membership = (try? String(contentsOfFile: selfCgroup, encoding: .utf8)) ?? ""
        for line in membership.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            if fields[0] == "0", fields[1].isEmpty { unified = String(fields[2]) }
            for controller in fields[1].split(separator: ",") { byController[String(controller)] = String(fields[2]) }
        }
        self.unified = unified
        self.byController = byController
    }

    /// The folders of the v1 `controller` hierarchy (`root/controller`) from the process's group
    /// (the hierarchy's root when it lists none) up to that root, nearest first.
    func v1Folders(_ controller: String) -> [String] {
        folders(hierarchy: root + "/" + controller, group: byController[controller] ?? "/")
    }

    /// The folders of the v2 hierarchy from the process's group up to the root, nearest first;
    /// none when the process is in no v2 group.
    func v2Folders() -> [String] {
        unified.map { folders(hierarchy: root, group: $0) } ?? []
    }

    /// The contents of `file` in each of `folders` that has one, trimmed, with its path.
    static func read(_ file: String, in folders: [String]) -> [(text: String, path: String)] {
        folders.compactMap { folder in
            let path = folder + "/" + file
            return (try? String(contentsOfFile: path, encoding: .utf8)).map { ($0.trimmingCharacters(in: .whitespacesAndNewlines), path) }
        }
    }

    private func folders(hierarchy: String, group: String) -> [String] {
        var folder = hierarchy + (group == "/" ? "" : group)
        var found: [String] = []
        while folder.hasPrefix(hierarchy) {
            found.append(folder)
            guard folder != hierarchy else { break }
            folder = (folder as NSString).deletingLastPathComponent
        }
        return found
    }
}
