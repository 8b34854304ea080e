-- wrk script for bench/run.ts. Reads the request from the environment (so the key is not on
-- the command line): BENCH_METHOD, BENCH_KEY (optional), BENCH_BODY (optional), and
-- BENCH_COUNT (optional: stop after that many answers, give or take the requests in flight).
-- Counts answers by status class in each thread, and prints one JSON line when done.

wrk.method = os.getenv("BENCH_METHOD") or "GET"
local key = os.getenv("BENCH_KEY")
if key and key ~= "" then wrk.headers["Authorization"] = "Bearer " .. key end
local body = os.getenv("BENCH_BODY")
if body and body ~= "" then
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
end

local count = tonumber(os.getenv("BENCH_COUNT") or "") or 0

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  ok, limited, other = 0, 0, 0
end

-- Defining response() makes wrk hand every status to Lua: the price of telling 429s apart.
function response(status, headers, body)
  if status >= 200 and status < 300 then
    ok = ok + 1
  elseif status == 429 then
    limited = limited + 1
  else
    other = other + 1
  end
  if count > 0 and ok + limited + other >= count then wrk.thread:stop() end
end

function done(summary, latency, requests)
  local counts = { ok = 0, limited = 0, other = 0 }
  for _, thread in ipairs(threads) do
    counts.ok = counts.ok + thread:get("ok")
    counts.limited = counts.limited + thread:get("limited")
    counts.other = counts.other + thread:get("other")
  end
  local errors = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"ok":%d,"limited":%d,"other":%d,"socketErrors":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    counts.ok, counts.limited, counts.other,
    errors.connect + errors.read + errors.write + errors.timeout))
end
