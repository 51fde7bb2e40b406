"""Apple's module names point at libreceipt's drop-in; Apple's models stay Apple's (see README.md)."""
import sys

import appstoreserverlibrary
from libreceipt.appstoreserverlibrary import (api_client, jws_signature_creator, promotional_offer, receipt_utility,
                                              signed_data_verifier)

for _name, _module in {"signed_data_verifier": signed_data_verifier, "api_client": api_client,
                       "promotional_offer": promotional_offer, "jws_signature_creator": jws_signature_creator,
                       "receipt_utility": receipt_utility}.items():
    sys.modules["appstoreserverlibrary." + _name] = _module
    setattr(appstoreserverlibrary, _name, _module)
