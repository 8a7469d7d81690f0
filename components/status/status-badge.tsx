import { Badge, type Tone } from "../ui/badge";
import { stateHelp } from "./state-help";
import { toneOf } from "./tones";

/** A state name as a coloured badge; its tooltip says what the state means (state-help.ts) unless given one. */
export function StatusBadge({ table, state, title, ...rest }: { table: Record<string, Tone>; state: string | null | undefined; "data-testid"?: string; title?: string | undefined }) {
  if (!state) return <span className="text-xs text-slate-500">—</span>;
  return (
    <Badge tone={toneOf(table, state)} title={title ?? stateHelp(table, state)} {...rest}>
      {state}
    </Badge>
  );
}
