/**
 * Changes the query string of the current page without a server round trip: Next.js syncs
 * native history calls with useSearchParams, so filters and pages update at once and Back
 * still works.
 */
export function setSearch(search: string, opts: { replace?: boolean } = {}): void {
  const url = `${window.location.pathname}${search && !search.startsWith("?") ? `?${search}` : search}`;
  if (opts.replace) window.history.replaceState(null, "", url);
  else window.history.pushState(null, "", url);
}
