/// The stages an input goes through, named as in the pipeline file.
public enum Stage: String, Sendable, CaseIterable, Codable {
    /// Reading the input's bytes (local files now; HTTP later).
    case fetch
    /// Keeping fetched bytes between runs (a pass-through for local files).
    case cache
    /// Decoding once per input, shrunk on load to what the largest output needs.
    case decompress
    /// Running each output's processor steps.
    case resize
    /// Encoding each output and writing it atomically.
    case encode
}
