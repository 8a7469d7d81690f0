import type { RouterOutputs } from "../trpc";
import type { Tone } from "../ui/badge";

export type ApiToken = RouterOutputs["auth"]["tokens"][number];
export type TokenStatus = ApiToken["status"];

export const tokenTone: Record<TokenStatus, Tone> = {
  Active: "green",
  Expired: "gray",
  Revoked: "red",
};
