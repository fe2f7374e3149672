import { afterEach, describe, expect, it } from 'vitest';
import type { HttpRequest } from '../channel.js';
import { approvalMessage, channelCase, sampleMessage } from '../channel.case.js';
import {
  type Answer,
  fetchPost,
  json,
  type ReceivedRequest,
  type Receiver,
  response,
  startReceiver,
} from '../testing.js';
import { wecom } from './index.js';

const KEY = '693a91f6-7xxx-4bc4-97a0-0ec2sifa5aaa';
const content = (r: HttpRequest) => String(JSON.parse(r.body).markdown.content);

channelCase({
  kind: wecom,
  rawConfig: { type: 'wecom', url_env: 'WECOM_HOOK' },
  rawMentionConfig: { type: 'wecom', url_env: 'WECOM_HOOK', mention_userid: 'zhangsan' },
  secrets: { WECOM_HOOK: `https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=${KEY}` },
  text: content,
  wire: (r) => r.body,
  mentions: (r) => content(r).includes('<@zhangsan>'),
  responses: {
    ok: response(200, { errcode: 0, errmsg: 'ok' }),
    business: response(200, { errcode: 93000, errmsg: 'invalid webhook url' }),
    businessExpect: 'dead',
    rateLimited: response(200, { errcode: 45009, errmsg: 'api freq out of limit' }),
    serverError: response(500, ''),
  },
});

/** What the WeCom group robot checks: the key, a known msgtype, markdown content ≤ 4096 utf-8 bytes. */
function wecomServer(req: ReceivedRequest): Answer {
  const q = new URL(req.url, 'http://x').searchParams;
  if (!req.url.startsWith('/cgi-bin/webhook/send') || q.get('key') !== KEY) {
    return json(200, { errcode: 93000, errmsg: 'invalid webhook url, hint: [1] from ip: 127.0.0.1' });
  }
  const m = JSON.parse(req.body) as { msgtype?: string; markdown?: { content?: string } };
  if (m.msgtype !== 'markdown' || typeof m.markdown?.content !== 'string') {
    return json(200, { errcode: 40008, errmsg: 'invalid message type' });
  }
  if (Buffer.byteLength(m.markdown.content, 'utf8') > 4096) {
    return json(200, { errcode: 40058, errmsg: 'markdown.content exceed max length 4096' });
  }
  return json(200, { errcode: 0, errmsg: 'ok' });
}

describe('WeCom against a local WeCom stand-in', () => {
  let rx: Receiver;
  afterEach(() => rx.close());
  const config = wecom.configSchema.parse({ type: 'wecom', url_env: 'WECOM_HOOK' });
  const deps = (key = KEY) => ({
    post: fetchPost,
    now: Date.now,
    secret: () => `${rx.url}/cgi-bin/webhook/send?key=${key}`,
  });

  it('delivers markdown that carries the approval page link and stays within 4096 bytes in Chinese', async () => {
    rx = await startReceiver(wecomServer);
    const long = approvalMessage({ locale: 'zh', detail: '数据库迁移失败。'.repeat(2000) });
    expect(await wecom.send(long, config, deps())).toEqual({ kind: 'ok' });
    expect(rx.requests[0]?.body).toContain('/console/approvals/');
  });

  it('treats an unknown key, answered with HTTP 200 and errcode 93000, as dead', async () => {
    rx = await startReceiver(wecomServer);
    expect((await wecom.send(sampleMessage(), config, deps('nope'))).kind).toBe('dead');
  });

  it('removes mention tags the agent wrote itself', () => {
    const req = wecom.format(sampleMessage({ summary: 'ping <@lisi> now' }), config, {
      now: 0,
      secret: () => 'https://q.example/',
    });
    expect(content(req)).not.toContain('<@lisi>');
  });
});
