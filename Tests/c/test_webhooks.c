/* cmocka tests of receipt_webhook_verify(): the Standard Webhooks specification's own
 * example (its reference libraries' test vector) passes, and each alteration of the
 * message, the clock or the arguments is refused with its status. Run from test_abi.c's main. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "receipt.h"

static const char *secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
static const char *message_id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
static const char *timestamp = "1614265330";
static const char *body = "{\"test\": 2432232314}";
static const char *signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
static const int64_t now = 1614265330;

static receipt_status_t check(const char *key, const char *id, const char *stamp, const char *text, const char *header,
                              int64_t at, receipt_error_t *error) {
    return receipt_webhook_verify(key, id, stamp, (const uint8_t *)text, text ? strlen(text) : 0, header, at, -1, error);
}

static void test_webhook_verify(void **state) {
    (void)state;
    receipt_error_t error;
    assert_int_equal(check(secret, message_id, timestamp, body, signature, now, &error), RECEIPT_OK);
    assert_int_equal(check(secret, message_id, timestamp, body, "v1,bm9wZQ== v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
                           now, &error), RECEIPT_OK);
    assert_int_equal(check(secret, message_id, timestamp, "{\"test\": 2432232315}", signature, now, &error),
                     RECEIPT_E_SIGNATURE_INVALID);
    assert_int_equal(check(secret, "msg_other", timestamp, body, signature, now, &error), RECEIPT_E_SIGNATURE_INVALID);
    assert_int_equal(check(secret, message_id, timestamp, body, signature, now + 301, &error), RECEIPT_E_SIGNATURE_INVALID);
    assert_non_null(strstr(error.detail, "301 s from now"));
    assert_int_equal(receipt_webhook_verify(secret, message_id, timestamp, (const uint8_t *)body, strlen(body), signature,
                                            now + 301, 400, &error), RECEIPT_OK);
    assert_int_equal(check(secret, message_id, "yesterday", body, signature, now, &error), RECEIPT_E_BAD_FIELD);
    assert_int_equal(check(secret, message_id, timestamp, body, "v2,abc", now, &error), RECEIPT_E_BAD_FIELD);
    assert_int_equal(check("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", message_id, timestamp, body, signature, now, &error),
                     RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(check(NULL, message_id, timestamp, body, signature, now, &error), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_webhook_verify(secret, message_id, timestamp, NULL, 4, signature, now, -1, &error),
                     RECEIPT_E_NULL_ARGUMENT);
}

int run_webhook_tests(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_webhook_verify),
    };
    return cmocka_run_group_tests_name("receipt C ABI: webhook signatures", tests, NULL, NULL);
}
