import Foundation

/// The certificate authorities an https server's certificate is checked against: libcurl's own
/// bundle (the system's) unless a file or folder of others is named, as a private authority
/// (an internal origin, a MinIO with its own certificate) needs.
public struct CertificateAuthorities: Sendable, Equatable {
    /// A PEM file of the authorities to trust in place of libcurl's own bundle; nil keeps it.
    public var file: String?
    /// A folder of authorities prepared by `openssl rehash`, trusted as well; nil for none.
    public var folder: String?
    /// What named them, for messages: an environment variable, or "the settings".
    public var source: String
    /// Variables that name another file but are not read, because `source` comes first (a
    /// machine-wide `CURL_CA_BUNDLE` before a user's `SSL_CERT_FILE`): a refusal says so.
    public var passedOver: [String]

    /// Authorities named by the caller.
    public init(file: String? = nil, folder: String? = nil, source: String = "the settings", passedOver: [String] = []) {
        self.file = file
        self.folder = folder
        self.source = source
        self.passedOver = passedOver
    }

    /// The variables read, in order, for the file, as curl and OpenSSL's tools read them.
    public static let fileVariables = ["CURL_CA_BUNDLE", "SSL_CERT_FILE"]
    /// The variable read for the folder.
    public static let folderVariable = "SSL_CERT_DIR"

    /// The variable the AWS command line reads for the file, read first for S3 requests.
    public static let awsFileVariable = "AWS_CA_BUNDLE"

    /// What `environment` names: the first of `firstReading` and then `fileVariables` that is
    /// set and not empty for the file, and `folderVariable` for the folder.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment, firstReading: [String] = []
    ) -> CertificateAuthorities {
        let named = { (name: String) in environment[name].flatMap { $0.isEmpty ? nil : (name, $0) } }
        let files = (firstReading + fileVariables).compactMap(named)
        let file = files.first
        let folder = named(folderVariable)
        let sources = [file?.0, folder?.0].compactMap { $0 }
        return CertificateAuthorities(
            file: file?.1, folder: folder?.1, source: sources.isEmpty ? "the settings" : sources.joined(separator: " and "),
            passedOver: files.dropFirst().filter { $0.1 != file?.1 }.map(\.0))
    }

    /// What is said when a server's certificate is refused: how to trust a private authority,
    /// or which ones were trusted in place of the system's.
    var refusalAdvice: String {
        guard file != nil || folder != nil else {
            return "to trust a private certificate authority, set SSL_CERT_FILE to its PEM file"
        }
        let named = [file, folder].compactMap { $0 }.joined(separator: " and ")
        let unread =
            passedOver.isEmpty
            ? ""
            : "; \(passedOver.joined(separator: " and ")) \(passedOver.count == 1 ? "is" : "are") set too, but not read: "
                + "\(source.components(separatedBy: " and ")[0]) comes first"
        return "the authorities trusted are those \(source) names (\(named))\(unread)"
    }

    /// What is said when the authorities named cannot be read.
    var unreadable: String {
        let named = [file, folder].compactMap { $0 }.joined(separator: " and ")
        return "cannot read the certificate authorities \(source) names (\(named))"
    }
}
