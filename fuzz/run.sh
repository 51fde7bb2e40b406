#!/usr/bin/env bash
# Coverage-guided fuzzing of the C ABI with libFuzzer and AddressSanitizer.
#   fuzz/run.sh SECONDS [TARGET...]     targets: parse verify json base64 response jws jsonreader apianswer
#                                       ocspanswer differential
#                                       (default: all)
# differential: libreceipt's signature step against OpenSSL's CMS_verify (fuzz/differential.c).
# Builds an instrumented libreceipt into .build-fuzz, seeds each target with the
# minted vectors, fuzz/regressions and, when present, ../shared's real receipts,
# and fails on the first crash, leak or timeout. Findings land in build/fuzz/findings.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
targets=("${@:-parse verify json base64 response jws jsonreader apianswer ocspanswer differential}")
read -r -a targets <<< "${targets[*]}"
out=build/fuzz
mkdir -p $out/findings

# -assert-config Debug keeps assert() in the optimised build, so fuzzing also checks
# that the container's straight walk agrees with the general reader.
RECEIPT_INSTRUMENTED=1 swift build -c release --product receipt --scratch-path .build-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -assert-config -Xswiftc Debug 2>&1 | grep -E "error|Compiling|Build" | tail -1
scripts/replace-file.sh .build-fuzz/release/libreceipt.so $out/libreceipt.so.1
ln -sf libreceipt.so.1 $out/libreceipt.so
# A finding must end the run: Swift's own crash backtracer can hang under ASan.
export SWIFT_BACKTRACE=enable=no
export LD_LIBRARY_PATH=$PWD/$out:/opt/swift/usr/lib/swift/linux:$(dirname "$(command -v swift)")/../lib/swift/linux

seeds=$out/seeds
if [ ! -d $seeds ]; then
  mkdir -p $seeds
  python3 tools/mint_receipt.py ca $out/ca >/dev/null
  python3 tools/mint_receipt.py receipt $seeds/minted-3.der --ca $out/ca --purchases 3
  python3 tools/mint_receipt.py receipt $seeds/minted-ber-sha1.der --ca $out/ca --purchases 2 --ber --digest sha1
  python3 tools/mint_receipt.py receipt $seeds/minted-empty.der --ca $out/ca --purchases 0
fi
jws_seeds=$out/jws-seeds
if [ ! -d $jws_seeds ]; then
  mkdir -p $jws_seeds
  python3 tools/mint_jws.py ca $out/jws-ca
  for kind in transaction renewal_info notification; do
    python3 tools/mint_jws.py sign $jws_seeds/minted-$kind.jws --ca $out/jws-ca --kind $kind
  done
  python3 tools/mint_jws.py sign $jws_seeds/minted-crit.jws --ca $out/jws-ca --variant crit
  # Notifications that carry a signed transaction and renewal info (a subscription's story).
  python3 tools/mint_jws.py notifications $jws_seeds/story --ca $out/jws-ca --jws >/dev/null
  mv $jws_seeds/story/*.jws $jws_seeds/ && rmdir $jws_seeds/story
fi
# The App Store Server API answers: pages of minted transactions and notifications, Apple's errors.
api_seeds=$out/api-seeds
if [ ! -d $api_seeds ]; then
  mkdir -p $api_seeds
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $out/api-key.pem 2>/dev/null
  python3 - "$jws_seeds" "$api_seeds" <<'SEEDS'
import json, pathlib, sys
jws, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
token = lambda kind: (jws / f"minted-{kind}.jws").read_text().strip()
pages = {"history.json": {"revision": "r1", "hasMore": True, "signedTransactions": [token("transaction")] * 2},
         "notifications.json": {"paginationToken": "p1", "hasMore": True,
                                "notificationHistory": [{"signedPayload": token("notification"), "sendAttempts": []}]},
         "statuses.json": {"data": [{"lastTransactions": [{"status": 1, "signedTransactionInfo": token("transaction"),
                                                           "signedRenewalInfo": token("renewal_info")}]}]},
         "error.json": {"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}}
for name, page in pages.items():
    (out / name).write_text(json.dumps(page))
(out / "retry-after.txt").write_text("Wed, 21 Oct 2015 07:28:00 GMT")
SEEDS
fi
# OCSP answers: a chain whose certificates name responders, and canned answers as seeds.
ocsp_seeds=$out/ocsp-seeds
if [ ! -d $ocsp_seeds ]; then
  mkdir -p $ocsp_seeds
  python3 tools/mint_jws.py ca $out/ocsp-ca --ocsp-url http://127.0.0.1:9/leaf --intermediate-ocsp-url http://127.0.0.1:9/i >/dev/null
  python3 tools/mint_jws.py sign $out/ocsp-ca/ocsp.jws --ca $out/ocsp-ca
  python3 Tests/c/make_ocsp_answers.py $out/ocsp-ca
  cp $out/ocsp-ca/*.der $ocsp_seeds/
fi
export RECEIPT_FUZZ_OCSP_DIR=$PWD/$out/ocsp-ca
export RECEIPT_FUZZ_API_KEY=$PWD/$out/api-key.pem RECEIPT_FUZZ_JWS_ROOT=$PWD/$out/jws-ca/root.pem
extra=()
[ -d ../shared/fixtures/apple/receipts ] && extra+=(../shared/fixtures/apple/receipts ../shared/fixtures/apple/edge)
jws_extra=()
jws_files=()
if [ -d ../shared/fixtures/jws/apple ]; then
  jws_extra+=(../shared/fixtures/jws/apple ../shared/fixtures/jws/xcode)
  jws_files+=(../shared/fixtures/jws/apple/*.jws ../shared/fixtures/jws/xcode/*.jws)
fi

declare -A number=([parse]=1 [verify]=2 [json]=3 [base64]=4 [response]=5 [jws]=6 [jsonreader]=7 [apianswer]=8 [ocspanswer]=9)
# Builds and runs one target; returns 1 on a finding.
fuzz_one() {
  local target=$1 source corpus inputs f
  if [ "$target" = differential ]; then
    source=(fuzz/differential.c -lcrypto)
  else
    source=(-DFUZZ_TARGET=${number[$target]} fuzz/fuzz_targets.c)
  fi
  clang -g -O1 -fsanitize=fuzzer,address -IInclude "${source[@]}" \
    -L$out -lreceipt -fuse-ld=lld -o $out/fuzz_$target 2>&1 | grep -v "Cannot export" || true
  corpus=$out/corpus-$target
  mkdir -p $corpus
  if [ "$target" = response ] && [ -z "$(ls -A $corpus)" ]; then  # JSON seeds for the JSON target
    printf '{"status":0,"environment":"Sandbox","is-retryable":false,"latest_receipt_info":[{"transaction_id":"1"}]}' > $corpus/ok.json
    printf '{"status":21007}' > $corpus/redirect.json
    printf '{"kinds":{"a":"consumable"},"non_renewing_durations_ms":{"s":1000}}' > $corpus/catalog.json
    printf '{"status":21199,"is_retryable":1,"pending_renewal_info":[{"expiration_intent":"1","auto_renew_status":"0"}]}' > $corpus/retry.json
  fi
  case $target in
    jws) inputs=($jws_seeds fuzz/regressions "${jws_extra[@]}") ;;
    apianswer) inputs=($api_seeds) ;;
    ocspanswer) inputs=($ocsp_seeds) ;;
    jsonreader)  # the decoded payloads of the JWS seeds
      if [ -z "$(ls -A $corpus)" ]; then
        for f in $jws_seeds/*.jws "${jws_files[@]}"; do
          python3 -c "import base64,sys; p=open(sys.argv[1]).read().strip().split('.')[1]; sys.stdout.buffer.write(base64.urlsafe_b64decode(p+'='*(-len(p)%4)))" \
            "$f" > $corpus/$(basename "$f").json || true
        done
      fi
      inputs=() ;;
    *) inputs=($seeds fuzz/regressions "${extra[@]}") ;;
  esac
  echo "fuzz: $target for ${seconds}s"
  $out/fuzz_$target -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=200000 \
    -artifact_prefix=$out/findings/$target- -print_final_stats=1 \
    $corpus "${inputs[@]}" > $out/fuzz_$target.log 2>&1 || true
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss|==[0-9]+==ERROR|SUMMARY)" $out/fuzz_$target.log \
    | sed "s/^/fuzz: $target: /" || true
  if grep -qE "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|SUMMARY: |deadly signal|DISAGREEMENT" $out/fuzz_$target.log; then
    echo "fuzz: $target FOUND A PROBLEM; see $out/fuzz_$target.log and $out/findings/"
    return 1
  fi
}

# As many targets at once as there are cores (FUZZ_JOBS), each on its own: ten targets of 15 s
# take 75 s of a CI run on two cores instead of 150. The first finding fails the run once the
# targets already started have ended.
jobs_at_once=${FUZZ_JOBS:-$(nproc)}
running=0 found=0
for target in "${targets[@]}"; do
  if [ $running -ge "$jobs_at_once" ]; then
    wait -n || found=1
    running=$((running - 1))
  fi
  [ $found -eq 0 ] || break
  fuzz_one "$target" &
  running=$((running + 1))
done
while [ $running -gt 0 ]; do
  wait -n || found=1
  running=$((running - 1))
done
[ $found -eq 0 ] || exit 1
echo "fuzz: ${targets[*]}: no crash, leak or timeout in ${seconds}s each"
