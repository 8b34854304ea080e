import { writeFileSync } from "node:fs";
import { generateTypes } from "./generate-types.js";

writeFileSync(new URL("./schema.d.ts", import.meta.url), await generateTypes());
