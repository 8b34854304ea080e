/**
 * The 20 pets every variant serves, in creation order (ids 1..20), and the body every
 * measured POST sends. Names vary in length as real ones do; the JSON is about 1.2 KB.
 */
export const SEED_PETS: readonly { name: string; categoryId: number; status: "available" | "pending" | "sold" }[] = [
  "Rex",
  "Luna",
  "Max",
  "Bella",
  "Charlie",
  "Lucy",
  "Cooper",
  "Daisy",
  "Milo",
  "Sadie",
  "Rocky",
  "Molly",
  "Buddy",
  "Maggie",
  "Bear",
  "Sophie",
  "Tucker",
  "Chloe",
  "Duke",
  "Penny the Third",
].map((name, i) => ({ name, categoryId: (i % 4) + 1, status: (["available", "pending", "sold"] as const)[i % 3]! }));
