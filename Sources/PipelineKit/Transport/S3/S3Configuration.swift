import Foundation

/// The pipeline file's `s3` section: what it may say about S3-compatible storage. Everything
/// else (keys, tokens) comes from where every AWS tool reads it, never from the file.
public struct S3Settings: Sendable, Equatable {
    /// A profile in `~/.aws/credentials` and `~/.aws/config`, in place of `AWS_PROFILE`.
    public var profile: String?
    /// The region, in place of `AWS_REGION`.
    public var region: String?
    /// An S3-compatible server (MinIO, Ceph, R2, a local moto), addressed path-style.
    public var endpoint: String?

    /// The section as a pipeline file would give it; nil leaves a setting to the environment.
    public init(profile: String? = nil, region: String? = nil, endpoint: String? = nil) {
        self.profile = profile
        self.region = region
        self.endpoint = endpoint
    }
}

/// Where S3 requests go and how they are signed, resolved as the AWS command line resolves it.
///
/// - Credentials: the profile the file names; else `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`
///   and `AWS_SESSION_TOKEN`; else the profile `AWS_PROFILE` names (or `default`) in the shared
///   credentials file (`AWS_SHARED_CREDENTIALS_FILE`, `~/.aws/credentials`), then in the config
///   file (`AWS_CONFIG_FILE`, `~/.aws/config`, sections `[profile NAME]`).
/// - Region: the file's, `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`, else `us-east-1`.
/// - Endpoint: the file's, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's
///   `endpoint_url`, else AWS itself (virtual-hosted addressing). A custom endpoint is addressed
///   path-style (`ENDPOINT/bucket/key`), which every S3-compatible server understands.
public struct S3Configuration: Sendable, Equatable, CustomStringConvertible {
    /// The key to sign with.
    public let credentials: AWSCredentials
    /// The region requests are signed for (and, on AWS, sent to).
    public let region: String
    /// The custom endpoint (scheme, host, port, optional path), or nil for AWS.
    public let endpoint: String?

    /// A configuration given in full, for example by a program that gets keys its own way.
    public init(credentials: AWSCredentials, region: String, endpoint: String?) {
        self.credentials = credentials
        self.region = region
        self.endpoint = endpoint
    }

    /// The endpoint, region and key id; never the secret or the token.
    public var description: String { "\(endpoint ?? "AWS S3") in \(region) with \(credentials)" }

    /// Why no configuration could be resolved. It names files and variables, never a secret.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What is missing or wrong, and where it was looked for.
        public let message: String
        /// The message.
        public var description: String { message }
    }

    /// The shared credentials and config files the environment points to (`AWS_SHARED_CREDENTIALS_FILE`,
    /// `AWS_CONFIG_FILE`), or their places in the home folder.
    static func sharedFiles(environment: [String: String]) -> (credentials: String, config: String) {
        let variable = { (name: String) -> String? in environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let home = variable("HOME") ?? NSHomeDirectory()
        let expand = { (path: String) in path.hasPrefix("~/") ? home + path.dropFirst(1) : path }
        return (
            variable("AWS_SHARED_CREDENTIALS_FILE").map(expand) ?? home + "/.aws/credentials",
            variable("AWS_CONFIG_FILE").map(expand) ?? home + "/.aws/config"
        )
    }

    /// Resolves the configuration from the file's section and the environment's variables.
    public static func resolve(_ settings: S3Settings, environment: [String: String]) throws(Failure) -> S3Configuration {
        let variable = { (name: String) -> String? in environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let (credentialsPath, configPath) = sharedFiles(environment: environment)
        let profileName = settings.profile ?? variable("AWS_PROFILE") ?? "default"
        let credentialsFile = INIFile(path: credentialsPath)
        let configFile = INIFile(path: configPath)
        // In the config file every profile but the default one is `[profile NAME]`.
        let configSection =
            configFile.sections[profileName == "default" ? "default" : "profile \(profileName)"]
            ?? configFile.sections[profileName]
        let profile = (credentialsFile.sections[profileName] ?? [:]).merging(configSection ?? [:]) { fromCredentials, _ in fromCredentials }

        let credentials: AWSCredentials
        if settings.profile == nil, let key = variable("AWS_ACCESS_KEY_ID"), let secret = variable("AWS_SECRET_ACCESS_KEY") {
            credentials = AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: variable("AWS_SESSION_TOKEN"))
        } else if let key = profile["aws_access_key_id"], let secret = profile["aws_secret_access_key"] {
            credentials = AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: profile["aws_session_token"])
        } else {
            // Say which variable is missing when only one is: "both unset" would send the user
            // looking for the wrong one.
            let key = variable("AWS_ACCESS_KEY_ID"), secret = variable("AWS_SECRET_ACCESS_KEY")
            let variables =
                settings.profile != nil
                ? "the file's s3.profile is used in place of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
                : key != nil && secret == nil
                    ? "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"
                    : key == nil && secret != nil
                        ? "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"
                        : "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set"
            let source =
                settings.profile != nil
                ? "the profile \"\(profileName)\" that the file's s3.profile names"
                : variable("AWS_PROFILE") != nil ? "the profile \"\(profileName)\" that AWS_PROFILE names" : "the default profile"
            let unread = [credentialsFile.problem, configFile.problem].compactMap { $0 }
            // A profile the AWS command line turns into keys itself (an assumed role, a
            // program, single sign-on) is not read: said so, with a way to give the keys.
            let derived = ["role_arn", "credential_process", "sso_session", "sso_start_url", "web_identity_token_file"]
                .filter { profile[$0] != nil }
            let unsupported =
                derived.isEmpty
                ? ""
                : "; it has \(derived.joined(separator: " and ")), which pipeline does not read: give it keys, or set the "
                    + "variables to a session's (`aws configure export-credentials --profile \(profileName) --format env`)"
            throw Failure(
                message: "no S3 credentials: \(variables), and \(source) "
                    + "has no aws_access_key_id and aws_secret_access_key in \(credentialsPath) or \(configPath)"
                    + unsupported + unread.map { "; " + $0 }.joined())
        }
        let region = settings.region ?? variable("AWS_REGION") ?? variable("AWS_DEFAULT_REGION") ?? profile["region"] ?? "us-east-1"
        let endpoint = settings.endpoint ?? variable("AWS_ENDPOINT_URL_S3") ?? variable("AWS_ENDPOINT_URL") ?? profile["endpoint_url"]
        if let endpoint, let problem = Self.problem(ofEndpoint: endpoint) { throw Failure(message: "the S3 " + problem) }
        return S3Configuration(
            credentials: credentials, region: region,
            endpoint: endpoint.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 })
    }
}

extension S3Configuration {
    /// What is wrong with `endpoint` as an S3 endpoint (scheme, host, port and a path at most),
    /// starting "endpoint …", or nil. A secret in it (a password before the host) is hidden.
    static func problem(ofEndpoint endpoint: String) -> String? {
        let shown = CredentialRedaction().redact(endpoint).quotedValue
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host?.isEmpty == false
        else { return "endpoint \(shown) is not an http or https URL" }
        // Every request's path and query are added to it: one of its own would be lost or sent wrong.
        if url.query != nil || url.fragment != nil || endpoint.contains("?") || endpoint.contains("#") {
            return "endpoint \(shown) has a query or a fragment: give the scheme, host and port (and a path at most)"
        }
        return nil
    }
}

/// An AWS shared credentials or config file: `[section]` headers and `key = value` lines.
///
/// The file is read as bytes, and bytes that are not UTF-8 (in a comment, say) become U+FFFD:
/// they cannot hide the keys around them.
struct INIFile {
    var sections: [String: [String: String]] = [:]
    /// Why a file that exists could not be read, naming it; nil when it was read or is absent.
    var problem: String?

    init(path: String) {
        let data: Data
        do throws(RegularFile.Failure) {
            data = try RegularFile.contents(of: path)
        } catch {
            if error.code != ENOENT { problem = "cannot read \(path): \(error.reason)" }
            return
        }
        let text = String(decoding: data, as: UTF8.self)
        var current: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                let name = line.dropFirst().dropLast().split(whereSeparator: \.isWhitespace).joined(separator: " ")
                current = name
                sections[name, default: [:]] = sections[name] ?? [:]
            } else if let current, let equals = line.firstIndex(of: "=") {
                let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
                let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                sections[current]?[key] = value
            }
        }
    }
}
