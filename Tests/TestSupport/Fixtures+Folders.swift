import Foundation

extension Fixtures {
    /// A folder for glob tests: photos/a.jpg, photos/sub/b.png, photos/sub/deep/c.PNG,
    /// photos/D.JPG and photos/e.gif, each a one-byte file (globs read names, not pixels).
    package static func globPhotos() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        for name in ["photos/a.jpg", "photos/sub/b.png", "photos/sub/deep/c.PNG", "photos/D.JPG", "photos/e.gif"] {
            try directory.write(Data("x".utf8), to: name)
        }
        return directory
    }

    /// A folder for `pipeline watch` and its watcher: `count` small photos in `in/`, one more in
    /// `spare/` to copy in, and a pipeline file `p.json` making `outputs` of `inputPattern`.
    package static func watchedFolder(inputs count: Int, outputs: [String], inputPattern: String) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let photo = try jpeg(try gradient(width: 48, height: 32))
        for index in 0..<count { try directory.write(photo, to: "in/p\(index).jpg") }
        try directory.write(photo, to: "spare/photo.jpg")
        try directory.write(Data(PipelineHarness.json(inputs: [inputPattern], outputs: outputs).utf8), to: "p.json")
        return directory
    }
}
