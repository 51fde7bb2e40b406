"""Apple's App Store Server Library for Python, by its own module and class names, on
libreceipt: change `from appstoreserverlibrary.X import Y` to
`from libreceipt.appstoreserverlibrary.X import Y`. What is here so far: the signed
data verifier (`signed_data_verifier`). README's migration section says what differs."""
