import SwaggerParser from "@apidevtools/swagger-parser";
import { beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../keys/issue-api-key.js";
import { adminWorld, T0 } from "../../../../test/_support/admin-world.js";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/**
 * One world for the suite: a busy key (3 admitted at 11:00; 4 admitted, 2 rate limited and
 * 1 banned at 12:00), a quiet one, and a revoked one refused twice, written by the API's
 * flush; the admin API reads them on the same clock.
 */
const { clock, adapters, petstore, admin, call, api } = adminWorld({
  start: T0 - HOUR,
  petstore: { keyCacheMs: 0, ban: { threshold: 2, seconds: 600 } },
});
const ids = { busy: "", quiet: "", revoked: "" };

const get = (path: string, headers: Record<string, string> = {}) => call("GET", path, undefined, headers);
const body = async <T = Record<string, unknown>>(response: Response) => (await response.json()) as T;
/** The details of a 400: which parameter it names. */
const named = async (response: Response) => {
  expect(response.status).toBe(400);
  const error = await body<{ code: string; details: { path: string }[] }>(response);
  expect(error.code).toBe("invalid_parameter");
  return error.details.map((detail) => detail.path);
};

beforeAll(async () => {
  const busy = await issueApiKey(adapters.keys, { plan: "enterprise", perMinute: 4, perDay: 1_000, label: "Acme" });
  const quiet = await issueApiKey(adapters.keys, { plan: "free" });
  const revoked = await issueApiKey(adapters.keys, { plan: "free" });
  Object.assign(ids, { busy: busy.record.id, quiet: quiet.record.id, revoked: revoked.record.id });
  for (let i = 0; i < 3; i++) await api(busy.key);
  clock.now = T0;
  for (let i = 0; i < 7; i++) await api(busy.key);
  await api(quiet.key);
  await adapters.keys.revoke(revoked.record.id);
  await api(revoked.key);
  await api(revoked.key);
  await petstore.flush();
});

describe("the admin API's usage", () => {
  it("gives a key's usage by hour over the last day by default, every hour there", async () => {
    const response = await get(`/keys/${ids.busy}/usage`);
    expect(response.status).toBe(200);
    const usage = await body<{ step: string; from: string; to: string; buckets: { at: string }[]; totals: object }>(
      response,
    );
    expect(usage).toMatchObject({
      keyId: ids.busy,
      step: "hour",
      from: new Date(T0 - 24 * HOUR - 10_000).toISOString(),
      to: new Date(T0).toISOString(),
      totals: { admitted: 4 + 3, rateLimited: 2, banned: 1, unauthorized: 0 },
    });
    expect(usage.buckets).toHaveLength(25);
    expect(usage.buckets.slice(-2)).toEqual([
      { at: new Date(T0 - HOUR - 10_000).toISOString(), admitted: 3, rateLimited: 0, banned: 0, unauthorized: 0 },
      { at: new Date(T0 - 10_000).toISOString(), admitted: 4, rateLimited: 2, banned: 1, unauthorized: 0 },
    ]);
  });

  it("gives it by minute or by UTC day from the instants asked", async () => {
    const minutes = await body<{ buckets: unknown[] }>(
      await get(
        `/keys/${ids.busy}/usage?step=minute&from=${new Date(T0 - 2 * MINUTE).toISOString()}&to=${new Date(T0 + MINUTE).toISOString()}`,
      ),
    );
    // Read up to now: 11:58 and 11:59 empty, then 12:00.
    expect(minutes.buckets).toEqual([
      expect.objectContaining({ admitted: 0 }),
      expect.objectContaining({ admitted: 0 }),
      { at: new Date(T0 - 10_000).toISOString(), admitted: 4, rateLimited: 2, banned: 1, unauthorized: 0 },
    ]);
    const days = await body<{ buckets: { at: string; admitted: number }[] }>(
      await get(`/keys/${ids.busy}/usage?step=day&from=2030-01-14T00:00:00Z`),
    );
    expect(days.buckets.map(({ at, admitted }) => [at, admitted])).toEqual([
      ["2030-01-14T00:00:00.000Z", 0],
      ["2030-01-15T00:00:00.000Z", 7],
    ]);
  });

  it("counts a revoked key's refused secret as its unauthorized requests", async () => {
    const usage = await body<{ totals: object }>(await get(`/keys/${ids.revoked}/usage?step=day`));
    expect(usage.totals).toEqual({ admitted: 0, rateLimited: 0, banned: 0, unauthorized: 2 });
  });

  it("answers CSV to Accept: text/csv, a line per bucket after the header", async () => {
    const response = await get(`/keys/${ids.busy}/usage?step=hour&from=${new Date(T0 - HOUR).toISOString()}`, {
      Accept: "text/csv",
    });
    expect(response.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(await response.text()).toBe(
      [
        "at,admitted,rate_limited,banned,unauthorized",
        `${new Date(T0 - HOUR - 10_000).toISOString()},3,0,0,0`,
        `${new Date(T0 - 10_000).toISOString()},4,2,1,0`,
        "",
      ].join("\r\n"),
    );
  });

  it("names the parameter of a from after to, a range older than kept, an unknown step or a malformed instant", async () => {
    const at = (ms: number) => new Date(ms).toISOString();
    expect(await named(await get(`/keys/${ids.busy}/usage?from=${at(T0)}&to=${at(T0 - HOUR)}`))).toEqual(["from"]);
    expect(await named(await get(`/keys/${ids.busy}/usage?step=hour&from=${at(T0 - 49 * HOUR)}`))).toEqual(["from"]);
    expect(await named(await get(`/keys/${ids.busy}/usage?step=day&from=${at(T0 - 401 * DAY)}`))).toEqual(["from"]);
    expect(await named(await get(`/keys/${ids.busy}/usage?step=week`))).toEqual(["step"]);
    expect(await named(await get(`/keys/${ids.busy}/usage?to=yesterday`))).toEqual(["to"]);
  });

  it("answers 404 for a key no one has", async () => {
    expect((await get("/keys/key_nobody/usage")).status).toBe(404);
  });

  it("ranks the 20 keys with the most requests or refusals over a window, with their labels", async () => {
    const top = await body<{ window: string; by: string; keys: { keyId: string }[] }>(await get("/usage/top"));
    expect(top).toMatchObject({ window: "24h", by: "requests" });
    expect(top.keys[0]).toEqual({
      keyId: ids.busy,
      label: "Acme",
      requests: 10,
      refusals: 3,
      admitted: 7,
      rateLimited: 2,
      banned: 1,
      unauthorized: 0,
    });
    expect(top.keys.map((key) => key.keyId)).toEqual([ids.busy, ids.revoked, ids.quiet]);
    const refusals = await body<{ keys: { keyId: string }[] }>(await get("/usage/top?window=1h&by=refusals"));
    expect(refusals.keys.map((key) => key.keyId)).toEqual([ids.busy, ids.revoked]);
  });

  it("names the parameter of an unknown window or ranking", async () => {
    expect(await named(await get("/usage/top?window=7d"))).toEqual(["window"]);
    expect(await named(await get("/usage/top?by=errors"))).toEqual(["by"]);
  });

  it("describes both in its OpenAPI document", async () => {
    const document = await body(await admin.fetch(new Request("http://admin.test/admin/v1/openapi.json")));
    await SwaggerParser.validate(structuredClone(document) as never);
    const paths = document.paths as Record<string, { get: { responses: Record<string, unknown> } }>;
    expect(Object.keys(paths["/keys/{id}/usage"]!.get.responses)).toContain("400");
    expect(Object.keys(paths["/usage/top"]!.get.responses)).toContain("400");
  });
});
