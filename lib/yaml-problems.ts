/**
 * YAML text checked against a zod schema, with every problem pointing at the line it
 * concerns: the console's fleet editor and plan import validate with the server's own
 * schemas as the operator types, so the messages match the server's before anything is sent.
 * Pure (the `yaml` package's Document keeps the positions).
 */
import YAML, { isMap, isScalar, isSeq, LineCounter, type Document } from "yaml";
import type { z } from "zod";

export interface YamlProblem {
  /** 1-based line in the YAML, when the field (or its nearest parent) is there. */
  line: number | null;
  /** Dotted path ("spec.commands.0.k0supdate.version"), or null for a syntax error. */
  path: string | null;
  message: string;
}

export type YamlPath = readonly PropertyKey[];

export interface ParsedYaml<T> {
  /** The document, when the text parsed (its comments and layout are kept for edits). */
  doc: Document | null;
  /** The plain value, when the YAML parsed. */
  value: unknown;
  /** Syntax errors first, else the schema's complaints; empty when valid. */
  problems: YamlProblem[];
  /** The validated value (the schema's output), ready to use. */
  input: T | null;
  /** The line of a path in this text: its key's (or item's), else its nearest parent's. */
  lineOf: (path: YamlPath) => number | null;
}

const MAX_SYNTAX_PROBLEMS = 5;
const MAX_SCHEMA_PROBLEMS = 10;

/** The line of `path` in `doc`: the field's key (or item); a missing field points at its nearest parent. */
function lineIn(doc: Document, lineCounter: LineCounter, path: YamlPath): number | null {
  for (let n = path.length; n > 0; n--) {
    const parent = doc.getIn(path.slice(0, n - 1) as (string | number)[], true) ?? (n === 1 ? doc.contents : undefined);
    const last = path[n - 1];
    let node: { range?: [number, number, number] | null } | null | undefined;
    if (isMap(parent)) node = parent.items.find((pair) => isScalar(pair.key) && String(pair.key.value) === String(last))?.key as typeof node;
    else if (isSeq(parent) && typeof last === "number") node = parent.items[last] as typeof node;
    if (node?.range) return lineCounter.linePos(node.range[0]).line;
  }
  return 1;
}

/**
 * Parses `text` and validates it with `schema`. `emptyMessage` is what an empty document is
 * told ("write a Fleet object").
 */
export function parseYamlWith<S extends z.ZodType>(text: string, schema: S, emptyMessage: string): ParsedYaml<z.output<S>> {
  const lineCounter = new LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter });
  if (doc.errors.length > 0) {
    return {
      doc: null,
      value: undefined,
      problems: doc.errors.slice(0, MAX_SYNTAX_PROBLEMS).map((e) => ({
        line: e.linePos?.[0].line ?? null,
        path: null,
        message: (e.message.split("\n")[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, ""),
      })),
      input: null,
      lineOf: () => null,
    };
  }
  const value: unknown = doc.toJS();
  const lineOf = (path: YamlPath) => lineIn(doc, lineCounter, path);
  if (value === null || value === undefined) return { doc, value, problems: [{ line: 1, path: null, message: `the document is empty: ${emptyMessage}` }], input: null, lineOf };
  const r = schema.safeParse(value);
  if (!r.success) {
    return {
      doc,
      value,
      problems: r.error.issues.slice(0, MAX_SCHEMA_PROBLEMS).map((i) => ({
        // An unknown field: its own line (zod's path is the object holding it).
        line: lineOf(i.code === "unrecognized_keys" && i.keys[0] !== undefined ? [...i.path, i.keys[0]] : i.path),
        path: i.path.length ? i.path.join(".") : null,
        message: i.message,
      })),
      input: null,
      lineOf,
    };
  }
  return { doc, value, problems: [], input: r.data, lineOf };
}
