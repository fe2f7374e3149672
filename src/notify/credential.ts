import type { Envelope } from '../envelope/index.js';
import { once } from '../log/inbox.js';
import type { Draft } from './message.js';
import type { NotifyDeps } from './module.js';
import type { Locale } from './port.js';
import type { Notifier } from './service.js';
import { prefix as cut } from '../text/index.js';

/** Subscriber names key the inbox: renaming one makes it see old events again. */
export const CREDENTIAL_SUBSCRIBER = 'notify.credential-revoked';

/** The alert when a source's credential was refused by the provider (docs/ingress-sources.md, "Binding"). */
export function credentialDraft(summary: Record<string, unknown>, locale: Locale): Draft {
  const source = String(summary.source ?? '');
  const reason = String(summary.reason ?? '');
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
    (tx) => n.dispatch(tx, draft, event, 'high', ''),
    services.now(),
  );
}
