import type { Context } from 'hono';
import { canonicalJson, type EventId, newId } from '../../envelope/index.js';
import { AppError, type ErrorCode } from '../../errors/index.js';
import { readBody } from '../../kernel/body.js';
import type { App, AppEnv, Services } from '../../kernel/module.js';
import type { Accepted, Revision, Source } from '../source.js';
import { REJECT_ERROR_CODE, type RejectReason } from '../source.js';
import { isRecord } from '../sources/common/request.js';
import { requireContentType } from './content-type.js';
import { claimDelivery, refuseDelivery } from './deliveries.js';
import { boundTenant, listed, senderAddress } from './binding.js';
import type { BlockList } from 'node:net';
import { acceptedFacts, arrivalDepth, arrivalHops } from './facts.js';
import { prefix } from '../../text/index.js';

export interface RouteSource {
  name: string;
  type: string;
  /** The source's tenant; with `tenants`, only for what happens before a delivery is verified. */
  tenant: string;
  verifier: Source;
  /** `allow_ips`: only these senders may deliver. */
  allow?: BlockList;
  /** `tenants`: a verified delivery's tenant by the id it names; an unbound one is stored and refused. */
  tenants?: Readonly<Record<string, string>>;
}

export interface IngressState {
  sources: ReadonlyMap<string, RouteSource>;
  retentionMs: number;
  /** `server.trusted_proxies`: peers whose `X-Forwarded-For` is believed. */
  trustedProxies?: BlockList;
}

/** Thrown inside the accepting transaction to roll back the vault write of a duplicate. */
class Duplicate extends Error {}

const DAY_MS = 86_400_000;
export const retentionMs = (days: number) => days * DAY_MS;

/**
 * `POST /v1/ingress/:source`. No bearer key: the signature is the credential. Cheap checks first
 * (source, content type, size), then the signature over the raw bytes, then one transaction for the
 * delivery record, the sealed payload and the accepted event with its outbox row; then 202. Everything
 * slow (parsing for triggers, coalescing, launching) happens in admission, after the answer.
 */
export function ingressRoute(app: App, services: Services, state: () => IngressState): void {
  app.post('/v1/ingress/:source', async (c) => {
    const { sources, retentionMs: ttlMs, trustedProxies } = state();
    const name = c.req.param('source');
    const source = sources.get(name);
    if (!source)
      throw new AppError('unknown_source', `no webhook source is named ${JSON.stringify(prefix(name, 64))}`);
    if (source.allow) {
      // Before the body is read: a sender off the list costs no more than this.
      const from = senderAddress(c, trustedProxies);
      if (from === undefined || !listed(source.allow, from)) {
        await recordRejection(services, source, 'address_not_allowed', { address: from ?? null });
        throw new AppError(
          'address_not_allowed',
          from === undefined
            ? `the sender's address is unknown, so it cannot be checked against sources.${name}.allow_ips`
            : `sender ${from} is not in sources.${name}.allow_ips`,
        );
      }
    }

    let body: Uint8Array;
    try {
      requireContentType(source.type, c.req.header('content-type'));
      body = await readBody(c, services.config.server.body_limit_bytes);
    } catch (err) {
      if (err instanceof AppError) await recordRejection(services, source, err.code);
      throw err;
    }

    const inbound = { headers: lowerHeaders(c), body, now: services.now() };
    const v = source.verifier;
    const result = v.verifyAsync ? await v.verifyAsync(inbound) : v.verify(inbound);
    if (result.kind === 'rejected') {
      await recordRejection(services, source, result.reason);
      throw new AppError(REJECT_ERROR_CODE[result.reason], result.message);
    }
    if (result.kind === 'challenge') {
      const { status, body: reply, contentType } = result.response;
      if (typeof reply === 'string' || reply === undefined || reply === null) {
        return c.body(reply ?? '', status as 200, contentType ? { 'content-type': contentType } : {});
      }
      return c.json(reply, status as 200);
    }

    const now = services.now();
    const eventId = newId('event', now) as EventId;
    const facts = acceptedFacts({
      source: name,
      sourceType: source.type,
      eventName: result.eventName,
      deliveryId: result.deliveryId,
      binding: source.verifier.tenantBinding(result.payload),
      payload: result.payload,
      revision: revisionOrUndefined(source.verifier, result),
    });
    const depth = arrivalDepth(result.payload);
    const hops = arrivalHops(result.payload);
    const bound = source.tenants ? boundTenant(facts.binding, source.tenants) : undefined;
    if (source.tenants && !bound) {
      await storeUnbound(services, source, { body, ttlMs, result, facts, eventId, now });
      const named = Object.entries(facts.binding).map(([k, v]) => `${k} ${v}`);
      throw new AppError(
        'source_unbound',
        `${named.length > 0 ? prefix(named.join(', '), 300) : 'a delivery that names no installation, repository or workspace'} is not bound to a tenant; add it under sources.${name}.tenants (the delivery is stored; redeliver it once bound)`,
      );
    }
    const tenant = bound?.tenant ?? source.tenant;
    if (bound) facts.bound_by = { key: bound.key, id: bound.id };
    try {
      await services.db.tx(async (tx) => {
        // Admission reads it back right after this commit (the relay's hand-off).
        const sealed = await services.vault.put(body, { tenantId: tenant, ttlMs, db: tx, readSoon: true });
        const fresh = await claimDelivery(tx, {
          source: name,
          deliveryId: result.deliveryId,
          eventId,
          tenantId: tenant,
          eventName: result.eventName,
          payloadRef: sealed.ref,
          now,
        });
        if (!fresh) throw new Duplicate();
        if (sealedBody(source.type, body)) {
          // Feishu encrypts the body: admission cannot decrypt it later, so the verified parse is kept too.
          const parsed = await services.vault.put(canonicalJson(result.payload), {
            tenantId: tenant,
            ttlMs,
            db: tx,
          });
          facts.parsed_ref = parsed.ref;
        }
        await services.emit(
          {
            type: 'integration.webhook.accepted',
            event_id: eventId,
            tenant_id: tenant,
            payload_ref: sealed.ref,
            payload_digest: sealed.digest,
            redacted_summary: { ...facts },
            subject: { action: result.eventName, resource_ref: resourceRef(name, facts.binding) },
            lineage: { hop_count: hops, depth },
          },
          tx,
        );
      });
    } catch (err) {
      if (err instanceof Duplicate) return c.json({ status: 'duplicate' }, 200);
      throw err;
    }
    return c.json({ id: eventId, status: 'accepted' }, 202);
  });
}

/** A revision outside the dates JavaScript can print is no revision (the delivery stays unordered). */
function revisionOrUndefined(v: Source, accepted: Accepted): Revision | undefined {
  const r = v.revision?.(accepted);
  return r && Math.abs(r.at) <= 8.64e15 ? r : undefined;
}

function lowerHeaders(c: Context<AppEnv>): Record<string, string> {
  const out: Record<string, string> = {};
  c.req.raw.headers.forEach((value, key) => {
    out[key.toLowerCase()] = value;
  });
  return out;
}

/** What the event is about, for filtering the log: the repository or project when the sender names one. */
function resourceRef(source: string, binding: Record<string, string>): string {
  const named = binding.repository ?? binding.project ?? binding.team_id ?? binding.chat_id;
  return named ? `${source}:${named}` : source;
}

function sealedBody(type: string, body: Uint8Array): boolean {
  if (type !== 'feishu') return false;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body).toString('utf8'));
    return isRecord(parsed) && typeof parsed.encrypt === 'string';
  } catch {
    return false;
  }
}

/** The reason only: a refused body is never kept, not even its digest. */
async function recordRejection(
  services: Services,
  source: RouteSource,
  reason: RejectReason | ErrorCode,
  extra: Record<string, unknown> = {},
) {
  await services.emit({
    type: 'integration.webhook.rejected',
    tenant_id: source.tenant,
    redacted_summary: { source: source.name, source_type: source.type, reason, ...extra },
    subject: { action: 'reject', resource_ref: source.name },
  });
}

/**
 * An authentic delivery no `tenants` entry binds: stored (sealed payload, a `refused` delivery record
 * the sender's redelivery may take over once it is bound) and recorded as rejected `source_unbound`
 * with the ids it named; nothing is admitted from it.
 */
async function storeUnbound(
  services: Services,
  source: RouteSource,
  d: {
    body: Uint8Array;
    ttlMs: number;
    result: Accepted;
    facts: ReturnType<typeof acceptedFacts>;
    eventId: EventId;
    now: number;
  },
): Promise<void> {
  await services.db.tx(async (tx) => {
    const sealed = await services.vault.put(d.body, { tenantId: source.tenant, ttlMs: d.ttlMs, db: tx });
    const fresh = await refuseDelivery(tx, {
      source: source.name,
      deliveryId: d.result.deliveryId,
      eventId: d.eventId,
      tenantId: source.tenant,
      eventName: d.result.eventName,
      payloadRef: sealed.ref,
      now: d.now,
    });
    if (!fresh) return;
    await services.emit(
      {
        type: 'integration.webhook.rejected',
        event_id: d.eventId,
        tenant_id: source.tenant,
        payload_ref: sealed.ref,
        payload_digest: sealed.digest,
        redacted_summary: { ...d.facts, reason: 'source_unbound' },
        subject: { action: 'reject', resource_ref: resourceRef(source.name, d.facts.binding) },
      },
      tx,
    );
  });
}
