import gc
import json
import threading
import weakref

import pytest

import libreceipt
from libreceipt import Receipt, ReceiptDate, ReceiptError


def test_library_version_is_reported():
    assert libreceipt.library_version() == "0.1.0"


def test_minted_receipt_fields(minted):
    with Receipt.from_file(minted["der"]) as receipt:
        assert receipt.bundle_id == "com.example.minted"
        assert receipt.application_version == "42"
        assert receipt.app_item_id == 0
        assert receipt.receipt_creation_date == ReceiptDate("2024-03-01T10:00:00Z", 1709287200000)
        assert receipt.receipt_creation_date.datetime.isoformat() == "2024-03-01T10:00:00+00:00"
        assert receipt.opaque_value == bytes(range(16))
        assert receipt.expiration_date is None
        assert len(receipt.purchases) == 3
        purchase = receipt.purchases[0]
        assert purchase.product_id.startswith("com.example.product.")
        assert purchase.product_type == 3
        assert purchase.is_trial_period in (True, False)
        assert purchase.cancellation_date is None
        assert purchase.original_purchase_date.ms == 1709287200250
        assert sum(p.is_trial_period for p in receipt.purchases) == 1


def test_fields_dict_and_raw_attributes(minted):
    receipt = Receipt.from_file(minted["der"])
    fields = receipt.fields()
    assert fields["bundle_id"] == "com.example.minted"
    assert "expiration_date" not in fields
    unknown = [a for a in receipt.raw_attributes if a.type == 99]
    assert unknown and unknown[0].value == b"\x01\x02\x03" and unknown[0].version == 1
    purchase_unknown = [a for a in receipt.purchases[0].raw_attributes if a.type == 1799]
    assert purchase_unknown[0].value == b"\x0c\x08kept raw"


def test_ber_base64_text_and_empty_receipts(minted):
    assert len(Receipt.from_file(minted["ber"]).purchases) == 2
    assert len(Receipt.from_file(minted["b64"]).purchases) == 1
    assert len(Receipt(minted["b64"].read_text()).purchases) == 1
    assert Receipt.from_file(minted["empty"]).purchases == []


def test_json_is_the_app_store_shape(minted):
    receipt = Receipt.from_file(minted["der"])
    document = json.loads(receipt.to_json())
    assert document["bundle_id"] == "com.example.minted"
    assert document["receipt_creation_date_ms"] == "1709287200000"
    assert document["in_app"][0]["quantity"] == "1"
    assert receipt.to_json(pretty=True).startswith("{\n  ")


@pytest.mark.parametrize("data, name", [
    (b"", "RECEIPT_E_EMPTY_INPUT"),
    (b"  \n ", "RECEIPT_E_EMPTY_INPUT"),
    (b"\x30", "RECEIPT_E_TRUNCATED"),
    (b"\x30\x84\xff\xff\xff\xff", "RECEIPT_E_LENGTH_OVERFLOW"),
    (b"MII!", "RECEIPT_E_BAD_BASE64"),
    (b"\x00\x01\x02\xff", "RECEIPT_E_NOT_A_RECEIPT"),
    (b"eyJhbGciOiJFUzI1NiJ9.eyJ4IjoxfQ.c2ln", "RECEIPT_E_UNSUPPORTED_FORMAT"),
    (b'{"signature" = "AAAA"; "purchase-info" = "AAAA";}', "RECEIPT_E_LEGACY_RECEIPT"),
])
def test_bad_input_raises_with_status(data, name):
    with pytest.raises(ReceiptError) as caught:
        Receipt(data)
    assert caught.value.name == name
    assert caught.value.detail
    assert str(caught.value).startswith(name)


def test_truncations_raise_never_crash(minted):
    data = minted["der"].read_bytes()
    for length in range(0, len(data), 7):
        with pytest.raises(ReceiptError):
            Receipt(data[:length])


def test_closed_receipt_refuses_access(minted):
    receipt = Receipt.from_file(minted["der"])
    purchase = receipt.purchases[0]
    receipt.close()
    receipt.close()  # idempotent
    with pytest.raises(ValueError):
        _ = receipt.bundle_id
    with pytest.raises(ValueError):
        _ = purchase.product_id


def test_purchases_keep_their_receipt_alive(minted):
    purchases = Receipt.from_file(minted["der"]).purchases
    assert all(p.product_id for p in purchases)


def test_purchases_is_a_sequence_made_on_demand(minted):
    receipt = Receipt.from_file(minted["der"])
    purchases = receipt.purchases
    assert len(purchases) == 3
    assert purchases[-1].transaction_id == purchases[2].transaction_id != purchases[0].transaction_id
    assert [p.index for p in purchases[1:]] == [1, 2]
    assert purchases == list(purchases) == receipt.purchases
    assert purchases != Receipt.from_file(minted["der"]).purchases  # same values, another receipt
    with pytest.raises(IndexError):
        purchases[3]
    with pytest.raises(IndexError):
        purchases[-4]


def test_a_dropped_receipt_is_freed_at_once(minted):
    """No reference cycle: the native receipt goes when its last Python reference does,
    not when the cycle collector next runs."""
    gc.disable()
    try:
        receipt = Receipt.from_file(minted["der"])
        purchases = receipt.purchases
        probe = weakref.ref(receipt)
        del receipt
        assert probe() is not None  # the purchases still hold it
        del purchases
        assert probe() is None
    finally:
        gc.enable()


def test_one_receipt_shared_by_threads(minted):
    receipt = Receipt.from_file(minted["der"])
    expected = [p.transaction_id for p in receipt.purchases]
    results = []

    def work():
        results.append([p.transaction_id for p in receipt.purchases] == expected)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [True] * 8


def test_real_receipts_match_expected(shared):
    for line in (shared / "expected.jsonl").read_text().splitlines():
        expected = json.loads(line)
        receipt = Receipt.from_file(shared / "receipts" / expected["file"])
        assert receipt.bundle_id == expected["bundle_id"]
        assert receipt.receipt_creation_date.text == expected["receipt_creation_date"]
        assert receipt.opaque_value.hex() == expected["opaque_hex"]
        assert len(receipt.purchases) == expected["in_app_count"]
        for purchase, wanted in zip(receipt.purchases, expected["in_app"]):
            assert purchase.product_id == wanted["product_id"]
            assert purchase.transaction_id == wanted["transaction_id"]
            assert purchase.quantity == wanted["quantity"]


def test_legacy_receipt_file_has_its_own_status(shared):
    with pytest.raises(ReceiptError) as caught:
        Receipt.from_file(shared / "edge" / "rc__unsupportedReceipt2-legacy-txn-receipt.bin")
    assert caught.value.name == "RECEIPT_E_LEGACY_RECEIPT"


def test_wrong_argument_types_raise_type_error(minted):
    from libreceipt import Verifier
    for bad in (42, None, 3.5, ["x"]):
        with pytest.raises(TypeError, match="expected the receipt as bytes"):
            Receipt(bad)
    with pytest.raises(TypeError, match="from_file"):
        Receipt("/path/x.der")
    with pytest.raises(TypeError, match="bundle_id: expected str"):
        Verifier(bundle_id=b"x")
    with pytest.raises(TypeError, match="verify_bytes"):
        Verifier().verify(minted["der"].read_bytes())
    assert Receipt(bytearray(minted["der"].read_bytes())).bundle_id == "com.example.minted"


def test_type_stubs_name_every_field_the_library_has():
    """The .pyi stubs are written by hand; the field properties come from the library's
    field table at import. Any field added to one and not the other fails here."""
    import ast
    import pathlib
    from libreceipt import Purchase
    stub = ast.parse((pathlib.Path(libreceipt.__file__).parent / "__init__.pyi").read_text())
    annotated = {node.name: {item.target.id for item in node.body if isinstance(item, ast.AnnAssign)}
                 for node in stub.body if isinstance(node, ast.ClassDef)}
    assert set(Receipt._field_names) <= annotated["Receipt"]
    assert set(Purchase._field_names) <= annotated["Purchase"]
    assert annotated["Purchase"] - set(Purchase._field_names) == {"index"}
    assert annotated["Receipt"] == set(Receipt._field_names)
    assert (pathlib.Path(libreceipt.__file__).parent / "py.typed").exists()


def test_status_tables_agree():
    """receipt.h's enum, the library's names (Swift's ReceiptStatus) and the binding's
    constants are three copies of one table: every header constant has the library's
    name for it, the library names nothing the header lacks, and _native agrees."""
    import pathlib
    import re
    from libreceipt import _native
    header = (pathlib.Path(__file__).resolve().parents[2] / "Include" / "receipt.h").read_text()
    body = header[header.index("typedef enum receipt_status {"):header.index("} receipt_status_t;")]
    constants = {name: int(value) for name, value in re.findall(r"\b(RECEIPT_(?:OK|E_\w+)) = (\d+)", body)}
    assert len(constants) > 50
    for name, value in constants.items():
        assert _native.lib.receipt_status_name(value).decode() == name
        assert _native.lib.receipt_status_string(value).decode() != "unknown status"
    for value in set(range(0, 1000)) - set(constants.values()):
        assert _native.lib.receipt_status_name(value).decode() == "RECEIPT_E_UNKNOWN_STATUS", value
    assert _native.STATUS_OK == constants["RECEIPT_OK"] and _native.STATUS_ABSENT == constants["RECEIPT_E_ABSENT"]


def test_errors_without_an_error_struct_carry_their_detail(minted):
    """receipt_entitlements_json takes no receipt_error_t: the binding reads the detail
    from receipt_last_error."""
    receipt = Receipt.from_file(minted["der"])
    with pytest.raises(ReceiptError) as raised:
        receipt.entitlements(0, catalog={"kinds": 7}, unverified=True)
    assert raised.value.name == "RECEIPT_E_BAD_JSON"
    assert raised.value.detail != raised.value.message  # the call's own detail, not the fixed message
