/// The `manifest` section's keys, with their defaults: the schema, the reference docs and the reader
/// all take them from here.
extension ManifestSettings {
    /// The keys of the `manifest` object (a path alone is short for `{"path": …}`).
    static var options: [Option] {
        [
            Option(
                "path", .string(nonEmpty: true), required: true,
                help:
                    "where to write the manifest (JSON) on this machine, relative to this file's folder, for example "
                    + "\"site/images.json\""),
            Option(
                "urlPrefix", .string(nonEmpty: false), default: JSONNode(plain: ""),
                help:
                    "the folder URL put before each file's path relative to the manifest's folder (an output in a bucket: "
                    + "its key) to make its URL, for example \"/img/\" or \"https://cdn.example.com/img\" (a slash is put "
                    + "between when it has none)"),
            Option(
                "urlRoot", .string(nonEmpty: true),
                help:
                    "the folder urlPrefix serves, relative to this file's folder: each file's URL is urlPrefix and its path "
                    + "relative to this folder (default: the manifest's folder), for a manifest kept apart from the images, "
                    + "such as a site generator's data folder (\"public/img\" for the manifest \"src/_data/images.json\")",
                example: #""public/img""#),
        ]
    }
}
