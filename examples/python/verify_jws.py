"""Verifies a StoreKit 2 JWS and prints its steps and payload.
Run: python3 examples/python/verify_jws.py FILE.jws [BUNDLE_ID [ANCHOR.pem]]
With ANCHOR, that certificate is trusted instead of Apple Root CA - G3."""
import json
import sys

import libreceipt

if not 2 <= len(sys.argv) <= 4:
    sys.exit(__doc__)
options = {"bundle_id": sys.argv[2]} if len(sys.argv) > 2 else {}
if len(sys.argv) > 3:
    options.update(apple_root=False, anchors=[open(sys.argv[3], "rb").read()])
try:
    result = libreceipt.Verifier(**options).verify_jws(open(sys.argv[1]).read())
except libreceipt.ReceiptError as error:  # not a readable JWS
    print(error, file=sys.stderr)
    sys.exit(2)
for step in result.steps:
    print(f"{step.outcome:8} {step.name:20} {step.detail}")
print(json.dumps(result.payload, indent=2))
print("VALID" if result.valid else result.status_name)
sys.exit(0 if result.valid else 1)
