/// The bound on bytes held for unfinished work across all connections (``AnalyzerOptions/maxHeldBytes``): partial
/// L2CAP PDUs, credit-based SDUs, long reads and prepared writes. What is held is counted every eighth of the budget
/// fed; past the bound, the largest holders are dropped until half the budget is free.
///
/// Held bytes count buffer capacities, which grow by doubling, so between two counts they can reach about twice the
/// bound; memory stays flat either way.
struct HeldBytesBudget {
    /// One holder of partial work and the bytes it holds.
    struct Holder {
        var bytes: Int
        var index: Int
    }

    /// What to drop to get back within the budget.
    struct Shedding {
        /// Holders to drop, largest first.
        var holders: [Int] = []
        /// Dropping them does not free half the budget: drop everything else held too.
        var rest = false
    }

    let limit: Int
    private var fedSinceCheck = 0
    /// Times the bound was passed, and bytes let go.
    private(set) var sheds = 0
    private(set) var dropped = 0

    init(limit: Int) { self.limit = limit }

    /// L2CAP payload bytes fed: true when it is time to count what is held.
    @inline(__always)
    mutating func feed(_ bytes: Int) -> Bool {
        fedSinceCheck &+= bytes
        return fedSinceCheck > max(65_536, limit >> 3)
    }

    /// Counts `held` bytes against the bound: nil within it; past it, what to drop (`holders()` lists them, asked for
    /// only then).
    mutating func check(held: Int, holders: () -> [Holder]) -> Shedding? {
        fedSinceCheck = 0
        guard held > limit else { return nil }
        sheds += 1
        var total = held
        var shedding = Shedding()
        for h in holders().sorted(by: { $0.bytes > $1.bytes }) where total > limit / 2 {
            shedding.holders.append(h.index)
            total -= h.bytes
            dropped += h.bytes
        }
        shedding.rest = total > limit / 2
        return shedding
    }

    /// Bytes let go outside the holders listed (``Shedding/rest``).
    mutating func droppedElsewhere(_ bytes: Int) { dropped += bytes }
}
