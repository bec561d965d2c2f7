import Foundation

/// An independent check of JSON documents against a JSON Schema: Python's `jsonschema`
/// (draft 2020-12), as editors and site generators would use it. `.ci/setup` installs it.
package enum SchemaValidator {
    /// The number of errors in each document, in order; throws when Python or `jsonschema` is
    /// missing or the schema itself is not a valid draft 2020-12 schema.
    package static func errorCounts(schema: String, documents: [String]) throws -> [Int] {
        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            validator = jsonschema.Draft202012Validator(schema)
            for path in sys.argv[2:]:
                errors = list(validator.iter_errors(json.load(open(path))))
                print(len(errors), *[e.message.replace(chr(10), " ") for e in errors[:3]], sep=" | ")
            """
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", script, schema] + documents
        let output = Pipe()
        python.standardOutput = output
        try python.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        python.waitUntilExit()
        guard python.terminationStatus == 0 else { throw Failure(description: "python3 with jsonschema is needed (.ci/setup installs it)") }
        return printed.split(separator: "\n").compactMap { Int($0.split(separator: " ").first ?? "") }
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }
}
