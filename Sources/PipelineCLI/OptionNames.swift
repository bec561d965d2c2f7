import ArgumentParser
import Foundation

/// The option names a command accepts, read from the parser's own description of the command
/// tree (the JSON of `--experimental-dump-help`), so that they cannot drift from the declarations
/// and include what the tree adds to each command (`--version`).
struct OptionNames {
    /// Names written with two dashes (`quality` for `--quality`).
    var long: [String] = []
    /// Letters written with one dash (`q` for `-q`).
    var short: Set<Character> = []
    /// The long names of flags, which take no value (`print-pipeline`).
    var flags: Set<String> = []
    /// The long names of options that take one value, given once (`shard`), not a list.
    var singleValued: Set<String> = []

    /// The names of the command `path` names below `root` (`["cache", "stats"]`); none when
    /// there is no such command.
    init(ofCommandAt path: [String], in root: any ParsableCommand.Type) {
        struct Tree: Decodable { var command: Command }
        struct Command: Decodable {
            var commandName: String
            var arguments: [Argument]?
            var subcommands: [Command]?
        }
        struct Argument: Decodable {
            var kind: String?
            var names: [Name]?
            var isRepeating: Bool?
        }
        struct Name: Decodable {
            var kind: String
            var name: String
        }
        var command = try? JSONDecoder().decode(Tree.self, from: Data(root._dumpHelp().utf8)).command
        for name in path {
            command = command?.subcommands?.first { $0.commandName == name }
        }
        for argument in command?.arguments ?? [] {
            for name in argument.names ?? [] {
                switch name.kind {
                case "long":
                    long.append(name.name)
                    if argument.kind == "flag" { flags.insert(name.name) }
                    if argument.kind == "option", argument.isRepeating != true { singleValued.insert(name.name) }
                case "short": if let letter = name.name.first { short.insert(letter) }
                default: break
                }
            }
        }
    }
}
