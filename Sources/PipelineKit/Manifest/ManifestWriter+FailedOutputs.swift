import Foundation

extension ManifestWriter {
    /// The previous manifest's entries of the outputs of `report` that failed without writing a
    /// file, where every file an entry lists is still there as it lists it. A failure leaves an
    /// output's earlier files on disk (its new files are written whole or not at all), so its
    /// entry goes on naming them, and the pages that show them stay whole; the failure is in the
    /// run's exit status and its report. An entry whose files are gone or replaced is dropped.
    func keptEntries(of report: ItemReport, earlier: ImageManifest.Input?) -> [String: ImageManifest.Output] {
        guard let earlier, !report.failures.isEmpty else { return [:] }
        let failed =
            report.failures.contains { $0.output == nil }
            ? Set(definition.outputs.map(\.name)) : Set(report.failures.compactMap(\.output))
        let written = Set(report.written.map(\.output))
        var kept: [String: ImageManifest.Output] = [:]
        for name in failed.subtracting(written) {
            guard let entry = earlier.outputs[name], filesAreThere(entry) else { continue }
            kept[name] = entry
        }
        return kept
    }

    /// Whether every file `entry` lists is on disk with the size it lists. A file in a bucket
    /// is taken as there: asking would cost a request for each.
    private func filesAreThere(_ entry: ImageManifest.Output) -> Bool {
        let formats = entry.formats + (entry.art ?? []).flatMap(\.formats)
        let files = formats.flatMap(\.files) + (entry.fallback.map { [$0] } ?? [])
        for file in files where ObjectLocation(file.path) == nil {
            guard let stamp = FileStamp(path: onDisk(file.path)), stamp.size == Int64(file.bytes) else { return false }
        }
        if let tiles = entry.tiles, ObjectLocation(tiles.path) == nil {
            return FileManager.default.fileExists(atPath: onDisk(tiles.path))
        }
        return true
    }

    /// The path of a manifest's `path`, which is relative to the manifest's folder.
    private func onDisk(_ path: String) -> String {
        path.hasPrefix("/") ? path : URL(fileURLWithPath: path, relativeTo: settings.file.deletingLastPathComponent()).path
    }
}
