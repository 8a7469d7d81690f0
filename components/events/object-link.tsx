import { Link } from "@/components/ui/link";

/** Where an event's object lives in the console. */
export function objectHref(kind: string, name: string): string {
  switch (kind) {
    case "Device":
      return `/devices/${encodeURIComponent(name)}`;
    case "EnrollmentRequest":
      return `/enrollments?status=All&q=${encodeURIComponent(name)}`;
    case "Action":
      return `/actions/${encodeURIComponent(name)}`;
    case "Plan":
      return `/plans/${encodeURIComponent(name)}`;
    case "ActionRequest":
      return `/requests/${encodeURIComponent(name)}`;
    default:
      return `/events?kind=${encodeURIComponent(kind)}&name=${encodeURIComponent(name)}`;
  }
}

export function ObjectLink({ kind, name, showKind = true }: { kind: string; name: string; showKind?: boolean }) {
  return (
    <span className="inline-flex min-w-0 items-baseline gap-1.5">
      {showKind && <span className="shrink-0 text-[11px] font-medium tracking-wide text-slate-500 uppercase">{kindLabel(kind)}</span>}
      <Link prefetch={false} href={objectHref(kind, name)} className="truncate font-medium text-brand-700 hover:underline" onClick={(e) => e.stopPropagation()}>
        {name}
      </Link>
    </span>
  );
}

export function kindLabel(kind: string): string {
  return kind === "EnrollmentRequest" ? "Enrollment" : kind;
}

/** `user:alice` → alice; `device:x` and others as they are. */
export function Actor({ actor }: { actor: string }) {
  const [kind, ...rest] = actor.split(":");
  const who = rest.join(":");
  if (!who) return <span className="text-slate-600">{actor}</span>;
  return (
    <span className="whitespace-nowrap text-slate-600" title={actor}>
      <span className="text-slate-500">{kind}:</span>
      {who}
    </span>
  );
}
