import Vips

/// Backpressure: at most `width` elements between the first stage and the last. A new one
/// starts only when one finishes, so memory does not grow with the number of inputs, and a
/// fast fetch stage waits for a slow encoder.
///
/// An element that must wait for something other elements do not need (memory for a decode
/// that cannot stream) may step aside (`Slot.stepAside`): while it waits it does not count,
/// and the window starts another, up to `asideLimit` waiting at once. Once its wait is over it
/// comes back only into a free place, before any new element starts: what it goes on to hold
/// (a decoded image) counts within `width`, so however many stepped aside, no more than `width`
/// are ever past the wait at once.
struct InFlightWindow: Sendable {
    let width: Int
    /// How many elements may wait aside at once (about: one more may step aside after the
    /// last start), beyond `width` working. 0: an element stepping aside frees no place.
    var asideLimit: Int = 0

    /// Runs `work` for each of `elements` in order, at most `width` working at once, and hands
    /// each result to `completed` on the calling task as it arrives. Once the calling task is
    /// cancelled, no further element starts. `allStarted` runs once no further element will
    /// start (all have, or the task was cancelled). Returns the most that worked at once.
    func run<Element: Sendable, Result: Sendable>(
        _ elements: [Element],
        allStarted: @Sendable () -> Void = {},
        work: @escaping @Sendable (Element, Slot) async -> Result,
        completed: (Result) -> Void
    ) async -> Int {
        let mailbox = Mailbox<Event<Result>>()
        // Places granted to elements coming back: the window grants one for each that asked
        // (`wantsBack`), and one granted before its element joined the queue waits for it here.
        let places = WaitingRoom<Int, Void, Void>(0)
        let slot = Slot(
            steppingAside: { mailbox.post(.steppedAside) },
            comingBack: {
                mailbox.post(.wantsBack)
                await places.wait(()) { granted, waiters in
                    if granted > 0 {
                        granted -= 1
                        waiters.letOutFirst(with: ())
                    }
                }
            })
        // Discarding: a task group keeps each finished child until it is awaited, and results
        // arrive through the mailbox instead, so a plain group would keep one per element.
        return await withDiscardingTaskGroup { group in
            var next = 0, working = 0, aside = 0, wantBack = 0, unfinished = 0, peak = 0
            var announced = false
            // Elements coming back take the free places first, cancelled or not: each must
            // finish for the run to end.
            func readmit() {
                while wantBack > 0, working < max(1, width) {
                    wantBack -= 1
                    aside -= 1
                    working += 1
                    peak = max(peak, working)
                    places.withLock { granted, waiters in
                        if waiters.isEmpty { granted += 1 } else { waiters.letOutFirst(with: ()) }
                    }
                }
            }
            // The first fill starts a window's worth even when already cancelled (each element
            // then sees the cancellation itself); later ones start nothing once cancelled.
            func fill(first: Bool = false) {
                readmit()
                while first || !Task.isCancelled, next < elements.count, working < max(1, width), aside <= asideLimit {
                    let element = elements[next]
                    next += 1
                    working += 1
                    unfinished += 1
                    peak = max(peak, working)
                    group.addTask { mailbox.post(.finished(await work(element, slot))) }
                }
                if !announced, next == elements.count || Task.isCancelled {
                    announced = true
                    allStarted()
                }
            }
            fill(first: true)
            while unfinished > 0 {
                // Every element posts exactly one `finished`, so this loop ends; the mailbox does
                // not end on cancellation, so results of elements that finish after it still arrive.
                switch await mailbox.next() {
                case .finished(let result):
                    working -= 1
                    unfinished -= 1
                    completed(result)
                case .steppedAside:
                    working -= 1
                    aside += 1
                case .wantsBack:
                    wantBack += 1
                }
                fill()
            }
            return peak
        }
    }

    /// What an element's work may tell the window.
    struct Slot: Sendable {
        fileprivate let steppingAside: @Sendable () -> Void
        fileprivate let comingBack: @Sendable () async -> Void

        /// Runs `wait` with this element stepped aside: the window may start another meanwhile.
        /// Then waits for a free place in the window, and returns `wait`'s result.
        func stepAside<T: Sendable>(while wait: () async -> T) async -> T {
            steppingAside()
            let result = await wait()
            await comingBack()
            return result
        }

        /// A slot for work run outside a window (tests, single elements).
        static let detached = Slot(steppingAside: {}, comingBack: {})
    }

    private enum Event<Result: Sendable>: Sendable {
        case finished(Result)
        case steppedAside
        /// An element's wait aside is over: it waits for a free place.
        case wantsBack
    }
}

/// Events from many tasks to one, in order. Unlike `AsyncStream`, waiting does not end when the
/// waiting task is cancelled: the window must still hear every element finish.
private final class Mailbox<Event: Sendable>: Sendable {
    /// Events not yet taken, and the one reader waiting for the next.
    private let room = WaitingRoom<[Event], Void, Event>([])

    func post(_ event: Event) {
        room.withLock { events, waiters in
            if waiters.isEmpty {
                events.append(event)
            } else {
                waiters.letOutFirst(with: event)
            }
        }
    }

    /// The next event; one caller at a time.
    func next() async -> Event {
        await room.wait(()) { events, waiters in
            if !events.isEmpty { waiters.letOutFirst(with: events.removeFirst()) }
        }
    }
}
