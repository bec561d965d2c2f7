/// Facts about this build of PipelineKit.
public enum PipelineKitInfo {
    /// The version printed by `pipeline --version` and recorded in reports.
    public static let version = "0.1.0"
}
