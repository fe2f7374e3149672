import type { ApprovalActions } from '../notify/port.js';
import type { NotifyDeps } from './module.js';

interface ApprovalLinkSource {
  approvalLinks?(
    id: string,
    baseUrl: string,
  ): Promise<{ pageUrl: string; approveUrl: string; rejectUrl: string }>;
}

/** Signed links need the approvals module and a public URL a phone can reach; without them, no buttons. */
export async function approvalActions(
  services: NotifyDeps,
  id: string,
): Promise<ApprovalActions | undefined> {
  const base = services.config.server.public_url;
  const source = services.approvals as ApprovalLinkSource | undefined;
  if (!base || !source?.approvalLinks) return undefined;
  try {
    const links = await source.approvalLinks(id, base);
    return { ...links, approvalId: id };
  } catch (err) {
    services.logger.warn({ err, approval_id: id }, 'notify: no approval links; announcing without buttons');
    return undefined;
  }
}
