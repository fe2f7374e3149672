import * as sdk from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { A2A_CONTENT_TYPE, AGENT_CARD_PATH, sdkRoot, TaskState, taskStateToJSON } from './wire.js';

describe("wire.ts: the SDK root's constants without loading it", () => {
  it('are the SDK root’s own', async () => {
    expect(A2A_CONTENT_TYPE).toBe(sdk.A2A_CONTENT_TYPE);
    expect(AGENT_CARD_PATH).toBe(sdk.AGENT_CARD_PATH);
    const states = Object.fromEntries(
      Object.entries(sdk.TaskState).filter(([k, v]) => typeof v === 'number' && k !== 'UNRECOGNIZED'),
    );
    expect({ ...TaskState }).toEqual(states);
    for (const v of [...Object.values(TaskState), -1, 42] as sdk.TaskState[])
      expect(taskStateToJSON(v)).toBe(sdk.taskStateToJSON(v));
    expect(await sdkRoot()).toBe(await import('@a2a-js/sdk'));
  });
});
