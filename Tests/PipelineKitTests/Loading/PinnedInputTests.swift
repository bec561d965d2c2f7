import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// A local input is decoded as one version, from the fetch stage to the end of the decode:
/// changed under the run, it fails with a reason and is made by the next run, never mixed;
/// swapped for a FIFO, it is refused at once.
@Suite struct PinnedInputTests {
    static let settings = DecompressSettings(concurrency: 1, maxPixels: 100_000_000, autorotate: true, failOn: .truncated)

    /// A PNG (red left, blue right, or the mirror image), written at `in/x.png`, and the fetch
    /// stage's view of it.
    func fetched(in directory: TemporaryDirectory, flipped: Bool = false) throws -> (path: String, source: EncodedSource) {
        let path = try directory.write(try png(flipped: flipped), to: "in/x.png")
        let input = InputFile(path: path, displayName: "in/x.png", subfolder: "")
        return (path, try FileFetcher(maxBytes: 1 << 30).fetch(input).source)
    }

    func png(flipped: Bool) throws -> Data {
        let image = try Fixtures.redLeftBlueRight(width: 64, height: 32)
        return try Fixtures.png(flipped ? image.flipped(.horizontal) : image)
    }

    /// Writes `data` into the file at `path` in place (same inode), as `cp` does.
    static func rewriteInPlace(_ path: String, with data: Data) {
        let descriptor = open(path, O_WRONLY | O_TRUNC)
        guard descriptor >= 0 else { return }
        _ = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        // A distinct modification time even on a file system with coarse timestamps.
        var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
        futimens(descriptor, &times)
        close(descriptor)
    }

    /// The version the fetch stage gives an input, which its outputs' fingerprints are made
    /// from, is its `FileStamp`'s: what the journal's verdict on a server's warm path compares.
    /// Its spelling is what journals already on disk hold.
    @Test func theFetchedVersionIsTheFilesStamp() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write(try png(flipped: false), to: "in/x.png")
        let fetched = try FileFetcher(maxBytes: 1 << 30).fetch(InputFile(path: path, displayName: "in/x.png", subfolder: ""))
        let stamp = try #require(FileStamp(path: path))
        #expect(fetched.version == stamp.version)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(stamp.version == "file:\(info.st_size):\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec):\(info.st_ino)")
        // Written again in place: another version, by either spelling
        Self.rewriteInPlace(path, with: try png(flipped: true))
        let rewritten = try #require(FileStamp(path: path))
        #expect(rewritten.version != stamp.version)
        #expect(!rewritten.hasVersion(of: stamp))
        #expect(rewritten.hasVersion(of: try #require(FileStamp(path: path))))
    }

    @Test func aFileRewrittenBetweenFetchAndDecodeFailsAsChanged() throws {
        // Given a file fetched, then rewritten in place with other pixels
        let directory = try TemporaryDirectory()
        let (path, source) = try fetched(in: directory)
        Self.rewriteInPlace(path, with: try png(flipped: true))
        // When it is decoded, then it fails, saying why, rather than making the new version under the old one's name
        #expect {
            _ = try ImageDecoder(settings: Self.settings, outputs: []).decode(source)
        } throws: { error in
            (error as? ItemError)?.kind == .changed && (error as? ItemError)?.reason.contains("changed while it was being read") == true
        }
    }

    /// Removed between the fetch and the decode (as a sync tool replaces a file), it fails as
    /// changed, a passing state a server answers "try again", not as a file that cannot be read.
    @Test func aFileRemovedBetweenFetchAndDecodeFailsAsChanged() throws {
        let directory = try TemporaryDirectory()
        let (path, source) = try fetched(in: directory)
        #expect(unlink(path) == 0)
        #expect {
            _ = try ImageDecoder(settings: Self.settings, outputs: []).decode(source)
        } throws: { error in
            (error as? ItemError)?.kind == .changed && (error as? ItemError)?.reason.contains("it changed since it was fetched") == true
        }
    }

    @Test func aFileRewrittenWhileItIsDecodedFailsAsChanged() throws {
        // Given a file that another program rewrites in place once the decoder has opened it
        let directory = try TemporaryDirectory()
        let (_, source) = try fetched(in: directory)
        let other = try png(flipped: true)
        var decoder = ImageDecoder(settings: Self.settings, outputs: [])
        decoder.whileReading = { path in Self.rewriteInPlace(path, with: other) }
        // When it is decoded, then it fails as changed, whatever the decoder made of the mixture
        #expect {
            _ = try decoder.decode(source)
        } throws: { error in
            (error as? ItemError)?.kind == .changed && (error as? ItemError)?.stage == .decompress
                && (error as? ItemError)?.reason.contains("changed while it was being read") == true
        }
    }

    @Test func aFileRewrittenWhileItIsDecodedWithItsSizeAndTimesPutBackFailsAsChanged() throws {
        // Given an uncompressed TIFF that another program rewrites in place with the mirror image
        // (the same size) once the decoder has opened it, then puts its times back
        let directory = try TemporaryDirectory()
        let image = try Fixtures.redLeftBlueRight(width: 64, height: 32)
        let path = try directory.write(try image.encoded(suffix: ".tif"), to: "in/x.tif")
        let other = try image.flipped(.horizontal).encoded(suffix: ".tif")
        #expect(other.count == FileStamp(path: path).map { Int($0.size) })
        let source = try FileFetcher(maxBytes: 1 << 30).fetch(InputFile(path: path, displayName: "in/x.tif", subfolder: "")).source
        var decoder = ImageDecoder(settings: Self.settings, outputs: [])
        decoder.whileReading = { path in
            var before = stat()
            guard stat(path, &before) == 0 else { return }
            let descriptor = open(path, O_WRONLY)
            guard descriptor >= 0 else { return }
            _ = other.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
            var times = [before.st_atim, before.st_mtim]
            futimens(descriptor, &times)
            close(descriptor)
        }
        // When it is decoded, then it fails as changed: the size, modification time and file
        // are as they were, but its change time is not
        #expect {
            _ = try decoder.decode(source)
        } throws: { error in
            (error as? ItemError)?.kind == .changed && (error as? ItemError)?.reason.contains("changed while it was being read") == true
        }
    }

    @Test func aFileRenamedOverWhileItIsDecodedIsDecodedAsTheVersionOpened() throws {
        // Given a file that another program replaces (a new file renamed over it) once the decoder has opened it
        let directory = try TemporaryDirectory()
        let (path, source) = try fetched(in: directory)
        let replacement = try directory.write(try png(flipped: true), to: "replacement.png")
        var decoder = ImageDecoder(settings: Self.settings, outputs: [])
        decoder.whileReading = { path in _ = rename(replacement, path) }
        // When it is decoded
        let decoded = try decoder.decode(source)
        // Then every pixel is the version opened (red on the left), none the replacement's
        #expect(Fixtures.isClose(try decoded.image.pixel(x: 2, y: 16), [255, 0, 0], tolerance: 1))
        #expect(Fixtures.isClose(try decoded.image.pixel(x: 61, y: 16), [0, 0, 255], tolerance: 1))
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func aFIFOSwappedInAfterTheFetchIsRefusedWithoutWaiting() throws {
        // Given a file fetched, then replaced by a FIFO that nothing ever writes to
        let directory = try TemporaryDirectory()
        let (path, source) = try fetched(in: directory)
        #expect(unlink(path) == 0 && mkfifo(path, 0o600) == 0)
        let decoder = ImageDecoder(settings: Self.settings, outputs: [])
        // When the run asks for its size and decodes it, then neither waits for a writer
        #expect(decoder.uprightSize(of: source) == nil)
        #expect(decoder.memoryNeeds(of: source) == nil)
        #expect {
            _ = try decoder.decode(source)
        } throws: { error in
            (error as? ItemError)?.reason.contains("it is a FIFO (named pipe), not a regular file") == true
        }
    }
}
