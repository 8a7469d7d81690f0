/** SQLite binds at most 999 parameters a statement: long `IN (...)` lists go in slices. */
export const IN_LIST_MAX = 500;

export async function inChunks<T, R>(items: T[], fn: (chunk: T[]) => Promise<R[]>, size = IN_LIST_MAX): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await fn(items.slice(i, i + size))));
  return out;
}
