import Foundation
import StandardProcessors
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// `s3://` inputs and outputs against a real S3-compatible server (moto) that checks every
/// signature: what the server holds is read back, not assumed.
@Suite(.enabled(if: MotoServer.isAvailable, "moto's server is not installed (.ci/setup installs moto[server])"))
struct S3StorageTests {
    static let photo: Data = (try? Fixtures.jpeg(try Fixtures.gradient(width: 200, height: 100))) ?? Data()

    /// A pipeline reading `inputs` and writing one 50 px wide output per input to `outputPath`.
    func pipeline(
        _ inputs: [String], outputPath: String, format: String = "webp", outputExtra: String = "",
        in directory: TemporaryDirectory, environment: [String: String]
    ) throws -> Pipeline {
        let output =
            #"{"name": "small", "steps": [{"resize": {"width": 50}}], "encode": {"format": "\#(format)"}, "path": "\#(outputPath)"\#(outputExtra)}"#
        var pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(
                inputs: inputs, outputs: [output],
                extra: #""cache": {"directory": "cache"}"#), in: directory)
        pipeline.environment = environment
        return pipeline
    }

    func run(_ pipeline: Pipeline, loader: (any DataLoading)? = nil) async throws -> (reports: [ItemReport], summary: RunSummary) {
        let result = try await pipeline.run(dataLoader: loader).collect()
        let summary = try #require(result.summary)
        return (result.reports, summary)
    }

    /// A server whose bucket "photos" holds the photo at `key`, with an empty bucket "site"; a
    /// folder; and the environment that reaches the server from it.
    func photoServer(key: String) throws -> (server: MotoServer, directory: TemporaryDirectory, environment: [String: String]) {
        let server = try MotoServer()
        try server.createBucket("photos")
        try server.createBucket("site")
        try server.put(Self.photo, bucket: "photos", key: key)
        let directory = try TemporaryDirectory()
        return (server, directory, server.environment(home: directory.path))
    }

    @Test func aGlobOverMoreThanAThousandKeysListsEveryPage() async throws {
        let server = try MotoServer()
        try server.createBucket("many")
        // 1,050 matching keys in two folders, and keys the glob must not match.
        var objects = (0..<1050).map {
            (key: "shots/\($0 % 2 == 0 ? "even" : "odd")/\(String(format: "%04d", $0)).jpg", data: Data([UInt8($0 % 256)]))
        }
        objects += (0..<30).map { (key: "shots/even/notes-\($0).txt", data: Data("x".utf8)) }
        objects += [(key: "other/0001.jpg", data: Data([1])), (key: "shots/.hidden/0001.jpg", data: Data([1]))]
        try server.putMany(objects, bucket: "many")
        let directory = try TemporaryDirectory()

        let plan = try pipeline(
            ["s3://many/shots/**/*.jpg"], outputPath: "out/{dir}/{stem}.webp", in: directory,
            environment: server.environment(home: directory.path)
        ).plan()

        #expect(plan.inputCount == 1050)
        let inputs = plan.items.map(\.input)
        #expect(inputs.first?.path == "s3://many/shots/even/0000.jpg")
        #expect(inputs.first?.subfolder == "even")
        #expect(inputs.allSatisfy { $0.listedVersion?.hasPrefix("etag:s3://many/") == true })
        #expect(plan.items.first?.listings.first?.targets.first?.plannedPath == directory.path + "/out/even/0000.webp")
    }

    @Test func aGlobMatchedWhateverTheCaseListsByItsFoldersAlone() throws {
        let server = try MotoServer()
        try server.createBucket("shots")
        try server.putMany([(key: "in/IMG_1.jpg", data: Data([1])), (key: "in/img_2.jpg", data: Data([2]))], bucket: "shots")
        let directory = try TemporaryDirectory()
        var pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(
                inputs: ["s3://shots/in/IMG_*.jpg"], outputs: [#"{"name": "t", "encode": {"format": "webp"}, "path": "out/{stem}.webp"}"#],
                extra: #""caseInsensitive": true"#), in: directory)
        pipeline.environment = server.environment(home: directory.path)
        #expect(try pipeline.plan().items.map(\.input.path) == ["s3://shots/in/IMG_1.jpg", "s3://shots/in/img_2.jpg"])
    }

    @Test func outputsAreWrittenToS3AndReadBackAsImagesOfTheRightSize() async throws {
        let server = try MotoServer()
        try server.createBucket("photos")
        try server.createBucket("site")
        try server.putMany([(key: "in/a.jpg", data: Self.photo), (key: "in/sub/b.jpg", data: Self.photo)], bucket: "photos")
        let directory = try TemporaryDirectory()
        let pipeline = try pipeline(
            ["s3://photos/in/**/*.jpg"], outputPath: "s3://site/thumbs/{dir}/{stem}.webp",
            outputExtra: #", "cacheControl": "public, max-age=60", "metadata": {"owner": "catalogue"}"#,
            in: directory, environment: server.environment(home: directory.path))

        let (reports, summary) = try await run(pipeline)

        #expect(summary.succeeded == 2, "\(reports.flatMap(\.failures))")
        #expect(Set(reports.flatMap(\.written).map(\.path)) == ["s3://site/thumbs/a.webp", "s3://site/thumbs/sub/b.webp"])
        for key in ["thumbs/a.webp", "thumbs/sub/b.webp"] {
            let object = try #require(try server.get(bucket: "site", key: key))
            let image = try VipsImage.open(data: object.body)
            #expect(image.size == ImageSize(width: 50, height: 25))
            #expect(object.headers["content-type"] == "image/webp")
            #expect(object.headers["cache-control"] == "public, max-age=60")
            #expect(object.headers["x-amz-meta-owner"] == "catalogue")
            #expect(object.headers["x-amz-meta-pipeline-fingerprint"]?.isEmpty == false)
        }
        // Nothing was written locally but the cache and journal.
        #expect(!directory.allFiles().contains { $0.hasSuffix(".webp") })
    }

    @Test func anInputGlobThatWouldTakeInTheRunsOwnObjectsIsRefusedBeforeTheFirstRun() async throws {
        let (server, directory, environment) = try photoServer(key: "in/a.jpg")
        // Given outputs written below the folder an input glob lists: the next run would list
        // them as inputs, and refuse to write over them
        #expect {
            try self.pipeline(
                ["s3://photos/in/**/*.jpg"], outputPath: "s3://photos/in/small/{stem}.jpg", format: "jpeg", in: directory,
                environment: environment
            ).plan()
        } throws: { error in
            "\(error)".contains(#"inputs[0]: "s3://photos/in/**/*.jpg" takes in what output "small" writes (s3://photos/in/small/a.jpg)"#)
        }
        #expect(try server.get(bucket: "photos", key: "in/small/a.jpg") == nil)
        // A glob that does not reach them plans, and a second run finds the object up to date
        let narrow = try pipeline(
            ["s3://photos/in/*.jpg"], outputPath: "s3://photos/in/small/{stem}.jpg", format: "jpeg", in: directory,
            environment: environment)
        #expect(try await run(narrow).summary.outputsWritten == 1)
        #expect(try await run(narrow).summary.outputsUpToDate == 1)
        // And so is such a glob on a line of a list file
        try directory.write(Data("# the photos\ns3://photos/in/**/*.jpg\n".utf8), to: "list.txt")
        var listed = try PipelineHarness.pipeline(
            #"{"version": 1, "inputs": [{"list": "list.txt"}], "cache": {"directory": "cache"}, "outputs": [{"name": "small", "#
                + #""steps": [{"resize": {"width": 50}}], "encode": {"format": "jpeg"}, "path": "s3://photos/in/small/{stem}.jpg"}]}"#,
            in: directory)
        listed.environment = environment
        #expect {
            try listed.plan()
        } throws: { error in
            "\(error)".contains(#"inputs[0].list: "s3://photos/in/**/*.jpg" takes in what output "small" writes"#)
        }
    }

    @Test func missingAndForbiddenObjectsFailPerItemNamingBucketKeyAndS3sCode() async throws {
        let server = try MotoServer()
        try server.createBucket("photos")
        try server.putMany([(key: "public/a.jpg", data: Self.photo), (key: "private/b.jpg", data: Self.photo)], bucket: "photos")
        let directory = try TemporaryDirectory()
        let pipeline = try pipeline(
            ["s3://photos/public/a.jpg", "s3://photos/public/missing.jpg", "s3://photos/private/b.jpg"],
            outputPath: "out/{stem}.webp", in: directory, environment: server.environment(home: directory.path))

        let (reports, summary) = try await run(pipeline)

        #expect(summary.succeeded == 1)
        #expect(summary.failed == 2)
        let failures = Dictionary(uniqueKeysWithValues: reports.flatMap(\.failures).map { ($0.input, $0) })
        let missing = try #require(failures["s3://photos/public/missing.jpg"])
        #expect(missing.stage == .fetch)
        #expect((missing.error.underlyingError as? S3Error)?.code == "NoSuchKey")
        #expect(missing.reason.contains("NoSuchKey"))
        #expect(missing.reason.contains(#"bucket "photos""#) && missing.reason.contains(#"key "public/missing.jpg""#))
        let forbidden = try #require(failures["s3://photos/private/b.jpg"])
        #expect(forbidden.stage == .fetch)
        #expect((forbidden.error.underlyingError as? S3Error)?.code == "AccessDenied")
        #expect(forbidden.reason.contains("AccessDenied") && forbidden.reason.contains(#"key "private/b.jpg""#))
        #expect(FileManager.default.fileExists(atPath: directory.path + "/out/a.webp"))
    }

    @Test func aWrongSecretIsRefusedAndNeverShown() async throws {
        let server = try MotoServer()
        try server.createBucket("photos")
        try server.put(Self.photo, bucket: "photos", key: "a.jpg")
        let directory = try TemporaryDirectory()
        let wrong = AWSCredentials(accessKeyID: server.credentials.accessKeyID, secretAccessKey: "not-the-secret-0123456789")
        let pipeline = try pipeline(
            ["s3://photos/a.jpg"], outputPath: "out/{stem}.webp", in: directory,
            environment: server.environment(home: directory.path, credentials: wrong))

        let (reports, summary) = try await run(pipeline)

        #expect(summary.failed == 1)
        let failure = try #require(reports.first?.failures.first)
        #expect((failure.error.underlyingError as? S3Error)?.code == "SignatureDoesNotMatch")
        #expect(!failure.reason.contains("not-the-secret"))
        #expect(!"\(failure.error)".contains("not-the-secret"))
    }

    @Test func aSecondRunFetchesNothingAndWritesNothingEvenOnAnotherMachine() async throws {
        let server = try MotoServer()
        try server.createBucket("photos")
        try server.createBucket("site")
        try server.putMany([(key: "in/a.jpg", data: Self.photo), (key: "in/b.jpg", data: Self.photo)], bucket: "photos")
        let first = try TemporaryDirectory()
        let made = try await run(
            try pipeline(
                ["s3://photos/in/*.jpg"], outputPath: "s3://site/t/{stem}.webp", in: first,
                environment: server.environment(home: first.path)))
        #expect(made.summary.outputsWritten == 2, "\(made.reports.flatMap(\.failures))")

        // Another folder: no shared cache or journal, only the bucket.
        let second = try TemporaryDirectory()
        let counter = CountingLoader(CurlDataLoader())
        let again = try await run(
            try pipeline(
                ["s3://photos/in/*.jpg"], outputPath: "s3://site/t/{stem}.webp", in: second,
                environment: server.environment(home: second.path)), loader: counter)

        #expect(again.summary.outputsWritten == 0)
        #expect(again.summary.outputsUpToDate == 2)
        #expect(again.reports.flatMap(\.written).allSatisfy { $0.upToDate && $0.size == ImageSize(width: 50, height: 25) })
        // One listing, one HEAD of the outputs' bucket and one per output; no object fetched, none written.
        #expect(counter.requests.filter { $0.method == "GET" && !$0.url.contains("list-type=2") }.isEmpty)
        #expect(counter.requests.filter { $0.method == "PUT" }.isEmpty)
        #expect(counter.requests.filter { $0.method == "HEAD" && $0.url.hasSuffix("/site/") }.count == 1)
        #expect(counter.requests.filter { $0.method == "HEAD" && !$0.url.hasSuffix("/") }.count == 2)

        // A changed input is made again.
        try server.put(try Fixtures.jpeg(try Fixtures.gradient(width: 100, height: 100)), bucket: "photos", key: "in/b.jpg")
        let changed = try await run(
            try pipeline(
                ["s3://photos/in/*.jpg"], outputPath: "s3://site/t/{stem}.webp", in: second,
                environment: server.environment(home: second.path)))
        #expect(changed.summary.outputsWritten == 1)
        #expect(changed.summary.outputsUpToDate == 1)
    }

    @Test func changingAnObjectsHeadersMakesItAgainAndOnlyThen() async throws {
        let (server, directory, environment) = try photoServer(key: "in/a.jpg")
        func run(_ extra: String) async throws -> RunSummary {
            let pipeline = try pipeline(
                ["s3://photos/in/a.jpg"], outputPath: "s3://site/t/{stem}.webp", outputExtra: extra, in: directory,
                environment: environment)
            return try await self.run(pipeline).summary
        }
        #expect(try await run("").outputsWritten == 1)
        // Given the object made without headers: a file that adds none leaves it up to date
        #expect(try await run("").outputsUpToDate == 1)

        // When the file gives a Cache-Control, then changes it, then adds metadata
        for (extra, cacheControl, owner) in [
            (#", "cacheControl": "max-age=60""#, "max-age=60", nil),
            (#", "cacheControl": "max-age=3600""#, "max-age=3600", nil),
            (#", "cacheControl": "max-age=3600", "metadata": {"owner": "catalogue"}"#, "max-age=3600", "catalogue"),
        ] {
            // Then each change makes the object again, with its headers, and a second run keeps it
            #expect(try await run(extra).outputsWritten == 1, "\(extra)")
            let object = try #require(try server.get(bucket: "site", key: "t/a.webp"))
            #expect(object.headers["cache-control"] == cacheControl)
            #expect(object.headers["x-amz-meta-owner"] == owner)
            #expect(try await run(extra).outputsUpToDate == 1, "\(extra)")
        }
    }

    @Test func anUploadTheCancelCutsOffLeavesTheInputNotRunRatherThanFailed() async throws {
        // Given one input made into two objects, the second's upload held until the run is cancelled
        let (server, directory, environment) = try photoServer(key: "in/a.jpg")
        let outputs = ["small", "large"].enumerated().map { index, name in
            #"{"name": "\#(name)", "steps": [{"resize": {"width": \#(50 * (index + 1))}}], "encode": {"format": "png"}, "path": "s3://site/\#(name)/{stem}.png"}"#
        }
        var pipeline = try PipelineHarness.pipeline(
            PipelineHarness.json(inputs: ["s3://photos/in/a.jpg"], outputs: outputs, extra: #""encode": {"concurrency": 1}"#), in: directory
        )
        pipeline.environment = environment
        let loader = HoldingSecondUpload(CurlDataLoader())
        let run = try pipeline.run(dataLoader: loader)
        let stopper = Task {
            for _ in 0..<1500 where !loader.isHolding { try? await Task.sleep(for: .milliseconds(20)) }
            run.cancel()
        }
        // When the run is cancelled during that upload
        var summary: RunSummary?
        for await event in run { if case .finished(let final) = event { summary = final } }
        await stopper.value

        // Then the input is not run, not failed, and the object made is counted as written
        let final = try #require(summary)
        #expect(loader.isHolding)
        #expect(final.cancelled)
        #expect((final.succeeded, final.failed, final.notRun) == (0, 0, 1))
        #expect(final.partlyMade.count == 1)
        #expect(
            try final.partlyMade.allSatisfy { try server.get(bucket: "site", key: String($0.path.dropFirst("s3://site/".count))) != nil })
    }

    @Test func aSingleObjectIsCachedAndRevalidatedWithItsETag() async throws {
        let server = try MotoServer()
        try server.createBucket("photos")
        try server.put(Self.photo, bucket: "photos", key: "a.jpg")
        let directory = try TemporaryDirectory()
        let environment = server.environment(home: directory.path)
        _ = try await run(try pipeline(["s3://photos/a.jpg"], outputPath: "out/{stem}.webp", in: directory, environment: environment))
        try FileManager.default.removeItem(atPath: directory.path + "/out/a.webp")

        let counter = CountingLoader(CurlDataLoader())
        let again = try await run(
            try pipeline(["s3://photos/a.jpg"], outputPath: "out/{stem}.webp", in: directory, environment: environment),
            loader: counter)

        #expect(again.summary.outputsWritten == 1, "\(again.reports.flatMap(\.failures))")
        let gets = counter.requests.filter { $0.method == "GET" }
        #expect(gets.count == 1)
        #expect(gets.first?.headers["If-None-Match"]?.hasPrefix("\"") == true)
    }

    @Test func anObjectOverMaxBytesFailsAsTooLarge() async throws {
        let server = try MotoServer()
        try server.createBucket("photos")
        try server.put(Self.photo, bucket: "photos", key: "a.jpg")
        let directory = try TemporaryDirectory()
        let json = PipelineHarness.json(
            inputs: ["s3://photos/a.jpg"],
            outputs: [
                #"{"name": "small", "encode": {"format": "png"}, "path": "out/{stem}.png"}"#
            ], extra: #""fetch": {"maxBytes": 100}, "cache": {"enabled": false}"#)
        var pipeline = try PipelineHarness.pipeline(json, in: directory)
        pipeline.environment = server.environment(home: directory.path)

        let (reports, _) = try await run(pipeline)

        let failure = try #require(reports.first?.failures.first)
        #expect(failure.error.kind == .tooLarge)
        #expect(failure.reason.contains(#"key "a.jpg""#))
    }
}

/// Counts the requests a run makes, passing them to a real loader.
final class CountingLoader: DataLoading {
    private let loader: any DataLoading
    private let log = Locked<[DataRequest]>([])

    init(_ loader: any DataLoading) { self.loader = loader }

    var requests: [DataRequest] { log.withLock { $0 } }

    func load(_ request: DataRequest, isCancelled: @escaping @Sendable () -> Bool) throws(FetchError) -> DataResponse {
        log.withLock { $0.append(request) }
        return try loader.load(request, isCancelled: isCancelled)
    }
}

/// Passes requests to a real loader, except the second upload, which it holds until the run
/// cancels it (at most 30 s), then ends as a cancelled transfer does.
final class HoldingSecondUpload: DataLoading {
    private let loader: any DataLoading
    private let puts = Locked(0)
    private let holding = Locked(false)

    init(_ loader: any DataLoading) { self.loader = loader }

    /// Whether the second upload has started and is being held.
    var isHolding: Bool { holding.withLock { $0 } }

    func load(_ request: DataRequest, isCancelled: @escaping @Sendable () -> Bool) throws(FetchError) -> DataResponse {
        let second =
            request.method == "PUT"
            && puts.withLock { count in
                count += 1
                return count == 2
            }
        guard second else { return try loader.load(request, isCancelled: isCancelled) }
        holding.withLock { $0 = true }
        for _ in 0..<3000 where !isCancelled() { usleep(10_000) }
        throw FetchError(.cancelled, "cancelled")
    }
}
