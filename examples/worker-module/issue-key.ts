import type { PlanName } from "@petstore/core";
import { keyInsert } from "./key-insert.js";

// Prints a new key and the wrangler commands that store it in the D1 database `petstore`,
// deployed (--remote) or wrangler dev's local one (--local):
//   npx bun issue-key.ts [free|pro|business]
const plan = (process.argv[2] ?? "free") as PlanName;
if (!["free", "pro", "business"].includes(plan))
  throw new Error("plan: free, pro or business (an enterprise key needs its limits: use keyInsert)");
const { key, sql } = await keyInsert({ plan });
console.log(`Key (shown once, keep it): ${key}`);
console.log("Store it in the deployed D1 database:");
console.log(`npx wrangler d1 execute petstore --remote --command "${sql}"`);
console.log("or in the local one of 'wrangler dev':");
console.log(`npx wrangler d1 execute petstore --local --command "${sql}"`);
