/* cmocka tests of the StoreKit 2 JWS functions of receipt.h: decoding without
 * verifying, typed reads by path, verification with the test CA's root and
 * with the pinned Apple Root CA - G3 (real JWS from ../shared, skipped by name
 * when absent), every failure path, every cut of a token, and one verifier
 * shared by eight threads. Run from test_abi.c's main. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "receipt.h"

typedef struct {
    char *text;
    size_t length;
} token_t;

static token_t read_token(const char *path) {
    token_t token = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return token;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    token.text = calloc(1, (size_t)size + 1);
    token.length = fread(token.text, 1, (size_t)size, f);
    fclose(f);
    return token;
}

/* A token minted by Tests/c's Makefile (tools/mint_jws.py). */
static token_t minted(const char *name) {
    token_t token = read_token(name);
    assert_non_null(token.text);
    return token;
}

/* A real JWS from ../shared/fixtures/jws, or a visible skip. */
static token_t shared_jws(const char *relative) {
    const char *root = getenv("RECEIPT_SHARED_FIXTURES");
    char path[1024];
    snprintf(path, sizeof path, "%s/../jws/%s", root ? root : "../../../shared/fixtures/apple", relative);
    token_t token = read_token(path);
    if (!token.text) {
        print_message("SKIPPED: %s is absent (../shared not beside this checkout)\n", path);
        skip();
    }
    return token;
}

/* A verifier trusting only the JWS test CA's root. */
static receipt_verifier_t *test_root_verifier(void) {
    token_t root = minted("jws-ca/root.pem");
    receipt_verifier_builder_t *builder = NULL;
    assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_trust(builder, 0), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_add_anchor(builder, root.text, root.length, NULL), RECEIPT_OK);
    receipt_verifier_t *verifier = NULL;
    assert_int_equal(receipt_verifier_build(builder, &verifier), RECEIPT_OK);
    receipt_verifier_builder_free(builder);
    free(root.text);
    return verifier;
}

static receipt_verifier_t *default_verifier(void) {
    receipt_verifier_builder_t *builder = NULL;
    assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
    receipt_verifier_t *verifier = NULL;
    assert_int_equal(receipt_verifier_build(builder, &verifier), RECEIPT_OK);
    receipt_verifier_builder_free(builder);
    return verifier;
}

static void test_jws_decode_and_typed_reads(void **state) {
    (void)state;
    token_t token = minted("minted.jws");
    receipt_jws_t *jws = NULL;
    receipt_error_t error;
    assert_int_equal(receipt_jws_decode_unverified(token.text, token.length, &jws, &error), RECEIPT_OK);
    assert_int_equal(error.status, RECEIPT_OK);
    assert_int_equal(receipt_jws_type(jws), RECEIPT_JWS_TRANSACTION);

    const char *text = NULL;
    size_t length = 0;
    assert_int_equal(receipt_jws_get_string(jws, "bundleId", &text, &length), RECEIPT_OK);
    assert_string_equal(text, "com.example.minted");
    assert_int_equal(length, strlen("com.example.minted"));
    const char *again = NULL;
    assert_int_equal(receipt_jws_get_string(jws, "bundleId", &again, NULL), RECEIPT_OK);
    assert_ptr_equal(again, text); /* one copy per path, kept by the handle */

    int64_t number = 0;
    assert_int_equal(receipt_jws_get_int(jws, "quantity", &number), RECEIPT_OK);
    assert_int_equal(number, 1);
    assert_int_equal(receipt_jws_get_int(jws, "price", &number), RECEIPT_OK);
    assert_int_equal(number, 4990);
    int64_t signed_ms = 0, purchase_ms = 0;
    assert_int_equal(receipt_jws_signed_date(jws, &signed_ms), RECEIPT_OK);
    assert_int_equal(receipt_jws_get_date(jws, "purchaseDate", &purchase_ms), RECEIPT_OK);
    assert_int_equal(purchase_ms, signed_ms - 60000);
    assert_int_equal(receipt_jws_get_date(jws, "signedDate", &number), RECEIPT_OK);
    assert_int_equal(number, signed_ms);

    int flag = -1;
    assert_int_equal(receipt_jws_get_bool(jws, "isUpgraded", &flag), RECEIPT_E_ABSENT);
    assert_int_equal(receipt_jws_get_int(jws, "bundleId", &number), RECEIPT_E_WRONG_FIELD_KIND);
    assert_int_equal(receipt_jws_get_string(jws, "quantity", &text, NULL), RECEIPT_E_WRONG_FIELD_KIND);
    assert_int_equal(receipt_jws_get_bool(jws, "quantity", &flag), RECEIPT_E_WRONG_FIELD_KIND);
    assert_int_equal(receipt_jws_get_date(jws, "bundleId", &number), RECEIPT_E_WRONG_FIELD_KIND);
    assert_int_equal(receipt_jws_get_string(jws, "data.bundleId", &text, NULL), RECEIPT_E_ABSENT);

    const char *payload = NULL, *header = NULL;
    size_t payload_length = 0;
    assert_int_equal(receipt_jws_payload(jws, &payload, &payload_length), RECEIPT_OK);
    assert_int_equal(strlen(payload), payload_length);
    assert_non_null(strstr(payload, "\"bundleId\":\"com.example.minted\""));
    assert_int_equal(receipt_jws_header(jws, &header, NULL), RECEIPT_OK);
    assert_non_null(strstr(header, "\"alg\":\"ES256\""));

    char *json = NULL;
    size_t json_length = 0;
    assert_int_equal(receipt_jws_to_json(jws, RECEIPT_JSON_PRETTY, &json, &json_length), RECEIPT_OK);
    assert_non_null(strstr(json, "\"format\": \"jws\""));
    assert_non_null(strstr(json, "\"type\": \"transaction\""));
    assert_int_equal(strlen(json), json_length);
    receipt_string_free(json);
    assert_int_equal(receipt_jws_to_json(jws, 0x80, &json, NULL), RECEIPT_E_INVALID_ARGUMENT);
    receipt_jws_free(jws);
    free(token.text);
}

static void test_jws_null_arguments_and_bad_tokens(void **state) {
    (void)state;
    receipt_jws_t *jws = (receipt_jws_t *)0x1;
    receipt_error_t error;
    assert_int_equal(receipt_jws_decode_unverified(NULL, 5, &jws, &error), RECEIPT_E_NULL_ARGUMENT);
    assert_null(jws);
    assert_int_equal(receipt_jws_decode_unverified("a.b.c", 5, NULL, &error), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_jws_decode_unverified("", 0, &jws, &error), RECEIPT_E_EMPTY_INPUT);
    assert_int_equal(receipt_jws_decode_unverified("abc", 3, &jws, &error), RECEIPT_E_NOT_A_JWS);
    assert_non_null(strstr(error.detail, "'.'"));
    assert_int_equal(receipt_jws_decode_unverified("e30.e30.!!", 10, &jws, &error), RECEIPT_E_BAD_BASE64URL);
    assert_int_equal(error.offset, 8);
    assert_int_equal(receipt_jws_decode_unverified("e30.bnVsbA.", 11, &jws, &error), RECEIPT_E_NOT_AN_OBJECT);
    /* A wrapper handed over instead of the JWS is named, with what to pass. */
    const char *body = "{\"signedPayload\": \"e30.e30.\"}";
    assert_int_equal(receipt_jws_decode_unverified(body, strlen(body), &jws, &error), RECEIPT_E_NOT_A_JWS);
    assert_non_null(strstr(error.detail, "pass its signedPayload member"));
    assert_int_equal(receipt_jws_decode_unverified("Bearer e30.e30.", 15, &jws, &error), RECEIPT_E_NOT_A_JWS);
    assert_non_null(strstr(error.detail, "remove \"Bearer \""));
    assert_null(jws);

    int64_t value;
    const char *text;
    int flag;
    assert_int_equal(receipt_jws_type(NULL), RECEIPT_JWS_UNKNOWN);
    assert_int_equal(receipt_jws_get_int(NULL, "a", &value), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_jws_get_string(NULL, "a", &text, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_jws_get_date(NULL, "a", &value), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_jws_get_bool(NULL, "a", &flag), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_jws_signed_date(NULL, &value), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_jws_payload(NULL, &text, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_jws_header(NULL, &text, NULL), RECEIPT_E_NULL_ARGUMENT);
    receipt_jws_free(NULL);

    /* {} and {} signed by nobody: decodes, has no signedDate, and no path reads NULL. */
    assert_int_equal(receipt_jws_decode_unverified("e30.e30.", 8, &jws, NULL), RECEIPT_OK);
    assert_int_equal(receipt_jws_type(jws), RECEIPT_JWS_UNKNOWN);
    assert_int_equal(receipt_jws_signed_date(jws, &value), RECEIPT_E_ABSENT);
    assert_int_equal(receipt_jws_get_int(jws, NULL, &value), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_jws_get_int(jws, "a", NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_jws_get_string(jws, "\xff", &text, NULL), RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_jws_payload(jws, NULL, NULL), RECEIPT_E_NULL_ARGUMENT);
    receipt_jws_free(jws);
}

static void test_verify_jws_minted(void **state) {
    (void)state;
    token_t token = minted("minted.jws");
    receipt_verifier_t *verifier = test_root_verifier();
    receipt_jws_t *jws = NULL;
    receipt_verification_t *result = NULL;
    receipt_error_t error;
    assert_int_equal(receipt_verify_jws(verifier, token.text, token.length, &jws, &result, &error), RECEIPT_OK);
    assert_int_equal(error.status, RECEIPT_OK);
    assert_non_null(jws);
    assert_int_equal(receipt_verification_step_count(result), 11); /* revocation last */
    receipt_step_t step;
    assert_int_equal(receipt_verification_step_at(result, 0, &step), RECEIPT_OK);
    assert_string_equal(step.name, "header");
    assert_int_equal(receipt_verification_step_at(result, 1, &step), RECEIPT_OK);
    assert_string_equal(step.name, "signature");
    assert_int_equal(step.outcome, RECEIPT_STEP_PASSED);
    receipt_verification_free(result);
    receipt_jws_free(jws);

    /* Verdict only: both outputs may be NULL. */
    assert_int_equal(receipt_verify_jws(verifier, token.text, token.length, NULL, NULL, NULL), RECEIPT_OK);

    token_t tampered = minted("minted-tampered.jws");
    assert_int_equal(receipt_verify_jws(verifier, tampered.text, tampered.length, &jws, &result, &error),
                     RECEIPT_E_SIGNATURE_INVALID);
    assert_int_equal(error.status, RECEIPT_E_SIGNATURE_INVALID);
    assert_non_null(jws);
    assert_non_null(result);
    receipt_verification_free(result);
    receipt_jws_free(jws);

    /* The pinned root does not trust the test CA. */
    receipt_verifier_t *apple = default_verifier();
    assert_int_equal(receipt_verify_jws(apple, token.text, token.length, NULL, &result, &error),
                     RECEIPT_E_CHAIN_UNTRUSTED);
    assert_int_equal(receipt_verification_status(result), RECEIPT_E_CHAIN_UNTRUSTED);
    receipt_verification_free(result);

    /* Unreadable: a decoding status, no outputs. */
    jws = (receipt_jws_t *)0x1;
    result = (receipt_verification_t *)0x1;
    assert_int_equal(receipt_verify_jws(verifier, "abc", 3, &jws, &result, &error), RECEIPT_E_NOT_A_JWS);
    assert_null(jws);
    assert_null(result);
    assert_int_equal(receipt_verify_jws(NULL, token.text, token.length, NULL, NULL, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_verify_jws(verifier, NULL, 1, NULL, NULL, NULL), RECEIPT_E_NULL_ARGUMENT);

    receipt_verifier_free(apple);
    receipt_verifier_free(verifier);
    free(token.text);
    free(tampered.text);
}

/* The kind from the call, as Apple's verify_and_decode_* take it. */
static void test_verify_jws_as_a_kind(void **state) {
    (void)state;
    token_t token = minted("minted.jws"); /* a transaction */
    receipt_verifier_t *verifier = test_root_verifier();
    receipt_jws_t *jws = NULL;
    receipt_error_t error;
    assert_int_equal(receipt_verify_jws_as(verifier, token.text, token.length, RECEIPT_JWS_TRANSACTION, &jws, NULL,
                                           &error), RECEIPT_OK);
    assert_int_equal(receipt_jws_type(jws), RECEIPT_JWS_TRANSACTION);
    receipt_jws_free(jws);
    assert_int_equal(receipt_verify_jws_as(verifier, token.text, token.length, RECEIPT_JWS_RENEWAL_INFO, &jws, NULL,
                                           &error), RECEIPT_E_WRONG_PAYLOAD_KIND);
    assert_null(jws);
    assert_non_null(strstr(error.detail, "renewal_info"));
    assert_int_equal(receipt_verify_jws_as(verifier, token.text, token.length, (receipt_jws_type_t)99, NULL, NULL,
                                           &error), RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_verify_jws_as(verifier, token.text, token.length, RECEIPT_JWS_UNKNOWN, NULL, NULL, NULL),
                     RECEIPT_OK);
    receipt_verifier_free(verifier);
    free(token.text);
}

static void test_builder_app_apple_id_and_environments(void **state) {
    (void)state;
    receipt_verifier_builder_t *builder = NULL;
    assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_app_apple_id(builder, 1234567890), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_clear_app_apple_id(builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_app_apple_id(NULL, 1), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_verifier_builder_clear_app_apple_id(NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_verifier_builder_set_environment(builder, RECEIPT_ENVIRONMENT_XCODE), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_environment(builder, RECEIPT_ENVIRONMENT_LOCAL_TESTING), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_environment(builder, (receipt_environment_t)9),
                     RECEIPT_E_INVALID_ARGUMENT);
    receipt_verifier_builder_free(builder);
}

static void test_verify_real_jws(void **state) {
    (void)state;
    token_t token = shared_jws("apple/spb__01_notification_DID_RENEW.jws");
    receipt_verifier_builder_t *builder = NULL;
    assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_bundle_id(builder, "com.loki-project.loki-messenger"), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_environment(builder, RECEIPT_ENVIRONMENT_SANDBOX), RECEIPT_OK);
    receipt_verifier_t *verifier = NULL;
    assert_int_equal(receipt_verifier_build(builder, &verifier), RECEIPT_OK);
    receipt_jws_t *jws = NULL;
    receipt_verification_t *result = NULL;
    assert_int_equal(receipt_verify_jws(verifier, token.text, token.length, &jws, &result, NULL), RECEIPT_OK);
    assert_int_equal(receipt_jws_type(jws), RECEIPT_JWS_NOTIFICATION);
    int64_t apple_id = 0;
    assert_int_equal(receipt_jws_get_int(jws, "data.appAppleId", &apple_id), RECEIPT_OK);
    assert_int_equal(apple_id, 1470168868);
    const char *type = NULL;
    assert_int_equal(receipt_jws_get_string(jws, "notificationType", &type, NULL), RECEIPT_OK);
    assert_string_equal(type, "DID_RENEW");
    receipt_step_t step;
    assert_int_equal(receipt_verification_step_at(result, 9, &step), RECEIPT_OK);
    assert_string_equal(step.name, "nested");
    assert_int_equal(step.outcome, RECEIPT_STEP_PASSED);
    receipt_verification_free(result);
    receipt_jws_free(jws);

    assert_int_equal(receipt_verifier_builder_set_environment(builder, RECEIPT_ENVIRONMENT_PRODUCTION), RECEIPT_OK);
    receipt_verifier_t *production = NULL;
    assert_int_equal(receipt_verifier_build(builder, &production), RECEIPT_OK);
    assert_int_equal(receipt_verify_jws(production, token.text, token.length, NULL, NULL, NULL),
                     RECEIPT_E_ENVIRONMENT_MISMATCH);
    receipt_verifier_free(production);
    receipt_verifier_builder_free(builder);

    token_t null_payload = shared_jws("apple/hound__02_null-payload.jws");
    receipt_error_t error;
    assert_int_equal(receipt_verify_jws(verifier, null_payload.text, null_payload.length, NULL, NULL, &error),
                     RECEIPT_E_NOT_AN_OBJECT);
    receipt_verifier_free(verifier);
    free(token.text);
    free(null_payload.text);
}

static void test_entitlements_signed_json(void **state) {
    (void)state;
    token_t token = minted("minted.jws"), tampered = minted("minted-tampered.jws");
    receipt_verifier_t *verifier = test_root_verifier();
    const void *tokens[2] = {token.text, token.text};
    size_t lengths[2] = {token.length, token.length};
    int64_t at = 0;
    receipt_jws_t *jws = NULL;
    assert_int_equal(receipt_jws_decode_unverified(token.text, token.length, &jws, NULL), RECEIPT_OK);
    assert_int_equal(receipt_jws_signed_date(jws, &at), RECEIPT_OK);
    receipt_jws_free(jws);
    char *json = NULL;
    size_t length = 0;
    receipt_error_t error;
    assert_int_equal(receipt_entitlements_signed_json(NULL, tokens, lengths, 2, verifier, at, NULL, 0, &json, &length,
                                                      &error), RECEIPT_OK);
    assert_non_null(strstr(json, "\"source\":\"signed_transaction\""));
    assert_non_null(strstr(json, "\"active_product_ids\":[\"com.example.minted.monthly\"]"));
    assert_null(strstr(strstr(json, "\"transaction_id\"") + 1, "\"transaction_id\"")); /* the repeat counts once */
    receipt_string_free(json);

    tokens[1] = tampered.text;
    lengths[1] = tampered.length;
    assert_int_equal(receipt_entitlements_signed_json(NULL, tokens, lengths, 2, verifier, at, NULL, 0, &json, NULL,
                                                      &error), RECEIPT_E_SIGNATURE_INVALID);
    assert_non_null(strstr(error.detail, "transaction 1"));
    assert_int_equal(receipt_entitlements_signed_json(NULL, tokens, lengths, 2, NULL, at, NULL,
                                                      RECEIPT_ENTITLEMENTS_UNVERIFIED, &json, NULL, NULL), RECEIPT_OK);
    receipt_string_free(json);
    assert_int_equal(receipt_entitlements_signed_json(NULL, tokens, lengths, 2, NULL, at, NULL, 0, &json, NULL, NULL),
                     RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_entitlements_signed_json(NULL, NULL, NULL, 1, verifier, at, NULL, 0, &json, NULL, NULL),
                     RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_entitlements_signed_json(NULL, NULL, NULL, 0, verifier, at, NULL, 0, NULL, NULL, NULL),
                     RECEIPT_E_NULL_ARGUMENT);
    const void *garbage[1] = {"abc"};
    size_t garbage_length[1] = {3};
    assert_int_equal(receipt_entitlements_signed_json(NULL, garbage, garbage_length, 1, verifier, at, NULL, 0, &json,
                                                      NULL, &error), RECEIPT_E_NOT_A_JWS);
    assert_int_equal(receipt_entitlements_signed_json(NULL, NULL, NULL, 0, verifier, at, NULL, 0, &json, NULL, NULL),
                     RECEIPT_OK);
    assert_non_null(strstr(json, "\"purchases\":[]"));
    receipt_string_free(json);
    receipt_verifier_free(verifier);
    free(token.text);
    free(tampered.text);
}

/* Every prefix of a token: a status, never a crash. */
static void test_every_cut_of_a_jws(void **state) {
    (void)state;
    token_t token = minted("minted.jws");
    receipt_verifier_t *verifier = test_root_verifier();
    size_t length = token.length;
    while (length > 0 && (token.text[length - 1] == '\n')) length--;
    for (size_t cut = 0; cut < length; cut++) {
        char *copy = malloc(cut + 1); /* exactly the prefix, so ASan sees any overread */
        memcpy(copy, token.text, cut);
        receipt_jws_t *jws = NULL;
        receipt_status_t status = receipt_jws_decode_unverified(copy, cut, &jws, NULL);
        if (status == RECEIPT_OK) receipt_jws_free(jws);
        receipt_status_t verdict = receipt_verify_jws(verifier, copy, cut, NULL, NULL, NULL);
        assert_true(verdict != RECEIPT_OK);
        free(copy);
    }
    receipt_verifier_free(verifier);
    free(token.text);
}

enum { jws_threads = 8 };

typedef struct {
    receipt_verifier_t *verifier;
    const token_t *good;
    const token_t *tampered;
    long iterations;
    long mismatches;
} jws_work_t;

static void *jws_worker(void *argument) {
    jws_work_t *work = argument;
    for (long i = 0; i < work->iterations; i++) {
        const token_t *token = i % 2 ? work->tampered : work->good;
        receipt_status_t expected = i % 2 ? RECEIPT_E_SIGNATURE_INVALID : RECEIPT_OK;
        receipt_jws_t *jws = NULL;
        if (receipt_verify_jws(work->verifier, token->text, token->length, &jws, NULL, NULL) != expected) {
            work->mismatches++;
        }
        const char *bundle = NULL;
        if (receipt_jws_get_string(jws, "bundleId", &bundle, NULL) != RECEIPT_OK) work->mismatches++;
        receipt_jws_free(jws);
    }
    return NULL;
}

static void test_shared_verifier_jws_across_threads(void **state) {
    (void)state;
    token_t good = minted("minted.jws"), tampered = minted("minted-tampered.jws");
    receipt_verifier_t *verifier = test_root_verifier();
    /* The serial run first, as the receipts' test does: it fills the verifier's cache (and
     * builds the leaf's ES256 table) before the threads start. ThreadSanitizer cannot see
     * inside the uninstrumented Swift runtime's Mutex that guards the cache, and would
     * report its first fill as a race. */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(receipt_verify_jws(verifier, good.text, good.length, NULL, NULL, NULL), RECEIPT_OK);
        assert_int_equal(receipt_verify_jws(verifier, tampered.text, tampered.length, NULL, NULL, NULL),
                         RECEIPT_E_SIGNATURE_INVALID);
    }
    const char *scale = getenv("RECEIPT_STRESS_ITERATIONS");
    long iterations = scale ? atol(scale) : 2000;
    pthread_t threads[jws_threads];
    jws_work_t work[jws_threads];
    for (int t = 0; t < jws_threads; t++) {
        work[t] = (jws_work_t){verifier, &good, &tampered, iterations, 0};
        assert_int_equal(pthread_create(&threads[t], NULL, jws_worker, &work[t]), 0);
    }
    long mismatches = 0;
    for (int t = 0; t < jws_threads; t++) {
        pthread_join(threads[t], NULL);
        mismatches += work[t].mismatches;
    }
    print_message("%d threads x %ld JWS verifications: %ld unexpected\n", jws_threads, iterations, mismatches);
    assert_int_equal(mismatches, 0);
    receipt_verifier_free(verifier);
    free(good.text);
    free(tampered.text);
}

int run_jws_tests(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jws_decode_and_typed_reads),
        cmocka_unit_test(test_jws_null_arguments_and_bad_tokens),
        cmocka_unit_test(test_verify_jws_minted),
        cmocka_unit_test(test_verify_jws_as_a_kind),
        cmocka_unit_test(test_builder_app_apple_id_and_environments),
        cmocka_unit_test(test_verify_real_jws),
        cmocka_unit_test(test_entitlements_signed_json),
        cmocka_unit_test(test_every_cut_of_a_jws),
        cmocka_unit_test(test_shared_verifier_jws_across_threads),
    };
    return cmocka_run_group_tests_name("receipt C ABI: StoreKit 2 JWS", tests, NULL, NULL);
}
