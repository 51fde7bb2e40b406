"""The App Store Server API, with every signed answer verified, and the signed requests a server
makes for its app (promotional offers, introductory-offer eligibility, Advanced Commerce).

The requests, the reading and verification of answers, retries and paging come from libreceipt;
this module only carries the bytes (libreceipt._http unless you pass a transport: no redirects
followed, one deadline for the whole exchange, at most 4 MiB read).
Methods carry the names and arguments of Apple's `app-store-server-library`, so moving to this
client is a change of import; request arguments may be Apple's model objects or dicts with
Apple's member names.

    client = AppStoreServerAPIClient(signing_key, key_id, issuer_id, bundle_id, "sandbox")
    for transaction in client.iter_transaction_history("2000000000000001"):
        print(transaction["productId"])

A response is a dict of Apple's members as sent, plus each verified payload under the
member's name without "signed", in snake case: "signedTransactions" -> "transactions",
"signedTransactionInfo" -> "transaction_info", "signedRenewalInfo" -> "renewal_info",
"signedPayload" -> "payload". A signed member that does not verify raises ReceiptError naming it.
"""
import asyncio
import base64
import ctypes
import enum
import json
import time
import uuid

from . import _http, _native
from ._errors import ArgumentTypeError, ReceiptError, _check, _take_string
from ._native import lib

__all__ = ["AppStoreServerAPIClient", "AsyncAppStoreServerAPIClient", "APIException", "APIError",
           "GetTransactionHistoryVersion", "PromotionalOfferSignatureCreator", "PromotionalOfferV2SignatureCreator",
           "IntroductoryOfferEligibilitySignatureCreator", "AdvancedCommerceAPIInAppSignatureCreator",
           "default_transport", "urllib_transport", "CALLS"]

#: Apple's error codes with the names Apple's library gives them (from libreceipt).
APIError = enum.IntEnum("APIError", {lib.receipt_api_error_name(code).decode(): code for code in (
    lib.receipt_api_error_code(index) for index in range(lib.receipt_api_error_count()))})

#: The calls libreceipt knows, by Apple's method names.
CALLS = tuple(lib.receipt_api_call_name(index).decode() for index in range(lib.receipt_api_call_count()))


class GetTransactionHistoryVersion(str, enum.Enum):
    V1 = "v1"  # deprecated by Apple
    V2 = "v2"


class APIException(Exception):
    """Apple refused the request, or gave no answer within the retries.

    `http_status_code` (0 when no answer came), `raw_api_error` (Apple's errorCode or None),
    `api_error` (an APIError, or None for a code Apple's library does not name),
    `error_message` (Apple's errorMessage), `retry_after` (seconds Apple asked to wait, or None)."""

    def __init__(self, http_status_code, raw_api_error=None, error_message=None, retry_after=None, detail=None):
        self.http_status_code = http_status_code
        self.raw_api_error = raw_api_error
        try:
            self.api_error = APIError(raw_api_error) if raw_api_error is not None else None
        except ValueError:
            self.api_error = None
        self.error_message = error_message
        self.retry_after = retry_after
        super().__init__(detail or f"HTTP {http_status_code}")


class APIArgumentError(APIException, ReceiptError):
    """An argument Apple's server would refuse (a transaction id that is not digits, a sort that
    is neither ASCENDING nor DESCENDING), refused before anything was sent. It is Apple's
    APIException, with the HTTP status (400) and code Apple's server answers that argument with
    (`api_error` INVALID_TRANSACTION_ID, ...), and a ReceiptError (a ValueError) naming it."""

    def __init__(self, error, code):
        ReceiptError.__init__(self, error.status, error.detail, error.offset)
        self.http_status_code, self.raw_api_error, self.api_error = 400, code, APIError(code)
        self.error_message, self.retry_after = error.detail, None

    @classmethod
    def of(cls, error):
        """`error` as an APIArgumentError when libreceipt named Apple's code for it (its detail
        ends "(INVALID_TRANSACTION_ID)"), else `error` itself."""
        name = error.detail.rsplit("(", 1)[-1].rstrip(")") if error.detail.endswith(")") else ""
        if error.name != "RECEIPT_E_INVALID_ARGUMENT" or name not in APIError.__members__:
            return error
        return cls(error, APIError[name].value)


_ENVIRONMENTS = {"production": 0, "sandbox": 1, "local-testing": 3, "localtesting": 3}


def _environment_code(environment):
    """Apple's Environment enum (its .value), or "production", "sandbox", "local-testing"."""
    value = getattr(environment, "value", environment)
    if isinstance(value, str) and value.lower() in _ENVIRONMENTS:
        return _ENVIRONMENTS[value.lower()]
    raise ValueError(f"environment: expected production, sandbox or local-testing (or Apple's Environment), "
                     f"got {environment!r}")


def _plain(value):
    """Apple's model objects, enums and UUIDs as JSON values; None members left out."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items() if item is not None}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return _members(value)


def _members(model):
    """A request model as a dict of Apple's member names. An attrs model of Apple's library keeps
    a `rawX` beside each enum member `x`; the raw value is used only when `x` is unset."""
    if model is None:
        return {}
    if isinstance(model, dict):
        return _plain(model)
    names = [field.name for field in getattr(model, "__attrs_attrs__", ())] or list(vars(model))
    out = {}
    for name in names:
        if name.startswith("raw") and len(name) > 3 and name[3].isupper() and name[3].lower() + name[4:] in names:
            continue
        value = getattr(model, name)
        raw = "raw" + name[0].upper() + name[1:]
        if value is None and raw in names:
            value = getattr(model, raw)
        if value is not None:
            out[name] = _plain(value)
    return out


#: The most of an answer's body the default transport reads (what libreceipt reads of an answer).
MAX_ANSWER_BYTES = 4 << 20


def default_transport(method, url, headers, body, timeout):
    """The default transport: (HTTP status, headers dict, body bytes). It follows no redirect,
    bounds the whole exchange (body included) by `timeout`, stops reading past 4 MiB, and sends
    plain http only to loopback hosts (libreceipt._http). A transport raises OSError (or anything)
    when no answer came; the exchange then decides to retry or fail. One of your own (requests,
    httpx, a proxy) must follow no redirect to another origin either: the bearer token goes
    with the request."""
    return _http.exchange(method, url, headers, body, timeout, MAX_ANSWER_BYTES)


#: The earlier name of default_transport (it no longer uses urllib, which follows redirects).
urllib_transport = default_transport


def _header(headers, name):
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return value
    return None


#: How the core checks the key id and issuer id (receipt_api_id_form_t): as App Store Connect issues them
#: (10 characters A-Z 0-9; a UUID), libreceipt's own classes; or only safe to carry in a token (1-64
#: characters, no whitespace, control character or PEM armour), the drop-in's, as Apple's library takes them.
IDS_APP_STORE_CONNECT = 0
IDS_HEADER_SAFE = 1


class _Credentials:
    """The key, ids and bundle id, checked by libreceipt when made (`id_form`: IDS_APP_STORE_CONNECT or
    IDS_HEADER_SAFE)."""

    def __init__(self, signing_key, key_id, issuer_id, bundle_id, id_form=IDS_APP_STORE_CONNECT):
        if isinstance(signing_key, str):
            signing_key = signing_key.encode()
        if not isinstance(signing_key, (bytes, bytearray)):
            raise ArgumentTypeError(f"signing_key: expected the PEM as bytes, got {type(signing_key).__name__}")
        self._handle = ctypes.c_void_p()
        error = _native.ErrorStruct()
        _check(lib.receipt_api_credentials_new_with_form(bytes(signing_key), len(signing_key),
                                                         _native.text_argument(key_id, "key_id"),
                                                         _native.text_argument(issuer_id, "issuer_id"),
                                                         _native.text_argument(bundle_id, "bundle_id"), id_form,
                                                         ctypes.byref(self._handle), ctypes.byref(error)), error)

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.receipt_api_credentials_free(self._handle)
            self._handle = None


class _Exchange:
    """One call as libreceipt's loop: the request to send, and what each answer means."""

    def __init__(self, client, call, arguments, retries, sandbox=None):
        text = json.dumps(arguments).encode()
        self._handle = ctypes.c_void_p()
        error = _native.ErrorStruct()
        try:
            _check(lib.receipt_api_exchange_new(client, call.encode(), text, len(text), retries,
                                                ctypes.byref(self._handle), ctypes.byref(error)), error)
        except ReceiptError as refused:
            raise APIArgumentError.of(refused) from None
        if sandbox is not None:
            _check(lib.receipt_api_exchange_fall_back_to_sandbox(self._handle, sandbox, ctypes.byref(error)), error)

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.receipt_api_exchange_free(self._handle)
            self._handle = None

    def request(self):
        handle = self._handle
        headers = {lib.receipt_api_exchange_header_name(handle, index).decode():
                   lib.receipt_api_exchange_header_value(handle, index).decode()
                   for index in range(lib.receipt_api_exchange_header_count(handle))}
        length = ctypes.c_size_t()
        pointer = lib.receipt_api_exchange_body(handle, ctypes.byref(length))
        return (lib.receipt_api_exchange_method(handle).decode(), lib.receipt_api_exchange_url(handle).decode(),
                headers, ctypes.string_at(pointer, length.value) if length.value else b"")

    def handle(self, status, headers, body):
        """("send", delay s) | ("answered", dict) ; raises APIException or ReceiptError."""
        step, error = _native.APIStepStruct(), _native.ErrorStruct()
        retry_after = _header(headers, "retry-after")
        _check(lib.receipt_api_exchange_handle(self._handle, status,
                                               retry_after.encode("latin-1", "replace") if retry_after else None,
                                               body, len(body), ctypes.byref(step), ctypes.byref(error)), error)
        action = _native.API_ACTIONS[step.action]
        if action == "send":
            return "send", step.delay_ms / 1000
        if action == "failed":
            message = lib.receipt_api_exchange_error_message(self._handle)
            raise APIException(step.http_status, step.api_error or None, message.decode() if message else None,
                               step.retry_after_ms / 1000 if step.retry_after_ms >= 0 else None,
                               step.detail.decode("utf-8", "replace"))
        length = ctypes.c_size_t()
        pointer = lib.receipt_api_exchange_answer(self._handle, ctypes.byref(length))
        return "answered", json.loads(ctypes.string_at(pointer, length.value))

    def next_page(self):
        more, error = ctypes.c_int(), _native.ErrorStruct()
        _check(lib.receipt_api_exchange_next_page(self._handle, ctypes.byref(more), ctypes.byref(error)), error)
        return bool(more.value)


def _history_arguments(any_transaction_id, revision, request, version):
    arguments = {"transactionId": any_transaction_id, "revision": revision, "version": _plain(version)}
    # Apple's model names its lists in the plural; the query names them in the singular.
    renamed = {"productIds": "productId", "productTypes": "productType",
               "subscriptionGroupIdentifiers": "subscriptionGroupIdentifier"}
    for name, value in _members(request).items():
        arguments[renamed.get(name, name)] = value
    return arguments


class _Calls:
    """Apple's methods, each as (call name, arguments) for `_invoke`; shared by both clients."""

    def extend_renewal_date_for_all_active_subscribers(self, mass_extend_renewal_date_request):
        return self._invoke("extend_renewal_date_for_all_active_subscribers", _members(mass_extend_renewal_date_request))

    def extend_subscription_renewal_date(self, original_transaction_id, extend_renewal_date_request):
        return self._invoke("extend_subscription_renewal_date",
                            dict(_members(extend_renewal_date_request), originalTransactionId=original_transaction_id))

    def get_all_subscription_statuses(self, any_transaction_id, status=None):
        return self._invoke("get_all_subscription_statuses", {"transactionId": any_transaction_id,
                                                              "status": _plain(status)})

    def get_refund_history(self, any_transaction_id, revision=None):
        return self._invoke("get_refund_history", {"transactionId": any_transaction_id, "revision": revision})

    def get_status_of_subscription_renewal_date_extensions(self, request_identifier, product_id):
        return self._invoke("get_status_of_subscription_renewal_date_extensions",
                            {"requestIdentifier": request_identifier, "productId": product_id})

    def get_test_notification_status(self, test_notification_token):
        return self._invoke("get_test_notification_status", {"testNotificationToken": test_notification_token})

    def get_notification_history(self, pagination_token, notification_history_request):
        return self._invoke("get_notification_history",
                            dict(_members(notification_history_request), paginationToken=pagination_token))

    def get_transaction_history(self, any_transaction_id, revision, transaction_history_request,
                                version=GetTransactionHistoryVersion.V1):  # Apple's library's default
        return self._invoke("get_transaction_history",
                            _history_arguments(any_transaction_id, revision, transaction_history_request, version))

    def get_transaction_info(self, transaction_id):
        return self._invoke("get_transaction_info", {"transactionId": transaction_id})

    def look_up_order_id(self, order_id):
        return self._invoke("look_up_order_id", {"orderId": order_id})

    def request_test_notification(self):
        return self._invoke("request_test_notification", {})

    def send_consumption_data(self, transaction_id, consumption_request):
        return self._invoke("send_consumption_data", dict(_members(consumption_request), transactionId=transaction_id),
                            returns=False)

    def send_consumption_information(self, transaction_id, consumption_request):
        return self._invoke("send_consumption_information",
                            dict(_members(consumption_request), transactionId=transaction_id), returns=False)

    def set_app_account_token(self, original_transaction_id, update_app_account_token_request):
        return self._invoke("set_app_account_token", dict(_members(update_app_account_token_request),
                                                          originalTransactionId=original_transaction_id), returns=False)

    def upload_image(self, image_identifier, image, image_size=None):
        return self._invoke("upload_image", {"imageIdentifier": _plain(image_identifier), "image": _plain(image),
                                             "imageSize": _plain(image_size)}, returns=False)

    def delete_image(self, image_identifier):
        return self._invoke("delete_image", {"imageIdentifier": _plain(image_identifier)}, returns=False)

    def get_image_list(self):
        return self._invoke("get_image_list", {})

    def upload_message(self, message_identifier, upload_message_request_body):
        return self._invoke("upload_message", dict(_members(upload_message_request_body),
                                                   messageIdentifier=_plain(message_identifier)), returns=False)

    def delete_message(self, message_identifier):
        return self._invoke("delete_message", {"messageIdentifier": _plain(message_identifier)}, returns=False)

    def get_message_list(self):
        return self._invoke("get_message_list", {})

    def configure_default_message(self, product_id, locale, default_configuration_request):
        return self._invoke("configure_default_message", dict(_members(default_configuration_request),
                                                              productId=product_id, locale=locale), returns=False)

    def delete_default_message(self, product_id, locale):
        return self._invoke("delete_default_message", {"productId": product_id, "locale": locale}, returns=False)

    def get_default_message(self, product_id, locale):
        return self._invoke("get_default_message", {"productId": product_id, "locale": locale})

    def configure_realtime_url(self, realtime_url_request):
        return self._invoke("configure_realtime_url", _members(realtime_url_request), returns=False)

    def delete_realtime_url(self):
        return self._invoke("delete_realtime_url", {}, returns=False)

    def get_realtime_url(self):
        return self._invoke("get_realtime_url", {})

    def initiate_performance_test(self, performance_test_request):
        return self._invoke("initiate_performance_test", _members(performance_test_request))

    def get_performance_test_results(self, request_id):
        return self._invoke("get_performance_test_results", {"requestId": request_id})

    def get_app_transaction_info(self, any_transaction_id):
        return self._invoke("get_app_transaction_info", {"transactionId": any_transaction_id})

    def finish_transaction(self, transaction_id):
        return self._invoke("finish_transaction", {"transactionId": transaction_id}, returns=False)

    # The Advanced Commerce API (Apple's request models: AdvancedCommerceSubscriptionCancelRequest, ...).
    def cancel_subscription(self, transaction_id, subscription_cancel_request):
        return self._advanced_commerce("cancel_subscription", transaction_id, subscription_cancel_request)

    def revoke_subscription(self, transaction_id, subscription_revoke_request):
        return self._advanced_commerce("revoke_subscription", transaction_id, subscription_revoke_request)

    def request_transaction_refund(self, transaction_id, request_refund_request):
        return self._advanced_commerce("request_transaction_refund", transaction_id, request_refund_request)

    def change_subscription_metadata(self, transaction_id, subscription_change_metadata_request):
        return self._advanced_commerce("change_subscription_metadata", transaction_id,
                                       subscription_change_metadata_request)

    def change_subscription_price(self, transaction_id, subscription_price_change_request):
        return self._advanced_commerce("change_subscription_price", transaction_id, subscription_price_change_request)

    def migrate_subscription(self, transaction_id, subscription_migrate_request):
        return self._advanced_commerce("migrate_subscription", transaction_id, subscription_migrate_request)

    def _advanced_commerce(self, call, transaction_id, request):
        return self._invoke(call, dict(_members(request), transactionId=transaction_id))

    # Pages, followed to the end: each yields the verified payloads, not the pages.
    def iter_transaction_history(self, any_transaction_id, transaction_history_request=None,
                                 version=GetTransactionHistoryVersion.V2):
        return self._items("get_transaction_history",
                           _history_arguments(any_transaction_id, None, transaction_history_request, version),
                           "transactions")

    def iter_refund_history(self, any_transaction_id):
        return self._items("get_refund_history", {"transactionId": any_transaction_id}, "transactions")

    def iter_notification_history(self, notification_history_request):
        return self._items("get_notification_history", _members(notification_history_request), "notificationHistory",
                           lambda item: item["payload"])


class _ClientHandle:
    """libreceipt's client (credentials, host, verifier) for one environment."""

    def __init__(self, credentials, environment_code, base_url, verifier, bundle_id, app_apple_id):
        from .verification import Verifier
        if verifier is None:
            verifier = Verifier(bundle_id=bundle_id, apple_root=True, app_apple_id=app_apple_id,
                                environment={0: "production", 1: "sandbox", 3: "local-testing"}[environment_code])
        self._verifier = verifier  # the client holds its own reference too; kept for clarity
        self._handle = ctypes.c_void_p()
        error = _native.ErrorStruct()
        _check(lib.receipt_api_client_new(credentials._handle, environment_code,
                                          _native.text_argument(base_url, "base_url"), verifier._handle,
                                          ctypes.byref(self._handle), ctypes.byref(error)), error)

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.receipt_api_client_free(self._handle)
            self._handle = None


class _Client(_Calls):
    _id_form = IDS_APP_STORE_CONNECT  # the drop-in's subclasses take the ids as Apple's library does

    def __init__(self, signing_key, key_id, issuer_id, bundle_id, environment, base_url, verifier, retries,
                 app_apple_id, timeout, sandbox_fallback=False, sandbox_base_url=None, sandbox_verifier=None):
        self._credentials = _Credentials(signing_key, key_id, issuer_id, bundle_id, self._id_form)
        environment_code = _environment_code(environment)
        self._client = _ClientHandle(self._credentials, environment_code, base_url, verifier, bundle_id, app_apple_id)
        self._handle = self._client._handle
        if not isinstance(sandbox_fallback, bool):
            raise ArgumentTypeError(f"sandbox_fallback: expected a bool, got {sandbox_fallback!r}")
        if sandbox_fallback and environment_code != 0:
            raise ValueError("sandbox_fallback: only a production client falls back to the sandbox")
        self._sandbox = _ClientHandle(self._credentials, 1, sandbox_base_url, sandbox_verifier, bundle_id,
                                      app_apple_id) if sandbox_fallback else None
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries: expected an int >= 0, got {retries!r}")
        self._retries, self._timeout = retries, timeout

    def _exchange(self, call, arguments):
        # libreceipt falls back only for calls that name a transaction in their path.
        sandbox = self._sandbox._handle if self._sandbox is not None else None
        return _Exchange(self._handle, call, {k: v for k, v in arguments.items() if v is not None}, self._retries,
                         sandbox)


class AppStoreServerAPIClient(_Client):
    """Apple's App Store Server API client, with every signed member of every answer verified.

    signing_key: the in-app purchase key as downloaded (PEM bytes); key_id, issuer_id, bundle_id as
    in App Store Connect; environment: Apple's Environment, or "production", "sandbox",
    "local-testing" (which needs base_url). base_url replaces Apple's host (a mock, a proxy).
    verifier: a libreceipt.Verifier for the signed members; by default Apple Root CA - G3, this
    bundle id and environment, and `app_apple_id` (needed in production for notifications and app
    transactions). transport(method, url, headers, body, timeout) -> (status, headers, body) sends
    each request (default_transport by default; requests, httpx, a proxy plug in, and must follow
    no redirect); `timeout` bounds each whole exchange, body included. 429 and 5xx are retried
    `retries` times as Apple asks (Retry-After).

    sandbox_fallback (production only, off by default): a call that names a transaction and that
    production answers TRANSACTION_ID_NOT_FOUND or ORIGINAL_TRANSACTION_ID_NOT_FOUND goes once to the
    sandbox (sandbox_base_url, sandbox_verifier: as base_url and verifier, for it), and its answer
    says "answered_by": "sandbox". App Review buys in the sandbox against a production backend."""

    def __init__(self, signing_key, key_id, issuer_id, bundle_id, environment, *, base_url=None, verifier=None,
                 transport=None, retries=3, app_apple_id=None, timeout=30, sandbox_fallback=False,
                 sandbox_base_url=None, sandbox_verifier=None):
        super().__init__(signing_key, key_id, issuer_id, bundle_id, environment, base_url, verifier, retries,
                         app_apple_id, timeout, sandbox_fallback, sandbox_base_url, sandbox_verifier)
        self._transport = transport or default_transport

    def _pages(self, call, arguments):
        exchange = self._exchange(call, arguments)
        while True:
            method, url, headers, body = exchange.request()
            try:
                status, answer_headers, answer = self._transport(method, url, headers, body, self._timeout)
            except Exception as failure:  # no answer: the exchange decides (it retries all but POST)
                status, answer_headers, answer = 0, {}, str(failure).encode("utf-8", "replace")
            del headers  # the bearer token: not in this frame's locals when an error reporter captures them
            action, value = exchange.handle(status, answer_headers, answer)
            if action == "send":
                time.sleep(value)
                continue
            yield value
            if not exchange.next_page():
                return

    def _invoke(self, call, arguments, returns=True):
        answer = next(self._pages(call, arguments))
        return answer if returns else None

    def _items(self, call, arguments, member, pick=lambda item: item):
        for page in self._pages(call, arguments):
            for item in page.get(member, []):
                yield pick(item)


class AsyncAppStoreServerAPIClient(_Client):
    """AppStoreServerAPIClient for asyncio: the same methods, as coroutines (and `iter_…` as async
    generators). The default transport (default_transport) runs in a worker thread; libreceipt's reading and
    verification of each answer also run off the event loop, so the loop is never blocked.
    `transport` may be an `async def (method, url, headers, body, timeout)` (aiohttp, httpx)."""

    def __init__(self, signing_key, key_id, issuer_id, bundle_id, environment, *, base_url=None, verifier=None,
                 transport=None, retries=3, app_apple_id=None, timeout=30, sandbox_fallback=False,
                 sandbox_base_url=None, sandbox_verifier=None):
        super().__init__(signing_key, key_id, issuer_id, bundle_id, environment, base_url, verifier, retries,
                         app_apple_id, timeout, sandbox_fallback, sandbox_base_url, sandbox_verifier)
        self._transport = transport

    async def _send(self, method, url, headers, body):
        if self._transport is None:
            return await asyncio.to_thread(default_transport, method, url, headers, body, self._timeout)
        return await self._transport(method, url, headers, body, self._timeout)

    async def _pages(self, call, arguments):
        exchange = self._exchange(call, arguments)
        while True:
            method, url, headers, body = exchange.request()
            try:
                status, answer_headers, answer = await self._send(method, url, headers, body)
            except Exception as failure:
                status, answer_headers, answer = 0, {}, str(failure).encode("utf-8", "replace")
            del headers  # the bearer token, as in AppStoreServerAPIClient._pages
            action, value = await asyncio.to_thread(exchange.handle, status, answer_headers, answer)
            if action == "send":
                await asyncio.sleep(value)
                continue
            yield value
            if not exchange.next_page():
                return

    async def _invoke(self, call, arguments, returns=True):
        pages = self._pages(call, arguments)
        try:
            answer = await pages.__anext__()
        finally:
            await pages.aclose()
        return answer if returns else None

    async def _items(self, call, arguments, member, pick=lambda item: item):
        async for page in self._pages(call, arguments):
            for item in page.get(member, []):
                yield pick(item)

    async def async_close(self):
        """Nothing to close (the transport is the caller's); here for Apple's interface."""


def _signed(call, error):
    return _take_string(call, error)


class PromotionalOfferSignatureCreator:
    """The original promotional-offer signature (Apple's class and arguments): base64 of a DER
    ECDSA P-256/SHA-256 signature. timestamp: epoch milliseconds; nonce: a UUID."""

    _id_form = IDS_APP_STORE_CONNECT  # as _Client's

    def __init__(self, signing_key, key_id, bundle_id):
        self._credentials = _Credentials(signing_key, key_id, None, bundle_id, self._id_form)

    def create_signature(self, product_identifier, subscription_offer_id, application_username, nonce, timestamp):
        error = _native.ErrorStruct()
        return _signed(lambda out, length: lib.receipt_api_promotional_offer_signature(
            self._credentials._handle, _native.text_argument(product_identifier, "product_identifier"),
            _native.text_argument(subscription_offer_id, "subscription_offer_id"),
            _native.text_argument(application_username, "application_username"),
            str(nonce).encode(), int(timestamp), out, length, ctypes.byref(error)), error)


class _JWSCreator:
    _id_form = IDS_APP_STORE_CONNECT  # as _Client's

    def __init__(self, signing_key, key_id, issuer_id, bundle_id):
        self._credentials = _Credentials(signing_key, key_id, issuer_id, bundle_id, self._id_form)


class PromotionalOfferV2SignatureCreator(_JWSCreator):
    """A promotional offer V2 JWS (audience promotional-offer)."""

    def create_signature(self, product_id, offer_identifier, transaction_id=None):
        error = _native.ErrorStruct()
        return _signed(lambda out, length: lib.receipt_api_promotional_offer_v2(
            self._credentials._handle, _native.text_argument(product_id, "product_id"),
            _native.text_argument(offer_identifier, "offer_identifier"),
            _native.text_argument(transaction_id, "transaction_id"), out, length, ctypes.byref(error)), error)


class IntroductoryOfferEligibilitySignatureCreator(_JWSCreator):
    """An introductory-offer eligibility JWS (audience introductory-offer-eligibility)."""

    def create_signature(self, product_id, allow_introductory_offer, transaction_id):
        if not isinstance(allow_introductory_offer, bool):
            raise ArgumentTypeError("allow_introductory_offer: expected bool")
        error = _native.ErrorStruct()
        return _signed(lambda out, length: lib.receipt_api_introductory_offer_eligibility(
            self._credentials._handle, _native.text_argument(product_id, "product_id"),
            1 if allow_introductory_offer else 0, _native.text_argument(transaction_id, "transaction_id"),
            out, length, ctypes.byref(error)), error)


class AdvancedCommerceAPIInAppSignatureCreator(_JWSCreator):
    """An Advanced Commerce API in-app request JWS: the request (a dict, or Apple's model) is
    JSON-encoded as Apple's library does (json.dumps) and put in the claim "request" as base64."""

    def create_signature(self, advanced_commerce_in_app_request):
        if advanced_commerce_in_app_request is None:
            raise ValueError("advanced_commerce_in_app_request cannot be None")
        text = json.dumps(_members(advanced_commerce_in_app_request)).encode()
        error = _native.ErrorStruct()
        return _signed(lambda out, length: lib.receipt_api_advanced_commerce_request(
            self._credentials._handle, text, len(text), out, length, ctypes.byref(error)), error)
