import BLECore
import Dispatch
import Testing

@Suite struct LockedTests {
    /// Threads taking one counter each exactly once per increment: no update lost, no index handed out twice
    /// (the pattern BatchRunner uses to hand files to its workers).
    @Test(arguments: [2, 8])
    func everyIncrementCountsOnce(threads: Int) {
        let next = Locked(0)
        let taken = Locked<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<5_000 {
                let i = next.withLock { n -> Int in
                    defer { n += 1 }; return n
                }
                if i % 1_000 == 0 { taken.withLock { $0.append(i) } }
            }
        }
        #expect(next.withLock { $0 } == threads * 5_000)
        #expect(taken.withLock { $0.sorted() } == Array(stride(from: 0, to: threads * 5_000, by: 1_000)))
    }

    /// Errors thrown inside pass through with their type, and the lock is released.
    @Test func rethrowsAndUnlocks() {
        struct Stop: Error {}
        let value = Locked("a")
        #expect(throws: Stop.self) { try value.withLock { (_: inout String) throws(Stop) in throw Stop() } }
        #expect(value.withLock { $0 + "b" } == "ab")
    }
}
