//! The Lua scripts of the shared guards: one per guard kind, each decision
//! one call. Every script reads the server's `TIME` (microseconds) and
//! answers in microseconds from it; numbers are written with `%d` or
//! `%.17g`, never Lua's default `%.14g`, which would round a time.
use std::sync::LazyLock;

use ::redis::Script;

/// What every script starts with: effects replication (the default from
/// Redis 5, asked for on older servers, where `TIME` before a write needs
/// it), the server's now, and number formatting that keeps every digit.
const PRELUDE: &str = r"
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function d(x) return string.format('%d', x) end
local function g(x) return string.format('%.17g', x) end
-- A number no script writes (NaN, an infinity) reads as missing, so a key
-- holding one starts afresh rather than spreading it to every answer.
local function num(x)
  local n = tonumber(x)
  if n and n == n and n > -math.huge and n < math.huge then return n end
  return nil
end
-- The longest time ahead a script stores (366 days, as the guards' own
-- `LONGEST_HOLD`): a time read or asked beyond it is held to it.
local far = now + 31622400000000
local function load(key)
  local flat = redis.call('HGETALL', key)
  local s = {}
  for i = 1, #flat, 2 do s[flat[i]] = num(flat[i + 1]) end
  return s
end
";

/// `KEYS[1]`: the tokens left (a string; missing: full).
/// `ARGV`: op (1 take, 0 refund, 2 read), amount, capacity, ttl ms.
/// Answers `{taken (1 or 0), tokens left}`.
const BUDGET: &str = r"
local cap = tonumber(ARGV[3])
local b = num(redis.call('GET', KEYS[1])) or cap
if b > cap then b = cap end
if b < 0 then b = 0 end
local op = ARGV[1]
local ok = 1
if op == '2' then return {1, b} end
if op == '1' then
  local cost = tonumber(ARGV[2])
  if b >= cost then b = b - cost else ok = 0 end
else
  b = math.min(cap, b + tonumber(ARGV[2]))
end
redis.call('SET', KEYS[1], d(b), 'PX', ARGV[4])
return {ok, b}
";

/// `KEYS[1]`: a hash, `u` closed until, `r` the next waiter's turn (µs of
/// server time). `ARGV`: op (0 read, 1 close, 2 turn), a, b, c, idle ms,
/// recheck (1: the waiter asks again after its turn's wait).
/// - close(hint µs): closed until now + hint unless later already.
/// - turn(planned µs, spacing µs, longest wait µs): a waiter's turn; a
///   waiter asked again goes once the cooldown is open, taking no other.
///
/// Answers read and close `{closed for, queued for}`; turn `{code, wait,
/// closed for}`, code 2 open (go), 1 wait, 0 too long (stop).
const COOLDOWN: &str = r"
local u = math.min(num(redis.call('HGET', KEYS[1], 'u')) or 0, far)
local r = math.min(num(redis.call('HGET', KEYS[1], 'r')) or 0, far)
local op = ARGV[1]
local idle = tonumber(ARGV[5])
local function keep(last)
  redis.call('PEXPIRE', KEYS[1], math.floor(math.max(last - now, 0) / 1000) + idle)
end
if op == '1' then
  local nu = math.min(now + tonumber(ARGV[2]), far)
  if nu > u then
    u = nu
    redis.call('HSET', KEYS[1], 'u', d(u))
    keep(math.max(u, r))
  end
elseif op == '2' then
  local ready = now + tonumber(ARGV[2])
  if u <= ready and (ARGV[6] == '1' or r <= ready) then return {2, 0, math.max(u - now, 0)} end
  local turn = math.max(r, u, ready)
  if turn - ready > tonumber(ARGV[4]) then return {0, turn - ready, math.max(u - now, 0)} end
  r = turn + tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'r', d(r))
  keep(math.max(u, r))
  return {1, turn - ready, math.max(u - now, 0)}
end
return {math.max(u - now, 0), math.max(r - now, 0)}
";

/// `KEYS[1]`: a hash, the fleet's throttle: `on`, `rate` (per second),
/// `tok` and `cap` (its bucket), `t` (last refill), `wmax` and `tthr`
/// (CUBIC's last maximum and last throttle), `hdr` (paced by headers),
/// `rlo` and `rhi` (the bounds the reports put on the provider's refill
/// rate), `meas`, `mt`, `mc` (the measured send rate, in half-second
/// buckets).
/// `ps` (when the fleet's first probe went, µs), `ov` (overloads heard in
/// a row, with no report between, while the headers pace).
/// `ARGV`: op (0 read, 1 take, 2 throttle, 3 report, 4 count), a, b, c,
/// least rate (‰ per second), greatest rate (‰, 0 none), idle ms, probe
/// wait µs (0: not a probe), the asker's mirror (1: on).
/// - take while the fleet's throttle is off by an asker whose mirror is
///   on: its report or cut is on its way, so it is held (granted −1, a
///   5 ms wait) rather than granted from a bucket not filled yet.
/// - take as a probe (probe wait > 0, the throttle off): the fleet's
///   first asker is its probe (answered `on` 2); any other is held
///   (granted −1, wait µs until the probe's wait ends) until the probe's
///   answer turns the throttle on or its wait ends; then it goes.
/// - count(n): n requests a process sent while the throttle was off, so
///   the first throttle cuts from the fleet's measured rate.
/// - take(n, planned µs, longest wait µs): up to n tokens, or one
///   reserved with its wait.
/// - throttle(overload): a cut (β 0.7) of the rate from the measured one;
///   an overload (1) while the headers pace cuts only as the third in a
///   row, with no report between (an outage: a busy provider answers a
///   share of everyone's calls overloaded at random), whichever processes
///   heard them.
/// - report(limit, remaining, reset µs): pace by the provider's bucket,
///   refilling between (limit − remaining − 1) / reset and (limit −
///   remaining) / reset (`remaining` is a whole count), at the middle of
///   what the reports since the last cut allow, as the in-process
///   throttle's mirror does.
///
/// Answers `{tokens granted, wait µs, rate ‰, on}`.
const THROTTLE: &str = r"
local s = load(KEYS[1])
local on = s.on or 0
local rate = s.rate or 0
local tok = s.tok or 0
local last = s.t or now
local cap = s.cap or 1
local wmax = s.wmax or 0
local tthr = s.tthr or now
local hdr = s.hdr or 0
local meas = s.meas or 0
local mt = s.mt or math.floor(now / 500000) / 2
local mc = s.mc or 0
-- paced at no rate is no state a script writes: off, afresh
if rate <= 0 then on = 0 end
local rlo = s.rlo or 0
local rhi = s.rhi or 0
local ps = math.min(s.ps or 0, far)
local ov = s.ov or 0
local minr = tonumber(ARGV[5]) / 1000
local maxr = tonumber(ARGV[6]) / 1000
if maxr <= 0 then maxr = 1e12 end
local op = ARGV[1]
local function answer(granted, wait)
  return {math.floor(granted), math.floor(math.max(wait, 0)), math.floor(rate * 1000), on}
end
if op == '0' then return answer(0, 0) end
local function measure(n)
  local b = math.floor(now / 500000) / 2
  mc = mc + n
  if b > mt then
    meas = (mc / (b - mt)) * 0.8 + meas * 0.2
    mc = 0
    mt = b
  end
end
local function refill()
  if on == 1 then tok = math.min(cap, tok + rate * (now - last) / 1e6) end
  last = now
end
local function bound(x) return math.max(minr, math.min(maxr, x)) end
local function save()
  redis.call('HSET', KEYS[1], 'on', on, 'rate', g(rate), 'tok', g(tok), 't', d(last),
    'cap', g(cap), 'wmax', g(wmax), 'tthr', d(tthr), 'hdr', hdr, 'meas', g(meas),
    'mt', g(mt), 'mc', g(mc), 'rlo', g(rlo), 'rhi', g(rhi), 'ps', d(ps), 'ov', ov)
  redis.call('PEXPIRE', KEYS[1], ARGV[7])
end
if op == '1' then
  local n = tonumber(ARGV[2])
  local probe = math.min(tonumber(ARGV[8] or '0') or 0, 31622400000000)
  if on == 0 and probe > 0 then
    if ps == 0 then
      ps = now
      save()
      return {1, 0, math.floor(rate * 1000), 2}
    end
    if now < ps + probe then
      return {-1, math.floor(ps + probe - now), math.floor(rate * 1000), on}
    end
  end
  if on == 0 and ARGV[9] == '1' then
    return {-1, 5000, math.floor(rate * 1000), on}
  end
  if on == 0 then
    measure(n)
    save()
    return answer(n, 0)
  end
  measure(0)
  refill()
  if hdr == 0 then
    -- CUBIC's growth since the last throttle, at most twice the measured rate
    local k = ((wmax * 0.3) / 0.4) ^ (1 / 3)
    local dt = (now - tthr) / 1e6
    local cubic = 0.4 * (dt - k) ^ 3 + wmax
    rate = bound(math.min(cubic, math.max(2 * meas, minr)))
    cap = math.max(rate, 1)
    tok = math.min(tok, cap)
  end
  if tok >= 1 then
    local granted = math.min(n, math.floor(tok))
    tok = tok - granted
    mc = mc + granted
    save()
    return answer(granted, 0)
  end
  local wait = (1 - tok) / rate * 1e6 - tonumber(ARGV[3])
  if wait > tonumber(ARGV[4]) then
    save()
    return answer(0, wait)
  end
  tok = tok - 1
  mc = mc + 1
  save()
  return answer(1, wait)
elseif op == '2' then
  if ARGV[2] == '1' and hdr == 1 then
    ov = ov + 1
    if ov < 3 then
      save()
      return answer(0, 0)
    end
  end
  ov = 0
  measure(0)
  refill()
  local use = meas
  if on == 1 then use = math.min(meas, rate) end
  if use <= 0 then use = math.max(rate, minr) end
  wmax = use
  tthr = now
  rate = bound(use * 0.7)
  cap = math.max(rate, 1)
  if on == 0 then tok = 0 end
  tok = math.min(tok, cap)
  on = 1
  hdr = 0
  save()
  return answer(0, 0)
elseif op == '4' then
  measure(tonumber(ARGV[2]))
  save()
  return answer(0, 0)
elseif op == '3' then
  ov = 0
  refill()
  local limit = tonumber(ARGV[2])
  local remaining = tonumber(ARGV[3])
  local reset = tonumber(ARGV[4]) / 1e6
  if reset > 0 and (limit == 0 or remaining < limit) then
    if limit > 0 then
      -- remaining is a whole count: the bucket holds between it and one
      -- more, so its refill rate lies between these two; the reports
      -- since the last start afresh narrow it (one outside: it changed)
      local lo = (limit - remaining - 1) / reset
      local hi = (limit - remaining) / reset
      if hdr == 1 and rhi > 0 and lo <= rhi and hi >= rlo then
        rlo = math.max(rlo, lo)
        rhi = math.min(rhi, hi)
      else
        rlo = lo
        rhi = hi
      end
      rate = bound((rlo + rhi) / 2)
      cap = math.max(1, limit)
    else
      rate = bound(math.max(remaining, 1) / reset)
      cap = math.max(1, remaining)
    end
    if on == 0 then tok = remaining else tok = math.min(tok, remaining) end
    on = 1
    hdr = 1
    save()
  end
  return answer(0, 0)
end
return answer(0, 0)
";

/// `KEYS[1]`: a hash, the fleet's breaker: `st` (0 closed, 1 open, 2
/// half-open), `at` (opened), `pr` and `pt` (probes granted, when last),
/// and ten window buckets `b<i>` (its number), `f<i>` (failures), `n<i>`
/// (outcomes). `ARGV`: op (0 read, 1 report, 2 probe), failures,
/// outcomes, ratio ‰, window µs, least throughput, open for µs, probes,
/// idle ms.
/// - report: outcomes counted by a process; opens it at the ratio over
///   the window (closed), or settles a probe (half-open: a failure
///   reopens it, a success closes it).
/// - probe: one of the probes a half-open breaker lets through.
///
/// Answers `{state, open for µs, probe granted}`.
const BREAKER: &str = r"
local s = load(KEYS[1])
local st = s.st or 0
local at = s.at or 0
local pr = s.pr or 0
local pt = s.pt or 0
if st ~= 0 and st ~= 1 and st ~= 2 then st = 0 end
local op = ARGV[1]
local ratio = tonumber(ARGV[4]) / 1000
local window = tonumber(ARGV[5])
local least = tonumber(ARGV[6])
local openfor = tonumber(ARGV[7])
local probes = tonumber(ARGV[8])
local granted = 0
local wrote = false
local function clear()
  for i = 0, 9 do redis.call('HDEL', KEYS[1], 'b' .. i, 'f' .. i, 'n' .. i) end
end
local function open()
  st = 1
  at = now
  pr = 0
  clear()
end
if st == 1 and now >= at + openfor then
  st = 2
  pr = 0
  wrote = true
end
if st == 2 and pr >= probes and now >= pt + openfor then
  -- probes that never reported: their slots are free again
  pr = 0
  wrote = true
end
if op == '1' then
  local fails = tonumber(ARGV[2])
  local total = tonumber(ARGV[3])
  if st == 0 and total > 0 then
    local width = math.max(1, math.floor(window / 10))
    local b = math.floor(now / width)
    local i = b % 10
    local f, n = fails, total
    if s['b' .. i] == b then
      f = f + (s['f' .. i] or 0)
      n = n + (s['n' .. i] or 0)
    end
    s['b' .. i] = b
    s['f' .. i] = f
    s['n' .. i] = n
    redis.call('HSET', KEYS[1], 'b' .. i, d(b), 'f' .. i, d(f), 'n' .. i, d(n))
    local sf, sn = 0, 0
    for j = 0, 9 do
      local bj = s['b' .. j]
      if bj and bj > b - 10 then
        sf = sf + (s['f' .. j] or 0)
        sn = sn + (s['n' .. j] or 0)
      end
    end
    if sn >= least and sf > 0 and sf >= ratio * sn then open() end
  elseif st == 2 then
    if fails > 0 then
      open()
    elseif total > 0 then
      st = 0
      pr = 0
      clear()
    end
  end
  wrote = true
elseif op == '2' then
  if st == 2 and pr < probes then
    pr = pr + 1
    pt = now
    granted = 1
  end
  wrote = true
end
if wrote then
  redis.call('HSET', KEYS[1], 'st', st, 'at', d(at), 'pr', pr, 'pt', d(pt))
  redis.call('PEXPIRE', KEYS[1], math.floor((window + openfor) / 1000) + tonumber(ARGV[9]))
end
local left = 0
if st == 1 then left = at + openfor - now end
return {st, math.floor(left), granted}
";

/// `KEYS[1]`: the fleet's leases, a sorted set of members (each the
/// decimal of a process's id × 2³² + its lease's number) scored by when
/// they expire (µs of server time); beside it `KEYS[1]..':procs'`, the
/// processes alive, scored alike, `KEYS[1]..':waiting'`, the processes
/// refused a lease in the last 50 ms, and `KEYS[1]..':ids'`, the last
/// process id given. Expired leases and processes are dropped first.
/// `ARGV`: op (0 register, 1 take, 2 release, 3 renew, 4 reset, 5
/// reclaim), the
/// process's id, the lease (µs), the limit, then members.
/// - register: a new id for the process, alive.
/// - take: the member leased when fewer than the limit are out.
/// - release: the members let go.
/// - renew: the members still held get a new expiry; the process is
///   alive. Those no longer there (expired) are answered after the counts.
/// - reclaim: the members given are held again, expired or not (the
///   attempts holding them still run), even past the limit: until enough
///   end, the fleet takes no more.
///
/// Answers `{code, leases out, processes alive, other processes waiting,
/// lost members…}`: code the
/// new id (register), 1 taken or 0 not (take), the members renewed
/// (renew), else 0.
const CONCURRENCY: &str = r"
local procs = KEYS[1] .. ':procs'
local op = ARGV[1]
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', d(now))
redis.call('ZREMRANGEBYSCORE', procs, '-inf', d(now))
local code = 0
local lost = {}
local me = ARGV[2]
if op == '0' then
  code = redis.call('INCR', KEYS[1] .. ':ids')
  me = d(code)
end
if op == '4' then
  redis.call('DEL', KEYS[1])
else
  redis.call('ZADD', procs, d(math.min(now + lease, far)), me)
end
local waiting = KEYS[1] .. ':waiting'
redis.call('ZREMRANGEBYSCORE', waiting, '-inf', d(now))
if op == '1' and redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], d(math.min(now + lease, far)), ARGV[5])
  redis.call('ZREM', waiting, me)
  code = 1
elseif op == '1' then
  redis.call('ZADD', waiting, d(now + 50000), me)
  redis.call('PEXPIRE', waiting, 1000)
elseif op == '2' then
  for i = 5, #ARGV do redis.call('ZREM', KEYS[1], ARGV[i]) end
elseif op == '3' or op == '5' then
  for i = 5, #ARGV do
    if op == '5' or redis.call('ZSCORE', KEYS[1], ARGV[i]) then
      redis.call('ZADD', KEYS[1], d(math.min(now + lease, far)), ARGV[i])
      code = code + 1
    else
      lost[#lost + 1] = ARGV[i]
    end
  end
end
local idle = math.floor(lease / 1000) * 2 + 1000
redis.call('PEXPIRE', KEYS[1], idle)
redis.call('PEXPIRE', procs, idle)
local others = redis.call('ZCARD', waiting)
if redis.call('ZSCORE', waiting, me) then others = others - 1 end
local out = {code, redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', procs), others}
for i = 1, #lost do out[#out + 1] = lost[i] end
return out
";

fn script(body: &str) -> Script {
    Script::new(&format!("{PRELUDE}{body}"))
}

pub(crate) static BUDGET_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(BUDGET));
pub(crate) static COOLDOWN_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(COOLDOWN));
pub(crate) static THROTTLE_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(THROTTLE));
/// `KEYS[1]`: any guard's key, deleted: the guard starts afresh fleet-wide
/// (a missing key is a fresh guard).
const RESET: &str = r"
return redis.call('DEL', KEYS[1])
";

pub(crate) static CONCURRENCY_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(CONCURRENCY));
pub(crate) static RESET_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(RESET));
pub(crate) static BREAKER_SCRIPT: LazyLock<Script> = LazyLock::new(|| script(BREAKER));
