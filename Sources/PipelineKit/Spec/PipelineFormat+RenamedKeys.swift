extension PipelineFormat {
    /// Top-level keys that were renamed, old name first: still read, with a warning, until the
    /// next format version.
    static let renamedKeys: [(old: String, new: String)] = [
        // The stage runs every step (crop, blur, …), not only resizing.
        ("resize", "process")
    ]

    /// A warning for each old key `root` uses, and a problem for each that stands beside its
    /// new name (which one is meant is not clear then).
    static func renamedKeyFindings(in root: JSONNode) -> (warnings: [String], problems: [PipelineFileError.Problem]) {
        var warnings: [String] = []
        var problems: [PipelineFileError.Problem] = []
        for (old, new) in renamedKeys {
            guard let node = root[old] else { continue }
            if root[new] != nil {
                problems.append(
                    .init(
                        path: old, location: node.location,
                        message: "\"\(old)\" is the old name of \"\(new)\": give only \"\(new)\""))
            } else {
                warnings.append(
                    "\(old) (line \(node.location.line)): \"\(old)\" is now named \"\(new)\"; "
                        + "the old name is read until the next format version")
            }
        }
        return (warnings, problems)
    }
}
