#!/usr/bin/env bash
# `make bench`: every figure of the performance targets in one run, on the real
# receipts in ../shared when present and on receipts minted here always.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/bench
lib=build/lib
export LD_LIBRARY_PATH=$PWD/$lib
mint="python3 tools/mint_receipt.py"
mkdir -p $out
cc -O2 -std=c11 -Wall -Wextra -Ibuild/include -o $out/bench bench/bench.c -L$lib -lreceipt -lcrypto -lpthread

if [ ! -f $out/ca/root.pem ]; then $mint ca $out/ca >/dev/null; fi
for n in 4 100 1000 3000 10000; do
  [ -f $out/minted-$n.der ] || $mint receipt $out/minted-$n.der --ca $out/ca --purchases $n
done
[ -f $out/minted-sha1.der ] || $mint receipt $out/minted-sha1.der --ca $out/ca --purchases 1 --digest sha1

shared=../shared/fixtures/apple/receipts
real=()
if [ -d $shared ]; then
  real=($shared/tp__receipt-production.der $shared/rc__receiptsample1.der $shared/arv__hannes_mac_mindnode_receipt.der
        $shared/tp__receipt-xcode.der $shared/tp__receipt-sandbox-legacy.der)
else
  echo "(../shared is absent: only minted receipts)"
fi

echo "== libreceipt against the raw OpenSSL path and the C walk (median us, min-max)"
[ ${#real[@]} -gt 0 ] && $out/bench "${real[@]}"
$out/bench --anchor $out/ca/root.pem $out/minted-4.der $out/minted-sha1.der

echo
echo "== Python (ctypes binding) against Apple's app-store-server-library"
python3 -c "import appstoreserverlibrary" 2>/dev/null || python3 -m pip install -q app-store-server-library 2>/dev/null || true
RECEIPT_LIBRARY=$PWD/$lib/libreceipt.so.1 PYTHONPATH=bindings/python python3 bench/bench_python.py \
  "${real[@]}" $out/minted-4.der

echo
echo "== StoreKit 2 JWS: warm verification against the ES256 floor (target <= 1.3x)"
mint_jws="python3 tools/mint_jws.py"
[ -f $out/jws-ca/root.pem ] || $mint_jws ca $out/jws-ca
[ -f $out/minted.jws ] || $mint_jws sign $out/minted.jws --ca $out/jws-ca
jws_shared=../shared/fixtures/jws
jws_real=()
[ -d $jws_shared/apple ] && jws_real=($jws_shared/apple/spb__02_transaction.jws $jws_shared/apple/hound__01_transaction.jws
                                      $jws_shared/apple/spb__03_renewalInfo.jws)
[ ${#jws_real[@]} -gt 0 ] && $out/bench --jws "${jws_real[@]}"
$out/bench --jws --anchor $out/jws-ca/root.pem $out/minted.jws

echo
echo "== Revocation: warm JWS verification, hard with fresh cached OCSP answers, against off (target <= 1.05x)"
if [ ! -f $out/ocsp-ca/ocsp.jws ]; then
  rm -rf $out/ocsp-ca
  $mint_jws ca $out/ocsp-ca --ocsp-url http://127.0.0.1:9/leaf --intermediate-ocsp-url http://127.0.0.1:9/i >/dev/null
  $mint_jws sign $out/ocsp-ca/ocsp.jws --ca $out/ocsp-ca
fi
python3 Tests/c/make_ocsp_answers.py $out/ocsp-ca   # fresh answers (they hold 30 days)
cc -O2 -std=c11 -Wall -Wextra -Ibuild/include -o $out/bench_revocation bench/bench_revocation.c -L$lib -lreceipt
$out/bench_revocation $out/ocsp-ca

echo
echo "== Python verify_jws against Apple's SignedDataVerifier (online checks off; target >= 40x)"
[ ${#jws_real[@]} -gt 0 ] && RECEIPT_LIBRARY=$PWD/$lib/libreceipt.so.1 PYTHONPATH=bindings/python:bench \
  python3 bench/bench_python_jws.py $jws_shared/certs/AppleRootCA-G3.pem ${jws_real[0]}
RECEIPT_LIBRARY=$PWD/$lib/libreceipt.so.1 PYTHONPATH=bindings/python:bench \
  python3 bench/bench_python_jws.py $out/jws-ca/root.pem $out/minted.jws

echo
echo "== A notification with its nested JWS, a verifier made per request against one reused (target fresh/warm <= 3), C, Swift, Python and Apple's Python library"
[ -d $out/notifications ] || python3 tools/mint_jws.py notifications $out/notifications --ca $out/jws-ca --jws >/dev/null
minted_notification=$(ls $out/notifications/*.jws | head -1)
if [ ${#jws_real[@]} -gt 0 ]; then
  notification=$jws_shared/apple/spb__01_notification_DID_RENEW.jws notification_root=$jws_shared/certs/AppleRootCA-G3.pem
  $out/bench --jws $notification
else
  notification=$minted_notification notification_root=$out/jws-ca/root.pem
  $out/bench --jws --anchor $notification_root $notification
fi
RECEIPT_LIBRARY=$PWD/$lib/libreceipt.so.1 PYTHONPATH=bindings/python python3 bench/bench_fresh_verifier.py \
  $notification_root $notification $([ ${#jws_real[@]} -gt 0 ] && echo --cli build/bin/receipt)

echo
echo "== App Store Server API: one page of 20 signed transactions, Python, against Apple's client + SignedDataVerifier (target >= 20x)"
RECEIPT_LIBRARY=$PWD/$lib/libreceipt.so.1 PYTHONPATH=bindings/python:bench python3 bench/bench_server_api.py $out

echo
echo "== Spark local[2] against its composition floor: identity mapInArrow + verification over the cores (target >= 0.85x)"
if [ ${#real[@]} -gt 0 ]; then
  RECEIPT_LIBRARY=$PWD/$lib/libreceipt.so.1 PYTHONPATH=bindings/python python3 bench/bench_spark.py 150000 - \
    ${real[0]} ${real[1]} ${real[2]} 2>/dev/null
else
  RECEIPT_LIBRARY=$PWD/$lib/libreceipt.so.1 PYTHONPATH=bindings/python python3 bench/bench_spark.py 150000 \
    $out/ca/root.pem $out/minted-4.der 2>/dev/null
fi

echo
echo "== receipt serve under wrk, against the in-process warm rate on one core (target >= 0.5x)"
if [ ${#real[@]} -gt 0 ]; then bench/bench_serve.sh ${real[0]}; else bench/bench_serve.sh $out/minted-4.der $out/ca/root.pem; fi

echo
echo "== Routing: receipt serve's route table beside Hummingbird's Router, in-process (three runs; nanoseconds per request)"
for round in 1 2 3; do build/bin/receipt bench-routes --samples 7; done

echo
echo "== receipt serve --retention-rules: realtime requests under wrk against their composition floor (target >= 0.85x)"
bench/bench_realtime.sh $out/jws-ca

echo
echo "== receipt serve --store: notifications ingested/s, and reads under wrk against their composition floors (target >= 0.85x)"
RECEIPT_LIBRARY=$PWD/$lib/libreceipt.so.1 PYTHONPATH=bindings/python python3 bench/bench_store.py $out

echo
echo "== receipt serve --store: ingest with a webhook on, 8 clients, medians of rounds (target >= 1,500 notifications/s, #59)"
RECEIPT_LIBRARY=$PWD/$lib/libreceipt.so.1 PYTHONPATH=bindings/python python3 bench/bench_ingest.py $out/ingest

echo
echo "== receipt import: 100,000 ids from the mock App Store Server API against the time its budget of calls allows (target <= 1.10x, #59)"
python3 bench/bench_import.py $out

echo
echo "== receipt serve --webhook: ingest with two webhooks against without (target >= 0.8x), and notification-to-webhook latency"
RECEIPT_LIBRARY=$PWD/$lib/libreceipt.so.1 PYTHONPATH=bindings/python python3 bench/bench_webhooks.py $out

echo
echo "== receipt serve --store: a notification's cost against the history it joins (one account, one subscription; target >= 0.8x of fresh)"
RECEIPT_LIBRARY=$PWD/$lib/libreceipt.so.1 PYTHONPATH=bindings/python python3 bench/bench_ingest_history.py $out/ingest-history

echo
echo "== receipt serve --store: the figures (/v1/stats, /dashboard) on a synthetic store (targets: 1 s a figure, 200 ms the page, at 1,000,000 subscriptions)"
python3 bench/bench_figures.py

echo
echo "== receipt audit: the JWS of a store verified, its columns compared, its figures recomputed, against in-process verification (target >= 0.8x, #60)"
python3 bench/bench_audit.py $out

echo
echo "== Two threads sharing one verifier (warm)"
$out/bench --threads ${real[0]:-$out/minted-4.der} $([ ${#real[@]} -gt 0 ] || echo --anchor $out/ca/root.pem)

echo
echo "== Parse time against purchases (minted), and memory"
$out/bench --scaling $out/minted-100.der $out/minted-1000.der $out/minted-3000.der $out/minted-10000.der
for n in 100 10000; do $out/bench --memory $out/minted-4.der $out/minted-$n.der; done
[ ${#real[@]} -gt 0 ] && $out/bench --memory $out/minted-4.der $shared/tp__receipt-sandbox-legacy.der
python3 bench/empty_purchases.py $out/empty-200000.der 200000
$out/bench --memory $out/minted-4.der $out/empty-200000.der

echo
echo "== Padding with certificates: verification cost per byte against a genuine receipt of the same size"
RECEIPT_LIBRARY=$PWD/$lib/libreceipt.so.1 PYTHONPATH=bindings/python python3 bench/padded_certificates.py \
  $out/minted-10000.der $out/minted-4.der $out/ca/root.pem

echo
echo "== Instruction counts (callgrind; repeatable where the timings above are noisy)"
if command -v valgrind >/dev/null; then
  for f in "${real[@]}"; do bench/instructions.sh "$f"; done
  bench/instructions.sh --anchor $out/ca/root.pem $out/minted-4.der
else
  echo "(valgrind is not installed: skipped)"
fi

echo
echo "== receipt bench --json (the CLI's own figures, ns)"
build/bin/receipt bench --json --samples 5 ${real[0]:-} --anchor $out/ca/root.pem $out/minted-4.der
build/bin/receipt bench --json --samples 5 ${jws_real[0]:-} --anchor $out/jws-ca/root.pem $out/minted.jws
