import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usePostgresDatabases } from "../_support/postgres-database.js";
import { adminToken } from "../e2e/_admin.js";
import { BINARY, ensureBinary } from "../e2e/_binary.js";
import {
  cleanUp,
  cli,
  createKey,
  type Server,
  startServer,
  stopProcess,
  tempDatabaseUrl,
  waitFor,
} from "../e2e/_processes.js";

/**
 * Usage counted exactly: known traffic (admitted, rate limited, banned, and a revoked key's
 * secret) sent round-robin through three binaries on one PostgreSQL and through one on a file,
 * then the same numbers read from the admin API of every server and from `petstore keys usage`.
 * The servers write their counts at least every 10 s: the time from the first request to the
 * counts read back is the flush bound as measured.
 */

type Counts = { admitted: number; rateLimited: number; banned: number; unauthorized: number };
const none = (): Counts => ({ admitted: 0, rateLimited: 0, banned: 0, unauthorized: 0 });
/** The flush bound (10 s) and what a write and a read may add on a loaded machine. */
const FLUSH_BOUND_MS = 10_000;
const SEEN_WITHIN_MS = FLUSH_BOUND_MS + 3_000;

beforeAll(() => void ensureBinary(), 120_000);
afterAll(cleanUp);
const databases = usePostgresDatabases();

describe.each([
  { topology: "three servers on PostgreSQL", servers: 3, database: () => databases.create("usage") },
  { topology: "one server on a file", servers: 1, database: async () => tempDatabaseUrl() },
])("usage history, $topology", ({ servers: count, database }) => {
  let db: string;
  let token: string;
  let servers: Server[] = [];
  let admins: string[] = [];
  const keys = { busy: { id: "", key: "" }, revoked: { id: "", key: "" } };
  /** What the answers said, by key: the numbers the store must hold. */
  const sent = { busy: none(), revoked: none() };
  /** Milliseconds from the first request to every count read back from the admin API. */
  let seenAfterMs: number;

  const api = async (index: number, key: string) =>
    fetch(new URL("/v1/pets?limit=1", servers[index % count]!.url), { headers: { Authorization: `Bearer ${key}` } });
  const usage = async (index: number, id: string, query = "step=hour") => {
    const response = await fetch(new URL(`/admin/v1/keys/${id}/usage?${query}`, admins[index]), {
      headers: { Authorization: `Bearer ${token}` },
    });
    if (!response.ok) throw new Error(`usage of ${id} on admin ${index}: ${response.status} ${await response.text()}`);
    return (await response.json()) as { totals: Counts; buckets: Counts[] };
  };
  /** An answer as its key's usage counts it. */
  async function tally(counts: Counts, response: Response): Promise<void> {
    const code = response.ok ? undefined : ((await response.json()) as { code: string }).code;
    if (code === undefined) counts.admitted++;
    else if (code === "rate_limited") counts.rateLimited++;
    else if (code === "temporarily_banned") counts.banned++;
    else if (code === "unauthorized") counts.unauthorized++;
    else throw new Error(`unexpected answer ${response.status} ${code}`);
  }

  beforeAll(async () => {
    db = await database();
    token = await adminToken(db);
    // 10 a minute; past 30 refusals within a minute the key is banned (the default ban).
    const busy = await createKey(db, ["--plan", "enterprise", "--per-minute", "10", "--per-day", "100000"]);
    const revoked = await createKey(db, ["--plan", "free"]);
    const revoke = await cli(["keys", "revoke", revoked.id, "--db", db]);
    if (revoke.code !== 0) throw new Error(`keys revoke: ${revoke.stderr}`);
    Object.assign(keys, { busy, revoked });
    servers = await Promise.all(
      Array.from({ length: count }, () =>
        startServer([BINARY, "serve", "--host", "127.0.0.1", "--port", "0", "--db", db, "--admin-listen", "0"]),
      ),
    );
    admins = servers.map(
      (server) =>
        server.stdout
          .map((line) => JSON.parse(line) as { event?: string; url?: string })
          .find((entry) => entry.event === "admin listening")!.url!,
    );

    const started = performance.now();
    // Until the key was banned and 50 were sent: a minute that ends mid-way only takes longer.
    for (let i = 0; (sent.busy.banned === 0 || i < 50) && i < 300; i++) await tally(sent.busy, await api(i, busy.key));
    for (let i = 0; i < 12; i++) await tally(sent.revoked, await api(i, revoked.key));
    await waitFor(
      async () =>
        JSON.stringify((await usage(0, busy.id)).totals) === JSON.stringify(sent.busy) &&
        JSON.stringify((await usage(0, revoked.id)).totals) === JSON.stringify(sent.revoked),
      SEEN_WITHIN_MS + 5_000,
      { every: 100, what: () => `the counts sent, ${JSON.stringify(sent)}, in the admin API` },
    );
    seenAfterMs = Math.round(performance.now() - started);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => stopProcess(server.child, "SIGTERM")));
  });

  it("sent every outcome", () => {
    expect(sent.busy.admitted).toBeGreaterThanOrEqual(10);
    expect(sent.busy.rateLimited).toBeGreaterThanOrEqual(30);
    expect(sent.busy.banned).toBeGreaterThan(0);
    expect(sent.revoked).toEqual({ ...none(), unauthorized: 12 });
  });

  it("has every count in the store within the flush bound of the first request", () => {
    console.info(`usage history, ${count} server(s): every count read back ${seenAfterMs} ms after the first request`);
    expect(seenAfterMs).toBeLessThanOrEqual(SEEN_WITHIN_MS);
  });

  it("reads the same numbers from every server's admin API, by hour and by day", async () => {
    for (let index = 0; index < count; index++) {
      expect((await usage(index, keys.busy.id)).totals).toEqual(sent.busy);
      expect((await usage(index, keys.revoked.id, "step=day")).totals).toEqual(sent.revoked);
    }
  });

  it("reads the same numbers with petstore keys usage", async () => {
    for (const [key, counts] of [
      [keys.busy, sent.busy],
      [keys.revoked, sent.revoked],
    ] as const) {
      const result = await cli(["keys", "usage", key.id, "--since", "2h", "--db", db, "--json"]);
      expect(result.code).toBe(0);
      expect((JSON.parse(result.stdout) as { totals: Counts }).totals).toEqual(counts);
    }
  });

  it("writes the last use with the counts; a revoked key's refused secret is no use", async () => {
    const shown = async (id: string) =>
      JSON.parse((await cli(["keys", "show", id, "--db", db, "--json"])).stdout) as { lastUsedAt: string | null };
    expect((await shown(keys.busy.id)).lastUsedAt).not.toBeNull();
    expect((await shown(keys.revoked.id)).lastUsedAt).toBeNull();
  });

  it("writes the counts still waiting when a server stops", async () => {
    const last = servers.at(-1)!;
    const more = none();
    for (let i = 0; i < 3; i++)
      await tally(
        more,
        await fetch(new URL("/v1/pets?limit=1", last.url), {
          headers: { Authorization: `Bearer ${keys.revoked.key}` },
        }),
      );
    expect(await stopProcess(last.child, "SIGTERM")).toEqual({ code: 0, signal: null });
    const result = await cli(["keys", "usage", keys.revoked.id, "--since", "2h", "--db", db, "--json"]);
    expect((JSON.parse(result.stdout) as { totals: Counts }).totals).toEqual({ ...none(), unauthorized: 12 + 3 });
  });
});
