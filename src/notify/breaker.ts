import type { Envelope } from '../envelope/index.js';
import { once } from '../log/inbox.js';
import type { Locale } from './port.js';
import type { Draft } from './message.js';
import type { NotifyDeps } from './module.js';
import type { Notifier } from './service.js';
import { prefix as cut } from '../text/index.js';

/** Subscriber names key the inbox: renaming one makes it see old events again. */
export const BREAKER_SUBSCRIBER = 'notify.breaker-tripped';

/**
 * The alert a tripped breaker sends (docs/policy.md, "Breakers"): who was frozen, the figures that
 * crossed the line, and the command that lifts it. Pure; the facts come from the gate's own summary.
 */
export function breakerDraft(summary: Record<string, unknown>, locale: Locale): Draft {
  const scope = String(summary.scope ?? '');
  const value = String(summary.value ?? '');
  const reason = String(summary.reason ?? '').replace(/^breaker: /, '');
  const f = (summary.figures ?? {}) as Record<string, unknown>;
  const lift = String(summary.lift ?? `switchboard incidents unfreeze --${scope} ${value}`);
  const figures =
    locale === 'zh'
      ? `窗口 ${summary.window_seconds} 秒：副作用 ${f.side_effects}，决策 ${f.decisions}（拒绝 ${f.denied}），投递失败 ${f.delivery_failures}`
      : `In ${summary.window_seconds} s: ${f.side_effects} side effects, ${f.decisions} decisions (${f.denied} denied), ${f.delivery_failures} delivery failures`;
  const summaryLine =
    locale === 'zh'
      ? `熔断：${scope === 'agent' ? '代理' : '租户'} ${value} 已冻结为只读 · ${reason}`
      : `Breaker: ${scope} ${value} frozen to read-only · ${reason}`;
  return {
    kind: 'alert',
    stage: 'blocked',
    severity: 'critical',
    title: `${scope} ${value}`,
    summary: cut(summaryLine, 120),
    detail: `${figures}\n${locale === 'zh' ? '解除' : 'Lift it'}: ${lift}`,
    ...(scope === 'agent' ? { agent: value } : {}),
    locale,
  };
}

/** `agent.breaker.tripped` → the alert on the priority lane, once per trip. */
export async function announceBreaker(
  services: NotifyDeps,
  n: Notifier,
  event: Envelope,
  locale: Locale,
): Promise<void> {
  const draft = breakerDraft(event.redacted_summary, locale);
  await once(
    services.db,
    BREAKER_SUBSCRIBER,
    event.event_id,
    (tx) => n.dispatch(tx, draft, event, 'high', ''),
    services.now(),
  );
}
