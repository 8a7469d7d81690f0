import type { RouterOutputs } from "../trpc";
import type { Tone } from "../ui/badge";

export type EnrollmentToken = RouterOutputs["enrollmentTokens"]["list"][number];
export type CreatedEnrollmentToken = RouterOutputs["enrollmentTokens"]["create"];
export type EnrollmentTokenStatus = EnrollmentToken["status"];

export const enrollmentTokenTone: Record<EnrollmentTokenStatus, Tone> = {
  Active: "green",
  Expired: "gray",
  UsedUp: "gray",
  Revoked: "red",
};

export const STATUS_TEXT: Record<EnrollmentTokenStatus, string> = {
  Active: "Active",
  Expired: "Expired",
  UsedUp: "Used up",
  Revoked: "Revoked",
};
