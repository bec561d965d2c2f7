import ArgumentParser
import Foundation
import PipelineKit

/// `pipeline html --out DIR`: one file per input, named after its stem.
extension PipelineCommand.HTML {
    /// Writes each snippet to a file of its own in `directory`, made when missing. A file is
    /// written whole (a temporary file renamed into place), and never onto the manifest.
    func write(_ snippets: [(entry: ImageManifest.Input, html: String)], into directory: String) throws {
        let folder = URL(fileURLWithPath: directory)
        // A mistake in the command line, worded as a run words it: "File exists" would say the folder is there.
        var check = FolderCheck()
        if let file = check.fileInTheWay(of: folder.appendingPathComponent("picture.html").path) {
            printError("\(directory): \(file) is a file, not a folder".escapingControlCharacters)
            throw ExitCode.invalidInput
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            printError("\(directory): cannot make the folder: \(ErrorText.reason(error))".escapingControlCharacters)
            throw ExitCode.failure
        }
        let manifestIdentity = Self.identity(of: manifest)
        let manifestPath = URL(fileURLWithPath: manifest).standardizedFileURL.resolvingSymlinksInPath().path
        let isManifest = { (name: String) in
            let candidate = folder.appendingPathComponent(name)
            let resolved = candidate.standardizedFileURL.resolvingSymlinksInPath().path
            return resolved == manifestPath || (manifestIdentity != nil && Self.identity(of: candidate.path) == manifestIdentity)
        }
        let stems = snippets.map { Self.fileStem(of: $0.entry.source) }
        // The first input of each stem takes `stem.html` before any later one is numbered, so
        // that a photo named `dune-2` keeps `dune-2.html` whatever other dunes come first.
        var firsts: [String: Int] = [:]
        for (index, stem) in stems.enumerated() where firsts[stem] == nil && !isManifest(stem + ".html") { firsts[stem] = index }
        var taken = Set(firsts.keys.map { $0 + ".html" })
        for (index, snippet) in snippets.enumerated() {
            let stem = stems[index]
            var name = stem + ".html"
            // In the manifest's order, so the same manifest names its files the same way every time.
            if firsts[stem] != index {
                for counter in 2... {
                    name = "\(stem)-\(counter).html"
                    if !taken.contains(name), !isManifest(name) { break }
                }
                taken.insert(name)
            }
            let target = folder.appendingPathComponent(name)
            do {
                try ReportWriter.writeAtomically(Data(snippet.html.utf8), to: target.path)
            } catch {
                printError(
                    "\(target.path): cannot write the <picture> of \(snippet.entry.source): \(error.reason)"
                        .escapingControlCharacters)
                throw ExitCode.failure
            }
        }
    }

    /// A file name for the input `source`: the stem of the last part of its path (of a URL's
    /// path, without query or fragment), with what a file name may not hold replaced.
    static func fileStem(of source: String) -> String {
        var path = source
        if let url = URL(string: source), url.scheme != nil, url.host != nil {
            // Each segment decoded, as the run names its files (`caf%E9.jpg` keeps its escapes).
            path = CredentialRedaction.pathWithoutParameters(of: url)
        }
        let last = (path as NSString).lastPathComponent
        var stem = (last as NSString).deletingPathExtension
        stem = String(stem.unicodeScalars.map { $0.value < 0x20 || $0 == "/" || $0 == "\\" || $0.value == 0x7F ? "_" : Character($0) })
        // Room for "-NNN.html" within the 255 bytes a name may have.
        while stem.utf8.count > 200 { stem.removeLast() }
        if stem.isEmpty || stem == "." || stem == ".." || stem == "/" { return "input" }
        return stem
    }

    /// The device and inode of the file at `path`, nil when there is none.
    static func identity(of path: String) -> [UInt64]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [UInt64(info.st_dev), UInt64(info.st_ino)]
    }
}
