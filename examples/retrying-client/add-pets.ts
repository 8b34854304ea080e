import { addPet, petstoreClient } from "./client.js";

const client = petstoreClient(
  process.env.PETSTORE_URL ?? "http://127.0.0.1:3000/v1",
  process.env.PETSTORE_API_KEY ?? "",
);

// More than the Free plan's 60 a minute: the client waits for the next window instead of failing.
const count = Number(process.env.COUNT ?? 70);
for (let n = 1; n <= count; n++) {
  const pet = await addPet(client, { name: `Pet ${n}`, categoryId: 1, status: "available" });
  console.log(`added ${pet.name} as id ${pet.id}`);
}
