import {
  type CancelTaskRequest,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
  TaskState,
} from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotCancelableError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { DefaultRequestHandler, type ServerCallContext } from '@a2a-js/sdk/server';
import type { Message } from '@a2a-js/sdk';
import type { Principal } from '../kernel/module.js';
import type { A2ASkill } from './config.js';
import { isTerminal, stateName } from './states.js';
import { inlineKey } from './inline.js';
import { principalOf } from './store.js';

/**
 * Which skill a message asks for: `metadata.skill` on the message (or on the request), else the only
 * configured one. Refused before anything is stored, naming the field.
 */
export function skillOf(skills: readonly A2ASkill[], request: SendMessageRequest): string {
  const named = request.message?.metadata?.skill ?? request.metadata?.skill;
  if (named === undefined) {
    if (skills.length === 1) return skills[0]!.id;
    const ids = skills.map((s) => s.id).join(', ') || 'none configured';
    throw new RequestMalformedError(
      `message.metadata.skill: required when there is not exactly one skill (skills: ${ids})`,
    );
  }
  if (typeof named !== 'string' || !skills.some((s) => s.id === named))
    throw new RequestMalformedError(
      `message.metadata.skill: no skill ${JSON.stringify(named)} (skills: ${skills.map((s) => s.id).join(', ') || 'none'})`,
    );
  return named;
}

export interface HandlerHooks {
  skills: () => readonly A2ASkill[];
  cancelers: Map<string, Principal>;
  /** A task as the caller may see it (undefined for another key's). */
  load(taskId: string, ctx: ServerCallContext): Promise<Task | undefined>;
  /**
   * Claims an input-required task for one continuing message (a conditional UPDATE in the store);
   * undefined when it is not input-required any more or another message holds it.
   */
  claimInput(taskId: string): Promise<string | undefined>;
  /** Gives a claim back: the message failed before it continued the task. */
  releaseInput(taskId: string, claim: string | null): Promise<void>;
  /** Cancels the Switchboard task when no run in this process holds the task's bus (after a restart). */
  cancelDetached(taskId: string, by: Principal): Promise<void>;
  /**
   * A push config sent with a message that makes a new task: checked now (a refusal stores nothing)
   * and kept for the executor, which stores it in the transaction that writes the task, instead of
   * the SDK's own save a commit earlier. Absent when pushes are off (the SDK then ignores it too).
   */
  inlinePush?(key: string, config: TaskPushNotificationConfig, ctx: ServerCallContext): Promise<void>;
}

type HandlerArgs = ConstructorParameters<typeof DefaultRequestHandler>;

/**
 * The SDK's request handler with what Switchboard adds in front: the skill is checked before a task
 * exists, a message to an ended task becomes the next turn of its context (docs/a2a.md), and a
 * cancel reaches the Switchboard task even when no run in this process is attached to it.
 */
export class SwitchboardRequestHandler extends DefaultRequestHandler {
  constructor(
    private readonly hooks: HandlerHooks,
    ...args: HandlerArgs
  ) {
    super(...args);
  }

  /**
   * Checks the skill, and turns a message to an ended task into the next turn of its context: a new
   * task (referring to the old one) that resumes the same session. A message to an input-required task
   * continues that task; one to a task still working is refused. An unknown task is the SDK's
   * TaskNotFound.
   */
  private async admit(
    params: SendMessageRequest,
    ctx: ServerCallContext,
  ): Promise<{ params: SendMessageRequest; claim?: { taskId: string; id: string } }> {
    skillOf(this.hooks.skills(), params);
    const message = params.message;
    if (!message?.taskId) return { params: await this.keepInlinePush(params, ctx) };
    const task = await this.hooks.load(message.taskId, ctx);
    if (!task) return { params };
    if (task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
      // Two messages at once to one input-required task: the store gives the claim to one of them.
      const id = await this.hooks.claimInput(task.id);
      if (!id)
        throw new UnsupportedOperationError(
          `message.taskId: task ${task.id} is already being continued by another message; send the next one when it is input-required again`,
        );
      return { params, claim: { taskId: task.id, id } };
    }
    if (!isTerminal(task.status?.state))
      throw new UnsupportedOperationError(
        `message.taskId: task ${task.id} is still working; send the next message when it has ended`,
      );
    if (message.contextId && message.contextId !== task.contextId)
      throw new RequestMalformedError(
        `message.contextId: ${message.contextId} is not the context of task ${task.id} (${task.contextId})`,
      );
    const referenceTaskIds = [...new Set([...message.referenceTaskIds, task.id])];
    return {
      params: await this.keepInlinePush(
        { ...params, message: { ...message, taskId: '', contextId: task.contextId, referenceTaskIds } },
        ctx,
      ),
    };
  }

  /** A new task's inline push config goes to the executor's transaction (see `HandlerHooks.inlinePush`). */
  private async keepInlinePush(
    params: SendMessageRequest,
    ctx: ServerCallContext,
  ): Promise<SendMessageRequest> {
    const config = params.configuration?.taskPushNotificationConfig;
    if (!config || !this.hooks.inlinePush || !params.message?.messageId || !params.configuration)
      return params;
    await this.hooks.inlinePush(inlineKey(principalOf(ctx).name, params.message.messageId), config, ctx);
    return { ...params, configuration: { ...params.configuration, taskPushNotificationConfig: undefined } };
  }

  override async sendMessage(params: SendMessageRequest, ctx: ServerCallContext): Promise<Message | Task> {
    const admitted = await this.admit(params, ctx);
    try {
      return await super.sendMessage(admitted.params, ctx);
    } catch (err) {
      if (admitted.claim) await this.hooks.releaseInput(admitted.claim.taskId, admitted.claim.id);
      throw err;
    }
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    ctx: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const admitted = await this.admit(params, ctx);
    try {
      yield* super.sendMessageStream(admitted.params, ctx);
    } catch (err) {
      if (admitted.claim) await this.hooks.releaseInput(admitted.claim.taskId, admitted.claim.id);
      throw err;
    }
  }

  override async cancelTask(params: CancelTaskRequest, ctx: ServerCallContext): Promise<Task> {
    const by = principalOf(ctx);
    const task = await this.getTask({ id: params.id, tenant: params.tenant, historyLength: 0 }, ctx).catch(
      () => undefined,
    );
    if (task) {
      this.hooks.cancelers.set(params.id, by);
      await this.hooks.cancelDetached(params.id, by);
    }
    try {
      return await super.cancelTask(params, ctx);
    } catch (err) {
      if (!(err instanceof TaskNotCancelableError)) throw err;
      const now = await this.hooks.load(params.id, ctx);
      throw notCancelable(params.id, now?.status?.state);
    }
  }
}

/**
 * TaskNotCancelable as the spec words it (JSON-RPC -32002, "Task cannot be canceled", the SDK's own
 * default), where the SDK's handler says "Task not cancelable: <id>"; the task and the state that
 * ended it ride in the error's `google.rpc.ErrorInfo` metadata (v1.0 `data`). `a2a.test.ts` reads
 * both through the official client.
 */
export function notCancelable(taskId: string, state: TaskState | undefined): TaskNotCancelableError {
  return new TaskNotCancelableError({
    metadata: { taskId, ...(state !== undefined ? { state: stateName(state) } : {}) },
  });
}
