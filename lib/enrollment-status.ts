/** The enrollment request's decision, as data (DESIGN.md §1, §2). Pure module. */
import { defineStateMachine } from "./state-machine";

export const enrollmentMachine = defineStateMachine({
  name: "EnrollmentRequest",
  initial: "Pending",
  states: {
    Pending: { description: "Waiting for an operator (or an auto-approve rule) to decide." },
    Approved: { terminal: true, description: "Approved: the device's credential is issued once, on its next ask." },
    Denied: { description: "Denied: the agent backs off and looks again ever more slowly (at most every 5 minutes); an operator may reopen it, a new secret may ask again." },
  },
  transitions: [
    { from: "Pending", to: "Approved", label: "approve" },
    { from: "Pending", to: "Denied", label: "deny" },
    { from: "Denied", to: "Pending", label: "reopen (an operator reverts the denial), or re-enroll with a new secret" },
  ],
});
export type EnrollmentState = keyof typeof enrollmentMachine.states;
