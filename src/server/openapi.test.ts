import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askSchema } from '../approvals/routes.js';
import { taskListQuerySchema } from '../tasks/routes.js';
import { allModules } from './modules.js';
import { ROUTE_DOCS, routeDoc } from './openapi.js';
import { type TestApp, testApp } from './testing.js';

type Doc = { openapi: string; paths: Record<string, Record<string, Record<string, unknown>>> };

/** Issue 21 point 21: the OpenAPI document of the whole app, generated from the routes' own schemas. */
describe('GET /v1/openapi.json', () => {
  let t: TestApp;
  let doc: Doc;
  beforeAll(async () => {
    t = await testApp({ dialect: 'sqlite', modules: [...allModules()] });
    const res = await t.app.request('/v1/openapi.json');
    expect(res.status).toBe(200);
    doc = (await res.json()) as Doc;
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  const mounted = () =>
    t.app.routes.filter(
      (r) => ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method) && !r.path.includes('*'),
    );
  const openApiPath = (p: string) => p.replace(/:([A-Za-z_][A-Za-z0-9_]*)(\{[^}]*\})?/g, '{$1}');

  it('is a valid OpenAPI 3.1 document by a standard validator', async () => {
    expect(doc.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
    // The validator is not vacuous: the same document with a broken operation is refused.
    const broken = structuredClone(doc) as Doc;
    broken.paths['/healthz']!.get!.responses = 'none';
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow(/validation failed/);
  });

  it('lists every route the app mounted, and each one is documented', () => {
    const routes = mounted();
    expect(routes.length).toBeGreaterThan(50);
    for (const r of routes) {
      expect(doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()], `${r.method} ${r.path}`).toBeDefined();
      expect(routeDoc(r.method, r.path), `${r.method} ${r.path} has no entry in ROUTE_DOCS`).toBeDefined();
    }
  });

  it('documents no route the app does not mount', () => {
    const keys = new Set(mounted().map((r) => `${r.method} ${r.path}`));
    expect(Object.keys(ROUTE_DOCS).filter((k) => !keys.has(k))).toEqual([]);
  });

  it('takes request bodies and query parameters from the schemas the routes validate with', () => {
    const ask = doc.paths['/v1/approvals']?.post?.requestBody as {
      content: { 'application/json': { schema: Record<string, unknown> } };
    };
    const expected = z.toJSONSchema(askSchema, { io: 'input' }) as Record<string, unknown>;
    delete expected.$schema;
    expect(ask.content['application/json'].schema).toEqual(expected);
    const params = doc.paths['/v1/tasks']?.get?.parameters as { name: string; in: string }[];
    const names = Object.keys(
      (z.toJSONSchema(taskListQuerySchema, { io: 'input' }) as { properties: object }).properties,
    );
    expect(params.filter((p) => p.in === 'query').map((p) => p.name)).toEqual(names);
    expect(doc.paths['/v1/tasks/{id}/cancel']?.post?.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
    ]);
  });
});
