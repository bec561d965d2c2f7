import Foundation

extension ImageWriter.UncommittedFile {
    /// The SHA-256 of the written bytes in lowercase hex, read back from the temporary file:
    /// the name `{hash}` fills in. On failure closes and removes the temporary file.
    func contentHash() throws(ItemError) -> String {
        guard let hash = SHA256.hex(ofFile: descriptor, byteCount: byteCount) else {
            let error = ItemError.system(.writing, stage: .encode, "cannot read back \(path) to hash it")
            discard()
            throw error
        }
        return hash
    }

    /// The same temporary file, to be renamed to `path` rather than to the path it was written for.
    func renamed(to path: String) -> Self {
        Self(path: path, temporary: temporary, descriptor: descriptor, byteCount: byteCount, protectedInputs: protectedInputs)
    }
}
