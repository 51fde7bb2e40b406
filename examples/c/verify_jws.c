/* Verifies a StoreKit 2 JWS (a signed transaction, renewal info, notification or
 * AppTransaction) and prints every step and what it says.
 * Build: cc verify_jws.c $(pkg-config --cflags --libs receipt)
 * Run:   ./verify_jws FILE.jws [BUNDLE_ID [ANCHOR.pem]]
 *        With ANCHOR, that certificate is trusted instead of Apple Root CA - G3
 *        (a test CA's root, or the certificate Xcode exports for StoreKit testing). */
#include <stdio.h>
#include <stdlib.h>

#include <receipt.h>

static size_t read_all(const char *path, char *buffer, size_t size) {
    FILE *file = fopen(path, "rb");
    if (!file) { perror(path); exit(2); }
    size_t length = fread(buffer, 1, size, file);
    fclose(file);
    return length;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s FILE.jws [BUNDLE_ID [ANCHOR.pem]]\n", argv[0]);
        return 2;
    }
    static char token[1 << 20], anchor[1 << 16];
    size_t length = read_all(argv[1], token, sizeof token);

    receipt_verifier_builder_t *builder = NULL;
    receipt_verifier_t *verifier = NULL;
    receipt_error_t error;
    receipt_verifier_builder_new(&builder);
    if (argc > 2) receipt_verifier_builder_set_bundle_id(builder, argv[2]);
    if (argc > 3) {
        size_t anchor_length = read_all(argv[3], anchor, sizeof anchor);
        receipt_verifier_builder_set_trust(builder, 0);
        if (receipt_verifier_builder_add_anchor(builder, anchor, anchor_length, &error) != RECEIPT_OK) {
            fprintf(stderr, "%s: %s\n", receipt_status_name(error.status), error.detail);
            return 2;
        }
    }
    receipt_verifier_build(builder, &verifier);
    receipt_verifier_builder_free(builder);

    receipt_jws_t *jws = NULL;
    receipt_verification_t *result = NULL;
    receipt_status_t status = receipt_verify_jws(verifier, token, length, &jws, &result, &error);
    if (!result) { /* not a readable JWS */
        fprintf(stderr, "%s: %s\n", receipt_status_name(error.status), error.detail);
        return 2;
    }
    for (size_t i = 0; i < receipt_verification_step_count(result); i++) {
        receipt_step_t step;
        receipt_verification_step_at(result, i, &step);
        const char *outcome = step.outcome == RECEIPT_STEP_PASSED ? "passed" : step.outcome == RECEIPT_STEP_SKIPPED ? "skipped" : "failed";
        printf("%-8s %-20s %s\n", outcome, step.name, step.detail);
    }
    const char *transaction = "(none)", *product = "(none)";
    receipt_jws_get_string(jws, "transactionId", &transaction, NULL);
    receipt_jws_get_string(jws, "productId", &product, NULL);
    int64_t signed_ms = 0;
    receipt_jws_signed_date(jws, &signed_ms);
    printf("transaction %s of %s, signed at %lld ms\n", transaction, product, (long long)signed_ms);
    printf("%s\n", status == RECEIPT_OK ? "VALID" : receipt_status_name(status));
    receipt_verification_free(result);
    receipt_jws_free(jws);
    receipt_verifier_free(verifier);
    return status == RECEIPT_OK ? 0 : 1;
}
