import { randomBytes } from 'node:crypto';
import { type Answer, json, type ReceivedRequest, type Receiver, startReceiver } from '../testing.js';

/**
 * A local stand-in for the Feishu open platform, for tests: the tenant-token endpoint and
 * `im/v1/messages`, checking what the documentation demands and answering like Feishu, errors
 * included (server-docs auth-v3 tenant_access_token_internal; im-v1 message create).
 */

export interface StoredMessage {
  messageId: string;
  receiveIdType: string;
  receiveId: string;
  uuid?: string;
  /** The card, parsed from the `content` string. */
  card: FeishuCard;
}

export interface FeishuCard {
  schema: string;
  config?: { update_multi?: boolean };
  header: { title: { tag: string; content: string }; template?: string };
  body: { elements: FeishuElement[] };
}

export interface FeishuElement {
  tag: string;
  text?: { tag: string; content: string };
  content?: string;
  type?: string;
  behaviors?: { type: string; value?: Record<string, unknown>; default_url?: string }[];
}

export interface FeishuPlatformOptions {
  appId: string;
  appSecret: string;
  /** Chats the bot is a member of (`oc_…`); other chat ids answer 230002. */
  chats?: string[];
  /** Seconds a token lives (`expire`); Feishu says 7200. */
  expireSeconds?: number;
}

export interface FeishuPlatform {
  url: string;
  receiver: Receiver;
  /** Every card accepted, in order (de-duplicated by uuid like Feishu). */
  messages: StoredMessage[];
  /** How many token requests arrived (right or wrong credentials). */
  tokenRequests(): number;
  messageRequests(): ReceivedRequest[];
  /** Every PATCH of a card, accepted or not. */
  updateRequests(): ReceivedRequest[];
  /** Marks a message recalled: updating it answers 230011 like Feishu. */
  recall(messageId: string): void;
  /** Invalidates every token issued so far (what expiry looks like to a client with a stale cache). */
  expireTokens(): void;
  /** The next message requests are answered with these instead of being processed. */
  failNext(...answers: Answer[]): void;
  /** The next card updates are answered with these instead of being processed. */
  failNextUpdate(...answers: Answer[]): void;
  close(): Promise<void>;
}

const TOKEN_PATH = '/open-apis/auth/v3/tenant_access_token/internal';
const MESSAGES_PATH = '/open-apis/im/v1/messages';
const RECEIVE_ID_TYPES = new Set(['chat_id', 'open_id', 'user_id', 'union_id', 'email']);
/** Cards (and rich text) may be at most 30 KB (error 230025). */
const CARD_MAX_BYTES = 30 * 1024;
const UUID_MAX = 50;
const BEHAVIORS = new Set(['callback', 'open_url']);

export const feishuAnswers = {
  rateLimited: json(400, { code: 230020, msg: 'This operation triggers the frequency limit.' }),
  gatewayLimited: json(
    429,
    { code: 99991400, msg: 'request trigger frequency limit' },
    { 'x-ogw-ratelimit-limit': '50', 'x-ogw-ratelimit-reset': '2' },
  ),
  noPermission: json(400, {
    code: 99991672,
    msg: 'Access denied. One of the following scopes is required: [im:message, im:message:send_as_bot].',
  }),
  serverError: json(500, { code: 1500, msg: 'internal error' }),
} as const;

const invalidToken = () =>
  json(400, {
    code: 99991663,
    msg: 'Invalid access token for authorization. Please make a request with token attached.',
  });
const fieldInvalid = (field: string) =>
  json(400, { code: 99992402, msg: 'field validation failed', error: { field_violations: [{ field }] } });

function checkCard(card: unknown): string | undefined {
  const c = card as Partial<FeishuCard> | null;
  if (typeof c !== 'object' || c === null) return 'card is not an object';
  if (c.schema !== '2.0') return 'schema must be 2.0';
  if (typeof c.header?.title?.content !== 'string') return 'header.title.content missing';
  if (!Array.isArray(c.body?.elements)) return 'body.elements missing';
  for (const e of c.body.elements) {
    if (e.tag === 'action') return 'schema V2 no longer support this capability: action';
    if (e.tag !== 'button') continue;
    if (typeof e.text?.content !== 'string') return 'button without text';
    for (const b of e.behaviors ?? []) {
      if (!BEHAVIORS.has(b.type)) return `unknown behavior ${b.type}`;
      if (b.type === 'open_url' && typeof b.default_url !== 'string') return 'open_url without default_url';
      if (b.type === 'callback' && (typeof b.value !== 'object' || b.value === null))
        return 'callback without value';
    }
  }
  return undefined;
}

export async function startFeishuPlatform(opts: FeishuPlatformOptions): Promise<FeishuPlatform> {
  const expire = opts.expireSeconds ?? 7200;
  const chats = new Set(opts.chats ?? []);
  const valid = new Set<string>();
  let current: string | undefined;
  const messages: StoredMessage[] = [];
  const byUuid = new Map<string, StoredMessage>();
  const scripted: Answer[] = [];
  const scriptedUpdates: Answer[] = [];
  const recalled = new Set<string>();
  const byId = new Map<string, StoredMessage>();

  const token = (req: ReceivedRequest): Answer => {
    let body: { app_id?: unknown; app_secret?: unknown };
    try {
      body = JSON.parse(req.body) as typeof body;
    } catch {
      return json(400, { code: 9499, msg: 'Bad Request' });
    }
    if (typeof body.app_id !== 'string' || typeof body.app_secret !== 'string') {
      return json(400, { code: 10003, msg: 'invalid param' });
    }
    if (body.app_id !== opts.appId || body.app_secret !== opts.appSecret) {
      return json(400, { code: 10014, msg: 'app secret invalid' });
    }
    // Feishu hands out the same token while it has time left.
    if (!current || !valid.has(current)) {
      current = `t-${randomBytes(20).toString('hex')}`;
      valid.add(current);
    }
    return json(200, { code: 0, msg: 'ok', tenant_access_token: current, expire });
  };

  /** The `Authorization: Bearer t-…` check every open-API call passes first. */
  const unauthorized = (req: ReceivedRequest): Answer | undefined => {
    const auth = /^Bearer (\S+)$/.exec(req.headers['authorization'] ?? '');
    if (!auth) {
      return json(400, {
        code: 99991661,
        msg: 'Missing access token for authorization. Please make a request with token attached.',
      });
    }
    return valid.has(auth[1]!) ? undefined : invalidToken();
  };

  // PATCH im/v1/messages/:message_id: `content` is the new card as a JSON string; only a shared card
  // (config.update_multi true before and after) that was not recalled can be updated.
  const update = (req: ReceivedRequest, messageId: string): Answer => {
    const refused = unauthorized(req);
    if (refused) return refused;
    const next = scriptedUpdates.shift();
    if (next) return next;
    if (!/^application\/json/.test(req.headers['content-type'] ?? '')) return fieldInvalid('Content-Type');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body) as Record<string, unknown>;
    } catch {
      return fieldInvalid('body');
    }
    const { content } = body;
    if (typeof content !== 'string') return fieldInvalid('content');
    if (Buffer.byteLength(content) > CARD_MAX_BYTES) {
      return json(400, { code: 230025, msg: 'The length of the message content reaches its limit.' });
    }
    const stored = byId.get(messageId);
    if (!stored)
      return json(400, {
        code: 230001,
        msg: 'Your request contains an invalid request parameter, ext=invalid message_id',
      });
    if (recalled.has(messageId)) return json(400, { code: 230011, msg: 'The message is recalled.' });
    let card: unknown;
    try {
      card = JSON.parse(content);
    } catch {
      return json(400, { code: 230099, msg: 'Failed to create card content, ext=content is not json' });
    }
    const problem = checkCard(card);
    if (problem) return json(400, { code: 230099, msg: `Failed to create card content, ext=${problem}` });
    const shared = (c: Partial<FeishuCard>) => c.config?.update_multi === true;
    if (!shared(stored.card) || !shared(card as FeishuCard)) {
      return json(400, {
        code: 230099,
        msg: 'Failed to create card content, ext=only shared cards (config.update_multi: true) can be updated',
      });
    }
    stored.card = card as FeishuCard;
    return json(200, { code: 0, msg: 'success', data: {} });
  };

  const message = (req: ReceivedRequest): Answer => {
    const refused = unauthorized(req);
    if (refused) return refused;
    const next = scripted.shift();
    if (next) return next;
    if (!/^application\/json/.test(req.headers['content-type'] ?? '')) return fieldInvalid('Content-Type');
    const query = new URL(req.url, 'http://x').searchParams;
    const type = query.get('receive_id_type') ?? '';
    if (!RECEIVE_ID_TYPES.has(type)) return fieldInvalid('receive_id_type');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body) as Record<string, unknown>;
    } catch {
      return fieldInvalid('body');
    }
    const { receive_id: receiveId, msg_type: msgType, content, uuid } = body;
    if (typeof receiveId !== 'string' || receiveId === '') return fieldInvalid('receive_id');
    if (typeof msgType !== 'string') return fieldInvalid('msg_type');
    if (typeof content !== 'string') return fieldInvalid('content');
    if (uuid !== undefined && (typeof uuid !== 'string' || uuid.length > UUID_MAX))
      return fieldInvalid('uuid');
    if (msgType !== 'interactive') return json(400, { code: 230001, msg: 'invalid msg_type' });
    if (Buffer.byteLength(content) > CARD_MAX_BYTES) {
      return json(400, { code: 230025, msg: 'The length of the message content reaches its limit.' });
    }
    let card: unknown;
    try {
      card = JSON.parse(content);
    } catch {
      return json(400, { code: 230099, msg: 'Failed to create card content, ext=content is not json' });
    }
    const problem = checkCard(card);
    if (problem) return json(400, { code: 230099, msg: `Failed to create card content, ext=${problem}` });
    if (type === 'chat_id' && !chats.has(receiveId)) {
      return json(400, { code: 230002, msg: 'The bot can not be outside the group.' });
    }
    // A uuid seen before (within the hour) sends nothing new and answers with the first message.
    const seen = typeof uuid === 'string' ? byUuid.get(uuid) : undefined;
    const stored = seen ?? {
      messageId: `om_${randomBytes(16).toString('hex')}`,
      receiveIdType: type,
      receiveId,
      ...(typeof uuid === 'string' ? { uuid } : {}),
      card: card as FeishuCard,
    };
    if (!seen) {
      messages.push(stored);
      byId.set(stored.messageId, stored);
      if (typeof uuid === 'string') byUuid.set(uuid, stored);
    }
    return json(200, {
      code: 0,
      msg: 'success',
      data: { message_id: stored.messageId, msg_type: 'interactive', chat_id: receiveId },
    });
  };

  const receiver = await startReceiver((req) => {
    const path = req.url.split('?')[0] ?? '';
    const patch = /^\/open-apis\/im\/v1\/messages\/([^/]+)$/.exec(path);
    if (req.method === 'PATCH' && patch) return update(req, decodeURIComponent(patch[1]!));
    if (req.method !== 'POST') return json(404, { code: 404, msg: 'not found' });
    if (path === TOKEN_PATH) return token(req);
    if (path === MESSAGES_PATH) return message(req);
    return json(404, { code: 404, msg: '404 page not found' });
  });
  return {
    url: receiver.url,
    receiver,
    messages,
    tokenRequests: () => receiver.requests.filter((r) => r.url === TOKEN_PATH).length,
    messageRequests: () =>
      receiver.requests.filter((r) => r.method === 'POST' && r.url.startsWith(MESSAGES_PATH)),
    updateRequests: () => receiver.requests.filter((r) => r.method === 'PATCH'),
    recall: (id) => recalled.add(id),
    failNextUpdate: (...answers) => scriptedUpdates.push(...answers),
    expireTokens: () => valid.clear(),
    failNext: (...answers) => scripted.push(...answers),
    close: () => receiver.close(),
  };
}
