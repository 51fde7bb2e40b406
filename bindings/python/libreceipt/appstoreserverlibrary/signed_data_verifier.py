"""Apple's `SignedDataVerifier`, `VerificationException` and `VerificationStatus`, by
Apple's names and signatures, verified by libreceipt's core.

Each `verify_and_decode_*` returns Apple's own model class (`appstoreserverlibrary.models`:
`ResponseBodyV2DecodedPayload` with its `Data`, `Summary`, `ExternalPurchaseToken` or `AppData`,
`JWSTransactionDecodedPayload`, `JWSRenewalInfoDecodedPayload`, `AppTransaction`,
`DecodedRealtimeRequestBody`), built from the verified payload the way Apple's library builds
it (its cattrs converter): enumerations are Apple's enum members, a value Apple's enum does not
know stays in the `raw…` member, and every member of the installed version of Apple's models is
there. Nothing is built from a payload whose signature did not verify.

Each call takes the payload's kind from the call, as Apple's do: a JWS of another kind is refused.
What libreceipt does beyond Apple's: the chain is judged at the time of signing against the roots
given (never the system's), every member Apple documents has its documented type, a notification's
nested JWS are verified too, and `enable_online_checks` asks OCSP for the leaf and the intermediate
(hard: no answer, no verdict, RETRYABLE_VERIFICATION_FAILURE as Apple's). The verdict with its steps
is reachable beside the model: `verify_and_decode_with_verdict(signed_data, kind)`. As Apple's, the
app's Apple id is checked in production only."""
import ctypes
import importlib
from enum import IntEnum

from .._errors import ReceiptError, _check
from .._native import lib
from ..verification import Verifier


class VerificationStatus(IntEnum):
    """Apple's statuses, with Apple's values."""
    OK = 0
    VERIFICATION_FAILURE = 1
    INVALID_APP_IDENTIFIER = 2
    INVALID_CERTIFICATE = 3
    INVALID_CHAIN_LENGTH = 4
    INVALID_CHAIN = 5
    INVALID_ENVIRONMENT = 6
    RETRYABLE_VERIFICATION_FAILURE = 7


class VerificationException(Exception):
    """Apple's exception. `status` is Apple's VerificationStatus; `receipt_status` the
    libreceipt status it stands for (e.g. "RECEIPT_E_BUNDLE_MISMATCH") and `detail` why."""

    def __init__(self, status, receipt_status=None, detail=None):
        super().__init__("Verification failed with status " + status.name)
        self.status = status
        self.receipt_status = receipt_status
        self.detail = detail


_NO_STEP = ctypes.c_size_t(-1).value  # SIZE_MAX: no step carries the status


def _apple_status(status):
    """Apple's VerificationStatus for a libreceipt status number (the core's table)."""
    name = lib.receipt_api_apple_verification_status(status).decode()
    return VerificationStatus.__members__.get(name, VerificationStatus.VERIFICATION_FAILURE)


def _refusal(verification, production=True):
    """The VerificationException of a verdict that failed: the status Apple's verifier reaches first and
    the step it comes from, as the core chooses them (receipt_api_apple_refusal; `production`: whether
    the app's Apple id counts among the app's identifiers, as in Apple's verifier)."""
    name, index = ctypes.c_char_p(), ctypes.c_size_t()
    _check(lib.receipt_api_apple_refusal(verification._handle, int(production), ctypes.byref(name),
                                         ctypes.byref(index)))
    status = VerificationStatus.__members__.get(name.value.decode(), VerificationStatus.VERIFICATION_FAILURE)
    if index.value == _NO_STEP:  # a verdict that failed names its status even when no step carries it
        return VerificationException(status, verification.status_name, None)
    step = verification.steps[index.value]
    return VerificationException(status, step.status_name, step.detail)


_ENVIRONMENTS = {"Production": "production", "Sandbox": "sandbox", "Xcode": "xcode", "LocalTesting": "local-testing"}

# The kind of each call -> Apple's model (module and class of appstoreserverlibrary.models).
_MODELS = {"notification": "ResponseBodyV2DecodedPayload", "transaction": "JWSTransactionDecodedPayload",
           "renewal_info": "JWSRenewalInfoDecodedPayload", "app_transaction": "AppTransaction",
           "realtime_request": "DecodedRealtimeRequestBody"}


def _converter(model):
    """Apple's converter for `model`, as Apple's library makes it (LibraryUtility), or a plain cattrs
    converter for a version of Apple's models without one."""
    try:
        from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
    except ImportError:  # pragma: no cover - every version from 1.0 has it
        import cattrs
        return cattrs.Converter()
    return _get_cattrs_converter(model)


def apple_model(name, members):
    """Apple's model class `name` (e.g. "JWSTransactionDecodedPayload") built from `members` (a dict
    as signed or as sent) the way Apple's library builds it."""
    model = getattr(importlib.import_module("appstoreserverlibrary.models." + name), name)
    return _converter(model).structure(members, model)


class SignedDataVerifier:
    """Apple's signature: the trusted roots as DER bytes, whether to ask OCSP, Apple's
    Environment (or its value, "Production", "Sandbox", ...), the bundle id, and the app's
    Apple id (required in production, as Apple's verifier requires it)."""

    def __init__(self, root_certificates, enable_online_checks, environment, bundle_id, app_apple_id=None):
        name = getattr(environment, "value", environment)
        if name not in _ENVIRONMENTS:
            raise ValueError(f"environment: one of {', '.join(_ENVIRONMENTS)}, not {environment!r}")
        if name == "Production" and app_apple_id is None:
            raise ValueError("appAppleId is required when the environment is Production")  # Apple's words
        # As Apple's verifier, the app's Apple id is checked in production only.
        self._production = name == "Production"
        self._verifier = Verifier(bundle_id=bundle_id, apple_root=False, anchors=list(root_certificates),
                                  environment=_ENVIRONMENTS[name],
                                  app_apple_id=int(app_apple_id) if name == "Production" else None,
                                  revocation="hard" if enable_online_checks else "off")

    def verify_and_decode_notification(self, signed_payload):
        return self.verify_and_decode_with_verdict(signed_payload, "notification")[0]

    def verify_and_decode_signed_transaction(self, signed_transaction):
        return self.verify_and_decode_with_verdict(signed_transaction, "transaction")[0]

    def verify_and_decode_renewal_info(self, signed_renewal_info):
        return self.verify_and_decode_with_verdict(signed_renewal_info, "renewal_info")[0]

    def verify_and_decode_app_transaction(self, signed_app_transaction):
        return self.verify_and_decode_with_verdict(signed_app_transaction, "app_transaction")[0]

    def verify_and_decode_realtime_request(self, signed_payload):
        return self.verify_and_decode_with_verdict(signed_payload, "realtime_request")[0]

    def verify_and_decode_with_verdict(self, signed_data, kind):
        """(Apple's model, libreceipt's Verification) of `signed_data` as `kind` ("notification",
        "transaction", "renewal_info", "app_transaction", "realtime_request"): the verdict's steps
        (a notification's nested JWS among them), its fingerprint and JSON report beside the model.
        Raises VerificationException as the verify_and_decode_* methods do."""
        if kind not in _MODELS:
            raise ValueError(f"kind: one of {', '.join(_MODELS)}, not {kind!r}")
        try:
            verification = self._verifier.verify_jws(signed_data, kind)
        except ReceiptError as error:  # not a readable JWS, or one of another kind
            raise VerificationException(_apple_status(error.status), error.name, error.detail) from error
        if not verification.valid:
            raise _refusal(verification, self._production)
        return apple_model(_MODELS[kind], verification.payload), verification
