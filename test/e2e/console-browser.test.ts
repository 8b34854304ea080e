import { mkdirSync } from "node:fs";
import { join } from "node:path";
import axe from "axe-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../_support/chromium.js";
import { adminListening, adminToken } from "./_admin.js";
import { ensureBinary, ROOT } from "./_binary.js";
import {
  binaryServe,
  cleanUp,
  cli,
  type Server,
  startServer,
  stopProcess,
  tempDatabaseUrl,
  waitFor,
} from "./_processes.js";

const WAIT_MS = 20_000;
/**
 * Where the console's screenshots go for docs/keys.md when PETSTORE_SCREENSHOTS is set (`npm
 * run screenshots`); otherwise nowhere, so that a test run leaves the checkout as it was.
 */
const SCREENSHOTS = process.env.PETSTORE_SCREENSHOTS ? join(ROOT, "docs/images") : undefined;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let db: string;
let server: Server;
let adminUrl: string;
let token: string;
let browser: Browser;

interface KeyView {
  id: string;
  plan: string;
  perMinute: number;
  perDay: number;
  label: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  states: string[];
  rolling: { since: string; until: string } | null;
  usage: { bannedUntil: string | null } | null;
}
type Counts = { admitted: number; rateLimited: number; banned: number; unauthorized: number };
interface AccountView {
  id: string;
  name: string;
  plan: string;
  perMinute: number;
  perDay: number;
  ownLimits: boolean;
  keys: number;
}

/** The admin API, with the suite's admin token. */
async function admin<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(new URL(`/admin/v1${path}`, adminUrl), {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

const newKey = (body: Record<string, unknown>) => admin<KeyView & { key: string }>("POST", "/keys", body);
const newAccount = (body: Record<string, unknown>) => admin<AccountView>("POST", "/accounts", body);

/** What the store says, through the CLI on the server's database. */
async function stored<T>(args: string[]): Promise<T> {
  const result = await cli([...args, "--db", db, "--json"]);
  if (result.code !== 0) throw new Error(`petstore ${args.join(" ")}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** A request of the Pet Store API with an API key; its status and error code. */
async function request(key: string): Promise<{ status: number; code?: string; sunset: string | null }> {
  const response = await fetch(new URL("/v1/pets?limit=1", server.url), {
    headers: { Authorization: `Bearer ${key}` },
  });
  const body = (await response.json()) as { code?: string };
  return {
    status: response.status,
    ...(body.code !== undefined && { code: body.code }),
    sunset: response.headers.get("sunset"),
  };
}

beforeAll(async () => {
  ensureBinary();
  db = tempDatabaseUrl();
  token = await adminToken(db);
  server = await startServer([...binaryServe(db), "--admin-listen", "0"]);
  adminUrl = adminListening(server).url;
  browser = await launchChromium();
  if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
}, 150_000);

afterAll(async () => {
  await Promise.race([browser?.close(), new Promise((resolve) => setTimeout(resolve, 10_000))]);
  if (server) await stopProcess(server.child, "SIGTERM");
  await cleanUp();
}, 30_000);

interface Session {
  page: Page;
  /** Every URL the page asked for, and every error it logged (a CSP refusal among them). */
  requests: string[];
  errors: string[];
}

/** The console in a fresh tab at `viewport`, signed in from the keyboard: the token field has the focus at once. */
async function signedIn(viewport: { width: number; height: number }, hash = ""): Promise<Session> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const requests: string[] = [];
  const errors: string[] = [];
  page.on("request", (each) => requests.push(each.url()));
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  expect((await page.goto(new URL(`/${hash}`, adminUrl).href, { waitUntil: "load" }))?.status()).toBe(200);
  await expect.poll(() => focused(page)).toBe("token");
  await page.keyboard.type(token);
  await page.keyboard.press("Enter");
  await page.locator("#view-title").waitFor();
  return { page, requests, errors };
}

const focused = (page: Page) => page.evaluate(() => document.activeElement?.id);

/** Presses Tab until the element `id` has the focus (at most `most` times): how a keyboard reaches it. */
async function tabTo(page: Page, id: string, most = 15): Promise<void> {
  for (let i = 0; i < most && (await focused(page)) !== id; i++) await page.keyboard.press("Tab");
  expect(await focused(page)).toBe(id);
}
const statusText = (page: Page) => page.locator("#status").textContent();

/** Goes to a view of the console in the same tab (the token stays in it). */
async function show(page: Page, hash: string, ready: string): Promise<void> {
  await page.evaluate((target) => {
    location.hash = target;
  }, hash);
  await page.locator(ready).waitFor();
}

/** The serious and critical violations axe-core finds on the page as it is now. */
async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axe.source);
  const found = await page.evaluate(async () => {
    const run = (window as unknown as { axe: typeof axe }).axe.run;
    const results = await run(document, { resultTypes: ["violations"] });
    return results.violations.map((violation) => ({
      impact: violation.impact,
      text: `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
    }));
  });
  return found.filter((each) => each.impact === "serious" || each.impact === "critical").map((each) => each.text);
}

/** No horizontal scroll: the page is no wider than the window. */
const fitsWidth = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

/** Whether the element is wholly inside the window. */
async function wholeInView(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).boundingBox();
  const size = page.viewportSize()!;
  return (
    box !== null && box.x >= 0 && box.y >= 0 && box.x + box.width <= size.width && box.y + box.height <= size.height
  );
}

/** The outline of the focused element: visible focus. */
const focusOutline = (page: Page) =>
  page.evaluate(() => {
    const style = getComputedStyle(document.activeElement!);
    return `${style.outlineStyle} ${style.outlineWidth}`;
  });

/** A picture of the page for the docs: the whole page, or the window over its top (and any dialog open). */
const shot = async (page: Page, name: string, fullPage = true) => {
  if (!SCREENSHOTS) return;
  if (!fullPage) await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SCREENSHOTS, name), fullPage });
};

describe.each([DESKTOP, PHONE])("the console in Chromium at $width x $height", (viewport) => {
  const size = `${viewport.width}`;
  const ids = { acme: "", trial: "", noisy: "", rolled: "" };

  beforeAll(async () => {
    const acme = await newKey({ plan: "pro", label: `Acme Corp ${size}` });
    const trial = await newKey({ plan: "free", label: `trial ${size}` });
    const noisy = await newKey({
      plan: "enterprise",
      perMinute: 2,
      perDay: 1_000,
      label: `Noisy ${size}`,
      scopes: ["pets:read"],
      allowFrom: ["127.0.0.0/8", "::1/128"],
    });
    const rolled = await newKey({ plan: "free", label: `Rolled ${size}` });
    Object.assign(ids, { acme: acme.id, trial: trial.id, noisy: noisy.id, rolled: rolled.id });
    for (let i = 0; i < 3; i++) await request(acme.key);
    // Two admitted, then refused until the ban (past 30 refusals in the minute).
    for (let i = 0; i < 40; i++) await request(noisy.key);
    await admin("POST", `/keys/${rolled.id}/roll`, { overlapSeconds: 3_600 });
    await admin("POST", `/keys/${noisy.id}/roll`, { overlapSeconds: 3_600 });
  }, 60_000);

  it("lists the keys with every state each is in, fits the window, asks no other host, and axe finds nothing serious", async () => {
    const { page, requests, errors } = await signedIn(viewport);
    const row = page.locator(`#keys tr[data-id="${ids.noisy}"]`);
    await row.waitFor();
    expect(await row.locator(".state").allTextContents()).toEqual([
      "active",
      expect.stringMatching(/^rolling until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      expect.stringMatching(/^banned until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    ]);
    expect(await page.locator(`#keys tr[data-id="${ids.acme}"]`).textContent()).toContain("3 / 10000");
    expect(await page.locator("#view").textContent()).toContain("Last used: recorded within 10 s");
    expect(await fitsWidth(page)).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, `console-keys-${size}.png`);
    const origin = new URL(adminUrl).origin;
    expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"))).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 60_000);

  it("filters by state and plan, sorts by last use and today's usage, and searches, as the URL says", async () => {
    const { page } = await signedIn(viewport);
    const listed = () =>
      page.locator("#keys tbody tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-id")));
    await page.locator("#state").selectOption("banned");
    await page.locator("#filters button[type=submit]").click();
    await expect.poll(listed).toEqual([ids.noisy]);
    expect(await page.evaluate(() => location.hash)).toBe("#/keys?state=banned");
    // This viewport's keys (their labels end with its width) that are rolling, of the free plan.
    await show(page, `#/keys?state=rolling&plan=free&q=${size}`, "#keys");
    await expect.poll(listed).toEqual([ids.rolled]);
    // Last use and today's counts are recorded within 10 s: read again until they are.
    const order = async (hash: string) => {
      await show(page, "#/keys?state=revoked", "#keys");
      await show(page, hash, "#keys");
      const all = await listed();
      return [ids.acme, ids.noisy, ids.trial].map((id) => all.indexOf(id));
    };
    await expect
      .poll(() => order("#/keys?sort=today"), { timeout: 15_000 })
      .toSatisfy(([acme, noisy, trial]) => acme! < noisy! && noisy! < trial!);
    await expect
      .poll(() => order("#/keys?sort=lastUsed"), { timeout: 15_000 })
      .toSatisfy(([acme, noisy, trial]) => noisy! < acme! && acme! < trial!);
    await show(page, `#/keys?q=${encodeURIComponent(`acme corp ${size}`)}`, "#keys");
    await expect.poll(listed).toEqual([ids.acme]);
    await page.context().close();
  }, 60_000);

  it("creates a key from the keyboard alone: a dialog that keeps the focus, the secret shown once and wholly visible with its Copy button", async () => {
    const { page, errors } = await signedIn(viewport);
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("create-key");
    expect(await focusOutline(page)).toMatch(/^solid [1-9]/);
    await page.keyboard.press("Enter");
    await page.locator("#new-key-dialog").waitFor();
    expect(await focused(page)).toBe("new-plan");
    // Tab goes round the dialog's fields and buttons, never to the page behind it.
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.closest("dialog")?.id)).toBe("new-key-dialog");
    }
    await page.keyboard.press("Escape");
    await expect.poll(() => focused(page)).toBe("create-key");
    await page.keyboard.press("Enter");
    await page.locator("#new-key-dialog").waitFor();
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("new-label");
    await page.keyboard.type(`Keyboard Ltd ${size}`);
    await page.keyboard.press("Enter");
    await page.locator("#secret").waitFor();
    const secret = await page.locator("#secret-value").inputValue();
    expect(secret).toMatch(/^psk_[0-9A-Za-z]{38}$/);
    expect(await wholeInView(page, "#secret-value")).toBe(true);
    expect(await wholeInView(page, "#copy")).toBe(true);
    expect(await fitsWidth(page)).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, `console-key-created-${size}.png`, false);
    expect((await request(secret)).status).toBe(200);
    await page.keyboard.press("Escape");
    await page.locator("#facts, .facts").waitFor();
    const id = (await page.evaluate(() => location.hash)).slice("#/keys/".length);
    expect(await stored<KeyView>(["keys", "show", id])).toMatchObject({ plan: "free", label: `Keyboard Ltd ${size}` });
    expect(await page.locator("#secret-value").inputValue()).toBe("");
    expect(errors).toEqual([]);
    await page.context().close();
  }, 60_000);

  it("says the Enterprise rule next to the limits it needs, then saves plan, limits, label and expiry in place", async () => {
    const { page } = await signedIn(viewport, `#/keys/${ids.acme}`);
    await page.locator("#edit").waitFor();
    await page.locator("#edit-plan").selectOption("enterprise");
    await page.locator("#edit-per-minute").fill("");
    await page.locator("#edit-per-day").fill("");
    await page.locator("#edit button[type=submit]").press("Enter");
    const rule = "is required for an enterprise key (its limits are its own, not a plan's)";
    await expect.poll(() => page.locator("#edit-perMinute-error").textContent()).toBe(rule);
    expect(await page.locator("#edit-perDay-error").textContent()).toBe(rule);
    expect(await page.locator("#edit-per-minute").getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#edit-per-minute").getAttribute("aria-describedby")).toContain("edit-perMinute-error");
    expect(await fitsWidth(page)).toBe(true);
    expect((await stored<KeyView>(["keys", "show", ids.acme])).plan).toBe("pro");
    await page.locator("#edit-per-minute").fill("100");
    await page.locator("#edit-per-day").fill("5000");
    await page.locator("#edit-label").fill(`Acme Upgraded ${size}`);
    await page.locator("#edit-expires").fill("2031-01-01T00:00");
    await page.locator("#edit button[type=submit]").press("Enter");
    await expect.poll(() => statusText(page)).toMatch(/^Saved plan, perMinute, perDay, label, expiresAt of /);
    expect(await focused(page)).toBe("edit-plan");
    expect(await page.locator("#edit-perMinute-error").count()).toBe(0);
    expect(await stored<KeyView>(["keys", "show", ids.acme])).toMatchObject({
      plan: "enterprise",
      perMinute: 100,
      perDay: 5_000,
      label: `Acme Upgraded ${size}`,
      expiresAt: "2031-01-01T00:00:00.000Z",
    });
    expect(await page.locator(".facts").textContent()).toContain("2031-01-01T00:00:00Z");
    await page.context().close();
  }, 60_000);

  it("narrows a key's scopes and the addresses its requests may come from, the API's refusal said beside them", async () => {
    const made = await newKey({ plan: "free", label: `Scoped ${size}` });
    const { page } = await signedIn(viewport, `#/keys/${made.id}`);
    await page.locator("#edit").waitFor();
    for (const box of await page.locator("#edit-scopes input").all()) await box.uncheck();
    await page.locator("#edit button[type=submit]").press("Enter");
    await expect
      .poll(() => page.locator("#edit-scopes-error").textContent())
      .toBe("must be one or more of pets:read, pets:write, orders:read");
    expect(await page.locator("#edit-scopes").getAttribute("aria-invalid")).toBe("true");
    await page.locator("#edit-scope-pets-read").check();
    await page.locator("#edit-allow-from").fill("10.0.0.0/8, 2001:db8::/32");
    await page.locator("#edit button[type=submit]").press("Enter");
    await expect.poll(() => statusText(page)).toMatch(/^Saved scopes, allowFrom of /);
    expect(await stored<{ scopes: string[]; allowFrom: string[] }>(["keys", "show", made.id])).toMatchObject({
      scopes: ["pets:read"],
      allowFrom: ["10.0.0.0/8", "2001:db8::/32"],
    });
    expect((await request(made.key)).code).toBe("address_not_allowed");
    await page.locator("#edit-allow-from").fill("");
    await page.locator("#edit-scope-orders-read").check();
    await page.locator("#edit-scope-pets-write").check();
    await page.locator("#edit button[type=submit]").press("Enter");
    await expect.poll(() => statusText(page)).toMatch(/^Saved scopes, allowFrom of /);
    expect(await stored<{ scopes: string[]; allowFrom: null }>(["keys", "show", made.id])).toMatchObject({
      scopes: ["pets:read", "pets:write", "orders:read"],
      allowFrom: null,
    });
    expect(await fitsWidth(page)).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await page.context().close();
  }, 60_000);

  it("charts the key's usage by hour and by day in inline SVG, with its audit entries, and axe finds nothing serious", async () => {
    const { page, errors } = await signedIn(viewport, `#/keys/${ids.noisy}`);
    await page.locator("#usage-days").waitFor();
    expect(await page.locator("#usage-hours svg rect").count()).toBeGreaterThan(0);
    expect(await page.locator("#usage-days svg rect").count()).toBeGreaterThan(0);
    expect(await page.locator("#view").textContent()).toContain("recorded within 10 s");
    const fact = (term: string) => page.locator(`.facts dt:text-is("${term}") + dd`).textContent();
    expect([await fact("Scopes"), await fact("Allowed from")]).toEqual(["pets:read", "127.0.0.0/8, ::1/128"]);
    const trail = await page.locator("table.audit tbody tr").allTextContents();
    expect(trail.map((entry) => /roll|create/.exec(entry)?.[0])).toEqual(["roll", "create"]);
    expect(await fitsWidth(page)).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, `console-key-${size}.png`);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 60_000);

  it("lifts a ban from the key's page", async () => {
    const { page } = await signedIn(viewport, `#/keys/${ids.noisy}`);
    await page.locator("#unban-key").press("Enter");
    await expect.poll(() => statusText(page)).toBe(`Lifted the ban of ${ids.noisy}.`);
    const after = await stored<KeyView>(["keys", "show", ids.noisy]);
    expect(after.usage?.bannedUntil).toBeNull();
    expect(after.states).not.toContain("banned");
    expect(await page.locator("#unban-key").count()).toBe(0);
    await page.context().close();
  }, 60_000);

  it("rolls a key with the overlap chosen: the new secret shown once, the old one working until then", async () => {
    const created = await newKey({ plan: "free", label: `Roll me ${size}` });
    const { page } = await signedIn(viewport, `#/keys/${created.id}`);
    await page.locator("#roll-key").press("Enter");
    await page.locator("#roll").waitFor();
    await page.locator("#overlap").selectOption("86400");
    await page.locator("#roll button[value=roll]").press("Enter");
    await page.locator("#secret").waitFor();
    const secret = await page.locator("#secret-value").inputValue();
    expect(await page.locator("#secret-note").textContent()).toMatch(/^The old secret works until /);
    expect(await wholeInView(page, "#copy")).toBe(true);
    await page.locator("#secret-done").press("Enter");
    const rolled = await stored<KeyView>(["keys", "show", created.id]);
    const overlap = Date.parse(rolled.rolling!.until) - Date.parse(rolled.rolling!.since);
    expect(overlap).toBe(86_400_000);
    const old = await request(created.key);
    expect([old.status, old.sunset]).toEqual([200, new Date(Date.parse(rolled.rolling!.until)).toUTCString()]);
    expect((await request(secret)).status).toBe(200);
    await expect.poll(() => page.locator(".facts .state-rolling").count()).toBe(1);
    await page.context().close();
  }, 60_000);

  it("revokes a key only once confirmed: Escape keeps it, Revoke revokes it", async () => {
    const created = await newKey({ plan: "free", label: `Revoke me ${size}` });
    const { page } = await signedIn(viewport, `#/keys/${created.id}`);
    await page.locator("#revoke-key").press("Enter");
    await page.locator("#confirm").waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.keyboard.press("Escape");
    await expect.poll(() => focused(page)).toBe("revoke-key");
    expect((await stored<KeyView>(["keys", "show", created.id])).revokedAt).toBeNull();
    await page.keyboard.press("Enter");
    await page.locator("#confirm-yes").press("Enter");
    await expect.poll(() => statusText(page)).toBe(`Revoked ${created.id}: every server refuses it within 5 seconds.`);
    expect((await stored<KeyView>(["keys", "show", created.id])).revokedAt).not.toBeNull();
    await expect.poll(async () => (await request(created.key)).status, { timeout: 10_000 }).toBe(401);
    expect(await page.locator(".facts .state-revoked").count()).toBe(1);
    await page.context().close();
  }, 60_000);

  it("lists the accounts with their plan, limits in force and number of keys, fits the window, and axe finds nothing serious", async () => {
    const group = await newAccount({ name: `Acme Group ${size}`, plan: "pro" });
    for (const label of ["staging", "production"]) await newKey({ plan: "pro", label, accountId: group.id });
    const own = await newAccount({ name: `Big Co ${size}`, plan: "enterprise", perMinute: 500, perDay: 50_000 });
    const { page, errors } = await signedIn(viewport, "#/accounts");
    const row = (id: string) => page.locator(`#accounts tr[data-id="${id}"]`);
    await row(group.id).waitFor();
    const cells = (id: string) => row(id).locator("th, td").allTextContents();
    expect(await cells(group.id)).toEqual([
      `Acme Group ${size}${group.id}`,
      "pro (300/min, 10000/day)",
      "2",
      expect.any(String),
    ]);
    expect(await cells(own.id)).toEqual([
      `Big Co ${size}${own.id}`,
      "enterprise (500/min, 50000/day)limits of its own",
      "0",
      expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    ]);
    expect(await page.locator("#nav a[aria-current=page]").textContent()).toBe("Accounts");
    expect(await fitsWidth(page)).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, `console-accounts-${size}.png`);
    await page.locator("#account-plan-filter").selectOption("enterprise");
    await page.locator("#account-filters button[type=submit]").press("Enter");
    await expect.poll(() => page.evaluate(() => location.hash)).toBe("#/accounts?plan=enterprise");
    // The filtered list replaces the whole one at once.
    await expect.poll(() => row(group.id).count()).toBe(0);
    expect(await row(own.id).count()).toBe(1);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 60_000);

  it("from the keyboard alone: creates an account (the Enterprise rule said beside its limits), opens it, changes its plan, and creates a key in it", async () => {
    const { page, errors } = await signedIn(viewport, "#/accounts");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("create-account");
    await page.keyboard.press("Enter");
    await page.locator("#new-account-dialog").waitFor();
    expect(await focused(page)).toBe("new-account-name");
    await page.keyboard.type(`Keyboard Group ${size}`);
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("new-account-plan");
    await page.keyboard.type("Enterprise");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("new-account-per-minute");
    await page.keyboard.press("Enter");
    const rule = /^is required for an enterprise/;
    await expect.poll(() => page.locator("#new-account-perMinute-error").textContent()).toMatch(rule);
    expect(await page.locator("#new-account-perDay-error").textContent()).toMatch(rule);
    expect(await page.locator("#new-account-per-minute").getAttribute("aria-invalid")).toBe("true");
    expect(await fitsWidth(page)).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, `console-account-create-${size}.png`, false);
    await page.keyboard.type("120");
    await page.keyboard.press("Tab");
    await page.keyboard.type("6000");
    await page.keyboard.press("Enter");
    await expect.poll(() => statusText(page)).toMatch(new RegExp(`^Created acct_\\w+, Keyboard Group ${size}\\.$`));
    expect(await focused(page)).toBe("view-title");
    const id = (await page.evaluate(() => location.hash)).slice("#/accounts/".length);
    expect(await stored<AccountView>(["accounts", "show", id])).toMatchObject({
      name: `Keyboard Group ${size}`,
      plan: "enterprise",
      perMinute: 120,
      perDay: 6_000,
    });
    // Its plan: Business, its limits emptied back to the plan's.
    await tabTo(page, "account-plan");
    await page.keyboard.type("Business");
    for (const limit of ["account-per-minute", "account-per-day"]) {
      await page.keyboard.press("Tab");
      expect(await focused(page)).toBe(limit);
      await page.keyboard.press("Control+A");
      await page.keyboard.press("Backspace");
    }
    await page.keyboard.press("Enter");
    await expect
      .poll(() => statusText(page))
      .toBe(`Saved plan, perMinute, perDay of ${id}: in force on every server within 5 s.`);
    expect(await stored<AccountView>(["accounts", "show", id])).toMatchObject({
      plan: "business",
      perMinute: 1_000,
      perDay: 100_000,
    });
    expect(await page.locator(".facts").textContent()).toContain(
      "business: 1000 a minute, 100000 a day, the plan's limits",
    );
    // A key in it: the dialog starts at the account's plan; the secret is shown once.
    await tabTo(page, "create-key");
    await page.keyboard.press("Enter");
    await page.locator("#new-key-dialog").waitFor();
    expect(await page.locator("#new-key-title").textContent()).toBe(`Create a key in Keyboard Group ${size}`);
    expect(await page.locator("#new-plan").inputValue()).toBe("business");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("new-label");
    await page.keyboard.type("ci");
    await page.keyboard.press("Enter");
    await page.locator("#secret").waitFor();
    const secret = await page.locator("#secret-value").inputValue();
    expect(secret).toMatch(/^psk_[0-9A-Za-z]{38}$/);
    expect(await wholeInView(page, "#copy")).toBe(true);
    await page.keyboard.press("Escape");
    await expect
      .poll(() => statusText(page))
      .toMatch(new RegExp(`^Created key_\\w+ in ${id}: its secret was shown once\\.$`));
    expect(await focused(page)).toBe("create-key");
    const keyId = await page.locator("#keys tbody tr").getAttribute("data-id");
    expect(await stored<KeyView & { accountId: string }>(["keys", "show", keyId!])).toMatchObject({
      plan: "business",
      label: "ci",
      accountId: id,
    });
    expect((await request(secret)).status).toBe(200);
    // The browser logs the one refusal the form was meant to meet, nothing else.
    expect(errors).toEqual([expect.stringContaining("status of 400 (Bad Request)")]);
    await page.context().close();
  }, 90_000);

  it("shows an account's keys linking to their pages, its usage summed over them, and its audit entries; a key's page links back", async () => {
    const account = await newAccount({ name: `Summed ${size}`, plan: "pro" });
    const first = await newKey({ plan: "pro", label: "first", accountId: account.id });
    const second = await newKey({ plan: "pro", label: "second", accountId: account.id });
    await admin("PATCH", `/accounts/${account.id}`, { name: `Summed Ltd ${size}` });
    for (let i = 0; i < 3; i++) await request(first.key);
    for (let i = 0; i < 2; i++) await request(second.key);
    // The servers add their counts at least every 10 s: wait for these, not for a time.
    const totals = async () => (await admin<{ totals: Counts }>("GET", `/accounts/${account.id}/usage`)).totals;
    await waitFor(async () => (await totals()).admitted === 5, 30_000, { every: 250, what: "the account's usage" });
    const { page, errors } = await signedIn(viewport, `#/accounts/${account.id}`);
    await page.locator("#usage-days-totals").waitFor();
    expect(await page.locator("#view-title").textContent()).toBe(`Summed Ltd ${size} ${account.id}`);
    const listed = await page
      .locator("#keys tbody tr")
      .evaluateAll((rows) => rows.map((row) => row.querySelector("a")?.getAttribute("href")));
    expect(listed).toEqual([`#/keys/${first.id}`, `#/keys/${second.id}`]);
    const admitted = (figure: string) => page.locator(`#${figure}-totals tr[data-outcome=admitted] td`).textContent();
    expect([await admitted("usage-hours"), await admitted("usage-days")]).toEqual(["5", "5"]);
    expect(await page.locator("#usage-hours svg rect").count()).toBeGreaterThan(0);
    const trail = await page.locator("table.audit tbody tr").allTextContents();
    expect(trail.map((entry) => /update|create/.exec(entry)?.[0])).toEqual(["update", "create"]);
    expect(trail.every((entry) => entry.includes(account.id))).toBe(true);
    expect(await fitsWidth(page)).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, `console-account-${size}.png`);
    await page.locator(`#keys a[href="#/keys/${second.id}"]`).press("Enter");
    await page.locator(".facts").waitFor();
    const link = page.locator('.facts dt:text-is("Account") + dd a');
    expect([await link.textContent(), await link.getAttribute("href")]).toEqual([
      account.id,
      `#/accounts/${account.id}`,
    ]);
    await link.press("Enter");
    await expect.poll(() => page.locator("#view-title").textContent()).toBe(`Summed Ltd ${size} ${account.id}`);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 90_000);

  it("filters the audit trail by key, action and actor, a page at a time", async () => {
    const tokenId = `tok_${token.slice(4, 16)}`;
    for (let i = 0; i < 55; i++) await admin("PATCH", `/keys/${ids.trial}`, { label: `trial ${size} ${i}` });
    const { page, errors } = await signedIn(viewport, "#/audit");
    await page.locator("#audit").waitFor();
    await page.locator("#audit-key").fill(ids.trial);
    await page.locator("#audit-action").selectOption("update");
    await page.locator("#audit-actor").fill(`admin:${tokenId}`);
    await page.locator("#audit-filters button[type=submit]").press("Enter");
    await expect.poll(() => page.evaluate(() => location.hash)).toContain("action=update");
    await expect.poll(() => page.locator("#audit tbody tr").count()).toBe(50);
    const rows = await page.locator("#audit tbody tr").allTextContents();
    expect(rows.every((row) => row.includes("update") && row.includes(ids.trial) && row.includes(tokenId))).toBe(true);
    await shot(page, `console-audit-${size}.png`, false);
    await page.locator("#older").press("Enter");
    await expect.poll(() => page.locator("#audit tbody tr").count()).toBe(55);
    expect(await page.locator("#older").isHidden()).toBe(true);
    const expected = await stored<unknown[]>(["audit", "--key", ids.trial, "--limit", "100"]);
    expect(expected.filter((entry) => (entry as { action: string }).action === "update")).toHaveLength(55);
    expect(await fitsWidth(page)).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 90_000);

  it("creates an admin token shown once with its Copy button, and revokes it once confirmed", async () => {
    const { page, errors } = await signedIn(viewport, "#/tokens");
    await page.locator("#tokens").waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.locator("#token-label").fill(`laptop ${size}`);
    await page.locator("#token-label").press("Enter");
    await page.locator("#secret").waitFor();
    const made = await page.locator("#secret-value").inputValue();
    expect(made).toMatch(/^psa_[0-9A-Za-z]{44}$/);
    expect(await wholeInView(page, "#secret-value")).toBe(true);
    expect(await wholeInView(page, "#copy")).toBe(true);
    await shot(page, `console-token-created-${size}.png`, false);
    await page.keyboard.press("Escape");
    const id = `tok_${made.slice(4, 16)}`;
    const listed = await stored<{ id: string; label: string; revokedAt: string | null }[]>(["admin-tokens", "list"]);
    expect(listed.find((each) => each.id === id)).toMatchObject({ label: `laptop ${size}`, revokedAt: null });
    const withMade = () =>
      fetch(new URL("/admin/v1/tokens", adminUrl), { headers: { Authorization: `Bearer ${made}` } }).then(
        (response) => response.status,
      );
    expect(await withMade()).toBe(200);
    await page.locator(`#tokens tr[data-id="${id}"] button`).press("Enter");
    await page.locator("#confirm-yes").press("Enter");
    await expect.poll(() => statusText(page)).toBe(`Revoked ${id}.`);
    expect(await withMade()).toBe(401);
    const after = await stored<{ id: string; revokedAt: string | null }[]>(["admin-tokens", "list"]);
    expect(after.find((each) => each.id === id)?.revokedAt).not.toBeNull();
    expect(await fitsWidth(page)).toBe(true);
    await shot(page, `console-tokens-${size}.png`, false);
    expect(errors).toEqual([]);
    await page.context().close();
  }, 60_000);
});

describe("the accounts on the console, more than a page of them", () => {
  it("shows 50 of one plan, then the rest with Load more, in the order they were made", async () => {
    for (let i = 0; i < 53; i++) await newAccount({ name: `Paged ${i}`, plan: "business" });
    const all = await stored<AccountView[]>(["accounts", "list"]);
    const business = all.filter((account) => account.plan === "business").map((account) => account.id);
    const { page } = await signedIn(DESKTOP, "#/accounts?plan=business");
    const rows = () => page.locator("#accounts tbody tr").count();
    await expect.poll(rows).toBe(50);
    expect(await statusText(page)).toBe("50+ accounts.");
    await page.locator("#more").press("Enter");
    await expect.poll(rows).toBe(business.length);
    expect(await page.locator("#more").isHidden()).toBe(true);
    const listed = await page
      .locator("#accounts tbody tr")
      .evaluateAll((each) => each.map((row) => row.getAttribute("data-id")));
    expect(listed).toEqual(business);
    await page.context().close();
  }, 90_000);
});

describe("signing in to the console", () => {
  it("says a wrong admin token was refused, and axe finds nothing serious on the sign-in form", async () => {
    const page = await browser.newPage({ viewport: PHONE });
    page.setDefaultTimeout(WAIT_MS);
    await page.goto(adminUrl);
    await expect.poll(() => focused(page)).toBe("token");
    expect(await axeViolations(page)).toEqual([]);
    await page.keyboard.type(`psa_${"A".repeat(44)}`);
    await page.keyboard.press("Enter");
    await expect.poll(() => statusText(page)).toBe("The admin token was refused: sign in again.");
    expect(await page.locator("#sign-in").isVisible()).toBe(true);
    await page.close();
  }, 60_000);
});

describe("a key's four counts on the console", () => {
  const counted: Counts = { admitted: 0, rateLimited: 0, banned: 0, unauthorized: 0 };
  let id: string;

  beforeAll(async () => {
    const made = await newKey({ plan: "enterprise", perMinute: 5, perDay: 1_000, label: "Counted" });
    id = made.id;
    const tally = ({ status, code }: { status: number; code?: string }) => {
      if (status === 200) counted.admitted++;
      else if (code === "rate_limited") counted.rateLimited++;
      else if (code === "temporarily_banned") counted.banned++;
      else if (status === 401) counted.unauthorized++;
    };
    // The old secret, rolled out at once: refused, and counted as this key's.
    const rolled = await admin<{ key: string }>("POST", `/keys/${id}/roll`, { overlapSeconds: 0 });
    for (let i = 0; i < 4; i++) tally(await request(made.key));
    // 80 in a row: whatever minute they straddle, one side has more than the 30 refusals that ban.
    for (let i = 0; i < 80; i++) tally(await request(rolled.key));
    // The servers add their counts at least every 10 s: wait for this one's, not for a time.
    const totals = async () => (await admin<{ totals: Counts }>("GET", `/keys/${id}/usage`)).totals;
    await waitFor(async () => JSON.stringify(await totals()) === JSON.stringify(counted), 30_000, {
      every: 250,
      what: "the key's usage as counted",
    });
  }, 60_000);

  it("shows the same admitted, rate limited, banned and unauthorized as the admin API and the CLI", async () => {
    expect(counted.admitted).toBeGreaterThan(0);
    expect(counted.rateLimited).toBeGreaterThan(0);
    expect(counted.banned).toBeGreaterThan(0);
    expect(counted.unauthorized).toBe(4);
    const { page } = await signedIn(DESKTOP, `#/keys/${id}`);
    await page.locator("#usage-hours-totals").waitFor();
    const shown = async (figure: string) =>
      Object.fromEntries(
        await page
          .locator(`#${figure}-totals tr`)
          .evaluateAll((rows) =>
            rows.map((row) => [row.getAttribute("data-outcome"), Number(row.querySelector("td")!.textContent)]),
          ),
      ) as Counts;
    const api = (await admin<{ totals: Counts }>("GET", `/keys/${id}/usage`)).totals;
    const byCli = (await stored<{ totals: Counts }>(["keys", "usage", id])).totals;
    expect(await shown("usage-hours")).toEqual(api);
    expect(await shown("usage-days")).toEqual(api);
    expect(byCli).toEqual(api);
    expect(api).toEqual(counted);
    await page.context().close();
  }, 60_000);
});
