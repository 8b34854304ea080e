import { expect } from "vitest";
import { mountedAppSuite } from "../_support/mounted-app-suite.js";

// Hono's own 404 is plain text.
mountedAppSuite("hono-mount", async (response) => expect(await response.text()).toBe("404 Not Found"));
