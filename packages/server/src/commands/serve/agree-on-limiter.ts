import type { Storage } from "../../storage/open-storage.js";
import type { Io } from "../_command.js";
import type { ServeConfig } from "./config.js";
import { logLine } from "./log.js";

/** How a limiter is named in the database's `settings` and in the one line that refuses a start. */
const DESCRIBED = { database: "in the database", redis: "in Redis (--limiter)" } as const;

/**
 * Makes sure every server on the database keeps the rate limits in the same place: two servers
 * of which one counts in Redis and the other in the database would each admit a key's whole
 * limit (120 of 200 admitted for a limit of 60, without a word). The first server records its
 * way; a server started another way refuses to start, unless told to record its own
 * (`--change-limiter`, logged). Which Redis is not compared: one Redis has many names.
 */
export async function agreeOnLimiter(storage: Storage, config: ServeConfig, io: Io): Promise<void> {
  const mine = config.limiter ? "redis" : "database";
  const { recorded, before } = await storage.setting("limiter", mine, config.changeLimiter);
  if (recorded !== mine) {
    const theirs = DESCRIBED[recorded as keyof typeof DESCRIBED] ?? `'${recorded}'`;
    throw new Error(
      `this server would keep the rate limits ${DESCRIBED[mine]}, but the servers of this database keep them ${theirs}: the two would split every key's limits. Start it the way the others run, or with --change-limiter to switch the database over (then restart the others the new way)`,
    );
  }
  if (before !== undefined && before !== mine) logLine(io, "limiter changed", { limiter: mine, was: before });
}
