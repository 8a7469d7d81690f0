/**
 * The server process's V8 heap (issue 22 item 4: memory per held poll). Two settings, applied once
 * per process by whatever starts the server (`server/main.ts`'s main, `scripts/api-server.ts`,
 * through `tuneServerHeap`):
 *
 * - V8 grows the heap to about three times what is live when it is collecting fast; with 10,000
 *   held polls that is ≈170 MB live in a ≈530 MB heap (720 MB RSS). Growing by half instead keeps
 *   the same fleet under 500 MB RSS (docs/architecture.md "Capacity"), for more frequent,
 *   concurrent, major collections.
 * - A burst (thousands of agents enrolling, or coming back after a restart) leaves the heap's
 *   pages committed long after: every page keeps a few of the objects that stay (a held poll, its
 *   socket) among the burst's garbage, so a full collection frees the garbage but not the pages.
 *   V8 compacts them only in a collection that reduces memory, which its memory reducer starts
 *   when the process allocates little, and a server taking heartbeats never does. So once the
 *   heap has stopped growing with more than half of it unused, the server asks for that
 *   collection itself (`HeapProfiler.collectGarbage` through an in-process inspector session:
 *   V8's low-memory collection; no port is opened). 5,000 agents on PostgreSQL: 327 MB of RSS at
 *   the ramp's end, 222 MB after it (docs/architecture.md "Memory per held poll").
 */
import inspector from "node:inspector";
import v8 from "node:v8";

const HEAP_GROWING_PERCENT = 50;
const MiB = 2 ** 20;

export interface HeapReading {
  /** Bytes committed to V8's heap (`total_heap_size`). */
  committed: number;
  /** Bytes of it in use, garbage not yet collected included. */
  used: number;
}

export interface ReclaimPolicy {
  /** A reclaim needs at least this much committed and unused (and more unused than used). */
  minSpareBytes: number;
  /** How often the heap is looked at. */
  checkMs: number;
}

export const RECLAIM_POLICY: ReclaimPolicy = { minSpareBytes: 64 * MiB, checkMs: 15_000 };

/**
 * Whether to reclaim now (pure): more than half of the committed heap unused and at least
 * `minSpareBytes` of it; the heap no bigger than at the previous look (the burst is over); and,
 * after a reclaim, grown by `minSpareBytes` since (a reclaim that could not shrink the heap is
 * not repeated every look).
 */
export function shouldReclaim(now: HeapReading, previous: HeapReading | null, lastReclaimedTo: number | null, policy: ReclaimPolicy = RECLAIM_POLICY): boolean {
  const spare = now.committed - now.used;
  if (spare < policy.minSpareBytes || spare < now.used) return false;
  if (!previous || now.committed > previous.committed) return false;
  return lastReclaimedTo === null || now.committed >= lastReclaimedTo + policy.minSpareBytes;
}

export function heapReading(): HeapReading {
  const h = v8.getHeapStatistics();
  return { committed: h.total_heap_size, used: h.used_heap_size };
}

/**
 * V8's low-memory collection (several full collections, compacting): resolves once it is done and
 * the session is closed. Closed on the next turn, never inside the answer's callback: a session
 * disconnected there deadlocks the process (Node 20: its main thread waits on the session's lock
 * for good; found as a server that stopped answering in the bench).
 */
export function collectAllGarbage(): Promise<void> {
  const session = new inspector.Session();
  session.connect();
  return new Promise<void>((resolve, reject) =>
    session.post("HeapProfiler.collectGarbage", (err) =>
      setImmediate(() => {
        session.disconnect();
        if (err) reject(err);
        else resolve();
      }),
    ),
  );
}

export interface Reclaimed {
  before: HeapReading;
  after: HeapReading;
  ms: number;
}

/** The heap's growth past what is live (first thing at start, before the server loads). */
export function growHeapByHalf(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/** Starts looking for a burst's leftovers every `policy.checkMs`; `stop` ends the looking. `read`: the heap as it is (a test gives its own). */
export function reclaimAfterBursts(onReclaimed: (r: Reclaimed) => void, policy: ReclaimPolicy = RECLAIM_POLICY, read: () => HeapReading = heapReading): { stop(): void } {
  let previous: HeapReading | null = null;
  let reclaimedTo: number | null = null;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    const now = read();
    const go = shouldReclaim(now, previous, reclaimedTo, policy);
    previous = now;
    if (!go) return;
    busy = true;
    const t0 = performance.now();
    collectAllGarbage().then(
      () => {
        const after = read();
        previous = after;
        reclaimedTo = after.committed;
        busy = false;
        onReclaimed({ before: now, after, ms: performance.now() - t0 });
      },
      () => {
        // No inspector in this Node build: nothing to reclaim with, stop looking.
        clearInterval(timer);
        busy = false;
      },
    );
  }, policy.checkMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
