import Foundation
import Vips

/// A whole run's claim on the local files it writes, so that a run of another pipeline file
/// that would write one of them at the same time is refused before it starts. Two runs that
/// both write a file leave it, and the manifests that describe it, to whichever finished last.
/// Two runs of one pipeline file may share their files, as they always could: the journal and
/// the manifest are theirs together.
///
/// Each claim is a file in a folder of the user's (`$XDG_RUNTIME_DIR`, else the temporary
/// folder), named for the process: the pipeline file's real path, then the digests of the
/// files the run writes. The run holds a lock on it while it lives, so a claim left by a
/// process that died is told from a live one by taking its lock, and removed.
final class RunClaim: Sendable {
    private let descriptor: Int32
    private let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Whether the files were let go.
    private let released = Locked(false)

    /// Lets the files go, once: the claim file is removed and its lock dropped.
    func release() {
        let first = released.withLock { released in
            defer { released = true }
            return !released
        }
        guard first else { return }
        unlink(path)
        close(descriptor)
    }

    deinit { release() }

    /// The folder of this user's claims.
    static func folder(environment: [String: String]) -> String {
        let base = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.temporaryDirectory.path
        return base + "/pipeline-runs-\(getuid())"
    }

    /// What a claim names its run by.
    enum Claimant {
        /// A run of the pipeline file at this real path: runs of one file may share their files.
        case file(String)
        /// A run of a pipeline given without a file (`convert`), named so: it shares with none.
        case oneOff(String)

        /// As the claim file keeps it, and messages name it: a path, or the name in quotes.
        var text: String {
            switch self {
            case .file(let path): path
            case .oneOff(let name): "\"\(name)\" (no pipeline file)"
            }
        }
    }

    /// Claims `outputs` for a run that `claimant` names (`fileName` in errors); nil when no
    /// claim could be made, as where the folder cannot be written (the run then goes on
    /// unclaimed, as runs always did).
    ///
    /// - Throws: `PipelineFileError` naming a file this run would write that another live run
    ///   is writing (not one of the same pipeline file), and that run's file and process.
    static func claim(
        _ outputs: OutputPathRecords, claimant: Claimant, fileName: String, environment: [String: String]
    ) throws(PipelineFileError) -> RunClaim? {
        let folder = folder(environment: environment)
        mkdir(folder, 0o700)
        let pipeline = claimant.text
        guard let claim = makeClaim(outputs, pipeline: pipeline, in: folder) else { return nil }
        let others = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in others where name.hasSuffix(".claim") && folder + "/" + name != claim.path {
            guard let other = LiveClaim(path: folder + "/" + name) else { continue }
            if case .file = claimant, other.pipeline == pipeline { continue }
            var shared: String?
            outputs.scan { digest, path in
                if other.digests.contains(digest) { shared = path }
                return shared == nil
            }
            if let shared {
                var refusal = PipelineFileError(
                    file: fileName,
                    problems: [
                        .init(
                            path: "outputs", location: nil,
                            message:
                                "this run would write \(shared), which a run of \(other.pipeline) (process \(other.process)) is writing now: "
                                + "runs of two pipelines may not write one file at once; wait for that run, or give their outputs different paths"
                        )
                    ])
                refusal.isWaitingForAnotherRun = true
                throw refusal
            }
        }
        return claim
    }

    /// Writes the claim under a temporary name and renames it into place with its lock held, so
    /// that no reader sees it part-written or unlocked.
    private static func makeClaim(_ outputs: OutputPathRecords, pipeline: String, in folder: String) -> RunClaim? {
        let name = "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let temporary = folder + "/." + name + ".partial"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            unlink(temporary)
            return nil
        }
        var contents = Data((pipeline + "\n").utf8)
        outputs.scan { digest, _ in
            contents.append(contentsOf: digest.bytes)
            return true
        }
        let path = folder + "/" + name + ".claim"
        let written = contents.withUnsafeBytes { bytes in write(descriptor, bytes.baseAddress, bytes.count) == bytes.count }
        guard written, rename(temporary, path) == 0 else {
            close(descriptor)
            unlink(temporary)
            return nil
        }
        return RunClaim(descriptor: descriptor, path: path)
    }
}

/// Another process's claim, read while its run lives.
private struct LiveClaim {
    let pipeline: String
    let process: String
    let digests: Set<PathDigest>

    /// The claim at `path`, or nil when its run has ended (the claim is then removed) or it
    /// cannot be read.
    init?(path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // Its lock free: the process that held it is gone.
        if flock(descriptor, LOCK_SH | LOCK_NB) == 0 {
            unlink(path)
            return nil
        }
        guard let data = try? FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).readToEnd(),
            let newline = data.firstIndex(of: UInt8(ascii: "\n"))
        else { return nil }
        pipeline = String(decoding: data[..<newline], as: UTF8.self)
        process = String((path as NSString).lastPathComponent.prefix { $0 != "-" })
        var digests: Set<PathDigest> = []
        var start = newline + 1
        while data.endIndex - start >= 16 {
            digests.insert(PathDigest(bytes: data[start..<start + 16]))
            start += 16
        }
        self.digests = digests
    }
}
