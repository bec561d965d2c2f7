import Foundation

/// The `focusPoints` file: each input's point for `"position": "focus"`.
extension DefinitionBuilder {
    /// `step`, or nil with a problem at `path` when it reads the inputs' focus points and the
    /// file names no `focusPoints` file to read them from.
    mutating func checkFocusPoints(_ step: any ImageProcessing, at path: String, location: SourceLocation?) -> (any ImageProcessing)? {
        guard step.readsFocusPoint, !hasFocusPoints else { return step }
        problems.append(
            .init(
                path: path, location: location,
                message: "\"focus\" keeps each input's point from the focusPoints file, and the pipeline names none: "
                    + "add \"focusPoints\": \"FILE\" at the top level, or give a point as {\"x\": 0.5, \"y\": 0.5}"))
        return nil
    }

    /// The points of the `focusPoints` file `root` names, nil when it names none or the file
    /// cannot be read (with the problem, naming the file and the key at fault).
    mutating func readFocusPoints(_ root: JSONNode) -> FocusPoints? {
        guard let node = root["focusPoints"], case .string(let name) = node.value else { return nil }
        let file = URL(fileURLWithPath: name, relativeTo: baseDirectory).standardizedFileURL
        do {
            return try FocusPoints(contentsOf: file, baseDirectory: baseDirectory)
        } catch {
            for fault in [error] + error.more {
                problems.append(.init(path: "focusPoints", location: node.location, message: fault.description, fileAtFault: file.path))
            }
            return nil
        }
    }
}
