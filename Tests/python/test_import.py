"""receipt import --ids: a store filled from a list of original transaction ids (a hosted service's
export), from the App Store Server API (tools/mock_appstore_api.py --customers), verified, within
its budget of calls, resumable."""
import signal
import sqlite3
import subprocess
import time

import pytest

import postgres_cluster
from conftest import MOCK_API_IDS, api_mock_running
from test_notifications import (API_BUNDLE_ID, MOCK_ORIGINAL, count, new_store, postgres,  # noqa: F401 (fixtures)
                                served_state, table)
from test_serve import CLI

FIRST = 3000000000000000  # the mock's first customer of --customers
CUSTOMERS = 400
UNKNOWN, TAMPERED, UNSTORABLE = "1999999999999999", "9000000000000666", "9000000000000777"


@pytest.fixture(scope="module")
def mock(tmp_path_factory):
    """(base URL, key file, CA root, requests()) of the mock with CUSTOMERS customers of their own."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    directory = tmp_path_factory.mktemp("import-mock")
    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    with api_mock_running(directory, key, "--customers", str(CUSTOMERS)) as (base, requests):
        yield base, directory / "key.pem", directory / "ca" / "root.pem", requests


def customers(first, count):
    return [str(FIRST + n) for n in range(first, first + count)]


def importing(mock, store, ids, *flags, base=None, wait=True):
    """`receipt import` of the list file `ids` into `store`: the finished process, or (wait=False) the running one."""
    url, key, root, _ = mock
    command = [CLI, "import", "--store", str(store), "--ids", str(ids), "--environment", "sandbox",
               "--base-url", base or url, "--private-key-file", str(key), "--key-id", MOCK_API_IDS["key_id"],
               "--issuer-id", MOCK_API_IDS["issuer_id"], "--bundle-id", API_BUNDLE_ID, "--anchor", str(root),
               "--no-apple-root", *flags]
    if not wait:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def asked(requests, since):
    """The ids the import asked about since request number `since`: (history ids, status ids)."""
    done = requests()[since:]
    return ([r["path"].rsplit("/", 1)[1] for r in done if r["path"].startswith("/inApps/v2/history/")],
            [r["path"].rsplit("/", 1)[1] for r in done if r["path"].startswith("/inApps/v1/subscriptions/")])


def test_import_fills_the_store_and_counts_each_outcome(tmp_path, mock, new_store):
    store = new_store()
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(customers(0, 20) + [UNKNOWN, TAMPERED, MOCK_ORIGINAL]) + "\n")
    first = importing(mock, store, ids, "--calls-per-second", "200")
    # An answer that did not verify names its id and makes the exit status 1; nothing of that id is stored.
    assert first.returncode == 1, first.stderr
    assert first.stdout.strip() == "imported: 21; already current: 0; unknown to Apple: 1; refused: 1; of 23 ids"
    assert f"{TAMPERED} refused: RECEIPT_E_SIGNATURE_INVALID" in first.stderr
    assert count(store, "transactions") == 20 * 2 + 45 and count(store, "renewal_infos") == 21
    assert table(store, "SELECT value FROM settings WHERE key = 'import.position'") == [("",)]  # over: no position left
    # Apple signs each answer anew; what tells nothing new is already current, and nothing is rewritten.
    before = table(store, "SELECT transaction_id, jws FROM transactions ORDER BY transaction_id")
    again = importing(mock, store, ids, "--calls-per-second", "200")
    assert again.stdout.strip() == "imported: 0; already current: 21; unknown to Apple: 1; refused: 1; of 23 ids"
    assert table(store, "SELECT transaction_id, jws FROM transactions ORDER BY transaction_id") == before
    status, state = served_state(store, mock[2], FIRST + 5)
    assert status == 200 and state["transaction_count"] == 2 and state["renewal_info"]["autoRenewStatus"] == 1


def test_an_id_whose_rows_no_store_holds_is_refused_and_the_import_goes_on(tmp_path, mock, new_store):
    """A verified answer with a date past what a store takes (StoredFacts.storableDates): that id is
    refused by name, nothing of it kept, and the ids after it imported, on both stores."""
    store = new_store()
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join([UNSTORABLE] + customers(30, 1)) + "\n")
    result = importing(mock, store, ids, "--calls-per-second", "200")
    assert result.returncode == 1, result.stderr
    assert result.stdout.strip() == "imported: 1; already current: 0; unknown to Apple: 0; refused: 1; of 2 ids"
    assert f"{UNSTORABLE} refused: STORE_REFUSED" in result.stderr
    assert count(store, "transactions") == 2 and table(store, f"SELECT count(*) FROM transactions WHERE "
                                                             f"original_transaction_id = '{UNSTORABLE}'") == [("0",)]


def test_import_reads_the_named_column_of_a_csv(tmp_path, mock):
    store = tmp_path / "s.db"
    export = tmp_path / "subscribers.csv"
    export.write_text('app_user_id,original_transaction_id,store\r\n'
                      f'"Smith, ""J""",{FIRST + 30},app_store\r\n'
                      'android-1,,play_store\r\n'
                      f'"two\nlines","{FIRST + 31}",app_store\r\n'
                      f'again,{FIRST + 30},app_store\r\n')
    result = importing(mock, store, export, "--column", "original_transaction_id", "--calls-per-second", "200")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "imported: 2; already current: 0; unknown to Apple: 0; refused: 0; of 2 ids"
    assert "1 listed again and 1 empty entries skipped" in result.stderr
    assert count(store, "renewal_infos") == 2


@pytest.mark.parametrize("text, flags, said", [
    (f"{FIRST}\nGPA.3345-1234-5678\n", [], 'ids.txt:2: "GPA.3345-1234-5678" is no original transaction id'),
    (f"id\n{FIRST}\n", ["--column", "original_transaction_id"], "ids.txt:1: no column original_transaction_id; the columns are id"),
    (f"name,id\nx,{FIRST}\n", [], "name the column of ids with --column"),
])
def test_a_list_with_an_entry_that_is_no_id_is_refused_before_any_call(tmp_path, mock, text, flags, said):
    (tmp_path / "ids.txt").write_text(text)
    requests = mock[3]
    before = len(requests())
    result = importing(mock, tmp_path / "s.db", tmp_path / "ids.txt", *flags)
    assert result.returncode == 2 and said in result.stderr, result.stderr
    assert len(requests()) == before


def test_import_keeps_to_its_budget_of_calls_for_each_endpoint(tmp_path, mock):
    rate, ids = 20, customers(40, 40)
    (tmp_path / "ids.txt").write_text("\n".join(ids))
    requests = mock[3]
    before = len(requests())
    result = importing(mock, tmp_path / "s.db", tmp_path / "ids.txt", "--calls-per-second", str(rate))
    assert result.returncode == 0, result.stderr
    done = requests()[before:]
    for prefix in ("/inApps/v2/history/", "/inApps/v1/subscriptions/"):
        instants = sorted(r["at"] for r in done if r["path"].startswith(prefix))
        assert len(instants) == len(ids)
        # Spaced by the budget: the k-th call after another is sent k / rate seconds after it at the
        # earliest; it arrives a little later, and the earlier one may have arrived late (0.25 s of slack).
        closest = min(instants[j] - instants[i] - (j - i) / rate for i in range(len(instants))
                      for j in range(i + 1, len(instants)))
        assert closest >= -0.25, (prefix, closest)
        assert instants[-1] - instants[0] >= (len(ids) - 1) / rate - 0.25


def test_an_interrupted_import_resumes_where_it_stopped(tmp_path, mock):
    store, ids = tmp_path / "s.db", customers(100, 300)
    (tmp_path / "ids.txt").write_text("\n".join(ids))
    requests = mock[3]
    running = importing(mock, store, tmp_path / "ids.txt", "--calls-per-second", "50", wait=False)
    saved = 0
    try:
        deadline = time.monotonic() + 60
        while saved < 60 and time.monotonic() < deadline:
            time.sleep(0.2)
            if store.exists():
                try:
                    rows = table(store, "SELECT value FROM settings WHERE key = 'import.position'")
                except sqlite3.OperationalError:  # the file is made before the schema is in it
                    continue
                saved = int(rows[0][0].split()[1]) if rows and rows[0][0] else 0
        assert saved >= 60, "no position saved within 60 s"
    finally:
        running.send_signal(signal.SIGKILL)
        running.wait(10)
    position = table(store, "SELECT value FROM settings WHERE key = 'import.position'")[0][0].split()
    done = int(position[1])
    before = len(requests())
    second = importing(mock, store, tmp_path / "ids.txt", "--calls-per-second", "200")
    history, statuses = asked(requests, before)
    assert second.returncode == 0 and second.stdout.rstrip().endswith("of 300 ids; resumed"), second.stdout + second.stderr
    # Nothing before the saved position is asked again; everything after it is, once.
    assert sorted(history) == sorted(statuses) == sorted(ids[done:])
    imported, current = (int(part.split(": ")[1]) for part in second.stdout.split("; ")[:2])
    assert imported + current == 300 and imported >= 300 - done - 32  # at most the ids in flight were done twice
    assert count(store, "renewal_infos") == 300


def test_a_failure_about_the_caller_stops_the_import_and_nothing_cut_short_counts_as_done(tmp_path, mock):
    """An answer about the account (not the id) stops every worker; the saved position covers
    only ids whose history and status were both stored, and a rerun goes on from it."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    store = tmp_path / "s.db"
    ids = customers(150, 100)
    ids[60] = "9000000000004041"  # the mock's ACCOUNT_NOT_FOUND: no id after it is done
    (tmp_path / "ids.txt").write_text("\n".join(ids))
    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    (tmp_path / "slow").mkdir()
    # Answers held 0.3 s, as a distant server's: when the import stops, many ids are halfway through.
    with api_mock_running(tmp_path / "slow", key, "--customers", str(CUSTOMERS), "--answer-delay", "0.3") as (base, requests):
        slow = (base, tmp_path / "slow" / "key.pem", tmp_path / "slow" / "ca" / "root.pem", requests)
        stopped = importing(slow, store, tmp_path / "ids.txt", "--calls-per-second", "100")
    assert stopped.returncode == 1 and "ACCOUNT_NOT_FOUND" in stopped.stderr, stopped.stderr
    position = table(store, "SELECT value FROM settings WHERE key = 'import.position'")[0][0].split()
    done = int(position[1])
    assert 0 < done <= 60 and int(position[2]) == done  # each one done was imported
    held = {row[0] for row in table(store, "SELECT original_transaction_id FROM renewal_infos")}
    assert set(ids[:done]) <= held  # its status was stored: not cut short by the stop


def test_an_id_list_apple_knows_none_of_exits_1_naming_the_environment(tmp_path, mock):
    (tmp_path / "ids.txt").write_text("1999999999999991\n1999999999999992\n")
    result = importing(mock, tmp_path / "s.db", tmp_path / "ids.txt")
    assert result.returncode == 1 and "unknown to Apple: 2" in result.stdout
    assert "Apple knows none of the ids in the sandbox environment" in result.stderr, result.stderr


def test_import_with_no_answer_exits_3_and_keeps_its_position(tmp_path, mock):
    (tmp_path / "ids.txt").write_text("\n".join(customers(0, 5)))
    result = importing(mock, tmp_path / "s.db", tmp_path / "ids.txt", base=f"http://127.0.0.1:{postgres_cluster.free_port()}")
    assert result.returncode == 3, result.stderr
    assert "connection refused" in result.stderr and "run it again with the same list to resume" in result.stderr
    position = table(tmp_path / "s.db", "SELECT value FROM settings WHERE key = 'import.position'")[0][0].split()
    assert position[1:] == ["0", "0", "0", "0", "0"]
