-- wrk script for tests/bench/bench_webhook.sh: POSTs one AdmissionReview
-- (the file named by $KP_BENCH_BODY) to the path in $KP_BENCH_PATH over
-- keep-alive connections, and prints one machine-readable line:
--   RESULT requests=N rps=X p50_ms=X p99_ms=X non2xx=N errors=N
-- (The shell script checks once with curl that the answer is the expected
-- one; a per-response Lua hook here would slow wrk down more than the server.)
wrk.method = "POST"
wrk.path = os.getenv("KP_BENCH_PATH") or "/validate"
wrk.headers["Content-Type"] = "application/json"

local f = assert(io.open(os.getenv("KP_BENCH_BODY"), "rb"))
wrk.body = f:read("*a")
f:close()

done = function(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d rps=%.0f p50_ms=%.3f p99_ms=%.3f non2xx=%d errors=%d\n",
    summary.requests, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.status, e.connect + e.read + e.write + e.timeout))
end
