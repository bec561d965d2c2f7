import ArgumentParser
import Foundation
import PipelineKit

extension PipelineCommand {
    struct MergeReports: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "merge-reports",
            abstract: "Join the reports of a sharded run's shards into one report.json and index.html, and say which shards are missing.",
            discussion:
                "Exit status 0 when every shard's report was given and every input succeeded; 1, as for a run, when a shard is "
                + "missing or was stopped, or an input failed or was not run (the merged report is still written); "
                + "2 when the reports cannot be joined."
        )

        /// Enough to act on in a terminal; the merged report has every one.
        private static let failuresListed = 20

        @ArgumentParser.Option(
            name: .shortAndLong, help: ArgumentHelp("The folder to write the merged report.json and index.html into.", valueName: "dir"))
        var output: String

        @ArgumentParser.Option(
            help: ArgumentHelp("The pipeline file's folder, for the input thumbnails (default: the current folder).", valueName: "dir"))
        var inputDirectory: String?

        @Argument(help: "The shards' report folders (or report.json files).", completion: .file())
        var reports: [String]

        func validate() throws {
            if output.isEmpty {
                throw ValidationError("--output: give the merged report's folder; an empty value would write into the current folder")
            }
            if let address = ObjectStores.notALocalPath(output) {
                throw ValidationError("--output \(output): the report is written on this machine, so give a local folder, not \(address)")
            }
        }

        func run() async throws {
            // The merged report would replace a shard's own, which a later merge needs: the
            // folders are compared as files, so that no link or other spelling hides one.
            let destination = FileIdentity(path: output, followingLinks: true)
            for path in reports {
                let given = URL(fileURLWithPath: path)
                let folder = given.pathExtension == "json" ? given.deletingLastPathComponent().path : path
                if let destination, FileIdentity(path: folder, followingLinks: true) == destination {
                    printError(
                        "error: --output \(output) holds the shard report \(path), which the merged one would replace: name another folder")
                    throw ExitCode.invalidInput
                }
            }
            var loaded: [RunReport] = []
            for path in reports {
                let url = URL(fileURLWithPath: path)
                do {
                    loaded.append(try ReportMerger.read(url))
                } catch {
                    // The file, not the shard's folder: what is wrong is in it, or that it is not there.
                    let file =
                        ReportMerger.reportFile(at: url) == url
                        ? path : (path as NSString).appendingPathComponent(ReportWriter.jsonFileName)
                    printError("error: cannot read the report \(file): \(ErrorText.reason(error))")
                    throw ExitCode.invalidInput
                }
            }
            let merged: (report: RunReport, missingShards: [Int])
            do {
                merged = try ReportMerger.merge(loaded, named: reports)
            } catch {
                printError("error: \(error.description)")
                throw ExitCode.invalidInput
            }
            do {
                try await ReportWriter.write(
                    merged.report, to: URL(fileURLWithPath: output),
                    inputDirectory: inputDirectory.map { URL(fileURLWithPath: $0) })
            } catch {
                printError("error: cannot write the merged report to \(output): \(error)")
                throw ExitCode.failure
            }
            let report = merged.report
            let shards = loaded.first?.shard?.count ?? 0
            print(
                "merged \(loaded.count) of \(shards) shard\(shards == 1 ? "" : "s"): \(report.inputs) input\(report.inputs == 1 ? "" : "s"), "
                    + "\(report.succeeded) succeeded, \(report.failed) failed, \(report.notRun) not run; "
                    + "\(report.outputsWritten) output\(report.outputsWritten == 1 ? "" : "s") written, "
                    + "\(report.outputsUpToDate) up to date → \(output)")
            // Each shard's log named its own failures; the merge is where they are read together.
            let failures = report.items.flatMap(\.failures)
            for failure in failures.prefix(Self.failuresListed) { printError("failed: \(failure)".escapingControlCharacters) }
            if failures.count > Self.failuresListed {
                printError(
                    "… and \(failures.count - Self.failuresListed) more failures in \((output as NSString).appendingPathComponent(ReportWriter.jsonFileName))"
                )
            }
            // A sharded job gates what it publishes on the merge, as it would on one run's status.
            var problems: [String] = []
            if !merged.missingShards.isEmpty {
                problems.append("missing shards: " + merged.missingShards.map(String.init).joined(separator: ", ") + " of \(shards)")
            }
            let stopped = loaded.filter(\.cancelled).compactMap { $0.shard.map { String($0.index) } }
            if !stopped.isEmpty {
                problems.append("stopped before the end: shard\(stopped.count == 1 ? "" : "s") " + stopped.joined(separator: ", "))
            }
            if report.failed > 0 { problems.append("\(report.failed) input\(report.failed == 1 ? "" : "s") failed") }
            if report.notRun > 0 { problems.append("\(report.notRun) input\(report.notRun == 1 ? " was" : "s were") not run") }
            for problem in problems { printError(problem) }
            if !problems.isEmpty { throw ExitCode.someItemsFailed }
        }
    }
}
