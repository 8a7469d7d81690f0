import { createAuthClient } from "better-auth/react";
import { usernameClient } from "better-auth/client/plugins";

/** better-auth's browser client: served by the same process under /api/auth. */
export const authClient = createAuthClient({
  basePath: "/api/auth",
  plugins: [usernameClient()],
});
