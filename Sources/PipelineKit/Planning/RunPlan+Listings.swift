extension RunPlan.Item {
    /// The listings that need work of their own: neither refused nor a repeat of another.
    var listingsToMake: [RunPlan.Listing] {
        listings.filter { $0.refusal == nil && $0.sameAs == nil }
    }

    /// One report per listing, in listing order, from the reports of `listingsToMake` (in
    /// their order): a refused listing reports its refusal, a repeated one its twin's outcome
    /// under its own name.
    func reportForEveryListing(from made: [ItemReport]) -> [ItemReport] {
        var made = made.makeIterator()
        var reports: [ItemReport] = []
        for listing in listings {
            if let refusal = listing.refusal {
                let error = ItemError(.refused, stage: .fetch, reason: refusal)
                reports.append(
                    ItemReport(
                        input: listing.input, written: [],
                        failures: [ItemFailure(input: listing.input.displayName, output: nil, error: error)],
                        originalSize: nil))
            } else if let twin = listing.sameAs {
                let original = reports[twin]
                reports.append(
                    ItemReport(
                        input: listing.input, written: original.written, failures: original.failures,
                        originalSize: original.originalSize))
            } else if let report = made.next() {
                reports.append(report)
            }
        }
        return reports
    }
}
