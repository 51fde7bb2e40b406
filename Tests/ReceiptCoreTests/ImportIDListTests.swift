import Testing
@testable import ReceiptCore

/// ImportIDList: the ids `receipt import` is given, one a line or one column of a CSV.
struct ImportIDListTests {
    private func list(_ text: String, column: String? = nil) throws(ReceiptError) -> ImportIDList {
        try ImportIDList(Array(text.utf8), column: column, source: "ids.csv")
    }

    private func refusal(_ text: String, column: String? = nil) -> String {
        do {
            _ = try list(text, column: column)
            return "accepted"
        } catch {
            #expect(error.status == .invalidArgument)
            return error.detail
        }
    }

    @Test func oneIdALineKeepsTheOrderAndSkipsBlankAndRepeatedOnes() throws {
        let ids = try list("2000000000000001\r\n\n  2000000000000003 \n2000000000000001\n2000000000000002")
        #expect(ids.ids == ["2000000000000001", "2000000000000003", "2000000000000002"])
        #expect(ids.repeated == 1 && ids.empty == 1)
    }

    @Test func aCSVColumnIsReadWithQuotesCommasAndNewlinesInsideCells() throws {
        let text = "\u{FEFF}name,Original_Transaction_ID,store\n\"Smith, \"\"J\"\"\",\"2000000000000001\",app_store\n"
            + "\"two\nlines\",,play_store\r\nx,2000000000000002,app_store\n"
        let ids = try list(text, column: "original_transaction_id")
        #expect(ids.ids == ["2000000000000001", "2000000000000002"])
        #expect(ids.empty == 1)
    }

    @Test func blankLinesOfACSVAreSkippedAndAnEmptyListIsRefused() throws {
        let ids = try list("name,id\r\n\r\nx,1\n , \n", column: "id")
        #expect(ids.ids == ["1"] && ids.empty == 2)
        #expect(refusal("name,id\nx,\n", column: "id") == "ids.csv: no original transaction id in the column id: nothing to import")
        #expect(refusal("\n\n").hasSuffix("nothing to import"))
    }

    @Test func textAfterAQuotedCellIsRefused() {
        #expect(refusal("id\n\"12\"34\n", column: "id") == "ids.csv:2: text after a quoted cell's closing quote")
        #expect((try? list("id,x\r\n\"12\",y\r\n", column: "id"))?.ids == ["12"])
    }

    @Test func anEntryThatIsNoIdIsRefusedNamingItsLine() {
        #expect(refusal("2000000000000001\nGPA.3345-1234\n") == #"ids.csv:2: "GPA.3345-1234" is no original transaction id (1 to 20 digits)"#)
        #expect(refusal("1\n123456789012345678901\n").hasPrefix("ids.csv:2: "))
        #expect(refusal("id,name\n1,x\n").contains("name the column of ids with --column"))
        // The line a record starts on, past a cell that spans lines.
        #expect(refusal("a,id\n\"x\ny\",1\nz,-5\n", column: "id").hasPrefix("ids.csv:4: "))
    }

    @Test func aCSVWithoutTheColumnOrWithShortRowsIsRefused() {
        #expect(refusal("a,b\n1,2\n", column: "id") == "ids.csv:1: no column id; the columns are a, b")
        #expect(refusal("a,id\n1\n", column: "id") == "ids.csv:2: 1 cell, and the column id is cell 2")
        #expect(refusal("", column: "id").contains("needs a first row naming the columns"))
        #expect(refusal("id\n\"1\n", column: "id") == "ids.csv:2: a quoted cell is never closed")
        #expect(throws: ReceiptError.self) { try ImportIDList([0x31, 0x0A, 0xFF, 0x0A], column: nil, source: "ids.csv") }
    }

    @Test func theIdentityNamesTheIdsInOrder() throws {
        let first = try list("1\n2\n")
        #expect(first.identity == (try list("1\n\n2\n1\n")).identity)
        #expect(first.identity != (try list("2\n1\n")).identity)
        #expect(first.identity.utf8.count == 64)
    }

    @Test func aListPastItsBoundIsRefusedUnread() {
        let big = [UInt8](repeating: 0x31, count: ImportIDList.maxBytes + 1)
        #expect(throws: ReceiptError.self) { try ImportIDList(big, column: nil, source: "big") }
    }
}
