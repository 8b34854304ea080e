import { expect } from "vitest";
import { mountedAppSuite } from "../_support/mounted-app-suite.js";

// itty-router's own 404 is a JSON error.
mountedAppSuite("itty-mount", async (response) =>
  expect(await response.json()).toEqual({ status: 404, error: "Not Found" }),
);
