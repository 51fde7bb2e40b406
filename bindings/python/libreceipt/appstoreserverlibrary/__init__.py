"""Apple's App Store Server Library for Python, by its own module and class names, on
libreceipt: change `from appstoreserverlibrary.X import Y` to
`from libreceipt.appstoreserverlibrary.X import Y`. What is here: the signed data verifier
(`signed_data_verifier`), the API client (`api_client`), the receipt utility (`receipt_utility`)
and the signature creators (`promotional_offer`, `jws_signature_creator`). What they return is
Apple's own: the models and enumerations of `appstoreserverlibrary.models` (which the drop-in
requires), built from what libreceipt's core verified. docs/migrating-from-apple.md says what
differs."""
