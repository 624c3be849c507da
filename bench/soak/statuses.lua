-- wrk script: counts responses by status; with MODE=miss each request has a unique key.
local threads = {}
local n = 0
function setup(thread)
  n = n + 1
  thread:set("id", n)
  table.insert(threads, thread)
end
function init(args)
  counts = {}
  seq = 0
  mode = args[1] or "hit"
end
function request()
  seq = seq + 1
  if mode == "miss" then
    return wrk.format(nil, string.format(
      "/thumb?src=landscape.jpg&w=%d&h=120&mode=fill&format=jpeg&bg=%06x", 100 + seq % 200, id * 1000000 + seq))
  end
  local srcs = {"landscape.jpg", "portrait.jpg", "logo.png", "square.webp"}
  return wrk.format(nil, string.format("/thumb?src=%s&w=%d&mode=fill&ratio=4:3", srcs[seq % 4 + 1], 100 + seq % 5 * 20))
end
function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
end
function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for status, c in pairs(t:get("counts")) do total[status] = (total[status] or 0) + c end
  end
  for status, c in pairs(total) do io.write(string.format("status %d %d\n", status, c)) end
end
