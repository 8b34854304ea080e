/**
 * The few metric kinds the server exports, written in the Prometheus text exposition format
 * (version 0.0.4): `# HELP`, `# TYPE`, then one line per label set. Small on purpose: the
 * label values are bounded by the callers (route patterns, methods, statuses, plans), so a
 * Map per family is all the bookkeeping needed.
 */

/** `\`, `"` and newlines escaped, as the format requires inside a label value. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function labelText(names: readonly string[], values: readonly string[], extra = ""): string {
  const pairs = names.map((name, i) => `${name}="${escapeLabel(values[i]!)}"`);
  if (extra !== "") pairs.push(extra);
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

/** A number as the format writes it (`+Inf`, never `Infinity`). */
function numberText(value: number): string {
  return value === Infinity ? "+Inf" : String(value);
}

interface Family {
  render(lines: string[]): void;
}

/** A counter (or a gauge: `set`) with fixed label names. */
export class Series implements Family {
  readonly #values = new Map<string, { labels: readonly string[]; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "counter" | "gauge",
    readonly labelNames: readonly string[] = [],
  ) {}

  inc(labels: readonly string[] = [], by = 1): void {
    const key = labels.join("\u0000");
    const entry = this.#values.get(key);
    if (entry) entry.value += by;
    else this.#values.set(key, { labels, value: by });
  }

  set(labels: readonly string[], value: number): void {
    this.#values.set(labels.join("\u0000"), { labels, value });
  }

  render(lines: string[]): void {
    lines.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`);
    for (const { labels, value } of this.#values.values())
      lines.push(`${this.name}${labelText(this.labelNames, labels)} ${numberText(value)}`);
  }
}

/** A histogram with fixed buckets (upper bounds, ascending) and label names. */
export class Histogram implements Family {
  readonly #values = new Map<string, { labels: readonly string[]; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
    readonly labelNames: readonly string[] = [],
  ) {}

  observe(labels: readonly string[], value: number): void {
    const key = labels.join("\u0000");
    let entry = this.#values.get(key);
    if (!entry) this.#values.set(key, (entry = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    // Counted in the first bucket that holds it; rendering makes the counts cumulative.
    const bucket = this.buckets.findIndex((bound) => value <= bound);
    if (bucket !== -1) entry.counts[bucket]!++;
    entry.sum += value;
    entry.count++;
  }

  render(lines: string[]): void {
    lines.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`);
    for (const { labels, counts, sum, count } of this.#values.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += counts[i]!;
        lines.push(
          `${this.name}_bucket${labelText(this.labelNames, labels, `le="${numberText(bound)}"`)} ${cumulative}`,
        );
      });
      lines.push(`${this.name}_bucket${labelText(this.labelNames, labels, 'le="+Inf"')} ${count}`);
      lines.push(`${this.name}_sum${labelText(this.labelNames, labels)} ${numberText(sum)}`);
      lines.push(`${this.name}_count${labelText(this.labelNames, labels)} ${count}`);
    }
  }
}

/** Every family's lines, ending with a newline as the format requires. */
export function exposition(families: readonly Family[]): string {
  const lines: string[] = [];
  for (const family of families) family.render(lines);
  return `${lines.join("\n")}\n`;
}
