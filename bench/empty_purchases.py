#!/usr/bin/env python3
"""Writes an unsigned receipt of N empty purchases (12 bytes each, the cheapest input per
purchase) for the memory figures of `make bench`.   empty_purchases.py OUT N"""
import sys


def tlv(tag, body):
    n = len(body)
    length = bytes([n]) if n < 0x80 else bytes([0x80 | ((n.bit_length() + 7) // 8)]) + n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag]) + length + body


def main(out, count):
    purchase = bytes([0x30, 0x0A, 0x02, 0x01, 0x11, 0x02, 0x01, 0x01, 0x04, 0x02, 0x31, 0x00])  # {17, 1, SET {}}
    signed_data_oid = bytes.fromhex("06092a864886f70d010702")
    data_oid = bytes.fromhex("06092a864886f70d010701")
    content = tlv(0x30, data_oid + tlv(0xA0, tlv(0x04, tlv(0x31, purchase * count))))
    signed_data = tlv(0x30, bytes([0x02, 0x01, 0x01, 0x31, 0x00]) + content + bytes([0x31, 0x00]))
    with open(out, "wb") as f:
        f.write(tlv(0x30, signed_data_oid + tlv(0xA0, signed_data)))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
