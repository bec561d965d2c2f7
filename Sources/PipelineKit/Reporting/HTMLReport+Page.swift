import Foundation

extension HTMLReport {
    /// What the page shows of a run's items: the first cards in card order, and the first
    /// failures by input, each with how many there are in all.
    struct Page: Sendable {
        /// At most `maxCards`, in `cardOrder`.
        var cards: [RunReport.Item] = []
        /// Every item of the run, shown or not.
        var itemCount = 0
        /// At most `maxCards`, by input.
        var failures: [RunReport.Failure] = []
        /// Every failure of the run, shown or not.
        var failureCount = 0

        /// The page of `items`, all at hand.
        init(items: [RunReport.Item]) {
            var selection = Selection()
            for item in items { selection.add(item) }
            self = selection.page
        }

        init() {}
    }

    /// Picks a page from items given one at a time, holding at most twice the page's rows
    /// however many items a run has.
    struct Selection: Sendable {
        private var cards: [RunReport.Item] = []
        private var itemCount = 0
        private var failures: [RunReport.Failure] = []
        private var failureCount = 0

        /// Takes the next item. An input not run has no card: the banner counts them.
        mutating func add(_ item: RunReport.Item) {
            guard item.status != .notRun else { return }
            itemCount += 1
            cards.append(item)
            if cards.count >= 2 * maxCards { cards = Array(cards.sorted(by: cardPrecedes).prefix(maxCards)) }
            guard item.status == .failed else { return }
            let rows = item.failures
            failureCount += rows.count
            failures += rows
            if failures.count >= 2 * maxCards { failures = Array(failures.sorted(by: failurePrecedes).prefix(maxCards)) }
        }

        /// The page of the items taken so far.
        var page: Page {
            var page = Page()
            page.cards = Array(cards.sorted(by: cardPrecedes).prefix(maxCards))
            page.itemCount = itemCount
            page.failures = Array(failures.sorted(by: failurePrecedes).prefix(maxCards))
            page.failureCount = failureCount
            return page
        }
    }

    /// Card order: failed inputs first, then by name (numbers in names compared as numbers).
    static func cardPrecedes(_ left: RunReport.Item, _ right: RunReport.Item) -> Bool {
        if (left.status == .failed) != (right.status == .failed) { return left.status == .failed }
        return RunReport.inputPrecedes(left.input, right.input)
    }

    private static func failurePrecedes(_ left: RunReport.Failure, _ right: RunReport.Failure) -> Bool {
        RunReport.inputPrecedes(left.input, right.input)
    }
}
