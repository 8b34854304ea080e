import { type ApiKeys, hashApiKey, isWellFormedApiKey, issueApiKey, MAX_KEY_LIMIT } from "@petstore/core";
import { UsageError } from "../../cli/usage-error.js";
import type { Env, Io } from "../_command.js";
import { integerSetting, optionalEnv } from "../_options.js";
import { logLine } from "./log.js";

/** A key the server makes sure exists at start: how a `:memory:` database gets its first key. */
export interface BootstrapKey {
  key: string;
  perMinute: number;
  perDay: number;
}

export /** From the environment only: key material never goes on argv, where `ps` shows it. */
function bootstrapConfig(env: Env): BootstrapKey | undefined {
  const key = optionalEnv(env, "PETSTORE_BOOTSTRAP_KEY");
  const perMinute = optionalEnv(env, "PETSTORE_BOOTSTRAP_PER_MINUTE");
  const perDay = optionalEnv(env, "PETSTORE_BOOTSTRAP_PER_DAY");
  if (key === undefined) {
    if (perMinute !== undefined || perDay !== undefined) {
      throw new UsageError("PETSTORE_BOOTSTRAP_PER_MINUTE and PETSTORE_BOOTSTRAP_PER_DAY need PETSTORE_BOOTSTRAP_KEY");
    }
    return undefined;
  }
  // The value is a secret, even a mistyped one: the message never repeats it.
  if (!isWellFormedApiKey(key)) {
    throw new UsageError(
      "PETSTORE_BOOTSTRAP_KEY must be an API key: psk_ then 38 letters or digits, the last 6 a checksum",
    );
  }
  if (perMinute === undefined || perDay === undefined) {
    throw new UsageError(
      "PETSTORE_BOOTSTRAP_KEY needs PETSTORE_BOOTSTRAP_PER_MINUTE and PETSTORE_BOOTSTRAP_PER_DAY (its enterprise limits)",
    );
  }
  return {
    key,
    perMinute: integerSetting(perMinute, "PETSTORE_BOOTSTRAP_PER_MINUTE", 1, MAX_KEY_LIMIT),
    perDay: integerSetting(perDay, "PETSTORE_BOOTSTRAP_PER_DAY", 1, MAX_KEY_LIMIT),
  };
}

export /**
 * Stores the bootstrap key as an enterprise key unless the database already has it (by
 * hash): an existing key keeps its limits, and a revoked one stays revoked.
 */
async function ensureBootstrapKey(keys: ApiKeys, bootstrap: BootstrapKey, io: Io): Promise<void> {
  const hash = await hashApiKey(bootstrap.key);
  let record = await keys.findByHash(hash);
  const created = record === undefined;
  if (record === undefined) {
    const limits = {
      plan: "enterprise",
      perMinute: bootstrap.perMinute,
      perDay: bootstrap.perDay,
      label: "bootstrap",
    } as const;
    try {
      record = (await issueApiKey(keys, limits, { key: bootstrap.key, actor: { who: "serve:PETSTORE_BOOTSTRAP_KEY" } }))
        .record;
    } catch (error) {
      // Another process starting on the same database may have stored it a moment ago.
      record = await keys.findByHash(hash);
      if (record === undefined) throw error;
    }
  }
  logLine(io, "bootstrap key", { keyId: record.id, created, revoked: record.revokedAt !== undefined });
}
