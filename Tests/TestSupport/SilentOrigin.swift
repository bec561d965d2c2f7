import Foundation

/// An origin that answers nothing while a test runs: each request is held until the origin goes
/// away (or `seconds` pass, so that no test can hang on it), then answered with an empty body.
package final class SilentOrigin: Sendable {
    /// The server, for its URLs and the requests it has had.
    package let server: TestHTTPServer
    private let release = DispatchSemaphore(value: 0)

    package init(seconds: Int) throws {
        let release = self.release
        server = try TestHTTPServer { _, _ in
            _ = release.wait(timeout: .now() + .seconds(seconds))
            return .init(body: Data())
        }
    }

    /// Lets every held request go, then stops the server.
    deinit {
        for _ in 0..<64 { release.signal() }
        server.stop()
    }
}
