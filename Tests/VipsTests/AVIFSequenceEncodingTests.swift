import Foundation
import TestSupport
import Testing
import Vips

/// `VipsImage.encodedAVIFSequence`: stacked frames to an AVIF image sequence, read back by
/// libavif's `avifdec`.
@Suite struct AVIFSequenceEncodingTests {
    /// What `avifdec --info` prints about `file`.
    func info(_ file: Data) throws -> String {
        let directory = try TemporaryDirectory()
        try directory.write(file, to: "seq.avif")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/avifdec")
        process.arguments = ["--info", directory.path + "/seq.avif"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        try #require(process.terminationStatus == 0, "\(text)")
        return text
    }

    @Test func framesWithoutADelayAboveZeroShowForATenthOfASecond() throws {
        // Given three frames whose delays are 0, 250 and missing
        let frames = try HostileFixtures.frames(3, width: 16, height: 8) { [UInt8($0 * 100), 0, 0] }
        let encoding = AVIFEncoding(codec: .aom, speed: 9, quantizer: 30)
        let file = try frames.encodedAVIFSequence(encoding, frameHeight: 8, delays: [0, 250], loop: nil)
        // Then libavif reads three frames of 16×8, shown for 100, 250 and 100 ms
        let text = try info(file)
        #expect(text.contains("3 frames"), "\(text)")
        #expect(text.contains("[duration 0.10 (100 timescales)] [16x8]"), "\(text)")
        #expect(text.contains("[pts 0.10 (100 timescales)] [duration 0.25 (250 timescales)]"), "\(text)")
        #expect(text.contains("[pts 0.35 (350 timescales)] [duration 0.10 (100 timescales)]"), "\(text)")
    }

    @Test func rowsThatAreNotWholeFramesAreRefused() throws {
        let image = try HostileFixtures.frames(1, width: 16, height: 10) { _ in [0, 0, 0] }
        let encoding = AVIFEncoding(codec: .aom, speed: 9, quantizer: 30)
        #expect {
            try image.encodedAVIFSequence(encoding, frameHeight: 4, delays: [], loop: nil)
        } throws: { error in
            "\(error)".contains("10 rows are not whole frames of 4 rows")
        }
    }
}
