import Foundation

extension ImageWriter.UncommittedFile {
    /// The SHA-256 of the written bytes in lowercase hex, read back from the temporary file:
    /// the name `{hash}` fills in. On failure closes and removes the temporary file.
    func contentHash() throws(ItemError) -> String {
        var bytes = Data(count: byteCount)
        var done = 0
        let complete = bytes.withUnsafeMutableBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return byteCount == 0 }
            // Bounded: each read either advances or ends the loop.
            while done < byteCount {
                let count = pread(descriptor, base + done, byteCount - done, off_t(done))
                guard count > 0 else { return false }
                done += count
            }
            return true
        }
        guard complete else {
            let error = ItemError.system(.writing, stage: .encode, "cannot read back \(path) to hash it")
            discard()
            throw error
        }
        return SHA256.hex(bytes)
    }

    /// The same temporary file, to be renamed to `path` rather than to the path it was written for.
    func renamed(to path: String) -> Self {
        Self(path: path, temporary: temporary, descriptor: descriptor, byteCount: byteCount, protectedInputs: protectedInputs)
    }
}
