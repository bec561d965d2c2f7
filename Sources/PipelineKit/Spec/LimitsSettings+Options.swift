/// The `limits` section's keys, with their defaults: the schema, the reference docs and the reader
/// all take them from here.
extension LimitsSettings {
    /// The keys of the `limits` section.
    static var options: [Option] {
        [
            Option(
                "itemTimeout", .duration, default: JSONNode(plain: Units.text(seconds: LimitsSettings.defaultItemTimeout)),
                help:
                    "longest one input may take from the start of its decode to the commit of its last output, waits between "
                    + "its stages included; past it the work is stopped inside libvips, its temporary files removed, and the "
                    + "input fails while the others go on; \"0s\" for no limit")
        ]
    }
}
