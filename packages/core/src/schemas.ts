import * as v from "valibot";

/**
 * Valibot schemas of every resource and parameter. The handlers validate with them and the
 * OpenAPI document is generated from them, so the two cannot drift. Types are inferred here.
 */

/** Largest id a JSON client can hold exactly (2^53 - 1). */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

export const PET_STATUSES = ["available", "pending", "sold"] as const;
export const ORDER_STATUSES = ["placed", "approved", "delivered"] as const;

export const PetStatusSchema = v.picklist(PET_STATUSES, "must be one of available, pending, sold");

export const IdSchema = v.pipe(
  v.number("must be an integer"),
  v.integer("must be an integer"),
  v.minValue(1, "must be at least 1"),
  v.maxValue(MAX_ID, `must be at most ${MAX_ID}`),
);

const NAME_MAX = 100;

/** Name of a pet: trimmed, 1..100 characters (code points), no control characters, well-formed Unicode. */
const PetNameSchema = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.minLength(1, "must not be empty or only whitespace"),
  v.check((name) => [...name].length <= NAME_MAX, `must be at most ${NAME_MAX} characters`),
  v.regex(/^\P{Cc}*$/u, "must not contain control characters"),
  // JSON escapes can spell half a UTF-16 pair ("\ud800"): a UTF-8 store would keep U+FFFD,
  // not the name acknowledged. (A u-mode regex sees an unpaired half as a Cs code point.)
  v.regex(/^\P{Cs}*$/u, "must be well-formed Unicode (no unpaired surrogate)"),
  v.metadata({ maxLength: NAME_MAX }),
);

/** Request body of createPet. Unknown fields, `id` included, are rejected. */
export const NewPetSchema = v.strictObject({
  name: PetNameSchema,
  categoryId: IdSchema,
  status: v.optional(PetStatusSchema),
});

export const PetSchema = v.object({
  id: IdSchema,
  name: v.string(),
  categoryId: IdSchema,
  status: v.optional(PetStatusSchema),
});

export const OrderStatusSchema = v.picklist(ORDER_STATUSES, "must be one of placed, approved, delivered");

const QuantitySchema = v.pipe(
  v.number("must be an integer"),
  v.integer("must be an integer"),
  v.minValue(1, "must be at least 1"),
  v.maxValue(1_000_000, "must be at most 1000000"),
);

/** An order as written through the library's storage API (no HTTP write is specified). */
export const NewOrderSchema = v.strictObject({
  petId: IdSchema,
  quantity: QuantitySchema,
  shipDate: v.optional(v.pipe(v.string(), v.isoTimestamp("must be an ISO 8601 timestamp"))),
  status: v.optional(OrderStatusSchema, "placed"),
  complete: v.optional(v.boolean(), false),
});

export const OrderSchema = v.object({
  id: IdSchema,
  petId: IdSchema,
  quantity: QuantitySchema,
  shipDate: v.optional(v.string()),
  status: OrderStatusSchema,
  complete: v.boolean(),
});

/** Page size of the list operations. */
export const LimitSchema = v.pipe(
  v.number("must be an integer"),
  v.integer("must be an integer"),
  v.minValue(1, "must be at least 1"),
  v.maxValue(100, "must be at most 100"),
);
export const DEFAULT_LIMIT = 20;

const ErrorDetailSchema = v.object({ path: v.string(), message: v.string() });

export const ErrorBodySchema = v.object({
  code: v.string(),
  message: v.string(),
  status: v.pipe(v.number(), v.integer()),
  details: v.optional(v.array(ErrorDetailSchema)),
});

export type PetStatus = v.InferOutput<typeof PetStatusSchema>;
export type NewPet = v.InferOutput<typeof NewPetSchema>;
export type Pet = v.InferOutput<typeof PetSchema>;
export type OrderStatus = v.InferOutput<typeof OrderStatusSchema>;
export type NewOrder = v.InferOutput<typeof NewOrderSchema>;
export type NewOrderInput = v.InferInput<typeof NewOrderSchema>;
export type Order = v.InferOutput<typeof OrderSchema>;
export type ErrorDetail = v.InferOutput<typeof ErrorDetailSchema>;
export type ErrorBody = v.InferOutput<typeof ErrorBodySchema>;
