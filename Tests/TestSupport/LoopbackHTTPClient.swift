import Foundation

/// A plain HTTP/1.1 client for servers a test starts on loopback: it sends the request target
/// byte for byte as given (no URL type resolves `..` or re-encodes it first), with
/// `Connection: close`, and reads the answer to the end, each socket call bounded by a timeout.
package enum LoopbackHTTPClient {
    /// One answer: its status, its headers by lowercased name, and its body.
    package struct Response: Sendable {
        package let status: Int
        package let headers: [String: String]
        package let body: Data

        /// The header `name` (any case).
        package func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    /// What went wrong talking to the server.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String

        /// A failure saying `description`.
        package init(description: String) { self.description = description }
    }

    /// Sends one request on a thread of its own (the socket calls block), so that tests awaiting
    /// it never hold one of Swift's cooperative threads, which the server under test needs.
    package static func request(
        _ method: String = "GET", port: Int, target: String, headers: [String: String] = [:], timeout: Double = 120
    ) async throws -> Response {
        try await onThread { try send(method, port: port, target: target, headers: headers, timeout: timeout) }
    }

    /// Runs `body`, which blocks on sockets, on a thread of its own, off Swift's cooperative threads.
    package static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// A client that reads slowly: each read takes at most `bytes` (also its socket's receive
    /// buffer, so the system does not read ahead for it), after a wait of `pause` seconds for
    /// each of the first `pauses` reads (and none after).
    package struct SlowReading: Sendable {
        package let bytes: Int
        package let pause: Double
        package let pauses: Int

        /// Reads of at most `bytes`, the first `pauses` of them each after `pause` seconds.
        package init(bytes: Int, pause: Double, pauses: Int = .max) {
            self.bytes = bytes
            self.pause = pause
            self.pauses = pauses
        }
    }

    /// Sends one request and waits for the whole answer, blocking the calling thread.
    package static func send(
        _ method: String = "GET", port: Int, target: String, headers: [String: String] = [:], timeout: Double = 120,
        reading slowly: SlowReading? = nil
    ) throws -> Response {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return try parse(try exchange(port: port, bytes: Array((head + "\r\n").utf8), timeout: timeout, reading: slowly))
    }

    /// A connection whose `GET target` has begun to be answered (its first bytes read), that
    /// then takes no more: a client stalled in the middle of a body. The caller closes it.
    package static func stalledInAnswer(port: Int, target: String, timeout: Double = 120) throws -> Int32 {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var size: Int32 = 4096
        setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var limit = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let request = Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        var first = [UInt8](repeating: 0, count: 1024)
        guard connected == 0, Foundation.send(socket, request, request.count, Int32(MSG_NOSIGNAL)) == request.count,
            recv(socket, &first, first.count, 0) > 0
        else {
            let reason = String(cString: strerror(errno))
            close(socket)
            throw Failure(description: "no answer began on port \(port): \(reason)")
        }
        return socket
    }

    /// Sends `bytes` as they are (half a request, say), then ends its side of the connection
    /// when `ending`, and reads until the server closes the connection; fails when it has not
    /// after `timeout` seconds without a byte.
    package static func exchange(
        port: Int, bytes: [UInt8], ending: Bool = false, timeout: Double = 120, reading slowly: SlowReading? = nil
    ) throws -> Data {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(socket) }
        if let slowly {
            var size = Int32(slowly.bytes)
            setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect to port \(port): \(String(cString: strerror(errno)))") }
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Foundation.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw Failure(description: "send: \(String(cString: strerror(errno)))") }
            sent += count
        }
        if ending { shutdown(socket, Int32(SHUT_WR)) }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: slowly?.bytes ?? 1 << 16)
        var reads = 0
        while true {
            if let slowly, reads > 0, reads <= slowly.pauses { usleep(UInt32(slowly.pause * 1_000_000)) }
            reads += 1
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            // A reset after the server gave up on the request is a close too.
            if count < 0, errno == ECONNRESET { break }
            guard count > 0 else { throw Failure(description: "recv: \(String(cString: strerror(errno)))") }
            received.append(contentsOf: buffer[..<count])
        }
        return received
    }

    /// The answer `data` holds: its status line, headers and body.
    package static func parse(_ data: Data) throws -> Response {
        guard let end = data.firstRange(of: Data("\r\n\r\n".utf8)) else {
            throw Failure(description: "no complete header in \(data.count) bytes: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        let lines = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "bad status line \(lines[0])") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        return Response(status: status, headers: headers, body: Data(data[end.upperBound...]))
    }
}
