/// Facts about this build of PipelineKit.
public enum PipelineKitInfo {
    /// The version of this release, semantic (MAJOR.MINOR.PATCH): printed by
    /// `pipeline --version`, sent in the default User-Agent and recorded in reports. The one
    /// place it is written; `CHANGELOG.md`'s newest released heading names the same version.
    public static let version = "0.4.0"
}
