"""Apple's App Store Server Library for Python, by its own module and class names, on
libreceipt: change `from appstoreserverlibrary.X import Y` to
`from libreceipt.appstoreserverlibrary.X import Y`. What is here: the signed data verifier
(`signed_data_verifier`), the API client (`api_client`), and the signature creators
(`promotional_offer`, `jws_signature_creator`). Apple's request models and enumerations
(`appstoreserverlibrary.models`) are taken as they are. README's migration section says what
differs."""
