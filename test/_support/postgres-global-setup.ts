import type { TestProject } from "vitest/node";
import { startPostgres } from "./postgres-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The superuser URL of the PostgreSQL server the suites share (see postgres-database.ts). */
    postgresUrl: string;
  }
}

/**
 * vitest globalSetup: one PostgreSQL server for every suite of the run (each makes databases
 * of its own on it), stopped by PID when the run ends.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres();
  project.provide("postgresUrl", server.url());
  return () => server.destroy();
}
