import { Badge, type Tone } from "../ui/badge";
import { toneOf } from "./tones";

/** A state name as a coloured badge. */
export function StatusBadge({ table, state, ...rest }: { table: Record<string, Tone>; state: string | null | undefined; "data-testid"?: string; title?: string }) {
  if (!state) return <span className="text-xs text-slate-500">—</span>;
  return (
    <Badge tone={toneOf(table, state)} {...rest}>
      {state}
    </Badge>
  );
}
