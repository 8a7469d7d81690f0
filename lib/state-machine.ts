/**
 * State machines as data (DESIGN.md §1). Every lifecycle in Drover is declared once as a
 * `StateMachine`: the engine validates moves against it and the console draws it.
 * Pure module: no I/O, no clock.
 */

export interface StateDef {
  /** Shown under the state name in diagrams. */
  readonly description: string;
  /** Composite parent in the seed's diagram (e.g. `Known`, `PoweredOn`), outermost first. */
  readonly group?: readonly string[];
  /** Seed marks it "transient, not reported". */
  readonly transient?: boolean;
  /** Seed marks it "not yet supported": drawn, never entered. */
  readonly notYetSupported?: boolean;
  /** A final state: no way out. */
  readonly terminal?: boolean;
}

export interface TransitionDef<S extends string> {
  readonly from: S;
  readonly to: S;
  /** Why or when the move happens, as the seed words it (hooks, "on error"…). */
  readonly label?: string;
  /** Who makes the move, where the engine cares (e.g. only an agent may report RUNNING). */
  readonly by?: "operator" | "agent" | "server";
}

export interface StateMachine<S extends string> {
  readonly name: string;
  readonly initial: S;
  readonly states: Readonly<Record<S, StateDef>>;
  readonly transitions: readonly TransitionDef<S>[];
}

export function defineStateMachine<const S extends string>(machine: StateMachine<S>): StateMachine<S> {
  if (!isState(machine, machine.initial)) {
    throw new Error(`${machine.name}: initial state ${machine.initial} is not one of its states`);
  }
  for (const t of machine.transitions) {
    if (!isState(machine, t.from) || !isState(machine, t.to)) {
      throw new Error(`${machine.name}: transition ${t.from} -> ${t.to} names an unknown state`);
    }
  }
  return machine;
}

export function stateNames<S extends string>(machine: StateMachine<S>): S[] {
  return Object.keys(machine.states) as S[];
}

export function isState<S extends string>(machine: StateMachine<S>, value: string): value is S {
  return Object.prototype.hasOwnProperty.call(machine.states, value);
}

/** Staying in the same state is always allowed (reports are idempotent). */
export function canTransition<S extends string>(machine: StateMachine<S>, from: S, to: S): boolean {
  if (from === to) return true;
  return machine.transitions.some((t) => t.from === from && t.to === to);
}

export function nextStates<S extends string>(machine: StateMachine<S>, from: S): S[] {
  return machine.transitions.filter((t) => t.from === from).map((t) => t.to);
}

export class TransitionError extends Error {
  constructor(
    readonly machine: string,
    readonly from: string,
    readonly to: string,
  ) {
    super(`${machine}: cannot move from ${from} to ${to}`);
    this.name = "TransitionError";
  }
}

export function assertTransition<S extends string>(machine: StateMachine<S>, from: S, to: S): void {
  if (!canTransition(machine, from, to)) throw new TransitionError(machine.name, from, to);
}
