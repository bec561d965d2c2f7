import Vips

/// The encode stage's work for one output: fills in its path, claims it for this run, encodes
/// the image and writes it atomically.
final class OutputWriter: Sendable {
    /// Paths written in this run, and by what: the one piece of state outputs share, so it
    /// has one owner.
    private let claimedPaths = Locked<[String: String]>([:])

    func write(_ image: VipsImage, output: OutputDefinition, target: OutputTarget, input: InputFile) throws(ItemError) -> WrittenOutput {
        let path: String
        do {
            path = try target.path(width: image.width, height: image.height)
        } catch {
            throw ItemError(.outputPath, stage: .encode, reason: error.message, underlying: error)
        }
        try claim(path, for: "output \"\(output.name)\" of \(input.displayName)")
        let byteCount = try ImageWriter.write(to: path, root: target.root) { descriptor throws(ItemError) in
            do {
                try ImageEncoder.encode(image, with: output.encoder, into: descriptor)
            } catch {
                throw ItemError(.encoding, stage: .encode, reason: ItemError.reason(for: error), underlying: error)
            }
        }
        return WrittenOutput(output: output.name, path: path, size: image.size, byteCount: byteCount, format: output.encoder.format)
    }

    private func claim(_ path: String, for claimant: String) throws(ItemError) {
        let earlier = claimedPaths.withLock { claimed -> String? in
            if let earlier = claimed[path] { return earlier }
            claimed[path] = claimant
            return nil
        }
        if let earlier {
            throw ItemError(.outputPath, stage: .encode, reason: "\(path) was already written in this run by \(earlier)")
        }
    }
}
