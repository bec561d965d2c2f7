import Foundation

extension CommandRunner {
    /// Runs `pipeline` from bash under `ulimit -v kilobytes` (RLIMIT_AS), output and errors
    /// together; nil when this build cannot start under any such limit: AddressSanitizer and
    /// ThreadSanitizer reserve terabytes of address space for their shadow memory, so a
    /// sanitized binary has nothing to show there.
    package static func runUnderAddressSpaceLimit(kilobytes: Int, _ arguments: [String]) throws -> (status: Int32, output: String)? {
        func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = ["-c", "ulimit -v \(kilobytes) && exec \"$@\" 2>&1", "bash", executable.path] + arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
        guard try run(["--version"]).status == 0 else {
            print("skipped: this build of pipeline cannot start under ulimit -v (a sanitizer's shadow memory)")
            return nil
        }
        return try run(arguments)
    }
}
