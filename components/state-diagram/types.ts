/**
 * A state diagram, independent of where its states come from: device statuses today,
 * actions, plans and workflows later. Typed node and edge unions for React Flow.
 */
import type { Edge, Node } from "@xyflow/react";

export interface DiagramState {
  id: string;
  label?: string;
  description?: string;
  /** Composite parents, outermost first (e.g. ["Known", "PoweredOn"]). */
  groups?: readonly string[];
  transient?: boolean;
  notYetSupported?: boolean;
  terminal?: boolean;
}

export interface DiagramTransition {
  from: string;
  to: string;
  label?: string;
  /** Who makes the move (operator, agent, server), where the table says. */
  by?: string;
}

export interface DiagramSpec {
  states: readonly DiagramState[];
  transitions: readonly DiagramTransition[];
  /** Drawn as the seed's `[*] -->` start marker. */
  initial?: string;
  direction?: "LR" | "TB";
  /**
   * Which order dagre is given the states and moves in (layoutDiagram): 0, the table's own, or a
   * seeded shuffle. Chosen per table so it is drawn with no crossing lines (diagram-specs.test.ts
   * checks it and, when a table changes, names the order to use).
   */
  order?: number;
}

export interface Point {
  x: number;
  y: number;
}

/** How the current state is coloured (matches the badges elsewhere). */
export type Highlight = "green" | "amber" | "red" | "blue" | "gray" | "purple" | "orange" | "slate";

export type StateNodeData = {
  stateId: string;
  label: string;
  description: string;
  transient: boolean;
  notYetSupported: boolean;
  terminal: boolean;
  /** Enclosing groups, "/"-joined ("Known/PoweredOn"). */
  groupPath: string;
  current: boolean;
  /** Reachable in one transition from the current state. */
  next: boolean;
  highlight: Highlight;
};
export type StateNode = Node<StateNodeData, "state">;

export type GroupNodeData = {
  label: string;
  /** How many group levels are nested inside this one. */
  innerLevels: number;
  containsCurrent: boolean;
};
export type GroupNode = Node<GroupNodeData, "stateGroup">;

export type StartNodeData = Record<string, never>;
export type StartNode = Node<StartNodeData, "start">;

export type DiagramNode = StateNode | GroupNode | StartNode;

export type TransitionEdgeData = {
  label: string;
  /** Who makes the move; drawn after the label. */
  by: string;
  /** Route computed by the layout; absent when nodes are placed by hand. */
  points: Point[] | null;
  labelPosition: Point | null;
  /** Two unlabeled transitions A→B and B→A drawn as one line with two arrows. */
  bidirectional: boolean;
  /** Leaves the current state: a move that can happen next. */
  active: boolean;
  /** Touches a state that is not yet supported. */
  muted: boolean;
  /** The states each end stands for (one, or all of a group's). */
  fromStates: string[];
  toStates: string[];
};
export type TransitionEdge = Edge<TransitionEdgeData, "transition">;

export interface DiagramLayout {
  nodes: DiagramNode[];
  edges: TransitionEdge[];
  /** Where the drawn content starts (the layout's margin), in layout pixels. */
  x: number;
  y: number;
  width: number;
  height: number;
}
