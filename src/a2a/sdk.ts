import type * as Compat from '@a2a-js/sdk/compat/v0_3/server';
import type * as Server from '@a2a-js/sdk/server';

/**
 * The A2A SDK's server side (its request handler, transports, event buses and the v0.3 compat layer,
 * about 220 KB of JavaScript) loads with the first JSON-RPC request, not at start: a gateway nobody
 * calls over A2A does not hold it (issue 13, idle memory). The card, the task-event subscriber and
 * the push sender only need the SDK's small root (types and enums) and stay eager.
 */
export interface ServerSdk {
  server: typeof Server;
  compat: typeof Compat;
}

let loading: Promise<ServerSdk> | undefined;
let loaded: ServerSdk | undefined;

export function loadServerSdk(): Promise<ServerSdk> {
  loading ??= Promise.all([import('@a2a-js/sdk/server'), import('@a2a-js/sdk/compat/v0_3/server')]).then(
    ([server, compat]) => {
      loaded = { server, compat };
      return loaded;
    },
    (err: unknown) => {
      loading = undefined; // the next request tries again
      throw err;
    },
  );
  return loading;
}

/**
 * The loaded server side, for code that only the SDK's request handler calls (the executor): the
 * handler is built after `loadServerSdk` settled, so this never runs before it.
 */
export function serverSdk(): ServerSdk {
  if (!loaded) throw new Error('the A2A SDK is used before loadServerSdk() settled');
  return loaded;
}
