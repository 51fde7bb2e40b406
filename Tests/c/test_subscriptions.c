/* cmocka tests of receipt_subscription_state_json(): one subscription's state
 * from notifications minted by Tests/c's Makefile (mint_jws.py notifications:
 * bought, renewed twice, the first renewal refunded, the last renewal failed
 * into a grace period), judged at instants along the way, in any order,
 * tampered, and without a verifier. Run from test_abi.c's main. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "receipt.h"
#include "test_files.h"

#define STORY 7
static const char *const story_files[STORY] = {
    "news/01-SUBSCRIBED-INITIAL_BUY.jws", "news/02-DID_RENEW.jws",
    "news/03-DID_CHANGE_RENEWAL_STATUS-AUTO_RENEW_DISABLED.jws", "news/04-DID_CHANGE_RENEWAL_STATUS-AUTO_RENEW_ENABLED.jws",
    "news/05-REFUND.jws", "news/06-DID_RENEW.jws", "news/07-DID_FAIL_TO_RENEW-GRACE_PERIOD.jws",
};
static const char *original = "2000000000000001";

static int64_t signed_date(const char *token, size_t length) {
    receipt_jws_t *jws = NULL;
    int64_t at = 0;
    assert_int_equal(receipt_jws_decode_unverified(token, length, &jws, NULL), RECEIPT_OK);
    assert_int_equal(receipt_jws_signed_date(jws, &at), RECEIPT_OK);
    receipt_jws_free(jws);
    return at;
}

static char *state_json(const void *const *tokens, const size_t *lengths, size_t count, receipt_verifier_t *verifier,
                        int64_t at, unsigned flags) {
    char *json = NULL;
    receipt_error_t error;
    assert_int_equal(receipt_subscription_state_json(original, tokens, lengths, count, verifier, at, flags, &json, NULL,
                                                     &error), RECEIPT_OK);
    return json;
}

static void test_subscription_state(void **state) {
    (void)state;
    const void *tokens[STORY];
    size_t lengths[STORY];
    char *texts[STORY];
    for (int i = 0; i < STORY; i++) {
        texts[i] = read_whole_file(story_files[i], &lengths[i], 1);
        tokens[i] = texts[i];
    }
    size_t root_length = 0;
    char *root = read_whole_file("jws-ca/root.pem", &root_length, 0);
    receipt_verifier_builder_t *builder = NULL;
    receipt_verifier_t *verifier = NULL;
    assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_trust(builder, 0), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_add_anchor(builder, root, root_length, NULL), RECEIPT_OK);
    assert_int_equal(receipt_verifier_build(builder, &verifier), RECEIPT_OK);
    receipt_verifier_builder_free(builder);

    /* When the last notification was sent: the third period has ended, its grace period has not. */
    int64_t last = signed_date(texts[STORY - 1], lengths[STORY - 1]);
    char *json = state_json(tokens, lengths, STORY, verifier, last, 0);
    assert_non_null(strstr(json, "\"status\":4,\"status_name\":\"grace_period\",\"entitled\":true"));
    assert_non_null(strstr(json, "\"transaction_count\":3"));
    assert_non_null(strstr(json, "\"is_in_billing_retry_period\":\"1\""));
    /* Backwards, the same: the order of the tokens is not the order of events. */
    const void *reversed[STORY];
    size_t reversed_lengths[STORY];
    for (int i = 0; i < STORY; i++) {
        reversed[i] = tokens[STORY - 1 - i];
        reversed_lengths[i] = lengths[STORY - 1 - i];
    }
    char *again = state_json(reversed, reversed_lengths, STORY, verifier, last, 0);
    assert_string_equal(json, again);
    receipt_string_free(again);
    receipt_string_free(json);

    /* When the first renewal was sent, knowing only the first two: active, in that renewal. */
    int64_t renewed = signed_date(texts[1], lengths[1]);
    json = state_json(tokens, lengths, 2, verifier, renewed, 0);
    assert_non_null(strstr(json, "\"status\":1,\"status_name\":\"active\""));
    assert_non_null(strstr(json, "\"transactionId\":\"200000000000000101\""));
    receipt_string_free(json);
    /* Knowing the refund too, at the same instant: the refunded period no longer counts. */
    json = state_json(tokens, lengths, 5, verifier, renewed, 0);
    assert_null(strstr(json, "\"status\":1,"));
    receipt_string_free(json);

    /* A tampered token: its verdict, naming it; unverified, the caller's word is taken. */
    size_t tampered_length = 0;
    char *tampered = read_whole_file("minted-tampered.jws", &tampered_length, 1);
    const void *with_tampered[2] = {tokens[0], tampered};
    size_t with_tampered_lengths[2] = {lengths[0], tampered_length};
    char *out = NULL;
    receipt_error_t error;
    assert_int_equal(receipt_subscription_state_json(original, with_tampered, with_tampered_lengths, 2, verifier, last, 0,
                                                     &out, NULL, &error), RECEIPT_E_SIGNATURE_INVALID);
    assert_non_null(strstr(error.detail, "token 1"));
    assert_null(out);
    json = state_json(tokens, lengths, STORY, NULL, last, RECEIPT_ENTITLEMENTS_UNVERIFIED);
    assert_non_null(strstr(json, "\"status\":4"));
    receipt_string_free(json);

    /* Refusals. */
    assert_int_equal(receipt_subscription_state_json("1999", tokens, lengths, STORY, verifier, last, 0, &out, NULL, &error),
                     RECEIPT_E_ABSENT);
    assert_int_equal(receipt_subscription_state_json(original, tokens, lengths, STORY, NULL, last, 0, &out, NULL, NULL),
                     RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_subscription_state_json(NULL, tokens, lengths, STORY, verifier, last, 0, &out, NULL, NULL),
                     RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_subscription_state_json(original, NULL, NULL, 1, verifier, last, 0, &out, NULL, NULL),
                     RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_subscription_state_json(original, tokens, lengths, STORY, verifier, last, 0x100, &out, NULL,
                                                     NULL), RECEIPT_E_INVALID_ARGUMENT);
    const void *garbage[1] = {"abc"};
    size_t garbage_length[1] = {3};
    assert_int_equal(receipt_subscription_state_json(original, garbage, garbage_length, 1, verifier, last, 0, &out, NULL,
                                                     &error), RECEIPT_E_NOT_A_JWS);

    receipt_verifier_free(verifier);
    free(tampered);
    free(root);
    for (int i = 0; i < STORY; i++) free(texts[i]);
}

int run_subscription_tests(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subscription_state),
    };
    return cmocka_run_group_tests_name("receipt C ABI: subscription state", tests, NULL, NULL);
}
