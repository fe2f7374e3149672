import { TaskState, taskStateToJSON } from './wire.js';

/** The A2A state for each Switchboard task event (docs/a2a.md, "States"); others change nothing. */
const BY_EVENT: Record<string, TaskState> = {
  'agent.task.submitted': TaskState.TASK_STATE_SUBMITTED,
  'agent.task.started': TaskState.TASK_STATE_WORKING,
  'agent.task.resumed': TaskState.TASK_STATE_WORKING,
  'agent.task.input_required': TaskState.TASK_STATE_INPUT_REQUIRED,
  'agent.task.completed': TaskState.TASK_STATE_COMPLETED,
  'agent.task.failed': TaskState.TASK_STATE_FAILED,
  'agent.task.canceled': TaskState.TASK_STATE_CANCELED,
  'agent.task.rejected': TaskState.TASK_STATE_REJECTED,
};

export const TASK_EVENTS = new Set(Object.keys(BY_EVENT));

export function stateForEvent(type: string): TaskState | undefined {
  return BY_EVENT[type];
}

const TERMINAL = new Set<TaskState>([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

export function isTerminal(state: TaskState | undefined): boolean {
  return state !== undefined && TERMINAL.has(state);
}

/** The ProtoJSON name (`TASK_STATE_WORKING`), as stored and filtered on. */
export function stateName(state: TaskState | undefined): string {
  return taskStateToJSON(state ?? TaskState.TASK_STATE_UNSPECIFIED);
}
