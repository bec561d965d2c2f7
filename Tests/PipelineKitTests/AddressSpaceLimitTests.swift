import Foundation
import Testing

/// Under an address-space limit (`ulimit -v`, RLIMIT_AS) a run shapes itself instead of dying:
/// glibc's arenas are limited to two and new threads get 2 MiB stacks, so libvips' workers
/// still start. Before, 10 of 13 runs died between 0.7 and 1.35 GB, and at 600 MB every input
/// failed with "Error creating thread".
@Suite struct AddressSpaceLimitTests {
    @Test func everyInputIsMadeUnderA600MBAddressSpaceLimit() throws {
        let directory = try TemporaryDirectory()
        // Eight distinct photos of up to 7 megapixels, JPEG and PNG.
        for index in 0..<8 {
            let image = try Fixtures.gradient(width: 1600 + 200 * index, height: 1200 + 150 * index)
            let data = index % 3 == 0 ? try Fixtures.png(image) : try Fixtures.jpeg(image)
            try directory.write(data + Data("\(index)".utf8), to: "in/p\(index).\(index % 3 == 0 ? "png" : "jpg")")
        }
        try directory.write(Data("""
            {"version": 1, "inputs": ["in/*.jpg", "in/*.png"], "outputs": [
              {"name": "small", "steps": [{"resize": {"width": 320, "height": 320, "fit": "cover"}}], "encode": {"format": "webp"}, "path": "out/{stem}-small.webp"},
              {"name": "large", "steps": [{"resize": {"width": 1280, "height": 1280, "fit": "inside"}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-large.jpg"},
              {"name": "placeholder", "steps": [{"resize": {"width": 32}}, {"blur": {"sigma": 2}}], "encode": {"format": "jpeg"}, "path": "out/{stem}-placeholder.jpg"}]}
            """.utf8), to: "p.json")

        guard let run = try CommandRunner.runUnderAddressSpaceLimit(kilobytes: 600_000, ["run", "--quiet", directory.url.appendingPathComponent("p.json").path]) else {
            return
        }
        #expect(run.status == 0, "\(run.output)")
        #expect(directory.allFiles().filter { $0.hasPrefix("out/") }.count == 24)
    }
}
