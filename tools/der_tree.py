"""Definite-length DER as (tag, children-or-content) trees, for tests and benchmarks
that take a receipt apart and put it back together changed (tools/, not the library)."""


def parse(data, position=0):
    """(tag, children or content, end) of the element at position."""
    tag, length, position = data[position], data[position + 1], position + 2
    if length & 0x80:
        count = length & 0x7F
        length, position = int.from_bytes(data[position:position + count], "big"), position + count
    end = position + length
    if not tag & 0x20:
        return tag, data[position:end], end
    children = []
    while position < end:
        child = parse(data, position)
        children.append(child[:2])
        position = child[2]
    return tag, children, end


def encode(node):
    """Minimal DER for a (tag, children or content) node."""
    tag, body = node
    content = b"".join(map(encode, body)) if isinstance(body, list) else body
    length = len(content)
    octets = (length.bit_length() + 7) // 8
    header = bytes([length]) if length < 0x80 else bytes([0x80 | octets]) + length.to_bytes(octets, "big")
    return bytes([tag]) + header + content


def with_certificates(receipt, change):
    """The receipt re-encoded with change(certificates) as its SignedData certificate set."""
    tag, (oid, (explicit, (signed_data,))), _ = parse(receipt)
    fields = signed_data[1]
    fields[3] = (fields[3][0], change(fields[3][1]))
    return encode((tag, [oid, (explicit, [signed_data])]))


def padded_with_certificates(receipt, size):
    """The receipt with copies of its first certificate appended until it is about `size` bytes."""
    first = encode(parse(receipt)[1][1][1][0][1][3][1][0])
    copies = max(0, (size - len(receipt)) // len(first))
    return with_certificates(receipt, lambda certificates: certificates + [certificates[0]] * copies)
