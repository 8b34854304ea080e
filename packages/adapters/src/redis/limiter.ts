import {
  bucketGroup,
  type BucketState,
  CLOCK_STEP_MS,
  type Decision,
  type HitInput,
  type RateLimiter,
  StorageUnavailableError,
  type WindowPair,
  type WindowState,
} from "@petstore/core";
import { withinDeadline } from "../_deadline.js";

/**
 * Sends one Redis command (`["EVALSHA", sha, "1", key, ...]`) and resolves with its reply, or
 * rejects with the server's error (whose message starts with its code, e.g. `NOSCRIPT`). Any
 * client is one line away; see the package README.
 * @example (args) => redis.call(args[0]!, ...args.slice(1)) // ioredis
 */
export type RedisSend = (args: string[]) => Promise<unknown>;

export interface RedisLimiterOptions {
  /** The command function over the caller's client. */
  send: RedisSend;
  /** Put before every key, e.g. to share a Redis with other programs. Default `petstore:limit:`. */
  prefix?: string;
  /**
   * The longest a hit waits for Redis; past it the hit fails (a 503) or, with `failOpen`,
   * admits. Default 1000 ms.
   */
  timeoutMs?: number;
  /**
   * When Redis fails or does not answer in time, admit the request instead of failing it with
   * `StorageUnavailableError` (a 503 with `Retry-After`). Off by default: limits that silently
   * stop holding are a choice to make knowingly.
   */
  failOpen?: boolean;
  /**
   * Told of every hit once it is decided: `undefined` when Redis decided it, else the error
   * (Redis failed, or did not answer in time), with which the hit then failed, or was admitted
   * without limits (`failOpen`). For a log line per outage measured by the requests themselves.
   */
  onOutcome?: (error: StorageUnavailableError | undefined) => void;
  /**
   * Unix ms: decide windows and bans by this clock instead of Redis's (`TIME`). For tests that
   * move time without sleeping; a server leaves it out, so that its fleet shares Redis's clock.
   */
  clock?: (() => number) | undefined;
}

/** The Redis limiter, and a check that Redis answers now (for a health endpoint). */
export interface RedisLimiter extends Required<RateLimiter> {
  /** Resolves with Redis's clock (`TIME`, Unix ms) when Redis answers within the timeout; rejects with the reason. */
  check(): Promise<number>;
}

/** Redis's clock in a script, Unix ms, unless ARGV[1] gives the instant (a test's clock). */
const SCRIPT_NOW = `
local now = tonumber(ARGV[1])
if now == nil then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end`;

/**
 * The bucket as a hit finds it (`stored`: its fields, its ban first and its last decision's
 * instant second): nothing when the clock stepped back since that decision (see
 * `RateLimiter`), else `now` no earlier than that instant.
 */
const AS_A_HIT_FINDS_IT = `
local last = tonumber(stored[2])
if last ~= nil and last - now > ${CLOCK_STEP_MS} then
  stored = {}
elseif last ~= nil and last > now then
  now = last
end`;

/**
 * The memory limiter's decision (see `memory/limiter.ts`) as one script, so it is atomic
 * across processes and decided by one clock, Redis's own (`TIME`; a script may write after
 * reading it since Redis 5 replicates a script's effects, not the script): KEYS[1] is the
 * bucket's hash, KEYS[2..] those of the buckets it shares (in its hash slot); ARGV is the
 * instant to decide at (empty: Redis's clock), the ban's threshold and length, then for each
 * key each window's limit and length (ms). A bucket whose last decision (`d`) is more than
 * CLOCK_STEP_MS after the instant as read saw a clock that stepped back since: it starts over,
 * as new (see `RateLimiter`); else the instant is never before its last. Each window moves
 * forward to the one containing `now`; during KEYS[1]'s ban nothing is counted; an admission
 * (every window of every key has room) counts in every window of every key; a refusal consumes
 * nothing but counts toward KEYS[1]'s ban within its first window, and the one past the
 * threshold bans it. Each hash expires when its last window or ban ends. Replies: allowed,
 * banned before this hit, banned until, the instant, whether this hit began the ban, then for
 * each key each window's start and count.
 */
const HIT_SCRIPT = `${SCRIPT_NOW}
local threshold = tonumber(ARGV[2])
local banMs = tonumber(ARGV[3])
local m = #KEYS
local n = (#ARGV - 3) / (2 * m)
local fields = {'b', 'd', 'r', 'rs'}
for i = 1, n do
  fields[#fields + 1] = 's' .. i
  fields[#fields + 1] = 'c' .. i
end
local read = now
local stored = {}
for k = 1, m do
  stored[k] = redis.call('HMGET', KEYS[k], unpack(fields))
  local last = tonumber(stored[k][2])
  if last ~= nil and last - read > ${CLOCK_STEP_MS} then
    stored[k] = {}
  elseif last ~= nil and last > now then
    now = last
  end
end
local bannedUntil = tonumber(stored[1][1]) or 0
local refusals = tonumber(stored[1][3]) or 0
local refusalsStart = tonumber(stored[1][4])
local banned = bannedUntil > now
local allowed = not banned
local starts, counts, lengths = {}, {}, {}
for k = 1, m do
  starts[k], counts[k], lengths[k] = {}, {}, {}
  for i = 1, n do
    local a = 2 + 2 * ((k - 1) * n + i)
    local limit = tonumber(ARGV[a])
    local length = tonumber(ARGV[a + 1])
    local start = now - (now % length)
    local s = tonumber(stored[k][3 + 2 * i])
    local c = tonumber(stored[k][4 + 2 * i])
    if s == nil or s < start then
      s = start
      c = 0
    end
    starts[k][i], counts[k][i], lengths[k][i] = s, c, length
    if c >= limit then allowed = false end
  end
end
local banStarted = false
if allowed then
  for k = 1, m do
    for i = 1, n do counts[k][i] = counts[k][i] + 1 end
  end
elseif not banned then
  if refusalsStart ~= starts[1][1] then refusals = 0 end
  refusalsStart = starts[1][1]
  refusals = refusals + 1
  if refusals > threshold and banMs > 0 then
    bannedUntil = now + banMs
    banStarted = true
  end
end
local reply = {allowed and 1 or 0, banned and 1 or 0, bannedUntil, now, banStarted and 1 or 0}
for k = 1, m do
  local values
  if k == 1 then
    values = {'b', bannedUntil, 'r', refusals, 'rs', refusalsStart or 0, 'd', now}
  else
    values = {'b', tonumber(stored[k][1]) or 0, 'r', tonumber(stored[k][3]) or 0, 'rs', tonumber(stored[k][4]) or 0, 'd', now}
  end
  local expiresAt = values[2]
  for i = 1, n do
    if starts[k][i] + lengths[k][i] > expiresAt then expiresAt = starts[k][i] + lengths[k][i] end
    values[#values + 1] = 's' .. i
    values[#values + 1] = starts[k][i]
    values[#values + 1] = 'c' .. i
    values[#values + 1] = counts[k][i]
    reply[#reply + 1] = starts[k][i]
    reply[#reply + 1] = counts[k][i]
  end
  redis.call('HSET', KEYS[k], unpack(values))
  redis.call('PEXPIRE', KEYS[k], math.max(1, expiresAt - now))
end
return reply
`;

/**
 * The bucket as a hit would find it, counting nothing: KEYS[1] the bucket's hash, ARGV the
 * instant (empty: Redis's clock) then each window's length (ms). Replies: the instant, banned
 * until, then each window's start and count, moved to the window containing the instant.
 */
const PEEK_SCRIPT = `${SCRIPT_NOW}
local n = #ARGV - 1
local fields = {'b', 'd'}
for i = 1, n do
  fields[#fields + 1] = 's' .. i
  fields[#fields + 1] = 'c' .. i
end
local stored = redis.call('HMGET', KEYS[1], unpack(fields))
${AS_A_HIT_FINDS_IT}
local reply = {now, tonumber(stored[1]) or 0}
for i = 1, n do
  local length = tonumber(ARGV[1 + i])
  local start = now - (now % length)
  local s = tonumber(stored[1 + 2 * i])
  local c = tonumber(stored[2 + 2 * i])
  if s == nil or s < start then
    s = start
    c = 0
  end
  reply[#reply + 1] = s
  reply[#reply + 1] = c
end
return reply
`;

/** Ends the bucket's ban (if it has one at the instant of ARGV[1], else Redis's clock) and forgets its refusals: 1 when it was banned. */
const UNBAN_SCRIPT = `${SCRIPT_NOW}
local stored = redis.call('HMGET', KEYS[1], 'b', 'd')
${AS_A_HIT_FINDS_IT}
local bannedUntil = tonumber(stored[1]) or 0
if bannedUntil <= now then return 0 end
redis.call('HSET', KEYS[1], 'b', 0, 'r', 0)
return 1
`;

/** A Redis reply or a thrown error, as text: enough to tell `NOSCRIPT` from the rest. */
const isNoScript = (error: unknown) => /NOSCRIPT/.test(error instanceof Error ? error.message : String(error));

/**
 * Fixed-window counters in Redis, exact when many processes share it: each hit is one Lua
 * script (`EVALSHA`, loaded once with `SCRIPT LOAD`; after a restart or failover the server
 * answers `NOSCRIPT` and the hit runs `EVAL`, which caches it again) deciding every window
 * all-or-nothing, as the memory and SQL limiters decide, by Redis's clock (`TIME`), so servers
 * whose clocks disagree still share one window and one ban. A bucket is one hash with an
 * expiry, `<prefix>{<bucket>}` (a hash slot of its own on Redis Cluster), or `<prefix><bucket>`
 * when its name begins with a group (`{acct_1}key:k_2`: the slot of the group's tag), so a hit
 * on a key and its account's bucket is one script over both. A hit that Redis does not answer
 * within `timeoutMs` fails (or admits, with `failOpen`); nothing is retried, so when Redis comes back the next hit simply succeeds.
 * @example
 * const limiter = redisLimiter({ send: (args) => redis.call(args[0]!, ...args.slice(1)) });
 */
export function redisLimiter(options: RedisLimiterOptions): RedisLimiter {
  if (typeof options?.send !== "function")
    throw new TypeError(
      "redisLimiter needs send, a function that sends one command to Redis, e.g. redisLimiter({ send: (args) => redis.call(args[0]!, ...args.slice(1)) })",
    );
  const { send, prefix = "petstore:limit:", timeoutMs = 1_000, failOpen = false, onOutcome, clock } = options;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0))
    throw new TypeError(`redisLimiter: timeoutMs must be a positive number, got ${timeoutMs}`);
  /** The script's SHA-1 once `SCRIPT LOAD` answered; forgotten when loading failed. */
  let loading: Promise<string> | undefined;

  const load = () => {
    loading ??= send(["SCRIPT", "LOAD", HIT_SCRIPT]).then(String, (error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };

  /** `work` within the timeout; every failure becomes a `StorageUnavailableError`. */
  function bounded<T>(what: string, work: () => Promise<T>): Promise<T> {
    const failed = (error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      throw new StorageUnavailableError(`Redis failed ${what}: ${reason}`, { cause: error });
    };
    // Any thenable a client returns, and a synchronous throw, alike.
    const answer = new Promise<T>((resolve) => resolve(work())).catch(failed);
    return withinDeadline(
      answer,
      timeoutMs,
      () => new StorageUnavailableError(`Redis did not answer ${what} within ${timeoutMs} ms`),
    );
  }

  /**
   * A bucket's hash: `<prefix><bucket>` when its name begins with a group (`{acct_1}key:k_2`),
   * whose braces are then the hash tag, so an account's buckets share a slot on Redis Cluster;
   * otherwise `<prefix>{<bucket>}`, a slot of its own.
   */
  const keyOf = (bucket: string) => (bucketGroup(bucket) === undefined ? `${prefix}{${bucket}}` : prefix + bucket);

  async function run(keys: string[], args: string[]): Promise<unknown> {
    const sha = await load();
    try {
      return await send(["EVALSHA", sha, String(keys.length), ...keys, ...args]);
    } catch (error) {
      if (!isNoScript(error)) throw error;
      // The server lost its script cache (restart, failover, SCRIPT FLUSH): EVAL runs it and
      // caches it again on the node that holds these keys.
      return send(["EVAL", HIT_SCRIPT, String(keys.length), ...keys, ...args]);
    }
  }

  function decide({ windows, shared }: HitInput, reply: unknown): Decision {
    const values = (reply as unknown[]).map(Number);
    const allowed = values[0] === 1;
    const wasBanned = values[1] === 1;
    const bannedUntil = values[2]!;
    const now = values[3]!;
    let at = 5;
    const statesOf = (ws: WindowPair): WindowState[] =>
      ws.map((window) => {
        const start = values[at++]!;
        const count = values[at++]!;
        return {
          name: window.name,
          limit: window.limit,
          remaining: Math.max(0, window.limit - count),
          resetAt: start + window.seconds * 1000,
          exceeded: !allowed && !wasBanned && count >= window.limit,
        };
      });
    const decision: Decision = { allowed, windows: statesOf(windows), now };
    if (shared) decision.shared = shared.map((s) => statesOf(s.windows));
    if (bannedUntil <= now) return decision;
    decision.bannedUntil = bannedUntil;
    if (values[4] === 1) decision.banStarted = true;
    return decision;
  }

  /**
   * What a hit decides when Redis failed and `failOpen` is on: admitted, nothing counted, by
   * this process's clock (Redis's cannot be read; a test's when it gives one).
   */
  function admitted({ windows, shared }: HitInput): Decision {
    const now = clock ? clock() : Date.now();
    const untouched = (ws: WindowPair): WindowState[] =>
      ws.map((w) => {
        const length = w.seconds * 1000;
        return {
          name: w.name,
          limit: w.limit,
          remaining: w.limit,
          resetAt: now - (now % length) + length,
          exceeded: false,
        };
      });
    const decision: Decision = { now, allowed: true, windows: untouched(windows) };
    if (shared) decision.shared = shared.map((s) => untouched(s.windows));
    return decision;
  }

  function hit(input: HitInput): Promise<Decision> {
    const { bucket, windows, ban, shared = [] } = input;
    const args = [clock ? String(clock()) : "", String(ban.threshold), String(ban.seconds * 1000)];
    for (const ws of [windows, ...shared.map((s) => s.windows)])
      for (const w of ws) args.push(String(w.limit), String(w.seconds * 1000));
    const keys = [keyOf(bucket), ...shared.map((s) => keyOf(s.bucket))];
    const decided = bounded("a rate-limit hit", () => run(keys, args)).then(
      (reply) => {
        onOutcome?.(undefined);
        return decide(input, reply);
      },
      (error: StorageUnavailableError) => {
        onOutcome?.(error);
        if (!failOpen) throw error;
        return admitted(input);
      },
    );
    return decided;
  }

  /** An operator's view of a bucket: one EVAL (rare, so the script is not cached). */
  async function peek({ bucket, windows }: HitInput): Promise<BucketState> {
    const args = [clock ? String(clock()) : "", ...windows.map((w) => String(w.seconds * 1000))];
    const reply = (
      (await bounded("a rate-limit look", () => send(["EVAL", PEEK_SCRIPT, "1", keyOf(bucket), ...args]))) as unknown[]
    ).map(Number);
    const [now, bannedUntil] = [reply[0]!, reply[1]!];
    const states = windows.map((w, i): WindowState => {
      const start = reply[2 + 2 * i]!;
      return {
        name: w.name,
        limit: w.limit,
        remaining: Math.max(0, w.limit - reply[3 + 2 * i]!),
        resetAt: start + w.seconds * 1000,
        exceeded: false,
      };
    });
    return bannedUntil > now ? { windows: states, bannedUntil, now } : { windows: states, now };
  }

  async function unban(bucket: string): Promise<boolean> {
    const reply = await bounded("a ban's end", () =>
      send(["EVAL", UNBAN_SCRIPT, "1", keyOf(bucket), clock ? String(clock()) : ""]),
    );
    return Number(reply) === 1;
  }

  return {
    hit,
    peek,
    unban,
    check: () =>
      bounded("a TIME", () => send(["TIME"])).then((reply) => {
        const [seconds, micro] = (reply as unknown[]).map(Number);
        return seconds! * 1000 + Math.floor(micro! / 1000);
      }),
  };
}
