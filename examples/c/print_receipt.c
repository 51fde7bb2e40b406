/* Parses a receipt file and prints its bundle id and purchases.
 * Build: cc print_receipt.c $(pkg-config --cflags --libs receipt) */
#include <stdio.h>
#include <stdlib.h>

#include <receipt.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s RECEIPT_FILE\n", argv[0]);
        return 2;
    }
    FILE *file = fopen(argv[1], "rb");
    if (!file) { perror(argv[1]); return 2; }
    static unsigned char data[1 << 22];
    size_t length = fread(data, 1, sizeof data, file);
    fclose(file);

    receipt_t *receipt = NULL;
    receipt_error_t error;
    if (receipt_parse(data, length, &receipt, &error) != RECEIPT_OK) {
        fprintf(stderr, "%s: %s\n", receipt_status_name(error.status), error.detail);
        return 2;
    }
    const char *bundle_id = "(none)";
    receipt_get_string(receipt, RECEIPT_FIELD_BUNDLE_ID, &bundle_id, NULL);
    printf("bundle id: %s\n", bundle_id);

    for (size_t i = 0; i < receipt_purchase_count(receipt); i++) {
        const char *product = "?", *transaction = "?";
        int64_t purchased_ms = 0;
        receipt_purchase_get_string(receipt, i, RECEIPT_FIELD_PRODUCT_ID, &product, NULL);
        receipt_purchase_get_string(receipt, i, RECEIPT_FIELD_TRANSACTION_ID, &transaction, NULL);
        receipt_purchase_get_date(receipt, i, RECEIPT_FIELD_PURCHASE_DATE, &purchased_ms);
        printf("  %s  transaction %s  purchased at %lld ms\n", product, transaction, (long long)purchased_ms);
    }
    receipt_free(receipt);
    return 0;
}
