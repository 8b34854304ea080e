import { copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../_support/chromium.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBinary } from "./_binary.js";
import { cleanUp, type Server, startServer, tempDir } from "./_processes.js";

/** Where the rendered page is saved, to look at when the suite fails. */
const SCREENSHOT = join(tmpdir(), "petstore-docs.png");
/** The bound on every wait in the browser. */
const WAIT_MS = 20_000;

let server: Server;
let browser: Browser | undefined;

beforeAll(async () => {
  // The binary alone in an empty directory, without PATH or node_modules: the assets must be inside it.
  const dir = tempDir();
  const executable = join(dir, "petstore");
  copyFileSync(ensureBinary(), executable);
  server = await startServer([executable, "serve", "--host", "127.0.0.1", "--port", "0", "--db", ":memory:"], {
    cwd: dir,
    env: { PATH: tempDir(), HOME: dir, TMPDIR: dir },
  });
  browser = await launchChromium();
}, 150_000);

afterAll(async () => {
  await Promise.race([browser?.close(), new Promise((resolve) => setTimeout(resolve, 10_000))]);
  await cleanUp();
}, 30_000);

/** Opens /docs in a fresh context, recording every request and every error the page reports. */
async function openDocs(): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  const requests: string[] = [];
  const errors: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  const response = await page.goto(new URL("/docs", server.url).href, { waitUntil: "load", timeout: WAIT_MS });
  expect(response?.status()).toBe(200);
  return { page, requests, errors };
}

describe("the API reference in a browser", () => {
  it("serves the page and its assets from the binary alone", async () => {
    for (const [path, type] of [
      ["/docs", "text/html; charset=utf-8"],
      ["/docs/swagger-ui-bundle.js", "text/javascript; charset=utf-8"],
      ["/docs/swagger-initializer.js", "text/javascript; charset=utf-8"],
      ["/docs/swagger-ui.css", "text/css; charset=utf-8"],
      ["/docs/index.css", "text/css; charset=utf-8"],
    ] as const) {
      const response = await fetch(new URL(path, server.url));
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type"), path).toBe(type);
      expect(response.headers.get("content-security-policy"), path).toContain("default-src 'none'");
      expect((await response.arrayBuffer()).byteLength, path).toBeGreaterThan(100);
    }
  });
});

describe("the API reference page as a browser shows it", () => {
  // One page, opened once the operations are drawn; each it reads what it showed or asked for.
  let page: Page;
  let requests: string[];
  let errors: string[];
  let operations: unknown[];

  beforeAll(async () => {
    ({ page, requests, errors } = await openDocs());
    await page.locator(".opblock").nth(4).waitFor({ state: "visible" });
    operations = await page.locator(".opblock").evaluateAll((blocks) =>
      blocks.map((block) => ({
        id: block.id,
        method: block.querySelector(".opblock-summary-method")?.textContent,
        // Swagger UI strikes a deprecated operation's path through with a class of its own.
        path: block
          .querySelector(".opblock-summary-path, .opblock-summary-path__deprecated")
          ?.textContent?.replace(/\u200b/g, ""),
        summary: block.querySelector(".opblock-summary-description")?.textContent,
        deprecated: block.classList.contains("opblock-deprecated"),
      })),
    );
    await page.screenshot({ path: SCREENSHOT, fullPage: true, timeout: WAIT_MS });
  }, 60_000);
  afterAll(() => page?.context().close());

  it("lists every operation of the served document, getPet as deprecated", () => {
    expect(operations).toEqual([
      {
        id: "operations-default-listPets",
        method: "GET",
        path: "/pets",
        summary: "List animals, optionally filtered by status",
        deprecated: false,
      },
      {
        id: "operations-default-createPet",
        method: "POST",
        path: "/pets",
        summary: "Add an animal",
        deprecated: false,
      },
      {
        id: "operations-default-getPet",
        method: "GET",
        path: "/pets/{petId}",
        summary: "Get an animal (deprecated: removed on 5 December 2030; use GET /pets)",
        deprecated: true,
      },
      {
        id: "operations-default-listOrders",
        method: "GET",
        path: "/store/orders",
        summary: "List store orders, optionally filtered by status",
        deprecated: false,
      },
      {
        id: "operations-default-getOpenApi",
        method: "GET",
        path: "/openapi.json",
        summary: "This document",
        deprecated: false,
      },
    ]);
  });

  it("titles the page Pet Store", async () => {
    await expect(page.locator(".info .title").textContent()).resolves.toContain("Pet Store");
  });

  it("reads the document the binary serves, asking no other host", () => {
    expect(requests).toContain(new URL("/v1/openapi.json", server.url).href);
    const elsewhere = requests.filter((url) => !url.startsWith("data:") && new URL(url).hostname !== "127.0.0.1");
    expect(elsewhere).toEqual([]);
  });

  it("reports no error nor warning, so its content security policy lets it run", () => {
    // A CSP violation is reported on the console.
    expect(errors).toEqual([]);
  });
});
