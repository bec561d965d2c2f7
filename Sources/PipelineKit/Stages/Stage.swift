/// The stages an input goes through, named as in the pipeline file.
public enum Stage: String, Sendable, CaseIterable, Codable {
    /// Reading the input's bytes: a local file, or a URL over HTTP(S).
    case fetch
    /// Keeping fetched bytes between runs (a pass-through for local files).
    case cache
    /// Decoding once per input, shrunk on load to what the largest output needs.
    case decompress
    /// Running each output's processor steps (resize, crop, blur, …). Its settings were once
    /// named `resize` in pipeline files; that key is still read, with a warning.
    case process
    /// Encoding each output and writing it atomically.
    case encode
}
