import type { HelperOptions } from "handlebars";

/**
 * The helpers every Pressroom template may use, besides Handlebars' built-ins:
 *
 *   {{money amount currency}}  1234.5 "USD" → "$1,234.50"  (en-US, ISO 4217 code, default USD)
 *   {{date value}}             "2026-11-21" → "21 Nov 2026" (always UTC, so a date never shifts a day)
 *   {{add a b}}                a + b
 *   {{multiply a b}}           a × b, e.g. {{money (multiply quantity unit_price) currency}}
 *
 * Each returns a plain string or number, so Handlebars HTML-escapes the result as usual.
 * Bad input never throws (a document should not fail on one odd value): money and date
 * print "" for a missing value and the value itself when it cannot be understood; add and
 * multiply give "" when an operand is not a number, which money then prints as "".
 */
export function registerHelpers(hbs: typeof import("handlebars")): void {
  hbs.registerHelper("money", (amount: unknown, currency: unknown) => formatMoney(amount, isOptions(currency) ? undefined : currency));
  hbs.registerHelper("date", (value: unknown) => formatDate(value));
  hbs.registerHelper("add", (a: unknown, b: unknown) => arithmetic(a, isOptions(b) ? undefined : b, (x, y) => x + y));
  hbs.registerHelper("multiply", (a: unknown, b: unknown) => arithmetic(a, isOptions(b) ? undefined : b, (x, y) => x * y));
}

const DEFAULT_CURRENCY = "USD";
const MAX_CACHED_FORMATTERS = 256;
const moneyFormats = new Map<string, Intl.NumberFormat>();

/** "$1,234.50", "€99.00", "¥1,235"; "" for a missing amount. */
export function formatMoney(amount: unknown, currency?: unknown): string {
  if (amount === undefined || amount === null || amount === "") return "";
  const value = toNumber(amount);
  if (value === undefined) return String(amount);
  const code = typeof currency === "string" && currency.trim() !== "" ? currency.trim().toUpperCase() : DEFAULT_CURRENCY;
  const format = moneyFormat(code);
  // `+ 0` turns -0 into 0, so that a zero amount is never printed as "-$0.00".
  if (format) return format.format(value + 0);
  return `${code} ${(value + 0).toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

function moneyFormat(code: string): Intl.NumberFormat | undefined {
  let format = moneyFormats.get(code);
  if (format) return format;
  try {
    format = new Intl.NumberFormat("en-US", { style: "currency", currency: code });
  } catch {
    return undefined; // not a well-formed currency code
  }
  if (moneyFormats.size >= MAX_CACHED_FORMATTERS) moneyFormats.clear();
  moneyFormats.set(code, format);
  return format;
}

const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const dateParts = new Intl.DateTimeFormat("en-US", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });

/**
 * "2026-11-21" → "21 Nov 2026". Also takes a full ISO timestamp or epoch milliseconds
 * (shown as its UTC day). The day-month-year order is British (en-GB); the month
 * abbreviation is always three letters ("Sep", where current en-GB data says "Sept").
 */
export function formatDate(value: unknown): string {
  if (value === undefined || value === null || value === "") return "";
  let time: number;
  const day = typeof value === "string" ? ISO_DAY.exec(value.trim()) : null;
  if (day) {
    const [year, month, date] = [Number(day[1]), Number(day[2]), Number(day[3])];
    time = Date.UTC(year, month - 1, date);
    const check = new Date(time);
    if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== date) return String(value); // 2026-02-31
  } else if (typeof value === "string" || typeof value === "number") {
    time = new Date(value).getTime();
  } else if (value instanceof Date) {
    time = value.getTime();
  } else {
    return String(value);
  }
  if (!Number.isFinite(time)) return String(value);
  const parts = dateParts.formatToParts(time);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  return `${part("day")} ${part("month")} ${part("year")}`;
}

function arithmetic(a: unknown, b: unknown, op: (x: number, y: number) => number): number | "" {
  const x = toNumber(a);
  const y = toNumber(b);
  if (x === undefined || y === undefined) return "";
  const result = op(x, y);
  if (!Number.isFinite(result)) return "";
  // Drops binary floating-point noise: 3 × 19.99 is 59.97, not 59.970000000000006.
  return Number(result.toPrecision(15));
}

function toNumber(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value === "string" && value.trim() !== "") {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** Handlebars passes its options object last: a helper called with fewer arguments sees it in their place. */
function isOptions(value: unknown): value is HelperOptions {
  return typeof value === "object" && value !== null && "hash" in value && "name" in value;
}
