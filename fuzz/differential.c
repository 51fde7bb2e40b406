/* Differential fuzz target: libreceipt's signature step against OpenSSL's CMS.
 *
 * For every input: if libreceipt says the signature step passed, then OpenSSL's
 * CMS_verify with CMS_NO_SIGNER_CERT_VERIFY (the signature over the content, by
 * the signer the SignerInfo names, with no chain check) must accept the same
 * bytes. A disagreement means libreceipt accepted a signature OpenSSL refuses,
 * and aborts. The converse is not asserted: libreceipt refuses on purpose what
 * OpenSSL accepts (envelopes outside the canonical form, extra signers).
 * Inputs that are not raw DER/BER (base64 text) are left to the other targets. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/cms.h>
#include <openssl/err.h>

#include "receipt.h"

static receipt_verifier_t *verifier(void) {
    static receipt_verifier_t *shared;
    if (!shared) {
        receipt_verifier_builder_t *builder = NULL;
        receipt_verifier_builder_new(&builder);
        receipt_verifier_builder_set_trust(builder, RECEIPT_TRUST_APPLE_ROOT | RECEIPT_TRUST_XCODE_STOREKIT);
        receipt_verifier_build(builder, &shared);
        receipt_verifier_builder_free(builder);
    }
    return shared;
}

static int libreceipt_signature_passes(const uint8_t *data, size_t size) {
    receipt_verification_t *result = NULL;
    receipt_status_t status = receipt_verify_bytes(verifier(), data, size, &result, NULL);
    if (status != RECEIPT_OK && (status < 200 || status >= 300)) {
        if (result != NULL) abort();
        return 0;
    }
    int passed = 0;
    for (size_t i = 0; i < receipt_verification_step_count(result); i++) {
        receipt_step_t step;
        if (receipt_verification_step_at(result, i, &step) != RECEIPT_OK) abort();
        if (strcmp(step.name, "signature") == 0) passed = step.outcome == RECEIPT_STEP_PASSED;
    }
    receipt_verification_free(result);
    return passed;
}

static int openssl_signature_passes(const uint8_t *data, size_t size) {
    BIO *in = BIO_new_mem_buf(data, (int)size);
    CMS_ContentInfo *cms = d2i_CMS_bio(in, NULL);
    int passed = cms != NULL &&
                 CMS_verify(cms, NULL, NULL, NULL, NULL, CMS_NO_SIGNER_CERT_VERIFY | CMS_BINARY) == 1;
    CMS_ContentInfo_free(cms);
    BIO_free(in);
    ERR_clear_error();
    return passed;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2 || size > (1u << 20) || data[0] != 0x30) return 0;
    if (libreceipt_signature_passes(data, size) && !openssl_signature_passes(data, size)) {
        fprintf(stderr, "DISAGREEMENT: libreceipt's signature step passed, OpenSSL's CMS_verify refused\n");
        abort();
    }
    return 0;
}
