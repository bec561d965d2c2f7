import Dispatch
import Foundation
import Vips

/// An output written under a temporary name and waiting for its commit: a file
/// (`ImageWriter.UncommittedFile`) or a tile pyramid (`TilePyramidWriter.UncommittedPyramid`).
protocol UncommittedOutput: Sendable {
    /// Flushes it to disk; on failure removes it.
    func flush() throws(ItemError)
    /// Renames the flushed output into place; on failure removes it.
    /// - Returns: the file as it was put in place, read from its own descriptor, for the
    ///   journal to record; nil for a pyramid, a folder of many, which is stamped by its path.
    func moveIntoPlace() throws(ItemError) -> FileStamp?
    /// Removes it unflushed, leaving what was at its path: for an output whose input ran out
    /// of time before the commit.
    func discard()
}

extension ImageWriter.UncommittedFile: UncommittedOutput {
    func discard() {
        closeAndRemove()
    }
}

extension TilePyramidWriter.UncommittedPyramid: UncommittedOutput {}

/// Commits written outputs (flush to disk, rename into place: `UncommittedOutput`)
/// on a thread of its own, so that an encode lane does not wait on the disk, and in batches:
/// the files that arrive while one batch is flushed are flushed together after it, all of them
/// before any is renamed, so that one journal commit covers the batch rather than each flush
/// committing the rename before it (`Benchmarks/RESULTS.md` has the measurements).
final class FileCommitter: Sendable {
    /// Files waiting to be committed, each with its encode waiting for the outcome, and whether
    /// the lane is draining them.
    private let room = WaitingRoom<Bool, any UncommittedOutput, Result<FileStamp?, ItemError>>(false)
    /// A serial queue is a thread while it has work, as the fetch lanes are
    /// (`StageQueue.Threads.ownPerLane`): flushes block, so they stay off the pool of threads
    /// the compute stages share.
    private let lane = DispatchQueue(label: "pipeline.commit")

    /// The output once its file or pyramid, if any, is on disk under its own name; a failure to flush or
    /// rename is the output's, at the encode stage, and leaves no temporary file.
    func commit(_ pending: OutputWriter.Pending) async throws(ItemError) -> WrittenOutput {
        guard let file = pending.file else { return pending.output }
        let result = await room.wait(file) { draining, _ in
            guard !draining else { return }
            draining = true
            lane.async { self.drain() }
        }
        var output = pending.output
        output.committed = try result.get()
        return output
    }

    /// Commits what is waiting, batch after batch, until nothing is.
    private func drain() {
        while true {
            let batch = room.withLock { draining, waiters in
                if waiters.isEmpty { draining = false }
                return waiters.takeAll()
            }
            guard !batch.isEmpty else { return }
            let flushed = batch.map { item in Result { () throws(ItemError) in try item.ticket.flush() } }
            for (item, flush) in zip(batch, flushed) {
                item.letGo(with: flush.flatMap { Result { () throws(ItemError) in try item.ticket.moveIntoPlace() } })
            }
        }
    }
}
