"""Apple's `SignedDataVerifier`, `VerificationException` and `VerificationStatus`, by
Apple's names and signatures, verified by libreceipt's core.

Each `verify_and_decode_*` takes the payload's kind from the call, as Apple's do: a JWS
of another kind is refused. What libreceipt does beyond Apple's: the chain is judged at
the time of signing against the roots given (never the system's), every member Apple
documents has its documented type, a notification's nested JWS are verified too, and
`enable_online_checks` asks OCSP for the leaf and the intermediate (hard: no answer, no
verdict). The decoded payload comes back as `DecodedPayload`: Apple's member names as
attributes (absent ones None, as in Apple's models), enumerations as their raw values,
which compare equal to Apple's string enumerations, and `rawX` for each member `x`, as Apple's
models have them. As Apple's, the app's Apple id is checked in production only."""
from enum import Enum

from ..verification import Verifier
from .._errors import ReceiptError
from .._native import lib


class VerificationStatus(Enum):
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


def _apple_status(status):
    """Apple's VerificationStatus for a libreceipt status number (the core's table)."""
    name = lib.receipt_api_apple_verification_status(status).decode()
    return VerificationStatus.__members__.get(name, VerificationStatus.VERIFICATION_FAILURE)


_ENVIRONMENTS = {"Production": "production", "Sandbox": "sandbox", "Xcode": "xcode", "LocalTesting": "local-testing"}


class DecodedPayload:
    """A verified payload: `payload.transactionId`, `payload.data.bundleId`, … (None when
    absent), `payload["member"]`, and `raw`, the dict as signed."""

    __slots__ = ("raw",)

    def __init__(self, members):
        object.__setattr__(self, "raw", members)

    def __getattr__(self, name):
        if name not in self.raw and name.startswith("raw") and name[3:4].isupper():
            # Apple's models keep each enumeration's value as sent beside it: rawType for type.
            return _wrapped(self.raw.get(name[3].lower() + name[4:]))
        return _wrapped(self.raw.get(name))

    def __getitem__(self, name):
        return _wrapped(self.raw[name])

    def __setattr__(self, name, value):
        raise AttributeError("a verified payload is read-only")

    def __eq__(self, other):
        return isinstance(other, DecodedPayload) and other.raw == self.raw

    def __repr__(self):
        return f"DecodedPayload({self.raw!r})"


def _wrapped(value):
    if isinstance(value, dict):
        return DecodedPayload(value)
    if isinstance(value, list):
        return [_wrapped(item) for item in value]
    return value


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
        self._verifier = Verifier(bundle_id=bundle_id, apple_root=False, anchors=list(root_certificates),
                                  environment=_ENVIRONMENTS[name],
                                  app_apple_id=int(app_apple_id) if name == "Production" else None,
                                  revocation="hard" if enable_online_checks else "off")

    def verify_and_decode_notification(self, signed_payload):
        return self._verify(signed_payload, "notification")

    def verify_and_decode_signed_transaction(self, signed_transaction):
        return self._verify(signed_transaction, "transaction")

    def verify_and_decode_renewal_info(self, signed_renewal_info):
        return self._verify(signed_renewal_info, "renewal_info")

    def verify_and_decode_app_transaction(self, signed_app_transaction):
        return self._verify(signed_app_transaction, "app_transaction")

    def verify_and_decode_realtime_request(self, signed_payload):
        return self._verify(signed_payload, "realtime_request")

    def _verify(self, token, kind):
        try:
            verification = self._verifier.verify_jws(token, kind)
        except ReceiptError as error:  # not a readable JWS, or one of another kind
            raise VerificationException(_apple_status(error.status), error.name, error.detail) from error
        if not verification.valid:
            failed = next(step for step in verification.steps if step.outcome == "failed")
            raise VerificationException(_apple_status(verification.status), verification.status_name, failed.detail)
        return DecodedPayload(verification.payload)
