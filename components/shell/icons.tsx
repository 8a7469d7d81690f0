/** Small inline icons (no icon font: the console works offline). */
const base = { viewBox: "0 0 20 20", fill: "currentColor", "aria-hidden": true, className: "size-4 shrink-0" } as const;

export function OverviewIcon() {
  return (
    <svg {...base}>
      <path d="M3 3.75A.75.75 0 0 1 3.75 3h5.5a.75.75 0 0 1 .75.75v5.5a.75.75 0 0 1-.75.75h-5.5A.75.75 0 0 1 3 9.25v-5.5Zm8 0a.75.75 0 0 1 .75-.75h4.5a.75.75 0 0 1 .75.75v3.5a.75.75 0 0 1-.75.75h-4.5a.75.75 0 0 1-.75-.75v-3.5ZM11 10.75a.75.75 0 0 1 .75-.75h4.5a.75.75 0 0 1 .75.75v5.5a.75.75 0 0 1-.75.75h-4.5a.75.75 0 0 1-.75-.75v-5.5ZM3 12.75a.75.75 0 0 1 .75-.75h5.5a.75.75 0 0 1 .75.75v3.5a.75.75 0 0 1-.75.75h-5.5A.75.75 0 0 1 3 16.25v-3.5Z" />
    </svg>
  );
}
export function DevicesIcon() {
  return (
    <svg {...base}>
      <path d="M2.5 4.5A1.5 1.5 0 0 1 4 3h12a1.5 1.5 0 0 1 1.5 1.5v3A1.5 1.5 0 0 1 16 9H4a1.5 1.5 0 0 1-1.5-1.5v-3ZM14 6.75a.75.75 0 1 0 0-1.5.75.75 0 0 0 0 1.5ZM2.5 12.5A1.5 1.5 0 0 1 4 11h12a1.5 1.5 0 0 1 1.5 1.5v3A1.5 1.5 0 0 1 16 17H4a1.5 1.5 0 0 1-1.5-1.5v-3ZM14 14.75a.75.75 0 1 0 0-1.5.75.75 0 0 0 0 1.5Z" />
    </svg>
  );
}
export function EnrollIcon() {
  return (
    <svg {...base}>
      <path d="M10 8a3 3 0 1 0 0-6 3 3 0 0 0 0 6ZM3.5 15.5a6.5 6.5 0 0 1 10.3-5.27.75.75 0 0 1 .2.52V17a1 1 0 0 1-1 1H4.5a1 1 0 0 1-1-1v-1.5ZM16 11.75a.75.75 0 0 1 .75.75v1.25H18a.75.75 0 0 1 0 1.5h-1.25v1.25a.75.75 0 0 1-1.5 0v-1.25H14a.75.75 0 0 1 0-1.5h1.25V12.5a.75.75 0 0 1 .75-.75Z" />
    </svg>
  );
}
export function EventsIcon() {
  return (
    <svg {...base}>
      <path fillRule="evenodd" d="M10 18a8 8 0 1 0 0-16 8 8 0 0 0 0 16Zm.75-13a.75.75 0 0 0-1.5 0v5c0 .2.08.39.22.53l3 3a.75.75 0 1 0 1.06-1.06l-2.78-2.78V5Z" clipRule="evenodd" />
    </svg>
  );
}
export function ApprovalsIcon() {
  return (
    <svg {...base}>
      <path fillRule="evenodd" d="M10 1.5a.75.75 0 0 1 .44.14l6.25 4.5a.75.75 0 0 1 .31.61v8.5A2.75 2.75 0 0 1 14.25 18h-8.5A2.75 2.75 0 0 1 3 15.25v-8.5a.75.75 0 0 1 .31-.61l6.25-4.5A.75.75 0 0 1 10 1.5Zm3.28 7.03a.75.75 0 0 0-1.06-1.06L9.25 10.44 7.78 8.97a.75.75 0 0 0-1.06 1.06l2 2a.75.75 0 0 0 1.06 0l3.5-3.5Z" clipRule="evenodd" />
    </svg>
  );
}
export function ActionsIcon() {
  return (
    <svg {...base}>
      <path d="M11.98 1.62a.75.75 0 0 1 .39.87L10.98 8h4.27a.75.75 0 0 1 .56 1.25l-7.5 8.5a.75.75 0 0 1-1.3-.68L8.4 11.5H4.75a.75.75 0 0 1-.56-1.25l7-8.5a.75.75 0 0 1 .79-.13Z" />
    </svg>
  );
}
export function Logo({ className = "size-7" }: { className?: string }) {
  return (
    <svg viewBox="0 0 32 32" className={className} aria-hidden>
      <rect width="32" height="32" rx="8" fill="#1f5bd6" />
      <circle cx="10" cy="11" r="3" fill="#fff" />
      <circle cx="22" cy="11" r="3" fill="#9cc2ff" />
      <circle cx="10" cy="21" r="3" fill="#9cc2ff" />
      <circle cx="22" cy="21" r="3" fill="#fff" />
      <path d="M13 11h6M10 14v4M22 14v4M13 21h6" stroke="#fff" strokeWidth="1.6" strokeLinecap="round" />
    </svg>
  );
}
export function KeyIcon() {
  return (
    <svg {...base}>
      <path fillRule="evenodd" d="M8 7a5 5 0 1 1 3.61 4.8l-1.36 1.36a.75.75 0 0 1-.53.22H8.5v1.12a.75.75 0 0 1-.75.75H6.5v1.25a.75.75 0 0 1-.75.75h-2.5a.75.75 0 0 1-.75-.75v-2.19c0-.2.08-.39.22-.53l5.36-5.36A5 5 0 0 1 8 7Zm5-1.5a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3Z" clipRule="evenodd" />
    </svg>
  );
}
export function PlansIcon() {
  return (
    <svg {...base}>
      <path fillRule="evenodd" d="M4.75 2A1.75 1.75 0 0 0 3 3.75v12.5c0 .97.78 1.75 1.75 1.75h10.5c.97 0 1.75-.78 1.75-1.75V3.75C17 2.78 16.22 2 15.25 2H4.75Zm1.5 3.5a.75.75 0 0 0 0 1.5h.5a.75.75 0 0 0 0-1.5h-.5Zm3 0a.75.75 0 0 0 0 1.5h4.5a.75.75 0 0 0 0-1.5h-4.5Zm-3 3.75a.75.75 0 0 0 0 1.5h.5a.75.75 0 0 0 0-1.5h-.5Zm3 0a.75.75 0 0 0 0 1.5h4.5a.75.75 0 0 0 0-1.5h-4.5ZM6.25 13a.75.75 0 0 0 0 1.5h.5a.75.75 0 0 0 0-1.5h-.5Zm3 0a.75.75 0 0 0 0 1.5h4.5a.75.75 0 0 0 0-1.5h-4.5Z" clipRule="evenodd" />
    </svg>
  );
}
export function WorkflowsIcon() {
  return (
    <svg {...base}>
      <path d="M3 4.5A1.5 1.5 0 0 1 4.5 3h2A1.5 1.5 0 0 1 8 4.5v2A1.5 1.5 0 0 1 6.5 8h-.25v1.25h2.5a2 2 0 0 1 1.41.59L12 11.67V11.5A1.5 1.5 0 0 1 13.5 10h2a1.5 1.5 0 0 1 1.5 1.5v2a1.5 1.5 0 0 1-1.5 1.5h-2a1.5 1.5 0 0 1-1.47-1.2L9.1 10.88a.5.5 0 0 0-.35-.13h-2.5v3.5h.25A1.5 1.5 0 0 1 8 15.75v.75A1.5 1.5 0 0 1 6.5 18h-2A1.5 1.5 0 0 1 3 16.5v-.75a1.5 1.5 0 0 1 1.5-1.5h.25V8H4.5A1.5 1.5 0 0 1 3 6.5v-2Z" />
    </svg>
  );
}
