/* cmocka tests of the revocation (OCSP) loop of receipt.h, without I/O: the
 * queries a minted App Store-shaped chain needs, canned answers (good, revoked,
 * garbage, HTTP 500) handed back, and the step's verdict in each mode. Run from
 * test_abi.c's main. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "receipt.h"
#include "test_files.h"

static receipt_verifier_t *ocsp_verifier(receipt_revocation_mode_t mode) {
    size_t length = 0;
    char *root = read_whole_file("ocsp-ca/root.pem", &length, 0);
    receipt_verifier_builder_t *builder = NULL;
    assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_trust(builder, 0), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_add_anchor(builder, root, length, NULL), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_revocation(builder, mode), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_revocation(builder, (receipt_revocation_mode_t)7),
                     RECEIPT_E_INVALID_ARGUMENT);
    receipt_verifier_t *verifier = NULL;
    assert_int_equal(receipt_verifier_build(builder, &verifier), RECEIPT_OK);
    receipt_verifier_builder_free(builder);
    free(root);
    return verifier;
}

static receipt_status_t verdict(receipt_verifier_t *verifier, const char *token, size_t length, char *detail) {
    receipt_verification_t *result = NULL;
    receipt_error_t error;
    receipt_status_t status = receipt_verify_jws(verifier, token, length, NULL, &result, &error);
    receipt_step_t step;
    for (size_t i = 0; i < receipt_verification_step_count(result); i++) {
        receipt_verification_step_at(result, i, &step);
        if (strcmp(step.name, "revocation") == 0) snprintf(detail, 512, "%s", step.detail);
    }
    receipt_verification_free(result);
    return status;
}

/* Gives `answer` (a file, or NULL for garbage) to the query about `url_part`. */
static receipt_status_t give(receipt_verifier_t *verifier, receipt_revocation_queries_t *queries, const char *url_part,
                             const char *answer, int http_status, receipt_error_t *error) {
    for (size_t i = 0; i < receipt_revocation_query_count(queries); i++) {
        if (!strstr(receipt_revocation_query_url(queries, i), url_part)) continue;
        size_t length = 9;
        char *bytes = answer ? read_whole_file(answer, &length, 0) : calloc(1, 16);
        if (!answer) memcpy(bytes, "not ocsp!", 9);
        receipt_status_t status = receipt_revocation_answer(verifier, queries, i, http_status, bytes, length, error);
        free(bytes);
        return status;
    }
    fail_msg("no query for %s", url_part);
    return RECEIPT_E_ABSENT;
}

static void test_the_revocation_loop(void **state) {
    (void)state;
    size_t token_length = 0;
    char *token = read_whole_file("ocsp.jws", &token_length, 1);
    char detail[512] = "";
    receipt_error_t error;

    /* Off: no step, whatever the cache holds. Hard with nothing asked yet: no fresh answer. */
    receipt_verifier_t *off = ocsp_verifier(RECEIPT_REVOCATION_OFF);
    assert_int_equal(verdict(off, token, token_length, detail), RECEIPT_OK);
    receipt_verifier_free(off);
    receipt_verifier_t *soft = ocsp_verifier(RECEIPT_REVOCATION_SOFT);
    assert_int_equal(verdict(soft, token, token_length, detail), RECEIPT_OK);
    assert_non_null(strstr(detail, "warning"));
    receipt_verifier_free(soft);

    receipt_verifier_t *hard = ocsp_verifier(RECEIPT_REVOCATION_HARD);
    assert_int_equal(verdict(hard, token, token_length, detail), RECEIPT_E_REVOCATION_UNKNOWN);
    receipt_revocation_queries_t *queries = NULL;
    assert_int_equal(receipt_revocation_queries(hard, token, token_length, &queries, &error), RECEIPT_OK);
    assert_int_equal(receipt_revocation_query_count(queries), 2);
    size_t body_length = 0;
    const uint8_t *body = receipt_revocation_query_body(queries, 0, &body_length);
    assert_true(body_length > 40 && body[0] == 0x30); /* a DER OCSPRequest */
    assert_null(receipt_revocation_query_url(queries, 2));
    assert_int_equal(receipt_revocation_answer(hard, queries, 2, 200, "", 0, &error), RECEIPT_E_INDEX_OUT_OF_RANGE);
    /* Garbage, HTTP 500, and an answer about the wrong certificate never count. */
    assert_int_equal(give(hard, queries, "/leaf", NULL, 200, &error), RECEIPT_E_BAD_OCSP_RESPONSE);
    assert_int_equal(give(hard, queries, "/leaf", "ocsp-ca/leaf-good.der", 500, &error), RECEIPT_E_BAD_OCSP_RESPONSE);
    assert_non_null(strstr(error.detail, "HTTP 500"));
    assert_int_equal(give(hard, queries, "/leaf", "ocsp-ca/intermediate-good.der", 200, &error),
                     RECEIPT_E_BAD_OCSP_RESPONSE);
    assert_int_equal(verdict(hard, token, token_length, detail), RECEIPT_E_REVOCATION_UNKNOWN);
    /* Good answers for both: valid, and nothing more to ask. */
    assert_int_equal(give(hard, queries, "/leaf", "ocsp-ca/leaf-good.der", 200, &error), RECEIPT_OK);
    assert_int_equal(give(hard, queries, "/intermediate", "ocsp-ca/intermediate-good.der", 200, &error), RECEIPT_OK);
    receipt_revocation_queries_free(queries);
    assert_int_equal(verdict(hard, token, token_length, detail), RECEIPT_OK);
    assert_string_equal(detail, "leaf and intermediate good (OCSP)");
    assert_int_equal(receipt_revocation_queries(hard, token, token_length, &queries, &error), RECEIPT_OK);
    assert_int_equal(receipt_revocation_query_count(queries), 0);
    receipt_revocation_queries_free(queries);
    receipt_verifier_free(hard);

    /* A revoked leaf fails, soft or hard. */
    receipt_verifier_t *revoked = ocsp_verifier(RECEIPT_REVOCATION_SOFT);
    assert_int_equal(receipt_revocation_queries(revoked, token, token_length, &queries, &error), RECEIPT_OK);
    assert_int_equal(give(revoked, queries, "/leaf", "ocsp-ca/leaf-revoked.der", 200, &error), RECEIPT_OK);
    receipt_revocation_queries_free(queries);
    assert_int_equal(verdict(revoked, token, token_length, detail), RECEIPT_E_REVOKED);
    assert_non_null(strstr(detail, "revoked since"));
    receipt_verifier_free(revoked);

    assert_int_equal(receipt_revocation_queries(NULL, token, token_length, &queries, &error), RECEIPT_E_NULL_ARGUMENT);
    receipt_revocation_queries_free(NULL);
    free(token);
}

int run_revocation_tests(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_revocation_loop),
    };
    return cmocka_run_group_tests_name("receipt C ABI: revocation (OCSP)", tests, NULL, NULL);
}
