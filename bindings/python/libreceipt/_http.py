"""The one HTTP exchange libreceipt's default transports make (App Store Server API, OCSP).

- No redirect is followed: http.client follows none, so a 3xx comes back as the answer it is (the
  App Store Server API and OCSP need none, and a followed redirect would carry the bearer token
  to whatever host the Location names).
- `timeout` bounds the whole exchange, head and body: a timer shuts the socket at the deadline,
  so a responder that sends one byte every few seconds costs the timeout, not the length of its
  body times its pace (urllib's timeout is per socket read).
- The body is read in chunks and the reading stops past `max_bytes`: a 1 GB answer costs the cap.
"""
import http.client
import ipaddress
import socket
import ssl
import threading
import time
import urllib.parse

_CHUNK = 1 << 16


class AnswerTooLarge(OSError):
    """The answer's body is larger than the transport reads."""


class NoWholeAnswer(TimeoutError):
    """The whole answer did not come within the timeout."""


def is_loopback(host):
    """Whether `host` (a name or an address) is this machine: localhost, 127.0.0.0/8, ::1."""
    if host is None:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exchange(method, url, headers, body, timeout, max_bytes, plain_http="loopback"):
    """(HTTP status, headers dict, body bytes). Raises OSError (NoWholeAnswer, AnswerTooLarge, a
    connection error) when no whole answer came. plain_http: "loopback" refuses http:// to another
    host (ValueError; credentials travel with the request), "any" allows it (OCSP is plain http)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=timeout,
                                                 context=ssl.create_default_context())
    elif parts.scheme == "http" and (plain_http == "any" or is_loopback(parts.hostname)):
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    else:
        raise ValueError(f"refused to send to {parts.scheme}://{parts.hostname}: https only, http to loopback hosts")
    deadline = time.monotonic() + timeout
    expired = threading.Event()

    def expire():
        expired.set()
        sock = connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    try:
        connection.connect()
        sock = connection.sock
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection.request(method, target, body=body or None, headers=headers)
        response = connection.getresponse()
        chunks, size = [], 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise NoWholeAnswer(f"no whole answer within {timeout} s")
            sock.settimeout(remaining)
            chunk = response.read1(_CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > max_bytes:
                raise AnswerTooLarge(f"the answer is larger than {max_bytes} bytes; reading stopped there")
            chunks.append(chunk)
        # The timer's shutdown reads as an end of stream: an answer cut short is no answer.
        if expired.is_set():
            raise NoWholeAnswer(f"no whole answer within {timeout} s")
        if response.length:
            raise OSError(f"the answer ended {response.length} bytes before its Content-Length")
        return response.status, dict(response.getheaders()), b"".join(chunks)
    except (OSError, http.client.HTTPException) as failure:
        # The deadline passed, as the timer's shutdown or as a socket timeout, whichever came first.
        if (expired.is_set() or isinstance(failure, TimeoutError)) and not isinstance(failure, AnswerTooLarge):
            raise NoWholeAnswer(f"no whole answer within {timeout} s") from None
        if isinstance(failure, http.client.HTTPException):
            raise OSError(f"not an HTTP answer: {failure}") from None
        raise
    finally:
        timer.cancel()
        connection.close()
