"""GET /dashboard, rendered by a real browser (headless Chromium from Debian): the numbers the
page shows, read from its DOM, equal the JSON figures of /v1/stats; a screenshot is kept as a
test artefact (build/test-artefacts/dashboard.png; README's docs/dashboard.png is one)."""

import html.parser
import os
import pathlib
import shutil
import subprocess
import urllib.parse

import pytest

from test_notifications import mint_jws, new_store, news_ca, now, postgres  # noqa: F401 (fixtures)
from test_serve import READ_TOKEN
from test_store_facts import DAY, shaped_server

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARTEFACTS = ROOT / "build" / "test-artefacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class PageFigures(html.parser.HTMLParser):
    """Every element with data-figure: (table id, the row's key, figure) -> value."""

    def __init__(self):
        super().__init__()
        self.figures, self.table, self.row = {}, None, None

    def handle_starttag(self, tag, attributes):
        attributes = dict(attributes)
        if tag == "table":
            self.table = attributes.get("id")
        if tag == "tr":
            self.row = next((attributes[key] for key in ("data-product", "data-currency", "data-start") if key in attributes), None)
        if "data-figure" in attributes:
            key = (self.table, self.row, attributes["data-figure"])
            assert key not in self.figures, key
            self.figures[key] = int(attributes["data-value"])


def browser(tmp_path, *arguments):
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--hide-scrollbars", f"--user-data-dir={tmp_path / 'chromium'}", *arguments],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/install-deps.sh test installs it)")
def test_the_dashboard_in_a_browser_shows_the_apis_figures(tmp_path, news_ca, test_ca, mint_jws, now, new_store):
    server, _ = shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        query = urllib.parse.urlencode({"from": now - 200 * DAY, "to": now + DAY, "by": "month", "at": now})
        status, _, answer = server.request("GET", "/dashboard", token=None)
        assert status == 401 and answer.getheader("WWW-Authenticate", "").startswith("Basic ")
        assert server.request("GET", "/dashboard", headers={"Authorization": "Basic eDp3cm9uZw=="}, token=None)[0] == 401
        status, _, answer = server.request("GET", f"/dashboard?{query}")
        assert status == 200 and answer.getheader("Content-Security-Policy").startswith("default-src 'none'")

        # The browser asks with the token as a Basic password, as a person would type it.
        url = f"http://operator:{READ_TOKEN}@127.0.0.1:{server.port}/dashboard?{query}"
        dom = browser(tmp_path, "--dump-dom", url)
        assert dom.returncode == 0, dom.stderr[-2000:]
        page = PageFigures()
        page.feed(dom.stdout)
        shown = page.figures
        assert shown, dom.stdout[:2000]

        subscriptions = server.json("GET", f"/v1/stats/subscriptions?{query}")[1]
        for entry in subscriptions["by_product"] + [dict(subscriptions["total"], product_id="")]:
            for name in ("active", "grace_period", "billing_retry", "expired", "revoked", "entitled"):
                assert shown[("subscriptions", entry["product_id"], name)] == entry[name], (entry["product_id"], name)
        mrr = server.json("GET", f"/v1/stats/mrr?{query}")[1]
        assert mrr["currencies"]
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
        assert shown[(None, None, "at_ms")] == now
        assert dom.stdout.count("<rect ") == 3 * len(flows["intervals"])  # the chart: three bars per interval

        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        screenshot = ARTEFACTS / "dashboard.png"
        shot = browser(tmp_path, f"--screenshot={screenshot}", "--window-size=900,1100", url)
        assert shot.returncode == 0 and screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", shot.stderr[-2000:]
        assert screenshot.stat().st_size > 10_000
        if os.environ.get("RECEIPT_DOCS_SCREENSHOT"):  # how docs/dashboard.png is made
            shutil.copyfile(screenshot, ROOT / "docs" / "dashboard.png")
    finally:
        server.stop()
