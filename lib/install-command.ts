/**
 * The commands the console's Add devices page shows to install the agent (issue 12), pinned to
 * the server's own CA when it has one (issue 23): the line fetches /ca.pem without trusting it
 * (curl -k), checks the SHA-256 of its certificate (the DER, as `sed | base64 -d | sha256sum`
 * makes it on any Linux, openssl or not) against the fingerprint written into the line, and
 * only then fetches install.sh trusting that CA alone (--cacert), so even the first contact
 * cannot be answered by someone else. install.sh then pins the same CA for the agent. POSIX sh.
 * Shared by the console and the tests, which run the very line shown.
 */

export interface InstallCommands {
  /** As a systemd service (sudo). */
  service: string;
  /** Without a service, into $HOME (prints how to start it). */
  noService: string;
  /** The agent by hand, with Node.js. */
  byHand: string;
  uninstall: string;
}

/** `CA=$(mktemp) && <fetch /ca.pem> && <check its fingerprint> && `: the prefix of a pinned line. */
function fetchPinnedCa(server: string, fingerprint: string): string {
  const check = `sed '1d;$d' "$CA" | base64 -d | sha256sum | grep -q '^${fingerprint} '`;
  const stop = `{ echo "drover: ${server}/ca.pem is not the CA pinned here (sha256 ${fingerprint}): stopped" >&2; false; }`;
  return `CA=$(mktemp) && curl -fsSLk ${server}/ca.pem -o "$CA" && { ${check} || ${stop}; } && `;
}

/** `caFingerprint`: the server's CA (ctx.tls), or null for plain HTTP or a public CA. */
export function installCommands(server: string, token: string, caFingerprint: string | null): InstallCommands {
  const pinned = caFingerprint !== null && server.startsWith("https://");
  const before = pinned ? fetchPinnedCa(server, caFingerprint) : "";
  const curl = pinned ? `curl -fsSL --cacert "$CA"` : "curl -fsSL";
  const script = `${before}${curl} ${server}/install.sh`;
  const pin = pinned ? ` --ca-fingerprint ${caFingerprint}` : "";
  return {
    service: `${script} | sudo sh -s -- --token ${token}`,
    noService: `${script} | sh -s -- --no-service --prefix "$HOME/drover-agent" --token ${token}`,
    byHand: `${before}${curl} -o drover-agent.mjs ${server}/api/agent/v1/download && node drover-agent.mjs --server ${server}${pin} --name "$(hostname | tr A-Z a-z)" --state-dir ./drover-state --enrollment-token ${token}`,
    uninstall: `${script} | sudo sh -s -- --uninstall`,
  };
}
