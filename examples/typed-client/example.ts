import createClient from "openapi-fetch";
import { idempotentCreates } from "./idempotent-creates.js";
import type { paths } from "./schema.js";

// Paths, parameters, bodies and answers are all typed from the served OpenAPI document.
const client = createClient<paths>({
  baseUrl: process.env.PETSTORE_URL ?? "http://127.0.0.1:3000/v1",
  headers: { Authorization: `Bearer ${process.env.PETSTORE_API_KEY}` },
});
// Every create carries an Idempotency-Key (see idempotent-creates.ts).
client.use(idempotentCreates);

const created = await client.POST("/pets", { body: { name: "Rex", categoryId: 1, status: "available" } });
if (created.error) throw new Error(`${created.error.code}: ${created.error.message}`);
console.log(`Created pet ${created.data.id} at ${created.response.headers.get("Location")}`);

const listed = await client.GET("/pets", { params: { query: { status: "available", limit: 10 } } });
if (listed.error) throw new Error(`${listed.error.code}: ${listed.error.message}`);
console.log(`Available: ${listed.data.map((pet) => pet.name).join(", ")}`);
