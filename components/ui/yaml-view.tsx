"use client";

import { useMemo, useRef, useState } from "react";
import YAML from "yaml";
import { Button } from "./button";
import { CopyButton } from "./copy-button";
import { Dialog } from "./dialog";

/**
 * The object as YAML. Pages pass what their tRPC query returned: the REST API serves the same
 * procedures' answers as JSON (server/rest/routes.ts), so a JSON round trip (dates as ISO
 * strings, undefined dropped) gives exactly what `GET /api/v1/...` returns.
 */
export function toYaml(object: unknown): string {
  const json: unknown = object === undefined ? null : JSON.parse(JSON.stringify(object));
  return YAML.stringify(json, { lineWidth: 0, aliasDuplicateObjects: false });
}

/** The YAML in a scrolling block with a Copy button. */
export function YamlView({ object, testId = "yaml-view" }: { object: unknown; testId?: string }) {
  const text = useMemo(() => toYaml(object), [object]);
  const pre = useRef<HTMLPreElement>(null);
  return (
    <div className="space-y-2">
      <div className="flex items-center justify-end gap-2">
        <CopyButton text={text} shown={pre} testId={testId} />
      </div>
      <pre
        ref={pre}
        tabIndex={0}
        aria-label="YAML"
        data-testid={testId}
        className="max-h-[65vh] overflow-auto rounded-md bg-slate-50 p-3 font-mono text-xs leading-5 whitespace-pre text-slate-800 ring-1 ring-slate-200 ring-inset"
      >
        {text}
      </pre>
    </div>
  );
}

/**
 * A "YAML" button for a detail page's header: opens the object as the REST API returns it,
 * with a copy button. `what` names it in the dialog's title ("device edge-1").
 */
export function YamlButton({ object, what }: { object: unknown; what: string }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button data-testid="yaml-button" onClick={() => setOpen(true)} disabled={object === undefined} title="The object as the REST API returns it, as YAML">
        YAML
      </Button>
      <Dialog open={open} onClose={() => setOpen(false)} title={`YAML of ${what}`} size="lg" data-testid="yaml-dialog" footer={<Button onClick={() => setOpen(false)}>Close</Button>}>
        {open && <YamlView object={object} />}
      </Dialog>
    </>
  );
}
