import Testing
@testable import ReceiptServer

/// ImportTally: `done` counts the ids over from the list's start, never past one still in
/// flight, so that an import resumed from it skips none; ImportPacer spaces an endpoint's calls.
@Suite struct ImportTallyTests {
    @Test func doneStopsAtTheFirstIdStillInFlight() async {
        let tally = ImportTally(ReceiptServer.ImportSummary(total: 4))
        let handed = [await tally.next(), await tally.next(), await tally.next(), await tally.next(), await tally.next()]
        #expect(handed == [0, 1, 2, 3, nil])
        await tally.finish(2, .imported)
        await tally.finish(1, .unknownToApple)
        #expect(await tally.summary.done == 0)  // id 0 is still in flight
        await tally.finish(0, .alreadyCurrent)
        var summary = await tally.summary
        #expect(summary.done == 3 && summary.imported == 1 && summary.unknownToApple == 1 && summary.alreadyCurrent == 1)
        await tally.finish(3, .refused("no"))
        summary = await tally.summary
        #expect(summary.done == 4 && summary.refused == 1)
    }

    @Test func aResumedTallyHandsOnFromWhereTheSavedOneStopped() async throws {
        let saved = try #require(ReceiptServer.ImportSummary(saved: "3 1 1 1 0", total: 5))
        #expect(saved.resumed && saved.done == 3 && saved.imported == 1)
        let tally = ImportTally(saved)
        #expect(await tally.next() == 3)
        // A saved position whose counts do not add up, or that runs past the list, is not resumed.
        #expect(ReceiptServer.ImportSummary(saved: "3 1 1 0 0", total: 5) == nil)
        #expect(ReceiptServer.ImportSummary(saved: "6 6 0 0 0", total: 5) == nil)
        #expect(ReceiptServer.ImportSummary(saved: "-1 -1 0 0 0", total: 5) == nil)
        // Counts that would overflow their sum (a store edited by hand) are refused, not added up.
        #expect(ReceiptServer.ImportSummary(saved: "0 9223372036854775807 1 0 0", total: 5) == nil)
    }

    @Test func thePacerSpacesAnEndpointsCalls() async throws {
        let pacer = ImportPacer(callsPerSecond: 50)  // 20 ms apart
        let start = ContinuousClock.now
        for _ in 0..<6 { try await pacer.wait(.history) }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(100))  // five intervals after the first call
    }
}
