/* A customer's whole transaction history from the App Store Server API, every
 * transaction verified, with libcurl as the transport. libreceipt builds each
 * request and reads each answer (retries, Retry-After and paging included);
 * this program only sends bytes.
 *
 *   APPSTORE_ISSUER_ID=… APPSTORE_KEY_ID=… APPSTORE_PRIVATE_KEY_FILE=key.p8 APPSTORE_BUNDLE_ID=… \
 *     ./server_api_history TRANSACTION_ID [BASE_URL [ANCHOR.pem]]
 *
 * Without BASE_URL it asks Apple's sandbox, and trusts Apple Root CA - G3 only.
 * Prints one line per transaction: transactionId productId purchaseDate. */
#define _POSIX_C_SOURCE 200809L
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RECEIPT_SERVER_API
#include <receipt.h>

typedef struct { char *data; size_t length; } buffer_t;

/* The most of an answer read (libreceipt reads no more of one): past it the transfer stops. */
#define MAX_ANSWER_BYTES (4u << 20)

static size_t collect(char *chunk, size_t size, size_t count, void *user) {
    buffer_t *buffer = user;
    if (size * count > MAX_ANSWER_BYTES - buffer->length) return 0; /* curl ends with CURLE_WRITE_ERROR */
    char *grown = realloc(buffer->data, buffer->length + size * count + 1);
    if (!grown) return 0;
    memcpy(grown + buffer->length, chunk, size * count);
    buffer->data = grown;
    buffer->length += size * count;
    grown[buffer->length] = 0;
    return size * count;
}

static char *read_file(const char *path, size_t *length) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    buffer_t buffer = {0};
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) collect(chunk, 1, got, &buffer);
    fclose(f);
    *length = buffer.length;
    return buffer.data;
}

/* Sends the exchange's current request; the answer's status, Retry-After and body. */
static long send_request(CURL *curl, receipt_api_exchange_t *exchange, char *retry_after, size_t retry_after_size,
                         buffer_t *body) {
    struct curl_slist *headers = NULL;
    for (size_t i = 0; i < receipt_api_exchange_header_count(exchange); i++) {
        char line[4096];
        snprintf(line, sizeof line, "%s: %s", receipt_api_exchange_header_name(exchange, i),
                 receipt_api_exchange_header_value(exchange, i));
        headers = curl_slist_append(headers, line);
    }
    size_t length = 0;
    const uint8_t *data = receipt_api_exchange_body(exchange, &length);
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, receipt_api_exchange_url(exchange));
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, receipt_api_exchange_method(exchange));
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    if (length > 0) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, data);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)length);
    }
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
    /* The whole exchange, body included, within 30 s; no redirect followed (the bearer token
       would go with it); the path sent as libreceipt built it (no dot-segment resolution). */
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
    long status = 0;
    retry_after[0] = 0;
    if (curl_easy_perform(curl) == CURLE_OK) {
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
        struct curl_header *header = NULL;
        if (curl_easy_header(curl, "Retry-After", 0, CURLH_HEADER, -1, &header) == CURLHE_OK) {
            snprintf(retry_after, retry_after_size, "%s", header->value);
        }
    }
    curl_slist_free_all(headers);
    return status; /* 0: no answer; the exchange decides whether to send again */
}

/* Prints "transactionId productId purchaseDate" for each member of "transactions". */
static void print_transactions(const char *answer) {
    const char *at = strstr(answer, "\"transactions\":[");
    while (at && (at = strstr(at, "{")) != NULL) {
        const char *id = strstr(at, "\"transactionId\":\""), *product = strstr(at, "\"productId\":\"");
        const char *date = strstr(at, "\"purchaseDate\":"), *end = strstr(at, "}");
        if (!id || !product || !date || !end || id > end) break;
        printf("%.*s %.*s %.*s\n", (int)strcspn(id + 17, "\""), id + 17, (int)strcspn(product + 13, "\""),
               product + 13, (int)strcspn(date + 15, ",}"), date + 15);
        at = end + 1;
        if (*at == ']') break;
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s TRANSACTION_ID [BASE_URL [ANCHOR.pem]] (credentials in APPSTORE_*)\n", argv[0]);
        return 2;
    }
    const char *key_file = getenv("APPSTORE_PRIVATE_KEY_FILE");
    size_t key_length = 0;
    char *key = key_file ? read_file(key_file, &key_length) : NULL;
    if (!key) {
        fprintf(stderr, "APPSTORE_PRIVATE_KEY_FILE: cannot read %s\n", key_file ? key_file : "(unset)");
        return 2;
    }
    receipt_error_t error;
    receipt_api_credentials_t *credentials = NULL;
    if (receipt_api_credentials_new(key, key_length, getenv("APPSTORE_KEY_ID"), getenv("APPSTORE_ISSUER_ID"),
                                    getenv("APPSTORE_BUNDLE_ID"), &credentials, &error) != RECEIPT_OK) {
        fprintf(stderr, "credentials: %s\n", error.detail);
        return 2;
    }
    free(key);
    /* The verifier: Apple's pinned root, or the given anchor only (a mock's test CA). */
    receipt_verifier_builder_t *builder = NULL;
    receipt_verifier_builder_new(&builder);
    receipt_verifier_builder_set_bundle_id(builder, getenv("APPSTORE_BUNDLE_ID"));
    receipt_verifier_builder_set_environment(builder, RECEIPT_ENVIRONMENT_SANDBOX);
    if (argc > 3) {
        size_t length = 0;
        char *anchor = read_file(argv[3], &length);
        receipt_verifier_builder_set_trust(builder, 0);
        if (!anchor || receipt_verifier_builder_add_anchor(builder, anchor, length, &error) != RECEIPT_OK) {
            fprintf(stderr, "anchor %s: unreadable\n", argv[3]);
            return 2;
        }
        free(anchor);
    }
    receipt_verifier_t *verifier = NULL;
    receipt_verifier_build(builder, &verifier);
    receipt_verifier_builder_free(builder);
    receipt_api_client_t *client = NULL;
    if (receipt_api_client_new(credentials, RECEIPT_ENVIRONMENT_SANDBOX, argc > 2 ? argv[2] : NULL, verifier, &client,
                               &error) != RECEIPT_OK) {
        fprintf(stderr, "client: %s\n", error.detail);
        return 2;
    }
    receipt_verifier_free(verifier);
    receipt_api_credentials_free(credentials);

    char arguments[128];
    snprintf(arguments, sizeof arguments, "{\"transactionId\": \"%s\"}", argv[1]);
    receipt_api_exchange_t *exchange = NULL;
    if (receipt_api_exchange_new(client, "get_transaction_history", arguments, strlen(arguments), 3, &exchange,
                                 &error) != RECEIPT_OK) {
        fprintf(stderr, "%s\n", error.detail);
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL *curl = curl_easy_init();
    int result = 0;
    for (;;) {
        buffer_t body = {0};
        char retry_after[128];
        long status = send_request(curl, exchange, retry_after, sizeof retry_after, &body);
        receipt_api_step_t step;
        receipt_status_t verdict = receipt_api_exchange_handle(exchange, (int)status, retry_after[0] ? retry_after : NULL,
                                                               body.data ? body.data : "", body.length, &step, &error);
        free(body.data);
        if (verdict != RECEIPT_OK) { /* an answer that did not verify: nothing of it is used */
            fprintf(stderr, "%s: %s\n", receipt_status_name(verdict), error.detail);
            result = 1;
            break;
        }
        if (step.action == RECEIPT_API_SEND) {
            struct timespec wait = {step.delay_ms / 1000, (step.delay_ms % 1000) * 1000000};
            nanosleep(&wait, NULL);
            continue;
        }
        if (step.action == RECEIPT_API_FAILED) {
            fprintf(stderr, "%s\n", step.detail);
            result = 1;
            break;
        }
        print_transactions(receipt_api_exchange_answer(exchange, NULL));
        int more = 0;
        if (receipt_api_exchange_next_page(exchange, &more, &error) != RECEIPT_OK) {
            fprintf(stderr, "%s\n", error.detail);
            result = 1;
            break;
        }
        if (!more) break;
    }
    curl_easy_cleanup(curl);
    curl_global_cleanup();
    receipt_api_exchange_free(exchange);
    receipt_api_client_free(client);
    return result;
}
