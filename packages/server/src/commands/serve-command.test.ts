import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateApiKey, hashApiKey } from "@petstore/core";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../cli.js";
import { openStorage } from "../storage/open-storage.js";
import type { Env } from "./_command.js";

const dir = mkdtempSync(join(tmpdir(), "petstore-serve-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let databases = 0;
const newDb = () => `file:${join(dir, `serve-${++databases}.db`)}`;
const NODE_CANNOT_SERVE =
  "petstore: cannot listen on 127.0.0.1 port 0: petstore serve needs Bun or Deno (Node.js has no built-in fetch server)";

/**
 * `petstore serve` under Node.js: everything up to listening runs (migrations, the bootstrap
 * key, the key check), then it exits 1 because Node has no fetch server. That is enough to see
 * what the bootstrap option stored.
 */
async function serve(db: string, env: Env) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(["serve", "--db", db, "--host", "127.0.0.1", "--port", "0"], env, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  });
  return { code, out, err };
}

/** `serve` with `env` exits 2 with `message` first, prints nothing else, makes no database and echoes none of `secrets`; answers its stderr. */
async function refusedBeforeOpening(env: Env, message: string, secrets: string[]) {
  const db = newDb();
  const { code, out, err } = await serve(db, env);
  expect(code).toBe(2);
  expect(out).toEqual([]);
  expect(err[0]).toBe(message);
  for (const secret of secrets) expect(err.join("\n")).not.toContain(secret);
  expect(existsSync(db.slice("file:".length))).toBe(false);
  return err;
}

async function keysIn(db: string) {
  const storage = await openStorage({ url: db });
  try {
    return await storage.adapters.keys.list();
  } finally {
    storage.close();
  }
}

const newKey = () => generateApiKey();

describe("petstore serve's bootstrap key", () => {
  it("stores PETSTORE_BOOTSTRAP_KEY as an enterprise key with the given limits, by its hash only", async () => {
    const db = newDb();
    const key = newKey();
    const { code, out, err } = await serve(db, {
      PETSTORE_BOOTSTRAP_KEY: key,
      PETSTORE_BOOTSTRAP_PER_MINUTE: "1000000000",
      PETSTORE_BOOTSTRAP_PER_DAY: "2000",
    });
    expect(err).toEqual([NODE_CANNOT_SERVE]);
    expect(code).toBe(1);
    const keys = await keysIn(db);
    expect(keys).toEqual([
      {
        id: expect.stringMatching(/^key_[0-9A-Za-z]{16}$/),
        hash: await hashApiKey(key),
        plan: "enterprise",
        perMinute: 1_000_000_000,
        perDay: 2000,
        label: "bootstrap",
        accountId: expect.stringMatching(/^acct_[0-9A-Za-z]{16}$/),
        createdAt: expect.any(Number),
      },
    ]);
    const logged = out.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toEqual([
      expect.objectContaining({
        level: "info",
        event: "bootstrap key",
        keyId: keys[0]!.id,
        created: true,
        revoked: false,
      }),
    ]);
    expect(out.join("\n")).not.toContain(key);
  });

  it("keeps the key the database already has, with its limits, when started again", async () => {
    const db = newDb();
    const key = newKey();
    await serve(db, {
      PETSTORE_BOOTSTRAP_KEY: key,
      PETSTORE_BOOTSTRAP_PER_MINUTE: "50",
      PETSTORE_BOOTSTRAP_PER_DAY: "500",
    });
    const [first] = await keysIn(db);
    const again = await serve(db, {
      PETSTORE_BOOTSTRAP_KEY: key,
      PETSTORE_BOOTSTRAP_PER_MINUTE: "70",
      PETSTORE_BOOTSTRAP_PER_DAY: "700",
    });
    expect(again.err).toEqual([NODE_CANNOT_SERVE]);
    expect(await keysIn(db)).toEqual([first]);
    expect(JSON.parse(again.out[0]!)).toMatchObject({ event: "bootstrap key", keyId: first!.id, created: false });
  });

  it("is off by default: without the variables no key is made and the server warns that every request gets 401", async () => {
    const db = newDb();
    const { out, err } = await serve(db, {});
    expect(await keysIn(db)).toEqual([]);
    expect(out).toEqual([]);
    expect(err[0]).toContain("The database has no active API key");
  });

  it("treats a variable the runtime refuses to read (Deno without --allow-env) as unset", async () => {
    const db = newDb();
    const denoLike = new Proxy<Env>(
      {},
      {
        get: (_, name) => {
          if (String(name).startsWith("PETSTORE_BOOTSTRAP_"))
            throw new Error(`NotCapable: Requires env access to "${String(name)}"`);
          return undefined;
        },
      },
    );
    const { code, err } = await serve(db, denoLike);
    expect(code).toBe(1);
    expect(err.at(-1)).toBe(NODE_CANNOT_SERVE);
    expect(await keysIn(db)).toEqual([]);
  });

  const key = newKey();
  const mistyped = key.slice(0, -1) + (key.endsWith("a") ? "b" : "a");
  it.each([
    [
      "a mistyped key",
      { PETSTORE_BOOTSTRAP_KEY: mistyped, PETSTORE_BOOTSTRAP_PER_MINUTE: "1", PETSTORE_BOOTSTRAP_PER_DAY: "1" },
      "petstore: PETSTORE_BOOTSTRAP_KEY must be an API key: psk_ then 38 letters or digits, the last 6 a checksum",
    ],
    [
      "a value that is no key",
      { PETSTORE_BOOTSTRAP_KEY: "secret", PETSTORE_BOOTSTRAP_PER_MINUTE: "1", PETSTORE_BOOTSTRAP_PER_DAY: "1" },
      "petstore: PETSTORE_BOOTSTRAP_KEY must be an API key: psk_ then 38 letters or digits, the last 6 a checksum",
    ],
    [
      "a key without its per-day limit",
      { PETSTORE_BOOTSTRAP_KEY: key, PETSTORE_BOOTSTRAP_PER_MINUTE: "1" },
      "petstore: PETSTORE_BOOTSTRAP_KEY needs PETSTORE_BOOTSTRAP_PER_MINUTE and PETSTORE_BOOTSTRAP_PER_DAY (its enterprise limits)",
    ],
    [
      "limits without a key",
      { PETSTORE_BOOTSTRAP_PER_MINUTE: "1", PETSTORE_BOOTSTRAP_PER_DAY: "1" },
      "petstore: PETSTORE_BOOTSTRAP_PER_MINUTE and PETSTORE_BOOTSTRAP_PER_DAY need PETSTORE_BOOTSTRAP_KEY",
    ],
    [
      "a zero limit",
      { PETSTORE_BOOTSTRAP_KEY: key, PETSTORE_BOOTSTRAP_PER_MINUTE: "0", PETSTORE_BOOTSTRAP_PER_DAY: "1" },
      "petstore: PETSTORE_BOOTSTRAP_PER_MINUTE must be a whole number from 1 to 1000000000, not '0'",
    ],
    [
      "a limit in exponent notation",
      { PETSTORE_BOOTSTRAP_KEY: key, PETSTORE_BOOTSTRAP_PER_MINUTE: "1", PETSTORE_BOOTSTRAP_PER_DAY: "1e9" },
      "petstore: PETSTORE_BOOTSTRAP_PER_DAY must be a whole number from 1 to 1000000000, not '1e9'",
    ],
  ])("exits 2 before opening the database on %s, never echoing the key", async (_, env, message) => {
    const err = await refusedBeforeOpening(env, message, [mistyped, key]);
    expect(err).toHaveLength(2);
    expect(err[1]).toContain("Usage: petstore serve ");
  });

  it("documents the variables in serve --help", async () => {
    const out: string[] = [];
    expect(await runCli(["serve", "--help"], {}, { out: (line) => out.push(line), err: () => {} })).toBe(0);
    for (const variable of ["PETSTORE_BOOTSTRAP_KEY", "PETSTORE_BOOTSTRAP_PER_MINUTE", "PETSTORE_BOOTSTRAP_PER_DAY"])
      expect(out.join("\n")).toContain(variable);
  });

  it.each([
    [
      "a limiter URL that is not redis://",
      { PETSTORE_LIMITER: "http://user:s3cret@cache:6379" },
      "petstore: PETSTORE_LIMITER must be redis://HOST[:PORT][/DB], redis+cluster://HOST:PORT,HOST:PORT,... or redis+sentinel://HOST:PORT,HOST:PORT,.../MASTER (rediss... for TLS) (the URL is not repeated here: it may hold a password)",
    ],
    [
      "several hosts in a redis:// URL",
      { PETSTORE_LIMITER: "redis://user:s3cret@a:6379,b:6379" },
      "petstore: PETSTORE_LIMITER must be redis://HOST[:PORT][/DB], redis+cluster://HOST:PORT,HOST:PORT,... or redis+sentinel://HOST:PORT,HOST:PORT,.../MASTER (rediss... for TLS) (the URL is not repeated here: it may hold a password)",
    ],
    [
      "a sentinel URL without the master's name",
      { PETSTORE_LIMITER: "redis+sentinel://:s3cret@a:26379,b:26379" },
      "petstore: PETSTORE_LIMITER redis+sentinel:// needs the master's name as its path: redis+sentinel://HOST:PORT,HOST:PORT,.../MASTER[/DB] (the URL is not repeated here: it may hold a password)",
    ],
    [
      "a cluster URL with a database",
      { PETSTORE_LIMITER: "redis+cluster://:s3cret@a:7000,b:7001/3" },
      "petstore: PETSTORE_LIMITER a Redis Cluster has only database 0: redis+cluster://HOST:PORT,HOST:PORT,... (the URL is not repeated here: it may hold a password)",
    ],
    [
      "a cluster node without a valid port",
      { PETSTORE_LIMITER: "redis+cluster://:s3cret@a:7000,b:70000" },
      "petstore: PETSTORE_LIMITER 'b:70000' is not HOST[:PORT] (the URL is not repeated here: it may hold a password)",
    ],
    [
      "PETSTORE_LIMITER_FAIL_OPEN that is not 0 or 1",
      { PETSTORE_LIMITER: "redis://127.0.0.1:6379", PETSTORE_LIMITER_FAIL_OPEN: "yes" },
      "petstore: PETSTORE_LIMITER_FAIL_OPEN must be 0 or 1, not 'yes'",
    ],
    [
      "fail-open without a limiter",
      { PETSTORE_LIMITER_FAIL_OPEN: "1" },
      "petstore: --limiter-fail-open and PETSTORE_LIMITER_TIMEOUT_MS need --limiter (or PETSTORE_LIMITER)",
    ],
    [
      "a zero limiter timeout",
      { PETSTORE_LIMITER: "redis://127.0.0.1:6379", PETSTORE_LIMITER_TIMEOUT_MS: "0" },
      "petstore: PETSTORE_LIMITER_TIMEOUT_MS must be a whole number from 1 to 60000, not '0'",
    ],
  ])("exits 2 before opening the database or Redis on %s, never echoing a password", async (_, env, message) => {
    await refusedBeforeOpening(env, message, ["s3cret"]);
  });
});
