#!/bin/sh
# Installs the Drover device agent from the Drover server that served this script.
#
#   curl -fsSL __DROVER_SERVER__/install.sh | sudo sh -s -- [--token T] [options]
#
# Options:
#   --token T          an enrollment token (the console's "Add devices" page makes one)
#   --name NAME        the device's name (default: this host's name, lower-cased)
#   --labels k=v,...   labels the device asks for
#   --prefix DIR       where the agent goes (default /opt/drover-agent)
#   --no-service       install only; print how to start it (no systemd unit)
#   --binary           the single executable (no Node needed), even where Node 20+ is found
#   --uninstall        stop and remove the agent (keeps its state; add --purge to remove it)
#   --purge            with --uninstall: also remove the state (credential, journal)
#
# Upgrades: the agent replaces its own file with a build its server holds (a fleet template's
# agent.version, or an agentupgrade action) and exits 75; systemd (Restart=always) or, without
# it, bin/drover-agent starts it again on the new file. The old one stays as FILE.previous.
#
# TLS (issue 23): a server with a CA of its own renders it below (CA_PEM, CA_FINGERPRINT). The
# downloads then trust that CA alone, and the agent is started pinned to it (--ca-file and
# --ca-fingerprint), so no one between the device and the server can stand in for it. Fetch this
# script with the console's line, which checks the CA's fingerprint before it trusts anything.
#
# What it does: downloads the agent from the server and checks its sha256, installs it under
# the prefix (drover-agent.mjs, agent.env, bin/drover-agent, state/), writes and starts a
# systemd unit (drover-agent.service) unless --no-service, and prints what it did. The
# agent runs on Node.js 20 or newer; without it, on the server's single executable for this
# platform (when the server has one: npm run build:agent -- --sea).
set -eu

SERVER="__DROVER_SERVER__"
# The SHA-256 of the CA's certificate (DER), 64 hex digits; empty: plain HTTP or a public CA.
CA_FINGERPRINT="__DROVER_CA_FINGERPRINT__"
ca_pem() {
  cat <<'DROVER_CA_PEM'
__DROVER_CA_PEM__
DROVER_CA_PEM
}
CACERT=""
TOKEN=""
NAME=""
LABELS=""
PREFIX="/opt/drover-agent"
SERVICE=1
UNINSTALL=0
BINARY=0
PURGE=0
UNIT="drover-agent.service"
UNIT_DIR="${DROVER_SYSTEMD_DIR:-/etc/systemd/system}"

say() { printf 'drover-agent: %s\n' "$*"; }
fail() { printf 'drover-agent: error: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --token) [ $# -ge 2 ] || fail "--token needs a value"; TOKEN="$2"; shift 2 ;;
    --name) [ $# -ge 2 ] || fail "--name needs a value"; NAME="$2"; shift 2 ;;
    --labels) [ $# -ge 2 ] || fail "--labels needs a value"; LABELS="$2"; shift 2 ;;
    --prefix) [ $# -ge 2 ] || fail "--prefix needs a value"; PREFIX="$2"; shift 2 ;;
    --server) [ $# -ge 2 ] || fail "--server needs a value"; SERVER="$2"; shift 2 ;;
    --no-service) SERVICE=0; shift ;;
    --binary) BINARY=1; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    --purge) PURGE=1; shift ;;
    -h|--help) sed -n '2,29p' "$0" 2>/dev/null || true; exit 0 ;;
    *) fail "unknown option $1 (see --help)" ;;
  esac
done

# The values go into a shell-sourced file and a command line: only the characters the
# server would accept anyway, so nothing here is ever interpreted.
case "$TOKEN" in *[!A-Za-z0-9_.-]*) fail "--token: unexpected characters" ;; esac
case "$LABELS" in *[!A-Za-z0-9_./=,-]*) fail "--labels: only k=v,k=v with letters, digits, '-', '_', '.', '/'" ;; esac
case "$PREFIX" in /*) ;; *) fail "--prefix must be an absolute path" ;; esac
case "$PREFIX" in *[!A-Za-z0-9_./-]*) fail "--prefix: unexpected characters" ;; esac
case "$SERVER" in http://*|https://*) ;; *) fail "--server must be an http:// or https:// URL" ;; esac
case "$SERVER" in *[!A-Za-z0-9_.:/\[\]-]*) fail "--server: unexpected characters" ;; esac

has_systemd() { [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; }

if [ "$UNINSTALL" -eq 1 ]; then
  if [ -f "$UNIT_DIR/$UNIT" ]; then
    if has_systemd; then systemctl disable --now "$UNIT" >/dev/null 2>&1 || true; fi
    rm -f "$UNIT_DIR/$UNIT"
    if has_systemd; then systemctl daemon-reload || true; fi
    say "removed the service $UNIT"
  fi
  if [ -f "$PREFIX/drover-agent.pid" ]; then kill "$(cat "$PREFIX/drover-agent.pid")" 2>/dev/null || true; fi
  rm -rf "$PREFIX/drover-agent.mjs" "$PREFIX/drover-agent" "$PREFIX/bin" "$PREFIX/agent.env" "$PREFIX/manifest.json" "$PREFIX/drover-agent.pid" "$PREFIX/ca.pem" \
    "$PREFIX/drover-agent.mjs.previous" "$PREFIX/drover-agent.previous" "$PREFIX"/.drover-agent-*
  if [ "$PURGE" -eq 1 ]; then
    rm -rf "$PREFIX"
    say "removed $PREFIX with the agent's state"
  else
    say "removed the agent from $PREFIX (its state stays in $PREFIX/state; --purge removes it)"
  fi
  exit 0
fi

if [ "$BINARY" -eq 0 ]; then
  if ! command -v node >/dev/null 2>&1; then
    say "no Node.js here: installing the single executable"
    BINARY=1
  elif ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
    say "Node.js $(node --version) is older than 20: installing the single executable"
    BINARY=1
  fi
fi
QUERY=""
FILE="drover-agent.mjs"
if [ "$BINARY" -eq 1 ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) PLATFORM=linux-amd64 ;;
    Linux-aarch64|Linux-arm64) PLATFORM=linux-arm64 ;;
    *) fail "no single executable for $(uname -s) $(uname -m); install Node.js 20 or newer" ;;
  esac
  QUERY="?platform=$PLATFORM"
  FILE="drover-agent"
fi

if [ -z "$NAME" ]; then
  NAME=$(hostname 2>/dev/null | tr 'A-Z_' 'a-z-' | tr -cd 'a-z0-9.-')
  [ -n "$NAME" ] || fail "cannot read this host's name: pass --name"
fi
case "$NAME" in *[!a-z0-9.-]*|"") fail "--name: lowercase letters, digits, '-' and '.'" ;; esac

if command -v curl >/dev/null 2>&1; then
  get() { curl -fsSL ${CACERT:+--cacert "$CACERT"} "$1" -o "$2"; }
elif command -v wget >/dev/null 2>&1; then
  get() { wget -q ${CACERT:+--ca-certificate="$CACERT"} "$1" -O "$2"; }
else
  fail "curl or wget is needed"
fi

mkdir -p "$PREFIX/bin" "$PREFIX/state"
chmod 0700 "$PREFIX/state"
if [ -n "$CA_FINGERPRINT" ]; then
  case "$SERVER" in https://*) ;; *) fail "--server must be an https:// URL: this server pins its CA" ;; esac
  ca_pem > "$PREFIX/ca.pem"
  chmod 0644 "$PREFIX/ca.pem"
  CACERT="$PREFIX/ca.pem"
fi
TMP="$PREFIX/.download.$$"
trap 'rm -f "$TMP" "$TMP.json"' EXIT

get "$SERVER/api/agent/v1/download/manifest$QUERY" "$TMP.json" ||
  fail "cannot get the agent's manifest from $SERVER${QUERY:+ (is there a single executable for $PLATFORM? npm run build:agent -- --sea)}"
WANT=$(sed -n 's/.*"sha256": *"\([0-9a-f]\{64\}\)".*/\1/p' "$TMP.json")
VERSION=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$TMP.json")
[ -n "$WANT" ] || fail "the server's manifest has no sha256"
get "$SERVER/api/agent/v1/download$QUERY" "$TMP" || fail "cannot download the agent from $SERVER"
GOT=$(sha256sum "$TMP" | cut -d' ' -f1)
[ "$GOT" = "$WANT" ] || fail "sha256 mismatch: got $GOT, the server says $WANT"
chmod 0755 "$TMP"
# Replace in one rename: a running agent keeps its open file, the next start gets the new one.
mv -f "$TMP" "$PREFIX/$FILE"
# The other kind, from an earlier install, goes: bin/drover-agent runs what is there.
[ "$FILE" = drover-agent ] && rm -f "$PREFIX/drover-agent.mjs" || rm -f "$PREFIX/drover-agent"
mv -f "$TMP.json" "$PREFIX/manifest.json"

umask 077
cat > "$PREFIX/agent.env" <<EOF
# Drover agent settings, read by $PREFIX/bin/drover-agent. Edit, then restart the agent.
DROVER_SERVER=$SERVER
DROVER_NAME=$NAME
DROVER_LABELS=$LABELS
DROVER_ENROLLMENT_TOKEN=$TOKEN
DROVER_STATE_DIR=$PREFIX/state
# The CA the agent trusts for its server, and its pin (empty: the system's trust store).
DROVER_CA_FILE=$CACERT
DROVER_CA_FINGERPRINT=$CA_FINGERPRINT
# More agent options (see: node $PREFIX/drover-agent.mjs --help), e.g. --allow-exec /usr/bin/uptime
DROVER_AGENT_OPTIONS=
EOF
umask 022

cat > "$PREFIX/bin/drover-agent" <<EOF
#!/bin/sh
# Starts the Drover agent with the settings in $PREFIX/agent.env.
#
# Exit status 75: the agent upgraded itself (its file was replaced) and must be started again.
# Under systemd (INVOCATION_ID is set) the unit's Restart=always does that, so this script
# becomes the agent (exec). Anywhere else it stays as a small supervisor: it runs the agent,
# starts it again after a 75, passes SIGTERM/SIGINT on, and exits with any other status.
set -eu
. "$PREFIX/agent.env"
# Memory (lib/agent-version.ts): no JIT for an agent that idles, and a malloc that gives back.
export __DROVER_MALLOC_ENV__
set -- --server "\$DROVER_SERVER" --name "\$DROVER_NAME" --state-dir "\$DROVER_STATE_DIR" \\
  \${DROVER_LABELS:+--labels "\$DROVER_LABELS"} \${DROVER_ENROLLMENT_TOKEN:+--enrollment-token "\$DROVER_ENROLLMENT_TOKEN"} \\
  \${DROVER_CA_FILE:+--ca-file "\$DROVER_CA_FILE"} \${DROVER_CA_FINGERPRINT:+--ca-fingerprint "\$DROVER_CA_FINGERPRINT"} \\
  \$DROVER_AGENT_OPTIONS "\$@"
if [ -n "\${INVOCATION_ID:-}" ]; then
  if [ -x "$PREFIX/drover-agent" ]; then exec "$PREFIX/drover-agent" "\$@"; fi
  exec node __DROVER_NODE_FLAGS__ "$PREFIX/drover-agent.mjs" "\$@"
fi
child=
signalled=
trap 'signalled=1; [ -n "\$child" ] && kill -TERM "\$child" 2>/dev/null' TERM INT
while :; do
  if [ -x "$PREFIX/drover-agent" ]; then "$PREFIX/drover-agent" "\$@" & else node __DROVER_NODE_FLAGS__ "$PREFIX/drover-agent.mjs" "\$@" & fi
  child=\$!
  status=0
  wait "\$child" || status=\$?
  # A signal ends wait early (its status is 128 + the signal's): wait again for the agent's own
  # status, whether it is still stopping or has already ended (the shell keeps it for wait).
  while [ -n "\$signalled" ]; do signalled=; status=0; wait "\$child" || status=\$?; done
  [ "\$status" -eq 75 ] || exit "\$status"
  printf 'drover-agent: the agent upgraded itself; starting it again\\n' >&2
done
EOF
chmod 0755 "$PREFIX/bin/drover-agent"
say "installed drover-agent $VERSION (${QUERY:+single executable for $PLATFORM, }sha256 $GOT) in $PREFIX"
say "settings: $PREFIX/agent.env (server $SERVER, name $NAME${LABELS:+, labels $LABELS}${TOKEN:+, with an enrollment token}${CA_FINGERPRINT:+, the server's CA pinned: sha256 $CA_FINGERPRINT})"

if [ "$SERVICE" -eq 1 ]; then
  has_systemd || fail "no systemd here: run again with --no-service and start $PREFIX/bin/drover-agent yourself"
  cat > "$UNIT_DIR/$UNIT" <<EOF
[Unit]
Description=Drover device agent
Documentation=$SERVER/api/agent/v1/openapi.json
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=$PREFIX/bin/drover-agent
# Restart=always also starts the agent again after an upgrade (it exits 75 on its new file).
Restart=always
RestartSec=5
# Exit 1 is a credential revoked or an enrollment denied, 2 bad settings: do not loop on them.
RestartPreventExitStatus=1 2
KillSignal=SIGTERM
TimeoutStopSec=20

[Install]
WantedBy=multi-user.target
EOF
  systemctl daemon-reload
  systemctl enable --now "$UNIT" >/dev/null
  say "started the service $UNIT (systemctl status $UNIT; journalctl -u $UNIT -f)"
else
  say "not installed as a service (--no-service). Start it with:"
  say "  $PREFIX/bin/drover-agent"
  say "or in the background: nohup $PREFIX/bin/drover-agent >> $PREFIX/agent.log 2>&1 & echo \$! > $PREFIX/drover-agent.pid"
fi
say "uninstall: curl -fsSL${CACERT:+ --cacert $CACERT} $SERVER/install.sh | sudo sh -s -- --uninstall${PREFIX:+ --prefix $PREFIX}"
