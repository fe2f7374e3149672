/**
 * Environment variables that override config keys: one name per option, the same in docs/config.md.
 * Applied after the file, so `SWITCHBOARD_PORT=9000 switchboard serve` wins over `server.port`.
 */
export const ENV_OVERRIDES = [
  { env: 'SWITCHBOARD_HOST', path: ['server', 'host'] },
  { env: 'SWITCHBOARD_PORT', path: ['server', 'port'] },
  { env: 'SWITCHBOARD_PUBLIC_URL', path: ['server', 'public_url'] },
  { env: 'SWITCHBOARD_DATA_DIR', path: ['data_dir'] },
  { env: 'SWITCHBOARD_DATABASE_URL', path: ['store', 'database_url'] },
  { env: 'SWITCHBOARD_LOG_LEVEL', path: ['log', 'level'] },
] as const;

export function applyEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(raw);
  for (const { env: name, path } of ENV_OVERRIDES) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    let node = out;
    for (const key of path.slice(0, -1)) {
      const child = node[key];
      node[key] = child && typeof child === 'object' && !Array.isArray(child) ? child : {};
      node = node[key] as Record<string, unknown>;
    }
    node[path[path.length - 1]!] = value;
  }
  return out;
}
