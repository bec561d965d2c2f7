import Foundation
import TestSupport
import Testing
import Vips

@testable import PipelineKit

/// Reading back what the encoders wrote: libvips' own tools, and the tags of an ICC profile.
extension NewFormatTests {
    /// As in sharp: a PNG's quality or effort is its palette's, so asking for one asks for a palette.
    @Test func aPNGsQualityOrEffortMakesAPalette() async throws {
        let (directory, reports, summary) = try await run(
            [
                #"{"name": "plain", "encode": {"format": "png"}, "path": "out/{stem}-plain.png"}"#,
                #"{"name": "quality", "encode": {"format": "png", "quality": 40}, "path": "out/{stem}-quality.png"}"#,
                #"{"name": "effort", "encode": {"format": "png", "effort": 2}, "path": "out/{stem}-effort.png"}"#,
            ], input: try taggedJPEG())
        #expect(summary.succeeded == 1, "\(reports.flatMap(\.failures))")
        // The colour type in the PNG's header: 2 is RGB, 3 a palette
        let colourTypes = try ["plain", "quality", "effort"].map { name in
            try Data(contentsOf: URL(fileURLWithPath: directory.path + "/out/photo-\(name).png"))[25]
        }
        #expect(colourTypes == [2, 3, 3])
    }

    /// Runs one of libvips' command-line tools (`vipsheader`, `vips`), outside the pipeline's
    /// process; its status and output (standard error after standard output).
    static func tool(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = try TemporaryDirectory()
        let file = output.path + "/output"
        guard FileManager.default.createFile(atPath: file, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        try handle.close()
        return (process.terminationStatus, try String(contentsOfFile: file, encoding: .utf8))
    }

    /// The text of an ICC profile's `desc` tag (v2 `desc` or v4 `mluc`), or nil.
    static func description(of profile: [UInt8]) -> String? {
        guard let (offset, size) = tag("desc", in: profile), offset + size <= profile.count else { return nil }
        let bytes = profile[offset..<(offset + size)]
        return String(decoding: bytes.filter { $0 >= 0x20 && $0 < 0x7F }, as: UTF8.self)
    }

    /// The X of the red primary (`rXYZ`), or nil.
    static func redPrimaryX(of profile: [UInt8]) -> Double? {
        guard let (offset, size) = tag("rXYZ", in: profile), size >= 20, offset + 12 <= profile.count else { return nil }
        let raw = profile[(offset + 8)..<(offset + 12)].reduce(0) { $0 << 8 | Int($1) }
        return Double(Int32(truncatingIfNeeded: raw)) / 65536
    }

    static func tag(_ signature: String, in profile: [UInt8]) -> (offset: Int, size: Int)? {
        func uint32(_ at: Int) -> Int { profile[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        guard profile.count >= 132 else { return nil }
        let count = uint32(128)
        for index in 0..<min(count, 100) {
            let entry = 132 + index * 12
            guard entry + 12 <= profile.count else { return nil }
            if Array(profile[entry..<(entry + 4)]) == Array(signature.utf8) { return (uint32(entry + 4), uint32(entry + 8)) }
        }
        return nil
    }
}
