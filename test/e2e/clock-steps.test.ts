import { steppedWallClock } from "../_support/libfaketime.js";
import { clockStepSuite } from "./_clock-steps.js";
import { tempDatabaseUrl } from "./_processes.js";

// A database file: the store's clock is the machine's, so the server's own clock steps with it.
clockStepSuite("a database file", async () => {
  const clock = steppedWallClock();
  return {
    db: tempDatabaseUrl("clock-steps.db"),
    clock,
    serverEnv: { ...process.env, ...clock.env },
    close: async () => clock.remove(),
  };
});
