import { cx } from "../ui/cx";

function lineClass(line: string): string {
  if (line.startsWith("+++") || line.startsWith("---")) return "text-slate-500 font-medium";
  if (line.startsWith("@@")) return "bg-sky-50 text-sky-700";
  if (line.startsWith("+")) return "bg-emerald-50 text-emerald-800";
  if (line.startsWith("-")) return "bg-red-50 text-red-800";
  return "text-slate-600";
}

/** A unified diff, one line each, coloured by its first character. */
export function DiffView({ diff, testId }: { diff: string; testId?: string }) {
  const lines = diff.replace(/\n$/, "").split("\n");
  if (diff.trim() === "") return <p className="px-4 py-3 text-sm text-slate-500">No differences.</p>;
  return (
    <pre className="overflow-x-auto py-2 font-mono text-[12px] leading-5" data-testid={testId}>
      {lines.map((line, i) => (
        <div key={i} className={cx("px-4 whitespace-pre", lineClass(line))} data-diff={line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : undefined}>
          {line || " "}
        </div>
      ))}
    </pre>
  );
}
