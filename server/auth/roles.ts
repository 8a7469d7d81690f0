/** Roles (DESIGN.md §8): viewers read, operators act, admins manage users and tokens. */
export const ROLES = ["viewer", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

export function hasRole(actual: Role, needed: Role): boolean {
  return RANK[actual] >= RANK[needed];
}

export function asRole(value: string | null | undefined): Role {
  return (ROLES as readonly string[]).includes(value ?? "") ? (value as Role) : "viewer";
}

export interface Principal {
  userId: string;
  username: string;
  role: Role;
  /** How the caller proved who they are. */
  via: "session" | "token";
  /** The operator token's id when `via` is token (tells "this is the token you are using"). */
  tokenId?: string;
}
