import Foundation

/// A real https server on loopback for tests: OpenSSL's own `s_server -WWW`, serving the files
/// of a folder with a certificate for 127.0.0.1 made for it, signed by nothing the system
/// trusts. `authorityFile` is that certificate, the PEM a client trusts it by.
///
/// The server is stopped when the value goes away, or when the test process is killed: a shell
/// beside it kills it once the pipe from this process closes. Signals cannot stop it in
/// between, since the test process blocks SIGTERM and its children inherit that.
package final class TLSOrigin: @unchecked Sendable {
    // Immutable after init; `process` is only stopped in deinit.
    package let port: Int
    /// The folder served, the certificate and its key beside the files.
    package let folder: TemporaryDirectory
    /// The self-signed certificate: the authority a client must trust.
    package let authorityFile: String
    /// A folder holding that certificate as `openssl rehash` names it, the other way to trust it.
    package let authorityFolder: String
    private let process: Process
    private let lifeline: Pipe

    /// Runs `openssl s_server` with the arguments given, until stdin closes or ten minutes pass.
    private static let watchedServer =
        #"exec 3<&0; /usr/bin/openssl s_server "$@" </dev/null >/dev/null 2>&1 & server=$!; "#
        + #"{ read -t 600 _ <&3; kill -9 $server; } & wait $server"#

    package enum Failure: Error, CustomStringConvertible {
        case openssl(String)
        package var description: String {
            switch self {
            case .openssl(let why): "openssl: \(why)"
            }
        }
    }

    /// A server for the files `files` (name to bytes).
    package init(files: [String: Data]) throws {
        folder = try TemporaryDirectory()
        for (name, data) in files { try folder.write(data, to: name) }
        authorityFile = folder.path + "/authority.pem"
        let key = folder.path + "/authority-key.pem"
        try Self.openssl(
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                "-out", authorityFile, "-subj", "/CN=pipeline-test", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1",
            ], in: folder.path)
        authorityFolder = folder.path + "/authorities"
        try FileManager.default.createDirectory(atPath: authorityFolder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: authorityFile, toPath: authorityFolder + "/authority.pem")
        try Self.openssl(["rehash", authorityFolder], in: folder.path)
        // A port free when picked can be taken before the server binds it: a few tries.
        var started: (port: Int, process: Process, lifeline: Pipe)?
        for _ in 0..<3 where started == nil {
            let port = try MotoServer.freePort()
            let process = Process()
            let lifeline = Pipe()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [
                "-c", Self.watchedServer, "bash", "-quiet", "-WWW", "-accept", "127.0.0.1:\(port)", "-cert", authorityFile, "-key", key,
            ]
            process.currentDirectoryURL = folder.url
            process.standardInput = lifeline
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // The shell ends with the server: one that could not bind its port is gone.
            if MotoServer.answers(on: port, while: { process.isRunning }), process.isRunning {
                started = (port, process, lifeline)
            } else {
                Self.stop(process, lifeline)
            }
        }
        guard let started else { throw Failure.openssl("s_server did not answer on loopback in three tries") }
        port = started.port
        process = started.process
        lifeline = started.lifeline
    }

    deinit { Self.stop(process, lifeline) }

    /// The https URL of the served file `name`.
    package func url(_ name: String) -> String { "https://127.0.0.1:\(port)/\(name)" }

    private static func stop(_ process: Process, _ lifeline: Pipe) {
        try? lifeline.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    private static func openssl(_ arguments: [String], in folder: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw Failure.openssl("\(arguments.first ?? "") failed: \(text)") }
    }
}
