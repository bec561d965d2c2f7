#if Server
import Foundation
import TestSupport
import Testing
import Vips

/// Two `pipeline serve` replicas of one pipeline file, each in a folder of its own (its own
/// journal), whose inputs and outputs are in S3 (moto's server, checking signatures): a file one
/// replica made is answered by the other from the bucket, without making it again.
@Suite(.serialized, .enabled(if: MotoServer.isAvailable, "moto's server is not installed (.ci/setup installs moto[server])"))
struct ServeReplicasTests {
    static let json = """
        {"version": 1, "inputs": ["s3://photos/in/*.jpg"],
         "outputs": [{"name": "thumb", "widths": [16, 24], "formats": ["avif", "webp"],
                      "path": "s3://site/thumb/{stem}-{width}.{format}"}]}
        """

    /// A replica: `pipeline serve` of the file in a folder of its own, with the bucket's
    /// credentials and the command's `options`.
    static func replica(of moto: MotoServer, serving json: String = json, options: [String] = []) throws -> (
        command: BackgroundCommand, port: Int, folder: TemporaryDirectory
    ) {
        let folder = try TemporaryDirectory()
        try folder.write(Data(json.utf8), to: "p.json")
        let (command, port) = try ServeCommandTests().serve(folder, options: options, environment: moto.environment(home: folder.path))
        return (command, port, folder)
    }

    /// moto's server with the bucket of inputs, holding one photo (`in/a.jpg`), and the bucket of outputs.
    static func bucketsWithOnePhoto() throws -> MotoServer {
        let moto = try MotoServer()
        try moto.createBucket("photos")
        try moto.createBucket("site")
        try moto.put(try Fixtures.jpeg(try Fixtures.gradient(width: 120, height: 80)), bucket: "photos", key: "in/a.jpg")
        return moto
    }

    /// moto's server with the bucket of inputs, holding one photo of noise (`in/big.jpg`) whose
    /// PNG (`fullSizePNG`) is several of the pieces a large object is sent in, and the bucket
    /// of outputs.
    static func bucketsWithOneLargePhoto() throws -> MotoServer {
        let moto = try MotoServer()
        try moto.createBucket("photos")
        try moto.createBucket("site")
        try moto.put(try Fixtures.jpeg(try Fixtures.noise(width: 2000, height: 1500)), bucket: "photos", key: "in/big.jpg")
        return moto
    }

    /// The inputs' full-size PNG, in the bucket of outputs.
    static let fullSizePNG = """
        {"version": 1, "inputs": ["s3://photos/in/*.jpg"],
         "outputs": [{"name": "full", "encode": {"format": "png"}, "path": "s3://site/full/{stem}.png"}]}
        """

    @Test func aFileOneReplicaMadeIsAnsweredByTheOtherFromTheBucket() async throws {
        // Given two replicas serving one bucket
        let moto = try Self.bucketsWithOnePhoto()
        let one = try Self.replica(of: moto)
        defer { one.command.kill() }
        let two = try Self.replica(of: moto)
        defer { two.command.kill() }
        let webp = ["Accept": "image/webp"]

        // When the first is asked for one file
        let made = try await LoopbackHTTPClient.request(port: one.port, target: "/thumb/a.jpg?width=16", headers: webp)
        #expect(made.status == 200, "\(String(decoding: made.body, as: UTF8.self))\n\(one.command.transcript)")
        #expect(made.header("X-Pipeline-Source") == "made")
        #expect(made.header("Content-Type") == "image/webp")
        #expect(try VipsImage.open(data: made.body).width == 16)
        // it is in the bucket, and no other file of the input is
        #expect(try moto.get(bucket: "site", key: "thumb/a-16.webp")?.body == made.body)
        #expect(try moto.get(bucket: "site", key: "thumb/a-16.avif") == nil)
        #expect(try moto.get(bucket: "site", key: "thumb/a-24.webp") == nil)

        // Then the second answers it from the bucket: the same bytes, the same ETag
        let stored = try await LoopbackHTTPClient.request(port: two.port, target: "/thumb/a.jpg?width=16", headers: webp)
        #expect(stored.status == 200, "\(String(decoding: stored.body, as: UTF8.self))\n\(two.command.transcript)")
        #expect(stored.header("X-Pipeline-Source") == "store")
        #expect(stored.body == made.body)
        let tag = try #require(made.header("ETag"))
        #expect(stored.header("ETag") == tag)
        let unchanged = try await LoopbackHTTPClient.request(
            port: two.port, target: "/thumb/a.jpg?width=16", headers: webp.merging(["If-None-Match": tag]) { $1 })
        #expect(unchanged.status == 304)

        // And what the second makes, the first finds
        let avif = ["Accept": "image/avif,image/webp"]
        let second = try await LoopbackHTTPClient.request(port: two.port, target: "/thumb/a.jpg?width=24", headers: avif)
        #expect(second.status == 200)
        #expect(second.header("X-Pipeline-Source") == "made")
        #expect(second.header("Content-Type") == "image/avif")
        let found = try await LoopbackHTTPClient.request(port: one.port, target: "/thumb/a.jpg?width=24", headers: avif)
        #expect(found.header("X-Pipeline-Source") == "store")
        #expect(found.body == second.body)

        // And another format of a file the bucket has is made, and answered with its own bytes
        let other = try await LoopbackHTTPClient.request(port: one.port, target: "/thumb/a.jpg?width=24", headers: webp)
        #expect(other.status == 200)
        #expect(other.header("Content-Type") == "image/webp")
        #expect(other.header("X-Pipeline-Source") == "made")
        #expect(try VipsImage.open(data: other.body).loader?.hasPrefix("webpload") == true)
        #expect(other.header("ETag") != second.header("ETag"))
        #expect(try moto.get(bucket: "site", key: "thumb/a-24.webp")?.body == other.body)
    }

    @Test func aFileMadeAgainFromAReplacedInputIsStoredUnderTheNewVersion() async throws {
        // Given a replica that listed an input and made a file of it
        let moto = try Self.bucketsWithOnePhoto()
        let one = try Self.replica(of: moto)
        defer { one.command.kill() }
        let webp = ["Accept": "image/webp"]
        let first = try await LoopbackHTTPClient.request(port: one.port, target: "/thumb/a.jpg?width=16", headers: webp)
        #expect(first.status == 200 && first.header("X-Pipeline-Source") == "made", "\(one.command.transcript)")
        // When the input is replaced in the bucket after the listing, and the file is asked for
        // once it is gone from the bucket
        try moto.put(try Fixtures.jpeg(try Fixtures.noise(width: 120, height: 80)), bucket: "photos", key: "in/a.jpg")
        try moto.delete(bucket: "site", key: "thumb/a-16.webp")
        let again = try await LoopbackHTTPClient.request(port: one.port, target: "/thumb/a.jpg?width=16", headers: webp)
        // Then it is made from the new bytes, under a new tag: never the old one on other bytes
        #expect(again.status == 200 && again.header("X-Pipeline-Source") == "made", "\(one.command.transcript)")
        #expect(again.body != first.body)
        #expect(again.header("ETag") != first.header("ETag"))
        // and a replica that lists the new version answers it from the bucket, as made
        let two = try Self.replica(of: moto)
        defer { two.command.kill() }
        let stored = try await LoopbackHTTPClient.request(port: two.port, target: "/thumb/a.jpg?width=16", headers: webp)
        #expect(stored.header("X-Pipeline-Source") == "store", "\(two.command.transcript)")
        #expect(stored.header("ETag") == again.header("ETag") && stored.body == again.body)
    }

    @Test func aLargeFileInTheBucketIsAnsweredWholeByRangedReadsAndItsHEADReadsNone() async throws {
        // Given a photo whose PNG is several of the pieces a large object is sent in
        let moto = try Self.bucketsWithOneLargePhoto()
        let one = try Self.replica(of: moto, serving: Self.fullSizePNG)
        defer { one.command.kill() }
        let two = try Self.replica(of: moto, serving: Self.fullSizePNG)
        defer { two.command.kill() }
        // When one replica makes it and the other answers it from the bucket
        let made = try await LoopbackHTTPClient.request(port: one.port, target: "/full/big.jpg")
        #expect(made.status == 200 && made.header("X-Pipeline-Source") == "made", "\(one.command.transcript)")
        let stored = try await LoopbackHTTPClient.request(port: two.port, target: "/full/big.jpg")
        #expect(stored.status == 200 && stored.header("X-Pipeline-Source") == "store", "\(two.command.transcript)")
        // Then both answers are the object's bytes, whole, under one tag
        let object = try #require(try moto.get(bucket: "site", key: "full/big.png")).body
        #expect(object.count > 2 * (4 << 20), "the PNG is one piece: the test proves nothing")
        for answer in [made, stored] {
            #expect(answer.body == object && answer.header("Content-Length") == "\(object.count)")
        }
        #expect(stored.header("ETag") == made.header("ETag"))
        // And a HEAD of it, of either, reads none of its bytes from the bucket: the HEAD of its
        // version alone
        try moto.startRecording()
        for replica in [one, two] {
            let head = try await LoopbackHTTPClient.request("HEAD", port: replica.port, target: "/full/big.jpg")
            #expect(head.status == 200 && head.body.isEmpty, "\(replica.command.transcript)")
            #expect(head.header("Content-Length") == "\(object.count)" && head.header("ETag") == made.header("ETag"))
        }
        let asked = try moto.recordedRequests().filter { $0.path == "/site/full/big.png" }
        #expect(!asked.isEmpty && asked.allSatisfy { $0.method == "HEAD" }, "\(asked.map { "\($0.method) \($0.headers["range"] ?? "")" })")
    }

    @Test func anAnswerCutShortByAnotherVersionInTheBucketIsLoggedAsTheServersCut() async throws {
        // Given a large PNG in the bucket, made, and a client that has its answer's first bytes
        let moto = try Self.bucketsWithOneLargePhoto()
        let one = try Self.replica(of: moto, serving: Self.fullSizePNG, options: ["--log-level", "info"])
        defer { one.command.kill() }
        let made = try await LoopbackHTTPClient.request(port: one.port, target: "/full/big.jpg")
        #expect(made.status == 200 && made.body.count > 2 * (4 << 20), "\(one.command.transcript)")
        let client = try LoopbackHTTPClient.stalledInAnswer(port: one.port, target: "/full/big.jpg")
        defer { close(client) }

        // When another machine (a replica of another version of the file) puts another version
        // of the object, and the client reads on
        try moto.put(Data(repeating: 7, count: made.body.count), bucket: "site", key: "full/big.png")
        var received = 0
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while received <= made.body.count {
            let count = recv(client, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += count
        }

        // Then the client has less than the whole, and the access log says the server cut it
        // short for the object's new version, not that the client left
        #expect(received < made.body.count)
        let line = one.command.waitForLine(timeout: 60) { $0.isError && $0.text.contains("cut off after") }
        #expect(line?.text.contains("its object could not be read to its end: ") == true, "\(one.command.transcript)")
        #expect(line?.text.contains("another version") == true, "\(one.command.transcript)")
    }

    @Test func aPieceTheBucketDoesNotGiveIsGivenUpWhenTheDrainTimeoutCutsTheAnswer() async throws {
        // Given a large PNG in the bucket, made, each bucket request allowed ten minutes, and a
        // drain timeout of 2 s
        let moto = try Self.bucketsWithOneLargePhoto()
        defer { moto.resume() }
        let json = Self.fullSizePNG.replacingOccurrences(
            of: #""inputs":"#, with: #""fetch": {"timeout": "600s", "retries": 0}, "serve": {"drainTimeout": 2}, "inputs":"#)
        let one = try Self.replica(of: moto, serving: json, options: ["--log-level", "info"])
        defer { one.command.kill() }
        let made = try await LoopbackHTTPClient.request(port: one.port, target: "/full/big.jpg")
        #expect(made.status == 200 && made.body.count > 2 * (4 << 20), "\(one.command.transcript)")

        // When the bucket stops answering while the answer is read back from it, the client
        // takes the first piece, and SIGTERM comes while the next is asked for
        let client = try LoopbackHTTPClient.stalledInAnswer(port: one.port, target: "/full/big.jpg")
        moto.pause()
        let reading = Task.detached {
            defer { close(client) }
            var (received, buffer) = (0, [UInt8](repeating: 0, count: 64 << 10))
            while received <= made.body.count {
                let count = recv(client, &buffer, buffer.count, 0)
                guard count > 0 else { break }
                received += count
            }
            return received
        }
        try await Task.sleep(for: .seconds(2))
        one.command.signal(SIGTERM)

        // Then the server stops at its drain timeout, cutting the answer off, not when the
        // bucket answers again
        #expect(one.command.waitForExit(timeout: 30) == 1, "\(one.command.transcript)")
        #expect(
            one.command.transcript.contains("after serve.drainTimeout (2s): 1 request still in flight was cut off"),
            "\(one.command.transcript)")
        // and its access log line says why in words, not as the reader's cancellation
        #expect(one.command.transcript.contains("big.png: the server stopped before the rest was read"), "\(one.command.transcript)")
        moto.resume()
        #expect(await reading.value < made.body.count)
    }
}
#endif
