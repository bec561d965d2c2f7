#if Server
import Foundation
import Hummingbird
import NIOCore
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit
@testable import PipelineServer

/// `PipelineServer`'s connections and routes: stalled and oversized requests, outputs it does not serve, health and methods.
@Suite(.serialized) struct ServeConnectionTests {
    @Test func aStalledClientIsCutOffAndOversizedRequestsAreRefused() async throws {
        let directory = try ServeTests.folder()
        try await withServer(ServeTests.json, in: directory, settings: .init(port: 0, idleTimeout: .seconds(1))) { server in
            let port = server.port
            // A client that sends half a request and then nothing is disconnected (the client's
            // own bound is far longer: were it not cut off, `exchange` would fail)
            let stalled = try await LoopbackHTTPClient.onThread {
                try LoopbackHTTPClient.exchange(port: port, bytes: Array("GET /thumb/a.jpg HTTP/1.1\r\nHost: x\r\n".utf8), timeout: 60)
            }
            #expect(!String(decoding: stalled, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
            // A URL or headers past the limits get a client error or a closed connection, never a 5xx
            let long = "/thumb/" + String(repeating: "a", count: 40_000)
            let longHeader = ["Cookie": String(repeating: "c", count: 40_000)]
            for (target, headers) in [(long, [String: String]()), ("/thumb/a.jpg", longHeader)] {
                let answer = try await LoopbackHTTPClient.onThread {
                    try? LoopbackHTTPClient.send(port: port, target: target, headers: headers, timeout: 60)
                }
                #expect((answer?.status ?? 400) < 500, "\(answer?.status ?? 0)")
            }
            // A URL just past its limit is answered 414; one just under it is looked up (and not found)
            let limit = PipelineServer.maxTargetBytes
            let over = try await server.request("/thumb/" + String(repeating: "b", count: limit - 6))
            #expect(over.status == 414, "\(over.status)")
            #expect(String(decoding: over.body, as: UTF8.self).contains("longer than"))
            let notFound = try await server.request("/thumb/" + String(repeating: "b", count: limit - 7))
            #expect(notFound.status == 404)
            // No cache keeps a refusal: a CDN would answer a kept 404 after the input was added
            #expect(over.header("Cache-Control") == "no-store")
            #expect(notFound.header("Cache-Control") == "no-store")
            // And the server goes on answering, having counted the 414 as every refusal
            #expect(try await server.request("/healthz").status == 200)
            let metrics = String(decoding: try await server.request("/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"status="414"} 1"#), "\(metrics)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }

    /// A request the HTTP parser refuses, which no route or middleware sees, is answered 400 and
    /// counted in `/metrics` as every refusal is.
    @Test func requestsTheParserRefusesAreCounted() async throws {
        let directory = try ServeTests.folder()
        try await withServer(ServeTests.json, in: directory) { server in
            let port = server.port
            let overlong = "GET /thumb/a.jpg HTTP/1.1\r\nHost: x\r\nCookie: \(String(repeating: "c", count: 20_000))\r\n\r\n"
            let many = (1...PipelineServer.maxHeaderCount).map { "X-\($0): v\r\n" }.joined()
            let tooMany = "GET /thumb/a.jpg HTTP/1.1\r\nHost: x\r\n\(many)\r\n"
            for request in ["GET thumb/a.jpg HTTP/1.1\r\nHost: x\r\n\r\n", overlong, tooMany, "\u{1}\u{2} nonsense\r\n\r\n"] {
                let answer = try await LoopbackHTTPClient.onThread {
                    try LoopbackHTTPClient.exchange(port: port, bytes: Array(request.utf8), timeout: 60)
                }
                #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 400"), "\(request.prefix(40))")
            }
            // A client that ends the connection mid-request is not counted as a refusal (one
            // that, as here, still reads gets the parser's 400; one that left gets nothing)
            _ = try await LoopbackHTTPClient.onThread {
                try LoopbackHTTPClient.exchange(port: port, bytes: Array("GET /thumb/a.jpg HTTP/1.1\r\nHo".utf8), ending: true, timeout: 60)
            }
            let metrics = String(decoding: try await server.request("/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"pipeline_serve_requests_total{output="none",status="400"} 4"#), "\(metrics)")
        }
        // The parser refuses too many headers as it refuses too many bytes of them, so the
        // access log's reason names both limits
        let reason = UnreadableRequestReporter.reason(.headerOverflow)
        #expect(reason.contains("16 KiB") && reason.contains("more than 100"), "\(reason)")
    }

    /// A request whose body is still coming when its answer has been written ends its
    /// connection: sent a byte at a time, it would otherwise hold the connection for as long as
    /// the client liked, each byte counting as activity.
    @Test func anAnswerWrittenBeforeItsRequestsBodyEndsEndsTheConnection() async throws {
        let directory = try ServeTests.folder()
        try await withServer(ServeTests.json, in: directory, settings: .init(port: 0, idleTimeout: .seconds(300))) { server in
            let port = server.port
            // A body of chunks that never ends; the client reads until the server closes
            let request = "POST /thumb/a.jpg HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n"
            let answer = try await LoopbackHTTPClient.onThread {
                try LoopbackHTTPClient.exchange(port: port, bytes: Array(request.utf8), timeout: 60)
            }
            let text = String(decoding: answer, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 405"), "\(text.prefix(200))")
            #expect(text.lowercased().contains("connection: close"), "\(text.prefix(400))")
            // while a request read whole keeps its connection for the next
            let two = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            let both = try await LoopbackHTTPClient.onThread {
                try LoopbackHTTPClient.exchange(port: port, bytes: Array(two.utf8), timeout: 60)
            }
            #expect(String(decoding: both, as: UTF8.self).components(separatedBy: "HTTP/1.1 200").count == 3)
        }
    }

    /// CONNECT, which asks for a tunnel, is refused, and the connection ends with the answer:
    /// an answer to CONNECT has no body by HTTP's rules, so nothing else tells the client where
    /// it ends.
    @Test func connectIsRefusedAndTheConnectionEnds() async throws {
        let directory = try ServeTests.folder()
        try await withServer(ServeTests.json, in: directory, settings: .init(port: 0, idleTimeout: .seconds(300))) { server in
            let port = server.port
            let answer = try await LoopbackHTTPClient.onThread {
                try LoopbackHTTPClient.exchange(
                    port: port, bytes: Array("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n".utf8), timeout: 30)
            }
            let text = String(decoding: answer, as: UTF8.self).lowercased()
            #expect(text.hasPrefix("http/1.1 405") && text.contains("\r\nconnection: close\r\n"), "\(text)")
        }
    }

    /// A connection kept alive after an answer is looked at again once it has been idle for the
    /// timeout, counted from its last byte, not a whole timeout after the check that found it
    /// active a moment before.
    @Test func anIdleConnectionIsCheckedOneTimeoutAfterItsLastByte() {
        let now = NIODeadline.now()
        let timeout = TimeAmount.seconds(30)
        let due = now + timeout - .milliseconds(10)
        #expect(IdleConnectionCloser.nextCheck(due: due, now: now, timeout: timeout) == due)
        // Idle past it while an answer is made: again a timeout later
        #expect(IdleConnectionCloser.nextCheck(due: now - .seconds(1), now: now, timeout: timeout) == now + timeout)
    }

    /// A server of one PNG of noise of `width`×`height` (`/png/noise.png`), with `idleTimeout`.
    func withLargeAnswer(
        width: Int, height: Int, idleTimeout: Duration, _ body: (RunningServer) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        try directory.write(try Fixtures.png(try Fixtures.noise(width: width, height: height)), to: "in/noise.png")
        let json = PipelineHarness.json(
            inputs: ["in/*.png"], outputs: [#"{"name": "png", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#])
        try await withServer(json, in: directory, settings: .init(port: 0, idleTimeout: idleTimeout), body)
    }

    @Test func aLargeAnswerToASlowButSteadyClientIsSentWhole() async throws {
        // Given a PNG answer of about 27 MB, and an idle timeout of 2 s
        try await withLargeAnswer(width: 3000, height: 3000, idleTimeout: .seconds(2)) { server in
            let made = try await server.request("/png/noise.png")
            #expect(made.status == 200)
            #expect(made.body.count > 20_000_000)
            // When a client takes it 64 KiB every 20 ms, for several times the idle timeout
            let port = server.port
            let slow = try await LoopbackHTTPClient.onThread {
                try LoopbackHTTPClient.send(port: port, target: "/png/noise.png", reading: .init(bytes: 64 << 10, pause: 0.02))
            }
            // Then every byte arrives: the client was never idle, though the server had handed
            // the whole answer to the connection long before
            #expect(slow.status == 200)
            #expect(slow.body.count == made.body.count)
            // (compared as one Bool: a failed comparison of the bodies would be described byte by byte)
            let same = slow.body == made.body
            #expect(same)

            // And a client that stops taking the answer for twice the idle timeout is cut off,
            // getting only what the connection held, and the server goes on answering
            let stalled = try await LoopbackHTTPClient.onThread {
                try LoopbackHTTPClient.send(port: port, target: "/png/noise.png", reading: .init(bytes: 64 << 10, pause: 4, pauses: 1))
            }
            #expect(stalled.status == 200)
            #expect(stalled.body.count < made.body.count)
            #expect(try await server.request("/healthz").status == 200)
            // and counted as the bytes the system took, which the client got, not the whole body
            // nor a piece still queued for the connection (the count is made as the server's
            // write of the body fails, which may come just after)
            var served = 0
            for _ in 0..<100 {
                let metrics = String(decoding: try await server.request("/metrics").body, as: UTF8.self)
                let line = metrics.split(separator: "\n").first { $0.hasPrefix(#"pipeline_serve_bytes_served_total{output="png"}"#) }
                served = line.flatMap { $0.split(separator: " ").last }.flatMap { Int($0) } ?? 0
                if served > 2 * made.body.count { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(served > 2 * made.body.count && served < 3 * made.body.count, "\(served) of \(3 * made.body.count)")
            let counted = served - 2 * made.body.count
            // (the piece the system had begun to take when the client stalled is not counted)
            #expect(
                counted <= stalled.body.count && stalled.body.count - counted < ResponseBody.pieceBytes,
                "\(counted) of \(stalled.body.count)")
        }
    }

    @Test func aClientTakingALargeAnswerSteadilyButSlowerThanTheSystemBuffersIsNotTakenForIdle() async throws {
        // Given a PNG answer of about 4 MB, and an idle timeout of 1 s
        try await withLargeAnswer(width: 1200, height: 1100, idleTimeout: .seconds(1)) { server in
            let made = try await server.request("/png/noise.png")
            #expect(made.body.count > 3_000_000)
            // When a client takes it 32 KiB every 40 ms: many times a piece within the timeout,
            // but less than the megabytes the system would hold ahead of it
            let port = server.port
            let slow = try await LoopbackHTTPClient.onThread {
                try LoopbackHTTPClient.send(port: port, target: "/png/noise.png", reading: .init(bytes: 32 << 10, pause: 0.04))
            }
            // Then it gets every byte: it was taking them all along
            #expect(slow.body.count == made.body.count)
            let same = slow.body == made.body
            #expect(same)
        }
    }

    @Test func tilePyramidsAreNotServed() async throws {
        let directory = try ServeTests.folder()
        let tiles = #"{"name": "zoom", "tiles": {"layout": "iiif"}, "path": "out/tiles/{stem}"}"#
        let json = PipelineHarness.json(inputs: ["in/*.jpg"], outputs: [ServeTests.thumb, tiles])
        try await withServer(json, in: directory) { server in
            // Refused from the catalog: a folder of tiles is not one file, and nothing runs
            let response = try await server.request("/zoom/a.jpg")
            #expect(response.status == 404)
            let body = try JSONSerialization.jsonObject(with: response.body) as? [String: String]
            #expect(body?["error"]?.isEmpty == false)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }

    /// HTTP/1's rules for keeping a connection (RFC 9112, section 9.3): an HTTP/1.0 request keeps
    /// it only when it says `keep-alive`, and `close` among any request's tokens ends it after the
    /// answer, which says so. A client that reads to the end of the connection is not kept
    /// waiting for the idle timeout.
    @Test func aConnectionIsKeptOrEndedAsTheRequestAsks() async throws {
        let directory = try ServeTests.folder()
        // An idle timeout far past the client's own bound: a connection left open fails the exchange
        try await withServer(ServeTests.json, in: directory, settings: .init(port: 0, idleTimeout: .seconds(300))) { server in
            let port = server.port
            func exchange(_ request: String) async throws -> String {
                let bytes = try await LoopbackHTTPClient.onThread {
                    try LoopbackHTTPClient.exchange(port: port, bytes: Array(request.utf8), timeout: 30)
                }
                return String(decoding: bytes, as: UTF8.self)
            }
            // Ended after the answer: HTTP/1.0 without keep-alive, and a close among HTTP/1.1's tokens
            for request in ["GET /healthz HTTP/1.0\r\n\r\n", "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: TE, Close\r\n\r\n"] {
                let answer = try await exchange(request)
                #expect(answer.hasPrefix("HTTP/1.1 200") && answer.lowercased().contains("\r\nconnection: close\r\n"), "\(answer)")
            }
            // Kept for HTTP/1.0 with keep-alive, and said so: three requests answered on one
            // connection, ended after the last, which does not ask to keep it
            let kept = "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
            let answers = try await exchange(kept + kept + "GET /healthz HTTP/1.0\r\n\r\n").lowercased()
            #expect(answers.components(separatedBy: "http/1.1 200").count == 4, "\(answers)")
            #expect(answers.components(separatedBy: "\r\nconnection: keep-alive\r\n").count == 3, "\(answers)")
            #expect(answers.hasSuffix("ok\n") && answers.components(separatedBy: "\r\nconnection: close\r\n").count == 2, "\(answers)")
        }
    }

    @Test func anHTTP11RequestWithoutOneValidHostIsRefused() async throws {
        let directory = try ServeTests.folder()
        try await withServer(ServeTests.json, in: directory) { server in
            let port = server.port
            func status(_ head: String) async throws -> String {
                let bytes = try await LoopbackHTTPClient.onThread {
                    try LoopbackHTTPClient.exchange(port: port, bytes: Array((head + "Connection: close\r\n\r\n").utf8), timeout: 30)
                }
                return String(String(decoding: bytes, as: UTF8.self).prefix(12))
            }
            // None, two, or one that is no host and port: 400, as RFC 9112 asks
            for head in [
                "GET /healthz HTTP/1.1\r\n", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n",
                "GET /healthz HTTP/1.1\r\nHost: a b\r\n", "GET /healthz HTTP/1.1\r\nHost: a/b\r\n",
                "GET /healthz HTTP/1.1\r\nHost: a:b\r\n", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pipeline-Host-Fault: none\r\nHost: y\r\n",
            ] {
                let got = try await status(head)
                #expect(got == "HTTP/1.1 400", "\(head)")
            }
            // One host, with or without a port, an IP literal, empty, or HTTP/1.0 without one: answered
            for head in [
                "GET /healthz HTTP/1.1\r\nHost: images.example.com:8080\r\n", "GET /healthz HTTP/1.1\r\nHost: [::1]:80\r\n",
                "GET /healthz HTTP/1.1\r\nHost:\r\n", "GET /healthz HTTP/1.0\r\n",
                "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pipeline-Host-Fault: forged\r\n",
            ] {
                let got = try await status(head)
                #expect(got == "HTTP/1.1 200", "\(head)")
            }
        }
    }

    @Test func healthzAndMethods() async throws {
        let directory = try ServeTests.folder()
        try await withServer(ServeTests.json, in: directory) { server in
            let health = try await server.request("/healthz")
            #expect(health.status == 200)
            #expect(String(decoding: health.body, as: UTF8.self) == "ok\n")
            let post = try await server.request("/thumb/a.jpg", method: "DELETE")
            #expect(post.status == 405)
            #expect(post.header("Allow") == "GET, HEAD")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/out"))
    }
}
#endif
