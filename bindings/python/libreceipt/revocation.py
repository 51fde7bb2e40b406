"""The OCSP loop of receipt.h for Verifier.check_revocation: libreceipt says which requests a
JWS's chain needs and checks each answer; this module only POSTs them (urllib unless the
verifier was given an ocsp_transport)."""
import ctypes

from . import _http, _native
from ._errors import _check
from ._native import lib


def urllib_ocsp_transport(url, body, timeout):
    """POSTs an OCSP request: (HTTP status, answer bytes). Raises OSError when no whole answer
    came within `timeout` (body included). Follows no redirect; reads at most 1 MiB. (The name
    is kept from when it used urllib.)"""
    status, _headers, answer = _http.exchange("POST", url, {"Content-Type": "application/ocsp-request"}, body, timeout,
                                              1 << 20, plain_http="any")
    return status, answer


def run_queries(verifier, token, transport, timeout):
    data = _native.jws_bytes(token)
    queries, error = ctypes.c_void_p(), _native.ErrorStruct()
    _check(lib.receipt_revocation_queries(verifier, data, len(data), ctypes.byref(queries), ctypes.byref(error)), error)
    outcomes = []
    try:
        for index in range(lib.receipt_revocation_query_count(queries)):
            url = lib.receipt_revocation_query_url(queries, index).decode()
            length = ctypes.c_size_t()
            pointer = lib.receipt_revocation_query_body(queries, index, ctypes.byref(length))
            body = ctypes.string_at(pointer, length.value)
            try:
                status, answer = (transport or urllib_ocsp_transport)(url, body, timeout)
            except Exception as failure:  # responder down or slow: no answer, the step decides
                outcomes.append((url, f"no answer: {failure}"))
                continue
            answer = bytes(answer or b"")
            result = _native.ErrorStruct()
            code = lib.receipt_revocation_answer(verifier, queries, index, status, answer, len(answer),
                                                 ctypes.byref(result))
            outcomes.append((url, "accepted" if code == _native.STATUS_OK else result.detail.decode("utf-8", "replace")))
    finally:
        lib.receipt_revocation_queries_free(queries)
    return outcomes
