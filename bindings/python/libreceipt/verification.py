"""Verification: a thin wrapper over receipt_verifier_*, receipt_verify and receipt_verify_bytes."""
import ctypes

from . import _native
from ._errors import ArgumentTypeError, ReceiptError, _check, _take_json
from ._native import lib


class Step:
    """One check: `name`, `outcome` ("passed", "skipped" or "failed"), `status` (the
    status number, 0 unless failed), `status_name` (e.g. "RECEIPT_OK") and `detail`,
    as in Verification."""
    __slots__ = ("name", "outcome", "status", "status_name", "detail")

    def __init__(self, name, outcome, status, detail):
        self.name, self.outcome, self.status, self.detail = name, outcome, status, detail
        self.status_name = lib.receipt_status_name(status).decode()

    def __repr__(self):
        return f"Step({self.name!r}, {self.outcome!r}, {self.status_name!r})"


class Verification:
    """The report of one verification: `status` (the first failing step's status number,
    0 when none failed), `status_name` (e.g. "RECEIPT_E_CHAIN_UNTRUSTED"), `steps` (a
    list of Step, in order; every step reports, not only the first failure) and `valid`
    (True only when no step failed), and `fingerprint`: the SHA-256 of the signed content as hex,
    the key to de-duplicate and block replays on (no re-spelling of a receipt or JWS changes it;
    hashing the input bytes does not do this). For a JWS, `jws` is the decoded JWS and `payload`
    its payload as a dict, exactly as signed (believe it only when `valid`); both are
    None for a receipt."""

    def __init__(self, handle, jws=None):
        self._handle = handle
        self.jws = jws
        self.status = lib.receipt_verification_status(handle)
        self.status_name = lib.receipt_status_name(self.status).decode()
        self._steps = None

    @property
    def steps(self):
        """Every step, in order (read from the report on first use)."""
        if self._steps is None:
            steps = []
            for index in range(lib.receipt_verification_step_count(self._handle)):
                step = _native.StepStruct()
                lib.receipt_verification_step_at(self._handle, index, ctypes.byref(step))
                steps.append(Step(step.name.decode(), _native.STEP_OUTCOMES[step.outcome], step.status,
                                  step.detail.decode("utf-8")))
            self._steps = steps
        return self._steps

    @property
    def payload(self):
        """A verified JWS's payload as a dict (None for a receipt). Raises ReceiptError with the
        verdict's status when the JWS did not verify: what it claims is not to be believed, and
        is read only by name, through `unverified_payload`."""
        if self.jws is None:
            return None
        if not self.valid:
            raise ReceiptError(self.status, f"the JWS did not verify ({self.status_name}): its payload is not to be "
                                            "believed; read it as .unverified_payload", None)
        return self.jws.payload

    @property
    def unverified_payload(self):
        """A JWS's payload as a dict whatever the verdict (None for a receipt): for logs and
        diagnosis of a JWS that failed, never for decisions."""
        return None if self.jws is None else self.jws.payload

    @property
    def fingerprint(self):
        """SHA-256 of what the signature covers (a receipt's payload, a JWS's header.payload), hex."""
        return _native.fingerprint(lib.receipt_verification_fingerprint, self._handle)

    @property
    def valid(self):
        """True only when no step failed."""
        return self.status == _native.STATUS_OK

    def step(self, name):
        """The Step called `name` ("signature", "chain", ..., "environment")."""
        return next(step for step in self.steps if step.name == name)

    def to_json(self, pretty=False):
        """The report as JSON: {"valid", "status", "anchor", "fingerprint", "steps": [...]}."""
        return _take_json(lib.receipt_verification_to_json, self._handle, pretty)

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.receipt_verification_free(self._handle)
            self._handle = None

    def __repr__(self):
        return f"<Verification {'valid' if self.valid else self.status_name}>"


class Verifier:
    """An immutable verifier, shareable across threads.

    Trust: the Apple Inc. Root CA unless `apple_root=False`; Xcode's StoreKit
    certificate only with `allow_xcode=True`; and any `anchors` (DER or PEM bytes).
    Policy: `bundle_id`, `application_version` and `device_id` (bytes) are checked
    when given; `now` (a timezone-aware datetime or epoch ms) is the instant for the
    VPP expiry, and for a JWS that carries no signedDate; `environment`
    ("production", "sandbox", "xcode" or "local-testing") is the environment the
    receipt or JWS must come from (any when None); `app_apple_id` (int) is the app's
    Apple id a JWS naming one must name (required for production ones).

    Revocation (JWS of App Store chains): `revocation` "off" (the default), "soft" (revoked
    fails; no fresh OCSP answer passes with a warning) or "hard" (only fresh good answers
    pass). When it is on, verify_jws asks the OCSP responders first, through
    `ocsp_transport(url, body, timeout) -> (status, body)` (urllib by default, `ocsp_timeout`
    seconds each), and the answers are cached on this verifier until their nextUpdate.

    JWS: Apple Root CA - G3 is trusted with `apple_root`; an Xcode-signed JWS only
    when its certificate, exported from Xcode, is one of `anchors`.
    """

    def __init__(self, bundle_id=None, application_version=None, device_id=None, allow_xcode=False,
                 apple_root=True, anchors=(), now=None, environment=None, app_apple_id=None, revocation="off",
                 ocsp_transport=None, ocsp_timeout=5.0):
        builder = ctypes.c_void_p()
        _check(lib.receipt_verifier_builder_new(ctypes.byref(builder)))
        try:
            trust = (_native.TRUST_APPLE_ROOT if apple_root else 0) | (_native.TRUST_XCODE_STOREKIT if allow_xcode else 0)
            _check(lib.receipt_verifier_builder_set_trust(builder, trust))
            for anchor in anchors:
                if not isinstance(anchor, (bytes, bytearray, memoryview)):
                    raise ArgumentTypeError(f"anchors: expected DER or PEM bytes, got {type(anchor).__name__}")
                anchor = bytes(anchor)
                error = _native.ErrorStruct()
                status = lib.receipt_verifier_builder_add_anchor(builder, anchor, len(anchor), ctypes.byref(error))
                if status != _native.STATUS_OK:
                    raise ReceiptError(status, error.detail.decode("utf-8", "replace"))
            if bundle_id is not None:
                _check(lib.receipt_verifier_builder_set_bundle_id(builder, _native.text_argument(bundle_id, "bundle_id")))
            if application_version is not None:
                _check(lib.receipt_verifier_builder_set_application_version(
                    builder, _native.text_argument(application_version, "application_version")))
            if device_id is not None:
                if not isinstance(device_id, (bytes, bytearray, memoryview)):
                    raise ArgumentTypeError(f"device_id: expected bytes, got {type(device_id).__name__}")
                device_id = bytes(device_id)
                _check(lib.receipt_verifier_builder_set_device_id(builder, device_id, len(device_id)))
            if now is not None:
                _check(lib.receipt_verifier_builder_set_now(builder, _native.epoch_milliseconds(now, "now")))
            if environment is not None:
                if environment not in _native.ENVIRONMENTS:
                    raise ValueError(f"environment: expected one of {sorted(_native.ENVIRONMENTS)}, got {environment!r}")
                _check(lib.receipt_verifier_builder_set_environment(builder, _native.ENVIRONMENTS[environment]))
            if app_apple_id is not None:
                if isinstance(app_apple_id, bool) or not isinstance(app_apple_id, int):
                    raise ArgumentTypeError(f"app_apple_id: expected int, got {type(app_apple_id).__name__}")
                _check(lib.receipt_verifier_builder_set_app_apple_id(builder, app_apple_id))
            if revocation not in _native.REVOCATION_MODES:
                raise ValueError(f"revocation: expected one of {sorted(_native.REVOCATION_MODES)}, got {revocation!r}")
            _check(lib.receipt_verifier_builder_set_revocation(builder, _native.REVOCATION_MODES[revocation]))
            self.revocation = revocation
            self._ocsp_transport = ocsp_transport
            self._ocsp_timeout = ocsp_timeout
            self._handle = ctypes.c_void_p()
            _check(lib.receipt_verifier_build(builder, ctypes.byref(self._handle)))
        finally:
            lib.receipt_verifier_builder_free(builder)

    def verify(self, receipt):
        """A Verification report for a parsed Receipt (for bytes, use verify_bytes)."""
        from . import Receipt
        if not isinstance(receipt, Receipt):
            raise ArgumentTypeError(f"verify() takes a Receipt, got {type(receipt).__name__}; "
                            f"for a receipt's bytes use verify_bytes(data)")
        out = ctypes.c_void_p()
        status = lib.receipt_verify(self._handle, receipt._handle_or_raise(), ctypes.byref(out))
        if not out:
            _check(status)
        return Verification(out)

    def verify_bytes(self, data):
        """A Verification report straight from a receipt's bytes (DER, BER or base64 text)
        when only the verdict matters: the same checks as verify(Receipt(data)), without
        typing the purchases. Raises ReceiptError when the bytes are not an app receipt."""
        data = _native.input_bytes(data)
        out, error = ctypes.c_void_p(), _native.ErrorStruct()
        status = lib.receipt_verify_bytes(self._handle, data, len(data), ctypes.byref(out), ctypes.byref(error))
        if not out:
            _check(status, error)
        return Verification(out)

    def verify_jws(self, token, kind=None):
        """A Verification report of a StoreKit 2 JWS (compact form, str or bytes): header,
        ES256 signature, chain at its signedDate, markers, bundle id, environment, app
        Apple id, and a notification's nested JWS. `.payload` is the payload as signed, once
        valid (it raises otherwise; `.unverified_payload` names what it is).
        `kind` ("transaction", "renewal_info", "notification", "app_transaction",
        "realtime_request"): what the payload must be, as Apple's verifiers take it from the
        call; another kind is RECEIPT_E_WRONG_PAYLOAD_KIND. None: told from the members.
        Raises ReceiptError when the token is not a readable JWS."""
        from .jws import verify_jws
        if self.revocation != "off":
            self.check_revocation(token)
        jws, handle = verify_jws(self._handle, token, kind)
        return Verification(handle, jws)

    def check_revocation(self, token):
        """Asks OCSP what the JWS's chain still needs (nothing when the answers are cached and
        fresh, or the chain is not a trusted App Store chain), with `ocsp_transport(url, body,
        timeout) -> (status, body)` (urllib by default), and gives each answer to libreceipt,
        which checks it and keeps it for every later verification. verify_jws calls it when
        revocation is on. Returns [(url, "good" | "revoked" | "unknown" | the reason it failed)]:
        a responder down or a bad answer is not an exception; the step then has no fresh answer."""
        from .revocation import run_queries
        return run_queries(self._handle, token, self._ocsp_transport, self._ocsp_timeout)

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.receipt_verifier_free(self._handle)
            self._handle = None
