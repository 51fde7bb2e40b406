/* cmocka tests of every function in receipt.h: success paths on minted and
 * (when ../shared is present) real receipts, and every failure path: NULL
 * arguments, empty, truncated, random and legacy input, wrong kinds and
 * indexes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define RECEIPT_APPSTORE_PROTOCOL /* this file tests the opt-in tier too */
#include "receipt.h"

int run_jws_tests(void);   /* test_jws.c */
int run_server_api_tests(void);   /* test_server_api.c */
int run_revocation_tests(void);   /* test_revocation.c */
int run_batch_tests(void); /* test_batch.c */
int run_subscription_tests(void); /* test_subscriptions.c */
int run_webhook_tests(void); /* test_webhooks.c */

typedef struct {
    uint8_t *bytes;
    size_t length;
} file_t;

static int read_file(const char *path, file_t *out) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    out->bytes = malloc(size > 0 ? (size_t)size : 1);
    out->length = fread(out->bytes, 1, (size_t)size, f);
    fclose(f);
    return 0;
}

static const char *shared_path(const char *relative, char *buffer, size_t size) {
    const char *root = getenv("RECEIPT_SHARED_FIXTURES");
    snprintf(buffer, size, "%s/%s", root ? root : "../../../shared/fixtures/apple", relative);
    return buffer;
}

/* Reads a real receipt from ../shared, or skips the calling test visibly. */
static file_t shared_file(const char *relative) {
    char path[1024];
    file_t file = {0};
    if (read_file(shared_path(relative, path, sizeof path), &file) != 0) {
        print_message("SKIPPED: %s is absent (../shared not beside this checkout)\n", path);
        skip();
    }
    return file;
}

static receipt_t *parse_ok(const file_t *file) {
    receipt_t *receipt = NULL;
    receipt_error_t error;
    assert_int_equal(receipt_parse(file->bytes, file->length, &receipt, &error), RECEIPT_OK);
    assert_non_null(receipt);
    assert_int_equal(error.status, RECEIPT_OK);
    assert_true(error.offset == RECEIPT_NO_OFFSET);
    assert_string_equal(error.detail, "");
    return receipt;
}

static receipt_status_t parse_status(const void *data, size_t length, receipt_error_t *error) {
    receipt_t *receipt = (receipt_t *)0x1; /* must be overwritten with NULL */
    receipt_status_t status = receipt_parse(data, length, &receipt, error);
    assert_null(receipt);
    return status;
}

/* ------------------------------------------------------------ version, status */

static void test_version_matches_header(void **state) {
    (void)state;
    assert_int_equal(receipt_version(), RECEIPT_VERSION_NUMBER);
    assert_string_equal(receipt_version_string(), RECEIPT_VERSION_STRING);
}

static void test_status_names_match_constants(void **state) {
    (void)state;
    assert_string_equal(receipt_status_name(RECEIPT_OK), "RECEIPT_OK");
    assert_string_equal(receipt_status_name(RECEIPT_E_NULL_ARGUMENT), "RECEIPT_E_NULL_ARGUMENT");
    assert_string_equal(receipt_status_name(RECEIPT_E_TRUNCATED), "RECEIPT_E_TRUNCATED");
    assert_string_equal(receipt_status_name(RECEIPT_E_LEGACY_RECEIPT), "RECEIPT_E_LEGACY_RECEIPT");
    assert_string_equal(receipt_status_name(RECEIPT_E_LIMIT_EXCEEDED), "RECEIPT_E_LIMIT_EXCEEDED");
    assert_string_equal(receipt_status_name(RECEIPT_E_ENVIRONMENT_MISMATCH), "RECEIPT_E_ENVIRONMENT_MISMATCH");
    assert_string_equal(receipt_status_name(RECEIPT_E_NOT_CANONICAL), "RECEIPT_E_NOT_CANONICAL");
    assert_string_equal(receipt_status_name(RECEIPT_E_DUPLICATE_CERTIFICATE), "RECEIPT_E_DUPLICATE_CERTIFICATE");
    assert_string_equal(receipt_status_name(RECEIPT_E_TOO_MANY_CERTIFICATES), "RECEIPT_E_TOO_MANY_CERTIFICATES");
    assert_string_equal(receipt_status_name(RECEIPT_E_NO_CERTIFICATES), "RECEIPT_E_NO_CERTIFICATES");
    assert_string_equal(receipt_status_name((receipt_status_t)9999), "RECEIPT_E_UNKNOWN_STATUS");
    assert_string_equal(receipt_status_string(RECEIPT_OK), "success");
    assert_string_equal(receipt_status_string((receipt_status_t)9999), "unknown status");
    assert_true(strlen(receipt_status_string(RECEIPT_E_BAD_DATE)) > 10);
}

/* ------------------------------------------------------------ bad input */

static void test_parse_rejects_null_arguments(void **state) {
    (void)state;
    receipt_t *receipt = NULL;
    assert_int_equal(receipt_parse("x", 1, NULL, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_parse(NULL, 5, &receipt, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_null(receipt);
    receipt_error_t error;
    assert_int_equal(parse_status(NULL, 0, &error), RECEIPT_E_EMPTY_INPUT);
    assert_int_equal(error.status, RECEIPT_E_EMPTY_INPUT);
}

static void test_parse_reports_empty_and_whitespace(void **state) {
    (void)state;
    receipt_error_t error;
    assert_int_equal(parse_status("", 0, &error), RECEIPT_E_EMPTY_INPUT);
    assert_int_equal(parse_status(" \n\t\r\n", 5, &error), RECEIPT_E_EMPTY_INPUT);
    assert_non_null(strstr(error.detail, "whitespace"));
}

static void test_parse_reports_random_bytes(void **state) {
    (void)state;
    receipt_error_t error;
    uint8_t bytes[4096];
    srand(1234);
    for (int round = 0; round < 2000; round++) {
        size_t length = (size_t)(rand() % (int)sizeof bytes);
        for (size_t i = 0; i < length; i++) bytes[i] = (uint8_t)rand();
        if (round % 2) bytes[0] = 0x30; /* reach the DER walker too */
        receipt_status_t status = parse_status(bytes, length, &error);
        assert_true(status >= 100 && status < 200);
        assert_int_equal(error.status, status);
        assert_true(strlen(error.detail) > 0);
    }
}

static void test_parse_reports_length_overflow_and_nesting(void **state) {
    (void)state;
    receipt_error_t error;
    const uint8_t overflow[] = {0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x06};
    assert_int_equal(parse_status(overflow, sizeof overflow, &error), RECEIPT_E_LENGTH_OVERFLOW);
    assert_int_equal(error.offset, 0);

    const uint8_t too_long_length[] = {0x30, 0x85, 0x01, 0x00, 0x00, 0x00, 0x00};
    assert_int_equal(parse_status(too_long_length, sizeof too_long_length, &error), RECEIPT_E_LENGTH_OVERFLOW);

    const uint8_t never_closed[] = {0x30, 0x80, 0x06, 0x01, 0x2A};
    assert_int_equal(parse_status(never_closed, sizeof never_closed, &error), RECEIPT_E_TRUNCATED);

    enum { depth = 10000 };
    uint8_t *nested = malloc(depth * 2 + 2);
    for (int i = 0; i < depth; i++) { nested[2 * i] = 0x30; nested[2 * i + 1] = 0x80; }
    nested[2 * depth] = 0; nested[2 * depth + 1] = 0;
    assert_int_equal(parse_status(nested, depth * 2 + 2, &error), RECEIPT_E_NESTING_TOO_DEEP);
    free(nested);
}

/* ------------------------------------------------------------ limits */

/* Appends a DER length; returns the new end. */
static uint8_t *put_length(uint8_t *out, size_t length) {
    if (length < 0x80) { *out++ = (uint8_t)length; return out; }
    int octets = length > 0xFFFFFF ? 4 : length > 0xFFFF ? 3 : length > 0xFF ? 2 : 1;
    *out++ = (uint8_t)(0x80 | octets);
    for (int i = octets - 1; i >= 0; i--) *out++ = (uint8_t)(length >> (8 * i));
    return out;
}

/* ContentInfo { signedData, [0] SignedData { 1, {}, { data, [0] OCTET STRING payload }, {} } }
 * around `payload`. The caller frees the result. */
static uint8_t *wrap_payload(const uint8_t *payload, size_t payload_length, size_t *out_length) {
    static const uint8_t signed_oid[] = {0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02};
    static const uint8_t data_oid[] = {0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01};
    uint8_t *out = malloc(payload_length + 128), header[64];
    /* Built inside out: each layer is a header in front of what it wraps. */
    size_t octets = payload_length + 1 + (size_t)(put_length(header, payload_length) - header);
    size_t explicit0 = octets + 1 + (size_t)(put_length(header, octets) - header);
    size_t content_info = sizeof data_oid + explicit0 + 1 + (size_t)(put_length(header, sizeof data_oid + explicit0) - header);
    size_t signed_body = 3 + 2 + content_info + 2;
    size_t signed_data = signed_body + 1 + (size_t)(put_length(header, signed_body) - header);
    size_t wrapper = signed_data + 1 + (size_t)(put_length(header, signed_data) - header);
    size_t outer_body = sizeof signed_oid + wrapper;
    uint8_t *p = out;
    *p++ = 0x30; p = put_length(p, outer_body);
    memcpy(p, signed_oid, sizeof signed_oid); p += sizeof signed_oid;
    *p++ = 0xA0; p = put_length(p, signed_data);
    *p++ = 0x30; p = put_length(p, signed_body);
    *p++ = 0x02; *p++ = 0x01; *p++ = 0x01;
    *p++ = 0x31; *p++ = 0x00;
    *p++ = 0x30; p = put_length(p, sizeof data_oid + explicit0);
    memcpy(p, data_oid, sizeof data_oid); p += sizeof data_oid;
    *p++ = 0xA0; p = put_length(p, octets);
    *p++ = 0x04; p = put_length(p, payload_length);
    memcpy(p, payload, payload_length); p += payload_length;
    *p++ = 0x31; *p++ = 0x00;
    *out_length = (size_t)(p - out);
    return out;
}

/* A receipt whose payload is `count` copies of one encoded attribute. The caller frees it. */
static uint8_t *repeated_attributes(const uint8_t *attribute, size_t each, long count, size_t *out_length) {
    size_t body = (size_t)count * each;
    uint8_t *payload = malloc(body + 8), *p = payload;
    *p++ = 0x31; p = put_length(p, body);
    for (long i = 0; i < count; i++) { memcpy(p, attribute, each); p += each; }
    uint8_t *receipt = wrap_payload(payload, (size_t)(p - payload), out_length);
    free(payload);
    return receipt;
}

static void test_limit_input_size(void **state) {
    (void)state;
    size_t length = (32u << 20) + 1;
    uint8_t *big = calloc(length, 1);
    big[0] = 0x30;
    receipt_error_t error;
    assert_int_equal(parse_status(big, length, &error), RECEIPT_E_INPUT_TOO_LARGE);
    free(big);
}

static void test_limit_attribute_count(void **state) {
    (void)state;
    /* { type 99, version 1, value 0x00 } */
    static const uint8_t attribute[] = {0x30, 0x09, 0x02, 0x01, 0x63, 0x02, 0x01, 0x01, 0x04, 0x01, 0x00};
    size_t length;
    uint8_t *receipt = repeated_attributes(attribute, sizeof attribute, 1000001, &length);
    receipt_error_t error;
    assert_int_equal(parse_status(receipt, length, &error), RECEIPT_E_LIMIT_EXCEEDED);
    assert_non_null(strstr(error.detail, "1000000 attributes"));
    free(receipt);
}

/* The cheapest purchases to send, 12 bytes each, must not cost a row of every
 * in-app field apiece: what a receipt keeps stays a small multiple of its size. */
static void test_memory_of_empty_purchases(void **state) {
    (void)state;
    enum { count = 200000 };
    /* { type 17, version 1, value SET {} } */
    static const uint8_t purchase[] = {0x30, 0x0A, 0x02, 0x01, 0x11, 0x02, 0x01, 0x01, 0x04, 0x02, 0x31, 0x00};
    size_t length;
    uint8_t *bytes = repeated_attributes(purchase, sizeof purchase, count, &length);
    struct mallinfo2 heap = mallinfo2(); /* mmapped blocks too: large receipts get theirs from mmap */
    size_t before = heap.uordblks + heap.hblkhd;
    receipt_t *receipt = NULL;
    assert_int_equal(receipt_parse(bytes, length, &receipt, NULL), RECEIPT_OK);
    heap = mallinfo2();
    size_t retained = heap.uordblks + heap.hblkhd - before;
    assert_int_equal(receipt_purchase_count(receipt), count);
    if (getenv("RECEIPT_UNDER_TOOL")) { /* its allocator, not malloc's: mallinfo2 sees nothing */
        print_message("%d empty purchases: memory not measured under %s\n", count, getenv("RECEIPT_UNDER_TOOL"));
    } else {
        print_message("%d empty purchases in %zu bytes: %zu bytes retained (%.2fx)\n", count, length, retained,
                      (double)retained / (double)length);
        assert_true(retained < 4 * length);
    }
    receipt_free(receipt);
    free(bytes);
}

/* A BER receipt (indefinite lengths) whose payload is a constructed OCTET STRING
 * of the given primitive chunks, back to back in `chunks`. The caller frees it. */
static uint8_t *chunked_receipt(const uint8_t *chunks, size_t chunks_length, size_t *out_length) {
    static const uint8_t head[] = {0x30, 0x80, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02,
                                   0xA0, 0x80, 0x30, 0x80, 0x02, 0x01, 0x01, 0x31, 0x00,
                                   0x30, 0x80, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01,
                                   0xA0, 0x80, 0x24, 0x80};
    static const uint8_t tail[] = {0, 0, 0, 0, 0, 0, 0x31, 0x00, 0, 0, 0, 0, 0, 0};
    uint8_t *out = malloc(sizeof head + chunks_length + sizeof tail);
    memcpy(out, head, sizeof head);
    memcpy(out + sizeof head, chunks, chunks_length);
    memcpy(out + sizeof head + chunks_length, tail, sizeof tail);
    *out_length = sizeof head + chunks_length + sizeof tail;
    return out;
}

/* Parses in a child process and returns its peak RSS growth in bytes, or -1 when
 * the suite runs under valgrind or a sanitizer, whose own memory would swamp it.
 * The child exits with the parse status. */
static long peak_growth_of_parse(const uint8_t *bytes, size_t length, receipt_status_t *out_status) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        struct rusage usage;
        getrusage(RUSAGE_SELF, &usage);
        long before = usage.ru_maxrss;
        receipt_t *receipt = NULL;
        receipt_status_t status = receipt_parse(bytes, length, &receipt, NULL);
        getrusage(RUSAGE_SELF, &usage);
        long growth = (usage.ru_maxrss - before) * 1024;
        if (write(fds[1], &growth, sizeof growth) != sizeof growth) _exit(255);
        _exit((int)status);
    }
    long growth = -1;
    assert_int_equal(read(fds[0], &growth, sizeof growth), sizeof growth);
    close(fds[0]);
    close(fds[1]);
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    assert_true(WIFEXITED(wstatus));
    *out_status = (receipt_status_t)WEXITSTATUS(wstatus);
    return getenv("RECEIPT_UNDER_TOOL") ? -1 : growth;
}

/* A 16 MB payload cut into 16-byte chunks is joined straight into one buffer:
 * the parse peaks within 4x the input plus a fixed base, as for any receipt. */
static void test_memory_of_chunked_payload(void **state) {
    (void)state;
    enum { value_length = 16 << 20, chunk = 16 };
    /* SET { SEQUENCE { INTEGER 9999, INTEGER 1, OCTET STRING value } }: an unknown type, kept raw */
    uint8_t header[32], *h = header;
    size_t attribute_body = 4 + 3 + 6 + value_length;
    *h++ = 0x31; *h++ = 0x84; for (int i = 3; i >= 0; i--) *h++ = (uint8_t)((attribute_body + 6) >> (8 * i));
    *h++ = 0x30; *h++ = 0x84; for (int i = 3; i >= 0; i--) *h++ = (uint8_t)(attribute_body >> (8 * i));
    *h++ = 0x02; *h++ = 0x02; *h++ = 0x27; *h++ = 0x0F; *h++ = 0x02; *h++ = 0x01; *h++ = 0x01;
    *h++ = 0x04; *h++ = 0x84; for (int i = 3; i >= 0; i--) *h++ = (uint8_t)(value_length >> (8 * i));
    size_t payload_length = (size_t)(h - header) + value_length;
    uint8_t *payload = calloc(payload_length, 1);
    memcpy(payload, header, (size_t)(h - header));
    size_t pieces = (payload_length + chunk - 1) / chunk;
    uint8_t *chunks = malloc(pieces * (chunk + 2)), *p = chunks;
    for (size_t offset = 0; offset < payload_length; offset += chunk) {
        size_t n = payload_length - offset < chunk ? payload_length - offset : chunk;
        *p++ = 0x04; *p++ = (uint8_t)n;
        memcpy(p, payload + offset, n);
        p += n;
    }
    size_t length;
    uint8_t *bytes = chunked_receipt(chunks, (size_t)(p - chunks), &length);
    free(chunks);
    free(payload);
    receipt_status_t status;
    long growth = peak_growth_of_parse(bytes, length, &status);
    assert_int_equal(status, RECEIPT_OK);
    if (growth >= 0) {
        print_message("%zu chunks, %zu bytes: peak growth %ld bytes (%.2fx)\n", pieces, length, growth,
                      (double)growth / (double)length);
        assert_true(growth < 4 * (long)length + (8L << 20));
    } else {
        print_message("%zu chunks, %zu bytes: joined; peak not measured under %s\n", pieces, length,
                      getenv("RECEIPT_UNDER_TOOL"));
    }
    free(bytes);
}

/* 8 million empty chunks (16 MB) pass the chunk limit: refused, without first
 * holding a list of them. */
static void test_limit_payload_chunks(void **state) {
    (void)state;
    enum { count = 8 << 20 };
    uint8_t *chunks = malloc(2 * (size_t)count);
    for (size_t i = 0; i < count; i++) { chunks[2 * i] = 0x04; chunks[2 * i + 1] = 0x00; }
    size_t length;
    uint8_t *bytes = chunked_receipt(chunks, 2 * (size_t)count, &length);
    free(chunks);
    receipt_error_t error;
    assert_int_equal(parse_status(bytes, length, &error), RECEIPT_E_LIMIT_EXCEEDED);
    assert_non_null(strstr(error.detail, "4194304 chunks"));
    receipt_status_t status;
    long growth = peak_growth_of_parse(bytes, length, &status);
    assert_int_equal(status, RECEIPT_E_LIMIT_EXCEEDED);
    if (growth >= 0) {
        print_message("%d empty chunks, %zu bytes: refused, peak growth %ld bytes\n", count, length, growth);
        assert_true(growth < 4 * (long)length + (8L << 20));
    }
    free(bytes);
}

static size_t tlv_size(size_t content) {
    uint8_t header[8];
    return 1 + (size_t)(put_length(header, content) - header) + content;
}

static void test_limit_string_length(void **state) {
    (void)state;
    size_t text = (64u << 10) + 1;
    size_t value = tlv_size(text);                 /* UTF8String */
    size_t sequence = 3 + 3 + tlv_size(value);     /* type, version, OCTET STRING */
    size_t set = tlv_size(sequence);
    uint8_t *payload = malloc(tlv_size(set)), *p = payload;
    *p++ = 0x31; p = put_length(p, set);
    *p++ = 0x30; p = put_length(p, sequence);
    *p++ = 0x02; *p++ = 0x01; *p++ = 0x02;          /* bundle_id */
    *p++ = 0x02; *p++ = 0x01; *p++ = 0x01;
    *p++ = 0x04; p = put_length(p, value);
    *p++ = 0x0C; p = put_length(p, text);
    memset(p, 'a', text); p += text;
    size_t length;
    uint8_t *receipt = wrap_payload(payload, (size_t)(p - payload), &length);
    receipt_error_t error;
    assert_int_equal(parse_status(receipt, length, &error), RECEIPT_E_LIMIT_EXCEEDED);
    assert_non_null(strstr(error.detail, "65536-byte limit"));
    free(receipt);
    free(payload);
}

static void test_parse_reports_wrong_outer_oid(void **state) {
    (void)state;
    receipt_error_t error;
    /* ContentInfo with contentType 1.2.840.113549.1.7.1 (data) instead of signedData. */
    const uint8_t wrong[] = {0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01,
                             0xA0, 0x00};
    assert_int_equal(parse_status(wrong, sizeof wrong, &error), RECEIPT_E_NOT_SIGNED_DATA);
    assert_int_equal(error.offset, 2);
}

static void test_parse_reports_bad_base64_jws_and_pem(void **state) {
    (void)state;
    receipt_error_t error;
    const char *bad = "MIIT!!!!";
    assert_int_equal(parse_status(bad, strlen(bad), &error), RECEIPT_E_BAD_BASE64);
    const char *jws = "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2lnbmF0dXJl";
    assert_int_equal(parse_status(jws, strlen(jws), &error), RECEIPT_E_UNSUPPORTED_FORMAT);
    assert_non_null(strstr(error.detail, "JWS"));
    const char *pem = "-----BEGIN PKCS7-----\nMIIT\n-----END PKCS7-----\n";
    assert_int_equal(parse_status(pem, strlen(pem), &error), RECEIPT_E_UNSUPPORTED_FORMAT);
    assert_non_null(strstr(error.detail, "PEM"));
}

static void test_parse_detail_is_optional(void **state) {
    (void)state;
    receipt_t *receipt = NULL;
    assert_int_equal(receipt_parse("\x30", 1, &receipt, NULL), RECEIPT_E_TRUNCATED);
    assert_null(receipt);
}

/* ------------------------------------------------------------ minted receipts */

static void test_minted_receipt_fields(void **state) {
    (void)state;
    file_t file;
    assert_int_equal(read_file("minted.der", &file), 0);
    receipt_t *receipt = parse_ok(&file);
    free(file.bytes); /* the handle owns a copy */

    const char *text = NULL;
    size_t length = 0;
    assert_int_equal(receipt_get_string(receipt, RECEIPT_FIELD_BUNDLE_ID, &text, &length), RECEIPT_OK);
    assert_string_equal(text, "com.example.minted");
    assert_int_equal(length, strlen("com.example.minted"));
    assert_int_equal(receipt_get_string(receipt, RECEIPT_FIELD_APPLICATION_VERSION, &text, NULL), RECEIPT_OK);
    assert_string_equal(text, "42");

    int64_t number = -1;
    assert_int_equal(receipt_get_int(receipt, RECEIPT_FIELD_APP_ITEM_ID, &number), RECEIPT_OK);
    assert_int_equal(number, 0);
    assert_int_equal(receipt_get_date(receipt, RECEIPT_FIELD_RECEIPT_CREATION_DATE, &number), RECEIPT_OK);
    assert_int_equal(number, 1709287200000LL);
    assert_int_equal(receipt_get_string(receipt, RECEIPT_FIELD_RECEIPT_CREATION_DATE, &text, NULL), RECEIPT_OK);
    assert_string_equal(text, "2024-03-01T10:00:00Z");

    const uint8_t *bytes = NULL;
    assert_int_equal(receipt_get_bytes(receipt, RECEIPT_FIELD_OPAQUE_VALUE, &bytes, &length), RECEIPT_OK);
    assert_int_equal(length, 16);
    assert_int_equal(bytes[15], 15);
    assert_int_equal(receipt_get_bytes(receipt, RECEIPT_FIELD_BUNDLE_ID, &bytes, &length), RECEIPT_OK);
    assert_int_equal(length, 2 + strlen("com.example.minted"));
    assert_int_equal(bytes[0], 0x0C);

    /* Absent fields and wrong requests. */
    assert_int_equal(receipt_get_date(receipt, RECEIPT_FIELD_EXPIRATION_DATE, &number), RECEIPT_E_ABSENT);
    assert_int_equal(receipt_get_string(receipt, RECEIPT_FIELD_EXPIRATION_DATE, &text, NULL), RECEIPT_E_ABSENT);
    assert_int_equal(receipt_get_int(receipt, RECEIPT_FIELD_BUNDLE_ID, &number), RECEIPT_E_WRONG_FIELD_KIND);
    assert_int_equal(receipt_get_date(receipt, RECEIPT_FIELD_APP_ITEM_ID, &number), RECEIPT_E_WRONG_FIELD_KIND);
    assert_int_equal(receipt_get_string(receipt, RECEIPT_FIELD_APP_ITEM_ID, &text, NULL), RECEIPT_E_WRONG_FIELD_KIND);
    assert_int_equal(receipt_get_bytes(receipt, RECEIPT_FIELD_IN_APP, &bytes, &length), RECEIPT_E_WRONG_FIELD_KIND);
    assert_int_equal(receipt_get_string(receipt, RECEIPT_FIELD_PRODUCT_ID, &text, NULL), RECEIPT_E_UNKNOWN_FIELD);
    assert_int_equal(receipt_get_string(receipt, (receipt_field_t)7, &text, NULL), RECEIPT_E_UNKNOWN_FIELD);
    assert_int_equal(receipt_get_string(NULL, RECEIPT_FIELD_BUNDLE_ID, &text, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_get_string(receipt, RECEIPT_FIELD_BUNDLE_ID, NULL, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_get_int(receipt, RECEIPT_FIELD_APP_ITEM_ID, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_get_date(NULL, RECEIPT_FIELD_RECEIPT_CREATION_DATE, &number), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_get_bytes(receipt, RECEIPT_FIELD_OPAQUE_VALUE, NULL, &length), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_get_bytes(receipt, RECEIPT_FIELD_OPAQUE_VALUE, &bytes, NULL), RECEIPT_E_NULL_ARGUMENT);

    receipt_free(receipt);
}

static void test_minted_purchases(void **state) {
    (void)state;
    file_t file;
    assert_int_equal(read_file("minted.der", &file), 0);
    receipt_t *receipt = parse_ok(&file);
    free(file.bytes);

    assert_int_equal(receipt_purchase_count(receipt), 3);
    assert_int_equal(receipt_purchase_count(NULL), 0);
    int trials = 0;
    for (size_t i = 0; i < 3; i++) {
        const char *product = NULL;
        assert_int_equal(receipt_purchase_get_string(receipt, i, RECEIPT_FIELD_PRODUCT_ID, &product, NULL), RECEIPT_OK);
        assert_memory_equal(product, "com.example.product.", 20);
        int64_t value = 0;
        assert_int_equal(receipt_purchase_get_int(receipt, i, RECEIPT_FIELD_PRODUCT_TYPE, &value), RECEIPT_OK);
        assert_int_equal(value, 3);
        assert_int_equal(receipt_purchase_get_int(receipt, i, RECEIPT_FIELD_IS_TRIAL_PERIOD, &value), RECEIPT_OK);
        trials += (int)value;
        assert_int_equal(receipt_purchase_get_date(receipt, i, RECEIPT_FIELD_IN_APP_ORIGINAL_PURCHASE_DATE, &value),
                         RECEIPT_OK);
        assert_int_equal(value, 1709287200250LL); /* fractional seconds kept */
        /* An empty cancellation date is absent. */
        assert_int_equal(receipt_purchase_get_date(receipt, i, RECEIPT_FIELD_CANCELLATION_DATE, &value),
                         RECEIPT_E_ABSENT);
        const uint8_t *bytes = NULL;
        size_t length = 0;
        assert_int_equal(receipt_purchase_get_bytes(receipt, i, RECEIPT_FIELD_TRANSACTION_ID, &bytes, &length),
                         RECEIPT_OK);
        assert_int_equal(bytes[0], 0x0C);
    }
    assert_int_equal(trials, 1);

    const char *text = NULL;
    int64_t value = 0;
    assert_int_equal(receipt_purchase_get_string(receipt, 3, RECEIPT_FIELD_PRODUCT_ID, &text, NULL),
                     RECEIPT_E_INDEX_OUT_OF_RANGE);
    assert_int_equal(receipt_purchase_get_int(receipt, SIZE_MAX, RECEIPT_FIELD_QUANTITY, &value),
                     RECEIPT_E_INDEX_OUT_OF_RANGE);
    assert_int_equal(receipt_purchase_get_string(receipt, 0, RECEIPT_FIELD_BUNDLE_ID, &text, NULL),
                     RECEIPT_E_UNKNOWN_FIELD);
    assert_int_equal(receipt_purchase_get_date(receipt, 0, RECEIPT_FIELD_PROMOTIONAL_OFFER_ID, &value),
                     RECEIPT_E_WRONG_FIELD_KIND);
    assert_int_equal(receipt_purchase_get_string(receipt, 0, RECEIPT_FIELD_PROMOTIONAL_OFFER_ID, &text, NULL),
                     RECEIPT_E_ABSENT);
    assert_int_equal(receipt_purchase_get_date(NULL, 0, RECEIPT_FIELD_PURCHASE_DATE, &value), RECEIPT_E_NULL_ARGUMENT);
    receipt_free(receipt);
}

static void test_minted_raw_attributes(void **state) {
    (void)state;
    file_t file;
    assert_int_equal(read_file("minted.der", &file), 0);
    receipt_t *receipt = parse_ok(&file);
    free(file.bytes);

    size_t count = receipt_attribute_count(receipt);
    assert_int_equal(count, 11 + 3);
    int found_unknown = 0;
    for (size_t i = 0; i < count; i++) {
        receipt_attribute_t attribute;
        assert_int_equal(receipt_attribute_at(receipt, i, &attribute), RECEIPT_OK);
        assert_int_equal(attribute.version, 1);
        if (attribute.type == 99) {
            found_unknown = 1;
            assert_int_equal(attribute.value_length, 3);
            assert_memory_equal(attribute.value, "\x01\x02\x03", 3);
        }
    }
    assert_true(found_unknown);
    receipt_attribute_t attribute;
    assert_int_equal(receipt_attribute_at(receipt, count, &attribute), RECEIPT_E_INDEX_OUT_OF_RANGE);
    assert_int_equal(receipt_attribute_at(receipt, 0, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_attribute_count(NULL), 0);

    assert_int_equal(receipt_purchase_attribute_count(receipt, 0), 13);
    assert_int_equal(receipt_purchase_attribute_count(receipt, 99), 0);
    int found_unknown_in_purchase = 0;
    for (size_t i = 0; i < 13; i++) {
        assert_int_equal(receipt_purchase_attribute_at(receipt, 0, i, &attribute), RECEIPT_OK);
        if (attribute.type == 1799) {
            found_unknown_in_purchase = 1;
            assert_memory_equal(attribute.value, "\x0C\x08kept raw", 10);
        }
    }
    assert_true(found_unknown_in_purchase);
    assert_int_equal(receipt_purchase_attribute_at(receipt, 0, 13, &attribute), RECEIPT_E_INDEX_OUT_OF_RANGE);
    assert_int_equal(receipt_purchase_attribute_at(receipt, 5, 0, &attribute), RECEIPT_E_INDEX_OUT_OF_RANGE);
    assert_int_equal(receipt_purchase_attribute_at(NULL, 0, 0, &attribute), RECEIPT_E_NULL_ARGUMENT);
    receipt_free(receipt);
}

static void test_minted_ber_and_base64(void **state) {
    (void)state;
    file_t file;
    assert_int_equal(read_file("minted-ber.der", &file), 0);
    assert_int_equal(file.bytes[1], 0x80); /* really indefinite-length */
    receipt_t *receipt = parse_ok(&file);
    assert_int_equal(receipt_purchase_count(receipt), 2);
    receipt_free(receipt);
    free(file.bytes);

    assert_int_equal(read_file("minted.b64", &file), 0);
    receipt = parse_ok(&file);
    assert_int_equal(receipt_purchase_count(receipt), 1);
    receipt_free(receipt);
    free(file.bytes);
}

static void test_every_truncation_fails_cleanly(void **state) {
    (void)state;
    file_t file;
    assert_int_equal(read_file("minted.der", &file), 0);
    receipt_error_t error;
    for (size_t length = 0; length < file.length; length++) {
        receipt_status_t status = parse_status(file.bytes, length, &error);
        assert_int_equal(status, length == 0 ? RECEIPT_E_EMPTY_INPUT : RECEIPT_E_TRUNCATED);
    }
    free(file.bytes);
}

static void test_field_table(void **state) {
    (void)state;
    size_t count = receipt_field_count();
    assert_int_equal(count, 25);
    int saw_bundle = 0;
    for (size_t i = 0; i < count; i++) {
        receipt_field_t field;
        assert_int_equal(receipt_field_at(i, &field), RECEIPT_OK);
        assert_non_null(receipt_field_name(field));
        assert_true(receipt_field_kind(field) != RECEIPT_KIND_NONE);
        if (field == RECEIPT_FIELD_BUNDLE_ID) saw_bundle = 1;
    }
    assert_true(saw_bundle);
    receipt_field_t field;
    assert_int_equal(receipt_field_at(count, &field), RECEIPT_E_INDEX_OUT_OF_RANGE);
    assert_int_equal(receipt_field_at(0, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_string_equal(receipt_field_name(RECEIPT_FIELD_WEB_ORDER_LINE_ITEM_ID), "web_order_line_item_id");
    assert_string_equal(receipt_field_name(RECEIPT_FIELD_SHA1_HASH), "sha1_hash");
    assert_null(receipt_field_name((receipt_field_t)1709));
    assert_int_equal(receipt_field_kind(RECEIPT_FIELD_IS_TRIAL_PERIOD), RECEIPT_KIND_BOOLEAN);
    assert_int_equal(receipt_field_kind(RECEIPT_FIELD_IN_APP), RECEIPT_KIND_PURCHASES);
    assert_int_equal(receipt_field_kind((receipt_field_t)7), RECEIPT_KIND_NONE);
}

static void test_json_rendering(void **state) {
    (void)state;
    file_t file;
    assert_int_equal(read_file("minted.der", &file), 0);
    receipt_t *receipt = parse_ok(&file);
    free(file.bytes);
    char *json = NULL;
    size_t length = 0;
    assert_int_equal(receipt_to_json(receipt, RECEIPT_JSON_COMPACT, &json, &length), RECEIPT_OK);
    assert_int_equal(strlen(json), length);
    assert_non_null(strstr(json, "\"bundle_id\":\"com.example.minted\""));
    assert_non_null(strstr(json, "\"receipt_creation_date\":\"2024-03-01 10:00:00 Etc/GMT\""));
    assert_non_null(strstr(json, "\"receipt_creation_date_pst\":\"2024-03-01 02:00:00 America/Los_Angeles\""));
    assert_null(strstr(json, "\n"));
    receipt_string_free(json);

    assert_int_equal(receipt_to_json(receipt, RECEIPT_JSON_PRETTY, &json, NULL), RECEIPT_OK);
    assert_non_null(strstr(json, "\n  \"bundle_id\": \"com.example.minted\""));
    receipt_string_free(json);

    assert_int_equal(receipt_to_json(receipt, 0x80, &json, NULL), RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_to_json(NULL, 0, &json, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_to_json(receipt, 0, NULL, NULL), RECEIPT_E_NULL_ARGUMENT);
    receipt_string_free(NULL);
    receipt_free(receipt);
    receipt_free(NULL);
}

/* ------------------------------------------------------------ verification */

static receipt_verifier_t *test_ca_verifier(const char *bundle_id) {
    receipt_verifier_builder_t *builder = NULL;
    assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_trust(builder, 0), RECEIPT_OK);
    file_t root;
    assert_int_equal(read_file("ca/root.pem", &root), 0);
    receipt_error_t error;
    assert_int_equal(receipt_verifier_builder_add_anchor(builder, root.bytes, root.length, &error), RECEIPT_OK);
    free(root.bytes);
    assert_int_equal(receipt_verifier_builder_set_bundle_id(builder, bundle_id), RECEIPT_OK);
    receipt_verifier_t *verifier = NULL;
    assert_int_equal(receipt_verifier_build(builder, &verifier), RECEIPT_OK);
    receipt_verifier_builder_free(builder); /* the verifier outlives its builder */
    return verifier;
}

static receipt_t *parse_file(const char *path) {
    file_t file;
    assert_int_equal(read_file(path, &file), 0);
    receipt_t *receipt = parse_ok(&file);
    free(file.bytes);
    return receipt;
}

static void test_verifier_builder_arguments(void **state) {
    (void)state;
    receipt_verifier_builder_t *builder = NULL;
    assert_int_equal(receipt_verifier_builder_new(NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_trust(builder, 4), RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_verifier_builder_set_trust(NULL, 1), RECEIPT_E_NULL_ARGUMENT);
    receipt_error_t error;
    assert_int_equal(receipt_verifier_builder_add_anchor(builder, "junk", 4, &error), RECEIPT_E_BAD_ANCHOR);
    assert_int_equal(error.status, RECEIPT_E_BAD_ANCHOR);
    assert_true(strlen(error.detail) > 0);
    assert_int_equal(receipt_verifier_builder_add_anchor(builder, NULL, 4, NULL), RECEIPT_E_NULL_ARGUMENT);
    const uint8_t device[65] = {0};
    assert_int_equal(receipt_verifier_builder_set_device_id(builder, device, 0), RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_verifier_builder_set_device_id(builder, device, 65), RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_verifier_builder_set_device_id(builder, device, 6), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_device_id(builder, NULL, 0), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_bundle_id(builder, "\xff\xfe"), RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_verifier_builder_set_bundle_id(builder, NULL), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_application_version(builder, "1.0"), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_now(builder, 0), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_clear_now(builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_clear_now(NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_verifier_builder_set_environment(builder, (receipt_environment_t)7), RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_verifier_builder_set_environment(NULL, RECEIPT_ENVIRONMENT_SANDBOX), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_verifier_builder_set_environment(builder, RECEIPT_ENVIRONMENT_SANDBOX), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_clear_environment(builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_clear_environment(NULL), RECEIPT_E_NULL_ARGUMENT);
    receipt_verifier_t *verifier = (receipt_verifier_t *)0x1;
    assert_int_equal(receipt_verifier_build(NULL, &verifier), RECEIPT_E_NULL_ARGUMENT);
    assert_null(verifier);
    assert_int_equal(receipt_verifier_build(builder, NULL), RECEIPT_E_NULL_ARGUMENT);
    receipt_verifier_builder_free(builder);
    receipt_verifier_builder_free(NULL);
    receipt_verifier_free(NULL);
}

static void test_verify_minted_receipt(void **state) {
    (void)state;
    receipt_verifier_t *verifier = test_ca_verifier("com.example.minted");
    receipt_t *receipt = parse_file("minted.der");
    assert_int_equal(receipt_verify(verifier, receipt, NULL), RECEIPT_OK);

    receipt_verification_t *result = NULL;
    assert_int_equal(receipt_verify(verifier, receipt, &result), RECEIPT_OK);
    assert_int_equal(receipt_verification_status(result), RECEIPT_OK);
    assert_int_equal(receipt_verification_step_count(result), 10); /* revocation: skipped for receipts */
    receipt_step_t step;
    assert_int_equal(receipt_verification_step_at(result, 0, &step), RECEIPT_OK);
    assert_string_equal(step.name, "signature");
    assert_int_equal(step.outcome, RECEIPT_STEP_PASSED);
    assert_int_equal(step.status, RECEIPT_OK);
    assert_non_null(strstr(step.detail, "SHA-256"));
    assert_int_equal(receipt_verification_step_at(result, 6, &step), RECEIPT_OK);
    assert_string_equal(step.name, "device_hash");
    assert_int_equal(step.outcome, RECEIPT_STEP_SKIPPED);
    assert_int_equal(receipt_verification_step_at(result, 8, &step), RECEIPT_OK);
    assert_string_equal(step.name, "environment");
    assert_int_equal(step.outcome, RECEIPT_STEP_SKIPPED);
    assert_int_equal(receipt_verification_step_at(result, 9, &step), RECEIPT_OK);
    assert_string_equal(step.name, "revocation");
    assert_int_equal(step.outcome, RECEIPT_STEP_SKIPPED);
    assert_non_null(strstr(step.detail, "receipts are out of the revocation step's scope"));
    assert_int_equal(receipt_verification_step_at(result, 10, &step), RECEIPT_E_INDEX_OUT_OF_RANGE);
    assert_int_equal(receipt_verification_step_at(result, 0, NULL), RECEIPT_E_NULL_ARGUMENT);
    char *json = NULL;
    assert_int_equal(receipt_verification_to_json(result, RECEIPT_JSON_COMPACT, &json, NULL), RECEIPT_OK);
    assert_non_null(strstr(json, "\"valid\":true"));
    receipt_string_free(json);
    receipt_verification_free(result);

    receipt_verification_t *untouched = (receipt_verification_t *)0x1;
    assert_int_equal(receipt_verify(NULL, receipt, &untouched), RECEIPT_E_NULL_ARGUMENT);
    assert_null(untouched);
    assert_int_equal(receipt_verify(verifier, NULL, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_verification_status(NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_verification_step_count(NULL), 0);
    receipt_verification_free(NULL);
    receipt_free(receipt);
    receipt_verifier_free(verifier);
}

/* The environment step: the minted receipt is a ProductionSandbox one. */
static void test_verify_environment_policy(void **state) {
    (void)state;
    receipt_t *receipt = parse_file("minted.der");
    receipt_environment_t environments[] = {RECEIPT_ENVIRONMENT_SANDBOX, RECEIPT_ENVIRONMENT_PRODUCTION};
    receipt_status_t expected[] = {RECEIPT_OK, RECEIPT_E_ENVIRONMENT_MISMATCH};
    for (int i = 0; i < 2; i++) {
        receipt_verifier_builder_t *builder = NULL;
        assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
        assert_int_equal(receipt_verifier_builder_set_trust(builder, 0), RECEIPT_OK);
        file_t root;
        assert_int_equal(read_file("ca/root.pem", &root), 0);
        assert_int_equal(receipt_verifier_builder_add_anchor(builder, root.bytes, root.length, NULL), RECEIPT_OK);
        free(root.bytes);
        assert_int_equal(receipt_verifier_builder_set_environment(builder, environments[i]), RECEIPT_OK);
        receipt_verifier_t *verifier = NULL;
        assert_int_equal(receipt_verifier_build(builder, &verifier), RECEIPT_OK);
        receipt_verifier_builder_free(builder);
        receipt_verification_t *result = NULL;
        assert_int_equal(receipt_verify(verifier, receipt, &result), expected[i]);
        receipt_step_t step;
        assert_int_equal(receipt_verification_step_at(result, 8, &step), RECEIPT_OK);
        assert_string_equal(step.name, "environment");
        assert_int_equal(step.status, expected[i]);
        receipt_verification_free(result);
        receipt_verifier_free(verifier);
    }
    receipt_free(receipt);
}

/* Functions without a receipt_error_t still give their detail, per thread. */
static void *fail_on_another_thread(void *unused) {
    (void)unused;
    receipt_error_t error;
    assert_int_equal(receipt_last_error(&error), RECEIPT_OK);
    assert_int_equal(error.status, RECEIPT_OK); /* this thread has not failed */
    assert_int_equal(receipt_verifier_builder_set_trust(NULL, 1), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_last_error(&error), RECEIPT_OK);
    assert_int_equal(error.status, RECEIPT_E_NULL_ARGUMENT);
    return NULL;
}

static void test_last_error_gives_the_detail(void **state) {
    (void)state;
    receipt_t *receipt = parse_file("minted.der");
    char *json = NULL;
    assert_int_equal(receipt_entitlements_json(receipt, NULL, 0, "{\"kinds\": 7}", RECEIPT_ENTITLEMENTS_UNVERIFIED,
                                               &json, NULL), RECEIPT_E_BAD_JSON);
    receipt_error_t error;
    assert_int_equal(receipt_last_error(NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_last_error(&error), RECEIPT_OK);
    assert_int_equal(error.status, RECEIPT_E_BAD_JSON);
    assert_true(strlen(error.detail) > 0);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, fail_on_another_thread, NULL), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_int_equal(receipt_last_error(&error), RECEIPT_OK);
    assert_int_equal(error.status, RECEIPT_E_BAD_JSON); /* untouched by the other thread */
    const char *text = NULL;
    assert_int_equal(receipt_get_string(receipt, RECEIPT_FIELD_EXPIRATION_DATE, &text, NULL), RECEIPT_E_ABSENT);
    assert_int_equal(receipt_last_error(&error), RECEIPT_OK);
    assert_int_equal(error.status, RECEIPT_E_BAD_JSON); /* an absent field is an answer, not a failure */
    receipt_free(receipt);
}

static void test_verify_failures_report_their_step(void **state) {
    (void)state;
    receipt_verifier_t *wrong_bundle = test_ca_verifier("com.example.other");
    receipt_t *receipt = parse_file("minted-ber.der");
    receipt_verification_t *result = NULL;
    /* BER is Xcode's form: a receipt the test CA signed in BER is refused as not
     * canonical, and every other step still reports. */
    assert_int_equal(receipt_verify(wrong_bundle, receipt, &result), RECEIPT_E_NOT_CANONICAL);
    receipt_step_t step;
    assert_int_equal(receipt_verification_step_at(result, 0, &step), RECEIPT_OK);
    assert_int_equal(step.outcome, RECEIPT_STEP_FAILED);
    assert_int_equal(step.status, RECEIPT_E_NOT_CANONICAL);
    assert_non_null(strstr(step.detail, "BER"));
    assert_int_equal(receipt_verification_step_at(result, 4, &step), RECEIPT_OK);
    assert_string_equal(step.name, "bundle_id");
    assert_int_equal(step.outcome, RECEIPT_STEP_FAILED);
    assert_int_equal(step.status, RECEIPT_E_BUNDLE_MISMATCH);
    assert_non_null(strstr(step.detail, "com.example.other"));
    receipt_verification_free(result);
    receipt_free(receipt);
    receipt_verifier_free(wrong_bundle);

    receipt_verifier_t *verifier = test_ca_verifier("com.example.minted");
    receipt = parse_file("minted-tampered.der");
    assert_int_equal(receipt_verify(verifier, receipt, NULL), RECEIPT_E_SIGNATURE_INVALID);
    receipt_free(receipt);

    /* The default verifier trusts only Apple's root: a test-CA receipt fails. */
    receipt_verifier_builder_t *builder = NULL;
    receipt_verifier_t *apple = NULL;
    assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_build(builder, &apple), RECEIPT_OK);
    receipt_verifier_builder_free(builder);
    receipt = parse_file("minted.der");
    assert_int_equal(receipt_verify(apple, receipt, NULL), RECEIPT_E_CHAIN_UNTRUSTED);
    receipt_free(receipt);
    receipt_verifier_free(apple);
    receipt_verifier_free(verifier);
}

/* The verdict straight from bytes: the same steps and statuses as parse + verify,
 * parse errors for what is not a receipt, and the first failure in out_error. */
static void test_verify_bytes(void **state) {
    (void)state;
    receipt_verifier_t *verifier = test_ca_verifier("com.example.minted");
    receipt_verifier_t *wrong_bundle = test_ca_verifier("com.example.other");
    file_t minted, b64, tampered;
    assert_int_equal(read_file("minted.der", &minted), 0);
    assert_int_equal(read_file("minted.b64", &b64), 0);
    assert_int_equal(read_file("minted-tampered.der", &tampered), 0);

    receipt_verification_t *result = NULL;
    receipt_error_t error;
    assert_int_equal(receipt_verify_bytes(verifier, minted.bytes, minted.length, &result, &error), RECEIPT_OK);
    assert_int_equal(error.status, RECEIPT_OK);
    assert_string_equal(error.detail, "");
    assert_int_equal(receipt_verification_step_count(result), 10); /* revocation: skipped for receipts */
    receipt_verification_free(result);
    assert_int_equal(receipt_verify_bytes(verifier, b64.bytes, b64.length, NULL, NULL), RECEIPT_OK);

    assert_int_equal(receipt_verify_bytes(wrong_bundle, minted.bytes, minted.length, &result, &error),
                     RECEIPT_E_BUNDLE_MISMATCH);
    assert_int_equal(error.status, RECEIPT_E_BUNDLE_MISMATCH);
    assert_non_null(strstr(error.detail, "com.example.other"));
    assert_int_equal(receipt_verification_status(result), RECEIPT_E_BUNDLE_MISMATCH);
    receipt_verification_free(result);
    assert_int_equal(receipt_verify_bytes(verifier, tampered.bytes, tampered.length, NULL, &error),
                     RECEIPT_E_SIGNATURE_INVALID);

    result = (receipt_verification_t *)0x1;
    const char text[] = "not a receipt";
    receipt_status_t status = receipt_verify_bytes(verifier, text, sizeof text - 1, &result, &error);
    assert_true(status >= 100 && status < 200);
    assert_int_equal(error.status, status);
    assert_true(strlen(error.detail) > 0);
    assert_null(result);
    receipt_t *never = NULL;
    receipt_status_t parse_status = receipt_parse(minted.bytes, minted.length / 2, &never, NULL);
    assert_true(parse_status >= 100 && parse_status < 200);
    assert_int_equal(receipt_verify_bytes(verifier, minted.bytes, minted.length / 2, NULL, &error), parse_status);

    assert_int_equal(receipt_verify_bytes(NULL, minted.bytes, minted.length, NULL, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_verify_bytes(verifier, NULL, 4, NULL, &error), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(error.status, RECEIPT_E_NULL_ARGUMENT);
    free(minted.bytes);
    free(b64.bytes);
    free(tampered.bytes);
    receipt_verifier_free(wrong_bundle);
    receipt_verifier_free(verifier);
}

static void test_verify_real_receipt(void **state) {
    (void)state;
    file_t file = shared_file("receipts/tp__receipt-production.der");
    receipt_t *receipt = parse_ok(&file);
    free(file.bytes);
    receipt_verifier_builder_t *builder = NULL;
    receipt_verifier_t *verifier = NULL;
    assert_int_equal(receipt_verifier_builder_new(&builder), RECEIPT_OK);
    assert_int_equal(receipt_verifier_builder_set_bundle_id(builder, "org.getpure.pure-iphone"), RECEIPT_OK);
    assert_int_equal(receipt_verifier_build(builder, &verifier), RECEIPT_OK);
    receipt_verifier_builder_free(builder);
    assert_int_equal(receipt_verify(verifier, receipt, NULL), RECEIPT_OK);
    receipt_verifier_free(verifier);
    receipt_free(receipt);
}

/* Mutated receipts through every entry point: whatever the bytes, each call
 * returns a status and the process survives. Deterministic (fixed seed). */
static void exercise(const uint8_t *bytes, size_t length, receipt_verifier_t *verifier) {
    receipt_t *receipt = NULL;
    receipt_error_t error;
    /* The verdict from bytes skips the purchases, never a check: whatever a full
     * parse rejects, it must not call valid, and otherwise it agrees with it. */
    receipt_status_t from_bytes = receipt_verify_bytes(verifier, bytes, length, NULL, NULL);
    assert_true(from_bytes == RECEIPT_OK || (from_bytes >= 100 && from_bytes < 300));
    if (receipt_parse(bytes, length, &receipt, &error) != RECEIPT_OK) {
        assert_true(error.status >= 100 && error.status < 200);
        assert_int_not_equal(from_bytes, RECEIPT_OK);
        return;
    }
    char *json = NULL;
    assert_int_equal(receipt_to_json(receipt, RECEIPT_JSON_COMPACT, &json, NULL), RECEIPT_OK);
    receipt_string_free(json);
    for (size_t i = 0; i < receipt_attribute_count(receipt); i++) {
        receipt_attribute_t attribute;
        assert_int_equal(receipt_attribute_at(receipt, i, &attribute), RECEIPT_OK);
    }
    receipt_verification_t *result = NULL;
    receipt_status_t verdict = receipt_verify(verifier, receipt, &result);
    assert_true(verdict == RECEIPT_OK || (verdict >= 200 && verdict < 300));
    assert_int_equal(from_bytes, verdict);
    receipt_verification_free(result);
    receipt_free(receipt);
}

static void test_mutated_receipts_never_crash(void **state) {
    (void)state;
    receipt_verifier_t *verifier = test_ca_verifier("com.example.minted");
    const char *files[] = {"minted.der", "minted-ber.der"};
    srand(20261122);
    for (size_t f = 0; f < 2; f++) {
        file_t file;
        assert_int_equal(read_file(files[f], &file), 0);
        uint8_t *copy = malloc(file.length + 16);
        for (int round = 0; round < 3000; round++) {
            memcpy(copy, file.bytes, file.length);
            size_t length = file.length;
            int edits = 1 + rand() % 4;
            for (int e = 0; e < edits; e++) {
                size_t at = (size_t)rand() % length;
                switch (rand() % 4) {
                case 0: copy[at] ^= (uint8_t)(1u << (rand() % 8)); break;   /* flip a bit */
                case 1: copy[at] = (uint8_t)rand(); break;                   /* replace a byte */
                case 2: copy[at] = (uint8_t)(0x80 | (rand() % 5)); break;    /* a long-form length */
                default: length = at + 1; break;                             /* truncate */
                }
            }
            exercise(copy, length, verifier);
        }
        free(copy);
        free(file.bytes);
    }
    receipt_verifier_free(verifier);
}

/* ------------------------------------------------------------ entitlements and the App Store */

static void test_entitlements_json(void **state) {
    (void)state;
    receipt_t *receipt = parse_file("minted.der");
    receipt_verifier_t *verifier = test_ca_verifier("com.example.minted");
    char *json = NULL;
    /* Minted subscriptions run 2024-03-0N to 2024-04-0N; 2024-03-15 is inside all three. */
    const int64_t march15 = 1710460800000LL;
    assert_int_equal(receipt_entitlements_json(receipt, verifier, march15, NULL, 0, &json, NULL), RECEIPT_OK);
    assert_non_null(strstr(json, "\"active_product_ids\":[\"com.example.product.0\",\"com.example.product.1\",\"com.example.product.2\"]"));
    assert_non_null(strstr(json, "\"kind\":\"auto_renewable\""));
    receipt_string_free(json);
    const int64_t june = 1717200000000LL;
    assert_int_equal(receipt_entitlements_json(receipt, NULL, june, "{}", RECEIPT_ENTITLEMENTS_UNVERIFIED, &json, NULL),
                     RECEIPT_OK);
    assert_non_null(strstr(json, "\"active_product_ids\":[]"));
    assert_non_null(strstr(json, "\"inactive_reason\":\"expired\""));
    receipt_string_free(json);

    assert_int_equal(receipt_entitlements_json(receipt, NULL, june, NULL, 0, &json, NULL), RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_entitlements_json(receipt, verifier, june, "{\"kinds\": 7,", 0, &json, NULL),
                     RECEIPT_E_BAD_JSON);
    assert_int_equal(receipt_entitlements_json(NULL, verifier, june, NULL, 0, &json, NULL), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_entitlements_json(receipt, verifier, june, NULL, 0x40, &json, NULL),
                     RECEIPT_E_INVALID_ARGUMENT);

    /* A verifier that does not trust the test CA: the verdict, no JSON. */
    receipt_verifier_builder_t *builder = NULL;
    receipt_verifier_t *apple = NULL;
    receipt_verifier_builder_new(&builder);
    receipt_verifier_build(builder, &apple);
    receipt_verifier_builder_free(builder);
    json = NULL;
    assert_int_equal(receipt_entitlements_json(receipt, apple, march15, NULL, 0, &json, NULL), RECEIPT_E_CHAIN_UNTRUSTED);
    assert_null(json);
    receipt_verifier_free(apple);
    receipt_verifier_free(verifier);
    receipt_free(receipt);
}

static void test_appstore_request_and_response(void **state) {
    (void)state;
    assert_string_equal(receipt_appstore_endpoint(RECEIPT_ENVIRONMENT_PRODUCTION),
                        "https://buy.itunes.apple.com/verifyReceipt");
    assert_string_equal(receipt_appstore_endpoint(RECEIPT_ENVIRONMENT_SANDBOX),
                        "https://sandbox.itunes.apple.com/verifyReceipt");
    assert_null(receipt_appstore_endpoint((receipt_environment_t)9));

    file_t file;
    assert_int_equal(read_file("minted.der", &file), 0);
    char *json = NULL;
    receipt_error_t error;
    assert_int_equal(receipt_appstore_request(file.bytes, file.length, "secret", 1, &json, NULL, &error), RECEIPT_OK);
    assert_non_null(strstr(json, "\"receipt-data\":\"MII"));
    assert_non_null(strstr(json, "\"password\":\"secret\""));
    assert_non_null(strstr(json, "\"exclude-old-transactions\":true"));
    receipt_string_free(json);
    /* "junk" is valid base64 for three bytes that start no receipt. */
    assert_int_equal(receipt_appstore_request("junk", 4, NULL, 0, &json, NULL, &error), RECEIPT_E_NOT_A_RECEIPT);
    assert_int_equal(error.status, RECEIPT_E_NOT_A_RECEIPT);

    static const struct { const char *body; int64_t status; receipt_next_step_t next; int retryable; } answers[] = {
        {"{\"status\":0,\"environment\":\"Sandbox\"}", 0, RECEIPT_NEXT_ACCEPT, -1},
        {"{\"status\":21007}", 21007, RECEIPT_NEXT_RETRY_IN_SANDBOX, -1},
        {"{\"status\":21008}", 21008, RECEIPT_NEXT_RETRY_IN_PRODUCTION, -1},
        {"{\"status\":21150,\"is-retryable\":true}", 21150, RECEIPT_NEXT_RETRY_LATER, 1},
        {"{\"status\":21003,\"is_retryable\":true}", 21003, RECEIPT_NEXT_REJECT, 1},
        {"{\"status\":21004}", 21004, RECEIPT_NEXT_REJECT, -1},
    };
    for (size_t i = 0; i < sizeof answers / sizeof answers[0]; i++) {
        receipt_appstore_answer_t answer;
        assert_int_equal(receipt_appstore_parse_response(answers[i].body, strlen(answers[i].body), &answer, NULL),
                         RECEIPT_OK);
        assert_int_equal(answer.status, answers[i].status);
        assert_int_equal(answer.next_step, answers[i].next);
        assert_int_equal(answer.is_retryable, answers[i].retryable);
    }
    receipt_appstore_answer_t answer;
    assert_int_equal(receipt_appstore_parse_response("<html>", 6, &answer, &error), RECEIPT_E_BAD_JSON);
    assert_true(strlen(error.detail) > 0);
    assert_int_equal(receipt_appstore_parse_response(NULL, 0, &answer, NULL), RECEIPT_E_NULL_ARGUMENT);

    receipt_verifier_t *verifier = test_ca_verifier("com.example.minted");
    assert_int_equal(receipt_appstore_local_response("junk", 4, verifier, RECEIPT_ENVIRONMENT_SANDBOX, 0, &json, NULL),
                     RECEIPT_OK);
    assert_string_equal(json, "{\"status\":21002}");
    receipt_string_free(json);
    assert_int_equal(receipt_appstore_local_response(file.bytes, file.length, verifier, RECEIPT_ENVIRONMENT_PRODUCTION,
                                                     0, &json, NULL), RECEIPT_OK);
    assert_string_equal(json, "{\"status\":21007}"); /* a sandbox receipt sent to production */
    receipt_string_free(json);
    assert_int_equal(receipt_appstore_local_response(file.bytes, file.length, verifier, RECEIPT_ENVIRONMENT_SANDBOX,
                                                     0, &json, NULL), RECEIPT_OK);
    assert_non_null(strstr(json, "{\"status\":0,\"environment\":\"Sandbox\""));
    assert_non_null(strstr(json, "\"latest_receipt_info\":[{"));
    receipt_string_free(json);
    assert_int_equal(receipt_appstore_local_response(file.bytes, file.length, NULL, RECEIPT_ENVIRONMENT_SANDBOX, 0,
                                                     &json, NULL), RECEIPT_E_NULL_ARGUMENT);
    receipt_verifier_free(verifier);
    free(file.bytes);
}

static receipt_exchange_step_t answer_with(receipt_appstore_exchange_t *exchange, int http, const char *body) {
    receipt_exchange_step_t step;
    assert_int_equal(receipt_appstore_exchange_handle(exchange, http, body, strlen(body), &step), RECEIPT_OK);
    return step;
}

static void test_appstore_exchange_rules(void **state) {
    (void)state;
    file_t file;
    assert_int_equal(read_file("minted.der", &file), 0);
    receipt_appstore_exchange_t *exchange = NULL;
    receipt_error_t error;
    assert_int_equal(receipt_appstore_exchange_new(file.bytes, file.length, "pw", 0, RECEIPT_ENVIRONMENT_PRODUCTION,
                                                   "http://p/verify", "http://s/verify", 1, &exchange, &error),
                     RECEIPT_OK);
    assert_string_equal(receipt_appstore_exchange_url(exchange), "http://p/verify");
    assert_non_null(strstr(receipt_appstore_exchange_body(exchange), "\"password\":\"pw\""));

    receipt_exchange_step_t step = answer_with(exchange, 200, "{\"status\":21007}");
    assert_int_equal(step.action, RECEIPT_EXCHANGE_SEND);
    assert_int_equal(step.delay_ms, 0);
    assert_string_equal(receipt_appstore_exchange_url(exchange), "http://s/verify");
    step = answer_with(exchange, 503, "");
    assert_int_equal(step.action, RECEIPT_EXCHANGE_SEND); /* the one retry */
    assert_true(step.delay_ms > 0);
    step = answer_with(exchange, 200, "{\"status\":21100}");
    assert_int_equal(step.action, RECEIPT_EXCHANGE_UNAVAILABLE); /* retries spent */
    assert_non_null(strstr(step.detail, "after 1 retries"));
    receipt_appstore_exchange_free(exchange);

    assert_int_equal(receipt_appstore_exchange_new(file.bytes, file.length, NULL, 1, RECEIPT_ENVIRONMENT_SANDBOX, NULL,
                                                   NULL, 3, &exchange, NULL), RECEIPT_OK);
    assert_string_equal(receipt_appstore_exchange_url(exchange), "https://sandbox.itunes.apple.com/verifyReceipt");
    step = answer_with(exchange, 200, "{\"status\":21008}");
    assert_string_equal(receipt_appstore_exchange_url(exchange), "https://buy.itunes.apple.com/verifyReceipt");
    step = answer_with(exchange, 200, "{\"status\":21007}"); /* no second switch */
    assert_int_equal(step.action, RECEIPT_EXCHANGE_REJECTED);
    assert_int_equal(step.status, 21007);
    receipt_appstore_exchange_free(exchange);

    assert_int_equal(receipt_appstore_exchange_new(file.bytes, file.length, NULL, 0, RECEIPT_ENVIRONMENT_PRODUCTION, NULL,
                                                   NULL, 3, &exchange, NULL), RECEIPT_OK);
    step = answer_with(exchange, 200, "{\"status\":21003,\"is-retryable\":true}");
    assert_int_equal(step.action, RECEIPT_EXCHANGE_REJECTED); /* never retried */
    step = answer_with(exchange, 200, "<html>");
    assert_int_equal(step.action, RECEIPT_EXCHANGE_UNAVAILABLE);
    step = answer_with(exchange, 0, "connection refused");
    assert_int_equal(step.action, RECEIPT_EXCHANGE_UNAVAILABLE);
    assert_non_null(strstr(step.detail, "connection refused"));
    step = answer_with(exchange, 200, "{\"status\":21006}");
    assert_int_equal(step.action, RECEIPT_EXCHANGE_ACCEPTED);
    assert_int_equal(step.status, 21006);
    assert_int_equal(receipt_appstore_exchange_handle(exchange, 200, NULL, 3, &step), RECEIPT_E_NULL_ARGUMENT);
    assert_int_equal(receipt_appstore_exchange_handle(NULL, 200, "{}", 2, &step), RECEIPT_E_NULL_ARGUMENT);
    receipt_appstore_exchange_free(exchange);
    receipt_appstore_exchange_free(NULL);
    assert_null(receipt_appstore_exchange_url(NULL));

    exchange = (receipt_appstore_exchange_t *)0x1;
    assert_int_equal(receipt_appstore_exchange_new("junk", 4, NULL, 0, RECEIPT_ENVIRONMENT_PRODUCTION, NULL, NULL, 1,
                                                   &exchange, &error), RECEIPT_E_NOT_A_RECEIPT);
    assert_null(exchange);
    assert_int_equal(receipt_appstore_exchange_new(file.bytes, file.length, NULL, 0, RECEIPT_ENVIRONMENT_PRODUCTION, NULL,
                                                   NULL, -1, &exchange, NULL), RECEIPT_E_INVALID_ARGUMENT);
    assert_int_equal(receipt_appstore_exchange_new(file.bytes, file.length, NULL, 0, (receipt_environment_t)7, NULL,
                                                   NULL, 1, &exchange, NULL), RECEIPT_E_INVALID_ARGUMENT);
    free(file.bytes);
}

/* ------------------------------------------------------------ concurrency */

/* One shared verifier, eight threads, a mix of receipts that pass and fail for
 * different reasons: every thread must see exactly the verdicts a serial run saw.
 * RECEIPT_STRESS_ITERATIONS scales it down under valgrind. */
enum { stress_threads = 8, stress_inputs = 4 };

typedef struct {
    receipt_verifier_t *verifier;
    file_t *inputs;
    const receipt_status_t *expected;
    long iterations;
    long mismatches;
} stress_t;

static receipt_status_t verdict_of(receipt_verifier_t *verifier, const file_t *input) {
    receipt_t *receipt = NULL;
    receipt_status_t status = receipt_parse(input->bytes, input->length, &receipt, NULL);
    if (status == RECEIPT_OK) {
        status = receipt_verify(verifier, receipt, NULL);
        receipt_free(receipt);
    }
    return status;
}

static void *stress_worker(void *argument) {
    stress_t *work = argument;
    for (long i = 0; i < work->iterations; i++) {
        int which = (int)(i % stress_inputs);
        if (verdict_of(work->verifier, &work->inputs[which]) != work->expected[which]) work->mismatches++;
    }
    return NULL;
}

static void test_shared_verifier_across_threads(void **state) {
    (void)state;
    const char *names[stress_inputs] = {"minted.der", "minted-ber.der", "minted-tampered.der", "minted.b64"};
    file_t inputs[stress_inputs];
    for (int i = 0; i < stress_inputs; i++) assert_int_equal(read_file(names[i], &inputs[i]), 0);
    receipt_verifier_t *verifier = test_ca_verifier("com.example.minted");
    receipt_status_t expected[stress_inputs];
    for (int i = 0; i < stress_inputs; i++) expected[i] = verdict_of(verifier, &inputs[i]);
    assert_int_equal(expected[0], RECEIPT_OK);
    assert_int_equal(expected[2], RECEIPT_E_SIGNATURE_INVALID);

    const char *scale = getenv("RECEIPT_STRESS_ITERATIONS");
    long iterations = scale ? atol(scale) : 10000;
    pthread_t threads[stress_threads];
    stress_t work[stress_threads];
    for (int t = 0; t < stress_threads; t++) {
        work[t] = (stress_t){verifier, inputs, expected, iterations, 0};
        assert_int_equal(pthread_create(&threads[t], NULL, stress_worker, &work[t]), 0);
    }
    long mismatches = 0;
    for (int t = 0; t < stress_threads; t++) {
        pthread_join(threads[t], NULL);
        mismatches += work[t].mismatches;
    }
    print_message("%d threads x %ld verifications: %ld differ from the serial run\n", stress_threads, iterations,
                  mismatches);
    assert_int_equal(mismatches, 0);
    receipt_verifier_free(verifier);
    for (int i = 0; i < stress_inputs; i++) free(inputs[i].bytes);
}

/* Every minimized input a fuzzer once failed on goes through every entry point again. */
static void test_fuzz_regressions_replay(void **state) {
    (void)state;
    const char *directory = getenv("RECEIPT_FUZZ_REGRESSIONS");
    DIR *listing = opendir(directory ? directory : "../../fuzz/regressions");
    assert_non_null(listing); /* the corpus directory ships with the sources */
    receipt_verifier_t *verifier = test_ca_verifier("com.example.minted");
    int replayed = 0;
    for (struct dirent *entry; (entry = readdir(listing)) != NULL;) {
        if (entry->d_name[0] == '.' || strcmp(entry->d_name, "README.md") == 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", directory ? directory : "../../fuzz/regressions", entry->d_name);
        file_t file;
        assert_int_equal(read_file(path, &file), 0);
        exercise(file.bytes, file.length, verifier);
        free(file.bytes);
        replayed++;
    }
    closedir(listing);
    receipt_verifier_free(verifier);
    print_message("replayed %d fuzz regression inputs\n", replayed);
}

/* ------------------------------------------------------------ real receipts */

static void test_real_receipt_sample(void **state) {
    (void)state;
    file_t file = shared_file("receipts/rc__receiptsample1.der");
    receipt_t *receipt = parse_ok(&file);
    free(file.bytes);
    const char *text = NULL;
    assert_int_equal(receipt_get_string(receipt, RECEIPT_FIELD_BUNDLE_ID, &text, NULL), RECEIPT_OK);
    assert_string_equal(text, "com.revenuecat.sampleapp");
    assert_int_equal(receipt_purchase_count(receipt), 9);
    int64_t value = 0;
    assert_int_equal(receipt_purchase_get_int(receipt, 0, RECEIPT_FIELD_WEB_ORDER_LINE_ITEM_ID, &value), RECEIPT_OK);
    assert_int_equal(value, 1000000054042695LL);
    assert_int_equal(receipt_purchase_get_date(receipt, 0, RECEIPT_FIELD_EXPIRES_DATE, &value), RECEIPT_OK);
    assert_int_equal(value, 1594755700000LL);
    receipt_free(receipt);
}

static void test_real_xcode_receipt_with_offset_dates(void **state) {
    (void)state;
    file_t file = shared_file("receipts/kvitto__storeKitTestReceipt.der");
    receipt_t *receipt = parse_ok(&file);
    free(file.bytes);
    const char *text = NULL;
    int64_t value = 0;
    assert_int_equal(receipt_get_string(receipt, RECEIPT_FIELD_RECEIPT_CREATION_DATE, &text, NULL), RECEIPT_OK);
    assert_string_equal(text, "2020-10-16T14:29:30+0300");
    assert_int_equal(receipt_get_date(receipt, RECEIPT_FIELD_RECEIPT_CREATION_DATE, &value), RECEIPT_OK);
    assert_int_equal(value, 1602847770000LL);
    receipt_free(receipt);
}

static void test_real_edge_files(void **state) {
    (void)state;
    static const struct { const char *file; receipt_status_t status; } cases[] = {
        {"edge/arv__deprecatedSinglesType-legacy-txn-receipt.bin", RECEIPT_E_LEGACY_RECEIPT},
        {"edge/rc__unsupportedReceipt2-legacy-txn-receipt.bin", RECEIPT_E_LEGACY_RECEIPT},
        {"edge/arv__not_a_receipt.bin", RECEIPT_E_BAD_BASE64},
        {"edge/arv__frank4dd-cacert-nonApple-root.der", RECEIPT_E_UNEXPECTED_TAG},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        file_t file = shared_file(cases[i].file);
        receipt_error_t error;
        assert_int_equal(parse_status(file.bytes, file.length, &error), cases[i].status);
        assert_true(strlen(error.detail) > 0);
        free(file.bytes);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_matches_header),
        cmocka_unit_test(test_status_names_match_constants),
        cmocka_unit_test(test_parse_rejects_null_arguments),
        cmocka_unit_test(test_parse_reports_empty_and_whitespace),
        cmocka_unit_test(test_parse_reports_random_bytes),
        cmocka_unit_test(test_parse_reports_length_overflow_and_nesting),
        cmocka_unit_test(test_parse_reports_wrong_outer_oid),
        cmocka_unit_test(test_limit_input_size),
        cmocka_unit_test(test_limit_attribute_count),
        cmocka_unit_test(test_limit_string_length),
        cmocka_unit_test(test_memory_of_empty_purchases),
        cmocka_unit_test(test_memory_of_chunked_payload),
        cmocka_unit_test(test_limit_payload_chunks),
        cmocka_unit_test(test_parse_reports_bad_base64_jws_and_pem),
        cmocka_unit_test(test_parse_detail_is_optional),
        cmocka_unit_test(test_minted_receipt_fields),
        cmocka_unit_test(test_minted_purchases),
        cmocka_unit_test(test_minted_raw_attributes),
        cmocka_unit_test(test_minted_ber_and_base64),
        cmocka_unit_test(test_every_truncation_fails_cleanly),
        cmocka_unit_test(test_field_table),
        cmocka_unit_test(test_json_rendering),
        cmocka_unit_test(test_verifier_builder_arguments),
        cmocka_unit_test(test_verify_environment_policy),
        cmocka_unit_test(test_last_error_gives_the_detail),
        cmocka_unit_test(test_verify_minted_receipt),
        cmocka_unit_test(test_verify_failures_report_their_step),
        cmocka_unit_test(test_verify_bytes),
        cmocka_unit_test(test_verify_real_receipt),
        cmocka_unit_test(test_entitlements_json),
        cmocka_unit_test(test_appstore_request_and_response),
        cmocka_unit_test(test_appstore_exchange_rules),
        cmocka_unit_test(test_mutated_receipts_never_crash),
        cmocka_unit_test(test_fuzz_regressions_replay),
        cmocka_unit_test(test_shared_verifier_across_threads),
        cmocka_unit_test(test_real_receipt_sample),
        cmocka_unit_test(test_real_xcode_receipt_with_offset_dates),
        cmocka_unit_test(test_real_edge_files),
    };
    const char *filter = getenv("RECEIPT_TEST_FILTER"); /* e.g. the ThreadSanitizer run: test_shared_* */
    if (filter && *filter) cmocka_set_test_filter(filter);
    int failed = cmocka_run_group_tests_name("receipt C ABI", tests, NULL, NULL);
    return failed + run_jws_tests() + run_batch_tests() + run_server_api_tests() + run_revocation_tests()
           + run_subscription_tests() + run_webhook_tests();
}
