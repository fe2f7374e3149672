import type { Envelope } from '../envelope/index.js';
import { once } from '../log/inbox.js';
import type { Draft } from './message.js';
import type { NotifyDeps } from './module.js';
import type { Locale } from './port.js';
import type { Notifier } from './service.js';
import { prefix as cut } from '../text/index.js';

/** Subscriber names key the inbox: renaming one makes it see old events again. */
export const CREDENTIAL_SUBSCRIBER = 'notify.credential-revoked';

/**
 * The alert when the provider refused a credential: a source's (ingress re-read; docs/ingress-sources.md,
 * "Binding") or a channel's (a send; docs/delivery.md, "Revoked channels").
 */
export function credentialDraft(summary: Record<string, unknown>, locale: Locale): Draft {
  const reason = String(summary.reason ?? '');
  if (typeof summary.channel === 'string') {
    const channel = summary.channel;
    const fix = String(summary.fix ?? '');
    return {
      kind: 'alert',
      stage: 'blocked',
      severity: 'critical',
      title: `channel ${channel}`,
      summary: cut(
        locale === 'zh'
          ? `通道 ${channel} 的凭据已被提供方吊销：不再向它发送`
          : `Channel ${channel}: its credential was revoked at the provider; nothing is sent to it`,
        120,
      ),
      detail:
        locale === 'zh'
          ? `${reason}\n修复：${fix}；之后用 switchboard dlq replay 重放失败的投递。`
          : `${reason}\nFix: ${fix}; then switchboard dlq replay the deliveries that failed meanwhile.`,
      locale,
    };
  }
  const source = String(summary.source ?? '');
  return {
    kind: 'alert',
    stage: 'blocked',
    severity: 'critical',
    title: `source ${source}`,
    summary: cut(
      locale === 'zh'
        ? `来源 ${source} 的凭据已被提供方吊销：不再派生任务`
        : `Source ${source}: its credential was revoked at the provider; no tasks are derived from it`,
      120,
    ),
    detail:
      locale === 'zh'
        ? `${reason}\n更换令牌并重启网关；下一次成功的重读会恢复它。`
        : `${reason}\nReplace the token and restart the gateway; the next re-read that succeeds restores the source.`,
    locale,
  };
}

/** `integration.credential.revoked` → the alert on the priority lane, once. */
export async function announceCredential(
  services: NotifyDeps,
  n: Notifier,
  event: Envelope,
  locale: Locale,
): Promise<void> {
  const draft = credentialDraft(event.redacted_summary, locale);
  await once(
    services.db,
    CREDENTIAL_SUBSCRIBER,
    event.event_id,
    // A revoked channel's alert goes through the others (the one revoked would refuse it).
    (tx) =>
      n.dispatch(
        tx,
        draft,
        event,
        'high',
        '',
        {},
        undefined,
        typeof event.redacted_summary['channel'] === 'string'
          ? [event.redacted_summary['channel']]
          : undefined,
      ),
    services.now(),
  );
}
