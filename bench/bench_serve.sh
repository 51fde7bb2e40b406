#!/usr/bin/env bash
# The load row of `make bench`: `receipt serve` under wrk (64 connections, a few seconds) on
# POST /verifyReceipt with one receipt, next to the in-process warm rate of the same receipt on
# one core, measured in the same run (before and after the load). wrk shares the machine with the server.
#   bench/bench_serve.sh RECEIPT [ANCHOR.pem]
# Target: HTTP requests/s >= 0.5 x the in-process warm verdict rate, and no errors.
set -euo pipefail
receipt=$1
anchor=${2:-}
cli=build/bin/receipt
seconds=${SERVE_BENCH_SECONDS:-5}
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT

anchors=()
[ -n "$anchor" ] && anchors=(--anchor "$anchor")
# In-process, one core: the warm verdict (verify_warm) and the whole answer the server gives (appstore_answer_warm).
$cli bench "${anchors[@]}" --json "$receipt" > "$work/inprocess.json"
python3 -c "import base64,json,sys; print(json.dumps({'receipt-data': base64.b64encode(open(sys.argv[1],'rb').read()).decode()}))" \
  "$receipt" > "$work/body.json"

$cli serve --port 0 "${anchors[@]}" > "$work/serve.out" 2> "$work/serve.err" &
server=$!
for _ in $(seq 50); do grep -q listening "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$work/serve.out")
[ -n "$port" ] || { cat "$work/serve.err"; exit 1; }
# The endpoint the receipt belongs to: production, or sandbox when production answers 21007.
answer() { python3 -c "import json,sys,urllib.request as u; print(json.load(u.urlopen(u.Request(sys.argv[1], open(sys.argv[2],'rb').read())))['status'])" \
  "http://127.0.0.1:$port$1" "$work/body.json"; }
path=/verifyReceipt
status=$(answer $path)
[ "$status" = 21007 ] && { path=/sandbox/verifyReceipt; status=$(answer $path); }
[ "$status" = 0 ] || { echo "the server answered status $status for $receipt; timing it would mislead"; exit 1; }

BODY=$work/body.json wrk -t2 -c64 -d${seconds}s --latency -s bench/wrk_post.lua "http://127.0.0.1:$port$path" > "$work/wrk.out"
# The framework's empty request under the same load: the floor's other half.
wrk -t2 -c64 -d${seconds}s --latency "http://127.0.0.1:$port/healthz" > "$work/wrk-empty.out"
# The same receipt's verdict alone over HTTP: /v1/verify, the raw bytes in, the step report out.
BODY=$receipt wrk -t2 -c64 -d${seconds}s --latency -s bench/wrk_post.lua "http://127.0.0.1:$port/v1/verify" > "$work/wrk-verdict.out"
kill -TERM $server; wait $server
# Again after the load: this machine's speed drifts, so the in-process rates are the mean of both.
$cli bench "${anchors[@]}" --json "$receipt" > "$work/inprocess-after.json"

python3 - "$work/inprocess.json" "$work/wrk.out" "$receipt" "$path" "$work/wrk-verdict.out" "$work/inprocess-after.json" \
  "$work/wrk-empty.out" <<'PY'
import json, re, sys
CORES = 2
before, after = json.load(open(sys.argv[1])), json.load(open(sys.argv[6]))
inprocess = {key: (before[key] + after[key]) / 2 for key in ("verify_warm", "appstore_answer_warm")}
text = open(sys.argv[2]).read()
verdict_text = open(sys.argv[5]).read()
rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
verdict_rate = float(re.search(r"Requests/sec:\s+([\d.]+)", verdict_text).group(1))
def latency(p, text=text):
    value, unit = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)$", text, re.M).groups()
    return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
def errors(text):
    non2xx = int((re.search(r"Non-2xx or 3xx responses: (\d+)", text) or [0, 0])[1])
    return non2xx, sum(map(int, re.findall(r"(?:connect|read|write|timeout) (\d+)", text)))
non2xx, socket_errors = errors(text)
verdict = 1e9 / inprocess["verify_warm"]
answer = 1e9 / inprocess["appstore_answer_warm"]
print(f"{sys.argv[3]} on POST {sys.argv[4]}, 64 connections:")
print(f"  HTTP {rate:,.0f} req/s, p50 {latency(50):.2f} ms, p99 {latency(99):.2f} ms, "
      f"errors {non2xx} non-2xx + {socket_errors} socket")
print(f"  in-process, one core (mean of before and after the load: {1e9 / before['verify_warm']:,.0f} and "
      f"{1e9 / after['verify_warm']:,.0f}/s): warm verdict {verdict:,.0f}/s, whole verifyReceipt answer {answer:,.0f}/s")
ratio = rate / verdict
print(f"  HTTP / in-process warm verdict = {ratio:.2f} (target >= 0.5): {'met' if ratio >= 0.5 else 'NOT met'}; "
      f"HTTP / in-process answer = {rate / answer:.2f}")
# The composition floor: the server's cost of an empty request under this load (GET /healthz,
# measured above) plus the in-process answer spread over the cores; no server can answer faster.
empty = float(re.search(r"Requests/sec:\s+([\d.]+)", open(sys.argv[7]).read()).group(1))
floor = 1 / (1 / empty + 1 / (answer * CORES))
print(f"  floor: empty GET /healthz under the same load {empty:,.0f} req/s + the answer over {CORES} cores "
      f"= {floor:,.0f} req/s; HTTP / floor = {rate / floor:.2f}")
v_non2xx, v_socket = errors(verdict_text)
print(f"  POST /v1/verify (verdict only): {verdict_rate:,.0f} req/s, p50 {latency(50, verdict_text):.2f} ms, "
      f"p99 {latency(99, verdict_text):.2f} ms, errors {v_non2xx} + {v_socket}; / in-process warm verdict = "
      f"{verdict_rate / verdict:.2f}")
PY
