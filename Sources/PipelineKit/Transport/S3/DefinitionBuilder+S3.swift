extension DefinitionBuilder {
    /// The `s3` section; an endpoint that is not an http(s) URL, or has a query, is a problem.
    mutating func readS3(_ root: JSONNode) throws(OptionError) -> S3Settings {
        let s3 = reader(root["s3"], optionsOf: "s3")
        let settings = S3Settings(
            profile: try s3.optionalString("profile"), region: try s3.optionalString("region"),
            endpoint: try s3.optionalString("endpoint"))
        if let endpoint = settings.endpoint, let problem = S3Configuration.problem(ofEndpoint: endpoint) {
            problems.append(.init(path: "s3.endpoint", location: root["s3"]?["endpoint"]?.location, message: "the " + problem))
        }
        return settings
    }
}
