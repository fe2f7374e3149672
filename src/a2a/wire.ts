import type * as Sdk from '@a2a-js/sdk';
import type { TaskState as SdkTaskState } from '@a2a-js/sdk';

/**
 * What the A2A code needs of `@a2a-js/sdk`'s root at start, without loading it. The root bundles
 * jose for agent-card signatures (~0.7 MB of heap with its own codecs), and a gateway whose config
 * names no skill and no agent never needs either (docs/ARCHITECTURE.md "Idle memory"). So the
 * constants and the task states are here, checked against the SDK's own in `wire.test.ts`, and the
 * ProtoJSON codecs (`Task`, `StreamResponse`, `AgentCard`) come from `sdkRoot()`: the root, imported on
 * first use, then the same module every time.
 */

export const A2A_CONTENT_TYPE = 'application/a2a+json';
/** The card's path under the origin, without the leading slash (the SDK's `AGENT_CARD_PATH`). */
export const AGENT_CARD_PATH = '.well-known/agent-card.json';

/** The SDK's `TaskState` values, typed as its enum's members. */
export const TaskState = {
  TASK_STATE_UNSPECIFIED: 0 as SdkTaskState.TASK_STATE_UNSPECIFIED,
  TASK_STATE_SUBMITTED: 1 as SdkTaskState.TASK_STATE_SUBMITTED,
  TASK_STATE_WORKING: 2 as SdkTaskState.TASK_STATE_WORKING,
  TASK_STATE_COMPLETED: 3 as SdkTaskState.TASK_STATE_COMPLETED,
  TASK_STATE_FAILED: 4 as SdkTaskState.TASK_STATE_FAILED,
  TASK_STATE_CANCELED: 5 as SdkTaskState.TASK_STATE_CANCELED,
  TASK_STATE_INPUT_REQUIRED: 6 as SdkTaskState.TASK_STATE_INPUT_REQUIRED,
  TASK_STATE_REJECTED: 7 as SdkTaskState.TASK_STATE_REJECTED,
  TASK_STATE_AUTH_REQUIRED: 8 as SdkTaskState.TASK_STATE_AUTH_REQUIRED,
} as const;
export type TaskState = SdkTaskState;

const NAMES = new Map<number, string>(Object.entries(TaskState).map(([name, value]) => [value, name]));

/** The ProtoJSON name of a state (`TASK_STATE_WORKING`), as the SDK's `taskStateToJSON` gives it. */
export function taskStateToJSON(state: TaskState): string {
  return NAMES.get(state) ?? 'UNRECOGNIZED';
}

let root: Promise<typeof Sdk> | undefined;

/** The SDK's root, loaded on first use. */
export function sdkRoot(): Promise<typeof Sdk> {
  root ??= import('@a2a-js/sdk');
  return root;
}
