/* cmocka tests of the batch functions of receipt.h: rows for good, base64, empty,
 * absent and garbage inputs in one call, the purchases of every row, JWS rows beside
 * receipt rows, and every failure path. Run from test_abi.c's main. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "receipt.h"

static size_t read_all(const char *path, char **out) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = malloc((size_t)size + 1);
    size_t length = fread(*out, 1, (size_t)size, f);
    (*out)[length] = '\0';  /* text files (base64, JWS) can then be read as C strings */
    fclose(f);
    return length;
}

/* A verifier trusting the test roots at `paths` (NULL-terminated). */
static receipt_verifier_t *anchored_verifier(const char *const *paths) {
    receipt_verifier_builder_t *builder = NULL;
    receipt_verifier_t *verifier = NULL;
    assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
    for (; *paths; paths++) {
        char *root = NULL;
        size_t root_length = read_all(*paths, &root);
        assert_int_equal(receipt_verifier_builder_add_anchor(builder, root, root_length, NULL), RECEIPT_OK);
        free(root);
    }
    assert_int_equal(receipt_verifier_build(builder, &verifier), RECEIPT_OK);
    receipt_verifier_builder_free(builder);
    return verifier;
}

static receipt_verifier_t *minted_ca_verifier(void) {
    const char *const roots[] = {"ca/root.pem", NULL};
    return anchored_verifier(roots);
}

static void test_batch_rows_and_purchases(void **state) {
    (void)state;
    char *der = NULL, *b64 = NULL, *tampered = NULL;
    size_t der_length = read_all("minted.der", &der), b64_length = read_all("minted.b64", &b64);
    size_t tampered_length = read_all("minted-tampered.der", &tampered);
    receipt_verifier_t *verifier = minted_ca_verifier();
    const void *inputs[6] = {der, b64, "", NULL, "garbage!", tampered};
    size_t lengths[6] = {der_length, b64_length, 0, 0, 8, tampered_length};
    receipt_batch_row_t rows[6];
    receipt_batch_t *batch = NULL;
    assert_int_equal(receipt_batch_verify(verifier, inputs, lengths, 6, &batch, rows), RECEIPT_OK);
    assert_int_equal(rows[0].status, RECEIPT_OK);
    assert_int_equal(rows[0].valid, 1);
    assert_string_equal(rows[0].bundle_id, "com.example.minted");
    assert_string_equal(rows[0].receipt_type, "ProductionSandbox");
    assert_int_equal(rows[0].in_app_count, 3);
    assert_true(rows[0].receipt_creation_date_ms != RECEIPT_BATCH_ABSENT);
    assert_int_equal(rows[1].status, RECEIPT_OK);
    assert_int_equal(rows[1].in_app_count, 1);
    assert_int_equal(rows[2].status, RECEIPT_E_EMPTY_INPUT);
    assert_null(rows[2].bundle_id);
    assert_true(rows[2].receipt_creation_date_ms == RECEIPT_BATCH_ABSENT);
    assert_int_equal(rows[3].status, RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(rows[3].valid, 0);
    assert_true(rows[4].status >= 100 && rows[4].status < 200);
    assert_int_equal(rows[5].status, RECEIPT_E_SIGNATURE_INVALID);
    assert_string_equal(rows[5].bundle_id, "com.example.minted"); /* read, but not believed */

    size_t count = receipt_batch_purchase_count(batch);
    assert_int_equal(count, 3 + 1 + 1);
    receipt_batch_purchase_t *purchases = calloc(count, sizeof *purchases);
    assert_int_equal(receipt_batch_purchases(batch, purchases, count - 1), RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_batch_purchases(batch, purchases, count), RECEIPT_OK);
    assert_int_equal(purchases[0].row, 0);
    assert_int_equal(purchases[3].row, 1);
    assert_int_equal(purchases[4].row, 5);
    for (size_t i = 0; i < count; i++) {
        assert_non_null(purchases[i].transaction_id);
        assert_int_equal(purchases[i].quantity, 1);
        assert_true(purchases[i].cancellation_date_ms == RECEIPT_BATCH_ABSENT);
        assert_true(purchases[i].is_trial_period == 0 || purchases[i].is_trial_period == 1);
    }
    free(purchases);
    receipt_batch_free(batch);

    batch = (receipt_batch_t *)0x1;
    assert_int_equal(receipt_batch_verify(NULL, inputs, lengths, 6, &batch, rows), RECEIPT_E_NULL_ARGUMENT);
    assert_null(batch);
    assert_int_equal(receipt_batch_verify(verifier, NULL, NULL, 1, &batch, rows), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_batch_verify(verifier, inputs, lengths, 6, NULL, rows), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_batch_verify(verifier, inputs, lengths, 6, &batch, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_batch_verify(verifier, inputs, lengths, (size_t)1 << 21, &batch, rows),
                     RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_batch_verify(verifier, NULL, NULL, 0, &batch, rows), RECEIPT_OK);
    assert_int_equal(receipt_batch_purchase_count(batch), 0);
    receipt_batch_free(batch);
    assert_int_equal(receipt_batch_purchase_count(NULL), 0);
    receipt_batch_purchase_t one;
    assert_int_equal(receipt_batch_purchases(NULL, &one, 1), RECEIPT_E_NULL_ARGUMENT);
    receipt_batch_free(NULL);
    receipt_verifier_free(verifier);
    free(der);
    free(b64);
    free(tampered);
}

/* Four cells verified in one batch with both test roots trusted: the minted files named
 * (read into held[i], which the caller frees) or, for a name starting with '=', the text after it. */
static receipt_batch_t *four_cell_batch(const char *const cells[4], char *held[4], receipt_verifier_t **verifier,
                                        receipt_batch_row_t rows[4]) {
    const char *const roots[] = {"ca/root.pem", "jws-ca/root.pem", NULL};
    const void *inputs[4];
    size_t lengths[4];
    for (int i = 0; i < 4; i++) {
        held[i] = NULL;
        if (cells[i][0] == '=') {
            inputs[i] = cells[i] + 1;
            lengths[i] = strlen(cells[i] + 1);
        } else {
            lengths[i] = read_all(cells[i], &held[i]);
            inputs[i] = held[i];
        }
    }
    *verifier = anchored_verifier(roots);
    receipt_batch_t *batch = NULL;
    assert_int_equal(receipt_batch_verify(*verifier, inputs, lengths, 4, &batch, rows), RECEIPT_OK);
    return batch;
}

/* A JWS is told from a receipt by its dots: its row and, for a transaction, its one
 * purchase come from its payload (tools/mint_jws.py's example transaction). */
static void test_batch_reads_jws_rows_beside_receipts(void **state) {
    (void)state;
    const char *const cells[4] = {"minted.jws", "minted.der", "minted-tampered.jws", "=e30.eA.AAAA"};
    char *held[4];
    receipt_verifier_t *verifier = NULL;
    receipt_batch_row_t rows[4];
    receipt_batch_t *batch = four_cell_batch(cells, held, &verifier, rows);
    assert_int_equal(rows[0].status, RECEIPT_OK);
    assert_string_equal(rows[0].bundle_id, "com.example.minted");
    assert_string_equal(rows[0].receipt_type, "Sandbox");
    assert_null(rows[0].application_version);
    assert_true(rows[0].receipt_creation_date_ms > 0);
    assert_int_equal(rows[0].in_app_count, 1);
    assert_int_equal(rows[1].status, RECEIPT_OK);
    assert_int_equal(rows[1].in_app_count, 3);
    assert_int_equal(rows[2].status, RECEIPT_E_SIGNATURE_INVALID);
    assert_int_equal(rows[2].valid, 0);
    assert_int_equal(rows[3].status, RECEIPT_E_BAD_JSON); /* a JWS whose payload is not JSON */
    assert_int_equal(rows[3].in_app_count, 0);

    size_t count = receipt_batch_purchase_count(batch);
    assert_int_equal(count, 1 + 3 + 1);
    receipt_batch_purchase_t purchases[5];
    assert_int_equal(receipt_batch_purchases(batch, purchases, count), RECEIPT_OK);
    assert_int_equal(purchases[0].row, 0);
    assert_string_equal(purchases[0].product_id, "com.example.minted.monthly");
    assert_string_equal(purchases[0].transaction_id, "2000000000000002");
    assert_string_equal(purchases[0].original_transaction_id, "2000000000000001");
    assert_true(purchases[0].web_order_line_item_id == 2000000000000003LL);
    assert_true(purchases[0].purchase_date_ms == rows[0].receipt_creation_date_ms - 60000);
    assert_true(purchases[0].cancellation_date_ms == RECEIPT_BATCH_ABSENT);
    assert_int_equal(purchases[0].quantity, 1);
    assert_int_equal(purchases[0].is_trial_period, 0);
    assert_int_equal(purchases[1].row, 1);
    assert_int_equal(purchases[4].row, 2);
    receipt_batch_free(batch);
    receipt_verifier_free(verifier);
    for (int i = 0; i < 4; i++) free(held[i]);
}

/* One signed content, one fingerprint: receipts (DER, base64) and a JWS, each read through
 * every function that gives one; different contents differ; an unreadable row has none. */
static void test_fingerprints_name_the_signed_content(void **state) {
    (void)state;
    const char *const cells[4] = {"minted.der", "minted.b64", "minted.jws", "=junk"};
    char *held[4];
    receipt_verifier_t *verifier = NULL;
    receipt_batch_row_t rows[4];
    receipt_batch_t *batch = four_cell_batch(cells, held, &verifier, rows);
    char *b64 = held[1], *jws = held[2];
    size_t b64_length = strlen(b64), jws_length = strlen(jws);
    uint8_t of_rows[4][RECEIPT_FINGERPRINT_SIZE], zero[RECEIPT_FINGERPRINT_SIZE] = {0};
    for (size_t row = 0; row < 3; row++)
        assert_int_equal(receipt_batch_fingerprint(batch, row, of_rows[row]), RECEIPT_OK);
    assert_int_equal(receipt_batch_fingerprint(batch, 3, of_rows[3]), RECEIPT_E_ABSENT);
    assert_int_equal(receipt_batch_fingerprint(batch, 4, of_rows[3]), RECEIPT_E_INDEX_OUT_OF_RANGE);
    assert_int_equal(receipt_batch_fingerprint(batch, 0, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_batch_fingerprint(NULL, 0, of_rows[3]), RECEIPT_E_NULL_ARGUMENT);
    assert_memory_not_equal(of_rows[0], of_rows[1], RECEIPT_FINGERPRINT_SIZE); /* two minted receipts */
    assert_memory_not_equal(of_rows[0], of_rows[2], RECEIPT_FINGERPRINT_SIZE);
    assert_memory_not_equal(of_rows[0], zero, RECEIPT_FINGERPRINT_SIZE);

    uint8_t fingerprint[RECEIPT_FINGERPRINT_SIZE];
    receipt_t *receipt = NULL;
    assert_int_equal(receipt_parse(b64, b64_length, &receipt, NULL), RECEIPT_OK);
    assert_int_equal(receipt_fingerprint(receipt, fingerprint), RECEIPT_OK);
    assert_memory_equal(fingerprint, of_rows[1], RECEIPT_FINGERPRINT_SIZE);
    assert_int_equal(receipt_fingerprint(NULL, fingerprint), RECEIPT_E_NULL_ARGUMENT);
    receipt_verification_t *result = NULL;
    assert_int_equal(receipt_verify(verifier, receipt, &result), RECEIPT_OK);
    memset(fingerprint, 0, sizeof fingerprint);
    assert_int_equal(receipt_verification_fingerprint(result, fingerprint), RECEIPT_OK);
    assert_memory_equal(fingerprint, of_rows[1], RECEIPT_FINGERPRINT_SIZE);
    receipt_verification_free(result);
    receipt_free(receipt);

    receipt_jws_t *decoded = NULL;
    assert_int_equal(receipt_verify_jws(verifier, jws, jws_length, &decoded, &result, NULL), RECEIPT_OK);
    assert_int_equal(receipt_jws_fingerprint(decoded, fingerprint), RECEIPT_OK);
    assert_memory_equal(fingerprint, of_rows[2], RECEIPT_FINGERPRINT_SIZE);
    memset(fingerprint, 0, sizeof fingerprint);
    assert_int_equal(receipt_verification_fingerprint(result, fingerprint), RECEIPT_OK);
    assert_memory_equal(fingerprint, of_rows[2], RECEIPT_FINGERPRINT_SIZE);
    assert_int_equal(receipt_jws_fingerprint(NULL, fingerprint), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_verification_fingerprint(NULL, fingerprint), RECEIPT_E_NULL_ARGUMENT);
    receipt_verification_free(result);
    receipt_jws_free(decoded);
    receipt_batch_free(batch);
    receipt_verifier_free(verifier);
    for (int i = 0; i < 4; i++) free(held[i]);
}

int run_batch_tests(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_rows_and_purchases),
        cmocka_unit_test(test_batch_reads_jws_rows_beside_receipts),
        cmocka_unit_test(test_fingerprints_name_the_signed_content),
    };
    return cmocka_run_group_tests_name("receipt C ABI: batches", tests, NULL, NULL);
}
