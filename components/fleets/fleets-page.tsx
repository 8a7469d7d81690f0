"use client";

import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc";
import { useMe } from "../hooks/use-me";
import { Button } from "../ui/button";
import { Card, CardHeader } from "../ui/card";
import { PageHeader } from "../ui/page-header";
import { EmptyState, ErrorState } from "../ui/states";
import { FleetEditor } from "./fleet-editor";
import { FleetsTable } from "./fleets-table";

export function FleetsPage() {
  const trpc = useTRPC();
  const { canOperate } = useMe();
  const list = useQuery(trpc.fleets.list.queryOptions());
  const [creating, setCreating] = useState(false);
  // A fresh editor each time it opens.
  const [session, setSession] = useState(0);
  const total = list.data?.length;

  return (
    <>
      <PageHeader
        title="Fleets"
        description={total !== undefined ? `${total} fleet${total === 1 ? "" : "s"}: devices grouped by label, each with a device template that rolls out to them.` : "Devices grouped by label, each with a device template."}
        actions={
          canOperate &&
          !creating && (
            <Button
              variant="primary"
              data-testid="new-fleet"
              onClick={() => {
                setSession((n) => n + 1);
                setCreating(true);
              }}
            >
              New fleet…
            </Button>
          )
        }
      />
      {creating && (
        <Card className="mb-4" data-testid="new-fleet-editor">
          <CardHeader title="New fleet" description="Name it, select its devices by label and give it a device template. Matching devices join at once and get version 1." />
          <div className="px-4 py-3">
            <FleetEditor key={session} onCancel={() => setCreating(false)} />
          </div>
        </Card>
      )}
      <Card>
        {list.isError && !list.data ? (
          <ErrorState error={list.error} onRetry={() => void list.refetch()} title="Could not load fleets" />
        ) : (
          <FleetsTable
            items={list.data}
            empty={
              <EmptyState title="No fleets yet">
                {canOperate ? "Create one with “New fleet”, or apply a Fleet YAML with drover apply -f." : "Operators create fleets here or with drover apply -f."}
              </EmptyState>
            }
          />
        )}
      </Card>
    </>
  );
}
