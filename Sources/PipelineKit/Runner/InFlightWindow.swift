import Vips

/// Backpressure: at most `width` elements between the first stage and the last. A new one
/// starts only when one finishes, so memory does not grow with the number of inputs, and a
/// fast fetch stage waits for a slow encoder.
///
/// An element that must wait for something other elements do not need (memory for a decode
/// that cannot stream) may step aside (`Slot.stepAside`): while it waits it does not count,
/// and the window starts another, up to `asideLimit` waiting at once.
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
        let slot = Slot(mailbox: { mailbox.post($0 ? .steppedAside : .returned) })
        return await withTaskGroup(of: Void.self) { group in
            var next = 0, working = 0, aside = 0, unfinished = 0, peak = 0
            var announced = false
            // The first fill starts a window's worth even when already cancelled (each element
            // then sees the cancellation itself); later ones start nothing once cancelled.
            func fill(first: Bool = false) {
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
                case .returned:
                    working += 1
                    aside -= 1
                }
                fill()
            }
            return peak
        }
    }

    /// What an element's work may tell the window.
    struct Slot: Sendable {
        fileprivate let mailbox: @Sendable (_ steppingAside: Bool) -> Void

        /// Runs `wait` with this element stepped aside: the window may start another meanwhile.
        func stepAside<T: Sendable>(while wait: () async -> T) async -> T {
            mailbox(true)
            defer { mailbox(false) }
            return await wait()
        }

        /// A slot for work run outside a window (tests, single elements).
        static let detached = Slot(mailbox: { _ in })
    }

    private enum Event<Result: Sendable>: Sendable {
        case finished(Result)
        case steppedAside
        case returned
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
