"""GET /dashboard, rendered by a real browser (headless Chromium from Debian): the numbers the
page shows, read from its DOM, equal the JSON figures of /v1/stats; a screenshot is kept as a
test artefact (build/test-artefacts/dashboard.png; README's docs/dashboard.png is one)."""

import base64
import decimal
import html
import json
import html.parser
import os
import pathlib
import re
import shutil
import subprocess
import time
import urllib.parse

import pytest

from test_notifications import mint_jws, new_store, news_ca, now, postgres  # noqa: F401 (fixtures)
from test_serve import READ_TOKEN
from store_tables import table
from test_store_facts import DAY, list_all, shaped_server

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARTEFACTS = ROOT / "build" / "test-artefacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class PageFigures(html.parser.HTMLParser):
    """Every element with data-figure: (table id, the row's key, figure) -> value, and -> the text it shows
    (a card's figures: ("cards", its name or name/currency, value, previous or change))."""

    def __init__(self):
        super().__init__()
        self.figures, self.texts, self.table, self.row, self.open = {}, {}, None, None, None

    def handle_data(self, data):
        if self.open:
            self.texts[self.open] = self.texts.get(self.open, "") + data

    def handle_endtag(self, tag):
        self.open = None

    def handle_starttag(self, tag, attributes):
        attributes = dict(attributes)
        if tag == "table":
            self.table = attributes.get("id")
        if tag == "tr":
            self.row = next((attributes[key] for key in ("data-product", "data-currency", "data-start", "data-line")
                             if key in attributes), None)
        if "data-card" in attributes:
            self.table, self.row = "cards", attributes["data-card"]
        if "data-figure" in attributes:
            key = (self.table, self.row, attributes["data-figure"])
            assert key not in self.figures, key
            value = attributes["data-value"]  # an integer; a rate's decimal (a change signed), empty where it is null
            self.figures[key] = None if value == "" else float(value) if "." in value else int(value)
            self.open = key


def browser(tmp_path, *arguments):
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--hide-scrollbars", f"--user-data-dir={tmp_path / 'chromium'}", *arguments],
                          capture_output=True, text=True, timeout=120)


def figures_in_browser(tmp_path, url):
    """The page at `url` as Chromium renders it: its figures (PageFigures) and its DOM."""
    dom = browser(tmp_path, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = PageFigures()
    page.feed(dom.stdout)
    assert page.figures, dom.stdout[:2000]
    money = [key for key in page.figures if key[2].endswith("_milliunits")]
    assert {"mrr", "revenue"} <= {table for table, _, _ in money} <= {"mrr", "revenue", "cohort-revenue", "active-mrr",
                                                                      "mrr-movement"}
    for table, row, figure in money:  # in its currency's symbol and cents, as people read it; a dash for none
        value = page.figures[(table, row, figure)]
        assert page.texts[(table, row, figure)] == ("–" if value is None else money_text(value, row.split("/")[-1]))
    rates = [key for key in page.figures if key[0] == "rates" or (key[0] == "cohorts" and key[2].startswith("retention_"))
             or (key[0] == "churn" and key[2].endswith("_rate"))]
    assert rates
    for key in rates:  # a percentage with two places, a dash where there is no rate
        value = page.figures[key]
        assert page.texts[key] == ("–" if value is None else f"{value * 100:.2f}%"), (key, page.texts[key])
    for (table, card, figure), value in page.figures.items():
        if table == "cards":
            assert page.texts[(table, card, figure)] == card_text(card, figure, value), (card, figure)
    return page.figures, dom.stdout


def card_text(card, figure, value):
    """What a card shows of a figure: a count, a percentage, money; `before: ` the earlier range's;
    the change signed, a rate's in percentage points; a dash for none."""
    name, _, currency = card.partition("/")
    if value is None:
        text = "–"
    elif name.endswith(("_rate", "_to_paying")):
        text = f"{abs(value) * 100:.2f}" + (" points" if figure == "change" else "%")
    elif currency:
        text = money_text(abs(value), currency)
    else:
        text = str(abs(value))
    if value is not None and figure == "change":
        text = ("-" if value < 0 else "+") + text
    elif value is not None and value < 0:
        text = "-" + text
    return "before: " + text if figure == "previous" else text


def money_text(milliunits, currency):
    """The dollars and euros the minted stories pay in, as the page should show them: cents
    rounded half away from zero, thousands grouped."""
    cents = (abs(milliunits) + 5) // 10
    sign = "-" if milliunits < 0 and cents else ""
    return f"{sign}{ {'USD': '$', 'EUR': '€'}[currency]}{cents // 100:,}.{cents % 100:02d}"


def assert_csv_links_give_the_apis_csv(server, dom, product=None):
    """The page links each figure's CSV: with the token as a browser gives it (Basic) or as a bearer
    token, each link answers what /v1/stats/FIGURE answers as CSV for the same parameters."""
    links = {figure: html.unescape(href) for href, figure in re.findall(r'<a href="(/dashboard/csv/(\w+)\?[^"]*)"', dom)}
    assert sorted(links) == ["active", "churn", "cohorts", "flows", "mrr", "mrr_movement", "rates", "revenue",
                             "subscriptions"], links
    basic = "Basic " + base64.b64encode(f"operator:{READ_TOKEN}".encode()).decode()
    for figure, link in links.items():
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)
        # MRR movement is over all products: its link names none.
        assert (query.get("product") or [None])[0] == (None if figure == "mrr_movement" else product), link
        status, data, answer = server.request("GET", link, headers={"Authorization": basic}, token=None)
        assert status == 200 and answer.getheader("Content-Type").startswith("text/csv"), (link, status, data[:200])
        assert server.request("GET", link)[1] == data
        api = server.request("GET", link.replace("/dashboard/csv/", "/v1/stats/") + "&format=csv")
        assert api[0] == 200 and api[1] == data, link
        assert server.request("GET", link, token=None)[0] == 401
    assert server.request("GET", "/dashboard/csv/lifetime_value")[0] == 404
    assert server.request("GET", "/dashboard/csv/flows?format=json")[0] == 400  # always CSV: the page's links take no format


def assert_page_shows_api(shown, server, query):
    """Every figure of the page equals the JSON API's for the same query (the figures judged at
    one instant take its `at` and `product`, and refuse a range), the cohorts where the page was
    asked for them (`cohorts=1`) and none otherwise; the flows' answer."""
    given = urllib.parse.parse_qs(query)
    shows_cohorts = given.pop("cohorts", None) == ["1"]
    query = urllib.parse.urlencode({key: values[0] for key, values in given.items()})
    assert server.request("GET", f"/v1/stats/mrr?{query}")[0] == (400 if given.keys() & {"from", "to", "by"} else 200)
    instant = urllib.parse.urlencode({key: values[0] for key, values in given.items() if key in ("at", "product")})
    subscriptions = server.json("GET", f"/v1/stats/subscriptions?{instant}")[1]
    for entry in subscriptions["by_product"] + [dict(subscriptions["total"], product_id="")]:
        for name in ("active", "grace_period", "billing_retry", "expired", "revoked", "entitled"):
            assert shown[("subscriptions", entry["product_id"], name)] == entry[name], (entry["product_id"], name)
    mrr = server.json("GET", f"/v1/stats/mrr?{instant}")[1]
    assert mrr["currencies"]
    assert len([key for key in shown if key[0] == "mrr" and key[2] == "subscriptions"]) == len(mrr["currencies"])
    for line in mrr["currencies"]:
        assert shown[("mrr", line["currency"], "mrr_milliunits")] == line["mrr_milliunits"]
        assert shown[("mrr", line["currency"], "subscriptions")] == line["subscriptions"]
    flows = server.json("GET", f"/v1/stats/flows?{query}")[1]
    assert len(flows["intervals"]) == len([key for key in shown if key[0] == "flows" and key[2] == "new"])
    for interval in flows["intervals"]:
        row = str(interval["start_ms"])
        for name in ("new", "trial_starts", "renewals", "trial_conversions", "recoveries", "reactivations"):
            assert shown[("flows", row, name)] == interval[name], (row, name)
        assert shown[("flows", row, "refunds")] == interval["refunds"]["count"]
        for name, count in interval["churned"].items():
            assert shown[("flows", row, f"churned_{name}")] == count
    revenue = server.json("GET", "/v1/stats/revenue?" + urllib.parse.urlencode(
        {key: values[0] for key, values in given.items() if key != "at"}))[1]
    lines = [(interval["start_ms"], line) for interval in revenue["intervals"] for line in interval["currencies"]]
    assert lines and len(lines) == len([key for key in shown if key[0] == "revenue" and key[2] == "net_milliunits"])
    for start, line in lines:
        for name in ("gross_milliunits", "refunded_milliunits", "net_milliunits", "periods", "refunds"):
            assert shown[("revenue", f"{start}/{line['currency']}", name)] == line[name], (start, line["currency"], name)
    rates = server.json("GET", "/v1/stats/rates?" + urllib.parse.urlencode(
        {key: values[0] for key, values in given.items() if key != "at"}))[1]
    assert len(rates["intervals"]) == len([key for key in shown if key[0] == "rates" and key[2] == "refund_rate"])
    for interval in rates["intervals"]:
        for name in ("refund_rate", "conversion_to_paying", "trial_conversion_rate"):
            assert shown[("rates", str(interval["start_ms"]), name)] == interval[name], (interval["start_ms"], name)
    churn = server.json("GET", f"/v1/stats/churn?{query}")[1]
    assert len(churn["intervals"]) == len([key for key in shown if key[0] == "churn" and key[2] == "churn_rate"])
    for interval in churn["intervals"]:
        for name in ("active_at_start", "churned_voluntary", "churned_billing", "churned_other", "churn_rate",
                     "voluntary_churn_rate", "billing_churn_rate"):
            assert shown[("churn", str(interval["start_ms"]), name)] == interval[name], (interval["start_ms"], name)
    active = server.json("GET", "/v1/stats/active?" + urllib.parse.urlencode(
        {key: values[0] for key, values in given.items() if key != "at"}))[1]
    assert len(active["intervals"]) == len([key for key in shown if key[0] == "active" and key[2] == "active"])
    for interval in active["intervals"]:
        for name in ("at_ms", "active", "active_trials", "active_paid"):
            assert shown[("active", str(interval["start_ms"]), name)] == interval[name], (interval["start_ms"], name)
        for line in interval["currencies"]:
            for name in ("mrr_milliunits", "arr_milliunits", "subscriptions"):
                assert shown[("active-mrr", f"{interval['start_ms']}/{line['currency']}", name)] == line[name]
    assert len([key for key in shown if key[0] == "active-mrr" and key[2] == "subscriptions"]) == sum(
        len(interval["currencies"]) for interval in active["intervals"])
    moved = server.json("GET", "/v1/stats/mrr_movement?" + urllib.parse.urlencode(
        {key: values[0] for key, values in given.items() if key in ("from", "to", "by")}))[1]
    lines = [(interval["start_ms"], line) for interval in moved["intervals"] for line in interval["currencies"]]
    assert len(lines) == len([key for key in shown if key[0] == "mrr-movement" and key[2] == "net_milliunits"])
    for start, line in lines:
        for name in ("new_milliunits", "expansion_milliunits", "contraction_milliunits", "churned_milliunits",
                     "reactivation_milliunits", "net_milliunits"):
            assert shown[("mrr-movement", f"{start}/{line['currency']}", name)] == line[name], (start, line, name)
    if not shows_cohorts:
        assert not [key for key in shown if key[0] in ("cohorts", "cohort-revenue")]
        assert_cards_sum_the_range_and_the_one_before(shown, server, given)
        return flows
    cohorts = server.json("GET", "/v1/stats/cohorts?" + urllib.parse.urlencode(
        {key: values[0] for key, values in given.items() if key != "at"}))[1]
    assert len(cohorts["intervals"]) == len([key for key in shown if key[0] == "cohorts" and key[2] == "subscriptions"])
    for cohort in cohorts["intervals"]:
        row = str(cohort["start_ms"])
        assert shown[("cohorts", row, "subscriptions")] == cohort["subscriptions"]
        assert [shown[("cohorts", row, f"retention_{n + 1}")] for n in range(cohorts["periods"])] == cohort["retention"]
        for line in cohort["currencies"]:
            for name in ("paying", "net_milliunits", "per_paying_milliunits"):
                assert shown[("cohort-revenue", f"{row}/{line['currency']}", name)] == line[name], (row, line, name)
    assert len([key for key in shown if key[0] == "cohort-revenue" and key[2] == "paying"]) == sum(
        len(cohort["currencies"]) for cohort in cohorts["intervals"])
    assert_cards_sum_the_range_and_the_one_before(shown, server, given)
    return flows


def assert_cards_sum_the_range_and_the_one_before(shown, server, given):
    """The cards: the rates' counts and the revenue's net per currency added up over the page's
    range and over the range before it (as long, ending at its start), their rates from the sums,
    the churn rate of each range (its churned added up over the active at its first midnight),
    the subscriptions active at the page's instant against those at the range's first midnight,
    the active trials and MRR per currency at the range's last midnight (not after its end) against
    those at its first, and each change the difference."""
    since, until = int(given["from"][0]), int(given["to"][0])
    product = {"product": given["product"][0]} if "product" in given else {}

    def sums(start, end):
        query = urllib.parse.urlencode(dict(product, **{"from": start, "to": end, "by": "month"}))
        churn = server.json("GET", f"/v1/stats/churn?{query}&at={given['at'][0]}")[1]["intervals"]
        churned = sum(interval[name] for interval in churn for name in ("churned_voluntary", "churned_billing",
                                                                          "churned_other"))
        midnight = -(-start // DAY) * DAY  # the range's first midnight
        first = urllib.parse.urlencode(dict(product, **{"from": midnight, "to": midnight + DAY, "by": "day"}))
        active_at_start = server.json("GET", f"/v1/stats/churn?{first}")[1]["intervals"][0]["active_at_start"]
        rates = server.json("GET", f"/v1/stats/rates?{query}")[1]["intervals"]
        counts = {name: sum(interval[name] for interval in rates) for name in ("new", "new_paying", "trial_starts",
                                                                               "converted_trials", "paid_periods",
                                                                               "refunded_paid_periods")}
        net = {}
        for interval in server.json("GET", f"/v1/stats/revenue?{query}")[1]["intervals"]:
            for line in interval["currencies"]:
                net[line["currency"]] = net.get(line["currency"], 0) + line["net_milliunits"]
        return dict(counts, churned=churned, active_at_start=active_at_start), net

    def ratio(numerator, denominator):
        return (decimal.Decimal(numerator) / denominator).quantize(decimal.Decimal("0.0001"), decimal.ROUND_HALF_UP) \
            if denominator else None
    (now, net_now), (before, net_before) = sums(since, until), sums(max(0, 2 * since - until), since)
    instant = urllib.parse.urlencode(dict(product, at=given["at"][0]))
    active_now = server.json("GET", f"/v1/stats/subscriptions?{instant}")[1]["total"]["active"]

    def stood_at(midnight):  # /v1/stats/active reads a one-day interval ending at `midnight` there
        query = urllib.parse.urlencode(dict(product, **{"from": midnight - DAY, "to": midnight, "by": "day"}))
        interval = server.json("GET", f"/v1/stats/active?{query}")[1]["intervals"][-1]
        assert interval["at_ms"] == midnight
        return interval["active_trials"], {line["currency"]: line["mrr_milliunits"] for line in interval["currencies"]}
    (trials_end, mrr_end), (trials_start, mrr_start) = stood_at(until - until % DAY), stood_at(-(-since // DAY) * DAY)
    expected = {"active_subscriptions": (active_now, now["active_at_start"]), "active_trials": (trials_end, trials_start),
                **{f"mrr_milliunits/{currency}": (mrr_end.get(currency, 0), mrr_start.get(currency, 0))
                   for currency in set(mrr_end) | set(mrr_start)},
                "new": (now["new"], before["new"]), "new_paying": (now["new_paying"], before["new_paying"])}
    for name, numerator, denominator in (("conversion_to_paying", "new_paying", "new"),
                                         ("trial_conversion_rate", "converted_trials", "trial_starts"),
                                         ("refund_rate", "refunded_paid_periods", "paid_periods"),
                                         ("churn_rate", "churned", "active_at_start")):
        expected[name] = (ratio(now[numerator], now[denominator]), ratio(before[numerator], before[denominator]))
    for currency in set(net_now) | set(net_before):
        expected[f"net_milliunits/{currency}"] = (net_now.get(currency, 0), net_before.get(currency, 0))
    cards = {row for table, row, _ in shown if table == "cards"}
    assert cards == set(expected), (cards, expected)

    def exact(card, figure):  # the page's decimal as written (the parser made it a float)
        value = shown[("cards", card, figure)]
        return decimal.Decimal(repr(value)) if isinstance(value, float) else value
    for card, (value, previous) in expected.items():
        assert (exact(card, "value"), exact(card, "previous")) == (value, previous), card
        change = None if value is None or previous is None else value - previous
        assert exact(card, "change") == change, card
    assert any(exact(card, "change") for card in expected)  # the ranges differ somewhere


#: The cards of the rates, and the count each one's numerator is (IntervalRates.rates), which its card links.
RATE_NUMERATORS = {"refund_rate": "refunded_paid_periods", "conversion_to_paying": "new_paying",
                   "trial_conversion_rate": "converted_trials"}


def assert_counts_link_their_subscriptions(server, dom, states=None, every_kind=False):
    """Each count of the page's table of statuses, its cards of counts and MRR (now and before), each count of periods
    that began and of refunds in its flows table, each count of periods and of refunds in its revenue
    table (whose gross and refunded amounts link the same lists; the listed periods' prices add up to the
    gross), each churned count of its flows and churn tables, and each count of the active at a midnight (the active
    table's active, the churn table's active at start), and each count of an MRR line (whose MRR and ARR link
    the same list), and each count of a rate (beside it in the rates table) links the page of the subscriptions
    (or periods) it counts: followed page by page (3 a page), they are as many as the count, none twice, each linking
    its customer page; /v1/subscriptions (2 a page) gives the same ids in the same order, and says the
    same on every page. With `states` (each subscription's /v1/subscriptions/{id}, judged at the page's
    instant), each one listed by status at that instant is in the status its count names. With
    `every_kind`, some period of each kind began. Returns the counts followed: by status, churned, began,
    refunds, active at a midnight, the revenue's periods, the MRR lines' subscriptions, the rates' own counts, and
    the cohorts' sizes (None where the page shows no cohorts)."""
    began_names = {"new", "trial_starts", "renewals", "trial_conversions", "recoveries", "reactivations"}
    rate_counts = {"paid_periods", "refunded_paid_periods", "new_paying", "converted_trials"}  # the rates' own
    card = re.search(r'data-card="active_subscriptions">.*?data-value="(\d+)"><a href="([^"]+)">\1</a>', dom, re.S)
    # Every count of the table of statuses, and every such count of the other tables, is linked.
    tables = dict(re.findall(r'<table id="([\w-]+)">(.*?)</table>', dom, re.S))
    for table_id, counted in (("subscriptions", r"\w+"), ("flows", r"churned_\w+|refunds|" + "|".join(began_names)),
                              ("churn", r"churned_\w+|active_at_start"), ("revenue", "refunds|periods"),
                              ("active", "active|active_trials|active_paid")):
        cells = re.findall(r'<td data-figure="(' + counted + r')" data-value="\d+">(<a )?', tables[table_id])
        assert cells and all(linked for _, linked in cells), (table_id, cells)
    linked = {table: re.findall(r'<td data-figure="(\w+)" data-value="(\d+)"><a href="([^"]+)">\2</a></td>', body)
              for table, body in tables.items()}
    by_status = linked["subscriptions"]
    churned = [link for table in ("flows", "churn") for link in linked[table] if link[0].startswith("churned_")]
    began = [link for link in linked["flows"] if link[0] in began_names]
    refunds = [link for table in ("flows", "revenue") for link in linked[table] if link[0] == "refunds"]
    periods = [link for link in linked["revenue"] if link[0] == "periods"]
    # Each line's gross and refunded amounts link what its periods and refunds counts link; its net, nothing.
    gross_of, refunded_of = {}, {}
    for line in re.findall(r'<tr data-line="[^"]*">(.*?)</tr>', tables["revenue"], re.S):
        hrefs = {name: (int(value), href) for name, value, href in
                 re.findall(r'<td data-figure="(\w+)" data-value="(-?\d+)"><a href="([^"]+)">', line)}
        assert hrefs.keys() == {"gross_milliunits", "refunded_milliunits", "periods", "refunds"}, line
        assert hrefs["gross_milliunits"][1] == hrefs["periods"][1] and hrefs["refunded_milliunits"][1] == hrefs["refunds"][1]
        gross_of[html.unescape(hrefs["periods"][1])] = hrefs["gross_milliunits"][0]
        refunded_of[html.unescape(hrefs["refunds"][1])] = hrefs["refunded_milliunits"][0]
    assert len(gross_of) == len(periods) and periods
    # Each MRR line's MRR (ARR) and count link the subscriptions it counts and makes its MRR of: now (or at the
    # page's instant) in the MRR table, at each interval's end in the active table's.
    for table_id, names in (("mrr", {"mrr_milliunits", "subscriptions"}),
                            ("active-mrr", {"mrr_milliunits", "arr_milliunits", "subscriptions"})):
        for row in re.findall(r'<tr data-(?:currency|line)="[^"]*">(.*?)</tr>', tables[table_id], re.S):
            hrefs = dict(re.findall(r'<td data-figure="(\w+)" data-value="-?\d+"><a href="([^"]+)">', row))
            assert hrefs.keys() == names and len(set(hrefs.values())) == 1 and "mrr=" in next(iter(hrefs.values())), row
    mrr_now, mrr_then = ([link for link in linked[table_id] if link[0] == "subscriptions"] for table_id in ("mrr", "active-mrr"))
    assert mrr_now and mrr_then
    # Each rate stands beside its two counts, each linking the periods it counts (periods that began, by the
    # rates' names; those the flows' table links already are followed once).
    rated, flows_hrefs = [], {href for _, _, href in began}
    for row in re.findall(r'<tr data-start="\d+">(.*?)</tr>', tables["rates"], re.S):
        cells = re.findall(r'<td title="(\d+) of (\d+)"><span data-figure="\w+" data-value="[\d.]*">[^<]*</span> '
                           r'\(<a href="([^"]+)">(\d+)</a> of <a href="([^"]+)">(\d+)</a>\)</td>', row)
        assert len(cells) == 3, row
        for numerator, denominator, top_href, top, bottom_href, bottom in cells:
            assert (top, bottom) == (numerator, denominator), row
            rated += [(html.unescape(href).split("began=")[1].split("&")[0], count, href)
                      for href, count in ((top_href, top), (bottom_href, bottom)) if href not in flows_hrefs]
    assert {name for name, _, _ in rated} == rate_counts, rated
    # Each cohort's size links its first paid periods (the rates' new_paying of its days); shown only when asked.
    cohorts = [link for link in linked.get("cohorts", []) if link[0] == "subscriptions"]
    assert len(cohorts) == len(re.findall(r'<tr data-start=', tables.get("cohorts", ""))), cohorts
    assert all("began=new_paying&" in html.unescape(href) for _, _, href in cohorts), cohorts
    # Each share of a cohort that continued links those of its first paid periods (retained=N over its days), their
    # count in the cell's title; a cohort without a subscription shows a dash and links nothing.
    retained = [("retained_" + n, count, href) for n, count, href in re.findall(
        r'<td data-figure="retention_(\d+)" data-value="[\d.]+" title="(\d+) of \d+"><a href="([^"]+)">[\d.]+%</a></td>',
        tables.get("cohorts", ""))]
    assert len(retained) == len(re.findall(r'data-figure="retention_\d+" data-value="[\d.]', tables.get("cohorts", "")))
    assert bool(retained) == any(int(count) for _, count, _ in cohorts), (cohorts, retained)
    # Each currency line of the cohorts' revenue links its paying (their first paid periods in it) and its amount paid
    # (the periods its subscriptions paid for in it); its amount per paying, a quotient, links nothing.
    paying, paid_of = linked.get("cohort-revenue", []), {}
    for line in re.findall(r'<tr data-line="[^"]*">(.*?)</tr>', tables.get("cohort-revenue", ""), re.S):
        hrefs = {name: (int(value), href) for name, value, href in
                 re.findall(r'<td data-figure="(\w+)" data-value="(-?\d+)"><a href="([^"]+)">', line)}
        assert hrefs.keys() == {"paying", "net_milliunits"} and "per_paying_milliunits" in line, line
        paid_of[html.unescape(hrefs["net_milliunits"][1])] = hrefs["net_milliunits"][0]
    assert len(paying) == len(paid_of) and bool(paying) == bool(cohorts), (paying, paid_of)

    def days_of(href):  # the range and product a link lists over
        asked = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(html.unescape(href)).query))
        return asked["from"], asked["to"], asked.get("product")
    # Every link of a cohort lists over its size's days: its retention's, and its currency lines' paying and paid.
    sized = {start: days_of(href) for start, href in re.findall(r'<tr data-start="(\d+)"><td>[^<]*</td><td data-figure='
                                                                r'"subscriptions" data-value="\d+"><a href="([^"]+)">',
                                                                tables.get("cohorts", ""))}
    assert len(sized) == len(cohorts), (sized, cohorts)
    for start, row in re.findall(r'<tr data-start="(\d+)">(.*?)</tr>', tables.get("cohorts", ""), re.S):
        assert all(days_of(href) == sized[start] for href in re.findall(r'<a href="([^"]+)">', row)), (start, row)
    for start, row in re.findall(r'<tr data-line="(\d+)/[^"]*">(.*?)</tr>', tables.get("cohort-revenue", ""), re.S):
        assert [days_of(href) for href in re.findall(r'<a href="([^"]+)">', row)] == [sized[start]] * 2, (start, row)
    for href, net in paid_of.items():  # the amounts of the periods paid for add up to the line's net, in its currency
        asked = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(href).query))
        answered = list_all(server, dict(asked, limit=5))
        currency = "" if asked["paid"] == "none" else asked["paid"]
        assert sum(amount for amount, _ in answered["amounts"]) == net, (href, answered["amounts"])
        assert all(listed == currency for _, listed in answered["amounts"]) and answered["paid"] == asked["paid"], answered
        status, body, _ = server.request("GET", href)
        assert status == 200 and f'data-figure="count" data-value="{len(answered["ids"])}"' in body.decode(), href
    stood_names = ("active", "active_at_start", "active_trials", "active_paid")
    stood = [link for table in ("active", "churn") for link in linked[table] if link[0] in stood_names]
    assert len(stood) == len(re.findall(r'data-figure="(' + "|".join(stood_names) + ')"', tables["active"] + tables["churn"]))
    # Each links the midnight its row counts at: the active table's at_ms (its three counts), the churn table's start.
    for name, row_at, counts in (("active", r'data-figure="at_ms" data-value="(\d+)"', 3), ("churn", r"^", 1)):
        for start, row in re.findall(r'<tr data-start="(\d+)">(.*?)</tr>', tables[name], re.S):
            at = re.search(row_at, row).group(1) if name == "active" else start
            hrefs = [href for figure, _, href in linked[name] if f'href="{href}"' in row and figure in stood_names]
            assert len(hrefs) == counts and all(f"at={at}&" in html.unescape(href) + "&" for href in hrefs), (name, start, hrefs)
    assert sum(len(links) for links in linked.values()) == len(by_status + churned + began + refunds + stood + periods
                                                               + mrr_now + mrr_then + cohorts + paying)
    # A refunds count of the flows is of every currency; one of the revenue, of its line's currency.
    refunds_of = [html.unescape(href).split("refunds=")[1].split("&")[0] for _, _, href in refunds]
    assert "all" in refunds_of and (not every_kind or {"EUR", "USD"} <= set(refunds_of)), refunds_of
    assert len(by_status) % 6 == 0 and by_status and card, dom[:3000]
    assert {name for name, _, _ in churned} == {"churned_voluntary", "churned_billing", "churned_other"}, churned
    assert {name for name, _, _ in began} == began_names, began
    assert not every_kind or {name for name, count, _ in began if int(count)} == began_names, began
    entitled = {"active", "grace_period"}
    # Each card of a count links what it counts, now and before (the active subscriptions' value is `card`
    # above); a rate of the rates, the periods its numerator counts; the churn rate and the net revenue link nothing.
    # An MRR card links its line's subscriptions.
    carded, mrr_cards, card_links, rate_cards = [], [], [], []
    for key, body in re.findall(r'<div class="card" data-card="([^"]+)">(.*?)</div>', dom, re.S):
        name = key.split("/")[0]
        for which, value, href in re.findall(r'<p class="(value|previous)" data-figure="\w+" data-value="([^"]*)">'
                                             r'(?:before: )?(?:<a href="([^"]+)">)?', body):
            linked_card = name in ("active_subscriptions", "new", "new_paying", "active_trials", "mrr_milliunits", *RATE_NUMERATORS)
            assert bool(href) == (linked_card and value != ""), (key, which, href)
            if href:
                card_links.append((name, which, dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(html.unescape(href)).query))))
            if not href or (name, which) == ("active_subscriptions", "value"):
                continue
            if name == "mrr_milliunits":
                mrr_cards.append((key.split("/")[1], html.unescape(href)))
            elif name in RATE_NUMERATORS:
                rate_cards.append((name, which, html.unescape(href)))
            else:
                carded.append(({"active_subscriptions": "active"}.get(name, name), value, href))
    assert {name for name, _, _ in carded} == {"active", "new", "new_paying", "active_trials"} and mrr_cards, carded
    # A rate's card links the periods its numerator counts over the card's range: as many as the rates count there.
    assert {name for name, _, _ in rate_cards} <= set(RATE_NUMERATORS) and (rate_cards or not every_kind), rate_cards
    for name, which, href in rate_cards:
        asked = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(href).query))
        assert asked["began"] == RATE_NUMERATORS[name] and "at" not in asked, (name, href)
        rates = server.json("GET", "/v1/stats/rates?" + urllib.parse.urlencode(
            {key: asked[key] for key in ("from", "to", "product") if key in asked}))[1]["intervals"]
        counted = sum(interval[RATE_NUMERATORS[name]] for interval in rates)
        assert len(list_all(server, asked)["ids"]) == counted, (name, which, href, counted)
    # Each at the instant or over the range its number was read at: the page's range and the one before it (as long),
    # the range's first midnight and its last (the active table's last); the active subscriptions now, the page's instant.
    page = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(
        html.unescape(re.search(r'<a href="(/dashboard/csv/flows\?[^"]*)"', dom).group(1))).query))
    start, end = int(page["from"]), int(page["to"])
    first, last = -(-start // DAY) * DAY, int(re.findall(r'data-figure="at_ms" data-value="(\d+)"', tables["active"])[-1])
    read = {("new", "value"): (start, end), ("new_paying", "value"): (start, end),
            ("new", "previous"): (max(0, start - (end - start)), start), ("new_paying", "previous"): (max(0, start - (end - start)), start)}
    for name, which, asked in card_links:
        if name in ("new", "new_paying", *RATE_NUMERATORS):  # over the range, or the one before
            assert (int(asked["from"]), int(asked["to"])) == read[("new", which)] and "at" not in asked, (name, which, asked)
        elif (name, which) != ("active_subscriptions", "value"):
            assert int(asked["at"]) == (last if which == "value" else first) and "from" not in asked, (name, which, asked)
    for currency, href in mrr_cards:  # as many as /v1/stats/mrr's line counts at that instant
        asked = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(href).query))
        assert asked["mrr"] == currency and int(asked["at"]) % DAY == 0, href
        mrr = server.json("GET", "/v1/stats/mrr?" + urllib.parse.urlencode(
            {key: value for key, value in asked.items() if key in ("at", "product")}))[1]
        line = next((line for line in mrr["currencies"] if line["currency"] == currency), {"subscriptions": 0})
        assert len(list_all(server, asked)["ids"]) == line["subscriptions"], href
    followed = [(link, False) for link in stood + mrr_then
                + [link for link in carded if link[0] in ("active", "active_trials")]] + [
        (link, True) for link in by_status + churned + began + refunds + periods + mrr_now + rated
        + [link for link in carded if link[0] in ("new", "new_paying")] + [("active", card.group(1), card.group(2))]
        + [("new_paying", count, href) for _, count, href in cohorts] + retained + paying]
    for (name, count, href), judged_then in followed:  # judged_then: at the instant `states` were judged at
        href = html.unescape(href)
        asked = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(href).query))
        assert urllib.parse.urlsplit(href).path == "/dashboard/subscriptions"
        if "mrr" in asked:  # an MRR line's subscriptions, active at its instant
            assert asked["mrr"] in ("EUR", "USD") and asked.get("status", "active") == "active" and "from" not in asked, href
            assert judged_then or int(asked["at"]) % DAY == 0, href
            name = "active"
        elif not judged_then:
            # What stood at a midnight: the subscriptions figure's active then, or the active's trials or paid.
            expected = {"active_trials": {"active": "trials"}, "active_paid": {"active": "paid"}}.get(
                name, {"status": "active"})
            assert {key: asked[key] for key in ("status", "active") if key in asked} == expected, href
            assert int(asked["at"]) % DAY == 0 and "from" not in asked, href
            name = "active"
        elif name.startswith("churned_"):
            assert (asked["status"], asked["churned"]) == ("expired", name.removeprefix("churned_")), href
            assert int(asked["from"]) < int(asked["to"])
            name = "expired"
        elif name in began_names | rate_counts:
            assert asked["began"] == name and "status" not in asked and int(asked["from"]) < int(asked["to"]), href
            name = None
        elif name == "paying":  # a cohorts' currency line's paying: its first paid periods in that currency
            assert asked["paying"] in ("EUR", "USD", "none") and int(asked["from"]) < int(asked["to"]), href
            name = None
        elif name.startswith("retained_"):
            assert asked["retained"] == name.removeprefix("retained_") and int(asked["from"]) < int(asked["to"]), href
            assert len(asked.keys() & {"status", "began", "at"}) == 0, href
            name = None
        elif name in ("refunds", "periods"):  # a revenue line's periods link the periods bought
            listed_as = {"refunds": "refunds", "periods": "bought"}[name]
            assert asked[listed_as] in ("all", "EUR", "USD") and "status" not in asked and "at" not in asked, href
            assert int(asked["from"]) < int(asked["to"]) and len({"refunds", "bought"} & asked.keys()) == 1
            name = None
        else:
            assert asked["status"] == name and "churned" not in asked
        listed, url = [], href + "&limit=3"
        while url:
            status, body, _ = server.request("GET", url)
            assert status == 200, body
            page = html.unescape(body.decode())
            assert f'data-figure="count" data-value="{count}"' in page, (href, page[:1500])
            rows = re.findall(r'<tr data-original="(\d+)" data-key="(\d+)"><td><a href="/dashboard/customer\?id=(\d+)">\d+</a>',
                              page)
            assert all(original == link for original, _, link in rows) and len(rows) <= 3
            assert name is None or all(key == original for original, key, _ in rows), rows  # a period is keyed by its own id
            listed += [key for _, key, _ in rows]
            following = re.search(r'<a id="next-page" href="([^"]+)"', page)
            url = following and following.group(1)
        assert len(listed) == len(set(listed)) == int(count), (href, listed)
        if "bought" in asked:  # the gross is the listed periods' prices added up
            prices = table(server.location, "SELECT coalesce(sum(coalesce(price, 0)), 0) FROM transactions "
                                            "WHERE transaction_id IN ('" + "', '".join(listed or ["none"]) + "')")
            assert int(prices[0][0]) == gross_of[href], (href, prices)
        if states is not None and name is not None and judged_then:
            assert all(states[original]["status_name"] in (entitled if name == "entitled" else {name})
                       for original in listed), (name, listed)
        answered = list_all(server, dict(asked, limit=2))
        assert answered["ids"] == listed
        # A revenue line's gross and refunded amounts are its periods' amounts added up, each in its currency.
        for money_of in (gross_of, refunded_of):
            if href in money_of:
                chosen = asked.get("bought") or asked["refunds"]
                line_currency = "" if chosen == "none" else chosen
                assert sum(amount for amount, _ in answered["amounts"]) == money_of[href], (href, answered["amounts"])
                assert all(currency == line_currency for _, currency in answered["amounts"]), answered["amounts"]
        assert answered.get("status") == name and answered.get("churned") == asked.get("churned"), answered
        assert answered.get("began") == asked.get("began") and answered.get("refunds") == asked.get("refunds"), answered
        assert answered.get("bought") == asked.get("bought") and answered.get("mrr") == asked.get("mrr"), answered
        assert answered.get("active") == asked.get("active"), answered
        assert answered.get("retained") == (int(asked["retained"]) if "retained" in asked else None), answered
        assert answered.get("paying") == asked.get("paying"), answered
        assert "at" not in asked or answered["at_ms"] == int(asked["at"])
        assert "from" not in asked or (answered["from_ms"], answered["to_ms"]) == (int(asked["from"]), int(asked["to"]))
    assert assert_moves_link_their_moves(server, tables["mrr-movement"]) or not every_kind
    return (sum(int(count) for _, count, _ in by_status), sum(int(count) for _, count, _ in churned),
            sum(int(count) for _, count, _ in began), sum(int(count) for _, count, _ in refunds),
            sum(int(count) for _, count, _ in stood), sum(int(count) for _, count, _ in periods),
            sum(int(count) for _, count, _ in mrr_now + mrr_then), sum(int(count) for _, count, _ in rated),
            sum(int(count) for _, count, _ in cohorts) if "cohorts" in tables else None)


def assert_moves_link_their_moves(server, movement_table):
    """Each amount of a move in the MRR movement table links the moves it adds up (mrr_KIND=CURRENCY over the
    interval's start to the midnight it is read at, of every product): as many as its title counts, on the page and
    through /v1/subscriptions, in its currency, their amounts adding up to it within each one's rounding; the net
    links nothing. Returns how many moves were followed."""
    cells = re.findall(r'<td data-figure="(\w+)_milliunits" data-value="(-?\d+)"(?: title="(\d+) moves")?>(?:<a href="([^"]+)">)?',
                       movement_table)
    assert cells
    followed = 0
    for kind, amount, count, href in cells:
        if kind == "net":
            assert not href and not count, (kind, amount)
            continue
        assert href and count, (kind, amount)
        href = html.unescape(href)
        asked = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(href).query))
        named = asked.pop(f"mrr_{kind}")
        assert asked.keys() == {"from", "to"} and int(asked["from"]) % DAY == 0 == int(asked["to"]) % DAY, href
        status, body, _ = server.request("GET", href)
        page = html.unescape(body.decode())
        assert status == 200 and f'data-figure="count" data-value="{count}"' in page, (href, page[:1500])
        listed = list_all(server, dict(asked, limit=2, **{f"mrr_{kind}": named}))
        assert len(listed["ids"]) == int(count) and listed[f"mrr_{kind}"] == named, (href, listed)
        assert all(currency == ("" if named == "none" else named) for _, currency in listed["amounts"]), listed
        assert abs(sum(moved for moved, _ in listed["amounts"]) - int(amount)) <= len(listed["ids"]), (href, listed)
        followed += int(count)
    return followed


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/install-deps.sh test installs it)")
def test_the_dashboard_in_a_browser_shows_the_apis_figures(tmp_path, news_ca, test_ca, mint_jws, now, new_store):
    server, states = shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        query = urllib.parse.urlencode({"from": now - 200 * DAY, "to": now + DAY, "by": "month", "at": now, "cohorts": 1})
        status, _, answer = server.request("GET", "/dashboard", token=None)
        assert status == 401 and answer.getheader("WWW-Authenticate", "").startswith("Basic ")
        assert server.request("GET", "/dashboard", headers={"Authorization": "Basic eDp3cm9uZw=="}, token=None)[0] == 401
        status, _, answer = server.request("GET", f"/dashboard?{query}")
        assert status == 200 and answer.getheader("Content-Security-Policy").startswith("default-src 'none'")

        # The browser asks with the token as a Basic password, as a person would type it.
        url = f"http://operator:{READ_TOKEN}@127.0.0.1:{server.port}/dashboard?{query}"
        shown, dom = figures_in_browser(tmp_path, url)
        flows = assert_page_shows_api(shown, server, query)
        assert any(shown[key] for key in shown if key[0] == "rates" and key[2] == "refund_rate")  # a refund among them
        assert any(shown[key] for key in shown if key[0] == "cohorts" and key[2] == "retention_1")  # some renewed
        assert_csv_links_give_the_apis_csv(server, dom)
        assert all(assert_counts_link_their_subscriptions(server, dom, states, every_kind=True))  # some of each
        assert shown[(None, None, "at_ms")] == now
        charts = dict(re.findall(r'<svg id="([\w-]+)"(.*?)</svg>', dom, re.S))
        active = server.json("GET", "/v1/stats/active?" + urllib.parse.urlencode(
            {key: value for key, value in urllib.parse.parse_qsl(query) if key in ("from", "to", "by")}))[1]["intervals"]
        currencies = sorted({line["currency"] for interval in active for line in interval["currencies"]})
        assert currencies == ["EUR", "USD"]  # the stories pay in both
        assert sorted(charts) == ["active-chart", "flows-chart", "mrr-chart-1", "mrr-chart-2"]
        for chart, bars, highest in (
                ("flows-chart", 3 * len(flows["intervals"]),  # new, renewals and churned per interval
                 max(max(interval["new"], interval["renewals"], sum(interval["churned"].values()))
                     for interval in flows["intervals"])),
                ("active-chart", 2 * len(active),  # paid and trials at each interval's end
                 max(max(interval["active_paid"], interval["active_trials"]) for interval in active))):
            svg = charts[chart]
            assert svg.count("<rect ") == bars, chart
            # Its axes are labelled: what is counted, the intervals' starts, and round ticks from 0 past the highest bar.
            assert re.search(r'<text class="y-title"[^>]*>subscriptions</text>', svg)
            x_title = "month starting (UTC)" if chart == "flows-chart" else "at each month's end (UTC)"
            assert re.search(r'<text class="x-title"[^>]*>' + re.escape(x_title) + '</text>', svg.replace("&#39;", "'"))
            ticks = [int(value) for value in re.findall(r'<text class="y-tick"[^>]*>(\d+)</text>', svg)]
            step = ticks[1]
            assert ticks == [step * n for n in range(len(ticks))] and 2 <= len(ticks) <= 6 and ticks[-2] < highest <= ticks[-1]
        titles = re.findall(r'<title>([\d-]+): (\d+) (paid|trials)</title>', charts["active-chart"])
        assert [(date, int(count), name) for date, count, name in titles] == [  # each bar dated where it is read
            (time.strftime("%Y-%m-%d", time.gmtime(interval["at_ms"] // 1000)), interval[name], label)
            for interval in active for name, label in (("active_paid", "paid"), ("active_trials", "trials"))]
        # MRR at each interval's end: a chart per currency (two currencies never share an axis), in its money.
        for number, currency in enumerate(currencies, 1):
            svg = html.unescape(charts[f"mrr-chart-{number}"])
            assert re.search(r'<text class="y-title"[^>]*>MRR \(' + currency + r'\)</text>', svg)
            mrr = [next((line["mrr_milliunits"] for line in interval["currencies"] if line["currency"] == currency), 0)
                   for interval in active]
            assert any(mrr) and svg.count("<rect ") == len(active)
            assert re.findall(r'<title>([\d-]+): ([^<]*) MRR in (\w+)</title>', svg) == [
                (time.strftime("%Y-%m-%d", time.gmtime(interval["at_ms"] // 1000)), money_text(value, currency), currency)
                for interval, value in zip(active, mrr)]
            # Round ticks in the currency's money, from nothing to at least the highest bar.
            ticks = re.findall(r'<text class="y-tick"[^>]*>([^<]*)</text>', svg)
            cents = [int(re.sub(r"\D", "", tick)) for tick in ticks]
            assert ticks == [money_text(10 * value, currency) for value in cents] and cents[0] == 0
            assert cents == [cents[1] * n for n in range(len(cents))] and cents[-2] * 10 < max(mrr) <= cents[-1] * 10
        # One product, chosen in the form: the page shows that product's figures.
        assert '<option value="">all</option><option>com.example.minted.annual</option>' in dom
        product = urllib.parse.urlencode({"product": "com.example.minted.yearly"})
        shown, dom = figures_in_browser(tmp_path, f"{url}&{product}")
        assert '<span id="product">com.example.minted.yearly</span>' in dom
        assert {key[1] for key in shown if key[0] == "subscriptions"} == {"com.example.minted.yearly", ""}
        assert assert_page_shows_api(shown, server, f"{query}&{product}")["product_id"] == "com.example.minted.yearly"
        assert_csv_links_give_the_apis_csv(server, dom, "com.example.minted.yearly")
        assert_counts_link_their_subscriptions(server, dom, states)
        # A past instant, periods bought since: the page's figures are judged as they stood then, as the API's are.
        past = urllib.parse.urlencode({"from": now - 200 * DAY, "to": now + DAY, "by": "month", "at": now - 40 * DAY})
        page = PageFigures()
        page.feed(server.request("GET", f"/dashboard?{past}")[1].decode())
        assert_page_shows_api(page.figures, server, past)
        assert_counts_link_their_subscriptions(server, server.request("GET", f"/dashboard?{past}")[1].decode())
        for refused in ("", "status=paying", "status=active&limit=0", "status=active&limit=1001", "status=active&limit=%2B5", "status=active&cursor=%20",
                        "status=active&from=0", "status=active&status=expired", "status=active&at=yesterday",
                        "began=new&status=active", "began=nothing", "began=new&churned=other", "began=new&at=2026-11-27",
                        "began=new&cursor=1796636986000-2000000000000003", "refunds=eur", "refunds=EURO",
                        "refunds=all&status=expired", "refunds=all&began=new", "refunds=all&at=2026-11-27",
                        "refunds=all&cursor=1796636986000-2000000000000003", "status=active&currency=EUR",
                        "refunds=All", "refunds=none&churned=other", "status=active&from=0&to=1", "active=free",
                        "active=trials&status=expired", "active=paid&at=1796636986001", "active=trials&from=0",
                        "bought=eur", "bought=", "bought=all&refunds=all", "bought=EUR&began=new", "bought=all&at=2026-11-27",
                        "bought=USD&status=active", "bought=none&active=paid", "bought=all&churned=other", "bought=EUR&periods=3",
                        "mrr=eur", "mrr=EUR&status=expired", "mrr=EUR&active=paid", "mrr=EUR&bought=EUR", "mrr=all&from=0",
                        "mrr=USD&churned=other"):
            assert server.request("GET", f"/v1/subscriptions?{refused}")[0] == 400, refused
            assert server.request("GET", f"/dashboard/subscriptions?{refused}")[0] == 400, refused
        # A page whose default range starts before 2008 (365 days before its `to`) links no list over a range or at
        # an instant a list refuses: the first interval's counts and the cards before it link nothing.
        status, body, _ = server.request("GET", "/dashboard?to=2008-06-01")
        early = re.findall(r'href="(/dashboard/subscriptions\?[^"]*)"', html.unescape(body.decode()))
        assert status == 200 and early, body[:500]
        for href in early:
            asked = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(href).query))
            assert all(int(asked[key]) >= 1_199_145_600_000 for key in ("from", "at") if key in asked), href
        # Each says what is wrong with it.
        for refused, said in (("bought=eur", "bought is all (every currency)"), ("bought=all&refunds=all", "each come alone"),
                              ("bought=EUR&began=new", "each come alone"), ("bought=USD&status=active", "without status"),
                              ("bought=all&at=2026-11-27", "no instant judges periods"),
                              ("bought=none&active=paid", "each come alone, without churned"), ("mrr=eur", "mrr is all"),
                              ("mrr=EUR&status=expired", "no status but active"), ("mrr=EUR&active=paid", "each come alone"),
                              ("mrr=all&from=0", "from is for a list over a range"),
                              ("bought=EUR&periods=3", "unknown"), ("bought=", "status is one of"),
                              ("retained=0", "retained is a whole number"), ("retained=2&began=new", "each come alone")):
            status, body, _ = server.request("GET", f"/v1/subscriptions?{refused}")
            assert status == 400 and said in json.loads(body)["detail"], (refused, body)
        assert server.request("GET", "/v1/subscriptions?status=active", token=None)[0] == 401
        # Left to its defaults, a list's pages are judged at its first page's instant, a churned one over one range.
        figures = server.json("GET", "/v1/stats/subscriptions")[1]
        entitled = list_all(server, {"status": "entitled", "limit": 1})
        assert len(entitled["ids"]) == figures["total"]["entitled"] > 1
        churned = list_all(server, {"status": "expired", "churned": "other", "at": now, "from": now - 200 * DAY, "limit": 1})
        assert churned["to_ms"] > now and len(churned["ids"]) > 1
        # A currency's refunds are its own: over the whole range each currency's list holds as many as the
        # revenue counts in that currency, and together they are the list of every currency's (the flows').
        whole = {"from": now - 200 * DAY, "to": now + DAY}
        # So are the periods that began in each currency, as many as the revenue's periods in it.
        refunded, bought = {}, {}
        for interval in server.json("GET", "/v1/stats/revenue?" + urllib.parse.urlencode(whole))[1]["intervals"]:
            for line in interval["currencies"]:
                refunded[line["currency"]] = refunded.get(line["currency"], 0) + line["refunds"]
                bought[line["currency"]] = bought.get(line["currency"], 0) + line["periods"]
        assert sorted(refunded) == ["EUR", "USD"] and sum(refunded.values()) and all(bought.values())
        for listed, counted in (("refunds", refunded), ("bought", bought)):
            by_currency = {currency: list_all(server, dict(whole, limit=1, **{listed: currency}))["ids"] for currency in counted}
            assert {currency: len(ids) for currency, ids in by_currency.items()} == counted, listed
            assert sorted(sum(by_currency.values(), [])) == sorted(list_all(server, dict(whole, **{listed: "all"}))["ids"])
            assert list_all(server, dict(whole, **{listed: "JPY"}))["ids"] == []
        # At a midnight within a story's free trial, the active are its trials and its paid, apart, each as many
        # as /v1/stats/active counts; left to its default, a list of them is judged at the last midnight.
        midnight = (now - 80 * DAY) // DAY * DAY
        trials, paid, active = (list_all(server, dict(query, at=midnight, limit=1))["ids"]
                                for query in ({"active": "trials"}, {"active": "paid", "status": "active"}, {"status": "active"}))
        stood = server.json("GET", f"/v1/stats/active?from={midnight - DAY}&to={midnight}&by=day")[1]["intervals"][-1]
        assert stood["at_ms"] == midnight and (len(trials), len(paid)) == (stood["active_trials"], stood["active_paid"])
        assert trials and paid and not set(trials) & set(paid) and sorted(trials + paid) == sorted(active)
        latest = list_all(server, {"active": "paid"})
        assert latest["at_ms"] % DAY == 0 and 0 <= time.time() * 1000 - latest["at_ms"] < DAY + 60_000
        assert latest["status"] == "active"
        # So are a product's, in each currency (its revenue's refunds), some of them refunded.
        refunded_products = []
        for product in sorted({product["product_id"] for product in figures["by_product"]}):
            of_product = {}
            revenue = server.json("GET", "/v1/stats/revenue?" + urllib.parse.urlencode(dict(whole, product=product)))[1]
            for line in (line for interval in revenue["intervals"] for line in interval["currencies"]):
                of_product[line["currency"]] = of_product.get(line["currency"], 0) + line["refunds"]
            assert {currency: len(list_all(server, dict(whole, refunds=currency, product=product))["ids"])
                    for currency in of_product} == of_product, product
            refunded_products += [product] if sum(of_product.values()) else []
        assert refunded_products, "no product had a refund"
        assert server.request("GET", "/dashboard/subscriptions?status=active", token=None)[0] == 401
        # Without cohorts=1 the page links them instead of reading them; another value is refused.
        plain = html.unescape(server.request("GET", f"/dashboard?{past}")[1].decode())
        link = re.search(r'<a id="show-cohorts" href="([^"]*)"', plain).group(1)
        assert urllib.parse.parse_qs(urllib.parse.urlsplit(link).query) == dict(
            urllib.parse.parse_qs(past), cohorts=["1"])
        assert server.request("GET", f"/dashboard?{past}&cohorts=yes")[0] == 400
        # A month against the one before, which holds some of the stories' first periods (and periods
        # before it that it must not count): the cards' earlier values and a rate's change are made of something.
        recent = urllib.parse.urlencode({"from": now - 31 * DAY, "to": now + DAY, "by": "month", "at": now})
        shown, _ = figures_in_browser(tmp_path, f"http://operator:{READ_TOKEN}@127.0.0.1:{server.port}/dashboard?{recent}")
        assert_page_shows_api(shown, server, recent)
        assert shown[("cards", "new", "previous")] > 0
        assert any(shown[key] not in (None, 0) for key in shown if key[0] == "cards" and key[2] == "change"
                   and key[1].endswith(("_rate", "_to_paying")))
        # A refund whose transaction names no currency falls in the revenue's line without a code, which
        # links refunds=none: that period alone (changed by hand here, after the figures above were checked).
        refund = table(server.location, "SELECT transaction_id FROM transactions WHERE revocation_date IS NOT NULL "
                                        "AND product_type = 'Auto-Renewable Subscription' ORDER BY transaction_id LIMIT 1")[0][0]
        table(server.location, f"UPDATE transactions SET currency = NULL WHERE transaction_id = '{refund}'")
        assert list_all(server, dict(whole, refunds="none"))["ids"] == [refund]
        page = html.unescape(server.request("GET", "/dashboard?" + urllib.parse.urlencode(dict(whole, by="month")))[1].decode())
        line = re.search(r'<tr data-line="\d+/">(.*?)</tr>', page, re.S).group(1)
        href = re.search(r'data-figure="refunds" data-value="1"><a href="([^"]+)">1</a>', line).group(1)
        status, body, _ = server.request("GET", href)
        assert "refunds=none" in href and status == 200 and f'data-key="{refund}"' in body.decode(), href
        # The periods bought without a currency are that one, its price named without one (read from the rows,
        # as the list of a day's part is; the counts kept per whole day were made before the change by hand).
        bare = list_all(server, dict(whole, bought="none"))
        assert bare["ids"] == [refund] and len(bare["amounts"]) == 1 and bare["amounts"][0][1] == "", bare

        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        screenshot = ARTEFACTS / "dashboard.png"
        shot = browser(tmp_path, f"--screenshot={screenshot}", "--window-size=900,1100", url)
        assert shot.returncode == 0 and screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", shot.stderr[-2000:]
        assert screenshot.stat().st_size > 10_000
        if os.environ.get("RECEIPT_DOCS_SCREENSHOT"):  # how docs/dashboard.png is made
            shutil.copyfile(screenshot, ROOT / "docs" / "dashboard.png")
    finally:
        server.stop()


class CustomerFigures(html.parser.HTMLParser):
    """The customer page's facts: entitled products, each subscription's fields, and the
    timeline's rows (kind, key, the JWS shown)."""

    def __init__(self):
        super().__init__()
        self.entitled, self.subscriptions, self.timeline = [], {}, []
        self.row, self.field, self.in_jws = None, None, False

    def handle_starttag(self, tag, attributes):
        attributes = dict(attributes)
        if tag == "li" and "data-product" in attributes:
            self.entitled.append(attributes["data-product"])
        if tag == "tr" and "data-original" in attributes:
            self.row = self.subscriptions.setdefault(attributes["data-original"], {})
        if tag == "tr" and "data-kind" in attributes:
            self.timeline.append({"kind": attributes["data-kind"], "key": attributes["data-key"], "jws": ""})
        self.field = attributes.get("data-field") if tag == "td" else None
        self.in_jws = tag == "pre" and attributes.get("class") == "jws"

    def handle_endtag(self, tag):
        self.field, self.in_jws = None, False

    def handle_data(self, data):
        if self.field and self.row is not None:
            self.row[self.field] = self.row.get(self.field, "") + data
        if self.in_jws:
            self.timeline[-1]["jws"] += data


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/install-deps.sh test installs it)")
def test_the_customer_page_shows_state_entitlements_and_a_verifiable_timeline(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                             new_store):
    """/dashboard/customer by original transaction id and by app account token, in a browser:
    each subscription's status is /v1/subscriptions/{id}'s, the entitled products are
    /v1/entitlements', the timeline lists every stored transaction and event of the
    subscriptions, and every JWS it shows verifies against the CA that signed the story."""
    import libreceipt
    from test_notifications import TOKEN, table

    server, states = shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    location = server.location
    verifier = libreceipt.Verifier(apple_root=False, anchors=[(news_ca[0] / "root.pem").read_bytes()],
                                   bundle_id="com.example.minted", environment="sandbox")
    try:
        path = "/dashboard/customer"
        assert server.request("GET", f"{path}?id=2100000000030000", token=None)[0] == 401
        assert server.request("GET", f"{path}?id=not-an-id")[0] == 400
        assert server.request("GET", f"{path}?id=2100000000999999")[0] == 404
        status, page, answer = server.request("GET", path)
        assert status == 200 and b'name="id"' in page
        assert answer.getheader("Content-Security-Policy").startswith("default-src 'none'")
        for customer in ("2100000000030000", "2100000000040000", TOKEN):
            url = f"http://operator:{READ_TOKEN}@127.0.0.1:{server.port}{path}?{urllib.parse.urlencode({'id': customer})}"
            dom = browser(tmp_path, "--dump-dom", url)
            assert dom.returncode == 0, dom.stderr[-2000:]
            shown = CustomerFigures()
            shown.feed(dom.stdout)
            if customer == TOKEN:  # kept as a test artefact
                ARTEFACTS.mkdir(parents=True, exist_ok=True)
                shot = browser(tmp_path, f"--screenshot={ARTEFACTS / 'customer.png'}", "--window-size=1100,1400", url)
                assert shot.returncode == 0, shot.stderr[-2000:]
            originals = list(states) if customer == TOKEN else [customer]
            assert sorted(shown.subscriptions) == sorted(originals)
            for original in originals:
                assert shown.subscriptions[original]["status"] == states[original]["status_name"], original
            if customer == TOKEN:
                answer = server.json("GET", f"/v1/entitlements?appAccountToken={TOKEN}")[1]
                expected = sorted(answer["active_product_ids"])
            else:
                expected = ["com.example.minted.yearly"] if states[customer]["status_name"] == "active" else []
            assert sorted(shown.entitled) == expected, (customer, shown.entitled)
            keys = ", ".join(f"'{original}'" for original in originals)
            stored = {row[0] for row in table(location, f"SELECT transaction_id FROM transactions "
                                                        f"WHERE original_transaction_id IN ({keys})")}
            events = {row[0] for row in table(location, f"SELECT event_id FROM events WHERE ordering_key IN ({keys})")}
            assert {row["key"] for row in shown.timeline if row["kind"] == "transaction"} == stored
            assert {row["key"] for row in shown.timeline if row["kind"] == "event"} == events and events
            assert {row["key"] for row in shown.timeline if row["kind"] == "renewal_info"} == set(originals)
            assert all(row["jws"] for row in shown.timeline)
            for row in shown.timeline:
                assert verifier.verify_jws(row["jws"].strip()).valid, row
    finally:
        server.stop()
