/**
 * Kubernetes label selectors: `site=lab,env in (dev,test),!legacy,tier!=db,gpu`.
 * Parsed once into requirements; evaluated in memory (auto-approval, fleets) or turned into
 * a database query by server/devices. Pure module.
 */

export type Requirement =
  | { key: string; op: "=" | "!="; values: [string] }
  | { key: string; op: "in" | "notin"; values: string[] }
  | { key: string; op: "exists" | "!exists"; values: [] };

export type LabelSelector = Requirement[];
export type Labels = Record<string, string>;

export class SelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SelectorError";
  }
}

// Label keys: optional DNS prefix and a name; values: up to 63 chars of [A-Za-z0-9_.-].
const KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

export function isValidLabelKey(key: string): boolean {
  return key.length <= 316 && KEY.test(key);
}
export function isValidLabelValue(value: string): boolean {
  return value.length <= 63 && VALUE.test(value);
}

/** Split on commas that are not inside parentheses. */
function splitTerms(input: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of input) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (depth < 0) throw new SelectorError("unbalanced ')'");
    if (ch === "," && depth === 0) {
      terms.push(current);
      current = "";
    } else {
      current += ch;
    }
  }
  if (depth !== 0) throw new SelectorError("unbalanced '('");
  terms.push(current);
  return terms.map((t) => t.trim());
}

function checkKey(key: string): string {
  if (!isValidLabelKey(key)) throw new SelectorError(`invalid label key "${key}"`);
  return key;
}
function checkValue(value: string): string {
  if (!isValidLabelValue(value)) throw new SelectorError(`invalid label value "${value}"`);
  return value;
}

function parseTerm(term: string): Requirement {
  if (term === "") throw new SelectorError("empty requirement");
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(term);
  if (set) {
    const [, key = "", op, list = ""] = set;
    const values = list.split(",").map((v) => checkValue(v.trim()));
    if (values.length === 0 || (values.length === 1 && values[0] === "")) {
      throw new SelectorError(`"${key} ${op}" needs at least one value`);
    }
    return { key: checkKey(key), op: op as "in" | "notin", values };
  }
  const cmp = /^([^!=\s]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
  if (cmp) {
    const [, key = "", op, value = ""] = cmp;
    return { key: checkKey(key), op: op === "!=" ? "!=" : "=", values: [checkValue(value.trim())] };
  }
  if (term.startsWith("!")) return { key: checkKey(term.slice(1).trim()), op: "!exists", values: [] };
  return { key: checkKey(term), op: "exists", values: [] };
}

/** Parses a selector; the empty string selects everything. Throws SelectorError. */
export function parseSelector(input: string): LabelSelector {
  const trimmed = input.trim();
  if (trimmed === "") return [];
  return splitTerms(trimmed).map(parseTerm);
}

export function matchesRequirement(req: Requirement, labels: Labels): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, req.key);
  const value = labels[req.key];
  switch (req.op) {
    case "=":
      return has && value === req.values[0];
    case "!=":
      return !has || value !== req.values[0];
    case "in":
      return has && req.values.includes(value ?? "");
    case "notin":
      return !has || !req.values.includes(value ?? "");
    case "exists":
      return has;
    case "!exists":
      return !has;
  }
}

export function matchesSelector(selector: LabelSelector, labels: Labels): boolean {
  return selector.every((req) => matchesRequirement(req, labels));
}

export function formatSelector(selector: LabelSelector): string {
  return selector
    .map((r) => {
      switch (r.op) {
        case "=":
        case "!=":
          return `${r.key}${r.op}${r.values[0]}`;
        case "in":
        case "notin":
          return `${r.key} ${r.op} (${r.values.join(",")})`;
        case "exists":
          return r.key;
        case "!exists":
          return `!${r.key}`;
      }
    })
    .join(",");
}

/** `k=v,k2=v2` as used on the agent's command line. */
export function parseLabels(input: string): Labels {
  const labels: Labels = {};
  for (const part of input.split(",").map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf("=");
    if (eq <= 0) throw new SelectorError(`label "${part}" is not key=value`);
    labels[checkKey(part.slice(0, eq).trim())] = checkValue(part.slice(eq + 1).trim());
  }
  return labels;
}
