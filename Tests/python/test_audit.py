"""`receipt audit`: every stored JWS verified again, every column a JWS gives compared with the column
held, and every figure computed from the store as it is and from the verified JWS alone; a store
changed by hand is named where it was changed (#60 item 8)."""

import base64
import json
import re
import subprocess

from test_serve import CLI
from test_consent import APP_TRANSACTION_ID, app_transaction, rescission
from test_notifications import mint_jws, new_store, news_ca, now, post, postgres, table  # noqa: F401 (fixtures)
from test_store_facts import shaped_server

SUMMARY = re.compile(r"^audited: (\d+) transactions, (\d+) renewal_infos, (\d+) consent_rescissions; "
                     r"(\d+) figures recomputed from the JWS alone; (\d+) differences$")


def audit(location, news_ca, test_ca, *flags, trusted=True):
    """(exit status, the lines printed, stderr); `trusted`: the minted roots given as anchors."""
    anchors = ["--anchor", str(news_ca[0] / "root.pem"), "--anchor", str(test_ca / "root.pem")] if trusted else []
    done = subprocess.run([CLI, "audit", "--store", str(location), *anchors, *flags], capture_output=True, text=True,
                          timeout=300)
    return done.returncode, done.stdout.splitlines(), done.stderr


def differences(lines):
    """The lines before the summary, which must end the output."""
    assert lines and SUMMARY.match(lines[-1]), lines[-3:]
    return lines[:-1]


def audit_changed(location, news_ca, test_ca, change, undo):
    """The audit's exit status and differences with the store changed by hand (`change`), undone after."""
    table(location, change)
    try:
        status, lines, _ = audit(location, news_ca, test_ca)
        return status, differences(lines)
    finally:
        table(location, undo)


def test_an_untouched_store_passes_and_each_change_by_hand_is_named(tmp_path, news_ca, test_ca, mint_jws, now, new_store):
    server, _ = shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        assert post(server, rescission(mint_jws, news_ca, now, 1, app_transaction(now)))[0] == 200
    finally:
        server.stop()
    location = server.location
    held = int(table(location, "SELECT count(*) FROM transactions")[0][0])
    renewals = int(table(location, "SELECT count(*) FROM renewal_infos")[0][0])
    assert held >= 15 and renewals == 8

    status, lines, stderr = audit(location, news_ca, test_ca)
    assert status == 0, (lines, stderr)
    assert differences(lines) == []
    assert [line for line in stderr.splitlines() if line.startswith("receipt audit: ")] == [
        "receipt audit: every JWS must name com.example.minted in Sandbox: the store's own claim, which whoever could "
        "change its rows could change too; give --bundle-id and --environment to check against yours",
        "receipt audit: every row checked; the figures' tables made from the JWS and every figure computed twice"]
    transactions, renewal_infos, consents, figures, count = map(int, SUMMARY.match(lines[-1]).groups())
    # Two figures judged at an instant, seven over a range each by month and by day; all of them but the
    # MRR movement (over all products only) again for each product.
    products = table(location, "SELECT DISTINCT product_id FROM transactions")
    assert len(products) == 3
    assert (transactions, renewal_infos, consents, figures, count) == (held, renewals, 1, 16 + 14 * 3, 0)

    # A withdrawn consent moved to another app transaction by hand: named, with what its JWS says.
    assert audit_changed(location, news_ca, test_ca, "UPDATE consent_rescissions SET app_transaction_id = '704289572399'",
                         f"UPDATE consent_rescissions SET app_transaction_id = '{APP_TRANSACTION_ID}'") \
        == (1, [f"consent_rescissions 704289572399: app_transaction_id holds '704289572399', its JWS gives '{APP_TRANSACTION_ID}'"])

    # A price changed by hand: the row and its column are named, with both values.
    transaction_id, price = table(location, "SELECT transaction_id, price FROM transactions WHERE price > 0 "
                                            "ORDER BY transaction_id LIMIT 1")[0]
    status, found = audit_changed(location, news_ca, test_ca,
                                  f"UPDATE transactions SET price = price + 1000 WHERE transaction_id = '{transaction_id}'",
                                  f"UPDATE transactions SET price = {price} WHERE transaction_id = '{transaction_id}'")
    assert status == 1
    assert [line for line in found if not line.startswith("figure ")] \
        == [f"transactions {transaction_id}: price holds {int(price) + 1000}, its JWS gives {price}"]

    # A count the figures read changed by hand: the figures that read it differ, by month and by day,
    # and every line names a figure; no row is blamed.
    day, product = table(location, "SELECT day, product_id FROM subscription_flow_days WHERE renewals > 0 "
                                    "ORDER BY day DESC LIMIT 1")[0]
    where = f"WHERE day = {day} AND product_id = '{product}'"
    status, found = audit_changed(location, news_ca, test_ca, f"UPDATE subscription_flow_days SET renewals = renewals + 5 {where}",
                                  f"UPDATE subscription_flow_days SET renewals = renewals - 5 {where}")
    assert status == 1
    assert found and all(line.startswith("figure ") for line in found), found
    named = {line.split("?")[0] for line in found}
    assert "figure flows" in named, named
    assert any("by=day" in line for line in found) and any("by=month" in line for line in found)
    held_lines = [line for line in found if ": the store's rows give " in line]
    recomputed = [line for line in found if ": the JWS alone give " in line]
    assert held_lines and len(held_lines) == len(recomputed)
    assert audit(location, news_ca, test_ca)[0] == 0

    # A day's counts moved to another product by hand: the totals stay, each product's figures differ.
    status, found = audit_changed(location, news_ca, test_ca,
                                  f"UPDATE subscription_flow_days SET product_id = 'com.example.moved' {where}",
                                  f"UPDATE subscription_flow_days SET product_id = '{product}' "
                                  f"WHERE day = {day} AND product_id = 'com.example.moved'")
    assert status == 1
    assert found and all(line.startswith("figure ") and "&product=" in line for line in found), found
    assert any("&product=com.example.moved:" in line for line in found) and any(f"&product={product}:" in line for line in found)

    # A subscription's move changed by hand (the lists of moves read it, no figure does): the MRR movement as each
    # subscription's moves add it up differs, by month and by day, in that move's amount; the figure itself does not.
    day, move = table(location, "SELECT day, move FROM subscription_moves WHERE moves = 1 "
                                f"AND day <= {now // 86_400_000} ORDER BY day DESC LIMIT 1")[0]  # a day of the last year
    where = f"WHERE day = {day} AND move = '{move}'"
    status, found = audit_changed(location, news_ca, test_ca, f"UPDATE subscription_moves SET twelfths = twelfths + 1200 {where}",
                                  f"UPDATE subscription_moves SET twelfths = twelfths - 1200 {where}")
    assert status == 1 and found and all(line.startswith("figure mrr_movement?") and " (each subscription's moves): " in line
                                         for line in found), found
    assert any("by=day" in line for line in found) and any("by=month" in line for line in found), found
    assert len([line for line in found if ": the store's rows give " in line]) * 2 == len(found), found
    # A move deleted by hand: its count is missing there too.
    moves = table(location, f"SELECT original_transaction_id, currency, product_id, moves, twelfths FROM subscription_moves {where}")
    status, found = audit_changed(location, news_ca, test_ca, f"DELETE FROM subscription_moves {where}",
                                  "INSERT INTO subscription_moves VALUES " + ", ".join(
                                      f"('{o}', {day}, '{c}', '{move}', '{p}', {m}, {t})" for o, c, p, m, t in moves))
    assert status == 1 and found and all(" (each subscription's moves): " in line for line in found), found
    # A move counted twice by hand (a list shows its row once): the row is told; past 64 bits, the adding up is.
    status, found = audit_changed(location, news_ca, test_ca, f"UPDATE subscription_moves SET moves = 2 {where}",
                                  f"UPDATE subscription_moves SET moves = 1 {where}")
    assert status == 1 and found[-1].startswith("subscription_moves: ") and "rows hold other than one move or none" in found[-1], found
    _, currency, product, _, _ = moves[0]
    huge = ", ".join(f"('{original}', {day}, '{currency}', '{move}', '{product}', 1, 9223372036854775807)" for original in "12")
    status, found = audit_changed(location, news_ca, test_ca, f"INSERT INTO subscription_moves VALUES {huge}",
                                  "DELETE FROM subscription_moves WHERE original_transaction_id IN ('1', '2')")
    assert status == 1 and any("(each subscription's moves): the store's rows cannot be added up" in line for line in found), found
    assert audit(location, news_ca, test_ca)[0] == 0

    # A JWS changed by hand (its payload edited, its signature kept): it does not verify, and the
    # figures recomputed without it differ from the store's.
    jws = table(location, f"SELECT jws FROM transactions WHERE transaction_id = '{transaction_id}'")[0][0]
    header, payload, signature = jws.split(".")
    forged = ".".join([header, payload[:-4] + ("AAAA" if payload[-4:] != "AAAA" else "BBBB"), signature])
    status, found = audit_changed(location, news_ca, test_ca,
                                  f"UPDATE transactions SET jws = '{forged}' WHERE transaction_id = '{transaction_id}'",
                                  f"UPDATE transactions SET jws = '{jws}' WHERE transaction_id = '{transaction_id}'")
    assert status == 1
    rows = [line for line in found if not line.startswith("figure ")]
    assert len(rows) == 1 and rows[0].startswith(f"transactions {transaction_id}: its JWS is unreadable: "), rows
    assert any(line.startswith("figure ") for line in found)  # recomputed without it

    # A JWS whose payload says another price, well formed, under Apple's signature of the first: refused
    # by its signature, whatever its columns say.
    member = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    member["price"] += 1000
    edited = base64.urlsafe_b64encode(json.dumps(member).encode()).decode().rstrip("=")
    status, found = audit_changed(location, news_ca, test_ca,
                                  f"UPDATE transactions SET jws = '{header}.{edited}.{signature}' "
                                  f"WHERE transaction_id = '{transaction_id}'",
                                  f"UPDATE transactions SET jws = '{jws}' WHERE transaction_id = '{transaction_id}'")
    assert status == 1
    rows = [line for line in found if not line.startswith("figure ")]
    assert len(rows) == 1 and rows[0].startswith(f"transactions {transaction_id}: its JWS does not verify: "), rows
    assert "RECEIPT_E_SIGNATURE" in rows[0], rows

    # Trust is the caller's: without the minted root, no row verifies (and none is recomputed).
    status, lines, _ = audit(location, news_ca, test_ca, trusted=False)
    assert status == 1
    found = differences(lines)
    assert sum(": its JWS does not verify: " in line for line in found) == held + renewals + 1, found[:3]

    # More rows than a page, one keyed by the empty text: each read once, each named (its columns are another's).
    table(location, """
        WITH RECURSIVE counter(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM counter WHERE n < 1100)
        INSERT INTO transactions (transaction_id, original_transaction_id, signed_date, jws)
        SELECT 'copy-' || n, '9100000000000001', 1, (SELECT jws FROM transactions ORDER BY transaction_id LIMIT 1) FROM counter
        UNION ALL SELECT '', '9100000000000001', 1, (SELECT jws FROM transactions ORDER BY transaction_id LIMIT 1)""")
    status, lines, _ = audit(location, news_ca, test_ca)
    assert status == 1
    named = [line.split(": transaction_id holds ")[0] for line in differences(lines) if ": transaction_id holds " in line]
    assert sorted(named) == sorted(["transactions "] + [f"transactions copy-{n}" for n in range(1, 1101)])
    assert SUMMARY.match(lines[-1]).group(1) == str(held + 1101)
    table(location, "DELETE FROM transactions WHERE transaction_id LIKE 'copy-%' OR transaction_id = ''")

    # Another app than the store's: every transaction and app transaction refused by that step.
    status, lines, _ = audit(location, news_ca, test_ca, "--bundle-id", "com.example.other", "--environment", "sandbox")
    assert status == 1
    found = differences(lines)
    # (A renewal info names no bundle id: only the transactions can fail that step.)
    assert sum(": its JWS does not verify: bundle_id failed, RECEIPT_E_BUNDLE_MISMATCH" in line for line in found) == held + 1


def test_what_cannot_be_audited_is_refused_and_the_store_is_not_changed(tmp_path, news_ca, test_ca):
    missing = tmp_path / "missing.db"
    status, lines, stderr = audit(missing, news_ca, test_ca)
    assert (status, lines) == (2, []) and "no such file" in stderr
    assert not missing.exists()  # not made by the audit
    empty = tmp_path / "empty.db"
    subprocess.run([CLI, "events", "list", "--store", str(empty)], check=True, capture_output=True)  # a new store, migrated
    status, lines, stderr = audit(empty, news_ca, test_ca)
    assert status == 2 and lines == []
    assert "names no app and environment" in stderr and "--bundle-id and --environment" in stderr
    status, _, stderr = audit(empty, news_ca, test_ca, "--bundle-id", "com.example.minted")
    assert status == 2 and "go together" in stderr
    status, lines, stderr = audit(empty, news_ca, test_ca, "--bundle-id", "com.example.minted", "--environment", "sandbox")
    assert status == 0, stderr
    assert SUMMARY.match(lines[-1]).groups() == ("0", "0", "0", "16", "0")  # no product: the figures over all of them
    assert stderr.splitlines()[0] == "receipt audit: every JWS must name com.example.minted in Sandbox (--bundle-id, --environment)"
    # A store of another schema version is refused, not upgraded.
    version = table(empty, "SELECT max(version) FROM schema_version")[0][0]
    table(empty, f"DELETE FROM schema_version WHERE version = {version}")
    status, lines, stderr = audit(empty, news_ca, test_ca, "--bundle-id", "com.example.minted", "--environment", "sandbox")
    assert (status, lines) == (2, []) and f"schema version {int(version) - 1}" in stderr, stderr
    assert table(empty, "SELECT max(version) FROM schema_version") == [(str(int(version) - 1),)]
    table(empty, f"INSERT INTO schema_version (version) VALUES ({version}), ({int(version) + 1})")
    status, _, stderr = audit(empty, news_ca, test_ca, "--bundle-id", "com.example.minted", "--environment", "sandbox")
    assert status == 2 and f"schema version {int(version) + 1}, newer than this receipt's {version}" in stderr, stderr
    # A file that is no store at all.
    other = tmp_path / "other.db"
    table(other, "CREATE TABLE t (x)")
    status, _, stderr = audit(other, news_ca, test_ca, "--bundle-id", "com.example.minted", "--environment", "sandbox")
    assert status == 2 and "holds no receipt serve store" in stderr, stderr
