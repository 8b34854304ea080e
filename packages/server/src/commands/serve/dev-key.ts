import { DEFAULT_BAN, DEFAULT_PLANS, issueApiKey } from "@petstore/core";
import type { Storage } from "../../storage/open-storage.js";
import { shownUrl } from "../../messages/shown-url.js";
import type { Io } from "../_command.js";
import { pastableDb } from "../_options.js";
import type { ServeConfig } from "./config.js";

/** Production never creates keys: it warns when nobody could use the API. Development makes one. */
export async function checkKeys(storage: Storage, config: ServeConfig, io: Io): Promise<string | undefined> {
  const keys = storage.adapters.keys;
  if ((await keys.list()).some((record) => record.revokedAt === undefined)) {
    if (config.dev) {
      io.out(
        `Development mode: ${shownUrl(config.db.url)} already has an active API key, so none was created. ` +
          `Make another: ${io.program} keys create --plan free --db ${pastableDb(config.db.url)}`,
      );
    }
    return undefined;
  }
  if (config.dev)
    return (await issueApiKey(keys, { plan: "free", label: "development" }, { actor: { who: "serve:--dev" } })).key;
  io.err(
    JSON.stringify({
      time: new Date().toISOString(),
      level: "warn",
      message: `The database has no active API key, so every API request gets 401. Create one: ${io.program} keys create --plan free --db ${pastableDb(config.db.url)}`,
    }),
  );
  return undefined;
}

/**
 * The development key's banner: the key once, a curl line, and what a newcomer testing the
 * limits needs before the only key is banned (its Free limits, the ban, how to make another).
 */
export function printDevKey(io: Io, key: string, url: string, basePath: string, db: string): void {
  const free = DEFAULT_PLANS.free;
  io.out("");
  io.out("Development mode: the database had no API key, so a Free key was created. It is shown only this once:");
  io.out("");
  io.out(`    ${key}`);
  io.out("");
  io.out("Try it:");
  io.out("");
  io.out(`    curl -H 'Authorization: Bearer ${key}' ${url}${basePath}/pets`);
  io.out("");
  io.out(
    `It allows ${free.perMinute} requests a minute and ${free.perDay} a day; past ${DEFAULT_BAN.threshold} refusals (429) within a minute it is banned for ${DEFAULT_BAN.seconds / 60} minutes.`,
  );
  io.out(`Make another key: ${io.program} keys create --plan free --db ${db}`);
  io.out("");
}
