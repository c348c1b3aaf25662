-- wrk script: POST /v1/solve with the 100 8-puzzles of benches/data/8puzzle100.txt in turn.
-- wrk -t2 -c16 -d20s --latency -s benches/load/solve.lua http://127.0.0.1:8080
-- (wrk counts non-2xx answers itself; every answer here should be 200)
local bodies = {}
for line in io.lines("benches/data/8puzzle100.txt") do
  if not line:match("^#") and #line > 0 then
    local numbers = {}
    for n in line:gmatch("%d+") do numbers[#numbers + 1] = n end
    local tiles = table.concat(numbers, ",", 2, 10)
    bodies[#bodies + 1] = '{"puzzle":{"type":"sliding","tiles":[' .. tiles .. ']}}'
  end
end
local i = 0
request = function()
  i = i % #bodies + 1
  return wrk.format("POST", "/v1/solve", { ["Content-Type"] = "application/json" }, bodies[i])
end
