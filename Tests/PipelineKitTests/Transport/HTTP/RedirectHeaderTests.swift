import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// The file's headers (an API key) go to the input URL's origin only: a redirect to another
/// host, scheme or port does not take them along unless `fetch.headersOnRedirect` says so.
/// Two loopback servers on two ports are two origins.
@Suite struct RedirectHeaderTests {
    static let photo: Data = (try? Fixtures.jpeg(try Fixtures.gradient(width: 64, height: 32))) ?? Data()

    /// A server that answers every path with the photo.
    func target() throws -> TestHTTPServer {
        try TestHTTPServer { _, _ in .init(status: 200, headers: ["Content-Type": "image/jpeg"], body: Self.photo) }
    }

    /// A server that sends `/start.jpg` to its own `/moved.jpg`, and that to `location`.
    func redirector(to location: String, status: Int = 302) throws -> TestHTTPServer {
        try TestHTTPServer { request, _ in
            request.path == "/start.jpg"
                ? .init(status: 301, headers: ["Location": "/moved.jpg"])
                : .init(status: status, headers: ["Location": location])
        }
    }

    func load(_ url: String, headersOnRedirect: Bool = false, maxRedirects: Int = 5) throws -> DataResponse {
        let loader = CurlDataLoader(
            settings: .init(maxRedirects: maxRedirects, headers: ["X-Api-Key": "key-123"], headersOnRedirect: headersOnRedirect))
        return try loader.load(DataRequest(url: url, headers: ["If-None-Match": "\"v0\""], maxBytes: 1 << 20), isCancelled: { false })
    }

    @Test func aRedirectToAnotherHostDoesNotGetTheHeaders() throws {
        let other = try target()
        let origin = try redirector(to: other.url("/elsewhere.jpg"))
        let response = try load(origin.url("/start.jpg"))
        #expect(response.status == 200 && response.body == Self.photo)
        // Both hops on the input's origin had the header (the second after a relative redirect).
        #expect(origin.requests.map(\.path) == ["/start.jpg", "/moved.jpg"])
        #expect(origin.requests.allSatisfy { $0.headers["x-api-key"] == "key-123" }, "\(origin.requests.map(\.headers))")
        // The other host had the request's own headers, and not the file's.
        #expect(other.requests.map(\.path) == ["/elsewhere.jpg"])
        #expect(other.requests.first?.headers["x-api-key"] == nil, "\(other.requests.map(\.headers))")
        #expect(other.requests.first?.headers["if-none-match"] == "\"v0\"")
    }

    @Test func headersOnRedirectSendsThemToEveryHost() throws {
        let other = try target()
        let origin = try redirector(to: other.url("/elsewhere.jpg"), status: 307)
        let response = try load(origin.url("/start.jpg"), headersOnRedirect: true)
        #expect(response.status == 200)
        #expect(other.requests.first?.headers["x-api-key"] == "key-123", "\(other.requests.map(\.headers))")
    }

    @Test func aRequestThatSendsNoFileHeadersGetsNoneEvenOnItsOwnOrigin() throws {
        let server = try target()
        let loader = CurlDataLoader(settings: .init(headers: ["X-Api-Key": "key-123"], headersOnRedirect: true))
        var request = DataRequest(url: server.url("/logo.png"), headers: ["If-None-Match": "\"v0\""], maxBytes: 1 << 20)
        request.sendsFileHeaders = false
        #expect(try loader.load(request, isCancelled: { false }).status == 200)
        #expect(server.requests.first?.headers["x-api-key"] == nil, "\(server.requests.map(\.headers))")
        #expect(server.requests.first?.headers["if-none-match"] == "\"v0\"")
    }

    @Test func redirectsStopAtMaxRedirects() throws {
        let loop = try TestHTTPServer { request, _ in .init(status: 302, headers: ["Location": request.path + "x"]) }
        let error = #expect(throws: FetchError.self) { try load(loop.url("/a"), maxRedirects: 3) }
        #expect(
            error?.kind == .badRedirect && error?.message == "too many redirects: more than fetch.maxRedirects (3) allows",
            "\(String(describing: error))")
        // The first request and three redirects followed.
        #expect(loop.requests.map(\.path) == ["/a", "/ax", "/axx", "/axxx"])
    }

    /// Through a run: the file's `fetch.headers` and `fetch.headersOnRedirect`.
    @Test func aRunSendsTheFilesHeadersToTheInputsOriginOnly() async throws {
        for onRedirect in [false, true] {
            let other = try target()
            let origin = try redirector(to: other.url("/elsewhere.jpg"))
            let directory = try TemporaryDirectory()
            let json = PipelineHarness.json(
                inputs: [origin.url("/start.jpg")],
                outputs: [#"{"name": "t", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#],
                extra: #""fetch": {"retries": 0, "headers": {"X-Api-Key": "key-123"}, "headersOnRedirect": \#(onRedirect)}"#)
            let (reports, summary) = try await PipelineHarness.run(json, in: directory)
            #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
            #expect(origin.requests.first?.headers["x-api-key"] == "key-123")
            #expect(other.requests.first?.headers["x-api-key"] == (onRedirect ? "key-123" : nil), "headersOnRedirect \(onRedirect)")
        }
    }

    /// A step's overlay is no input: its requests carry none of the file's headers, even on an
    /// input's origin and with `headersOnRedirect`.
    @Test func anOverlayGetsNoneOfTheFilesHeadersWhateverItsOrigin() async throws {
        // Given one server with a photo and a logo, and a file with an API key in fetch.headers
        let logo = try Fixtures.png(try Fixtures.solid(width: 8, height: 8, colour: Fixtures.red))
        let server = try TestHTTPServer { request, _ in
            request.path == "/logo.png"
                ? .init(status: 200, headers: ["Content-Type": "image/png"], body: logo)
                : .init(status: 200, headers: ["Content-Type": "image/jpeg"], body: Self.photo)
        }
        let directory = try TemporaryDirectory()
        try directory.write(Self.photo, to: "local.jpg")
        let marked =
            #"{"name": "marked", "steps": [{"composite": {"image": "\#(server.url("/logo.png"))"}}], "encode": {"format": "png"}, "path": "out/{stem}.png"}"#

        // When a local input, and then an input on the logo's own origin, are marked with the logo
        for input in ["local.jpg", server.url("/photo.jpg")] {
            let json = PipelineHarness.json(
                inputs: [input], outputs: [marked],
                extra:
                    #""cache": {"enabled": false}, "fetch": {"retries": 0, "headers": {"X-Api-Key": "key-123"}, "headersOnRedirect": true}"#
            )
            let (reports, summary) = try await PipelineHarness.run(json, in: directory)
            #expect(summary.succeeded == 1, "\(input): \(reports.flatMap(\.failures))")
        }

        // Then the logo was fetched without the key both times, and the input on its origin with it
        let overlayRequests = server.requests(for: "/logo.png")
        #expect(overlayRequests.count == 2)
        #expect(overlayRequests.allSatisfy { $0.headers["x-api-key"] == nil }, "\(overlayRequests.map(\.headers))")
        #expect(server.requests(for: "/photo.jpg").first?.headers["x-api-key"] == "key-123")
    }

    @Test func anInputIsNeverGivenTheCachedAnswerToItsURLAskedAsAnOverlay() async throws {
        // Given a URL that answers a request with the API key with a 64×32 photo, and one
        // without it with an 8×8 logo, each fresh for an hour
        let keyed = try Fixtures.png(try Fixtures.gradient(width: 64, height: 32))
        let anonymous = try Fixtures.png(try Fixtures.solid(width: 8, height: 8, colour: Fixtures.red))
        let server = try TestHTTPServer { request, _ in
            let withKey = request.headers["x-api-key"] == "key-123"
            return .init(
                status: 200,
                headers: ["Content-Type": "image/png", "Cache-Control": "max-age=3600", "ETag": withKey ? "\"keyed\"" : "\"anonymous\""],
                body: withKey ? keyed : anonymous)
        }
        let directory = try TemporaryDirectory()
        let url = server.url("/image.png")
        let json = PipelineHarness.json(
            inputs: [url],
            outputs: [
                #"{"name": "marked", "steps": [{"composite": {"image": "\#(url)"}}], "encode": {"format": "png"}, "path": "out/image.png"}"#
            ], extra: #""fetch": {"retries": 0, "headers": {"X-Api-Key": "key-123"}}"#)

        // When it is both the input and its overlay, through the cache (the overlay is fetched first)
        let (reports, summary) = try await PipelineHarness.run(json, in: directory)

        // Then the input is the answer to its own request, with the key, not the overlay's
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        #expect(try VipsImage.open(file: directory.path + "/out/image.png").size == ImageSize(width: 64, height: 32))
        #expect(server.requests(for: "/image.png").map { $0.headers["x-api-key"] ?? "-" }.sorted() == ["-", "key-123"])
    }
}
