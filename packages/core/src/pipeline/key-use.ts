import type { Settings } from "../options.js";
import type { ApiKeys, Decision } from "../ports.js";
import { rolledKeyHeaders } from "./answer-headers.js";
import type { Identity } from "./identify.js";

/** Latest uses are written at most this often (and this long after the first one waiting). */
const WRITE_USES_EVERY_MS = 60_000;

/**
 * The keys' latest uses, kept here and written together (`ApiKeys.recordUse`): one write a
 * minute per server, not one per request. A use waits at most a minute, by a timer where the
 * runtime keeps one, else until the next request after that minute; a use still waiting when
 * the process ends is lost (`lastUsedAt` is a hint for an operator, nothing is decided by it).
 * A write that fails is not retried: the next one carries newer uses.
 */
function latestUses(keys: ApiKeys, monotonicClock: () => number): (id: string, at: number) => void {
  let waiting = new Map<string, number>();
  /** When the first use waiting was seen, by the monotonic clock: how long uses wait is this process's own. */
  let firstAt: number | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const write = () => {
    clearTimeout(timer);
    const uses = waiting;
    [waiting, firstAt, timer] = [new Map(), undefined, undefined];
    keys.recordUse(uses).catch(() => {});
  };
  return (id, at) => {
    waiting.set(id, at);
    if (firstAt === undefined) {
      firstAt = monotonicClock();
      timer = setTimeout(write, WRITE_USES_EVERY_MS);
      // Never what keeps a process alive (Node, Bun, Deno have unref; elsewhere it does not matter).
      (timer as { unref?: () => void }).unref?.();
    } else if (monotonicClock() - firstAt >= WRITE_USES_EVERY_MS) {
      write();
    }
  };
}

/**
 * The key's use, once the request is answered: a rolled key's old secret gets the answer's
 * `Deprecation`, `Sunset` and (when configured) `Link` headers, so its client learns in-band
 * that it must take the new one and until when; and the key's latest use is remembered, at
 * the limiter's instant.
 */
export function keyUseStage(
  settings: Pick<Settings, "keys" | "rolledKeyLink" | "monotonicClock">,
): (response: Response, identity: Identity | undefined, decision: Decision | undefined) => void {
  const { rolledKeyLink } = settings;
  const used = latestUses(settings.keys, settings.monotonicClock);
  return (response, identity, decision) => {
    const caller = identity?.caller;
    if (!caller || !decision) return;
    if (identity.oldSecret) {
      for (const [name, value] of Object.entries(rolledKeyHeaders(caller.rolled!, rolledKeyLink))) {
        if (name === "Link") response.headers.append(name, value);
        else response.headers.set(name, value);
      }
    }
    used(caller.id, decision.now);
  };
}
