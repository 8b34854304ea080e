import { setTimeout as sleep } from "node:timers/promises";

export interface WaitOptions {
  /** Pause between two checks, in ms (default 20): longer where each check costs requests. */
  every?: number;
  /**
   * What is awaited, for the error: a function is read when the wait fails (to add the
   * latest output). Default: the condition's own source.
   */
  what?: string | (() => string);
}

/**
 * Checks `condition` every `every` ms until it holds, and resolves with how long that took
 * (whole ms); throws, saying what it waited for, once `within` ms have passed. An async check
 * still pending at that moment ends the wait too, so a hung server cannot stall it. A check
 * that throws ends the wait with its error: throw when waiting is hopeless (the process
 * exited) instead of waiting out the bound. Shared by test/, examples/ and packages/*.
 * @example await waitFor(() => server.stdout.some((line) => line.includes('"event":"stopping"')));
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  within = 5_000,
  options: WaitOptions = {},
): Promise<number> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const fail = () => {
    const what = typeof options.what === "function" ? options.what() : (options.what ?? sourceOf(condition));
    return new Error(`not within ${within} ms: ${what}`);
  };
  for (;;) {
    if (elapsed() >= within) throw fail();
    const met = await settledWithin(condition(), within - elapsed());
    if (met === undefined) throw fail();
    if (met) return Math.round(elapsed());
    await sleep(options.every ?? 20);
  }
}

/**
 * `waitFor` for a check that finds something: resolves with the first value `check` returns
 * that is not undefined. A check that throws is tried again (a node being killed or promoted
 * refuses connections for a while); the last error joins the message if the wait fails.
 * @example const master = await waitForValue(async () => (await names()).find(isMaster), 20_000, { what: "a master" });
 */
export async function waitForValue<T>(
  check: () => Promise<T | undefined>,
  within = 5_000,
  options: WaitOptions = {},
): Promise<T> {
  let value: T | undefined;
  let last: unknown;
  const what = () =>
    `${typeof options.what === "function" ? options.what() : (options.what ?? sourceOf(check))}${last === undefined ? "" : ` (last error: ${String(last)})`}`;
  await waitFor(
    async () => {
      try {
        value = await check();
      } catch (error) {
        last = error;
        return false;
      }
      return value !== undefined;
    },
    within,
    { every: options.every ?? 50, what },
  );
  return value as T;
}

/** `check`'s outcome, or undefined when it is a promise still pending after `ms`. */
async function settledWithin(check: boolean | Promise<boolean>, ms: number): Promise<boolean | undefined> {
  if (typeof check === "boolean") return check;
  const done = new AbortController();
  const late = sleep(ms, undefined, { signal: done.signal }).catch(() => undefined);
  try {
    return await Promise.race([check, late]);
  } finally {
    done.abort();
  }
}

/** The condition as written, without its `() =>`: what the test waits for, in its own words. */
function sourceOf(condition: () => unknown): string {
  return String(condition)
    .replace(/^(async\s*)?\(\)\s*=>\s*/, "")
    .replace(/\s+/g, " ");
}
