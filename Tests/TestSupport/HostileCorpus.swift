import Foundation
import PipelineKit
import Testing
import Vips

/// One file of the hostile corpus and what the pipeline must do with it.
package struct CorpusCase: Sendable, CustomTestStringConvertible {
    package enum Outcome: Sendable {
        /// Decoded and written; the full-size output has this size (first frame or page, upright).
        case processed(width: Int, height: Int)
        /// Refused in `stage` for a reason the pipeline itself states (too many pixels, not an
        /// image, empty): the reason contains `reason`, always.
        case refused(Stage, String)
        /// Failed in `stage` for a reason libvips gives, containing `reason` (or one of the
        /// reasons it separates with `|`). libvips' error buffer is shared by the whole process,
        /// and other tests open images at the same time, so this reason is checked in a
        /// `pipeline` child process (`theCorpusFromTheCommandLine…`).
        case failed(Stage, String)
        /// Failed in `stage` because the file is cut short or damaged, for the reason its
        /// structure shows (`FileDamage`): the pipeline states it, so it contains `reason`, always.
        case damaged(Stage, String)

        package var isFailure: Bool {
            if case .processed = self { false } else { true }
        }
    }

    package let file: String
    package let outcome: Outcome
    package let make: @Sendable () throws -> Data

    package var testDescription: String { file }

    package init(file: String, outcome: Outcome, make: @escaping @Sendable () throws -> Data) {
        self.file = file
        self.outcome = outcome
        self.make = make
    }
}

extension CorpusCase {
    /// The hostile corpus: valid files in every format, truncated, corrupt and empty ones,
    /// decompression bombs, thousands of frames and unusual but valid images. The library's
    /// tests run it through a pipeline in this process, the command line's tests through
    /// `pipeline run`.
    package static let hostileCorpus: [CorpusCase] = [
        // Valid files in every format libvips reads here.
        CorpusCase(file: "valid.jpg", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("jpg") },
        CorpusCase(file: "valid.png", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("png") },
        CorpusCase(file: "valid.webp", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("webp") },
        CorpusCase(file: "valid.gif", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("gif") },
        CorpusCase(file: "valid.tif", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("tif") },
        CorpusCase(file: "valid.avif", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("avif") },
        CorpusCase(file: "valid.heic", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("heic") },
        CorpusCase(file: "valid.jxl", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("jxl") },
        CorpusCase(file: "valid.jp2", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("jp2") },
        // The content decides, not the extension.
        CorpusCase(file: "webp-named.jpg", outcome: .processed(width: 48, height: 32)) { try HostileFixtures.photo("webp") },

        // Truncated files: failOn's default ("truncated") refuses them.
        CorpusCase(file: "truncated.jpg", outcome: .failed(.decompress, "Premature end of")) {
            HostileFixtures.truncated(try HostileFixtures.photo("jpg"))
        },
        CorpusCase(file: "truncated.png", outcome: .damaged(.decompress, "the PNG is cut short: its IDAT chunk declares")) {
            HostileFixtures.truncated(try HostileFixtures.photo("png"))
        },
        CorpusCase(file: "truncated.webp", outcome: .damaged(.decompress, "the WebP is cut short: its RIFF header declares")) {
            HostileFixtures.truncated(try HostileFixtures.photo("webp"))
        },
        CorpusCase(file: "truncated.gif", outcome: .damaged(.decompress, "the GIF is cut short: its bytes end before its trailer")) {
            HostileFixtures.truncated(try HostileFixtures.photo("gif"))
        },
        // libtiff cannot read the directory of a cut TIFF, so no trusted loader claims it; its
        // header says where the directory was.
        CorpusCase(file: "truncated.tif", outcome: .damaged(.decompress, "the TIFF is cut short: its first directory is at byte")) {
            HostileFixtures.truncated(try HostileFixtures.photo("tif"))
        },
        CorpusCase(file: "truncated.avif", outcome: .damaged(.decompress, "the AVIF is cut short: its meta box declares")) {
            HostileFixtures.truncated(try HostileFixtures.photo("avif"))
        },
        CorpusCase(file: "truncated.heic", outcome: .damaged(.decompress, "the HEIF is cut short: its meta box declares")) {
            HostileFixtures.truncated(try HostileFixtures.photo("heic"))
        },
        CorpusCase(file: "truncated.jxl", outcome: .failed(.decompress, "JxlDecoderProcessInput")) {
            HostileFixtures.truncated(try HostileFixtures.photo("jxl"))
        },
        CorpusCase(file: "truncated.jp2", outcome: .damaged(.decompress, "the JPEG 2000 file is cut short: its jp2c box declares")) {
            HostileFixtures.truncated(try HostileFixtures.photo("jp2"))
        },

        // Damaged inside.
        CorpusCase(file: "corrupt.png", outcome: .damaged(.decompress, "the PNG is damaged: its IDAT chunk at byte")) {
            HostileFixtures.corrupted(try HostileFixtures.photo("png"))
        },
        // libnsgif finds the bad code size either as it scans the frames for the header or as
        // it decodes the frame, as it got further in one run or another (seen under
        // AddressSanitizer): either reason names the damage.
        CorpusCase(file: "bad-lzw.gif", outcome: .failed(.decompress, "no frames in GIF|Invalid frame data")) {
            try HostileFixtures.gifWithBadLZWCodeSize()
        },

        // Not images at all.
        CorpusCase(file: "empty.jpg", outcome: .refused(.fetch, "the file is empty")) { Data() },
        CorpusCase(file: "text.jpg", outcome: .refused(.decompress, "not an image libvips can read")) {
            Data("<html><body>404 Not Found</body></html>\n".utf8)
        },
        CorpusCase(file: "noise.png", outcome: .refused(.decompress, "not an image libvips can read")) {
            HostileFixtures.randomBytes(4096, seed: 1)
        },
        CorpusCase(
            file: "signature-then-noise.png",
            outcome: .damaged(.decompress, "the PNG is damaged: the bytes at 8, after its signature, are not a PNG chunk")
        ) {
            Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + HostileFixtures.randomBytes(4096, seed: 2)
        },
        CorpusCase(file: "jpeg-marker-only.jpg", outcome: .failed(.decompress, "Premature end of")) { Data([0xFF, 0xD8, 0xFF]) },
        // A format whose libvips loader is marked untrusted is refused, not handed to it.
        CorpusCase(file: "image.ppm", outcome: .refused(.decompress, "not an image libvips can read")) {
            Data("P6\n4 4\n255\n".utf8) + Data(repeating: 200, count: 48)
        },
        // SVG and PDF are read only when the file allows them, which the corpus's does not.
        CorpusCase(file: "drawing.svg", outcome: .refused(.decompress, "add \"svg\" to decompress.allowUntrusted")) {
            Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20"/></svg>"#.utf8)
        },

        // A chunk before the pixels declaring a gigabyte the file does not have: refused from
        // the chunk lengths, before libpng sets the gigabyte aside.
        CorpusCase(
            file: "chunk-past-the-end.png",
            outcome: .refused(.decompress, "the PNG is cut short: its iTXt chunk declares 1073741823 bytes and 16 follow")
        ) {
            try HostileFixtures.pngWithChunkPastTheEnd(type: "iTXt", length: 0x3FFF_FFFF)
        },

        // Decompression bombs: the header declares more pixels than maxPixels allows; refused
        // from the header, before any pixel memory is allocated.
        CorpusCase(file: "bomb.png", outcome: .refused(.decompress, "100000×100000 (10000000000 pixels), more than decompress.maxPixels")) {
            try HostileFixtures.pngDeclaring(width: 100_000, height: 100_000)
        },
        CorpusCase(file: "bomb.jpg", outcome: .refused(.decompress, "65000×65000 (4225000000 pixels), more than decompress.maxPixels")) {
            try HostileFixtures.jpegDeclaring(width: 65000, height: 65000)
        },
        CorpusCase(file: "bomb.gif", outcome: .refused(.decompress, "65535×65535 (4294836225 pixels), more than decompress.maxPixels")) {
            try HostileFixtures.gifDeclaring(width: 65535, height: 65535)
        },
        CorpusCase(file: "bomb.tif", outcome: .refused(.decompress, "100000×100000 (10000000000 pixels), more than decompress.maxPixels")) {
            HostileFixtures.tiffDeclaring(width: 100_000, height: 100_000)
        },

        // Thousands of frames or pages: an animation over decompress.maxFrames is refused from its
        // header; of the others, the first page, or every frame for animated outputs, is decoded quickly.
        CorpusCase(file: "frames-2000.gif", outcome: .refused(.decompress, "2000 frames, more than decompress.maxFrames (1000)")) {
            try HostileFixtures.frames(2000, width: 8, height: 6) { [UInt8($0 % 251), UInt8($0 % 7 * 30), 0] }.encoded(suffix: ".gif")
        },
        CorpusCase(file: "pages-2000.tif", outcome: .processed(width: 8, height: 6)) {
            try HostileFixtures.frames(2000, width: 8, height: 6) { [UInt8($0 % 251), 0, 0] }.encoded(suffix: ".tif")
        },
        CorpusCase(file: "frames-500.webp", outcome: .processed(width: 8, height: 6)) {
            try HostileFixtures.frames(500, width: 8, height: 6) { [UInt8($0 % 251), 0, UInt8($0 % 3 * 100)] }.encoded(suffix: ".webp")
        },

        // Unusual but valid.
        CorpusCase(file: "animated.gif", outcome: .processed(width: 40, height: 30)) { try HostileFixtures.animation("gif") },
        CorpusCase(file: "animated.webp", outcome: .processed(width: 40, height: 30)) { try HostileFixtures.animation("webp") },
        CorpusCase(file: "cmyk.jpg", outcome: .processed(width: 48, height: 32)) {
            try Fixtures.gradient(width: 48, height: 32).converted(to: .cmyk).encoded(suffix: ".jpg")
        },
        CorpusCase(file: "grey.jpg", outcome: .processed(width: 48, height: 32)) {
            try Fixtures.gradient(width: 48, height: 32, bands: 1).encoded(suffix: ".jpg")
        },
        CorpusCase(file: "palette.png", outcome: .processed(width: 48, height: 32)) {
            try Fixtures.gradient(width: 48, height: 32).encoded(suffix: ".png[palette,colours=16]")
        },
        CorpusCase(file: "grey-alpha.png", outcome: .processed(width: 48, height: 32)) {
            try Fixtures.gradient(width: 48, height: 32, bands: 2).encoded(suffix: ".png")
        },
        CorpusCase(file: "p3.jpg", outcome: .processed(width: 48, height: 32)) {
            try Fixtures.gradient(width: 48, height: 32).convertedFromSRGB(toProfile: "p3").encoded(suffix: ".jpg")
        },
        CorpusCase(file: "rotated.webp", outcome: .processed(width: 32, height: 48)) {
            try Fixtures.gradient(width: 48, height: 32).withOrientation(6).encoded(suffix: ".webp")
        },
        CorpusCase(file: "rotated.png", outcome: .processed(width: 32, height: 48)) {
            try HostileFixtures.png(try Fixtures.gradient(width: 48, height: 32), orientation: 8)
        },
        CorpusCase(file: "1x1.png", outcome: .processed(width: 1, height: 1)) {
            try Fixtures.png(try Fixtures.solid(width: 1, height: 1))
        },
        CorpusCase(file: "tall-3x1500.png", outcome: .processed(width: 3, height: 1500)) {
            try Fixtures.png(try Fixtures.solid(width: 3, height: 1500))
        },
    ]
}
