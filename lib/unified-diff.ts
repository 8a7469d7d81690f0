/**
 * A unified diff of two texts (the YAML of two template versions' specs), as `diff -u` prints
 * it, so an operator reads a template version's change the way they read a commit. Myers'
 * O((N+M)·D) algorithm on lines; no library (the `diff` package is not a dependency). Pure.
 */

type Op = { kind: " " | "-" | "+"; line: string };

/** Beyond this many differing lines, the diff is "everything removed, everything added". */
const MAX_EDIT_DISTANCE = 4_000;

function lines(text: string): string[] {
  if (text === "") return [];
  const out = text.split("\n");
  if (out[out.length - 1] === "") out.pop();
  return out;
}

/** The shortest edit script from `a` to `b` (Myers 1986), or null when longer than `maxD`. */
function editScript(a: string[], b: string[], maxD: number): Op[] | null {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, maxD);
  const offset = max + 1;
  // v[k] = furthest x reached on diagonal k; trace[d] = v as it was before step d.
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, offset);
    }
  }
  return null;
}

function backtrack(a: string[], b: string[], trace: Int32Array[], offset: number): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : v[offset + prevK]!;
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      ops.push({ kind: " ", line: a[x]! });
    }
    if (d === 0) break;
    if (x === prevX) ops.push({ kind: "+", line: b[prevY]! });
    else ops.push({ kind: "-", line: a[prevX]! });
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

/**
 * `--- from` / `+++ to` and hunks with `context` lines around each change; "" when the
 * texts are equal.
 */
export function unifiedDiff(before: string, after: string, from: string, to: string, context = 3): string {
  if (before === after) return "";
  const a = lines(before);
  const b = lines(after);
  const ops = editScript(a, b, MAX_EDIT_DISTANCE) ?? [...a.map((line) => ({ kind: "-" as const, line })), ...b.map((line) => ({ kind: "+" as const, line }))];
  const out = [`--- ${from}`, `+++ ${to}`];
  // Positions (1-based) in a and b where each op starts.
  const pos: { ai: number; bi: number }[] = [];
  let ai = 1;
  let bi = 1;
  for (const op of ops) {
    pos.push({ ai, bi });
    if (op.kind !== "+") ai++;
    if (op.kind !== "-") bi++;
  }
  let i = 0;
  while (i < ops.length) {
    if (ops[i]!.kind === " ") {
      i++;
      continue;
    }
    // A hunk: from `context` lines before this change to `context` lines after the last
    // change that is at most 2·context unchanged lines away from the previous one.
    const start = Math.max(0, i - context);
    let end = i;
    let j = i;
    while (j < ops.length) {
      if (ops[j]!.kind !== " ") {
        end = j;
        j++;
        continue;
      }
      let run = 0;
      while (j + run < ops.length && ops[j + run]!.kind === " ") run++;
      if (j + run >= ops.length || run > 2 * context) break;
      j += run;
    }
    const stop = Math.min(ops.length, end + 1 + context);
    const hunk = ops.slice(start, stop);
    const aCount = hunk.filter((o) => o.kind !== "+").length;
    const bCount = hunk.filter((o) => o.kind !== "-").length;
    const aStart = aCount === 0 ? pos[start]!.ai - 1 : pos[start]!.ai;
    const bStart = bCount === 0 ? pos[start]!.bi - 1 : pos[start]!.bi;
    out.push(`@@ -${aStart},${aCount} +${bStart},${bCount} @@`);
    for (const op of hunk) out.push(op.kind + op.line);
    i = stop;
  }
  return out.join("\n") + "\n";
}
