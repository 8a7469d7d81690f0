import { Badge } from "../ui/badge";

/** Issue 23: the device's credential was revoked by an operator (a Decommissioned device's always is: not shown there). */
export function RevokedBadge({ at, testId }: { at: string | Date; testId?: string }) {
  const when = new Date(at).toISOString().replace("T", " ").slice(0, 16);
  return (
    <Badge tone="red" title={`Credential revoked ${when} UTC: the server refuses this device's agent`} {...(testId ? { "data-testid": testId } : {})}>
      Credential revoked
    </Badge>
  );
}
