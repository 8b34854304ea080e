// Imported as text so `bun build --compile` embeds the files in the binary (no CDN, no
// node_modules at run time); Deno 2.9 reads them natively.
import pageCss from "swagger-ui-dist/index.css" with { type: "text" };
import bundleJs from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "text" };
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "text" };
import type { Beside } from "@petstore/core";

/**
 * Everything self-hosted. Swagger UI sets styles through the DOM (React's `style` prop), which
 * style-src does not govern, and paints its icons from `data:` URIs in its stylesheet.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const HTML = "text/html; charset=utf-8";
const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

// The empty `data:` icon stops the browser asking for /favicon.ico.
const PAGE = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Pet Store API reference</title>
    <link rel="icon" href="data:,">
    <link rel="stylesheet" href="/docs/swagger-ui.css">
    <link rel="stylesheet" href="/docs/index.css">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/swagger-initializer.js"></script>
  </body>
</html>
`;

/** The page's own script: a file rather than inline, so script-src needs no 'unsafe-inline'. */
function initializer(specUrl: string): string {
  // validatorUrl: null, else Swagger UI shows a badge fetched from an outside validator.
  return `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(specUrl)},
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
`;
}

/**
 * The interactive API reference (Swagger UI over the document at `specUrl`) and its assets,
 * served from the binary itself: the page at `pathname`, or undefined when the path is not
 * part of the reference.
 */
export function docs(specUrl: string): Beside {
  const files = new Map<string, { text: string; type: string; body?: Uint8Array<ArrayBuffer> }>([
    ["/docs", { text: PAGE, type: HTML }],
    ["/docs/", { text: PAGE, type: HTML }],
    ["/docs/swagger-ui-bundle.js", { text: bundleJs, type: JS }],
    ["/docs/swagger-initializer.js", { text: initializer(specUrl), type: JS }],
    ["/docs/swagger-ui.css", { text: swaggerCss, type: CSS }],
    ["/docs/index.css", { text: pageCss, type: CSS }],
  ]);
  return (pathname) => {
    const file = files.get(pathname);
    if (file === undefined) return undefined;
    return () => {
      // Encoded once, when first asked for: the bundle is 1.7 MB of text, and encoding it up
      // front cost every start about 1 ms (3 on a busy core).
      file.body ??= new TextEncoder().encode(file.text);
      return new Response(file.body, {
        headers: { "Content-Type": file.type, "Content-Security-Policy": CONTENT_SECURITY_POLICY },
      });
    };
  };
}
