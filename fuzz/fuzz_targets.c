/* libFuzzer targets over the C ABI. One file, one target per build: FUZZ_TARGET
 * selects which entry point the bytes go to.
 *   parse:  receipt_parse on the bytes as given (raw or base64)
 *   verify: parse, then verify with the default verifier (Apple root)
 *   json:   parse, then render the App Store JSON and walk every raw attribute
 *   base64: the bytes as base64 text of a receipt (encoded here, so mutations
 *           explore the DER underneath the text form)
 *   response: the bytes as a verifyReceipt answer, and as a product catalog
 *   jws:    the bytes as one cell of receipt_batch_verify (receipt or JWS), then
 *           receipt_jws_decode_unverified and receipt_verify_jws on them as a token,
 *           then every reader of the decoded JWS
 *   jsonreader: the bytes as a JWS payload (and as a header), so mutations go
 *           straight to the core's JSON reader and the payload typing
 *   apianswer: the bytes as App Store Server API answers (a 200 page of a paged
 *           call, then Apple's error with a Retry-After cut from them) and as a
 *           call's arguments; the key ($RECEIPT_FUZZ_API_KEY) and the anchor of
 *           signed members ($RECEIPT_FUZZ_JWS_ROOT) come from fuzz/run.sh
 *   ocspanswer: the bytes as the OCSP answer to each revocation query of a chain
 *           whose certificates name responders ($RECEIPT_FUZZ_OCSP_DIR: root.pem
 *           and ocsp.jws, from fuzz/run.sh), then a hard-mode verification
 * Every call must return a status; any crash, leak or hang is a finding. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RECEIPT_APPSTORE_PROTOCOL /* this file tests the opt-in tiers too */
#define RECEIPT_SERVER_API
#include <stdio.h>
#include "receipt.h"

#define PARSE 1
#define VERIFY 2
#define JSON 3
#define BASE64 4
#define RESPONSE 5
#define JWS 6
#define JSONREADER 7
#define APIANSWER 8
#define OCSPANSWER 9

/* A JSON reader's statuses: anything else from a JSON input is a finding. */
static int json_status(receipt_status_t status) {
    return status == RECEIPT_OK || status == RECEIPT_E_BAD_JSON || status == RECEIPT_E_DUPLICATE_MEMBER ||
           status == RECEIPT_E_NESTING_TOO_DEEP || status == RECEIPT_E_BAD_UTF8 || status == RECEIPT_E_LIMIT_EXCEEDED;
}

static receipt_verifier_t *default_verifier(void) {
    static receipt_verifier_t *verifier;
    if (!verifier) {
        receipt_verifier_builder_t *builder = NULL;
        receipt_verifier_builder_new(&builder);
        receipt_verifier_build(builder, &verifier);
        receipt_verifier_builder_free(builder);
    }
    return verifier;
}

static size_t to_base64(const uint8_t *data, size_t size, char *out) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t o = 0;
    for (size_t i = 0; i < size; i += 3) {
        uint32_t n = (uint32_t)data[i] << 16 | (i + 1 < size ? (uint32_t)data[i + 1] << 8 : 0) |
                     (i + 2 < size ? data[i + 2] : 0);
        out[o++] = alphabet[n >> 18 & 63];
        out[o++] = alphabet[n >> 12 & 63];
        out[o++] = i + 1 < size ? alphabet[n >> 6 & 63] : '=';
        out[o++] = i + 2 < size ? alphabet[n & 63] : '=';
    }
    return o;
}

#if FUZZ_TARGET == OCSPANSWER
static char *slurp_in(const char *directory, const char *name, size_t *length) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", directory ? directory : ".", name);
    FILE *f = fopen(path, "rb");
    if (!f) abort(); /* fuzz/run.sh makes them */
    char *text = calloc(1, 1 << 16);
    *length = fread(text, 1, (1 << 16) - 1, f);
    fclose(f);
    while (*length > 0 && text[*length - 1] == '\n') text[--*length] = 0;
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char *root, *token;
    static size_t root_length, token_length;
    if (!root) {
        root = slurp_in(getenv("RECEIPT_FUZZ_OCSP_DIR"), "root.pem", &root_length);
        token = slurp_in(getenv("RECEIPT_FUZZ_OCSP_DIR"), "ocsp.jws", &token_length);
    }
    /* A new verifier each time, so that an answer the cache kept does not end the queries. */
    receipt_verifier_builder_t *builder = NULL;
    receipt_verifier_builder_new(&builder);
    receipt_verifier_builder_set_trust(builder, 0);
    if (receipt_verifier_builder_add_anchor(builder, root, root_length, NULL)) abort();
    receipt_verifier_builder_set_revocation(builder, RECEIPT_REVOCATION_HARD);
    receipt_verifier_t *verifier = NULL;
    receipt_verifier_build(builder, &verifier);
    receipt_verifier_builder_free(builder);
    receipt_revocation_queries_t *queries = NULL;
    if (receipt_revocation_queries(verifier, token, token_length, &queries, NULL) != RECEIPT_OK) abort();
    if (receipt_revocation_query_count(queries) != 2) abort();
    for (size_t i = 0; i < 2; i++) {
        receipt_error_t error;
        receipt_status_t status = receipt_revocation_answer(verifier, queries, i, 200, data, size, &error);
        if (status != RECEIPT_OK && status != RECEIPT_E_BAD_OCSP_RESPONSE) abort();
        if (status != RECEIPT_OK && strlen(error.detail) == 0) abort();
    }
    receipt_revocation_queries_free(queries);
    receipt_verification_t *result = NULL;
    receipt_status_t verdict = receipt_verify_jws(verifier, token, token_length, NULL, &result, NULL);
    if (verdict != RECEIPT_OK && verdict != RECEIPT_E_REVOKED && verdict != RECEIPT_E_REVOCATION_UNKNOWN) abort();
    receipt_verification_free(result);
    receipt_verifier_free(verifier);
    return 0;
}
#elif FUZZ_TARGET == APIANSWER
static char *slurp(const char *variable, size_t *length) {
    const char *path = getenv(variable);
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) abort(); /* fuzz/run.sh sets both variables */
    char *text = calloc(1, 1 << 16);
    *length = fread(text, 1, (1 << 16) - 1, f);
    fclose(f);
    return text;
}

static receipt_api_client_t *api_client(void) {
    static receipt_api_client_t *client;
    if (!client) {
        size_t key_length = 0, root_length = 0;
        char *key = slurp("RECEIPT_FUZZ_API_KEY", &key_length), *root = slurp("RECEIPT_FUZZ_JWS_ROOT", &root_length);
        receipt_api_credentials_t *credentials = NULL;
        if (receipt_api_credentials_new(key, key_length, "KEY123ABCD", "57246542-96fe-1a63-e053-0824d011072a", "com.example.minted", &credentials, NULL)) abort();
        receipt_verifier_builder_t *builder = NULL;
        receipt_verifier_builder_new(&builder);
        receipt_verifier_builder_set_trust(builder, 0);
        if (receipt_verifier_builder_add_anchor(builder, root, root_length, NULL)) abort();
        receipt_verifier_t *verifier = NULL;
        receipt_verifier_build(builder, &verifier);
        if (receipt_api_client_new(credentials, RECEIPT_ENVIRONMENT_SANDBOX, "http://127.0.0.1:9", verifier, &client, NULL)) abort();
        receipt_verifier_builder_free(builder);
        receipt_verifier_free(verifier);
        receipt_api_credentials_free(credentials);
        free(key);
        free(root);
    }
    return client;
}

/* An answer is a step or a status of the JSON reader or the JWS verifier; never anything else. */
static void expect_answer_status(receipt_status_t status) {
    if (status != RECEIPT_OK && !json_status(status) && status != RECEIPT_E_NOT_AN_OBJECT &&
        status != RECEIPT_E_INPUT_TOO_LARGE && status != RECEIPT_E_BAD_FIELD && (status < 100 || status >= 300)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const calls[] = {"get_transaction_history", "get_notification_history",
                                        "get_all_subscription_statuses"};
    static const char *const arguments[] = {"{\"transactionId\":\"2000000000000001\"}",
                                            "{\"startDate\":1700000000000,\"endDate\":1700000001000}",
                                            "{\"transactionId\":\"1\"}"};
    receipt_api_client_t *client = api_client();
    for (size_t c = 0; c < 3; c++) {
        receipt_api_exchange_t *exchange = NULL;
        if (receipt_api_exchange_new(client, calls[c], arguments[c], strlen(arguments[c]), 2, &exchange, NULL)) abort();
        receipt_api_step_t step;
        receipt_error_t error;
        receipt_status_t status = receipt_api_exchange_handle(exchange, 200, NULL, data, size, &step, &error);
        expect_answer_status(status);
        if (status == RECEIPT_OK) {
            size_t length = 0;
            const char *answer = receipt_api_exchange_answer(exchange, &length);
            if (step.action != RECEIPT_API_ANSWERED || !answer || strlen(answer) != length) abort();
            int more = 0;
            status = receipt_api_exchange_next_page(exchange, &more, NULL);
            if (status != RECEIPT_OK && status != RECEIPT_E_LIMIT_EXCEEDED && status != RECEIPT_E_INVALID_ARGUMENT) abort();
            if (more && !strstr(receipt_api_exchange_url(exchange), "?")) abort();
        }
        /* The same bytes as Apple's error, with a Retry-After cut from them. */
        char retry_after[32] = {0};
        memcpy(retry_after, data, size < 31 ? size : 31);
        status = receipt_api_exchange_handle(exchange, c == 0 ? 429 : 503, retry_after, data, size, &step, NULL);
        if (status != RECEIPT_OK || step.action == RECEIPT_API_ANSWERED) abort();
        if (step.action == RECEIPT_API_SEND && (step.delay_ms < 0 || step.delay_ms > 60000)) abort();
        receipt_api_exchange_free(exchange);
    }
    /* The bytes as a call's arguments: refused with a reason, or a request. */
    receipt_api_exchange_t *exchange = NULL;
    receipt_status_t status = receipt_api_exchange_new(client, "get_transaction_history", (const char *)data, size, 1,
                                                       &exchange, NULL);
    if (status == RECEIPT_OK) {
        if (strncmp(receipt_api_exchange_url(exchange), "http://127.0.0.1:9/inApps/", 26) != 0) abort();
        receipt_api_exchange_free(exchange);
    } else if (!json_status(status) && status != RECEIPT_E_INVALID_ARGUMENT && status != RECEIPT_E_NOT_AN_OBJECT &&
               status != RECEIPT_E_INPUT_TOO_LARGE) {
        abort();
    }
    return 0;
}
#elif FUZZ_TARGET == RESPONSE
static const uint8_t minimal_receipt[] = { /* a payload-only receipt: one bundle_id, no signers */
    0x30, 0x3a, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02, 0xa0, 0x2d, 0x30, 0x2b, 0x02,
    0x01, 0x01, 0x31, 0x00, 0x30, 0x22, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01, 0xa0,
    0x15, 0x04, 0x13, 0x31, 0x11, 0x30, 0x0f, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01, 0x04, 0x07, 0x0c, 0x05, 0x61,
    0x2e, 0x62, 0x2e, 0x63, 0x31, 0x00};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    receipt_appstore_answer_t answer;
    receipt_status_t status = receipt_appstore_parse_response((const char *)data, size, &answer, NULL);
    if (!json_status(status)) abort();
    receipt_appstore_exchange_t *exchange = NULL;
    if (receipt_appstore_exchange_new(minimal_receipt, sizeof minimal_receipt, NULL, 0, RECEIPT_ENVIRONMENT_PRODUCTION,
                                      NULL, NULL, 1, &exchange, NULL) != RECEIPT_OK) abort();
    receipt_exchange_step_t step;
    for (int i = 0; i < 3; i++) {
        if (receipt_appstore_exchange_handle(exchange, 200, (const char *)data, size, &step) != RECEIPT_OK) abort();
        if (step.action != RECEIPT_EXCHANGE_SEND) break;
    }
    receipt_appstore_exchange_free(exchange);
    receipt_t *receipt = NULL;
    if (receipt_parse(minimal_receipt, sizeof minimal_receipt, &receipt, NULL) != RECEIPT_OK) abort();
    char *catalog = malloc(size + 1), *json = NULL;
    memcpy(catalog, data, size);
    catalog[size] = 0;
    status = receipt_entitlements_json(receipt, NULL, 0, catalog, RECEIPT_ENTITLEMENTS_UNVERIFIED, &json, NULL);
    if (!json_status(status) && status != RECEIPT_E_INVALID_ARGUMENT) abort();
    receipt_string_free(json);
    free(catalog);
    receipt_free(receipt);
    return 0;
}
#elif FUZZ_TARGET == JWS || FUZZ_TARGET == JSONREADER
static const char *const paths[] = {"bundleId", "signedDate", "transactionId", "data.bundleId", "data.appAppleId",
                                    "data.signedTransactionInfo", "summary", "x", ""};

/* Every reader of a decoded JWS must answer with a status. */
static void read_everything(const receipt_jws_t *jws) {
    const char *text = NULL;
    size_t length = 0;
    int64_t number = 0;
    int flag = 0;
    if (receipt_jws_payload(jws, &text, &length) != RECEIPT_OK || strlen(text) != length) abort();
    if (receipt_jws_header(jws, &text, &length) != RECEIPT_OK || strlen(text) != length) abort();
    if ((unsigned)receipt_jws_type(jws) > RECEIPT_JWS_APP_TRANSACTION) abort();
    receipt_jws_signed_date(jws, &number);
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        receipt_jws_get_string(jws, paths[i], &text, &length);
        receipt_jws_get_int(jws, paths[i], &number);
        receipt_jws_get_date(jws, paths[i], &number);
        receipt_jws_get_bool(jws, paths[i], &flag);
    }
    char *json = NULL;
    if (receipt_jws_to_json(jws, RECEIPT_JSON_PRETTY, &json, NULL) != RECEIPT_OK) abort();
    receipt_string_free(json);
}

/* The same bytes as one cell of a batch: a row with a status, never a failed call, and
 * as many purchases as the row counts, each with readable strings. */
static void batch_row(const uint8_t *data, size_t size) {
    const void *inputs[1] = {size ? (const void *)data : (const void *)""};
    size_t lengths[1] = {size};
    receipt_batch_row_t row;
    receipt_batch_t *batch = NULL;
    if (receipt_batch_verify(default_verifier(), inputs, lengths, 1, &batch, &row) != RECEIPT_OK || !batch) abort();
    if (row.status != RECEIPT_OK && (row.status < 100 || row.status >= 300)) abort();
    if (row.valid != (row.status == RECEIPT_OK)) abort();
    if (row.bundle_id) (void)strlen(row.bundle_id);
    if (row.receipt_type) (void)strlen(row.receipt_type);
    size_t count = receipt_batch_purchase_count(batch);
    if (count != row.in_app_count) abort();
    receipt_batch_purchase_t *purchases = calloc(count + 1, sizeof *purchases);
    if (receipt_batch_purchases(batch, purchases, count) != RECEIPT_OK) abort();
    for (size_t i = 0; i < count; i++) {
        if (purchases[i].row != 0) abort();
        if (purchases[i].product_id) (void)strlen(purchases[i].product_id);
        if (purchases[i].transaction_id) (void)strlen(purchases[i].transaction_id);
    }
    free(purchases);
    receipt_batch_free(batch);
}

/* The token alone as a subscription's news, judged unverified at instant 0, for the id it
 * names (or "1"): a state, or no transaction of that id, never anything else. */
static void subscription_state(const uint8_t *data, size_t size, const receipt_jws_t *jws) {
    char id[64] = "1";
    const char *found = NULL;
    size_t found_length = 0;
    if (receipt_jws_get_string(jws, "originalTransactionId", &found, &found_length) == RECEIPT_OK && found_length > 0 &&
        found_length < sizeof id) {
        memcpy(id, found, found_length);
        id[found_length] = 0;
    }
    const void *tokens[1] = {data};
    size_t lengths[1] = {size};
    char *json = NULL;
    receipt_status_t status = receipt_subscription_state_json(id, tokens, lengths, 1, NULL, 0, RECEIPT_ENTITLEMENTS_UNVERIFIED,
                                                              &json, NULL, NULL);
    if (status == RECEIPT_OK) {
        if (!json) abort();
        receipt_string_free(json);
    } else if (status != RECEIPT_E_ABSENT || json) {
        abort();
    }
}

static size_t to_base64url(const uint8_t *data, size_t size, char *out) {
    size_t o = to_base64(data, size, out);
    while (o > 0 && out[o - 1] == '=') o--;
    for (size_t i = 0; i < o; i++) out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
#if FUZZ_TARGET == JSONREADER
    /* "e30." + base64url(data) + "." and base64url(data) + ".e30.": the bytes as payload, then as header. */
    char *token = malloc(size / 3 * 4 + 16);
    for (int as_header = 0; as_header < 2; as_header++) {
        size_t length = 0;
        if (!as_header) { memcpy(token, "e30.", 4); length = 4; }
        length += to_base64url(data, size, token + length);
        memcpy(token + length, as_header ? ".e30." : ".", as_header ? 5 : 1);
        length += as_header ? 5 : 1;
        receipt_jws_t *jws = NULL;
        receipt_status_t status = receipt_jws_decode_unverified(token, length, &jws, NULL);
        if (status == RECEIPT_OK) {
            read_everything(jws);
            receipt_jws_free(jws);
        } else if (!json_status(status) && status != RECEIPT_E_NOT_AN_OBJECT && status != RECEIPT_E_BAD_FIELD &&
                   !(status == RECEIPT_E_NOT_A_JWS && size == 0)) { /* an empty segment is no JWS */
            abort();
        }
    }
    free(token);
#else
    batch_row(data, size);
    receipt_jws_t *jws = NULL;
    receipt_error_t error;
    receipt_status_t status = receipt_jws_decode_unverified(data, size, &jws, &error);
    if (status != RECEIPT_OK) {
        if (jws != NULL || error.status != status || status < 100 || status >= 200) abort();
        return 0;
    }
    read_everything(jws);
    subscription_state(data, size, jws);
    receipt_jws_free(jws);
    receipt_verification_t *result = NULL;
    jws = NULL;
    receipt_status_t verdict = receipt_verify_jws(default_verifier(), data, size, &jws, &result, NULL);
    if (verdict != RECEIPT_OK && (verdict < 200 || verdict >= 300)) abort();
    if (!jws || !result) abort();
    receipt_step_t step;
    for (size_t i = 0; i < receipt_verification_step_count(result); i++) {
        if (receipt_verification_step_at(result, i, &step) != RECEIPT_OK) abort();
    }
    receipt_verification_free(result);
    receipt_jws_free(jws);
#endif
    return 0;
}
#else
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    receipt_t *receipt = NULL;
    receipt_error_t error;
#if FUZZ_TARGET == BASE64
    char *text = malloc(size / 3 * 4 + 8);
    size_t length = to_base64(data, size, text);
    receipt_status_t status = receipt_parse(text, length, &receipt, &error);
    free(text);
#else
    receipt_status_t status = receipt_parse(data, size, &receipt, &error);
#endif
    if (status != RECEIPT_OK) {
        if (receipt != NULL || error.status != status || error.detail[sizeof error.detail - 1] != 0) abort();
        return 0;
    }
#if FUZZ_TARGET == VERIFY
    receipt_verification_t *result = NULL;
    receipt_status_t verdict = receipt_verify(default_verifier(), receipt, &result);
    if (verdict != RECEIPT_OK && (verdict < 200 || verdict >= 300)) abort();
    receipt_verification_free(result);
#elif FUZZ_TARGET == JSON
    char *json = NULL;
    if (receipt_to_json(receipt, RECEIPT_JSON_PRETTY, &json, NULL) != RECEIPT_OK) abort();
    receipt_string_free(json);
    for (size_t i = 0; i < receipt_attribute_count(receipt); i++) {
        receipt_attribute_t attribute;
        if (receipt_attribute_at(receipt, i, &attribute) != RECEIPT_OK) abort();
    }
    for (size_t p = 0; p < receipt_purchase_count(receipt); p++) {
        const char *text = NULL;
        receipt_purchase_get_string(receipt, p, RECEIPT_FIELD_PRODUCT_ID, &text, NULL);
        for (size_t i = 0; i < receipt_purchase_attribute_count(receipt, p); i++) {
            receipt_attribute_t attribute;
            if (receipt_purchase_attribute_at(receipt, p, i, &attribute) != RECEIPT_OK) abort();
        }
    }
#else
    (void)default_verifier;
#endif
    receipt_free(receipt);
    return 0;
}
#endif
