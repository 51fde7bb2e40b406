-- wrk script for bench/bench_serve.sh: POSTs the file named by $BODY to every request.
local file = assert(io.open(os.getenv("BODY"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
wrk.headers["Content-Type"] = "application/json"
file:close()
