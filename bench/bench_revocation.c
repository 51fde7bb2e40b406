/* Warm JWS verification with revocation on (hard, the cache holding fresh good
 * answers for leaf and intermediate) against the same with revocation off, in one
 * run, interleaved: the cost of the "revocation" step in steady state.
 *   bench_revocation OCSP_CA_DIR   (mint_jws.py ca DIR --ocsp-url …; ocsp.jws and
 *                                   leaf-good.der, intermediate-good.der in DIR) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <receipt.h>

static char *slurp(const char *directory, const char *name, size_t *length) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = calloc(1, (size_t)size + 1);
    *length = fread(data, 1, (size_t)size, f);
    fclose(f);
    while (*length > 0 && data[*length - 1] == '\n') data[--*length] = 0;
    return data;
}

static receipt_verifier_t *verifier(const char *root, size_t length, receipt_revocation_mode_t mode) {
    receipt_verifier_builder_t *builder = NULL;
    receipt_verifier_builder_new(&builder);
    receipt_verifier_builder_set_trust(builder, 0);
    receipt_verifier_builder_add_anchor(builder, root, length, NULL);
    receipt_verifier_builder_set_revocation(builder, mode);
    receipt_verifier_t *made = NULL;
    receipt_verifier_build(builder, &made);
    receipt_verifier_builder_free(builder);
    return made;
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Microseconds per verification over `count` in a row. */
static double per_verification(receipt_verifier_t *v, const char *token, size_t length, int count) {
    double start = seconds();
    for (int i = 0; i < count; i++) {
        if (receipt_verify_jws(v, token, length, NULL, NULL, NULL) != RECEIPT_OK) { fprintf(stderr, "not valid\n"); exit(1); }
    }
    return (seconds() - start) / count * 1e6;
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: %s OCSP_CA_DIR\n", argv[0]); return 2; }
    size_t root_length, token_length;
    char *root = slurp(argv[1], "root.pem", &root_length), *token = slurp(argv[1], "ocsp.jws", &token_length);
    receipt_verifier_t *off = verifier(root, root_length, RECEIPT_REVOCATION_OFF);
    receipt_verifier_t *on = verifier(root, root_length, RECEIPT_REVOCATION_HARD);
    receipt_revocation_queries_t *queries = NULL;
    receipt_revocation_queries(on, token, token_length, &queries, NULL);
    for (size_t i = 0; i < receipt_revocation_query_count(queries); i++) {
        size_t length;
        const char *url = receipt_revocation_query_url(queries, i);
        char *answer = slurp(argv[1], strstr(url, "/leaf") ? "leaf-good.der" : "intermediate-good.der", &length);
        if (receipt_revocation_answer(on, queries, i, 200, answer, length, NULL) != RECEIPT_OK) return 1;
        free(answer);
    }
    receipt_revocation_queries_free(queries);
    per_verification(off, token, token_length, 2000);  /* warm both: chains cached, ES256 tables built */
    per_verification(on, token, token_length, 2000);
    enum { SAMPLES = 15 };
    double ratios[SAMPLES], offs[SAMPLES], ons[SAMPLES];
    for (int s = 0; s < SAMPLES; s++) {
        offs[s] = per_verification(off, token, token_length, 2000);
        ons[s] = per_verification(on, token, token_length, 2000);
        ratios[s] = ons[s] / offs[s];
    }
    qsort(ratios, SAMPLES, sizeof ratios[0], ascending);
    qsort(offs, SAMPLES, sizeof offs[0], ascending);
    qsort(ons, SAMPLES, sizeof ons[0], ascending);
    printf("%-44s %10.1f us %10.1f us %7.3fx (%.3f-%.3f) (target <= 1.05)\n", "warm JWS, revocation off / hard (cached)",
           offs[SAMPLES / 2], ons[SAMPLES / 2], ratios[SAMPLES / 2], ratios[0], ratios[SAMPLES - 1]);
    receipt_verifier_free(off);
    receipt_verifier_free(on);
    free(root);
    free(token);
    return 0;
}
