import Foundation
import PipelineKit
import Vips

/// A small HTTP/1.1 server on 127.0.0.1 for tests: keep-alive, a handler per request, and a
/// log of every request and connection, so tests can count what the fetcher really did.
package final class TestHTTPServer: Sendable {
    package struct Request: Sendable {
        package let method: String
        package let path: String
        /// Header names lowercased.
        package let headers: [String: String]
    }

    package struct Response: Sendable {
        package enum Behaviour: Sendable {
            case normal
            /// Never answer: the client must time out.
            case stall
            /// Declare the whole body, send this many bytes of it, close.
            case truncate(Int)
            /// No Content-Length: send the body in chunks until done or the client leaves.
            case stream(chunk: Int)
            /// Send these bytes in place of a response (not HTTP, or a broken one), and close.
            case raw(Data)
        }

        package var status = 200
        package var headers: [String: String] = [:]
        package var body = Data()
        package var behaviour = Behaviour.normal

        package init(status: Int = 200, headers: [String: String] = [:], body: Data = Data(), behaviour: Behaviour = .normal) {
            self.status = status
            self.headers = headers
            self.body = body
            self.behaviour = behaviour
        }
    }

    /// `handler(request, n)` answers the n-th request (from 1) for that path.
    package typealias Handler = @Sendable (Request, Int) -> Response

    package let port: Int
    private let listener: Int32
    private let handler: Handler
    private let log = Locked<(requests: [Request], connections: Int, bytesSent: [String: Int])>(([], 0, [:]))
    private let stopped = Locked(false)
    /// The socket that holds the port once stopped (-1 before).
    private let refuser = Locked<Int32>(-1)

    package init(handler: @escaping Handler) throws {
        self.handler = handler
        guard let (descriptor, port) = Self.boundSocket(port: 0), listen(descriptor, 64) == 0 else { throw ServerError.cannotListen }
        listener = descriptor
        self.port = port
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit {
        stop()
        refuser.withLock { if $0 >= 0 { close($0) } }
    }

    /// A TCP socket bound to 127.0.0.1:`port` (0: one the kernel picks), not listening, and the
    /// port; nil when it cannot be bound. Shared with other such sockets (`SO_REUSEPORT`), so
    /// that `stop()` can keep the port while the listener goes.
    private static func boundSocket(port: Int) -> (descriptor: Int32, port: Int)? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEPORT, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(descriptor)
            return nil
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    package enum ServerError: Error { case cannotListen }

    package func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    package var requests: [Request] { log.withLock { $0.requests } }
    package var connections: Int { log.withLock { $0.connections } }
    package func requests(for path: String) -> [Request] { requests.filter { $0.path == path } }
    package func bytesSent(for path: String) -> Int { log.withLock { $0.bytesSent[path] ?? 0 } }

    /// Stops accepting connections. The port stays this server's, bound but not listening, so
    /// that connecting to it is refused until the server is gone: a test of a refused connection
    /// would otherwise reach whichever server another test started on the freed port.
    package func stop() {
        let wasStopped = stopped.withLock { value -> Bool in
            defer { value = true }; return value
        }
        if !wasStopped {
            let kept = Self.boundSocket(port: port)?.descriptor ?? -1
            refuser.withLock { $0 = kept }
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
    }

    private func acceptLoop() {
        while !stopped.withLock({ $0 }) {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            log.withLock { $0.connections += 1 }
            let thread = Thread { [self] in serve(connection) }
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var buffer = Data()
        while true {
            // Read one request head.
            while buffer.range(of: Data("\r\n\r\n".utf8)) == nil {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = recv(connection, &chunk, chunk.count, 0)
                if count <= 0 { return }
                buffer.append(contentsOf: chunk[0..<count])
            }
            guard let end = buffer.range(of: Data("\r\n\r\n".utf8)) else { return }
            let head = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
            buffer = Data(buffer[end.upperBound...])
            let lines = head.components(separatedBy: "\r\n")
            let parts = lines[0].split(separator: " ")
            guard parts.count >= 2 else { return }
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let request = Request(method: String(parts[0]), path: String(parts[1]), headers: headers)
            let number = log.withLock { state -> Int in
                state.requests.append(request)
                return state.requests.filter { $0.path == request.path }.count
            }
            let response = handler(request, number)
            guard respond(response, to: request, on: connection) else { return }
        }
    }

    /// Sends a response; false when the connection is finished.
    private func respond(_ response: Response, to request: Request, on connection: Int32) -> Bool {
        var headers = response.headers
        let reason = response.status == 200 ? "OK" : "Status"
        switch response.behaviour {
        case .raw(let bytes):
            _ = send(bytes, on: connection, path: request.path)
            return false
        case .stall:
            while !stopped.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.05) }
            return false
        case .stream:
            headers["Connection"] = "close"
        default:
            headers["Content-Length"] = String(response.body.count)
        }
        var head = "HTTP/1.1 \(response.status) \(reason)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        guard send(Data(head.utf8), on: connection, path: nil) else { return false }
        let body = request.method == "HEAD" || response.status == 304 ? Data() : response.body
        switch response.behaviour {
        case .normal:
            return send(body, on: connection, path: request.path)
        case .truncate(let count):
            _ = send(body.prefix(count), on: connection, path: request.path)
            return false
        case .stream(let chunk):
            var offset = 0
            while offset < body.count {
                let piece = body[body.startIndex + offset..<body.startIndex + min(body.count, offset + chunk)]
                guard send(Data(piece), on: connection, path: request.path) else { return false }
                offset += chunk
                Thread.sleep(forTimeInterval: 0.002)
            }
            return false
        case .stall, .raw:
            return false
        }
    }

    private func send(_ data: Data, on connection: Int32, path: String?) -> Bool {
        var offset = 0
        while offset < data.count {
            let sent = data.withUnsafeBytes { bytes in
                Glibc.send(connection, bytes.baseAddress!.advanced(by: offset), data.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent <= 0 { return false }
            offset += sent
            if let path { log.withLock { $0.bytesSent[path, default: 0] += sent } }
        }
        return true
    }
}
