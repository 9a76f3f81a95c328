import Foundation
import Testing
import PlaybackKit

@Suite struct TextOutputTests {
    @Test func cFormatPrintsLikePrintf() {
        #expect(String(cFormat: "%.3f s", 1.5) == "1.500 s")
        #expect(String(cFormat: "%02ld:%02ld:%02ld", 1, 2, 3) == "01:02:03")
        #expect(String(cFormat: "%+.1f MiB", -2.25) == "-2.2 MiB")
        #expect(String(cFormat: "%.0f %% ≤ %.2f×", 42.0, 1.5) == "42 % ≤ 1.50×")
        #expect(String(cFormat: "%g", 7.0) == "7")
        #expect(String(cFormat: "no arguments") == "no arguments")
    }

    @Test func cFormatGrowsForLongText() {
        let long = String(repeating: "x", count: 1000)
        #expect(String(cFormat: long + "%ld", 5) == long + "5")
    }

    @Test func trimming() {
        #expect("  a b \t".trimmingBlanks() == "a b")
        #expect(" a\n".trimmingBlanks() == "a\n")
        #expect("\n a \r\n".trimmingWhitespace() == "a")
        #expect("\"Debian\"".trimming { $0 == "\"" } == "Debian")
        #expect("   ".trimmingBlanks() == "")
    }
}

@Suite struct ThreadingTests {
    @Test func conditionWakesWaiterAndTimesOut() {
        let condition = ConditionVariable()
        let ready = Locked(false)
        condition.lock()
        let started = Date()
        #expect(condition.wait(timeout: 0.05) == false)
        #expect(Date().timeIntervalSince(started) >= 0.04)
        condition.unlock()

        DetachedThread.start(name: "test.signal") {
            condition.withLock {
                ready.set(true)
                condition.broadcast()
            }
        }
        condition.lock()
        while !ready.get() {
            #expect(condition.wait(until: monotonicSeconds() + 5))
        }
        condition.unlock()
    }

    @Test func detachedThreadIsNamedAndKnowsItself() {
        let done = ConditionVariable()
        let seen = Locked<(name: String, isCurrent: Bool)?>(nil)
        DetachedThread.start(name: "a-rather-long-thread-name") {
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            let current = DetachedThread.current
            done.withLock {
                seen.set((name.trimmingWhitespace(), DetachedThread.isCurrent(current)))
                done.broadcast()
            }
        }
        done.lock()
        while seen.get() == nil { done.wait(timeout: 5) }
        done.unlock()
        #expect(seen.get()?.name == "a-rather-long-t")
        #expect(seen.get()?.isCurrent == true)
        #expect(!DetachedThread.isCurrent(0))
    }
}
