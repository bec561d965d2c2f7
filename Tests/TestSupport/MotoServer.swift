import Foundation
import PipelineKit

/// A real S3-compatible server for tests: moto's server on a free loopback port, with signature
/// checking on. The first requests are free (`INITIAL_NO_AUTH_ACTION_COUNT`): they make an IAM
/// user, its access key and policies, and a role to assume, through moto's IAM API. Everything
/// after is authenticated, so a wrong secret is refused. Stopped when the value goes away, and
/// gone soon after the test process when that is killed (Scripts/moto-server).
package final class MotoServer: @unchecked Sendable {
    // Immutable after init; `process` is only terminated in deinit.
    package let port: Int
    package let endpoint: String
    /// The IAM user's key: may do anything except read keys below `private/` in any bucket.
    package let credentials: AWSCredentials
    package static let region = "us-east-1"
    package static let account = "123456789012"
    /// The role `assumeRole()` assumes: may do anything in S3.
    package static let roleName = "pipeline-reader"
    private let process: Process
    private let loader = CurlDataLoader()
    /// Where moto's recorder keeps the requests it records (`startRecording()`).
    private let recording = NSTemporaryDirectory() + "/moto-recording-\(UUID().uuidString)"

    /// The free requests spent on setting up the user and the role.
    private static let setupRequests = 5

    /// Whether moto's server can be started here (CI installs it: `.ci/setup`).
    package static let isAvailable: Bool = {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import moto.server, flask"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    package enum Failure: Error, CustomStringConvertible {
        case didNotStart(String)
        case setup(String)
        package var description: String {
            switch self {
            case .didNotStart(let why): "moto's server did not start: \(why)"
            case .setup(let why): "moto setup failed: \(why)"
            }
        }
    }

    package init() throws {
        // A port free when picked can be taken before moto binds it (an outgoing connection's
        // port, another test's server): a server that exits before it answers is started again
        // on another port, a few times.
        var started: (port: Int, process: Process)?
        var exits: [String] = []
        for _ in 0..<3 where started == nil {
            let port = try Self.freePort()
            let process = try Self.start(port: port, recording: recording)
            if Self.answers(on: port, while: { process.isRunning }) { started = (port, process) }
            guard started == nil else { break }
            guard !process.isRunning else {
                Self.stop(process)
                throw Failure.didNotStart("no answer on port \(port) within 30 s")
            }
            exits.append("on port \(port)")
        }
        guard let started else {
            throw Failure.didNotStart("python3 -m moto.server exited before it answered, \(exits.joined(separator: ", "))")
        }
        port = started.port
        process = started.process
        endpoint = "http://127.0.0.1:\(port)"
        do {
            credentials = try Self.makeUser(endpoint: endpoint, loader: loader)
        } catch {
            // Thrown before every property is set, the server would outlive the test: no deinit runs.
            credentials = AWSCredentials(accessKeyID: "", secretAccessKey: "")
            Self.stop(process)
            throw error
        }
        // A server that could not bind its port has exited: the answers came from another one.
        guard process.isRunning else { throw Failure.didNotStart("python3 -m moto.server exited: port \(port) was taken") }
    }

    deinit {
        Self.stop(process)
        try? FileManager.default.removeItem(atPath: recording)
    }

    /// moto's server on 127.0.0.1:`port`, its first requests free for the setup, its recorder
    /// writing to `recording` once started.
    private static func start(port: Int, recording: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = launchArguments(port: port)
        var environment = ProcessInfo.processInfo.environment
        environment["INITIAL_NO_AUTH_ACTION_COUNT"] = String(setupRequests)
        environment["MOTO_RECORDER_FILEPATH"] = recording
        environment[parentVariable] = String(ProcessInfo.processInfo.processIdentifier)
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The `env` arguments that run moto's server on 127.0.0.1:`port` through Scripts/moto-server,
    /// which exits when its parent, named in `parentVariable`, is gone: a test process that is
    /// killed runs no deinit.
    package static func launchArguments(port: Int) -> [String] {
        ["python3", script, "-H", "127.0.0.1", "-p", String(port)]
    }

    /// The variable that names the process whose end Scripts/moto-server waits for.
    package static let parentVariable = "PIPELINE_MOTO_PARENT"

    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/moto-server").path

    /// Stops the server (SIGSTOP) until `resume()`: a bucket that takes requests and answers none.
    package func pause() {
        kill(process.processIdentifier, SIGSTOP)
    }

    /// Lets a paused server answer again.
    package func resume() {
        kill(process.processIdentifier, SIGCONT)
    }

    /// SIGKILL: started from the test process, moto's server inherits a signal mask that
    /// blocks SIGTERM, and `terminate()` would leave `waitUntilExit()` waiting for good.
    private static func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Variables that point the AWS tools' resolution at this server with the user's key, and
    /// at a `HOME` without `~/.aws` (so the machine's own profiles are not read).
    package func environment(home: String, credentials: AWSCredentials? = nil) -> [String: String] {
        let credentials = credentials ?? self.credentials
        var environment = [
            "AWS_ACCESS_KEY_ID": credentials.accessKeyID, "AWS_SECRET_ACCESS_KEY": credentials.secretAccessKey,
            "AWS_ENDPOINT_URL_S3": endpoint, "AWS_REGION": Self.region, "HOME": home,
        ]
        if let token = credentials.sessionToken { environment["AWS_SESSION_TOKEN"] = token }
        return environment
    }

    // MARK: S3 calls for setting up and checking tests

    package func createBucket(_ bucket: String) throws {
        _ = try s3("PUT", bucket: bucket, key: "", body: Data())
    }

    /// Puts `data` at `key`, with `headers` such as `x-amz-meta-…` besides its content type.
    package func put(
        _ data: Data, bucket: String, key: String, contentType: String = "application/octet-stream", cacheControl: String? = nil,
        headers more: [String: String] = [:]
    ) throws {
        var headers = ["Content-Type": contentType]
        headers["Cache-Control"] = cacheControl
        headers.merge(more) { $1 }
        _ = try s3("PUT", bucket: bucket, key: key, body: data, headers: headers)
    }

    /// Removes the object, if there is one.
    package func delete(bucket: String, key: String) throws {
        _ = try s3("DELETE", bucket: bucket, key: key, accepting: [204, 404])
    }

    /// Uploads many objects side by side (moto's server is threaded).
    package func putMany(_ objects: [(key: String, data: Data)], bucket: String) throws {
        let failures = LockedFailures()
        DispatchQueue.concurrentPerform(iterations: 8) { lane in
            for index in stride(from: lane, to: objects.count, by: 8) {
                do { try put(objects[index].data, bucket: bucket, key: objects[index].key) } catch { failures.add("\(error)") }
            }
        }
        if let first = failures.first { throw Failure.setup(first) }
    }

    /// The object's bytes and headers, or nil when there is none.
    package func get(bucket: String, key: String) throws -> (body: Data, headers: [String: String])? {
        let response = try s3("GET", bucket: bucket, key: key, accepting: [404])
        return response.status == 404 ? nil : (response.body, response.headers)
    }

    /// Starts moto's recorder: each request from now on is kept, for `recordedRequests()`.
    package func startRecording() throws {
        var request = DataRequest(url: "\(endpoint)/moto-api/recorder/start-recording", maxBytes: 1 << 10)
        request.method = "POST"
        let response = try loader.load(request, isCancelled: { false })
        guard response.status == 200 else { throw Failure.setup("start-recording: HTTP \(response.status)") }
    }

    /// Each request moto recorded since `startRecording()`: its method, its URL's path, and its
    /// headers (names lowercased).
    package func recordedRequests() throws -> [(method: String, path: String, headers: [String: String])] {
        let request = DataRequest(url: "\(endpoint)/moto-api/recorder/download-recording", maxBytes: 1 << 30)
        let response = try loader.load(request, isCancelled: { false })
        guard response.status == 200 else { throw Failure.setup("download-recording: HTTP \(response.status)") }
        return try response.body.split(separator: UInt8(ascii: "\n")).map { line in
            let entry = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] ?? [:]
            let headers = (entry["headers"] as? [String: String] ?? [:]).reduce(into: [:]) { $0[$1.key.lowercased()] = $1.value }
            return (entry["method"] as? String ?? "", URL(string: entry["url"] as? String ?? "")?.path ?? "", headers)
        }
    }

    /// Assumes the test role as the user: temporary credentials with a session token.
    package func assumeRole() throws -> AWSCredentials {
        let body =
            "Action=AssumeRole&RoleArn=" + Self.formEncode("arn:aws:iam::\(Self.account):role/\(Self.roleName)")
            + "&RoleSessionName=pipeline-test&Version=2011-06-15"
        let xml = try Self.query(endpoint: endpoint, service: "sts", body: body, credentials: credentials, loader: loader)
        guard let key = Self.element("AccessKeyId", in: xml), let secret = Self.element("SecretAccessKey", in: xml),
            let token = Self.element("SessionToken", in: xml)
        else { throw Failure.setup("AssumeRole answered \(xml.prefix(300))") }
        return AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token)
    }

    private func s3(
        _ method: String, bucket: String, key: String, body: Data? = nil, headers: [String: String] = [:],
        accepting: Set<Int> = []
    ) throws -> DataResponse {
        let path = key.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.~"))) ?? "" }
            .joined(separator: "/")
        var request = DataRequest(url: "\(endpoint)/\(bucket)/\(path)", headers: headers, maxBytes: 1 << 30)
        request.method = method
        request.body = body
        request.signing = AWSSigning(credentials: credentials, region: Self.region)
        let response = try loader.load(request, isCancelled: { false })
        guard (200..<300).contains(response.status) || accepting.contains(response.status) else {
            throw Failure.setup(
                "\(method) \(bucket)/\(key): HTTP \(response.status) \(String(decoding: response.body.prefix(300), as: UTF8.self))")
        }
        return response
    }

    // MARK: Setting up

    /// The user (with a key and a policy) and the role, in the free requests.
    private static func makeUser(endpoint: String, loader: CurlDataLoader) throws -> AWSCredentials {
        // Free requests are not checked, but moto still routes them by the signature's service.
        let anyone = AWSCredentials(accessKeyID: "AKIASETUPSETUPSETUP0", secretAccessKey: "setup")
        let user = "pipeline-test"
        let userPolicy =
            #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},"#
            + #"{"Effect":"Deny","Action":"s3:GetObject","Resource":"arn:aws:s3:::*/private/*"}]}"#
        let trust =
            #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::\#(account):user/\#(user)"},"Action":"sts:AssumeRole"}]}"#
        let rolePolicy = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#
        let iam = { (body: String) throws -> String in
            try query(endpoint: endpoint, service: "iam", body: body + "&Version=2010-05-08", credentials: anyone, loader: loader)
        }
        _ = try iam("Action=CreateUser&UserName=\(user)")
        let keyXML = try iam("Action=CreateAccessKey&UserName=\(user)")
        _ = try iam("Action=PutUserPolicy&UserName=\(user)&PolicyName=all-but-private&PolicyDocument=" + formEncode(userPolicy))
        _ = try iam("Action=CreateRole&RoleName=\(roleName)&AssumeRolePolicyDocument=" + formEncode(trust))
        _ = try iam("Action=PutRolePolicy&RoleName=\(roleName)&PolicyName=s3&PolicyDocument=" + formEncode(rolePolicy))
        guard let key = element("AccessKeyId", in: keyXML), let secret = element("SecretAccessKey", in: keyXML) else {
            throw Failure.setup("CreateAccessKey answered \(keyXML.prefix(300))")
        }
        return AWSCredentials(accessKeyID: key, secretAccessKey: secret)
    }

    /// One call of a query API (IAM, STS): a signed form POST; returns the XML answer.
    private static func query(
        endpoint: String, service: String, body: String, credentials: AWSCredentials,
        loader: CurlDataLoader
    ) throws -> String {
        var request = DataRequest(url: endpoint + "/", headers: ["Content-Type": "application/x-www-form-urlencoded"], maxBytes: 1 << 20)
        request.method = "POST"
        request.body = Data(body.utf8)
        request.signing = AWSSigning(credentials: credentials, region: region, service: service)
        let response = try loader.load(request, isCancelled: { false })
        let text = String(decoding: response.body, as: UTF8.self)
        guard (200..<300).contains(response.status) else {
            throw Failure.setup("\(service) \(body.prefix(40)): HTTP \(response.status) \(text.prefix(300))")
        }
        return text
    }

    private static func formEncode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.~"))) ?? text
    }

    private static func element(_ tag: String, in xml: String) -> String? {
        guard let start = xml.range(of: "<\(tag)>"), let end = xml.range(of: "</\(tag)>", range: start.upperBound..<xml.endIndex) else {
            return nil
        }
        return String(xml[start.upperBound..<end.lowerBound])
    }

    /// A port free now, picked at random rather than asked of the kernel: test processes running
    /// side by side that each bind port 0 and close it are given the same port in turn, and one's
    /// moto would then answer the other's setup. Picked below the ports the kernel hands outgoing
    /// connections when it can (`ip_local_port_range`), so that none of the tests' own
    /// connections takes it first. Bounded: 100 tries.
    package static func freePort() throws -> Int {
        let ephemeral = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
            .split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) }
        let ports = ephemeral.map { $0 > 21_000 ? 20_000..<$0 : 20_000..<60_000 } ?? 20_000..<60_000
        for _ in 0..<100 {
            let port = Int.random(in: ports)
            if onLoopback(port, { bind($0, $1, $2) == 0 }) { return port }
        }
        throw Failure.didNotStart("no free port")
    }

    /// Whether something comes to accept connections on 127.0.0.1:`port` while `alive()` holds.
    /// Bounded in count and time: up to 300 tries 0.1 s apart (a loaded 2-core machine takes a
    /// few seconds to start Python and moto). Connecting spends none of the free requests.
    package static func answers(on port: Int, while alive: () -> Bool = { true }) -> Bool {
        for _ in 0..<300 where alive() {
            if accepts(port) { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    /// Whether something accepts connections on 127.0.0.1:`port`.
    package static func accepts(_ port: Int) -> Bool {
        onLoopback(port) { connect($0, $1, $2) == 0 }
    }

    /// `call` (bind or connect) on a new socket with 127.0.0.1:`port`; the socket is closed after.
    private static func onLoopback(
        _ port: Int, _ call: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool
    ) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}

/// Failures collected from concurrent uploads.
private final class LockedFailures: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var failures: [String] = []
    func add(_ failure: String) { lock.lock(); failures.append(failure); lock.unlock() }
    var first: String? { lock.lock(); defer { lock.unlock() }; return failures.first }
}
