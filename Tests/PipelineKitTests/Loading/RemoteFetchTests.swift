import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// HTTP inputs against a real server on loopback: requests are counted, not assumed.
@Suite struct RemoteFetchTests {
    static let photo: Data = (try? Fixtures.jpeg(try Fixtures.gradient(width: 200, height: 100))) ?? Data()

    /// A pipeline fetching `inputs`, writing one 50 px JPEG per input, caching in the test's folder.
    func json(_ inputs: [String], fetch: String = #"{"retries": 2}"#, cache: String = #"{"directory": "cache"}"#) -> String {
        PipelineHarness.json(
            inputs: inputs,
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 50}}], "encode": {"format": "jpeg"}, "path": "out/{dir}/{stem}.jpg"}"#
            ], extra: #""fetch": \#(fetch), "cache": \#(cache)"#)
    }

    func servePhoto(_ extraHeaders: [String: String] = [:]) throws -> TestHTTPServer {
        try TestHTTPServer { request, _ in
            let etag = "\"v1\""
            if request.headers["if-none-match"] == etag {
                return .init(status: 304, headers: ["ETag": etag])
            }
            return .init(status: 200, headers: ["ETag": etag, "Content-Type": "image/jpeg"].merging(extraHeaders) { $1 }, body: Self.photo)
        }
    }

    @Test func aURLIsFetchedDecodedAndWritten() async throws {
        let server = try servePhoto()
        let directory = try TemporaryDirectory()
        let (reports, summary) = try await PipelineHarness.run(json([server.url("/img/cat.jpg")]), in: directory)
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        #expect(reports[0].written.first?.path == directory.path + "/out/127.0.0.1_\(server.port)/img/cat.jpg")
        #expect(reports[0].written.first?.size == ImageSize(width: 50, height: 25))
        #expect(server.requests.count == 1)
        #expect(server.requests[0].headers["user-agent"] == "pipeline/\(PipelineKitInfo.version)")
    }

    /// Two servers on one host are two origins: {dir} keeps each one's port, so the same path on
    /// both is two files, and a default port is left out.
    @Test func twoOriginsOnOneHostWriteToTwoFolders() async throws {
        let first = try servePhoto()
        let second = try servePhoto()
        let directory = try TemporaryDirectory()
        let (reports, summary) = try await PipelineHarness.run(
            json([first.url("/img/cat.jpg"), second.url("/img/cat.jpg")]), in: directory)
        #expect(summary.succeeded == 2, "\(reports.flatMap(\.failures))")
        #expect(
            directory.allFiles().filter { $0.hasPrefix("out/") }.sorted()
                == ["out/127.0.0.1_\(first.port)/img/cat.jpg", "out/127.0.0.1_\(second.port)/img/cat.jpg"].sorted())
        #expect(first.requests.count == 1 && second.requests.count == 1)

        #expect(InputFile(url: "http://example.com:80/a/b.jpg").subfolder == "example.com/a")
        #expect(InputFile(url: "https://example.com:443/b.jpg").subfolder == "example.com")
        #expect(InputFile(url: "https://example.com:80/b.jpg").subfolder == "example.com_80")
        #expect(InputFile(url: "http://example.com:8443/b.jpg").subfolder == "example.com_8443")
    }

    @Test func aPathSegmentWhoseEscapesAreNotUTF8KeepsThemAsItsName() {
        // A Latin-1 name, as older sites write them, beside a UTF-8 one
        let latin = InputFile(url: "http://example.com/photos/2019/caf%E9.jpg")
        #expect(latin.fileName == "caf%E9.jpg" && latin.subfolder == "example.com/photos/2019")
        let utf8 = InputFile(url: "http://example.com/photos/caf%C3%A9.jpg")
        #expect(utf8.fileName == "café.jpg" && utf8.subfolder == "example.com/photos")
    }

    @Test func aSourceListedSeveralTimesIsFetchedOnceAndServesEveryListing() async throws {
        let server = try servePhoto()
        let directory = try TemporaryDirectory()
        let url = server.url("/a.jpg")
        // Written the same way four times (one input), and once with its scheme in capitals
        // (a listing of its own, served by the same fetch)
        let shouted = url.replacingOccurrences(of: "http://", with: "HTTP://")
        try directory.write(Data("# photos\n\n\(url)\n  \(url)  \n".utf8), to: "urls.txt")
        let text = json([url, url, shouted]).replacingOccurrences(of: "\"inputs\": [", with: #""inputs": [{"list": "urls.txt"}, "#)
        let (reports, summary) = try await PipelineHarness.run(text, in: directory)
        #expect(summary.inputs == 2)
        #expect(summary.succeeded == 2)
        #expect(reports.map(\.input.displayName).sorted() == [shouted, url].sorted())
        #expect(server.requests(for: "/a.jpg").count == 1)
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == ["out/127.0.0.1_\(server.port)/a.jpg"])
    }

    /// A scheme and host name the server in any case: written two ways they are one source, and
    /// one folder, not two that clash on a case-insensitive disk; the path keeps its case.
    @Test func aURLsSchemeAndHostAreOneSourceInAnyCase() async throws {
        let server = try servePhoto()
        let directory = try TemporaryDirectory()
        let url = server.url("/Photos/a.jpg")
        let shouted = url.replacingOccurrences(of: "http://", with: "HTTP://")
        let (reports, summary) = try await PipelineHarness.run(json([url, shouted]), in: directory)
        #expect(summary.succeeded == 2, "\(reports.flatMap(\.failures))")
        #expect(server.requests.map(\.path) == ["/Photos/a.jpg"])
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") } == ["out/127.0.0.1_\(server.port)/Photos/a.jpg"])
        #expect(InputFile(url: "https://user:Secret@Example.COM/A.jpg").subfolder == "example.com")
        #expect(
            RunPlan.SourceKey.caseless("HTTPS://Us:Er@WWW.Example.com:8080/A/B.jpg?Q=1") == "https://Us:Er@www.example.com:8080/A/B.jpg?Q=1"
        )
        #expect(RunPlan.SourceKey.caseless("s3://Bucket/Key.JPG") == "s3://bucket/Key.JPG")
    }

    @Test func aSecondRunRevalidatesWithAConditionalRequest() async throws {
        let server = try servePhoto()
        let directory = try TemporaryDirectory()
        let text = json([server.url("/p.jpg")])
        _ = try await PipelineHarness.run(text, in: directory)
        try FileManager.default.removeItem(atPath: directory.path + "/out")
        let (_, summary) = try await PipelineHarness.run(text, in: directory)
        #expect(summary.succeeded == 1)
        let requests = server.requests(for: "/p.jpg")
        #expect(requests.count == 2)
        #expect(requests[0].headers["if-none-match"] == nil)
        #expect(requests[1].headers["if-none-match"] == "\"v1\"")
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/127.0.0.1_\(server.port)/p.jpg"))
    }

    /// With an ETag, the ETag alone is asked: an origin that answers `If-Modified-Since` first
    /// took bytes replaced within the second of the copy for the copy (as moto's S3 does).
    @Test func aConditionalRequestAsksByETagAloneWhenThereIsOne() async throws {
        let version = Locked(1)
        let lastModified = "Wed, 02 Dec 2026 10:00:00 GMT"
        let server = try TestHTTPServer { request, _ in
            // The second-granular clock answers first, as such an origin does
            if request.headers["if-modified-since"] == lastModified { return .init(status: 304) }
            let etag = "\"v\(version.withLock { $0 })\""
            if request.headers["if-none-match"] == etag { return .init(status: 304, headers: ["ETag": etag]) }
            let wider = (try? Fixtures.jpeg(try Fixtures.gradient(width: 300, height: 100))) ?? Data()
            let photo = version.withLock { $0 } == 1 ? Self.photo : wider
            return .init(status: 200, headers: ["ETag": etag, "Last-Modified": lastModified, "Content-Type": "image/jpeg"], body: photo)
        }
        let directory = try TemporaryDirectory()
        let text = json([server.url("/p.jpg")])
        _ = try await PipelineHarness.run(text, in: directory)
        // The bytes are replaced within the same second
        version.withLock { $0 = 2 }
        let (reports, _) = try await PipelineHarness.run(text, in: directory)
        #expect(reports.first?.written.first?.size == ImageSize(width: 50, height: 17), "\(reports.flatMap(\.written))")
        let requests = server.requests(for: "/p.jpg")
        #expect(requests.count == 2)
        #expect(requests[1].headers["if-none-match"] == "\"v1\"" && requests[1].headers["if-modified-since"] == nil)
    }

    /// A server that sends no ETag, Last-Modified or max-age is asked each run, and its outputs
    /// are made again only when its bytes changed.
    @Test func aResponseWithoutValidatorsIsVersionedByItsBytes() async throws {
        let body = Locked(Self.photo)
        let server = try TestHTTPServer { _, _ in .init(status: 200, body: body.withLock { $0 }) }
        let directory = try TemporaryDirectory()
        let text = json([server.url("/plain.jpg")])
        #expect(try await PipelineHarness.run(text, in: directory).summary.outputsWritten == 1)
        let again = try await PipelineHarness.run(text, in: directory).summary
        #expect(again.outputsUpToDate == 1 && again.outputsWritten == 0, "\(again)")
        let other = try Fixtures.jpeg(try Fixtures.redCorner(width: 200, height: 100))
        body.withLock { $0 = other }
        #expect(try await PipelineHarness.run(text, in: directory).summary.outputsWritten == 1)
        #expect(server.requests(for: "/plain.jpg").count == 3)
    }

    /// A body sent gzipped (`Content-Encoding: gzip`, as a bucket serves an object stored so) is
    /// the image once decoded; it failed as "not an image libvips can read".
    @Test func aGzippedBodyIsDecoded() async throws {
        let server = try TestHTTPServer { _, _ in
            .init(status: 200, headers: ["ETag": "\"z\"", "Content-Encoding": "gzip"], body: Self.gzipStored(Self.photo))
        }
        let directory = try TemporaryDirectory()
        let (reports, summary) = try await PipelineHarness.run(json([server.url("/zipped.jpg")]), in: directory)
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
    }

    /// `data` as a gzip file of stored (uncompressed) DEFLATE blocks: what a gzip reader takes,
    /// written without a compressor.
    static func gzipStored(_ data: Data) -> Data {
        var bytes: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        let body = [UInt8](data)
        var offset = 0
        repeat {
            let count = min(65535, body.count - offset)
            let final: UInt8 = offset + count == body.count ? 1 : 0
            bytes += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            bytes += body[offset..<offset + count]
            offset += count
        } while offset < body.count
        let littleEndian = { (value: UInt32) in (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        return Data(bytes + littleEndian(HostileFixtures.crc32(body)) + littleEndian(UInt32(truncatingIfNeeded: body.count)))
    }

    /// A copy in the cache is held to `fetch.maxBytes` as a download is, lowered since or not.
    @Test func aCachedCopyOverMaxBytesFailsAsItsDownloadWould() async throws {
        let server = try servePhoto(["Cache-Control": "max-age=600"])
        let directory = try TemporaryDirectory()
        #expect(try await PipelineHarness.run(json([server.url("/p.jpg")]), in: directory).summary.succeeded == 1)
        let (reports, summary) = try await PipelineHarness.run(
            json([server.url("/p.jpg")], fetch: #"{"maxBytes": 1000}"#), in: directory)
        #expect(summary.failed == 1 && server.requests.count == 1)
        let failure = try #require(reports.flatMap(\.failures).first)
        #expect(failure.stage == .fetch && failure.reason.contains("more than fetch.maxBytes (1000 bytes)"), "\(failure.reason)")
    }

    @Test func maxAgeServesFromTheCacheWithoutAsking() async throws {
        let server = try servePhoto(["Cache-Control": "public, max-age=3600"])
        let directory = try TemporaryDirectory()
        let text = json([server.url("/fresh.jpg")])
        _ = try await PipelineHarness.run(text, in: directory)
        try FileManager.default.removeItem(atPath: directory.path + "/out")
        let (_, summary) = try await PipelineHarness.run(text, in: directory)
        #expect(summary.succeeded == 1)
        #expect(server.requests(for: "/fresh.jpg").count == 1)
    }

    @Test func noStoreIsNotCached() async throws {
        let server = try servePhoto(["Cache-Control": "no-store"])
        let directory = try TemporaryDirectory()
        let text = json([server.url("/secret.jpg")])
        _ = try await PipelineHarness.run(text, in: directory)
        _ = try await PipelineHarness.run(text, in: directory)
        let requests = server.requests(for: "/secret.jpg")
        #expect(requests.count == 2)
        #expect(requests.allSatisfy { $0.headers["if-none-match"] == nil })
        #expect(DiskCache(directory: directory.url.appendingPathComponent("cache"), maxSize: 1 << 30).statistics().entries == 0)
    }

    /// Downloads wait on the network, not on the cores: a run of remote inputs lets the fetch
    /// lanes fill beside the compute stages. With one lane each for decompress, process and
    /// encode the window was 3, so four fetch lanes never had four downloads under way.
    @Test func aRemoteRunKeepsEveryFetchLaneBusy() async throws {
        let lanes = 4
        let underWay = Locked((now: 0, most: 0))
        let allUnderWay = DispatchSemaphore(value: 0)
        let server = try TestHTTPServer { _, _ in
            // Each answer waits until four requests are under way at once. The bound is long: on a
            // loaded machine (sanitized test processes side by side) a fourth download can start
            // seconds after the first, and an answer given before it would end the test's overlap.
            let reached = underWay.withLock { state -> Bool in
                state.now += 1
                state.most = max(state.most, state.now)
                return state.now == lanes
            }
            if reached { for _ in 0..<lanes { allUnderWay.signal() } }
            _ = allUnderWay.wait(timeout: .now() + 60)
            underWay.withLock { $0.now -= 1 }
            return .init(status: 200, headers: ["Content-Type": "image/jpeg"], body: Self.photo)
        }
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        let urls = (0..<lanes).map { server.url("/lanes/\($0).jpg") }
        let json = PipelineHarness.json(
            inputs: urls,
            outputs: [
                #"{"name": "t", "steps": [{"resize": {"width": 50}}], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ],
            extra:
                #""fetch": {"concurrency": \#(lanes)}, "cache": {"enabled": false}, "decompress": {"concurrency": 1}, "process": {"concurrency": 1}, "encode": {"concurrency": 1}"#
        )
        let pipeline = try PipelineHarness.pipeline(json, in: directory)
        #expect(pipeline.definition.inFlight == 3 && pipeline.definition.inFlight(fetchingRemoteInputs: true) == 3 + lanes)
        let (_, summary) = try await PipelineHarness.run(json, in: directory)
        #expect(summary.succeeded == lanes)
        #expect(underWay.withLock { $0.most } == lanes, "downloads under way at once")
    }

    @Test func connectionsAreReusedAcrossTransfers() async throws {
        let server = try servePhoto()
        let directory = try TemporaryDirectory()
        let urls = (0..<12).map { server.url("/many/\($0).jpg") }
        let (_, summary) = try await PipelineHarness.run(json(urls, fetch: #"{"concurrency": 2}"#), in: directory)
        #expect(summary.succeeded == 12)
        #expect(server.requests.count == 12)
        #expect(server.connections <= 4)
    }

    @Test func aURLWhosePathWouldEscapeTheOutputFolderIsRefusedWithoutFetching() async throws {
        let server = try servePhoto()
        let directory = try TemporaryDirectory()
        let (reports, summary) = try await PipelineHarness.run(json([server.url("/a/%2e%2e/%2e%2e/%2e%2e/etc/x.jpg")]), in: directory)
        #expect(summary.failed == 1)
        #expect(reports[0].failures.first?.reason.contains("would leave the output folder") == true)
        #expect(server.requests.isEmpty)
    }

    @Test func anEmbeddingProgramMaySupplyItsOwnLoaderAndCache() async throws {
        struct StaticLoader: DataLoading {
            func load(_ request: DataRequest, isCancelled: @escaping @Sendable () -> Bool) throws(FetchError) -> DataResponse {
                DataResponse(status: 200, body: RemoteFetchTests.photo, headers: ["etag": "\"s\""])
            }
        }
        final class MemoryCache: DataCaching {
            private let entries = Locked<[String: CachedResponse]>([:])
            func cachedResponse(for url: String) -> CachedResponse? { entries.withLock { $0[url] } }
            func store(_ response: CachedResponse) { entries.withLock { $0[response.url] = response } }
            var count: Int { entries.withLock { $0.count } }
        }
        let directory = try TemporaryDirectory()
        let cache = MemoryCache()
        let pipeline = try PipelineHarness.pipeline(json(["https://images.invalid/x.jpg"]), in: directory)
        let result = try await pipeline.run(dataLoader: StaticLoader(), cache: cache).collect()
        #expect(result.summary?.succeeded == 1)
        #expect(cache.count == 1)
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/images.invalid/x.jpg"))
    }

    @Test func otherSchemesAreRejectedInThePipelineFile() throws {
        let directory = try TemporaryDirectory()
        #expect {
            try PipelineHarness.pipeline(json(["ftp://example.org/a.jpg"]), in: directory)
        } throws: { error in
            (error as? PipelineFileError)?.problems.first?.message.contains("only http and https") == true
        }
    }
}
