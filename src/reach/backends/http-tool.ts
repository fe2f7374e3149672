import type { Egress } from '../../egress/index.js';
import { TouchFailure } from '../protocol.js';
import { excerpt } from './excerpt.js';
import { LineSplitter } from './lines.js';
import type { Backend } from './types.js';

/**
 * `http` tools: a URL template filled with percent-encoded parameters, sent through the egress
 * guard's dispatcher (SSRF policy at connect, DNS rebinding caught, no redirects followed), the body
 * read up to the result cap. A JSON answer is parsed; any other is returned as text. Methods with a
 * body send the parameters as JSON.
 */

const FIELD = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The `{field}` names of a URL template, for the start-up check against the schema. */
export function urlFields(template: string): string[] {
  return [...new Set([...template.matchAll(FIELD)].map((m) => m[1]!))];
}

function encode(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (Array.isArray(v)) return v.map((x) => encodeURIComponent(String(x))).join(',');
  if (typeof v === 'object') return encodeURIComponent(JSON.stringify(v));
  return encodeURIComponent(String(v));
}

export function fillUrl(template: string, params: Record<string, unknown>): string {
  return template.replace(FIELD, (_, name: string) => encode(params[name]));
}

export interface HttpSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  /** Resolved at start: literal values and the values of `<name>_env` variables. */
  headers: Record<string, string>;
}

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

function networkFailure(err: unknown): TouchFailure {
  const e = err as { code?: string; reason?: string; detail?: string };
  if (e.code === 'ERR_EGRESS_BLOCKED')
    return new TouchFailure(
      'TOOL_FAILED',
      `the egress guard refused the target (${e.reason}: ${e.detail}); an operator must list it in egress.allow`,
      { status: 'egress_blocked', reason: e.reason },
    );
  return new TouchFailure('TOOL_FAILED', `the service could not be reached (${e.code ?? 'network error'})`, {
    status: e.code ?? 'network',
  });
}

export function httpBackend(spec: HttpSpec, egress: Pick<Egress, 'dispatcher'>): Backend {
  return {
    async run(params, ctx) {
      let url: URL;
      try {
        url = new URL(fillUrl(spec.url, params));
      } catch {
        throw new TouchFailure('TOOL_FAILED', 'the tool URL is not valid once filled in', { status: 'url' });
      }
      const hasBody = WITH_BODY.has(spec.method);
      const headers: Record<string, string> = {
        'user-agent': 'Switchboard-Reach',
        accept: 'application/json, text/plain;q=0.9, */*;q=0.5',
        ...spec.headers,
        ...(hasBody ? { 'content-type': 'application/json' } : {}),
      };
      let res: Awaited<ReturnType<Egress['dispatcher']['request']>>;
      try {
        res = await egress.dispatcher.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: spec.method,
          headers,
          body: hasBody ? JSON.stringify(params) : null,
          signal: ctx.signal,
          headersTimeout: ctx.timeoutMs,
          bodyTimeout: ctx.timeoutMs,
        });
      } catch (err) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        throw networkFailure(err);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      const lines = ok && ctx.onPartial ? new LineSplitter(ctx.onPartial) : undefined;
      try {
        for await (const chunk of res.body) {
          const b = chunk as Buffer;
          size += b.length;
          if (size > ctx.maxBytes) {
            res.body.destroy();
            throw new TouchFailure(
              'RESULT_TOO_LARGE',
              `the service answered more than ${ctx.maxBytes} bytes; ask for less (a filter, a page)`,
              { limit_bytes: ctx.maxBytes },
            );
          }
          chunks.push(b);
          lines?.push(b);
        }
      } catch (err) {
        if (err instanceof TouchFailure) throw err;
        if (ctx.signal.aborted) throw ctx.signal.reason;
        throw networkFailure(err);
      }
      lines?.end();
      const text = Buffer.concat(chunks).toString('utf8');
      if (!ok) {
        const redirect = res.statusCode >= 300 && res.statusCode < 400;
        throw new TouchFailure(
          'TOOL_FAILED',
          redirect
            ? `the service answered a redirect (${res.statusCode}); redirects are not followed`
            : `the service answered ${res.statusCode}`,
          { status: res.statusCode, excerpt: excerpt(text) },
        );
      }
      const type = String(res.headers['content-type'] ?? '');
      if (/[/+]json\b/i.test(type)) {
        try {
          return JSON.parse(text) as unknown;
        } catch {
          throw new TouchFailure('TOOL_FAILED', 'the service said JSON but the body does not parse', {
            status: res.statusCode,
            excerpt: excerpt(text),
          });
        }
      }
      return text;
    },
  };
}
