/** PromQL's functions, aggregations and keywords: the identifiers of an expression that are not metrics. */
const NOT_METRICS = new Set([
  "sum",
  "min",
  "max",
  "avg",
  "count",
  "stddev",
  "stdvar",
  "topk",
  "bottomk",
  "quantile",
  "group",
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "and",
  "or",
  "unless",
  "bool",
  "offset",
  "rate",
  "irate",
  "increase",
  "delta",
  "idelta",
  "deriv",
  "histogram_quantile",
  "abs",
  "ceil",
  "floor",
  "round",
  "clamp_min",
  "clamp_max",
  "absent",
  "absent_over_time",
  "avg_over_time",
  "max_over_time",
  "min_over_time",
  "sum_over_time",
  "count_over_time",
  "time",
  "vector",
  "scalar",
  "label_replace",
  "label_join",
  "sort",
  "sort_desc",
  "changes",
  "resets",
]);

/**
 * The metric names a PromQL expression reads: its identifiers once label
 * matchers, grouping label lists, strings, ranges and numbers are removed,
 * less PromQL's own words. A histogram's _bucket/_sum/_count series count as
 * the histogram.
 */
export function metricsOfQuery(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, "")
    .replace(/\{[^}]*\}/g, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, "$1");
  const names = [...stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]).filter((name) => !NOT_METRICS.has(name));
  return [...new Set(names.map((name) => name.replace(/_(bucket|sum|count)$/, "")))];
}
