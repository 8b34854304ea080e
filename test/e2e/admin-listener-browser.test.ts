import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { launchChromium } from "../_support/chromium.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminListening, adminToken } from "./_admin.js";
import { ensureBinary } from "./_binary.js";
import { binaryServe, cleanUp, type Server, startServer, stopProcess, tempDatabaseUrl } from "./_processes.js";

let server: Server;
let adminUrl: string;
let token: string;
let browser: Browser;
/** Another site's page: any page the operator has open, here on localhost (another site than 127.0.0.1). */
let elsewhere: HttpServer;

beforeAll(async () => {
  ensureBinary();
  const db = tempDatabaseUrl();
  token = await adminToken(db);
  server = await startServer([...binaryServe(db), "--admin-listen", "0"]);
  adminUrl = adminListening(server).url;
  browser = await launchChromium();
  elsewhere = createServer((_, response) => response.end("<!doctype html><title>elsewhere</title>"));
  await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
}, 150_000);

afterAll(async () => {
  await Promise.race([browser?.close(), new Promise((resolve) => setTimeout(resolve, 10_000))]);
  elsewhere?.close();
  if (server) await stopProcess(server.child, "SIGTERM");
  await cleanUp();
}, 30_000);

describe("a web page of another origin in the operator's browser", () => {
  it("reaches nothing and locks no one out: 35 no-cors requests to the admin listener, then the operator's token is served", async () => {
    const page = await browser.newPage();
    try {
      expect((await page.goto(`http://localhost:${(elsewhere.address() as AddressInfo).port}/`))?.status()).toBe(200);
      const sent = await page.evaluate(async (url) => {
        const answers = await Promise.all(
          Array.from({ length: 35 }, () =>
            fetch(url, { mode: "no-cors" }).then(
              () => "sent",
              () => "failed",
            ),
          ),
        );
        return answers.filter((answer) => answer === "sent").length;
      }, new URL("/admin/v1/keys", adminUrl).href);
      expect(sent).toBe(35);
    } finally {
      await page.close();
    }
    const refused = server.stdout
      .map((line) => JSON.parse(line) as { admin?: boolean; status?: number })
      .filter((line) => line.admin === true && line.status === 403);
    expect(refused).toHaveLength(35);
    const operator = await fetch(new URL("/admin/v1/keys", adminUrl), {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(operator.status).toBe(200);
  });
});
