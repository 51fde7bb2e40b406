/*
 * receipt.h: the C interface of libreceipt, an App Store receipt parser.
 *
 * This header is the contract. The library implements exactly these functions,
 * and the build checks each signature against this file.
 *
 * Conventions that hold for every function below unless its comment says
 * otherwise:
 *
 *  - Status codes. Every fallible call returns a receipt_status_t, where
 *    RECEIPT_OK (0) means success. Output parameters come last. On failure,
 *    output parameters are left untouched, except that handle out-parameters
 *    are set to NULL.
 *  - No aborts. No input, however malformed, makes the library abort, print
 *    or exit. A NULL where a pointer is required gives RECEIPT_E_NULL_ARGUMENT.
 *  - Errors. Every call that can fail returns its status, and its detail
 *    (where and why) is in the receipt_error_t it takes, or else in
 *    receipt_last_error() on the same thread, right after the call.
 *  - Out of memory. Any call that allocates may return RECEIPT_E_NO_MEMORY
 *    (90) instead of its other statuses; it is never reported as a limit or a
 *    verdict, and nothing half-built is returned.
 *  - Borrowed strings. Strings and bytes read from a receipt point into
 *    memory owned by the receipt_t. They stay valid until receipt_free() is
 *    called on that handle. Do not free them. Strings are NUL-terminated UTF-8.
 *    The length out-parameter, where there is one, excludes the NUL.
 *  - Owned strings. Strings the library builds for you, such as JSON, are
 *    freed with receipt_string_free().
 *  - Dates are int64 milliseconds since 1970-01-01T00:00:00Z. An absent date
 *    gives RECEIPT_E_ABSENT, never 0.
 *  - Threads. There is no global mutable state and no init call. A
 *    receipt_t is immutable once receipt_parse() returns it, and a
 *    receipt_verifier_t once receipt_verifier_build() returns it (its cache of
 *    validated chains is internally locked). Any number of threads may use one
 *    handle at the same time. A receipt_verifier_builder_t is for one thread.
 *    Only the _free functions need exclusive access: no other call on that
 *    handle may run during or after them.
 */
#ifndef RECEIPT_H
#define RECEIPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- version */

#define RECEIPT_VERSION_MAJOR 0
#define RECEIPT_VERSION_MINOR 1
#define RECEIPT_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH. */
#define RECEIPT_VERSION_NUMBER \
    (RECEIPT_VERSION_MAJOR * 10000 + RECEIPT_VERSION_MINOR * 100 + RECEIPT_VERSION_PATCH)
#define RECEIPT_VERSION_STRING "0.1.0"

/* The RECEIPT_VERSION_NUMBER the loaded library was built with. Compare it with
 * the macro to detect a header/library mismatch at run time. Never fails. */
unsigned receipt_version(void);

/* The RECEIPT_VERSION_STRING of the loaded library: static storage, never
 * NULL, never freed. */
const char *receipt_version_string(void);

/* ---------------------------------------------------------------- status */

/* Numbers are stable. Ranges: 1-89 caller errors; 90-99 the environment (out
 * of memory); 100-199 input that is not a usable receipt; 200-299 verification
 * verdicts. */
typedef enum receipt_status {
    RECEIPT_OK = 0,

    RECEIPT_E_NULL_ARGUMENT = 1,      /* a required pointer argument was NULL */
    RECEIPT_E_INVALID_ARGUMENT = 2,   /* an argument is out of its allowed range */
    RECEIPT_E_ABSENT = 3,             /* the field is not in this receipt (or is an empty date) */
    RECEIPT_E_WRONG_FIELD_KIND = 4,   /* e.g. asking an integer of a string field */
    RECEIPT_E_INDEX_OUT_OF_RANGE = 5, /* a purchase or attribute index past the end */
    RECEIPT_E_UNKNOWN_FIELD = 6,      /* not a receipt_field_t, or a field of the other scope */

    RECEIPT_E_NO_MEMORY = 90,         /* an allocation failed; nothing was accepted or kept */

    RECEIPT_E_EMPTY_INPUT = 100,       /* zero bytes, or only whitespace */
    RECEIPT_E_INPUT_TOO_LARGE = 101,   /* over the 32 MiB input limit */
    RECEIPT_E_BAD_BASE64 = 102,        /* text input that is not valid base64 */
    RECEIPT_E_LEGACY_RECEIPT = 103,    /* an iOS 6 transactionReceipt (plist), not an app receipt */
    RECEIPT_E_UNSUPPORTED_FORMAT = 104,/* a JWS (StoreKit 2) or PEM-armoured input */
    RECEIPT_E_NOT_A_RECEIPT = 105,     /* binary input that does not start a DER SEQUENCE */
    RECEIPT_E_NOT_A_JWS = 106,         /* not three segments joined by two dots (JWS functions) */
    RECEIPT_E_BAD_BASE64URL = 107,     /* a JWS segment that is not strict unpadded base64url */
    RECEIPT_E_TRUNCATED = 110,         /* the input ends inside an element: cut short anywhere */
    RECEIPT_E_LENGTH_OVERFLOW = 111,   /* a length that does not fit in its enclosing element, longer
                                          than any accepted input, or over 4 octets */
    RECEIPT_E_NESTING_TOO_DEEP = 112,  /* BER nesting deeper than 32 levels */
    RECEIPT_E_UNEXPECTED_TAG = 113,    /* an element the receipt grammar does not allow there */
    RECEIPT_E_BAD_ENCODING = 114,      /* invalid BER (reserved length, indefinite primitive, ...) */
    RECEIPT_E_TRAILING_DATA = 115,     /* bytes after the end of the receipt */
    RECEIPT_E_NOT_SIGNED_DATA = 120,   /* outer content type is not PKCS #7 signedData */
    RECEIPT_E_NOT_DATA_CONTENT = 121,  /* signed content type is not PKCS #7 data */
    RECEIPT_E_MISSING_CONTENT = 122,   /* detached signature: no payload */
    RECEIPT_E_BAD_ATTRIBUTE = 130,     /* a known attribute with the wrong inner type or shape */
    RECEIPT_E_BAD_UTF8 = 131,          /* a UTF8String that is not valid UTF-8 */
    RECEIPT_E_INTEGER_OVERFLOW = 132,  /* an INTEGER wider than 64 bits */
    RECEIPT_E_BAD_DATE = 133,          /* a date in no known form */
    RECEIPT_E_DUPLICATE_ATTRIBUTE = 134, /* a known attribute twice in one record */
    RECEIPT_E_LIMIT_EXCEEDED = 140,    /* over 1,000,000 attributes, a 64 KiB string or 4,194,304 payload chunks */
    RECEIPT_E_BAD_ANCHOR = 141,        /* an anchor that is not one DER or PEM certificate */
    RECEIPT_E_BAD_JSON = 142,          /* a catalog, App Store response, JWS header or payload that is not
                                          the JSON expected */
    RECEIPT_E_DUPLICATE_MEMBER = 143,  /* a JSON object naming a member twice */
    RECEIPT_E_NOT_AN_OBJECT = 144,     /* a JWS header or payload that is null, a number, an array, ... */
    RECEIPT_E_BAD_FIELD = 145,         /* a documented JWS member of the wrong JSON type */
    RECEIPT_E_WRONG_PAYLOAD_KIND = 146, /* a JWS of another kind than its place calls for
                                           (a renewal info under signedTransactions) */
    RECEIPT_E_UNSIGNED_MEMBER = 147,   /* an App Store Server API answer carries, unsigned, a member by a
                                           name libreceipt gives verified payloads ("transactions") */
    RECEIPT_E_NOT_WHAT_WAS_ASKED = 148, /* a signed answer is about another transaction than was asked */

    /* Verification verdicts: the receipt is readable but must not be believed. */
    RECEIPT_E_SIGNATURE_INVALID = 200,    /* the signature does not verify over the payload */
    RECEIPT_E_UNSUPPORTED_DIGEST = 201,   /* not RSA with SHA-1 or SHA-256 */
    RECEIPT_E_UNSUPPORTED_SIGNATURE = 202,/* several signers, signed attributes, non-RSA key */
    RECEIPT_E_SIGNER_NOT_FOUND = 203,     /* no SignerInfo, or its certificate is not in the receipt */
    RECEIPT_E_CHAIN_UNTRUSTED = 204,      /* no path to an enabled anchor (unknown root, forged chain,
                                             missing intermediate, weak key or algorithm) */
    RECEIPT_E_CHAIN_NOT_VALID_AT_CREATION = 205, /* a certificate expired or not yet valid then */
    RECEIPT_E_UNEXPECTED_CERTIFICATES = 206,     /* certificates outside the verified chain */
    RECEIPT_E_MISSING_INTERMEDIATE_MARKER = 207, /* intermediate lacks 1.2.840.113635.100.6.2.1 */
    RECEIPT_E_MISSING_LEAF_MARKER = 208,  /* signer lacks 1.2.840.113635.100.6.11.1 */
    RECEIPT_E_NO_CREATION_DATE = 209,     /* no receipt_creation_date to evaluate the chain at */
    RECEIPT_E_BUNDLE_MISMATCH = 210,
    RECEIPT_E_VERSION_MISMATCH = 211,
    RECEIPT_E_DEVICE_MISMATCH = 212,      /* device hash differs, or its inputs are absent */
    RECEIPT_E_RECEIPT_EXPIRED = 213,      /* VPP expiration_date is past */
    RECEIPT_E_ENVIRONMENT_MISMATCH = 214, /* receipt_type is not of the environment the policy requires */
    RECEIPT_E_NOT_CANONICAL = 215,        /* the envelope is not in Apple's one form (README, Canonical form) */
    RECEIPT_E_DUPLICATE_CERTIFICATE = 216,/* the same certificate (identical bytes) twice */
    RECEIPT_E_TOO_MANY_CERTIFICATES = 217,/* more than RECEIPT_MAX_CERTIFICATES certificates */
    RECEIPT_E_APP_APPLE_ID_MISMATCH = 218,/* a JWS's appAppleId differs, or a production one was not checked */
    RECEIPT_E_BAD_CERTIFICATE = 220,      /* a certificate in the receipt cannot be decoded */
    RECEIPT_E_CRYPTO_FAILURE = 221,       /* libcrypto failed internally; nothing was accepted */
    RECEIPT_E_MALFORMED_SIGNATURE = 222,  /* the SignerInfo is not well-formed DER */
    RECEIPT_E_ALGORITHM_REFUSED = 223,    /* a JWS alg other than ES256 (none, HS256, RS256, ...) */
    RECEIPT_E_CRITICAL_UNSUPPORTED = 224, /* a JWS header with a crit parameter */
    RECEIPT_E_CERTIFICATE_COUNT = 225,    /* a JWS x5c of neither 3 (App Store) nor 1 (Xcode) certificates */
    RECEIPT_E_BAD_SIGNATURE_ENCODING = 226,/* a JWS signature that is not 64 bytes of r||s */
    RECEIPT_E_NESTED_UNREADABLE = 227,    /* a notification's nested JWS cannot be read (its detail
                                             names why), or is a notification itself */
    RECEIPT_E_KEY_REFUSED = 228,          /* a receipt's RSA signing key outside 2048-4096 bits or with
                                             e != 65537: refused before any RSA arithmetic */
    RECEIPT_E_NOT_A_SIGNING_CERTIFICATE = 229, /* the signer of a chain of 2 or more is a CA (basicConstraints
                                             CA:TRUE), or its keyUsage lacks digitalSignature */
    RECEIPT_E_REVOKED = 230,              /* OCSP says a certificate of the chain is revoked ("revocation" step) */
    RECEIPT_E_REVOCATION_UNKNOWN = 231,   /* no fresh OCSP answer for a certificate of the chain, in hard mode */
    RECEIPT_E_BAD_OCSP_RESPONSE = 232,    /* an OCSP answer that is malformed, unsigned, mis-signed, stale,
                                             from the future, without the nonce sent, or for another certificate */
    RECEIPT_E_NO_CERTIFICATES = 233       /* a JWS header without x5c: nothing says who signed it */
} receipt_status_t;

/* The constant's name, e.g. "RECEIPT_E_TRUNCATED", or "RECEIPT_E_UNKNOWN_STATUS"
 * for a number that is not a status. Static storage, never NULL. */
const char *receipt_status_name(receipt_status_t status);

/* A fixed one-line English message for the status, or "unknown status". Static
 * storage, never NULL. The per-call detail is in receipt_error_t. */
const char *receipt_status_string(receipt_status_t status);

/* Where and why a call failed. The caller owns the struct (usually on the
 * stack). A call that fills it on failure leaves it as {RECEIPT_OK,
 * RECEIPT_NO_OFFSET, ""} on success. */
#define RECEIPT_NO_OFFSET SIZE_MAX
#define RECEIPT_DETAIL_SIZE 256
typedef struct receipt_error {
    receipt_status_t status;
    /* A byte offset into the decoded input (after base64) where the problem
     * was found, or RECEIPT_NO_OFFSET. */
    size_t offset;
    /* A readable, NUL-terminated explanation naming the element or attribute,
     * cut at a UTF-8 boundary to fit. */
    char detail[RECEIPT_DETAIL_SIZE];
} receipt_error_t;

/*
 * The last failure on this thread. Functions that take a receipt_error_t
 * report there; every other function that returns a receipt_status_t reports
 * only the status, and this gives the detail: the status, offset and detail
 * of the most recent call on the calling thread that failed (RECEIPT_E_ABSENT
 * is an answer, not a failure, and is not recorded). Success does not clear
 * it: read it right after the failing call. {RECEIPT_OK, RECEIPT_NO_OFFSET, ""}
 * when no call on this thread has failed.
 * Errors: RECEIPT_E_NULL_ARGUMENT.
 * Thread-safety: per thread; calls on other threads never change it.
 */
receipt_status_t receipt_last_error(receipt_error_t *out_error);

/* ---------------------------------------------------------------- limits */

/*
 * Every loop over structure the input controls has a bound, so that no input
 * costs more time or memory than a genuine receipt of its size. Past a bound
 * the call fails with the status named here; it never slows down or grows.
 *  - input: 32 MiB before base64 decoding            RECEIPT_E_INPUT_TOO_LARGE
 *  - nesting: 32 levels of BER                        RECEIPT_E_NESTING_TOO_DEEP
 *  - attributes: 1,000,000, app and in-app together   RECEIPT_E_LIMIT_EXCEEDED
 *  - one string value: 64 KiB                         RECEIPT_E_LIMIT_EXCEEDED
 *  - payload chunks (BER constructed OCTET STRING): 4,194,304
 *                                                     RECEIPT_E_LIMIT_EXCEEDED
 *  - certificates, at verification: RECEIPT_MAX_CERTIFICATES
 *                                                     RECEIPT_E_TOO_MANY_CERTIFICATES
 *  - SignerInfos: exactly one                         RECEIPT_E_UNSUPPORTED_SIGNATURE
 *  - JWS header and payload JSON: nesting 16          RECEIPT_E_NESTING_TOO_DEEP
 *    and 10,000 values each (members and items)       RECEIPT_E_LIMIT_EXCEEDED
 *  - JWS x5c: RECEIPT_MAX_CERTIFICATES read           RECEIPT_E_TOO_MANY_CERTIFICATES
 *  - JWS nested in a notification: one level          RECEIPT_E_NESTED_UNREADABLE
 *  - OCSP answer: 1 MiB, at most 4 certificates       RECEIPT_E_BAD_OCSP_RESPONSE
 *  - App Store Server API answer: 4 MiB, JSON nesting 16 and 200,000 values,
 *    10,000 items a list                              RECEIPT_E_INPUT_TOO_LARGE,
 *                                                     RECEIPT_E_LIMIT_EXCEEDED
 * Real receipts carry 1 (Xcode) to 3 certificates. A verifier also keeps at
 * most 32 validated certificate sets (512 KiB); only sets whose chain
 * validated to a trusted anchor enter it, so refused input never evicts them.
 */
#define RECEIPT_MAX_CERTIFICATES 8

/* ---------------------------------------------------------------- parsing */

/* A parsed receipt. Opaque; created by receipt_parse(), freed by receipt_free(). */
typedef struct receipt receipt_t;

/*
 * Parses an app receipt from `length` bytes at `data`: raw DER/BER bytes (as
 * on disk), or base64 text (as clients send it; line breaks are allowed).
 * The bytes are copied: `data` may be freed as soon as the call returns.
 *
 * Parsing reads structure only. It does not check any signature. The
 * verification API does that.
 *
 * On success, returns RECEIPT_OK and stores a new handle in *out_receipt,
 * which the caller must free with receipt_free().
 * On failure, stores NULL in *out_receipt and returns a status from
 * 100-199. If out_error is not NULL, it is filled with the status, the
 * offset and a detail. A legacy iOS 6 transaction receipt gives
 * RECEIPT_E_LEGACY_RECEIPT, which is not a "malformed" status.
 *
 * Errors: RECEIPT_E_NULL_ARGUMENT if out_receipt is NULL, or if data is NULL
 * and length is not 0. Any input status listed above.
 * Memory: the handle holds an amount proportional to `length`: measured from
 * 2.0 times (no purchases) to 3.1 times (10,000 purchases, 3.1 MB), and 3.4
 * times for 200,000 empty purchases, the cheapest input per purchase (see
 * README, Performance).
 * Thread-safety: safe to call from any number of threads at once.
 */
receipt_status_t receipt_parse(const void *data, size_t length,
                               receipt_t **out_receipt, receipt_error_t *out_error);

/* Frees a receipt and every borrowed pointer taken from it. NULL is a no-op. */
void receipt_free(receipt_t *receipt);

/* ---------------------------------------------------------------- fields */

/* Fields are identified by Apple's attribute type numbers. App fields are
 * below 1701. In-app purchase fields are 1701 and up. */
typedef enum receipt_field {
    /* App receipt */
    RECEIPT_FIELD_RECEIPT_TYPE = 0,                 /* string: Production, ProductionSandbox, Xcode, ... */
    RECEIPT_FIELD_APP_ITEM_ID = 1,                  /* integer */
    RECEIPT_FIELD_BUNDLE_ID = 2,                    /* string; bytes = the raw UTF8String TLV */
    RECEIPT_FIELD_APPLICATION_VERSION = 3,          /* string */
    RECEIPT_FIELD_OPAQUE_VALUE = 4,                 /* bytes */
    RECEIPT_FIELD_SHA1_HASH = 5,                    /* bytes (20) */
    RECEIPT_FIELD_RECEIPT_CREATION_DATE = 12,       /* date */
    RECEIPT_FIELD_VERSION_EXTERNAL_IDENTIFIER = 16, /* integer */
    RECEIPT_FIELD_IN_APP = 17,                      /* purchases: use receipt_purchase_* */
    RECEIPT_FIELD_ORIGINAL_PURCHASE_DATE = 18,      /* date */
    RECEIPT_FIELD_ORIGINAL_APPLICATION_VERSION = 19,/* string */
    RECEIPT_FIELD_EXPIRATION_DATE = 21,             /* date */
    /* In-app purchase */
    RECEIPT_FIELD_QUANTITY = 1701,                  /* integer */
    RECEIPT_FIELD_PRODUCT_ID = 1702,                /* string */
    RECEIPT_FIELD_TRANSACTION_ID = 1703,            /* string */
    RECEIPT_FIELD_PURCHASE_DATE = 1704,             /* date */
    RECEIPT_FIELD_ORIGINAL_TRANSACTION_ID = 1705,   /* string */
    RECEIPT_FIELD_IN_APP_ORIGINAL_PURCHASE_DATE = 1706, /* date */
    RECEIPT_FIELD_PRODUCT_TYPE = 1707,              /* integer: -1 unknown, 0 non-consumable,
                                                       1 consumable, 2 non-renewing, 3 auto-renewable */
    RECEIPT_FIELD_EXPIRES_DATE = 1708,              /* date */
    RECEIPT_FIELD_WEB_ORDER_LINE_ITEM_ID = 1711,    /* integer */
    RECEIPT_FIELD_CANCELLATION_DATE = 1712,         /* date */
    RECEIPT_FIELD_IS_TRIAL_PERIOD = 1713,           /* boolean (0/1) */
    RECEIPT_FIELD_IS_IN_INTRO_OFFER_PERIOD = 1719,  /* boolean (0/1) */
    RECEIPT_FIELD_PROMOTIONAL_OFFER_ID = 1721       /* string */
} receipt_field_t;

typedef enum receipt_field_kind {
    RECEIPT_KIND_NONE = 0, /* not a field */
    RECEIPT_KIND_STRING = 1,
    RECEIPT_KIND_INTEGER = 2,
    RECEIPT_KIND_BOOLEAN = 3,
    RECEIPT_KIND_DATE = 4,
    RECEIPT_KIND_BYTES = 5,
    RECEIPT_KIND_PURCHASES = 6
} receipt_field_kind_t;

/* The field table, for bindings and generic code. Every field listed above
 * is reachable at one index in 0 .. receipt_field_count() - 1. */
size_t receipt_field_count(void);

/* The field at `index`. Returns RECEIPT_E_INDEX_OUT_OF_RANGE past the end. */
receipt_status_t receipt_field_at(size_t index, receipt_field_t *out_field);

/* The field's name: the App Store JSON key (e.g. "bundle_id"), or
 * "opaque_value", "sha1_hash" or "product_type" for the fields that JSON never
 * shows. Static storage. NULL for a number that is not a field. */
const char *receipt_field_name(receipt_field_t field);

/* The field's kind, or RECEIPT_KIND_NONE for a number that is not a field. */
receipt_field_kind_t receipt_field_kind(receipt_field_t field);

/*
 * Getters for the app receipt's own fields. Each reads one field of
 * `receipt`:
 *
 *  - receipt_get_string: string fields give their text. Date fields give the
 *    text exactly as the receipt writes it (e.g. "2020-10-16T14:29:30+0300").
 *    The string is borrowed, and *out_length (if out_length is not NULL) gets
 *    its length in bytes.
 *  - receipt_get_int: integer fields, and boolean fields as 0 or 1.
 *  - receipt_get_date: date fields, as epoch milliseconds.
 *  - receipt_get_bytes: any non-purchase field. It gives the attribute's value
 *    bytes exactly as stored: for bundle_id, the whole UTF8String TLV that the
 *    device hash covers. The bytes are borrowed.
 *
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_UNKNOWN_FIELD for a field that is
 * not an app field; RECEIPT_E_WRONG_FIELD_KIND; RECEIPT_E_ABSENT when the
 * receipt does not carry the field. Empty date strings count as absent.
 */
receipt_status_t receipt_get_string(const receipt_t *receipt, receipt_field_t field,
                                    const char **out_value, size_t *out_length);
receipt_status_t receipt_get_int(const receipt_t *receipt, receipt_field_t field, int64_t *out_value);
receipt_status_t receipt_get_date(const receipt_t *receipt, receipt_field_t field, int64_t *out_ms);
receipt_status_t receipt_get_bytes(const receipt_t *receipt, receipt_field_t field,
                                   const uint8_t **out_bytes, size_t *out_length);

/* ---------------------------------------------------------------- purchases */

/* The number of in-app purchase entries (attribute 17), in receipt order.
 * 0 for NULL. */
size_t receipt_purchase_count(const receipt_t *receipt);

/* The same getters for the purchase at `index` (0-based, in receipt order),
 * with in-app fields. Errors are as for the app getters, plus
 * RECEIPT_E_INDEX_OUT_OF_RANGE. */
receipt_status_t receipt_purchase_get_string(const receipt_t *receipt, size_t index, receipt_field_t field,
                                             const char **out_value, size_t *out_length);
receipt_status_t receipt_purchase_get_int(const receipt_t *receipt, size_t index, receipt_field_t field,
                                          int64_t *out_value);
receipt_status_t receipt_purchase_get_date(const receipt_t *receipt, size_t index, receipt_field_t field,
                                           int64_t *out_ms);
receipt_status_t receipt_purchase_get_bytes(const receipt_t *receipt, size_t index, receipt_field_t field,
                                            const uint8_t **out_bytes, size_t *out_length);

/* ---------------------------------------------------------------- raw attributes */

/* One attribute exactly as stored, known to this library or not. Apple adds
 * undocumented types that change. This is how to read them. */
typedef struct receipt_attribute {
    int64_t type;
    int64_t version;
    const uint8_t *value; /* the attribute's OCTET STRING content; borrowed */
    size_t value_length;
} receipt_attribute_t;

/* App-level attributes in receipt order, attribute 17 entries included.
 * The count is 0 for NULL. _at errors: RECEIPT_E_NULL_ARGUMENT,
 * RECEIPT_E_INDEX_OUT_OF_RANGE. */
size_t receipt_attribute_count(const receipt_t *receipt);
receipt_status_t receipt_attribute_at(const receipt_t *receipt, size_t index, receipt_attribute_t *out_attribute);

/* The attributes of the purchase at `purchase`, in receipt order. The count is
 * 0 for NULL or an index past the end. */
size_t receipt_purchase_attribute_count(const receipt_t *receipt, size_t purchase);
receipt_status_t receipt_purchase_attribute_at(const receipt_t *receipt, size_t purchase, size_t index,
                                               receipt_attribute_t *out_attribute);

/* ---------------------------------------------------------------- JSON */

#define RECEIPT_JSON_COMPACT 0u
#define RECEIPT_JSON_PRETTY 1u /* two-space indentation */

/*
 * Renders the receipt as the `receipt` object of the App Store's verifyReceipt
 * response. It uses Apple's key names. Every date appears three ways:
 * "..._date" ("2020-07-22 17:39:08 Etc/GMT"), "..._date_ms" (a string), and
 * "..._date_pst" ("... America/Los_Angeles"). In-app values are strings, as
 * Apple writes them. Keys a receipt cannot supply (request_date, download_id)
 * are left out.
 *
 * On success, *out_json gets a new NUL-terminated UTF-8 string, which the
 * caller frees with receipt_string_free(). *out_length (if out_length is not
 * NULL) gets its length.
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT for unknown
 * flags.
 */
receipt_status_t receipt_to_json(const receipt_t *receipt, unsigned flags,
                                 char **out_json, size_t *out_length);

/* Frees a string the library returned as owned. NULL is a no-op. */
void receipt_string_free(char *string);

/* ---------------------------------------------------------------- verification */

/*
 * Verification follows docs/FORMAT.md section 3. The PKCS #7 signature (RSA with SHA-1 or
 * SHA-256) must verify over the payload. The signer's chain must reach a trusted
 * anchor, evaluated at the receipt's creation date, not now. Under the Apple
 * root, the intermediate must carry 1.2.840.113635.100.6.2.1 and the signer
 * 1.2.840.113635.100.6.11.1. Then come the bundle id, application version,
 * device hash and VPP expiry of the policy.
 *
 * Trust never comes from the system store. It comes from pins and from anchors
 * you add:
 *  - RECEIPT_TRUST_APPLE_ROOT (default): Apple's root of each format, each for
 *    its own format only: for receipts the Apple Inc. Root CA, recognised in
 *    the receipt by its SHA-256 fingerprint B0B1730E...1001F024; for JWS Apple
 *    Root CA - G3 (63343ABF...653E9179), which must be x5c's last certificate.
 *  - RECEIPT_TRUST_XCODE_STOREKIT (opt-in): Xcode's StoreKit Testing
 *    certificate (FF0BA36E...45C864FE). It signs receipts itself, so the two
 *    marker checks are skipped under it.
 *  - Anchors you add get the same checks as the Apple root, markers included.
 *    A JWS's x5c must end in the anchor itself, byte for byte. An Xcode-signed
 *    JWS (x5c of one self-signed certificate) verifies only when that
 *    certificate, exported from Xcode, is added as an anchor; its signature is
 *    always checked, and only its marker steps are skipped.
 *
 * SHA-1: Apple signed receipt chains with SHA-1 until 2024, and OpenSSL 3
 * refuses those by default. The library accepts SHA-1 and SHA-2 signatures
 * in the chain, and nothing weaker (never MD5). It requires RSA keys of at
 * least 2048 bits.
 *
 * A verifier fails closed. Whatever it cannot check is a failure, never a pass.
 */

/* An App Store environment: the verifyReceipt endpoint (App Store protocol,
 * below; production and sandbox only), and which receipts and JWS an
 * environment policy accepts:
 * PRODUCTION: receipt_type "Production" or "ProductionVPP"; JWS "Production";
 * SANDBOX: "ProductionSandbox" or "ProductionVPPSandbox"; JWS "Sandbox".
 * A JWS names its environment in `environment` (an AppTransaction in
 * `receiptType`, a notification in data, summary or appData). */
typedef enum receipt_environment {
    RECEIPT_ENVIRONMENT_PRODUCTION = 0,
    RECEIPT_ENVIRONMENT_SANDBOX = 1,
    /* Policies only (no verifyReceipt endpoint): receipt_type "Xcode", JWS "Xcode". */
    RECEIPT_ENVIRONMENT_XCODE = 2,
    /* Policies only: JWS "LocalTesting"; no receipt has it. */
    RECEIPT_ENVIRONMENT_LOCAL_TESTING = 3
} receipt_environment_t;

typedef struct receipt_verifier receipt_verifier_t;
typedef struct receipt_verifier_builder receipt_verifier_builder_t;
typedef struct receipt_verification receipt_verification_t;

#define RECEIPT_TRUST_APPLE_ROOT 1u
#define RECEIPT_TRUST_XCODE_STOREKIT 2u

/* A builder collects the settings of one verifier. It is not thread-safe:
 * use it from one thread, build, then share the verifier. Create it with
 * receipt_verifier_builder_new(). Free it with receipt_verifier_builder_free()
 * (NULL is a no-op). Freeing it does not affect verifiers already built.
 * Errors: RECEIPT_E_NULL_ARGUMENT. */
receipt_status_t receipt_verifier_builder_new(receipt_verifier_builder_t **out_builder);
void receipt_verifier_builder_free(receipt_verifier_builder_t *builder);

/* Which pins to trust, as RECEIPT_TRUST_* flags. The default is
 * RECEIPT_TRUST_APPLE_ROOT. 0 trusts only anchors added below.
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT for unknown flags. */
receipt_status_t receipt_verifier_builder_set_trust(receipt_verifier_builder_t *builder, unsigned trust_flags);

/* Adds one trusted certificate, DER or PEM, such as the root of a test CA.
 * The bytes are copied.
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_BAD_ANCHOR (details in out_error,
 * which may be NULL). */
receipt_status_t receipt_verifier_builder_add_anchor(receipt_verifier_builder_t *builder, const void *certificate,
                                                     size_t length, receipt_error_t *out_error);

/* The policy. Each setting is copied. NULL clears it, and a cleared setting is
 * not checked: the step is reported as skipped.
 *  - bundle id and application version are compared byte for byte as UTF-8.
 *  - device id: the raw identifier bytes. That is 16 for an iOS
 *    identifierForVendor or 6 for a macOS en0 MAC address (1-64 bytes
 *    accepted).
 *  - now: the instant, in epoch ms, that the VPP expiration_date is compared
 *    with. By default it is the current time at each verification. A JWS is
 *    judged at its signedDate (an AppTransaction at its receiptCreationDate);
 *    one that has none is judged at `now` when set, and otherwise fails the
 *    chain step with RECEIPT_E_NO_CREATION_DATE.
 * Errors: RECEIPT_E_NULL_ARGUMENT for a NULL builder; RECEIPT_E_INVALID_ARGUMENT
 * for a device id length outside 1-64 or a string that is not UTF-8. */
receipt_status_t receipt_verifier_builder_set_bundle_id(receipt_verifier_builder_t *builder, const char *bundle_id);
receipt_status_t receipt_verifier_builder_set_application_version(receipt_verifier_builder_t *builder,
                                                                  const char *application_version);
receipt_status_t receipt_verifier_builder_set_device_id(receipt_verifier_builder_t *builder,
                                                        const uint8_t *device_id, size_t length);
receipt_status_t receipt_verifier_builder_set_now(receipt_verifier_builder_t *builder, int64_t now_ms);
receipt_status_t receipt_verifier_builder_clear_now(receipt_verifier_builder_t *builder);

/* The app's Apple id (the "app_apple_id" step of JWS verification): a
 * notification or AppTransaction that names an appAppleId must name this one.
 * Unset, the step is skipped, except for a production JWS that names one, which
 * fails with RECEIPT_E_APP_APPLE_ID_MISMATCH, as Apple's verifiers require the
 * id in production. Receipts are not affected.
 * Errors: RECEIPT_E_NULL_ARGUMENT. */
receipt_status_t receipt_verifier_builder_set_app_apple_id(receipt_verifier_builder_t *builder, int64_t app_apple_id);
receipt_status_t receipt_verifier_builder_clear_app_apple_id(receipt_verifier_builder_t *builder);

/* The environment the receipt or JWS must come from (the "environment" step).
 * By default any is accepted and the step is skipped; clear_environment
 * restores that. A receipt without receipt_type, or a JWS without an
 * environment, matches none and fails the step with
 * RECEIPT_E_ENVIRONMENT_MISMATCH.
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT for a value that
 * is not a receipt_environment_t. */
receipt_status_t receipt_verifier_builder_set_environment(receipt_verifier_builder_t *builder,
                                                          receipt_environment_t environment);
receipt_status_t receipt_verifier_builder_clear_environment(receipt_verifier_builder_t *builder);

/* The "revocation" step of JWS verification (App Store chains: x5c of 3;
 * receipts and Xcode's chains are out of its scope and the step says so):
 *  - OFF (the default): not checked, the step is skipped. A verdict depends on
 *    nothing but the bytes and the time of signing, never on the network.
 *  - SOFT: a certificate OCSP calls revoked fails (RECEIPT_E_REVOKED); a leaf or
 *    intermediate without a fresh answer passes, with a warning in the step's detail.
 *  - HARD: only a fresh "good" answer for both passes (else RECEIPT_E_REVOCATION_UNKNOWN).
 * The library asks nothing itself: the step reads the answers the verifier has
 * been given (receipt_revocation_queries, below).
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT for another value. */
typedef enum receipt_revocation_mode {
    RECEIPT_REVOCATION_OFF = 0,
    RECEIPT_REVOCATION_SOFT = 1,
    RECEIPT_REVOCATION_HARD = 2
} receipt_revocation_mode_t;
receipt_status_t receipt_verifier_builder_set_revocation(receipt_verifier_builder_t *builder,
                                                         receipt_revocation_mode_t mode);

/* Builds an immutable verifier from the builder's current settings. The
 * verifier may be used by any number of threads at once. Free it with
 * receipt_verifier_free() (NULL is a no-op).
 * Errors: RECEIPT_E_NULL_ARGUMENT. */
receipt_status_t receipt_verifier_build(const receipt_verifier_builder_t *builder, receipt_verifier_t **out_verifier);
void receipt_verifier_free(receipt_verifier_t *verifier);

/*
 * Revocation (OCSP, RFC 6960) without I/O, as the verifyReceipt exchange: the
 * library says which requests a JWS's chain needs, the caller POSTs each, and
 * hands back each answer, which the library checks and keeps in the verifier's
 * cache (shared by every thread) until its nextUpdate, at most 24 hours. Then
 * receipt_verify_jws reads the cache.
 *
 *   receipt_revocation_queries(verifier, jws, length, &queries, &error);
 *   for (size_t i = 0; i < receipt_revocation_query_count(queries); i++) {
 *       post(receipt_revocation_query_url(queries, i), "application/ocsp-request",
 *            receipt_revocation_query_body(queries, i, &size), size) -> status, answer;
 *       receipt_revocation_answer(verifier, queries, i, status, answer, answer_length, &error);
 *   }
 *   receipt_revocation_queries_free(queries);
 *   receipt_verify_jws(verifier, jws, length, &decoded, &verification, &error);
 *
 * Queries are made only for a chain of 3 that leads to a trusted anchor (so no
 * URL from an untrusted certificate is ever named), and only for certificates
 * whose answer is not cached and fresh; a warm verification needs none. Requests
 * carry no nonce (Apple's responders answer from a cache, RFC 5019); freshness
 * is thisUpdate and nextUpdate. An answer is kept only when it is a successful
 * BasicOCSPResponse signed by the certificate's issuer or a responder the issuer
 * delegated (OCSP-signing extended key usage), for the asked CertID, with
 * thisUpdate not in the future (5 minutes of skew) and nextUpdate not past (an
 * answer without nextUpdate counts for 24 hours). Anything else, an HTTP status
 * other than 200 included, is RECEIPT_E_BAD_OCSP_RESPONSE and never counts as
 * good. A transport failure needs no call: the step then has no fresh answer.
 * Thread-safety: a queries object is for one thread; the verifier is shared.
 * Errors: RECEIPT_E_NULL_ARGUMENT; a JWS that cannot be decoded gives its
 * decoding status (the chain is not judged here: receipt_verify_jws does that).
 */
typedef struct receipt_revocation_queries receipt_revocation_queries_t;
receipt_status_t receipt_revocation_queries(const receipt_verifier_t *verifier, const char *jws, size_t length,
                                            receipt_revocation_queries_t **out_queries, receipt_error_t *out_error);
size_t receipt_revocation_query_count(const receipt_revocation_queries_t *queries);
/* Borrowed, valid until _free; NULL past the end. */
const char *receipt_revocation_query_url(const receipt_revocation_queries_t *queries, size_t index);
const uint8_t *receipt_revocation_query_body(const receipt_revocation_queries_t *queries, size_t index,
                                             size_t *out_length);
/* Checks one answer and keeps it. RECEIPT_OK whatever the status it gives (good,
 * revoked, unknown: the step judges); RECEIPT_E_BAD_OCSP_RESPONSE, with the
 * reason in out_error, for anything that is not a valid answer.
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INDEX_OUT_OF_RANGE. */
receipt_status_t receipt_revocation_answer(const receipt_verifier_t *verifier,
                                           const receipt_revocation_queries_t *queries, size_t index, int http_status,
                                           const void *body, size_t length, receipt_error_t *out_error);
void receipt_revocation_queries_free(receipt_revocation_queries_t *queries);

/*
 * Verifies `receipt`. Returns RECEIPT_OK only when every check that ran
 * passed. Otherwise it returns the status of the first failing step, which is
 * always in 200-299: a malformed SignerInfo or certificate is reported as
 * RECEIPT_E_MALFORMED_SIGNATURE or RECEIPT_E_BAD_CERTIFICATE, with the
 * structural problem in the step's detail. On a caller error it returns 1-99
 * and *out_result is NULL.
 *
 * If out_result is not NULL, it gets a new report of every step, which the
 * caller frees with receipt_verification_free(). Pass NULL when the verdict is
 * enough.
 * Thread-safety: any number of threads may verify with one verifier at once.
 */
receipt_status_t receipt_verify(const receipt_verifier_t *verifier, const receipt_t *receipt,
                                receipt_verification_t **out_result);

/*
 * The verdict on a receipt's bytes (DER, BER or base64, as for
 * receipt_parse()), for callers that need only the verdict. It makes every
 * check receipt_verify() makes and reads only the app attributes those checks
 * use: the in-app purchases are neither typed nor checked, so it is faster on
 * large receipts, and a malformed purchase is reported only by
 * receipt_parse(). Nothing is kept: the bytes are borrowed for the call.
 *
 * Returns RECEIPT_OK or a verdict status (200-299) as receipt_verify() does,
 * with *out_result (when not NULL) set to a new report to free with
 * receipt_verification_free(). When the bytes are not an app receipt it
 * returns the status receipt_parse() would (100-199) and *out_result is NULL;
 * on a caller error, 1-99 and NULL.
 * If out_error is not NULL it gets the first failure's status and detail (the
 * parse error, or the first failing step), and RECEIPT_OK when there is none.
 * Thread-safety: as receipt_verify().
 */
receipt_status_t receipt_verify_bytes(const receipt_verifier_t *verifier, const void *data, size_t length,
                                      receipt_verification_t **out_result, receipt_error_t *out_error);

typedef enum receipt_step_outcome {
    RECEIPT_STEP_PASSED = 0,
    RECEIPT_STEP_SKIPPED = 1, /* not asked for by the policy, or meaningless under the anchor */
    RECEIPT_STEP_FAILED = 2
} receipt_step_outcome_t;

/* One step of a report. The strings are borrowed from the report. */
typedef struct receipt_step {
    const char *name; /* receipts: "signature", "chain", "intermediate_marker", "leaf_marker",
                         "bundle_id", "application_version", "device_hash", "expiration",
                         "environment"; JWS: "header", "signature", "chain",
                         "intermediate_marker", "leaf_marker", "bundle_id",
                         "application_version", "environment", "app_apple_id", "nested" */
    receipt_step_outcome_t outcome;
    receipt_status_t status; /* RECEIPT_OK unless the step failed */
    const char *detail;      /* names the certificate, field or value concerned */
} receipt_step_t;

/* The verdict, as receipt_verify() returned it. RECEIPT_E_NULL_ARGUMENT for
 * NULL. */
receipt_status_t receipt_verification_status(const receipt_verification_t *result);

/* The steps in the order of docs/FORMAT.md §3. The count is 0 for NULL.
 * _at errors: RECEIPT_E_NULL_ARGUMENT, RECEIPT_E_INDEX_OUT_OF_RANGE. */
size_t receipt_verification_step_count(const receipt_verification_t *result);
receipt_status_t receipt_verification_step_at(const receipt_verification_t *result, size_t index,
                                              receipt_step_t *out_step);

/* The report as JSON: {"valid": bool, "status": "RECEIPT_...", "anchor": ...,
 * "fingerprint": "64 hex digits", "steps": [{"step", "outcome", "status", "detail"}, ...]}. The string is owned
 * by the caller and freed with receipt_string_free(). The flags are as for
 * receipt_to_json(). */
receipt_status_t receipt_verification_to_json(const receipt_verification_t *result, unsigned flags,
                                              char **out_json, size_t *out_length);

/* Frees a report. NULL is a no-op. */
void receipt_verification_free(receipt_verification_t *result);

/* ---------------------------------------------------------------- fingerprints */

/*
 * The key to de-duplicate receipts and JWS on, and to block replays with: the
 * SHA-256 of what the signature covers, which no re-spelling changes.
 *  - A receipt: its signed payload (the ASN.1 SET of attributes; BER chunks
 *    joined), the same whether it came as DER, BER or base64.
 *  - A JWS: the ASCII `header.payload` it signs (base64url is read strictly, so
 *    one header and payload have one spelling).
 * Do not hash the input bytes for this. An ECDSA signature (r, s) also verifies
 * as (r, n - s), and Apple's own tokens come in both forms, so every genuine JWS
 * has a second valid spelling; a receipt's envelope has fields no signature
 * covers (an App Store receipt verifies only in the one form the App Store
 * writes, but Xcode writes two). Equal fingerprints mean the same signed
 * content; a valid verdict says that content is Apple's.
 * Each function writes RECEIPT_FINGERPRINT_SIZE bytes to out_fingerprint.
 * Errors: RECEIPT_E_NULL_ARGUMENT; receipt_batch_fingerprint also
 * RECEIPT_E_INDEX_OUT_OF_RANGE, and RECEIPT_E_ABSENT for a row that could not be
 * read (its status is 100-199).
 * Thread-safety: any thread; the handles are only read.
 */
#define RECEIPT_FINGERPRINT_SIZE 32
receipt_status_t receipt_fingerprint(const receipt_t *receipt, uint8_t out_fingerprint[RECEIPT_FINGERPRINT_SIZE]);
receipt_status_t receipt_verification_fingerprint(const receipt_verification_t *result,
                                                  uint8_t out_fingerprint[RECEIPT_FINGERPRINT_SIZE]);


/* ---------------------------------------------------------------- StoreKit 2 JWS */

/*
 * StoreKit 2 hands servers JWS in compact form,
 * base64url(header).base64url(payload).base64url(signature), signed with ES256
 * by the first certificate of the header's x5c: transactions, renewal infos,
 * App Store Server Notifications V2 and AppTransactions. The same verifier
 * judges them, with the same trust, chain cache and step report as receipts:
 *  - header: alg exactly "ES256"; no crit; x5c of 3 certificates (App Store) or
 *    1 (Xcode). RECEIPT_E_ALGORITHM_REFUSED, RECEIPT_E_CRITICAL_UNSUPPORTED,
 *    RECEIPT_E_CERTIFICATE_COUNT, RECEIPT_E_NO_CERTIFICATES (no x5c at all).
 *  - signature: ES256 by x5c[0] over the ASCII header.payload, exactly 64 bytes
 *    of r||s (RECEIPT_E_BAD_SIGNATURE_ENCODING otherwise; a DER signature too).
 *  - chain: x5c, leaf first, each issued by the next, to Apple Root CA - G3 or
 *    an added anchor that is x5c's last certificate, at the payload's
 *    signedDate (an AppTransaction's receiptCreationDate), cached as for
 *    receipts by the exact x5c bytes.
 *  - intermediate_marker, leaf_marker: 1.2.840.113635.100.6.2.1 and
 *    1.2.840.113635.100.6.11.1 on a 3-certificate chain; skipped for Xcode's.
 *  - bundle_id (skipped for a renewal info, which names none),
 *    application_version (AppTransactions only), environment, app_apple_id.
 *  - nested: a notification's data.signedTransactionInfo,
 *    data.signedRenewalInfo and appData.signedAppTransactionInfo, each verified
 *    by the same verifier at its own signedDate.
 *
 * A receipt_jws_t is a decoded JWS: immutable, safe to share across threads,
 * freed with receipt_jws_free(). Its strings live as long as it does.
 */
typedef struct receipt_jws receipt_jws_t;

/* Which payload a JWS carries, told from its members. */
typedef enum receipt_jws_type {
    RECEIPT_JWS_UNKNOWN = 0,         /* kept and readable, but no member is typed */
    RECEIPT_JWS_TRANSACTION = 1,     /* JWSTransactionDecodedPayload */
    RECEIPT_JWS_RENEWAL_INFO = 2,    /* JWSRenewalInfoDecodedPayload */
    RECEIPT_JWS_NOTIFICATION = 3,    /* ResponseBodyV2DecodedPayload */
    RECEIPT_JWS_APP_TRANSACTION = 4, /* JWSAppTransactionDecodedPayload */
    RECEIPT_JWS_REALTIME_REQUEST = 5 /* DecodedRealtimeRequestBody (Retention Messaging) */
} receipt_jws_type_t;

/*
 * Decodes a compact JWS WITHOUT verifying anything: nothing it says is to be
 * believed until receipt_verify_jws() says so. Whitespace around the token is
 * ignored. The header and payload must be JSON objects: bounded (see
 * "limits"), valid UTF-8, no member name twice; every member Apple documents
 * for the payload's type must have its documented JSON type; unknown members
 * and unknown enumeration values are kept as they are.
 * On success *out_jws is a new handle to free with receipt_jws_free().
 * Errors (with detail in out_error, which may be NULL): RECEIPT_E_NULL_ARGUMENT;
 * RECEIPT_E_EMPTY_INPUT; RECEIPT_E_INPUT_TOO_LARGE; RECEIPT_E_NOT_A_JWS;
 * RECEIPT_E_BAD_BASE64URL; RECEIPT_E_BAD_JSON; RECEIPT_E_BAD_UTF8;
 * RECEIPT_E_DUPLICATE_MEMBER; RECEIPT_E_NESTING_TOO_DEEP;
 * RECEIPT_E_LIMIT_EXCEEDED; RECEIPT_E_NOT_AN_OBJECT (a payload of null, a
 * number or an array); RECEIPT_E_BAD_FIELD.
 * Thread-safety: any number of threads may decode at once.
 */
receipt_status_t receipt_jws_decode_unverified(const void *data, size_t length, receipt_jws_t **out_jws,
                                               receipt_error_t *out_error);

/*
 * Decodes and verifies a compact JWS with `verifier` (steps above). Returns
 * RECEIPT_OK only when no step failed, else the first failing step's status
 * (200-299). When the bytes are not a readable JWS it returns the decoding
 * status (100-199, as receipt_jws_decode_unverified()) and sets no output.
 * On a verdict, *out_jws (when out_jws is not NULL) gets the decoded JWS and
 * *out_result (when not NULL) the report, to free with receipt_jws_free() and
 * receipt_verification_free(). out_error (may be NULL) gets the first failure.
 * Thread-safety: any number of threads may verify with one verifier at once.
 */
receipt_status_t receipt_verify_jws(const receipt_verifier_t *verifier, const void *data, size_t length,
                                    receipt_jws_t **out_jws, receipt_verification_t **out_result,
                                    receipt_error_t *out_error);

/*
 * The same, for a JWS of the kind `type` names, as Apple's verifiers take the
 * kind from the call (verify_and_decode_signed_transaction, ..._renewal_info,
 * ..._notification, ..._app_transaction, ..._realtime_request): a payload
 * whose members say another kind is RECEIPT_E_WRONG_PAYLOAD_KIND, and one
 * whose kind cannot be told from its members (a minimal transaction, say) is
 * judged as `type` (its bundle id and environment checked where that kind
 * keeps them). RECEIPT_JWS_UNKNOWN tells the kind from the members, as
 * receipt_verify_jws() does; a value outside receipt_jws_type_t is
 * RECEIPT_E_INVALID_ARGUMENT. Outputs, errors and thread-safety as
 * receipt_verify_jws().
 */
receipt_status_t receipt_verify_jws_as(const receipt_verifier_t *verifier, const void *data, size_t length,
                                       receipt_jws_type_t type, receipt_jws_t **out_jws,
                                       receipt_verification_t **out_result, receipt_error_t *out_error);

/* Frees a decoded JWS and every string borrowed from it. NULL is a no-op. */
void receipt_jws_free(receipt_jws_t *jws);

/* The payload's type; RECEIPT_JWS_UNKNOWN for NULL. Never fails. */
receipt_jws_type_t receipt_jws_type(const receipt_jws_t *jws);

/* The payload's or the header's JSON exactly as signed (the decoded bytes,
 * not a re-encoding), NUL-terminated, borrowed from the handle.
 * Errors: RECEIPT_E_NULL_ARGUMENT (out_length may be NULL). */
receipt_status_t receipt_jws_payload(const receipt_jws_t *jws, const char **out_json, size_t *out_length);
receipt_status_t receipt_jws_header(const receipt_jws_t *jws, const char **out_json, size_t *out_length);

/*
 * A payload member by dotted path ("transactionId", "data.bundleId"):
 *  - _get_string: a JSON string, borrowed from the handle (out_length may be NULL);
 *  - _get_int: a whole JSON number (ids, prices in milliunits, enumerations);
 *  - _get_date: a JSON number as epoch ms, fractions of a millisecond cut
 *    toward the past (Xcode writes them); year-1 dates are negative;
 *  - _get_bool: a JSON boolean, as 0 or 1.
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT (path not UTF-8);
 * RECEIPT_E_ABSENT when the member is absent or null; RECEIPT_E_WRONG_FIELD_KIND
 * when it holds another JSON type (or a number out of int64).
 */
receipt_status_t receipt_jws_get_string(const receipt_jws_t *jws, const char *path, const char **out_value,
                                        size_t *out_length);
receipt_status_t receipt_jws_get_int(const receipt_jws_t *jws, const char *path, int64_t *out_value);
receipt_status_t receipt_jws_get_date(const receipt_jws_t *jws, const char *path, int64_t *out_ms);
receipt_status_t receipt_jws_get_bool(const receipt_jws_t *jws, const char *path, int *out_value);

/* The instant the payload was signed (signedDate; an AppTransaction's
 * receiptCreationDate), in epoch ms. Errors: RECEIPT_E_NULL_ARGUMENT;
 * RECEIPT_E_ABSENT when the payload carries none. */
receipt_status_t receipt_jws_signed_date(const receipt_jws_t *jws, int64_t *out_ms);

/* The JWS as `receipt inspect` prints it: {"format": "jws", "type",
 * "header", "payload", "signed_date_ms", "certificates"}, header and payload
 * exactly as signed. Owned by the caller, freed with receipt_string_free();
 * flags as for receipt_to_json(). Errors: RECEIPT_E_NULL_ARGUMENT;
 * RECEIPT_E_INVALID_ARGUMENT (unknown flags). */
receipt_status_t receipt_jws_to_json(const receipt_jws_t *jws, unsigned flags, char **out_json, size_t *out_length);

/* The SHA-256 of the ASCII `header.payload`: see "fingerprints" above. The same
 * as receipt_verification_fingerprint() of its verification. */
receipt_status_t receipt_jws_fingerprint(const receipt_jws_t *jws, uint8_t out_fingerprint[RECEIPT_FINGERPRINT_SIZE]);

/* ---------------------------------------------------------------- batches */

/*
 * Many receipts in one call, for data pipelines (Spark's mapInArrow, Arrow
 * batches) that would otherwise pay a binding's per-call cost per row. Each
 * input is parsed in full and verified by `verifier` at its own creation date.
 * An input that is not a receipt is a row with its status, never a failure of
 * the call: garbage, empty input (RECEIPT_E_EMPTY_INPUT) and an absent one
 * (inputs[i] NULL: RECEIPT_E_NULL_ARGUMENT) alike.
 *
 * A StoreKit 2 JWS (told by its dots) in the same batch is decoded and verified
 * as receipt_verify_jws() would, at its signing date, and fills the same columns:
 * bundle_id its app (a notification's from whichever object it carries; NULL for
 * a renewal info), receipt_type its environment ("Production", "Sandbox",
 * "Xcode"; an AppTransaction's receiptType), the two versions an AppTransaction's
 * (NULL otherwise), receipt_creation_date_ms its signing date. A signed
 * transaction is one purchase, and so is a notification that carries one in
 * data.signedTransactionInfo (in_app_count 1; cancellation_date_ms its
 * revocationDate; web_order_line_item_id its digits; is_trial_period 1 for an
 * introductory offer (offerType 1) with a FREE_TRIAL discount,
 * is_in_intro_offer_period 1 for one without); any other payload has none.
 *
 * The caller owns the arrays: out_rows has room for `count` rows; the
 * purchases go into an array of receipt_batch_purchase_count() entries. Their
 * strings are borrowed from the batch, which the caller frees with
 * receipt_batch_free() when done with them. Absent numbers and dates are
 * RECEIPT_BATCH_ABSENT; absent strings are NULL; absent flags are -1.
 * Limits: at most 1,048,576 inputs a call (RECEIPT_E_INVALID_ARGUMENT), each
 * under the limits of receipt_parse().
 * Errors: RECEIPT_E_NULL_ARGUMENT (verifier, out_batch, out_rows, or
 * inputs/lengths with count > 0); RECEIPT_E_INVALID_ARGUMENT.
 * Thread-safety: as receipt_verify(); a batch is immutable and may be read from
 * any thread.
 */
#define RECEIPT_BATCH_ABSENT INT64_MIN
typedef struct receipt_batch receipt_batch_t;

typedef struct receipt_batch_row {
    receipt_status_t status;   /* RECEIPT_OK, a verdict (200-299), or why it is not a receipt (100-199) */
    int valid;                 /* 1 when status is RECEIPT_OK */
    const char *bundle_id;     /* borrowed from the batch; NULL when absent or unreadable */
    const char *application_version;
    const char *original_application_version;
    const char *receipt_type;
    int64_t receipt_creation_date_ms; /* RECEIPT_BATCH_ABSENT when absent */
    size_t in_app_count;
} receipt_batch_row_t;

typedef struct receipt_batch_purchase {
    size_t row;                /* the index of its receipt (or signed transaction) among the inputs */
    const char *product_id;    /* borrowed from the batch; NULL when absent */
    const char *transaction_id;
    const char *original_transaction_id;
    int64_t purchase_date_ms;  /* RECEIPT_BATCH_ABSENT when absent, for every number here */
    int64_t original_purchase_date_ms;
    int64_t expires_date_ms;
    int64_t cancellation_date_ms;
    int64_t quantity;
    int64_t web_order_line_item_id;
    int is_trial_period;       /* 1, 0, or -1 when absent */
    int is_in_intro_offer_period;
} receipt_batch_purchase_t;

receipt_status_t receipt_batch_verify(const receipt_verifier_t *verifier, const void *const *inputs,
                                      const size_t *lengths, size_t count, receipt_batch_t **out_batch,
                                      receipt_batch_row_t *out_rows);

/* How many purchases the batch's rows hold, all together; 0 for NULL. */
size_t receipt_batch_purchase_count(const receipt_batch_t *batch);

/* Fills `out` with every purchase, in row order. Errors: RECEIPT_E_NULL_ARGUMENT;
 * RECEIPT_E_INVALID_ARGUMENT when capacity is below receipt_batch_purchase_count(). */
receipt_status_t receipt_batch_purchases(const receipt_batch_t *batch, receipt_batch_purchase_t *out, size_t capacity);

/* The fingerprint of row `row`'s signed content (see "fingerprints" above), to
 * de-duplicate a data lake's receipts and JWS on. RECEIPT_E_ABSENT for a row
 * that could not be read. */
receipt_status_t receipt_batch_fingerprint(const receipt_batch_t *batch, size_t row,
                                           uint8_t out_fingerprint[RECEIPT_FINGERPRINT_SIZE]);

/* Every row's fingerprint in one call, for bindings that would otherwise pay a call
 * per row: `out` holds `capacity` rows of RECEIPT_FINGERPRINT_SIZE bytes, row i at
 * out + i * RECEIPT_FINGERPRINT_SIZE. A row that could not be read (status 100-199,
 * or RECEIPT_E_NULL_ARGUMENT for an absent input) gets 32 zero bytes.
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT when capacity is below
 * the number of rows. */
receipt_status_t receipt_batch_fingerprints(const receipt_batch_t *batch, uint8_t *out, size_t capacity);

/* Frees a batch and every string borrowed from it. NULL is a no-op. */
void receipt_batch_free(receipt_batch_t *batch);

/* ---------------------------------------------------------------- entitlements */

/* Judge a receipt you verified some other way, with verifier NULL. */
#define RECEIPT_ENTITLEMENTS_UNVERIFIED 2u

/*
 * Reports what the receipt entitles its owner to at `at_ms` (epoch ms), as JSON:
 *   {"at_ms", "active_product_ids": [...],
 *    "purchases": [{"product_id", "transaction_id", "original_transaction_id",
 *                   "kind", "active", "inactive_reason", "purchase_date_ms",
 *                   "ends_at_ms", "quantity"}],
 *    "subscriptions": [{"original_transaction_id", "product_id", "active",
 *                       "expires_at_ms", "is_trial_period",
 *                       "is_in_intro_offer_period", "periods"}],
 *    "consumable_quantities": {"id": n}, "trial_or_intro_offer_used": [...]}
 *
 * "kind" is one of "consumable", "non_consumable", "auto_renewable" or
 * "non_renewing", or null when unknown. "inactive_reason" is one of "expired",
 * "cancelled" (counts as never purchased), "consumed", "unknown_duration",
 * "unknown_product_type" or "not_yet_started". Auto-renewable periods are
 * grouped by original transaction id.
 *
 * verifier: the receipt is verified first. A failed verification returns its
 * 200-299 status and no JSON. NULL is allowed only with
 * RECEIPT_ENTITLEMENTS_UNVERIFIED in `flags`.
 * catalog_json: NULL, or {"kinds": {"id": "<kind>"}, "non_renewing_durations_ms":
 * {"id": ms}}. It gives product kinds where attribute 1707 is absent, and the
 * durations of non-renewing subscriptions, which receipts never hold.
 * flags: RECEIPT_JSON_PRETTY and RECEIPT_ENTITLEMENTS_UNVERIFIED.
 * The JSON is freed with receipt_string_free().
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT (unknown flags,
 * or no verifier without the flag); RECEIPT_E_BAD_JSON (catalog); the verdicts.
 */
receipt_status_t receipt_entitlements_json(const receipt_t *receipt, const receipt_verifier_t *verifier, int64_t at_ms,
                                           const char *catalog_json, unsigned flags, char **out_json,
                                           size_t *out_length);

/*
 * The same report for one customer's StoreKit 2 signed transactions, and the
 * receipt of an older app version (`receipt`, or NULL), together: `count` JWS
 * tokens at transactions[i], each lengths[i] bytes (transactions and lengths
 * may be NULL when count is 0). Each token is decoded and, with a verifier,
 * verified; the receipt too. A transaction that appears in both, or twice,
 * counts once: the signed transaction over the receipt's entry, the later
 * signedDate over the earlier. Each purchase entry gains "source": "receipt"
 * or "signed_transaction". A transaction's "type" gives its kind; revocationDate
 * makes it "cancelled"; offerType 1 with offerDiscountType FREE_TRIAL is a
 * trial, offerType 1 otherwise an introductory offer. A notification counts as
 * the transaction it carries. A renewal info among the tokens (or carried by a
 * notification) that names a billing grace period (gracePeriodExpiresDate)
 * keeps its subscription's last period active until then: that entry and its
 * subscription gain "in_grace_period": true, and "ends_at_ms" is the grace end.
 * verifier, catalog_json and flags as for receipt_entitlements_json().
 * Errors (detail in out_error, which may be NULL, naming the token's index):
 * RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT (a payload that is neither
 * a transaction nor a renewal info, unknown flags, no verifier without the flag, more than
 * 1,000,000 tokens); a token's decoding status (100-199); the first failing
 * verdict (200-299); RECEIPT_E_BAD_JSON (catalog).
 * Thread-safety: as receipt_verify_jws().
 */
receipt_status_t receipt_entitlements_signed_json(const receipt_t *receipt, const void *const *transactions,
                                                  const size_t *lengths, size_t count,
                                                  const receipt_verifier_t *verifier, int64_t at_ms,
                                                  const char *catalog_json, unsigned flags, char **out_json,
                                                  size_t *out_length, receipt_error_t *out_error);

/*
 * What one auto-renewable subscription is at `at_ms`, from what is known of it:
 * `count` JWS tokens at tokens[i], each lengths[i] bytes, in any order: its
 * signed transactions, signed renewal infos (the latest signedDate counts) and
 * App Store Server Notifications V2 (each counts as the transaction and renewal
 * info it carries). Tokens of other subscriptions are ignored. The JSON is what
 * `receipt serve` answers GET /v1/subscriptions/{id}: "originalTransactionId";
 * "status", Apple's number (1 active, 2 expired, 3 billing retry, 4 grace
 * period, 5 revoked) and "status_name"; "entitled" (active or grace period);
 * "at_ms"; "transaction_count" (one per transaction id, its latest signing);
 * "signedTransactionInfo" and "transaction_info" (the period that decides: of
 * the periods bought by the instant, the latest-ending one not revoked, else
 * the last bought; the first when none was); "signedRenewalInfo",
 * "renewal_info" and "pending_renewal_info" (verifyReceipt's shape) when a
 * renewal info is known. The subscription as it stood at the instant, from the
 * periods bought by then (refunds as known now): active while one not revoked
 * covers the instant; otherwise revoked when the last of them was refunded or
 * revoked; otherwise, when no period was bought after the instant, grace period
 * while the renewal info's gracePeriodExpiresDate is ahead, billing retry while
 * isInBillingRetryPeriod; otherwise expired.
 * verifier: every token is verified first; the first that fails returns its
 * status. NULL only with RECEIPT_ENTITLEMENTS_UNVERIFIED in `flags`, for tokens
 * verified some other way (a store that verified them on arrival).
 * flags: RECEIPT_JSON_PRETTY and RECEIPT_ENTITLEMENTS_UNVERIFIED.
 * The JSON is freed with receipt_string_free().
 * Errors (detail in out_error, which may be NULL, naming the token's index):
 * RECEIPT_E_NULL_ARGUMENT (no id, or tokens/lengths NULL with count > 0);
 * RECEIPT_E_INVALID_ARGUMENT (unknown flags, no verifier without the flag, more
 * than 1,000,000 tokens); RECEIPT_E_ABSENT (no transaction of that id among
 * them, or their `type` names a purchase that is no auto-renewable
 * subscription, such as "Consumable"; a missing or unknown type is judged as
 * a subscription); a token's decoding status (100-199); the first failing
 * verdict (200-299).
 * Thread-safety: as receipt_verify_jws(); nothing is kept between calls.
 */
receipt_status_t receipt_subscription_state_json(const char *original_transaction_id, const void *const *tokens,
                                                 const size_t *lengths, size_t count,
                                                 const receipt_verifier_t *verifier, int64_t at_ms, unsigned flags,
                                                 char **out_json, size_t *out_length, receipt_error_t *out_error);

/* ---------------------------------------------------------------- webhooks
 *
 * Checks a webhook message `receipt serve --webhook` delivered (or any sender that
 * signs as the Standard Webhooks specification says): `secret` is the endpoint's
 * secret as given to the server ("whsec_" + base64); `webhook_id`,
 * `webhook_timestamp` and `webhook_signature` are the values of the request's
 * headers of those names; `body`/`body_length` the request body exactly as received.
 * Passes (RECEIPT_OK) when the timestamp is within `tolerance_seconds` of
 * `now_seconds` (seconds since the epoch; 0: the system clock; a negative tolerance:
 * the specification's 300 s) and one of the header's "v1,…" signatures is the
 * HMAC-SHA256 of "id.timestamp.body" under the secret (compared in constant time).
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT (a secret that is not
 * whsec_ + base64 of 16 to 256 bytes); RECEIPT_E_BAD_FIELD (an empty or over-long id,
 * a timestamp that is not seconds, a header without a v1 signature or with more
 * than 16); RECEIPT_E_SIGNATURE_INVALID (no signature matches, or the timestamp is
 * out of tolerance: a replayed or delayed message). Nothing is kept; thread-safe;
 * the caller keeps ownership of every argument.
 */
receipt_status_t receipt_webhook_verify(const char *secret, const char *webhook_id, const char *webhook_timestamp,
                                        const uint8_t *body, size_t body_length, const char *webhook_signature,
                                        int64_t now_seconds, int64_t tolerance_seconds, receipt_error_t *out_error);

/* ================================================================ opt-in tier
 *
 * Everything above is the stable core, exported under the symbol version
 * RECEIPT_1. What follows is a separate tier: the App Store's verifyReceipt
 * protocol, which Apple has deprecated. It is declared only when
 * RECEIPT_APPSTORE_PROTOCOL is defined before this header is included:
 *
 *     #define RECEIPT_APPSTORE_PROTOCOL
 *     #include <receipt.h>
 *
 * and its functions are exported under their own symbol version,
 * RECEIPT_APPSTORE_1, so that a program that uses them says so, and so that
 * the core can evolve without carrying them.
 */
#ifdef RECEIPT_APPSTORE_PROTOCOL

/* ---------------------------------------------------------------- App Store protocol */

/*
 * The App Store's verifyReceipt protocol, without the transport. The library
 * builds request bodies, reads responses and says what to do next. Sending the
 * HTTP request is the caller's job, as the CLI and the Python binding do.
 */

typedef enum receipt_next_step {
    RECEIPT_NEXT_ACCEPT = 0,              /* 0, or 21006 (valid, subscription expired) */
    RECEIPT_NEXT_RETRY_IN_SANDBOX = 1,    /* 21007 */
    RECEIPT_NEXT_RETRY_IN_PRODUCTION = 2, /* 21008 */
    RECEIPT_NEXT_RETRY_LATER = 3,         /* 21005, 21009, 21100-21199, or is-retryable */
    RECEIPT_NEXT_REJECT = 4               /* anything else; 21003 and 21004 always */
} receipt_next_step_t;

/* The verifyReceipt URL of an environment. Static storage; NULL for an unknown value. */
const char *receipt_appstore_endpoint(receipt_environment_t environment);

/* The request body {"receipt-data": base64, "password": ..., "exclude-old-transactions": ...}
 * for a receipt given as raw bytes or base64. password may be NULL. The receipt
 * is parsed first, so garbage is refused here, not by Apple.
 * The JSON is freed with receipt_string_free().
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT (password not
 * UTF-8); any parse status, with details in out_error (may be NULL). */
receipt_status_t receipt_appstore_request(const void *data, size_t length, const char *password,
                                          int exclude_old_transactions, char **out_json, size_t *out_length,
                                          receipt_error_t *out_error);

typedef struct receipt_appstore_answer {
    int64_t status;                /* the response's "status" */
    receipt_next_step_t next_step;
    int is_retryable;              /* "is-retryable" or "is_retryable": 1, 0, or -1 when absent */
    int environment;               /* a receipt_environment_t, or -1 when absent or unknown */
} receipt_appstore_answer_t;

/* Reads a verifyReceipt response body and decides the next step.
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_BAD_JSON when the body is not JSON
 * or has no numeric "status", with details in out_error (may be NULL). */
receipt_status_t receipt_appstore_parse_response(const char *json, size_t length, receipt_appstore_answer_t *out_answer,
                                                 receipt_error_t *out_error);

/*
 * One exchange with verifyReceipt, with the redirect and retry rules and no I/O.
 * The library says where to send which body. The caller POSTs it (Content-Type:
 * application/json) and hands back each HTTP answer. The rules:
 *   - start in `start`;
 *   - on 21007 or 21008, move once to the other environment;
 *   - on 21005, 21009, 21100-21199, is-retryable or HTTP 5xx, wait
 *     step.delay_ms (200 ms, doubling) and retry, at most `retries` times;
 *   - never retry 21003 or 21004;
 *   - a body that is not verifyReceipt JSON ends the exchange as UNAVAILABLE.
 *
 *   receipt_appstore_exchange_new(data, length, password, 0, RECEIPT_ENVIRONMENT_PRODUCTION,
 *                                 NULL, NULL, 2, &exchange, &error);
 *   do {
 *       sleep_ms(step.delay_ms);
 *       post(receipt_appstore_exchange_url(exchange), receipt_appstore_exchange_body(exchange),
 *            &http_status, &answer);
 *       receipt_appstore_exchange_handle(exchange, http_status, answer, answer_length, &step);
 *   } while (step.action == RECEIPT_EXCHANGE_SEND);
 *
 * Thread-safety: an exchange is for one thread. Free it with
 * receipt_appstore_exchange_free() (NULL is a no-op).
 */
typedef struct receipt_appstore_exchange receipt_appstore_exchange_t;

typedef enum receipt_exchange_action {
    RECEIPT_EXCHANGE_SEND = 0,        /* POST the body to the URL after delay_ms */
    RECEIPT_EXCHANGE_ACCEPTED = 1,    /* 0 or 21006: the last answer is the result */
    RECEIPT_EXCHANGE_REJECTED = 2,    /* the App Store said no; status says how */
    RECEIPT_EXCHANGE_UNAVAILABLE = 3  /* no usable answer; detail says why */
} receipt_exchange_action_t;

typedef struct receipt_exchange_step {
    receipt_exchange_action_t action;
    int64_t status;                   /* ACCEPTED, REJECTED: the answer's status */
    int delay_ms;                     /* SEND: how long to wait first */
    char detail[RECEIPT_DETAIL_SIZE]; /* UNAVAILABLE: why, NUL-terminated */
} receipt_exchange_step_t;

/* Starts an exchange for a receipt (raw bytes or base64; parsed first, so
 * garbage never reaches Apple). password, production_url and sandbox_url may
 * be NULL (no password; Apple's URLs).
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT (strings not
 * UTF-8, an unknown environment, retries < 0); any parse status, with details
 * in out_error (may be NULL). */
receipt_status_t receipt_appstore_exchange_new(const void *data, size_t length, const char *password,
                                               int exclude_old_transactions, receipt_environment_t start,
                                               const char *production_url, const char *sandbox_url, int retries,
                                               receipt_appstore_exchange_t **out_exchange,
                                               receipt_error_t *out_error);

/* The URL to POST to next. Borrowed, valid until the next _handle or _free. NULL for NULL. */
const char *receipt_appstore_exchange_url(const receipt_appstore_exchange_t *exchange);

/* The request body. Borrowed, valid until _free. NULL for NULL. */
const char *receipt_appstore_exchange_body(const receipt_appstore_exchange_t *exchange);

/* Takes the HTTP status and body of the answer to the last request and fills
 * *out_step with what to do next. Pass http_status 0 and an empty body when the
 * request failed in transport (it then counts as unavailable).
 * Errors: RECEIPT_E_NULL_ARGUMENT. */
receipt_status_t receipt_appstore_exchange_handle(receipt_appstore_exchange_t *exchange, int http_status,
                                                  const char *body, size_t length,
                                                  receipt_exchange_step_t *out_step);

void receipt_appstore_exchange_free(receipt_appstore_exchange_t *exchange);

/*
 * The response the App Store would have sent for this receipt, produced
 * locally, for servers moving off verifyReceipt:
 *   - 21002 when the bytes are not a receipt;
 *   - 21007 for a sandbox receipt when `expecting` is production, and 21008
 *     for the reverse;
 *   - 21003 when `verifier` does not accept it;
 *   - otherwise 0, with "environment", "receipt", "latest_receipt_info" (the
 *     in-app entries, oldest purchase first, in the App Store's shape) and
 *     "latest_receipt".
 * A receipt cannot tell renewals made after it was issued, nor
 * "pending_renewal_info", "request_date" or "subscription_group_identifier", so
 * these are never written.
 * The JSON is freed with receipt_string_free(). flags: RECEIPT_JSON_PRETTY.
 * Errors: RECEIPT_E_NULL_ARGUMENT, RECEIPT_E_INVALID_ARGUMENT. A bad receipt is
 * not an error here; it is the status 21002 inside the JSON.
 */
receipt_status_t receipt_appstore_local_response(const void *data, size_t length, const receipt_verifier_t *verifier,
                                                 receipt_environment_t expecting, unsigned flags, char **out_json,
                                                 size_t *out_length);

#endif /* RECEIPT_APPSTORE_PROTOCOL */

/* ================================================================ opt-in tier
 *
 * The App Store Server API and signed requests, declared only when
 * RECEIPT_SERVER_API is defined before this header is included:
 *
 *     #define RECEIPT_SERVER_API
 *     #include <receipt.h>
 *
 * and exported under their own symbol version, RECEIPT_SERVER_API_1. As with
 * verifyReceipt, the library has no transport: it builds every request
 * (method, URL, headers, body) and reads every answer; the caller's HTTP
 * client sends it (examples/c-server-api uses libcurl).
 */
#ifdef RECEIPT_SERVER_API

/* ---------------------------------------------------------------- credentials */

/*
 * What App Store Connect gives a server: the in-app purchase key (the PKCS #8
 * P-256 PEM file as downloaded, "-----BEGIN PRIVATE KEY-----"), its key id,
 * the issuer id and the app's bundle id. Checked here: a key that is not
 * P-256, a malformed PEM or an empty id is refused with RECEIPT_E_INVALID_ARGUMENT
 * and a detail saying which. issuer_id may be NULL only for credentials that
 * sign original promotional offers and nothing else.
 * Immutable; any number of threads may use one. The PEM is read and need not
 * outlive the call. Free with receipt_api_credentials_free() (NULL is a no-op).
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT.
 */
typedef struct receipt_api_credentials receipt_api_credentials_t;
receipt_status_t receipt_api_credentials_new(const char *private_key_pem, size_t length, const char *key_id,
                                             const char *issuer_id, const char *bundle_id,
                                             receipt_api_credentials_t **out_credentials, receipt_error_t *out_error);
void receipt_api_credentials_free(receipt_api_credentials_t *credentials);

/*
 * receipt_api_credentials_new() with a choice of how the key id and issuer id
 * are checked:
 *  - RECEIPT_API_IDS_APP_STORE_CONNECT (what receipt_api_credentials_new does):
 *    as App Store Connect issues them, a key id of 10 characters A-Z and 0-9,
 *    an issuer id a UUID (8-4-4-4-12 hexadecimal digits).
 *  - RECEIPT_API_IDS_HEADER_SAFE: anything only Apple's server can judge (Apple's
 *    libraries take their placeholders "keyId" and "issuerId"; Apple answers
 *    such a token 401), for bindings that stand in for Apple's libraries.
 * In either form, every id (key id, issuer id, bundle id) is refused before any
 * token is made when it is empty, holds whitespace or a control character,
 * holds PEM armour ("-----"), or is longer than 64 characters: what would leak
 * a secret or break a token's header. Otherwise as receipt_api_credentials_new().
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT (also an unknown form).
 */
typedef enum receipt_api_id_form {
    RECEIPT_API_IDS_APP_STORE_CONNECT = 0,
    RECEIPT_API_IDS_HEADER_SAFE = 1
} receipt_api_id_form_t;
receipt_status_t receipt_api_credentials_new_with_form(const char *private_key_pem, size_t length,
                                                       const char *key_id, const char *issuer_id,
                                                       const char *bundle_id, receipt_api_id_form_t form,
                                                       receipt_api_credentials_t **out_credentials,
                                                       receipt_error_t *out_error);

/* ---------------------------------------------------------------- client */

/*
 * A client: credentials, a host, and the verifier every signed member of every
 * answer goes through. environment: PRODUCTION (https://api.storekit.apple.com),
 * SANDBOX (https://api.storekit-sandbox.apple.com) or LOCAL_TESTING (which has
 * no public host: base_url is then required); XCODE is refused. base_url, when
 * not NULL, replaces Apple's host (a mock, a proxy): http(s)://host[:port][/path].
 * verifier NULL means: trust only Apple Root CA - G3, expect the credentials'
 * bundle id and `environment`. A production client that reads notifications or
 * app transactions needs a verifier with the app's Apple id
 * (receipt_verifier_builder_set_app_apple_id). The client keeps its own
 * references to the credentials and verifier; the caller may free its own.
 * The bearer token (ES256, 30 minutes) is made when first needed and reused
 * until 2 minutes before it expires. Thread-safe. Free with
 * receipt_api_client_free() (NULL is a no-op).
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT (environment,
 * base URL, credentials without an issuer id).
 */
typedef struct receipt_api_client receipt_api_client_t;
receipt_status_t receipt_api_client_new(const receipt_api_credentials_t *credentials, receipt_environment_t environment,
                                        const char *base_url, const receipt_verifier_t *verifier,
                                        receipt_api_client_t **out_client, receipt_error_t *out_error);
void receipt_api_client_free(receipt_api_client_t *client);

/* The calls, by the names of Apple's server libraries ("get_transaction_info",
 * "get_transaction_history", ...; README lists them with their arguments).
 * receipt_api_call_name returns NULL past the end. Static storage. */
size_t receipt_api_call_count(void);
const char *receipt_api_call_name(size_t index);

/* Apple's name for an App Store Server API error code (4040010 ->
 * "TRANSACTION_ID_NOT_FOUND"), or NULL for a code Apple's library does not name.
 * Static storage. */
const char *receipt_api_error_name(int64_t error_code);

/* Apple's name for why its verifier refuses signed data, for a libreceipt
 * status: "OK", "INVALID_APP_IDENTIFIER" (bundle or app Apple id),
 * "INVALID_ENVIRONMENT", "INVALID_CHAIN_LENGTH", "INVALID_CERTIFICATE",
 * "RETRYABLE_VERIFICATION_FAILURE" (revocation unknown), and for any other status
 * (an unknown one too) "VERIFICATION_FAILURE": VerificationStatus in Apple's
 * Python library, VerificationError in its Swift one, so that bindings answer
 * as Apple's verifier would. Never NULL; static storage; thread-safe. */
const char *receipt_api_apple_verification_status(receipt_status_t status);

/* Apple's status for a whole verification, as Apple's verifier would give it
 * for the same input, and the step it comes from: of the failed steps, the
 * first of the lowest rank, where signature, chain and the rest rank first, then
 * the app's identifiers (bundle id; the app's Apple id only when `production` is
 * non-zero, as Apple's verifier checks it in production only), then the
 * environment, then a non-production verifier's app Apple id (libreceipt
 * requires it of any production JWS; Apple's answer there is the
 * environment's). *out_status: "OK" for a verdict that passed, else one of the
 * names of receipt_api_apple_verification_status() (static storage).
 * *out_step: the index of that step (receipt_verification_step_at), or SIZE_MAX
 * when none carries it (a verdict that passed, or failed before any step);
 * out_step may be NULL. Thread-safe.
 * Errors: RECEIPT_E_NULL_ARGUMENT (result or out_status). */
receipt_status_t receipt_api_apple_refusal(const receipt_verification_t *result, int production,
                                           const char **out_status, size_t *out_step);

/* The error codes Apple's library names, in increasing order, for bindings
 * that make an enumeration: index 0 to receipt_api_error_count() - 1; 0 past
 * the end. */
size_t receipt_api_error_count(void);
int64_t receipt_api_error_code(size_t index);

/* ---------------------------------------------------------------- exchange */

/*
 * One call, as a loop without I/O. arguments_json is a JSON object with Apple's
 * member names: path, query and body arguments together, e.g.
 *   {"transactionId": "2000000123", "sort": "ASCENDING", "productType": ["AUTO_RENEWABLE"]}
 * (numbers may also be given as strings). Every argument is checked first:
 * unknown members, missing required ones, malformed ids, unknown enum values,
 * a start after an end and the like are refused with RECEIPT_E_INVALID_ARGUMENT,
 * naming the member, and nothing is sent.
 *
 *   receipt_api_exchange_new(client, "get_transaction_history", args, strlen(args), 3, &exchange, &error);
 *   for (;;) {
 *       http(method, url, headers, body) -> status, Retry-After, answer;
 *       receipt_api_exchange_handle(exchange, status, retry_after, answer, answer_length, &step, &error);
 *       if (step.action == RECEIPT_API_SEND) { sleep_ms(step.delay_ms); continue; }
 *       if (step.action == RECEIPT_API_FAILED) break;            // step says why
 *       use(receipt_api_exchange_answer(exchange, &length));     // every signed member verified
 *       receipt_api_exchange_next_page(exchange, &more, &error);
 *       if (!more) break;
 *   }
 *
 * The rules: 429 is sent again after its Retry-After (1 s doubling without
 * one); 5xx and the error codes Apple calls retryable after 500 ms doubling; at
 * most `retries` times in a row, and not when the wait would exceed 60 s (the
 * step then carries Apple's wait). A request without an answer (http_status 0)
 * is sent again unless it is a POST. Paging ends when Apple says hasMore false,
 * repeats a cursor, or after 100000 pages. An exchange keeps 32 bytes for each
 * page's cursor (its SHA-256), however long the cursor (up to 4096 bytes).
 * Thread-safety: an exchange is for one thread; many may run on one client.
 * Free with receipt_api_exchange_free() (NULL is a no-op).
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT (unknown call,
 * bad arguments, retries < 0); RECEIPT_E_BAD_JSON (arguments not JSON).
 */
typedef struct receipt_api_exchange receipt_api_exchange_t;
receipt_status_t receipt_api_exchange_new(const receipt_api_client_t *client, const char *call,
                                          const char *arguments_json, size_t length, int retries,
                                          receipt_api_exchange_t **out_exchange, receipt_error_t *out_error);

/*
 * Production->sandbox fallback, opt-in: when the production exchange's call names
 * a transaction (transactionId or originalTransactionId in its path) and Apple's
 * production answers 404 with TRANSACTION_ID_NOT_FOUND (4040010) or
 * ORIGINAL_TRANSACTION_ID_NOT_FOUND (4040005) before any page, the next step is
 * SEND with the same call to `sandbox` (delay 0), and the answer, its signed
 * members verified by the sandbox client's verifier, carries
 * "answered_by": "sandbox". App Review buys in the sandbox against a production
 * backend. A call that names no transaction never falls back. Call it before
 * the first _handle. The exchange keeps its own reference to `sandbox`.
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT (the exchange is
 * not production, `sandbox` is not a sandbox client or is for another bundle id,
 * or an answer was already handled).
 */
receipt_status_t receipt_api_exchange_fall_back_to_sandbox(receipt_api_exchange_t *exchange,
                                                           const receipt_api_client_t *sandbox,
                                                           receipt_error_t *out_error);

/* The request to send now. Borrowed, valid until the next _handle,
 * _next_page or _free; NULL for NULL. Headers: Authorization (Bearer),
 * Accept, User-Agent, and Content-Type when there is a body. The body may be
 * empty (length 0). */
const char *receipt_api_exchange_method(const receipt_api_exchange_t *exchange);
const char *receipt_api_exchange_url(const receipt_api_exchange_t *exchange);
size_t receipt_api_exchange_header_count(const receipt_api_exchange_t *exchange);
const char *receipt_api_exchange_header_name(const receipt_api_exchange_t *exchange, size_t index);
const char *receipt_api_exchange_header_value(const receipt_api_exchange_t *exchange, size_t index);
const uint8_t *receipt_api_exchange_body(const receipt_api_exchange_t *exchange, size_t *out_length);

typedef enum receipt_api_action {
    RECEIPT_API_SEND = 0,     /* send the (new) request after delay_ms */
    RECEIPT_API_ANSWERED = 1, /* a 2xx answer, every signed member verified: receipt_api_exchange_answer */
    RECEIPT_API_FAILED = 2    /* Apple refused, or gave no answer within the retries */
} receipt_api_action_t;

typedef struct receipt_api_step {
    receipt_api_action_t action;
    int64_t delay_ms;                 /* SEND: wait this long first */
    int has_more;                     /* ANSWERED: 1 when another page follows */
    int http_status;                  /* FAILED: Apple's HTTP status; 0 for no answer */
    int64_t api_error;                /* FAILED: Apple's errorCode, 0 when none */
    int64_t retry_after_ms;           /* FAILED: Apple's Retry-After in ms, -1 when none */
    char detail[RECEIPT_DETAIL_SIZE]; /* FAILED: one line, e.g. "HTTP 404, error 4040010 TRANSACTION_ID_NOT_FOUND: ..." */
} receipt_api_step_t;

/*
 * Takes the answer to the current request: its HTTP status (0 when the
 * transport failed), its Retry-After header (NULL when absent; Apple's instant
 * in milliseconds since 1970, delay-seconds or an HTTP-date) and body, and
 * fills *out_step. A 2xx answer whose signed members do not all verify, or that
 * is not JSON, is not a step: the call returns that failure's status (for
 * example RECEIPT_E_SIGNATURE_INVALID, RECEIPT_E_BUNDLE_MISMATCH), the detail
 * names the member ("signedTransactions[3] failed verification: ..."), and
 * nothing of the answer is handed out. Answers over 4 MiB are refused
 * (RECEIPT_E_INPUT_TOO_LARGE).
 * Errors: RECEIPT_E_NULL_ARGUMENT, and those above.
 */
receipt_status_t receipt_api_exchange_handle(receipt_api_exchange_t *exchange, int http_status, const char *retry_after,
                                             const void *body, size_t length, receipt_api_step_t *out_step,
                                             receipt_error_t *out_error);

/* After ANSWERED: the answer as JSON, Apple's members as sent plus, beside
 * each signed member, its verified payload under the member's name without
 * "signed", in snake case ("signedTransactions" -> "transactions",
 * "signedRenewalInfo" -> "renewal_info", "signedPayload" -> "payload"), at every
 * depth. Borrowed, NUL-terminated, valid until the next _handle, _next_page or
 * _free. NULL when there is no answer. */
const char *receipt_api_exchange_answer(const receipt_api_exchange_t *exchange, size_t *out_length);

/* After ANSWERED with has_more: makes the request for the next page (the
 * revision or paginationToken of the answer) and sets *out_has_next to 1;
 * otherwise sets it to 0 and changes nothing.
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_LIMIT_EXCEEDED when Apple repeats
 * a cursor or the pages exceed 100000. */
/* After FAILED: Apple's errorMessage, NULL when the answer had none. Borrowed,
 * valid until the next _handle, _next_page or _free. */
const char *receipt_api_exchange_error_message(const receipt_api_exchange_t *exchange);

receipt_status_t receipt_api_exchange_next_page(receipt_api_exchange_t *exchange, int *out_has_next,
                                                receipt_error_t *out_error);

void receipt_api_exchange_free(receipt_api_exchange_t *exchange);

/* ---------------------------------------------------------------- signed requests */

/*
 * What a server signs for its app, as Apple's server libraries do. Each output
 * is freed with receipt_string_free(). Thread-safe.
 *
 * receipt_api_promotional_offer_signature: the original promotional-offer
 * signature, base64 of a DER ECDSA P-256/SHA-256 signature over bundle id, key
 * id, product id, offer id, lower-cased application_username (may be ""),
 * lower-cased nonce (a UUID) and timestamp_ms, joined by U+2063.
 *
 * receipt_api_promotional_offer_v2 (transaction_id may be NULL),
 * receipt_api_introductory_offer_eligibility and
 * receipt_api_advanced_commerce_request (request_json: one of Apple's in-app
 * requests, by its "operation": CREATE_ONE_TIME_CHARGE, CREATE_SUBSCRIPTION,
 * MODIFY_SUBSCRIPTION or REACTIVATE_SUBSCRIPTION, with version "1", requestInfo
 * and that model's members, checked as Apple's models check them; put in the
 * claim "request" as base64 of exactly these bytes): compact JWS, header
 * alg ES256, kid, typ JWT; claims the feature's own, then bid, iss, aud, iat
 * and a new random nonce. They need credentials with an issuer id.
 * Errors: RECEIPT_E_NULL_ARGUMENT; RECEIPT_E_INVALID_ARGUMENT (naming the
 * argument, or the request's member at fault: "items[0].displayName must
 * be 1 to 30 characters"); RECEIPT_E_BAD_JSON, RECEIPT_E_NOT_AN_OBJECT for request_json.
 */
receipt_status_t receipt_api_promotional_offer_signature(const receipt_api_credentials_t *credentials,
                                                         const char *product_identifier,
                                                         const char *subscription_offer_id,
                                                         const char *application_username, const char *nonce,
                                                         int64_t timestamp_ms, char **out_signature,
                                                         size_t *out_length, receipt_error_t *out_error);
receipt_status_t receipt_api_promotional_offer_v2(const receipt_api_credentials_t *credentials, const char *product_id,
                                                  const char *offer_identifier, const char *transaction_id,
                                                  char **out_jws, size_t *out_length, receipt_error_t *out_error);
receipt_status_t receipt_api_introductory_offer_eligibility(const receipt_api_credentials_t *credentials,
                                                            const char *product_id, int allow_introductory_offer,
                                                            const char *transaction_id, char **out_jws,
                                                            size_t *out_length, receipt_error_t *out_error);
receipt_status_t receipt_api_advanced_commerce_request(const receipt_api_credentials_t *credentials,
                                                       const char *request_json, size_t length, char **out_jws,
                                                       size_t *out_length, receipt_error_t *out_error);

#endif /* RECEIPT_SERVER_API */

#ifdef __cplusplus
}
#endif

#endif /* RECEIPT_H */
