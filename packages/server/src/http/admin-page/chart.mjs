// A key's or an account's usage as stacked bar charts in inline SVG, drawn here: nothing
// loaded from elsewhere.

import { call } from "./api.mjs";
import { h, isoText } from "./ui.mjs";

const SVG = "http://www.w3.org/2000/svg";
/** The outcomes, bottom to top, with their words. */
export const OUTCOMES = [
  ["admitted", "admitted"],
  ["rateLimited", "rate limited"],
  ["banned", "banned"],
  ["unauthorized", "unauthorized"],
];
const WIDTH = 640;
const HEIGHT = 200;
const LEFT = 56;
const BOTTOM = 24;

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  element.append(...children);
  return element;
}

/** A round number at or above `n`, for the top of the scale. */
function ceiling(n) {
  if (n <= 4) return 4;
  const power = 10 ** Math.floor(Math.log10(n));
  return [1, 2, 2.5, 5, 10].map((step) => step * power).find((top) => top >= n);
}

const total = (bucket) => OUTCOMES.reduce((sum, [name]) => sum + bucket[name], 0);

/**
 * The usage's buckets as stacked bars, one per bucket (admitted at the bottom), each with a
 * title listing its counts; a legend, and the totals in a table (the exact numbers).
 * `label(at)` names a bucket's start on the axis.
 */
export function usageChart(usage, { title, id, label }) {
  const top = ceiling(Math.max(1, ...usage.buckets.map(total)));
  const plotWidth = WIDTH - LEFT - 8;
  const plotHeight = HEIGHT - BOTTOM - 8;
  const slot = plotWidth / Math.max(1, usage.buckets.length);
  const y = (n) => 8 + plotHeight - (n / top) * plotHeight;
  const bars = usage.buckets.map((bucket, i) => {
    let base = 0;
    const parts = OUTCOMES.filter(([name]) => bucket[name] > 0).map(([name]) => {
      const rect = svg("rect", {
        class: `bar-${name}`,
        x: LEFT + i * slot + slot * 0.1,
        width: slot * 0.8,
        y: y(base + bucket[name]),
        height: y(base) - y(base + bucket[name]),
      });
      base += bucket[name];
      return rect;
    });
    const words = OUTCOMES.map(([name, word]) => `${bucket[name]} ${word}`).join(", ");
    return svg("g", {}, svg("title", {}, `${isoText(bucket.at)}: ${words}`), ...parts);
  });
  const ticks = [0, Math.floor((usage.buckets.length - 1) / 2), usage.buckets.length - 1]
    .filter((i, n, all) => i >= 0 && all.indexOf(i) === n)
    .map((i) =>
      svg(
        "text",
        {
          class: "axis",
          x: i === 0 ? LEFT : i === usage.buckets.length - 1 ? WIDTH - 8 : LEFT + i * slot + slot / 2,
          y: HEIGHT - 6,
          // The first and last labels stay inside the chart.
          "text-anchor": i === 0 ? "start" : i === usage.buckets.length - 1 ? "end" : "middle",
        },
        label(usage.buckets[i].at),
      ),
    );
  const titleId = `${id}-title`;
  const chart = svg(
    "svg",
    { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-labelledby": titleId, class: "chart" },
    svg("line", { class: "grid", x1: LEFT, x2: WIDTH - 8, y1: y(top), y2: y(top) }),
    svg("line", { class: "grid", x1: LEFT, x2: WIDTH - 8, y1: y(0), y2: y(0) }),
    svg("text", { class: "axis", x: LEFT - 6, y: y(top) + 4, "text-anchor": "end" }, String(top)),
    svg("text", { class: "axis", x: LEFT - 6, y: y(0) + 4, "text-anchor": "end" }, "0"),
    ...bars,
    ...ticks,
  );
  const totals = h(
    "table",
    { class: "totals", id: `${id}-totals` },
    h("caption", {}, "Totals"),
    h(
      "tbody",
      {},
      OUTCOMES.map(([name, word]) =>
        h(
          "tr",
          { "data-outcome": name },
          h("th", { scope: "row" }, h("span", { class: `swatch bar-${name}`, "aria-hidden": "true" }), word),
          h("td", {}, String(usage.totals[name])),
        ),
      ),
    ),
  );
  return h(
    "figure",
    { class: "usage", id },
    h("figcaption", { id: titleId }, title),
    h("p", { class: "hint" }, `${isoText(usage.from)} to ${isoText(usage.to)}`),
    chart,
    totals,
  );
}

const hour = (at) => at.slice(11, 16);
const day = (at) => at.slice(5, 10);

/**
 * The usage of what `path` names (`/keys/key_...`, `/accounts/acct_...`): its heading and the
 * last 24 hours by hour beside the last 30 days by UTC day; `note` says what they count, first.
 */
export async function usageCharts(path, note = "") {
  const [{ data: hourly }, { data: daily }] = await Promise.all([
    call("GET", `${path}/usage?step=hour`),
    call("GET", `${path}/usage?step=day`),
  ]);
  return [
    h("h3", {}, "Usage"),
    h("p", { class: "hint" }, `${note}Requests by outcome, recorded by the servers within 10 s. Times in UTC.`),
    h(
      "div",
      { class: "charts" },
      usageChart(hourly, { title: "Last 24 hours, by hour", id: "usage-hours", label: hour }),
      usageChart(daily, { title: "Last 30 days, by UTC day", id: "usage-days", label: day }),
    ),
  ];
}
