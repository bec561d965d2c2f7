import Foundation

/// The files a run reads by identity: what the commit of an output must never rename over,
/// even when a symbolic link made during the run leads the output's path to one. Each input is
/// kept as where its record is in the plan's file, read back to name it.
struct ProtectedInputs: Sendable {
    private let records: [FileIdentity: Int64]
    private let plan: SpillFile.Reader?
    /// The other files read, by identity, with what each is.
    private let otherReads: [FileIdentity: String]

    /// Nothing read.
    init() {
        records = [:]
        plan = nil
        otherReads = [:]
    }

    /// The inputs with these identities, whose records are in `plan` at the offsets given, and
    /// the other files read.
    init(_ records: [FileIdentity: Int64], plan: SpillFile.Reader, otherReads: [FileIdentity: String]) {
        self.records = records
        self.plan = plan
        self.otherReads = otherReads
    }

    /// What the run reads that the directory entry at `path` is, if it is any such file (`the
    /// input in/a.jpg`, `the pipeline file p.json`): a rename replaces the entry itself, not
    /// what a link in it leads to.
    func readFile(at path: String) -> String? {
        guard !records.isEmpty || !otherReads.isEmpty, let identity = FileIdentity(path: path, followingLinks: false) else {
            return nil
        }
        return readFile(identity)
    }

    /// What the run reads that the file at `path` is, by the entry or by what a link there
    /// leads to: a file to leave in place, as removing either takes away a name the run reads by.
    func readFile(removing path: String) -> String? {
        guard !records.isEmpty || !otherReads.isEmpty else { return nil }
        return readFile(at: path) ?? FileIdentity(path: path, followingLinks: true).flatMap { readFile($0) }
    }

    /// What the run reads that the file of `identity` is.
    private func readFile(_ identity: FileIdentity) -> String? {
        if let what = otherReads[identity] { return what }
        guard let offset = records[identity] else { return nil }
        let input = plan.flatMap { SourceStore.input(at: offset, in: $0) }
        // An input replaced since it was listed (a file renamed over it, or removed and made
        // again, as a sync tool does) freed its identity, which the file system may give to
        // another file, such as an output made since: that file is the input only while the
        // input's path still leads to it. A server's plan outlives many such changes.
        if let input, FileIdentity(path: input.path, followingLinks: true) != identity { return nil }
        return "the input " + (input?.displayName ?? "an input of the run")
    }
}
