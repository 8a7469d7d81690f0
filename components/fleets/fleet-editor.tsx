"use client";

import { useMemo, useState } from "react";
import { useRouter } from "next/navigation";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { errorMessage, useTRPC } from "../trpc";
import { useIdempotencyKey } from "../hooks/use-idempotency-key";
import { Button } from "../ui/button";
import { InlineError } from "../ui/states";
import { YamlProblems, YamlTextarea } from "../ui/yaml-input";
import { FleetForm } from "./fleet-form";
import { applyFormEdit, fleetToYaml, formFromValue, NEW_FLEET_YAML, parseFleetYaml, type FormEdit } from "./fleet-yaml";
import type { Fleet } from "./types";
import { savePreview, type SavePreview } from "./save-preview";
import { SaveConfirmDialog } from "./save-confirm-dialog";

type Outcome = { kind: "saved"; text: string } | null;

/**
 * The fleet editor: YAML (the source of truth) beside a form for the common fields, validated
 * with the server's own schema as you type; the server's answer to Save shows under it.
 * `fleet` set: edit that fleet (Save is a PUT; a changed template makes a new template
 * version). Unset: create one. An edit's Save first shows what it will do (the template's diff
 * and the rollout it starts, save-preview.ts); only confirming saves.
 */
export function FleetEditor({ fleet, readOnly = false, onCancel }: { fleet?: Fleet; readOnly?: boolean; onCancel?: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const creating = fleet === undefined;
  const serverYaml = useMemo(() => (fleet ? fleetToYaml(fleet) : NEW_FLEET_YAML), [fleet]);

  const [text, setText] = useState(serverYaml);
  const [base, setBase] = useState(serverYaml);
  const [outcome, setOutcome] = useState<Outcome>(null);
  const [confirming, setConfirming] = useState<SavePreview | null>(null);
  // The fleet changed on the server (another operator, a revert): follow it unless there are edits.
  const [seen, setSeen] = useState(serverYaml);
  const [staleBase, setStaleBase] = useState(false);
  if (seen !== serverYaml) {
    setSeen(serverYaml);
    if (text === base) {
      setText(serverYaml);
      setBase(serverYaml);
      setStaleBase(false);
    } else setStaleBase(true);
  }

  const parsed = useMemo(() => parseFleetYaml(text, fleet?.metadata.name), [text, fleet?.metadata.name]);
  const model = useMemo(() => (parsed.doc ? formFromValue(parsed.value) : null), [parsed]);
  const dirty = text !== base;

  const edit = (e: FormEdit) => {
    setOutcome(null);
    setText((t) => applyFormEdit(t, e));
  };

  const afterChange = (name: string) => {
    void queryClient.invalidateQueries(trpc.fleets.list.pathFilter());
    void queryClient.invalidateQueries(trpc.fleets.templateVersions.queryFilter({ name }));
    void queryClient.invalidateQueries(trpc.fleets.events.queryFilter({ name }));
    void queryClient.invalidateQueries(trpc.devices.list.pathFilter());
  };

  const update = useMutation(
    trpc.fleets.update.mutationOptions({
      onSuccess: (result) => {
        const name = result.fleet.metadata.name;
        queryClient.setQueryData(trpc.fleets.get.queryKey({ name }), result.fleet);
        afterChange(name);
        const fresh = fleetToYaml(result.fleet);
        setText(fresh);
        setBase(fresh);
        setSeen(fresh);
        setStaleBase(false);
        setConfirming(null);
        setOutcome({
          kind: "saved",
          text: !result.changed
            ? "No change: the fleet already is this."
            : result.templateVersion
              ? `Saved: template version ${result.templateVersion}.`
              : "Saved: no template change, so no new template version.",
        });
      },
    }),
  );
  const { idempotencyKey, renew } = useIdempotencyKey();
  const create = useMutation(
    trpc.fleets.create.mutationOptions({
      onSuccess: (created) => {
        renew();
        afterChange(created.metadata.name);
        queryClient.setQueryData(trpc.fleets.get.queryKey({ name: created.metadata.name }), created);
        router.push(`/fleets/${encodeURIComponent(created.metadata.name)}`);
      },
    }),
  );
  const mutation = creating ? create : update;

  const save = () => {
    if (!parsed.input) return;
    setOutcome(null);
    if (fleet) {
      update.reset();
      setConfirming(savePreview(fleet, parsed.input));
    } else create.mutate(withKey(parsed.value, idempotencyKey));
  };
  // The YAML as written (not the parsed defaults): the server validates what the operator wrote.
  const confirmSave = () => fleet && update.mutate({ name: fleet.metadata.name, fleet: parsed.value });

  return (
    <div className="space-y-3" data-testid="fleet-editor">
      {staleBase && (
        <div className="flex flex-wrap items-center justify-between gap-2 rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-800 ring-1 ring-amber-600/25 ring-inset" role="status" data-testid="fleet-editor-stale">
          <span>This fleet changed on the server since you started editing. Saving replaces it with what is here.</span>
          <Button
            size="sm"
            onClick={() => {
              setText(serverYaml);
              setBase(serverYaml);
              setStaleBase(false);
            }}
          >
            Discard my edits
          </Button>
        </div>
      )}
      <div className="grid gap-4 lg:grid-cols-[minmax(0,2fr)_minmax(0,3fr)]">
        <FleetForm model={model} edit={edit} disabled={readOnly || mutation.isPending} creating={creating} />
        <YamlTextarea
          value={text}
          readOnly={readOnly}
          onChange={(t) => {
            setOutcome(null);
            setText(t);
          }}
          invalid={parsed.problems.length > 0}
          testId="fleet-yaml"
        />
      </div>
      <YamlProblems problems={parsed.problems} validText="Valid Fleet object." testIdPrefix="fleet" />
      {mutation.isError && confirming === null && <InlineError>{errorMessage(mutation.error)}</InlineError>}
      {fleet && (
        <SaveConfirmDialog
          fleet={fleet.metadata.name}
          preview={confirming}
          open={confirming !== null}
          pending={update.isPending}
          error={update.isError ? errorMessage(update.error) : null}
          onCancel={() => setConfirming(null)}
          onConfirm={confirmSave}
        />
      )}
      {!readOnly && (
        <div className="flex flex-wrap items-center justify-end gap-2">
          {outcome && (
            <span className="mr-auto text-sm text-emerald-700" data-testid="fleet-save-result" role="status">
              {outcome.text}
            </span>
          )}
          {onCancel && (
            <Button onClick={onCancel} disabled={mutation.isPending}>
              Cancel
            </Button>
          )}
          {!creating && dirty && (
            <Button
              variant="ghost"
              disabled={mutation.isPending}
              onClick={() => {
                setText(base);
                update.reset();
              }}
            >
              Revert edits
            </Button>
          )}
          <Button variant="primary" onClick={save} disabled={!parsed.input || mutation.isPending || (!creating && !dirty)} data-testid="fleet-save">
            {creating ? (create.isPending ? "Creating…" : "Create fleet") : update.isPending ? "Saving…" : "Save…"}
          </Button>
        </div>
      )}
    </div>
  );
}

/** The Fleet object with the form's idempotency key beside its fields (fleets.create takes it out before its strict parse). */
function withKey(value: unknown, idempotencyKey: string): unknown {
  return value && typeof value === "object" && !Array.isArray(value) ? { ...value, idempotencyKey } : value;
}
