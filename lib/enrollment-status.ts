/** The enrollment request's decision, as data (DESIGN.md §1, §2). Pure module. */
import { defineStateMachine } from "./state-machine";

export const enrollmentMachine = defineStateMachine({
  name: "EnrollmentRequest",
  initial: "Pending",
  states: {
    Pending: { description: "Waiting for an operator (or an auto-approve rule) to decide." },
    Approved: { terminal: true, description: "Approved: the device's credential is issued once, on its next ask." },
    Denied: { description: "Denied: the agent backs off; a new secret may ask again." },
  },
  transitions: [
    { from: "Pending", to: "Approved", label: "approve" },
    { from: "Pending", to: "Denied", label: "deny" },
    { from: "Denied", to: "Pending", label: "re-enroll with a new secret" },
  ],
});
export type EnrollmentState = keyof typeof enrollmentMachine.states;
