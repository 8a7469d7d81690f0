/**
 * Seed 000's example plan, for tests: research/engines.md A.6 "Plan-2" exactly as there (the
 * seed's example with its line numbers and status removed), and the same with the seed's
 * `status` block, as a user pasting the seed as is would send it (status is the server's and
 * is ignored).
 */
export const SEED_000_PLAN = `apiVersion: autopilot.k0sproject.io/v1beta2
kind: Plan
metadata:
  annotations:
    <omitted>
spec:
  commands:
  - airgapupdate:
      version: v1.24.12+k0s.0
      platforms:
        linux-amd64:
          url: https://github.com/k0sproject/k0s/releases/download/v1.24.12+k0s.0/k0s-airgap-bundle-v1.24.12+k0s.0-amd64
      workers:
        discovery:
          static:
            nodes:
            - worker0
  - k0supdate:
      version: v1.24.12+k0s.0
      platforms:
        linux-amd64:
          url: https://github.com/k0sproject/k0s/releases/download/v1.24.12+k0s.0/k0s-v1.24.12+k0s.0-amd64
      targets:
        controllers:
          discovery:
            static:
              nodes:
              - controller0
        workers:
          discovery:
            static:
              nodes:
              - worker0
  id: id123
  timestamp: now
`;

export const SEED_000_PLAN_WITH_STATUS = `${SEED_000_PLAN}status:
  commands:
  - airgapupdate:
      workers:
      - lastUpdatedTimestamp: "2022-05-11T19:13:02Z"
        name: worker0
        state: SignalSent
    id: 0
    state: SchedulableWait
  - id: 1
    k0supdate:
      controllers:
      - lastUpdatedTimestamp: "2022-05-11T19:13:02Z"
        name: controller0
        state: SignalPending
      workers:
      - lastUpdatedTimestamp: "2022-05-11T19:13:02Z"
        name: worker0
        state: SignalPending
    state: SchedulableWait
  state: SchedulableWait
`;
