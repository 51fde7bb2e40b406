"""The App Store Server API through Python (libreceipt.api), sync and asyncio, against the mock of
tools/mock_appstore_api.py on loopback: it checks every bearer token and signs its answers with a
test CA, so every signed member is verified for real."""
import asyncio
import base64
import json
import os
import pathlib
import subprocess

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from conftest import MOCK_API_IDS, ROOT, api_mock_running
from libreceipt import ReceiptError, Verifier
from libreceipt import api
from libreceipt.api import APIError, APIException, AppStoreServerAPIClient, AsyncAppStoreServerAPIClient

KEY_ID, ISSUER_ID, BUNDLE_ID = MOCK_API_IDS["key_id"], MOCK_API_IDS["issuer_id"], MOCK_API_IDS["bundle_id"]
ORIGINAL = "2000000000000001"


def key_pem():
    return ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


@pytest.fixture(scope="module")
def mock(tmp_path_factory):
    """(base URL, key PEM, test CA root PEM, requests()) of a mock started for this module.
    Each test that needs a scripted 429 or 500 gets its own: requests.reset()."""
    directory = tmp_path_factory.mktemp("mock-api")
    key = key_pem()
    with api_mock_running(directory, key) as (base, requests):
        yield base, key, (directory / "ca" / "root.pem").read_bytes(), requests


def ca_verifier(root):
    return Verifier(bundle_id=BUNDLE_ID, apple_root=False, anchors=[root], environment="sandbox")


@pytest.fixture
def client(mock):
    base, key, root, _ = mock
    return AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=base,
                                   verifier=ca_verifier(root))


def new_requests(mock, before):
    return mock[3]()[before:]


def test_every_token_is_one_apple_accepts(mock, client):
    before = len(mock[3]())
    client.get_transaction_info("2000000000000100")
    client.get_transaction_info("2000000000000101")
    seen = new_requests(mock, before)
    assert len(seen) == 2
    for request in seen:
        claims = request["claims"]
        assert claims is not None, "the mock refused the token"
        assert (claims["iss"], claims["aud"], claims["bid"]) == (ISSUER_ID, "appstoreconnect-v1", BUNDLE_ID)
        assert 0 < claims["exp"] - claims["iat"] <= 3600
    # One token is reused until shortly before it expires.
    assert seen[0]["claims"] == seen[1]["claims"]


def test_a_token_signed_with_another_key_gets_401(mock):
    base, _, root, _ = mock
    stranger = AppStoreServerAPIClient(key_pem(), KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=base,
                                       verifier=ca_verifier(root))
    with pytest.raises(APIException) as refused:
        stranger.get_transaction_info("2000000000000100")
    assert refused.value.http_status_code == 401
    assert "token was refused" in str(refused.value)


def test_a_whole_history_over_three_pages(mock, client):
    before = len(mock[3]())
    transactions = list(client.iter_transaction_history(ORIGINAL, {"sort": "ASCENDING"}))
    assert len(transactions) == 45
    assert [t["transactionId"] for t in transactions] == [str(2000000000000100 + i) for i in range(45)]
    seen = new_requests(mock, before)
    assert [r["path"] for r in seen] == [f"/inApps/v2/history/{ORIGINAL}"] * 3
    assert [r["query"].get("revision") for r in seen] == [None, ["rev-20"], ["rev-40"]]
    assert all(r["query"]["sort"] == ["ASCENDING"] for r in seen)


def test_a_page_keeps_apples_members_and_adds_verified_payloads(client):
    page = client.get_transaction_history(ORIGINAL, None, {"productIds": ["com.example.yearly"]})
    assert page["hasMore"] is False and page["bundleId"] == BUNDLE_ID
    assert len(page["signedTransactions"]) == len(page["transactions"]) == 15
    assert {t["productId"] for t in page["transactions"]} == {"com.example.yearly"}
    status = client.get_all_subscription_statuses(ORIGINAL, [1, 3])
    last = status["data"][0]["lastTransactions"][0]
    assert last["transaction_info"]["originalTransactionId"] == ORIGINAL
    assert last["renewal_info"]["autoRenewProductId"] == "com.example.monthly"
    info = client.get_app_transaction_info(ORIGINAL)
    assert info["app_transaction_info"]["bundleId"] == BUNDLE_ID
    assert len(client.look_up_order_id("MK5TTTVWJH")["transactions"]) == 1
    refunds = list(client.iter_refund_history(ORIGINAL))
    assert len(refunds) == 2 and all("revocationDate" in t for t in refunds)


def test_notification_history_follows_its_pagination_token(mock, client):
    before = len(mock[3]())
    notifications = list(client.iter_notification_history({"startDate": 1_700_000_000_000,
                                                           "endDate": 1_900_000_000_000,
                                                           "notificationType": "DID_RENEW"}))
    assert len(notifications) == 12
    # The notification's own signed members are verified and decoded beside them too.
    assert notifications[0]["data"]["transaction_info"]["bundleId"] == BUNDLE_ID
    assert notifications[0]["data"]["renewal_info"]["autoRenewStatus"] == 1
    seen = new_requests(mock, before)
    assert [r["query"].get("paginationToken") for r in seen] == [None, ["page-5"], ["page-10"]]
    assert seen[0]["method"] == "POST" and seen[0]["body"]["notificationType"] == "DID_RENEW"


def test_404_carries_apples_code_and_name(client):
    with pytest.raises(APIException) as missing:
        client.get_transaction_info("2000000000099999")
    assert missing.value.http_status_code == 404
    assert missing.value.api_error == APIError.TRANSACTION_ID_NOT_FOUND
    assert missing.value.raw_api_error == 4040010
    assert missing.value.error_message == "Transaction id not found."


def test_429_waits_for_retry_after_then_succeeds(mock, client, monkeypatch):
    waits = []
    monkeypatch.setattr(api.time, "sleep", waits.append)
    mock[3].reset()
    before = len(mock[3]())
    answer = client.get_transaction_info("9000000000000429")
    assert answer["transaction_info"]["bundleId"] == BUNDLE_ID
    assert waits == [1.0]
    assert len(new_requests(mock, before)) == 2


def test_a_429_until_the_next_hour_is_not_waited_for(mock, client, monkeypatch):
    # Apple's Retry-After: the instant the quota returns, in milliseconds since 1970. An hour
    # is longer than the client waits (60 s): no retry, and the exception says how long.
    waits = []
    monkeypatch.setattr(api.time, "sleep", waits.append)
    mock[3].reset()
    before = len(mock[3]())
    with pytest.raises(APIException) as limited:
        client.get_transaction_info("9000000000003600")
    assert limited.value.http_status_code == 429 and limited.value.raw_api_error == 4290000
    assert 3590 <= limited.value.retry_after <= 3601  # from the clock's whole second
    assert waits == [] and len(new_requests(mock, before)) == 1


def test_500_is_sent_again_then_succeeds(mock, client, monkeypatch):
    waits = []
    monkeypatch.setattr(api.time, "sleep", waits.append)
    mock[3].reset()
    answer = client.get_transaction_history("9000000000000500", None, None)
    assert len(answer["transactions"]) == 20
    assert waits == [0.5]


def test_a_tampered_transaction_fails_the_page_and_names_it(client):
    transactions = []
    with pytest.raises(ReceiptError) as refused:
        for transaction in client.iter_transaction_history("9000000000000666"):
            transactions.append(transaction)
    assert refused.value.name == "RECEIPT_E_SIGNATURE_INVALID"
    assert "signedTransactions[3]" in refused.value.detail
    assert len(transactions) == 20  # page 1, verified whole; nothing of page 2


def test_apples_root_refuses_what_the_test_ca_signed(mock):
    base, key, _, _ = mock
    default = AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=base)
    with pytest.raises(ReceiptError) as refused:
        default.get_transaction_info("2000000000000100")
    assert refused.value.name == "RECEIPT_E_CHAIN_UNTRUSTED"
    assert "signedTransactionInfo" in refused.value.detail


@pytest.mark.parametrize("call, arguments, named", [
    ("get_transaction_info", ("12ab",), "transactionId"),
    ("get_transaction_history", (ORIGINAL, None, {"sort": "UP"}), "sort"),
    ("get_transaction_history", (ORIGINAL, None, {"startDate": 1_800_000_000_000, "endDate": 1_700_000_000_000}),
     "startDate"),
    ("get_notification_history", (None, {"startDate": 1_700_000_000_000}), "endDate"),
    ("extend_subscription_renewal_date", (ORIGINAL, {"extendByDays": 91, "extendReasonCode": 1,
                                                     "requestIdentifier": "r"}), "extendByDays"),
    ("set_app_account_token", (ORIGINAL, {"appAccountToken": "nope"}), "appAccountToken"),
    ("send_consumption_information", ("2000000000000100", {"customerConsented": True}), "required"),
])
def test_garbage_never_reaches_apple(mock, client, call, arguments, named):
    before = len(mock[3]())
    with pytest.raises(ReceiptError) as refused:
        getattr(client, call)(*arguments)
    assert refused.value.name == "RECEIPT_E_INVALID_ARGUMENT"
    assert named in refused.value.detail
    assert new_requests(mock, before) == []


def test_every_other_call_sends_apples_method_path_and_body(mock, client):
    before = len(mock[3]())
    image = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
    message_id = "5a2a3e5c-1b0e-4d6f-9b7a-0c1d2e3f4a5b"
    assert client.extend_subscription_renewal_date(ORIGINAL, {"extendByDays": 7, "extendReasonCode": 3,
                                                              "requestIdentifier": "r-1"})["success"] is True
    assert client.extend_renewal_date_for_all_active_subscribers(
        {"extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": "mass-1", "productId": "com.example.monthly",
         "storefrontCountryCodes": ["USA", "FRA"]})["requestIdentifier"] == "mass-1"
    assert client.get_status_of_subscription_renewal_date_extensions("mass-1", "com.example.monthly")["complete"]
    token = client.request_test_notification()["testNotificationToken"]
    assert client.get_test_notification_status(token)["payload"]["notificationType"] == "DID_RENEW"
    assert client.send_consumption_information("2000000000000100", {
        "customerConsented": True, "sampleContentProvided": False, "deliveryStatus": "DELIVERED",
        "consumptionPercentage": 50000}) is None
    client.send_consumption_data("2000000000000100", {"customerConsented": True, "consumptionStatus": 2})
    client.set_app_account_token(ORIGINAL, {"appAccountToken": message_id.upper()})
    client.finish_transaction("2000000000000100")
    client.upload_image(message_id, image, "FULL_SIZE")
    client.delete_image(message_id)
    assert client.get_image_list() == {"imageIdentifiers": []}
    client.upload_message(message_id, {"header": "Stay", "body": "A month free", "bulletPoints": [
        {"text": "More", "imageIdentifier": message_id, "altText": "a star"}]})
    client.delete_message(message_id)
    assert client.get_message_list() == {"messageIdentifiers": []}
    client.configure_default_message("com.example.monthly", "en-US", {"messageIdentifier": message_id})
    client.get_default_message("com.example.monthly", "en-US")
    client.delete_default_message("com.example.monthly", "en-US")
    client.configure_realtime_url({"realtimeURL": "https://example.com/realtime"})
    client.get_realtime_url()
    client.delete_realtime_url()
    client.initiate_performance_test({"originalTransactionId": ORIGINAL})
    client.get_performance_test_results("perf-1")
    seen = [(r["method"], r["path"], r["body"] or r["query"] or None) for r in new_requests(mock, before)]
    assert seen == [
        ("PUT", f"/inApps/v1/subscriptions/extend/{ORIGINAL}",
         {"extendByDays": 7, "extendReasonCode": 3, "requestIdentifier": "r-1"}),
        ("POST", "/inApps/v1/subscriptions/extend/mass",
         {"extendByDays": 3, "extendReasonCode": 1, "requestIdentifier": "mass-1", "productId": "com.example.monthly",
          "storefrontCountryCodes": ["USA", "FRA"]}),
        ("GET", "/inApps/v1/subscriptions/extend/mass/com.example.monthly/mass-1", None),
        ("POST", "/inApps/v1/notifications/test", None),
        ("GET", f"/inApps/v1/notifications/test/{token}", None),
        ("PUT", "/inApps/v2/transactions/consumption/2000000000000100",
         {"customerConsented": True, "sampleContentProvided": False, "deliveryStatus": "DELIVERED",
          "consumptionPercentage": 50000}),
        ("PUT", "/inApps/v1/transactions/consumption/2000000000000100", {"customerConsented": True,
                                                                         "consumptionStatus": 2}),
        ("PUT", f"/inApps/v1/transactions/{ORIGINAL}/appAccountToken", {"appAccountToken": message_id}),
        ("POST", "/inApps/v1/transactions/2000000000000100/finish", None),
        ("PUT", f"/inApps/v1/messaging/image/{message_id}", {"imageSize": ["FULL_SIZE"]}),
        ("DELETE", f"/inApps/v1/messaging/image/{message_id}", None),
        ("GET", "/inApps/v1/messaging/image/list", None),
        ("PUT", f"/inApps/v1/messaging/message/{message_id}", {"header": "Stay", "body": "A month free",
                                                                "bulletPoints": [{"text": "More", "imageIdentifier":
                                                                                  message_id, "altText": "a star"}]}),
        ("DELETE", f"/inApps/v1/messaging/message/{message_id}", None),
        ("GET", "/inApps/v1/messaging/message/list", None),
        ("PUT", "/inApps/v1/messaging/default/com.example.monthly/en-US", {"messageIdentifier": message_id}),
        ("GET", "/inApps/v1/messaging/default/com.example.monthly/en-US", None),
        ("DELETE", "/inApps/v1/messaging/default/com.example.monthly/en-US", None),
        ("PUT", "/inApps/v1/messaging/realtime/url", {"realtimeURL": "https://example.com/realtime"}),
        ("GET", "/inApps/v1/messaging/realtime/url", None),
        ("DELETE", "/inApps/v1/messaging/realtime/url", None),
        ("POST", "/inApps/v1/messaging/performanceTest", {"originalTransactionId": ORIGINAL}),
        ("GET", "/inApps/v1/messaging/performanceTest/result/perf-1", None),
    ]
    uploads = [r for r in new_requests(mock, before) if r["path"].startswith("/inApps/v1/messaging/image/5a")]
    assert (uploads[0]["content_type"], uploads[0]["body_bytes"]) == ("image/png", len(image))


def test_any_transport_plugs_in(mock):
    base, key, root, _ = mock
    sent = []

    def recording(method, url, headers, body, timeout):
        sent.append((method, url, sorted(headers)))
        return api.urllib_transport(method, url, headers, body, timeout)

    client = AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=base,
                                     verifier=ca_verifier(root), transport=recording)
    client.get_transaction_info("2000000000000100")
    assert sent == [("GET", f"{base}/inApps/v1/transactions/2000000000000100",
                     ["Accept", "Authorization", "User-Agent"])]


def resident_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_an_endless_pager_costs_no_copy_of_each_cursor(mock):
    """A server that pages on forever with a new 4,096-byte revision each time is stopped by
    the page limit (100,000); until then the exchange keeps each cursor it saw as a 32-byte
    digest, not the cursor: 4,000 such pages carry 16 MB of cursors, and must not grow the
    process by a quarter of that."""
    base, key, root, _ = mock
    served = [0]  # a count: the URLs, which carry the cursors, are not kept

    def endless(method, url, headers, body, timeout):
        if served[0] == 4_200:
            raise OSError("enough pages")
        served[0] += 1
        revision = "r" + str(served[0]).rjust(4095, "0")
        return 200, {}, json.dumps({"revision": revision, "hasMore": True, "bundleId": BUNDLE_ID, "appAppleId": 1234567890,
                                    "environment": "Sandbox", "signedTransactions": []}).encode()

    client = AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=base,
                                     verifier=ca_verifier(root), transport=endless, retries=0)
    pages = client._pages("get_transaction_history", {"transactionId": "2000000000000100"})
    for _ in range(200):  # the allocator's pools warmed, before the measure
        next(pages)
    before = resident_bytes()
    with pytest.raises(APIException) as stopped:
        for _ in pages:
            pass
    grown = resident_bytes() - before
    assert served[0] == 4_200 and "enough pages" in str(stopped.value)
    assert grown < 4_000_000, f"{grown:,} bytes more resident after 4,000 pages"


def test_no_answer_is_retried_for_get_but_not_post(mock, monkeypatch):
    base, key, root, _ = mock
    monkeypatch.setattr(api.time, "sleep", lambda seconds: None)
    calls = []

    def down(method, url, headers, body, timeout):
        calls.append(method)
        raise OSError("connection refused")

    client = AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=base,
                                     verifier=ca_verifier(root), transport=down, retries=2)
    with pytest.raises(APIException) as failed:
        client.get_transaction_info("2000000000000100")
    assert failed.value.http_status_code == 0 and "connection refused" in str(failed.value)
    assert calls == ["GET"] * 3
    calls.clear()
    with pytest.raises(APIException):
        client.request_test_notification()
    assert calls == ["POST"]


def test_asyncio_client_pages_and_never_blocks_the_loop(mock):
    base, key, root, _ = mock

    async def scenario():
        client = AsyncAppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=base,
                                              verifier=ca_verifier(root))
        ticks = 0
        stop = asyncio.Event()

        async def ticker():
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        running = asyncio.create_task(ticker())
        info, transactions = await asyncio.gather(
            client.get_transaction_info("9000000000000429"),  # waits 1 s for Retry-After
            collect(client.iter_transaction_history(ORIGINAL)))
        with pytest.raises(APIException) as missing:
            await client.get_transaction_info("2000000000099999")
        stop.set()
        await running
        await client.async_close()
        return info, transactions, ticks, missing.value

    async def collect(items):
        return [item async for item in items]

    mock[3].reset()
    info, transactions, ticks, missing = asyncio.run(scenario())
    assert info["transaction_info"]["bundleId"] == BUNDLE_ID
    assert len(transactions) == 45
    assert missing.api_error == APIError.TRANSACTION_ID_NOT_FOUND
    assert ticks >= 5, f"the loop ran {ticks} ticks while the client worked"


def test_environments_and_credentials_are_checked_when_made(mock):
    _, key, _, _ = mock
    with pytest.raises(ReceiptError, match="local-testing"):
        AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "local-testing")
    with pytest.raises(ValueError):
        AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "xcode")
    with pytest.raises(ReceiptError, match="P-256"):
        AppStoreServerAPIClient(ec.generate_private_key(ec.SECP384R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
            KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox")
    with pytest.raises(ReceiptError, match="issuer id"):
        AppStoreServerAPIClient(key, KEY_ID, "", BUNDLE_ID, "sandbox")


# The command line: `receipt api` and `receipt offer`, credentials from the environment.
CLI = os.environ.get("RECEIPT_CLI")
needs_cli = pytest.mark.skipif(not CLI, reason="RECEIPT_CLI is not set (run through `make test`)")


def run_cli(mock, *arguments, key_file=None):
    base, key, root, _ = mock
    directory = key_file.parent
    key_file.write_bytes(key)
    (directory / "root.pem").write_bytes(root)
    environment = dict(os.environ, APPSTORE_ISSUER_ID=ISSUER_ID, APPSTORE_KEY_ID=KEY_ID,
                       APPSTORE_PRIVATE_KEY_FILE=str(key_file), APPSTORE_BUNDLE_ID=BUNDLE_ID)
    return subprocess.run([CLI, *arguments, "--environment", "sandbox", "--base-url", base, "--no-apple-root",
                           "--anchor", str(directory / "root.pem")] if arguments[0] == "api" else [CLI, *arguments],
                          capture_output=True, text=True, env=environment, timeout=120)


@needs_cli
def test_cli_pulls_a_whole_history_with_progress(mock, tmp_path):
    done = run_cli(mock, "api", "get_transaction_history", f"transactionId={ORIGINAL}", "sort=DESCENDING", "--all",
                   key_file=tmp_path / "key.p8")
    assert done.returncode == 0, done.stderr
    pages = [json.loads(line) for line in done.stdout.splitlines()]
    assert [len(page["transactions"]) for page in pages] == [20, 20, 5]
    ids = [t["transactionId"] for page in pages for t in page["transactions"]]
    assert ids == [str(2000000000000100 + i) for i in reversed(range(45))]
    assert all(len(page["signedTransactions"]) == len(page["transactions"]) for page in pages)
    assert done.stderr.splitlines() == ["receipt api: page 1, 20 items, more to come",
                                        "receipt api: page 2, 40 items, more to come",
                                        "receipt api: page 3, 45 items, done"]
    # The credentials came from the environment: none is on the command line, where ps shows it.
    assert not any(ISSUER_ID in argument or "key.p8" in argument for argument in done.args)


@needs_cli
@pytest.mark.parametrize("arguments, status, says", [
    (["get_transaction_info", "transactionId=2000000000099999"], 1, "TRANSACTION_ID_NOT_FOUND"),
    (["get_transaction_history", "transactionId=9000000000000666", "--all"], 1, "signedTransactions[3]"),
    (["get_transaction_info", "transactionId=12x"], 2, "transactionId must be 1 to 20 digits"),
    (["get_transaction_infos", "transactionId=1"], 2, "no App Store Server API call is named"),
    (["get_transaction_history", "transactionId=1", "sort=UP"], 2, "sort must be one of ASCENDING, DESCENDING"),
])
def test_cli_refusals_exit_with_their_status(mock, tmp_path, arguments, status, says):
    done = run_cli(mock, "api", *arguments, key_file=tmp_path / "key.p8")
    assert done.returncode == status, done.stderr
    assert says in done.stderr


@needs_cli
def test_cli_signs_offers_apples_way(mock, tmp_path):
    key = serialization.load_pem_private_key(mock[1], password=None)
    done = run_cli(mock, "offer", "promotional", "--product-id", "com.example.monthly", "--offer-id", "offer-1",
                   "--application-username", "ABC", "--nonce", "5A2A3E5C-1B0E-4D6F-9B7A-0C1D2E3F4A5B",
                   "--timestamp", "1700000000000", key_file=tmp_path / "key.p8")
    assert done.returncode == 0, done.stderr
    offer = json.loads(done.stdout)
    signed = "\u2063".join([BUNDLE_ID, KEY_ID, "com.example.monthly", "offer-1", "abc",
                            "5a2a3e5c-1b0e-4d6f-9b7a-0c1d2e3f4a5b", "1700000000000"]).encode()
    from cryptography.hazmat.primitives import hashes
    key.public_key().verify(base64.b64decode(offer["signature"]), signed, ec.ECDSA(hashes.SHA256()))
    assert (offer["keyIdentifier"], offer["timestamp"]) == (KEY_ID, 1700000000000)
    done = run_cli(mock, "offer", "v2", "--product-id", "com.example.monthly", "--offer-identifier", "offer-1",
                   key_file=tmp_path / "key.p8")
    assert done.returncode == 0, done.stderr
    claims = json.loads(base64.urlsafe_b64decode(done.stdout.split(".")[1] + "=="))
    assert (claims["aud"], claims["productId"], claims["iss"]) == ("promotional-offer", "com.example.monthly", ISSUER_ID)


def test_the_c_example_pulls_a_history_with_libcurl(mock, tmp_path):
    """examples/c/server_api_history.c: libreceipt's C tier with libcurl as the transport."""
    base, key, root, _ = mock
    library = pathlib.Path(os.environ.get("RECEIPT_LIBRARY", ROOT / "build" / "lib" / "libreceipt.so.1")).parent
    built = subprocess.run(["make", "-s", "-C", str(ROOT / "examples" / "c"), "server_api_history"],
                           env=dict(os.environ, PKG_CONFIG_PATH=str(library / "pkgconfig")), capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    (tmp_path / "key.p8").write_bytes(key)
    (tmp_path / "root.pem").write_bytes(root)
    environment = dict(os.environ, APPSTORE_ISSUER_ID=ISSUER_ID, APPSTORE_KEY_ID=KEY_ID,
                       APPSTORE_PRIVATE_KEY_FILE=str(tmp_path / "key.p8"), APPSTORE_BUNDLE_ID=BUNDLE_ID)
    program = str(ROOT / "examples" / "c" / "server_api_history")
    done = subprocess.run([program, ORIGINAL, base, str(tmp_path / "root.pem")], env=environment, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [str(2000000000000100 + i) for i in range(45)]
    tampered = subprocess.run([program, "9000000000000666", base, str(tmp_path / "root.pem")], env=environment,
                              capture_output=True, text=True, timeout=60)
    assert tampered.returncode == 1 and "signedTransactions[3]" in tampered.stderr
    assert len(tampered.stdout.splitlines()) == 20


@needs_cli
def test_a_number_typed_on_the_command_line_is_quoted_as_typed(mock, tmp_path):
    refused = run_cli(mock, "api", "extend_subscription_renewal_date", f"originalTransactionId={ORIGINAL}",
                      "extendByDays=100", "extendReasonCode=1", "requestIdentifier=r-1", key_file=tmp_path / "key.p8")
    assert refused.returncode == 2, refused.stderr
    assert "extendByDays must be an integer from 1 to 90; got 100 (INVALID_EXTEND_BY_DAYS)" in refused.stderr
    assert "a string" not in refused.stderr
