-- algorithms.lua: after every algorithm's file, in the scripts that run
-- them all: the decision of each GET-based algorithm, indexed by the value
-- of ratelimit.Algorithm (the sliding log, 3, works on its ZSET: logTake).
local algorithms = {[0] = bucket, [1] = window, [2] = swindow}
