import { describe, expect, it } from "vitest";
import { docs } from "./docs.js";

const pages = docs("/v1/openapi.json");
/** The answer to a GET of a page of the reference. */
const reference = (pathname: string) => pages(pathname)!(new Request(`http://test${pathname}`)) as Response;

/** The same-origin paths the page loads: its stylesheets and scripts. */
function assetsOf(html: string): string[] {
  return [...html.matchAll(/<(?:script src|link rel="stylesheet" href)="([^"]+)"/g)].map((match) => match[1]!);
}

describe("the API reference", () => {
  it("answers /docs and /docs/ with the HTML page under a CSP that allows only its own origin", async () => {
    for (const path of ["/docs", "/docs/"]) {
      const response = reference(path);
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const csp = response.headers.get("content-security-policy")!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self';");
      expect(csp).toContain("style-src 'self';");
      expect(csp).not.toContain("unsafe");
      expect(await response.text()).toContain('<div id="swagger-ui"></div>');
    }
  });

  it("serves every script and stylesheet the page loads, from the binary, with its type", async () => {
    const assets = assetsOf(await reference("/docs").text());
    expect(assets).toEqual([
      "/docs/swagger-ui.css",
      "/docs/index.css",
      "/docs/swagger-ui-bundle.js",
      "/docs/swagger-initializer.js",
    ]);
    for (const path of assets) {
      const response = reference(path);
      expect(response.headers.get("content-type"), path).toBe(
        path.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8",
      );
      expect(response.headers.get("content-security-policy"), path).toContain("default-src 'none'");
      expect((await response.text()).length, path).toBeGreaterThan(0);
    }
    expect(await reference("/docs/swagger-ui-bundle.js").text()).toContain("SwaggerUIBundle");
    expect(await reference("/docs/swagger-ui.css").text()).toContain(".swagger-ui");
  });

  it("boots Swagger UI on the served document without the outside validator", async () => {
    const script = await (
      docs("/api/openapi.json")("/docs/swagger-initializer.js")!(
        new Request("http://test/docs/swagger-initializer.js"),
      ) as Response
    ).text();
    expect(script).toContain('url: "/api/openapi.json"');
    expect(script).toContain("validatorUrl: null");
  });

  it("knows nothing of other paths", () => {
    for (const path of ["/doc", "/docs/swagger-ui.js", "/docs/index.html", "/docs//", "/other"])
      expect(pages(path), path).toBeUndefined();
  });
});
