import ReceiptCore

/// The page's charts: server-rendered SVG (no script, as the page's Content-Security-Policy
/// requires), bars per interval for each series, a labelled y axis with round ticks from 0, and
/// the intervals' instants along the x axis.
struct DashboardChart {
    /// A series: its name in the legend and the bars' titles, its colour, a value per interval.
    struct Series {
        let name: String
        let color: String
        let values: [Int64]
    }

    /// The `id` of the `<svg>` (`flows-chart`).
    let id: String
    /// What the y axis counts (`subscriptions`).
    let unit: String
    /// The instant each interval's bars stand for (its start, or the midnight it is read at), in
    /// epoch milliseconds, in order: the x axis' labels and the bars' titles.
    let instants: [Int64]
    /// What the x axis shows (`month starting (UTC)`).
    let xTitle: String
    let interval: FigureInterval
    let series: [Series]
    /// A value as the ticks and the bars' titles show it, escaped (a count by default; money for MRR).
    var label: (Int64) -> String = { String($0) }

    var svg: String {
        let ticks = DashboardPage.ticks(reaching: series.flatMap(\.values).max() ?? 0)
        // The left margin holds the longest tick (at least seven digits' room) beside the axis' title.
        let longest = ticks.map { label($0).count }.max() ?? 0
        let (width, height, top, left) = (720.0, 200.0, 10.0, max(72.0, 24.0 + 6.5 * Double(longest)))
        let highest = Double(max(1, ticks.last ?? 1))
        let slot = width / Double(max(1, instants.count))
        let bar = slot / Double(series.count + 1)
        var chart = "<p class=\"legend\">"
            + series.map { "<span style=\"background:\($0.color)\"></span>\($0.name)" }.joined() + "</p>\n"
            + "<svg id=\"\(id)\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(left + width))\" height=\"\(Int(height + 48))\" "
            + "role=\"img\" aria-label=\"\(series.map(\.name).joined(separator: ", ")) per \(interval.rawValue)\">\n"
        // The y axis: a gridline and a label at each tick, and what is counted.
        for tick in ticks {
            let y = Self.number(top + height - height * Double(tick) / highest)
            chart += "<line x1=\(Self.number(left)) y1=\(y) x2=\(Self.number(left + width)) y2=\(y) stroke=\"\(tick == 0 ? "#999" : "#eee")\"/>\n"
                + "<text class=\"y-tick\" x=\(Self.number(left - 6)) y=\(y) dy=\"4\" font-size=\"11\" text-anchor=\"end\">\(label(tick))</text>\n"
        }
        chart += "<text class=\"y-title\" transform=\"translate(12 \(Int(top + height / 2))) rotate(-90)\" font-size=\"11\" "
            + "text-anchor=\"middle\">\(unit)</text>\n"
            + "<text class=\"x-title\" x=\(Self.number(left + width / 2)) y=\"\(Int(height + top + 34))\" font-size=\"11\" "
            + "text-anchor=\"middle\">\(xTitle)</text>\n"
        let labelEvery = max(1, instants.count / 12)
        for (index, start) in instants.enumerated() {
            for (position, entry) in series.enumerated() {
                let value = index < entry.values.count ? entry.values[index] : 0
                let barHeight = height * Double(value) / highest
                chart += "<rect x=\(Self.number(left + Double(index) * slot + bar * (Double(position) + 0.5))) "
                    + "y=\(Self.number(top + height - barHeight)) width=\(Self.number(bar)) height=\(Self.number(barHeight)) "
                    + "fill=\"\(entry.color)\"><title>\(DashboardPage.date(start)): \(label(value)) \(entry.name)</title></rect>\n"
            }
            if index % labelEvery == 0 {
                chart += "<text x=\(Self.number(left + Double(index) * slot + 2)) y=\"\(Int(height + top + 16))\" font-size=\"11\">"
                    + "\(DashboardPage.date(start))</text>\n"
            }
        }
        return chart + "</svg>\n"
    }

    /// A coordinate as an SVG attribute, to a tenth.
    static func number(_ value: Double) -> String { "\"\(Double(Int(value * 10)) / 10)\"" }
}
