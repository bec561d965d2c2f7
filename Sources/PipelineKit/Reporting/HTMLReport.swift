import Foundation
import Vips

/// The `index.html` of a report: a page a person opens to look at a run's results.
///
/// Totals at the top, then every failure (input, output, stage, reason), the time each stage
/// worked and waited (inline SVG bars), and one card per input: a thumbnail of the input beside
/// its outputs, each with its size, bytes and saving against the input.
///
/// The page is self-contained: inline CSS and SVG, no script, no font or image from the network
/// (a Content-Security-Policy says so to the browser too). Every picture on it, input or output,
/// is an embedded JPEG thumbnail, so the report folder shows the same wherever it is moved or
/// opened (a CI artefact, a copy on another machine); each output links to its real file by an
/// absolute `file://` URL, which works where the outputs are.
struct HTMLReport {
    /// The run's totals (its `items` are not read: `page` holds what is shown of them).
    let report: RunReport
    let page: Page
    /// What relative input names resolve against (nil: the current directory).
    let inputDirectory: URL?

    /// The page of `report`, whose items are all at hand.
    init(report: RunReport, inputDirectory: URL?) {
        self.init(report: report, page: Page(items: report.items), inputDirectory: inputDirectory)
    }

    /// The page of a run's totals in `report` and the items `page` picked.
    init(report: RunReport, page: Page, inputDirectory: URL?) {
        self.report = report
        self.page = page
        self.inputDirectory = inputDirectory
    }

    /// At most this many cards: a run over 100,000 inputs must not make a page no browser can
    /// open. Failed inputs come first, so none is hidden behind successes; `report.json` holds all.
    static let maxCards = 1000

    /// A preview of an input: an embedded JPEG, and where it came from.
    struct Preview: Sendable {
        let uri: String
        let width: Int
        let height: Int
        /// The output the preview was made from, when the input itself could not be used.
        let fromOutput: String?
    }

    func render() -> String {
        let cards = page.cards
        let (previews, thumbnails) = makePreviews(for: cards)
        var html = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self' data: file:; style-src 'unsafe-inline'">
            <title>\("\(report.pipeline) · pipeline report".htmlEscapedShowingControls)</title>
            <style>\(Self.styleSheet)</style>
            </head>
            <body>

            """
        html += header()
        html += "<main>\n"
        html += runWarnings()
        html += failures()
        html += stageChart()
        html += "<section class=\"inputs\">\n<h2>Inputs</h2>\n"
        if page.itemCount > cards.count {
            html +=
                "<p class=\"note\">Showing \(cards.count) of \(page.itemCount) inputs, failures first; "
                + "<code>\(ReportWriter.jsonFileName)</code> lists them all.</p>\n"
        }
        html += "<div class=\"grid\">\n"
        for ((item, preview), outputs) in zip(zip(cards, previews), thumbnails) {
            html += card(item, preview: preview, thumbnails: outputs)
        }
        html += "</div>\n</section>\n</main>\n"
        html +=
            "<footer>pipeline \(report.version.htmlEscapedShowingControls) · <code>\(ReportWriter.jsonFileName)</code> in this folder holds the same data</footer>\n"
        html += "</body>\n</html>\n"
        return html
    }

    // MARK: Header

    private func header() -> String {
        let finished = report.succeeded + report.failed
        let rate = report.elapsedSeconds > 0 ? Double(finished) / report.elapsedSeconds : 0
        var totals: [(String, String, String)] = [
            ("inputs", "\(report.inputs)", ""),
            ("succeeded", "\(report.succeeded)", report.succeeded > 0 ? "good" : ""),
            ("failed", "\(report.failed)", report.failed > 0 ? "bad" : ""),
        ]
        if report.notRun > 0 { totals.append(("not run", "\(report.notRun)", "bad")) }
        totals.append(("outputs written", "\(report.outputsWritten)", ""))
        if report.outputsUpToDate > 0 { totals.append(("up to date", "\(report.outputsUpToDate)", "")) }
        totals.append(("time", Self.duration(report.elapsedSeconds), ""))
        // A rate of inputs that all failed would read as images made.
        if report.succeeded > 0 { totals.append(("images/s", String(format: "%.1f", rate), "")) }
        var html = "<header class=\"top\">\n<h1>\(report.pipeline.htmlEscapedShowingControls)</h1>\n"
        html += "<p class=\"meta\">pipeline run report · started \(Self.timestamp(report.startedAt))</p>\n"
        if report.cancelled {
            html += "<p class=\"banner\">The run was cancelled: \(report.notRun) input\(report.notRun == 1 ? "" : "s") did not run.</p>\n"
        }
        if let missing = report.missingShards, !missing.isEmpty {
            let shards = missing.map(String.init).joined(separator: ", ")
            html += "<p class=\"banner\">Not the whole run: no report of shard\(missing.count == 1 ? "" : "s") \(shards) was merged.</p>\n"
        }
        html += "<dl class=\"totals\">\n"
        for (label, value, kind) in totals {
            html += "<div class=\"total \(kind)\"><dt>\(label)</dt><dd>\(value.htmlEscapedShowingControls)</dd></div>\n"
        }
        html += "</dl>\n</header>\n"
        return html
    }

    /// What the run warned of beside its inputs, such as entries a pattern skipped: said on
    /// the page, which may be all a CI artefact keeps of the run.
    private func runWarnings() -> String {
        guard let warnings = report.warnings, !warnings.isEmpty else { return "" }
        var html = "<section class=\"warnings\">\n<h2>Warnings</h2>\n<ul class=\"banner\">\n"
        for warning in warnings { html += "<li>\(warning.htmlEscapedShowingControls)</li>\n" }
        return html + "</ul>\n</section>\n"
    }

    // MARK: Failures

    private func failures() -> String {
        guard page.failureCount > 0 else { return "" }
        var html = "<section class=\"failures\">\n<h2>Failures <span class=\"count\">\(page.failureCount)</span></h2>\n"
        html +=
            "<div class=\"scroll\"><table>\n<thead><tr><th>input</th><th>output</th><th>stage</th><th>reason</th></tr></thead>\n<tbody>\n"
        for row in page.failures {
            html +=
                "<tr><td class=\"path\">\(row.input.htmlEscapedShowingControls)</td>"
                + "<td>\(row.outputFile.map(\.htmlEscapedShowingControls) ?? "<span class=\"dim\">whole input</span>")</td>"
                + "<td><span class=\"stage\">\((row.stage?.rawValue ?? "?").htmlEscapedShowingControls)</span>"
                + (row.step.map { " <code>\($0.description.htmlEscapedShowingControls)</code>" } ?? "") + "</td>"
                + "<td class=\"reason\">\(row.reason.htmlEscapedShowingControls)</td></tr>\n"
        }
        html += "</tbody>\n</table></div>\n"
        if page.failureCount > page.failures.count {
            html += "<p class=\"note\">\(page.failureCount - page.failures.count) more in <code>\(ReportWriter.jsonFileName)</code>.</p>\n"
        }
        html += "</section>\n"
        return html
    }

    // MARK: Stages

    /// One bar per stage that ran: seconds its lanes worked (summed) and seconds its operations
    /// waited for a free lane, on one scale, so the bottleneck is the longest bar.
    private func stageChart() -> String {
        let stages = report.stages.filter { $0.operations > 0 }
        var html = "<section class=\"stages\">\n<h2>Time per stage</h2>\n"
        guard let longest = stages.map({ $0.busySeconds + $0.waitSeconds }).max(), longest > 0 else {
            return html + "<p class=\"note\">No stage recorded any work.</p>\n</section>\n"
        }
        html +=
            "<p class=\"legend\"><span class=\"key busy\"></span>working <span class=\"key wait\"></span>waiting for a free lane"
            + " <span class=\"dim\">· seconds summed over operations; the longest bar is \(Self.duration(longest))</span></p>\n"
        html += "<div class=\"chart\">\n"
        let width = 1000.0
        for stage in stages {
            let busy = stage.busySeconds / longest * width
            let wait = stage.waitSeconds / longest * width
            let lanes = report.elapsedSeconds > 0 ? stage.busySeconds / (report.elapsedSeconds * Double(max(1, stage.concurrency))) : 0
            let name = stage.stage.rawValue
            let label = "\(name): working \(Self.duration(stage.busySeconds)), waiting \(Self.duration(stage.waitSeconds))"
            html += "<div class=\"row\">"
            html +=
                "<div class=\"label\"><b>\(name)</b> <span class=\"dim\">\(stage.concurrency) lane\(stage.concurrency == 1 ? "" : "s") · \(stage.operations) op\(stage.operations == 1 ? "" : "s")</span></div>"
            html +=
                "<svg class=\"stage-bar\" data-stage=\"\(name)\" viewBox=\"0 0 \(Int(width)) 20\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"\(label.htmlEscapedShowingControls)\">"
            html += "<title>\(label.htmlEscapedShowingControls)</title>"
            html += "<rect class=\"track\" x=\"0\" y=\"0\" width=\"\(Int(width))\" height=\"20\"/>"
            html += "<rect class=\"busy\" x=\"0\" y=\"0\" width=\"\(Self.svgNumber(busy))\" height=\"20\"/>"
            html += "<rect class=\"wait\" x=\"\(Self.svgNumber(busy))\" y=\"0\" width=\"\(Self.svgNumber(wait))\" height=\"20\"/>"
            html += "</svg>"
            html +=
                "<div class=\"value\">\(Self.duration(stage.busySeconds)) <span class=\"dim\">+ \(Self.duration(stage.waitSeconds)) waiting · lanes \(Int((lanes * 100).rounded()))% busy</span></div>"
            html += "</div>\n"
        }
        html += "</div>\n</section>\n"
        return html
    }

    // MARK: Cards

    private func card(_ item: RunReport.Item, preview: Preview?, thumbnails: [String: Preview]) -> String {
        let failed = item.status == .failed
        var html = "<article class=\"card\(failed ? " failed" : "")\">\n"
        html += "<header><h3 title=\"\(item.input.htmlEscapedShowingControls)\">\(item.input.htmlEscapedShowingControls)</h3>"
        html += "<span class=\"badge\">\(failed ? "failed" : "ok")</span></header>\n"
        var facts: [String] = []
        if let width = item.width, let height = item.height { facts.append("\(width)×\(height)") }
        if let bytes = item.bytes { facts.append(Self.bytes(bytes)) }
        let worked = Stage.allCases.compactMap { stage in item.stageSeconds[stage.rawValue].map { "\(stage.rawValue) \(Self.duration($0))" }
        }
        html += "<div class=\"media\">\n"
        html += "<figure class=\"input\">"
        if let preview {
            html +=
                "<div class=\"frame\"><img src=\"\(preview.uri)\" width=\"\(preview.width)\" height=\"\(preview.height)\" alt=\"\("thumbnail of \(item.input)".htmlEscapedShowingControls)\"></div>"
        } else {
            html += "<div class=\"frame missing\"><span>no preview</span></div>"
        }
        html += "<figcaption><b>input</b>"
        if !facts.isEmpty { html += "<br>" + facts.map { "<span class=\"fact\">\($0)</span>" }.joined(separator: " · ") }
        if let source = preview?.fromOutput { html += "<br><span class=\"dim\">preview from \(source.htmlEscapedShowingControls)</span>" }
        html += "</figcaption></figure>\n"
        html += "<div class=\"outputs\">\n"
        for output in item.outputs {
            html += self.output(output, of: item, thumbnail: output.path.flatMap { thumbnails[$0] })
        }
        html += "</div>\n</div>\n"
        // Reasons go below the pictures, at the card's full width: they often hold long paths.
        if let error = item.error {
            html +=
                "<p class=\"error\"><span class=\"stage\">\((item.stage?.rawValue ?? "?").htmlEscapedShowingControls)</span> \(error.htmlEscapedShowingControls)</p>\n"
        } else {
            for output in item.outputs where output.status == .failed {
                html +=
                    "<p class=\"error\"><b>\(output.name.htmlEscapedShowingControls)</b> <span class=\"stage\">\((output.stage?.rawValue ?? "?").htmlEscapedShowingControls)</span> "
                    + (output.step.map { "<code>\($0.description.htmlEscapedShowingControls)</code> " } ?? "")
                    + "\((output.error ?? "unknown reason").htmlEscapedShowingControls)</p>\n"
            }
        }
        if !worked.isEmpty {
            html += "<p class=\"timings dim\">\(worked.joined(separator: " · "))</p>\n"
        }
        html += "</article>\n"
        return html
    }

    private func output(_ output: RunReport.Output, of item: RunReport.Item, thumbnail: Preview?) -> String {
        var html = "<figure class=\"output\(output.status == .failed ? " failed" : "")\">"
        if output.status == .succeeded, let path = output.path {
            // An object in a bucket has no file:// URL a browser could open: its address is shown.
            let linked = !ObjectStores.isObject(path)
            let frame = linked ? "a" : "span"
            html +=
                "<\(frame) class=\"frame checker\"" + (linked ? " href=\"\(Self.fileURL(forPath: path).htmlEscapedShowingControls)\"" : "")
            html += " title=\"\(path.htmlEscapedShowingControls)\">"
            if let thumbnail {
                html +=
                    "<img src=\"\(thumbnail.uri)\" width=\"\(thumbnail.width)\" height=\"\(thumbnail.height)\" loading=\"lazy\" "
                    + "alt=\"\("\(output.name) of \(item.input)".htmlEscapedShowingControls)\"></\(frame)>"
            } else {
                html += "<span>no preview</span></\(frame)>"
            }
            var lines = [
                "<b>\(output.name.htmlEscapedShowingControls)</b> <span class=\"format\">\(output.format.htmlEscapedShowingControls)</span>"
            ]
            var facts: [String] = []
            if let width = output.width, let height = output.height { facts.append("\(width)×\(height)") }
            if let bytes = output.bytes { facts.append(Self.bytes(Int64(bytes))) }
            if !facts.isEmpty { lines.append(facts.map { "<span class=\"fact\">\($0)</span>" }.joined(separator: " · ")) }
            if let bytes = output.bytes, let inputBytes = item.bytes, inputBytes > 0 {
                lines.append(Self.saving(output: Int64(bytes), input: inputBytes))
            }
            // What a quality target's search chose, so the choice is seen beside the file.
            if let quality = output.quality {
                // Short of its target, the score has the places that tell it from the target.
                let short = output.ssimulacra2.flatMap { score in
                    output.ssimulacra2Target.flatMap { score < $0 ? score.formatted(places: 1, apartFrom: $0) : nil }
                }
                let score = output.ssimulacra2.map { " · SSIMULACRA 2 " + (short?.0 ?? String(format: "%.1f", $0)) } ?? ""
                lines.append("<span class=\"quality\">quality \(quality), searched\(score)</span>")
                if let short { lines.append("<span class=\"short\">short of the target \(short.1)</span>") }
            }
            html += "<figcaption>\(lines.joined(separator: "<br>"))</figcaption>"
        } else {
            html +=
                "<div class=\"frame missing\" role=\"img\" aria-label=\"\("\(output.name) not written".htmlEscapedShowingControls)\"><span>failed</span></div>"
            html +=
                "<figcaption><b>\(output.name.htmlEscapedShowingControls)</b> <span class=\"format\">\(output.format.htmlEscapedShowingControls)</span></figcaption>"
        }
        html += "</figure>\n"
        return html
    }

    // MARK: Previews

    /// Thumbnails for `items`, in their order: each input's preview, and each written output's
    /// by output name; made on as many threads as there are cores. Synchronous: async callers go
    /// through `ReportWriter.write(…) async`, which runs this on a Dispatch queue, never on
    /// Swift's cooperative threads.
    private func makePreviews(for items: [RunReport.Item]) -> (inputs: [Preview?], outputs: [[String: Preview]]) {
        let results = Locked<[Int: (input: Preview?, outputs: [String: Preview])]>([:])
        let sources = items.map(previewSources)
        // Dispatch's parallel loop: the caller is synchronous and libvips blocks, so the loop
        // runs on Dispatch's pool, a thread per core, and returns when every item is done.
        DispatchQueue.concurrentPerform(iterations: items.count) { index in
            var outputs: [String: Preview] = [:]
            for output in items[index].outputs where output.status == .succeeded {
                guard let path = output.path, let made = ReportThumbnail.dataURI(forImageAt: path) else { continue }
                // By path: an output with widths and formats has one name and several files.
                outputs[path] = Preview(uri: made.uri, width: made.width, height: made.height, fromOutput: output.name)
            }
            var input: Preview?
            for (path, fromOutput) in sources[index] {
                if fromOutput != nil, let made = outputs[path] {
                    input = made
                    break
                }
                if fromOutput == nil, let made = ReportThumbnail.dataURI(forImageAt: path) {
                    input = Preview(uri: made.uri, width: made.width, height: made.height, fromOutput: nil)
                    break
                }
            }
            results.withLock { [input, outputs] in $0[index] = (input, outputs) }
        }
        return results.withLock { made in (items.indices.map { made[$0]?.input }, items.indices.map { made[$0]?.outputs ?? [:] }) }
    }

    /// Where a preview can come from, best first: the input file itself when it is local and was
    /// decoded in the run, then its largest output (for URLs: the page must need no network).
    private func previewSources(_ item: RunReport.Item) -> [(path: String, fromOutput: String?)] {
        var sources: [(String, String?)] = []
        if !Self.isRemote(item.input), item.error == nil {
            sources.append((inputPath(item.input), nil))
        }
        let written = item.outputs.filter { $0.status == .succeeded && $0.path != nil }
        if let largest = written.max(by: { ($0.width ?? 0) * ($0.height ?? 0) < ($1.width ?? 0) * ($1.height ?? 0) }),
            let path = largest.path
        {
            sources.append((path, largest.name))
        }
        return sources
    }

    private func inputPath(_ input: String) -> String {
        if input.hasPrefix("/") { return input }
        let base = inputDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
        return base.appendingPathComponent(input).path
    }

    static func isRemote(_ input: String) -> Bool {
        let lowered = input.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }
}
