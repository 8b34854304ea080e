import { toJsonSchema } from "@valibot/to-json-schema";
import type { GenericSchema } from "valibot";

/** A piece of an OpenAPI document, as both documents (the Pet Store's and the admin API's) build them. */
export type Json = Record<string, unknown>;

/** A valibot schema as an OpenAPI 3.1 schema object (JSON Schema 2020-12, without its `$schema` line). */
export const schema = (s: GenericSchema): Json => {
  const { $schema: _dialect, ...rest } = toJsonSchema(s, { target: "draft-2020-12", errorMode: "ignore" }) as Json;
  return rest;
};

/** A reference to one of the document's `components.schemas`. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** An optional query parameter: what it takes, and what it does (left out where its name says it). */
export const query = (name: string, schema: Json, description?: string): Json => ({
  name,
  in: "query",
  required: false,
  ...(description !== undefined && { description }),
  schema,
});
