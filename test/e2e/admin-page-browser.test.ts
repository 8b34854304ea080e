import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../_support/chromium.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminListening, adminToken } from "./_admin.js";
import { ensureBinary, ROOT } from "./_binary.js";
import {
  binaryServe,
  cleanUp,
  createKey,
  type Server,
  startServer,
  stopProcess,
  tempDatabaseUrl,
} from "./_processes.js";

const WAIT_MS = 20_000;
/**
 * Where the page's screenshots go for docs/keys.md when PETSTORE_SCREENSHOTS is set (e.g.
 * `PETSTORE_SCREENSHOTS=1 npx vitest run test/e2e/admin-page-browser.test.ts`); otherwise
 * nowhere, so that a test run leaves the checkout as it was.
 */
const SCREENSHOTS = process.env.PETSTORE_SCREENSHOTS ? join(ROOT, "docs/images") : undefined;

let db: string;
let server: Server;
let adminUrl: string;
let token: string;
let browser: Browser;

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

/** The page in a fresh context, signed in with the keyboard, every request it makes recorded. */
async function signedIn(): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const requests: string[] = [];
  const errors: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  expect((await page.goto(adminUrl, { waitUntil: "load" }))?.status()).toBe(200);
  // Keyboard only: the token field has the focus order's first place after the header's button.
  await page.keyboard.press("Tab");
  await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("token");
  await page.keyboard.type(token);
  await page.keyboard.press("Enter");
  await page.locator("#keys-section").waitFor({ state: "visible" });
  return { page, requests, errors };
}

const admin = (path: string, init: RequestInit = {}) =>
  fetch(new URL(path, adminUrl), {
    ...init,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
  });

describe("the operator's page in Chromium", () => {
  it("lists a key created through the admin API, with its usage, and asks no other host", async () => {
    const created = (await (
      await admin("/admin/v1/keys", { method: "POST", body: JSON.stringify({ plan: "pro", label: "Acme Corp" }) })
    ).json()) as { id: string; key: string };
    for (let i = 0; i < 3; i++)
      await fetch(new URL("/v1/pets", server.url), { headers: { Authorization: `Bearer ${created.key}` } });
    await createKey(db, ["--plan", "free", "--label", "trial"]);
    const { page, requests, errors } = await signedIn();
    const row = page.locator(`#keys tr[data-id="${created.id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain("Acme Corp");
    expect(await row.textContent()).toContain("3 / 10000");
    expect(await page.locator("#keys tbody tr").count()).toBe(2);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, "keys-page.png"), fullPage: true });
    const origin = new URL(adminUrl).origin;
    expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"))).toEqual([]);
    expect(errors).toEqual([]);
    await page.context().close();
  });

  it("finds keys by label with the search box, from the keyboard", async () => {
    const { page } = await signedIn();
    await page.locator("#q").focus();
    await page.keyboard.type("acme");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#keys tbody tr").count()).toBe(1);
    expect(await page.locator("#keys tbody tr").textContent()).toContain("Acme Corp");
    await page.context().close();
  });

  it("creates a key from the form with the keyboard alone, and shows it once", async () => {
    const { page } = await signedIn();
    await page.locator("#plan").focus();
    await page.keyboard.press("Tab");
    await page.keyboard.type("Keyboard Ltd");
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("label");
    // Enter in a field submits its form, as the "Create key" button would.
    await page.keyboard.press("Enter");
    await page.locator("#secret").waitFor({ state: "visible" });
    const secret = await page.locator("#secret-value").inputValue();
    expect(secret).toMatch(/^psk_/);
    expect(
      (await fetch(new URL("/v1/pets", server.url), { headers: { Authorization: `Bearer ${secret}` } })).status,
    ).toBe(200);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, "keys-page-created.png") });
    await page.keyboard.press("Escape");
    await expect.poll(() => page.locator("#keys").textContent()).toContain("Keyboard Ltd");
    await page.context().close();
  });

  it("rolls a key from the page: the new secret shown once, the row saying until when the old one works", async () => {
    const created = (await (
      await admin("/admin/v1/keys", { method: "POST", body: JSON.stringify({ plan: "free", label: "Rolling Inc" }) })
    ).json()) as { id: string; key: string };
    const { page } = await signedIn();
    await page.getByRole("button", { name: `Roll ${created.id}` }).focus();
    await page.keyboard.press("Enter");
    await page.locator("#roll").waitFor({ state: "visible" });
    await page.locator("#overlap").selectOption("3600");
    await page.getByRole("button", { name: "Roll", exact: true }).press("Enter");
    await page.locator("#secret").waitFor({ state: "visible" });
    const secret = await page.locator("#secret-value").inputValue();
    expect(await page.locator("#secret-note").textContent()).toMatch(/The old secret works until/);
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, "keys-page-rolled.png") });
    await page.locator("#secret-done").press("Enter");
    const row = page.locator(`#keys tr[data-id="${created.id}"]`);
    await expect.poll(() => row.textContent()).toMatch(/rolled: old secret works until/);
    const old = await fetch(new URL("/v1/pets", server.url), { headers: { Authorization: `Bearer ${created.key}` } });
    expect(old.status).toBe(200);
    expect(old.headers.get("sunset")).not.toBeNull();
    expect(
      (await fetch(new URL("/v1/pets", server.url), { headers: { Authorization: `Bearer ${secret}` } })).status,
    ).toBe(200);
    await page.context().close();
  });

  it("revokes a key and lifts a ban from the page", async () => {
    const created = (await (
      await admin("/admin/v1/keys", { method: "POST", body: JSON.stringify({ plan: "free", label: "Noisy" }) })
    ).json()) as { id: string; key: string };
    for (let i = 0; i < 92; i++)
      await fetch(new URL("/v1/store/orders", server.url), { headers: { Authorization: `Bearer ${created.key}` } });
    const { page } = await signedIn();
    const row = page.locator(`#keys tr[data-id="${created.id}"]`);
    await expect.poll(() => row.textContent()).toMatch(/banned until/);
    await page.getByRole("button", { name: `Lift the ban of ${created.id}` }).press("Enter");
    await expect.poll(() => page.locator("#status").textContent()).toBe(`Lifted the ban of ${created.id}.`);
    await page.getByRole("button", { name: `Revoke ${created.id}` }).press("Enter");
    await page.locator("#confirm").waitFor({ state: "visible" });
    await page.getByRole("button", { name: "Revoke", exact: true }).press("Enter");
    await expect.poll(() => row.textContent()).toMatch(/revoked/);
    await expect
      .poll(
        async () =>
          (await fetch(new URL("/v1/pets", server.url), { headers: { Authorization: `Bearer ${created.key}` } }))
            .status,
        { timeout: 10_000 },
      )
      .toBe(401);
    await page.context().close();
  }, 60_000);
});
