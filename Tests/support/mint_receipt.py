#!/usr/bin/env python3
"""Mints test receipts: a payload built here, signed by the openssl CLI with a
throwaway key made on the spot. Parsing never checks signatures, so these
exercise every parser path without committing any binary or any Apple file.

    mint_receipt.py OUT.der [--purchases N] [--ber] [--base64]
"""
import argparse
import base64
import os
import subprocess
import sys
import tempfile


def der_length(n):
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def tlv(tag, body):
    return bytes([tag]) + der_length(len(body)) + body


def integer(value):
    length = max(1, (value.bit_length() + 8) // 8)
    return tlv(0x02, value.to_bytes(length, "big", signed=True))


def utf8(text):
    return tlv(0x0C, text.encode("utf-8"))


def ia5(text):
    return tlv(0x16, text.encode("ascii"))


def attribute(type_, value, version=1):
    return tlv(0x30, integer(type_) + integer(version) + tlv(0x04, value))


def der_set(elements):
    # DER sorts SET OF members by encoding; the parser must not care, Apple does sort.
    return tlv(0x31, b"".join(sorted(elements)))


BUNDLE_ID = "com.example.minted"


def purchase(index):
    day = 1 + index % 28
    return der_set([
        attribute(1701, integer(1)),
        attribute(1702, utf8(f"com.example.product.{index % 3}")),
        attribute(1703, utf8(f"{1000000000 + index}")),
        attribute(1704, ia5(f"2024-03-{day:02d}T10:00:00Z")),
        attribute(1705, utf8("1000000000")),
        attribute(1706, ia5("2024-03-01T10:00:00.250Z")),
        attribute(1707, integer(3)),
        attribute(1708, ia5(f"2024-04-{day:02d}T10:00:00Z")),
        attribute(1711, integer(2000000000000 + index)),
        attribute(1712, ia5("")),
        attribute(1713, integer(1 if index == 0 else 0)),
        attribute(1719, integer(0)),
        attribute(1799, utf8("kept raw")),
    ])


def payload(purchases):
    attributes = [
        attribute(0, utf8("ProductionSandbox")),
        attribute(1, integer(0)),
        attribute(2, utf8(BUNDLE_ID)),
        attribute(3, utf8("42")),
        attribute(4, bytes(range(16))),
        attribute(5, bytes(20)),
        attribute(12, ia5("2024-03-01T10:00:00Z")),
        attribute(16, integer(0)),
        attribute(19, utf8("1.0")),
        attribute(8, ia5("")),
        attribute(99, b"\x01\x02\x03"),
    ]
    attributes += [attribute(17, purchase(i)) for i in range(purchases)]
    return der_set(attributes)


def sign(content, ber):
    with tempfile.TemporaryDirectory() as work:
        key, cert, data, out = (os.path.join(work, n) for n in ("key.pem", "cert.pem", "data", "out.der"))
        with open(data, "wb") as f:
            f.write(content)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                        "-subj", "/CN=libreceipt parse-test signer", "-days", "1"],
                       check=True, capture_output=True)
        command = ["openssl", "cms", "-sign", "-binary", "-nodetach", "-noattr", "-md", "sha256",
                   "-signer", cert, "-inkey", key, "-in", data, "-outform", "DER", "-out", out]
        if ber:
            command.append("-stream")
        subprocess.run(command, check=True, capture_output=True)
        with open(out, "rb") as f:
            return f.read()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out")
    parser.add_argument("--purchases", type=int, default=3)
    parser.add_argument("--ber", action="store_true", help="indefinite lengths, as Xcode writes")
    parser.add_argument("--base64", action="store_true")
    args = parser.parse_args()
    receipt = sign(payload(args.purchases), args.ber)
    if args.base64:
        receipt = base64.encodebytes(receipt)
    with open(args.out, "wb") as f:
        f.write(receipt)


if __name__ == "__main__":
    sys.exit(main())
