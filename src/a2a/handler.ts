import type { CancelTaskRequest, SendMessageRequest, StreamResponse, Task } from '@a2a-js/sdk';
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { DefaultRequestHandler, type ServerCallContext } from '@a2a-js/sdk/server';
import type { Message } from '@a2a-js/sdk';
import type { Principal } from '../kernel/module.js';
import type { A2ASkill } from './config.js';
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
  /** Cancels the Switchboard task when no run in this process holds the task's bus (after a restart). */
  cancelDetached(taskId: string, by: Principal): Promise<void>;
}

type HandlerArgs = ConstructorParameters<typeof DefaultRequestHandler>;

/**
 * The SDK's request handler with what Switchboard adds in front: the skill is checked before a task
 * exists, a message to an existing task is refused (a follow-up turn is not supported yet), and a
 * cancel reaches the Switchboard task even when no run in this process is attached to it.
 */
export class SwitchboardRequestHandler extends DefaultRequestHandler {
  constructor(
    private readonly hooks: HandlerHooks,
    ...args: HandlerArgs
  ) {
    super(...args);
  }

  private admit(params: SendMessageRequest): void {
    skillOf(this.hooks.skills(), params);
    if (params.message?.taskId)
      throw new UnsupportedOperationError(
        'message.taskId: a follow-up message to a task is not supported; send a new message',
      );
  }

  override async sendMessage(params: SendMessageRequest, ctx: ServerCallContext): Promise<Message | Task> {
    this.admit(params);
    return super.sendMessage(params, ctx);
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    ctx: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    this.admit(params);
    yield* super.sendMessageStream(params, ctx);
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
    return super.cancelTask(params, ctx);
  }
}
