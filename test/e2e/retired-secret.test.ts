import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { libfaketime } from "../_support/libfaketime.js";
import { ensureBinary } from "./_binary.js";
import { client } from "./_http.js";
import {
  binaryServe,
  cleanUp,
  cli,
  createKey,
  type Server,
  startServer,
  stopProcess,
  tempDatabaseUrl,
} from "./_processes.js";

/**
 * A leaked key rolled with `keys roll --overlap 0s`, its old secret then sent 100 times from
 * one address to the binary on a database file: the holder of the old secret spends only its
 * own address's limit (Free's 60 a minute), never the new secret's quota (Pro's 300). The server and the CLI live from a
 * minute's start (libfaketime), so that every request falls in one minute window.
 */

/** The processes' wall clock: a minute's start, running on from each process's start; timers keep real time. */
const FAKED = {
  ...process.env,
  TZ: "UTC",
  LD_PRELOAD: libfaketime(),
  FAKETIME: "@2030-01-15 12:00:00",
  FAKETIME_DONT_FAKE_MONOTONIC: "1",
};

// biome-ignore lint/suspicious/noExplicitAny: a test reads the printed JSON's fields freely
async function petstore(args: string[]): Promise<any> {
  const result = await cli(args, { env: FAKED });
  if (result.code !== 0) throw new Error(`petstore ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

describe("a key rolled with no overlap, its old secret sent 100 times from one address", () => {
  let db: string;
  let id: string;
  let server: Server;
  let fresh: string;
  const answers: string[] = [];

  beforeAll(async () => {
    ensureBinary();
    db = tempDatabaseUrl();
    const created = await createKey(db, ["--plan", "pro"]);
    id = created.id;
    server = await startServer(binaryServe(db), { env: FAKED });
    fresh = (await petstore(["keys", "roll", id, "--overlap", "0s", "--db", db, "--json"])).key;
    const old = client(server.url, created.key);
    for (let i = 0; i < 100; i++) {
      const response = await old("/v1/pets?limit=1");
      answers.push(`${response.status} ${((await response.json()) as { code?: string }).code}`);
    }
  }, 120_000);

  afterAll(cleanUp);

  it("is answered 401 up to the address's Free limit, then 429, and bans the address after 30 refusals", () => {
    expect(answers).toEqual([
      ...Array(60).fill("401 unauthorized"),
      ...Array(30).fill("429 rate_limited"),
      ...Array(10).fill("429 temporarily_banned"),
    ]);
  });

  it("leaves the new secret its full per-minute quota, unbanned", async () => {
    const response = await client(server.url, fresh)("/v1/pets?limit=1");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-ratelimit-remaining")).toBe("299");
  });

  it("counts them in the key's usage history as unauthorized", async () => {
    await stopProcess(server.child, "SIGTERM"); // a clean stop writes the counts it holds
    const usage = await petstore(["keys", "usage", id, "--since", "1h", "--db", db, "--json"]);
    expect(usage.totals).toMatchObject({ unauthorized: 100, rateLimited: 0, banned: 0 });
  });
});
