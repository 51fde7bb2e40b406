/* cmocka tests of the App Store Server API tier of receipt.h (RECEIPT_SERVER_API),
 * without I/O: requests are built and checked byte for byte, and canned answers
 * (pages of transactions minted by tools/mint_jws.py, Apple's error bodies, a
 * tampered member) are handed back as a transport would. Run from test_abi.c's main. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define RECEIPT_SERVER_API
#include "receipt.h"
#include "test_files.h"

#define KEY_ID "KEY123ABCD"
#define ISSUER_ID "57246542-96fe-1a63-e053-0824d011072a"

static receipt_api_credentials_t *credentials(void) {
    size_t length = 0;
    char *pem = read_whole_file("api-key.pem", &length, 1);
    receipt_api_credentials_t *made = NULL;
    receipt_error_t error;
    assert_int_equal(receipt_api_credentials_new(pem, length, KEY_ID, ISSUER_ID, "com.example.minted", &made, &error),
                     RECEIPT_OK);
    free(pem);
    return made;
}

/* A client of the mock host whose verifier trusts only the JWS test CA. */
static receipt_api_client_t *client(void) {
    size_t length = 0;
    char *root = read_whole_file("jws-ca/root.pem", &length, 1);
    receipt_verifier_builder_t *builder = NULL;
    assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_trust(builder, 0), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_add_anchor(builder, root, length, NULL), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_bundle_id(builder, "com.example.minted"), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_environment(builder, RECEIPT_ENVIRONMENT_SANDBOX), RECEIPT_OK);
    receipt_verifier_t *verifier = NULL;
    assert_int_equal(receipt_verifier_build(builder, &verifier), RECEIPT_OK);
    receipt_verifier_builder_free(builder);
    free(root);
    receipt_api_credentials_t *keys = credentials();
    receipt_api_client_t *made = NULL;
    receipt_error_t error;
    assert_int_equal(receipt_api_client_new(keys, RECEIPT_ENVIRONMENT_SANDBOX, "http://127.0.0.1:9/", verifier, &made,
                                            &error), RECEIPT_OK);
    /* The client keeps its own references. */
    receipt_api_credentials_free(keys);
    receipt_verifier_free(verifier);
    return made;
}

static void test_credentials_and_clients_refuse_what_apple_would(void **state) {
    (void)state;
    receipt_api_credentials_t *made = NULL;
    receipt_error_t error;
    const char *garbage = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n";
    assert_int_equal(receipt_api_credentials_new(garbage, strlen(garbage), KEY_ID, ISSUER_ID, "B", &made, &error),
                     RECEIPT_E_INVALID_ARGUMENT);
    assert_null(made);
    assert_non_null(strstr(error.detail, "PEM"));
    size_t length = 0;
    char *pem = read_whole_file("api-key.pem", &length, 1);
    assert_int_equal(receipt_api_credentials_new(pem, length, "  ", ISSUER_ID, "B", &made, &error), RECEIPT_E_INVALID_ARGUMENT);
    assert_non_null(strstr(error.detail, "key id"));
    /* App Store Connect's forms, checked before any token carries them: the PEM passed as the key
       id by a mix-up, a short key id, an issuer id that is not a UUID. */
    const char *wrong_ids[][2] = {{pem, ISSUER_ID}, {"KEY123", ISSUER_ID}, {KEY_ID, "not-a-uuid"}};
    for (size_t i = 0; i < sizeof wrong_ids / sizeof wrong_ids[0]; i++) {
        assert_int_equal(receipt_api_credentials_new(pem, length, wrong_ids[i][0], wrong_ids[i][1], "B", &made, &error),
                         RECEIPT_E_INVALID_ARGUMENT);
        assert_null(made);
        assert_non_null(strstr(error.detail, i < 2 ? "key id" : "issuer id"));
    }
    assert_int_equal(receipt_api_credentials_new(pem, length, KEY_ID, NULL, "B", &made, &error), RECEIPT_OK);
    receipt_api_client_t *api = NULL;
    /* No issuer id: no token can be made, so no client. */
    assert_int_equal(receipt_api_client_new(made, RECEIPT_ENVIRONMENT_SANDBOX, NULL, NULL, &api, &error),
                     RECEIPT_E_INVALID_ARGUMENT);
    receipt_api_credentials_free(made);
    assert_int_equal(receipt_api_credentials_new(pem, length, KEY_ID, ISSUER_ID, "B", &made, &error), RECEIPT_OK);
    assert_int_equal(receipt_api_client_new(made, RECEIPT_ENVIRONMENT_XCODE, NULL, NULL, &api, &error),
                     RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_api_client_new(made, RECEIPT_ENVIRONMENT_LOCAL_TESTING, NULL, NULL, &api, &error),
                     RECEIPT_E_INVALID_ARGUMENT);
    assert_non_null(strstr(error.detail, "base URL"));
    assert_int_equal(receipt_api_client_new(made, RECEIPT_ENVIRONMENT_SANDBOX, "ftp://x", NULL, &api, &error),
                     RECEIPT_E_INVALID_ARGUMENT);
    /* The bearer token never travels in clear text but to this machine. */
    assert_int_equal(receipt_api_client_new(made, RECEIPT_ENVIRONMENT_SANDBOX, "http://api.storekit.apple.com", NULL, &api,
                                            &error), RECEIPT_E_INVALID_ARGUMENT);
    assert_non_null(strstr(error.detail, "https"));
    assert_int_equal(receipt_api_client_new(made, RECEIPT_ENVIRONMENT_PRODUCTION, NULL, NULL, &api, &error), RECEIPT_OK);
    receipt_api_exchange_t *exchange = NULL;
    const char *arguments = "{\"transactionId\": \"2000000000000002\"}";
    assert_int_equal(receipt_api_exchange_new(api, "get_transaction_info", arguments, strlen(arguments), 3, &exchange,
                                              &error), RECEIPT_OK);
    assert_string_equal(receipt_api_exchange_url(exchange),
                        "https://api.storekit.apple.com/inApps/v1/transactions/2000000000000002");
    receipt_api_exchange_free(exchange);
    receipt_api_client_free(api);
    receipt_api_credentials_free(made);
    free(pem);
}

/* The drop-in's form: what only Apple's server can judge is taken (Apple's placeholders), what
   would leak a secret or break a token's header is refused in either form before any token. */
static void test_credentials_in_the_header_safe_form(void **state) {
    (void)state;
    size_t length = 0;
    char *pem = read_whole_file("api-key.pem", &length, 1);
    receipt_api_credentials_t *made = NULL;
    receipt_error_t error;
    assert_int_equal(receipt_api_credentials_new_with_form(pem, length, "keyId", "issuerId", "com.example",
                                                           RECEIPT_API_IDS_APP_STORE_CONNECT, &made, &error),
                     RECEIPT_E_INVALID_ARGUMENT);
    assert_null(made);
    assert_non_null(strstr(error.detail, "key id must be"));
    assert_int_equal(receipt_api_credentials_new_with_form(pem, length, "keyId", "issuerId", "com.example",
                                                           RECEIPT_API_IDS_HEADER_SAFE, &made, &error), RECEIPT_OK);
    char *signature = NULL;
    size_t signature_length = 0;
    assert_int_equal(receipt_api_promotional_offer_v2(made, "productId", "offerIdentifier", NULL, &signature,
                                                      &signature_length, &error), RECEIPT_OK);
    receipt_string_free(signature);
    receipt_api_credentials_free(made);
    char long_id[66];
    memset(long_id, 'A', 65);
    long_id[65] = 0;
    /* {key id, issuer id, bundle id, what the detail names} */
    const char *refused[][4] = {{"key Id", "issuerId", "B", "whitespace"}, {"keyId\n", "issuerId", "B", "whitespace"},
                                {"key\x01Id", "issuerId", "B", "control"}, {pem, "issuerId", "B", "key id"},
                                {"keyId", "-----BEGIN", "B", "PEM armour"}, {long_id, "issuerId", "B", "64"},
                                {"keyId", "issuerId", "com.example app", "bundle id"}, {"", "issuerId", "B", "empty"}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        for (int form = RECEIPT_API_IDS_APP_STORE_CONNECT; form <= RECEIPT_API_IDS_HEADER_SAFE; form++) {
            assert_int_equal(receipt_api_credentials_new_with_form(pem, length, refused[i][0], refused[i][1], refused[i][2],
                                                                   (receipt_api_id_form_t)form, &made, &error),
                             RECEIPT_E_INVALID_ARGUMENT);
            assert_null(made);
        }
        assert_non_null(strstr(error.detail, refused[i][3]));
    }
    memset(long_id, 'A', 64);
    long_id[64] = 0;
    assert_int_equal(receipt_api_credentials_new_with_form(pem, length, long_id, "issuerId", "B",
                                                           RECEIPT_API_IDS_HEADER_SAFE, &made, &error), RECEIPT_OK);
    receipt_api_credentials_free(made);
    assert_int_equal(receipt_api_credentials_new_with_form(pem, length, "keyId", "issuerId", "B",
                                                           (receipt_api_id_form_t)7, &made, &error),
                     RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_api_credentials_new_with_form(pem, length, NULL, "issuerId", "B",
                                                           RECEIPT_API_IDS_HEADER_SAFE, &made, &error),
                     RECEIPT_E_NULL_ARGUMENT);
    free(pem);
}

/* Apple's status for a whole verdict: a production verifier of another app's Apple id, on a sandbox
   notification of the app, fails the environment (step 7) before the app's Apple id (step 8);
   Apple's verifier reaches the app's identifiers first in production only. */
static void test_apple_refusal_of_a_verdict(void **state) {
    (void)state;
    const char *fixtures = getenv("RECEIPT_SHARED_FIXTURES");
    char path[1024];
    snprintf(path, sizeof path, "%s/../jws/apple/spb__01_notification_DID_RENEW.jws",
             fixtures ? fixtures : "../../../shared/fixtures/apple");
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        print_message("SKIPPED: %s is absent (../shared not beside this checkout)\n", path);
        skip();
    }
    fclose(probe);
    size_t length = 0;
    char *token = read_whole_file(path, &length, 1);
    const char *status = NULL;
    size_t step = 0;
    for (int production = 1; production >= 0; production--) {
        receipt_verifier_builder_t *builder = NULL;
        assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
        assert_int_equal(receipt_verifier_builder_set_bundle_id(builder, "com.loki-project.loki-messenger"), RECEIPT_OK);
        assert_int_equal(receipt_verifier_builder_set_environment(builder, RECEIPT_ENVIRONMENT_PRODUCTION), RECEIPT_OK);
        assert_int_equal(receipt_verifier_builder_set_app_apple_id(builder, 1), RECEIPT_OK);
        receipt_verifier_t *verifier = NULL;
        assert_int_equal(receipt_verifier_build(builder, &verifier), RECEIPT_OK);
        receipt_verifier_builder_free(builder);
        receipt_verification_t *result = NULL;
        assert_int_equal(receipt_verify_jws(verifier, token, length, NULL, &result, NULL), RECEIPT_E_ENVIRONMENT_MISMATCH);
        assert_int_equal(receipt_api_apple_refusal(result, production, &status, &step), RECEIPT_OK);
        assert_string_equal(status, production ? "INVALID_APP_IDENTIFIER" : "INVALID_ENVIRONMENT");
        receipt_step_t named;
        assert_int_equal(receipt_verification_step_at(result, step, &named), RECEIPT_OK);
        assert_string_equal(named.name, production ? "app_apple_id" : "environment");
        assert_int_equal(named.outcome, RECEIPT_STEP_FAILED);
        assert_int_equal(receipt_api_apple_refusal(result, production, &status, NULL), RECEIPT_OK);
        receipt_verification_free(result);
        receipt_verifier_free(verifier);
    }
    /* A verdict that passed: OK, from no step. */
    receipt_verifier_builder_t *builder = NULL;
    assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_environment(builder, RECEIPT_ENVIRONMENT_SANDBOX), RECEIPT_OK);
    receipt_verifier_t *verifier = NULL;
    assert_int_equal(receipt_verifier_build(builder, &verifier), RECEIPT_OK);
    receipt_verifier_builder_free(builder);
    receipt_verification_t *result = NULL;
    assert_int_equal(receipt_verify_jws(verifier, token, length, NULL, &result, NULL), RECEIPT_OK);
    assert_int_equal(receipt_api_apple_refusal(result, 1, &status, &step), RECEIPT_OK);
    assert_string_equal(status, "OK");
    assert_true(step == SIZE_MAX);
    assert_int_equal(receipt_api_apple_refusal(NULL, 1, &status, &step), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_api_apple_refusal(result, 1, NULL, &step), RECEIPT_E_NULL_ARGUMENT);
    receipt_verification_free(result);
    receipt_verifier_free(verifier);
    free(token);
}

static void test_calls_and_error_names(void **state) {
    (void)state;
    /* Apple's library, 3.1.2: 30 methods; the Advanced Commerce API: 6 more */
    assert_int_equal(receipt_api_call_count(), 36);
    int seen_history = 0;
    for (size_t i = 0; i < receipt_api_call_count(); i++) {
        seen_history |= strcmp(receipt_api_call_name(i), "get_transaction_history") == 0;
    }
    assert_true(seen_history);
    assert_null(receipt_api_call_name(receipt_api_call_count()));
    assert_string_equal(receipt_api_error_name(4040010), "TRANSACTION_ID_NOT_FOUND");
    assert_string_equal(receipt_api_error_name(4290000), "RATE_LIMIT_EXCEEDED");
    assert_null(receipt_api_error_name(1234));
    /* Apple's verifier statuses, as the drop-ins answer them. */
    assert_string_equal(receipt_api_apple_verification_status(RECEIPT_OK), "OK");
    assert_string_equal(receipt_api_apple_verification_status(RECEIPT_E_BUNDLE_MISMATCH), "INVALID_APP_IDENTIFIER");
    assert_string_equal(receipt_api_apple_verification_status(RECEIPT_E_ENVIRONMENT_MISMATCH), "INVALID_ENVIRONMENT");
    assert_string_equal(receipt_api_apple_verification_status(RECEIPT_E_REVOCATION_UNKNOWN),
                        "RETRYABLE_VERIFICATION_FAILURE");
    assert_string_equal(receipt_api_apple_verification_status(RECEIPT_E_NO_CERTIFICATES), "VERIFICATION_FAILURE");
    assert_string_equal(receipt_api_apple_verification_status((receipt_status_t)9999), "VERIFICATION_FAILURE");
    assert_true(receipt_api_error_count() >= 87);
    for (size_t i = 1; i < receipt_api_error_count(); i++) {
        assert_true(receipt_api_error_code(i - 1) < receipt_api_error_code(i));
        assert_non_null(receipt_api_error_name(receipt_api_error_code(i)));
    }
}

static const char *header(const receipt_api_exchange_t *exchange, const char *name) {
    for (size_t i = 0; i < receipt_api_exchange_header_count(exchange); i++) {
        if (strcmp(receipt_api_exchange_header_name(exchange, i), name) == 0) {
            return receipt_api_exchange_header_value(exchange, i);
        }
    }
    return NULL;
}

static void test_requests_are_built_whole_and_checked(void **state) {
    (void)state;
    receipt_api_client_t *api = client();
    receipt_api_exchange_t *exchange = NULL;
    receipt_error_t error;
    const char *arguments = "{\"transactionId\": 2000000000000001, \"productId\": [\"a.b\", \"c+d\"], "
                            "\"sort\": \"ASCENDING\", \"revoked\": false, \"startDate\": \"1700000000000\"}";
    assert_int_equal(receipt_api_exchange_new(api, "get_transaction_history", arguments, strlen(arguments), 3,
                                              &exchange, &error), RECEIPT_OK);
    assert_string_equal(receipt_api_exchange_method(exchange), "GET");
    assert_string_equal(receipt_api_exchange_url(exchange),
                        "http://127.0.0.1:9/inApps/v2/history/2000000000000001?startDate=1700000000000"
                        "&productId=a.b&productId=c%2Bd&sort=ASCENDING&revoked=false");
    const char *authorization = header(exchange, "Authorization");
    assert_non_null(authorization);
    assert_true(strncmp(authorization, "Bearer eyJ", 10) == 0);
    assert_string_equal(header(exchange, "Accept"), "application/json");
    assert_null(header(exchange, "Content-Type"));
    size_t length = 99;
    assert_non_null(receipt_api_exchange_body(exchange, &length));
    assert_int_equal(length, 0);
    receipt_api_exchange_free(exchange);

    const char *body_arguments = "{\"originalTransactionId\": \"2000000000000001\", \"extendByDays\": 30, "
                                 "\"extendReasonCode\": 1, \"requestIdentifier\": \"r-1\"}";
    assert_int_equal(receipt_api_exchange_new(api, "extend_subscription_renewal_date", body_arguments,
                                              strlen(body_arguments), 3, &exchange, &error), RECEIPT_OK);
    assert_string_equal(receipt_api_exchange_method(exchange), "PUT");
    assert_string_equal(receipt_api_exchange_url(exchange), "http://127.0.0.1:9/inApps/v1/subscriptions/extend/2000000000000001");
    assert_string_equal(header(exchange, "Content-Type"), "application/json");
    const uint8_t *body = receipt_api_exchange_body(exchange, &length);
    const char *expected = "{\"extendByDays\":30,\"extendReasonCode\":1,\"requestIdentifier\":\"r-1\"}";
    assert_int_equal(length, strlen(expected));
    assert_memory_equal(body, expected, length);
    receipt_api_exchange_free(exchange);

    /* Garbage never reaches Apple: each refused with the member named. */
    const struct { const char *call, *arguments, *named; } refused[] = {
        {"get_transaction_info", "{\"transactionId\": \"12a\"}", "transactionId"},
        {"get_transaction_info", "{}", "transactionId is required"},
        {"get_transaction_info", "{\"transactionId\": \"1\", \"extra\": 1}", "extra"},
        {"get_transaction_history", "{\"transactionId\": \"1\", \"sort\": \"UP\"}", "sort"},
        {"get_transaction_history", "{\"transactionId\": \"1\", \"startDate\": 1800000000000, \"endDate\": 1700000000000}",
         "startDate"},
        {"extend_subscription_renewal_date", "{\"originalTransactionId\": \"1\", \"extendByDays\": 91, "
         "\"extendReasonCode\": 1, \"requestIdentifier\": \"x\"}", "extendByDays"},
        {"get_notification_history", "{\"startDate\": 1700000000000, \"endDate\": 1700000001000, "
         "\"notificationType\": \"DID_RENEW\", \"transactionId\": \"1\"}", "MULTIPLE_FILTERS"},
        {"set_app_account_token", "{\"originalTransactionId\": \"1\", \"appAccountToken\": \"not-a-uuid\"}",
         "appAccountToken"},
        {"get_transaction_info", "[1]", "not a JSON object"},
        {"no_such_call", "{}", "get_transaction_info"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        exchange = (receipt_api_exchange_t *)1;
        receipt_status_t status = receipt_api_exchange_new(api, refused[i].call, refused[i].arguments,
                                                           strlen(refused[i].arguments), 3, &exchange, &error);
        assert_true(status == RECEIPT_E_INVALID_ARGUMENT || status == RECEIPT_E_NOT_AN_OBJECT);
        assert_null(exchange);
        if (!strstr(error.detail, refused[i].named)) fail_msg("%s: %s", refused[i].arguments, error.detail);
    }
    receipt_api_client_free(api);
}

/* {"revision": revision, "hasMore": more, "signedTransactions": [tokens...]} */
static char *page(const char *revision, int more, const char *first, const char *second) {
    size_t size = strlen(first) + strlen(second) + 256;
    char *json = malloc(size);
    snprintf(json, size, "{\"revision\": \"%s\", \"hasMore\": %s, \"environment\": \"Sandbox\", "
             "\"signedTransactions\": [\"%s\", \"%s\"]}", revision, more ? "true" : "false", first, second);
    return json;
}

static void test_answers_are_verified_paged_and_retried(void **state) {
    (void)state;
    char *good = read_whole_file("minted.jws", NULL, 1);
    char *tampered = read_whole_file("minted-tampered.jws", NULL, 1);
    receipt_api_client_t *api = client();
    receipt_api_exchange_t *exchange = NULL;
    receipt_error_t error;
    receipt_api_step_t step;
    const char *arguments = "{\"transactionId\": \"2000000000000001\"}";
    assert_int_equal(receipt_api_exchange_new(api, "get_transaction_history", arguments, strlen(arguments), 2,
                                              &exchange, &error), RECEIPT_OK);
    /* 429 with Retry-After, then 500: sent again after Apple's wait, then after the backoff. */
    const char *limited = "{\"errorCode\": 4290000, \"errorMessage\": \"Rate limit exceeded.\"}";
    assert_int_equal(receipt_api_exchange_handle(exchange, 429, " 2 ", limited, strlen(limited), &step, &error), RECEIPT_OK);
    assert_int_equal(step.action, RECEIPT_API_SEND);
    assert_int_equal(step.delay_ms, 2000);
    assert_int_equal(receipt_api_exchange_handle(exchange, 500, NULL, "", 0, &step, &error), RECEIPT_OK);
    assert_int_equal(step.action, RECEIPT_API_SEND);
    assert_int_equal(step.delay_ms, 1000);
    /* Page 1, then page 2 asked with its revision. */
    char *first = page("rev-1", 1, good, good);
    assert_int_equal(receipt_api_exchange_handle(exchange, 200, NULL, first, strlen(first), &step, &error), RECEIPT_OK);
    assert_int_equal(step.action, RECEIPT_API_ANSWERED);
    assert_int_equal(step.has_more, 1);
    size_t length = 0;
    const char *answer = receipt_api_exchange_answer(exchange, &length);
    assert_non_null(answer);
    assert_int_equal(strlen(answer), length);
    assert_non_null(strstr(answer, "\"transactions\":[{"));
    assert_non_null(strstr(answer, "\"signedTransactions\":[\"ey"));
    assert_non_null(strstr(answer, "\"productId\":\"com.example.minted.monthly\""));
    int more = 0;
    assert_int_equal(receipt_api_exchange_next_page(exchange, &more, &error), RECEIPT_OK);
    assert_int_equal(more, 1);
    assert_null(receipt_api_exchange_answer(exchange, NULL));
    assert_non_null(strstr(receipt_api_exchange_url(exchange), "?revision=rev-1"));
    /* Page 2 holds one tampered member: the whole answer is refused, naming it. */
    char *second = page("rev-2", 0, good, tampered);
    assert_int_equal(receipt_api_exchange_handle(exchange, 200, NULL, second, strlen(second), &step, &error),
                     RECEIPT_E_SIGNATURE_INVALID);
    assert_non_null(strstr(error.detail, "signedTransactions[1]"));
    assert_null(receipt_api_exchange_answer(exchange, NULL));
    /* Sent again, answered whole, and it was the last page. */
    char *last = page("rev-2", 0, good, good);
    assert_int_equal(receipt_api_exchange_handle(exchange, 200, NULL, last, strlen(last), &step, &error), RECEIPT_OK);
    assert_int_equal(step.has_more, 0);
    assert_int_equal(receipt_api_exchange_next_page(exchange, &more, &error), RECEIPT_OK);
    assert_int_equal(more, 0);
    receipt_api_exchange_free(exchange);

    /* A server that repeats a cursor cannot keep a caller looping. */
    assert_int_equal(receipt_api_exchange_new(api, "get_transaction_history", arguments, strlen(arguments), 2,
                                              &exchange, &error), RECEIPT_OK);
    for (int round = 0; round < 2; round++) {
        assert_int_equal(receipt_api_exchange_handle(exchange, 200, NULL, first, strlen(first), &step, &error), RECEIPT_OK);
        receipt_status_t status = receipt_api_exchange_next_page(exchange, &more, &error);
        assert_int_equal(status, round == 0 ? RECEIPT_OK : RECEIPT_E_LIMIT_EXCEEDED);
    }
    receipt_api_exchange_free(exchange);

    /* Apple's errors end the call with the code, its name and Retry-After. */
    assert_int_equal(receipt_api_exchange_new(api, "get_transaction_history", arguments, strlen(arguments), 0,
                                              &exchange, &error), RECEIPT_OK);
    const char *missing = "{\"errorCode\": 4040010, \"errorMessage\": \"Transaction id not found.\"}";
    assert_int_equal(receipt_api_exchange_handle(exchange, 404, NULL, missing, strlen(missing), &step, &error), RECEIPT_OK);
    assert_int_equal(step.action, RECEIPT_API_FAILED);
    assert_int_equal(step.http_status, 404);
    assert_int_equal(step.api_error, 4040010);
    assert_int_equal(step.retry_after_ms, -1);
    assert_non_null(strstr(step.detail, "TRANSACTION_ID_NOT_FOUND"));
    assert_string_equal(receipt_api_exchange_error_message(exchange), "Transaction id not found.");
    assert_int_equal(receipt_api_exchange_handle(exchange, 429, "Wed, 21 Oct 2015 07:28:00 GMT", limited, strlen(limited),
                                                 &step, &error), RECEIPT_OK);
    assert_int_equal(step.action, RECEIPT_API_FAILED);  /* no retries allowed */
    assert_int_equal(step.retry_after_ms, 0);           /* a date already past */
    assert_int_equal(receipt_api_exchange_handle(exchange, 401, NULL, "", 0, &step, &error), RECEIPT_OK);
    assert_int_equal(step.action, RECEIPT_API_FAILED);
    assert_non_null(strstr(step.detail, "token was refused"));
    assert_int_equal(receipt_api_exchange_handle(exchange, 200, NULL, "not json", 8, &step, &error), RECEIPT_E_BAD_JSON);
    assert_int_equal(receipt_api_exchange_handle(NULL, 200, NULL, "", 0, &step, &error), RECEIPT_E_NULL_ARGUMENT);
    receipt_api_exchange_free(exchange);
    receipt_api_exchange_free(NULL);
    receipt_api_client_free(api);
    free(first);
    free(second);
    free(last);
    free(good);
    free(tampered);
}

/* Production->sandbox fallback: production's TRANSACTION_ID_NOT_FOUND sends the same call to
 * the sandbox client, whose verifier reads the answer, which says who answered. */
static void test_production_falls_back_to_the_sandbox_when_asked(void **state) {
    (void)state;
    char *good = read_whole_file("minted.jws", NULL, 1);
    receipt_api_client_t *sandbox = client();
    receipt_api_credentials_t *keys = credentials();
    receipt_api_client_t *production = NULL;
    receipt_error_t error;
    assert_int_equal(receipt_api_client_new(keys, RECEIPT_ENVIRONMENT_PRODUCTION, NULL, NULL, &production, &error),
                     RECEIPT_OK);
    receipt_api_exchange_t *exchange = NULL;
    receipt_api_step_t step;
    const char *arguments = "{\"transactionId\": \"2000000000000001\"}";
    const char *missing = "{\"errorCode\": 4040010, \"errorMessage\": \"Transaction id not found.\"}";
    assert_int_equal(receipt_api_exchange_new(production, "get_transaction_history", arguments, strlen(arguments), 2,
                                              &exchange, &error), RECEIPT_OK);
    assert_non_null(strstr(receipt_api_exchange_url(exchange), "https://api.storekit.apple.com/"));
    assert_int_equal(receipt_api_exchange_fall_back_to_sandbox(exchange, sandbox, &error), RECEIPT_OK);
    assert_int_equal(receipt_api_exchange_handle(exchange, 404, NULL, missing, strlen(missing), &step, &error), RECEIPT_OK);
    assert_int_equal(step.action, RECEIPT_API_SEND);
    assert_int_equal(step.delay_ms, 0);
    assert_non_null(strstr(receipt_api_exchange_url(exchange), "http://127.0.0.1:9/inApps/v2/history/2000000000000001"));
    char *first = page("rev-1", 0, good, good);
    assert_int_equal(receipt_api_exchange_handle(exchange, 200, NULL, first, strlen(first), &step, &error), RECEIPT_OK);
    assert_int_equal(step.action, RECEIPT_API_ANSWERED);
    assert_non_null(strstr(receipt_api_exchange_answer(exchange, NULL), "\"answered_by\":\"sandbox\""));
    /* Once an answer came, the fallback cannot be set any more. */
    assert_int_equal(receipt_api_exchange_fall_back_to_sandbox(exchange, sandbox, &error), RECEIPT_E_INVALID_ARGUMENT);
    receipt_api_exchange_free(exchange);

    /* Without the fallback, production's answer stands. */
    assert_int_equal(receipt_api_exchange_new(production, "get_transaction_info", arguments, strlen(arguments), 2,
                                              &exchange, &error), RECEIPT_OK);
    assert_int_equal(receipt_api_exchange_handle(exchange, 404, NULL, missing, strlen(missing), &step, &error), RECEIPT_OK);
    assert_int_equal(step.action, RECEIPT_API_FAILED);
    assert_int_equal(step.api_error, 4040010);
    receipt_api_exchange_free(exchange);

    /* Only from production, only to the sandbox, only for the same app. */
    assert_int_equal(receipt_api_exchange_new(sandbox, "get_transaction_info", arguments, strlen(arguments), 2,
                                              &exchange, &error), RECEIPT_OK);
    assert_int_equal(receipt_api_exchange_fall_back_to_sandbox(exchange, sandbox, &error), RECEIPT_E_INVALID_ARGUMENT);
    assert_non_null(strstr(error.detail, "from a production client to a sandbox one"));
    receipt_api_exchange_free(exchange);
    assert_int_equal(receipt_api_exchange_new(production, "get_transaction_info", arguments, strlen(arguments), 2,
                                              &exchange, &error), RECEIPT_OK);
    assert_int_equal(receipt_api_exchange_fall_back_to_sandbox(exchange, production, &error), RECEIPT_E_INVALID_ARGUMENT);
    size_t length = 0;
    char *pem = read_whole_file("api-key.pem", &length, 1);
    receipt_api_credentials_t *other_keys = NULL;
    assert_int_equal(receipt_api_credentials_new(pem, length, KEY_ID, ISSUER_ID, "com.example.other", &other_keys, &error),
                     RECEIPT_OK);
    receipt_api_client_t *other = NULL;
    assert_int_equal(receipt_api_client_new(other_keys, RECEIPT_ENVIRONMENT_SANDBOX, NULL, NULL, &other, &error), RECEIPT_OK);
    assert_int_equal(receipt_api_exchange_fall_back_to_sandbox(exchange, other, &error), RECEIPT_E_INVALID_ARGUMENT);
    assert_non_null(strstr(error.detail, "com.example.other"));
    assert_int_equal(receipt_api_exchange_fall_back_to_sandbox(exchange, NULL, &error), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_api_exchange_fall_back_to_sandbox(NULL, sandbox, &error), RECEIPT_E_NULL_ARGUMENT);
    receipt_api_exchange_free(exchange);
    receipt_api_client_free(other);
    receipt_api_credentials_free(other_keys);
    receipt_api_credentials_free(keys);
    receipt_api_client_free(production);
    receipt_api_client_free(sandbox);
    free(pem);
    free(first);
    free(good);
}

static void test_signed_requests(void **state) {
    (void)state;
    receipt_api_credentials_t *keys = credentials();
    char *out = NULL;
    size_t length = 0;
    receipt_error_t error;
    assert_int_equal(receipt_api_promotional_offer_signature(keys, "com.example.monthly", "offer-1", "",
                                                             "5A2A3E5C-1B0E-4D6F-9B7A-0C1D2E3F4A5B", 1700000000000,
                                                             &out, &length, &error), RECEIPT_OK);
    assert_true(length >= 92 && length <= 96); /* base64 of a 70-72 byte DER signature */
    assert_int_equal(out[0], 'M');             /* 0x30, a DER SEQUENCE */
    receipt_string_free(out);
    assert_int_equal(receipt_api_promotional_offer_signature(keys, "p", "o", "", "not-a-uuid", 1, &out, &length, &error),
                     RECEIPT_E_INVALID_ARGUMENT);
    assert_non_null(strstr(error.detail, "nonce"));
    assert_int_equal(receipt_api_promotional_offer_v2(keys, "com.example.monthly", "offer-1", NULL, &out, &length, &error),
                     RECEIPT_OK);
    assert_int_equal(strncmp(out, "eyJ", 3), 0);
    receipt_string_free(out);
    assert_int_equal(receipt_api_introductory_offer_eligibility(keys, "com.example.monthly", 1, "2000000000000001", &out,
                                                                &length, &error), RECEIPT_OK);
    receipt_string_free(out);
    assert_int_equal(receipt_api_advanced_commerce_request(keys, "[1]", 3, &out, &length, &error), RECEIPT_E_NOT_AN_OBJECT);
    /* Only one of Apple's in-app requests is signed; anything else is refused by name. */
    assert_int_equal(receipt_api_advanced_commerce_request(keys, "{\"a\": 1}", 8, &out, &length, &error),
                     RECEIPT_E_INVALID_ARGUMENT);
    assert_non_null(strstr(error.detail, "operation must be one of CREATE_ONE_TIME_CHARGE"));
    const char *reactivate = "{\"operation\": \"REACTIVATE_SUBSCRIPTION\", \"version\": \"1\", \"transactionId\": \"2000000000000001\","
                             " \"requestInfo\": {\"requestReferenceId\": \"550e8400-e29b-41d4-a716-446655440004\"}}";
    assert_int_equal(receipt_api_advanced_commerce_request(keys, reactivate, strlen(reactivate), &out, &length, &error),
                     RECEIPT_OK);
    assert_int_equal(strncmp(out, "eyJ", 3), 0);
    receipt_string_free(out);
    receipt_api_credentials_free(keys);
}

int run_server_api_tests(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_credentials_and_clients_refuse_what_apple_would),
        cmocka_unit_test(test_credentials_in_the_header_safe_form),
        cmocka_unit_test(test_apple_refusal_of_a_verdict),
        cmocka_unit_test(test_calls_and_error_names),
        cmocka_unit_test(test_requests_are_built_whole_and_checked),
        cmocka_unit_test(test_answers_are_verified_paged_and_retried),
        cmocka_unit_test(test_production_falls_back_to_the_sandbox_when_asked),
        cmocka_unit_test(test_signed_requests),
    };
    return cmocka_run_group_tests_name("receipt C ABI: App Store Server API", tests, NULL, NULL);
}
