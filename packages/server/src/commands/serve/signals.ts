import process from "node:process";

/** How long in-flight requests get to finish after SIGTERM or SIGINT. */
export const GRACE_MS = 10_000;

/** Resolves with the signal's name at the first SIGTERM or SIGINT. */
export function stopRequested(): Promise<string> {
  return new Promise((resolve) => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => resolve(signal));
  });
}
