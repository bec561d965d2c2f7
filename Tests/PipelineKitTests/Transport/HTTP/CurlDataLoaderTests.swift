import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

/// libcurl as the loader finds it: every option it sets is checked, and a request this libcurl
/// cannot make as asked fails before anything is sent, against a real server on loopback.
@Suite struct CurlDataLoaderTests {
    func server() throws -> TestHTTPServer {
        try TestHTTPServer { _, _ in .init(status: 200, headers: ["Content-Type": "text/plain"], body: Data("ok".utf8)) }
    }

    /// The error `loader` throws for `request`, or nil when it loads.
    func failure(_ loader: CurlDataLoader, _ request: DataRequest) -> FetchError? {
        do {
            _ = try loader.load(request, isCancelled: { false })
            return nil
        } catch {
            return error
        }
    }

    /// This libcurl, read from curl_version_info, as the loader sees it.
    @Test func thisLibcurlSpeaksWhatPipelineNeeds() throws {
        let support = LibcurlSupport.current
        #expect(support.startProblem == nil)
        #expect(support.protocols.isSuperset(of: ["http", "https"]), "\(support.protocols.sorted())")
        #expect(support.signsAWSRequests, "libcurl \(support.version)")
        #expect(support.refusal(scheme: "https", signed: true) == nil)

        let server = try server()
        let response = try CurlDataLoader().load(DataRequest(url: server.url("/a"), maxBytes: 100), isCancelled: { false })
        #expect(response.status == 200 && response.body == Data("ok".utf8))
    }

    /// libcurl refuses a string option longer than its input limit: a real refusal by
    /// curl_easy_setopt. Unchecked, the request went out without the User-Agent it was given.
    @Test func anOptionLibcurlRefusesStopsTheRequestAndIsNamed() throws {
        let server = try server()
        let loader = CurlDataLoader(settings: .init(userAgent: String(repeating: "a", count: 9_000_000)))
        let error = try #require(failure(loader, DataRequest(url: server.url("/a"), maxBytes: 100)))
        #expect(error.kind == .invalidRequest)
        #expect(error.message.contains("refused CURLOPT_USERAGENT") && error.message.contains("not sent"), "\(error.message)")
        #expect(server.requests.isEmpty)

        // The handle goes back to the pool reset: the next request is made as asked.
        let sane = CurlDataLoader(settings: .init(userAgent: "pipeline-test"))
        #expect(failure(sane, DataRequest(url: server.url("/b"), maxBytes: 100)) == nil)
        #expect(server.requests.map { $0.headers["user-agent"] } == ["pipeline-test"])
    }

    @Test func aProtocolThisLibcurlLacksFailsBeforeAnyRequest() throws {
        let server = try server()
        let current = LibcurlSupport.current
        let withoutHTTP = LibcurlSupport(
            version: current.version, protocols: current.protocols.subtracting(["http"]),
            signsAWSRequests: true, startProblem: nil)
        let loader = CurlDataLoader(settings: .init(), support: withoutHTTP)
        let error = try #require(failure(loader, DataRequest(url: server.url("/a"), maxBytes: 100)))
        #expect(error.kind == .invalidRequest)
        #expect(error.message.contains("does not speak http,") && error.message.contains(current.version), "\(error.message)")
        #expect(server.requests.isEmpty)
    }

    /// Without CURLOPT_AWS_SIGV4 an S3 request would go out unsigned.
    @Test func aSignedRequestWithoutSigV4FailsBeforeAnyRequest() throws {
        let server = try server()
        let current = LibcurlSupport.current
        let withoutSigning = LibcurlSupport(
            version: current.version, protocols: current.protocols, signsAWSRequests: false,
            startProblem: nil)
        let loader = CurlDataLoader(settings: .init(), support: withoutSigning)
        var request = DataRequest(url: server.url("/bucket/key"), maxBytes: 100)
        request.signing = AWSSigning(credentials: AWSCredentials(accessKeyID: "AKID", secretAccessKey: "secret"), region: "us-east-1")
        let error = try #require(failure(loader, request))
        #expect(error.message.contains("CURLOPT_AWS_SIGV4") && error.message.contains("not sent unsigned"), "\(error.message)")
        #expect(server.requests.isEmpty)

        // Unsigned requests still go.
        #expect(failure(loader, DataRequest(url: server.url("/a"), maxBytes: 100)) == nil)
        #expect(server.requests.count == 1)
    }

    /// In a run, the refusal is the input's failure in the fetch stage, and nothing reaches the server.
    @Test func aRunNamesTheInputAndTheFetchStage() async throws {
        let server = try server()
        let directory = try TemporaryDirectory()
        let current = LibcurlSupport.current
        let loader = CurlDataLoader(
            settings: .init(),
            support: LibcurlSupport(
                version: current.version, protocols: ["https"], signsAWSRequests: true, startProblem: nil))
        let url = server.url("/photo.jpg")
        let json = PipelineHarness.json(
            inputs: [url],
            outputs: [
                #"{"name": "t", "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
            ], extra: #""fetch": {"retries": 0}, "cache": {"enabled": false}"#)
        let result = try await PipelineHarness.pipeline(json, in: directory).run(dataLoader: loader).collect()
        let failure = try #require(result.reports.first?.failures.first)
        #expect(failure.input == url)
        #expect(failure.error.stage == .fetch)
        #expect(failure.error.description.contains("does not speak http"), "\(failure.error)")
        #expect(server.requests.isEmpty)
    }
}
