/** The nav's fleets icon: stacked layers (inline SVG like components/shell/icons.tsx). */
export function FleetsIcon() {
  return (
    <svg viewBox="0 0 20 20" fill="currentColor" aria-hidden className="size-4 shrink-0">
      <path d="M10.36 2.07a.75.75 0 0 0-.72 0l-7.25 4a.75.75 0 0 0 0 1.31l7.25 4a.75.75 0 0 0 .72 0l7.25-4a.75.75 0 0 0 0-1.31l-7.25-4Z" />
      <path d="m3.1 10.4-.71.39a.75.75 0 0 0 0 1.31l7.25 4a.75.75 0 0 0 .72 0l7.25-4a.75.75 0 0 0 0-1.31l-.71-.39-5.82 3.21a2.25 2.25 0 0 1-2.16 0L3.1 10.4Z" />
      <path d="m3.1 14.15-.71.39a.75.75 0 0 0 0 1.31l7.25 4a.75.75 0 0 0 .72 0l7.25-4a.75.75 0 0 0 0-1.31l-.71-.39-5.82 3.21a2.25 2.25 0 0 1-2.16 0L3.1 14.15Z" />
    </svg>
  );
}
