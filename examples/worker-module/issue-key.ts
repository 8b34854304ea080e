import type { PlanName } from "@petstore/core";
import { keyInsert } from "./key-insert.js";

// Prints a new key and the wrangler command that stores it in the D1 database `petstore`:
//   bun issue-key.ts [free|pro|business]
const plan = (process.argv[2] ?? "free") as PlanName;
if (!["free", "pro", "business"].includes(plan)) throw new Error("plan: free, pro or business (an enterprise key needs its limits: use keyInsert)");
const { key, sql } = await keyInsert({ plan });
console.log(`Key (shown once, keep it): ${key}`);
console.log(`npx wrangler d1 execute petstore --remote --command "${sql}"`);
