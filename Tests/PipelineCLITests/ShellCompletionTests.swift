import Foundation
import TestSupport
import Testing

/// The completions `--generate-completion-script bash` prints, as bash runs them: pipeline
/// files for the commands that take one, and the values of convert's options.
@Suite struct ShellCompletionTests {
    /// What bash offers for the last word of `words`, in `directory`.
    func completions(_ words: [String], script: String, in directory: TemporaryDirectory) throws -> [String] {
        let line = words.joined(separator: " ")
        let program = """
            source "$1"; shift
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
            _pipeline "$1" "${@: -1}" "${@: -2:1}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try CommandRunner.run(
            ["-c", program, "bash", script] + words, in: directory.url, executable: URL(fileURLWithPath: "/bin/bash"))
        #expect(result.status == 0, "\(line): \(result.standardError)")
        return result.standardOutput.split(separator: "\n").map(String.init).sorted()
    }

    @Test func bashCompletesPipelineFilesAndConvertsValues() throws {
        // Given a folder with a pipeline file, another file and a folder, and the bash script
        let directory = try TemporaryDirectory()
        try directory.write(Data("{}".utf8), to: "thumbnails.json")
        try directory.write(Data("x".utf8), to: "thumbs.txt")
        try directory.write(Data("{}".utf8), to: "pipelines/site.json")
        let generated = try CommandRunner.run(["--generate-completion-script", "bash"])
        let script = try directory.write(Data(generated.standardOutput.utf8), to: "pipeline.bash")
        // Then a command that takes a pipeline file offers JSON files and folders
        var commands = ["run", "validate", "watch", "explain"]
        #if Server
        commands.append("serve")
        #endif
        for command in commands {
            #expect(try completions(["pipeline", command, "th"], script: script, in: directory) == ["thumbnails.json"], "\(command)")
        }
        #expect(try completions(["pipeline", "run", "pi"], script: script, in: directory) == ["pipelines"])
        // And convert offers its options' values
        #expect(
            try completions(["pipeline", "convert", "a.jpg", "b.webp", "--fit", "co"], script: script, in: directory) == [
                "contain", "cover",
            ])
        #expect(try completions(["pipeline", "convert", "a.jpg", "b", "--format", "j"], script: script, in: directory) == ["jpeg", "jxl"])
        #expect(try completions(["pipeline", "convert", "a.jpg", "b.jpg", "--keep", "e"], script: script, in: directory) == ["exif"])
    }
}
