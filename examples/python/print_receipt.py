"""Parses a receipt file and prints its bundle id and purchases.
Run: pip install ./bindings/python && python3 examples/python/print_receipt.py receipt.der"""
import sys

import libreceipt

try:
    with libreceipt.Receipt.from_file(sys.argv[1]) as receipt:
        print("bundle id:", receipt.bundle_id)
        for purchase in receipt.purchases:
            purchased = purchase.purchase_date.datetime.isoformat() if purchase.purchase_date else "?"
            print(f"  {purchase.product_id}  transaction {purchase.transaction_id}  purchased {purchased}")
except libreceipt.ReceiptError as error:
    print(error, file=sys.stderr)
    sys.exit(2)
