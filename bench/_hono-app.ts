/**
 * The Hono peer's app (the API built by hand the way a team would without this project),
 * served by `Bun.serve` in bench/hono-peer.ts and by `Deno.serve` in bench/hono-deno-peer.ts,
 * so that both runtimes run the same code. The work besides routing (key map, fixed-window
 * counter, valibot, the product's full header set) is bench/_peer.ts, shared with the Elysia
 * peer. No access log.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { admit, insertPet, issueDetails, JSON_TYPE, Limit, NewPet, petPage } from "./_peer.js";

export const app = new Hono().basePath("/v1");

app.use(async (c, next) => {
  const admission = admit(c.req.header("x-request-id") ?? null, c.req.header("authorization") ?? null, Date.now());
  for (const [name, value] of Object.entries(admission.headers)) c.header(name, value);
  if (admission.status !== 200) return c.json(admission.body, admission.status);
  await next();
});

app.get("/pets", (c) => {
  const limit = v.safeParse(Limit, c.req.query("limit") ?? "20");
  if (!limit.success)
    return c.json({ code: "invalid_parameter", message: "limit must be an integer from 1 to 100", status: 400 }, 400);
  const { page, next } = petPage(limit.output, c.req.query("cursor"));
  if (next !== undefined) c.header("Link", next);
  return c.json(page);
});

app.post("/pets", async (c) => {
  if (!JSON_TYPE.test(c.req.header("content-type") ?? "")) {
    return c.json({ code: "unsupported_media_type", message: "Send application/json", status: 415 }, 415);
  }
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    return c.json({ code: "invalid_body", message: "The request body is not valid JSON", status: 400 }, 400);
  }
  const parsed = v.safeParse(NewPet, body);
  if (!parsed.success)
    return c.json(
      {
        code: "invalid_body",
        message: "The request body is invalid",
        status: 400,
        details: issueDetails(parsed.issues),
      },
      400,
    );
  const pet = insertPet(parsed.output);
  c.header("Location", `/v1/pets/${pet.id}`);
  return c.json(pet, 201);
});
