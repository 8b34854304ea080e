import type { BanPolicy, WindowPair } from "@petstore/core";

/** What the SQL and Redis limiters' own tests share: an instant, windows, a ban never reached, a clock they set. */
export const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);
export const MINUTE = 60_000;
export const DAY = 86_400_000;
export const windowsOf = (perMinute: number, perDay: number): WindowPair => [
  { name: "minute", limit: perMinute, seconds: 60 },
  { name: "day", limit: perDay, seconds: 86_400 },
];
export const NO_BAN: BanPolicy = { threshold: 1_000, seconds: 600 };

let now = T0;
/** The limiters' clock, which `at` sets before a hit. */
export const clock = () => now;
/** `limiter`, its clock set to `time` first. */
export const at = <L>(time: number, limiter: L): L => {
  now = time;
  return limiter;
};
