import { clockStepSuite } from "../e2e/_clock-steps.js";
import { steppedWallClock } from "../_support/libfaketime.js";
import { startPostgres } from "../_support/postgres-server.js";

// PostgreSQL's own clock steps (libfaketime loaded into the server); the binary's does not.
clockStepSuite("PostgreSQL", async () => {
  const clock = steppedWallClock();
  const pg = await startPostgres({ env: clock.env });
  return {
    db: await pg.createDatabase("clock_steps"),
    clock,
    serverEnv: process.env,
    close: async () => {
      await pg.destroy();
      clock.remove();
    },
  };
});
