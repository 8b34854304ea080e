/**
 * The first line of what was thrown: an operator's one-line message never carries a driver's
 * second line (a stack, an SQL text, a hint meant for another reader).
 */
export function firstLine(thrown: unknown): string {
  return (thrown instanceof Error ? thrown.message : String(thrown)).split("\n")[0]!;
}
